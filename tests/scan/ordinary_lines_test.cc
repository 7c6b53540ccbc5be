// Signals must not fire on ordinary lines. bench/gen_logs.py writes ~20 MB of
// a healthy 64-rank job (NCCL INFO chatter, Python logging, Megatron
// iteration lines, HF metric dicts, benign kernel and launcher lines) with
// no injected failure; the default ruleset's initiating, symptom and context
// signals must find nothing in it. Progress and metric signals are meant to
// read those lines and are not checked; neither are the NCCL init context
// signals, which exist to learn the rank/host/bus map from the init lines
// every healthy job prints (bounded here to one per 1000 lines), nor the
// context signals that read a link's return (a boot's "ib0: Link up"), which
// gate an earlier link-down as recovered (same bound).
//
// Skipped when python3 is not available.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "scan/scan.h"
#include "scan_test_util.h"

namespace faultline::scantest {
namespace {

// Context signals that read ordinary lines by design (topology, clock sync,
// placement: a launcher's rank lists, a task's SLURM_* environment).
const std::set<std::string> kTopologyRules = {"nccl-init", "job-placement"};
// Rules whose context signals read a state that healthy nodes print (a
// link coming up), as the outcome of an earlier failure line.
const std::set<std::string> kOutcomeRules = {"ib-port-down"};

TEST(OrdinaryLines, NoFailureSignalFiresOnAHealthyJobLog) {
  if (std::system("python3 -c 'import sys' > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "python3 is not available";
  }
  TempDir dir;
  std::string out = dir / "job";
  std::string cmd = std::string("python3 ") + FL_SOURCE_DIR + "/bench/gen_logs.py --out '" + out +
                    "' --size 20M --seed 3 --no-failures --jobs 1 --manifest '" + dir / "m.json" +
                    "' 2> '" + dir / "gen.err" + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd << "\n" << ReadFile(dir / "gen.err");
  auto rs = DefaultRules();
  ScanOptions o;
  o.threads = 2;
  o.keep_first = 20;
  o.keep_last = 0;
  Scanner s(rs, o);
  ASSERT_TRUE(s.ScanPaths({out}).ok());
  ScanResult r = s.Finish();
  ASSERT_TRUE(r.errors.empty()) << r.errors[0].message;
  ASSERT_GT(r.bytes, 19u << 20);

  std::map<uint32_t, std::vector<const Evidence*>> samples;
  for (const Evidence& e : r.evidence) {
    if (samples[e.signal].size() < 3) samples[e.signal].push_back(&e);
  }
  std::string report;
  size_t bad = 0;
  for (const auto& [sig, hits] : r.signal_hits) {
    const SignalInfo& si = rs->signal(sig);
    if (si.role == SignalRole::Progress || si.role == SignalRole::Metric) continue;
    std::string rule = si.rule->id()->str();
    if (si.role == SignalRole::Context && (kTopologyRules.count(rule) || kOutcomeRules.count(rule)) &&
        hits * 1000 <= r.lines) {
      continue;
    }
    ++bad;
    report += "\n  " + rule + "/" + si.signal->id()->str() + " (" + RoleName(si.role) + "): " +
              std::to_string(hits) + " hits, e.g.";
    for (const Evidence* e : samples[sig]) {
      std::string src = r.sources[e->source].name.substr(out.size() + 1);
      report += "\n      " + src + ":" + std::to_string(e->line) + ": " + e->text.substr(0, 200);
    }
  }
  EXPECT_EQ(bad, 0u) << "signals of the default ruleset fire on ordinary lines of a healthy job "
                        "(bench/gen_logs.py --no-failures), in "
                     << r.lines << " lines:" << report;
}

}  // namespace
}  // namespace faultline::scantest
