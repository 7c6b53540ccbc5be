#include "scan/source_framing.h"

#include "scan/traceback.h"

namespace faultline {

std::string SourceFraming::CompleteTracebackWindow(std::string_view cut_window, bool* at_start) const {
  std::string window = recent_;
  window.append(cut_window);
  // `recent_` holds the whole source so far while it is shorter than the
  // window: a short window starts at the source's first byte.
  *at_start = window.size() < kTracebackWindow;
  if (!*at_start) window.erase(0, window.size() - kTracebackWindow);
  return window;
}

void SourceFraming::AfterChunk(std::string_view tail) {
  recent_.append(tail);
  if (recent_.size() > kTracebackWindow) recent_.erase(0, recent_.size() - kTracebackWindow);
}

}  // namespace faultline
