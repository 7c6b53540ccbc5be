// The correlator: a matching message alone does not confirm a cause. It
// aligns host clocks, derives the job window and gates stale hardware
// evidence out, groups evidence by the rules' explains edges and layers into
// incidents (one initiating event plus collateral clusters), infers suspects
// when no initiating line exists (the rank absent from an all-rank timeout,
// the lowest collective SeqNum, the first to stop progressing), applies the
// rules' context conditions, runs the numeric detectors, and ranks the
// incidents.
//
// Thread-safety: Correlate is reentrant; the ruleset is shared read-only.
#ifndef FAULTLINE_CORRELATE_CORRELATE_H_
#define FAULTLINE_CORRELATE_CORRELATE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "correlate/action.h"
#include "correlate/diagnosis.h"
#include "evidence/evidence.h"
#include "ruleset/ruleset.h"

namespace faultline {

struct CorrelateOptions {
  int64_t job_start_us = kNoTime;  // overrides what the logs say
  int64_t job_end_us = kNoTime;
  // How the job ended, when the caller knows (job_state.cc).
  JobOutcome job;
  std::map<std::string, double> clock_offsets_s;  // user overrides, host -> s
  // Hardware/driver/kernel evidence this far outside the job window is stale.
  // Two hours: an application log that is only a fragment (the watchdog
  // timeout, 10-60 min after the fault) must not gate out the real cause;
  // replayed and archived blocks are days to months old.
  int64_t stale_tolerance_us = 7'200'000'000;
  // Evidence of one rule more than this apart starts a new cluster.
  int64_t cluster_gap_us = 3'600'000'000;  // 1 h
  // Restarts the job may use before an incident's restart becomes a stop
  // (action.h).
  RetryPolicy retry;
  // The text of the line at a byte offset of a source (ReadLineAt on its
  // file), for the record of a metric point a detector reports: the scan
  // kept the point, not the line (ScanResult::metric_points). Unset, or
  // nullopt: that record has no text.
  std::function<std::optional<std::string>(const SourceSummary& source, uint64_t offset)> line_at;
};

// Evidence times in `scan` are adjusted in place to aligned time.
Diagnosis Correlate(const Ruleset& rs, ScanResult& scan, const CorrelateOptions& opts);

}  // namespace faultline

#endif  // FAULTLINE_CORRELATE_CORRELATE_H_
