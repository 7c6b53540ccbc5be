// OpenSource on uncompressed inputs: mapped regular files of page-boundary
// sizes, empty files, and the read() fallbacks -- /proc files, FIFOs and
// standard input fed through a pipe.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "input/input.h"
#include "test_util.h"

namespace faultline {
namespace {

using testing::LogText;
using testing::ReadAll;
using testing::ScratchDir;
using testing::WriteFile;

std::string MappedCopy(const Source& src) {
  std::string out;
  const std::string_view view = src.mapped();
  EXPECT_TRUE(GuardedRead(view.data(), view.size(),
                          [&] { out.assign(view.data(), view.size()); }));
  return out;
}

TEST(OpenSourceTest, PlainFileIsMapped) {
  ScratchDir dir;
  const std::string path = dir.Sub("rank0.log");
  const std::string text = LogText(300000);
  WriteFile(path, text);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  auto src = OpenSource(path);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_EQ((*src)->kind(), SourceKind::kMapped);
  EXPECT_EQ((*src)->name(), path);
  EXPECT_EQ((*src)->size_hint(), text.size());
  EXPECT_EQ((*src)->mtime(), st.st_mtim.tv_sec);
  EXPECT_EQ(MappedCopy(**src), text);
  EXPECT_FALSE((*src)->Read(nullptr, 0).ok());  // not a stream
}

TEST(OpenSourceTest, PageBoundarySizes) {
  ScratchDir dir;
  for (size_t k : {1, 2, 16, 17}) {
    for (size_t size : {k * 4096 - 1, k * 4096, k * 4096 + 1}) {
      const std::string path = dir.Sub(absl::StrCat("f", size, ".log"));
      const std::string text = LogText(size, static_cast<uint32_t>(size));
      WriteFile(path, text);
      auto src = OpenSource(path);
      ASSERT_TRUE(src.ok()) << src.status();
      ASSERT_EQ((*src)->kind(), SourceKind::kMapped);
      ASSERT_EQ((*src)->mapped().size(), size);
      EXPECT_EQ(MappedCopy(**src), text) << size;
      // The last byte is readable without a fault.
      char last = 0;
      const std::string_view view = (*src)->mapped();
      EXPECT_TRUE(GuardedRead(view.data(), view.size(),
                              [&] { last = view[view.size() - 1]; }));
      EXPECT_EQ(last, text.back());
    }
  }
}

TEST(OpenSourceTest, EmptyFileIsAnEmptyView) {
  ScratchDir dir;
  const std::string path = dir.Sub("empty.log");
  WriteFile(path, "");
  auto src = OpenSource(path);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_EQ((*src)->kind(), SourceKind::kMapped);
  EXPECT_TRUE((*src)->mapped().empty());
  EXPECT_EQ((*src)->size_hint(), 0u);
}

TEST(OpenSourceTest, ProcFileFallsBackToStream) {
  // st_size is 0 but the content is not empty.
  auto src = OpenSource("/proc/self/status");
  ASSERT_TRUE(src.ok()) << src.status();
  ASSERT_EQ((*src)->kind(), SourceKind::kStream);
  absl::StatusOr<std::string> text = ReadAll(**src, 16);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_TRUE(absl::StrContains(*text, "Name:")) << *text;
  EXPECT_TRUE(absl::StrContains(*text, "VmRSS:"));
}

TEST(OpenSourceTest, UnmappableSysfsFileFallsBackToStream) {
  // Claims 4096 bytes, holds a few, and refuses mmap.
  const char* path = "/sys/devices/system/cpu/online";
  if (access(path, R_OK) != 0) GTEST_SKIP() << "no " << path;
  auto src = OpenSource(path);
  ASSERT_TRUE(src.ok()) << src.status();
  ASSERT_EQ((*src)->kind(), SourceKind::kStream);
  absl::StatusOr<std::string> text = ReadAll(**src);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_TRUE(absl::StartsWith(*text, "0")) << *text;
  EXPECT_LT(text->size(), 4096u);
}

TEST(OpenSourceTest, FifoFallsBackToStream) {
  ScratchDir dir;
  const std::string path = dir.Sub("live.log");
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  const std::string text = LogText(3 << 20);
  std::thread writer([&] {
    const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    size_t off = 0;
    while (off < text.size()) {
      const ssize_t n = write(fd, text.data() + off,
                              std::min<size_t>(100000, text.size() - off));
      ASSERT_GT(n, 0);
      off += static_cast<size_t>(n);
    }
    close(fd);
  });
  auto src = OpenSource(path);  // blocks until the writer opens
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_EQ((*src)->kind(), SourceKind::kStream);
  EXPECT_EQ((*src)->mtime(), 0);
  absl::StatusOr<std::string> out = ReadAll(**src);
  writer.join();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(*out == text);
}

TEST(OpenSourceTest, StdinThroughAPipe) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  const int saved_stdin = dup(STDIN_FILENO);
  ASSERT_GE(saved_stdin, 0);
  ASSERT_EQ(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
  close(fds[0]);
  const std::string text = LogText(5 << 20);
  std::thread writer([&] {
    size_t off = 0;
    while (off < text.size()) {
      const ssize_t n = write(fds[1], text.data() + off, text.size() - off);
      ASSERT_GT(n, 0);
      off += static_cast<size_t>(n);
    }
    close(fds[1]);
  });
  std::string out;
  size_t reads = 0;
  {
    auto src = OpenSource("-");
    ASSERT_TRUE(src.ok()) << src.status();
    EXPECT_EQ((*src)->kind(), SourceKind::kStream);
    EXPECT_EQ((*src)->name(), "-");
    std::string buf(4 << 20, '\0');
    for (;;) {
      absl::StatusOr<size_t> n = (*src)->Read(buf.data(), buf.size());
      ASSERT_TRUE(n.ok()) << n.status();
      if (*n == 0) break;
      out.append(buf.data(), *n);
      ++reads;
    }
  }
  writer.join();
  // Standard input is not closed by the source.
  EXPECT_NE(fcntl(STDIN_FILENO, F_GETFD), -1);
  ASSERT_EQ(dup2(saved_stdin, STDIN_FILENO), STDIN_FILENO);
  close(saved_stdin);
  EXPECT_TRUE(out == text);
  // Pieces are coalesced well beyond the pipe's 64 KiB default.
  EXPECT_LT(reads, 40u);
}

TEST(OpenSourceTest, StreamDeliversPartialDataWithoutWaitingForCap) {
  // A live feed: one line, the writer stays open.
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  const std::string path = absl::StrCat("/proc/self/fd/", fds[0]);
  auto src = OpenSource(path);
  ASSERT_TRUE(src.ok()) << src.status();
  ASSERT_EQ((*src)->kind(), SourceKind::kStream);
  ASSERT_EQ(write(fds[1], "line 1\n", 7), 7);
  std::string buf(4 << 20, '\0');
  absl::StatusOr<size_t> n = (*src)->Read(buf.data(), buf.size());
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(std::string(buf.data(), *n), "line 1\n");
  close(fds[1]);
  n = (*src)->Read(buf.data(), buf.size());
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0u);
  close(fds[0]);
}

TEST(OpenSourceTest, ErrorsNameThePath) {
  ScratchDir dir;
  auto src = OpenSource(dir.Sub("missing.log"));
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(src.status().message(), "missing.log"));
  src = OpenSource(dir.path());
  ASSERT_FALSE(src.ok());
  EXPECT_TRUE(absl::StrContains(src.status().message(), "is a directory"));
  src = OpenSource("");
  EXPECT_EQ(src.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace faultline
