// MeasureSignalCosts' sample (bench --costs): the budget counts decompressed
// bytes, whatever mix of plain, gzip and zstd files the paths stand for.
#include "scan/signal_cost.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scan_test_util.h"

namespace faultline {
namespace {

using scantest::Gzip;
using scantest::JobLog;
using scantest::TempDir;
using scantest::TestRules;
using scantest::WriteFile;
using scantest::Zstd;

constexpr uint64_t kMiB = uint64_t{1} << 20;

// Four gzip and two zstd files of 2 MiB of log each (compressed about 5x):
// a 1 MiB budget takes 1 MiB, not 1 MiB from every file.
TEST(SignalCostSample, CompressedFilesKeepTheBudget) {
  TempDir dir;
  for (int i = 0; i < 4; ++i)
    WriteFile(dir / ("gz/rank-" + std::to_string(i) + ".log.gz"), Gzip(JobLog(i, 2 * kMiB)));
  for (int i = 4; i < 6; ++i)
    WriteFile(dir / ("zst/rank-" + std::to_string(i) + ".log.zst"), Zstd(JobLog(i, 2 * kMiB)));
  for (const std::string sub : {"gz", "zst", ""}) {
    auto costs = MeasureSignalCosts(*TestRules(), {dir / sub}, kMiB);
    ASSERT_TRUE(costs.ok()) << costs.status();
    EXPECT_LE(costs->sample_bytes, kMiB) << "in " << sub;
    // Every file holds more than its share: the budget is used up but for
    // the partial line cut at the end of each share.
    EXPECT_GE(costs->sample_bytes, kMiB - 6 * 32768) << "in " << sub;
    EXPECT_TRUE(costs->skipped.empty());
  }
}

// Plain and compressed side by side: shares by size on disk, and a source
// that cannot fill its share passes the rest on, so small inputs are taken
// whole.
TEST(SignalCostSample, MixedSourcesShareOneBudget) {
  TempDir dir;
  // The compressed file fills what the small plain one leaves.
  WriteFile(dir / "a/plain.log", JobLog(7, 100000));
  WriteFile(dir / "a/packed.log.gz", Gzip(JobLog(8, 4 * kMiB)));
  auto costs = MeasureSignalCosts(*TestRules(), {dir / "a"}, kMiB);
  ASSERT_TRUE(costs.ok()) << costs.status();
  EXPECT_LE(costs->sample_bytes, kMiB);
  EXPECT_GE(costs->sample_bytes, kMiB - 2 * 32768);

  const std::string small1 = JobLog(9, 100000), small2 = JobLog(10, 150000);
  WriteFile(dir / "b/one.log.gz", Gzip(small1));
  WriteFile(dir / "b/two.log.zst", Zstd(small2));
  auto whole = MeasureSignalCosts(*TestRules(), {dir / "b"}, 64 * kMiB);
  ASSERT_TRUE(whole.ok()) << whole.status();
  auto ends_nl = [](const std::string& s) {
    return s.size() + (s.empty() || s.back() != '\n' ? 1 : 0);
  };
  EXPECT_EQ(whole->sample_bytes, ends_nl(small1) + ends_nl(small2));
}

// A budget smaller than one line still gives at most the budget.
TEST(SignalCostSample, TinyBudget) {
  TempDir dir;
  WriteFile(dir / "x.log.gz", Gzip(std::string(5000, 'a') + "\n"));
  auto costs = MeasureSignalCosts(*TestRules(), {dir / "x.log.gz"}, 100);
  ASSERT_TRUE(costs.ok()) << costs.status();
  EXPECT_EQ(costs->sample_bytes, 100u);
}

// The confirm + extract figure is what phase B does: a signal the hand
// parser confirms and extracts is priced without RE2, which is never built.
TEST(SignalCostSample, PricesTheHandParserNotRe2) {
  TempDir dir;
  std::string log;
  for (int i = 1; i <= 200; ++i) {
    log += " iteration " + std::to_string(i) + "/  159576 | consumed samples: 4096 | lm loss: 3.87" +
           std::to_string(i % 10) + "E+00 | grad norm: 1.5 |\n";
  }
  WriteFile(dir / "m/train.log", log);
  auto rs = Ruleset::LoadDefault();
  ASSERT_TRUE(rs.ok()) << rs.status();
  auto costs = MeasureSignalCosts(**rs, {dir / "m"}, kMiB);
  ASSERT_TRUE(costs.ok()) << costs.status();
  int priced = 0;
  for (const SignalCost& c : costs->signals) {
    const SignalInfo& si = (*rs)->signal(c.signal);
    if (si.signal->id()->string_view() != "megatron-lm-loss") continue;
    EXPECT_EQ(c.lines, 200u);
    EXPECT_FALSE(si.regex->confirm_built.load());
    EXPECT_FALSE(si.regex->extracts_built.load());
    ++priced;
  }
  EXPECT_EQ(priced, 1);
}

}  // namespace
}  // namespace faultline
