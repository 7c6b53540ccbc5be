// Several attempts of one job in one input. A job that was restarted leaves
// the logs of each run side by side: restart directories (attempt_2/,
// restart-1/, retry_3/), a launcher's or scheduler's restart lines inside
// the logs (torchelastic restarting its worker group, slurmctld requeuing
// the job: rules with role:attempt-start), and the bundles of earlier
// attempts a session was given. Correlate reads each attempt's evidence on
// its own, so one attempt's failure never passes for collateral of the next,
// keeps the last attempt's primary as the report's primary, lists the
// attempts in time order with each one's primary, and compares them: the
// same rule failing again (on the same host, at the same step) and a resume
// that fails on the checkpoint the previous attempt wrote are recurrence,
// evidence that raises the confidence.
//
// Thread-safety: plain functions; the ruleset is shared read-only.
#ifndef FAULTLINE_CORRELATE_ATTEMPTS_H_
#define FAULTLINE_CORRELATE_ATTEMPTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace faultline {

// A prior attempt's bundle: its sources are renamed "<prior bundle K>/NAME"
// (K from 1, in the order given, oldest first) before they are merged with
// the session's own, so its evidence stays its own attempt's.
std::string PriorBundleSourceName(size_t k, std::string_view name);

// Prior bundles a session accepts, and the largest bundle: bounds on what a
// history can cost (16 attempts of 64 MiB each).
inline constexpr size_t kMaxPriorBundles = 16;
inline constexpr size_t kMaxPriorBundleBytes = size_t{64} << 20;

// Attempts kept apart: past this many, the earliest are read as one
// ("attempts 1-N").
inline constexpr size_t kMaxAttempts = 32;

// The attempt a path names: its deepest component of the form
// attempt_2, attempt-2, restart2, retry_1, requeue-3 (any case), or a job
// id and a restart count (job_88231.r2, 88231_restart_2 through the
// keyword). `label` is that component.
struct PathAttempt {
  std::string label;
  int64_t number = 0;
};
std::optional<PathAttempt> AttemptOfPath(std::string_view path);

namespace internal {

// AttemptOfPath of many paths in turn: Of(path) == AttemptOfPath(path), but
// the components above a path's last are read once per run of paths in the
// same directory (a walk lists a directory's files together, and an archive
// of 20,736 files has 1,153 directories).
class SourceAttempts {
 public:
  std::optional<PathAttempt> Of(std::string_view path);

 private:
  bool have_dir_ = false;
  std::string dir_;
  std::optional<PathAttempt> dir_attempt_;
};

}  // namespace internal

}  // namespace faultline

#endif  // FAULTLINE_CORRELATE_ATTEMPTS_H_
