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
