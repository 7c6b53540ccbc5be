#include "scan/traceback.h"

#include <vector>

#include "util/bytescan.h"
#include "util/strings.h"

namespace faultline {
namespace {

constexpr std::string_view kHeader = "Traceback (most recent call last):";
// Non-frame lines allowed between two frames, or between the last frame and
// the exception line: the code line, Python 3.11's caret line, a note.
constexpr int kMaxGap = 3;

// `  File "/w/train.py", line 212, in main` -> "/w/train.py:212 in main".
std::optional<std::string> ParseFrame(std::string_view s) {
  size_t f = s.find("File \"");
  if (f == std::string_view::npos) return std::nullopt;
  // Python indents frames by two spaces after whatever prefix the line has.
  if (f < 2 || s[f - 1] != ' ' || s[f - 2] != ' ') return std::nullopt;
  size_t name_start = f + 6;
  size_t q = s.find("\", line ", name_start);
  if (q == std::string_view::npos) return std::nullopt;
  std::string_view file = s.substr(name_start, q - name_start);
  size_t num_start = q + 8;
  size_t num_end = num_start;
  while (num_end < s.size() && s[num_end] >= '0' && s[num_end] <= '9') ++num_end;
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

bool SameStream(const Attribution& a, const Attribution& b) {
  return a.rank == b.rank && a.host == b.host;
}

}  // namespace

bool MayEndTraceback(std::string_view line) {
  // One pass over the line for the words' first two bytes, not a find per word.
  static constexpr std::string_view kWords[] = {"Error", "Exception", "Interrupt", "Exit", "error:", "Failure"};
  bool found = false;
  ForEachPairStart<false, BytePair{'E', 'r'}, BytePair{'E', 'x'}, BytePair{'I', 'n'}, BytePair{'e', 'r'},
                   BytePair{'F', 'a'}>(line, 0, [&](size_t i) {
    for (std::string_view w : kWords) found |= line.substr(i, w.size()) == w;
    return found;
  });
  return found;
}

std::optional<TracebackFold> FoldTraceback(std::string_view window, bool window_at_source_start,
                                           std::string_view line, const LineFormat& fmt,
                                           const TimeContext& tctx) {
  if (fmt.json) return std::nullopt;
  const Attribution mine = SplitLine(line, fmt, tctx).attr;
  std::vector<std::string> frames;  // innermost first while walking back
  int gap = 0;
  enum class End { kHeader, kGap, kWindow } end = End::kWindow;
  size_t top = window.size();  // start of the outermost traceback line seen
  std::string_view rest = window;
  if (!rest.empty() && rest.back() == '\n') rest.remove_suffix(1);
  while (!rest.empty()) {
    size_t nl = rest.rfind('\n');
    bool first = nl == std::string_view::npos;
    if (first && !window_at_source_start) break;  // a partial line
    std::string_view l = first ? rest : rest.substr(nl + 1);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    LineView v = SplitLine(l, fmt, tctx);
    if (SameStream(v.attr, mine)) {
      if (v.message.find(kHeader) != std::string_view::npos) {
        end = End::kHeader;
        top = static_cast<size_t>(l.data() - window.data());
        break;
      }
      if (auto fr = ParseFrame(v.message)) {
        frames.push_back(std::move(*fr));
        gap = 0;
        top = static_cast<size_t>(l.data() - window.data());
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

}  // namespace faultline
