#include "cli/args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "faultline/faultline.h"

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

bool ParseDuration(const char* v, double lo, double hi, double* seconds) {
  char* end = nullptr;
  double x = std::strtod(v, &end);
  if (!end || end == v) return false;
  double scale = 1;
  if (std::strcmp(end, "ms") == 0) {
    scale = 1e-3;
  } else if (std::strcmp(end, "s") == 0 || !*end) {
    scale = 1;
  } else if (std::strcmp(end, "m") == 0) {
    scale = 60;
  } else if (std::strcmp(end, "h") == 0) {
    scale = 3600;
  } else {
    return false;
  }
  x *= scale;
  if (!std::isfinite(x) || x < lo || x > hi) return false;
  *seconds = x;
  return true;
}

bool ParseSize(const char* v, uint64_t lo, uint64_t hi, uint64_t* bytes) {
  if (*v < '0' || *v > '9') return false;  // strtoull takes "-1" and " 1"
  char* end = nullptr;
  errno = 0;
  unsigned long long n = std::strtoull(v, &end, 10);
  if (errno || !end || end == v) return false;
  int shift = 0;
  if (*end == 'K' || *end == 'k') {
    shift = 10;
  } else if (*end == 'M' || *end == 'm') {
    shift = 20;
  } else if (*end == 'G' || *end == 'g') {
    shift = 30;
  } else if (*end) {
    return false;
  }
  if (shift && end[1]) return false;
  if (n > (~0ull >> shift)) return false;
  uint64_t b = static_cast<uint64_t>(n) << shift;
  if (b < lo || b > hi) return false;
  *bytes = b;
  return true;
}

bool ParseByteSize(const char* v, uint64_t* bytes) {
  if (*v < '0' || *v > '9') return false;  // strtoull would take "-1" and " 1"
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (errno != 0 || end == v) return false;
  int shift = 0;
  switch (*end) {
    case '\0': break;
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    case 't': case 'T': shift = 40; break;
    default: return false;
  }
  if (*end != '\0') {
    ++end;
    if (std::strcmp(end, "") != 0 && std::strcmp(end, "iB") != 0 && std::strcmp(end, "B") != 0) return false;
  }
  constexpr uint64_t kMax = uint64_t{1} << 62;
  if (n == 0 || n > (kMax >> shift)) return false;
  *bytes = static_cast<uint64_t>(n) << shift;
  return true;
}

bool ParseSeconds(const char* v, double* seconds) {
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  if (end == v || *end != '\0' || !std::isfinite(s) || s <= 0 || s > 1e9) return false;
  *seconds = s;
  return true;
}

bool ParseJobState(const char* v, int32_t* state) {
  struct Name {
    const char* ours;
    const char* slurm;
    int32_t value;
  };
  static constexpr Name kNames[] = {
      {"completed", "COMPLETED", FL_JOB_COMPLETED}, {"failed", "FAILED", FL_JOB_FAILED},
      {"timeout", "TIMEOUT", FL_JOB_TIMEOUT},       {"cancelled", "CANCELLED", FL_JOB_CANCELLED},
      {"oom", "OUT_OF_MEMORY", FL_JOB_OOM},         {"node_fail", "NODE_FAIL", FL_JOB_NODE_FAIL},
      {"preempted", "PREEMPTED", FL_JOB_PREEMPTED}, {"running", "RUNNING", FL_JOB_RUNNING},
  };
  std::string_view s = v ? v : "";
  // sacct writes a cancellation with who did it: "CANCELLED by 1000".
  if (s.starts_with("CANCELLED by ")) s = "CANCELLED";
  for (const Name& n : kNames) {
    if (s == n.ours || s == n.slurm) {
      *state = n.value;
      return true;
    }
  }
  return false;
}

}  // namespace faultline::cli
