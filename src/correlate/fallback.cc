// Survived and fallback passes. A cluster whose every line was followed by
// progress on its rank was survived (a caught CUDA OOM, then "skipping batch"
// and more steps): its incident says so and ranks below those that ended a
// rank. When no other root cluster explains a failure, the first generic
// fatal line (role:fallback: a folded traceback's exception, a crash signal,
// a non-zero exit) on the earliest failing rank becomes the initiating
// cluster, and launcher summaries (role:summary) become its collateral: a
// summary names the first local failure, never the cause.
#include <algorithm>

#include "correlate/state.h"
#include "util/strings.h"

namespace faultline::internal {
namespace {

// How far an exception line may follow the "Exception ignored" line of its
// traceback: the scanner's traceback window (scan/traceback.h).
constexpr uint64_t kTracebackWindowBytes = 8 << 10;
// How much later than an error, in another file, progress must be logged to
// show that the rank carried on.
constexpr int64_t kSurvivedMargin = 30 * kSecond;

bool Before(const Evidence& a, const Evidence& b) {
  if (a.time_us != kNoTime && b.time_us != kNoTime) return a.time_us < b.time_us;
  if (a.source == b.source) return a.offset < b.offset;
  return a.time_us != kNoTime;  // a timed line before an untimed one elsewhere
}

// A root cluster that, fatal and of a catalog rule, explains the failure.
bool Explains(const CorrelationState& st, const Cluster& c) {
  return c.parent < 0 && !c.survived && !st.HasRole(c.rule, RuleRole::kSummary) &&
         !st.HasRole(c.rule, RuleRole::kFallback);
}

// Whether `ev` follows the job's first termination line (role:termination):
// what a rank prints while it is being stopped is that stop's doing.
bool AfterTermination(const CorrelationState& st, const Evidence& ev) {
  const Evidence* t = st.index.first_termination;
  if (!t) return false;
  if (t->source == ev.source) return t->offset < ev.offset;
  return t->time_us != kNoTime && ev.time_us != kNoTime && t->time_us <= ev.time_us;
}

}  // namespace

bool SurvivedLine(const CorrelationState& st, size_t i) {
  const Evidence& ev = st.evs[i];
  auto it = st.index.last_progress.find(ev.rank);
  if (it == st.index.last_progress.end()) return false;
  const Evidence& p = st.evs[it->second];
  if (p.source == ev.source) return p.offset > ev.offset;
  // Across files the stamps differ in resolution (a kernel log's whole
  // seconds) and clocks in skew: only clearly later progress counts.
  return p.time_us != kNoTime && ev.time_us != kNoTime && p.time_us > ev.time_us + kSurvivedMargin;
}

std::string ExitMeaning(const Evidence& ev) {
  std::string code;
  if (const std::string* c = ev.Field("exitcode")) code = *c;
  std::string_view crash;
  if (const std::string* c = ev.Field("crash")) crash = *c;
  auto is = [&](std::string_view shell, std::string_view neg, std::string_view text) {
    return code == shell || code == neg || (!text.empty() && crash.find(text) == 0);
  };
  if (is("137", "-9", "")) {
    return "SIGKILL: the process was killed from outside; look for the OOM killer (dmesg) or the "
           "scheduler's kill after a grace period";
  }
  if (is("135", "-7", "Bus error")) {
    return "SIGBUS: a memory-mapped file or /dev/shm ran out or was truncated under the process";
  }
  if (is("139", "-11", "Segmentation fault") || crash.find("Fatal Python error: Segm") == 0) {
    return "SIGSEGV: a crash in native code (a CUDA extension, a library ABI mismatch)";
  }
  if (is("134", "-6", "Aborted") || crash.find("Fatal Python error: Abort") == 0) {
    return "SIGABRT: the process aborted itself (a C++ exception or assertion, the NCCL watchdog)";
  }
  if (is("143", "-15", "")) {
    return "SIGTERM: the process was asked to stop; find who sent it (scheduler time limit, "
           "preemption, scancel, the launcher tearing down siblings)";
  }
  return "";
}

void MarkSurvived(CorrelationState& st) {
  if (st.index.last_progress.empty()) return;
  int64_t last_progress = kNoTime;
  for (const auto& [rank, i] : st.index.last_progress) {
    last_progress = std::max(last_progress, st.evs[i].time_us);
  }
  for (Cluster& c : st.clusters) {
    if (IsNotice(st, c)) {
      // A notice announces a stop minutes ahead: the job carried on only
      // when it still made progress after the longest grace period.
      c.survived = c.first != kNoTime && last_progress != kNoTime &&
                   last_progress > c.first + kNoticeGraceUs;
      continue;
    }
    c.survived =
        std::all_of(c.ev.begin(), c.ev.end(), [&](size_t i) { return SurvivedLine(st, i); });
  }
}

void ChooseFallback(CorrelationState& st) {
  const std::vector<uint32_t>& fallback_rules =
      st.role_rules[static_cast<size_t>(RuleRole::kFallback)];
  if (fallback_rules.empty()) return;
  for (const Cluster& c : st.clusters) {
    if (Explains(st, c)) return;
  }
  // Fatal lines no rank carried on from; an exception, crash or fatal line
  // (initiating role) before a bare exit status, which only says that the
  // rank ended.
  std::vector<size_t> lines;
  bool any_initiating = false;
  // A context line of a fallback rule (CPython's "Exception ignored in:")
  // says that the traceback after it was printed and dropped; the evidence
  // is in source-then-offset order, so it comes right before its exception.
  const Evidence* ignored = nullptr;
  for (size_t i = 0; i < st.evs.size(); ++i) {
    const Evidence& ev = st.evs[i];
    if (!st.HasRole(ev.rule, RuleRole::kFallback) || !st.ignore_reason[i].empty()) continue;
    SignalRole role = st.rs.signal(ev.signal).role;
    if (role == SignalRole::Context) {
      ignored = &ev;
      continue;
    }
    if (ignored && role == SignalRole::Initiating) {
      bool dropped = ignored->source == ev.source && ignored->rank == ev.rank &&
                     ev.offset - ignored->offset <= kTracebackWindowBytes;
      ignored = nullptr;
      if (dropped) continue;
    }
    if (!st.active[i] || SurvivedLine(st, i) || AfterTermination(st, ev)) continue;
    lines.push_back(i);
    any_initiating |= st.rs.signal(st.evs[i].signal).role == SignalRole::Initiating;
  }
  bool summary = std::any_of(st.clusters.begin(), st.clusters.end(), [&](const Cluster& c) {
    return c.parent < 0 && st.HasRole(c.rule, RuleRole::kSummary);
  });
  // A launcher's summary already says that a worker exited, and how: an
  // exit status adds nothing to it, only the worker's own error would.
  if (!any_initiating && summary) return;
  if (any_initiating) {
    std::erase_if(lines, [&](size_t i) {
      return st.rs.signal(st.evs[i].signal).role != SignalRole::Initiating;
    });
  }
  if (lines.empty()) return;
  std::stable_sort(lines.begin(), lines.end(),
                   [&](size_t a, size_t b) { return Before(st.evs[a], st.evs[b]); });
  size_t first = lines.front();
  // Only the failing rank's lines (or the rankless ones of its file).
  const Evidence& f = st.evs[first];
  std::erase_if(lines, [&](size_t i) {
    const Evidence& ev = st.evs[i];
    return ev.rank != f.rank || (f.rank < 0 && ev.source != f.source);
  });
  for (size_t i : lines) {
    Evidence& ev = st.evs[i];
    if (std::string m = ExitMeaning(ev); !m.empty() && !ev.Field("exit_signal")) {
      ev.fields.emplace_back("exit_signal", m.substr(0, m.find(':')));
    }
  }
  int fc = static_cast<int>(st.clusters.size());
  Cluster& c = st.clusters.emplace_back();
  c.rule = f.rule;
  c.layer = st.rs.rule(f.rule)->layer();
  c.initiating = true;  // an exit status, too, is a seen fact about the rank
  for (size_t i : lines) {
    const Evidence& ev = st.evs[i];
    c.ev.push_back(i);
    if (ev.rank >= 0) c.ranks.insert(ev.rank);
    if (!ev.host.empty()) c.hosts.insert(ev.host);
    if (ev.time_us != kNoTime) {
      if (c.first == kNoTime || ev.time_us < c.first) c.first = ev.time_us;
      if (c.last == kNoTime || ev.time_us > c.last) c.last = ev.time_us;
    }
  }
  for (int k = 0; k < fc; ++k) {
    Cluster& s = st.clusters[k];
    // A survived error did not end the worker the summary reports.
    bool orphan = s.parent < 0 || st.clusters[s.parent].survived;
    if (orphan && st.HasRole(s.rule, RuleRole::kSummary)) {
      s.parent = fc;
      s.parent_how = StrCat(st.rs.rule(s.rule)->id()->str(),
                            " summarises the first local failure, not its cause");
    }
  }
}

}  // namespace faultline::internal
