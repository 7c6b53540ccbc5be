// Phase A leaves the bytes before a matched line where they are, and phase B
// reads them only for a line that inherits its time (ScanOptions::
// lazy_context): the copy phase A made of them for every matched line was
// nearly a dense log's whole chunk once more. Whatever the way, a line must
// inherit what it inherited from the copy: the same time, from the same
// stamped line, within the same window, through the previous matched line
// of the chunk, with the dmesg -H deltas in between, at a chunk's start, in
// a mapped chunk, a small file read whole, a stream and a .gz file.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scan_test_util.h"

namespace faultline::scantest {
namespace {

ScanOptions Options(bool lazy, unsigned threads, size_t chunk) {
  ScanOptions o = BigCaps(threads, chunk);
  o.lazy_context = lazy;
  return o;
}

void ExpectSameTimes(const ScanResult& want, const ScanResult& got) {
  ASSERT_GT(want.evidence.size(), 50u);
  EXPECT_EQ(Diff(Keys(want), Keys(got)), "");
  ASSERT_EQ(got.sources.size(), want.sources.size());
  for (size_t i = 0; i < want.sources.size(); ++i) {
    EXPECT_EQ(got.sources[i].first_time_us, want.sources[i].first_time_us);
    EXPECT_EQ(got.sources[i].last_time_us, want.sources[i].last_time_us);
  }
}

// Kernel minutes under dmesg -H: a minute stamp, then Xid records with their
// own deltas and noise lines between them, some long enough that a stamp
// falls out of the inheritance window.
std::string DmesgLog() {
  std::string log;
  for (int m = 0; m < 120; ++m) {
    char line[160];
    std::snprintf(line, sizeof line, "[Nov 2 %02d:%02d] usb 1-1: new high-speed USB device\n", 13 + m / 60, m % 60);
    log += line;
    for (int i = 0; i < 12; ++i) {
      std::snprintf(line, sizeof line, "[  +%d.%06d] ", i % 3, (m * 7919 + i * 104729) % 1000000);
      log += line;
      if (i % 4 == 1) {
        log += "NVRM: Xid (PCI:0000:3b:00): 79, pid=4711, GPU has fallen off the bus.\n";
      } else {
        log += "mlx5_core 0000:0c:00.0: trace " + std::string((m + i) % 9 == 0 ? 9000 : 40, 'x') + "\n";
      }
    }
  }
  return log;
}

TEST(LazyContext, MappedChunksInheritAsFromTheCopy) {
  TempDir dir;
  // NCCL INFO chatter without stamps under Python logging and syslog
  // stamps, lines of 5-20 KiB now and then (a stamp out of reach).
  WriteFile(dir / "job.log", JobLog(11, size_t{3} << 20));
  WriteFile(dir / "kern.log", DmesgLog());
  const std::vector<std::string> paths = {dir / "job.log", dir / "kern.log"};
  for (size_t chunk : {size_t{64} << 10, size_t{1} << 20, size_t{16} << 20}) {
    for (unsigned threads : {1u, 2u}) {
      SCOPED_TRACE(std::to_string(chunk) + " bytes a chunk, " + std::to_string(threads) + " threads");
      ExpectSameTimes(ScanFiles(DefaultRules(), paths, Options(false, threads, chunk)),
                      ScanFiles(DefaultRules(), paths, Options(true, threads, chunk)));
    }
  }
}

TEST(LazyContext, SmallFilesStreamsAndGzipInheritAsFromTheCopy) {
  TempDir dir;
  const std::string job = JobLog(12, size_t{200} << 10);  // under 256 KiB: read whole
  WriteFile(dir / "small.log", job);
  WriteFile(dir / "big.log.gz", Gzip(JobLog(13, size_t{5} << 20)));
  const std::vector<std::string> paths = {dir / "small.log", dir / "big.log.gz"};
  for (unsigned threads : {1u, 2u}) {
    SCOPED_TRACE(threads);
    ExpectSameTimes(ScanFiles(DefaultRules(), paths, Options(false, threads, size_t{4} << 20)),
                    ScanFiles(DefaultRules(), paths, Options(true, threads, size_t{4} << 20)));
  }
  auto pieces = [](size_t left) { return std::min<size_t>(left, 70001); };
  ExpectSameTimes(ScanStream(DefaultRules(), "job", job, Options(false, 1, size_t{4} << 20), pieces),
                  ScanStream(DefaultRules(), "job", job, Options(true, 1, size_t{4} << 20), pieces));
}

}  // namespace
}  // namespace faultline::scantest
