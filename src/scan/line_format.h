// Per-source line formats: plain text (with a timestamp, wrapper and launcher
// prefixes in front of the message) and JSON lines (docker json-file,
// journalctl -o json, structured application logs), whose message, time,
// rank and host come from fields.
//
// Thread-safety: pure functions.
#ifndef FAULTLINE_SCAN_LINE_FORMAT_H_
#define FAULTLINE_SCAN_LINE_FORMAT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attribution/attribution.h"
#include "timeparse/timeparse.h"

namespace faultline {

struct LineFormat {
  bool json = false;
};

// Looks at the first lines of a source.
LineFormat DetectLineFormat(std::string_view head);

struct LineView {
  std::optional<ParsedTime> time;
  Attribution attr;
  // What signals are confirmed against: the whole line for plain text, the
  // message field for JSON lines. Points into the line or into `storage`.
  std::string_view message;
  std::string storage;
};

LineView SplitLine(std::string_view line, const LineFormat& fmt, const TimeContext& tctx);

struct JsonLine {
  size_t offset = 0;    // in the chunk
  size_t length = 0;
  uint64_t line_rel = 0;  // newlines before it in the chunk
};
// The messages of a chunk of JSON lines, one per line of `messages`, and
// where each came from. A line that is not JSON is kept whole as its own
// message, so nothing is lost.
struct JsonChunk {
  std::string messages;
  std::vector<JsonLine> lines;
};
JsonChunk ExtractJsonMessages(std::string_view chunk);

}  // namespace faultline

#endif  // FAULTLINE_SCAN_LINE_FORMAT_H_
