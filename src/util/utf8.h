// UTF-8 for text that comes from logs and file names, which are bytes: the
// one definition of a well-formed sequence, and the cleaner that makes
// evidence text valid UTF-8. The scanner (evidence text and captures) and
// the report writer (JSON strings) both use these.
//
// Thread-safety: pure functions.
#ifndef FAULTLINE_UTIL_UTF8_H_
#define FAULTLINE_UTIL_UTF8_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace faultline {

// Length of the well-formed UTF-8 sequence at s[i] (1-4), or 0 when the
// bytes there are not one (RFC 3629: no overlongs, surrogates or > U+10FFFF).
inline size_t Utf8SequenceLength(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >= 0xC2 && c <= 0xDF) ? 2 : (c >= 0xE0 && c <= 0xEF) ? 3
           : (c >= 0xF0 && c <= 0xF4) ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  unsigned char c1 = static_cast<unsigned char>(s[i + 1 < s.size() ? i + 1 : i]);
  if (n == 3 && ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0))) return 0;
  if (n == 4 && ((c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 >= 0x90))) return 0;
  return n;
}

// Makes text valid UTF-8 (invalid bytes and NULs become U+FFFD), drops one
// trailing '\r', and cuts it to max_bytes at a character boundary.
inline std::string CleanUtf8(std::string_view s, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(s.size(), max_bytes));
  size_t i = 0;
  while (i < s.size()) {
    // Runs of plain ASCII (1..0x7F, most of a log) go over in bulk, eight
    // bytes per test; a trailing '\r' is left to the byte loop.
    size_t run = i, limit = std::min(s.size(), i + (max_bytes - out.size()));
    for (uint64_t w; run + 8 <= limit; run += 8) {
      std::memcpy(&w, s.data() + run, 8);
      constexpr uint64_t kLow = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
      if ((w & kHigh) != 0 || ((w - kLow) & ~w & kHigh) != 0) break;  // a byte >= 0x80 or NUL
    }
    while (run < limit && static_cast<unsigned char>(s[run]) - 1u < 0x7Fu) ++run;
    if (run == s.size() && run > i && s[run - 1] == '\r') --run;
    if (run > i) {
      out.append(s.data() + i, run - i);
      i = run;
      if (i >= s.size() || out.size() >= max_bytes) break;
    }
    if (s[i] == '\r' && i + 1 == s.size()) break;
    const size_t n = s[i] == '\0' ? 0 : Utf8SequenceLength(s, i);
    const bool ok = n > 0;
    std::string_view piece = ok ? s.substr(i, n) : std::string_view("\xEF\xBF\xBD");
    if (out.size() + piece.size() > max_bytes) break;
    out.append(piece);
    i += ok ? n : 1;
  }
  return out;
}

// Appends code point `cp` as UTF-8 (U+FFFD for surrogates and beyond
// U+10FFFF).
inline void AppendUtf8(uint32_t cp, std::string& out) {
  if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) cp = 0xFFFD;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// True when all of s is well-formed UTF-8 (NUL included).
inline bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// A file name's bytes as valid UTF-8 that gives them all back: every byte
// that is not part of a well-formed sequence becomes "\xHH" (two lowercase
// hex digits) and a backslash becomes "\\"; the rest is unchanged. Undo:
// read "\\" as one backslash and "\xHH" as the byte HH.
inline std::string EscapeBytes(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      const unsigned char c = static_cast<unsigned char>(s[i]);
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
    } else if (s[i] == '\\') {
      out += "\\\\";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

// Text for a terminal or a line-oriented reader: control characters (C0
// and DEL) become "\n", "\r", "\t" or "\xHH", so a file name holding a
// newline cannot forge a line of a text report or an error message.
inline std::string EscapeControls(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != 0x7f) {
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace faultline

#endif  // FAULTLINE_UTIL_UTF8_H_
