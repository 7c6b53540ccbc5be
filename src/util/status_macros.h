// Tiny status helpers: Debian's Abseil (20220623) predates
// ABSL_RETURN_IF_ERROR and ABSL_ASSIGN_OR_RETURN.
#ifndef FAULTLINE_UTIL_STATUS_MACROS_H_
#define FAULTLINE_UTIL_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define FL_RETURN_IF_ERROR(expr)               \
  do {                                         \
    ::absl::Status fl_status_ = (expr);        \
    if (!fl_status_.ok()) return fl_status_;   \
  } while (0)

#define FL_STATUS_CONCAT_INNER_(a, b) a##b
#define FL_STATUS_CONCAT_(a, b) FL_STATUS_CONCAT_INNER_(a, b)

#define FL_ASSIGN_OR_RETURN(lhs, expr) \
  FL_ASSIGN_OR_RETURN_IMPL_(FL_STATUS_CONCAT_(fl_statusor_, __LINE__), lhs, expr)

#define FL_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return std::move(tmp).status();  \
  lhs = std::move(tmp).value()

#endif  // FAULTLINE_UTIL_STATUS_MACROS_H_
