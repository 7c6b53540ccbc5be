// Files that change or fail under the scanner: truncated, deleted, rotated
// (copytruncate) or grown mid-scan, unreadable, special, page-sized, full of
// NULs and invalid UTF-8, and 100k of them in one directory. Every failure
// is an input error naming the source, with a status code; the other sources
// are still diagnosed; the report lists what could not be read.
#include <sys/stat.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "faults_util.h"
#include "gmock/gmock.h"
#include "simdjson.h"

namespace faultline::faults {
namespace {

using ::testing::HasSubstr;

constexpr int kIoError = -3;  // FL_ERR_IO

ScanResult Scan(const std::vector<std::string>& paths, ScanOptions so = {}) {
  if (so.threads == 0) so.threads = 2;
  Scanner scanner(Rules(), std::move(so));
  absl::Status st = scanner.ScanPaths(paths);
  EXPECT_TRUE(st.ok()) << st.message();
  return scanner.Finish();
}

void ExpectReportListsError(ScanResult& r, const std::string& source) {
  std::string json = ReportOf(r);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(json).get(doc)) << "report is not JSON";
  simdjson::dom::array errors;
  ASSERT_FALSE(doc["input"]["errors"].get_array().get(errors));
  bool found = false;
  for (simdjson::dom::element e : errors) {
    std::string_view src, msg, status;
    ASSERT_FALSE(e["source"].get_string().get(src));
    ASSERT_FALSE(e["message"].get_string().get(msg));
    ASSERT_FALSE(e["status"].get_string().get(status));
    if (src == source) {
      found = true;
      EXPECT_THAT(std::string(msg), HasSubstr(source));
      EXPECT_THAT(std::string(status), HasSubstr("FL_ERR_"));
    }
  }
  EXPECT_TRUE(found) << source << " not in input.errors of " << json.substr(0, 2000);
}

// A big file truncated to nothing by the progress callback after its first
// chunk: the pages past the new end raise SIGBUS under the mapping. The scan
// survives, keeps the evidence read before, names the file, goes on with the
// next source.
TEST(ScanFaults, FileTruncatedWhileScanned) {
  TempDir dir;
  const std::string big = dir.Sub("a-big.log");
  const std::string good = dir.Sub("b-good.log");
  WriteFile(big, LogWithMatches(200'000, 100));  // ~17 MiB, 2000 matches
  WriteFile(good, std::string(kXidLine) + "\n");
  ScanOptions so;
  so.threads = 1;
  so.chunk_bytes = 64 << 10;
  int calls = 0;
  so.on_progress = [&](uint64_t, uint64_t) {
    if (++calls == 1) {
      EXPECT_EQ(::truncate(big.c_str(), 0), 0);
    }
    return true;
  };
  ScanResult r = Scan({big, good}, so);
  int bi = SourceIndex(r, big), gi = SourceIndex(r, good);
  ASSERT_GE(bi, 0);
  ASSERT_GE(gi, 0);
  const InputError* e = ErrorFor(r, big);
  ASSERT_NE(e, nullptr) << "truncation went unnoticed";
  EXPECT_EQ(e->code, kIoError);
  EXPECT_THAT(e->message, HasSubstr(big));
  EXPECT_TRUE(r.sources[bi].failed);
  size_t kept = CountRule(r, kXidRule, bi);
  EXPECT_GT(kept, 0u) << "evidence read before the truncation was lost";
  EXPECT_LT(kept, 2000u);
  EXPECT_EQ(CountRule(r, kXidRule, gi), 1u);
  EXPECT_EQ(ErrorFor(r, good), nullptr);
  ExpectReportListsError(r, big);
}

// A file truncated to nothing after its first chunk faults in every chunk
// past the new end (hundreds of them here): the report says so once for the
// source, not once per chunk.
TEST(ScanFaults, TruncatedFileIsOneErrorNotOnePerChunk) {
  TempDir dir;
  const std::string big = dir.Sub("big.log");
  WriteFile(big, LogWithMatches(200'000, 100));  // ~17 MiB
  ScanOptions so;
  so.threads = 1;
  so.chunk_bytes = 64 << 10;  // ~270 chunks
  int calls = 0;
  so.on_progress = [&](uint64_t, uint64_t) {
    if (++calls == 1) {
      EXPECT_EQ(::truncate(big.c_str(), 0), 0);
    }
    return true;
  };
  ScanResult r = Scan({big}, so);
  size_t errors = 0;
  for (const InputError& e : r.errors) errors += e.source == big;
  EXPECT_EQ(errors, 1u);
  ASSERT_NE(ErrorFor(r, big), nullptr);
  EXPECT_THAT(ErrorFor(r, big)->message, HasSubstr("truncated"));
}

// The same with the truncation racing from another thread while the worker
// threads scan: whatever the interleaving, no crash and a consistent result.
TEST(ScanFaults, FileTruncatedByAnotherThread) {
  TempDir dir;
  const std::string big = dir.Sub("big.log");
  const std::string text = LogWithMatches(200'000, 100);
  for (int round = 0; round < 4; ++round) {
    WriteFile(big, text);
    ScanOptions so;
    so.threads = 2;
    so.chunk_bytes = 256 << 10;
    std::atomic<bool> go{false};
    so.on_progress = [&](uint64_t, uint64_t) {
      go = true;
      return true;
    };
    std::thread cutter([&] {
      while (!go.load()) std::this_thread::yield();
      std::this_thread::sleep_for(std::chrono::microseconds(200 * round));
      EXPECT_EQ(::truncate(big.c_str(), static_cast<off_t>(text.size() / (round + 2))), 0);
    });
    ScanResult r = Scan({big}, so);
    cutter.join();
    ASSERT_EQ(r.sources.size(), 1u);
    if (const InputError* e = ErrorFor(r, big)) {
      EXPECT_THAT(e->message, HasSubstr(big));
      EXPECT_EQ(e->code, kIoError);
    }
    EXPECT_LE(CountRule(r, kXidRule), 2000u);
  }
}

// Deleting a file that is already mapped changes nothing (the inode lives
// on); deleting one not yet opened is an error naming it.
TEST(ScanFaults, FileDeletedDuringScan) {
  TempDir dir;
  const std::string big = dir.Sub("a-big.log");
  WriteFile(big, LogWithMatches(100'000, 100));  // 1000 matches
  std::vector<std::string> small;
  for (int i = 0; i < 40; ++i) {
    small.push_back(dir.Sub("small-" + std::to_string(100 + i) + ".log"));
    WriteFile(small.back(), std::string(kXidLine) + "\n");
  }
  ScanOptions so;
  so.threads = 1;
  so.chunk_bytes = 64 << 10;
  int calls = 0;
  so.on_progress = [&](uint64_t, uint64_t) {
    if (++calls == 1) {
      EXPECT_EQ(::unlink(big.c_str()), 0);
      EXPECT_EQ(::unlink(small.back().c_str()), 0);
    }
    return true;
  };
  std::vector<std::string> paths{big};
  paths.insert(paths.end(), small.begin(), small.end());
  ScanResult r = Scan(paths, so);
  EXPECT_EQ(ErrorFor(r, big), nullptr) << ErrorFor(r, big)->message;
  EXPECT_EQ(CountRule(r, kXidRule, SourceIndex(r, big)), 1000u);
  const InputError* e = ErrorFor(r, small.back());
  ASSERT_NE(e, nullptr);
  EXPECT_THAT(e->message, HasSubstr(small.back()));
  EXPECT_EQ(e->code, kIoError);
  for (size_t i = 0; i + 1 < small.size(); ++i) {
    EXPECT_EQ(CountRule(r, kXidRule, SourceIndex(r, small[i])), 1u) << small[i];
  }
  ExpectReportListsError(r, small.back());
}

// logrotate's copytruncate: the log is copied to .1, truncated to zero, and
// the job goes on appending. The scan of the live file ends in an error (or
// reads the new bytes), never a crash; scanning both afterwards finds every
// line once.
TEST(ScanFaults, CopyTruncateDuringScan) {
  TempDir dir;
  const std::string log = dir.Sub("train.log");
  const std::string rotated = dir.Sub("train.log.1");
  const std::string text = LogWithMatches(100'000, 100);
  WriteFile(log, text);
  ScanOptions so;
  so.threads = 1;
  so.chunk_bytes = 64 << 10;
  int calls = 0;
  so.on_progress = [&](uint64_t, uint64_t) {
    if (++calls == 1) {
      std::filesystem::copy_file(log, rotated);
      EXPECT_EQ(::truncate(log.c_str(), 0), 0);
      int fd = ::open(log.c_str(), O_WRONLY | O_APPEND);
      EXPECT_GE(fd, 0);
      std::string more = LogWithMatches(10, 5);
      EXPECT_EQ(::write(fd, more.data(), more.size()), static_cast<ssize_t>(more.size()));
      ::close(fd);
    }
    return true;
  };
  ScanResult r = Scan({log}, so);
  ASSERT_EQ(r.sources.size(), 1u);
  const InputError* e = ErrorFor(r, log);
  ASSERT_NE(e, nullptr);
  EXPECT_THAT(e->message, HasSubstr(log));
  EXPECT_GT(CountRule(r, kXidRule), 0u);
  ScanResult after = Scan({dir.path()});
  EXPECT_TRUE(after.errors.empty());
  EXPECT_EQ(CountRule(after, kXidRule, SourceIndex(after, rotated)), 1000u);
  EXPECT_EQ(CountRule(after, kXidRule, SourceIndex(after, log)), 2u);
}

// A file that grows while it is scanned: the scan covers the bytes it had
// when it was opened, exactly, without error.
TEST(ScanFaults, FileGrowsDuringScan) {
  TempDir dir;
  const std::string log = dir.Sub("grow.log");
  const std::string text = LogWithMatches(100'000, 100);
  WriteFile(log, text);
  ScanOptions so;
  so.threads = 2;
  so.chunk_bytes = 64 << 10;
  so.on_progress = [&](uint64_t, uint64_t) {
    int fd = ::open(log.c_str(), O_WRONLY | O_APPEND);
    std::string more = LogWithMatches(50, 10);
    EXPECT_EQ(::write(fd, more.data(), more.size()), static_cast<ssize_t>(more.size()));
    ::close(fd);
    return true;
  };
  ScanResult r = Scan({log}, so);
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.sources[0].bytes, text.size());
  EXPECT_EQ(r.sources[0].lines, 100'000u);
  EXPECT_EQ(CountRule(r, kXidRule), 1000u);
}

// Root reads a chmod 000 file, so "unreadable" is made three ways: a read
// that fails with EIO (/proc/self/mem at offset 0 is unmapped), a chmod 000
// file read by an unprivileged child, and a directory that is a path's
// parent but not searchable (same child).
TEST(ScanFaults, UnreadableFiles) {
  TempDir dir;
  const std::string good = dir.Sub("good.log");
  WriteFile(good, std::string(kXidLine) + "\n");
  ScanResult r = Scan({"/proc/self/mem", "/nonexistent/x.log", good});
  for (const char* bad : {"/proc/self/mem", "/nonexistent/x.log"}) {
    const InputError* e = ErrorFor(r, bad);
    ASSERT_NE(e, nullptr) << bad;
    EXPECT_THAT(e->message, HasSubstr(bad));
    EXPECT_LT(e->code, 0);
    ExpectReportListsError(r, bad);
  }
  EXPECT_EQ(CountRule(r, kXidRule, SourceIndex(r, good)), 1u);
}

TEST(ScanFaults, PermissionDeniedAsUnprivilegedUser) {
  TempDir dir;
  ::chmod(dir.path().c_str(), 0755);
  const std::string locked = dir.Sub("locked.log");
  const std::string good = dir.Sub("good.log");
  WriteFile(locked, std::string(kXidLine) + "\n");
  WriteFile(good, std::string(kXidLine) + "\n");
  ::chmod(locked.c_str(), 0);
  ::chmod(good.c_str(), 0644);
  Rules();  // load before fork
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (geteuid() == 0 && (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0)) {
      _exit(10);
    }
    Scanner scanner(Rules(), ScanOptions{.threads = 1});
    if (!scanner.ScanPaths({locked, good}).ok()) _exit(11);
    ScanResult r = scanner.Finish();
    const InputError* e = ErrorFor(r, locked);
    if (e == nullptr) _exit(12);
    if (e->message.find(locked) == std::string::npos) _exit(13);
    if (e->message.find("ermission denied") == std::string::npos) _exit(14);
    if (CountRule(r, kXidRule, SourceIndex(r, good)) != 1) _exit(15);
    if (CountRule(r, kXidRule, SourceIndex(r, locked)) != 0) _exit(16);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child crashed: " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "see the _exit codes in the test";
}

// Special files given by name: a FIFO with a writer is read as a stream; a
// directory listing skips FIFOs and sockets (reported, not read: opening a
// FIFO without a writer would block forever).
TEST(ScanFaults, SpecialFiles) {
  TempDir dir;
  const std::string fifo = dir.Sub("sub/pipe.log");
  std::filesystem::create_directories(dir.Sub("sub"));
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  WriteFile(dir.Sub("sub/good.log"), std::string(kXidLine) + "\n");
  auto t0 = std::chrono::steady_clock::now();
  ScanResult r = Scan({dir.Sub("sub")});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
  EXPECT_EQ(CountRule(r, kXidRule), 1u);
  EXPECT_EQ(SourceIndex(r, fifo), -1) << "a FIFO in a directory was opened";

  std::thread writer([&] {
    int fd = ::open(fifo.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    std::string text = LogWithMatches(1000, 10);
    EXPECT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    ::close(fd);
  });
  ScanResult rf = Scan({fifo});
  writer.join();
  EXPECT_TRUE(rf.errors.empty());
  EXPECT_EQ(CountRule(rf, kXidRule), 100u);
  EXPECT_EQ(rf.sources[0].lines, 1000u);
}

// File sizes at and around page multiples, with and without a final
// newline, the match on the very last bytes: a read one byte past the end of
// a mapping that ends on a page boundary faults, so this catches over-reads
// that ASan cannot see in mapped memory.
TEST(ScanFaults, PageMultipleSizes) {
  TempDir dir;
  for (size_t pages : {1, 2, 16, 257}) {
    for (int delta : {-1, 0, 1}) {
      for (bool final_newline : {true, false}) {
        const size_t size = pages * 4096 + delta;
        std::string tail = std::string(kXidLine) + (final_newline ? "\n" : "");
        std::string text;
        while (text.size() + kFiller.size() + 1 + tail.size() <= size) {
          text.append(kFiller).push_back('\n');
        }
        // Pad the last filler line so the file is exactly `size` bytes.
        size_t pad = size - text.size() - tail.size();
        if (pad > 0) text.append(std::string(pad - 1, 'x')).push_back('\n');
        text += tail;
        ASSERT_EQ(text.size(), size);
        const std::string path = dir.Sub("p" + std::to_string(size) + (final_newline ? "n" : "") + ".log");
        WriteFile(path, text);
        uint64_t lines = 0;
        for (char c : text) lines += c == '\n';
        if (!final_newline) ++lines;
        for (size_t chunk : {size_t{4096}, size_t{1} << 20}) {
          ScanOptions so;
          so.chunk_bytes = chunk;
          ScanResult r = Scan({path}, so);
          SCOPED_TRACE(path + " chunk " + std::to_string(chunk));
          EXPECT_TRUE(r.errors.empty());
          ASSERT_EQ(CountRule(r, kXidRule), 1u);
          EXPECT_EQ(r.sources[0].bytes, size);
          EXPECT_EQ(r.sources[0].lines, lines);
          for (const Evidence& ev : r.evidence) {
            if (static_cast<int>(ev.rule) == Rules()->FindRule(kXidRule)) {
              EXPECT_EQ(ev.line, lines);
              EXPECT_EQ(ev.offset, size - tail.size());
              EXPECT_EQ(ev.text, kXidLine);
            }
          }
        }
      }
    }
  }
}

// NUL bytes, invalid UTF-8 (bad leads, truncated sequences, overlongs,
// surrogates, > U+10FFFF), CR line ends and a file name that is not UTF-8:
// matches are still found, evidence text and the report are valid UTF-8.
TEST(ScanFaults, NulBytesAndInvalidUtf8) {
  TempDir dir;
  std::string text;
  text += std::string("\0\0\0garbage\0\n", 13);
  text += "\xff\xfe\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82\n";
  text += std::string("\x80\x80 ") + std::string(kXidLine) + std::string(" \xff\0tail\xc3", 8) + "\n";
  text += std::string(kXidLine) + "\r\n";
  text += std::string(10000, '\0') + "\n";
  text += std::string(kXidLine);
  const std::string path = dir.Sub("bad\xff\xfe-name.log");
  WriteFile(path, text);
  ScanResult r = Scan({dir.path()});
  EXPECT_TRUE(r.errors.empty());
  ASSERT_EQ(CountRule(r, kXidRule), 3u);
  std::vector<uint64_t> lines;
  for (const Evidence& ev : r.evidence) {
    if (static_cast<int>(ev.rule) != Rules()->FindRule(kXidRule)) continue;
    lines.push_back(ev.line);
    EXPECT_TRUE(simdjson::validate_utf8(ev.text.data(), ev.text.size())) << ev.text;
    EXPECT_LE(ev.text.size(), kMaxEvidenceText);
    EXPECT_THAT(ev.text, HasSubstr(std::string(kXidLine)));
    EXPECT_EQ(ev.text.find('\0'), std::string::npos);
    EXPECT_EQ(ev.text.find('\r'), std::string::npos);
  }
  EXPECT_EQ(lines, (std::vector<uint64_t>{3, 4, 6}));
  std::string json = ReportOf(r);
  EXPECT_TRUE(simdjson::validate_utf8(json.data(), json.size()));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  EXPECT_FALSE(parser.parse(json).get(doc)) << "report is not valid JSON";
  std::string jsonl = EvidenceJsonLines(*Rules(), r);
  EXPECT_TRUE(simdjson::validate_utf8(jsonl.data(), jsonl.size()));
}

// 100k small files in one directory: a time bound, no descriptor leak, one
// source each, every match found.
TEST(ScanFaults, HundredThousandSmallFiles) {
  TempDir dir(FastTmpRoot());
  constexpr int kFiles = 100'000;
  const std::string line = std::string(kXidLine) + "\n" + std::string(kFiller) + "\n";
  for (int i = 0; i < kFiles; ++i) {
    char name[64];
    std::snprintf(name, sizeof name, "/d%02d/f%06d.log", i % 100, i);
    std::string path = dir.path() + name;
    if (i < 100) std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, line.data(), line.size()), static_cast<ssize_t>(line.size()));
    ::close(fd);
  }
  auto fds = [] {
    size_t n = 0;
    for (auto& e : std::filesystem::directory_iterator("/proc/self/fd")) (void)e, ++n;
    return n;
  };
  size_t fds_before = fds();
  auto t0 = std::chrono::steady_clock::now();
  ScanResult r = Scan({dir.path()});
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("100k files: %.2f s, peak RSS %.0f MiB\n", secs, PeakRssBytes() / 1048576.0);
  EXPECT_LT(secs, 90.0);
  EXPECT_EQ(fds(), fds_before);
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.sources.size(), static_cast<size_t>(kFiles));
  EXPECT_EQ(r.lines, 2u * kFiles);
  EXPECT_EQ(r.rule_stats[Rules()->FindRule(kXidRule)].count, static_cast<uint64_t>(kFiles));
}

}  // namespace
}  // namespace faultline::faults
