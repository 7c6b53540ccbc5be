// Every time parser on arbitrary text, and the parsers behind the CLI's
// --job-start/--job-end (fl_time_parse), --tz (ParseTzOffset, what the
// session options go through), --clock-offset (cli::ParseClockOffset) and
// watch's --interval/--poll/--window (cli::ParseDuration, cli::ParseSize).
// The first bytes pick the context (default year, zone); the rest is one
// line. Oracles beyond no crash/UB:
//  - ParseLineTime: `end` within the line and past at least one byte; the
//    same format, end, monotonic and delta under any zone; a zone of +X
//    moves a naive wall time by exactly -X (zoned and epoch times do not
//    move); monotonic and delta finite; year_inferred never for epoch
//    numbers or kernel stamps.
//  - every wall time (ParseLineTime, ParseIso8601, fl_time_parse) formats
//    with FormatRfc3339 to a string ParseIso8601 reads back to the same
//    microsecond.
//  - ParseTzOffset: within +-24 h.
//  - FindMonotonic, ParseDmesgDelta, ParseEpochNumber: finite results.
//  - ParseLineTime and FindMonotonic give what their general paths give
//    (internal::ParseLineTimeGeneral, internal::FindMonotonicBytewise).
//  - --clock-offset: an accepted value splits at its last '=' into a
//    non-empty host and a finite number of seconds.
#include <faultline/faultline.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "cli/args.h"
#include "fuzz_util.h"
#include "timeparse/timeparse.h"
#include "timeparse/timeparse_internal.h"

using namespace faultline;

namespace {

void CheckRoundTrip(int64_t us, const char* who) {
  std::string s = FormatRfc3339(us);
  TimeContext utc;
  auto back = ParseIso8601(s, utc);
  FL_FUZZ_CHECK(back.has_value(), std::string(who) + ": formatted time does not parse: " + s);
  FL_FUZZ_CHECK(*back == us, std::string(who) + ": round trip changed the time: " + s);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Choices c(data, size);
  TimeContext ctx;
  ctx.default_year = 1970 + c.Byte() % 131;                      // 1970..2100
  ctx.tz_offset_s = (static_cast<int64_t>(c.U16() % 1681) - 840) * 60;  // -14:00..+14:00
  const std::string line(c.Rest());  // NUL-terminated copy for the C parsers

  auto t = ParseLineTime(line, ctx);
  {
    const auto g = internal::ParseLineTimeGeneral(line, ctx);
    FL_FUZZ_CHECK(t.has_value() == g.has_value(), "the shortcut and the general path disagree on a time");
    if (t) {
      FL_FUZZ_CHECK(t->format == g->format && t->wall_us == g->wall_us && t->monotonic_s == g->monotonic_s &&
                        t->delta_s == g->delta_s && t->year_inferred == g->year_inferred && t->end == g->end,
                    "the shortcut and the general path read a time differently");
    }
    FL_FUZZ_CHECK(FindMonotonic(line) == internal::FindMonotonicBytewise(line),
                  "FindMonotonic and its bytewise search disagree");
  }
  TimeContext utc;
  utc.default_year = ctx.default_year;
  auto t0 = ParseLineTime(line, utc);
  FL_FUZZ_CHECK(t.has_value() == t0.has_value(), "the zone changed whether a line has a time");
  if (t) {
    FL_FUZZ_CHECK(t->format != TimeFormat::kUnknown, "a time of unknown format");
    FL_FUZZ_CHECK(t->end > 0 && t->end <= line.size(), "end outside the line");
    FL_FUZZ_CHECK(t->format == t0->format && t->end == t0->end, "the zone changed the format or end");
    FL_FUZZ_CHECK(t->monotonic_s == t0->monotonic_s && t->delta_s == t0->delta_s,
                  "the zone changed a kernel stamp");
    FL_FUZZ_CHECK(t->wall_us.has_value() == t0->wall_us.has_value(), "the zone changed whether a wall time exists");
    if (t->monotonic_s) FL_FUZZ_CHECK(std::isfinite(*t->monotonic_s), "monotonic not finite");
    if (t->delta_s) FL_FUZZ_CHECK(std::isfinite(*t->delta_s), "delta not finite");
    if (t->year_inferred) {
      FL_FUZZ_CHECK(t->format != TimeFormat::kEpoch && t->format != TimeFormat::kKernelMonotonic,
                    "year inferred for a format without a calendar date");
    }
    if (t->wall_us) {
      const int64_t shift = *t0->wall_us - *t->wall_us;
      FL_FUZZ_CHECK(shift == 0 || shift == ctx.tz_offset_s * 1'000'000,
                    "a zone moved a wall time by something other than its offset");
      CheckRoundTrip(*t->wall_us, "ParseLineTime");
    }
  }
  if (auto m = FindMonotonic(line)) FL_FUZZ_CHECK(std::isfinite(*m), "FindMonotonic not finite");
  if (auto d = ParseDmesgDelta(line)) FL_FUZZ_CHECK(std::isfinite(*d), "ParseDmesgDelta not finite");
  if (auto iso = ParseIso8601(line, ctx)) CheckRoundTrip(*iso, "ParseIso8601");
  if (size >= 8) {
    double v;
    std::memcpy(&v, data, sizeof v);
    if (auto e = ParseEpochNumber(v)) CheckRoundTrip(*e, "ParseEpochNumber");
  }
  if (auto tz = ParseTzOffset(line)) {
    FL_FUZZ_CHECK(*tz >= -24 * 3600 && *tz <= 24 * 3600, "zone offset beyond a day");
  }

  // --job-start / --job-end.
  int64_t us = 0;
  if (std::strlen(line.c_str()) == line.size() && fl_time_parse(line.c_str(), &us) == FL_OK) {
    CheckRoundTrip(us, "fl_time_parse");
  }
  // --clock-offset, and what the session makes of it.
  std::string host;
  double secs = 0;
  if (cli::ParseClockOffset(line.c_str(), &host, &secs)) {
    FL_FUZZ_CHECK(!host.empty(), "clock offset without a host");
    FL_FUZZ_CHECK(line.compare(0, host.size(), host) == 0 && line[host.size()] == '=',
                  "host is not the text before '='");
    FL_FUZZ_CHECK(std::strchr(line.c_str() + host.size() + 1, '=') == nullptr, "not the last '='");
    FL_FUZZ_CHECK(std::isfinite(secs), "a clock offset that is not a finite number");
  }
  // watch --interval/--poll and --window.
  double dur = -1;
  if (cli::ParseDuration(line.c_str(), 0.01, 3600, &dur)) {
    FL_FUZZ_CHECK(std::isfinite(dur) && dur >= 0.01 && dur <= 3600, "a duration out of its range");
  }
  uint64_t bytes = 0;
  if (cli::ParseSize(line.c_str(), uint64_t{64} << 10, uint64_t{64} << 30, &bytes)) {
    FL_FUZZ_CHECK(bytes >= (uint64_t{64} << 10) && bytes <= (uint64_t{64} << 30), "a size out of its range");
  }
  return 0;
}
