// A matched line none of whose signals holds makes no evidence, but it is a
// step of phase B's chain all the same: the next matched line whose context
// reaches back to it and holds no stamp inherits the time in force after it
// (line_evidence.cc). Written for a phase B that skips such lines and takes
// their steps only when a later line reads them (bench/README.md, perf30: it
// failed with the replay left out, and passes on the tree as it is).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scan_test_util.h"

namespace faultline {
namespace {

std::string Filler(size_t bytes) {
  std::string s;
  while (s.size() < bytes) s += "filler line without a host or a stamp\n";
  return s;
}

TEST(LazyChain, ALineThatConfirmsNothingCarriesItsTime) {
  // A: a stamped Xid. D: a stamped c10d glog line holding the database
  // literal `.cpp:` of glog_fatal, whose confirm fails (no evidence). L: an
  // Xid with no stamp, whose context reaches back to D's end (not to D's
  // line) and holds no stamp: its time is D's, through D's step alone (A's
  // is over kInheritWindow before it).
  const std::string a = "[Wed Jul 31 23:14:18 2024] NVRM: Xid (PCI:0000:00:05): 79, pid=1045, GPU has fallen off the bus.\n";
  const std::string d =
      "[rank0]:[I0801 10:00:00.000000 41000 TCPStore.cpp:290] [c10d - debug] The server has started on port = 29500.\n";
  const std::string l = "NVRM: Xid (PCI:0000:00:05): 79, pid=1045, GPU has fallen off the bus.\n";
  const std::string head = a + Filler(7000);
  const std::string log = head + d + Filler(5000) + l + Filler(200);
  const uint64_t d_offset = head.size();
  for (unsigned threads : {1u, 2u}) {
    scantest::TempDir dir;
    const std::string path = dir / "train.log";
    scantest::WriteFile(path, log);
    auto rs = scantest::DefaultRules();
    ScanResult r = scantest::ScanFiles(rs, {path}, scantest::BigCaps(threads));
    for (const Evidence& e : r.evidence) EXPECT_NE(e.offset, d_offset) << "D made evidence: " << e.text;
    std::vector<const Evidence*> xid = scantest::OfRule(r, *rs, "xid-79-fallen-off-bus");
    ASSERT_EQ(xid.size(), 2u);
    // August 1st, 10:00 UTC, of A's year (D's stamp has none).
    EXPECT_EQ(xid[1]->time_us, int64_t{1722506400} * 1000000);
    EXPECT_EQ(xid[1]->time_source, TimeSource::kInherited);
  }
}

}  // namespace
}  // namespace faultline
