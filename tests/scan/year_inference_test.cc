// Year-less stamps (syslog, glog) take the year of their file's mtime, then
// FinalizeTimes moves them to the year nearest the job's dated evidence: an
// archive copied in January keeps December's kernel lines in December. Lines
// that inherit such a stamp move with it -- else an unstamped continuation
// line would sit a year away from the line it continues.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <utime.h>

#include <random>

#include "evidence/bundle.h"
#include "evidence/finalize.h"
#include "scan_test_util.h"

namespace faultline {
namespace {

using scantest::BigCaps;

int64_t Iso(const char* s) {
  TimeContext tc;
  return *ParseIso8601(s, tc);
}

TEST(YearInference, InheritedTimesMoveWithTheirStamp) {
  scantest::TempDir dir;
  // The application's own log carries its year.
  std::string app;
  for (int i = 0; i < 20; ++i) {
    app += "2026-12-31 23:5" + std::to_string(i % 10) + ":00,000 - INFO - step " + std::to_string(i) + "\n";
  }
  scantest::WriteFile(dir / "node017/rank-0.log", app);
  // The kernel log: syslog stamps without a year, and an OOM report whose
  // summary line the collector printed without a stamp.
  const std::string kern =
      "Dec 31 23:59:50 node017 kernel: python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0\n"
      "  Out of memory: Killed process 4711 (python3) total-vm:812345678kB, anon-rss:801234567kB\n";
  const std::string kpath = dir / "node017/kern.log";
  scantest::WriteFile(kpath, kern);
  // Copied off the node in the new year.
  struct utimbuf t;
  t.actime = t.modtime = static_cast<time_t>(Iso("2027-01-05T10:00:00Z") / 1000000);
  ASSERT_EQ(utime(kpath.c_str(), &t), 0);
  auto rs = scantest::DefaultRules();

  auto check = [&](const ScanResult& r, const char* how) {
    const int64_t want = Iso("2026-12-31T23:59:50Z");
    auto invoked = scantest::OfRule(r, *rs, "host-oom-kill");
    ASSERT_EQ(invoked.size(), 2u) << how;
    for (const Evidence* e : invoked) {
      EXPECT_EQ(e->time_us, want) << how << ": " << e->text;
    }
    EXPECT_EQ(invoked[1]->time_source, TimeSource::kInherited) << how;
  };
  check(scantest::ScanFiles(rs, {dir.path()}, BigCaps(1)), "one scan");
  // Each file on its own, merged through bundles (a scale-out).
  std::vector<ScanResult> parts;
  for (const std::string& p : {std::string(dir / "node017/rank-0.log"), kpath}) {
    ScanResult one = scantest::ScanFiles(rs, {p}, BigCaps(1));
    auto back = ReadBundle(*rs, SerializeBundle(*rs, one), "part");
    ASSERT_TRUE(back.ok()) << back.status();
    parts.push_back(std::move(*back));
  }
  check(MergeScans(*rs, std::move(parts)), "merged bundles");
}

// The year shift by civil-day arithmetic gives what timegm gives: on
// 29 February (1 March in a common year), on the days around each new year,
// and on random times from 1970 to 9999 against references up to four years
// away either side.
TEST(YearInference, NearestYearIsTimegms) {
  std::mt19937_64 rng(20);
  std::vector<int64_t> times;
  for (int y = 1970; y <= 2110; ++y) {
    for (const char* md : {"-02-28T23:59:59.999999Z", "-02-29T00:00:00.000001Z", "-02-29T12:00:00Z",
                           "-03-01T00:00:00Z", "-12-31T23:59:59.5Z", "-01-01T00:00:00Z"}) {
      TimeContext tc;
      if (auto t = ParseIso8601(std::to_string(y) + md, tc)) times.push_back(*t);
    }
  }
  std::uniform_int_distribution<int64_t> any(0, int64_t{253402300799} * 1000000);
  for (int i = 0; i < 20000; ++i) times.push_back(any(rng));
  std::uniform_int_distribution<int64_t> away(-int64_t{4} * 366 * 86400 * 1000000,
                                              int64_t{4} * 366 * 86400 * 1000000);
  ASSERT_GT(times.size(), 20000u + 141 * 4);  // the dates parsed
  // And at the bound of the shortcut that keeps a time within 182 days of
  // the reference, on either side of it.
  constexpr int64_t kDayUs = int64_t{86400} * 1000000;
  for (int64_t us : times) {
    for (int k = 0; k < 4; ++k) {
      const int64_t ref = us + away(rng);
      ASSERT_EQ(internal::NearestYear(us, ref), internal::NearestYearByTimegm(us, ref)) << us << " " << ref;
    }
    for (int64_t d : {182 * kDayUs, 182 * kDayUs + 1, 183 * kDayUs, 183 * kDayUs - 1}) {
      for (int64_t ref : {us + d, us - d}) {
        ASSERT_EQ(internal::NearestYear(us, ref), internal::NearestYearByTimegm(us, ref)) << us << " " << ref;
      }
    }
  }
}

}  // namespace
}  // namespace faultline
