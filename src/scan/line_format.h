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
  // Kubernetes CRI log file (`<RFC3339Nano> stdout|stderr F|P <msg>`): a
  // message longer than the runtime's buffer is split into `P` (partial)
  // lines ended by an `F` line, which the scanner joins before matching.
  bool cri = false;
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

// CRI partial lines. `CriTag` is 'P', 'F', or 0 for a line not in CRI form;
// *payload is where the message starts.
char CriTag(std::string_view line, size_t* payload = nullptr, bool* is_stderr = nullptr);
// Whether the chunk holds any `P` line (most CRI chunks do not: nothing to
// join, and the chunk is scanned as it is).
bool HasCriPartial(std::string_view chunk);
// The chunk's records, one per line of `messages`: each run of `P` lines of
// one stream joined with the `F` line that ends it (the first line's CRI
// prefix, then the payloads), every other line as it is; in the order of
// each record's first line, which gives its offset and line.
JsonChunk JoinCriPartials(std::string_view chunk);
// A cut (a line start) moved so that no `P` line comes right before it: back
// to just after the last `F` or non-CRI line (0 when there is none), or
// forward past the `F` line ending the run (the data's end when none does).
size_t CriCutBack(std::string_view data, size_t cut);
size_t CriCutForward(std::string_view data, size_t cut);

}  // namespace faultline

#endif  // FAULTLINE_SCAN_LINE_FORMAT_H_
