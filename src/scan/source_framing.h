// How one source's bytes are framed into what the scanner matches: its line
// format, where its chunks may be cut (never inside a run of CRI partial or
// hard-wrapped lines), when a chunk is matched on derived records (JSON
// messages, joined runs) instead of its physical lines, and the source's
// last bytes that complete a traceback window cut at a chunk's start. One
// object per source owns all of these decisions, so every chunking (mapped
// chunks, byte ranges, streams, pushed streams) makes them the same way.
//
// Thread-safety: the const methods may be called from worker threads while
// no one calls the others; Detect and AfterChunk run on the merging thread.
#ifndef FAULTLINE_SCAN_SOURCE_FRAMING_H_
#define FAULTLINE_SCAN_SOURCE_FRAMING_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "scan/line_format.h"
#include "scan/traceback.h"

namespace faultline {

// Whether a source's first lines are a kernel log's: of the non-empty lines
// in its first 4 KiB (what every way of reading a source sees of it), at
// least three and three in four carry a kernel stamp (monotonic "[secs]",
// dmesg -T/-H) or a syslog header followed by "kernel:" (kern.log,
// journalctl -k).
bool LooksLikeKernelLog(std::string_view head);

class SourceFraming {
 public:
  // The format, from the source's first bytes, and whether the source is a
  // kernel log (see LooksLikeKernelLog).
  void Detect(std::string_view head) {
    format_ = DetectLineFormat(head);
    kernel_log_ = LooksLikeKernelLog(head);
  }
  const LineFormat& format() const { return format_; }
  bool kernel_log() const { return kernel_log_; }

  // Whether the chunk holds a run of physical lines that make one record
  // (then it is matched on JoinPartials' records).
  bool HasRuns(std::string_view chunk) const { return format_.joins() && HasPartial(format_, chunk); }
  // How the chunk is matched: on derived records -- JSON messages, joined
  // runs, lines without their terminal escapes, the first that applies --
  // or as it is. The answer goes with the chunk to ProcessBuffer, which
  // would otherwise look for runs and escapes again.
  enum class Derivation : uint8_t { kUnknown, kAsIs, kJson, kRuns, kEscapes };
  // `newlines`, when given: the chunk's newline index, complete when the
  // answer is kAsIs and the escape test read the chunk 128 bytes at a time
  // (HasEscapes with an index).
  Derivation HowDerived(std::string_view chunk, NewlineIndex* newlines = nullptr) const {
    if (newlines != nullptr) newlines->complete = false;
    if (format_.json) return Derivation::kJson;
    if (HasRuns(chunk)) return Derivation::kRuns;
    const bool escapes = newlines != nullptr ? HasEscapes(chunk, newlines) : HasEscapes(chunk);
    return escapes ? Derivation::kEscapes : Derivation::kAsIs;
  }

  // A cut of buffered stream bytes at `cut` (a line start), moved back so
  // that a run waits for the line ending it, and a traceback's header for
  // the lines after it (CutBeforeTraceback); 0 when nothing can be cut yet.
  size_t StreamCut(std::string_view buffered, size_t cut) const {
    if (format_.joins()) cut = CutBack(format_, buffered, cut);
    return format_.json ? cut : CutBeforeTraceback(buffered, cut);
  }
  // A chunk boundary or a range's end (a line start in `all`), moved
  // forward past a run: the run belongs to the piece holding its first line.
  uint64_t BoundaryAfter(std::string_view all, uint64_t pos) const {
    return format_.joins() ? CutForward(format_, all, pos) : pos;
  }

  // A traceback window cut at a chunk's start, completed with the source's
  // bytes before the chunk; *at_start: the window reaches the source's
  // first byte.
  std::string CompleteTracebackWindow(std::string_view cut_window, bool* at_start) const;
  // Remembers the source's last bytes after a chunk merged (its tail,
  // which it may take).
  void AfterChunk(std::string&& tail);

 private:
  LineFormat format_;
  bool kernel_log_ = false;
  std::string recent_;  // the source's last kTracebackWindow bytes merged so far
};

}  // namespace faultline

#endif  // FAULTLINE_SCAN_SOURCE_FRAMING_H_
