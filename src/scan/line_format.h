// Per-source line formats: plain text (with a timestamp, wrapper and launcher
// prefixes in front of the message) and JSON lines (docker json-file,
// journalctl -o json, structured application logs), whose message, time,
// rank and host come from fields.
//
// Thread-safety: pure functions.
#ifndef FAULTLINE_SCAN_LINE_FORMAT_H_
#define FAULTLINE_SCAN_LINE_FORMAT_H_

#include <cstddef>
#include <cstdint>
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
  // A terminal capture hard-wrapped at this many columns (tmux/screen
  // capture, `script`, a console log): a line exactly this wide continues on
  // the next one, and the scanner joins the run before matching. 0: none.
  // A line that is exactly this wide without having been wrapped is joined
  // too; detection asks for evidence of wrapping first (DetectLineFormat).
  uint32_t wrap_width = 0;
  // pdsh's output (the DeepSpeed launcher's multi-node log): nearly every
  // line starts with "host: ", which names the line's host even where the
  // rest is a bare message ("gpu7: Traceback (most recent call last):").
  bool pdsh = false;
  // Whether physical lines may be joined into one record before matching.
  bool joins() const { return cri || wrap_width > 0; }
};

// Looks at the first lines of a source. A hard wrap is found when at least
// four lines share the widest width (40 columns or more) and nearly all of
// them are followed by a line that looks like a continuation: no timestamp
// and no rank prefix at its start, not the same first bytes as the line
// before it, not blank and not an aligned "Key:   value" field (kubectl
// describe, scontrol).
LineFormat DetectLineFormat(std::string_view head);
// DetectLineFormat's hard-wrap width of a head (0: none), and the same
// measuring the display width of every line, which it must equal (it
// measures only the lines that can be the widest).
size_t DetectWrapWidth(std::string_view head);
size_t WrapWidthEveryLine(std::string_view head);

// Terminal columns of a line: UTF-8 code points, tabs to the next multiple
// of 8, ANSI CSI sequences (colours) and a trailing '\r' take none.
size_t DisplayWidth(std::string_view line);

struct LineView {
  std::optional<ParsedTime> time;
  Attribution attr;
  // What signals are confirmed against: the whole line for plain text, the
  // message field for JSON lines. Points into the line or into `storage`.
  std::string_view message;
  std::string storage;
};

LineView SplitLine(std::string_view line, const LineFormat& fmt, const TimeContext& tctx);
// SplitLine of a line known to hold no terminal escape (a line of a chunk
// HasEscapes found none in): the same view, without looking for them again
// (~300 instructions a matched line of a dense log).
LineView SplitCleanLine(std::string_view line, const LineFormat& fmt, const TimeContext& tctx);
// SplitLine's message and attribution without reading the time (`time`
// may be unset): for lines read only for their stream and message (the
// lines a traceback's fold walks back over, ~45% of SplitLine's cost). A
// line with a carriage return still has its time read, which may bring
// its record's own prefix.
LineView SplitLineUntimed(std::string_view line, const LineFormat& fmt, const TimeContext& tctx);
// SplitLine(line, fmt, tctx).time without the rest of the attribution (the
// rank markers and kernel markers in the message): for the lines read only
// for their time (a chunk's first and last, inherited times).
std::optional<ParsedTime> LineTime(std::string_view line, const LineFormat& fmt, const TimeContext& tctx);
// LineTime of a line known to hold no terminal escape (as SplitCleanLine).
std::optional<ParsedTime> CleanLineTime(std::string_view line, const LineFormat& fmt, const TimeContext& tctx);

// A chunk seen as the records that are matched rather than its physical
// lines: the messages of JSON lines, or CRI partial and hard-wrapped runs
// joined into one record each. `messages` holds one record per line; each
// DerivedRecord says which bytes of the chunk it came from.
struct DerivedRecord {
  size_t offset = 0;    // of its first physical line, in the chunk
  size_t length = 0;
  uint64_t line_rel = 0;  // newlines before it in the chunk
};
struct DerivedChunk {
  std::string messages;
  std::vector<DerivedRecord> lines;
};
// Terminal escape sequences in a line: ESC's CSI (SGR colours
// `\x1b[31m`, cursor and erase codes), OSC (hyperlinks) and two-byte ones,
// and rsyslog's escaped form of ESC (`#033[31m`); on a line that holds a
// bare reset code (`[0m`: a log pasted where ESC was lost) its bare SGR
// codes (`[36m`). Loggers that colour their output (Ray, rich, loguru,
// colorlog) write them into redirected logs. A
// line holding one is matched, and its time read, without them; a JSON
// message's `\u001b` is decoded first. HasEscapes is one pass over the
// bytes (128 at a time where the CPU has AVX2: a chunk's test is made on
// every chunk); HasEscapesPlain is a memchr and a pass over byte pairs, the
// reference the tests compare it with.
bool HasEscapes(std::string_view s);
// A text's newlines counted at every kBlock bytes from its start, taken in
// the escape test's pass (HasEscapes with an index): a chunk's lines are
// then numbered from the nearest block before each matched line instead of
// by a second pass over every byte after hs_scan. `complete` only when the
// test read the whole text and found no escape (on the 128-byte AVX2 path;
// otherwise the caller counts as before).
struct NewlineIndex {
  static constexpr size_t kBlock = 4096;
  std::vector<uint64_t> before;  // before[k]: newlines in the text's first k * kBlock bytes
  uint64_t total = 0;            // newlines in the whole text
  uint64_t bytes = 0;            // the text's size
  bool complete = false;
};
// HasEscapes(s), and where it answers false having read every byte 128 at
// a time, `index` filled for s (complete); otherwise index->complete is false.
bool HasEscapes(std::string_view s, NewlineIndex* index);
// Where the first escape word at or after `from` starts (ESC, rsyslog's
// "#033[", a bare reset), npos when none does. No word spans a newline, so
// a line of s holds one (HasEscapes of the line) exactly when the first at
// or after the line's start lies before its end.
size_t NextEscapeWord(std::string_view s, size_t from);
bool HasEscapesPlain(std::string_view s);
std::string WithoutEscapes(std::string_view line);
// A chunk's lines without their escapes, one record per line.
DerivedChunk StripEscapes(std::string_view chunk);
// The same for derived records (JSON messages, joined runs), in place.
void StripEscapes(DerivedChunk& jc);

// The messages of a chunk of JSON lines. A line that is not JSON is kept
// whole as its own message, so nothing is lost.
DerivedChunk ExtractJsonMessages(std::string_view chunk);

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
DerivedChunk JoinCriPartials(std::string_view chunk);
// A cut (a line start) moved so that no `P` line comes right before it: back
// to just after the last `F` or non-CRI line (0 when there is none), or
// forward past the `F` line ending the run (the data's end when none does).
size_t CriCutBack(std::string_view data, size_t cut);
size_t CriCutForward(std::string_view data, size_t cut);

// The same for any joining format (CRI partial lines, hard-wrapped lines):
// whether a physical line continues on the next one, whether a chunk has any
// such line, the chunk's joined records (JoinCriPartials' shape; wrapped runs
// are concatenated as they are), and cuts moved off runs.
bool ContinuesNext(const LineFormat& f, std::string_view line);
bool HasPartial(const LineFormat& f, std::string_view chunk);
DerivedChunk JoinPartials(const LineFormat& f, std::string_view chunk);
size_t CutBack(const LineFormat& f, std::string_view data, size_t cut);
size_t CutForward(const LineFormat& f, std::string_view data, size_t cut);

}  // namespace faultline

#endif  // FAULTLINE_SCAN_LINE_FORMAT_H_
