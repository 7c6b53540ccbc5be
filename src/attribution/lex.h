// Byte-level helpers shared by the attribution parsers. Everything here works
// on raw bytes with explicit bounds so that garbage, NUL bytes and invalid
// UTF-8 are just "not a match": no locale, no <cctype> (whose behaviour on
// negative chars is undefined), no allocation.
//
// Thread-safety: pure functions.
#ifndef FAULTLINE_ATTRIBUTION_LEX_H_
#define FAULTLINE_ATTRIBUTION_LEX_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace faultline::attribution_internal {

inline constexpr size_t kNpos = std::string_view::npos;

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
inline bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
inline bool IsAlpha(char c) { return IsLower(c) || IsUpper(c); }
inline bool IsAlnum(char c) { return IsAlpha(c) || IsDigit(c); }
inline bool IsWordChar(char c) { return IsAlnum(c) || c == '_'; }
inline bool IsHex(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
inline bool IsSpace(char c) { return c == ' ' || c == '\t'; }
// Characters of a hostname as log writers print them (RFC 1123 plus '_',
// which some container runtimes allow): a letter, a digit, '-', '.', '_'.
// Looked up in a table: HostTokenEnd tests each byte of every '[' and
// line start the launcher, NCCL and UCX prefix parsers try, ~4 calls a
// matched line.
inline constexpr std::array<bool, 256> kHostChars = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) {
    t[static_cast<size_t>(c)] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                                c == '-' || c == '.' || c == '_';
  }
  return t;
}();
inline bool IsHostChar(char c) { return kHostChars[static_cast<unsigned char>(c)]; }
inline char ToLower(char c) { return IsUpper(c) ? static_cast<char>(c + 32) : c; }

inline int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ToLower(a[i]) != ToLower(b[i])) return false;
  }
  return true;
}

// True when s[pos...] starts with `lit` (exact case). Out-of-range pos is
// simply false.
inline bool At(std::string_view s, size_t pos, std::string_view lit) {
  return pos <= s.size() && s.size() - pos >= lit.size() &&
         s.compare(pos, lit.size(), lit) == 0;
}

inline bool AtIgnoreCase(std::string_view s, size_t pos, std::string_view lit) {
  return pos <= s.size() && s.size() - pos >= lit.size() &&
         EqualsIgnoreCase(s.substr(pos, lit.size()), lit);
}

inline size_t SkipSpaces(std::string_view s, size_t pos) {
  while (pos < s.size() && IsSpace(s[pos])) ++pos;
  return pos;
}

// Parses 1..max_digits decimal digits at s[*pos] and advances *pos past them.
// More digits than max_digits is a mismatch (and *pos is left alone), which
// also rules out int64 overflow for max_digits <= 18.
inline std::optional<int64_t> ParseUint(std::string_view s, size_t* pos,
                                        size_t max_digits = 18) {
  size_t i = *pos;
  int64_t v = 0;
  while (i < s.size() && IsDigit(s[i])) {
    if (i - *pos >= max_digits) return std::nullopt;
    v = v * 10 + (s[i] - '0');
    ++i;
  }
  if (i == *pos) return std::nullopt;
  *pos = i;
  return v;
}

// Whole-string decimal parse, for path components and JSON strings.
inline std::optional<int64_t> ParseUintWhole(std::string_view s,
                                             size_t max_digits = 18) {
  size_t pos = 0;
  std::optional<int64_t> v = ParseUint(s, &pos, max_digits);
  if (!v || pos != s.size()) return std::nullopt;
  return v;
}

// Four decimal groups of 0-255 joined by `sep`: an IPv4 literal, or with
// '-' a machine named after its address ("10-12-3-162", as cloud images set
// it).
inline bool IsIpv4(std::string_view s, char sep = '.') {
  size_t pos = 0;
  for (int part = 0; part < 4; ++part) {
    if (part > 0) {
      if (pos >= s.size() || s[pos] != sep) return false;
      ++pos;
    }
    std::optional<int64_t> v = ParseUint(s, &pos, 3);
    if (!v || *v > 255) return false;
  }
  return pos == s.size();
}

}  // namespace faultline::attribution_internal

#endif  // FAULTLINE_ATTRIBUTION_LEX_H_
