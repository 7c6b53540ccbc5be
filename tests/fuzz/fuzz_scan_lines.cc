// Line scanning over a pushed stream with the default ruleset: timestamp
// parsing (every format, with and without a year, time zones), rank/host/GPU
// attribution, RE2 confirmation and captures, evidence caps, then the
// correlator. Checks: no crash/UB/leak, evidence text valid UTF-8 and at most
// 4096 bytes, offsets at line starts, exact line numbers and counts.
//
// Input: byte 0 picks options (time zone, small evidence caps), byte 1 where
// the input is split into two feeds; the rest is the log.
#include <cstddef>
#include <cstdint>

#include "correlate/correlate.h"
#include "fuzz_util.h"
#include "scan/line_format.h"
#include "scan/scan.h"
#include "timeparse/timeparse.h"

using namespace faultline;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Choices c(data, size);
  uint8_t opt = c.Byte();
  uint8_t split = c.Byte();
  std::string_view log = c.Rest();
  auto rs = fuzz::DefaultRules();

  ScanOptions so;
  so.threads = 1;
  static constexpr int64_t kTz[] = {0, 19800, -28800, 50400};
  so.tz_offset_s = kTz[opt & 3];
  if (opt & 4) {
    so.keep_first = 1 + ((opt >> 3) & 3);
    so.keep_last = (opt >> 5) & 3;
  }
  size_t cut = log.empty() ? 0 : (static_cast<size_t>(split) * log.size()) / 255;
  {
    Scanner scanner(rs, so);
    uint32_t id = scanner.OpenStream((opt & 0x80) ? "node017/rank-3.log" : "stream");
    if (!scanner.Feed(id, log.substr(0, cut)).ok()) fuzz::Die("feed failed");
    if (!scanner.Feed(id, log.substr(cut)).ok()) fuzz::Die("feed failed");
    if (!scanner.CloseStream(id).ok()) fuzz::Die("close failed");
    ScanResult r = scanner.Finish();
    fuzz::CheckScanResult(*rs, r, log, true);
    CorrelateOptions co;
    Diagnosis d = Correlate(*rs, r, co);
    (void)d;
  }

  // Every line through the line splitter (time and attribution of lines the
  // scanner would only parse for matches and chunk edges).
  TimeContext tctx;
  tctx.default_year = 2026;
  tctx.tz_offset_s = kTz[opt & 3];
  LineFormat plain;
  size_t pos = 0;
  for (int k = 0; k < 64 && pos <= log.size(); ++k) {
    size_t nl = log.find('\n', pos);
    std::string_view line = log.substr(pos, nl == std::string_view::npos ? log.npos : nl - pos);
    LineView v = SplitLine(line, plain, tctx);
    // The message is the line's own bytes, or its copy without terminal
    // escapes (SplitLine's storage).
    auto within = [&](std::string_view outer) {
      return v.message.data() >= outer.data() && v.message.data() + v.message.size() <= outer.data() + outer.size();
    };
    FL_FUZZ_CHECK(within(line) || within(v.storage), "message outside the line and its copy");
    if (v.time && v.time->end > line.size()) fuzz::Die("time end past the line");
    (void)FindMonotonic(line);
    (void)ParseDmesgDelta(line);
    if (auto us = ParseIso8601(line, tctx)) (void)FormatRfc3339(*us);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return 0;
}
