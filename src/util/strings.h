// String helpers that take std::string_view. Debian's Abseil (20220623) is
// built with its own absl::string_view type, not an alias of
// std::string_view, so absl::StrCat, absl::SimpleAtoi and friends reject
// std::string_view arguments. These small replacements keep the code in
// standard types; Abseil stays for Status/StatusOr.
#ifndef FAULTLINE_UTIL_STRINGS_H_
#define FAULTLINE_UTIL_STRINGS_H_

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace faultline {
namespace strings_internal {

inline void AppendOne(std::string& out, std::string_view s) { out.append(s.data(), s.size()); }
inline void AppendOne(std::string& out, const std::string& s) { out.append(s); }
inline void AppendOne(std::string& out, const char* s) { out.append(s ? s : "(null)"); }
inline void AppendOne(std::string& out, char* s) { out.append(s ? s : "(null)"); }
inline void AppendOne(std::string& out, absl::string_view s) { out.append(s.data(), s.size()); }
inline void AppendOne(std::string& out, char c) { out.push_back(c); }
inline void AppendOne(std::string& out, bool b) { out.append(b ? "true" : "false"); }

template <typename T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char>)
void AppendOne(std::string& out, T v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

template <typename T>
  requires std::is_floating_point_v<T>
void AppendOne(std::string& out, T v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, static_cast<double>(v));
  out.append(buf, r.ptr);
}

}  // namespace strings_internal

template <typename... A>
void StrAppend(std::string* out, const A&... a) {
  (strings_internal::AppendOne(*out, a), ...);
}

template <typename... A>
std::string StrCat(const A&... a) {
  std::string out;
  StrAppend(&out, a...);
  return out;
}

template <typename Range>
std::string StrJoin(const Range& r, std::string_view sep) {
  std::string out;
  bool first = true;
  for (const auto& x : r) {
    if (!first) out.append(sep.data(), sep.size());
    first = false;
    strings_internal::AppendOne(out, x);
  }
  return out;
}

inline std::string_view ToStd(absl::string_view s) { return {s.data(), s.size()}; }
inline absl::string_view ToAbsl(std::string_view s) { return {s.data(), s.size()}; }
// The message of a status as a std::string.
inline std::string StatusMessage(const absl::Status& s) { return std::string(s.message()); }

// Whole-string integer/float parsing (no leading/trailing junk, no spaces).
inline bool ParseInt64(std::string_view s, int64_t* out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && !s.empty();
}
inline bool ParseDouble(std::string_view s, double* out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && !s.empty();
}

}  // namespace faultline

#endif  // FAULTLINE_UTIL_STRINGS_H_
