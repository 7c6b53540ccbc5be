// A match storm: most records of a rule lie past its caps (the first
// keep_first and the last keep_last of the rule in a source), and phase B
// and the merge only count them (MarkThin's thin records, Keep's
// KeepCounted; issue #20's "per-match cost" passes, the twenty-sixth of
// which tried counting them without their Evidence). However they are
// counted, the result must be the one of every record built whole
// (ScanOptions::counted_keep false): the rule's count, ranks, hosts, first
// and last time, the pid links, the matches per signal and the dropped
// counts, and the same evidence kept -- across chunk boundaries, on one
// thread and two, whole files, compressed files, byte ranges and pushed
// streams.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "scan/scan.h"
#include "scan_test_util.h"

namespace faultline::scantest {
namespace {

ScanOptions Caps(unsigned threads, bool counted) {
  ScanOptions o;
  o.threads = threads;
  o.counted_keep = counted;
  o.keep_first = 7;
  o.keep_last = 4;
  o.chunk_bytes = size_t{64} << 10;  // many chunks, each past the caps
  return o;
}

// Every rank's ProcessGroupNCCL init line, step after step, some under
// glog stamps that go back and forth, some unstamped after a stamped line
// that does not match (their time inherited, across a chunk's start for
// some), some with NCCL's host:pid:tid prefix. In the middle only: the
// rule's earliest and latest times, a rank and a host no other line names.
std::string StormLog() {
  std::string log;
  char clock[64];
  for (int step = 0; step < 900; ++step) {
    for (int rank = 0; rank < 6; ++rank) {
      int sec = (step / 3) % 60, min = 20 + step / 180;
      if (step == 450 && rank == 0) min = 5;   // the earliest (a stamped line)
      if (step == 451 && rank == 2) min = 55;  // the latest (a stamped line)
      std::snprintf(clock, sizeof clock, "13:%02d:%02d.%06d", min, sec, (rank * 104729 + step * 7919) % 1000000);
      const int named = step == 452 && rank == 1 ? 777 : rank;
      const std::string tail = "ProcessGroupNCCL initialization options: size: 6, global rank: " +
                               std::to_string(named) + ", TIMEOUT(ms): 600000, PG Name: 0\n";
      switch ((step + rank) % 3) {
        case 0:
          log += "[rank" + std::to_string(named) + "]:[I1102 " + clock + " 4100" + std::to_string(rank) +
                 " ProcessGroupNCCL.cpp:931] [PG 0 Rank " + std::to_string(named) + "] " + tail;
          break;
        case 1:
          log += "I1102 " + std::string(clock) + " 4100" + std::to_string(rank) + " train.py:12] step " +
                 std::to_string(step) + " begins\n" + tail;
          break;
        default: {
          const std::string host = step == 453 && rank == 2 ? "node77" : "node" + std::to_string(rank / 2);
          log += "[rank" + std::to_string(named) + "]:" + host + ":" + std::to_string(41000 + rank) + ":41090 [" +
                 std::to_string(rank % 2) + "] NCCL INFO " + tail;
        }
      }
    }
  }
  return log;
}

using Row = std::tuple<uint64_t, std::map<int64_t, uint64_t>, std::map<std::string, uint64_t>, int64_t, int64_t>;
Row RowOf(const RuleStats& r) { return {r.count, r.ranks, r.hosts, r.first_time_us, r.last_time_us}; }

void ExpectSame(const ScanResult& want, const ScanResult& got) {
  EXPECT_EQ(got.matches, want.matches);
  EXPECT_EQ(got.signal_hits, want.signal_hits);
  EXPECT_EQ(got.dropped, want.dropped);
  ASSERT_EQ(got.rule_stats.size(), want.rule_stats.size());
  for (const auto& [rule, w] : want.rule_stats) {
    ASSERT_TRUE(got.rule_stats.contains(rule)) << rule;
    EXPECT_EQ(RowOf(got.rule_stats.at(rule)), RowOf(w)) << rule;
  }
  ASSERT_EQ(got.pids.size(), want.pids.size());
  for (size_t i = 0; i < want.pids.size(); ++i) {
    EXPECT_EQ(std::tie(got.pids[i].host, got.pids[i].pid, got.pids[i].rank),
              std::tie(want.pids[i].host, want.pids[i].pid, want.pids[i].rank));
  }
  EXPECT_EQ(got.distinct_ranks.kept, want.distinct_ranks.kept);
  EXPECT_EQ(got.distinct_hosts.kept, want.distinct_hosts.kept);
  EXPECT_EQ(Keys(got), Keys(want)) << Diff(Keys(want), Keys(got));
  ASSERT_EQ(got.evidence.size(), want.evidence.size());
  for (size_t i = 0; i < want.evidence.size(); ++i) {
    EXPECT_EQ(got.evidence[i].text, want.evidence[i].text) << i;
    EXPECT_EQ(got.evidence[i].fields, want.evidence[i].fields) << i;
    EXPECT_EQ(got.evidence[i].time_us, want.evidence[i].time_us) << i;
  }
}

// The storm's rule: the one with the most records.
const RuleStats& StormRule(const ScanResult& r) {
  return std::max_element(r.rule_stats.begin(), r.rule_stats.end(),
                          [](const auto& a, const auto& b) { return a.second.count < b.second.count; })
      ->second;
}

TEST(CountedRecords, CountedAsTheRecordsTheyStandFor) {
  TempDir dir;
  WriteFile(dir / "job.log", StormLog());
  WriteFile(dir / "job.log.gz", Gzip(StormLog()));
  for (const char* name : {"job.log", "job.log.gz"}) {
    SCOPED_TRACE(name);
    const ScanResult whole = ScanFiles(DefaultRules(), {dir / name}, Caps(1, false));
    // The reference itself: every init line counted, the caps dropping
    // nearly all, and the middle's times, rank and host in the rule's
    // stats though no record of them is kept.
    const RuleStats& storm = StormRule(whole);
    ASSERT_EQ(storm.count, 900u * 6);
    uint64_t dropped = 0;
    for (const auto& [rule, n] : whole.dropped) dropped += n;
    ASSERT_GT(dropped, storm.count * 9 / 10);
    EXPECT_TRUE(storm.ranks.contains(777));
    EXPECT_TRUE(storm.hosts.contains("node77"));
    int64_t kept_min = INT64_MAX, kept_max = INT64_MIN;
    for (const Evidence& ev : whole.evidence) {
      if (ev.time_us == kNoTime) continue;
      kept_min = std::min(kept_min, ev.time_us);
      kept_max = std::max(kept_max, ev.time_us);
    }
    EXPECT_LT(storm.first_time_us, kept_min);
    EXPECT_GT(storm.last_time_us, kept_max);
    for (unsigned threads : {1u, 2u}) {
      SCOPED_TRACE(threads);
      ExpectSame(whole, ScanFiles(DefaultRules(), {dir / name}, Caps(threads, true)));
    }
  }
}

// A byte range's scan reads the lines before it again for what they carry
// (a carry-only chunk), and a pushed stream is scanned as it comes: the
// records they only count are counted as whole ones.
ScanResult Ranges(const std::string& path, bool counted) {
  const uint64_t size = ReadFile(path).size();
  std::vector<ScanResult> parts;
  for (uint64_t k = 0; k < 5; ++k) {
    Scanner s(DefaultRules(), Caps(1, counted));
    const absl::Status st = s.ScanRange(path, size * k / 5, size * (k + 1) / 5, 0);
    EXPECT_TRUE(st.ok()) << st.message();
    parts.push_back(s.Finish());
  }
  return MergeScans(*DefaultRules(), std::move(parts));
}

TEST(CountedRecords, RangesAndStreamsCountedAsTheirRecords) {
  TempDir dir;
  const std::string log = StormLog();
  WriteFile(dir / "job.log", log);
  {
    SCOPED_TRACE("ranges");
    ExpectSame(Ranges(dir / "job.log", false), Ranges(dir / "job.log", true));
  }
  SCOPED_TRACE("stream");
  auto pieces = [](size_t left) { return std::min<size_t>(left, 50000); };
  ExpectSame(ScanStream(DefaultRules(), "job.log", log, Caps(1, false), pieces),
             ScanStream(DefaultRules(), "job.log", log, Caps(1, true), pieces));
}

}  // namespace
}  // namespace faultline::scantest
