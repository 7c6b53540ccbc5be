// JSON string escaping, one copy for the library and the CLI (which sees
// only the C ABI): quotes, backslashes and control bytes escaped; bytes that
// are not UTF-8 (a file name can be anything) become U+FFFD so the document
// stays valid JSON.
#ifndef FAULTLINE_UTIL_JSON_H_
#define FAULTLINE_UTIL_JSON_H_

#include <cstdio>
#include <string>
#include <string_view>

#include "util/utf8.h"

namespace faultline {

inline void AppendJsonString(std::string& out, std::string_view s) {
  out += '"';
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      // Paths and messages are bytes, not always UTF-8 (a file name on
      // Linux can be anything): invalid bytes become U+FFFD, so the
      // document stays valid JSON.
      size_t n = Utf8SequenceLength(s, i);
      if (n == 0) {
        out += "\xEF\xBF\xBD";
      } else {
        out.append(s.data() + i, n);
        i += n - 1;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

}  // namespace faultline

#endif  // FAULTLINE_UTIL_JSON_H_
