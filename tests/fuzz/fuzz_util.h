// Helpers shared by the libFuzzer targets: the default ruleset loaded once, a
// per-process scratch directory (removed at exit), whole-file writes, and a
// little reader that turns the first bytes of an input into choices.
#ifndef FAULTLINE_TESTS_FUZZ_FUZZ_UTIL_H_
#define FAULTLINE_TESTS_FUZZ_FUZZ_UTIL_H_

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "ruleset/ruleset.h"

namespace faultline::fuzz {

// Aborts with a message: the fuzzer records the input as a crash.
[[noreturn]] inline void Die(const char* what, std::string_view detail = {}) {
  std::fprintf(stderr, "FUZZ CHECK FAILED: %s %.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}
#define FL_FUZZ_CHECK(cond, detail) \
  do {                              \
    if (!(cond)) ::faultline::fuzz::Die(#cond, (detail)); \
  } while (0)

inline std::shared_ptr<const Ruleset> DefaultRules() {
  static std::shared_ptr<const Ruleset> rs = [] {
    auto r = Ruleset::LoadDefault();
    if (!r.ok()) Die("cannot load the default ruleset", r.status().message());
    return *r;
  }();
  return rs;
}

// A directory private to this process, removed at exit.
inline const std::string& ScratchDir() {
  static const std::string dir = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "fl-fuzz-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) Die("mkdtemp failed");
    static std::string keep = tmpl;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(keep, ec);
    });
    return tmpl;
  }();
  return dir;
}

inline void WriteWholeFile(const std::string& path, std::string_view data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) Die("open for write failed", path);
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n <= 0) Die("write failed", path);
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

// Consumes the first bytes of an input as small integers.
class Choices {
 public:
  Choices(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  uint8_t Byte() { return p_ < end_ ? *p_++ : 0; }
  uint16_t U16() { return static_cast<uint16_t>(Byte() | (Byte() << 8)); }
  std::string_view Rest() const {
    return std::string_view(reinterpret_cast<const char*>(p_), static_cast<size_t>(end_ - p_));
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// Valid UTF-8 (what evidence text and captures promise).
inline bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >= 0xC2 && c <= 0xDF) ? 2 : (c >= 0xE0 && c <= 0xEF) ? 3
             : (c >= 0xF0 && c <= 0xF4) ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    if (n == 3) {
      unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0)) return false;
    }
    if (n == 4) {
      unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      if ((c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 >= 0x90)) return false;
    }
    i += n;
  }
  return true;
}

}  // namespace faultline::fuzz

#endif  // FAULTLINE_TESTS_FUZZ_FUZZ_UTIL_H_
