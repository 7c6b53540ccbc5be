// A seam between the timeparse module and the line splitter's memo of a
// line's time by its shape (scan/line_format.cc): which of ParseLineTime's
// refusals depend on a line's opening bytes alone.
//
// Thread-safety: as timeparse.h -- pure functions.
#ifndef FAULTLINE_TIMEPARSE_OPENING_H_
#define FAULTLINE_TIMEPARSE_OPENING_H_

#include <string_view>

namespace faultline {

// Whether ParseLineTime refuses `line` by its first two bytes alone (a
// launcher prefix's "[r" of "[rank3]:"): then it refuses every line that
// opens with the same two.
bool LineTimeRefusedAtOpening(std::string_view line);

}  // namespace faultline

#endif  // FAULTLINE_TIMEPARSE_OPENING_H_
