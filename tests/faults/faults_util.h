// Helpers for the fault-injection tests: scratch directories (on tmpfs when
// there is one, for the many-files test), files built in one call, sparse
// files, the default ruleset, a scan that returns its result, and readers of
// the process's memory figures.
#ifndef FAULTLINE_TESTS_FAULTS_FAULTS_UTIL_H_
#define FAULTLINE_TESTS_FAULTS_FAULTS_UTIL_H_

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "correlate/correlate.h"
#include "gtest/gtest.h"
#include "report/report.h"
#include "ruleset/ruleset.h"
#include "scan/scan.h"

namespace faultline::faults {

// A Xid 79 line of the default ruleset (rule xid-79-fallen-off-bus).
inline constexpr std::string_view kXidLine =
    "[1000001.682554] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off "
    "the bus.";
inline constexpr std::string_view kXidRule = "xid-79-fallen-off-bus";
// A line no rule matches.
inline constexpr std::string_view kFiller =
    "2026-11-02T13:46:41.123456Z INFO train.py:812 step=1200 loss=2.3456 lr=0.000300 ok";

class TempDir {
 public:
  explicit TempDir(const char* base = nullptr) {
    std::string root = base ? base : std::filesystem::temp_directory_path().string();
    std::string tmpl = root + "/fl_faults_XXXXXX";
    char* d = mkdtemp(tmpl.data());
    EXPECT_NE(d, nullptr) << root;
    path_ = d ? d : "/tmp";
  }
  ~TempDir() {
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(path_, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_directory(ec) && !it->is_symlink(ec)) ::chmod(it->path().c_str(), 0755);
    }
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string Sub(std::string_view rel) const { return path_ + "/" + std::string(rel); }

 private:
  std::string path_;
};

// tmpfs when the machine has one (fast for 100k files), else the temp dir.
inline const char* FastTmpRoot() {
  struct stat st;
  if (::stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && ::access("/dev/shm", W_OK) == 0) {
    return "/dev/shm";
  }
  return nullptr;
}

inline void WriteFile(const std::string& path, std::string_view data) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << path << ": " << std::strerror(errno);
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    ASSERT_GT(n, 0) << path;
    done += static_cast<size_t>(n);
  }
  ASSERT_EQ(::close(fd), 0);
}

inline void PWrite(const std::string& path, uint64_t offset, std::string_view data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset)),
            static_cast<ssize_t>(data.size()));
  ::close(fd);
}

// A sparse file of `size` bytes (zeros) on a file system that supports holes.
inline void MakeSparse(const std::string& path, uint64_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0) << std::strerror(errno);
  ::close(fd);
}

// `lines` lines: a Xid line every `every` lines (the first line is one),
// filler otherwise. Each line ends with '\n'.
inline std::string LogWithMatches(size_t lines, size_t every) {
  std::string out;
  out.reserve(lines * (kFiller.size() + 1));
  for (size_t i = 0; i < lines; ++i) {
    out.append(i % every == 0 ? kXidLine : kFiller);
    out.push_back('\n');
  }
  return out;
}

inline std::shared_ptr<const Ruleset> Rules() {
  static std::shared_ptr<const Ruleset> rs = [] {
    auto r = Ruleset::LoadDefault();
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : nullptr;
  }();
  return rs;
}

inline size_t CountRule(const ScanResult& r, std::string_view rule, int source = -1) {
  int idx = Rules()->FindRule(rule);
  size_t n = 0;
  for (const Evidence& ev : r.evidence) {
    if (static_cast<int>(ev.rule) == idx && (source < 0 || ev.source == static_cast<uint32_t>(source))) ++n;
  }
  return n;
}

inline int SourceIndex(const ScanResult& r, std::string_view name) {
  for (size_t i = 0; i < r.sources.size(); ++i) {
    if (r.sources[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

inline const InputError* ErrorFor(const ScanResult& r, std::string_view source) {
  for (const InputError& e : r.errors) {
    if (e.source == source) return &e;
  }
  return nullptr;
}

// The JSON report of a scan, as the C ABI and the CLI produce it.
inline std::string ReportOf(ScanResult& r) {
  Diagnosis d = Correlate(*Rules(), r, CorrelateOptions{});
  return ReportJson(*Rules(), r, d);
}

// Peak resident set of this process so far, in bytes.
inline uint64_t PeakRssBytes() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<uint64_t>(ru.ru_maxrss) * 1024;
}

// A field of /proc/self/status ("RssAnon", "VmRSS"), in bytes.
inline uint64_t StatusBytes(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string k;
  while (in >> k) {
    if (k == std::string(key) + ":") {
      uint64_t kb = 0;
      in >> kb;
      return kb * 1024;
    }
    std::string rest;
    std::getline(in, rest);
  }
  return 0;
}

// Samples anonymous resident memory while it lives (mapped file pages are
// not anonymous, so this measures what the scanner allocates).
class AnonSampler {
 public:
  AnonSampler() : base_(StatusBytes("RssAnon")), peak_(base_) {
    thread_ = std::thread([this] {
      while (!stop_.load()) {
        uint64_t v = StatusBytes("RssAnon");
        if (v > peak_.load()) peak_ = v;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    });
  }
  ~AnonSampler() { Stop(); }
  void Stop() {
    if (thread_.joinable()) {
      stop_ = true;
      thread_.join();
    }
  }
  uint64_t growth() const { return peak_.load() > base_ ? peak_.load() - base_ : 0; }

 private:
  uint64_t base_;
  std::atomic<uint64_t> peak_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace faultline::faults

#endif  // FAULTLINE_TESTS_FAULTS_FAULTS_UTIL_H_
