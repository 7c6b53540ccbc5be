// Bundle merge == one session: a dense many-rank job (1,024 ranks, two
// files) scanned once, and scanned as byte ranges on separate Scanners whose
// results go through serialized bundles and MergeScans, must give the same
// evidence, per-rank summaries, statistics and job window -- with the
// default evidence caps, so that caps, per-chunk thinning and the step-time
// reservoir all apply. This is what faultline.dask.diagnose relies on.
#include <cinttypes>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "scan_test_util.h"

namespace faultline {
namespace {

using scantest::Diff;
using scantest::Keys;

constexpr int kRanks = 1024;

// One file of the job: watchdog timeouts of every rank (glog stamps without a
// year), Megatron iteration lines (progress + metric; rank 0 prints most of
// them, so its step-time reservoir overflows), stamp-less "should dump"
// lines that inherit their time, and chatter that matches nothing.
std::string DenseLog(int file, int lines) {
  std::string out;
  char buf[512];
  uint64_t x = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(file + 1);
  for (int i = 0; i < lines; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const unsigned rank = static_cast<unsigned>((x >> 33) % kRanks);
    const unsigned t = static_cast<unsigned>(i) / 40 + static_cast<unsigned>(file) * 7;  // seconds
    const unsigned h = 13 + t / 3600, m = t / 60 % 60, s = t % 60, us = (i * 7919u) % 1000000u;
    int n = 0;
    switch (i % 10) {
      case 0: case 1: case 2: case 3: case 4:
        n = std::snprintf(buf, sizeof buf,
                          "[rank%u]:[E1102 %02u:%02u:%02u.%06u 41000 ProcessGroupNCCL.cpp:616] [Rank %u] "
                          "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, "
                          "OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600005 milliseconds.",
                          rank, h, m, s, us, rank, 1000 + i);
        break;
      case 5: case 6: {
        const unsigned who = i % 3 ? 0 : rank;
        n = std::snprintf(buf, sizeof buf,
                          "[rank%u]: [2026-11-02 %02u:%02u:%02u] iteration %8d/  100000 | consumed "
                          "samples: %12d | elapsed time per iteration (ms): %u.%u | lm loss: %u.%06uE+00 |",
                          who, h, m, s, i, i * 128, 700 + static_cast<unsigned>((x >> 20) % 300),
                          static_cast<unsigned>((x >> 12) % 10), 1 + static_cast<unsigned>(i % 3),
                          static_cast<unsigned>((x >> 40) % 1000000));
        break;
      }
      case 7:
        n = std::snprintf(buf, sizeof buf,
                          "[rank%u]: Failed to check the \"should dump\" flag on TCPStore (no stamp)", rank);
        break;
      default:
        n = std::snprintf(buf, sizeof buf, "[rank%u]: 2026-11-02 %02u:%02u:%02u,123 - INFO - ok %d", rank,
                          h, m, s, i);
        break;
    }
    out.append(buf, static_cast<size_t>(n));
    out += '\n';
  }
  return out;
}

struct Window {
  int64_t begin = kNoTime, end = kNoTime;
  void Add(int64_t t) {
    if (t == kNoTime) return;
    if (begin == kNoTime || t < begin) begin = t;
    if (end == kNoTime || t > end) end = t;
  }
};

// The job window as the correlator sees it: every evidence and source time.
Window JobWindow(const ScanResult& r) {
  Window w;
  for (const Evidence& ev : r.evidence) w.Add(ev.time_us);
  for (const SourceSummary& s : r.sources) {
    w.Add(s.first_time_us);
    w.Add(s.last_time_us);
  }
  return w;
}

std::set<int64_t> EvidenceRanks(const ScanResult& r) {
  std::set<int64_t> out;
  for (const Evidence& ev : r.evidence) {
    if (ev.rank >= 0) out.insert(ev.rank);
  }
  for (const auto& [rank, rs] : r.ranks) out.insert(rank);
  return out;
}

void ExpectSameRankSummaries(const ScanResult& want, const ScanResult& got) {
  ASSERT_EQ(want.ranks.size(), got.ranks.size());
  for (const auto& [rank, w] : want.ranks) {
    auto it = got.ranks.find(rank);
    ASSERT_NE(it, got.ranks.end()) << "rank " << rank;
    const RankSummary& g = it->second;
    EXPECT_EQ(w.host, g.host) << "rank " << rank;
    EXPECT_EQ(w.progress_lines, g.progress_lines) << "rank " << rank;
    EXPECT_EQ(w.first_progress_us, g.first_progress_us) << "rank " << rank;
    EXPECT_EQ(w.last_progress_us, g.last_progress_us) << "rank " << rank;
    EXPECT_EQ(w.last_step, g.last_step) << "rank " << rank;
    EXPECT_EQ(w.step_samples, g.step_samples) << "rank " << rank;
    // Sums of the same samples in another order: equal up to rounding.
    EXPECT_NEAR(w.step_time_sum, g.step_time_sum, 1e-9 * w.step_time_sum) << "rank " << rank;
    std::vector<double> a = w.step_time_reservoir, b = g.step_time_reservoir;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    EXPECT_EQ(a, b) << "step-time reservoir of rank " << rank << " (" << a.size() << " vs " << b.size()
                    << " samples)";
  }
}

TEST(MergeTest, BundlesOfRangesEqualOneSessionOnDenseManyRankJob) {
  auto rs = scantest::TestRules();
  scantest::TempDir dir;
  const std::vector<std::string> paths = {dir / "job/rank-logs-a.log", dir / "job/rank-logs-b.log"};
  for (int f = 0; f < 2; ++f) scantest::WriteFile(paths[f], DenseLog(f, 60'000));

  ScanOptions opts;  // the default caps: keep_first 2000, keep_last 500
  opts.threads = 2;
  opts.chunk_bytes = 256 << 10;  // many chunks: per-chunk thinning applies
  ASSERT_GT(opts.keep_first + opts.keep_last, 0u);
  ScanResult one = scantest::ScanFiles(rs, paths, opts);

  // The scale-out: each file cut into byte ranges at arbitrary offsets, each
  // range scanned by its own session and exported as a bundle.
  std::vector<ScanResult> parts;
  for (const std::string& path : paths) {
    const uint64_t size = std::filesystem::file_size(path);
    const std::vector<uint64_t> cuts = {0, size / 5 + 17, size / 2 - 3, size * 4 / 5, size};
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
      Scanner s(rs, opts);
      ASSERT_TRUE(s.ScanRange(path, cuts[k], cuts[k + 1], 0).ok());
      ScanResult part = s.Finish();
      auto back = ReadBundle(*rs, SerializeBundle(*rs, part), "part");
      ASSERT_TRUE(back.ok()) << back.status().message();
      parts.push_back(std::move(*back));
    }
  }
  ScanResult merged = MergeScans(*rs, std::move(parts));

  // The caps bit: a session keeps far fewer records than it matched.
  ASSERT_GT(one.matches, 4 * one.evidence.size());
  ASSERT_FALSE(one.dropped.empty());

  EXPECT_EQ(one.evidence.size(), merged.evidence.size()) << "evidence kept";
  EXPECT_EQ(Diff(Keys(one), Keys(merged)), "");
  EXPECT_EQ(EvidenceRanks(one).size(), EvidenceRanks(merged).size()) << "ranks";
  EXPECT_EQ(one.matches, merged.matches);
  EXPECT_EQ(one.dropped, merged.dropped);
  EXPECT_EQ(one.signal_hits, merged.signal_hits);
  ASSERT_EQ(one.rule_stats.size(), merged.rule_stats.size());
  for (const auto& [rule, w] : one.rule_stats) {
    const RuleStats& g = merged.rule_stats[rule];
    EXPECT_EQ(w.count, g.count) << "rule " << rule;
    EXPECT_EQ(w.ranks, g.ranks) << "rule " << rule;
    EXPECT_EQ(w.rank_min_seq, g.rank_min_seq) << "rule " << rule;
    EXPECT_EQ(w.first_time_us, g.first_time_us) << "rule " << rule;
    EXPECT_EQ(w.last_time_us, g.last_time_us) << "rule " << rule;
  }
  const Window wo = JobWindow(one), wm = JobWindow(merged);
  EXPECT_EQ(wo.begin, wm.begin) << "job window start";
  EXPECT_EQ(wo.end, wm.end) << "job window end";
  ASSERT_EQ(one.sources.size(), merged.sources.size());
  for (size_t i = 0; i < one.sources.size(); ++i) {
    EXPECT_EQ(one.sources[i].lines, merged.sources[i].lines) << one.sources[i].name;
    EXPECT_EQ(one.sources[i].first_time_us, merged.sources[i].first_time_us) << one.sources[i].name;
    EXPECT_EQ(one.sources[i].last_time_us, merged.sources[i].last_time_us) << one.sources[i].name;
  }
  ExpectSameRankSummaries(one, merged);
  ASSERT_EQ(one.metrics.size(), merged.metrics.size());
  for (const auto& [key, series] : one.metrics) {
    EXPECT_EQ(series.size(), merged.metrics[key].size()) << key;
  }
  std::printf("one session: %zu evidence, %zu ranks; merged bundles: %zu evidence, %zu ranks\n",
              one.evidence.size(), EvidenceRanks(one).size(), merged.evidence.size(),
              EvidenceRanks(merged).size());
}

// SourceSummary::kernel_log comes from the content, not the file name, and
// survives a bundle merge of byte ranges.
TEST(MergeTest, KernelLogIsSetFromContent) {
  auto rs = scantest::TestRules();
  scantest::TempDir dir;
  std::string kernel, dmesg_h, app;
  for (int i = 0; i < 400; ++i) {
    kernel += "Nov  2 13:46:" + std::to_string(10 + i % 50) + " node017 kernel: [1000" +
              std::to_string(100 + i) + ".682554] mlx5_core 0000:3b:00.0: link up " + std::to_string(i) + "\n";
    dmesg_h += "[  +0.000" + std::to_string(100 + i) + "] eth0: renamed from veth" + std::to_string(i) + "\n";
    app += "[rank3]:[2026-11-02 13:46:" + std::to_string(10 + i % 50) + "] iteration " + std::to_string(i) +
           "/ 100 | consumed samples: 1 |\n";
  }
  const std::vector<std::string> paths = {dir / "n1/console-0.txt", dir / "n1/output-1.txt",
                                          dir / "n1/worker-2.txt"};
  scantest::WriteFile(paths[0], kernel);
  scantest::WriteFile(paths[1], "[Nov 2 13:46] eth0: link up\n" + dmesg_h);
  scantest::WriteFile(paths[2], app);
  ScanOptions opts;
  opts.threads = 1;
  opts.chunk_bytes = 4096;
  ScanResult one = scantest::ScanFiles(rs, paths, opts);
  ASSERT_EQ(one.sources.size(), 3u);
  EXPECT_TRUE(one.sources[0].kernel_log);
  EXPECT_TRUE(one.sources[1].kernel_log);
  EXPECT_FALSE(one.sources[2].kernel_log);
  std::vector<ScanResult> parts;
  for (const std::string& path : paths) {
    const uint64_t size = std::filesystem::file_size(path);
    for (uint64_t b : {uint64_t{0}, size / 2}) {
      Scanner s(rs, opts);
      ASSERT_TRUE(s.ScanRange(path, b, b == 0 ? size / 2 : size, 0).ok());
      auto back = ReadBundle(*rs, SerializeBundle(*rs, s.Finish()), "part");
      ASSERT_TRUE(back.ok());
      parts.push_back(std::move(*back));
    }
  }
  ScanResult merged = MergeScans(*rs, std::move(parts));
  ASSERT_EQ(merged.sources.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(merged.sources[i].kernel_log, one.sources[i].kernel_log) << paths[i];
}

}  // namespace
}  // namespace faultline
