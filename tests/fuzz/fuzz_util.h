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

#include "absl/strings/string_view.h"
#include "evidence/evidence.h"
#include "ruleset/ruleset.h"

namespace faultline::fuzz {

// Aborts with a message: the fuzzer records the input as a crash.
[[noreturn]] inline void Die(const char* what, std::string_view detail = {}) {
  std::fprintf(stderr, "FUZZ CHECK FAILED: %s %.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}
// Debian's Abseil has its own string_view (status messages).
[[noreturn]] inline void Die(const char* what, absl::string_view detail) {
  Die(what, std::string_view(detail.data(), detail.size()));
}
[[noreturn]] inline void Die(const char* what, const char* detail) {
  Die(what, std::string_view(detail ? detail : ""));
}
[[noreturn]] inline void Die(const char* what, const std::string& detail) {
  Die(what, std::string_view(detail));
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
    std::string tmpl = (std::filesystem::temp_directory_path() / "fl_fuzz_XXXXXX").string();
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


// Invariants every scan result keeps, whatever the input. `stream`, when
// given, is the whole of source 0's bytes: line numbers and offsets of its
// evidence are then checked exactly.
inline void CheckScanResult(const Ruleset& rs, const ScanResult& r,
                            std::string_view stream = {}, bool have_stream = false) {
  FL_FUZZ_CHECK(r.evidence.size() <= r.matches, "more evidence than matches");
  uint64_t sum = 0;
  for (const auto& [id, n] : r.signal_hits) {
    FL_FUZZ_CHECK(id < rs.signal_count(), "signal id out of range");
    sum += n;
  }
  FL_FUZZ_CHECK(sum == r.matches, "signal hits do not add up to matches");
  for (size_t i = 0; i < r.evidence.size(); ++i) {
    const Evidence& ev = r.evidence[i];
    FL_FUZZ_CHECK(ev.source < r.sources.size(), "evidence source out of range");
    FL_FUZZ_CHECK(ev.rule < rs.rule_count(), "evidence rule out of range");
    FL_FUZZ_CHECK(ev.signal < rs.signal_count(), "evidence signal out of range");
    FL_FUZZ_CHECK(rs.signal(ev.signal).rule_index == ev.rule, "signal of another rule");
    FL_FUZZ_CHECK(ev.line >= 1, "line 0");
    FL_FUZZ_CHECK(ev.text.size() <= kMaxEvidenceText, "evidence text too long");
    FL_FUZZ_CHECK(IsValidUtf8(ev.text), ev.text);
    for (const auto& [k, v] : ev.fields) {
      FL_FUZZ_CHECK(IsValidUtf8(v), v);
      FL_FUZZ_CHECK(v.size() <= kMaxEvidenceText, "capture too long");
    }
    if (i > 0) {
      const Evidence& p = r.evidence[i - 1];
      FL_FUZZ_CHECK(p.source < ev.source || (p.source == ev.source && p.offset <= ev.offset),
                    "evidence out of order");
    }
    if (have_stream && ev.source == 0) {
      FL_FUZZ_CHECK(ev.offset < stream.size() || (ev.offset == 0 && stream.empty()),
                    "offset past the end");
      FL_FUZZ_CHECK(ev.offset == 0 || stream[ev.offset - 1] == '\n', "offset not at a line start");
      uint64_t nl = 0;
      for (size_t k = 0; k < ev.offset; ++k) nl += stream[k] == '\n';
      FL_FUZZ_CHECK(ev.line == nl + 1, "wrong line number");
    }
  }
  if (have_stream && !r.sources.empty()) {
    const SourceSummary& s = r.sources[0];
    FL_FUZZ_CHECK(s.bytes == stream.size(), "byte count");
    uint64_t nl = 0;
    for (char c : stream) nl += c == '\n';
    uint64_t lines = nl + (!stream.empty() && stream.back() != '\n' ? 1 : 0);
    FL_FUZZ_CHECK(s.lines == lines, "line count");
  }
}

}  // namespace faultline::fuzz

#endif  // FAULTLINE_TESTS_FUZZ_FUZZ_UTIL_H_
