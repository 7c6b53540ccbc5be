// LooksLikeKernelLog stops early once three kernel lines in four are out of
// reach; the answer stays the one a look at the whole head gives.
#include "scan/source_framing.h"

#include <gtest/gtest.h>

#include <string>

namespace faultline {
namespace {

const char* kKernel = "Nov  2 13:46:41 node017 kernel: [12345.678901] NVRM: Xid (PCI:0000:3b:00): 79\n";
const char* kOther = "[rank3]: loading shard 17 of 64\n";

std::string Head(const std::string& pattern) {
  std::string s;
  for (char c : pattern) s += c == 'K' ? kKernel : c == 'N' ? kOther : "\n";
  return s;
}

// How a chunk is matched, decided once and handed to ProcessBuffer: JSON
// first, then joined runs, then lines without their escapes, else as it is.
TEST(SourceFraming, HowDerivedNamesTheFirstDerivationThatApplies) {
  using D = SourceFraming::Derivation;
  const std::string plain = "[rank3]: loading shard 17 of 64\n[rank3]: step 5\n";
  const std::string coloured = plain + "\x1b[32m[rank3]: ok\x1b[0m\n";
  SourceFraming f;
  f.Detect(plain);
  EXPECT_EQ(f.HowDerived(plain), D::kAsIs);
  EXPECT_EQ(f.HowDerived(coloured), D::kEscapes);
  const std::string cri = "2026-11-02T13:40:01.123456789Z stdout F a\n2026-11-02T13:40:02.123456789Z stdout F b\n";
  const std::string cri_partial =
      "2026-11-02T13:40:03.123456789Z stdout P \x1b[31mhalf \n2026-11-02T13:40:03.123456789Z stdout F of it\x1b[0m\n";
  SourceFraming c;
  c.Detect(cri);
  ASSERT_TRUE(c.format().cri);
  EXPECT_EQ(c.HowDerived(cri), D::kAsIs);
  EXPECT_EQ(c.HowDerived(cri + cri_partial), D::kRuns);  // runs before escapes
  SourceFraming j;
  j.Detect("{\"message\": \"a\", \"time\": \"2026-11-02T13:40:01Z\"}\n{\"message\": \"b\"}\n");
  ASSERT_TRUE(j.format().json);
  EXPECT_EQ(j.HowDerived(coloured), D::kJson);
}

TEST(LooksLikeKernelLog, ThreeInFourAtTheEdge) {
  EXPECT_TRUE(LooksLikeKernelLog(Head("NNKKKKKK")));   // 6 of 8: just enough
  EXPECT_FALSE(LooksLikeKernelLog(Head("NNNKKKKKK")));  // 6 of 9
  EXPECT_TRUE(LooksLikeKernelLog(Head("N_N_KKKKKK")));  // empty lines do not count
  EXPECT_TRUE(LooksLikeKernelLog(Head("KKKN")));
  EXPECT_FALSE(LooksLikeKernelLog(Head("KK")));
  EXPECT_FALSE(LooksLikeKernelLog(Head("NNNNNNNNNNNNNNNNKKKK")));
  // A cut last line is not judged, and not counted as still to come.
  EXPECT_FALSE(LooksLikeKernelLog(Head("NNKKKKK") + "Nov  2 13:46:41 node017 kernel: [1.0] cut"));
}

}  // namespace
}  // namespace faultline
