// A seam between AttributeLine's memo of whole lines (attribution.cc) and
// the line splitter (scan/line_format.cc), which keeps with each entry what
// it found of the line's time by the line's shape.
//
// Thread-safety: as AttributeLine -- the memo is per thread.
#ifndef FAULTLINE_ATTRIBUTION_LINE_MEMO_H_
#define FAULTLINE_ATTRIBUTION_LINE_MEMO_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "attribution/attribution.h"

namespace faultline {

// What a caller found of a line's time that every line the line memo takes
// for the same (equal to it but for a glog header's date and clock digits,
// which then begin at byte 2 or later) shares: where the stamp is read at
// its fixed offsets (0: not known yet) and the kernel monotonic stamp
// found before the date or after the clock. The caller fills it on one
// line of the entry and reads it on the others.
struct LineTimeShape {
  uint32_t stamp = 0;
  std::optional<double> monotonic_s;
};

// AttributeLine, and in *time_shape the memo entry's LineTimeShape when the
// line has one (a glog header's clock after the line's first two bytes,
// the memo on), else nullptr. It stays valid until this thread's next call
// of AttributeLine.
Attribution AttributeLine(std::string_view line, size_t* message_begin, LineTimeShape** time_shape);

}  // namespace faultline

#endif  // FAULTLINE_ATTRIBUTION_LINE_MEMO_H_
