#include "cli/args.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace faultline::cli {

bool ParseClockOffset(const char* v, std::string* host, double* seconds) {
  const char* eq = std::strrchr(v, '=');
  if (!eq || eq == v) return false;
  char* end = nullptr;
  double secs = std::strtod(eq + 1, &end);
  if (!end || *end || end == eq + 1) return false;
  // strtod also reads "nan", "inf" and 1e300, which the library refuses
  // (fl_session_options.clock_offsets): a usage error here, not an input error later.
  if (!std::isfinite(secs) || std::fabs(secs) > kMaxClockOffsetSeconds) return false;
  host->assign(v, static_cast<size_t>(eq - v));
  *seconds = secs;
  return true;
}

}  // namespace faultline::cli
