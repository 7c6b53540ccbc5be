// Survived and fallback passes. A cluster whose every line was followed by
// progress on its rank was survived (a caught CUDA OOM, then "skipping batch"
// and more steps): its incident says so and ranks below those that ended a
// rank. When no other root cluster explains a failure, the first generic
// fatal line (role:fallback: a folded traceback's exception, a crash signal,
// a non-zero exit) on the earliest failing rank becomes the initiating
// cluster, and launcher summaries (role:summary) become its collateral: a
// summary names the first local failure, never the cause. A verdict that
// stands on symptoms only (a collective timeout, a closed socket) is no
// explanation against a concrete fatal line logged before it: that line
// initiates and the symptoms become its collateral. A fatal line a catalog
// rule also matched is that rule's (and heads that rule's evidence when its
// message goes on to the rule's line, unless it is a line of the traceback
// that ends there: a wrapper, Ray's RayTaskError), an exception whose
// traceback holds a catalog rule's frame joins that rule's incident, and a
// fatal line after training completed, or at the process's exit
// (role:teardown), is teardown.
// Of one failure's lines, the one that states the message leads the one
// that only names the exception's type (C++'s what() under its terminate).
// A verdict whose lines blame only connections that stayed on one host
// (both ends named, and one host) names no network fault: with no fatal
// line to lead, the failure is the fallback's.
#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
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
// How many lines may follow the line a log ends in (the last line of a
// signal the log must end in, field `ending`; a bar redrawn as its process
// exits): a blank line, a closing code fence as posted.
constexpr uint64_t kEndingSlackLines = 1;
// The lines a Python traceback prints between two frames (the code line,
// and since 3.11 the caret line under it), or after its last frame.
constexpr uint64_t kHeadlessGapLines = 2;

// Whether `a` was logged before `b`: by time, and within one file (the same
// second, or no stamps) by position.
bool Before(const Evidence& a, const Evidence& b) {
  if (a.time_us != kNoTime && b.time_us != kNoTime && a.time_us != b.time_us) {
    return a.time_us < b.time_us;
  }
  if (a.source == b.source) return a.offset < b.offset;
  if (a.time_us == b.time_us) return false;  // the same second in two files
  return a.time_us != kNoTime;               // a timed line before an untimed one elsewhere
}

// A root cluster that, fatal and of a catalog rule, explains the failure.
bool Explains(const CorrelationState& st, const Cluster& c) {
  return c.parent < 0 && !c.survived && !st.HasRole(c.rule, RuleRole::kSummary) &&
         !st.HasRole(c.rule, RuleRole::kFallback);
}

// Whether `ev` follows `t` (the job's first termination, completion or
// interrupt line): what a rank prints while it is being stopped (by the
// scheduler, or by a person's Ctrl-C) is that stop's doing, and what it
// prints after training completed is teardown.
bool After(const Evidence* t, const Evidence& ev) { return t && LoggedAfter(*t, ev); }

// Whether progress line `p` was logged clearly after line `ev`: later in the
// same file, else stamped more than the margin later (two files' stamps
// differ in resolution and skew).
bool ClearlyAfter(const Evidence& ev, const Evidence& p) {
  if (p.source == ev.source) return p.offset > ev.offset;
  return p.time_us != kNoTime && ev.time_us != kNoTime && p.time_us > ev.time_us + kSurvivedMargin;
}

// The place in the run a progress line states: its epoch (when it names a
// whole one) and its step; false when it states no step.
bool ProgressPlace(const Evidence& p, std::pair<int64_t, int64_t>* place) {
  const std::string* step = p.Field("step");
  int64_t s = 0, e = -1;
  if (!step || !ParseInt64(*step, &s)) return false;
  if (const std::string* epoch = p.Field("epoch"); epoch && !ParseInt64(*epoch, &e)) e = -1;
  *place = {e, s};
  return true;
}

// Whether `rank`'s progress lines after line `ev` show the run moving on: a
// line that states no step counts by being logged; lines that state one
// must differ among themselves or reach a place past the last one stated
// before `ev` (with none stated before, a closing bar's redraw must not end
// the log). A bar printed once more at the count it had reached is not
// progress: tqdm's close() (run from __del__ as the interpreter tears down
// after an uncaught exception) redraws the bar at its last count and ends
// the line, so the bar of the step that raised appears after the traceback.
// The walk goes from the newest line back and stops at the first line
// before `ev`, so it reads only the lines after it.
bool ProgressMovedOn(const CorrelationState& st, const Evidence& ev, int64_t rank) {
  auto lines = st.index.progress.find(rank);
  if (lines == st.index.progress.end()) return false;
  bool after = false;
  std::pair<int64_t, int64_t> newest{};  // the one place every line after `ev` states so far
  for (auto q = lines->second.rbegin(); q != lines->second.rend(); ++q) {
    const Evidence& p = st.evs[*q];
    std::pair<int64_t, int64_t> place;
    bool placed = ProgressPlace(p, &place);
    if (ClearlyAfter(ev, p)) {
      if (!placed || (after && place != newest)) return true;
      newest = place;
      after = true;
      continue;
    }
    // The newest line before `ev` (or not clearly after it): the run moved
    // on past the place it states; one that states none cannot tell, and
    // the lines after `ev` count as progress.
    return after && (!placed || newest > place);
  }
  // No place stated before `ev`: the one place stated after it moved the run
  // on, unless it is a bar its printer redraws when closed (field
  // `closing_redraw`) and its line ends the log, where that redraw stands --
  // but not where the bar before it, after `ev` in the same file, stated
  // another step (field `moved_from_line`, scan/keep.cc): the bar went on.
  // The lines of a launcher stopping the workers still running (field
  // `stops_workers`: DeepSpeed's sigkill_handler logs "Killing subprocess N"
  // for each worker once one exited non-zero or the launcher was signalled;
  // torchrun's agent "Sending process N closing signal SIGTERM") come after
  // the last thing the run printed, so a redraw followed only by them still
  // ends the log.
  if (!after) return false;
  const Evidence& last = st.evs[lines->second.back()];
  int64_t from = 0;
  if (const std::string* f = last.Field("moved_from_line"); f && last.source == ev.source) {
    (void)ParseInt64(*f, &from);
  }
  if (!last.Field("closing_redraw") || from > static_cast<int64_t>(ev.line) || last.source >= st.scan.sources.size()) {
    return true;
  }
  uint64_t stops_after = 0;
  if (auto w = st.index.workers_stopped.find(last.source); w != st.index.workers_stopped.end()) {
    for (uint64_t line : w->second) stops_after += line > last.line;
  }
  return last.line + kEndingSlackLines + stops_after < st.scan.sources[last.source].lines;
}

// Whether `text` is a line Python's warnings module printed: CPython's
// formatter (warnings.formatwarning, and _warnings.c's show_warning when the
// module is not loaded) writes "<file>:<lineno>: <Category>: <message>", the
// category being Warning or a subclass by its bare name (UserWarning,
// RuntimeWarning, FutureWarning, a library's own XyzWarning), then the
// source line; PyTorch's TORCH_WARN reaches Python as such a warning ("...
// (Triggered internally at .../Conv_v8.cpp:919.)"). A prefix the line got
// on its way (a container's "server-1  | ", a rank's "[rank0]:") may come
// before the file.
bool PrintedPythonWarning(std::string_view text) {
  auto ident = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  };
  constexpr std::string_view kTail = "Warning: ";
  for (size_t at = text.find(kTail); at != std::string_view::npos; at = text.find(kTail, at + 1)) {
    size_t b = at;  // the category's first character
    while (b > 0 && ident(text[b - 1])) --b;
    if (b < 2 || text.compare(b - 2, 2, ": ") != 0) continue;
    size_t d = b - 2;  // the line number's digits end here
    size_t e = d;
    while (e > 0 && text[e - 1] >= '0' && text[e - 1] <= '9') --e;
    if (e == d || e < 2 || text[e - 1] != ':' || text[e - 2] == ' ') continue;
    return true;
  }
  return false;
}

// Whether a line says that the operation it reports failing will be tried
// again: Ray's task manager ("Task X failed. There are N retries remaining,
// so the task will be retried. Error: ..."), a client's "..., retrying" or
// "Retrying in 5s". Not where the retries are over ("after retrying",
// "no retries remaining", "0 retries left").
bool AnnouncesRetry(std::string_view text) {
  std::string low(text.substr(0, 4096));
  absl::AsciiStrToLower(&low);
  for (std::string_view over : {"after retrying", "no retries", " 0 retries", "giving up", "gave up"}) {
    if (low.find(over) != std::string::npos) return false;
  }
  for (std::string_view again : {"will be retried", "will retry", "retries remaining", "retries left", "retrying"}) {
    if (low.find(again) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

bool LoggedAfter(const Evidence& t, const Evidence& ev) {
  if (t.source == ev.source) return t.offset < ev.offset;
  return t.time_us != kNoTime && ev.time_us != kNoTime && t.time_us <= ev.time_us;
}

bool SurvivedLine(const CorrelationState& st, size_t i) {
  const Evidence& ev = st.evs[i];
  // A report that quotes the log before it (field `quotes_logs`: Ray's job
  // status "... failed with exit code N, last available logs ...:" over
  // the driver's last lines): what follows it was printed before it.
  if (ev.Field("quotes_logs")) return false;
  // A line Python's warnings module printed (PyTorch 2.3's cuDNN "Plan
  // failed with a cudnnException: ... CUDNN_STATUS_NOT_SUPPORTED" when one
  // engine's plan was refused and another ran) reports a condition the
  // program went on from, whatever rule reads it: survived, unless the log
  // shows a failure after it (the warning may then be its cause).
  if (PrintedPythonWarning(ev.text)) {
    auto f = st.index.last_failure.find(ev.source);
    if (f == st.index.last_failure.end() || f->second <= ev.offset) return true;
  }
  // A server that answered requests after the error (role:served: HTTP 200
  // lines, generation throughput) in the same log carried on.
  if (auto s = st.index.last_served.find(ev.source);
      s != st.index.last_served.end() && st.evs[s->second].offset > ev.offset) {
    return true;
  }
  // The program began a later step after a check it ran said no (a
  // role:carried-on line with the field `next_step`: the MIG manager's
  // "Applying the selected MIG config to the node" after nvidia-mig-parted's
  // fatal "Assertion failure: ..."): every error of the log on or before
  // that line was the check's answer, and a failure after it is the later
  // step's own, not the check's error raised again.
  if (auto n = st.index.last_next_step.find(ev.source);
      n != st.index.last_next_step.end() && n->second >= ev.offset) {
    return true;
  }
  // The program said it handled an error and went on (role:carried-on:
  // fairseq's "Skipping batch" after a caught OOM), on this line or after
  // it, and its log shows no failure after that: a failure right after a
  // handler's "skipping" (without progress between, which counts below)
  // says the handler did not carry on (it raised the error again, or the
  // job died of it: torch's spawn reporting the worker's death).
  if (auto c = st.index.last_carried_on.find(ev.source); c != st.index.last_carried_on.end()) {
    const uint64_t on = st.evs[c->second].offset;
    auto f = st.index.last_failure.find(ev.source);
    const bool failed_after = f != st.index.last_failure.end() && f->second > on;
    if (on >= ev.offset && !failed_after) return true;
  }
  // The trainer said it finished (a role:completion line: the HF Trainer's
  // "Training completed.", torchtitan's "Training completed", the elastic
  // agent's "worker group successfully finished") later in the same log:
  // the run went on to its normal end after the error, so the error did not
  // end it, whatever printed it (a PCIe AER report, an IB port event, an
  // Xid of another process). A failure after that line is teardown's, which
  // the fallback reads on its own.
  if (const Evidence* done = st.index.first_completion;
      done && done->source == ev.source && done->offset > ev.offset) {
    return true;
  }
  // A hardware-layer line is the host's, in its own file (a kernel log):
  // the job's completion stamped clearly after it, in the trainer's log,
  // says as much, the run went on to its end after whatever the kernel
  // reported then.
  if (const Evidence* done = st.index.first_completion;
      done && done->source != ev.source && st.index.hardware[i] && ClearlyAfter(ev, *done)) {
    return true;
  }
  // Progress of the line's rank after it, clearly later (across files the
  // stamps differ in resolution, a kernel log's whole seconds, and clocks in
  // skew), that moved the run on: ProgressMovedOn starts from the rank's
  // last progress line and is false unless that one is clearly after.
  if (ProgressMovedOn(st, ev, ev.rank)) return true;
  // No progress line of the archive names a rank (a one-node run's tqdm
  // bar): the unranked progress is every rank's, the line's rank included.
  if (ev.rank >= 0 && !st.index.progress.empty() && st.index.progress.rbegin()->first < 0 &&
      ProgressMovedOn(st, ev, -1)) {
    return true;
  }
  // A hardware-layer line (a kernel's Xid, an AER report) is the host's, not
  // a process's: it names a GPU, and through the ranks' bus ids a rank, whose
  // own lines may state no progress at all (a trainer logs its steps from
  // one rank, or with no rank prefix). When that rank logged none, the job's
  // progress clearly after the line, unranked or any rank's, says the job
  // went on after it: no rank of a collective job steps past a collective
  // whose member's GPU is gone. A rank that logs progress of its own is
  // judged by it alone (above): its peers may go on without it.
  if (!st.index.hardware[i] || st.index.progress.contains(ev.rank)) return false;
  for (const auto& [rank, lines] : st.index.progress) {
    if (ProgressMovedOn(st, ev, rank)) return true;
  }
  return false;
}

std::string ExitMeaning(const Evidence& ev) {
  std::string code;
  if (const std::string* c = ev.Field("exitcode")) code = *c;
  // mpirun's "exited on signal 9 (Killed)", sacct's "FAILED 0:9" (exit
  // code, then the signal): the number Python would negate.
  if (const std::string* n = ev.Field("signal_number");
      n && *n != "0" && (code.empty() || code == "0")) {
    code = "-" + *n;
  }
  std::string_view crash;
  if (const std::string* c = ev.Field("crash")) crash = *c;
  std::string_view name;  // abseil's "*** SIGSEGV received at time=..."
  if (const std::string* n = ev.Field("signal_name")) name = *n;
  return ExitMeaningOf(code, name, crash);
}

std::string ExitMeaningOf(std::string_view code, std::string_view name, std::string_view crash) {
  // Signal N as a shell's 128+N, Python's and torchrun's -N, its name, or
  // the text a shell prints for it.
  auto is = [&](int n, std::string_view sig, std::string_view text) {
    return code == StrCat(128 + n) || code == StrCat(-n) || name == sig ||
           (!text.empty() && crash.find(text) == 0);
  };
  // srun's "task 3: Killed" (strsignal of the task's status; srun says
  // "Out Of Memory" where slurmstepd tied the end to an OOM kill).
  if (is(9, "SIGKILL", "Killed")) {
    return "SIGKILL: the process was killed from outside; look for the OOM killer (dmesg) or the "
           "scheduler's kill after a grace period";
  }
  if (is(7, "SIGBUS", "Bus error")) {
    return "SIGBUS: a memory-mapped file or /dev/shm ran out or was truncated under the process";
  }
  if (is(11, "SIGSEGV", "Segmentation fault") || crash.find("Fatal Python error: Segm") == 0) {
    return "SIGSEGV: a crash in native code (a CUDA extension, a library ABI mismatch)";
  }
  if (is(6, "SIGABRT", "Aborted") || crash.find("Fatal Python error: Abort") == 0) {
    return "SIGABRT: the process aborted itself (a C++ exception or assertion, the NCCL watchdog)";
  }
  if (is(15, "SIGTERM", "Terminated")) {
    return "SIGTERM: the process was asked to stop; find who sent it (scheduler time limit, "
           "preemption, scancel, the launcher tearing down siblings)";
  }
  // Signals a job gets from outside whose default action ends it, known here
  // by their names and the C library's words only (shell_signal_report):
  // their numbers differ between Linux and other systems.
  auto named = [&](std::string_view sig, std::string_view text) { return name == sig || crash.find(text) == 0; };
  if (named("SIGHUP", "Hangup")) {
    return "SIGHUP: the terminal or ssh session the job ran under closed; run it under nohup, tmux or the "
           "scheduler";
  }
  for (std::string_view n : {"1", "2"}) {
    if (named(StrCat("SIGUSR", n), StrCat("User defined signal ", n))) {
      return StrCat("SIGUSR", n,
                    ": a signal the program has no handler for ended it; a scheduler sends one before its time "
                    "limit (Slurm's --signal), a job wrapper to requeue: install the handler or drop the option");
    }
  }
  if (named("SIGXCPU", "CPU time limit") || crash.find("Cputime limit") == 0) {
    return "SIGXCPU: the process reached its CPU-time limit (ulimit -t, the scheduler's CPU time limit)";
  }
  return "";
}

std::string ExitSignal(const Evidence& ev) {
  std::string m = ExitMeaning(ev);
  return m.substr(0, m.find(':'));
}

void MarkSurvived(CorrelationState& st) {
  if (st.index.last_progress.empty() && st.index.last_served.empty() && st.index.last_carried_on.empty() &&
      !st.index.first_completion &&
      std::none_of(st.evs.begin(), st.evs.end(), [](const Evidence& ev) { return PrintedPythonWarning(ev.text); })) {
    return;
  }
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

namespace {

// How many lines after a fatal line its message may go on: C++'s
// "terminate called after throwing an instance of 'c10::DistBackendError'"
// gives it on the next line ("  what():  [Rank 6] Watchdog caught ..."), a
// hard-wrapped exception message on the lines after it; NCCL's error goes
// on over its result's name and "Last error:" to the failed call's own
// message ("Cuda failure 802 'system not yet initialized'").
constexpr uint64_t kMessageLines = 3;

// Lines (source, line number) of failures a catalog rule matched (its
// initiating and symptom lines, whatever its conditions decided, but for a
// rule that requires another's line the logs lack). A generic
// fatal line on one of them ("torch.distributed.DistBackendError: ...
// Watchdog caught collective operation timeout", torchrun's
// "ChildFailedError:"), or whose message goes on to one of its rank, is
// that rule's failure, which the rule already explains or summarises.
// `stops` selects the lines of role:termination rules instead (a stop
// request, a process reported dead of SIGTERM): a fatal line on one of
// them is that stop, but no message runs on into the report of a stop.
using LineSet = std::map<std::pair<uint32_t, uint64_t>, int64_t>;  // -> the line's rank

// Whether the rule of evidence `i` names a failure only beside another
// rule's line (conditions' requires_rule: an empty pickle is a checkpoint
// that does not resume only where the resume is in the logs) and the logs
// hold none: that rule says nothing of the line, which is then no more than
// its generic reading (the uncaught exception it is), not a failure the
// rule claims.
bool MissingRequiredRule(const CorrelationState& st, size_t i) {
  if (st.active[i]) return false;
  const fb::Conditions* c = st.rs.rule(st.evs[i].rule)->conditions();
  return c && c->requires_rule() && c->requires_rule()->size() > 0 && !st.RulePresent(c->requires_rule());
}

LineSet ClaimedLines(const CorrelationState& st, bool stops) {
  LineSet claimed;
  for (size_t i = 0; i < st.evs.size(); ++i) {
    const Evidence& ev = st.evs[i];
    SignalRole role = st.rs.signal(ev.signal).role;
    if (st.ignore_reason[i].empty() && !st.HasRole(ev.rule, RuleRole::kFallback) && !MissingRequiredRule(st, i) &&
        st.HasRole(ev.rule, RuleRole::kTermination) == stops &&
        (role == SignalRole::Initiating || role == SignalRole::Symptom)) {
      claimed.emplace(std::make_pair(ev.source, ev.line), ev.rank);
    }
  }
  return claimed;
}

// The claimed line `ev`'s line is, or whose message it heads; null when
// none. whole: `ev`'s line is a report of its own (srun's `task N: ...`),
// never the head of a message that goes on.
const std::pair<uint32_t, uint64_t>* ClaimingLine(const LineSet& claimed, const Evidence& ev,
                                                  bool whole = false) {
  auto it = claimed.lower_bound({ev.source, ev.line});
  if (it == claimed.end() || it->first.first != ev.source) return nullptr;
  if (it->first.second == ev.line) return &it->first;
  if (whole) return nullptr;
  // Another rank's line after it is not its message.
  bool message = it->first.second <= ev.line + kMessageLines &&
                 (it->second == ev.rank || it->second < 0 || ev.rank < 0);
  return message ? &it->first : nullptr;
}

bool Claimed(const LineSet& claimed, const Evidence& ev, bool whole = false) {
  return ClaimingLine(claimed, ev, whole) != nullptr;
}

// Lines only role:summary rules matched (torchrun's "failed (exitcode: 1)
// local_rank: 0 ..."). A launcher's summary is a report of its own, written
// by another process after the worker exited: a worker's fatal line just
// above it ("train.py: error: unrecognized arguments: ...") is not the head
// of its message but the failure it summarises.
std::set<std::pair<uint32_t, uint64_t>> SummaryOnlyLines(const CorrelationState& st) {
  std::set<std::pair<uint32_t, uint64_t>> summary, other;
  for (size_t i = 0; i < st.evs.size(); ++i) {
    const Evidence& ev = st.evs[i];
    if (!st.ignore_reason[i].empty() || st.HasRole(ev.rule, RuleRole::kFallback)) continue;
    (st.HasRole(ev.rule, RuleRole::kSummary) ? summary : other).emplace(ev.source, ev.line);
  }
  std::erase_if(summary, [&](const auto& line) { return other.contains(line); });
  return summary;
}

// How far after a teardown line (role:teardown: the CUDA runtime already
// unloaded) a fatal line of its rank is still that exit: C++'s stack dump
// and "Aborted (core dumped)" follow it within a few dozen lines.
constexpr uint64_t kTeardownReachLines = 64;

// Lines of role:teardown rules, with their ranks.
LineSet TeardownLines(const CorrelationState& st) {
  LineSet lines;
  for (size_t i = 0; i < st.evs.size(); ++i) {
    const Evidence& ev = st.evs[i];
    if (st.ignore_reason[i].empty() && st.HasRole(ev.rule, RuleRole::kTeardown)) {
      lines.emplace(std::make_pair(ev.source, ev.line), ev.rank);
    }
  }
  return lines;
}

// Whether fatal line `ev` is its process's exit, not a failure: a line that
// states no message of its own goes on to a teardown line ("terminate called
// after throwing ..." and its "what():  CUDA error: driver shutting down"),
// or a teardown line of its rank came shortly before it (the abort that
// follows). An exception that states its message is a failure of its own.
bool AtTeardown(const LineSet& teardown, const Evidence& ev) {
  if (teardown.empty()) return false;
  if (!ev.Field("message") && Claimed(teardown, ev)) return true;
  auto it = teardown.upper_bound({ev.source, ev.line});
  if (it == teardown.begin()) return false;
  --it;
  return it->first.first == ev.source && ev.line - it->first.second <= kTeardownReachLines &&
         (it->second == ev.rank || it->second < 0 || ev.rank < 0);
}

// A traceback's code line (`    raise ValueError(`, `    assert x`, field
// `statement`) is the lead only when the excerpt was cut before its
// exception: an exception line of the same rank after it, within the
// traceback's reach, says what was raised -- a generic one, or a failure a
// catalog rule names ("RuntimeError: NCCL communicator was aborted").
bool SupersededStatement(const CorrelationState& st, size_t i) {
  const Evidence& ev = st.evs[i];
  if (!ev.Field("statement")) return false;
  if (ev.Field("in_traceback_of")) return true;
  for (size_t j = i + 1; j < st.evs.size(); ++j) {
    const Evidence& e = st.evs[j];
    if (e.source != ev.source || e.offset - ev.offset > kTracebackWindowBytes) break;
    if (e.rank != ev.rank || e.Field("statement")) continue;
    SignalRole role = st.rs.signal(e.signal).role;
    bool generic = st.HasRole(e.rule, RuleRole::kFallback);
    if (role == SignalRole::Initiating || (!generic && role == SignalRole::Symptom)) return true;
  }
  return false;
}

bool SameLine(const Evidence& a, const Evidence& b) {
  return a.source == b.source && a.line == b.line;
}

// The first record on the line of evidence `i` (before it, then from it
// on) for which `pred` holds, nullopt when none. The evidence is in
// source-then-offset order, so the signals of one line are neighbours.
template <typename Pred>
std::optional<size_t> FindOnLine(const CorrelationState& st, size_t i, Pred pred) {
  for (size_t j = i; j-- > 0 && SameLine(st.evs[j], st.evs[i]);) {
    if (pred(st.evs[j])) return j;
  }
  for (size_t j = i; j < st.evs.size() && SameLine(st.evs[j], st.evs[i]); ++j) {
    if (pred(st.evs[j])) return j;
  }
  return std::nullopt;
}

// Whether evidence i's line is a launcher's report of how a task ended
// (srun's `srun: error: node7: task 3: Segmentation fault`): one of its
// signals names the task.
bool TaskReport(const CorrelationState& st, size_t i) {
  return FindOnLine(st, i, [](const Evidence& e) { return e.Field("task") || e.Field("tasks"); }).has_value();
}

// Whether evidence `a` holds every field of `b`.
bool Holds(const Evidence& a, const Evidence& b) {
  return std::all_of(b.fields.begin(), b.fields.end(), [&](const auto& f) {
    const std::string* v = a.Field(f.first);
    return v && *v == f.second;
  });
}

// Whether `ev` names a warning category, not an exception
// ("urllib3.exceptions.InsecureRequestWarning: Unverified HTTPS request"): a
// warning is printed and the program goes on.
bool WarningCategory(const Evidence& ev) {
  const std::string* e = ev.Field("exception");
  return e && e->ends_with("Warning");
}

// Whether `ev`'s exception ends the program without a failure: a person's
// Ctrl-C (KeyboardInterrupt), and, read off a traceback's header, a
// SystemExit or GeneratorExit, whose status the system_exit signal reads
// from the exception line itself (SystemExit: 0 or None is a clean exit).
bool CleanEnd(const CorrelationState& st, const Evidence& ev) {
  const std::string* e = ev.Field("exception");
  if (!e) return false;
  if (*e == "KeyboardInterrupt") return true;
  return st.rs.signal(ev.signal).detail_exception_line && (*e == "SystemExit" || *e == "GeneratorExit");
}

// The evidence of field-`ending` signals (a retried refusal, a stack's
// frame) that is no fatal line: such a signal is a failure only where its
// source ends in it (its last line there is within kEndingSlackLines of the
// source's last line, or of the line above the `ending_tail` lines that end
// it; nothing after it says the retry succeeded or the program went on),
// and then its first line in the source, where the failure began, is the
// one fatal line.
std::set<size_t> Unended(const CorrelationState& st) {
  std::map<std::pair<uint32_t, uint32_t>, std::pair<size_t, size_t>> runs;  // (source, signal) -> first, last
  std::map<uint32_t, std::set<uint64_t>> tails;  // source -> its lines of field `ending_tail`
  for (size_t i = 0; i < st.evs.size(); ++i) {
    const Evidence& ev = st.evs[i];
    if (ev.Field("ending_tail")) tails[ev.source].insert(ev.line);
    if (!ev.Field("ending")) continue;
    auto [it, fresh] = runs.try_emplace({ev.source, ev.signal}, i, i);
    if (!fresh) it->second.second = i;
  }
  // The line a source ends in, less the run of `ending_tail` lines (the
  // other ranks' lines of the message an `ending` line is rank 0's) that
  // ends it, give or take the slack line after them.
  auto last_line = [&](uint32_t source) {
    uint64_t last = st.scan.sources[source].lines;
    auto t = tails.find(source);
    if (t == tails.end()) return last;
    uint64_t at = t->second.contains(last) || last == 0 ? last : last - kEndingSlackLines;
    if (!t->second.contains(at)) return last;
    while (at > 0 && t->second.contains(at)) --at;
    return at;
  };
  // A run of field `headless` (a Python traceback's frames) must also begin
  // its source (give or take the slack line: a frame's code or caret line)
  // and hold no other line than its own between two of its lines, give or
  // take kHeadlessGapLines (a frame's code and caret lines):
  // the excerpt starts and stops inside one traceback, whose header is not
  // in the log. Frames with any other line above them (a logger's "Stack
  // (most recent call last):", the program's own lines) are no such cut.
  // A line above the first frame that a signal read (the traceback's own
  // header, "Exception in thread X:") is no part of a frame either.
  std::set<std::pair<uint32_t, uint32_t>> broken;
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> previous;
  std::map<uint32_t, uint64_t> first_other;  // source -> its first line other evidence is on
  for (const Evidence& ev : st.evs) {
    if (!ev.Field("headless") || !ev.Field("ending")) {
      first_other.try_emplace(ev.source, ev.line);
      continue;
    }
    auto [it, fresh] = previous.try_emplace({ev.source, ev.signal}, ev.line);
    // The signal's header lines ("Traceback (most recent call last):",
    // logging's "Stack (most recent call last):"): a run that holds one
    // is that header's frames.
    if (*ev.Field("headless") != "File") broken.insert({ev.source, ev.signal});
    auto other = first_other.find(ev.source);
    const bool read_above = other != first_other.end() && other->second < ev.line;
    if (fresh ? ev.line > 1 + kEndingSlackLines || read_above : ev.line > it->second + 1 + kHeadlessGapLines) {
      broken.insert({ev.source, ev.signal});
    }
    it->second = ev.line;
  }
  std::set<size_t> unended;
  for (size_t i = 0; i < st.evs.size(); ++i) {
    const Evidence& ev = st.evs[i];
    if (!ev.Field("ending")) continue;
    const auto& [first, last] = runs.at({ev.source, ev.signal});
    const Evidence& end = st.evs[last];
    // A message the program prints and then goes on from unless it was the
    // last thing it did (field `exact_ending`: dash's "<cmd>: not found")
    // has no slack: any line after it is the program going on.
    const bool headless = end.Field("headless") != nullptr;
    const uint64_t slack = end.Field("exact_ending") ? 0 : headless ? kHeadlessGapLines : kEndingSlackLines;
    const bool ends = end.source < st.scan.sources.size() && end.line + slack >= last_line(end.source) &&
                      !(headless && broken.contains({ev.source, ev.signal}));
    if (!ends || i != first) unended.insert(i);
  }
  return unended;
}

// Whether generic evidence `i` may be a fatal line: kept, its rule's
// conditions met, an exception neither caught and logged as a warning, nor a
// warning category, nor a clean end, a line of a signal the log must end in
// only where it does, and logged before the job's first termination,
// completion or interrupt.
bool MayBeFatal(const CorrelationState& st, size_t i) {
  const Evidence& ev = st.evs[i];
  return st.HasRole(ev.rule, RuleRole::kFallback) && st.ignore_reason[i].empty() && st.active[i] &&
         !st.unended.contains(i) && !ev.Field("logged_level") && !WarningCategory(ev) && !CleanEnd(st, ev) &&
         !After(st.index.first_termination, ev) && !After(st.index.first_completion, ev) &&
         !After(st.index.first_interrupt, ev);
}

// Whether evidence `a` and `b` are one line's, `b` on a traceback's header:
// that is the exception line another generic signal already read.
bool ReadByHeader(const CorrelationState& st, const Evidence& a, const Evidence& b) {
  return SameLine(a, b) && st.rs.signal(b.signal).detail_exception_line;
}

// The generic fatal lines no rank carried on from, in evidence order. A
// fatal line (initiating role) whose message goes on to a catalog rule's
// line is that line's message head (st.message_heads).
std::vector<size_t> FatalLines(CorrelationState& st) {
  LineSet claimed = ClaimedLines(st, false);
  LineSet stops = ClaimedLines(st, true);
  LineSet teardown = TeardownLines(st);
  std::set<std::pair<uint32_t, uint64_t>> summaries = SummaryOnlyLines(st);
  std::vector<size_t> lines;
  // A context line of a fallback rule (CPython's "Exception ignored in:")
  // says that the traceback after it was printed and dropped; the evidence
  // is in source-then-offset order, so it comes right before its exception.
  // Python 2's one-line report is the dropped exception itself.
  const Evidence* ignored = nullptr;
  const Evidence* dropped_line = nullptr;  // of the exception it dropped
  for (size_t i = 0; i < st.evs.size(); ++i) {
    const Evidence& ev = st.evs[i];
    if (!st.HasRole(ev.rule, RuleRole::kFallback) || !st.ignore_reason[i].empty()) continue;
    // A frame of a traceback the log does not begin and end in is that
    // traceback's line, read by its header or exception line: it is not the
    // first line after a context line ("Exception in thread X:") either.
    if (ev.Field("headless") && st.unended.contains(i)) continue;
    SignalRole role = st.rs.signal(ev.signal).role;
    if (role == SignalRole::Context) {
      // Python 2 reports the exception it dropped on that line itself
      // ("Exception TypeError: ... in <bound method X.__del__ ...> ignored",
      // field `unraisable`): the line's other signals read that exception.
      if (ev.Field("unraisable")) {
        while (!lines.empty() && SameLine(st.evs[lines.back()], ev)) lines.pop_back();
        dropped_line = &ev;
        continue;
      }
      ignored = &ev;
      continue;
    }
    // Every signal of the dropped exception's line is dropped with it.
    if (dropped_line && SameLine(*dropped_line, ev)) continue;
    if (ignored && role == SignalRole::Initiating) {
      bool dropped = ignored->source == ev.source && ignored->rank == ev.rank &&
                     ev.offset - ignored->offset <= kTracebackWindowBytes;
      // The traceback's code lines come before the exception that ends it.
      if (dropped && ev.Field("statement")) continue;
      ignored = nullptr;
      if (dropped) {
        dropped_line = &ev;
        continue;
      }
    }
    // An exception a logger recorded as a warning, with its traceback as the
    // record's exc_info, was caught: the program went on (MayBeFatal), and
    // so did a rank that made progress after it.
    if (!MayBeFatal(st, i) || SurvivedLine(st, i)) continue;
    // A symptom (an exit report) is a whole report, never the head of a message.
    const auto* line = ClaimingLine(claimed, ev, TaskReport(st, i) || role != SignalRole::Initiating);
    if (line && (line->second == ev.line || !summaries.contains(*line))) {
      // A line of the traceback that ends on the claimed line (Ray's
      // "RayTaskError(X): ray::f() (pid=...)" over its worker's frames) is
      // a wrapper of that exception, not the head of its message.
      const std::string* tb = ev.Field("in_traceback_of");
      const bool wraps = tb && *tb == StrCat(line->second);
      if (line->second != ev.line && role == SignalRole::Initiating && !wraps) {
        st.message_heads.try_emplace(*line, i);
      }
      continue;
    }
    if (stops.contains({ev.source, ev.line}) || SupersededStatement(st, i) || AtTeardown(teardown, ev)) {
      continue;
    }
    if (!lines.empty() && SameLine(st.evs[lines.back()], ev)) {
      // Two generic signals on one line (a Python exception that is also
      // NCCL's bare result) are one fatal line: the one that says more, and
      // rather the line's own signal than its traceback's header, unless the
      // header's read holds every field of the line's own and more (the fold
      // of its traceback, which the line's own read lacks when the class's
      // name holds none of the words the scanner looks for at a traceback's
      // end: concurrent.futures' BrokenProcessPool, Dask's KilledWorker). A
      // fatal line (initiating role) is not taken for an exit status read on
      // the same line, though its own record holds no field: a message taken
      // from below its header (Snakemake's "Command ... returned non-zero
      // exit status 125.") is what failed, and the status is read into it
      // (AddFallbackCluster).
      const Evidence& last = st.evs[lines.back()];
      const bool last_fatal = st.rs.signal(last.signal).role == SignalRole::Initiating;
      const bool ev_fatal = role == SignalRole::Initiating;
      // A traceback cut in its frames whose evidence is the record that
      // printed it (the line above its header) says less than a signal of
      // that record's own, fatal or a symptom (Hydra's "Error executing job
      // with overrides: [...]", whose exception is the traceback's): the
      // record's read is the line's. Taken for the line, the cut read would
      // leave it only where nothing else in the log is a failure.
      if ((last_fatal || ev_fatal) && !last.Field("cut") != !ev.Field("cut")) {
        if (last.Field("cut")) lines.back() = i;
        continue;
      }
      auto says_more = [](const Evidence& a, const Evidence& b) { return Holds(a, b) && !Holds(b, a); };
      if (!(last_fatal && !ev_fatal) &&
          ((ReadByHeader(st, ev, last) && !says_more(last, ev)) ||
           (ReadByHeader(st, last, ev) ? says_more(ev, last) : Holds(ev, last)))) {
        lines.back() = i;
      }
      if (!(ev_fatal && !last_fatal) &&
          (ReadByHeader(st, st.evs[lines.back()], ev) || Holds(st.evs[lines.back()], ev))) {
        continue;
      }
    }
    lines.push_back(i);
  }
  // A line that says the failed operation will be tried again reports an
  // attempt, not the end of the job: a later fatal line of its source (the
  // evidence is in source-then-offset order) is what ended it. With none
  // after it, the line stays: retries that never succeeded before the log
  // stopped.
  std::vector<size_t> kept;
  kept.reserve(lines.size());
  for (size_t k = 0; k < lines.size(); ++k) {
    const Evidence& ev = st.evs[lines[k]];
    const bool later = k + 1 < lines.size() && st.evs[lines[k + 1]].source == ev.source;
    if (later && AnnouncesRetry(ev.text)) continue;
    kept.push_back(lines[k]);
  }
  return kept;
}

// Whether root cluster `c` stands on symptoms only (a watchdog timeout, a
// closed socket): such a verdict is inferred, and a concrete fatal line
// before it is the better lead.
bool SymptomOnly(const CorrelationState& st, const Cluster& c) {
  return !c.initiating && !IsNotice(st, c);
}

// Whether every initiating line of root cluster `c` is a connection's end
// reporting its remote peer (an IB completion error from peer X, "remote
// process exited", a socket closed by X): what the other end's crash looks
// like from here. A concrete fatal line before all of them is the better lead.
bool PeerReported(const CorrelationState& st, const Cluster& c) {
  bool any = false;
  for (size_t i : c.ev) {
    const Evidence& ev = st.evs[i];
    if (st.rs.signal(ev.signal).role != SignalRole::Initiating) continue;
    if (!ev.Field("peer")) return false;
    any = true;
  }
  return any;
}

// Whether `host` names the loopback interface: localhost, ::1, or an
// address of 127/8, plain or mapped into IPv6.
bool Loopback(std::string_view host) {
  if (host == "localhost" || host == "::1") return true;
  if (host.starts_with("::ffff:")) host.remove_prefix(7);
  return host.starts_with("127.");
}

// Whether the connection line `ev` reports stayed on one host: both of its
// ends (field local_end beside peer) are one host by name or address, or
// both are loopback. No network carried such a connection.
bool WithinOneHost(const Evidence& ev) {
  const std::string* local = ev.Field("local_end");
  const std::string* peer = ev.Field("peer");
  if (!local || !peer) return false;
  if (Loopback(*local) && Loopback(*peer)) return true;
  std::string a = NormalizeHost(*local), b = NormalizeHost(*peer);
  return a.empty() || b.empty() ? *local == *peer : a == b;
}

// Whether root cluster `c` blames only connections that stayed on one host:
// some line names both ends of its connection, and every line that names a
// peer names one on its own host. What ended them is a process there (the
// store's server, a peer rank), never the network between hosts.
bool OneHostOnly(const CorrelationState& st, const Cluster& c) {
  bool any = false;
  for (size_t i : c.ev) {
    const Evidence& ev = st.evs[i];
    if (!ev.Field("peer")) continue;
    if (!WithinOneHost(ev)) return false;
    any = true;
  }
  return any;
}

// How long after a rank's fatal line the others' symptoms may still be its
// doing: the slowest collective timeout (PyTorch's 30 min default for NCCL,
// raised by some trainers) with margin.
constexpr int64_t kFatalReachUs = 60 * 60 * kSecond;

// Whether the symptoms of cluster `c` may be the fatal line `f`'s doing:
// every line logged after it, and within its reach.
bool AfterFatal(const CorrelationState& st, const Cluster& c, const Evidence& f) {
  return std::all_of(c.ev.begin(), c.ev.end(), [&](size_t i) {
    const Evidence& ev = st.evs[i];
    bool reach =
        f.time_us == kNoTime || ev.time_us == kNoTime || ev.time_us - f.time_us <= kFatalReachUs;
    return Before(f, ev) && reach;
  });
}

// The cluster of rule `rule` with a line in `source`, else -1.
int ClusterInSource(const CorrelationState& st, uint32_t rule, uint32_t source) {
  for (size_t k = 0; k < st.clusters.size(); ++k) {
    const Cluster& c = st.clusters[k];
    if (c.rule != rule) continue;
    for (size_t i : c.ev) {
      if (st.evs[i].source == source) return static_cast<int>(k);
    }
  }
  return -1;
}

// A catalog rule's line inside an exception's traceback (a frame in
// torch/serialization.py's load: a checkpoint that does not load) says what
// that exception is: the exception line joins that rule's cluster as its
// initiating evidence, and leaves `lines`. A context line of a rule whose
// failure the file shows (the _worker_loop frame of the "Original
// Traceback" that PyTorch's DataLoader re-raises as "Caught X in DataLoader
// worker process N") puts the exception first: the rule's own line is that
// failure seen from outside, its original exception the initiating line.
void AdoptExceptions(CorrelationState& st, std::vector<size_t>& lines) {
  struct Frame {
    int cluster;
    bool original;  // the exception leads the cluster
  };
  std::map<std::pair<uint32_t, std::string>, Frame> frames;  // (source, exception line) ->
  for (size_t k = 0; k < st.clusters.size(); ++k) {
    for (size_t i : st.clusters[k].ev) {
      if (const std::string* tb = st.evs[i].Field("in_traceback_of")) {
        frames.emplace(std::make_pair(st.evs[i].source, *tb), Frame{static_cast<int>(k), false});
      }
    }
  }
  for (size_t i = 0; i < st.evs.size(); ++i) {
    const Evidence& ev = st.evs[i];
    const std::string* tb = ev.Field("in_traceback_of");
    if (!tb || !st.ignore_reason[i].empty() || st.HasRole(ev.rule, RuleRole::kFallback) ||
        st.rs.signal(ev.signal).role != SignalRole::Context) {
      continue;
    }
    int k = ClusterInSource(st, ev.rule, ev.source);
    if (k >= 0) frames.emplace(std::make_pair(ev.source, *tb), Frame{k, true});
  }
  if (frames.empty()) return;
  bool became_initiating = false;
  std::erase_if(lines, [&](size_t i) {
    const Evidence& ev = st.evs[i];
    if (st.rs.signal(ev.signal).role != SignalRole::Initiating) return false;
    auto it = frames.find({ev.source, StrCat(ev.line)});
    if (it == frames.end()) return false;
    Cluster& c = st.clusters[it->second.cluster];
    c.ev.insert(it->second.original ? c.ev.begin() : c.ev.end(), i);
    became_initiating |= !c.initiating;
    c.initiating = true;
    return true;
  });
  // A cluster of frames (symptom role) that took its exception is now a
  // seen failure: the causes are linked again, so that it explains what
  // its rule explains (a serializer's frames and the write error chained
  // after the exception raised in them).
  if (became_initiating) LinkCauses(st);
}

// Whether root cluster `c`'s rule names a role:fallback rule in its
// conditions' requires_rule: it is a failure only beside a generic fatal
// line (vLLM's "Engine core proc ... died unexpectedly" after the error the
// engine raised, an HDF5 diagnostic stack over the exception it ends in).
bool RequiresFatalLine(const CorrelationState& st, const Cluster& c) {
  const fb::Conditions* cond = st.rs.rule(c.rule)->conditions();
  if (!cond || !cond->requires_rule() || cond->requires_rule()->size() == 0) return false;
  int r = st.rs.FindRule(cond->requires_rule()->string_view());
  return r >= 0 && st.HasRole(static_cast<uint32_t>(r), RuleRole::kFallback);
}

// The first generic fatal line (initiating role) in the file of evidence
// `head`, on its rank, that says what was raised; else -1. Whether the
// line's message goes on to a catalog rule's line does not matter here.
int FirstFatalLineOf(const CorrelationState& st, const Evidence& head) {
  for (size_t i = 0; i < st.evs.size(); ++i) {
    const Evidence& ev = st.evs[i];
    if (ev.source != head.source || ev.rank != head.rank || !MayBeFatal(st, i) ||
        st.rs.signal(ev.signal).role != SignalRole::Initiating || SupersededStatement(st, i)) {
      continue;
    }
    return static_cast<int>(i);
  }
  return -1;
}

// The fatal line such a rule requires is the failure it reports: the first
// one in the file of the cluster's first line, on its rank, joins the
// cluster as initiating evidence (in file order) and leaves `lines`.
void JoinRequiredFatalLines(CorrelationState& st, std::vector<size_t>& lines) {
  for (Cluster& c : st.clusters) {
    if (c.parent >= 0 || c.survived || c.ev.empty() || !RequiresFatalLine(st, c)) continue;
    int f = FirstFatalLineOf(st, st.evs[c.ev.front()]);
    if (f < 0) continue;
    size_t i = static_cast<size_t>(f);
    std::erase(lines, i);
    auto at = std::find_if(c.ev.begin(), c.ev.end(), [&](size_t j) {
      return st.evs[j].source == st.evs[i].source && st.evs[j].offset > st.evs[i].offset;
    });
    c.ev.insert(at, i);
    c.initiating = true;
  }
}

// The exit status of another generic signal on the line of evidence `i`
// when that line states none (CPython's "CalledProcessError: Command '...'
// returned non-zero exit status -11." is an exception, and its status is
// what the command died of): its fields join the line's.
void TakeExitStatusOfLine(CorrelationState& st, size_t i) {
  if (!ExitMeaning(st.evs[i]).empty()) return;
  auto j = FindOnLine(st, i, [](const Evidence& e) { return !ExitMeaning(e).empty(); });
  if (!j) return;
  for (const auto& [k, v] : st.evs[*j].fields) {
    if (!st.evs[i].Field(k)) st.evs[i].fields.emplace_back(k, v);
  }
}

// Two generic signals of one line are one report: srun's `task 3:
// Segmentation fault (core dumped)` is a crash (one signal) of task 3 (the
// other), so the rankless one takes the rank and host the other names.
void ShareLineAttribution(CorrelationState& st, const std::vector<size_t>& lines) {
  for (size_t k = 1; k < lines.size(); ++k) {
    Evidence& a = st.evs[lines[k - 1]];
    Evidence& b = st.evs[lines[k]];
    if (!SameLine(a, b) || (a.rank < 0) == (b.rank < 0)) continue;
    Evidence& to = a.rank < 0 ? a : b;
    const Evidence& from = a.rank < 0 ? b : a;
    to.rank = from.rank;
    if (to.host.empty()) to.host = from.host;
  }
}

// A rankless fatal line (a batch output's traceback) is the error of the
// one task srun reports exiting with an error status after it in its file
// (`srun: error: node17: task 3: Exited with exit code 1`): it takes that
// task's rank and host. Several such tasks leave it rankless.
void TakeRankOfTaskReport(CorrelationState& st, size_t f) {
  Evidence& fatal = st.evs[f];
  if (fatal.rank >= 0) return;
  const Evidence* only = nullptr;
  for (size_t i = 0; i < st.evs.size(); ++i) {
    const Evidence& ev = st.evs[i];
    if (ev.source != fatal.source || ev.offset <= fatal.offset || ev.rank < 0 || !ev.Field("exitcode") ||
        !TaskReport(st, i)) {
      continue;
    }
    if (only && only->rank != ev.rank) return;
    only = &ev;
  }
  if (!only) return;
  fatal.rank = only->rank;
  if (fatal.host.empty()) fatal.host = only->host;
}

// A launcher's report whose header names no process, with the failed
// process on a line of its own just below (Open MPI's "mpirun detected that
// one or more processes exited with non-zero status, ..." and, two lines
// on, "  Process name: [[J,1],R]", a block rank its "Exit code:" line
// carries too): the header is that rank's report. Only a report's own
// lines count: a symptom header, and a rank stated as a block of the same
// rule within the lines a message may run on.
void TakeRankOfReportBlock(CorrelationState& st, size_t f) {
  Evidence& head = st.evs[f];
  if (head.rank >= 0 || st.rs.signal(head.signal).role != SignalRole::Symptom) return;
  for (size_t i = f + 1; i < st.evs.size(); ++i) {
    const Evidence& ev = st.evs[i];
    if (ev.source != head.source || ev.line > head.line + kMessageLines) break;
    if (ev.line == head.line || ev.rule != head.rule || ev.rank < 0 || !ev.Field("block_rank")) continue;
    head.rank = ev.rank;
    if (head.host.empty()) head.host = ev.host;
    return;
  }
}

// Whether fatal line `ev` belongs to the failure whose first line is `f`:
// the same rank's, or, when `f` names no rank (a batch output's
// traceback), a line of its file naming no rank either, or a rank that
// died of the same signal (srun's report of the task that crashed), or the
// message `f` goes on to when it names an exception but states none (C++'s
// terminate report, whose "what():" line may end in the rank the program
// put in its message: "... at line: 86 rank: 0").
bool SameFailure(const Evidence& f, const Evidence& ev) {
  if (f.rank >= 0) return ev.rank == f.rank;
  if (ev.source != f.source) return false;
  if (ev.rank < 0) return true;
  if (f.Field("exception") && !f.Field("message") && ev.Field("message") && !ev.Field("exception") &&
      ev.line > f.line && ev.line <= f.line + kMessageLines) {
    return true;
  }
  std::string sig = ExitSignal(f);
  return !sig.empty() && ExitSignal(ev) == sig;
}

// C++'s terminate report names the exception's type ("terminate called
// after throwing an instance of 'std::bad_alloc'") and gives its message on
// the next line ("  what():  std::bad_alloc"): when the failure's first line
// names an exception but states no message, and a line of its file within
// its message's reach states one and names no exception of its own, that
// line leads: it says what failed. So does an entry of a summary the
// exception's message only counts (field `root_error`: TensorFlow's
// "  (0) Unknown: Failed to get convolution algorithm ..." under
// "UnknownError: 2 root error(s) found."), whatever message the exception
// line states. `lines` is in logging order, of one failure.
void MessageFirst(const CorrelationState& st, std::vector<size_t>& lines) {
  if (lines.size() < 2) return;
  const Evidence& head = st.evs[lines.front()];
  if (!head.Field("exception")) return;
  const bool head_states = head.Field("message") != nullptr;
  for (size_t k = 1; k < lines.size(); ++k) {
    const Evidence& ev = st.evs[lines[k]];
    if (ev.source != head.source || ev.line > head.line + kMessageLines) return;
    if (ev.line > head.line && !ev.Field("exception") &&
        (ev.Field("root_error") || (!head_states && ev.Field("message")))) {
      std::rotate(lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(k),
                  lines.begin() + static_cast<std::ptrdiff_t>(k) + 1);
      return;
    }
  }
}

// Whether every line of every root cluster of `weak` is a launcher's report
// of a task (srun's "task 3: Killed") logged in the file of, and after, its
// report of another task's error exit (`lines` holds "task 5: Exited with
// exit code 1"): srun ends the rest of a step once one task fails, so those
// kills are its doing, and the task that failed first is the lead, not them.
bool KilledAfterTaskExit(const CorrelationState& st, const std::vector<int>& weak, const std::vector<size_t>& lines) {
  std::map<uint32_t, uint64_t> first_exit;  // source -> offset of its first task exit report
  for (size_t j : lines) {
    const Evidence& x = st.evs[j];
    if (!x.Field("exitcode") || !TaskReport(st, j)) continue;
    auto [it, fresh] = first_exit.try_emplace(x.source, x.offset);
    if (!fresh) it->second = std::min(it->second, x.offset);
  }
  if (first_exit.empty()) return false;
  return std::all_of(weak.begin(), weak.end(), [&](int w) {
    const Cluster& c = st.clusters[w];
    return !c.ev.empty() && std::all_of(c.ev.begin(), c.ev.end(), [&](size_t i) {
      const Evidence& ev = st.evs[i];
      auto it = first_exit.find(ev.source);
      return it != first_exit.end() && it->second < ev.offset && TaskReport(st, i);
    });
  });
}

// A version as numbers ("2.19.3" -> 2, 19, 3), for "older".
std::vector<int> VersionNumbers(const std::string& v) {
  std::vector<int> out;
  int n = 0;
  for (char c : v) {
    if (c >= '0' && c <= '9') {
      n = std::min(n * 10 + (c - '0'), 1'000'000);
    } else {
      out.push_back(n);
      n = 0;
    }
  }
  out.push_back(n);
  return out;
}

// The host a line is on: its own, its rank's, or that of its file's other
// lines (a node's log whose NCCL lines print `gpu02:3001:3001`), as the
// incident built from it would say.
std::string HostOfLine(const CorrelationState& st, const Evidence& ev) {
  if (!ev.host.empty()) return ev.host;
  if (ev.rank >= 0) {
    if (std::string h = st.HostForRank(ev.rank); !h.empty()) return h;
  }
  return ev.source < st.index.sources.size() ? st.index.sources[ev.source].own_host : std::string();
}

// The hosts whose NCCL version is the odd one out, and what the report says
// of it; no hosts when the job's processes state one version, or more than
// two, or a host states two (another job's lines, a second libnccl).
struct OddVersion {
  std::set<std::string> hosts;
  std::string note;
};

// NCCL refuses a communicator whose members run different versions, on
// every rank at once (init.cc's "Mismatched NCCL version detected", then
// ncclInvalidUsage in each rank's traceback), so the first fatal line by
// time is any host's. The versions the processes state (field
// `nccl_version`: NCCL's banner, PyTorch's NCCL errors and start-up log)
// name the host that went wrong: the one whose version fewer hosts run, or,
// when as many run each (two hosts), the older one -- the host to upgrade.
OddVersion OddNcclVersion(const CorrelationState& st) {
  std::map<std::string, std::string> version_of;  // host -> version; "" when it states two
  for (const Evidence& ev : st.evs) {
    const std::string* v = ev.Field("nccl_version");
    if (!v || v->empty()) continue;
    std::string host = NormalizeHost(HostOfLine(st, ev));
    if (host.empty()) continue;
    auto [it, added] = version_of.emplace(host, *v);
    if (!added && it->second != *v) it->second.clear();
  }
  std::map<std::string, std::set<std::string>> hosts_of;  // version -> hosts
  for (const auto& [host, v] : version_of) {
    if (v.empty()) return {};
    hosts_of[v].insert(host);
  }
  if (hosts_of.size() != 2) return {};
  auto a = hosts_of.begin();
  auto b = std::next(a);
  if (a->second.size() != b->second.size()) {
    if (b->second.size() < a->second.size()) std::swap(a, b);
  } else if (VersionNumbers(b->first) < VersionNumbers(a->first)) {
    std::swap(a, b);
  }
  // `a` is the odd one out.
  OddVersion odd;
  odd.hosts = a->second;
  odd.note = StrCat("The hosts run two NCCL versions, which NCCL refuses in one communicator: ", a->first, " on ",
                    StrJoin(a->second, ", "), ", ", b->first, " on ", b->second.size(), " other host(s). ", a->first,
                    a->second.size() < b->second.size() ? " is the odd one out (fewer hosts run it)"
                                                        : " is the odd one out (the older; as many hosts run each)",
                    ": install one NCCL version on every host (the same image, or the same nvidia-nccl wheel). ");
  return odd;
}

// Moves the fatal lines of the hosts whose NCCL version is the odd one out
// first (in their time order), and gives the first the note that says why.
void OddVersionFirst(CorrelationState& st, std::vector<size_t>& lines) {
  OddVersion odd = OddNcclVersion(st);
  if (odd.hosts.empty()) return;
  auto on_odd = [&](size_t i) { return odd.hosts.contains(NormalizeHost(HostOfLine(st, st.evs[i]))); };
  if (std::none_of(lines.begin(), lines.end(), on_odd)) return;
  std::stable_partition(lines.begin(), lines.end(), on_odd);
  st.evs[lines.front()].fields.emplace_back("odd_version", std::move(odd.note));
}

// The fallback cluster of `lines` (the failing rank's), appended to the
// clusters; returns its index.
int AddFallbackCluster(CorrelationState& st, const std::vector<size_t>& lines) {
  for (size_t i : lines) {
    TakeExitStatusOfLine(st, i);
    Evidence& ev = st.evs[i];
    if (std::string sig = ExitSignal(ev); !sig.empty() && !ev.Field("exit_signal")) {
      ev.fields.emplace_back("exit_signal", std::move(sig));
    }
  }
  int fc = static_cast<int>(st.clusters.size());
  Cluster& c = st.clusters.emplace_back();
  c.rule = st.evs[lines.front()].rule;
  c.layer = st.rs.rule(c.rule)->layer();
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
  return fc;
}

// Whether `ev` says its operation will be tried again and one of the cut
// tracebacks `cut` comes after it in its source: the attempt was not the
// end, the traceback is what the program raised after it.
bool RetriedBefore(const Evidence& ev, const std::vector<size_t>& cut, const CorrelationState& st) {
  return AnnouncesRetry(ev.text) && std::any_of(cut.begin(), cut.end(), [&](size_t i) {
           return st.evs[i].source == ev.source && st.evs[i].offset > ev.offset;
         });
}

// Whether a generic fatal line took the failure from the `weak` roots (the
// fallback's cluster was added): `lines` are the fatal lines, `cut` the
// tracebacks cut in their frames.
bool LeadWithFatalLine(CorrelationState& st, std::vector<size_t> lines, std::vector<size_t> cut,
                       const std::vector<int>& weak) {
  if (lines.empty() && !cut.empty() && weak.empty() &&
      std::none_of(st.clusters.begin(), st.clusters.end(), [](const Cluster& c) { return c.parent < 0; }) &&
      std::none_of(st.evs.begin(), st.evs.end(), [&](const Evidence& ev) {
        return st.HasRole(ev.rule, RuleRole::kFallback) && !ev.Field("cut") &&
               st.rs.signal(ev.signal).role != SignalRole::Context && !RetriedBefore(ev, cut, st);
      })) {
    lines = std::move(cut);
  }
  // An exception, crash or fatal line (initiating role) rather than a bare
  // exit status.
  bool any_initiating = std::any_of(lines.begin(), lines.end(), [&](size_t i) {
    return st.rs.signal(st.evs[i].signal).role == SignalRole::Initiating;
  });
  std::set<int64_t> exit_ranks;
  for (size_t i : lines) {
    if (st.evs[i].rank >= 0) exit_ranks.insert(st.evs[i].rank);
  }
  bool summary = std::any_of(st.clusters.begin(), st.clusters.end(), [&](const Cluster& c) {
    if (c.parent >= 0 || !st.HasRole(c.rule, RuleRole::kSummary)) return false;
    // A report printed on some ranks that another rank's failure stopped
    // them (Horovod's "has been shut down ... caused by an exception on
    // one of the ranks") says nothing of a rank whose exit status is
    // reported on its own: that status names the rank that went first.
    return c.ranks.empty() || exit_ranks.empty() ||
           std::any_of(exit_ranks.begin(), exit_ranks.end(), [&](int64_t r) { return c.ranks.contains(r); });
  });
  // A launcher's summary already says that a worker exited, and how: an
  // exit status adds nothing to it, only the worker's own error would. Nor
  // does an exit status outweigh a symptom a catalog rule names.
  // Kills a launcher reports after it reported a task's error exit are the
  // launcher ending the rest of the job: they do not outweigh that exit.
  if (!any_initiating && (summary || (!weak.empty() && !KilledAfterTaskExit(st, weak, lines)))) {
    return false;
  }
  ShareLineAttribution(st, lines);
  if (any_initiating) {
    std::erase_if(lines, [&](size_t i) {
      return st.rs.signal(st.evs[i].signal).role != SignalRole::Initiating;
    });
  }
  if (lines.empty()) return false;
  std::stable_sort(lines.begin(), lines.end(),
                   [&](size_t a, size_t b) { return Before(st.evs[a], st.evs[b]); });
  OddVersionFirst(st, lines);
  TakeRankOfTaskReport(st, lines.front());
  TakeRankOfReportBlock(st, lines.front());
  const Evidence& f = st.evs[lines.front()];
  // A symptom-only verdict that came first keeps the failure: the fatal
  // line after it may be its consequence. So does one long after it.
  for (int w : weak) {
    if (!AfterFatal(st, st.clusters[w], f)) return false;
  }
  std::erase_if(lines, [&](size_t i) { return !SameFailure(f, st.evs[i]); });
  MessageFirst(st, lines);
  int fc = AddFallbackCluster(st, lines);
  for (int w : weak) {
    Cluster& s = st.clusters[w];
    s.parent = fc;
    s.parent_how =
        StrCat(st.rs.rule(s.rule)->id()->str(), " is a symptom logged after the first fatal line");
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
  return true;
}

// A verdict that stands on connections that stayed on one host names no
// network fault: with no fatal line to lead, the failure is the fallback's
// (no catalog rule says why the process at the other end went away), its
// lines kept. The rule's own reference (a network partition, a rendezvous
// lost) would blame the fabric between hosts that never carried them.
void OneHostToFallback(CorrelationState& st, const std::vector<int>& weak) {
  uint32_t fallback = st.role_rules[static_cast<size_t>(RuleRole::kFallback)].front();
  for (int w : weak) {
    Cluster& c = st.clusters[w];
    if (c.parent >= 0 || !OneHostOnly(st, c)) continue;
    const Evidence* one = nullptr;
    for (size_t i : c.ev) {
      if (!one && st.evs[i].Field("peer")) one = &st.evs[i];
    }
    c.note = StrCat("Its connection had both ends on one host (", *one->Field("local_end"), " and ",
                    *one->Field("peer"),
                    "): the process at the other end closed it, not the network, and no catalog "
                    "rule says why that process ended. ");
    c.rule = fallback;
    c.layer = st.rs.rule(fallback)->layer();
  }
}

}  // namespace

void ChooseFallback(CorrelationState& st) {
  if (st.role_rules[static_cast<size_t>(RuleRole::kFallback)].empty()) return;
  st.unended = Unended(st);
  std::vector<size_t> lines = FatalLines(st);
  AdoptExceptions(st, lines);
  JoinRequiredFatalLines(st, lines);
  // A traceback cut in its frames (field `cut`: the source ends there) says
  // that the program raised, not what: it leads only a job that shows
  // nothing else, no other fatal line (not even one that was survived or
  // came at teardown: the cut traceback is then the launcher's or the
  // exit's), catalog verdict or launcher summary.
  // One printed as a person interrupted the run (Ctrl-C's "^CTraceback")
  // shows where it was stopped, not a failure.
  std::vector<size_t> cut;
  const Evidence* interrupt = st.index.first_interrupt;
  std::erase_if(lines, [&](size_t i) {
    const Evidence& ev = st.evs[i];
    if (!ev.Field("cut")) return false;
    if (!interrupt || !(SameLine(*interrupt, ev) || LoggedAfter(*interrupt, ev))) cut.push_back(i);
    return true;
  });
  std::vector<int> weak;  // symptom-only or peer-reported roots a fatal line may precede
  for (size_t k = 0; k < st.clusters.size(); ++k) {
    const Cluster& c = st.clusters[k];
    if (!Explains(st, c)) continue;
    if (!SymptomOnly(st, c) && !PeerReported(st, c)) return;
    weak.push_back(static_cast<int>(k));
  }
  if (!LeadWithFatalLine(st, std::move(lines), std::move(cut), weak)) OneHostToFallback(st, weak);
}

}  // namespace faultline::internal
