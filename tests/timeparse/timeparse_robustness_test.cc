// Robustness of the timestamp recognisers: every prefix of real stamps placed
// flush against an unmapped page (so any read past the string_view faults),
// random and mutated bytes (NULs, invalid UTF-8), huge lines, and a check that
// ParseLineTime never allocates.
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "timeparse/timeparse.h"

// Counting global allocator: only counts while a test arms it, so gtest's own
// allocations elsewhere are unaffected.
namespace {
std::atomic<bool> g_count_allocs{false};
std::atomic<long> g_allocs{0};
}  // namespace

// Out of line so GCC does not pair the inlined free() with `new` and report
// -Wmismatched-new-delete on every gtest allocation.
namespace {
[[gnu::noinline]] void* CountedAlloc(std::size_t n) {
  if (g_count_allocs.load(std::memory_order_relaxed)) {
    g_allocs.fetch_add(1, std::memory_order_relaxed);
  }
  return std::malloc(n == 0 ? 1 : n);
}
[[gnu::noinline]] void CountedFree(void* p) { std::free(p); }
}  // namespace

void* operator new(std::size_t n) {
  if (void* p = CountedAlloc(n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { CountedFree(p); }
void operator delete(void* p, std::size_t) noexcept { CountedFree(p); }

namespace faultline {
namespace {

// Lines of every recognised format, plus near misses.
const std::string_view kSamples[] = {
    "2026-11-02T13:46:41.123456789Z stdout F hello",
    "2026-11-02T13:46:41.123456+00:00 node017 kernel: [1000001.682554] NVRM: Xid 79",
    "2026-11-02T13:46:41+0000 node017 kernel: NVRM",
    "2026-11-02T13:46:41,123456+00:00 NVRM",
    "2026-11-02 05:46:41 -0800 x",
    "2026-11-02 13:46:41 UTC x",
    "2026-11-02 13:46:41,123 - torch - ERROR - x",
    "2026/11/02 13:46:41 http: x",
    "[2026-11-02 13:46:41,123] [INFO] x",
    "INFO 11-02 13:46:41 [api_server.py:123] x",
    "WARNING 2026-11-02 13:46:41,250 x",
    "E1102 13:46:41.123456 1234 ProcessGroupNCCL.cpp:1234] x",
    "I20261102 13:46:41.123456 1 main.cc:1] x",
    "[E1102 13:46:41.123456 1234 ProcessGroupNCCL.cpp:1234] x",
    "Nov  2 13:46:41 node017 kernel: [1000001.682554] NVRM: Xid 79",
    "Nov 02 13:46:41.123456 node017 kernel: NVRM",
    "Nov  2 2026 13:46:41 host x",
    "<13>Nov  2 13:46:41 host app: x",
    "<34>1 2026-11-02T13:46:41.003Z mymachine su",
    "Mon 2026-11-02 13:46:41 UTC node017",
    "Mon Nov  2 13:46:41 2026 x",
    "[1000001.682554] NVRM: Xid",
    "[    5.123456] pci",
    "[Mon Nov  2 13:46:41 2026] NVRM",
    "[Mon Nov  2 13:46:41 UTC 2026] NVRM",
    "[Nov 2 13:46] NVRM",
    "[Nov12 13:46:07] NVRM",
    "[  +0.000316] NVRM",
    "[-1.500000] NVRM",
    "1762091201.123 INFO",
    "1762091201123456789 x",
    "[1762091201.123] x",
    "3: hello",
    "[rank3]:[E1102 13:46:41.123456 1 x.cc:1] y",
    "\xEF\xBB\xBF  2026-11-02T13:46:41Z x",
};

// A readable page followed by an inaccessible one: a string copied flush
// against the boundary makes any over-read a SIGSEGV instead of a silent bug.
class GuardedBuffer {
 public:
  GuardedBuffer() {
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    void* m = mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) std::abort();
    base_ = static_cast<char*>(m);
    if (mprotect(base_ + page_, page_, PROT_NONE) != 0) std::abort();
  }
  ~GuardedBuffer() { munmap(base_, 2 * page_); }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  size_t capacity() const { return page_; }

  std::string_view Place(std::string_view s) {
    if (s.size() > page_) s = s.substr(0, page_);
    char* at = base_ + page_ - s.size();
    if (!s.empty()) std::memcpy(at, s.data(), s.size());
    return std::string_view(at, s.size());
  }

 private:
  size_t page_ = 0;
  char* base_ = nullptr;
};

// Exercises every entry point on `s` and checks the invariants that must hold
// for any input.
void CheckAll(std::string_view s) {
  TimeContext ctx;
  ctx.default_year = 2026;
  ctx.tz_offset_s = -8 * 3600;
  const auto t = ParseLineTime(s, ctx);
  if (t) {
    ASSERT_LE(t->end, s.size());
    ASSERT_GT(t->end, 0u);
    ASSERT_NE(t->format, TimeFormat::kUnknown);
    if (t->wall_us) {
      const std::string f = FormatRfc3339(*t->wall_us);
      ASSERT_FALSE(f.empty());
    }
  }
  (void)FindMonotonic(s);
  (void)ParseDmesgDelta(s);
  (void)ParseIso8601(s, ctx);
  (void)ParseTzOffset(s);
}

TEST(TimeparseRobustness, EveryPrefixAtTheEndOfMappedMemory) {
  GuardedBuffer buf;
  for (const std::string_view sample : kSamples) {
    for (size_t n = 0; n <= sample.size(); ++n) {
      SCOPED_TRACE(std::string(sample.substr(0, n)));
      CheckAll(buf.Place(sample.substr(0, n)));
      if (HasFatalFailure()) return;
    }
  }
}

TEST(TimeparseRobustness, FullSamplesParseAndPrefixesNeverOverrun) {
  // Sanity: the samples meant to parse do parse when guarded.
  GuardedBuffer buf;
  TimeContext ctx;
  ctx.default_year = 2026;
  size_t parsed = 0;
  for (const std::string_view sample : kSamples) {
    if (ParseLineTime(buf.Place(sample), ctx)) ++parsed;
  }
  EXPECT_EQ(parsed, std::size(kSamples) - 2);  // "3: hello", "[rank3]:..."
}

TEST(TimeparseRobustness, RandomBytes) {
  GuardedBuffer buf;
  std::mt19937_64 rng(20261102);
  // Biased alphabet: stamp punctuation and letters make the parsers go deep
  // instead of bailing at the first byte; NUL and high bytes stand for binary
  // garbage and invalid UTF-8.
  static constexpr char kAlphabet[] =
      "0123456789012345678901234567890123456789"
      "::::----....,,,,    ++[[]]TZ<>/\t"
      "IWEFNovDecJanFebMonTueSunkernel:INFOERRORWARNINGUTCGMT";
  std::string s;
  for (int iter = 0; iter < 30000; ++iter) {
    const size_t len = rng() % 96;
    s.clear();
    for (size_t k = 0; k < len; ++k) {
      const uint64_t r = rng();
      if (r % 8 == 0) {
        s.push_back(static_cast<char>(r >> 8));  // any byte, incl. NUL, 0x80+
      } else {
        s.push_back(kAlphabet[(r >> 8) % (sizeof(kAlphabet) - 1)]);
      }
    }
    CheckAll(buf.Place(s));
    if (HasFatalFailure()) return;
  }
}

TEST(TimeparseRobustness, MutatedSamples) {
  GuardedBuffer buf;
  std::mt19937_64 rng(7);
  std::string s;
  for (int iter = 0; iter < 30000; ++iter) {
    const std::string_view base = kSamples[rng() % std::size(kSamples)];
    s.assign(base);
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const size_t at = rng() % s.size();
      switch (rng() % 4) {
        case 0:
          s[at] = static_cast<char>(rng());
          break;
        case 1:
          s.erase(at, 1);
          break;
        case 2:
          s.insert(at, 1, static_cast<char>('0' + rng() % 10));
          break;
        default:
          s.resize(at);
          break;
      }
    }
    CheckAll(buf.Place(s));
    if (HasFatalFailure()) return;
  }
}

TEST(TimeparseRobustness, HugeLines) {
  constexpr size_t kBig = 8 << 20;
  const std::string cases[] = {
      std::string(kBig, '9'),
      std::string(kBig, ' '),
      std::string(kBig, '['),
      std::string(kBig, '\0'),
      std::string(kBig, '\xFF'),
      "2026-11-02T13:46:41." + std::string(kBig, '1'),
      "[" + std::string(kBig, ' ') + "5.123456]",
      "[  5." + std::string(kBig, '1') + "]",
      "Nov  2 13:46:41 host " + std::string(kBig, 'k'),
      "Nov  2 13:46:41 host kernel: [" + std::string(kBig, '1'),
  };
  for (const std::string& c : cases) {
    CheckAll(c);
    if (HasFatalFailure()) return;
  }
  EXPECT_FALSE(ParseLineTime(cases[5], TimeContext{}).has_value());
}

TEST(TimeparseRobustness, ParseLineTimeDoesNotAllocate) {
  TimeContext ctx;
  ctx.default_year = 2026;
  g_allocs.store(0);
  g_count_allocs.store(true);
  size_t parsed = 0;
  for (int rep = 0; rep < 10; ++rep) {
    for (const std::string_view sample : kSamples) {
      if (ParseLineTime(sample, ctx)) ++parsed;
      (void)FindMonotonic(sample);
      (void)ParseDmesgDelta(sample);
      (void)ParseIso8601(sample, ctx);
      (void)ParseTzOffset(sample);
    }
  }
  g_count_allocs.store(false);
  EXPECT_EQ(g_allocs.load(), 0);
  EXPECT_GT(parsed, 0u);
}

}  // namespace
}  // namespace faultline
