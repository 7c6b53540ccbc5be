// Ranking and priors passes. Incidents are ordered by tier (a seen initiating
// line; a suspect inferred from log lines or Flight Recorder dumps; a numeric
// detector; the fallback fatal line; a survived error; a practice finding),
// then by confidence with a small bonus for collateral, then by time; of the
// ranks' own failures, the first by aligned time then leads (EarliestRankFirst).
// The priors turn the rules' published failure rates into the interruptions a
// job of this size and length should expect.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "correlate/state.h"
#include "detect/detect.h"
#include "util/strings.h"

namespace faultline::internal {
namespace {

// Practice findings last; before them what was survived, and the fallback
// (a generic fatal line) after every catalog incident that ended a rank.
int Tier(const CorrelationState& st, const Incident& i) {
  if (PracticeFinding(i)) return 5;
  if (i.survived) return 4;
  if (i.detector.empty() && st.HasRole(i.rule, RuleRole::kFallback)) return 3;
  // The Flight Recorder dumps' suspects are evidence of the kind the
  // logs' inferred suspects are (who entered which collective), not a
  // statistic.
  if (i.detector.rfind("flight_recorder", 0) == 0) return 1;
  if (!i.detector.empty()) return 2;
  return i.inferred ? 1 : 0;
}

// Whether incident `a` began before `b`: within one file by position (a
// line without a stamp inherits the one before it), else by time.
bool BeganBefore(const Incident& a, const Incident& b) {
  if (!a.initiating.empty() && !b.initiating.empty() &&
      a.initiating.front().source == b.initiating.front().source) {
    return a.initiating.front().offset < b.initiating.front().offset;
  }
  return a.time_us != kNoTime && b.time_us != kNoTime && a.time_us < b.time_us;
}

// A scheduler's deadline (role:deadline: a time limit) says who ended the
// job; how the job met it (no SIGTERM handler, no checkpoint after the
// notice) is an incident of its own that ranks after it. The first
// deadline's incident goes ahead of every incident ranked before it that
// did not begin before it; what began earlier (a hang, a crash) keeps the
// lead.
void PutDeadlineFirst(CorrelationState& st) {
  std::vector<Incident>& incs = st.diag.incidents;
  for (size_t k = 0; k < incs.size(); ++k) {
    const Incident& d = incs[k];
    if (!d.detector.empty() || d.survived || !st.HasRole(d.rule, RuleRole::kDeadline)) continue;
    size_t q = k;
    while (q > 0 && !BeganBefore(incs[q - 1], d)) --q;
    std::rotate(incs.begin() + static_cast<ptrdiff_t>(q), incs.begin() + static_cast<ptrdiff_t>(k),
                incs.begin() + static_cast<ptrdiff_t>(k) + 1);
    return;
  }
}

double Score(const Incident& i) {
  uint64_t n = 0;
  for (const Collateral& c : i.collateral) n += c.count;
  return i.confidence + 0.05 * std::min(3.0, std::log10(1.0 + static_cast<double>(n)));
}

// The process a line came from (host and pid), when the line names its pid.
std::optional<std::pair<std::string, int64_t>> ProcessOf(const Evidence& ev) {
  int64_t pid = PidOf(ev);
  if (ev.host.empty() || pid < 0) return std::nullopt;
  return std::make_pair(ev.host, pid);
}

// A catalog incident that ended a process (not survived, no detector, no fallback).
bool Fatal(const CorrelationState& st, const Incident& i) {
  return Tier(st, i) == 0 && !i.initiating.empty();
}

// The incident whose first line is its process's earlier fatal error, when
// `i` began while that process was already failing (an error of an NCCL
// abort or communicator destroy after the failure). A hardware, driver or
// kernel event is its own fact, and an incident whose stamp is earlier than
// the other's clearly predates it: neither is teardown. -1 when none.
int FailingProcessBefore(const CorrelationState& st, const std::vector<Incident>& incs, size_t k) {
  const Incident& i = incs[k];
  if (!Fatal(st, i) || HardwareLayer(st.rs.rule(i.rule)->layer())) return -1;
  auto proc = ProcessOf(i.initiating.front());
  if (!proc) return -1;
  for (size_t j = 0; j < incs.size(); ++j) {
    const Incident& e = incs[j];
    if (j == k || !Fatal(st, e) || ProcessOf(e.initiating.front()) != proc) continue;
    if (i.time_us != kNoTime && e.time_us != kNoTime && i.time_us < e.time_us) continue;
    if (BeganBefore(e, i)) return static_cast<int>(j);
  }
  return -1;
}

// Errors a process printed while tearing down after its first fatal error
// become that error's collateral.
void FoldTeardownErrors(CorrelationState& st) {
  std::vector<Incident>& incs = st.diag.incidents;
  std::vector<int> into(incs.size(), -1);
  for (size_t k = 0; k < incs.size(); ++k) into[k] = FailingProcessBefore(st, incs, k);
  for (size_t k = 0; k < incs.size(); ++k) {
    int j = into[k];
    while (j >= 0 && into[static_cast<size_t>(j)] >= 0) j = into[static_cast<size_t>(j)];
    if (j < 0) continue;
    Incident& root = incs[static_cast<size_t>(j)];
    AddAsCollateral(incs[k], root);
    bool spaced = root.explanation.empty() || root.explanation.back() == ' ';
    StrAppend(&root.explanation, spaced ? "" : " ", st.rs.rule(incs[k].rule)->id()->str(),
              " came later from the same process, while it was tearing down: collateral.");
  }
  size_t k = 0;
  std::erase_if(incs, [&](const Incident&) { return into[k++] >= 0; });
}

// How close in time two reports of one GPU are one burst: a kernel log's
// whole seconds.
constexpr int64_t kBurstUs = kSecond;

// Whether incident `b` is a later report of the burst incident `a` began:
// both catalog incidents of a hardware or driver layer rule of the same
// reference, on the same GPU, in the same file and second (or both
// undated), `a` logged first. A GPU that reports an engine exception and
// then the timeouts of the channel it stopped (Xid 38, then Xid 109) had
// one failure, and the first line is where it began.
bool LaterInBurst(const CorrelationState& st, const Incident& a, const Incident& b) {
  if (!Fatal(st, a) || !Fatal(st, b) || a.gpu.empty() || a.gpu != b.gpu ||
      !HardwareLayer(st.rs.rule(a.rule)->layer()) || !HardwareLayer(st.rs.rule(b.rule)->layer())) {
    return false;
  }
  const Evidence& ea = a.initiating.front();
  const Evidence& eb = b.initiating.front();
  if (ea.source != eb.source || ea.offset >= eb.offset ||
      st.rs.rule(a.rule)->reference()->string_view() != st.rs.rule(b.rule)->reference()->string_view()) {
    return false;
  }
  if ((a.time_us == kNoTime) != (b.time_us == kNoTime)) return false;
  return a.time_us == kNoTime || std::llabs(b.time_us - a.time_us) <= kBurstUs;
}

// The later incidents of a GPU's burst become the collateral of the one
// whose line came first.
void FoldDeviceBursts(CorrelationState& st) {
  std::vector<Incident>& incs = st.diag.incidents;
  std::vector<bool> folded(incs.size(), false);
  for (size_t k = 0; k < incs.size(); ++k) {
    for (size_t j = 0; j < incs.size() && !folded[k]; ++j) {
      if (j == k || folded[j] || !LaterInBurst(st, incs[j], incs[k])) continue;
      AddAsCollateral(incs[k], incs[j]);
      bool spaced = incs[j].explanation.empty() || incs[j].explanation.back() == ' ';
      StrAppend(&incs[j].explanation, spaced ? "" : " ", st.rs.rule(incs[k].rule)->id()->str(),
                " came later in the same second from the same GPU: one burst, led by its first line.");
      folded[k] = true;
    }
  }
  size_t k = 0;
  std::erase_if(incs, [&](const Incident&) { return folded[k++]; });
}

// How close two ranks' fatal lines may be stamped and still not say which
// came first: a log's whole seconds, and what clock alignment leaves.
constexpr int64_t kFirstByTimeUs = kSecond;

// Whether incident `i` is a rank's own failure: a catalog incident that
// ended it (tier 0), above the hardware, driver and kernel layers, whose
// first line is an initiating line of a rank that is not the report of a
// peer (a connection reset or closed by the other end), nor a notice, a
// launcher's summary or the process's exit. A collective timeout, a closed
// socket, a store's lost connection and a launcher's SIGTERM are what other
// ranks see of that failure: their rules are symptoms, peer reports or
// summaries, and never this.
bool RankOwnFailure(const CorrelationState& st, const Incident& i) {
  if (!Fatal(st, i) || HardwareLayer(st.rs.rule(i.rule)->layer()) || i.rank < 0) return false;
  for (RuleRole r : {RuleRole::kTermination, RuleRole::kSummary, RuleRole::kTeardown, RuleRole::kDeadline}) {
    if (st.HasRole(i.rule, r)) return false;
  }
  const Evidence& ev = i.initiating.front();
  return st.rs.signal(ev.signal).role == SignalRole::Initiating && !ev.Field("peer");
}

// Whether incidents `a` and `b` are failures of two ranks (or of ranks on
// two hosts).
bool OtherRank(const Incident& a, const Incident& b) {
  if (a.rank >= 0 && b.rank >= 0 && a.rank != b.rank) return true;
  return !a.host.empty() && !b.host.empty() && NormalizeHost(a.host) != NormalizeHost(b.host);
}

std::string Gap(int64_t us) {
  if (us >= 10 * kSecond) return StrCat((us + kSecond / 2) / kSecond, " s");
  return StrCat(static_cast<double>(us / 1000) / 1000.0, " s");
}

// The missing fact when two ranks' fatal lines leave the order open.
std::string WhichFailedFirst(const std::string& who, bool untimed) {
  return untimed ? StrCat("which failed first, ", who,
                          ": a fatal line without a timestamp leaves the order to the files'; each rank's log "
                          "with timestamps would settle it")
                 : StrCat("which failed first, ", who, ": their fatal lines are stamped within ",
                          Gap(kFirstByTimeUs), " of each other; finer stamps or the hosts' clock offsets would "
                          "settle it");
}

// Of the ranks' own failures, the one whose fatal line came first by time
// (stamps already shifted by the hosts' clock offsets, clocks.cc) leads:
// what a confidence or a file order put ahead of it began later, on another
// rank, and is an incident of its own after it. When the lead's failure and
// another rank's are stamped within kFirstByTimeUs of each other, or either
// has no stamp, the order stays as it was and the lead says which fact
// would order them.
void EarliestRankFirst(CorrelationState& st) {
  std::vector<Incident>& incs = st.diag.incidents;
  if (incs.empty() || !RankOwnFailure(st, incs.front())) return;
  size_t best = 0;
  for (size_t k = 1; k < incs.size(); ++k) {
    const Incident& c = incs[k];
    if (!RankOwnFailure(st, c) || !OtherRank(c, incs.front()) || c.time_us == kNoTime) continue;
    if (incs[best].time_us != kNoTime && c.time_us + kFirstByTimeUs <= incs[best].time_us) best = k;
  }
  if (best > 0) {
    const Incident& later = incs.front();
    Incident& first = incs[best];
    bool spaced = first.explanation.empty() || first.explanation.back() == ' ';
    StrAppend(&first.explanation, spaced ? "" : " ", "It came first by time: ",
              st.rs.rule(later.rule)->id()->str(), " on rank ", later.rank, " began ",
              Gap(later.time_us - first.time_us), " later (", FormatTime(later.time_us),
              "), an incident of its own after this one. ");
    std::rotate(incs.begin(), incs.begin() + static_cast<ptrdiff_t>(best),
                incs.begin() + static_cast<ptrdiff_t>(best) + 1);
  }
  Incident& lead = incs.front();
  // Another rank's line of the lead's own rule (its lines are in time
  // order, unstamped ones after the stamped).
  for (const Evidence& ev : lead.initiating) {
    if (ev.rank < 0 || ev.rank == lead.rank || ev.rule != lead.rule ||
        st.rs.signal(ev.signal).role != SignalRole::Initiating) {
      continue;
    }
    bool untimed = ev.time_us == kNoTime || lead.time_us == kNoTime;
    if (!untimed && ev.time_us - lead.time_us >= kFirstByTimeUs) break;
    std::string who = StrCat("rank ", lead.rank, " or rank ", ev.rank, " (both ",
                             st.rs.rule(lead.rule)->id()->str(), ")");
    lead.missing_facts.push_back(WhichFailedFirst(who, untimed));
    return;
  }
  for (size_t k = 1; k < incs.size(); ++k) {
    const Incident& c = incs[k];
    if (!RankOwnFailure(st, c) || !OtherRank(c, lead)) continue;
    bool untimed = c.time_us == kNoTime || lead.time_us == kNoTime;
    if (!untimed && std::llabs(c.time_us - lead.time_us) >= kFirstByTimeUs) continue;
    std::string who = StrCat("rank ", lead.rank, " (", st.rs.rule(lead.rule)->id()->str(), ") or rank ", c.rank,
                             " (", st.rs.rule(c.rule)->id()->str(), ")");
    lead.missing_facts.push_back(WhichFailedFirst(who, untimed));
    return;
  }
}

}  // namespace

bool PracticeFinding(const Incident& i) {
  return i.detector == "missing_checkpoint_after_sigterm" || i.detector == "stale_checkpoint" ||
         i.detector == "partial_checkpoint_save";
}

void RankIncidents(CorrelationState& st) {
  FoldTeardownErrors(st);
  FoldDeviceBursts(st);
  std::stable_sort(st.diag.incidents.begin(), st.diag.incidents.end(),
                   [&st](const Incident& a, const Incident& b) {
                     int tier_a = Tier(st, a), tier_b = Tier(st, b);
                     if (tier_a != tier_b) return tier_a < tier_b;
                     double score_a = Score(a), score_b = Score(b);
                     if (std::fabs(score_a - score_b) > 1e-9) return score_a > score_b;
                     if ((a.time_us == kNoTime) != (b.time_us == kNoTime))
                       return b.time_us == kNoTime;
                     return a.time_us < b.time_us;
                   });
  EarliestRankFirst(st);
  PutDeadlineFirst(st);
}

void EstimatePriors(CorrelationState& st) {
  Diagnosis& d = st.diag;
  if (d.job_start_us == kNoTime || d.job_end_us == kNoTime || d.job_end_us <= d.job_start_us)
    return;
  double gpus = static_cast<double>(std::max<size_t>(1, st.index.known_ranks.size()));
  double hours = static_cast<double>(d.job_end_us - d.job_start_us) / 3.6e9;
  std::vector<double> est;
  for (const Prior& p : st.rs.priors()) {
    if (p.gpus <= 0 || p.value <= 0) continue;
    if (p.kind == "mttf_hours") {
      double mttf = p.value * p.gpus / gpus;  // MTTF falls inversely with GPU count
      est.push_back(hours / mttf);
      d.expectation.basis.push_back(
          StrCat(p.reference, ": MTTF ", p.value, " h at ", p.gpus, " GPUs"));
    } else if (p.kind == "failures_per_week" || p.kind == "failures_per_gpu_hour") {
      double rate = p.value / 168.0 / p.gpus;  // per GPU-hour
      est.push_back(rate * gpus * hours);
      d.expectation.basis.push_back(
          StrCat(p.reference, ": ", p.value, " failures/week at ", p.gpus, " GPUs"));
    }
  }
  if (!est.empty()) {
    d.expectation.gpus = gpus;
    d.expectation.hours = std::round(hours * 100) / 100;
    d.expectation.expected_interruptions = std::round(Median(est) * 10000) / 10000;
  }
}

}  // namespace faultline::internal
