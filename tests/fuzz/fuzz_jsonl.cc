// The JSON-lines path: format detection, message/time/rank/host extraction
// (docker json-file, journalctl -o json, structured app logs), then a full
// scan of the input as a JSON-lines stream. Checks as fuzz_scan_lines.
//
// Input: byte 0 picks options; the rest is the log. Inputs that do not look
// like JSON lines still run through ExtractJsonMessages and SplitLine in
// JSON mode, which must cope with anything.
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "scan/line_format.h"
#include "scan/scan.h"

using namespace faultline;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Choices c(data, size);
  uint8_t opt = c.Byte();
  std::string_view log = c.Rest();
  auto rs = fuzz::DefaultRules();

  DerivedChunk jc = ExtractJsonMessages(log);
  FL_FUZZ_CHECK(jc.messages.find('\0') == std::string::npos, "NUL in messages");
  uint64_t newlines_in_messages = 0;
  for (char ch : jc.messages) newlines_in_messages += ch == '\n';
  FL_FUZZ_CHECK(jc.lines.size() >= newlines_in_messages, "messages do not map to lines");
  for (const DerivedRecord& jl : jc.lines) {
    FL_FUZZ_CHECK(jl.offset <= log.size() && jl.length <= log.size() - jl.offset,
                  "JSON line out of range");
  }
  LineFormat json;
  json.json = true;
  TimeContext tctx;
  tctx.tz_offset_s = (opt & 1) ? 3600 : 0;
  size_t pos = 0;
  for (int k = 0; k < 64 && pos <= log.size(); ++k) {
    size_t nl = log.find('\n', pos);
    std::string_view line = log.substr(pos, nl == std::string_view::npos ? log.npos : nl - pos);
    LineView v = SplitLine(line, json, tctx);
    (void)v;
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }

  ScanOptions so;
  so.threads = 1;
  if (opt & 2) {
    so.keep_first = 1;
    so.keep_last = 1;
  }
  Scanner scanner(rs, so);
  uint32_t id = scanner.OpenStream("app.jsonl");
  if (!scanner.Feed(id, log).ok()) fuzz::Die("feed failed");
  if (!scanner.CloseStream(id).ok()) fuzz::Die("close failed");
  ScanResult r = scanner.Finish();
  fuzz::CheckScanResult(*rs, r, log, true);
  return 0;
}
