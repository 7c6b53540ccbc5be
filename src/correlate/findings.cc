// Detector and finding passes. The numeric detectors (stragglers, hangs, SDC
// drift, loss spikes) and the practice checks (no checkpoint after SIGTERM,
// newest checkpoint hours old) produce findings; each becomes an incident
// of the first rule whose conditions.detector names it, or the collateral of
// a seen incident whose rule explains it.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "correlate/state.h"
#include "detect/detect.h"
#include "util/strings.h"
#include "util/utf8.h"

namespace faultline::internal {
namespace {

// The rule of a straggler finding's pattern: the rule carrying the
// pattern's role (periodic pauses, moving imbalance), else the detector's.
int RuleForFinding(const CorrelationState& st, const Finding& f);

int RuleForDetector(const Ruleset& rs, std::string_view name) {
  for (size_t r = 0; r < rs.rule_count(); ++r) {
    const fb::Conditions* c = rs.rule(r)->conditions();
    if (c && c->detector() && c->detector()->string_view() == name) return static_cast<int>(r);
  }
  return -1;
}

// A finding that a seen event explains (a loss spike after Megatron's
// hardware-fault verdict) is that event's collateral, not its own story.
bool FoldIntoExplainingIncident(CorrelationState& st, const Finding& f, const Incident& inc) {
  for (Incident& host_inc : st.diag.incidents) {
    if (!host_inc.detector.empty()) continue;
    double min_lag, max_lag;
    if (!st.Edge(host_inc.rule, inc.rule, &min_lag, &max_lag)) continue;
    if (host_inc.time_us != kNoTime && f.time_us != kNoTime) {
      double lag = static_cast<double>(f.time_us - host_inc.time_us) / 1e6;
      if (lag < min_lag || lag > max_lag) continue;
    }
    Collateral co;
    co.rule = inc.rule;
    co.count = 1;
    if (f.rank >= 0) co.ranks.push_back(f.rank);
    if (!inc.host.empty()) co.hosts.push_back(inc.host);
    co.first_time_us = co.last_time_us = f.time_us;
    if (!inc.initiating.empty()) {
      co.sample = inc.initiating.back();
    } else if (!host_inc.initiating.empty()) {
      co.sample = host_inc.initiating.front();
    }
    host_inc.collateral.push_back(std::move(co));
    host_inc.explanation += StrCat("Detector ", f.detector, " agrees: ", f.detail, ". ");
    return true;
  }
  return false;
}

// The evidence record of a metric point's line (ScanResult::metric_points),
// as the scan would have made it: its time aligned like every record's, its
// text read back from the source when the caller can (CorrelateOptions::
// line_at).
Evidence PointEvidence(const CorrelationState& st, const MetricPoint& p) {
  Evidence ev;
  ev.source = p.source;
  ev.line = p.line;
  ev.offset = p.offset;
  ev.rank = p.rank;
  ev.rule = p.rule;
  ev.signal = p.signal;
  ev.time_us = p.time_us;
  ev.time_source = p.time_us == kNoTime ? TimeSource::kNone : TimeSource::kParsed;
  const SourceSummary* src = p.source < st.scan.sources.size() ? &st.scan.sources[p.source] : nullptr;
  ev.host = src && !src->host.empty() ? src->host : (p.rank >= 0 ? st.HostForRank(p.rank) : std::string());
  if (ev.time_us != kNoTime) ev.time_us += ClockOffsetUs(st.diag, ev.host);
  if (src && st.opts.line_at) {
    if (std::optional<std::string> text = st.opts.line_at(*src, p.offset)) ev.text = CleanUtf8(*text, kMaxEvidenceText);
  }
  return ev;
}

}  // namespace

bool AddFinding(CorrelationState& st, const Finding& f, double conf) {
  int r = RuleForFinding(st, f);
  if (r < 0) return false;
  const fb::Rule& rule = *st.rs.rule(r);
  Incident inc;
  inc.rule = static_cast<uint32_t>(r);
  inc.detector = f.detector;
  inc.rank = f.rank;
  inc.host = f.host.empty() && f.rank >= 0 ? st.HostForRank(f.rank) : f.host;
  inc.time_us = f.time_us;
  inc.inferred = true;
  inc.confidence = conf;
  if (f.rank >= 0) inc.suspects = {f.rank};
  if (auto p = st.index.last_progress.find(f.rank); p != st.index.last_progress.end()) {
    inc.initiating.push_back(st.evs[p->second]);
  }
  bool metric_line = false;
  if (auto m = st.index.metrics.find(f.rank); !f.series.empty() && m != st.index.metrics.end()) {
    for (size_t i : m->second) {
      if (f.time_us == kNoTime || st.evs[i].time_us >= f.time_us) {
        inc.initiating.push_back(st.evs[i]);
        metric_line = true;
        break;
      }
    }
  }
  // The scan kept the rank's metric lines as points only: the record of
  // the point the detector reports.
  if (!metric_line && f.point && f.point->line > 0) inc.initiating.push_back(PointEvidence(st, *f.point));
  inc.explanation = StrCat("Detector ", f.detector, ": ", f.detail, ".");
  std::map<std::string, std::string> vars = TemplateVars(inc, f.time_us, st.diag.job_end_us);
  FillFixAndVerify(rule, vars, inc);
  if (!f.missing.empty()) inc.missing_facts.push_back(f.missing);
  if (rule.missing_fact() && rule.missing_fact()->size()) {
    inc.missing_facts.push_back(FillTemplate(rule.missing_fact()->str(), vars));
  }
  inc.timeline = inc.initiating;
  if (FoldIntoExplainingIncident(st, f, inc)) return false;
  st.diag.incidents.push_back(std::move(inc));
  return true;
}

// Incident `n` and its collateral become collateral of `into`.
void AddAsCollateral(const Incident& n, Incident& into) {
  Collateral co;
  co.rule = n.rule;
  co.count = n.initiating.size();
  if (n.rank >= 0) co.ranks.push_back(n.rank);
  if (!n.host.empty()) co.hosts.push_back(n.host);
  co.first_time_us = co.last_time_us = n.time_us;
  if (!n.initiating.empty()) co.sample = n.initiating.front();
  into.collateral.push_back(std::move(co));
  into.collateral.insert(into.collateral.end(), n.collateral.begin(), n.collateral.end());
}

namespace {

// Progress that stops before the logs say training completed is the end of
// training, not a hang (the exit-time watchdog keeps the logs going).
bool TrainingCompleted(const CorrelationState& st) {
  int64_t done = kNoTime;
  for (uint32_t r : st.role_rules[static_cast<size_t>(RuleRole::kCompletion)]) {
    auto it = st.first_time_of_rule.find(r);
    if (it != st.first_time_of_rule.end() && (done == kNoTime || it->second < done))
      done = it->second;
  }
  if (done == kNoTime) return false;
  int64_t latest = kNoTime;
  for (const auto& [r, s] : st.scan.ranks) latest = std::max(latest, s.last_progress_us);
  return latest == kNoTime || done >= latest - 60 * kSecond;
}

// A practice finding: below any cause, led by the SIGTERM line when there is one.
void AddPractice(CorrelationState& st, const Finding& f, const Evidence* lead) {
  if (!AddFinding(st, f, 0.4) || !lead) return;
  Incident& inc = st.diag.incidents.back();
  inc.initiating.insert(inc.initiating.begin(), *lead);
  inc.timeline = inc.initiating;
}

Finding PracticeFinding(std::string_view detector, const Evidence* term, int64_t time_us) {
  Finding f;
  f.detector = detector;
  f.time_us = time_us;
  if (term) {
    f.rank = term->rank;
    f.host = term->host;
  }
  return f;
}

int RuleForFinding(const CorrelationState& st, const Finding& f) {
  RuleRole role = RuleRole::kCompletion;
  if (f.pattern == "periodic") role = RuleRole::kPeriodicStraggler;
  if (f.pattern == "moving") role = RuleRole::kMovingStraggler;
  if (role != RuleRole::kCompletion && !st.role_rules[static_cast<size_t>(role)].empty()) {
    return static_cast<int>(st.role_rules[static_cast<size_t>(role)].front());
  }
  return RuleForDetector(st.rs, f.detector);
}

// How many ranks the job has, from any evidence: the largest communicator,
// else the highest rank any rule saw.
int64_t WorldRanks(const CorrelationState& st) {
  int64_t world = st.world_nranks;
  for (const auto& [rule, stats] : st.scan.rule_stats) {
    if (!stats.ranks.empty()) world = std::max(world, stats.ranks.rbegin()->first + 1);
  }
  for (const auto& [rank, r] : st.scan.ranks) world = std::max(world, rank + 1);
  return world;
}

// What the first rank to stop was doing: the lines of the hang's own rule
// (py-spy and faulthandler dumps) on its rank, else on its host, after its
// last progress.
void AddHangStacks(CorrelationState& st, Incident& inc) {
  std::vector<size_t> on_rank, on_host;
  for (size_t i = 0; i < st.evs.size(); ++i) {
    const Evidence& ev = st.evs[i];
    if (ev.rule != inc.rule || (inc.time_us != kNoTime && ev.time_us != kNoTime && ev.time_us < inc.time_us)) continue;
    if (inc.rank >= 0 && ev.rank == inc.rank) on_rank.push_back(i);
    else if (ev.rank < 0 && ev.host == inc.host && (!inc.host.empty() || inc.rank < 0)) on_host.push_back(i);
  }
  std::vector<size_t> pick = on_rank.empty() ? on_host : on_rank;
  std::erase_if(pick, [&](size_t i) { return st.evs[i].Field("perf_columns") != nullptr; });
  // The thread-dump recipe over traceback.extract_stack() writes a thread's
  // frames outermost first: its innermost are its last lines.
  if (!pick.empty() && st.evs[pick.front()].Field("outer_first")) std::reverse(pick.begin(), pick.end());
  std::string dump;
  for (size_t k = 0; k < pick.size() && k < 6; ++k) {
    const Evidence& ev = st.evs[pick[k]];
    inc.initiating.push_back(ev);
    std::string_view text = ev.text;
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    StrAppend(&dump, dump.empty() ? "" : " | ", text);
  }
  if (!dump.empty()) {
    inc.explanation += StrCat(" What it was doing after its last step (its stack dump, innermost frame first): ",
                              dump, ".");
    inc.timeline = inc.initiating;
  }
}

// When a notice came: the earliest stamp of its own lines (a scheduler's
// state row, `JobState=PREEMPTED`, is undated beside the step's dated
// cancel), else (no stamp, or one inherited from the lines before it: an
// srun cancel, a launcher's kill) no earlier than the job's last sign of
// life.
int64_t NoticeTime(const CorrelationState& st, const Incident& inc) {
  int64_t own = kNoTime;
  for (const Evidence& ev : inc.initiating) {
    if (ev.time_us == kNoTime || ev.time_source == TimeSource::kInherited ||
        ev.time_source == TimeSource::kNone) {
      continue;
    }
    if (own == kNoTime || ev.time_us < own) own = ev.time_us;
  }
  return own != kNoTime ? own : std::max(inc.time_us, st.alive_end_us);
}

// Whether incident `inc` is a termination notice that came long after every
// rank that logs progress had stopped (a hang that ran into its time limit,
// or that the operator cancelled): the hang detector, asked at the notice's
// time, finds them all stopped.
bool OutlivedByHang(const CorrelationState& st, const Incident& inc) {
  if (!inc.detector.empty() || !st.HasRole(inc.rule, RuleRole::kTermination)) return false;
  int64_t at = NoticeTime(st, inc);
  if (at == kNoTime) return false;
  // A preemption or spot notice (an initiating line, not a deadline's) may
  // date the kill that ends a grace period: ranks that stopped within it
  // were being stopped (a checkpoint, a drain), not hung.
  const bool announced = !st.HasRole(inc.rule, RuleRole::kDeadline) &&
                         std::any_of(inc.initiating.begin(), inc.initiating.end(), [&](const Evidence& ev) {
                           return st.rs.signal(ev.signal).role == SignalRole::Initiating;
                         });
  if (announced) at -= kNoticeGraceUs;
  size_t logging = 0, untimed = 0;  // ranks whose step lines carry a time, and the rest
  for (const auto& [rank, r] : st.scan.ranks) {
    logging += r.last_progress_us != kNoTime;
    untimed += r.last_progress_us == kNoTime && r.progress_lines > 0 && r.last_step >= 0;
  }
  if (logging == 0) logging = untimed;
  auto hangs = DetectHangs(st.scan.ranks, at, DetectOptions(), WorldRanks(st));
  return logging > 0 && hangs.size() == logging;
}

// The notice only ended the wait: it and what it explained become the
// hang's collateral.
void FoldNoticesIntoHang(CorrelationState& st) {
  std::vector<Incident>& incs = st.diag.incidents;
  Incident& hang = incs.back();
  for (const Incident& n : incs) {
    if (!OutlivedByHang(st, n)) continue;
    AddAsCollateral(n, hang);
    StrAppend(&hang.explanation, " The termination notice ", st.rs.rule(n.rule)->id()->str(),
              " at ", FormatTime(n.time_us),
              " came after progress had stopped: the hang ran into it.");
  }
  std::erase_if(incs, [&](const Incident& n) { return OutlivedByHang(st, n); });
}

// The first line of a stack dump of the hang rule's (py-spy's `Thread 0x...
// (idle): "MainThread"` and frames, faulthandler's `Timeout (0:05:00)!` and
// frames) that no progress of its rank (any rank, when it names none)
// followed: a dump taken of a process that had stopped. nullptr when there
// is none, or only one line of it (a quoted frame is no dump) that is not
// a person's interrupt (field `interrupt`: Ctrl-C's traceback is the stack
// the run was in). gdb's frames (field `gdb_frame`) are a dump only under
// its `thread apply all bt` header (field `gdb_thread`: a bare backtrace is
// as often a crash's); a dump with a crashed thread's frame or gdb's words
// for a signal it caught or a core's (field `crash_frame`) is no live
// process's.
const Evidence* StuckDump(const CorrelationState& st, int rule) {
  const Evidence* first = nullptr;
  size_t lines = 0, gdb_frames = 0;
  bool gdb_thread = false;
  for (size_t i = 0; i < st.evs.size(); ++i) {
    const Evidence& ev = st.evs[i];
    if (static_cast<int>(ev.rule) != rule || !st.ignore_reason[i].empty() || ev.Field("perf_columns")) continue;
    if (ev.Field("crash_frame")) return nullptr;
    if (first && ev.source != first->source) continue;
    for (const auto& [rank, p] : st.index.last_progress) {
      if ((ev.rank < 0 || rank == ev.rank) && LoggedAfter(ev, st.evs[p])) return nullptr;
    }
    if (ev.Field("gdb_frame")) {
      ++gdb_frames;
      continue;
    }
    gdb_thread |= ev.Field("gdb_thread") != nullptr;
    if (!first) first = &ev;
    ++lines;
  }
  if (gdb_thread) lines += gdb_frames;
  return lines >= 2 || (first && first->Field("interrupt")) ? first : nullptr;
}

bool OwnStamp(const Evidence& ev) {
  return ev.time_us != kNoTime && ev.time_source != TimeSource::kInherited &&
         ev.time_source != TimeSource::kNone;
}

// When line `ev` was logged at the latest: its own stamp, else that of the
// first line after it in its file with a stamp of its own; kNoTime when
// neither (a stamp inherited from the lines before it says nothing).
int64_t LatestTimeOf(const CorrelationState& st, const Evidence& ev) {
  if (OwnStamp(ev)) return ev.time_us;
  for (const Evidence& e : st.evs) {
    if (e.source == ev.source && e.offset > ev.offset && OwnStamp(e)) return e.time_us;
  }
  return kNoTime;
}

// Whether a person's interrupt (Ctrl-C) stopped a run that was still making
// progress: asked at the interrupt's time, the hang detector finds every
// rank that logs timed steps still within the gap its step cadence allows.
// Such a run was stopped by hand, not stuck.
bool InterruptedWhileProgressing(const CorrelationState& st, const Evidence& dump) {
  if (!dump.Field("interrupt")) return false;
  int64_t at = LatestTimeOf(st, dump);
  bool timed = std::any_of(st.scan.ranks.begin(), st.scan.ranks.end(),
                           [](const auto& r) { return r.second.last_progress_us != kNoTime; });
  return at != kNoTime && timed &&
         DetectHangs(st.scan.ranks, at, DetectOptions(), WorldRanks(st)).empty();
}

// Whether a line of a completion rule (a trainer's or a test session's
// closing summary) was logged after the dump: the dump was of a live
// process that then ran to its end (pytest's faulthandler_timeout dumps a
// slow test's threads and lets it go on), stamped or not.
bool CompletedAfter(const CorrelationState& st, const Evidence& dump) {
  for (size_t i = 0; i < st.evs.size(); ++i) {
    if (st.HasRole(st.evs[i].rule, RuleRole::kCompletion) && st.ignore_reason[i].empty() &&
        LoggedAfter(dump, st.evs[i])) {
      return true;
    }
  }
  return false;
}

// A stack dump with no error line and no progress after it names a hang
// the detector could not time (no progress lines, or too few after them):
// the dump's stuck frame is its evidence.
bool AddDumpHang(CorrelationState& st) {
  int rule = RuleForDetector(st.rs, "hang");
  const Evidence* dump = rule >= 0 ? StuckDump(st, rule) : nullptr;
  if (!dump || InterruptedWhileProgressing(st, *dump) || CompletedAfter(st, *dump)) return false;
  Finding f;
  f.detector = "hang";
  f.rank = dump->rank;
  f.host = dump->host;
  f.time_us = dump->time_us;
  std::string at = dump->time_us == kNoTime ? "" : StrCat(" at ", FormatTime(dump->time_us));
  f.detail = dump->Field("interrupt")
                 ? StrCat("the run was interrupted by hand (Ctrl-C)", at,
                          " with no error logged and no progress after it: it had stopped where "
                          "the interrupt's traceback shows")
                 : StrCat("a stack dump (py-spy, faulthandler, gdb) was taken", at,
                          " with no error logged and no progress after it: the process was stuck "
                          "where the dump shows");
  if (!AddFinding(st, f, 0.4)) return false;
  AddHangStacks(st, st.diag.incidents.back());
  return true;
}

// A benchmark's column header as the last line of its log (field
// `perf_columns`: nccl-tests prints it once every communicator is up, then
// one row per size) is a run that never finished its first collective and
// waits with no timeout. Only where the log ends in it, give or take a few
// bytes (a posted log's closing code fence): a header followed by any line
// of the run's (NCCL's `Launch mode Parallel` of a trimmed healthy run)
// went on, and a log cut anywhere before it (in NCCL's init lines) reads
// the same whether the run hung or was trimmed.
void AddColumnsHang(CorrelationState& st) {
  constexpr uint64_t kClosingBytes = 8;
  int rule = RuleForDetector(st.rs, "hang");
  const Evidence* header = nullptr;
  for (size_t i = 0; rule >= 0 && i < st.evs.size() && !header; ++i) {
    const Evidence& ev = st.evs[i];
    if (static_cast<int>(ev.rule) != rule || !st.ignore_reason[i].empty() || !ev.Field("perf_columns")) continue;
    if (ev.source < st.scan.sources.size() &&
        ev.offset + ev.text.size() + kClosingBytes >= st.scan.sources[ev.source].bytes) {
      header = &ev;
    }
  }
  if (!header) return;
  Finding f;
  f.detector = "hang";
  f.rank = header->rank;
  f.host = header->host;
  f.time_us = header->time_us;
  f.detail = "the benchmark printed its column header and no result row after it: every communicator was up and "
             "the first collective never completed (nccl-tests waits with no timeout)";
  if (!AddFinding(st, f, 0.4)) return;
  Incident& inc = st.diag.incidents.back();
  inc.initiating.push_back(*header);
  inc.timeline = inc.initiating;
}

// The latest time line `ev`, with no stamp of its own, can have been
// logged: the earliest time after the one it inherited of a later line of
// its file (own, or inherited from a stamped line after `ev`); kNoTime when
// there is none.
int64_t LatestTimeOfUnstamped(const CorrelationState& st, const Evidence& ev) {
  int64_t latest = kNoTime;
  for (const Evidence& e : st.evs) {
    if (e.source != ev.source || e.offset <= ev.offset || e.time_us == kNoTime || e.time_us <= ev.time_us) continue;
    if (latest == kNoTime || e.time_us < latest) latest = e.time_us;
  }
  return latest;
}

// A last step line with no stamp of its own (a progress bar in a file with
// no stamps: Rich's final render of an epoch, tqdm's redraws) carries the
// time of the stamped line before it, so the silence counted from it is the
// longest it can be; the first stamped line after it in its file bounds it
// from below.
void BoundUnstampedStop(const CorrelationState& st, Finding& f) {
  auto p = st.index.last_progress.find(f.rank);
  if (p == st.index.last_progress.end() || f.time_us == kNoTime || OwnStamp(st.evs[p->second])) return;
  const int64_t latest = LatestTimeOfUnstamped(st, st.evs[p->second]);
  const int64_t most = static_cast<int64_t>(f.score);
  StrAppend(&f.detail, "; that step line has no time of its own, so the ", most,
            " s count from the stamped line before it: it stopped ",
            latest != kNoTime && latest < st.alive_end_us
                ? StrCat("between ", (st.alive_end_us - latest) / kSecond, " and ", most, " s")
                : StrCat("at most ", most, " s"),
            " before the logs end");
}

// What the step lines cannot tell when one process of a multi-rank job
// logs them (rank 0's tqdm bar, a Trainer's metric dicts): a straggler
// slows every rank alike, so it cannot be seen, nor the first rank to stop.
void NoteProgressLimits(CorrelationState& st) {
  const RankSummary* only = nullptr;
  for (const auto& [rank, r] : st.scan.ranks) {
    if (r.progress_lines == 0) continue;
    if (only) return;
    only = &r;
  }
  const int64_t world = WorldRanks(st);
  if (!only || world < 2) return;
  st.diag.limits.push_back(StrCat("Only ", StepLogger(*only), " of ", world,
                                  " ranks logs step lines: whether a rank straggled, and which rank stopped first "
                                  "if the job hung, cannot be known from these logs; per-rank step lines would show "
                                  "it"));
}

}  // namespace

void RunDetectors(CorrelationState& st) {
  NoteProgressLimits(st);
  bool log_incidents = false;
  for (const Incident& inc : st.diag.incidents) log_incidents |= !OutlivedByHang(st, inc);
  auto stragglers = DetectStragglers(st.scan.ranks);
  if (!stragglers.empty()) {
    // The slowest first; the other slow ranks (a slow host's) are suspects
    // of the same incident.
    const Finding& f = stragglers.front();
    if (AddFinding(st, f, std::min(0.85, 0.5 + 0.05 * std::min(f.score, 7.0)))) {
      Incident& inc = st.diag.incidents.back();
      for (size_t i = 1; i < stragglers.size() && i < 64; ++i) {
        if (stragglers[i].rank >= 0) inc.suspects.push_back(stragglers[i].rank);
      }
    }
  }
  if (!log_incidents && !TrainingCompleted(st)) {
    auto hangs = DetectHangs(st.scan.ranks, st.alive_end_us, DetectOptions(), WorldRanks(st));
    if (!hangs.empty()) {
      BoundUnstampedStop(st, hangs.front());
      // All ranks stopped together: one job-level hang; else the first to stop.
      if (AddFinding(st, hangs.front(), hangs.size() == st.scan.ranks.size() ? 0.5 : 0.6)) {
        AddHangStacks(st, st.diag.incidents.back());
        FoldNoticesIntoHang(st);
      }
    } else if (!AddDumpHang(st)) {
      AddColumnsHang(st);
    }
  }
  AddOrphanedGpuMemory(st);
  for (const auto& [key, series] : st.scan.metrics) {
    int rule_idx = series.empty() ? -1 : static_cast<int>(series.front().rule);
    const fb::Conditions* c = rule_idx >= 0 ? st.rs.rule(rule_idx)->conditions() : nullptr;
    std::string_view det = c && c->detector() ? c->detector()->string_view() : "";
    if (det == "sdc_drift") {
      for (const Finding& f : DetectSdcDrift(key, series)) AddFinding(st, f, 0.6);
    } else if (det == "loss_spike") {
      auto spikes = DetectLossSpikes(key, series);
      if (!spikes.empty()) AddFinding(st, spikes.front(), 0.5);
    }
  }
}

namespace {

// A deadline notice (role:deadline: a time limit) that explains no failure:
// the job reached its limit and broke nothing else.
bool LoneDeadline(const CorrelationState& st, const Incident& i) {
  return i.detector.empty() && i.collateral.empty() && st.HasRole(i.rule, RuleRole::kDeadline);
}

}  // namespace

namespace {

// A line that ends its rank's run: an initiating-role line, a role:fallback
// rule's fatal line or a role:termination notice, not set aside and with no
// progress of its rank after it (an error the rank survived ends nothing).
bool EndsRank(const CorrelationState& st, size_t i) {
  if (!st.ignore_reason[i].empty() || SurvivedLine(st, i)) return false;
  const Evidence& ev = st.evs[i];
  return st.rs.signal(ev.signal).role == SignalRole::Initiating ||
         st.HasRole(ev.rule, RuleRole::kFallback) || st.HasRole(ev.rule, RuleRole::kTermination);
}

// A checkpoint save that began and never ended. Only frameworks that log
// both ends of a save are judged: their start lines carry the field
// `save_start`, their end lines `save_end` (of any rule: most are
// role:checkpoint-saved lines, whose reading by the other checkpoint
// detectors the fields do not change).
// In one source, a start with no end after it, and a failure or stop of
// the rank after it (or the source ending with the job failed), means the
// checkpoint being written is partial. A start with no end and nothing
// after it is a log cut while the run went on: nothing to say. Training
// steps of the source after a start and before its failure close it too: a
// save blocks the steps, so the save went on in the background (an async
// save, judged only when its end line is missing before a failure with no
// step between) or the framework's version logs no end (DeepSpeed before
// its checkpoint engine).
void AddPartialSave(CorrelationState& st, bool job_failed) {
  std::map<uint32_t, std::vector<size_t>> by_source;
  for (size_t i = 0; i < st.evs.size(); ++i) {
    const Evidence& ev = st.evs[i];
    if (EndsRank(st, i) || ev.Field("save_start") || ev.Field("save_end") ||
        st.rs.signal(ev.signal).role == SignalRole::Progress) {
      by_source[ev.source].push_back(i);
    }
  }
  const Evidence* first_start = nullptr;
  const Evidence* first_end = nullptr;
  size_t partial_sources = 0;
  for (auto& [src, idx] : by_source) {
    std::stable_sort(idx.begin(), idx.end(),
                     [&st](size_t a, size_t b) { return st.evs[a].offset < st.evs[b].offset; });
    const Evidence* open = nullptr;
    const Evidence* ended_by = nullptr;
    for (size_t i : idx) {
      const Evidence& ev = st.evs[i];
      if (ev.Field("save_end")) {
        open = ended_by = nullptr;
      } else if (ev.Field("save_start")) {
        if (!open) open = &ev;
      } else if (st.rs.signal(ev.signal).role == SignalRole::Progress) {
        if (!ended_by) open = nullptr;
      } else if (open && !ended_by) {
        ended_by = &ev;
      }
    }
    if (!open || (!ended_by && !job_failed)) continue;
    ++partial_sources;
    bool earlier = first_start && open->time_us != kNoTime &&
                   (first_start->time_us == kNoTime || open->time_us < first_start->time_us);
    if (!first_start || earlier) {
      first_start = open;
      first_end = ended_by;
    }
  }
  if (!first_start) return;
  const std::string* what = first_start->Field("save_start");
  const std::string* step = first_start->Field("step");
  Finding f = PracticeFinding("partial_checkpoint_save", first_start, first_start->time_us);
  std::string began = first_start->time_us == kNoTime
                          ? std::string()
                          : StrCat(" at ", FormatTime(first_start->time_us));
  if (first_start->rank >= 0) StrAppend(&began, " on rank ", first_start->rank);
  std::string before = first_end ? StrCat("the rank's failure or stop: ", first_end->text)
                                 : std::string("the log ended with the job failed");
  f.detail = StrCat("a checkpoint save began", began, " (", *what,
                    step ? StrCat(", iteration ", *step) : "", ") and no line says it finished before ",
                    before,
                    partial_sources > 1 ? StrCat(" (", partial_sources, " logs show such a save)") : "",
                    "; the checkpoint it was writing is partial: do not resume from it");
  if (!AddFinding(st, f, 0.4)) return;
  Incident& inc = st.diag.incidents.back();
  inc.initiating.insert(inc.initiating.begin(), *first_start);
  if (first_end) inc.initiating.push_back(*first_end);
  inc.timeline = inc.initiating;
}

}  // namespace

// SIGTERM without a checkpoint after it, and a run killed with its newest
// checkpoint hours old. Practices, not causes: they never outrank what
// killed the job, and they are skipped when another incident comes first
// (the SIGTERM of a drained node or a hung job at its time limit is
// collateral). The termination and checkpoint lines are those of the rules
// tagged role:termination and role:checkpoint-saved.
void AddPracticeFindings(CorrelationState& st) {
  const Diagnosis& d = st.diag;
  const Evidence* term = st.index.first_termination;
  int64_t last_ckpt = st.index.last_checkpoint_us;
  bool earlier_incident = false;
  for (const Incident& inc : d.incidents) {
    if (LoneDeadline(st, inc)) continue;
    if (!term || term->time_us == kNoTime || inc.time_us == kNoTime ||
        inc.time_us <= term->time_us) {
      earlier_incident = true;
    }
  }
  // A checkpoint the job saved to requeue itself (field requeue_job:
  // Lightning's SLURM auto-requeue saves its HPC checkpoint, then runs
  // scontrol requeue) before the stop: the SIGTERM that follows is the
  // requeue the job asked for, its work saved.
  // A checkpoint line with no timestamp is placed by its order in the
  // stop's file: one after the stop is a checkpoint after it.
  bool saved_for_stop = false;
  if (term) {
    for (const Evidence& ev : st.evs) saved_for_stop |= ev.Field("requeue_job") && !LoggedAfter(*term, ev);
    auto c = st.index.last_untimed_checkpoint.find(term->source);
    saved_for_stop |= c != st.index.last_untimed_checkpoint.end() && LoggedAfter(*term, *c->second);
  }
  if (term && !earlier_incident && !saved_for_stop &&
      (last_ckpt == kNoTime || (term->time_us != kNoTime && last_ckpt < term->time_us))) {
    Finding f = PracticeFinding("missing_checkpoint_after_sigterm", term, term->time_us);
    f.detail = last_ckpt == kNoTime
                   ? "the job received SIGTERM and no checkpoint was saved in the logs"
                   : StrCat("the job received SIGTERM at ", FormatTime(term->time_us),
                            " and the newest checkpoint is from ", FormatTime(last_ckpt));
    AddPractice(st, f, term);
  }
  // Killed (SIGTERM or a failure incident) with the newest checkpoint more
  // than two hours before the end: hours of work lost.
  constexpr int64_t kStale = 2 * 3600 * kSecond;
  int64_t end = d.job_end_us, start = d.job_start_us;
  bool killed = term != nullptr || !d.incidents.empty();
  if (killed && end != kNoTime && start != kNoTime && end - start > kStale &&
      (last_ckpt == kNoTime || end - last_ckpt > kStale)) {
    Finding f = PracticeFinding("stale_checkpoint", term, end);
    f.detail =
        last_ckpt == kNoTime
            ? StrCat("the run ended at ", FormatTime(end), " after ",
                     (end - start) / 3600 / kSecond, " h with no checkpoint saved in the logs")
            : StrCat("the run ended at ", FormatTime(end), " and its newest checkpoint is from ",
                     FormatTime(last_ckpt), ", ", (end - last_ckpt) / 60 / kSecond,
                     " min of training lost");
    AddPractice(st, f, term);
  }
  bool job_failed = false;
  for (const Incident& inc : d.incidents) job_failed |= !inc.survived && !PracticeFinding(inc);
  AddPartialSave(st, job_failed);
}

}  // namespace faultline::internal
