// GuardedRead against the real failure: a mapped log truncated underneath
// us (logrotate copytruncate). The guarded read returns false and the
// process lives, on one thread or several at once; a SIGBUS outside any
// guard still kills the process, and an earlier handler still gets faults
// that are not ours.

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "input/input.h"
#include "test_util.h"

namespace faultline {
namespace {

using testing::LogText;
using testing::ScratchDir;
using testing::WriteFile;

// Sums every byte; volatile so the compiler cannot skip the loads.
uint64_t Touch(std::string_view view) {
  uint64_t sum = 0;
  for (size_t i = 0; i < view.size(); i += 64) {
    sum += static_cast<unsigned char>(
        *static_cast<const volatile char*>(view.data() + i));
  }
  return sum;
}

std::unique_ptr<Source> MapFile(const std::string& path, size_t size) {
  WriteFile(path, LogText(size));
  auto src = OpenSource(path);
  EXPECT_TRUE(src.ok()) << src.status();
  if (!src.ok()) return nullptr;
  EXPECT_EQ((*src)->kind(), SourceKind::kMapped);
  return *std::move(src);
}

void Truncate(const std::string& path, off_t size) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, size), 0);
  close(fd);
}

TEST(GuardedReadTest, HealthyMappingReadsThrough) {
  ScratchDir dir;
  const std::string path = dir.Sub("ok.log");
  std::unique_ptr<Source> src = MapFile(path, 1 << 20);
  ASSERT_NE(src, nullptr);
  const std::string_view view = src->mapped();
  uint64_t sum = 0;
  EXPECT_TRUE(GuardedRead(view.data(), view.size(), [&] { sum = Touch(view); }));
  EXPECT_GT(sum, 0u);
}

TEST(GuardedReadTest, FileTruncatedAfterMappingReturnsFalse) {
  ScratchDir dir;
  const std::string path = dir.Sub("rotated.log");
  std::unique_ptr<Source> src = MapFile(path, 256 << 10);
  ASSERT_NE(src, nullptr);
  Truncate(path, 0);
  const std::string_view view = src->mapped();
  bool finished = false;
  EXPECT_FALSE(GuardedRead(view.data(), view.size(), [&] {
    Touch(view);
    finished = true;
  }));
  EXPECT_FALSE(finished);

  // The handler keeps working (SIGBUS is unblocked again), and unrelated
  // guarded reads still succeed.
  EXPECT_FALSE(
      GuardedRead(view.data(), view.size(), [&] { Touch(view); }));
  const std::string other = dir.Sub("other.log");
  std::unique_ptr<Source> ok = MapFile(other, 70000);
  ASSERT_NE(ok, nullptr);
  const std::string_view ok_view = ok->mapped();
  EXPECT_TRUE(
      GuardedRead(ok_view.data(), ok_view.size(), [&] { Touch(ok_view); }));
}

TEST(GuardedReadTest, TruncatedToAShorterLength) {
  ScratchDir dir;
  const std::string path = dir.Sub("shrunk.log");
  std::unique_ptr<Source> src = MapFile(path, 64 * 4096);
  ASSERT_NE(src, nullptr);
  Truncate(path, 10 * 4096 + 100);
  const std::string_view view = src->mapped();
  // Pages still backed by the file read fine; the rest faults.
  EXPECT_TRUE(GuardedRead(view.data(), view.size(),
                          [&] { Touch(view.substr(0, 11 * 4096)); }));
  EXPECT_FALSE(GuardedRead(view.data(), view.size(), [&] { Touch(view); }));
}

TEST(GuardedReadTest, TwoThreadsFaultingConcurrently) {
  ScratchDir dir;
  constexpr int kThreads = 2;
  constexpr int kRounds = 200;
  std::vector<std::string> paths;
  std::vector<std::unique_ptr<Source>> sources;
  for (int t = 0; t < kThreads; ++t) {
    paths.push_back(dir.Sub(absl::StrCat("rank", t, ".log")));
    sources.push_back(MapFile(paths.back(), 128 << 10));
    ASSERT_NE(sources.back(), nullptr);
    Truncate(paths.back(), 0);
  }
  // A third thread reads a healthy mapping meanwhile: another thread's
  // fault must not unwind it.
  std::unique_ptr<Source> healthy = MapFile(dir.Sub("healthy.log"), 1 << 20);
  ASSERT_NE(healthy, nullptr);
  std::atomic<int> faults{0};
  std::atomic<int> healthy_ok{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load()) {
      }
      const std::string_view view = sources[t]->mapped();
      for (int i = 0; i < kRounds; ++i) {
        if (!GuardedRead(view.data(), view.size(), [&] { Touch(view); })) {
          faults.fetch_add(1);
        }
      }
    });
  }
  threads.emplace_back([&] {
    while (!go.load()) {
    }
    const std::string_view view = healthy->mapped();
    for (int i = 0; i < kRounds; ++i) {
      if (GuardedRead(view.data(), view.size(), [&] { Touch(view); })) {
        healthy_ok.fetch_add(1);
      }
    }
  });
  go.store(true);
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(faults.load(), kThreads * kRounds);
  EXPECT_EQ(healthy_ok.load(), kRounds);
}

TEST(GuardedReadTest, FaultInOuterRangeFromInnerGuard) {
  ScratchDir dir;
  const std::string path = dir.Sub("outer.log");
  std::unique_ptr<Source> bad = MapFile(path, 64 << 10);
  ASSERT_NE(bad, nullptr);
  Truncate(path, 0);
  std::unique_ptr<Source> good = MapFile(dir.Sub("inner.log"), 64 << 10);
  ASSERT_NE(good, nullptr);
  const std::string_view bad_view = bad->mapped();
  const std::string_view good_view = good->mapped();
  bool inner_result = true;
  EXPECT_FALSE(GuardedRead(bad_view.data(), bad_view.size(), [&] {
    inner_result = GuardedRead(good_view.data(), good_view.size(),
                               [&] { Touch(bad_view); });
  }));
  EXPECT_TRUE(inner_result);  // never returned: the outer guard caught it
  // And the thread's guard state is clean afterwards.
  EXPECT_TRUE(GuardedRead(good_view.data(), good_view.size(),
                          [&] { Touch(good_view); }));
}

TEST(GuardedReadTest, ExceptionsPropagateAndLeaveNoGuardBehind) {
  int dummy = 0;
  EXPECT_THROW(GuardedRead(&dummy, sizeof dummy,
                           [] { throw std::runtime_error("boom"); }),
               std::runtime_error);
  EXPECT_TRUE(GuardedRead(&dummy, sizeof dummy, [] {}));
}

// GCC says a sanitizer by __SANITIZE_*__, clang (before 16 for TSan) only
// by __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FL_SIGBUS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FL_SIGBUS_SANITIZED 1
#endif
#endif

// The default action, or under ASan/TSan (whose SIGBUS handler was
// there first and gets the fault) its report and exit (TSan's: "BUS on
// unknown address", exit status 66).
bool DiedOfSigbus(int status) {
  if (WIFSIGNALED(status)) return WTERMSIG(status) == SIGBUS;
#ifdef FL_SIGBUS_SANITIZED
  return WIFEXITED(status) && WEXITSTATUS(status) != 0;
#else
  return false;
#endif
}

// A file mapped, with a descriptor to truncate it through, in a directory
// already removed: a death test's child exits without running destructors,
// so nothing it creates on disk may depend on them.
struct DoomedMapping {
  std::unique_ptr<Source> src;
  int fd = -1;
  ~DoomedMapping() {
    if (fd >= 0) close(fd);
  }
};

void MakeDoomedMapping(DoomedMapping* m) {
  ScratchDir dir;
  const std::string path = dir.Sub("doomed.log");
  m->src = MapFile(path, 64 << 10);
  ASSERT_NE(m->src, nullptr);
  m->fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(m->fd, 0);
}

TEST(GuardedReadDeathTest, FaultOutsideAnyGuardStillKills) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  DoomedMapping m;
  ASSERT_NO_FATAL_FAILURE(MakeDoomedMapping(&m));
  const std::string_view view = m.src->mapped();
  EXPECT_EXIT(
      {
        int dummy = 0;
        GuardedRead(&dummy, sizeof dummy, [] {});  // handler installed
        if (ftruncate(m.fd, 0) != 0) _exit(3);
        // Guarded, but a different range: not ours to catch either.
        GuardedRead(&dummy, sizeof dummy, [&] { Touch(view); });
      },
      DiedOfSigbus, "");
}

void PreviousHandler(int, siginfo_t*, void*) {
  // Async-signal-safe: report through the exit code.
  _exit(42);
}

TEST(GuardedReadDeathTest, ChainsToThePreviousHandler) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  DoomedMapping m;
  ASSERT_NO_FATAL_FAILURE(MakeDoomedMapping(&m));
  const std::string_view view = m.src->mapped();
  EXPECT_EXIT(
      {
        struct sigaction sa = {};
        sa.sa_sigaction = PreviousHandler;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGBUS, &sa, nullptr);
        if (ftruncate(m.fd, 0) != 0) _exit(3);
        int dummy = 0;
        // Installs ours on top; a guarded fault must not reach the old one.
        if (GuardedRead(view.data(), view.size(), [&] { Touch(view); })) {
          _exit(1);
        }
        GuardedRead(&dummy, sizeof dummy, [] {});
        Touch(view);  // unguarded: goes to PreviousHandler
        _exit(2);
      },
      ::testing::ExitedWithCode(42), "");
}

}  // namespace
}  // namespace faultline
