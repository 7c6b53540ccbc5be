// Timestamps of log lines. Every format a GPU job's logs mix is recognised at
// the start of a line (after optional wrapper prefixes the caller strips):
// RFC 3339 / ISO 8601, Python logging ("2026-11-02 13:46:41,123"), glog
// ("I1102 13:46:41.123456", no year), syslog ("Nov  2 13:46:41", no year),
// kernel monotonic ("[1000001.682554]"), dmesg -T ("[Mon Nov  2 13:46:41 2026]"),
// journalctl short-precise/short-iso, and epoch seconds/ms/us.
//
// Thread-safety: all functions are pure; TimeContext is read-only input.
#ifndef FAULTLINE_TIMEPARSE_TIMEPARSE_H_
#define FAULTLINE_TIMEPARSE_TIMEPARSE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace faultline {

// Provenance of an evidence timestamp, as the report schema names it.
enum class TimeSource : uint8_t {
  kNone = 0,
  kParsed = 1,
  kInherited = 2,
  kInferredYear = 3,
  kMonotonicAnchored = 4,
};
const char* TimeSourceName(TimeSource s);

// Proleptic Gregorian calendar arithmetic (Howard Hinnant's civil-day
// algorithms). DaysFromCivil gives days since 1970-01-01; days past a month's
// end roll over (29 February of a common year is 1 March, as timegm makes it).
struct CivilDate {
  int64_t year;
  int month;
  int day;
};
int64_t DaysFromCivil(int64_t y, int m, int d);
CivilDate CivilFromDays(int64_t days);
// The UTC year of a Unix time in seconds, as gmtime_r gives it (1970 where
// gmtime_r cannot say). Read from the day count for 1970-9999: gmtime_r was
// ~300 instructions a call, once per file of a many-file archive.
int UtcYear(int64_t unix_s);

enum class TimeFormat : uint8_t {
  kUnknown = 0,
  kIso8601,        // 2026-11-02T13:46:41.123Z, 2026-11-02 13:46:41+00:00
  kPythonLogging,  // 2026-11-02 13:46:41,123
  kGlog,           // I1102 13:46:41.123456  (no year)
  kSyslog,         // Nov  2 13:46:41 (no year)
  kKernelMonotonic,  // [1000001.682554]
  kDmesgCtime,     // [Mon Nov  2 13:46:41 2026]
  kEpoch,          // 1762091201.123 (seconds, ms or us by magnitude)
};

struct TimeContext {
  int default_year = 1970;      // for formats without a year
  int64_t tz_offset_s = 0;      // zone of naive timestamps, seconds east of UTC
};

struct ParsedTime {
  TimeFormat format = TimeFormat::kUnknown;
  // Wall time in microseconds since the Unix epoch, UTC. Unset for pure kernel
  // monotonic stamps.
  std::optional<int64_t> wall_us;
  // Seconds since boot, for kernel monotonic stamps (also when a syslog line
  // carries both: "Nov  2 13:46:41 node017 kernel: [1000001.682554] ...").
  std::optional<double> monotonic_s;
  bool year_inferred = false;   // the format had no year; default_year used
  // dmesg -H / --reltime delta "[  +0.000316]": seconds since the previous
  // record. Set only for such lines (format kKernelMonotonic, no wall_us).
  std::optional<double> delta_s;
  size_t end = 0;               // byte just past the timestamp in the line
};

// Parses the timestamp at the start of `line` (leading spaces allowed). When a
// collector's stamp stands before the application's own, the first one wins.
//
// Details (timeparse.cc has the grammar of each recogniser):
// - Naive local times (Python logging, glog, syslog, dmesg -T, naive ISO) are
//   converted with ctx.tz_offset_s; epoch numbers and zoned ISO are absolute.
// - Fractions of any length up to 18 digits are read and truncated to µs.
// - A syslog or ISO header followed within 128 bytes by "kernel: [secs.frac]"
//   sets both wall_us and monotonic_s.
// - Also recognised: "[2026-11-02 13:46:41,123]" (DeepSpeed), PyTorch c10
//   "[E1102 13:46:41.123456 ..." (end stops after the clock), vLLM
//   "INFO 11-02 13:46:41" (kPythonLogging, year inferred), glog with year
//   "I20261102 ...", syslog priority "<13>"/"<34>1 ", journalctl short-full
//   "Mon 2026-11-02 13:46:41 UTC", Go log "2026/11/02 13:46:41" (kIso8601),
//   and "[1762091201.123]" (kEpoch: no kernel is up for 30 years).
// - dmesg -H "[Nov 2 13:46]" / "[Nov12 13:46]": kDmesgCtime, minute
//   precision, year inferred. dmesg -H deltas "[  +0.000316]":
//   kKernelMonotonic with neither wall_us nor monotonic_s, and delta_s set
//   (see ParseDmesgDelta); the scanner adds the deltas up from the last
//   "[Nov 2 13:46]" line.
// - Bare numbers count as epochs only within years [2000, 2100) and when
//   followed by a space, punctuation or the end ("3: hello" is rejected).
// - Year-less Feb 29 is accepted in any default_year (rolls to Mar 1).
// - Never allocates; reads at most a bounded prefix of `line`; more than 256
//   bytes of leading whitespace yields nullopt.
std::optional<ParsedTime> ParseLineTime(std::string_view line,
                                        const TimeContext& ctx);

// What ParseLineTime gives a line that opens with glog's stamp as nearly
// every line prints it ("I1102 13:46:41.123456", then the end, a space or
// a tab), read at its fixed offsets with no other reader tried first; or
// nullopt, and then ParseLineTime may still read the line. The stamp after
// a torchrun line's launcher prefix is read so.
std::optional<ParsedTime> ParseShortGlogTime(std::string_view line, const TimeContext& ctx);

// Whether `line` may hold a time ParseLineTime accepts at any of its
// positions: false only when ParseLineTime(line.substr(k)) is nullopt for
// every k, so a caller that tries several starts (after a prefix, a '[', a
// '\r') may skip them all. Every accepted stamp holds a clock, two digits,
// ':' and two digits followed by ':' or ']' (ISO, Python logging, glog,
// c10, syslog, ctime, vLLM, Fabric Manager: "hh:mm:ss"; dmesg -H
// "[Nov 2 13:46]"), a fraction "<digit>.<digit>" (kernel "[secs.frac]",
// "[epoch.frac]", dmesg -H deltas "[  +0.000316]"), or a run of nine
// digits (a bare epoch: 946684800, the year 2000, has nine). One find of
// ':' and one of '.', and every ninth byte for the digit runs: ~2 k
// instructions of ParseLineTime's starts saved on a line of text with none.
bool MayHoldLineTime(std::string_view line);
// Finds a kernel monotonic stamp "[ secs.usecs]" anywhere in the first 128
// bytes of `line` (e.g. after a syslog header).
std::optional<double> FindMonotonic(std::string_view line);

// Parses an RFC 3339 / ISO 8601 string (whole string) to microseconds UTC.
// Naive times use ctx.tz_offset_s.
// Surrounding whitespace is ignored; a date alone ("2026-11-02") and a time
// without seconds ("2026-11-02T13:46Z") are accepted here but not at a line
// start.
std::optional<int64_t> ParseIso8601(std::string_view s, const TimeContext& ctx);

// Parses a JSON time field value: a number (epoch s, ms, us or ns chosen by
// magnitude) or an ISO string.
std::optional<int64_t> ParseEpochNumber(double v);

// Formats microseconds UTC as RFC 3339 with microseconds: 2026-11-02T13:46:41.123456Z
std::string FormatRfc3339(int64_t us);

// Parses a zone given as "UTC", "Z", "+05:30", "-0800" to seconds east of UTC.
// Also "+05", "UTC+05:30", "GMT-8", UTC aliases ("Etc/UTC", "Zulu", ...) and
// POSIX "Etc/GMT+8" (= -08:00). Regional names ("Europe/Berlin", "PST") need
// the tz database and DST rules, which faultline does not carry: nullopt.
std::optional<int64_t> ParseTzOffset(std::string_view tz);

// Parses a `dmesg -H` / `--reltime` delta "[  +0.000316]" (or "[-1.5]") at
// the start of `line` (leading whitespace allowed) and returns it in seconds.
// ParseLineTime recognises these lines but cannot date them on its own: the
// delta is relative to the previous record, so a caller that wants times
// accumulates deltas from the last "[Nov 2 13:46]" line itself.
std::optional<double> ParseDmesgDelta(std::string_view line);

}  // namespace faultline

#endif  // FAULTLINE_TIMEPARSE_TIMEPARSE_H_
