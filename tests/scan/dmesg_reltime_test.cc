// `dmesg -H` (--reltime) prints "[Nov 2 13:46]" when the minute changes and
// "[  +0.000316]" deltas from the previous record otherwise. The scanner adds
// the deltas up from the last minute stamp (within the inheritance window),
// so an Xid printed 41.5 s into the minute is dated 41.5 s into it -- the
// same for any chunking, a stream, or byte ranges merged by a scale-out.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "evidence/bundle.h"
#include "scan_test_util.h"
#include "timeparse/timeparse.h"

namespace faultline {
namespace {

using scantest::BigCaps;
using scantest::Diff;
using scantest::Keys;

// 2026-11-02T13:46:00 UTC in microseconds.
int64_t Minute(int m) {
  TimeContext tc;
  tc.default_year = 2026;
  return *ParseIso8601("2026-11-02T13:46:00Z", tc) + int64_t{m} * 60'000'000;
}

std::string Delta(int64_t us) {
  char b[64];
  std::snprintf(b, sizeof b, "[  +%lld.%06lld] ", static_cast<long long>(us / 1000000),
                static_cast<long long>(us % 1000000));
  return b;
}

const char kXid[] = "NVRM: Xid (PCI:0000:3b:00): 79, pid=4711, GPU has fallen off the bus.\n";
const char kNoise[] = "mlx5_core 0000:0c:00.0: mlx5_fw_tracer_handle_traces:737:(pid 0): trace ok\n";

struct Expected {
  size_t offset;
  int64_t time_us;
};

// Minutes of kernel log: each opens with its stamp, then noise lines with
// deltas (and continuation lines without any stamp); an Xid now and then.
std::string Log(std::vector<Expected>* xids) {
  std::string log;
  std::mt19937 rng(5);
  for (int m = 0; m < 40; ++m) {
    char stamp[32];
    std::snprintf(stamp, sizeof stamp, "[Nov 2 %02d:%02d]", 13 + (46 + m) / 60, (46 + m) % 60);
    log += std::string(stamp) + " usb 1-1: new high-speed USB device\n";
    int64_t at = 0;
    for (int i = 0; i < 30; ++i) {
      int64_t d = 1 + rng() % 1'500'000;
      at += d;
      if (i % 7 == 3) {
        xids->push_back({log.size(), Minute(m) + at});
        log += Delta(d) + kXid;
        log += "  continuation line of the record above\n";
      } else {
        log += Delta(d) + kNoise;
      }
    }
  }
  return log;
}

TEST(DmesgReltime, ParsedDelta) {
  TimeContext tc;
  auto t = ParseLineTime("[  +0.000316] usb 1-1: reset", tc);
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->wall_us);
  ASSERT_TRUE(t->delta_s);
  EXPECT_DOUBLE_EQ(*t->delta_s, 0.000316);
  auto a = ParseLineTime("[Nov 2 13:46] usb 1-1: new device", tc);
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->wall_us);
  EXPECT_FALSE(a->delta_s);
}

TEST(DmesgReltime, DeltasAddUpTheSameEveryWay) {
  scantest::TempDir dir;
  std::vector<Expected> xids;
  const std::string log = Log(&xids);
  const std::string path = dir / "node017/dmesg-H.log";
  scantest::WriteFile(path, log);
  auto rs = scantest::DefaultRules();

  ScanResult whole = scantest::ScanFiles(rs, {path}, BigCaps(1));
  std::vector<const Evidence*> found;
  for (const Evidence& e : whole.evidence) {
    if (rs->rule(e.rule)->id()->string_view() == "xid-79-fallen-off-bus" &&
        rs->signal(e.signal).signal->id()->string_view() == "xid79") {
      found.push_back(&e);
    }
  }
  ASSERT_EQ(found.size(), xids.size());
  for (size_t i = 0; i < xids.size(); ++i) {
    EXPECT_EQ(found[i]->offset, xids[i].offset);
    EXPECT_EQ(found[i]->time_us, xids[i].time_us) << "xid #" << i << " at " << xids[i].offset;
    EXPECT_EQ(found[i]->time_source, TimeSource::kInferredYear);
  }
  // The source's last time is the last record's, deltas included.
  ASSERT_EQ(whole.sources.size(), 1u);
  EXPECT_GT(whole.sources[0].last_time_us, Minute(39));

  auto want = Keys(whole);
  for (size_t chunk : {size_t{4096}, size_t{1000}, size_t{777}}) {
    EXPECT_EQ(Diff(want, Keys(scantest::ScanFiles(rs, {path}, BigCaps(2, chunk)))), "")
        << "chunk " << chunk;
  }
  // Byte ranges, merged directly and through serialized bundles.
  for (uint64_t at : {xids[3].offset + 3, xids[10].offset - 40, log.size() / 3}) {
    for (bool bundles : {false, true}) {
      EXPECT_EQ(Diff(want, Keys(scantest::ScanRangesMerged(rs, path, {at}, bundles))), "")
          << "cut at " << at << (bundles ? " through bundles" : "");
    }
  }
  // Many small ranges (most without a minute stamp), in bundles.
  std::vector<uint64_t> cuts;
  for (uint64_t b = 600; b < log.size(); b += 600) cuts.push_back(b);
  EXPECT_EQ(Diff(want, Keys(scantest::ScanRangesMerged(rs, path, cuts, true))), "") << "600-byte ranges";
  // A pushed stream flushed after every random piece.
  EXPECT_EQ(Diff(want, Keys(scantest::ScanStreamFlushed(rs, path, log, BigCaps(1), 3, 700))), "");
}

// Deltas only count from a minute stamp within the inheritance window, as
// any inherited time: farther away, the line has no time rather than one
// that depends on where a chunk was cut.
TEST(DmesgReltime, AnchorOutOfReachLeavesNoTime) {
  scantest::TempDir dir;
  std::string log = "[Nov 2 13:46] usb 1-1: new high-speed USB device\n";
  while (log.size() < kInheritWindow + 100) log += Delta(10) + kNoise;
  size_t xid_at = log.size();
  log += Delta(10) + kXid;
  const std::string path = dir / "dmesg.log";
  scantest::WriteFile(path, log);
  auto rs = scantest::DefaultRules();
  for (size_t chunk : {size_t{16} << 20, size_t{4096}}) {
    ScanResult r = scantest::ScanFiles(rs, {path}, BigCaps(1, chunk));
    bool seen = false;
    for (const Evidence& e : r.evidence) {
      if (e.offset != xid_at) continue;
      seen = true;
      EXPECT_EQ(e.time_us, kNoTime) << "chunk " << chunk;
    }
    EXPECT_TRUE(seen);
  }
}

}  // namespace
}  // namespace faultline
