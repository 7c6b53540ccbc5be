// The diagnosis the correlator produces: incidents (one initiating event with
// its evidence, collateral clusters, fix, verify, missing facts), ignored
// evidence with reasons, the job window and the clock offsets used. The
// report module writes it as JSON (schema/report.schema.json) and text.
//
// Thread-safety: plain values.
#ifndef FAULTLINE_CORRELATE_DIAGNOSIS_H_
#define FAULTLINE_CORRELATE_DIAGNOSIS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "evidence/evidence.h"
#include "flightrec/dump.h"

namespace faultline {

struct Collateral {
  uint32_t rule = 0;
  uint64_t count = 0;
  std::vector<int64_t> ranks;
  std::vector<std::string> hosts;
  int64_t first_time_us = kNoTime;
  int64_t last_time_us = kNoTime;
  Evidence sample;
};

// What a platform should do about an incident (schema: incidents[].action).
// Set by the rule's declared default, changed by what the evidence shows
// (a hardware rule drains its host, a recurrence stops the job) and by the
// retry policy; `reason` and `set_by` make the call auditable.
enum class ActionKind : uint8_t { kUnknown, kRestart, kRestartExcluding, kStop };

struct Action {
  ActionKind kind = ActionKind::kUnknown;
  std::vector<std::string> exclude_hosts;  // restart_excluding: drain these
  std::vector<std::string> exclude_gpus;   // bus ids or "host:index"
  std::string reason;                      // one sentence, with the facts
  std::string set_by;                      // rule id, "recurrence", "retry-policy"
  std::string missing_fact;                // unknown: what would settle it
};

// How an incident repeats earlier attempts of the same job (filled by the
// attempts stage; all zero with a single attempt).
struct Recurrence {
  std::vector<uint32_t> attempts;  // Diagnosis::attempts indices, same rule
  uint32_t same_host = 0;          // of those, on this incident's host
  uint32_t same_step = 0;          // of those, failed at this incident's step
  bool resume_failed_on_previous_checkpoint = false;
};

struct Incident {
  uint32_t rule = 0;
  double confidence = 0;
  int64_t rank = -1;
  std::string host;
  std::string gpu;
  std::string hca;  // the InfiniBand HCA (mlx5_N) the initiating line names, when known
  int64_t time_us = kNoTime;
  bool inferred = false;
  // Every initiating line was followed by progress on its rank: the job
  // carried on, so this did not end a rank (ranked below those that did).
  bool survived = false;
  std::vector<Evidence> initiating;
  std::vector<Collateral> collateral;
  std::string fix;
  std::string verify;
  std::vector<std::string> missing_facts;
  std::string explanation;
  std::vector<Evidence> timeline;
  std::vector<int64_t> suspects;  // inferred suspect ranks
  std::string detector;           // when a numeric detector made the call
  int64_t step = -1;              // training step at failure, when known
  uint32_t attempt = 0;           // Diagnosis::attempts index
  // The NCCL Flight Recorder findings this incident rests on or that agree
  // with it (schema: incidents[].flight_recorder), the suspects' first.
  std::vector<flightrec::FrFinding> flight_recorder;
  Recurrence recurrence;
  Action action;
};

struct Ignored {
  uint32_t rule = 0;
  std::string reason;
  uint64_t count = 0;
  Evidence sample;
};

struct Expectation {
  double gpus = 0;
  double hours = 0;
  double expected_interruptions = 0;
  std::vector<std::string> basis;
};

// One attempt of the job: a restart directory (attempt_N/), a Slurm requeue,
// a torchelastic restart inside one log, a prior attempt's bundle.
struct Attempt {
  uint32_t index = 0;       // 0-based, in time order
  std::string label;        // "attempt_2", "requeue 1", "restart 3", ...
  std::string recognised;   // "directory", "slurm-requeue", "elastic-restart",
                            // "job-id", "bundle"
  int64_t start_us = kNoTime;
  int64_t end_us = kNoTime;
  int64_t primary_rule = -1;  // rule of its primary incident, -1 when none
  std::string host;           // of that incident
  int64_t rank = -1;
  int64_t step = -1;
};

// What the caller states about how the job ended (the scheduler's state,
// the launcher's exit status, whether the process was still alive when the
// logs were collected): the logs alone cannot tell a hang from a log posted
// cut. Echoed in the report (input.job).
enum class JobState : uint8_t {
  kUnknown, kCompleted, kFailed, kTimeout, kCancelled, kOom, kNodeFail, kPreempted, kRunning
};
inline const char* JobStateName(JobState s) {
  static constexpr const char* kNames[] = {"unknown", "completed", "failed",    "timeout", "cancelled",
                                           "oom",     "node_fail", "preempted", "running"};
  return kNames[static_cast<size_t>(s)];
}
struct JobOutcome {
  JobState state = JobState::kUnknown;
  bool has_exit_status = false;
  int32_t exit_status = 0;  // 0-255, or a negative signal number
  bool Stated() const { return state != JobState::kUnknown || has_exit_status; }
  // "failed, exit status 137", "running", "exit status -9": the reports' line.
  std::string Text() const {
    std::string t = state == JobState::kUnknown ? "" : JobStateName(state);
    if (has_exit_status) t += (t.empty() ? "exit status " : ", exit status ") + std::to_string(exit_status);
    return t;
  }
};

struct Diagnosis {
  JobOutcome job;  // as the caller stated it (CorrelateOptions::job)
  std::vector<Incident> incidents;
  std::vector<Attempt> attempts;  // empty or one when the job ran once
  std::vector<Ignored> ignored;
  int64_t job_start_us = kNoTime;
  int64_t job_end_us = kNoTime;
  std::map<std::string, double> clock_offsets_s;  // host -> seconds added
  std::map<std::string, std::string> clock_offset_source;  // "user", "estimated"
  uint64_t ranks = 0;
  uint64_t hosts = 0;
  Expectation expectation;
  // What these logs cannot tell, whatever the incidents (one process of a
  // multi-rank job logs step lines: no straggler can be seen).
  std::vector<std::string> limits;
  // The analysis across the job's Flight Recorder dumps (schema:
  // flight_recorder; empty without dumps), and the ranks it suspects:
  // missing at a wavefront, else members that left no dump.
  flightrec::FrAnalysis flight_recorder;
  std::vector<int64_t> flight_recorder_suspects;
};

}  // namespace faultline

#endif  // FAULTLINE_CORRELATE_DIAGNOSIS_H_
