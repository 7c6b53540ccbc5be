// What a block states (torchrun's ChildFailedError entry: host, then rank,
// then the exit code and traceback of that rank) reaches the lines after it
// when the file is scanned as byte ranges cut inside the block, as in a
// scan of the whole file: each range re-reads the lines before it.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "evidence/bundle.h"
#include "scan_test_util.h"

namespace faultline {
namespace {

using scantest::BigCaps;
using scantest::Diff;
using scantest::Keys;

// Ordinary lines, then a failure summary whose entry spans `at` (the
// offsets of its lines).
std::string FailureSummary(std::vector<size_t>* at) {
  std::string log;
  for (int i = 0; i < 3000; ++i) {
    log += "[2025-03-11 09:4" + std::to_string(i % 10) + ":00,000] INFO train.py:88] step " + std::to_string(i) +
           " done\n";
  }
  log += "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n";
  log += "============================================================\n";
  log += "train.py FAILED\n";
  log += "------------------------------------------------------------\n";
  log += "Root Cause (first observed failure):\n";
  log += "[0]:\n";
  log += "  time      : 2025-03-11_09:51:08\n";
  for (const char* line : {"  host      : node001\n", "  rank      : 13 (local_rank: 5)\n",
                           "  exitcode  : -9 (pid: 14750)\n", "  error_file: <N/A>\n",
                           "  traceback : Signal 9 (SIGKILL) received by PID 14750\n"}) {
    at->push_back(log.size());
    log += line;
  }
  log += "============================================================\n";
  return log;
}

TEST(CarryAcrossRanges, FailureEntryCutInsideItsBlock) {
  scantest::TempDir dir;
  std::vector<size_t> at;
  const std::string log = FailureSummary(&at);
  const std::string path = dir / "launcher.log";
  scantest::WriteFile(path, log);
  auto rs = scantest::DefaultRules();

  ScanResult whole = scantest::ScanFiles(rs, {path}, BigCaps(1));
  const Evidence* exit = nullptr;
  for (const Evidence& e : whole.evidence) {
    if (e.offset == at[2]) exit = &e;
  }
  ASSERT_NE(exit, nullptr) << "the exitcode line of the entry is evidence";
  EXPECT_EQ(exit->rank, 13);
  EXPECT_EQ(exit->host, "node001");

  auto want = Keys(whole);
  // A cut right after each line of the entry, and one inside a line.
  for (size_t k = 1; k < at.size(); ++k) {
    for (uint64_t cut : {uint64_t{at[k]}, uint64_t{at[k] + 3}}) {
      EXPECT_EQ(Diff(want, Keys(scantest::ScanRangesMerged(rs, path, {cut}, false))), "") << "cut at " << cut;
      EXPECT_EQ(Diff(want, Keys(scantest::ScanRangesMerged(rs, path, {cut}, true))), "")
          << "cut at " << cut << " through bundles";
    }
  }
  // Many small ranges, each of a few lines: the block's head is ranges back.
  std::vector<uint64_t> cuts;
  for (size_t k = 0; k < at.size(); ++k) cuts.push_back(at[k] + 1);
  EXPECT_EQ(Diff(want, Keys(scantest::ScanRangesMerged(rs, path, cuts, true))), "") << "a range per line";
}

// `kubectl describe pods` prints a pod's "Name:" lines before its "Node:":
// a range starting between them still places the pod on its node.
TEST(CarryAcrossRanges, DescribeNameThenNodeCut) {
  scantest::TempDir dir;
  std::string log;
  std::vector<size_t> node_at;
  for (int i = 0; i < 40; ++i) {
    log += "Name:             trainer-worker-" + std::to_string(i) + "\n";
    log += "Namespace:        training\n";
    log += "Priority:         0\n";
    node_at.push_back(log.size());
    log += "Node:             gpu-node-" + std::to_string(100 + i) + "/10.0.0." + std::to_string(10 + i) + "\n";
    // One widest line, as a real listing has (four equal widest lines, each
    // followed by an unstamped one, read as a hard-wrapped file).
    if (i == 0) log += "Labels:           app=trainer,training.kubeflow.org/replica-type=worker,job-name=llama3\n";
    log += "Status:           Running\n\n";
  }
  const std::string path = dir / "describe-pods.txt";
  scantest::WriteFile(path, log);
  auto rs = scantest::DefaultRules();
  auto aliases = [](const ScanResult& r) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const HostAlias& a : r.host_aliases) out.emplace_back(a.alias, a.host);
    std::sort(out.begin(), out.end());
    return out;
  };
  ScanResult whole = scantest::ScanFiles(rs, {path}, BigCaps(1));
  const auto want = aliases(whole);
  ASSERT_EQ(want.size(), 40u) << whole.evidence.size() << " records";
  EXPECT_EQ(want[0], (std::pair<std::string, std::string>{"trainer-worker-0", "gpu-node-100"}));
  std::vector<uint64_t> cuts(node_at.begin() + 1, node_at.end());  // every section cut before its Node: line
  EXPECT_EQ(aliases(scantest::ScanRangesMerged(rs, path, cuts, true)), want);
}

}  // namespace
}  // namespace faultline
