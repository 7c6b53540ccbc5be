// Parsers of the CLI's option values that are more than a number or a name,
// kept out of main.cc so a fuzzer (tests/fuzz/fuzz_timeparse) calls exactly
// what the command line calls. Times (--job-start/--job-end) go through the
// public fl_time_parse and zones (--tz) through the library's session
// options, so only what the CLI parses itself lives here.
//
// Thread-safety: pure functions.
#ifndef FAULTLINE_CLI_ARGS_H_
#define FAULTLINE_CLI_ARGS_H_

#include <cstdint>
#include <string>

namespace faultline::cli {

// --clock-offset HOST=SECONDS: the host is everything before the last '=',
// the seconds a strtod() number that fills the rest ("node017=-42.5"),
// finite and within +-kMaxClockOffsetSeconds (what fl_session_new accepts).
// Returns false (outputs untouched) for anything else.
inline constexpr double kMaxClockOffsetSeconds = 1e9;
bool ParseClockOffset(const char* v, std::string* host, double* seconds);

// watch --interval/--poll: seconds as a strtod() number with an optional
// unit suffix ms, s, m or h ("250ms", "2", "1.5m"), finite and within
// [lo, hi] seconds. Returns false (output untouched) for anything else.
bool ParseDuration(const char* v, double lo, double hi, double* seconds);

// watch --window: bytes as a whole number with an optional binary suffix
// K, M or G (KiB, MiB, GiB; "64M", "1048576"), within [lo, hi]. Returns
// false (output untouched) for anything else.
bool ParseSize(const char* v, uint64_t lo, uint64_t hi, uint64_t* bytes);
// --max-source-bytes / --max-decompressed-bytes: a whole number of bytes,
// optionally followed by K, M, G or T (powers of 1024, "KiB" and "k" too),
// at least 1 and at most 2^62. Returns false (output untouched) otherwise.
bool ParseByteSize(const char* v, uint64_t* bytes);

// --time-budget: seconds (strtod), finite, > 0 and at most 1e9.
bool ParseSeconds(const char* v, double* seconds);

// --job-state: completed, failed, timeout, cancelled, oom, node_fail,
// preempted, running, or Slurm's State names (COMPLETED, FAILED, TIMEOUT,
// CANCELLED, OUT_OF_MEMORY, NODE_FAIL, PREEMPTED, RUNNING; sacct's
// "CANCELLED by UID" too), to an FL_JOB_* value. Returns false (output
// untouched) for anything else.
bool ParseJobState(const char* v, int32_t* state);

}  // namespace faultline::cli

#endif  // FAULTLINE_CLI_ARGS_H_
