// The loaded, immutable ruleset: the FlatBuffers metadata (zero-copy), one
// Hyperscan block-mode database holding every signal of every rule, and for
// each signal the RE2 objects that confirm a Hyperscan match on its line and
// extract named captures.
//
// Thread-safety: a Ruleset is immutable after Load*/Compile* return and is
// shared as std::shared_ptr<const Ruleset> by any number of threads. Scratch
// space for Hyperscan is per thread (see AllocScratch).
#ifndef FAULTLINE_RULESET_RULESET_H_
#define FAULTLINE_RULESET_RULESET_H_

#include <hs/hs.h>

#include <cstdint>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "ruleset/digit_shape.h"
#include "re2/re2.h"
#include "ruleset_generated.h"

namespace faultline {

// Version 2 adds Signal.prefilter: a version-1 reader would take a
// prefiltered signal's Hyperscan match as confirmed, so it must refuse
// version 2 (and recompile from the source). Version-1 files load here.
inline constexpr uint32_t kRulesetFormatVersion = 2;
inline constexpr uint32_t kOldestRulesetFormatVersion = 1;

using SignalRole = fb::Role;
using RuleLayer = fb::Layer;

const char* RoleName(SignalRole r);
const char* LayerName(RuleLayer l);
// The rule source's names of a rule's `action` values (rulesets/README.md,
// "Actions"); "" for Drain::None and RecurrenceScope::Never.
const char* ActionDefaultName(fb::ActionDefault k);
const char* DrainName(fb::Drain d);
const char* RecurrenceScopeName(fb::RecurrenceScope r);

// A signal's matchers. Most signals never match a line of a given job, so a
// ruleset whose patterns carry the compiler's checksum builds them on first
// use (from any thread) rather than at load: building all of them was ~80%
// of the load time. First the hand parser's shapes (digit_shape.h), which
// answer most matched lines; the RE2 objects only when a line needs them
// (no shape takes the pattern, or the shape cannot tell on that line).
// An extract that ends in a bounded run of `[^\n]` (`[^\n]{m,n}`, then only
// groups closing: a message captured to at most n characters). RE2 builds
// and first runs such a run at a cost that grows with n (for n = 200: ~5 M
// instructions to build, ~15 M for the DFA's first line). `head` is the
// extract with the run cut to `{m}`: a start and a path through the rest
// satisfy it exactly when they satisfy the extract (the run takes at least
// m characters either way), so its match and captures are the extract's
// but for the run's greedy rest, which is taken by hand: up to n - m more
// bytes, none a newline, over ASCII (past a non-ASCII byte RE2 answers, as
// it counts characters there). `groups`: the captures (index = group number
// - 1) that hold the run, which all end where the match ends.
struct TailRun {
  std::string head;
  size_t more = 0;
  std::vector<int> groups;
};
std::optional<TailRun> ParseTailRun(std::string_view pattern);

struct Extractor {
  // Named captures; built with the signal's other extractors' RE2 objects
  // when a line first needs one of them (SignalRegex::extracts_once), null
  // before that.
  std::unique_ptr<RE2> re;
  // index = group number - 1; the shape's captures when `shape` is set,
  // else RE2's groups (set with `re`).
  std::vector<std::string> capture_names;
  // Set when the pattern is literals and captured digits (digit_shape.h):
  // then this, not `re`, extracts where it can tell.
  std::optional<DigitShape> shape;
  // Else set when the pattern is of the hand parser's items with captures
  // (digit_shape.h, ParseCaptureShape): then this extracts where it can tell.
  std::optional<ItemShape> items;
  // Else set when the extract ends in a bounded run (TailRun): `tail_re` is
  // its head in RE2, built with the signal's other heads when a line first
  // needs one (SignalRegex::tails_once); `re` then only past a non-ASCII byte.
  std::optional<TailRun> tail;
  std::unique_ptr<RE2> tail_re;
};
struct SignalRegex {
  std::once_flag once;  // the shapes and the extractors' list
  // Set once `once` has run: the check on every matched line is one load,
  // not a call_once (pthread_once and a TLS lookup in a shared library).
  std::atomic<bool> built{false};
  std::once_flag confirm_once;  // `confirm`
  std::atomic<bool> confirm_built{false};
  std::once_flag extracts_once;  // every extractor's `re`
  std::atomic<bool> extracts_built{false};
  std::once_flag tails_once;  // every extractor's `tail_re`
  std::atomic<bool> tails_built{false};
  std::unique_ptr<RE2> confirm;  // the pattern itself, in RE2
  // Set when the pattern is of the hand parser's items (digit_shape.h): then
  // this, not `confirm`, tells whether a subject matches, where it can.
  std::optional<ItemShape> confirm_items;
  // Set when those items end in the signal's only extract's, which is a
  // digit shape (ItemsBefore): the items before them (ConfirmAndExtract).
  std::optional<std::vector<ShapeItem>> confirm_before;
  std::vector<Extractor> extracts;  // `extract`, then `extract_more`
  // Why RE2 rejected the pattern, or an extract; empty when it took it (or
  // was not asked yet).
  std::string confirm_error;
  std::string extract_error;
};

// The Hyperscan flags a signal's pattern compiles with, wherever it is
// compiled (the ruleset's database, per-signal cost measurement, benches).
// Multiline: a pattern sees one line (RE2 confirms it on the line), so '^'
// and '$' are a line's start and end, not the scanned block's.
inline unsigned SignalHsFlags(bool caseless) {
  return (caseless ? HS_FLAG_CASELESS : 0) | HS_FLAG_MULTILINE;
}

struct SignalInfo {
  uint32_t rule_index = 0;
  uint32_t signal_index = 0;  // within the rule
  SignalRole role = SignalRole::Context;
  // The evidence is the line after the matched one (Signal::detail_next_line).
  bool detail_next_line = false;
  // The evidence is the exception line that ends the traceback whose header
  // the signal matched (Signal::detail_exception_line).
  bool detail_exception_line = false;
  // The evidence is the error line right above the crash report the signal
  // matched, when there is one (Signal::detail_line_above).
  bool detail_line_above = false;
  const fb::Rule* rule = nullptr;
  const fb::Signal* signal = nullptr;

  // The pattern in RE2, built now if it was not; nullptr when RE2 rejects it
  // (only a hand-made file can get there; the signal then never confirms a
  // match).
  const RE2* confirm() const { return ConfirmRe2().confirm.get(); }
  // False when RE2 is known to reject the pattern or an extract: a ruleset
  // loads only when the compiler or the load checked them (CheckRegexes),
  // so this does not build RE2 to ask.
  bool Usable() const;
  // RE2::PartialMatch(subject, *confirm()), by the hand parser where it
  // takes the pattern (RE2 is then not built); false when RE2 rejects it.
  bool Confirms(std::string_view subject) const;
  // The extractors, each run on its own over the line; empty when the signal
  // has none. An extractor's `re` is set only once RE2 is built (BuildRegex).
  const std::vector<Extractor>& extracts() const { return Regex().extracts; }
  // Runs every extractor over `subject` and appends (group name, value) for
  // each named group that captured; the views point into the extractors'
  // names and into `subject`. Returns whether any extractor matched.
  bool ExtractFields(std::string_view subject,
                     std::vector<std::pair<std::string_view, std::string_view>>* out) const;
  // Confirms(subject) and, when it holds, what ExtractFields(subject, out)
  // appends, from one walk where the pattern ends in its only extract (a
  // digit shape): the extract's leftmost match, then the pattern's items
  // before it, read back from where it starts (the pattern holds then; with
  // no match of the extract it cannot). Nullopt when not taken, or the shape
  // could not tell: then ask Confirms and ExtractFields.
  std::optional<bool> ConfirmAndExtract(std::string_view subject,
                                        std::vector<std::pair<std::string_view, std::string_view>>* out) const;
  // Builds the shapes and the RE2 objects now; false when RE2 rejects the
  // pattern or the extract, with the reason in *error.
  bool BuildRegex(std::string* error) const;

  std::unique_ptr<SignalRegex> regex = std::make_unique<SignalRegex>();

 private:
  const SignalRegex& Regex() const;  // the shapes, built on first call
  const SignalRegex& ConfirmRe2() const;  // the shapes and `confirm`
  const SignalRegex& ExtractRe2() const;  // the shapes and the extractors' `re`
  const SignalRegex& TailRe2() const;  // the shapes and the extractors' `tail_re`
  void BuildShapes() const;
  void BuildConfirmRe2() const;
  void BuildExtractRe2() const;
  void BuildTailRe2() const;
};

struct HsDatabaseDeleter {
  void operator()(hs_database_t* db) const { hs_free_database(db); }
};
struct HsScratchDeleter {
  void operator()(hs_scratch_t* s) const { hs_free_scratch(s); }
};
using HsScratchPtr = std::unique_ptr<hs_scratch_t, HsScratchDeleter>;

// Parsed prior figures of a statistical reference.
struct Prior {
  std::string reference;
  std::string kind;  // "mttf_hours", "failures_per_week", ...
  double gpus = 0;
  double value = 0;  // hours for mttf_hours, per week for failures_per_week
};

// Where a loaded ruleset's bytes come from, which decides whether its
// serialized Hyperscan database -- bytecode that Hyperscan runs unchecked --
// may be deserialized.
enum class RulesetTrust {
  kBuiltIn,        // linked into the library, or compiled by this process
  kAuthenticated,  // its MAC verifies under this installation's ruleset key
  kUntrusted,      // anything else: the database is recompiled from the patterns
};
const char* TrustName(RulesetTrust t);

class Ruleset {
 public:
  // Loads a compiled ruleset (copied). Its serialized database is used only
  // when the file's MAC verifies under this installation's key (see
  // ruleset_key.h) and it was built for this CPU and library version;
  // otherwise the database is recompiled from the stored patterns (~0.2 s
  // for the default ruleset) and every pattern is checked in RE2 at load.
  static absl::StatusOr<std::shared_ptr<const Ruleset>> LoadBuffer(
      std::string_view data, std::string_view name_for_errors);
  // A file as LoadBuffer; a directory is compiled (CompileRuleSource).
  static absl::StatusOr<std::shared_ptr<const Ruleset>> LoadFile(
      const std::string& path);
  // The ruleset compiled into the library at build time.
  static absl::StatusOr<std::shared_ptr<const Ruleset>> LoadDefault();
  // Bytes that need no MAC: those linked into the library and those this
  // process has just compiled. Never for bytes read from anywhere else.
  static absl::StatusOr<std::shared_ptr<const Ruleset>> LoadBuiltIn(
      std::string_view data, std::string_view name_for_errors);

  const fb::Ruleset* fb() const { return root_; }
  std::string_view name() const;
  std::string_view version() const;
  size_t rule_count() const { return root_->rules()->size(); }
  const fb::Rule* rule(size_t i) const { return root_->rules()->Get(i); }
  // -1 when no rule has that id.
  int FindRule(std::string_view id) const;

  const hs_database_t* database() const { return db_.get(); }
  size_t signal_count() const { return signals_.size(); }
  const SignalInfo& signal(uint32_t global_id) const { return signals_[global_id]; }
  // First global signal id of a rule.
  uint32_t first_signal(size_t rule_index) const { return rule_first_signal_[rule_index]; }
  const std::vector<Prior>& priors() const { return priors_; }
  // Whether the database was rebuilt at load from the stored patterns: the
  // file was not trusted, or its database did not fit this CPU or library.
  bool recompiled() const { return recompiled_; }
  RulesetTrust trust() const { return trust_; }
  // One sentence on how the database was obtained and why, starting with
  // TrustName(trust()), e.g. "untrusted: pattern database recompiled from
  // the stored patterns (the file is not signed by faultline compile)".
  const std::string& load_note() const { return load_note_; }

  absl::StatusOr<HsScratchPtr> AllocScratch() const;

  // The serialized FlatBuffer (as loaded).
  std::string_view buffer() const { return buffer_; }

 private:
  Ruleset() = default;
  static absl::StatusOr<std::shared_ptr<const Ruleset>> Load(std::string data,
                                                             std::string_view name_for_errors,
                                                             bool built_in);
  // The embedded default, used where it lies (never copied: ~0.6 MB and its
  // page faults at every start-up).
  static absl::StatusOr<std::shared_ptr<const Ruleset>> LoadEmbedded(std::string_view data,
                                                                     std::string_view name);
  absl::Status Init(std::string_view name_for_errors, bool built_in);
  // Init's stages (ruleset.cc says what each checks).
  absl::Status VerifyBuffer(std::string_view name);
  absl::StatusOr<uint64_t> IndexSignals(std::string_view name);  // the patterns' checksum
  absl::StatusOr<bool> CheckChecksums(std::string_view name, uint64_t patterns_sum,
                                      bool built_in) const;  // legacy?
  absl::Status CheckRegexes(std::string_view name) const;
  void ReadPriors();
  absl::Status LoadDatabase(std::string why_recompiled);
  // kAuthenticated when the file's MAC verifies under the installation's
  // key; otherwise kUntrusted with the reason in *why.
  RulesetTrust Authenticate(std::string* why) const;

  std::string owned_;       // the copy Load made; empty for the embedded default
  std::string_view buffer_;  // owned_, or the library's read-only embedded bytes
  const fb::Ruleset* root_ = nullptr;
  std::unique_ptr<hs_database_t, HsDatabaseDeleter> db_;
  std::vector<SignalInfo> signals_;
  std::vector<uint32_t> rule_first_signal_;
  std::unordered_map<std::string_view, int> rule_by_id_;
  std::vector<Prior> priors_;
  bool recompiled_ = false;
  RulesetTrust trust_ = RulesetTrust::kUntrusted;
  std::string load_note_;
};

// A signal's extractor sources: `extract` (when non-empty), then
// `extract_more`.
std::vector<std::string_view> ExtractsOf(const fb::Signal& sig);

// Compiles every signal pattern of a ruleset into one Hyperscan block-mode
// database. Errors name the rule and signal.
absl::StatusOr<std::unique_ptr<hs_database_t, HsDatabaseDeleter>>
CompileDatabase(const fb::Ruleset& rs);

}  // namespace faultline

#endif  // FAULTLINE_RULESET_RULESET_H_
