// Seams inside the timeparse module: the general paths its shortcuts must
// agree with, for the tests that compare the two on every stamp form.
//
// Thread-safety: as timeparse.h -- pure functions.
#ifndef FAULTLINE_TIMEPARSE_TIMEPARSE_INTERNAL_H_
#define FAULTLINE_TIMEPARSE_TIMEPARSE_INTERNAL_H_

#include <optional>
#include <string_view>

#include "timeparse/timeparse.h"

namespace faultline::internal {

// ParseLineTime without its shortcut for the common glog stamp
// "I1102 13:46:41.123456": every recogniser's general path.
std::optional<ParsedTime> ParseLineTimeGeneral(std::string_view line, const TimeContext& ctx);

// FindMonotonic with its candidates found by memchr, byte by byte.
std::optional<double> FindMonotonicBytewise(std::string_view line);

}  // namespace faultline::internal

#endif  // FAULTLINE_TIMEPARSE_TIMEPARSE_INTERNAL_H_
