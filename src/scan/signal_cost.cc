#include "scan/signal_cost.h"

#include <hs/hs.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>

#include "input/input.h"
#include "scan/confirm_plan.h"
#include "util/bytescan.h"
#include "util/status_macros.h"
#include "util/strings.h"

namespace faultline {
namespace {

double ThreadCpu() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Whole lines of `data`, at most `cap` bytes of them (a single longer line
// is taken cut).
std::string_view LinePrefix(std::string_view data, uint64_t cap) {
  if (data.size() <= cap) return data;
  size_t nl = data.rfind('\n', cap > 0 ? cap - 1 : 0);
  return data.substr(0, nl == std::string_view::npos ? cap : nl + 1);
}

// Each signal's matched lines in `sample`: (start, end) pairs, one per line.
struct LineHits {
  const char* base = nullptr;
  size_t len = 0;
  std::vector<std::vector<std::pair<size_t, size_t>>>* lines = nullptr;
};

int OnMatch(unsigned id, unsigned long long, unsigned long long to, unsigned, void* vctx) {
  auto* c = static_cast<LineHits*>(vctx);
  if (id >= c->lines->size() || to == 0) return 0;
  size_t last = std::min<size_t>(to, c->len) - 1;
  const char* p = LastNewline(c->base, last);
  size_t start = p ? static_cast<size_t>(p - c->base) + 1 : 0;
  const void* e = std::memchr(c->base + last, '\n', c->len - last);
  size_t end = e ? static_cast<size_t>(static_cast<const char*>(e) - c->base) : c->len;
  auto& v = (*c->lines)[id];
  if (v.empty() || v.back().first != start) v.emplace_back(start, end);
  return 0;
}

struct DbDeleter {
  void operator()(hs_database_t* db) const { hs_free_database(db); }
};
struct ScratchDeleter {
  void operator()(hs_scratch_t* s) const { hs_free_scratch(s); }
};

int CountOnly(unsigned, unsigned long long, unsigned long long, unsigned, void*) { return 0; }

// CPU seconds of the best of 3 scans of the sample in 16 MiB pieces.
absl::StatusOr<double> TimeScan(const hs_database_t* db, std::string_view sample) {
  hs_scratch_t* raw = nullptr;
  if (hs_alloc_scratch(db, &raw) != HS_SUCCESS)
    return absl::ResourceExhaustedError("hs_alloc_scratch failed");
  std::unique_ptr<hs_scratch_t, ScratchDeleter> scratch(raw);
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    double t0 = ThreadCpu();
    for (size_t off = 0; off < sample.size();) {
      size_t n = std::min<size_t>(sample.size() - off, size_t{16} << 20);
      hs_scan(db, sample.data() + off, static_cast<unsigned>(n), 0, scratch.get(), CountOnly,
              nullptr);
      off += n;
    }
    best = std::min(best, ThreadCpu() - t0);
  }
  return best;
}

// The bytes a file holds on disk (0 when unknown: a pipe, a pseudo-file).
uint64_t OnDiskSize(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size)
                                                               : 0;
}

// The inputs, with their sizes on disk: a compressed source knows no
// decompressed size up front (size_hint is 0), so the shares follow the
// bytes each file holds. What cannot be opened goes to out.skipped.
struct Inputs {
  std::vector<std::unique_ptr<Source>> sources;
  std::vector<uint64_t> sizes;
  uint64_t total = 0;
};

Inputs OpenInputs(const std::vector<std::string>& paths, SignalCosts& out) {
  Inputs in;
  for (const std::string& p : paths) {
    if (p == "-") {
      out.skipped.push_back("-: standard input is not sampled");
      continue;
    }
    auto files = ExpandPath(p);
    if (!files.ok()) {
      out.skipped.push_back(std::string(files.status().message()));
      continue;
    }
    for (const std::string& f : *files) {
      auto src = OpenSource(f);
      if (!src.ok()) {
        out.skipped.push_back(std::string(src.status().message()));
        continue;
      }
      uint64_t size =
          (*src)->kind() == SourceKind::kMapped ? (*src)->mapped().size() : OnDiskSize(f);
      in.sizes.push_back(size);
      in.total += size;
      in.sources.push_back(std::move(*src));
    }
  }
  return in;
}

// The budget counts sample bytes, decompressed: each source gets its
// share of what the sources before it left, so a source that gives less
// than its share (a short file, one that decompresses to little) passes
// the rest on, and the sample never exceeds sample_bytes. A compressed
// source is read no further than its share.
std::string TakeSample(Inputs& in, uint64_t sample_bytes, SignalCosts& out) {
  std::vector<std::unique_ptr<Source>>& sources = in.sources;
  const std::vector<uint64_t>& sizes = in.sizes;
  std::string sample;
  uint64_t size_left = in.total;
  for (size_t i = 0; i < sources.size(); ++i) {
    Source& s = *sources[i];
    const uint64_t budget_left = sample_bytes - std::min<uint64_t>(sample.size(), sample_bytes);
    const uint64_t share = size_left > 0
                               ? static_cast<uint64_t>(static_cast<long double>(budget_left) *
                                                       static_cast<long double>(sizes[i]) /
                                                       static_cast<long double>(size_left))
                               : budget_left / (sources.size() - i);
    size_left -= sizes[i];
    if (share == 0) continue;
    std::string piece;
    if (s.kind() == SourceKind::kMapped) {
      std::string_view all = s.mapped();
      if (!GuardedRead(all.data(), all.size(), [&] {
            std::string_view pre = LinePrefix(all, share);
            piece.reserve(pre.size());
            piece.assign(pre.data(), pre.size());
          })) {
        out.skipped.push_back(StrCat(s.name(), ": the file shrank while it was read"));
        continue;
      }
    } else {
      size_t have = 0;
      while (have < share) {
        piece.resize(std::min<uint64_t>(share, have + (size_t{1} << 20)));
        auto n = s.Read(piece.data() + have, piece.size() - have);
        if (!n.ok()) {
          out.skipped.push_back(std::string(n.status().message()));
          break;
        }
        if (*n == 0) break;
        have += *n;
      }
      piece.resize(LinePrefix(std::string_view(piece.data(), have), share).size());
    }
    if (piece.empty()) continue;
    if (piece.back() != '\n') {
      // A line cut at the share, or a file without a final newline: the
      // newline that ends it in the sample counts against the share too.
      if (piece.size() == share) piece.pop_back();
      piece += '\n';
    }
    sample += piece;
  }
  return sample;
}

// The lines of the sample each signal of the whole database matches.
absl::StatusOr<std::vector<std::vector<std::pair<size_t, size_t>>>> LinesBySignal(const Ruleset& rs,
                                                                                  const std::string& sample) {
  std::vector<std::vector<std::pair<size_t, size_t>>> lines(rs.signal_count());
  hs_scratch_t* raw = nullptr;
  if (hs_alloc_scratch(rs.database(), &raw) != HS_SUCCESS) {
    return absl::ResourceExhaustedError("hs_alloc_scratch failed");
  }
  std::unique_ptr<hs_scratch_t, ScratchDeleter> scratch(raw);
  for (size_t off = 0; off < sample.size();) {
    size_t n = std::min<size_t>(sample.size() - off, size_t{16} << 20);
    size_t nl = n < sample.size() - off ? sample.rfind('\n', off + n - 1) : std::string::npos;
    if (nl != std::string::npos && nl >= off) n = nl + 1 - off;
    std::vector<std::vector<std::pair<size_t, size_t>>> part(rs.signal_count());
    LineHits ctx{sample.data() + off, n, &part};
    hs_scan(rs.database(), sample.data() + off, static_cast<unsigned>(n), 0, scratch.get(),
            OnMatch, &ctx);
    for (size_t id = 0; id < part.size(); ++id) {
      for (auto [a, b] : part[id]) lines[id].emplace_back(a + off, b + off);
    }
    off += n;
  }
  return lines;
}

// One signal: its pattern alone, and phase B's confirm and extracts on its lines.
absl::StatusOr<SignalCost> MeasureSignal(const Ruleset& rs, uint32_t id, const std::string& sample, double gb,
                                         const std::vector<std::pair<size_t, size_t>>& lines) {
  const SignalInfo& si = rs.signal(id);
  SignalCost c;
  c.signal = id;
  hs_database_t* db = nullptr;
  hs_compile_error_t* err = nullptr;
  unsigned flags = SignalHsFlags(si.signal->caseless());
  // What the database holds for the signal: its prefilter, when it has one.
  const char* expr = si.signal->prefilter() ? si.signal->prefilter()->c_str() : si.signal->pattern()->c_str();
  if (hs_compile(expr, flags, HS_MODE_BLOCK, nullptr, &db, &err) != HS_SUCCESS) {
    std::string msg = err && err->message ? err->message : "unknown error";
    hs_free_compile_error(err);
    return absl::InternalError(StrCat("signal ", si.rule->id()->string_view(), "/",
                                      si.signal->id()->string_view(), ": ", msg));
  }
  std::unique_ptr<hs_database_t, DbDeleter> owned(db);
  FL_ASSIGN_OR_RETURN(double alone, TimeScan(db, sample));
  c.alone_s_per_gb = alone / gb;
  // What phase B does on a matched line (line_evidence.cc): the Hyperscan
  // match stands for the pattern where it cannot reach past the line
  // (confirm_plan.h), else the signal confirms it (the hand parser, RE2
  // where that cannot tell); then the extracts.
  const bool hs_confirms = !si.signal->prefilter() && internal::HsMatchConfirms(si.signal->pattern()->string_view());
  const bool usable = si.Usable();
  double best = 1e30;
  uint64_t confirmed = 0;
  std::vector<std::pair<std::string_view, std::string_view>> captured;
  for (int rep = 0; rep < 3 && usable; ++rep) {
    confirmed = 0;
    double t0 = ThreadCpu();
    for (auto [a, b] : lines) {
      std::string_view line(sample.data() + a, b - a);
      if (hs_confirms || si.Confirms(line)) {
        ++confirmed;
        captured.clear();
        si.ExtractFields(line, &captured);
      }
    }
    best = std::min(best, ThreadCpu() - t0);
  }
  c.lines = confirmed;
  c.confirm_us_per_line =
      lines.empty() || !usable ? 0 : best / static_cast<double>(lines.size()) * 1e6;
  return c;
}

}  // namespace

absl::StatusOr<SignalCosts> MeasureSignalCosts(const Ruleset& rs,
                                               const std::vector<std::string>& paths,
                                               uint64_t sample_bytes) {
  SignalCosts out;
  Inputs in = OpenInputs(paths, out);
  const std::string sample = TakeSample(in, sample_bytes, out);
  if (sample.empty()) return absl::InvalidArgumentError("no input gave a byte to sample");
  out.sample_bytes = sample.size();
  const double gb = static_cast<double>(sample.size()) / 1e9;
  FL_ASSIGN_OR_RETURN(double full, TimeScan(rs.database(), sample));
  out.full_s_per_gb = full / gb;
  FL_ASSIGN_OR_RETURN(auto lines, LinesBySignal(rs, sample));
  for (uint32_t id = 0; id < rs.signal_count(); ++id) {
    FL_ASSIGN_OR_RETURN(SignalCost c, MeasureSignal(rs, id, sample, gb, lines[id]));
    out.signals.push_back(c);
  }
  std::stable_sort(
      out.signals.begin(), out.signals.end(),
      [](const SignalCost& a, const SignalCost& b) { return a.alone_s_per_gb > b.alone_s_per_gb; });
  return out;
}

}  // namespace faultline
