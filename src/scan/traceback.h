// Folding of multi-line Python tracebacks into the exception line that ends
// them. A traceback arrives as a header, frames and code lines, then the
// exception line, which is the one a signal matches:
//
//   [rank3]: Traceback (most recent call last):
//   [rank3]:   File "/w/train.py", line 212, in <module>
//   [rank3]:     main()
//   [rank3]:   File "/w/train.py", line 180, in main
//   [rank3]:     loss.backward()
//   [rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ...
//
// The frames belong to that exception: FoldTraceback finds them in the bytes
// before the line and the scanner adds them to its evidence as the fields
// `raised_at` (the innermost frame) and `traceback` (the frames, outermost
// first). Ranks print their tracebacks at the same moment into one file, so
// lines attributed to another rank or host than the exception line are
// skipped, not taken.
#ifndef FAULTLINE_SCAN_TRACEBACK_H_
#define FAULTLINE_SCAN_TRACEBACK_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attribution/attribution.h"
#include "scan/line_format.h"

namespace faultline {

// Bytes before a line the scanner keeps for folding (the traceback must start
// within them; deeper frames are counted as "earlier frames").
inline constexpr size_t kTracebackWindow = 8 << 10;
// Frames listed in `traceback`; the innermost are kept.
inline constexpr size_t kTracebackMaxFrames = 12;

struct TracebackFold {
  std::string raised_at;  // "file:line in func" of the innermost frame
  std::string frames;     // "a.py:1 in f > b.py:2 in g > ..."
  size_t frame_count = 0;
  bool complete = false;  // the header was found (the frames are all there)
  // Bytes from the start of the traceback's first line (its header, or the
  // outermost frame in the window) to the start of the exception line.
  size_t span = 0;
  // "WARNING" when the log record right above the header is a warning:
  // Python's logging prints a record's exc_info under its message, so the
  // traceback is an exception the program caught and logged (xFormers' "A
  // matching Triton is not available" over its import probe's
  // ModuleNotFoundError). Empty otherwise.
  std::string logged_level;
  // The header's attribution when the header alone carries one: a logger
  // record holding the traceback in its message prints its prefix on its
  // first line only ("[2025-12-26 13:13:14 TP0] Scheduler hit an exception:
  // Traceback (most recent call last):", then bare frames and the bare
  // exception line). The exception is that record's, so its line takes the
  // header's rank and host. Unset when the exception line has its own.
  std::optional<Attribution> header_attr;
  // The host and pid a Ray task header heading the traceback names
  // ("ray::<title> (pid=N, ip=A, ...)", which RayTaskError's message puts
  // in place of the task's "Traceback (most recent call last):"): the
  // frames ran, and the exception line was raised, in that process. Empty
  // when the header is Python's own.
  std::string task_host;
  std::optional<int64_t> task_pid;
};

// The exception line that ends a traceback: which line after the header it
// is (0: the first), where it starts and ends in the bytes after the header,
// and its class and message ("_queue.Empty", "" for `_queue.Empty`).
struct ExceptionLine {
  size_t index = 0;
  size_t begin = 0, end = 0;
  std::string exception, message;
};

// The attributions FindExceptionLine read for the lines after a header, by
// each line's offset in `after` (increasing; only lines that hold no
// escape, whose message is the line itself). FoldTraceback, given them for
// a window that holds the same bytes, takes a line's from them instead of
// splitting it again: the header's evidence is folded in the scan's second
// pass over the lines its first pass read.
struct AfterSplits {
  std::vector<std::pair<size_t, Attribution>> lines;
};

// The exception line of the traceback whose header line is `header`, in
// `after` (the lines after the header; a partial last line is not read):
// the first line of the header's stream after one frame at least, its code
// lines, caret lines and "[Previous line repeated ...]". Lines of other
// ranks and hosts in between are skipped. nullopt when the frames end in
// something that is no exception line (a cut excerpt, another log record),
// when the lines run out first, and when the exception is chained to a
// traceback after it ("During handling of the above exception ..."): that
// one's header reads the exception the program ended on.
// `ends_in_frames`, when given, is set when `after` runs out while the
// traceback's frames go on (one frame at least, nothing else of its stream
// after them): an excerpt or a log cut before the exception line. Not for a
// traceback whose outermost frame is a `__del__`: CPython printed that
// exception and dropped it. Also set when no line of the header's stream
// follows it at all (cut right below the header). For IPython's header (which names the class),
// set when `after` runs out in its frames (an arrow line "----> 1 f()" seen,
// or a frame's heading "Cell In[5], line 32" the first line under the header).
std::optional<ExceptionLine> FindExceptionLine(std::string_view header, std::string_view after,
                                               const LineFormat& fmt, const TimeContext& tctx,
                                               bool* ends_in_frames = nullptr,
                                               AfterSplits* splits = nullptr);

// Whether the line above a traceback's header says whose exception it is
// when that is not the program's: threading's "Exception in thread
// <name>:", multiprocessing's "Process <name>:". The exception ended that
// thread or child; whether the job went on is the parent's to say. `header`
// is the header's line.
bool UnderChildHeader(std::string_view header, std::string_view above, const LineFormat& fmt,
                      const TimeContext& tctx);

// The record a traceback cut in its frames is the exc_info of: the line
// right above its header (`above`, the header's line `header`) when it is of
// the header's stream and reads as a logged message that prints a traceback
// under it. logging's Formatter.format writes a record's message, then its
// formatted exc_info from the next line (Logger.exception, exc_info=True),
// and loguru's logger.exception does the same: a record at ERROR or CRITICAL
// level, or a message with no level name that ends in ':' (it introduces
// what follows). Not CPython's own lines between chained tracebacks, nor a
// thread's or child process's header (UnderChildHeader). With no exception
// line, that record says what failed. Empty when there is none.
std::string_view RecordAboveHeader(std::string_view header, std::string_view above, const LineFormat& fmt,
                                   const TimeContext& tctx);

// The line right above a crash or abort report (`above`, the report's line
// `report`), without its line end, when it is of the report's stream and
// reads as an error message: its message names an error or a failure
// ("error", "failed", "failure", "fatal", "cannot", "could not", "unable
// to", any case)
// and no warning, and is no traceback frame, no report of the same kind
// and no line ending in ':' (one that introduces the report). Empty when
// it is not.
std::string_view ErrorMessageAbove(std::string_view report, std::string_view above, const LineFormat& fmt,
                                   const TimeContext& tctx);

// A stream's cut at `cut` (a line start of `buffered`) moved back to the
// start of the line of the last traceback header in the kTracebackWindow
// bytes before it: the header's evidence is the exception line after its
// frames (FindExceptionLine), which the chunk holding the header must hold,
// for any flushing. 0 when the header is on the first line.
size_t CutBeforeTraceback(std::string_view buffered, size_t cut);

// Whether `line` may end a traceback: a cheap test on the text, so that the
// scanner copies a window only for such lines.
bool MayEndTraceback(std::string_view line);

// The traceback that ends right before `line`, found in `window` (the bytes
// up to the line's start; when `window_at_source_start` is false its first,
// partial line is ignored). Lines are read with the source's format to
// compare their rank and host with the exception line's. nullopt when no
// traceback header with at least one frame ends right before the line.
// `splits` (when given): FindExceptionLine's for the bytes of `window` from
// `splits_at` on (the text after the header it read).
std::optional<TracebackFold> FoldTraceback(std::string_view window, bool window_at_source_start,
                                           std::string_view line, const LineFormat& fmt,
                                           const TimeContext& tctx, const AfterSplits* splits = nullptr,
                                           size_t splits_at = 0);

namespace traceback_internal {
// Whether the walks above share one split of a line between them (on by
// default; per thread). Off, every walk splits each line it reads, as
// before the sharing: for tests that compare the two.
void UseSplitMemo(bool on);
}  // namespace traceback_internal

}  // namespace faultline

#endif  // FAULTLINE_SCAN_TRACEBACK_H_
