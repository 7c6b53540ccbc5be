#include "scan/traceback.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "absl/strings/ascii.h"
#include "attribution/lex.h"
#include "util/bytescan.h"
#include "util/strings.h"

namespace faultline {
namespace {

using attribution_internal::IsDigit;
using attribution_internal::IsWordChar;

constexpr std::string_view kHeader = "Traceback (most recent call last):";
// IPython's header has no colon: it names the exception's class before it
// ("StopIteration                             Traceback (most recent call last)").
constexpr std::string_view kHeaderStem = "Traceback (most recent call last)";
// threading.excepthook's line above the traceback of an exception that ended
// a thread ("Exception in thread Thread-1:").
constexpr std::string_view kThreadHeader = "Exception in thread ";
// multiprocessing's line above the traceback of an exception that ended a
// child process ("Process Process-1:7:", "Process SpawnProcess-3:").
constexpr std::string_view kProcessHeader = "Process ";
// Lines after an IPython header its exception line may come in: its frames
// show several code lines of context each.
constexpr size_t kIPythonReach = 512;
// Non-frame lines allowed between two frames, or between the last frame and
// the exception line: the code line, Python 3.11's caret line, a note.
constexpr int kMaxGap = 3;

std::string_view RightTrimmedCr(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The frame whose `File "` starts at `f` in `s`, read as "file:line[ in func]".
std::optional<std::string> FrameAt(std::string_view s, size_t f) {
  size_t name_start = f + 6;
  size_t q = s.find("\", line ", name_start);
  if (q == std::string_view::npos) return std::nullopt;
  std::string_view file = s.substr(name_start, q - name_start);
  size_t num_start = q + 8;
  size_t num_end = num_start;
  while (num_end < s.size() && IsDigit(s[num_end])) ++num_end;
  if (num_end == num_start) return std::nullopt;
  std::string out = StrCat(file, ":", s.substr(num_start, num_end - num_start));
  std::string_view rest = s.substr(num_end);
  if (rest.substr(0, 5) == ", in ") {
    std::string_view func = rest.substr(5);
    while (!func.empty() && (func.back() == '\r' || func.back() == ' ')) func.remove_suffix(1);
    StrAppend(&out, " in ", func);
  }
  return out;
}

// `  File "/w/train.py", line 212, in main` -> "/w/train.py:212 in main".
std::optional<std::string> ParseFrame(std::string_view s) {
  size_t f = s.find("File \"");
  if (f == std::string_view::npos) return std::nullopt;
  // Python indents frames by two spaces after whatever prefix the line has;
  // loguru marks the frame its exception was caught in with '>' for the
  // first ("> File ...", _better_exceptions.py, backtrace=True).
  if (f < 2 || s[f - 1] != ' ' || (s[f - 2] != ' ' && s[f - 2] != '>')) return std::nullopt;
  return FrameAt(s, f);
}

// A frame that lost its indentation when pasted (`File "x.py", line 3, in f`
// at the start of `s`, or under less than CPython's two spaces): read as
// ParseFrame's. Nothing else in a log starts with `File "NAME", line N`.
std::optional<std::string> ParseFlatFrame(std::string_view s) {
  size_t f = s.find_first_not_of(" \t");
  if (f == std::string_view::npos || f >= 2 || !s.substr(f).starts_with("File \"")) return std::nullopt;
  return FrameAt(s, f);
}

bool FrameBodyIndented(std::string_view s) { return !s.empty() && (s[0] == ' ' || s[0] == '\t'); }

// Whether `s` is Python 3.11's caret line under a frame's code line
// (`^^^^^^`, `~~~~^^^^~~`), whatever its indentation.
bool CaretLine(std::string_view s) {
  s = RightTrimmedCr(s);
  size_t i = s.find_first_not_of(" \t");
  return i != std::string_view::npos && s.find_first_not_of(" \t^~", i) == std::string_view::npos;
}

// Whether `s` is the line CPython's traceback.py (StackSummary.
// format_frame_summary, 3.13 onwards) writes in place of the lines it leaves
// out of a multi-line instruction's display ("    ...<3 lines>...").
bool ElidedLines(std::string_view s) {
  s = RightTrimmedCr(s);
  size_t i = s.find_first_not_of(" \t");
  if (i == std::string_view::npos || i == 0) return false;
  s.remove_prefix(i);
  if (!s.starts_with("...<") || !s.ends_with(" lines>...")) return false;
  std::string_view n = s.substr(4, s.size() - 4 - 10);
  return !n.empty() && n.find_first_not_of("0123456789") == std::string_view::npos;
}

// Whether `s`, an indented line of a frame's body, is one CPython's
// traceback.py writes as part of the frame's code display rather than as a
// further line after it: a caret line (3.11 onwards: under the code line
// it marks), the elision of a multi-line instruction's middle lines, and
// (3.13 onwards, which shows the first, the last and the anchors' lines of
// an instruction that spans several, each with its carets under it) a code
// line right under a caret line. They take none of kMaxGap.
bool CodeDisplayLine(std::string_view s, bool after_caret) {
  if (!FrameBodyIndented(s) || s.find_first_not_of(" \t\r") == std::string_view::npos) return false;
  return CaretLine(s) || ElidedLines(s) || after_caret;
}

// Whether a Ray task's header on `message` heads the frames under it: alone
// at the start of the line (Tune's failure report, Ray Train v2), or after
// the lead of Ray's record of an error no caller got (ray/_private/worker.py
// _unhandled_error_handler: "Unhandled error (suppress with
// 'RAY_IGNORE_UNHANDLED_ERRORS=1'): " and the error; 2021's releases wrote
// the name unquoted): a RayTaskError's text is its task's header, frames
// and exception.
bool RayTaskHeads(std::string_view message) {
  const size_t title = FindRayTaskHeader(message);
  if (title == 0) return true;
  if (title == std::string_view::npos) return false;
  const std::string_view lead = message.substr(0, title);
  return lead.ends_with("Unhandled error (suppress with 'RAY_IGNORE_UNHANDLED_ERRORS=1'): ") ||
         lead.ends_with("Unhandled error (suppress with RAY_IGNORE_UNHANDLED_ERRORS=1): ");
}

// The walks below read the same lines again and again: a header's look
// ahead for its exception line (FindExceptionLine), the fold of the
// exception line's own traceback and the fold TakeExceptionLine makes for
// the header each split every line of one traceback, from copies of the
// chunk's bytes (a pending line's `after`, its window). Each walk reads a
// line's stream and message only, which SplitLineUntimed gives as
// SplitLine does (the time is not read; a line with a carriage return has
// it read, as its record's own prefix may come with it). A line that holds
// no escape is its own message, so its split is its attribution: kept per
// thread, keyed by the line's bytes and what else the split reads (the
// format's pdsh prefix, the time context a carriage return's stamp is read
// with), it is made once for the walks. The result is the split's, for any
// order of lines and of calls: an entry is used only for the same bytes.
struct SplitMemoEntry {
  std::string line;
  Attribution attr;
  int default_year = 0;
  int64_t tz_offset_s = 0;
  bool pdsh = false;
  bool used = false;
};
constexpr size_t kSplitMemoSlots = 512;  // a power of two; direct-mapped
// Longer lines are split every time (a kept copy would be large).
constexpr size_t kSplitMemoMaxLine = 1024;

thread_local bool split_memo_on = true;

// Whether split `v` of `line` made no text of its own (no escape taken
// out): the line is its message, and its attribution is the whole split.
bool MessageIsLine(const LineView& v, std::string_view line) {
  return v.storage.empty() && v.message.data() == line.data() && v.message.size() == line.size();
}

// The split of a line that is its own message, from its attribution.
LineView LineAsMessage(std::string_view line, const Attribution& attr) {
  LineView v;
  v.attr = attr;
  v.message = line;
  return v;
}

LineView WalkSplit(std::string_view line, const LineFormat& fmt, const TimeContext& tctx) {
  if (fmt.json || line.size() > kSplitMemoMaxLine || !split_memo_on) return SplitLineUntimed(line, fmt, tctx);
  thread_local std::vector<SplitMemoEntry> memo(kSplitMemoSlots);
  SplitMemoEntry& e = memo[std::hash<std::string_view>{}(line) & (kSplitMemoSlots - 1)];
  if (e.used && e.line == line && e.pdsh == fmt.pdsh && e.default_year == tctx.default_year &&
      e.tz_offset_s == tctx.tz_offset_s) {
    return LineAsMessage(line, e.attr);
  }
  LineView v = SplitLineUntimed(line, fmt, tctx);
  // A line whose message is not itself (escapes taken out) is not kept.
  if (!MessageIsLine(v, line)) return v;
  e.line.assign(line);
  e.attr = v.attr;
  e.default_year = tctx.default_year;
  e.tz_offset_s = tctx.tz_offset_s;
  e.pdsh = fmt.pdsh;
  e.used = true;
  return v;
}

bool SameStream(const Attribution& a, const Attribution& b) {
  return a.rank == b.rank && a.host == b.host;
}

// The stream that printed line `l` (split as `v`): its attribution, less
// what a Ray task header on it names (the task's process, which is not
// the one that printed the line: the driver prints every nested header).
// *task (when given) receives the header's host and pid, when it has one.
Attribution StreamOf(std::string_view l, const LineView& v, const LineFormat& fmt, const TimeContext& tctx,
                     Attribution* task = nullptr) {
  if (v.message.find("ray::") == std::string_view::npos) return v.attr;
  std::string host;
  std::optional<int64_t> pid;
  const size_t title = FindRayTaskHeader(l, &host, &pid);
  if (title == std::string_view::npos) return v.attr;
  if (task != nullptr) {
    task->host = std::move(host);
    task->pid = pid;
  }
  return title == 0 ? Attribution{} : SplitLineUntimed(l.substr(0, title), fmt, tctx).attr;
}

// How far into a record's message its level name may come: after a stamp,
// a logger name or a bracketed prefix ("2024-05-02 10:11:12,345 - WARNING -").
constexpr size_t kLevelReach = 64;

// The first of Python logging's level names that stands as a word near the
// start of `message`; empty when none does.
std::string_view LevelName(std::string_view message) {
  static constexpr std::string_view kLevels[] = {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"};
  std::string_view head = message.substr(0, kLevelReach);
  for (size_t i = 0; i < head.size(); ++i) {
    if (i > 0 && IsWordChar(head[i - 1])) continue;
    for (std::string_view name : kLevels) {
      size_t end = i + name.size();
      if (message.substr(i, name.size()) == name && (end == message.size() || !IsWordChar(message[end]))) {
        return name;
      }
    }
  }
  return {};
}

// "WARNING" when the line that ends at `top` in `window` (the line above a
// traceback's header) is a WARNING record of the exception's stream. Only
// WARNING: an INFO record there is as often the last progress line before
// an uncaught exception as a record with exc_info.
std::string LoggedLevel(std::string_view window, size_t top, bool window_at_source_start,
                        const Attribution& mine, const LineFormat& fmt, const TimeContext& tctx) {
  std::string_view above = window.substr(0, top);
  if (above.empty() || above.back() != '\n') return "";
  above.remove_suffix(1);
  size_t nl = above.rfind('\n');
  if (nl == std::string_view::npos && !window_at_source_start) return "";  // a partial line
  std::string_view l = nl == std::string_view::npos ? above : above.substr(nl + 1);
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  LineView v = WalkSplit(l, fmt, tctx);
  if (!SameStream(v.attr, mine)) return "";
  return LevelName(v.message) == "WARNING" ? "WARNING" : "";
}

// The prefix a stream puts before each line of its traceback ("[rank3]: ",
// a journal's stamp and process) taken off `message`: the first frame's
// prefix, or one as long that ends the same way (a stamp whose seconds
// changed).
std::string_view Unprefixed(std::string_view message, std::string_view prefix) {
  if (message.starts_with(prefix)) return message.substr(prefix.size());
  if (prefix.empty() || message.size() < prefix.size() || message[prefix.size() - 1] != prefix.back()) {
    return message;
  }
  return message.substr(prefix.size());
}

// Whether `s` continues a frame: its code line, Python 3.11's caret line,
// "  [Previous line repeated 996 more times]" -- all indented.
bool FrameBody(std::string_view s) { return !s.empty() && (s[0] == ' ' || s[0] == '\t'); }

std::string_view RightTrimmed(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Whether `s` is a line loguru's diagnose mode writes under a frame's code
// line (_better_exceptions.py, _format_relevant_values, every release since
// 0.2): a variable's value under a cap ('└ {}') after the pipes of the values
// left of it ('│'), or a further line of a value's repr under those pipes.
// They are the frame's, however many a value takes.
bool LoguruValueLine(std::string_view s) {
  size_t i = s.find_first_not_of(' ');
  if (i == 0 || i == std::string_view::npos) return false;
  s.remove_prefix(i);
  return s.starts_with("\u2502") || s.starts_with("\u2514");
}

// `s` read as an exception line, `module.Class: message` or a bare class;
// nullopt when it is none (a log record, a blank line).
std::optional<ExceptionLine> ReadException(std::string_view s) {
  size_t i = 0;
  for (;;) {  // dotted identifiers
    if (i == s.size() || !IsWordChar(s[i]) || IsDigit(s[i])) return std::nullopt;
    while (i < s.size() && IsWordChar(s[i])) ++i;
    if (i == s.size() || s[i] != '.') break;
    ++i;
  }
  // Ray's "ray.exceptions.RayTaskError(KeyError)".
  if (i < s.size() && s[i] == '(') {
    size_t close = s.find(')', i);
    if (close == std::string_view::npos) return std::nullopt;
    i = close + 1;
  }
  ExceptionLine out;
  out.exception = std::string(s.substr(0, i));
  std::string_view rest = s.substr(i);
  if (!rest.empty() && rest[0] != ':') return std::nullopt;
  if (!rest.empty()) rest.remove_prefix(1);
  while (!rest.empty() && rest[0] == ' ') rest.remove_prefix(1);
  out.message = std::string(rest.substr(0, 200));
  return out;
}

// How many lines after an exception line CPython's chain sentence may come:
// the rest of a multi-line message, the blank line before the sentence.
constexpr int kChainReach = 8;

// Whether the exception line ending at `at` in `after` is followed, within
// kChainReach lines of its stream, by the sentence that chains it to the next
// traceback ("During handling of the above exception, another exception
// occurred:", "The above exception was the direct cause of the following
// exception:"): then that next traceback's exception is the one the program
// ended on, and its header's evidence.
bool Chained(std::string_view after, size_t at, const Attribution& mine, const LineFormat& fmt,
             const TimeContext& tctx) {
  for (int n = 0; n < kChainReach && at < after.size();) {
    size_t nl = after.find('\n', at);
    if (nl == std::string_view::npos) return false;
    std::string_view l = after.substr(at, nl - at);
    at = nl + 1;
    LineView v = WalkSplit(l, fmt, tctx);
    if (!SameStream(v.attr, mine)) continue;
    if (v.message.find(kHeader) != std::string_view::npos || ParseFrame(v.message)) return false;
    if (v.message.find("During handling of the above exception") != std::string_view::npos ||
        v.message.find("The above exception was the direct cause") != std::string_view::npos) {
      return true;
    }
    ++n;
  }
  return false;
}

// One line of the text after a traceback's header: its bytes without the
// line end, where it starts, and where the next line starts.
struct AfterLine {
  std::string_view text;
  size_t begin;
  size_t next;
};

// The whole line of `after` that starts at `at`, nullopt when it has no
// line end yet (a partial line).
std::optional<AfterLine> LineOf(std::string_view after, size_t at) {
  size_t nl = after.find('\n', at);
  if (nl == std::string_view::npos) return std::nullopt;
  std::string_view l = after.substr(at, nl - at);
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  return AfterLine{l, at, nl + 1};
}

// Exception line `e`, read from line `l` (the `index`th after the header),
// placed there; nullopt when there is none or another traceback chained to
// it follows (its exception is the one that ended the process).
std::optional<ExceptionLine> Placed(std::optional<ExceptionLine> e, std::string_view after,
                                    const AfterLine& l, size_t index, const Attribution& mine,
                                    const LineFormat& fmt, const TimeContext& tctx) {
  if (!e || Chained(after, l.next, mine, fmt, tctx)) return std::nullopt;
  e->index = index;
  e->begin = l.begin;
  e->end = l.begin + l.text.size();
  return e;
}

// The class an IPython traceback's header names ("StopIteration" of
// "StopIteration      Traceback (most recent call last)"), nullopt for
// CPython's header (its colon) and anything before the stem that is no class
// name (a progress bar's last redraw).
std::optional<std::string> IPythonClass(std::string_view message) {
  size_t at = message.find(kHeaderStem);
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  std::string_view tail = message.substr(at + kHeaderStem.size());
  if (!tail.empty() && tail[0] == ':') return std::nullopt;
  std::string_view cls = message.substr(0, at);
  while (!cls.empty() && cls.back() == ' ') cls.remove_suffix(1);
  if (cls.size() == at) return std::nullopt;  // the class and the stem are apart
  std::optional<ExceptionLine> e = ReadException(cls);
  if (!e || e->exception.size() != cls.size()) return std::nullopt;
  return e->exception;
}

// The end of the line number ultratb prints at `i` in `s`, npos when none
// is there. VS Code's notebooks (vscode-jupyter's NotebookTracebackFormatter,
// every release since it links them) turn each number into a link to the
// cell or file, which a copied output keeps as "[336](vscode-notebook-cell:...)".
size_t UltratbNumberEnd(std::string_view s, size_t i) {
  const bool linked = i < s.size() && s[i] == '[';
  if (linked) ++i;
  const size_t digits = i;
  while (i < s.size() && IsDigit(s[i])) ++i;
  if (i == digits) return std::string_view::npos;
  if (!linked) return i;
  if (s.substr(i, 2) != "](") return std::string_view::npos;
  const size_t close = s.find(')', i + 2);
  return close == std::string_view::npos ? std::string_view::npos : close + 1;
}

// Whether `s` is the line ultratb marks as the one a frame was executing:
// its number after an arrow of dashes ("----> 1 df.show()", "--> 336     print(x)").
bool IPythonArrowLine(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && s[i] == '-') ++i;
  if (i == 0 || i == s.size() || s[i] != '>') return false;
  ++i;
  size_t spaces = i;
  while (i < s.size() && s[i] == ' ') ++i;
  return i > spaces && UltratbNumberEnd(s, i) != std::string_view::npos;
}

// Whether `s` is one of the numbered code lines ultratb shows around a
// frame's line ("      2     max_epochs=30000,", "    274 "), or the
// "(...)" of lines it left out.
bool IPythonCodeLine(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  if (s.substr(i).starts_with("(...)")) return true;
  i = UltratbNumberEnd(s, i);
  return i != std::string_view::npos && (i == s.size() || s[i] == ' ');
}

// Whether `s` is the line ultratb heads a frame with: "<file> in <function>(<args>)"
// before IPython 8 ("<ipython-input-13-6f755a42859a> in <module>",
// "/usr/lib/python3/site-packages/x.py in train(self, a)", a cell's "in
// <cell line: 0>()"), "File <file>:<line>, in <function>(<args>)" and
// "Input In [3], in <module>" since, and the cell's "Cell In[8], line 14".
// Its code lines come after it, so a text that ends on it ends in the frames.
bool IPythonFrameLine(std::string_view s) {
  if (s.empty() || s[0] == ' ') return false;
  if (s.starts_with("Cell In[")) return true;
  for (size_t at = s.find(" in "); at != std::string_view::npos; at = s.find(" in ", at + 1)) {
    std::string_view rest = s.substr(at + 4);
    size_t name = 0;
    if (!rest.empty() && rest[0] == '<') {
      name = rest.find('>');
      if (name == std::string_view::npos) continue;
      ++name;
    } else {
      if (rest.empty() || IsDigit(rest[0])) continue;  // "done in 41s" names no function
      while (name < rest.size() && (IsWordChar(rest[name]) || rest[name] == '.')) ++name;
      if (name == 0) continue;
    }
    std::string_view call = rest.substr(name);
    if (call.empty() || (call.front() == '(' && call.back() == ')')) return true;
  }
  return false;
}

// Whether `s` is the head of an IPython 8 frame ("File <path>:<line>, in
// <function>(<args>)") cut before its end, as the last line of a log
// truncated mid-line leaves it: "File " and the start of a path.
bool IPythonFrameHeadCut(std::string_view s) {
  if (!s.starts_with("File ")) return false;
  std::string_view path = s.substr(5);
  if (path.empty()) return false;
  if (path[0] == '/' || path[0] == '~' || path[0] == '.') return true;
  return path.size() >= 3 && absl::ascii_isalpha(static_cast<unsigned char>(path[0])) && path[1] == ':' &&
         (path[2] == '\\' || path[2] == '/');
}

// IPython's frames are its own ("<ipython-input-13-6f755a42859a> in f(x)",
// "File ~/lib/x.py:444, in f(self)", numbered code lines with "---->"
// arrows): its exception line is the first line of the header's stream that
// starts with the class the header names, then a colon or nothing.
// `ends_in_frames` is set when the text runs out in the frames (an arrow
// line seen, or the header's first line a frame's heading, as ultratb
// writes each frame's location first and its arrow among the code lines
// after it; no exception line, no other header, the last line of its
// stream a frame's heading, an arrow or code line): the header has named
// the class the program raised, the source stops before its message.
std::optional<ExceptionLine> FindIPythonException(const std::string& cls, std::string_view after,
                                                  const Attribution& mine, const LineFormat& fmt,
                                                  const TimeContext& tctx, bool* ends_in_frames) {
  bool arrow = false;  // an arrow line, or a frame's heading right below the header
  bool first = true;   // no line of the stream that is not blank read yet
  bool last_in_frame = false;  // the last line of the stream that is not blank
  size_t at = 0;
  for (size_t index = 0; at < after.size() && index < kIPythonReach; ++index) {
    std::optional<AfterLine> l = LineOf(after, at);
    if (!l) return std::nullopt;  // a partial line
    LineView v = WalkSplit(l->text, fmt, tctx);
    if (SameStream(v.attr, mine)) {
      std::string_view s = v.message;
      if (s.find(kHeaderStem) != std::string_view::npos) return std::nullopt;  // another traceback
      if (s.starts_with(cls) && (s.size() == cls.size() || s[cls.size()] == ':')) {
        std::optional<ExceptionLine> e = ReadException(s);
        if (e && e->exception != cls) return std::nullopt;
        return Placed(std::move(e), after, *l, index, mine, fmt, tctx);
      }
      const bool arrow_line = IPythonArrowLine(s);
      arrow |= arrow_line;
      if (s.find_first_not_of(' ') != std::string_view::npos) {
        const bool frame_line = IPythonFrameLine(s);
        arrow |= first && frame_line;
        first = false;
        last_in_frame = arrow_line || IPythonCodeLine(s) || frame_line || IPythonFrameHeadCut(s);
      }
    }
    at = l->next;
  }
  if (ends_in_frames) *ends_in_frames = arrow && last_in_frame && at >= after.size();
  return std::nullopt;
}

// Whether the header's line goes on with a frame of its traceback
// (`Traceback (most recent call last): File "x.py", line 3, in f ...`).
bool Flattened(std::string_view message) {
  size_t at = message.find(kHeader);
  if (at == std::string_view::npos) return false;
  std::string_view rest = message.substr(at + kHeader.size());
  while (!rest.empty() && rest[0] == ' ') rest.remove_prefix(1);
  return rest.starts_with("File \"") && rest.find("\", line ") != std::string_view::npos;
}

// Whether `message` is blank but for the prefix the frame on the next line
// of `after` (from `next`) has: loguru's diagnose mode puts a blank line
// before a frame's location (_format_locations), the first one included.
bool SpacerBeforeFrame(std::string_view message, std::string_view after, size_t next, const LineFormat& fmt,
                       const TimeContext& tctx) {
  std::optional<AfterLine> l = LineOf(after, next);
  if (!l) return false;
  const LineView v = WalkSplit(l->text, fmt, tctx);
  const std::string_view m = v.message;
  if (!ParseFrame(m)) return false;
  return RightTrimmed(message) == RightTrimmed(m.substr(0, m.find("File \"") - 2));
}

// Whether a whole line of `mine`'s stream that is not blank follows in `after`.
bool MoreOfStream(std::string_view after, const Attribution& mine, const LineFormat& fmt,
                  const TimeContext& tctx) {
  for (size_t at = 0; at < after.size();) {
    std::optional<AfterLine> l = LineOf(after, at);
    if (!l) return true;  // a partial line: the source goes on
    LineView v = WalkSplit(l->text, fmt, tctx);
    if (SameStream(v.attr, mine) && v.message.find_first_not_of(" \t") != std::string_view::npos) return true;
    at = l->next;
  }
  return false;
}

// Whether `message` ends in the traceback header, nothing but blanks after
// it ("[rank3]: Traceback (most recent call last):").
bool BareHeader(std::string_view message) {
  size_t at = message.rfind(kHeader);
  if (at == std::string_view::npos) return false;
  std::string_view rest = message.substr(at + kHeader.size());
  return rest.find_first_not_of(" \t\r") == std::string_view::npos;
}

// rich's traceback (rich/traceback.py, every release: a Panel titled
// "Traceback (most recent call last)" around the frames, the exception line
// under the panel) draws its header as the panel's top edge, the title
// centred in it: "╭──── Traceback (most recent call last) ────╮" in the
// default ROUNDED box, "┌── ... ──┐" in the SQUARE one rich substitutes on
// a legacy Windows console, "+-- ... --+" in ASCII. The position of the box's
// top-left corner in `message` when it is one, npos otherwise.
constexpr std::string_view kBoxHorizontal = "\u2500";  // ─
constexpr std::string_view kBoxTopLeft[] = {"\u256d", "\u250c", "+"};     // ╭ ┌ +
constexpr std::string_view kBoxTopRight[] = {"\u256e", "\u2510", "+"};    // ╮ ┐ +
constexpr std::string_view kBoxVertical[] = {"\u2502", "|"};             // │ |

// `s` less a run of the box's horizontal edge (one character at least) at
// its end (`back`) or its start; nullopt when there is none.
std::optional<std::string_view> LessHorizontals(std::string_view s, bool back) {
  size_t n = 0;
  for (;;) {
    if (back ? s.ends_with(kBoxHorizontal) : s.starts_with(kBoxHorizontal)) {
      s = back ? s.substr(0, s.size() - kBoxHorizontal.size()) : s.substr(kBoxHorizontal.size());
    } else if (back ? s.ends_with('-') : s.starts_with('-')) {
      s = back ? s.substr(0, s.size() - 1) : s.substr(1);
    } else {
      break;
    }
    ++n;
  }
  return n > 0 ? std::optional<std::string_view>(s) : std::nullopt;
}

size_t RichBoxHeader(std::string_view message) {
  const size_t at = message.find(kHeaderStem);
  if (at == std::string_view::npos || at == 0 || message[at - 1] != ' ') return std::string_view::npos;
  std::optional<std::string_view> left = LessHorizontals(message.substr(0, at - 1), true);
  std::string_view right = message.substr(at + kHeaderStem.size());
  if (!left || right.empty() || right[0] != ' ') return std::string_view::npos;
  std::optional<std::string_view> edge = LessHorizontals(right.substr(1), false);
  while (edge && !edge->empty() && (edge->back() == ' ' || edge->back() == '\r')) edge->remove_suffix(1);
  if (!edge || std::none_of(std::begin(kBoxTopRight), std::end(kBoxTopRight),
                            [&](std::string_view c) { return *edge == c; })) {
    return std::string_view::npos;
  }
  for (std::string_view c : kBoxTopLeft) {
    if (left->ends_with(c)) return left->size() - c.size();
  }
  return std::string_view::npos;
}

// Whether `s` starts with one of `edges`.
template <size_t N>
bool StartsWithEdge(std::string_view s, const std::string_view (&edges)[N]) {
  return std::any_of(std::begin(edges), std::end(edges), [&](std::string_view c) { return s.starts_with(c); });
}

// Whether the text after a rich traceback's header ends inside its panel:
// every line of the header's stream that is not blank is one of the panel's
// (its left edge first, where the header's corner was), none its bottom
// edge, and the text ends there -- the traceback was cut in its frames, the
// exception line the panel is followed by never came.
bool EndsInRichBox(std::string_view after, std::string_view prefix, const Attribution& mine,
                   const LineFormat& fmt, const TimeContext& tctx) {
  for (size_t at = 0; at < after.size();) {
    std::optional<AfterLine> l = LineOf(after, at);
    if (!l) return false;  // a partial line: the source goes on
    LineView v = WalkSplit(l->text, fmt, tctx);
    if (SameStream(v.attr, mine) && v.message.find_first_not_of(" \t\r") != std::string_view::npos) {
      std::string_view s = Unprefixed(v.message, prefix);
      if (!StartsWithEdge(s, kBoxVertical)) return false;  // the bottom edge, or no line of the panel
    }
    at = l->next;
  }
  return true;
}

}  // namespace

std::optional<ExceptionLine> FindExceptionLine(std::string_view header, std::string_view after,
                                               const LineFormat& fmt, const TimeContext& tctx,
                                               bool* ends_in_frames, AfterSplits* splits) {
  if (ends_in_frames) *ends_in_frames = false;
  if (splits) splits->lines.clear();
  if (fmt.json) return std::nullopt;
  const LineView h = WalkSplit(header, fmt, tctx);
  // A Ray task's header stands where its "Traceback (most recent call
  // last):" was (RayTaskError.__str__): the frames and exception under it
  // are read the same.
  // rich's header: its exception line comes under the panel and is read
  // as one alone; a text that ends inside the panel is cut in its frames.
  if (const size_t corner = RichBoxHeader(h.message); corner != std::string_view::npos) {
    if (ends_in_frames) {
      *ends_in_frames = EndsInRichBox(after, h.message.substr(0, corner), StreamOf(header, h, fmt, tctx), fmt, tctx);
    }
    return std::nullopt;
  }
  if (h.message.find(kHeader) == std::string_view::npos && !RayTaskHeads(h.message)) {
    std::optional<std::string> cls = IPythonClass(h.message);
    return cls ? FindIPythonException(*cls, after, h.attr, fmt, tctx, ends_in_frames) : std::nullopt;
  }
  const Attribution mine = StreamOf(header, h, fmt, tctx);
  // A traceback joined onto its header's line as posted ("Traceback (most
  // recent call last): File "train.py", line 178, in <module> train() ..."):
  // its frames and exception are that line, nothing after it is. With no
  // more line of its stream the source ends in it: the header is the
  // evidence, as for one cut in its frames.
  if (Flattened(h.message)) {
    if (ends_in_frames) *ends_in_frames = !MoreOfStream(after, mine, fmt, tctx);
    return std::nullopt;
  }
  // The prefix the traceback's lines share ("[rank3]: ", a journal's stamp,
  // none under a logger's record) is its first frame's: the header's line
  // may hold more (an unfinished tqdm bar's last redraw before it).
  std::string prefix;
  size_t frames = 0;
  int gap = 0;
  bool finalizer = false;  // the outermost frame is a __del__
  // A traceback pasted flat (its indentation lost: frames, code lines and
  // caret lines all at the prefix's column) is read frame by frame: the
  // one line under a flat frame is its code line, whatever it reads as
  // (`main()`, `loss.backward()`), a caret line may follow it, and the
  // first line after those that is none of them is the exception line.
  const std::string_view header_prefix = h.message.substr(0, h.message.find(kHeader));
  bool code_slot = false;   // the line after a flat frame
  bool caret_slot = false;  // the line after a flat frame's code line
  bool after_caret = false;  // the stream's last line was a caret line under a code line
  for (size_t at = 0, index = 0; at < after.size(); ++index) {
    std::optional<AfterLine> l = LineOf(after, at);
    if (!l) return std::nullopt;  // a partial line
    LineView v = WalkSplit(l->text, fmt, tctx);
    if (splits && MessageIsLine(v, l->text)) {
      splits->lines.emplace_back(l->begin, v.attr);
    }
    const std::optional<std::string> frame = ParseFrame(v.message);
    if (SameStream(StreamOf(l->text, v, fmt, tctx), mine)) {
      std::string_view s = Unprefixed(v.message, prefix);
      std::optional<std::string> flat;
      std::string_view flat_prefix;
      if (!frame) {
        if (frames > 0) {
          flat = ParseFlatFrame(s);
        } else if (flat = ParseFlatFrame(v.message); !flat && !header_prefix.empty() &&
                                                      v.message.starts_with(header_prefix)) {
          flat = ParseFlatFrame(v.message.substr(header_prefix.size()));
          if (flat) flat_prefix = header_prefix;
        }
      }
      const bool blank = s.find_first_not_of(" \t") == std::string_view::npos;
      const bool under_caret = after_caret;
      after_caret = false;
      if (frame || flat) {
        if (frames == 0) {
          prefix = frame ? std::string(v.message.substr(0, v.message.find("File \"") - 2)) : std::string(flat_prefix);
          finalizer = (frame ? *frame : *flat).ends_with(" in __del__");
        }
        ++frames;
        gap = 0;
        code_slot = flat.has_value();
        caret_slot = false;
      } else if (code_slot && !blank) {
        code_slot = false;  // the flat frame's code line
        caret_slot = true;
        ++gap;
      } else if (caret_slot && CaretLine(s)) {
        caret_slot = false;  // Python 3.11's carets under it
        ++gap;
      } else if (SpacerBeforeFrame(v.message, after, l->next, fmt, tctx)) {
        // loguru's blank line before a frame's location
      } else if (frames > 0 && LoguruValueLine(s)) {
        // a value loguru shows under the frame's code line
      } else if (frames > 0 && CodeDisplayLine(s, under_caret)) {
        after_caret = CaretLine(s) || (under_caret && ElidedLines(s));
      } else if (frames == 0 || (FrameBody(s) && ++gap > kMaxGap)) {
        return std::nullopt;
      } else if (!FrameBody(s)) {
        return Placed(ReadException(s), after, *l, index, mine, fmt, tctx);
      }
    }
    at = l->next;
  }
  // A traceback from a finalizer is one CPython printed and dropped (an
  // exception in __del__ cannot propagate). A bare header with no line of
  // its stream after it is a traceback cut right below its header (the
  // process died printing it, or the excerpt stops there): cut as in its
  // frames. A header with more text on its line is not that.
  if (ends_in_frames) *ends_in_frames = frames > 0 ? !finalizer : BareHeader(h.message);
  return std::nullopt;
}

namespace {

bool ChildHeader(std::string_view m) {
  while (!m.empty() && (m.back() == ' ' || m.back() == '\r')) m.remove_suffix(1);
  if (m.starts_with(kThreadHeader)) return true;
  // multiprocessing's "Process Process-1:7:" (the name holds no space).
  if (!m.starts_with(kProcessHeader) || m.size() <= kProcessHeader.size() + 1 || m.back() != ':') return false;
  return m.substr(kProcessHeader.size()).find(' ') == std::string_view::npos;
}

}  // namespace

bool UnderChildHeader(std::string_view header, std::string_view above, const LineFormat& fmt,
                      const TimeContext& tctx) {
  if (!above.empty() && above.back() == '\n') above.remove_suffix(1);
  if (above.empty()) return false;
  if (ChildHeader(SplitLine(above, fmt, tctx).message)) return true;
  // A prefix the format does not split off (a container runtime's stamp) is
  // as wide on the line above as before the header's "Traceback".
  size_t width = header.find(kHeaderStem);
  return width != std::string_view::npos && width > 0 && width < above.size() &&
         ChildHeader(above.substr(width));
}

namespace {

// A message that says something failed: one of the words C and Python
// programs put in their error messages, and no warning.
bool ReadsAsError(std::string_view m) {
  std::string low(m);
  absl::AsciiStrToLower(&low);
  if (low.find("warn") != std::string::npos) return false;
  for (std::string_view word :
       {"error", "failed", "failure", "fatal", "cannot ", "can't ", "could not ", "couldn't ", "unable to"}) {
    if (low.find(word) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

std::string_view RecordAboveHeader(std::string_view header, std::string_view above, const LineFormat& fmt,
                                   const TimeContext& tctx) {
  if (!above.empty() && above.back() == '\n') above.remove_suffix(1);
  if (!above.empty() && above.back() == '\r') above.remove_suffix(1);
  if (above.empty() || UnderChildHeader(header, above, fmt, tctx)) return {};
  LineView v = SplitLine(above, fmt, tctx);
  if (!SameStream(v.attr, SplitLine(header, fmt, tctx).attr)) return {};
  std::string_view m = RightTrimmed(v.message);
  const std::string_view whole = m;
  // A prefix the format does not split off (a container runtime's stamp, or
  // a formatter's that it writes on every line of a record, vLLM's "ERROR
  // 05-23 09:31:47 [core.py:396] ") is as wide on the line above as before
  // the header's "Traceback".
  size_t width = header.find(kHeaderStem);
  if (width != std::string_view::npos && width > 0 && width < m.size() && m.size() == RightTrimmed(above).size()) {
    m = m.substr(width);
  }
  m = m.substr(std::min(m.find_first_not_of(" \t"), m.size()));
  if (m.empty()) return {};
  // The level such a prefix names is the record's.
  const std::string_view cut_prefix = whole.substr(0, whole.size() - m.size());
  // traceback.py's lines between chained exceptions end in ':' too.
  if (m.starts_with("During handling of the above exception") ||
      m.starts_with("The above exception was the direct cause")) {
    return {};
  }
  std::string_view level = LevelName(m);
  if (level.empty()) level = LevelName(cut_prefix);
  if (level == "ERROR" || level == "CRITICAL" || (level.empty() && m.back() == ':')) return above;
  // logging's default format and its lastResort handler write a record's
  // message bare ("%(message)s"), its exc_info traceback right under it
  // (bitsandbytes' "Could not load bitsandbytes native library: <error>"):
  // a bare line that reads as an error (ReadsAsError) is that record.
  if (level.empty() && ReadsAsError(m)) return above;
  return {};
}

std::string_view ErrorMessageAbove(std::string_view report, std::string_view above, const LineFormat& fmt,
                                   const TimeContext& tctx) {
  if (!above.empty() && above.back() == '\n') above.remove_suffix(1);
  if (!above.empty() && above.back() == '\r') above.remove_suffix(1);
  if (above.empty()) return {};
  LineView v = SplitLine(above, fmt, tctx);
  if (!SameStream(v.attr, SplitLine(report, fmt, tctx).attr)) return {};
  std::string_view m = RightTrimmed(v.message);
  m = m.substr(std::min(m.find_first_not_of(" \t"), m.size()));
  // A line that ends in ':' introduces the report under it (glog's "The
  // detail failure signal is:" over "*** Aborted at ..."): it says no cause.
  if (m.size() < 8 || m.starts_with("File \"") || m.back() == ':') return {};
  std::string low(m);
  absl::AsciiStrToLower(&low);
  // Another crash report (a second rank's, the same report twice) says no more.
  for (std::string_view crash : {"segmentation fault", "core dumped", "mpi_abort", "aborted", "abort trap"}) {
    if (low.find(crash) != std::string::npos) return {};
  }
  return ReadsAsError(m) ? above : std::string_view{};
}

size_t CutBeforeTraceback(std::string_view buffered, size_t cut) {
  const size_t from = cut > kTracebackWindow ? cut - kTracebackWindow : 0;
  size_t h = buffered.substr(from, cut - from).rfind(kHeaderStem);
  if (h == std::string_view::npos) return cut;
  h += from;
  size_t nl = h == 0 ? std::string_view::npos : buffered.rfind('\n', h - 1);
  return nl == std::string_view::npos ? 0 : nl + 1;
}

bool MayEndTraceback(std::string_view line) {
  // One pass over the line for three byte pairs, not a find per word:
  // "rr" stands in "Error", "error:" (one byte in) and "Interrupt" (four
  // in), "Ex" starts "Exception" and "Exit", "Fa" starts "Failure". Three
  // pairs for the six words, not one a word's start: a dense log's every
  // matched line goes through this test.
  auto at = [&](size_t start, std::string_view w) { return line.substr(start, w.size()) == w; };
  bool found = false;
  ForEachPairStartFast<false, BytePair{'r', 'r'}, BytePair{'E', 'x'}, BytePair{'F', 'a'}>(line, 0, [&](size_t i) {
    if (line[i] == 'r') {
      found = (i >= 1 && (at(i - 1, "Error") || at(i - 1, "error:"))) || (i >= 4 && at(i - 4, "Interrupt"));
    } else {
      found = at(i, "Exception") || at(i, "Exit") || at(i, "Failure");
    }
    return found;
  });
  return found;
}

std::optional<TracebackFold> FoldTraceback(std::string_view window, bool window_at_source_start,
                                           std::string_view line, const LineFormat& fmt,
                                           const TimeContext& tctx, const AfterSplits* splits,
                                           size_t splits_at) {
  if (fmt.json) return std::nullopt;
  // A line's split as FindExceptionLine made it, when it read the line.
  auto split_of = [&](std::string_view l) {
    const size_t at = static_cast<size_t>(l.data() - window.data());
    if (splits != nullptr && at >= splits_at) {
      const auto& ls = splits->lines;
      auto it = std::lower_bound(ls.begin(), ls.end(), at - splits_at,
                                 [](const std::pair<size_t, Attribution>& e, size_t o) { return e.first < o; });
      if (it != ls.end() && it->first == at - splits_at) return LineAsMessage(l, it->second);
    }
    return WalkSplit(l, fmt, tctx);
  };
  // No fold without a frame, and a frame's message holds `File "`. Without
  // escapes in the window each of its lines is its own message, so a window
  // without the words holds no frame: the walk below would split every line
  // of it (a dense log's 8 KiB of other ranks' lines, ~40 of them) to find
  // none.
  if (window.find("File \"") == std::string_view::npos && !HasEscapes(window)) return std::nullopt;
  const Attribution mine = StreamOf(line, WalkSplit(line, fmt, tctx), fmt, tctx);
  std::vector<std::string> frames;  // innermost first while walking back
  int gap = 0;
  bool below_caret = false;  // the stream's line below (seen last) was a caret line
  enum class End { kHeader, kGap, kWindow } end = End::kWindow;
  size_t top = window.size();  // start of the outermost traceback line seen
  std::string_view rest = window;
  if (!rest.empty() && rest.back() == '\n') rest.remove_suffix(1);
  // A bare exception line can end a record whose first line, the header,
  // has the prefix: taken when no other stream's line came in between.
  const bool bare = !mine.rank && mine.host.empty();
  bool others = false;
  std::optional<Attribution> header_attr;
  Attribution task;  // the header's, when it is a Ray task's
  // The level of a log record that printed the header after its own message
  // on one line ("ERROR x.py:111 -- ... actor:Traceback (most recent call
  // last):", a record whose message ends in traceback.format_exc()): that
  // record logged the traceback, not the line above it.
  std::optional<std::string_view> header_record_level;
  while (!rest.empty()) {
    size_t nl = rest.rfind('\n');
    bool first = nl == std::string_view::npos;
    if (first && !window_at_source_start) break;  // a partial line
    std::string_view l = first ? rest : rest.substr(nl + 1);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    LineView v = split_of(l);
    Attribution line_task;
    const Attribution stream = StreamOf(l, v, fmt, tctx, &line_task);
    const bool same = SameStream(stream, mine);
    // Ray prints a task's header where that task's own traceback said
    // "Traceback (most recent call last):": the frames under it ran in the
    // process it names, wherever the driver printed them.
    const bool task_header = !line_task.host.empty();
    if ((same || (bare && !others && !frames.empty())) &&
        (task_header || v.message.find(kHeader) != std::string_view::npos)) {
      end = End::kHeader;
      top = static_cast<size_t>(l.data() - window.data());
      if (size_t at = v.message.find(kHeader); at != std::string_view::npos && at > 0) {
        if (std::string_view level = LevelName(v.message.substr(0, at)); !level.empty()) {
          header_record_level = level;
        }
      }
      if (task_header) {
        task = std::move(line_task);
      } else if (!same) {
        header_attr = v.attr;
      }
      break;
    }
    if (!same) others = true;
    if (same) {
      std::optional<std::string> fr = ParseFrame(v.message);
      if (!fr) fr = ParseFlatFrame(v.message);  // pasted flat
      const bool over_caret = below_caret;
      below_caret = false;
      if (fr) {
        frames.push_back(std::move(*fr));
        gap = 0;
        top = static_cast<size_t>(l.data() - window.data());
      } else if (CodeDisplayLine(v.message, over_caret)) {
        // Walking up, the code line a caret line marks is the one above it.
        below_caret = CaretLine(v.message) || (over_caret && ElidedLines(v.message));
      } else if (++gap > kMaxGap) {
        end = End::kGap;
        break;
      }
    }
    if (first) break;
    rest = rest.substr(0, nl);
  }
  // Frames with unrelated lines above them are not a traceback; frames that
  // run past the window's start are one, cut.
  if (frames.empty() || end == End::kGap) return std::nullopt;
  bool header = end == End::kHeader;
  TracebackFold out;
  out.complete = header;
  out.span = window.size() - top;
  out.frame_count = frames.size();
  out.raised_at = frames.front();
  if (header) {
    out.logged_level =
        header_record_level
            ? std::string(*header_record_level == "WARNING" ? "WARNING" : "")
            : LoggedLevel(window, top, window_at_source_start, header_attr.value_or(mine), fmt, tctx);
  }
  out.header_attr = std::move(header_attr);
  out.task_host = std::move(task.host);
  out.task_pid = task.pid;
  size_t keep = std::min(frames.size(), kTracebackMaxFrames);
  if (!header) {
    out.frames = "... earlier frames > ";
  } else if (keep < frames.size()) {
    out.frames = StrCat("... ", frames.size() - keep, " earlier frames > ");
  }
  for (size_t i = keep; i-- > 0;) {
    out.frames += frames[i];
    if (i > 0) out.frames += " > ";
  }
  return out;
}

namespace traceback_internal {
void UseSplitMemo(bool on) { split_memo_on = on; }
}  // namespace traceback_internal

}  // namespace faultline
