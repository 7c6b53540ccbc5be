// Names of the public status codes and the version string, for modules that
// write them without linking the C ABI shim.
#ifndef FAULTLINE_UTIL_FL_STATUS_H_
#define FAULTLINE_UTIL_FL_STATUS_H_

#include "faultline/faultline.h"

namespace faultline {

inline const char* StatusName(int rc) {
  switch (rc) {
    case FL_OK: return "FL_OK";
    case FL_DONE: return "FL_DONE";
    case FL_ERR_INVALID_ARG: return "FL_ERR_INVALID_ARG";
    case FL_ERR_NOMEM: return "FL_ERR_NOMEM";
    case FL_ERR_IO: return "FL_ERR_IO";
    case FL_ERR_PARSE: return "FL_ERR_PARSE";
    case FL_ERR_RULESET: return "FL_ERR_RULESET";
    case FL_ERR_RULESET_VERSION: return "FL_ERR_RULESET_VERSION";
    case FL_ERR_BUSY: return "FL_ERR_BUSY";
    case FL_ERR_BUFFER_TOO_SMALL: return "FL_ERR_BUFFER_TOO_SMALL";
    case FL_ERR_CANCELLED: return "FL_ERR_CANCELLED";
    case FL_ERR_INTERNAL: return "FL_ERR_INTERNAL";
    case FL_ERR_NOT_FOUND: return "FL_ERR_NOT_FOUND";
    default: return "FL_ERR_UNKNOWN";
  }
}

#define FL_STRINGIFY2_(x) #x
#define FL_STRINGIFY_(x) FL_STRINGIFY2_(x)
inline constexpr const char kVersionString[] = FL_STRINGIFY_(FL_VERSION_MAJOR) "." FL_STRINGIFY_(
    FL_VERSION_MINOR) "." FL_STRINGIFY_(FL_VERSION_PATCH);

}  // namespace faultline

#endif  // FAULTLINE_UTIL_FL_STATUS_H_
