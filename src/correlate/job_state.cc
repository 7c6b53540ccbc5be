// What the caller states about how the job ended (CorrelateOptions::job:
// the scheduler's State and ExitCode, a pod's phase, the launcher's exit
// status, whether the process was still alive when the logs were taken).
// The logs alone cannot tell a hang from a log posted cut, nor a job that
// failed without a word from one that finished. The statement never
// overrides a cause the evidence backs:
//  - with an incident found, it only adds to its explanation, except that a
//    job stated completed with exit status 0 was not ended by it (survived);
//  - with none, a stated failure (failed, oom, node_fail, timeout,
//    preempted, a non-zero exit status) gives the catalog reference the
//    state names, else the fallback's, on the rank whose log stopped first;
//    `running` gives the silent hang on that rank; `cancelled` is a limit
//    of the logs, not a failure.
#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "correlate/state.h"
#include "timeparse/timeparse.h"
#include "util/strings.h"
#include "util/utf8.h"

namespace faultline::internal {
namespace {

// How many of the earliest-stopping source's last lines the incident shows.
constexpr size_t kLastLines = 3;

std::string SignalName(int sig) {
  switch (sig) {
    case 1: return "SIGHUP";
    case 2: return "SIGINT";
    case 6: return "SIGABRT";
    case 7: return "SIGBUS";
    case 9: return "SIGKILL";
    case 11: return "SIGSEGV";
    case 15: return "SIGTERM";
    default: return StrCat("signal ", sig);
  }
}

// "exit status 137 (128 + SIGKILL: <what it means>)", "killed by SIGINT",
// "" when unstated. What a signal means is the fallback's reading of an
// exit report's status (ExitMeaningOf); a signal it does not read is named.
std::string ExitText(const JobOutcome& j) {
  if (!j.has_exit_status) return "";
  auto signal = [&](int sig) {
    std::string meaning = ExitMeaningOf(StrCat(j.exit_status), "", "");
    return meaning.empty() ? SignalName(sig) : meaning;
  };
  if (j.exit_status < 0) return StrCat("killed by ", signal(-j.exit_status));
  if (j.exit_status > 128 && j.exit_status < 128 + 65) {
    return StrCat("exit status ", j.exit_status, " (128 + ", signal(j.exit_status - 128), ")");
  }
  return StrCat("exit status ", j.exit_status);
}

// "The caller states the job failed with exit status 1."
std::string Statement(const JobOutcome& j) {
  std::string s = "The caller states the job ";
  switch (j.state) {
    case JobState::kUnknown: s += "ended"; break;
    case JobState::kCompleted: s += "completed"; break;
    case JobState::kFailed: s += "failed"; break;
    case JobState::kTimeout: s += "reached its time limit"; break;
    case JobState::kCancelled: s += "was cancelled"; break;
    case JobState::kOom: s += "was killed for running out of memory"; break;
    case JobState::kNodeFail: s += "ended in a node failure"; break;
    case JobState::kPreempted: s += "was preempted"; break;
    case JobState::kRunning: s += "was still running when the logs were collected"; break;
  }
  if (std::string e = ExitText(j); !e.empty()) StrAppend(&s, j.state == JobState::kUnknown && j.exit_status >= 0 ? " with " : ", ", e);
  return s + ".";
}

bool Failure(const JobOutcome& j) {
  switch (j.state) {
    case JobState::kFailed:
    case JobState::kTimeout:
    case JobState::kOom:
    case JobState::kNodeFail:
    case JobState::kPreempted:
      return true;
    case JobState::kUnknown:
    case JobState::kCompleted:
      return j.has_exit_status && j.exit_status != 0;
    default:
      return false;
  }
}

bool CompletedCleanly(const JobOutcome& j) {
  return j.state == JobState::kCompleted && (!j.has_exit_status || j.exit_status == 0);
}

// The rule the stated outcome names, else the fallback's; -1 when the
// ruleset has neither.
int RuleOfOutcome(const CorrelationState& st, const JobOutcome& j) {
  std::vector<const char*> ids;
  switch (j.state) {
    case JobState::kOom: ids = {"slurm-oom-kill-event", "host-oom-kill"}; break;
    case JobState::kTimeout: ids = {"slurm-time-limit"}; break;
    case JobState::kNodeFail: ids = {"job-interrupted-node-failure"}; break;
    case JobState::kPreempted: ids = {"preemption"}; break;
    case JobState::kRunning: ids = {"training-silent-hang"}; break;
    default: break;
  }
  if (j.state != JobState::kRunning) ids.push_back("unrecognised-fatal-error");
  for (const char* id : ids) {
    if (int r = st.rs.FindRule(id); r >= 0) return r;
  }
  if (j.state == JobState::kRunning) return -1;
  const auto& fallback = st.role_rules[static_cast<size_t>(RuleRole::kFallback)];
  return fallback.empty() ? -1 : static_cast<int>(fallback.front());
}

// The source whose log stopped first (by the time of its last stamped line,
// aligned; a kernel log is no rank's) and its last kept lines, oldest
// first; -1 when no source has a line.
struct Stop {
  int source = -1;
  int64_t time_us = kNoTime;
  std::vector<size_t> last;
};

Stop EarliestStop(const CorrelationState& st) {
  std::vector<std::vector<size_t>> of(st.scan.sources.size());
  for (size_t i = 0; i < st.evs.size(); ++i) {
    const Evidence& ev = st.evs[i];
    if (ev.source >= of.size() || !st.ignore_reason[i].empty()) continue;
    of[ev.source].push_back(i);
  }
  Stop best;
  for (size_t s = 0; s < of.size(); ++s) {
    const SourceSummary& src = st.scan.sources[s];
    if ((s < st.kernel_source.size() && st.kernel_source[s]) || src.kernel_log || src.lines == 0) continue;
    auto& v = of[s];
    std::sort(v.begin(), v.end(), [&](size_t a, size_t b) { return st.evs[a].offset < st.evs[b].offset; });
    int64_t t = src.last_time_us == kNoTime ? kNoTime : src.last_time_us + ClockOffsetUs(st.diag, src.host);
    if (!v.empty() && st.evs[v.back()].time_us != kNoTime) t = std::max(t, st.evs[v.back()].time_us);
    if (best.source < 0 || (t != kNoTime && (best.time_us == kNoTime || t < best.time_us))) {
      best.source = static_cast<int>(s);
      best.time_us = t;
    }
  }
  // Ranks whose progress lines say when each stopped (several ranks may
  // share one file): the rank whose last progress line is earliest.
  int64_t rank = -1;
  const Evidence* last_step = nullptr;
  for (const auto& [r, i] : st.index.last_progress) {
    const Evidence& ev = st.evs[i];
    if (r < 0 || ev.time_us == kNoTime || !st.ignore_reason[i].empty()) continue;
    if (!last_step || ev.time_us < last_step->time_us) {
      last_step = &ev;
      rank = r;
    }
  }
  if (last_step && st.index.last_progress.size() > 1) {
    best.source = static_cast<int>(last_step->source);
    best.time_us = last_step->time_us;
  }
  if (best.source < 0) return best;
  std::vector<size_t> v = of[static_cast<size_t>(best.source)];
  if (last_step && st.index.last_progress.size() > 1) {
    std::erase_if(v, [&](size_t i) { return st.evs[i].rank != rank || st.evs[i].offset > last_step->offset; });
  }
  best.last.assign(v.end() - static_cast<std::ptrdiff_t>(std::min(v.size(), kLastLines)), v.end());
  return best;
}

void AddStatedIncident(CorrelationState& st, const JobOutcome& j) {
  int r = RuleOfOutcome(st, j);
  if (r < 0) return;
  const fb::Rule& rule = *st.rs.rule(r);
  Incident inc;
  inc.rule = static_cast<uint32_t>(r);
  inc.inferred = true;
  inc.confidence = j.state == JobState::kRunning || j.state == JobState::kFailed ||
                           j.state == JobState::kUnknown || j.state == JobState::kCompleted
                       ? 0.3
                       : 0.6;
  Stop stop = EarliestStop(st);
  for (size_t i : stop.last) inc.initiating.push_back(st.evs[i]);
  std::string where;
  if (stop.source >= 0) {
    const SourceSummary& src = st.scan.sources[static_cast<size_t>(stop.source)];
    const Evidence* ev = stop.last.empty() ? nullptr : &st.evs[stop.last.back()];
    inc.rank = src.rank >= 0 ? src.rank : (ev ? ev->rank : -1);
    inc.host = ev && !ev->host.empty() ? ev->host : (inc.rank >= 0 ? st.HostForRank(inc.rank) : src.host);
    inc.time_us = stop.time_us;
    if (inc.rank >= 0) inc.suspects = {inc.rank};
    // Its last stamped line: read back when it follows the last kept one.
    std::string text;
    if (src.last_time_offset >= 0 && (!ev || static_cast<uint64_t>(src.last_time_offset) > ev->offset) &&
        (!ev || ev->rank < 0 || ev->rank == src.rank) && st.opts.line_at) {
      if (auto t = st.opts.line_at(src, static_cast<uint64_t>(src.last_time_offset))) text = CleanUtf8(*t, 512);
    }
    if (text.empty() && ev) text = ev->text;
    where = StrCat(" The log that stopped first is ", EscapeControls(src.name),
                   inc.rank >= 0 ? StrCat(" (rank ", inc.rank, ")") : std::string(),
                   stop.time_us != kNoTime ? StrCat(", at ", FormatRfc3339(stop.time_us)) : std::string(),
                   text.empty() ? std::string(".") : StrCat(": its last line is '", EscapeControls(text), "'."));
  }
  std::string stated = Statement(j);
  if (j.state == JobState::kRunning) {
    inc.explanation = StrCat("No error in the logs, and no line after the last one: ", stated,
                             " Its ranks stopped logging while it was alive, a silent hang.", where);
    inc.missing_facts.push_back(
        "A stack dump of every rank while it hangs (py-spy dump --pid PID, or faulthandler) would show where "
        "each waits; the rank not inside the collective is the suspect.");
  } else {
    inc.explanation = StrCat("No failure was found in the logs. ", stated, where);
    inc.missing_facts.push_back(
        "The logs end without the error that ended the job: the failing process's standard error, or the "
        "scheduler's record (sacct -j JOBID -o State,ExitCode,Reason; kubectl describe pod), would name it.");
  }
  std::map<std::string, std::string> vars = TemplateVars(inc, st.diag.job_start_us, st.diag.job_end_us);
  FillFixAndVerify(rule, vars, inc);
  if (rule.missing_fact() && rule.missing_fact()->size()) {
    inc.missing_facts.push_back(FillTemplate(rule.missing_fact()->str(), vars));
  }
  inc.timeline = inc.initiating;
  st.diag.incidents.insert(st.diag.incidents.begin(), std::move(inc));
}

}  // namespace

void UseJobState(CorrelationState& st) {
  const JobOutcome& j = st.opts.job;
  if (!j.Stated()) return;
  auto failing = [](const Incident& i) { return !i.survived && !PracticeFinding(i); };
  auto& incs = st.diag.incidents;
  const std::string stated = Statement(j);
  if (std::any_of(incs.begin(), incs.end(), failing)) {
    for (Incident& i : incs) {
      if (!failing(i)) continue;
      if (CompletedCleanly(j)) {
        i.survived = true;
        StrAppend(&i.explanation, " ", stated, " This did not end it.");
      } else {
        StrAppend(&i.explanation, " ", stated);
      }
    }
    return;
  }
  if (Failure(j) || j.state == JobState::kRunning) {
    AddStatedIncident(st, j);
  } else if (j.state == JobState::kCancelled) {
    st.diag.limits.push_back(StrCat(stated, " The logs show no failure before it: what they hold is what ran until then."));
  }
}

}  // namespace faultline::internal
