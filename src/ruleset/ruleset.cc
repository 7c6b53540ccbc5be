// Loading a compiled ruleset: FlatBuffers Verifier first (a corrupt or
// truncated file is rejected, never dereferenced), then the checksums, then
// the serialized Hyperscan database, which is deserialized only when the
// bytes are trusted (built into the library, or carrying a MAC that verifies
// under this installation's key) and it was built for this library version
// and CPU; otherwise it is recompiled from the stored patterns. RE2
// confirmers and extractors are built per signal, on first use when the
// compiler checked them.
#include "ruleset/ruleset.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "util/strings.h"
#include "ruleset/compiler.h"
#include "ruleset/pattern_check.h"
#include "ruleset/pattern_cost.h"
#include "ruleset/ruleset_key.h"
#include "simdjson.h"
#include "util/status_macros.h"

namespace faultline {

const char* RoleName(SignalRole r) {
  switch (r) {
    case SignalRole::Initiating: return "initiating";
    case SignalRole::Symptom: return "symptom";
    case SignalRole::Context: return "context";
    case SignalRole::Progress: return "progress";
    case SignalRole::Metric: return "metric";
  }
  return "unknown";
}

const char* ActionDefaultName(fb::ActionDefault k) {
  switch (k) {
    case fb::ActionDefault::Restart: return "restart";
    case fb::ActionDefault::RestartExcluding: return "restart_excluding";
    case fb::ActionDefault::Stop: return "stop";
    case fb::ActionDefault::Unknown: break;
  }
  return "unknown";
}

const char* DrainName(fb::Drain d) {
  switch (d) {
    case fb::Drain::Host: return "host";
    case fb::Drain::Gpu: return "gpu";
    case fb::Drain::None: break;
  }
  return "";
}

const char* RecurrenceScopeName(fb::RecurrenceScope r) {
  switch (r) {
    case fb::RecurrenceScope::SameStep: return "same_step";
    case fb::RecurrenceScope::SameHost: return "same_host";
    case fb::RecurrenceScope::Any: return "any";
    case fb::RecurrenceScope::Never: break;
  }
  return "";
}

const char* LayerName(RuleLayer l) {
  switch (l) {
    case RuleLayer::Hardware: return "hardware";
    case RuleLayer::Driver: return "driver";
    case RuleLayer::Kernel: return "kernel";
    case RuleLayer::Storage: return "storage";
    case RuleLayer::Network: return "network";
    case RuleLayer::Framework: return "framework";
    case RuleLayer::Application: return "application";
  }
  return "unknown";
}

absl::StatusOr<std::unique_ptr<hs_database_t, HsDatabaseDeleter>> CompileDatabase(
    const fb::Ruleset& rs) {
  std::vector<const char*> exprs;
  std::vector<unsigned> flags, ids;
  std::vector<std::pair<const fb::Rule*, uint32_t>> where;
  const auto* rules = rs.rules();
  unsigned gid = 0;
  for (flatbuffers::uoffset_t r = 0; rules && r < rules->size(); ++r) {
    const fb::Rule* rule = rules->Get(r);
    const auto* sigs = rule->signals();
    for (flatbuffers::uoffset_t s = 0; sigs && s < sigs->size(); ++s) {
      const fb::Signal* sig = sigs->Get(s);
      if (!sig->pattern()) {
        return absl::InvalidArgumentError(
            StrCat("rule '", rule->id() ? rule->id()->str() : "?", "': signals[", s,
                         "].pattern: missing"));
      }
      // A prefilter stands in for the pattern; RE2 confirms the pattern.
      exprs.push_back(sig->prefilter() ? sig->prefilter()->c_str() : sig->pattern()->c_str());
      // No SOM: the scanner needs only where a match ends.
      flags.push_back(SignalHsFlags(sig->caseless()));
      ids.push_back(gid++);
      where.emplace_back(rule, s);
    }
  }
  if (exprs.empty()) return absl::InvalidArgumentError("the ruleset has no signals");
  hs_database_t* db = nullptr;
  hs_compile_error_t* err = nullptr;
  hs_error_t rc = hs_compile_multi(exprs.data(), flags.data(), ids.data(),
                                   static_cast<unsigned>(exprs.size()), HS_MODE_BLOCK, nullptr,
                                   &db, &err);
  if (rc != HS_SUCCESS) {
    std::string msg = err && err->message ? err->message : "unknown error";
    int expr = err ? err->expression : -1;
    hs_free_compile_error(err);
    if (expr >= 0 && static_cast<size_t>(expr) < where.size()) {
      const fb::Rule* rule = where[expr].first;
      return absl::InvalidArgumentError(StrCat(
          rule->file() ? rule->file()->str() : "ruleset", ": rule '",
          rule->id() ? rule->id()->str() : "?", "': signals[", where[expr].second,
          "].pattern: Hyperscan rejects it: ", msg));
    }
    return absl::InvalidArgumentError(StrCat("Hyperscan compile failed: ", msg));
  }
  return std::unique_ptr<hs_database_t, HsDatabaseDeleter>(db);
}

absl::StatusOr<std::shared_ptr<const Ruleset>> Ruleset::Load(std::string data,
                                                             std::string_view name_for_errors,
                                                             bool built_in) {
  std::shared_ptr<Ruleset> rs(new Ruleset());
  rs->owned_ = std::move(data);
  rs->buffer_ = rs->owned_;
  FL_RETURN_IF_ERROR(rs->Init(name_for_errors, built_in));
  return std::shared_ptr<const Ruleset>(std::move(rs));
}

absl::StatusOr<std::shared_ptr<const Ruleset>> Ruleset::LoadEmbedded(std::string_view data,
                                                                     std::string_view name) {
  std::shared_ptr<Ruleset> rs(new Ruleset());
  rs->buffer_ = data;
  FL_RETURN_IF_ERROR(rs->Init(name, /*built_in=*/true));
  return std::shared_ptr<const Ruleset>(std::move(rs));
}

absl::StatusOr<std::shared_ptr<const Ruleset>> Ruleset::LoadBuffer(
    std::string_view data, std::string_view name_for_errors) {
  return Load(std::string(data), name_for_errors, /*built_in=*/false);
}

absl::StatusOr<std::shared_ptr<const Ruleset>> Ruleset::LoadBuiltIn(
    std::string_view data, std::string_view name_for_errors) {
  return Load(std::string(data), name_for_errors, /*built_in=*/true);
}

absl::StatusOr<std::shared_ptr<const Ruleset>> Ruleset::LoadFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    FL_ASSIGN_OR_RETURN(CompileResult cr, CompileRuleSource(path));
    return LoadBuiltIn(cr.buffer, path);
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(StrCat(path, ": cannot open ruleset: ", std::strerror(errno)));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(StrCat(path, ": not a regular file"));
  }
  constexpr off_t kMaxRuleset = off_t{1} << 30;
  if (st.st_size > kMaxRuleset) {
    ::close(fd);
    return absl::InvalidArgumentError(StrCat(path, ": larger than 1 GiB, not a ruleset"));
  }
  std::string buf(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < buf.size()) {
    ssize_t n = ::read(fd, buf.data() + done, buf.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  buf.resize(done);
  return Load(std::move(buf), path, /*built_in=*/false);
}

namespace {

// A serialized database is usable only if it deserializes and a scratch can
// be allocated for it on this CPU. The scratch is handed on to
// DatabaseFitsSignals (one allocation, not two, on every start-up).
bool TryDeserialize(const fb::Ruleset& root, hs_database_t** out, hs_scratch_t** scratch_out) {
  const auto* blob = root.hs_database();
  if (!blob || blob->size() == 0) return false;
  if (!root.hs_version() || root.hs_version()->string_view() != hs_version()) return false;
  hs_database_t* db = nullptr;
  if (hs_deserialize_database(reinterpret_cast<const char*>(blob->data()), blob->size(), &db) !=
      HS_SUCCESS) {
    return false;
  }
  hs_scratch_t* scratch = nullptr;
  if (hs_alloc_scratch(db, &scratch) != HS_SUCCESS) {
    hs_free_database(db);
    return false;
  }
  *out = db;
  *scratch_out = scratch;
  return true;
}

struct ExampleHits {
  uint32_t signal_count = 0;
  uint32_t want = 0;
  bool found = false, foreign = false;
};

int OnExampleMatch(unsigned id, unsigned long long, unsigned long long, unsigned, void* ctx) {
  auto* h = static_cast<ExampleHits*>(ctx);
  if (id >= h->signal_count) h->foreign = true;
  if (id == h->want) h->found = true;
  return 0;
}

// A database that deserializes, with the right version and checksum, may
// still be another ruleset's (a file assembled by hand or by a buggy tool):
// its ids would name the wrong signals, or none. Each signal's first example
// must match as that signal, and no id may lie past the signal table.
bool DatabaseFitsSignals(const hs_database_t* db, hs_scratch_t* scratch,
                         const std::vector<SignalInfo>& signals) {
  bool ok = true;
  for (uint32_t g = 0; ok && g < signals.size(); ++g) {
    const auto* examples = signals[g].signal->examples();
    if (!examples || examples->size() == 0) continue;
    std::string_view line = examples->Get(0)->string_view();
    ExampleHits h;
    h.signal_count = static_cast<uint32_t>(signals.size());
    h.want = g;
    if (hs_scan(db, line.data(), static_cast<unsigned>(line.size()), 0, scratch, OnExampleMatch,
                &h) != HS_SUCCESS ||
        h.foreign || !h.found) {
      ok = false;
    }
  }
  return ok;
}

absl::Status NotValid(std::string_view name, std::string_view why) {
  return absl::InvalidArgumentError(StrCat(name, ": not a valid ruleset: ", why));
}

}  // namespace

// Loading runs in stages: the buffer's framing, the signal index (with the
// compiler's caps), the checksums, trust, RE2 checks where the file is not
// trusted, the priors, and the pattern database (stored or recompiled).
absl::Status Ruleset::Init(std::string_view name, bool built_in) {
  FL_RETURN_IF_ERROR(VerifyBuffer(name));
  FL_ASSIGN_OR_RETURN(uint64_t patterns_sum, IndexSignals(name));
  FL_ASSIGN_OR_RETURN(bool legacy_checksums, CheckChecksums(name, patterns_sum, built_in));
  std::string why;
  if (built_in) {
    trust_ = RulesetTrust::kBuiltIn;
  } else if (legacy_checksums) {
    trust_ = RulesetTrust::kUntrusted;
    why = "written by an older faultline (checksums under the old FNV-1a offset basis); compile "
          "it again to load it without recompiling";
  } else {
    trust_ = Authenticate(&why);
  }
  FL_RETURN_IF_ERROR(CheckRegexes(name));
  ReadPriors();
  return LoadDatabase(std::move(why));
}

absl::Status Ruleset::VerifyBuffer(std::string_view name) {
  if (buffer_.size() < 8) return NotValid(name, "too short");
  if (!flatbuffers::BufferHasIdentifier(buffer_.data(), fb::RulesetIdentifier())) {
    return NotValid(name, "wrong file identifier (expected FLRS)");
  }
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(buffer_.data()), buffer_.size(),
                                 /*max_depth=*/64, /*max_tables=*/10'000'000);
  if (!fb::VerifyRulesetBuffer(verifier)) return NotValid(name, "FlatBuffers verification failed");
  root_ = fb::GetRuleset(buffer_.data());
  if (root_->format_version() < kOldestRulesetFormatVersion || root_->format_version() > kRulesetFormatVersion) {
    return absl::FailedPreconditionError(StrCat(
        name, ": ruleset format version ", root_->format_version(), " is not supported (this ",
        "library reads versions ", kOldestRulesetFormatVersion, " to ", kRulesetFormatVersion,
        "); recompile it with this faultline"));
  }
  if (!root_->rules() || root_->rules()->size() == 0) return NotValid(name, "no rules");
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> Ruleset::IndexSignals(std::string_view name) {
  // Every string the rest of the engine dereferences must be present.
  const auto* rules = root_->rules();
  uint32_t gid = 0;
  // The compiler's resource caps hold for loaded files too: a hand-made or
  // hostile .flrules must not make RE2 or a Hyperscan recompile eat the
  // machine.
  const CompileOptions caps;
  size_t total_bytes = 0, total_repeats = 0;
  uint64_t patterns_sum = kFnvOffset;
  for (flatbuffers::uoffset_t r = 0; r < rules->size(); ++r) {
    const fb::Rule* rule = rules->Get(r);
    if (!rule->id() || !rule->reference() || !rule->title() || !rule->category() ||
        !rule->fix() || !rule->verify()) {
      return NotValid(name, StrCat("rule ", r, " lacks a required string"));
    }
    if (rule->layer() < RuleLayer::Hardware || rule->layer() > RuleLayer::Application) {
      return NotValid(name, StrCat("rule '", rule->id()->str(), "': bad layer"));
    }
    if (!rule_by_id_.emplace(rule->id()->string_view(), static_cast<int>(r)).second) {
      return NotValid(name, StrCat("duplicate rule id '", rule->id()->str(), "'"));
    }
    rule_first_signal_.push_back(gid);
    const auto* sigs = rule->signals();
    for (flatbuffers::uoffset_t s = 0; sigs && s < sigs->size(); ++s, ++gid) {
      const fb::Signal* sig = sigs->Get(s);
      if (!sig->id() || !sig->pattern()) {
        return NotValid(name, StrCat("rule '", rule->id()->str(), "': signals[", s,
                                 "] lacks id or pattern"));
      }
      if (sig->role() < SignalRole::Initiating || sig->role() > SignalRole::Metric) {
        return NotValid(name, StrCat("rule '", rule->id()->str(), "': signals[", s, "]: bad role"));
      }
      if (sig->prefilter() && !IsLiteralAlternation(sig->prefilter()->string_view())) {
        return NotValid(name, StrCat("rule '", rule->id()->str(), "': signals[", s,
                                     "].prefilter: not a literal alternation"));
      }
      std::string_view pat = sig->pattern()->string_view();
      size_t repeats = BoundedRepeatTotal(pat);
      total_bytes += pat.size();
      for (std::string_view x : ExtractsOf(*sig)) total_bytes += x.size();
      total_repeats += repeats;
      if (pat.size() > caps.max_pattern_length || repeats > caps.max_repeat_total ||
          gid >= caps.max_signals || total_bytes > caps.max_total_pattern_bytes ||
          total_repeats > caps.max_source_repeat_total) {
        return NotValid(name, StrCat("rule '", rule->id()->str(), "': signals[", s,
                           "].pattern: beyond the compiler's caps (length, bounded repeats, "
                           "signal count or total size)"));
      }
      if (absl::Status st = CheckPatternSingleLine(pat, caps.max_bounded_repeat); !st.ok()) {
        return NotValid(name, StrCat("rule '", rule->id()->str(), "': signals[", s,
                           "].pattern: ", st.message()));
      }
      SignalInfo si;
      si.rule_index = r;
      si.signal_index = s;
      si.role = sig->role();
      si.detail_next_line = sig->detail_next_line();
      si.detail_exception_line = sig->detail_exception_line();
      si.detail_line_above = sig->detail_line_above();
      si.rule = rule;
      si.signal = sig;
      patterns_sum = SignalsChecksumStep(patterns_sum, pat, ExtractsOf(*sig), sig->caseless());
      signals_.push_back(std::move(si));
    }
  }
  if (signals_.empty()) return NotValid(name, "no signals");
  return patterns_sum;
}

absl::StatusOr<bool> Ruleset::CheckChecksums(std::string_view name, uint64_t patterns_sum,
                                             bool built_in) const {
  // The checksums catch damage. A file written before kFnvOffset was
  // corrected carries them under kLegacyFnvOffset: it is loaded like any
  // unsigned file (recompiled), never refused, so no working ruleset is lost.
  // Built-in bytes (linked into the library, or compiled by this process)
  // were never written to or read from a file, so the database's FNV-1a,
  // one byte at a time over ~0.6 MB (8% of a one-line run's instructions),
  // is not taken for them: every byte read from anywhere else is checked
  // as before. The embedded ruleset's checksum is checked by its test
  // (Loader.EmbeddedDefaultChecksumsHold), and Hyperscan's own CRC32C
  // of the database still runs in hs_deserialize_database.
  bool legacy_checksums = false;
  const uint64_t stored_patterns_sum = root_->patterns_checksum();
  if (stored_patterns_sum != 0 && stored_patterns_sum != patterns_sum) {
    uint64_t legacy_sum = kLegacyFnvOffset;
    for (const SignalInfo& si : signals_) {
      legacy_sum = SignalsChecksumStep(legacy_sum, si.signal->pattern()->string_view(),
                                       ExtractsOf(*si.signal), si.signal->caseless());
    }
    if (stored_patterns_sum != legacy_sum) {
      return NotValid(name, "patterns_checksum: pattern checksum mismatch (corrupt file)");
    }
    legacy_checksums = true;
  }
  const auto* blob = root_->hs_database();
  if (!built_in && blob && blob->size() > 0) {
    std::string_view db_bytes(reinterpret_cast<const char*>(blob->data()), blob->size());
    if (Fnv1a64(db_bytes) != root_->hs_checksum()) {
      if (Fnv1a64(db_bytes, kLegacyFnvOffset) != root_->hs_checksum()) {
        return NotValid(name, "hs_checksum: pattern database checksum mismatch (corrupt file)");
      }
      legacy_checksums = true;
    }
  }

  return legacy_checksums;
}

absl::Status Ruleset::CheckRegexes(std::string_view name) const {
  // Patterns the compiler checked in RE2 (its checksum holds, and the file
  // is one this installation trusts) get their RE2 objects on first use;
  // anything else is checked here, all of it, with errors naming the rule.
  if (root_->patterns_checksum() == 0 || trust_ == RulesetTrust::kUntrusted) {
    for (const SignalInfo& si : signals_) {
      std::string error;
      if (!si.BuildRegex(&error)) {
        return NotValid(name, StrCat("rule '", si.rule->id()->str(), "': signals[", si.signal_index, "].",
                           error));
      }
    }
  }
  return absl::OkStatus();
}

void Ruleset::ReadPriors() {
  // Priors of statistical references.
  if (root_->references()) {
    simdjson::dom::parser parser;
    for (const fb::Reference* ref : *root_->references()) {
      if (!ref->title() || !ref->prior_json() || ref->prior_json()->size() == 0) continue;
      simdjson::dom::element doc;
      if (parser.parse(ref->prior_json()->str()).get(doc)) continue;
      Prior p;
      p.reference = ref->title()->str();
      std::string_view kind;
      if (!doc["kind"].get_string().get(kind)) p.kind = std::string(kind);
      double d;
      if (!doc["gpus"].get_double().get(d)) p.gpus = d;
      for (const char* key : {"hours", "per_week", "value", "mttf_hours"}) {
        if (!doc[key].get_double().get(d)) {
          p.value = d;
          break;
        }
      }
      priors_.push_back(std::move(p));
    }
  }
}

absl::Status Ruleset::LoadDatabase(std::string why) {
  // Hyperscan does not validate a serialized database beyond its CRC, which
  // anyone who can write the file can recompute: only a trusted one is
  // deserialized.
  hs_database_t* db = nullptr;
  hs_scratch_t* scratch = nullptr;
  const bool fits = trust_ != RulesetTrust::kUntrusted && TryDeserialize(*root_, &db, &scratch) &&
                    DatabaseFitsSignals(db, scratch, signals_);
  if (scratch) hs_free_scratch(scratch);
  if (fits) {
    db_.reset(db);
    load_note_ = trust_ == RulesetTrust::kBuiltIn
                     ? "built-in: stored pattern database used"
                     : "authenticated: stored pattern database used (its MAC verifies under "
                       "this installation's ruleset key)";
  } else {
    if (db) hs_free_database(db);
    if (trust_ != RulesetTrust::kUntrusted) {
      why = "the stored database was built for another CPU or library version";
    }
    FL_ASSIGN_OR_RETURN(db_, CompileDatabase(*root_));
    recompiled_ = true;
    load_note_ = StrCat(TrustName(trust_), ": pattern database recompiled from the stored patterns (",
                        why, ")");
  }
  return absl::OkStatus();
}

RulesetTrust Ruleset::Authenticate(std::string* why) const {
  const auto* key_id = root_->mac_key_id();
  const auto* mac = root_->mac();
  auto all_zero = [](const flatbuffers::Vector<uint8_t>* v) {
    for (uint8_t b : *v) {
      if (b != 0) return false;
    }
    return true;
  };
  if (!key_id || !mac || key_id->size() != kRulesetKeyIdBytes || mac->size() != kRulesetMacBytes ||
      all_zero(mac)) {
    *why = "the file is not signed by faultline compile";
    return RulesetTrust::kUntrusted;
  }
  std::optional<RulesetKey> key = ReadRulesetKey(why);
  if (!key) return RulesetTrust::kUntrusted;
  const auto id = key->Id();
  if (std::memcmp(id.data(), key_id->data(), id.size()) != 0) {
    *why = StrCat("the file is signed with another installation's key, not ", key->path);
    return RulesetTrust::kUntrusted;
  }
  const size_t mac_offset =
      static_cast<size_t>(mac->data() - reinterpret_cast<const uint8_t*>(buffer_.data()));
  auto sum = RulesetMac(*key, buffer_, mac_offset);
  if (!sum.ok()) {
    *why = std::string(sum.status().message());
    return RulesetTrust::kUntrusted;
  }
  if (!MacEqual(sum->data(), mac->data(), sum->size())) {
    *why = StrCat("its MAC does not verify under ", key->path, " (changed after it was signed)");
    return RulesetTrust::kUntrusted;
  }
  return RulesetTrust::kAuthenticated;
}

const char* TrustName(RulesetTrust t) {
  switch (t) {
    case RulesetTrust::kBuiltIn: return "built-in";
    case RulesetTrust::kAuthenticated: return "authenticated";
    case RulesetTrust::kUntrusted: return "untrusted";
  }
  return "unknown";
}

std::vector<std::string_view> ExtractsOf(const fb::Signal& sig) {
  std::vector<std::string_view> out;
  if (sig.extract() && sig.extract()->size() > 0) out.push_back(sig.extract()->string_view());
  if (sig.extract_more()) {
    for (const flatbuffers::String* x : *sig.extract_more()) {
      if (x && x->size() > 0) out.push_back(x->string_view());
    }
  }
  return out;
}

bool SignalInfo::BuildRegex(std::string* error) const {
  const std::string& why = !ConfirmRe2().confirm_error.empty() ? regex->confirm_error : ExtractRe2().extract_error;
  if (!why.empty() && error) *error = why;
  return why.empty();
}

void SignalInfo::BuildShapes() const {
  SignalRegex& rx = *regex;
  std::call_once(rx.once, [&] {
    const std::vector<std::string_view> srcs = ExtractsOf(*signal);
    for (std::string_view src : srcs) {
      Extractor& x = rx.extracts.emplace_back();
      if (!signal->caseless()) x.shape = ParseDigitShape(src);
      // ParseDigitShape takes named captures only, so its captures are RE2's
      // groups (digit_shape_test checks it on the rulesets).
      if (x.shape) x.capture_names = x.shape->captures;
      if (!x.shape && !signal->caseless()) x.items = ParseCaptureShape(src);
      if (x.items) x.capture_names = x.items->captures;  // named only, so RE2's too
      if (!x.shape && !x.items) x.tail = ParseTailRun(src);
    }
    if (!signal->caseless()) rx.confirm_items = ParseItemShape(signal->pattern()->string_view());
    if (rx.confirm_items && rx.extracts.size() == 1 && rx.extracts[0].shape) {
      // The extract's items, its captures plain groups.
      if (const std::optional<ItemShape> x = ParseItemShape(srcs[0])) {
        rx.confirm_before = ItemsBefore(*rx.confirm_items, *x);
      }
    }
  });
  rx.built.store(true, std::memory_order_release);
}

namespace {

RE2::Options Re2Options(bool caseless) {
  RE2::Options ro;
  ro.set_log_errors(false);
  ro.set_case_sensitive(!caseless);
  // The compiler's cap holds for loaded files too.
  ro.set_max_mem(CompileOptions().re2_max_mem);
  return ro;
}

// `re`'s group names by group number - 1 (empty for an unnamed group): the
// names ExtractFields gives the captures of an extract, or of its head.
std::vector<std::string> CaptureNames(const RE2& re) {
  std::vector<std::string> names(re.NumberOfCapturingGroups());
  for (const auto& [group_name, idx] : re.NamedCapturingGroups()) {
    if (idx >= 1 && static_cast<size_t>(idx) <= names.size()) names[idx - 1] = group_name;
  }
  return names;
}

}  // namespace

void SignalInfo::BuildConfirmRe2() const {
  SignalRegex& rx = *regex;
  std::call_once(rx.confirm_once, [&] {
    auto confirm = std::make_unique<RE2>(signal->pattern()->string_view(), Re2Options(signal->caseless()));
    if (!confirm->ok()) {
      rx.confirm_error = StrCat("pattern: RE2 rejects it: ", confirm->error());
      return;
    }
    rx.confirm = std::move(confirm);
  });
  rx.confirm_built.store(true, std::memory_order_release);
}

void SignalInfo::BuildTailRe2() const {
  SignalRegex& rx = *regex;
  std::call_once(rx.tails_once, [&] {
    const RE2::Options ro = Re2Options(signal->caseless());
    for (Extractor& x : rx.extracts) {
      if (!x.tail) continue;
      auto re = std::make_unique<RE2>(x.tail->head, ro);
      // The head has the extract's groups; were it rejected, `re` answers.
      if (!re->ok()) continue;
      x.capture_names = CaptureNames(*re);
      x.tail_re = std::move(re);
    }
  });
  rx.tails_built.store(true, std::memory_order_release);
}

void SignalInfo::BuildExtractRe2() const {
  SignalRegex& rx = *regex;
  TailRe2();  // a head's names are set there, and read meanwhile
  std::call_once(rx.extracts_once, [&] {
    const RE2::Options ro = Re2Options(signal->caseless());
    const std::vector<std::string_view> srcs = ExtractsOf(*signal);
    for (size_t i = 0; i < srcs.size(); ++i) {
      Extractor& x = rx.extracts[i];
      x.re = std::make_unique<RE2>(srcs[i], ro);
      if (!x.re->ok()) {
        rx.extract_error = StrCat("extract", srcs.size() > 1 ? StrCat("[", i, "]") : "",
                                  ": RE2 rejects it: ", x.re->error());
        return;
      }
      if (x.shape || x.items || x.tail_re) continue;  // its names are the shape's or the head's (read meanwhile)
      x.capture_names = CaptureNames(*x.re);
    }
  });
  rx.extracts_built.store(true, std::memory_order_release);
}

namespace {

// Whether the shape matched, or nullopt when it cannot tell.
std::optional<bool> ExtractByShape(const Extractor& x, std::string_view subject,
                                   std::vector<std::pair<std::string_view, std::string_view>>* out) {
  std::string_view vals[kMaxShapeCaptures];
  const std::optional<bool> m =
      x.shape ? MatchDigitShape(*x.shape, subject, vals) : MatchCaptureShape(*x.items, subject, vals);
  if (!m || !*m) return m;
  for (size_t k = 0; k < x.capture_names.size(); ++k) {
    if (vals[k].data() != nullptr) out->emplace_back(x.capture_names[k], vals[k]);  // RE2 skips those unset
  }
  return true;
}

}  // namespace

bool SignalInfo::Usable() const {
  const SignalRegex& rx = *regex;
  return (!rx.confirm_built.load(std::memory_order_acquire) || rx.confirm_error.empty()) &&
         (!rx.extracts_built.load(std::memory_order_acquire) || rx.extract_error.empty());
}

bool SignalInfo::Confirms(std::string_view subject) const {
  const SignalRegex& rx = Regex();
  if (rx.confirm_items) {
    if (const std::optional<bool> m = MatchItemShape(*rx.confirm_items, subject)) return *m;
  }
  const RE2* re = ConfirmRe2().confirm.get();
  return re && RE2::PartialMatch(subject, *re);
}

std::optional<bool> SignalInfo::ConfirmAndExtract(
    std::string_view subject, std::vector<std::pair<std::string_view, std::string_view>>* out) const {
  const SignalRegex& rx = Regex();
  if (!rx.confirm_before) return std::nullopt;
  const Extractor& x = rx.extracts[0];
  std::string_view vals[kMaxShapeCaptures];
  size_t start = 0;
  const std::optional<bool> m = MatchDigitShape(*x.shape, subject, vals, &start);
  if (!m) return std::nullopt;
  // The pattern's every match holds one of the extract.
  if (!*m) return false;
  if (ItemsEndAt(*rx.confirm_before, subject, start) != 1 && !Confirms(subject)) return false;
  for (size_t k = 0; k < x.capture_names.size(); ++k) {
    if (vals[k].data() != nullptr) out->emplace_back(x.capture_names[k], vals[k]);
  }
  return true;
}

namespace {

// RE2's captures of `re` (x's extract, or with `tail` its head) in
// `subject`; whether it matched, or nullopt when the head cannot tell (a
// non-ASCII byte in the run's reach). The arrays live here, not in
// ExtractFields: lines the hand parser serves do not construct them.
std::optional<bool> ExtractByRe2(const Extractor& x, const RE2& re, const TailRun* tail, std::string_view subject,
                                 std::vector<std::pair<std::string_view, std::string_view>>* out) {
  // On the stack up to kOnStack captures (every extractor of the default
  // ruleset): thread_local vectors cost a TLS lookup each in a shared library.
  constexpr size_t kOnStack = 16;
  re2::StringPiece vals_stack[kOnStack];
  RE2::Arg args_stack[kOnStack];
  const RE2::Arg* argp_stack[kOnStack];
  std::vector<re2::StringPiece> vals_heap;
  std::vector<RE2::Arg> args_heap;
  std::vector<const RE2::Arg*> argp_heap;
  size_t n = x.capture_names.size();
  re2::StringPiece* vals = vals_stack;
  RE2::Arg* args = args_stack;
  const RE2::Arg** argp = argp_stack;
  if (n > kOnStack) {
    vals_heap.assign(n, re2::StringPiece());
    args_heap.resize(n);
    argp_heap.resize(n);
    vals = vals_heap.data();
    args = args_heap.data();
    argp = argp_heap.data();
  }
  for (size_t k = 0; k < n; ++k) {
    vals[k] = re2::StringPiece();
    args[k] = &vals[k];
    argp[k] = &args[k];
  }
  if (!RE2::PartialMatchN(re2::StringPiece(subject.data(), subject.size()), re, argp, static_cast<int>(n))) {
    return false;
  }
  if (tail != nullptr && !tail->groups.empty()) {
    // The run's greedy rest: up to `more` bytes past the match, to a newline.
    const re2::StringPiece& g = vals[tail->groups[0]];
    if (g.data() == nullptr) return std::nullopt;
    const size_t end = static_cast<size_t>(g.data() + g.size() - subject.data());
    size_t add = 0;
    for (; add < tail->more && end + add < subject.size() && subject[end + add] != '\n'; ++add) {
      if (static_cast<unsigned char>(subject[end + add]) >= 0x80) return std::nullopt;
    }
    for (int k : tail->groups) vals[k] = re2::StringPiece(vals[k].data(), vals[k].size() + add);
  }
  for (size_t k = 0; k < n; ++k) {
    if (!x.capture_names[k].empty() && vals[k].data() != nullptr) {
      out->emplace_back(x.capture_names[k], std::string_view(vals[k].data(), vals[k].size()));
    }
  }
  return true;
}

}  // namespace

std::optional<TailRun> ParseTailRun(std::string_view p) {
  size_t closes = 0;
  while (closes < p.size() && p[p.size() - 1 - closes] == ')') ++closes;
  const std::string_view body = p.substr(0, p.size() - closes);
  // `[^\n]{m,n}` ends the body.
  constexpr std::string_view kRun = "[^\\n]";
  const size_t brace = body.rfind('{');
  if (body.empty() || body.back() != '}' || brace == std::string_view::npos || brace < kRun.size() ||
      body.substr(brace - kRun.size(), kRun.size()) != kRun) {
    return std::nullopt;
  }
  size_t m = 0, n = 0, i = brace + 1;
  auto number = [&](size_t* v) {
    const size_t from = i;
    while (i < body.size() && body[i] >= '0' && body[i] <= '9' && i - from < 4) {
      *v = *v * 10 + static_cast<size_t>(body[i++] - '0');
    }
    return i > from;
  };
  if (!number(&m) || i >= body.size() || body[i++] != ',' || !number(&n) || i + 1 != body.size() || n <= m) {
    return std::nullopt;
  }
  const size_t run = brace - kRun.size();
  // Walk the pattern before the run token by token: the run must start a
  // token outside a class, and no alternation may share a level with it
  // (another branch could end its groups elsewhere).
  struct Level {
    int capture;  // group number - 1, or -1
    bool alternation;
  };
  std::vector<Level> stack{{-1, false}};
  int captures = 0;
  size_t at = 0;
  while (at < run) {
    const char c = p[at];
    if (c == '\\') {
      at += 2;
    } else if (c == '[') {
      size_t j = at + 1;
      if (j < run && p[j] == '^') ++j;
      if (j < run && p[j] == ']') ++j;
      while (j < run && p[j] != ']') j += p[j] == '\\' ? 2 : 1;
      if (j >= run) return std::nullopt;
      at = j + 1;
    } else if (c == '(') {
      if (at + 1 < run && p[at + 1] == '?') {
        if (at + 2 < run && p[at + 2] == ':') {
          stack.push_back({-1, false});
        } else if (at + 3 < run && p[at + 2] == 'P' && p[at + 3] == '<') {
          stack.push_back({captures++, false});
        } else {
          return std::nullopt;  // flags, or a form not read here
        }
      } else {
        stack.push_back({captures++, false});
      }
      ++at;
    } else if (c == ')') {
      if (stack.size() < 2) return std::nullopt;
      stack.pop_back();
      ++at;
    } else {
      if (c == '|') stack.back().alternation = true;
      ++at;
    }
  }
  if (at != run || stack.size() != closes + 1) return std::nullopt;
  TailRun t;
  for (const Level& l : stack) {
    if (l.alternation) return std::nullopt;
    if (l.capture >= 0) t.groups.push_back(l.capture);
  }
  t.head = std::string(p.substr(0, run));
  if (m > 0) t.head += StrCat(kRun, "{", m, "}");
  t.head.append(closes, ')');
  t.more = n - m;
  return t;
}

bool SignalInfo::ExtractFields(
    std::string_view subject,
    std::vector<std::pair<std::string_view, std::string_view>>* out) const {
  bool any = false;
  for (const Extractor& x : extracts()) {
    if (const std::optional<bool> m = x.shape || x.items ? ExtractByShape(x, subject, out) : std::nullopt) {
      any = *m || any;
      continue;
    }
    if (x.tail) {
      TailRe2();
      const std::optional<bool> m = x.tail_re ? ExtractByRe2(x, *x.tail_re, &*x.tail, subject, out) : std::nullopt;
      if (m) {
        any = *m || any;
        continue;
      }
    }
    if (!ExtractRe2().extract_error.empty()) return any;  // x.re and its names are set past this
    any = ExtractByRe2(x, *x.re, nullptr, subject, out).value_or(false) || any;
  }
  return any;
}

const SignalRegex& SignalInfo::Regex() const {
  if (!regex->built.load(std::memory_order_acquire)) BuildShapes();
  return *regex;
}

const SignalRegex& SignalInfo::ConfirmRe2() const {
  Regex();
  if (!regex->confirm_built.load(std::memory_order_acquire)) BuildConfirmRe2();
  return *regex;
}

const SignalRegex& SignalInfo::TailRe2() const {
  Regex();
  if (!regex->tails_built.load(std::memory_order_acquire)) BuildTailRe2();
  return *regex;
}

const SignalRegex& SignalInfo::ExtractRe2() const {
  Regex();
  if (!regex->extracts_built.load(std::memory_order_acquire)) BuildExtractRe2();
  return *regex;
}

std::string_view Ruleset::name() const {
  return root_->name() ? root_->name()->string_view() : std::string_view("unnamed");
}
std::string_view Ruleset::version() const {
  return root_->version() ? root_->version()->string_view() : std::string_view("0");
}

int Ruleset::FindRule(std::string_view id) const {
  auto it = rule_by_id_.find(id);
  return it == rule_by_id_.end() ? -1 : it->second;
}

absl::StatusOr<HsScratchPtr> Ruleset::AllocScratch() const {
  hs_scratch_t* s = nullptr;
  if (hs_alloc_scratch(db_.get(), &s) != HS_SUCCESS) {
    return absl::ResourceExhaustedError("hs_alloc_scratch failed");
  }
  return HsScratchPtr(s);
}

}  // namespace faultline
