#include "scan/source_framing.h"

#include <optional>

#include "scan/traceback.h"
#include "timeparse/timeparse.h"

namespace faultline {

bool LooksLikeKernelLog(std::string_view head) {
  head = head.substr(0, 4096);
  const TimeContext tctx;
  int lines = 0, kernel = 0;
  // Whole lines not yet judged: once even all of them being kernel lines
  // could not make three in four, the answer is no (a rank's log is told
  // after a few lines, not its whole head; every source asks).
  int left = 0;
  for (size_t at = head.find('\n'); at != std::string_view::npos; at = head.find('\n', at + 1)) ++left;
  size_t pos = 0;
  while (pos < head.size()) {
    size_t nl = head.find('\n', pos);
    if (nl == std::string_view::npos) break;  // a cut last line is not judged
    std::string_view line = head.substr(pos, nl - pos);
    pos = nl + 1;
    --left;
    if (line.empty() || line == "\r") continue;
    if (kernel + left + 1 < 3 * (lines - kernel)) return false;
    ++lines;
    std::optional<ParsedTime> t = ParseLineTime(line, tctx);
    if (!t) continue;
    const bool stamp = t->monotonic_s || t->delta_s || t->format == TimeFormat::kKernelMonotonic ||
                       t->format == TimeFormat::kDmesgCtime;
    const bool syslog_kernel = t->format == TimeFormat::kSyslog &&
                               line.substr(0, 128).find(" kernel: ") != std::string_view::npos;
    if (stamp || syslog_kernel) ++kernel;
  }
  return kernel >= 3 && kernel * 4 >= lines * 3;
}

std::string SourceFraming::CompleteTracebackWindow(std::string_view cut_window, bool* at_start) const {
  std::string window = recent_;
  window.append(cut_window);
  // `recent_` holds the whole source so far while it is shorter than the
  // window: a short window starts at the source's first byte.
  *at_start = window.size() < kTracebackWindow;
  if (!*at_start) window.erase(0, window.size() - kTracebackWindow);
  return window;
}

void SourceFraming::AfterChunk(std::string&& tail) {
  // The first chunk's tail, when it is short enough to stay whole (a small
  // file's text), is taken, not copied: the merging thread copied 20,000
  // such files' text in a many-file archive.
  if (recent_.empty() && tail.size() <= kTracebackWindow) {
    recent_ = std::move(tail);
    return;
  }
  recent_.append(tail);
  if (recent_.size() > kTracebackWindow) recent_.erase(0, recent_.size() - kTracebackWindow);
}

}  // namespace faultline
