// `faultline watch` (docs/cli.md, "watch"): follow mode. Follows files,
// directories and standard input the way `tail -F` does (new files,
// rotation, truncation; .gz/.zst files read once), feeds the complete lines
// they append into push-stream sessions, re-correlates each job at a bounded
// cadence with fl_session_snapshot, and prints an incident when it forms and
// again only when it changes. Memory stays bounded over days of input: each
// job runs two overlapping sessions and drops the older once it has taken a
// window of bytes, so the reported session always holds the last half window
// to whole window of input. Built on the public C ABI only, like the rest of
// the command.
//
// Thread-safety: RunWatch runs on the calling thread and installs SIGINT and
// SIGTERM handlers for its duration; one call at a time per process.
#ifndef FAULTLINE_CLI_WATCH_H_
#define FAULTLINE_CLI_WATCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "faultline/faultline.h"

namespace faultline::cli {

struct WatchOptions {
  std::vector<std::string> paths;  // files, directories, "-" for stdin
  bool json = false;               // NDJSON events instead of text
  bool job_per_path = false;       // one job (and session) per PATH operand
  bool exit_code = false;          // exit 3 when an incident formed
  bool no_inotify = false;         // poll only
  double interval_s = 2.0;         // re-correlate at most this often
  double poll_s = 1.0;             // look at the inputs at least this often
  uint64_t window_bytes = uint64_t{256} << 20;
  // Threads, job window, clock offsets and zone for every session; the
  // callbacks are unused. clock_offsets must outlive RunWatch.
  fl_session_options session{};
};

// Follows the inputs until SIGINT or SIGTERM (or the end of standard input
// when it is the only input), prints the final report of every job and
// returns the exit status: 0, 2 when an input could not be read, 3 with
// exit_code when an incident formed (2 wins).
int RunWatch(const fl_ruleset* rs, const WatchOptions& o);

}  // namespace faultline::cli

#endif  // FAULTLINE_CLI_WATCH_H_
