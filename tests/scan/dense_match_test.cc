// A dense log's matches go the cheap way (issue #20, "per-match cost"): a
// line whose message repeats another's under a different clock takes its
// attribution from the per-thread memo of message scans, and most of its
// records are past the per-rule caps. Whatever the way, the scan must count
// and place every match as the plain way does: the same matches per signal,
// per-rule counts, ranks, hosts and first/last times, per-rank progress,
// topology, and the same evidence kept. Each input is scanned with the memo
// on and off, on one thread and on two, with small caps.
//
// The generated log needs python3 (bench/gen_logs.py); the hand-written one
// does not.
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "attribution/attribution.h"
#include "gtest/gtest.h"
#include "scan/scan.h"
#include "scan_test_util.h"

namespace faultline::scantest {
namespace {

// `memo` and `cheap`: the memo of message scans, and the cheap ways of the
// merge and phase B for the records the caps drop (ScanOptions::counted_keep).
ScanResult ScanWith(const std::vector<std::string>& paths, bool memo, unsigned threads, bool cheap = true) {
  SetMessageMemo(memo);
  ScanOptions o;
  o.threads = threads;
  o.counted_keep = cheap;
  o.keep_first = 5;
  o.keep_last = 5;
  o.chunk_bytes = size_t{256} << 10;  // several chunks: thinning happens per chunk
  Scanner s(DefaultRules(), o);
  EXPECT_TRUE(s.ScanPaths(paths).ok());
  ScanResult r = s.Finish();
  SetMessageMemo(true);
  return r;
}

void ExpectSameScan(const ScanResult& want, const ScanResult& got) {
  EXPECT_EQ(got.matches, want.matches);
  EXPECT_EQ(got.signal_hits, want.signal_hits);
  EXPECT_EQ(got.dropped, want.dropped);
  ASSERT_EQ(got.rule_stats.size(), want.rule_stats.size());
  for (const auto& [rule, w] : want.rule_stats) {
    ASSERT_TRUE(got.rule_stats.contains(rule)) << rule;
    auto row = [](const RuleStats& r) {
      return std::tie(r.count, r.ranks, r.hosts, r.rank_min_seq, r.first_time_us, r.last_time_us);
    };
    EXPECT_EQ(row(got.rule_stats.at(rule)), row(w)) << rule;
  }
  ASSERT_EQ(got.ranks.size(), want.ranks.size());
  for (const auto& [rank, w] : want.ranks) {
    auto row = [](const RankSummary& r) {
      return std::tie(r.host, r.progress_lines, r.first_progress_us, r.last_progress_us, r.last_step,
                      r.step_samples);
    };
    EXPECT_EQ(row(got.ranks.at(rank)), row(w)) << rank;
  }
  ASSERT_EQ(got.sources.size(), want.sources.size());
  for (size_t i = 0; i < want.sources.size(); ++i) {
    EXPECT_EQ(got.sources[i].lines, want.sources[i].lines);
    EXPECT_EQ(got.sources[i].first_time_us, want.sources[i].first_time_us);
    EXPECT_EQ(got.sources[i].last_time_us, want.sources[i].last_time_us);
    EXPECT_EQ(got.sources[i].monotonic_anchor_us, want.sources[i].monotonic_anchor_us);
  }
  EXPECT_EQ(got.devices.size(), want.devices.size());
  EXPECT_EQ(got.pids.size(), want.pids.size());
  for (size_t i = 0; i < want.pids.size() && i < got.pids.size(); ++i) {
    EXPECT_EQ(got.pids[i].pid, want.pids[i].pid);
    EXPECT_EQ(got.pids[i].rank, want.pids[i].rank);
    EXPECT_EQ(got.pids[i].host, want.pids[i].host);
  }
  EXPECT_EQ(got.distinct_ranks.kept, want.distinct_ranks.kept);
  EXPECT_EQ(got.distinct_hosts.kept, want.distinct_hosts.kept);
  ASSERT_EQ(got.evidence.size(), want.evidence.size());
  for (size_t i = 0; i < want.evidence.size(); ++i) {
    const Evidence &w = want.evidence[i], &g = got.evidence[i];
    ASSERT_EQ(g.line, w.line) << i;
    EXPECT_EQ(g.signal, w.signal) << w.line;
    EXPECT_EQ(g.rank, w.rank) << w.line;
    EXPECT_EQ(g.local_rank, w.local_rank) << w.line;
    EXPECT_EQ(g.pid, w.pid) << w.line;
    EXPECT_EQ(g.host, w.host) << w.line;
    EXPECT_EQ(g.gpu, w.gpu) << w.line;
    EXPECT_EQ(g.time_us, w.time_us) << w.line;
    EXPECT_EQ(g.text, w.text) << w.line;
    EXPECT_EQ(g.fields, w.fields) << w.line;
  }
}

void ExpectEveryWayAlike(const std::vector<std::string>& paths, uint64_t min_matches) {
  const ScanResult plain = ScanWith(paths, false, 1, false);
  ASSERT_GE(plain.matches, min_matches);
  uint64_t dropped = 0;
  for (const auto& [rule, n] : plain.dropped) dropped += n;
  ASSERT_GT(dropped, plain.matches / 2) << "the caps must drop most records";
  for (unsigned threads : {1u, 2u}) {
    SCOPED_TRACE(threads);
    ExpectSameScan(plain, ScanWith(paths, true, threads));
  }
}

// The NCCL init context line of every rank on every step, under glog
// headers whose clocks and thread ids change, with kernel and rank markers
// in other lines around them.
std::string HandDenseLog() {
  std::string log;
  for (int step = 0; step < 400; ++step) {
    for (int rank = 0; rank < 12; ++rank) {
      const int us = (step * 7919 + rank * 104729) % 1000000;
      char clock[64];
      std::snprintf(clock, sizeof clock, "13:%02d:%02d.%06d", step / 60 % 60, step % 60, us);
      const std::string tid = std::to_string(rank % 3 == 0 ? 7 : 41000 + rank * 97 + step % 2);
      log += "[rank" + std::to_string(rank) + "]:[I1102 " + clock + " " + tid +
             " ProcessGroupNCCL.cpp:931] [PG 0 Rank " + std::to_string(rank) +
             "] ProcessGroupNCCL initialization options: size: 12, global rank: " + std::to_string(rank) +
             ", TIMEOUT(ms): 600000, USE_HIGH_PRIORITY_STREAM: 0, PG Name: 0\n";
      // Watchdog lines of ranks 5, 7 and 9, those of 7 and 9 without the
      // launcher prefix: their rank comes from the message's "[PG 0 Rank N]".
      if ((rank == 5 || rank == 7 || rank == 9) && step % 10 == 0) {
        log += (rank == 5 ? "[rank5]:" : "") + std::string("[E1102 ") + clock + " " + tid +
               " ProcessGroupNCCL.cpp:1484] [PG 0 Rank " + std::to_string(rank) +
               "] Watchdog caught collective operation timeout: "
               "WorkNCCL(SeqNum=" +
               std::to_string(1000 + step) + ", OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran "
               "for 600010 milliseconds before timing out.\n";
      }
    }
    // NCCL's "host:pid:tid [dev]" prefix and vLLM's "(VllmWorkerProcess
    // pid=N)": dropped records that link a pid to its rank, the second on
    // the host the first gave that pid.
    log += "[rank3]:node3:41000:41090 [3] NCCL INFO ProcessGroupNCCL initialization options: size: 12, "
           "global rank: 3, TIMEOUT(ms): 600000, PG Name: 0\n";
    log += "(VllmWorkerProcess pid=41000) INFO 11-02 13:" + std::to_string(10 + step / 60) + ":" +
           std::to_string(10 + step % 40) + " ProcessGroupNCCL initialization options: size: 12, global rank: 3, "
           "TIMEOUT(ms): 600000\n";
    // Ranks 7 and 9 report an OOM whose rank only the message names
    // (no capture): the lines differ in the clock and that digit alone.
    if (step % 10 == 5) {
      for (int rank : {7, 9}) {
        log += "[E1102 13:" + std::to_string(10 + step / 60) + ":" + std::to_string(10 + step % 40) +
               ".000123 4100" + std::to_string(rank) + " train.py:88] [Rank " + std::to_string(rank) +
               "] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n";
      }
    }
    if (step % 40 == 0) {
      log += "[Mon Nov  2 13:" + std::to_string(10 + step / 40) +
             ":00 2026] NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python3, GPU has fallen off the bus.\n";
    }
  }
  return log;
}

TEST(DenseMatches, HandWrittenLogScansAlikeEveryWay) {
  TempDir dir;
  WriteFile(dir / "job.log", HandDenseLog());
  ExpectEveryWayAlike({dir / "job.log"}, 4800);
}

// CountMatch remembers the ranks it admitted for the result being made,
// and where its per-signal and per-rule counts are: a scanner's second
// result (after Finish) admits the ranks again and counts in its own maps,
// so its distinct ranks, per-rule ranks and counts, rank summaries and
// signal hits are the first's.
TEST(DenseMatches, SecondResultOfAScannerAdmitsItsRanksAgain) {
  TempDir dir;
  WriteFile(dir / "job.log", HandDenseLog());
  std::string other;
  for (int rank = 3000; rank < 5000; rank += 250) {
    other += "[rank" + std::to_string(rank) +
             "]:[I1102 13:00:00.351576 41000 ProcessGroupNCCL.cpp:931] [PG 0 Rank " + std::to_string(rank) +
             "] ProcessGroupNCCL initialization options: size: 8192, global rank: " + std::to_string(rank) +
             ", TIMEOUT(ms): 600000, USE_HIGH_PRIORITY_STREAM: 0, PG Name: 0\n";
  }
  WriteFile(dir / "other.log", other);
  ScanOptions o;
  o.threads = 1;
  o.keep_first = 5;
  o.keep_last = 5;
  Scanner reused(DefaultRules(), o);
  for (const char* name : {"job.log", "other.log"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(reused.ScanPaths({dir / name}).ok());
    const ScanResult first = reused.Finish();
    ASSERT_TRUE(reused.ScanPaths({dir / name}).ok());
    const ScanResult second = reused.Finish();
    // (A source's line count and offsets go on from the first result's;
    // the ranks are what the memo could lose.)
    ASSERT_FALSE(first.distinct_ranks.kept.empty());
    EXPECT_EQ(second.distinct_ranks.kept, first.distinct_ranks.kept);
    ASSERT_EQ(second.rule_stats.size(), first.rule_stats.size());
    for (const auto& [rule, w] : first.rule_stats) {
      EXPECT_EQ(second.rule_stats.at(rule).ranks, w.ranks) << rule;
      EXPECT_EQ(second.rule_stats.at(rule).count, w.count) << rule;
    }
    // CountMatch's pointers to the counts are the new result's too.
    EXPECT_EQ(second.signal_hits, first.signal_hits);
    EXPECT_EQ(second.matches, first.matches);
    ASSERT_EQ(second.ranks.size(), first.ranks.size());
    for (const auto& [rank, w] : first.ranks) EXPECT_TRUE(second.ranks.contains(rank)) << rank;
  }
}

TEST(DenseMatches, GeneratedDenseLogScansAlikeEveryWay) {
  if (std::system("python3 -c 'import sys' > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "python3 is not available";
  }
  TempDir dir;
  const std::string out = dir / "dense.log";
  const std::string cmd = std::string("python3 ") + FL_SOURCE_DIR + "/bench/gen_logs.py --single '" + out +
                          "' --size 3M --seed 2 --dense 0.17 --jobs 1 --manifest '" + dir / "m.json" + "' 2> '" +
                          dir / "gen.err" + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd << "\n" << ReadFile(dir / "gen.err");
  ExpectEveryWayAlike({out}, 3000);
}

}  // namespace
}  // namespace faultline::scantest
