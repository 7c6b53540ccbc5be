// The correlator on synthetic ScanResults: each decision it makes (explains
// edges and their lag windows, layers, suspect inference, clock alignment,
// stale gating, rule conditions, peer addresses, detectors) on evidence built
// by hand, so a test states exactly what the scan would have seen.
//
// Rule ids are the default ruleset's (gpu and nccl families) where a test is
// about those rules; conditions the default rules do not combine, and what
// the correlator learns from rule roles (role: tags), use small rule trees
// compiled here from JSON source, with ids unlike the default ones.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "correlate/correlate.h"
#include "correlate/state.h"
#include "detect/detect.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ruleset/compiler.h"
#include "ruleset/ruleset.h"
#include "util/strings.h"

namespace faultline {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int64_t kS = 1'000'000;
constexpr int64_t kMin = 60 * kS;
constexpr int64_t kHour = 3600 * kS;
constexpr int64_t kDay = 24 * kHour;
// 2026-10-27 06:13:20 UTC: a job on the default ruleset's calendar.
constexpr int64_t kT0 = 1'793'081'600LL * kS;
const char* const kBus[8] = {"18000", "2a000", "3a000", "5d000", "9a000", "ab000", "ba000", "db000"};
const char* const kPci[8] = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
                             "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"};

const Ruleset& DefaultRules() {
  static const std::shared_ptr<const Ruleset> rs = [] {
    auto r = Ruleset::LoadDefault();
    if (!r.ok()) {
      ADD_FAILURE() << r.status();
      return std::shared_ptr<const Ruleset>();
    }
    return *r;
  }();
  return *rs;
}

std::string HostName(int h) { return StrCat("node", 100 + h); }

// A ScanResult built by hand: sources, evidence in source-then-offset
// order, topology, sync points and per-rank progress summaries.
class Synth {
 public:
  explicit Synth(const Ruleset& rs) : rs_(rs) {}

  uint32_t Source(const std::string& name, const std::string& host, int64_t rank = -1,
                  int64_t first = kNoTime, int64_t last = kNoTime) {
    SourceSummary s;
    s.name = name;
    s.host = host;
    s.rank = rank;
    s.first_time_us = first;
    s.last_time_us = last;
    s.kernel_log = name.find("kern") != std::string::npos || name.find("dmesg") != std::string::npos;
    scan.sources.push_back(s);
    next_offset_.push_back(0);
    return static_cast<uint32_t>(scan.sources.size() - 1);
  }

  // A rank log per rank of `hosts` x 8 spanning [first, last], with the
  // NCCL device map of DGX buses.
  void Job(int hosts, int64_t first, int64_t last) {
    for (int h = 0; h < hosts; ++h) {
      for (int lr = 0; lr < 8; ++lr) {
        int64_t r = h * 8 + lr;
        rank_src_[r] = Source(StrCat(HostName(h), "/rank-", r, ".log"), HostName(h), r, first, last);
        scan.devices.push_back({HostName(h), r, lr, kBus[lr]});
      }
    }
  }
  uint32_t RankSource(int64_t rank) const { return rank_src_.at(rank); }
  uint32_t Kernel(int h) {
    auto it = kern_.find(h);
    if (it != kern_.end()) return it->second;
    return kern_[h] = Source(StrCat(HostName(h), "/kern.log"), HostName(h));
  }

  uint32_t SignalId(std::string_view rule, std::string_view signal) const {
    int r = rs_.FindRule(rule);
    EXPECT_GE(r, 0) << rule;
    if (r < 0) return 0;
    const fb::Rule* ru = rs_.rule(static_cast<size_t>(r));
    for (flatbuffers::uoffset_t i = 0; i < ru->signals()->size(); ++i) {
      if (ru->signals()->Get(i)->id()->string_view() == signal) return rs_.first_signal(r) + i;
    }
    ADD_FAILURE() << rule << " has no signal " << signal;
    return 0;
  }

  Evidence& Add(uint32_t src, std::string_view rule, std::string_view signal, int64_t t, int64_t rank,
                std::string text = "") {
    Evidence ev;
    ev.source = src;
    ev.offset = next_offset_[src];
    next_offset_[src] += 200;
    ev.line = ev.offset / 200 + 1;
    ev.time_us = t;
    ev.time_source = t == kNoTime ? TimeSource::kNone : TimeSource::kParsed;
    ev.rank = rank;
    ev.host = scan.sources[src].host;
    ev.rule = static_cast<uint32_t>(rs_.FindRule(rule));
    ev.signal = SignalId(rule, signal);
    ev.text = text.empty() ? StrCat(rule, " ", signal, " line ", ev.line, " of ", scan.sources[src].name) : text;
    scan.evidence.push_back(ev);
    RuleStats& st = scan.rule_stats[ev.rule];
    ++st.count;
    if (rank >= 0) ++st.ranks[rank];
    return scan.evidence.back();
  }

  Evidence& Xid79(int h, int lr, int64_t t, double uptime_s = 1e6) {
    Evidence& ev = Add(Kernel(h), "xid-79-fallen-off-bus", "xid79", t, -1,
                       StrCat("NVRM: Xid (PCI:", std::string(kPci[lr]).substr(0, 10),
                              "): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus. @", t));
    ev.gpu = kPci[lr];
    ev.monotonic_s = uptime_s;
    ev.fields = {{"pci", std::string(kPci[lr]).substr(0, 10)}, {"xid", "79"}};
    return ev;
  }

  // New-format watchdog timeout on `rank` at t (SeqNum seq).
  Evidence& Watchdog(int64_t rank, int64_t t, int64_t seq = 4711) {
    Evidence& ev = Add(RankSource(rank), "nccl-watchdog-timeout", "watchdog_timeout", t, rank);
    ev.fields = {{"seq", StrCat(seq)}, {"op", "ALLREDUCE"}, {"timeout_ms", "1800000"}};
    auto& m = scan.rule_stats[ev.rule].rank_min_seq;
    auto [it, fresh] = m.emplace(rank, seq);
    if (!fresh) it->second = std::min(it->second, seq);
    return ev;
  }

  // Progress summary of a rank: `samples` steps of `step_s` ending at last.
  void Progress(int64_t rank, const std::string& host, int64_t last, double step_s, int samples = 60) {
    RankSummary& r = scan.ranks[rank];
    r.rank = rank;
    r.host = host;
    r.progress_lines = static_cast<uint64_t>(samples);
    r.last_progress_us = last;
    r.first_progress_us =
        last == kNoTime ? kNoTime : last - static_cast<int64_t>(step_s * samples * 1e6);
    r.last_step = samples * 10;
    r.step_samples = static_cast<uint64_t>(samples);
    for (int i = 0; i < samples; ++i) {
      double x = step_s * (1.0 + 0.01 * ((i * 7) % 5 - 2));  // +-2% jitter
      r.step_time_reservoir.push_back(x);
      r.step_time_sum += x;
      r.step_time_sumsq += x * x;
    }
  }

  Diagnosis Run(const CorrelateOptions& opts = {}) {
    std::stable_sort(scan.evidence.begin(), scan.evidence.end(), [](const Evidence& a, const Evidence& b) {
      return a.source != b.source ? a.source < b.source : a.offset < b.offset;
    });
    return Correlate(rs_, scan, opts);
  }

  std::string RuleId(uint32_t rule) const { return rs_.rule(rule)->id()->str(); }

  ScanResult scan;

 private:
  const Ruleset& rs_;
  std::vector<uint64_t> next_offset_;
  std::map<int64_t, uint32_t> rank_src_;
  std::map<int, uint32_t> kern_;
};

class CorrelateTest : public ::testing::Test {
 protected:
  // The ruleset of the rule ids the helpers below name.
  virtual const Ruleset& rs() { return DefaultRules(); }
  std::string Id(uint32_t rule) { return rs().rule(rule)->id()->str(); }
  // The causes, without the practice findings (no checkpoint after SIGTERM,
  // newest checkpoint hours old) that follow any long failed run.
  static std::vector<const Incident*> Causes(const Diagnosis& d) {
    std::vector<const Incident*> out;
    for (const Incident& i : d.incidents) {
      if (i.detector != "missing_checkpoint_after_sigterm" && i.detector != "stale_checkpoint") out.push_back(&i);
    }
    return out;
  }
  std::vector<std::string> Ids(const Diagnosis& d) {
    std::vector<std::string> out;
    for (const Incident* i : Causes(d)) out.push_back(Id(i->rule));
    return out;
  }
  const Collateral* FindCollateral(const Incident& inc, std::string_view rule) {
    for (const Collateral& c : inc.collateral) {
      if (Id(c.rule) == rule) return &c;
    }
    return nullptr;
  }
  const Ignored* FindIgnored(const Diagnosis& d, std::string_view rule, std::string_view reason_prefix) {
    for (const Ignored& g : d.ignored) {
      if (Id(g.rule) == rule && g.reason.rfind(reason_prefix, 0) == 0) return &g;
    }
    return nullptr;
  }
};

// ---------------------------------------------------------------- explains

TEST_F(CorrelateTest, ExplainsEdgeInsideLagWindowMakesCollateral) {
  Synth s(rs());
  s.Job(2, kT0, kT0 + 2 * kHour);
  s.Xid79(0, 2, kT0 + 30 * kMin);  // rank 2's GPU
  for (int64_t r = 0; r < 16; ++r) {
    if (r != 2) s.Watchdog(r, kT0 + 60 * kMin + r * kS);  // 30 min later: inside [-5, 3600] s
  }
  Diagnosis d = s.Run();
  ASSERT_EQ(Causes(d).size(), 1u) << ::testing::PrintToString(Ids(d));
  const Incident& inc = d.incidents[0];
  EXPECT_EQ(Id(inc.rule), "xid-79-fallen-off-bus");
  EXPECT_EQ(inc.rank, 2);
  EXPECT_EQ(inc.host, "node100");
  EXPECT_EQ(inc.gpu, kPci[2]);
  EXPECT_FALSE(inc.inferred);
  const Collateral* co = FindCollateral(inc, "nccl-watchdog-timeout");
  ASSERT_NE(co, nullptr);
  EXPECT_EQ(co->count, 15u);
  EXPECT_EQ(co->ranks.size(), 15u);
  EXPECT_THAT(co->hosts, ElementsAre("node100", "node101"));
  EXPECT_NE(inc.explanation.find("edge xid-79-fallen-off-bus -> nccl-watchdog-timeout"), std::string::npos)
      << inc.explanation;
}

TEST_F(CorrelateTest, ExplainsEdgeOutsideLagWindowIsAnotherIncident) {
  for (int64_t lag_s : {3700, -60}) {  // past max_lag_s 3600; before min_lag_s -5
    SCOPED_TRACE(lag_s);
    Synth s(rs());
    s.Job(2, kT0 - 3 * kHour, kT0 + 3 * kHour);
    s.Xid79(0, 2, kT0);
    for (int64_t r = 0; r < 16; ++r) {
      if (r != 2) s.Watchdog(r, kT0 + lag_s * kS + r * 100'000);
    }
    Diagnosis d = s.Run();
    ASSERT_EQ(Causes(d).size(), 2u) << ::testing::PrintToString(Ids(d));
    // The seen Xid still comes first, alone; the timeouts are their own
    // (inferred) story.
    EXPECT_EQ(Id(d.incidents[0].rule), "xid-79-fallen-off-bus");
    EXPECT_THAT(d.incidents[0].collateral, IsEmpty());
    EXPECT_EQ(Id(d.incidents[1].rule), "nccl-watchdog-timeout");
    EXPECT_TRUE(d.incidents[1].inferred);
    EXPECT_EQ(d.incidents[1].rank, 2);  // and rank 2 is the one absent from them
  }
}

TEST_F(CorrelateTest, LowerLayerWinsAmongNearSimultaneousCauses) {
  // An Xid 13 (driver layer) 20 s before the Xid 79 (hardware layer) of the
  // same GPU: both explain the watchdog cluster; near-simultaneous, so the
  // lower layer is the cause.
  Synth s(rs());
  s.Job(2, kT0, kT0 + 2 * kHour);
  Evidence& app = s.Add(s.Kernel(0), "xid-app-fault", "xid13", kT0 + 30 * kMin, -1);
  app.gpu = kPci[2];
  s.Xid79(0, 2, kT0 + 30 * kMin + 20 * kS);
  for (int64_t r = 0; r < 16; ++r) {
    if (r != 2) s.Watchdog(r, kT0 + 60 * kMin + r * kS);
  }
  Diagnosis d = s.Run();
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_EQ(Id(d.incidents[0].rule), "xid-79-fallen-off-bus") << ::testing::PrintToString(Ids(d));
  EXPECT_NE(FindCollateral(d.incidents[0], "nccl-watchdog-timeout"), nullptr);
  for (size_t i = 1; i < d.incidents.size(); ++i) {
    EXPECT_EQ(FindCollateral(d.incidents[i], "nccl-watchdog-timeout"), nullptr) << Id(d.incidents[i].rule);
  }
}

TEST_F(CorrelateTest, EarlierCauseWinsWhenNotNearSimultaneous) {
  // Five minutes apart is not near-simultaneous: the earlier event explains
  // the watchdog cluster, whatever its layer.
  Synth s(rs());
  s.Job(2, kT0, kT0 + 2 * kHour);
  Evidence& app = s.Add(s.Kernel(0), "xid-app-fault", "xid13", kT0 + 25 * kMin, -1);
  app.gpu = kPci[2];
  s.Xid79(0, 2, kT0 + 30 * kMin);
  for (int64_t r = 0; r < 16; ++r) {
    if (r != 2) s.Watchdog(r, kT0 + 50 * kMin + r * kS);
  }
  Diagnosis d = s.Run();
  const Incident* app_inc = nullptr;
  for (const Incident& i : d.incidents) {
    if (Id(i.rule) == "xid-app-fault") app_inc = &i;
  }
  ASSERT_NE(app_inc, nullptr) << ::testing::PrintToString(Ids(d));
  EXPECT_NE(FindCollateral(*app_inc, "nccl-watchdog-timeout"), nullptr);
}

// ---------------------------------------------------------------- suspects

TEST_F(CorrelateTest, AbsentRankIsTheSuspect) {
  Synth s(rs());
  s.Job(2, kT0, kT0 + 2 * kHour);
  for (int64_t r = 0; r < 16; ++r) {
    if (r != 13) s.Watchdog(r, kT0 + 60 * kMin + r * kS);
  }
  Diagnosis d = s.Run();
  ASSERT_EQ(Causes(d).size(), 1u);
  const Incident& inc = d.incidents[0];
  EXPECT_EQ(Id(inc.rule), "nccl-watchdog-timeout");
  EXPECT_TRUE(inc.inferred);
  EXPECT_THAT(inc.suspects, ElementsAre(13));
  EXPECT_EQ(inc.rank, 13);
  EXPECT_EQ(inc.host, "node101");
  EXPECT_EQ(inc.gpu, kPci[5]);
  EXPECT_NE(inc.explanation.find("15 of 16 ranks"), std::string::npos) << inc.explanation;
  // What would settle it: that host's kernel log around the stop.
  bool dmesg = false;
  for (const std::string& f : inc.missing_facts) dmesg |= f.find("dmesg of node101") != std::string::npos;
  EXPECT_TRUE(dmesg) << ::testing::PrintToString(inc.missing_facts);
}

TEST_F(CorrelateTest, LowestSeqNumIsTheSuspectWhenNoRankIsAbsent) {
  Synth s(rs());
  s.Job(2, kT0, kT0 + 2 * kHour);
  for (int64_t r = 0; r < 16; ++r) s.Watchdog(r, kT0 + 60 * kMin + r * kS, r == 9 ? 4710 : 4711);
  Diagnosis d = s.Run();
  ASSERT_EQ(Causes(d).size(), 1u);
  EXPECT_TRUE(d.incidents[0].inferred);
  EXPECT_THAT(d.incidents[0].suspects, ElementsAre(9));
  EXPECT_EQ(d.incidents[0].host, "node101");
  EXPECT_NE(d.incidents[0].explanation.find("lower collective SeqNum"), std::string::npos);
}

TEST_F(CorrelateTest, FirstRankToStopProgressIsTheSuspect) {
  Synth s(rs());
  s.Job(2, kT0, kT0 + 2 * kHour);
  for (int64_t r = 0; r < 16; ++r) {
    s.Watchdog(r, kT0 + 70 * kMin + r * kS);
    // Rank 6 stopped ten minutes before the others.
    s.Progress(r, HostName(static_cast<int>(r / 8)), kT0 + (r == 6 ? 30 : 40) * kMin, 1.0);
  }
  Diagnosis d = s.Run();
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_EQ(Id(d.incidents[0].rule), "nccl-watchdog-timeout");
  EXPECT_THAT(d.incidents[0].suspects, ElementsAre(6));
  EXPECT_EQ(d.incidents[0].host, "node100");
  EXPECT_NE(d.incidents[0].explanation.find("stopped making progress first"), std::string::npos);
}

TEST_F(CorrelateTest, NoSuspectWhenEveryRankLooksAlike) {
  Synth s(rs());
  s.Job(2, kT0, kT0 + 2 * kHour);
  for (int64_t r = 0; r < 16; ++r) s.Watchdog(r, kT0 + 60 * kMin + r * kS);
  Diagnosis d = s.Run();
  ASSERT_EQ(Causes(d).size(), 1u);
  EXPECT_TRUE(d.incidents[0].inferred);
  EXPECT_THAT(d.incidents[0].suspects, IsEmpty());
  EXPECT_EQ(d.incidents[0].rank, -1);
  EXPECT_FALSE(d.incidents[0].missing_facts.empty());
}

TEST_F(CorrelateTest, LineAboutAnotherRankNamesThatRanksHost) {
  // Rank 0 (node100) prints that rank 13 never joined: the incident is about
  // rank 13, on node101, not about the printer's host.
  Synth s(rs());
  s.Job(2, kT0, kT0 + 2 * kHour);
  Evidence& ev = s.Add(s.RankSource(0), "collective-desync-stuck", "desync_never_joined", kT0 + 60 * kMin, 13);
  ev.fields = {{"rank", "13"}};
  Diagnosis d = s.Run();
  ASSERT_EQ(Causes(d).size(), 1u);
  EXPECT_EQ(d.incidents[0].rank, 13);
  EXPECT_EQ(d.incidents[0].host, "node101");
}

// Every rank's fingerprint check raises: each rank in step names rank
// `odd`, which names rank `odd_names`.
void Mismatch(Synth& s, int64_t ranks, int64_t odd, int64_t odd_names) {
  for (int64_t r = 0; r < ranks; ++r) {
    Evidence& ev = s.Add(s.RankSource(r), "collective-desync-stuck", "collective_mismatch",
                         kT0 + 60 * kMin + r * 1000, r);
    ev.fields = {{"named_rank", StrCat(r == odd ? odd_names : odd)}};
  }
}

TEST_F(CorrelateTest, RankMostLinesNameIsTheSuspect) {
  // Rank 11 (node101) ran another collective: the other 15 ranks' lines
  // name it, its own names rank 0. The lines' own ranks stay their loggers.
  Synth s(rs());
  s.Job(2, kT0, kT0 + 2 * kHour);
  Mismatch(s, 16, 11, 0);
  Diagnosis d = s.Run();
  ASSERT_FALSE(d.incidents.empty());
  const Incident& inc = d.incidents[0];
  EXPECT_EQ(Id(inc.rule), "collective-desync-stuck");
  EXPECT_TRUE(inc.inferred);
  EXPECT_THAT(inc.suspects, ElementsAre(11));
  EXPECT_EQ(inc.rank, 11);
  EXPECT_EQ(inc.host, "node101");
  EXPECT_NE(inc.explanation.find("15 lines of collective-desync-stuck name rank 11"), std::string::npos)
      << inc.explanation;
}

TEST_F(CorrelateTest, TwoRanksNamingEachOtherNameNoSuspect) {
  Synth s(rs());
  s.Job(1, kT0, kT0 + 2 * kHour);
  Mismatch(s, 2, 1, 0);
  Diagnosis d = s.Run();
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_EQ(Id(d.incidents[0].rule), "collective-desync-stuck");
  EXPECT_THAT(d.incidents[0].suspects, IsEmpty());
}

TEST_F(CorrelateTest, LocalRankOnAOneNodeArchiveIsTheGlobalRank) {
  // torchrun's "failed (exitcode: -9) local_rank: 3" in a single-node log
  // that names no global rank: group 0, so rank 3.
  Synth s(rs());
  uint32_t src = s.Source("train.log", "");
  Evidence& ev = s.Add(src, "process-sigkilled", "elastic-exitcode-sigkill", kT0, -1);
  ev.local_rank = 3;
  Diagnosis d = s.Run();
  ASSERT_FALSE(Causes(d).empty());
  EXPECT_EQ(Causes(d)[0]->rank, 3);
}

TEST_F(CorrelateTest, LocalRankIsNoGlobalRankWhenTheArchiveHasSeveralNodes) {
  Synth s(rs());
  uint32_t a = s.Source("node100/train.log", "node100");
  s.Source("node101/train.log", "node101");
  Evidence& ev = s.Add(a, "process-sigkilled", "elastic-exitcode-sigkill", kT0, -1);
  ev.local_rank = 3;
  Diagnosis d = s.Run();
  ASSERT_FALSE(Causes(d).empty());
  EXPECT_EQ(Causes(d)[0]->rank, -1);
}

TEST_F(CorrelateTest, InitiatingLineWithoutHostTakesTheOneHostItsClusterNames) {
  // slurmstepd's oom-kill line names no node; srun's line right after does.
  Synth s(rs());
  uint32_t src = s.Source("slurm-1.out", "");
  s.Add(src, "slurm-oom-kill-event", "stepd-oom-kill-event", kT0, -1);
  Evidence& srun = s.Add(src, "slurm-oom-kill-event", "srun-task-oom", kT0 + kS, -1);
  srun.host = "gpu-017";
  Diagnosis d = s.Run();
  ASSERT_FALSE(Causes(d).empty());
  EXPECT_EQ(Id(Causes(d)[0]->rule), "slurm-oom-kill-event");
  EXPECT_EQ(Causes(d)[0]->host, "gpu-017");
}

// ---------------------------------------------------------------- clocks

TEST_F(CorrelateTest, ClockOffsetsFromNcclInitSyncPoints) {
  // Three hosts, clocks off by 0, +41.25 and -73.5 s; two communicators'
  // Init COMPLETE moments with tens of ms of spread between ranks.
  const std::map<std::string, double> skew = {{"node100", 0}, {"node101", 41.25}, {"node102", -73.5}};
  Synth s(rs());
  s.Job(3, kT0, kT0 + 2 * kHour);
  for (int k = 0; k < 2; ++k) {
    int64_t moment = kT0 + (20 + 7 * k) * kS;
    for (int64_t r = 0; r < 24; ++r) {
      std::string h = HostName(static_cast<int>(r / 8));
      int64_t jitter = ((r * 37 + k * 11) % 50) * 1000;  // 0-49 ms
      s.scan.sync_points.push_back({StrCat("nccl-init:c", k), h, r,
                                    moment + jitter + static_cast<int64_t>(skew.at(h) * 1e6)});
    }
  }
  // An evidence line on the skewed host moves with the alignment.
  Evidence& ev = s.Watchdog(9, kT0 + 50 * kMin + static_cast<int64_t>(41.25 * 1e6));
  (void)ev;
  Diagnosis d = s.Run();
  // node100 has the most sync keys first in order: the reference.
  for (const auto& [h, sk] : skew) {
    double want = skew.at("node100") - sk;
    double got = d.clock_offsets_s.count(h) ? d.clock_offsets_s.at(h) : 0.0;
    EXPECT_NEAR(got, want, 1.0) << h;
    if (std::fabs(want) >= 1) {
      EXPECT_EQ(d.clock_offset_source[h], "estimated") << h;
    }
  }
  for (const Evidence& e : s.scan.evidence) {
    if (e.rank == 9) {
      EXPECT_NEAR(static_cast<double>(e.time_us - (kT0 + 50 * kMin)) / 1e6, 0, 1.0);
    }
  }
}

TEST_F(CorrelateTest, AlignedClocksLetACauseExplainWhatItsHostPrintedLater) {
  // The Xid on node100 at T; node101's clock is 90 s slow, so its watchdog
  // lines seem to come 60 s *before* the Xid although they are 30 s after.
  // Without alignment the edge's lag window [-5, 3600] s rejects them.
  auto build = [&](Synth& s, bool with_sync) {
    s.Job(2, kT0, kT0 + 2 * kHour);
    s.Xid79(0, 2, kT0 + 30 * kMin);
    for (int64_t r = 8; r < 16; ++r) s.Watchdog(r, kT0 + 30 * kMin + 30 * kS - 90 * kS + r * 1000);
    if (with_sync) {
      for (int64_t r = 0; r < 16; ++r) {
        int64_t off = r >= 8 ? -90 * kS : 0;
        s.scan.sync_points.push_back({"nccl-init:w", HostName(static_cast<int>(r / 8)), r, kT0 + 10 * kS + off});
      }
    }
  };
  {
    Synth s(rs());
    build(s, false);
    Diagnosis d = s.Run();
    ASSERT_FALSE(d.incidents.empty());
    EXPECT_EQ(FindCollateral(d.incidents[0], "nccl-watchdog-timeout"), nullptr);
  }
  {
    Synth s(rs());
    build(s, true);
    Diagnosis d = s.Run();
    ASSERT_EQ(Causes(d).size(), 1u) << ::testing::PrintToString(Ids(d));
    EXPECT_NEAR(d.clock_offsets_s["node101"], 90.0, 0.01);
    EXPECT_NE(FindCollateral(d.incidents[0], "nccl-watchdog-timeout"), nullptr);
  }
}

TEST_F(CorrelateTest, UserClockOffsetOverridesTheEstimate) {
  Synth s(rs());
  s.Job(2, kT0, kT0 + 2 * kHour);
  for (int64_t r = 0; r < 16; ++r) {
    s.scan.sync_points.push_back({"nccl-init:w", HostName(static_cast<int>(r / 8)), r,
                                  kT0 + 10 * kS + (r >= 8 ? 30 * kS : 0)});
  }
  s.Watchdog(9, kT0 + 40 * kMin);
  CorrelateOptions o;
  o.clock_offsets_s["node101"] = -12.5;
  Diagnosis d = s.Run(o);
  EXPECT_DOUBLE_EQ(d.clock_offsets_s["node101"], -12.5);
  EXPECT_EQ(d.clock_offset_source["node101"], "user");
  for (const Evidence& e : s.scan.evidence) {
    if (e.rank == 9) {
      EXPECT_EQ(e.time_us, kT0 + 40 * kMin - 12'500'000);
    }
  }
}

// ---------------------------------------------------------------- gating

TEST_F(CorrelateTest, HardwareLinesOutsideTheJobWindowAreIgnoredWithAReason) {
  Synth s(rs());
  s.Job(1, kT0, kT0 + 2 * kHour);
  s.Xid79(0, 1, kT0 - 30 * kDay);               // an archived block, a month old
  s.Xid79(0, 3, kT0 + 2 * kHour + 5 * kHour);   // after the job, beyond the 2 h tolerance
  s.Add(s.RankSource(0), "nccl-init", "init_commid", kT0 + 10 * kS, 0);
  Diagnosis d = s.Run();
  EXPECT_THAT(Causes(d), IsEmpty()) << ::testing::PrintToString(Ids(d));
  EXPECT_EQ(d.job_start_us, kT0);
  EXPECT_EQ(d.job_end_us, kT0 + 2 * kHour);
  const Ignored* before = FindIgnored(d, "xid-79-fallen-off-bus", "stale: before the job window");
  const Ignored* after = FindIgnored(d, "xid-79-fallen-off-bus", "stale: after the job window");
  ASSERT_NE(before, nullptr);
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(before->count, 1u);
  EXPECT_EQ(before->sample.time_us, kT0 - 30 * kDay);
}

TEST_F(CorrelateTest, HardwareLinesWithinTheToleranceAreKept) {
  // A fragment of an application log (just the watchdog lines, 40 min after
  // the fault) must not gate out the real cause.
  Synth s(rs());
  for (int64_t r = 0; r < 8; ++r) {
    uint32_t src = s.Source(StrCat("node100/rank-", r, ".log"), "node100", r, kT0 + 40 * kMin, kT0 + 41 * kMin);
    s.scan.devices.push_back({"node100", r, r, kBus[r]});
    if (r != 4) {
      Evidence& ev = s.Add(src, "nccl-watchdog-timeout", "watchdog_timeout", kT0 + 40 * kMin + r * kS, r);
      ev.fields = {{"seq", "88"}};
    }
  }
  s.Xid79(0, 4, kT0 + 10 * kMin);
  Diagnosis d = s.Run();
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_EQ(Id(d.incidents[0].rule), "xid-79-fallen-off-bus");
  EXPECT_EQ(d.incidents[0].rank, 4);
  EXPECT_THAT(d.ignored, IsEmpty());
}

TEST_F(CorrelateTest, UserJobWindowGatesToo) {
  Synth s(rs());
  s.Job(1, kT0, kT0 + 10 * kHour);
  s.Xid79(0, 1, kT0 + kHour);
  CorrelateOptions o;
  o.job_start_us = kT0 + 5 * kHour;  // the user says the job started later
  Diagnosis d = s.Run(o);
  EXPECT_THAT(Causes(d), IsEmpty());
  EXPECT_NE(FindIgnored(d, "xid-79-fallen-off-bus", "stale: before"), nullptr);
}

TEST_F(CorrelateTest, KernelBlockAtTheHeadOfARankLogDoesNotStretchTheWindow) {
  // A prolog printed `dmesg -T` of weeks ago into rank 0's log: that
  // source's first stamp is the old Xid line.
  Synth s(rs());
  s.Job(1, kT0, kT0 + 2 * kHour);
  s.scan.sources[s.RankSource(0)].first_time_us = kT0 - 21 * kDay;
  Evidence& old = s.Add(s.RankSource(0), "xid-79-fallen-off-bus", "xid79", kT0 - 21 * kDay, -1);
  old.gpu = kPci[0];
  for (int64_t r = 0; r < 8; ++r) s.Add(s.RankSource(r), "nccl-init", "init_commid", kT0 + 10 * kS, r);
  Diagnosis d = s.Run();
  EXPECT_THAT(Causes(d), IsEmpty()) << ::testing::PrintToString(Ids(d));
  EXPECT_EQ(d.job_start_us, kT0);
  EXPECT_NE(FindIgnored(d, "xid-79-fallen-off-bus", "stale: before the job window"), nullptr);
}

TEST_F(CorrelateTest, ReplayedDuplicateInAnotherFileIsIgnored) {
  Synth s(rs());
  s.Job(1, kT0, kT0 + 2 * kHour);
  Evidence& a = s.Xid79(0, 2, kT0 + 30 * kMin);
  std::string text = a.text;
  uint32_t syslog = s.Source("node100/syslog", "node100");
  Evidence& b = s.Add(syslog, "xid-79-fallen-off-bus", "xid79", kT0 + 30 * kMin, -1, text);
  b.gpu = kPci[2];
  Diagnosis d = s.Run();
  ASSERT_EQ(Causes(d).size(), 1u);
  ASSERT_EQ(d.incidents[0].initiating.size(), 1u);
  EXPECT_EQ(s.scan.sources[d.incidents[0].initiating[0].source].name, "node100/kern.log");
  const Ignored* g = FindIgnored(d, "xid-79-fallen-off-bus", "replayed duplicate");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(s.scan.sources[g->sample.source].name, "node100/syslog");
}

TEST_F(CorrelateTest, OutOfOrderBlockIsIgnored) {
  // Inside one kernel log, a block whose stamps jump back more than an hour
  // (but still inside the window's tolerance) was pasted there.
  Synth s(rs());
  s.Job(1, kT0, kT0 + 6 * kHour);
  uint32_t k = s.Kernel(0);
  Evidence& e1 = s.Add(k, "xid-row-remap", "xid63", kT0 + 4 * kHour, -1);
  e1.gpu = kPci[1];
  s.Xid79(0, 2, kT0 + 4 * kHour - 3 * kHour);  // later in the file, three hours earlier
  Diagnosis d = s.Run();
  EXPECT_THAT(Causes(d), IsEmpty()) << ::testing::PrintToString(Ids(d));
  EXPECT_NE(FindIgnored(d, "xid-79-fallen-off-bus", "out-of-order block"), nullptr);
}

// ---------------------------------------------------------------- conditions

TEST_F(CorrelateTest, UptimeDecidesBetweenFirmwareHangAndRecovery) {
  // The same Xid 154 line matches both rules; the host's uptime (kernel
  // monotonic stamp) picks one.
  for (double days : {62.0, 12.0}) {
    SCOPED_TRACE(days);
    Synth s(rs());
    s.Job(1, kT0, kT0 + 2 * kHour);
    uint32_t k = s.Kernel(0);
    const char* text = "NVRM: Xid (PCI:0000:3a:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 "
                       "(Node Reboot Required)";
    int gb = DefaultRules().FindRule("gb200-xid-150-154-firmware-hang-long-uptime");
    int gen = DefaultRules().FindRule("xid-150-154-gpu-recovery-required");
    ASSERT_GE(gb, 0);
    ASSERT_GE(gen, 0);
    for (int r : {gb, gen}) {
      const fb::Rule* ru = DefaultRules().rule(static_cast<size_t>(r));
      // The rule's first initiating signal.
      std::string sig;
      for (flatbuffers::uoffset_t i = 0; i < ru->signals()->size() && sig.empty(); ++i) {
        if (ru->signals()->Get(i)->role() == SignalRole::Initiating) sig = ru->signals()->Get(i)->id()->str();
      }
      ASSERT_FALSE(sig.empty()) << ru->id()->str();
      Evidence& ev = s.Add(k, ru->id()->str(), sig, kT0 + 30 * kMin, -1, text);
      ev.gpu = kPci[2];
      ev.monotonic_s = days * 86400;
    }
    Diagnosis d = s.Run();
    ASSERT_EQ(Causes(d).size(), 1u) << ::testing::PrintToString(Ids(d));
    EXPECT_EQ(Id(d.incidents[0].rule), days > 55 ? "gb200-xid-150-154-firmware-hang-long-uptime"
                                                  : "xid-150-154-gpu-recovery-required");
    EXPECT_EQ(d.incidents[0].rank, 2);
  }
}

TEST_F(CorrelateTest, WatchdogAfterTrainingCompletedIsNoFailure) {
  Synth s(rs());
  s.Job(1, kT0, kT0 + 2 * kHour);
  int64_t done = kT0 + 90 * kMin;
  s.Add(s.RankSource(0), "training-completed", "megatron_after_training", done, 0);
  // before_rule: the watchdog lines after completion are inactive; their
  // after-completion twin is context.
  for (int64_t r = 1; r < 3; ++r) {
    s.Watchdog(r, done + 10 * kMin);
    s.Add(s.RankSource(r), "nccl-watchdog-after-completion", "watchdog_timeout_at_exit", done + 10 * kMin, r);
  }
  for (int64_t r = 0; r < 8; ++r) s.Progress(r, "node100", done - 5 * kS, 1.0);
  Diagnosis d = s.Run();
  EXPECT_THAT(Causes(d), IsEmpty()) << ::testing::PrintToString(Ids(d));
}

TEST_F(CorrelateTest, WatchdogBeforeTrainingCompletedStillCounts) {
  Synth s(rs());
  s.Job(1, kT0, kT0 + 3 * kHour);
  s.Add(s.RankSource(0), "training-completed", "megatron_after_training", kT0 + 150 * kMin, 0);
  for (int64_t r = 0; r < 8; ++r) {
    if (r != 5) s.Watchdog(r, kT0 + 60 * kMin + r * kS);
  }
  Diagnosis d = s.Run();
  ASSERT_EQ(Causes(d).size(), 1u);
  EXPECT_EQ(Id(d.incidents[0].rule), "nccl-watchdog-timeout");
  EXPECT_EQ(d.incidents[0].rank, 5);
}

// vLLM offline data parallel: one engine's bar reaches 100% while another
// engine crashes. The crash report is a failure after the completion line;
// the engine-died line the client prints at exit is not.
TEST_F(CorrelateTest, EngineCrashAfterOneEngineCompletedStillCounts) {
  Synth s(rs());
  s.Job(1, kT0, kT0 + kHour);
  uint32_t src = s.Source("offline.log", "node100");
  int64_t done = kT0 + 30 * kMin;
  s.Add(src, "vllm-offline-completed", "processed-prompts-100", done, -1);
  s.Add(src, "vllm-engine-dead", "engine-proc-died", done + kMin, -1);
  EXPECT_THAT(Causes(s.Run()), IsEmpty());
  s.Add(src, "vllm-engine-dead", "enginecore-fatal", done + 40 * kS, -1);
  Diagnosis d = s.Run();
  ASSERT_EQ(Causes(d).size(), 1u) << ::testing::PrintToString(Ids(d));
  EXPECT_EQ(Id(d.incidents[0].rule), "vllm-engine-dead");
}

// A small rule tree compiled from JSON source in the test, for what the
// default rules do not combine or should not be needed for: rule ids here
// are deliberately not the default ruleset's.
class RuleTree {
 public:
  explicit RuleTree(const std::string& name) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "fl-corr-rules-XXXXXX").string();
    EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    Write("ruleset.json", StrCat(R"({"name": ")", name, R"(", "version": "1"})"));
    Write("references.json", R"({"references": [{"title": "Test reference", "summary": "s"}]})");
  }
  ~RuleTree() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  // One rule with one signal matching `literal` (none when `literal` is
  // empty: a detector's rule); `extra` is more JSON members of the rule.
  void Rule(const std::string& id, const std::string& layer, const std::string& role,
            const std::string& literal, const std::string& extra = "",
            const std::string& tags = R"("t")") {
    std::string signals = literal.empty()
                              ? "[]"
                              : StrCat(R"([{"id": "s", "pattern": ")", literal, R"(", "role": ")",
                                       role, R"(", "examples": ["x )", literal,
                                       R"( y"], "counter_examples": ["nothing here"]}])");
    Write("t/" + id + ".json",
          StrCat(
              R"({"id": ")", id, R"(", "reference": "Test reference", "title": ")", id,
              R"(", "category": "Test", "tags": [)", tags, R"(], "layer": ")", layer,
              R"(", "summary": "s", "root_cause": ["r"], "symptoms": [{"symptom": "a", "why": "b"}],
  "confirm": ["c"], "fix": "f", "verify": "v", "prevention": ["p"], "fingerprint": "fp", "related": [],
  "sources": ["https://example.org"], "signals": )",
              signals, extra.empty() ? "" : StrCat(", ", extra), "}"));
  }
  absl::StatusOr<std::shared_ptr<const Ruleset>> Compile() const {
    auto c = CompileRuleSource(dir_);
    if (!c.ok()) return c.status();
    return Ruleset::LoadBuffer(c->buffer, "test-rules");
  }

 private:
  void Write(const std::string& rel, const std::string& body) {
    std::filesystem::create_directories(std::filesystem::path(dir_ + "/" + rel).parent_path());
    std::ofstream(dir_ + "/" + rel) << body;
  }
  std::string dir_;
};

std::string Conditions(const std::string& body) { return StrCat(R"("conditions": {)", body, "}"); }

// Conditions the default rules do not combine.
class ConditionRulesTest : public CorrelateTest {
 protected:
  static void SetUpTestSuite() {
    RuleTree t("conditions-test");
    t.Rule("marker", "application", "context", "DONE-MARKER reached");
    t.Rule("ctx", "application", "context", "CTX-FACT present");
    t.Rule("late-error", "framework", "symptom", "LATE-ERROR seen",
           Conditions(R"("after_rule": "marker")"));
    t.Rule("needs-ctx", "hardware", "initiating", "NEEDS-CTX failure",
           Conditions(R"("requires_rule": "ctx")"));
    t.Rule("excluded-by-ctx", "hardware", "initiating", "EXCLUDED-BY-CTX failure",
           Conditions(R"("excludes_rule": "ctx")"));
    auto r = t.Compile();
    ASSERT_TRUE(r.ok()) << r.status();
    rules_ = *r;
  }
  static void TearDownTestSuite() { rules_.reset(); }
  const Ruleset& rs() override { return rules_ ? *rules_ : DefaultRules(); }
  static std::shared_ptr<const Ruleset> rules_;
};
std::shared_ptr<const Ruleset> ConditionRulesTest::rules_;

TEST_F(ConditionRulesTest, AfterRuleNeedsItsRuleFirst) {
  ASSERT_NE(rules_, nullptr);
  Synth s(*rules_);
  uint32_t src = s.Source("node100/rank-0.log", "node100", 0, kT0, kT0 + kHour);
  s.Add(src, "late-error", "s", kT0 + 5 * kMin, 0);   // before the marker: out
  s.Add(src, "marker", "s", kT0 + 10 * kMin, 0);
  s.Add(src, "late-error", "s", kT0 + 20 * kMin, 0);  // after it: in
  Diagnosis d = s.Run();
  ASSERT_EQ(Causes(d).size(), 1u);
  EXPECT_EQ(s.RuleId(d.incidents[0].rule), "late-error");
  EXPECT_EQ(d.incidents[0].time_us, kT0 + 20 * kMin);
}

TEST_F(ConditionRulesTest, RequiresAndExcludesRule) {
  ASSERT_NE(rules_, nullptr);
  for (bool with_ctx : {false, true}) {
    SCOPED_TRACE(with_ctx);
    Synth s(*rules_);
    uint32_t src = s.Source("node100/rank-0.log", "node100", 0, kT0, kT0 + kHour);
    if (with_ctx) s.Add(src, "ctx", "s", kT0 + kMin, 0);
    s.Add(src, "needs-ctx", "s", kT0 + 10 * kMin, 0);
    s.Add(src, "excluded-by-ctx", "s", kT0 + 20 * kMin, 0);
    Diagnosis d = s.Run();
    ASSERT_EQ(Causes(d).size(), 1u);
    EXPECT_EQ(s.RuleId(d.incidents[0].rule), with_ctx ? "needs-ctx" : "excluded-by-ctx");
  }
}

TEST_F(ConditionRulesTest, ContextNeverMakesAnIncident) {
  ASSERT_NE(rules_, nullptr);
  Synth s(*rules_);
  uint32_t src = s.Source("node100/rank-0.log", "node100", 0, kT0, kT0 + kHour);
  s.Add(src, "marker", "s", kT0 + 10 * kMin, 0);
  s.Add(src, "ctx", "s", kT0 + 11 * kMin, 0);
  EXPECT_THAT(Causes(s.Run()), IsEmpty());
}

// ---------------------------------------------------------------- roles

// What the correlator needs to know about a rule (completion, termination,
// checkpoint saved) comes from its role: tags, whatever its id.
class RoleRulesTest : public CorrelateTest {
 protected:
  static void SetUpTestSuite() {
    RuleTree t("roles-test");
    t.Rule("all-done", "application", "context", "ALL-DONE here", "", R"("t", "role:completion")");
    t.Rule("stop-asked", "application", "context", "STOP-ASKED here", "",
           R"("t", "role:termination")");
    t.Rule("ckpt-written", "application", "context", "CKPT-WRITTEN here", "",
           R"("t", "role:checkpoint-saved")");
    t.Rule("stuck", "application", "", "", Conditions(R"("detector": "hang")"));
    t.Rule("no-save-on-stop", "application", "", "",
           Conditions(R"("detector": "missing_checkpoint_after_sigterm")"));
    t.Rule("hw-fault", "hardware", "initiating", "HW-FAULT seen");
    t.Rule("app-note", "application", "context", "APP-NOTE written");
    auto r = t.Compile();
    ASSERT_TRUE(r.ok()) << r.status();
    rules_ = *r;
  }
  static void TearDownTestSuite() { rules_.reset(); }
  const Ruleset& rs() override { return rules_ ? *rules_ : DefaultRules(); }
  static std::shared_ptr<const Ruleset> rules_;
};
std::shared_ptr<const Ruleset> RoleRulesTest::rules_;

TEST_F(RoleRulesTest, CompletionRoleEndsTrainingRatherThanAHang) {
  ASSERT_NE(rules_, nullptr);
  for (bool completed : {false, true}) {
    SCOPED_TRACE(completed);
    Synth s(*rules_);
    s.Job(1, kT0, kT0 + 3 * kHour);
    for (int64_t r = 0; r < 8; ++r) s.Progress(r, "node100", kT0 + 60 * kMin, 1.0);
    if (completed) s.Add(s.RankSource(0), "all-done", "s", kT0 + 60 * kMin + 3 * kS, 0);
    Diagnosis d = s.Run();
    if (completed) {
      EXPECT_THAT(d.incidents, IsEmpty());
    } else {
      ASSERT_EQ(d.incidents.size(), 1u);
      EXPECT_EQ(s.RuleId(d.incidents[0].rule), "stuck");
    }
  }
}

TEST_F(RoleRulesTest, TerminationWithoutACheckpointAfterIt) {
  ASSERT_NE(rules_, nullptr);
  for (int64_t ckpt_min : {40, 55}) {
    SCOPED_TRACE(ckpt_min);
    Synth s(*rules_);
    uint32_t src = s.Source("node100/rank-0.log", "node100", 0, kT0, kT0 + kHour);
    s.Add(src, "ckpt-written", "s", kT0 + ckpt_min * kMin, 0);
    s.Add(src, "stop-asked", "s", kT0 + 50 * kMin, 0, "STOP-ASKED here at 50 min");
    Diagnosis d = s.Run();
    if (ckpt_min > 50) {
      EXPECT_THAT(d.incidents, IsEmpty());
      continue;
    }
    ASSERT_EQ(d.incidents.size(), 1u);
    const Incident& inc = d.incidents[0];
    EXPECT_EQ(s.RuleId(inc.rule), "no-save-on-stop");
    EXPECT_EQ(inc.detector, "missing_checkpoint_after_sigterm");
    EXPECT_EQ(inc.time_us, kT0 + 50 * kMin);
    ASSERT_FALSE(inc.initiating.empty());
    EXPECT_EQ(inc.initiating[0].text, "STOP-ASKED here at 50 min");
  }
}

TEST_F(RoleRulesTest, UnknownRoleTagIsACompileError) {
  RuleTree t("bad-role");
  t.Rule("odd", "application", "context", "ODD-LINE here", "", R"("t", "role:finished")");
  auto r = t.Compile();
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              ::testing::AllOf(::testing::HasSubstr("odd.json: rule 'odd': tags[1]"),
                               ::testing::HasSubstr("unknown role 'role:finished'")));
}

// A source the scan marks as a kernel log does not define the job window,
// whatever its name and whatever else it holds: its old hardware lines are
// stale.
TEST_F(RoleRulesTest, KernelLogSourceDoesNotDefineTheJobWindow) {
  ASSERT_NE(rules_, nullptr);
  Synth s(*rules_);
  uint32_t app = s.Source("node100/rank-0.log", "node100", 0, kT0, kT0 + 2 * kHour);
  s.Add(app, "app-note", "s", kT0 + 10 * kMin, 0);
  uint32_t dump =
      s.Source("node100/bmc-export.txt", "node100", -1, kT0 - 10 * kDay, kT0 - 10 * kDay + kHour);
  s.scan.sources[dump].kernel_log = true;
  s.Add(dump, "hw-fault", "s", kT0 - 10 * kDay, -1);
  s.Add(dump, "app-note", "s", kT0 - 10 * kDay + 5 * kMin, -1);
  Diagnosis d = s.Run();
  EXPECT_EQ(d.job_start_us, kT0);
  EXPECT_THAT(d.incidents, IsEmpty());
  EXPECT_NE(FindIgnored(d, "hw-fault", "stale: before the job window"), nullptr);
}

// Only a file's own name says it is a kernel log: a rank log in a folder
// named after the journal still defines the job window.
TEST_F(CorrelateTest, FolderNamesDoNotMakeAKernelLog) {
  Synth s(rs());
  uint32_t app = s.Source("journal-case/node100/rank-0.log", "node100", 0, kT0, kT0 + 2 * kHour);
  s.Add(app, "nccl-init", "init_commid", kT0 + 10 * kS, 0);
  Diagnosis d = s.Run();
  EXPECT_EQ(d.job_start_us, kT0);
  EXPECT_EQ(d.job_end_us, kT0 + 2 * kHour);
}

// A file's own name says a kernel log wherever the word is in it (after the
// last '/' or '\\'), even with the scan's flag unset: its old span does not
// stretch the window. A name without the words does.
TEST_F(CorrelateTest, AFilesOwnNameMakesAKernelLog) {
  for (const std::string name : {"node100/syslog.1", "node100/host-messages-2026", "node100/kern",
                                 "node100/ai-journal.txt", "node100/x.dmesg", "C:\\logs\\node100\\syslog",
                                 "node100/sys-log.txt", "dmesg/node100/log.txt", "C:\\dmesg\\node100.txt"}) {
    Synth s(rs());
    uint32_t app = s.Source("node100/rank-0.log", "node100", 0, kT0, kT0 + 2 * kHour);
    s.Add(app, "nccl-init", "init_commid", kT0 + 10 * kS, 0);
    uint32_t other = s.Source(name, "node100", -1, kT0 - 10 * kDay, kT0 - 10 * kDay + kHour);
    s.scan.sources[other].kernel_log = false;
    Diagnosis d = s.Run();
    const bool kernel = name.find("sys-log") == std::string::npos && name.find("dmesg/") == std::string::npos &&
                        name.find("dmesg\\") == std::string::npos;
    EXPECT_EQ(d.job_start_us, kernel ? kT0 : kT0 - 10 * kDay) << name;
  }
}

// ---------------------------------------------------------------- peers

TEST_F(CorrelateTest, PeerAddressNamesTheRemoteHost) {
  Synth s(rs());
  s.Job(2, kT0, kT0 + 2 * kHour);
  for (int64_t r = 0; r < 16; ++r) {
    Evidence& b = s.Add(s.RankSource(r), "nccl-init", "nccl_bootstrap_iface", kT0 + 5 * kS, r);
    b.fields = {{"iface", "ib0"}, {"addr", r < 8 ? "10.1.0.10" : "10.1.0.11"}};
  }
  // Ranks on node100 blame peer 10.1.0.11 (node101).
  for (int64_t r : {1, 4}) {
    Evidence& e = s.Add(s.RankSource(r), "ib-retry-exceeded", "nccl_ib_status12", kT0 + 40 * kMin + r * kS, r);
    e.fields = {{"peer", "10.1.0.11"}};
  }
  for (int64_t r = 0; r < 16; ++r) {
    if (r != 1 && r != 4) s.Watchdog(r, kT0 + 50 * kMin + r * kS);
  }
  Diagnosis d = s.Run();
  ASSERT_FALSE(d.incidents.empty());
  const Incident& inc = d.incidents[0];
  EXPECT_EQ(Id(inc.rule), "ib-retry-exceeded");
  EXPECT_EQ(inc.host, "node101");
  EXPECT_EQ(inc.rank, -1);
  EXPECT_TRUE(inc.inferred);
  EXPECT_NE(inc.explanation.find("10.1.0.11 (node101)"), std::string::npos) << inc.explanation;
  EXPECT_NE(FindCollateral(inc, "nccl-watchdog-timeout"), nullptr);
}

TEST_F(CorrelateTest, PeerAddressWithPortAndUnknownAddress) {
  Synth s(rs());
  s.Job(2, kT0, kT0 + 2 * kHour);
  Evidence& b = s.Add(s.RankSource(9), "nccl-init", "nccl_bootstrap_iface", kT0 + 5 * kS, 9);
  b.fields = {{"addr", "10.1.0.11<0>"}};
  Evidence& e = s.Add(s.RankSource(2), "ib-retry-exceeded", "nccl_ib_status12", kT0 + 40 * kMin, 2);
  e.fields = {{"peer", "10.1.0.11:48211"}};
  Evidence& f = s.Add(s.RankSource(3), "ib-retry-exceeded", "nccl_ib_status12", kT0 + 40 * kMin + kS, 3);
  f.fields = {{"peer", "10.1.0.11:48211"}};
  Diagnosis d = s.Run();
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_EQ(d.incidents[0].host, "node101");
  // An address no host announced is no host of the job: the incident stays
  // on the host that logged the line, and the explanation names the peer.
  Synth s2(rs());
  s2.Job(2, kT0, kT0 + 2 * kHour);
  Evidence& g = s2.Add(s2.RankSource(2), "ib-retry-exceeded", "nccl_ib_status12", kT0 + 40 * kMin, 2);
  g.fields = {{"peer", "10.9.9.9"}};
  Diagnosis d2 = s2.Run();
  ASSERT_FALSE(d2.incidents.empty());
  EXPECT_EQ(d2.incidents[0].host, HostName(0));
  EXPECT_NE(d2.incidents[0].explanation.find("10.9.9.9"), std::string::npos);
  bool asks = false;
  for (const std::string& f : d2.incidents[0].missing_facts) asks |= f.find("10.9.9.9") != std::string::npos;
  EXPECT_TRUE(asks);
}

// The NFS server a client's kernel names is outside the job: the incident
// is the client's.
TEST_F(CorrelateTest, NfsServerIsNotTheHost) {
  Synth s(rs());
  s.Job(2, kT0, kT0 + 2 * kHour);
  Evidence& e = s.Add(s.Kernel(1), "nfs-server-not-responding", "nfs-not-responding", kT0 + 40 * kMin, -1);
  e.fields = {{"server", "nfs01"}};
  Diagnosis d = s.Run();
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_EQ(Id(d.incidents[0].rule), "nfs-server-not-responding");
  EXPECT_EQ(d.incidents[0].host, HostName(1));
  EXPECT_FALSE(d.incidents[0].inferred);
  EXPECT_NE(d.incidents[0].explanation.find("nfs01"), std::string::npos);
}

// A spot notice on one host; the other host's ranks then lose their peers
// on it, stamped before the notice by clock skew: a retry-exceeded error
// (initiating, network layer, no explains edge from the spot rule) is the
// notice's doing, not a second incident.
TEST_F(CorrelateTest, TerminationNoticeExplainsTheNetworkErrorsAfterIt) {
  Synth s(rs());
  s.Job(2, kT0, kT0 + 2 * kHour);
  s.Add(s.Kernel(1), "spot-instance-interruption", "aws-instance-action", kT0 + 40 * kMin, -1);
  for (int64_t r = 0; r < 8; ++r) {
    Evidence& e = s.Add(s.RankSource(r), "ib-retry-exceeded", "nccl_ib_status12",
                        kT0 + 40 * kMin - 50 * kS + r * kS, r);
    e.fields = {{"peer", "10.9.9.9<48211>"}};
  }
  Diagnosis d = s.Run();
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_EQ(Id(d.incidents[0].rule), "spot-instance-interruption") << ::testing::PrintToString(Ids(d));
  EXPECT_EQ(d.incidents[0].host, HostName(1));
  bool explained = false;
  for (const Collateral& c : d.incidents[0].collateral) explained |= Id(c.rule) == "ib-retry-exceeded";
  EXPECT_TRUE(explained);
  for (size_t i = 1; i < d.incidents.size(); ++i) EXPECT_NE(Id(d.incidents[i].rule), "ib-retry-exceeded");
  EXPECT_NE(d.incidents[0].explanation.find("ended from outside"), std::string::npos);
  EXPECT_NE(d.incidents[0].explanation.find("No checkpoint"), std::string::npos);
}

// A hardware failure a minute and more before the notice stays the cause of
// what follows it.
TEST_F(CorrelateTest, EarlierHardwareFailureBeatsALaterNotice) {
  Synth s(rs());
  s.Job(2, kT0, kT0 + 2 * kHour);
  s.Add(s.Kernel(0), "xid-79-fallen-off-bus", "xid79", kT0 + 30 * kMin, -1).gpu = "0000:3a:00.0";
  s.Add(s.Kernel(1), "spot-instance-interruption", "aws-instance-action", kT0 + 40 * kMin, -1);
  for (int64_t r = 8; r < 16; ++r) s.Watchdog(r, kT0 + 41 * kMin);
  Diagnosis d = s.Run();
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_EQ(Id(d.incidents[0].rule), "xid-79-fallen-off-bus") << ::testing::PrintToString(Ids(d));
}

// A port goes down on node100 (the kernel names the HCA's PCI function, no
// rank); the rank of node100 whose own IB connection then failed (an
// unstamped per-rank line naming its remote peer) is the incident's rank,
// not a rank of the other host that lost its peer on node100 earlier.
TEST_F(CorrelateTest, PortDownNamesTheRankOfItsHostWhoseConnectionFailed) {
  Synth s(rs());
  s.Job(2, kT0, kT0 + 2 * kHour);
  Evidence& k = s.Add(s.Kernel(0), "ib-port-down", "mlx5_port_module_event", kT0 + 40 * kMin, -1);
  k.fields = {{"hca_pci", "0000:9a:00.1"}};
  Evidence& other = s.Add(s.RankSource(12), "ib-retry-exceeded", "nccl_ib_status12", kT0 + 40 * kMin + kS, 12);
  other.fields = {{"peer", "10.1.0.10"}};
  Evidence& own = s.Add(s.RankSource(5), "ib-retry-exceeded", "nccl_ib_status12", kNoTime, 5);
  own.fields = {{"peer", "10.1.0.11"}};
  for (int64_t r = 0; r < 16; ++r) {
    if (r != 5 && r != 12) s.Watchdog(r, kT0 + 50 * kMin + r * kS);
  }
  Diagnosis d = s.Run();
  ASSERT_FALSE(d.incidents.empty());
  const Incident& inc = d.incidents[0];
  EXPECT_EQ(Id(inc.rule), "ib-port-down") << ::testing::PrintToString(Ids(d));
  EXPECT_EQ(inc.host, HostName(0));
  EXPECT_EQ(inc.rank, 5) << inc.explanation;
}

// The rank's own failed connection is an incident of its own (its line
// blames the remote peer, and its host's kernel clock runs 90 s behind the
// application's stamps): it still names the port-down's rank. A rank of
// the same host whose line is an hour away is another event.
TEST_F(CorrelateTest, PortDownNamesTheRankOfItsHostFromItsOwnIncident) {
  for (int64_t lag : {-90 * kS, 60 * kMin}) {
    Synth s(rs());
    s.Job(2, kT0, kT0 + 2 * kHour);
    Evidence& k = s.Add(s.Kernel(0), "ib-port-down", "mlx5_port_module_event", kT0 + 40 * kMin, -1);
    k.fields = {{"hca_pci", "0000:9a:00.1"}};
    Evidence& own = s.Add(s.RankSource(5), "ib-retry-exceeded", "nccl_ib_status12", kT0 + 40 * kMin + lag, 5);
    own.fields = {{"peer", "10.1.0.11"}};
    Diagnosis d = s.Run();
    const Incident* port = nullptr;
    for (const Incident& inc : d.incidents) {
      if (Id(inc.rule) == "ib-port-down") port = &inc;
    }
    ASSERT_NE(port, nullptr) << ::testing::PrintToString(Ids(d));
    EXPECT_EQ(port->host, HostName(0));
    EXPECT_EQ(port->rank, lag < 0 ? 5 : -1) << port->explanation;
  }
}

// The HCA a line names ties it to the ranks whose own NCCL lines name it:
// one rank gives a rankless line its rank; an HCA two ranks share names the
// first of them, never a rank on another HCA that failed earlier.
TEST_F(CorrelateTest, HcaNamesTheRanksThatUseIt) {
  for (bool shared : {false, true}) {
    Synth s(rs());
    s.Job(2, kT0, kT0 + 2 * kHour);
    Evidence& k = s.Add(s.Kernel(0), "ib-port-down", "mlx5e_link_down", kT0 + 40 * kMin, -1);
    k.fields = {{"hca", "mlx5_3"}};
    Evidence& six = s.Add(s.RankSource(6), "ib-retry-exceeded", "nccl_ib_status12", kT0 + 40 * kMin + kS, 6);
    six.fields = {{"peer", "10.1.0.11"}, {"hca", "mlx5_6"}};
    for (int64_t r : shared ? std::vector<int64_t>{3, 2} : std::vector<int64_t>{3}) {
      Evidence& e = s.Add(s.RankSource(r), "ib-retry-exceeded", "nccl_ib_status12", kNoTime, r);
      e.fields = {{"peer", "10.1.0.11"}, {"hca", "mlx5_3"}};
    }
    Diagnosis d = s.Run();
    ASSERT_FALSE(d.incidents.empty());
    const Incident& inc = d.incidents[0];
    EXPECT_EQ(Id(inc.rule), "ib-port-down") << ::testing::PrintToString(Ids(d));
    EXPECT_EQ(inc.rank, shared ? 2 : 3) << inc.explanation;
    if (shared) {
      EXPECT_NE(inc.explanation.find("mlx5_3"), std::string::npos) << inc.explanation;
    }
  }
}

// The kernel names the HCA's PCI function only; NCCL's lines tie it to the
// ranks sending through it: "NET/IB: [1] mlx5_3:uverbs3:1/IB ... pciPath=
// .../0000:3c:00.0" names the HCA at that card, "NET/IB : Using [0]mlx5_0
// ... [1]mlx5_3" its index, and each rank's "Channel ... via NET/IB/1" line
// the index it uses. The first of its two ranks is the incident's, not a
// rank on another HCA whose own connection failed first.
TEST_F(CorrelateTest, PortDownOfAPciFunctionNamesTheRanksOfItsChannels) {
  for (bool tied : {false, true}) {
    Synth s(rs());
    s.Job(2, kT0, kT0 + 2 * kHour);
    Evidence& k = s.Add(s.Kernel(0), "ib-port-down", "mlx5_port_module_event", kT0 + 40 * kMin, -1);
    k.fields = {{"hca_pci", "0000:3c:00.0"}};
    Evidence& six = s.Add(s.RankSource(6), "ib-retry-exceeded", "nccl_ib_status12", kT0 + 40 * kMin + kS, 6);
    six.fields = {{"peer", "10.1.0.11"}};
    const std::vector<std::string> hcas = {"mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5"};
    for (int64_t r = 0; r < 8; ++r) {
      const int64_t pid = 4000 + r;
      s.scan.pids.push_back({HostName(0), pid, r});
      for (int64_t i = 0; i < 4; ++i) {
        s.scan.nics.push_back({HostName(0), pid, -1, i, hcas[i], tied && i == 1 ? "0000:3c:00.0" : "", false});
      }
      // A channel line names its process only (its rank comes from the pid).
      s.scan.nics.push_back({HostName(0), pid, -1, r / 2, "", "", true});
    }
    Diagnosis d = s.Run();
    ASSERT_FALSE(d.incidents.empty());
    const Incident& inc = d.incidents[0];
    EXPECT_EQ(Id(inc.rule), "ib-port-down") << ::testing::PrintToString(Ids(d));
    EXPECT_EQ(inc.rank, tied ? 2 : 6) << inc.explanation;
    EXPECT_EQ(inc.explanation.find("mlx5_3") != std::string::npos, tied) << inc.explanation;
  }
}

// networkd names only the port's netdev ("ibp26s0: Lost carrier");
// ibdev2netdev's "mlx5_3 port 1 ==> ibp26s0 (Down)" on that host ties it to
// the HCA, and NCCL's lists and channels the HCA to its ranks. Another
// host's map of the same netdev name ties nothing here.
TEST_F(CorrelateTest, LostCarrierOfANetdevNamesTheRanksOfItsHca) {
  for (bool mapped : {false, true}) {
    Synth s(rs());
    s.Job(2, kT0, kT0 + 2 * kHour);
    Evidence& k = s.Add(s.Kernel(0), "ib-port-down", "networkd_lost_carrier", kT0 + 40 * kMin, -1);
    k.fields = {{"netdev", "ibp26s0"}};
    Evidence& six = s.Add(s.RankSource(6), "ib-retry-exceeded", "nccl_ib_status12", kT0 + 40 * kMin + kS, 6);
    six.fields = {{"peer", "10.1.0.11"}};
    const std::vector<std::string> hcas = {"mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5"};
    s.scan.nics.push_back({HostName(1), -1, -1, -1, "mlx5_0", "", false, "ibp26s0"});
    if (mapped) s.scan.nics.push_back({HostName(0), -1, -1, -1, "mlx5_3", "", false, "ibp26s0"});
    for (int64_t r = 0; r < 8; ++r) {
      const int64_t pid = 4000 + r;
      s.scan.pids.push_back({HostName(0), pid, r});
      for (int64_t i = 0; i < 4; ++i) s.scan.nics.push_back({HostName(0), pid, -1, i, hcas[i], "", false});
      s.scan.nics.push_back({HostName(0), pid, -1, r / 2, "", "", true});
    }
    Diagnosis d = s.Run();
    ASSERT_FALSE(d.incidents.empty());
    const Incident& inc = d.incidents[0];
    EXPECT_EQ(Id(inc.rule), "ib-port-down") << ::testing::PrintToString(Ids(d));
    EXPECT_EQ(inc.rank, mapped ? 2 : 6) << inc.explanation;
    EXPECT_EQ(inc.hca, mapped ? "mlx5_3" : "") << inc.explanation;
  }
}

// The OOM killer names a host-namespace pid the job's logs do not know (a
// pod's workers have other pids); the launcher on that host reports the
// worker it lost to SIGKILL a second later: that worker's rank is the
// victim. A sibling's abort (-6) and a rank of another host are not.
TEST_F(CorrelateTest, KernelKillNamesTheRankItsLauncherLostToThatSignal) {
  Synth s(rs());
  s.Job(2, kT0, kT0 + 2 * kHour);
  Evidence& k = s.Add(s.Kernel(1), "host-oom-kill", "killed-process", kT0 + 40 * kMin, -1);
  k.pid = 1372750;
  k.fields = {{"pid", "1372750"}};
  auto failed = [&](int64_t rank, int64_t t, const char* code) {
    Evidence& e = s.Add(s.RankSource(rank), "torch-child-failed", "agent_worker_failed", t, rank);
    e.fields = {{"exitcode", code}, {"local_rank", StrCat(rank % 8)}};
  };
  failed(3, kT0 + 40 * kMin, "-9");
  failed(9, kT0 + 40 * kMin + kS / 2, "-6");
  failed(12, kT0 + 40 * kMin + kS, "-9");
  Diagnosis d = s.Run();
  ASSERT_FALSE(d.incidents.empty());
  const Incident& inc = d.incidents[0];
  EXPECT_EQ(Id(inc.rule), "host-oom-kill") << ::testing::PrintToString(Ids(d));
  EXPECT_EQ(inc.host, HostName(1));
  EXPECT_EQ(inc.rank, 12) << inc.explanation;
}

// Plain dmesg stamps seconds since boot only. The segfault of pid 48346 on
// node101 is dated by its launcher's report of that pid's SIGSEGV: it then
// comes before the unstamped NCCL errors of the ranks that lost it, and is
// the incident.
TEST_F(CorrelateTest, LaunchersCrashReportDatesTheKernelsBootStamps) {
  Synth s(rs());
  s.Job(2, kT0, kT0 + 2 * kHour);
  Evidence& seg = s.Add(s.Kernel(1), "unrecognised-fatal-error", "kernel_segfault", kNoTime, -1);
  seg.monotonic_s = 1084294.693401;
  seg.fields = {{"pid", "48346"}};
  for (int64_t r = 0; r < 4; ++r) {
    s.Add(s.RankSource(r), "ib-retry-exceeded", "nccl_ib_status12", kNoTime, r).fields = {
        {"peer", "10.20.1.154"}};
  }
  const int64_t report = kT0 + 40 * kMin;
  Evidence& e = s.Add(s.RankSource(14), "torch-child-failed", "agent_worker_failed", report, 14);
  e.fields = {{"exitcode", "-11"}, {"local_rank", "6"}, {"pid", "48346"}};
  Diagnosis d = s.Run();
  ASSERT_FALSE(d.incidents.empty());
  const Incident& inc = d.incidents[0];
  EXPECT_EQ(Id(inc.rule), "unrecognised-fatal-error") << ::testing::PrintToString(Ids(d));
  EXPECT_EQ(inc.time_us, report);
  EXPECT_EQ(inc.host, HostName(1));
  ASSERT_FALSE(inc.initiating.empty());
  EXPECT_EQ(inc.initiating[0].time_source, TimeSource::kMonotonicAnchored);
}

// The OOM killer names the victim's container in its memory cgroup, and a
// pid no line of the pod knows; `kubectl describe pods` gives the pod that
// container id: the pod's one rank is the victim. A container of a pod
// whose lines name several ranks names none of them.
TEST_F(CorrelateTest, OomKillersContainerNamesThePodsRank) {
  const std::string cid = "27a2e7ef6d3d55b99196e7d58756ae79d2e29288909ba84360d9b06f9165c99a";
  for (bool one_rank : {true, false}) {
    Synth s(rs());
    uint32_t w1 = s.Source("pods/trainer-worker-1/pytorch.log", "trainer-worker-1");
    uint32_t w0 = s.Source("pods/trainer-worker-0/pytorch.log", "trainer-worker-0");
    uint32_t desc = s.Source("kubectl/describe-pods.txt", "");
    s.scan.host_aliases = {{"trainer-worker-1", "gpu-node-7"}, {"trainer-worker-0", "gpu-node-2"}};
    s.Add(w1, "ib-retry-exceeded", "nccl_ib_status12", kT0 + 9 * kMin, 3).fields = {{"peer", "10.9.9.9"}};
    if (!one_rank) s.Add(w1, "ib-retry-exceeded", "nccl_ib_status12", kT0 + 9 * kMin, 2).fields = {{"peer", "10.9.9.9"}};
    s.Add(w0, "ib-retry-exceeded", "nccl_ib_status12", kT0 + 9 * kMin, 0).fields = {{"peer", "10.9.9.9"}};
    s.Add(desc, "job-placement", "k8s-describe-container-id", kNoTime, -1).fields = {{"container_id", cid},
                                                                                      {"pod", "trainer-worker-1"}};
    uint32_t kern = s.Source("gpu-node-7/kern.log", "gpu-node-7");
    Evidence& k = s.Add(kern, "host-oom-kill", "oom-kill-summary-global", kT0 + 10 * kMin, -1);
    k.pid = 1372750;
    k.fields = {{"pid", "1372750"}, {"container_id", cid}};
    Diagnosis d = s.Run();
    ASSERT_FALSE(d.incidents.empty());
    const Incident* oom = nullptr;
    for (const Incident& i : d.incidents) {
      if (Id(i.rule) == "host-oom-kill") oom = &i;
    }
    ASSERT_NE(oom, nullptr) << ::testing::PrintToString(Ids(d));
    EXPECT_EQ(oom->host, "gpu-node-7");
    EXPECT_EQ(oom->rank, one_rank ? 3 : -1) << oom->explanation;
  }
}

// The OOM killer's memory cgroup names the victim's pod by UID (a systemd
// slice spells it with '_'); the kubelet's PLEG line names that pod with
// its UID: the pod's one rank is the victim. A pod whose lines name several
// ranks names none of them, and a UID no kubelet line names, no pod.
TEST_F(CorrelateTest, UndatedKillOnItsNodeBeatsAnUndatedPodStatus) {
  // A kernel log of seconds since boot that nothing anchors, and a
  // `kubectl get pods` table: neither is dated. The kernel's kill, placed
  // on its node, explains the launcher's report; the pod status table,
  // which names no host, does not take it for its own.
  Synth s(rs());
  uint32_t pods = s.Source("kubectl/get-pods-wide.txt", "");
  s.Add(pods, "cgroup-oom", "k8s-oomkilled", kNoTime, -1);
  s.Add(pods, "cgroup-oom", "k8s-oomkilled", kNoTime, -1);
  uint32_t kern = s.Source("nodes/gpu-node-7/dmesg.txt", "gpu-node-7");
  Evidence& k = s.Add(kern, "host-oom-kill", "killed-process", kNoTime, -1);
  k.fields = {{"pid", "1356108"}};
  uint32_t w = s.Source("pods/trainer-worker-3/pytorch.log", "gpu-node-7", 15);
  s.Add(w, "torch-child-failed", "child_failed_error", kNoTime, 15);
  Diagnosis d = s.Run();
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_EQ(Id(d.incidents[0].rule), "host-oom-kill") << ::testing::PrintToString(Ids(d));
  EXPECT_EQ(d.incidents[0].host, "gpu-node-7");
  ASSERT_NE(FindCollateral(d.incidents[0], "torch-child-failed"), nullptr);
}

TEST_F(CorrelateTest, OomKillersPodUidNamesThePodsRank) {
  const std::string uid = "51c2a0e4-7d3b-4c1e-9a8f-0b6e2d4c1a77";
  for (int variant : {0, 1, 2}) {
    Synth s(rs());
    uint32_t w1 = s.Source("pods/trainer-worker-1/pytorch.log", "trainer-worker-1");
    uint32_t w0 = s.Source("pods/trainer-worker-0/pytorch.log", "trainer-worker-0");
    s.scan.host_aliases = {{"trainer-worker-1", "gpu-node-7"}, {"trainer-worker-0", "gpu-node-7"}};
    s.Add(w1, "ib-retry-exceeded", "nccl_ib_status12", kT0 + 9 * kMin, 3).fields = {{"peer", "10.9.9.9"}};
    if (variant == 1) s.Add(w1, "ib-retry-exceeded", "nccl_ib_status12", kT0 + 9 * kMin, 2).fields = {{"peer", "10.9.9.9"}};
    s.Add(w0, "ib-retry-exceeded", "nccl_ib_status12", kT0 + 9 * kMin, 0).fields = {{"peer", "10.9.9.9"}};
    uint32_t kubelet = s.Source("gpu-node-7/kubelet.log", "gpu-node-7");
    s.Add(kubelet, "job-placement", "kubelet-pod-uid", kT0 + 10 * kMin + kS, -1).fields = {
        {"uid_pod", "trainer-worker-1"}, {"pod_uid", variant == 2 ? "0b6e2d4c-7d3b-4c1e-9a8f-51c2a0e41a77" : uid}};
    uint32_t kern = s.Source("gpu-node-7/kern.log", "gpu-node-7");
    Evidence& k = s.Add(kern, "cgroup-oom", "oom-kill-summary-memcg", kT0 + 10 * kMin, -1);
    k.pid = 1372750;
    k.fields = {{"pid", "1372750"}, {"pod_uid", "51c2a0e4_7d3b_4c1e_9a8f_0b6e2d4c1a77"}};
    Diagnosis d = s.Run();
    const Incident* oom = nullptr;
    for (const Incident& i : d.incidents) {
      if (Id(i.rule) == "cgroup-oom") oom = &i;
    }
    ASSERT_NE(oom, nullptr) << ::testing::PrintToString(Ids(d));
    EXPECT_EQ(oom->host, "gpu-node-7");
    EXPECT_EQ(oom->rank, variant == 0 ? 3 : -1) << oom->explanation;
  }
}

// Two pods share a node, each its own torchrun over two GPUs: the kernel
// kills a worker of one (its task_memcg names the pod's UID) and a second
// later one of the other, whose agent reports first. The first kill's pod,
// then the local rank that pod's agent reports, name the rank: on the node,
// every pod has a local rank 0 and 1.
TEST_F(CorrelateTest, OomKillOfOnePodAmongSeveralOnItsNode) {
  const std::string uid[2] = {"0f1e2d3c-4b5a-4697-a8b9-c0d1e2f3a4b5", "51c2a0e4-7d3b-4c1e-9a8f-0b6e2d4c1a77"};
  Synth s(rs());
  uint32_t pod[2];
  for (int p = 0; p < 2; ++p) {
    std::string name = StrCat("trainer-worker-", p);
    pod[p] = s.Source(StrCat("pods/", name, "/pytorch.log"), name, -1, kT0, kT0 + 20 * kMin);
    s.scan.host_aliases.push_back({name, "gpu-node-7"});
    for (int lr = 0; lr < 2; ++lr) {
      s.scan.devices.push_back({name, 2 * p + lr, lr, kBus[2 * p + lr], 4});
      s.scan.ranks[2 * p + lr].host = name;
    }
  }
  uint32_t kubelet = s.Source("gpu-node-7/kubelet.log", "gpu-node-7");
  uint32_t kern = s.Source("gpu-node-7/kern.log", "gpu-node-7");
  for (int p : {1, 0}) {  // pod 1's worker first
    int64_t t = kT0 + 10 * kMin + (p == 1 ? 0 : kS);
    Evidence& k = s.Add(kern, "cgroup-oom", "oom-kill-summary-memcg", t, -1);
    k.pid = 1372750 + p;
    k.fields = {{"pid", StrCat(k.pid)}, {"pod_uid", uid[p]}};
    s.Add(kubelet, "job-placement", "kubelet-pod-uid", t + 2 * kS, -1).fields = {
        {"uid_pod", StrCat("trainer-worker-", p)}, {"pod_uid", uid[p]}};
  }
  for (int p : {0, 1}) {  // pod 0's agent reports first
    Evidence& a = s.Add(pod[p], "torch-child-failed", "agent_worker_failed", kT0 + 10 * kMin + (p ? 4 : 2) * kS, -1);
    a.local_rank = p;
    a.pid = 64 + p;
    a.fields = {{"exitcode", "-9"}, {"local_rank", StrCat(p)}, {"pid", StrCat(a.pid)}};
  }
  Diagnosis d = s.Run();
  const Incident* oom = nullptr;
  for (const Incident& i : d.incidents) {
    if (Id(i.rule) == "cgroup-oom" && !oom) oom = &i;
  }
  ASSERT_NE(oom, nullptr) << ::testing::PrintToString(Ids(d));
  EXPECT_EQ(oom->host, "gpu-node-7");
  EXPECT_EQ(oom->rank, 3) << oom->explanation;
}

// A CUDA OOM in a stream that names only its host (pdsh's "node101: ")
// names its device: the rank the world communicator put on that device of
// that host. Where every rank of the host is device 0 (one visible GPU per
// process) the index names none.
TEST_F(CorrelateTest, CudaDeviceOfARanklessLineNamesItsRank) {
  for (bool per_task_visibility : {false, true}) {
    Synth s(rs());
    s.Job(2, kT0, kT0 + 2 * kHour);
    if (per_task_visibility) {
      for (DeviceLink& l : s.scan.devices) l.cuda_dev = 0;
    }
    uint32_t stream = s.Source("deepspeed-launch.log", "");
    Evidence& e = s.Add(stream, "cuda-oom", "torch-oom", kT0 + 10 * kMin, -1);
    e.host = HostName(1);
    e.fields = {{"cuda_dev", per_task_visibility ? "0" : "3"}};
    Diagnosis d = s.Run();
    ASSERT_FALSE(d.incidents.empty());
    EXPECT_EQ(Id(d.incidents[0].rule), "cuda-oom");
    EXPECT_EQ(d.incidents[0].host, HostName(1));
    EXPECT_EQ(d.incidents[0].rank, per_task_visibility ? -1 : 11);
  }
}

// The root's first line names only its host (a pdsh stream's CUDA error),
// a second of its lines a rank of that host (the Xid's bus): the incident
// is that rank's. A rank of another host does not name it.
TEST_F(CorrelateTest, OneRankAmongTheRootsLinesNamesTheIncident) {
  for (int xid_host : {1, 0}) {
    Synth s(rs());
    s.Job(2, kT0, kT0 + 2 * kHour);
    uint32_t stream = s.Source("deepspeed-launch.log", "");
    Evidence& e = s.Add(stream, "cuda-oom", "torch-oom", kT0 + 10 * kMin, -1);
    e.host = HostName(1);
    s.Add(s.RankSource(xid_host * 8 + 3), "cuda-oom", "torch-oom", kT0 + 10 * kMin + kS, xid_host * 8 + 3);
    Diagnosis d = s.Run();
    ASSERT_FALSE(d.incidents.empty());
    EXPECT_EQ(Id(d.incidents[0].rule), "cuda-oom");
    EXPECT_EQ(d.incidents[0].rank, xid_host == 1 ? 11 : -1);
  }
}

// Pods placed on nodes: every line of a pod is its node's, and a pod is
// never counted as a host.
TEST_F(CorrelateTest, PodsArePlacedOnTheirNodes) {
  Synth s(rs());
  uint32_t pod = s.Source("pods/trainer-worker-1/pytorch.log", "trainer-worker-1", 3);
  s.Source("pods/trainer-worker-0/pytorch.log", "trainer-worker-0", 0);
  s.scan.host_aliases = {{"trainer-worker-1", "gpu-node-7"}, {"trainer-worker-0", "gpu-node-2"}};
  s.Add(pod, "cuda-oom", "torch-oom", kT0 + 10 * kMin, 3);
  Diagnosis d = s.Run();
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_EQ(d.incidents[0].host, "gpu-node-7");
  EXPECT_EQ(d.hosts, 2u);
}

// ---------------------------------------------------------------- detectors

TEST_F(CorrelateTest, StragglerDetectorNamesTheSlowRank) {
  Synth s(rs());
  s.Job(2, kT0, kT0 + 2 * kHour);
  for (int64_t r = 0; r < 16; ++r) {
    s.Progress(r, HostName(static_cast<int>(r / 8)), kT0 + 2 * kHour - kS, r == 7 ? 1.4 : 1.0);
  }
  Diagnosis d = s.Run();
  ASSERT_EQ(Causes(d).size(), 1u) << ::testing::PrintToString(Ids(d));
  EXPECT_EQ(Id(d.incidents[0].rule), "straggler-slow-rank");
  EXPECT_EQ(d.incidents[0].rank, 7);
  EXPECT_EQ(d.incidents[0].host, "node100");
  EXPECT_EQ(d.incidents[0].detector, "straggler");
  EXPECT_TRUE(d.incidents[0].inferred);
}

TEST_F(CorrelateTest, HangDetectorWhenTheLogsGoOnWithoutProgress) {
  Synth s(rs());
  s.Job(1, kT0, kT0 + 3 * kHour);
  for (int64_t r = 0; r < 8; ++r) s.Progress(r, "node100", kT0 + (r == 3 ? 40 : 60) * kMin, 1.0);
  Diagnosis d = s.Run();
  ASSERT_EQ(Causes(d).size(), 1u) << ::testing::PrintToString(Ids(d));
  EXPECT_EQ(Id(d.incidents[0].rule), "training-silent-hang");
  EXPECT_EQ(d.incidents[0].detector, "hang");
  EXPECT_EQ(d.incidents[0].rank, 3);  // the first to stop
}

// The application logs end at the last step and the job was cancelled (an
// unstamped notice); the kernel log of the job's host goes on for half an
// hour: the job was still there without progress. A kernel block stamped
// weeks later (a replayed archive) says nothing, nor does the kernel log of
// a job that was not ended from outside (it finished; its hosts go on).
TEST_F(CorrelateTest, KernelLogOfTheJobsHostStretchesTheHangWindow) {
  struct Case {
    int64_t kernel_end;
    bool cancelled, hang;
  };
  for (Case c : {Case{kT0 + 90 * kMin, true, true}, Case{kT0 + 20 * kDay, true, false},
                 Case{kT0 + 90 * kMin, false, false}}) {
    SCOPED_TRACE(::testing::Message() << c.kernel_end << " " << c.cancelled);
    Synth s(rs());
    s.Job(1, kT0, kT0 + 60 * kMin);
    for (int64_t r = 0; r < 8; ++r) s.Progress(r, "node100", kT0 + (r == 3 ? 59 : 60) * kMin, 1.0);
    uint32_t k = s.Kernel(0);
    s.scan.sources[k].first_time_us = kT0 - kHour;
    s.scan.sources[k].last_time_us = c.kernel_end;
    if (c.cancelled) {
      s.Add(s.RankSource(0), "sigterm-received", "slurm-cancelled", kNoTime, -1,
            "slurmstepd: error: *** STEP 88231.0 ON node100 CANCELLED AT 2026-10-27T07:43:20 ***");
    }
    Diagnosis d = s.Run();
    EXPECT_EQ(d.job_end_us, kT0 + 60 * kMin);  // the job window itself stays the application's
    std::vector<const Incident*> causes = Causes(d);
    if (!c.hang) {
      for (const Incident* i : causes) EXPECT_NE(i->detector, "hang");
      continue;
    }
    ASSERT_EQ(causes.size(), 1u) << ::testing::PrintToString(Ids(d));
    EXPECT_EQ(d.incidents[0].detector, "hang");
    EXPECT_EQ(d.incidents[0].rank, 3);
  }
}

// The scheduler's unstamped verdict (JobState=TIMEOUT) on a job whose ranks
// had all stopped long before its last sign of life: the hang ran into the
// limit; the limit does not keep the hang detector off.
TEST_F(CorrelateTest, UnstampedTimeLimitAfterTheStopIsTheHangsCollateral) {
  Synth s(rs());
  s.Job(1, kT0, kT0 + 60 * kMin);
  for (int64_t r = 0; r < 8; ++r) s.Progress(r, "node100", kT0 + (r == 3 ? 59 : 60) * kMin, 1.0);
  uint32_t k = s.Kernel(0);
  s.scan.sources[k].last_time_us = kT0 + 90 * kMin;
  uint32_t sched = s.Source("scontrol_show_job.txt", "");
  s.Add(sched, "slurm-time-limit", "slurm-state-timeout", kNoTime, -1, "   JobState=TIMEOUT Reason=None");
  Diagnosis d = s.Run();
  ASSERT_EQ(Causes(d).size(), 1u) << ::testing::PrintToString(Ids(d));
  EXPECT_EQ(d.incidents[0].detector, "hang");
  EXPECT_EQ(d.incidents[0].rank, 3);
  EXPECT_NE(FindCollateral(d.incidents[0], "slurm-time-limit"), nullptr);
}

// Step lines with no time (tqdm bars in an unstamped stdout): rank 3 is a
// step behind the rest when the scheduler's stamped time limit ends the job.
// The limit ended a hang, and rank 3 is the one the others waited for.
TEST_F(CorrelateTest, StampedTimeLimitAfterUntimedStepsIsTheHangsCollateral) {
  Synth s(rs());
  s.Job(1, kT0, kT0 + 60 * kMin);
  for (int64_t r = 0; r < 8; ++r) {
    s.Progress(r, "node100", kNoTime, 1.0);
    s.scan.ranks[r].last_step = r == 3 ? 20 : 21;
  }
  s.Add(s.RankSource(0), "slurm-time-limit", "slurmstepd-time-limit", kT0 + 60 * kMin, -1,
        "slurmstepd: error: *** STEP 88231.0 ON node100 CANCELLED AT 2026-10-27T08:00:00 DUE TO "
        "TIME LIMIT ***");
  Diagnosis d = s.Run();
  ASSERT_EQ(Causes(d).size(), 1u) << ::testing::PrintToString(Ids(d));
  EXPECT_EQ(d.incidents[0].detector, "hang");
  EXPECT_EQ(d.incidents[0].rank, 3);
  EXPECT_NE(FindCollateral(d.incidents[0], "slurm-time-limit"), nullptr);
}

// A time limit says who ended the job: a failure logged while the job was
// being stopped ranks after it, however sure its rule; one logged before
// the notice keeps the lead.
TEST_F(CorrelateTest, TimeLimitRanksBeforeWhatFailedWhileStopping) {
  for (bool before : {false, true}) {
    Synth s(rs());
    s.Job(1, kT0, kT0 + 60 * kMin);
    for (int64_t r = 0; r < 8; ++r) s.Progress(r, "node100", kT0 + 59 * kMin, 1.0);
    uint32_t src = s.RankSource(0);
    int64_t t_limit = kT0 + 60 * kMin;
    int64_t t_fail = before ? t_limit - 30 * kS : t_limit + 10 * kS;
    if (before) s.Add(src, "deepspeed-zero3-inflight-params", "still-have-inflight", t_fail, 0);
    s.Add(src, "slurm-time-limit", "slurmstepd-time-limit", t_limit, -1,
          "slurmstepd: error: *** STEP 88231.0 ON node100 CANCELLED AT 2026-10-27T08:00:00 DUE TO "
          "TIME LIMIT ***");
    if (!before) s.Add(src, "deepspeed-zero3-inflight-params", "still-have-inflight", t_fail, 0);
    Diagnosis d = s.Run();
    ASSERT_GE(d.incidents.size(), 2u) << ::testing::PrintToString(Ids(d));
    EXPECT_EQ(Id(d.incidents[0].rule), before ? "deepspeed-zero3-inflight-params" : "slurm-time-limit")
        << before << ::testing::PrintToString(Ids(d));
  }
}

// A notice with its own stamp, year-less (syslog) or not, came when it
// says: right after the last step it is the cause, whatever the kernel
// logged later; only an unstamped or inherited time waits for the job's
// last sign of life.
TEST_F(CorrelateTest, YearlessStampedNoticeRightAfterTheStopStaysTheCause) {
  Synth s(rs());
  s.Job(2, kT0, kT0 + 60 * kMin);
  for (int64_t r = 0; r < 16; ++r) s.Progress(r, HostName(r / 8), kT0 + 60 * kMin, 1.0);
  Evidence& n = s.Add(s.Kernel(1), "spot-instance-interruption", "aws-instance-action", kT0 + 60 * kMin + kS, -1);
  n.time_source = TimeSource::kInferredYear;
  s.scan.sources[s.Kernel(0)].last_time_us = kT0 + 100 * kMin;
  Diagnosis d = s.Run();
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_EQ(Id(d.incidents[0].rule), "spot-instance-interruption") << ::testing::PrintToString(Ids(d));
}

TEST_F(CorrelateTest, NoHangDetectionWhenLogLinesExplainTheStop) {
  Synth s(rs());
  s.Job(1, kT0, kT0 + 3 * kHour);
  for (int64_t r = 0; r < 8; ++r) s.Progress(r, "node100", kT0 + 60 * kMin, 1.0);
  s.Xid79(0, 3, kT0 + 60 * kMin + 10 * kS);
  Diagnosis d = s.Run();
  EXPECT_THAT(Ids(d), ElementsAre("xid-79-fallen-off-bus"));
}

TEST(DetectTest, StragglersNeedSamplesAndBothThresholds) {
  std::map<int64_t, RankSummary> ranks;
  auto put = [&](int64_t r, double step, uint64_t n) {
    RankSummary& s = ranks[r];
    s.rank = r;
    s.step_samples = n;
    s.step_time_reservoir.assign(n, step);
    s.last_progress_us = kT0;
  };
  for (int64_t r = 0; r < 8; ++r) put(r, 1.0, 30);
  put(8, 1.05, 30);  // far in z (identical peers) but only 5% slower: not a straggler
  put(9, 2.0, 5);    // slow but too few samples
  EXPECT_THAT(DetectStragglers(ranks), IsEmpty());
  put(10, 1.3, 30);
  auto f = DetectStragglers(ranks);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rank, 10);
  EXPECT_EQ(f[0].detector, "straggler");
}

TEST(DetectTest, HangsSortedByWhenProgressStopped) {
  std::map<int64_t, RankSummary> ranks;
  for (int64_t r = 0; r < 4; ++r) {
    ranks[r].rank = r;
    ranks[r].last_progress_us = kT0 + (r == 2 ? 0 : 20) * kMin;
    ranks[r].step_time_reservoir = {1.0, 1.0, 1.0};
  }
  EXPECT_THAT(DetectHangs(ranks, kT0 + 23 * kMin), ElementsAre(::testing::Field(&Finding::rank, 2)));
  auto all = DetectHangs(ranks, kT0 + 60 * kMin);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].rank, 2);
  EXPECT_THAT(DetectHangs(ranks, kNoTime), IsEmpty());
}

TEST(DetectTest, HangGapScalesWithTheStepTime) {
  // 2-minute steps: 10 step times (20 min) without progress is not yet a hang.
  std::map<int64_t, RankSummary> ranks;
  ranks[0].rank = 0;
  ranks[0].last_progress_us = kT0;
  ranks[0].step_time_reservoir = {120, 120, 120};
  EXPECT_THAT(DetectHangs(ranks, kT0 + 15 * kMin), IsEmpty());
  EXPECT_EQ(DetectHangs(ranks, kT0 + 25 * kMin).size(), 1u);
}

// ---------------------------------------------------------------- fatal vs survived

// An error a rank carried on from (progress after it), the generic fatal
// line of role:fallback rules, and launcher summaries (role:summary).
class FatalRulesTest : public CorrelateTest {
 protected:
  static void SetUpTestSuite() {
    RuleTree t("fatal-test");
    t.Rule("caught-oom", "application", "initiating", "CAUGHT-OOM here", R"("weight": 0.9)");
    t.Rule("worker-crash", "application", "initiating", "WORKER-CRASH here", R"("weight": 0.6)");
    t.Rule("step-line", "application", "progress", "STEP-LINE done");
    t.Rule("generic-fatal", "application", "initiating", "GENERIC-FATAL here", "",
           R"("t", "role:fallback")");
    t.Rule("generic-exit", "application", "symptom", "GENERIC-EXIT here", "",
           R"("t", "role:fallback")");
    t.Rule("launcher-summary", "framework", "symptom", "LAUNCHER-SUMMARY here",
           R"("missing_fact": "m")", R"("t", "role:summary")");
    t.Rule("collective-timeout", "framework", "symptom", "COLLECTIVE-TIMEOUT here");
    t.Rule("train-done", "application", "context", "TRAIN-DONE here", "",
           R"("t", "role:completion")");
    auto r = t.Compile();
    ASSERT_TRUE(r.ok()) << r.status();
    rules_ = *r;
  }
  static void TearDownTestSuite() { rules_.reset(); }
  const Ruleset& rs() override { return rules_ ? *rules_ : DefaultRules(); }
  static std::shared_ptr<const Ruleset> rules_;

  // Steps of `rank` every minute in [from, to] minutes after kT0.
  static void Steps(Synth& s, int64_t rank, int from, int to) {
    for (int m = from; m <= to; ++m) s.Add(s.RankSource(rank), "step-line", "s", kT0 + m * kMin, rank);
  }
};
std::shared_ptr<const Ruleset> FatalRulesTest::rules_;

// A caught CUDA OOM at 45% of the run followed by more steps ranks below the
// rank that really failed later, however much more weight its rule carries.
TEST_F(FatalRulesTest, SurvivedErrorRanksBelowTheRankThatFailed) {
  ASSERT_NE(rules_, nullptr);
  Synth s(*rules_);
  s.Job(1, kT0, kT0 + 100 * kMin);
  Steps(s, 0, 0, 44);
  s.Add(s.RankSource(0), "caught-oom", "s", kT0 + 45 * kMin, 0);
  Steps(s, 0, 46, 99);
  Steps(s, 3, 0, 89);
  s.Add(s.RankSource(3), "worker-crash", "s", kT0 + 90 * kMin, 3);
  Diagnosis d = s.Run();
  ASSERT_EQ(Causes(d).size(), 2u) << ::testing::PrintToString(Ids(d));
  EXPECT_EQ(Id(d.incidents[0].rule), "worker-crash");
  EXPECT_EQ(d.incidents[0].rank, 3);
  EXPECT_FALSE(d.incidents[0].survived);
  EXPECT_EQ(Id(d.incidents[1].rule), "caught-oom");
  EXPECT_TRUE(d.incidents[1].survived);
  EXPECT_NE(d.incidents[1].explanation.find("carried on"), std::string::npos);
}

// The same error with no progress after it ended the rank.
TEST_F(FatalRulesTest, ErrorWithoutLaterProgressIsFatal) {
  ASSERT_NE(rules_, nullptr);
  Synth s(*rules_);
  s.Job(1, kT0, kT0 + 100 * kMin);
  Steps(s, 0, 0, 44);
  s.Add(s.RankSource(0), "caught-oom", "s", kT0 + 45 * kMin, 0);
  Steps(s, 3, 0, 89);
  s.Add(s.RankSource(3), "worker-crash", "s", kT0 + 90 * kMin, 3);
  Diagnosis d = s.Run();
  ASSERT_EQ(Causes(d).size(), 2u);
  EXPECT_EQ(Id(d.incidents[0].rule), "caught-oom");
  EXPECT_FALSE(d.incidents[0].survived);
}

// The generic fatal line makes an incident only when nothing else explains
// the failure: the first one, on the earliest failing rank.
TEST_F(FatalRulesTest, FallbackOnlyWhenNoRuleExplainsTheFailure) {
  ASSERT_NE(rules_, nullptr);
  for (bool catalog : {false, true}) {
    SCOPED_TRACE(catalog);
    Synth s(*rules_);
    s.Job(1, kT0, kT0 + kHour);
    s.Add(s.RankSource(2), "generic-fatal", "s", kT0 + 25 * kMin, 2);
    s.Add(s.RankSource(5), "generic-fatal", "s", kT0 + 20 * kMin, 5, "GENERIC-FATAL here: first");
    s.Add(s.RankSource(5), "generic-exit", "s", kT0 + 20 * kMin + kS, 5);
    if (catalog) s.Add(s.RankSource(1), "worker-crash", "s", kT0 + 30 * kMin, 1);
    Diagnosis d = s.Run();
    if (catalog) {
      EXPECT_THAT(Ids(d), ElementsAre("worker-crash"));
      continue;
    }
    ASSERT_THAT(Ids(d), ElementsAre("generic-fatal"));
    const Incident& inc = d.incidents[0];
    EXPECT_EQ(inc.rank, 5);
    EXPECT_FALSE(inc.inferred);
    ASSERT_FALSE(inc.initiating.empty());
    EXPECT_EQ(inc.initiating[0].text, "GENERIC-FATAL here: first");
  }
}

// A fatal-looking line the rank carried on from is no failure at all.
TEST_F(FatalRulesTest, SurvivedFallbackLineMakesNoIncident) {
  ASSERT_NE(rules_, nullptr);
  Synth s(*rules_);
  s.Job(1, kT0, kT0 + kHour);
  s.Add(s.RankSource(0), "generic-fatal", "s", kT0 + 20 * kMin, 0);
  Steps(s, 0, 21, 30);
  EXPECT_THAT(Causes(s.Run()), IsEmpty());
}

// A launcher summary is collateral of the worker's own error; alone, its
// incident asks for the worker's log. A bare exit status adds nothing to it.
TEST_F(FatalRulesTest, SummaryIsCollateralOfTheWorkersOwnError) {
  ASSERT_NE(rules_, nullptr);
  for (bool worker_error : {true, false}) {
    SCOPED_TRACE(worker_error);
    Synth s(*rules_);
    s.Job(1, kT0, kT0 + kHour);
    uint32_t agent = s.Source("node100/torchrun.log", "node100", -1, kT0, kT0 + kHour);
    if (worker_error) s.Add(s.RankSource(2), "generic-fatal", "s", kT0 + 30 * kMin, 2);
    s.Add(agent, "generic-exit", "s", kT0 + 30 * kMin + 2 * kS, 2);
    s.Add(agent, "launcher-summary", "s", kT0 + 30 * kMin + 3 * kS, 2);
    Diagnosis d = s.Run();
    ASSERT_EQ(Causes(d).size(), 1u) << ::testing::PrintToString(Ids(d));
    const Incident& inc = d.incidents[0];
    if (worker_error) {
      EXPECT_EQ(Id(inc.rule), "generic-fatal");
      EXPECT_NE(FindCollateral(inc, "launcher-summary"), nullptr);
      EXPECT_EQ(inc.rank, 2);
    } else {
      EXPECT_EQ(Id(inc.rule), "launcher-summary");
      EXPECT_THAT(inc.missing_facts,
                  ::testing::Contains(::testing::HasSubstr("the worker's own log")));
    }
  }
}

// A concrete fatal line on one rank (a ValueError) before a symptom-only
// verdict (the other ranks' collective timeouts ten minutes later) is the
// lead, and the timeouts its collateral. The other way round the symptom
// keeps its verdict: the fatal line after it may be its doing.
TEST_F(FatalRulesTest, ConcreteFatalLineBeforeASymptomOnlyVerdictInitiates) {
  ASSERT_NE(rules_, nullptr);
  // Minutes of the fatal line: before the timeouts at 90, after them, and
  // hours before them (out of a collective timeout's reach).
  for (int fatal_at : {80, 100, 5}) {
    SCOPED_TRACE(fatal_at);
    Synth s(*rules_);
    s.Job(1, kT0, kT0 + 2 * kHour);
    s.Add(s.RankSource(3), "generic-fatal", "s", kT0 + fatal_at * kMin, 3,
          "GENERIC-FATAL here: ValueError");
    for (int r : {0, 1, 2, 4}) s.Add(s.RankSource(r), "collective-timeout", "s", kT0 + 90 * kMin, r);
    Diagnosis d = s.Run();
    ASSERT_FALSE(Causes(d).empty());
    if (fatal_at != 80) {
      EXPECT_THAT(Ids(d), ElementsAre("collective-timeout"));
      continue;
    }
    ASSERT_THAT(Ids(d), ElementsAre("generic-fatal"));
    const Incident& inc = d.incidents[0];
    EXPECT_EQ(inc.rank, 3);
    EXPECT_FALSE(inc.inferred);
    EXPECT_NE(FindCollateral(inc, "collective-timeout"), nullptr);
  }
}

// What a rank prints after training completed ("Training completed", then
// a traceback from a destructor at exit) is teardown, not a failure; the
// same line before completion is.
TEST_F(FatalRulesTest, FatalLineAfterCompletionIsTeardown) {
  ASSERT_NE(rules_, nullptr);
  for (bool completed : {true, false}) {
    SCOPED_TRACE(completed);
    Synth s(*rules_);
    s.Job(1, kT0, kT0 + kHour);
    Steps(s, 0, 0, 50);
    if (completed) s.Add(s.RankSource(0), "train-done", "s", kT0 + 51 * kMin, 0);
    s.Add(s.RankSource(0), "generic-fatal", "s", kT0 + 52 * kMin, 0);
    Diagnosis d = s.Run();
    if (completed) {
      EXPECT_THAT(Causes(d), IsEmpty());
    } else {
      EXPECT_THAT(Ids(d), ElementsAre("generic-fatal"));
    }
  }
}

// A catalog rule's line inside an exception's traceback (a frame of
// torch.load: a checkpoint that does not load) says what the exception is:
// the exception line becomes that incident's initiating evidence, not an
// unrecognised one.
TEST_F(FatalRulesTest, CatalogFrameInATracebackNamesItsException) {
  ASSERT_NE(rules_, nullptr);
  for (bool own : {true, false}) {
    SCOPED_TRACE(own);
    Synth s(*rules_);
    s.Job(1, kT0, kT0 + kHour);
    Evidence& frame = s.Add(s.RankSource(3), "collective-timeout", "s", kT0 + 20 * kMin, 3);
    if (own) frame.fields.emplace_back("in_traceback_of", StrCat(frame.line + 1));
    s.Add(s.RankSource(3), "generic-fatal", "s", kT0 + 20 * kMin, 3, "GENERIC-FATAL here: EOFError");
    Diagnosis d = s.Run();
    ASSERT_THAT(Ids(d), ElementsAre("collective-timeout"));
    const Incident& inc = d.incidents[0];
    EXPECT_EQ(inc.inferred, !own);
    bool has_exception = std::any_of(inc.initiating.begin(), inc.initiating.end(), [](const Evidence& e) {
      return e.text == "GENERIC-FATAL here: EOFError";
    });
    EXPECT_EQ(has_exception, own);
  }
}

// A code line whose exception a catalog rule names (a symptom: "RuntimeError:
// NCCL communicator was aborted") is that exception's, not a lead.
TEST_F(FatalRulesTest, TracebackCodeLineBeforeACatalogExceptionIsItsOwn) {
  ASSERT_NE(rules_, nullptr);
  Synth s(*rules_);
  s.Job(1, kT0, kT0 + kHour);
  Evidence& code = s.Add(s.RankSource(1), "generic-fatal", "s", kT0 + 20 * kMin, 1);
  code.fields.emplace_back("statement", "raise RuntimeError(");
  // The message's lines between them ("raise RuntimeError(", its arguments,
  // the exception line four lines down).
  s.Add(s.RankSource(1), "collective-timeout", "s", kT0 + 20 * kMin, 1).line += 3;
  EXPECT_THAT(Ids(s.Run()), ElementsAre("collective-timeout"));
}

// A bare exit status says only that a rank ended: it never outweighs a
// symptom a catalog rule names.
TEST_F(FatalRulesTest, ExitStatusAloneDoesNotOutweighASymptom) {
  ASSERT_NE(rules_, nullptr);
  Synth s(*rules_);
  s.Job(1, kT0, kT0 + kHour);
  s.Add(s.RankSource(3), "generic-exit", "s", kT0 + 20 * kMin, 3);
  s.Add(s.RankSource(4), "collective-timeout", "s", kT0 + 30 * kMin, 4);
  EXPECT_THAT(Ids(s.Run()), ElementsAre("collective-timeout"));
}

// A generic fatal line that a catalog rule also matched ("DistBackendError:
// ... Watchdog caught collective operation timeout"), or whose message goes
// on to such a line within three lines (C++'s "terminate called after
// throwing ..." and its "what():" line; NCCL's result, its name, "Last
// error:" and the failed call), is that rule's failure, not an unrecognised
// one.
TEST_F(FatalRulesTest, FatalLineACatalogRuleMatchedIsThatRulesFailure) {
  ASSERT_NE(rules_, nullptr);
  for (uint64_t gap : {0, 1, 3, 4}) {
    SCOPED_TRACE(gap);
    Synth s(*rules_);
    s.Job(1, kT0, kT0 + kHour);
    Evidence& fatal = s.Add(s.RankSource(3), "generic-fatal", "s", kT0 + 20 * kMin, 3);
    uint64_t line = fatal.line, offset = fatal.offset;
    Evidence& symptom = s.Add(s.RankSource(3), "collective-timeout", "s", kT0 + 20 * kMin, 3);
    symptom.line = line + gap;
    if (gap == 0) symptom.offset = offset;
    Diagnosis d = s.Run();
    if (gap <= 3) {
      EXPECT_THAT(Ids(d), ElementsAre("collective-timeout"));
    } else {
      EXPECT_THAT(Ids(d), ElementsAre("generic-fatal"));
    }
  }
  // Another rank's line right after it is not its message.
  Synth s(*rules_);
  s.Job(1, kT0, kT0 + kHour);
  uint32_t shared = s.Source("node100/train.log", "node100", -1, kT0, kT0 + kHour);
  s.Add(shared, "generic-fatal", "s", kT0 + 20 * kMin, 3);
  s.Add(shared, "collective-timeout", "s", kT0 + 20 * kMin, 5);
  EXPECT_THAT(Ids(s.Run()), ElementsAre("generic-fatal"));
}

// A traceback cut before its exception ends on a code line ("    assert
// not param.ds_active_sub_modules, ..."): that line is the lead. When the
// exception follows, the exception line is.
TEST_F(FatalRulesTest, TracebackCodeLineLeadsOnlyWhenItsExceptionIsCut) {
  ASSERT_NE(rules_, nullptr);
  for (bool cut : {true, false}) {
    SCOPED_TRACE(cut);
    Synth s(*rules_);
    s.Job(1, kT0, kT0 + kHour);
    Evidence& code = s.Add(s.RankSource(1), "generic-fatal", "s", kT0 + 20 * kMin, 1,
                           "GENERIC-FATAL here:     assert x is not None");
    code.fields.emplace_back("statement", "assert x is not None");
    if (!cut) {
      s.Add(s.RankSource(1), "generic-fatal", "s", kT0 + 20 * kMin, 1,
            "GENERIC-FATAL here: AssertionError");
    }
    s.Add(s.RankSource(1), "generic-exit", "s", kT0 + 20 * kMin + kS, 1);
    Diagnosis d = s.Run();
    ASSERT_THAT(Ids(d), ElementsAre("generic-fatal"));
    const Incident& inc = d.incidents[0];
    EXPECT_EQ(inc.rank, 1);
    ASSERT_EQ(inc.initiating.size(), 1u);
    EXPECT_EQ(inc.initiating[0].text, cut ? "GENERIC-FATAL here:     assert x is not None"
                                          : "GENERIC-FATAL here: AssertionError");
  }
}

// ---------------------------------------------------------------- facts in the advice

// The Xid 79 rule's verify names the GPU that failed, where it failed.
TEST_F(CorrelateTest, Xid79VerifyNamesTheFailingBus) {
  Synth s(rs());
  uint32_t kern = s.Source("node006/kern.log", "node006");
  uint32_t app = s.Source("node006/rank-4.log", "node006", 4, kT0, kT0 + kHour);
  s.scan.devices.push_back({"node006", 4, 4, "9a000"});
  s.Add(app, "training-progress", "megatron_iteration", kT0, 4);
  Evidence& ev = s.Add(kern, "xid-79-fallen-off-bus", "xid79", kT0 + 10 * kMin, -1,
                       "NVRM: Xid (PCI:0000:9a:00): 79, pid='<unknown>', name=<unknown>, GPU has "
                       "fallen off the bus.");
  ev.gpu = "0000:9a:00.0";
  ev.monotonic_s = 1e6;
  Diagnosis d = s.Run();
  ASSERT_FALSE(Causes(d).empty());
  const Incident& inc = *Causes(d)[0];
  ASSERT_EQ(Id(inc.rule), "xid-79-fallen-off-bus");
  EXPECT_EQ(inc.host, "node006");
  EXPECT_NE(inc.verify.find("nvidia-smi -q -i 0000:9a:00.0 on node006"), std::string::npos)
      << inc.verify;
  EXPECT_NE(inc.verify.find("dcgmi diag -r 3 -i 4 "), std::string::npos) << inc.verify;
  EXPECT_EQ(inc.verify.find("3b:00"), std::string::npos) << inc.verify;
  EXPECT_EQ(inc.verify.find('{'), std::string::npos) << inc.verify;
}

// A placeholder whose fact is unknown stays a placeholder, and the missing
// fact says what would fill it.
TEST(TemplateTest, UnknownBusStaysAPlaceholderWithItsMissingFact) {
  Incident inc;
  inc.host = "node006";
  inc.rank = 4;
  auto vars = internal::TemplateVars(inc, kT0, kT0);
  EXPECT_EQ(internal::FillTemplate("nvidia-smi -q -i {bus} on {host}", vars),
            "nvidia-smi -q -i <gpu bus id> on node006");
  std::vector<std::string> facts;
  internal::AddPlaceholderFacts(internal::FillTemplate("-i {bus} -i {gpu_index}", vars), vars,
                                facts);
  ASSERT_EQ(facts.size(), 2u);
  EXPECT_NE(facts[0].find("PCI bus id"), std::string::npos);
  EXPECT_NE(facts[1].find("CUDA index"), std::string::npos);
  // An unknown rank or host reads "the suspect rank", never "rank the
  // suspect rank".
  Incident unknown;
  auto uvars = internal::TemplateVars(unknown, kT0, kT0);
  EXPECT_EQ(internal::FillTemplate("the stderr of rank {rank} on host {host}; rank {rank}", uvars),
            "the stderr of the suspect rank on the suspect host; the suspect rank");
  EXPECT_EQ(internal::FillTemplate("rerank {rank}", uvars), "rerank the suspect rank");
  // The rank's NCCL device line gives both.
  std::vector<DeviceLink> devices = {{"node006", 4, 4, "9a000"}};
  vars = internal::TemplateVars(inc, kT0, kT0, &devices);
  EXPECT_EQ(vars.at("bus"), "9a000");
  EXPECT_EQ(vars.at("gpu_index"), "4");
}

TEST(ExitMeaningTest, ShellAndLauncherFormsOfTheSameSignal) {
  auto meaning = [](std::string code, std::string crash = "") {
    Evidence ev;
    if (!code.empty()) ev.fields.emplace_back("exitcode", code);
    if (!crash.empty()) ev.fields.emplace_back("crash", crash);
    std::string m = internal::ExitMeaning(ev);
    return m.substr(0, m.find(':'));
  };
  EXPECT_EQ(meaning("137"), "SIGKILL");
  EXPECT_EQ(meaning("-9"), "SIGKILL");
  EXPECT_EQ(meaning("135"), "SIGBUS");
  EXPECT_EQ(meaning("-7"), "SIGBUS");
  EXPECT_EQ(meaning("", "Bus error"), "SIGBUS");
  EXPECT_EQ(meaning("139"), "SIGSEGV");
  EXPECT_EQ(meaning("-11"), "SIGSEGV");
  EXPECT_EQ(meaning("", "Fatal Python error: Segmentation fault"), "SIGSEGV");
  EXPECT_EQ(meaning("134"), "SIGABRT");
  EXPECT_EQ(meaning("-6"), "SIGABRT");
  EXPECT_EQ(meaning("143"), "SIGTERM");
  EXPECT_EQ(meaning("-15"), "SIGTERM");
  EXPECT_EQ(meaning("1"), "");
  EXPECT_EQ(meaning("2"), "");
}

// mpirun's "exited on signal 9 (Killed)" gives the signal's number, abseil's
// "*** SIGSEGV received at time=..." and torch.multiprocessing's "terminated
// with signal SIGKILL" its name.
TEST(ExitMeaningTest, SignalNumbersAndNames) {
  auto meaning = [](std::string field, std::string value) {
    Evidence ev;
    ev.fields.emplace_back(field, value);
    std::string m = internal::ExitMeaning(ev);
    return m.substr(0, m.find(':'));
  };
  EXPECT_EQ(meaning("signal_number", "9"), "SIGKILL");
  EXPECT_EQ(meaning("signal_number", "7"), "SIGBUS");
  EXPECT_EQ(meaning("signal_number", "6"), "SIGABRT");
  EXPECT_EQ(meaning("signal_name", "SIGSEGV"), "SIGSEGV");
  EXPECT_EQ(meaning("signal_name", "SIGTERM"), "SIGTERM");
  EXPECT_EQ(meaning("signal_name", "SIGUSR1"), "SIGUSR1");
  EXPECT_EQ(meaning("crash", "User defined signal 2"), "SIGUSR2");
  EXPECT_EQ(meaning("crash", "Hangup"), "SIGHUP");
  EXPECT_EQ(meaning("crash", "Cputime limit exceeded"), "SIGXCPU");
  EXPECT_EQ(meaning("signal_name", "SIGWINCH"), "");
  EXPECT_EQ(meaning("signal_number", "1"), "");
  // sacct's ExitCode "0:9": no exit status, killed by signal 9.
  Evidence sacct;
  sacct.fields = {{"exitcode", "0"}, {"signal_number", "9"}};
  EXPECT_EQ(internal::ExitMeaning(sacct).substr(0, 7), "SIGKILL");
  sacct.fields = {{"exitcode", "1"}, {"signal_number", "0"}};
  EXPECT_EQ(internal::ExitMeaning(sacct), "");
}

// ----- NCCL Flight Recorder dumps next to the logs -----

// One 2.10 dump per rank of a world group of `n`: collectives 1..last, the
// last one started; `missing` stops one short, `odd` ran all_gather at #2,
// `no_dump` left none.
std::vector<flightrec::FrDump> FrDumps(int64_t n, int64_t last, int64_t missing, int64_t odd = -1,
                                      int64_t no_dump = -1) {
  std::vector<int64_t> world;
  for (int64_t r = 0; r < n; ++r) world.push_back(r);
  std::vector<flightrec::FrDump> out;
  for (int64_t r = 0; r < n; ++r) {
    if (r == no_dump) continue;
    flightrec::FrDump d;
    d.source = StrCat("dumps/fr-", r);
    d.version = "2.10";
    d.rank = r;
    d.rank_source = flightrec::RankSource::kGroupMembership;
    d.groups = {{"0", "default_pg", world}};
    for (int64_t seq = 1; seq <= (r == missing ? last - 1 : last); ++seq) {
      flightrec::FrEntry e;
      e.record_id = seq - 1;
      e.pg_name = "0";
      e.pg_desc = "default_pg";
      e.collective_seq_id = seq;
      e.op = r == odd && seq == 2 ? "all_gather" : "all_reduce";
      e.profiling_name = "nccl:" + e.op;
      e.state = seq == last ? "started" : "completed";
      e.input_sizes = e.output_sizes = {{2048}};
      e.time_created_ns = (kT0 + seq * kMin) * 1000;
      d.entries.push_back(e);
    }
    out.push_back(std::move(d));
  }
  return out;
}

TEST_F(CorrelateTest, AbsentRankAndRankMissingInTheDumpsAreOneSuspect) {
  auto job = [&](bool dumps) {
    Synth s(rs());
    s.Job(2, kT0, kT0 + 2 * kHour);
    for (int64_t r = 0; r < 16; ++r) {
      if (r != 13) s.Watchdog(r, kT0 + 60 * kMin + r * kS);
    }
    if (dumps) s.scan.flight_recorder = FrDumps(16, 6, 13);
    return s.Run();
  };
  Diagnosis logs = job(false), both = job(true);
  ASSERT_EQ(Causes(both).size(), 1u);
  const Incident& inc = both.incidents[0];
  EXPECT_EQ(Id(inc.rule), "nccl-watchdog-timeout");
  EXPECT_THAT(inc.suspects, ElementsAre(13));
  EXPECT_EQ(inc.rank, 13);
  EXPECT_EQ(inc.host, "node101");
  EXPECT_GT(inc.confidence, logs.incidents[0].confidence);
  ASSERT_EQ(inc.flight_recorder.size(), 1u);
  EXPECT_EQ(inc.flight_recorder[0].kind, flightrec::FrFinding::Kind::kMissingRank);
  EXPECT_EQ(inc.flight_recorder[0].seq, 6);
  EXPECT_NE(inc.explanation.find("name one suspect: rank 13"), std::string::npos) << inc.explanation;
  EXPECT_THAT(both.flight_recorder_suspects, ElementsAre(13));
  ASSERT_EQ(both.flight_recorder.groups.size(), 1u);
  EXPECT_EQ(both.flight_recorder.groups[0].wavefront, 6);
}

TEST_F(CorrelateTest, DumpsAgreeWithASeenFailureOnTheMissingRanksHost) {
  auto job = [&](bool dumps) {
    Synth s(rs());
    s.Job(2, kT0, kT0 + 2 * kHour);
    s.Xid79(1, 3, kT0 + 30 * kMin);
    for (int64_t r = 0; r < 16; ++r) {
      if (r != 11) s.Watchdog(r, kT0 + 60 * kMin + r * kS);
    }
    if (dumps) s.scan.flight_recorder = FrDumps(16, 6, 11);
    return s.Run();
  };
  Diagnosis logs = job(false), both = job(true);
  ASSERT_EQ(Causes(both).size(), 1u) << "the dumps make no incident of their own";
  const Incident& inc = both.incidents[0];
  EXPECT_EQ(Id(inc.rule), "xid-79-fallen-off-bus");
  EXPECT_EQ(inc.host, "node101");
  EXPECT_EQ(inc.rank, 11);
  EXPECT_EQ(inc.gpu, logs.incidents[0].gpu);
  EXPECT_FALSE(inc.inferred);
  ASSERT_EQ(inc.flight_recorder.size(), 1u);
  EXPECT_EQ(inc.flight_recorder[0].rank, 11);
  EXPECT_GE(inc.confidence, logs.incidents[0].confidence);
  EXPECT_NE(inc.explanation.find("agree"), std::string::npos) << inc.explanation;
}

TEST_F(CorrelateTest, DumpsAloneMakeTheirIncidentsWithTheMissingAndTheUndumpedRank) {
  Synth s(rs());
  s.scan.flight_recorder = FrDumps(16, 6, 13, -1, 4);
  Diagnosis d = s.Run();
  ASSERT_FALSE(d.incidents.empty());
  const Incident& inc = d.incidents[0];
  EXPECT_EQ(Id(inc.rule), "flight-recorder-missing-rank");
  EXPECT_EQ(inc.detector, "flight_recorder");
  EXPECT_THAT(inc.suspects, ElementsAre(13, 4));
  EXPECT_EQ(inc.rank, 13);
  EXPECT_EQ(inc.time_us, kT0 + 5 * kMin);  // its last record
}

TEST_F(CorrelateTest, MismatchNamesTheOddRankAndRanksBelowWhatStoppedTheJob) {
  Synth s(rs());
  s.scan.flight_recorder = FrDumps(8, 6, 5, 2);
  Diagnosis d = s.Run();
  ASSERT_EQ(d.incidents.size(), 2u);
  EXPECT_EQ(Id(d.incidents[0].rule), "flight-recorder-missing-rank");
  const Incident& desync = d.incidents[1];
  EXPECT_EQ(Id(desync.rule), "flight-recorder-collective-mismatch");
  EXPECT_THAT(desync.suspects, ElementsAre(2));
  EXPECT_TRUE(desync.survived);  // every rank went on past #2
  // At the last collective, a mismatch is what stopped the job.
  Synth t(rs());
  t.scan.flight_recorder = FrDumps(8, 2, -1, 2);
  Diagnosis e = t.Run();
  ASSERT_EQ(e.incidents.size(), 1u);
  EXPECT_EQ(Id(e.incidents[0].rule), "flight-recorder-collective-mismatch");
  EXPECT_FALSE(e.incidents[0].survived);
}

// NCCL's WARN is a fatal line only when its thread's return chain follows
// it in its file, within reach: a chain in another file, or far below,
// belongs to some other failure.
TEST_F(CorrelateTest, NcclWarningNeedsItsReturnChainBelowIt) {
  constexpr std::string_view kFallback = "unrecognised-fatal-error";
  auto warn = [&](Synth& s, uint32_t src, std::string thread) -> Evidence& {
    Evidence& ev = s.Add(src, kFallback, "nccl_warning_returned", kNoTime, 0,
                         StrCat(thread, " [0] misc/socket.cc:441 NCCL WARN socketFinalizeAccept: wrong type 4 != 3"));
    ev.fields = {{"thread", std::move(thread)}, {"warning", "socketFinalizeAccept: wrong type 4 != 3"}};
    return ev;
  };
  auto link = [&](Synth& s, uint32_t src, std::string thread) -> Evidence& {
    Evidence& ev = s.Add(src, kFallback, "nccl_return_chain", kNoTime, 0,
                         StrCat(thread, " [0] NCCL INFO misc/socket.cc:561 -> 3"));
    ev.fields = {{"thread", std::move(thread)}, {"returned", "3"}};
    return ev;
  };
  {
    Synth s(rs());
    uint32_t a = s.Source("node100/rank-0.log", "node100", 0);
    warn(s, a, "node100:16899:16961");
    link(s, a, "node100:16899:16961");
    Diagnosis d = s.Run();
    ASSERT_EQ(Causes(d).size(), 1u) << ::testing::PrintToString(Ids(d));
    EXPECT_EQ(Id(Causes(d)[0]->rule), kFallback);
    ASSERT_EQ(Causes(d)[0]->initiating.size(), 1u);
    EXPECT_NE(Causes(d)[0]->initiating[0].text.find("NCCL WARN socketFinalizeAccept"), std::string::npos);
    // The links leave the evidence with the warnings no chain followed.
    EXPECT_EQ(s.scan.evidence.size(), 1u);
  }
  {
    Synth s(rs());
    uint32_t a = s.Source("node100/rank-0.log", "node100", 0);
    uint32_t b = s.Source("node100/rank-0.err", "node100", 0);
    warn(s, a, "node100:16899:16961");
    link(s, b, "node100:16899:16961");
    EXPECT_TRUE(Causes(s.Run()).empty());
  }
  {
    Synth s(rs());
    uint32_t a = s.Source("node100/rank-0.log", "node100", 0);
    warn(s, a, "node100:16899:16961");
    Evidence& far = link(s, a, "node100:16899:16961");
    far.line += 100;
    far.offset += 100 * 200;
    EXPECT_TRUE(Causes(s.Run()).empty());
  }
}

// ---------------------------------------------------------------- the job's stated end

// Two ranks whose logs just stop, rank 5 two minutes before rank 4.
void CutRanks(Synth& s) {
  uint32_t a = s.Source("node006/rank-4.log", "node006", 4, kT0, kT0 + 4 * kMin);
  uint32_t b = s.Source("node006/rank-5.log", "node006", 5, kT0, kT0 + 2 * kMin);
  for (int m = 0; m <= 4; ++m) s.Add(a, "training-progress", "megatron_iteration", kT0 + m * kMin, 4);
  for (int m = 0; m <= 2; ++m) s.Add(b, "training-progress", "megatron_iteration", kT0 + m * kMin, 5);
}

std::vector<const Incident*> Failing(const Diagnosis& d) {
  std::vector<const Incident*> out;
  for (const Incident& i : d.incidents) {
    if (!i.survived && !internal::PracticeFinding(i)) out.push_back(&i);
  }
  return out;
}

TEST_F(CorrelateTest, StatedFailureWithNoIncidentLeadsWithTheRankThatStoppedFirst) {
  {
    Synth s(rs());
    CutRanks(s);
    EXPECT_THAT(Failing(s.Run()), IsEmpty());
  }
  const std::pair<JobState, const char*> cases[] = {
      {JobState::kFailed, "unrecognised-fatal-error"}, {JobState::kOom, "slurm-oom-kill-event"},
      {JobState::kTimeout, "slurm-time-limit"},        {JobState::kNodeFail, "job-interrupted-node-failure"},
      {JobState::kPreempted, "preemption"},            {JobState::kRunning, "training-silent-hang"}};
  for (const auto& [state, rule] : cases) {
    Synth s(rs());
    CutRanks(s);
    CorrelateOptions opts;
    opts.job.state = state;
    Diagnosis d = s.Run(opts);
    ASSERT_FALSE(Failing(d).empty()) << JobStateName(state);
    const Incident& inc = *Failing(d)[0];
    EXPECT_EQ(Id(inc.rule), rule);
    EXPECT_EQ(inc.rank, 5) << inc.explanation;
    EXPECT_TRUE(inc.inferred);
    ASSERT_FALSE(inc.initiating.empty());
    EXPECT_EQ(inc.initiating.back().time_us, kT0 + 2 * kMin);
    EXPECT_NE(inc.explanation.find("The caller states the job"), std::string::npos) << inc.explanation;
    EXPECT_FALSE(inc.missing_facts.empty());
    EXPECT_EQ(d.job.state, state);
  }
}

TEST_F(CorrelateTest, StatedEndNeverOverridesAnEvidenceBackedCause) {
  for (JobState state : {JobState::kOom, JobState::kRunning, JobState::kCompleted}) {
    Synth s(rs());
    uint32_t kern = s.Source("node006/kern.log", "node006");
    uint32_t app = s.Source("node006/rank-4.log", "node006", 4, kT0, kT0 + kHour);
    s.scan.devices.push_back({"node006", 4, 4, "9a000"});
    s.Add(app, "training-progress", "megatron_iteration", kT0, 4);
    Evidence& ev = s.Add(kern, "xid-79-fallen-off-bus", "xid79", kT0 + 10 * kMin, -1,
                         "NVRM: Xid (PCI:0000:9a:00): 79, pid='<unknown>', name=<unknown>, GPU has "
                         "fallen off the bus.");
    ev.gpu = "0000:9a:00.0";
    ev.monotonic_s = 1e6;
    CorrelateOptions opts;
    opts.job.state = state;
    opts.job.has_exit_status = true;
    opts.job.exit_status = state == JobState::kCompleted ? 0 : 137;
    Diagnosis d = s.Run(opts);
    ASSERT_FALSE(d.incidents.empty());
    const Incident& inc = d.incidents[0];
    EXPECT_EQ(Id(inc.rule), "xid-79-fallen-off-bus") << JobStateName(state);
    EXPECT_NE(inc.explanation.find("The caller states the job"), std::string::npos) << inc.explanation;
    // The job finished: what the logs show did not end it.
    EXPECT_EQ(inc.survived, state == JobState::kCompleted);
    EXPECT_EQ(Failing(d).size(), state == JobState::kCompleted ? 0u : 1u);
  }
}

}  // namespace
}  // namespace faultline
