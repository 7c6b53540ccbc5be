// The per-signal plan of phase B: which patterns a Hyperscan match alone
// confirms, and that records the caps drop keep exactly what the uncapped
// statistics, topology, pid links and sync points read.
#include "scan/confirm_plan.h"

#include <gtest/gtest.h>
#include <re2/re2.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "scan_test_util.h"

namespace faultline {
namespace {

using internal::HsMatchConfirms;
using scantest::DefaultRules;
using scantest::ScanFiles;
using scantest::TempDir;
using scantest::WriteFile;

TEST(HsMatchConfirms, LiteralsClassesGroupsQualify) {
  for (const char* p : {"ProcessGroupNCCL initialization options: size: [0-9]+, global rank: [0-9]+",
                        "comm 0x[0-9a-f]+ rank [0-9]+ (nvmlDev [0-9]+ )?busId [0-9a-f]+ - Init (START|COMPLETE)",
                        "TIMEOUT\\(ms\\): [0-9]{1,9}", "(?:a|b|)c+?", "[-a-z_.]+ x", "Xid [0-9]+, pid="}) {
    EXPECT_TRUE(HsMatchConfirms(p)) << p;
  }
}

TEST(HsMatchConfirms, WhatCouldReachPastTheLineOrDisagreeIsLeftToRe2) {
  for (const char* p : {"a.b",         // '.' (RE2: one UTF-8 character, Hyperscan: one byte)
                        "^Error",      // anchors: buffer start in Hyperscan, line start in RE2
                        "error$", "\\bfoo", "a\\sb",  // boundaries, shorthand classes
                        "[^)]+x",      // a negated class matches '\n'
                        "a\\d", "a\\x41", "a\\n", "(?i)abc", "(?P<n>a)b", "(?=a)b", "a++b", "a{,3}",
                        "[[:alpha:]]x", "caf\xc3\xa9", "a\tb", "[\t-~]x", "", "(ab", "ab)", "a[b"}) {
    EXPECT_FALSE(HsMatchConfirms(p)) << p;
  }
}

// Where a default signal's Hyperscan match would be taken as confirmed (its
// pattern qualifies; the compiler keeps it whole unless the reference sample
// never holds its literal, and then a prefilter stands in), RE2 agrees on
// each of its examples (the self-tests hold for the RE2 path too).
TEST(HsMatchConfirms, DefaultSignalsTheirExamplesConfirmInRe2) {
  auto rs = DefaultRules();
  std::vector<internal::SignalPlan> plans = internal::PlanSignals(*rs);
  size_t qualifying = 0;
  for (uint32_t id = 0; id < rs->signal_count(); ++id) {
    if (!plans[id].hs_confirms && !HsMatchConfirms(rs->signal(id).signal->pattern()->string_view())) continue;
    ++qualifying;
    const SignalInfo& si = rs->signal(id);
    ASSERT_NE(si.confirm(), nullptr);
    if (!si.signal->examples()) continue;
    for (const auto* ex : *si.signal->examples()) {
      EXPECT_TRUE(RE2::PartialMatch(ex->string_view(), *si.confirm())) << ex->string_view();
    }
  }
  EXPECT_GT(qualifying, 0u);
}

// A signal whose Hyperscan search is a prefilter (its rarest literal,
// ruleset.fbs) is always confirmed by RE2: the literal in a line the
// pattern does not match is no evidence. The newer watchdog line holds the
// legacy signal's literal ("... WorkNCCL(SeqNum=") but not its pattern
// (NumelIn between OpType and Timeout).
TEST(HsMatchConfirms, PrefilteredSignalsAreConfirmedByRe2) {
  auto rs = DefaultRules();
  std::vector<internal::SignalPlan> plans = internal::PlanSignals(*rs);
  size_t prefiltered = 0;
  for (uint32_t id = 0; id < rs->signal_count(); ++id) {
    if (!rs->signal(id).signal->prefilter()) continue;
    ++prefiltered;
    EXPECT_FALSE(plans[id].hs_confirms) << rs->signal(id).signal->id()->str();
  }
  EXPECT_GT(prefiltered, 0u);
  TempDir dir;
  WriteFile(dir / "job.log",
            "[rank1]:[E418 18:32:45.457035698 ProcessGroupNCCL.cpp:629] [Rank 1] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=335785, OpType=ALLGATHER, NumelIn=1, NumelOut=2, "
            "Timeout(ms)=600000) ran for 600019 milliseconds before timing out.\n");
  ScanResult r = ScanFiles(rs, {dir / "job.log"}, ScanOptions());
  std::set<std::string> signals;
  for (const Evidence& e : r.evidence) signals.insert(rs->signal(e.signal).signal->id()->str());
  EXPECT_TRUE(signals.count("watchdog_timeout"));
  EXPECT_FALSE(signals.count("watchdog_timeout_legacy"));
}

// A match storm of context signals whose captures set the rank (the c10d
// init line's "global rank") and carry topology (NCCL's init lines): what
// the caps drop is only counted, and every figure Keep derives from it is
// the same as when each record is made whole (an on_evidence callback
// turns thinning off).
TEST(ThinRecords, KeepReadsTheSameAsFromWholeRecords) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 6000; ++i) {
    char buf[600];
    int r = i % 64;
    std::snprintf(buf, sizeof buf,
                  "[rank0]:[I1102 13:%02d:%02d.%06d 41000 ProcessGroupNCCL.cpp:931] [PG 0 Rank %d] ProcessGroupNCCL "
                  "initialization options: size: 64, global rank: %d, TIMEOUT(ms): 600000, PG Name: 0\n"
                  "node%03d:4100%d:4121%d [%d] NCCL INFO ncclCommInitRank comm 0x55d3a%04x rank %d nranks 64 "
                  "cudaDev %d nvmlDev %d busId %x000 commId 0x5f2a91c3e4b7d8%02x - Init %s\n",
                  (i / 60) % 60, i % 60, i, r, r, r / 8, r % 8, r % 8, r % 8, i, r, r % 8, r % 8,
                  0x18 + r % 8, i % 7, i % 2 ? "COMPLETE" : "START");
    text += buf;
  }
  WriteFile(dir / "job.log", text);
  auto rs = DefaultRules();
  ScanOptions thin;
  thin.threads = 2;
  thin.chunk_bytes = 64 << 10;
  thin.keep_first = 10;
  thin.keep_last = 5;
  ScanOptions whole = thin;
  size_t seen = 0;
  whole.on_evidence = [&](const Evidence&, const std::string&) { ++seen; };
  ScanResult a = ScanFiles(rs, {dir / "job.log"}, thin);
  ScanResult b = ScanFiles(rs, {dir / "job.log"}, whole);
  ASSERT_EQ(seen, b.matches);
  int pg = rs->FindRule("nccl-init");
  ASSERT_GE(pg, 0);
  EXPECT_GT(a.dropped[pg], 10000u);  // the storm went through the thin path
  EXPECT_EQ(a.matches, b.matches);
  EXPECT_EQ(a.signal_hits, b.signal_hits);
  EXPECT_EQ(a.dropped, b.dropped);
  ASSERT_EQ(a.rule_stats.size(), b.rule_stats.size());
  for (const auto& [rule, s] : b.rule_stats) {
    const RuleStats& t = a.rule_stats[rule];
    EXPECT_EQ(t.count, s.count);
    EXPECT_EQ(t.ranks, s.ranks);  // from the "global rank" capture, not the [rank0]: prefix
    EXPECT_EQ(t.hosts, s.hosts);
    EXPECT_EQ(t.rank_min_seq, s.rank_min_seq);
    EXPECT_EQ(t.first_time_us, s.first_time_us);
    EXPECT_EQ(t.last_time_us, s.last_time_us);
  }
  EXPECT_EQ(a.rule_stats[pg].ranks.size(), 64u);
  auto devices = [](const ScanResult& r) {
    std::vector<std::tuple<std::string, int64_t, int64_t, std::string, int64_t, bool>> v;
    for (const DeviceLink& l : r.devices) v.emplace_back(l.host, l.rank, l.cuda_dev, l.bus_id, l.nranks, l.global);
    return v;
  };
  auto pids = [](const ScanResult& r) {
    std::vector<std::tuple<std::string, int64_t, int64_t>> v;
    for (const PidLink& l : r.pids) v.emplace_back(l.host, l.pid, l.rank);
    return v;
  };
  auto syncs = [](const ScanResult& r) {
    std::vector<std::tuple<std::string, std::string, int64_t, int64_t>> v;
    for (const SyncPoint& s : r.sync_points) v.emplace_back(s.key, s.host, s.rank, s.time_us);
    return v;
  };
  EXPECT_EQ(devices(a), devices(b));
  EXPECT_EQ(pids(a), pids(b));
  EXPECT_EQ(syncs(a), syncs(b));
  ASSERT_EQ(a.evidence.size(), b.evidence.size());
  for (size_t i = 0; i < a.evidence.size(); ++i) {
    EXPECT_EQ(a.evidence[i].offset, b.evidence[i].offset);
    EXPECT_EQ(a.evidence[i].text, b.evidence[i].text);
    EXPECT_EQ(a.evidence[i].fields, b.evidence[i].fields);
    EXPECT_EQ(a.evidence[i].rank, b.evidence[i].rank);
  }
}

TEST(IsThinField, TheFieldsKeepReadsAndNoOthers) {
  for (std::string_view name : {"seq", "bus_id", "cuda_dev", "comm_id", "comm_rank", "nranks", "pod", "node",
                                "block_host", "block_rank", "file_pid", "file_", "section_pod", "local_ranks",
                                "global_ranks"}) {
    EXPECT_TRUE(internal::IsThinField(name)) << name;
  }
  for (std::string_view name : {"", "rank", "host", "pid", "local_rank", "timeout_ms", "se", "seqs", "bus",
                                "block", "file", "comm", "node_name", "pods", "nrank", "section", "global_rank",
                                "local_ranks_x", "Seq", "step", "value"}) {
    EXPECT_FALSE(internal::IsThinField(name)) << name;
  }
}

// Where a pattern ends in its extract (pg_init_options), phase B's first
// pass takes the captures with the confirm (SignalInfo::ConfirmAndExtract)
// and the second pass uses them: every record's fields must be the
// extract's on its line in RE2 -- a line with the extract's text before the
// pattern's match (the extract's leftmost match is that one), two matches,
// a carriage return, lines the pattern does not hold on -- whole (big caps)
// and thin (small caps: the rank only), on 1 and 2 threads.
TEST(ConfirmAndExtract, RecordsHoldTheExtractsCaptures) {
  TempDir dir;
  const std::string opts = "ProcessGroupNCCL initialization options: size: ";
  std::vector<std::string> lines;
  for (int i = 0; i < 3000; ++i) {
    const std::string n = std::to_string(i), t = std::to_string(600000 + i % 7);
    const std::string match = opts + "64, global rank: " + n + ", TIMEOUT(ms): " + t;
    switch (i % 6) {
      case 0: lines.push_back("[rank" + n + "]:[I1102 13:00:00.351576 41000 ProcessGroupNCCL.cpp:931] " + match); break;
      case 1: lines.push_back("global rank: " + std::to_string(i * 3) + ", TIMEOUT(ms): 5 then " + match); break;
      case 2: lines.push_back(match + ", PG Name: 0\r"); break;
      case 3: lines.push_back(match + "; " + opts + "8, global rank: 1, TIMEOUT(ms): 2"); break;
      case 4: lines.push_back(opts + "64, global rank: " + n + ", TIMEOUT(ms): x " + t); break;
      case 5: lines.push_back(opts + ", global rank: " + n + ", TIMEOUT(ms): " + t); break;
    }
  }
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  WriteFile(dir / "job.log", text);
  auto rs = DefaultRules();
  const int rule = rs->FindRule("nccl-init");
  ASSERT_GE(rule, 0);
  const SignalInfo* si = nullptr;
  for (uint32_t g = rs->first_signal(rule); g < rs->signal_count() && rs->signal(g).rule_index == uint32_t(rule); ++g) {
    if (rs->signal(g).signal->id()->string_view() == "pg_init_options") si = &rs->signal(g);
  }
  ASSERT_NE(si, nullptr);
  RE2 pattern(si->signal->pattern()->string_view()), extract(si->signal->extract()->string_view());
  std::vector<std::pair<std::string, std::string>> want;  // rank, timeout_ms
  for (std::string l : lines) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    std::string rank, timeout;
    if (RE2::PartialMatch(l, pattern)) {
      ASSERT_TRUE(RE2::PartialMatch(l, extract, &rank, &timeout));
      want.emplace_back(rank, timeout);
    }
  }
  ASSERT_EQ(want.size(), 2000u);
  for (unsigned threads : {1u, 2u}) {
    ScanOptions whole = scantest::BigCaps(threads, 64 << 10);
    ScanResult r = ScanFiles(rs, {dir / "job.log"}, whole);
    std::vector<std::pair<std::string, std::string>> got;
    for (const Evidence* e : scantest::OfRule(r, *rs, "nccl-init")) {
      if (e->signal != si->signal_index + rs->first_signal(rule)) continue;
      const std::string* rank = e->Field("rank");
      const std::string* timeout = e->Field("timeout_ms");
      got.emplace_back(rank ? *rank : "-", timeout ? *timeout : "-");
      EXPECT_EQ(e->rank, std::stoll(got.back().first));
    }
    EXPECT_EQ(got, want) << threads;
    // Thin: the rank sets the records' ranks all the same.
    ScanOptions thin = whole;
    thin.keep_first = 10;
    thin.keep_last = 5;
    ScanResult t = ScanFiles(rs, {dir / "job.log"}, thin);
    EXPECT_GT(t.dropped[rule], 1900u);
    std::map<int64_t, uint64_t> ranks;
    for (const auto& [rank, timeout] : want) ++ranks[std::stoll(rank)];
    EXPECT_EQ(t.rule_stats[rule].ranks, ranks) << threads;
    EXPECT_EQ(r.rule_stats[rule].ranks, ranks) << threads;
  }
}

}  // namespace
}  // namespace faultline
