#include "ruleset/pattern_check.h"

#include <gtest/gtest.h>

namespace faultline {
namespace {

TEST(PatternCheck, SingleLinePatternsPass) {
  for (const char* ok : {"NVRM: Xid \\(PCI:[0-9a-fA-F:.]+\\): 79,", "Watchdog caught[^\\n]*timeout",
                         "a[ \\t]+b", "[^\"\\n]+", "[^\\s]+x", "x{2,8}", "\\S+ \\d+ \\w+", "(?i)error"}) {
    EXPECT_TRUE(CheckPatternSingleLine(ok, 32).ok()) << ok;
  }
}

TEST(PatternCheck, CrossLineConstructsFail) {
  for (const char* bad : {"a\\sb", "a\\nb", "a[^x]b", "(?s)a.b", "a\\Wb", "a\\Db", "a[\\s]b", "a\\x0ab",
                          "a\\Rb", "a\\x{0a}b", "a[\\n]b"}) {
    EXPECT_FALSE(CheckPatternSingleLine(bad, 32).ok()) << bad;
  }
}

TEST(PatternCheck, BoundedRepeats) {
  EXPECT_TRUE(CheckPatternSingleLine("a{2,32}", 32).ok());
  EXPECT_FALSE(CheckPatternSingleLine("a{2,33}", 32).ok());
  EXPECT_FALSE(CheckPatternSingleLine("[a-z]{100}", 32).ok());
  EXPECT_TRUE(CheckPatternSingleLine("a{3,}", 32).ok());
}

TEST(PatternCheck, LongestLiteral) {
  EXPECT_EQ(LongestLiteral("Watchdog caught"), 15u);
  EXPECT_EQ(LongestLiteral("\\d+\\.\\d+"), 1u);
  EXPECT_GE(LongestLiteral("NVRM: Xid \\(PCI"), 10u);
  EXPECT_LT(LongestLiteral("[a-z]+ [0-9]+"), 4u);
}

// FNV-1a 64's published offset basis and test vectors: the constant was
// once a digit short (1469598103934665603).
TEST(PatternCheck, Fnv1a64IsTheRealFnv1a) {
  EXPECT_EQ(kFnvOffset, 14695981039346656037ull);
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ull);
}

}  // namespace
}  // namespace faultline
