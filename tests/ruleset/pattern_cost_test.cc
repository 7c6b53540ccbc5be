// The cost check's estimate: literal factors read from a pattern's syntax,
// candidate lines counted on a sample, the penalties, and the prefilter that
// stands in for a pattern in the Hyperscan database.
#include "ruleset/pattern_cost.h"

#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <hs/hs.h>
#include <re2/re2.h>

#include "ruleset/ruleset.h"

namespace faultline {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

std::vector<std::vector<std::string>> Factors(std::string_view pattern, bool caseless = false) {
  std::vector<std::vector<std::string>> out;
  for (const LiteralFactor& f : AnalysePattern(pattern, caseless).factors) out.push_back(f.alternatives);
  return out;
}

TEST(PatternCost, FactorsFromSyntax) {
  EXPECT_THAT(Factors("NVRM: Xid \\(PCI:[0-9a-fA-F:.]+\\): 79,"),
              ElementsAre(ElementsAre("NVRM: Xid (PCI:"), ElementsAre("): 79,")));
  // An alternation of literals is one factor; [Ss] and an optional group
  // multiply the alternatives.
  EXPECT_THAT(Factors("[Ss]aved (a )?checkpoint"),
              ElementsAre(UnorderedElementsAre("Saved a checkpoint", "Saved checkpoint", "saved a checkpoint",
                                               "saved checkpoint")));
  EXPECT_THAT(Factors("(CUDA error: [a-z ]+|cudaErrorAssert)"),
              ElementsAre(UnorderedElementsAre("CUDA error: ", "cudaErrorAssert")));
  // A branch without a literal spoils the alternation's factor.
  EXPECT_THAT(Factors("(foo bar|[0-9]+)x"), ElementsAre(ElementsAre("x")));
  // Caseless patterns count in lowercase; a repeated group keeps its factor.
  EXPECT_THAT(Factors("GPU Is LOST", true), ElementsAre(ElementsAre("gpu is lost")));
  EXPECT_THAT(Factors("(?:ab\\.c)+[0-9]*"), ElementsAre(ElementsAre("ab.c")));
  EXPECT_TRUE(Factors("[0-9]+ [a-z]*").size() <= 1);
  // Escapes that stand for one character are no literal text: \p{..}, octal.
  EXPECT_THAT(Factors("\\p{Greek}xyz"), ElementsAre(ElementsAre("xyz")));
  EXPECT_THAT(Factors("\\pLxyz"), ElementsAre(ElementsAre("xyz")));
  EXPECT_THAT(Factors("\\101bcde"), ElementsAre(ElementsAre("bcde")));
  EXPECT_TRUE(AnalysePattern("\\Q.*\\Eabcd", false).has_anchor_or_flags);
}

TEST(PatternCost, LeadingClassAndAnchors) {
  EXPECT_TRUE(AnalysePattern("[A-Za-z_.]+ in DataLoader", false).leading_class);
  EXPECT_TRUE(AnalysePattern("[A-Z][A-Za-z0-9_]*Error: ", false).leading_class);
  EXPECT_TRUE(AnalysePattern("[^\\n]*timed out", false).leading_class);
  // A line start is no literal before the class (perf31).
  EXPECT_TRUE(AnalysePattern("^[A-Z][A-Za-z0-9_]*Error: ", false).leading_class);
  EXPECT_TRUE(AnalysePattern("(?:^|: )[A-Za-z]+Error: ", false).leading_class);
  EXPECT_FALSE(AnalysePattern("\\[Rank [0-9]+\\] step=", false).leading_class);
  EXPECT_FALSE(AnalysePattern("[Ss]aved checkpoint", false).leading_class);
  // ^ is a line's start (the database is compiled multi-line): Hyperscan
  // tries it after every newline. Only \A anchors at a scan's start.
  EXPECT_FALSE(AnalysePattern("^Name:[ \\t]+x", false).anchored);
  EXPECT_FALSE(AnalysePattern("^Name:[ \\t]+x", false).has_anchor_or_flags);
  EXPECT_TRUE(AnalysePattern("^Name:[ \\t]+x", false).beyond_plain);
  EXPECT_TRUE(AnalysePattern("\\AName:[ \\t]+x", false).anchored);
  EXPECT_FALSE(AnalysePattern("(\\AName:|Node:)", false).anchored);
}

// A sample of 10 lines, 3 of which hold "NCCL INFO".
constexpr char kSample[] =
    "a NCCL INFO Channel 00/32\n"
    "b NCCL INFO Channel 01/32\n"
    "c nccl info lower\n"
    "d iteration 10/100 | lm loss: 2.3\n"
    "e plain line\n"
    "f NCCL INFO ring\n"
    "g another plain line\n"
    "h saved checkpoint to /x\n"
    "i Saved checkpoint to /y\n"
    "j the end\n";

TEST(PatternCost, CandidatesOnASample) {
  CostModel model{4, 1000, 50, 100};
  PatternCostEstimator est(kSample, model);
  const double mb = (sizeof kSample - 1) / 1e6;
  CostEstimate e = est.Estimate("NCCL INFO Channel [0-9]+", false);
  EXPECT_DOUBLE_EQ(e.candidates_per_mb, 2 / mb);
  EXPECT_EQ(e.factor, "NCCL INFO Channel ");
  // Caseless: the lowercase line counts too; the rarest factor wins.
  EXPECT_DOUBLE_EQ(est.Estimate("NCCL INFO [^\\n]*ring", true).candidates_per_mb, 1 / mb);
  EXPECT_DOUBLE_EQ(est.Estimate("nccl info", true).candidates_per_mb, 4 / mb);
  EXPECT_DOUBLE_EQ(est.Estimate("[Ss]aved checkpoint", false).candidates_per_mb, 2 / mb);
  EXPECT_DOUBLE_EQ(est.Estimate("Saved checkpoint", false).candidates_per_mb, 1 / mb);
  // No literal of 4+ characters: every line is a candidate, plus the penalty.
  CostEstimate none = est.Estimate("[0-9]+/[0-9]+", false);
  EXPECT_DOUBLE_EQ(none.candidates_per_mb, 10 / mb);
  EXPECT_TRUE(none.leading_class);
  EXPECT_DOUBLE_EQ(none.cost, 10 / mb + 1000 + 50);
  CostEstimate lead = est.Estimate("[a-z]+ another plain", false);
  EXPECT_TRUE(lead.leading_class);
  EXPECT_DOUBLE_EQ(lead.cost, 1 / mb + 50);
  EXPECT_THAT(lead.Explain(model), ::testing::HasSubstr("a leading class"));
}

// Hyperscan searches a literal by its last 8 bytes: a literal in no line of
// the sample costs the lines holding that end, and the prefilter is the
// literal cut where its end is rarest.
TEST(PatternCost, ALiteralCostsTheLinesHoldingItsLastEightBytes) {
  std::string sample;
  for (int i = 0; i < 10; ++i) sample += "x abcdefgh\ny bcdefghi\nz cdefghij\nw plain line\n";
  const double mb = static_cast<double>(sample.size()) / 1e6;
  PatternCostEstimator est(sample, CostModel{4, 1000, 50, 100});
  // Every end of "abcdefghij" of 8 bytes or more is on 10 lines.
  CostEstimate every = est.Estimate("abcdefghij", false);
  EXPECT_DOUBLE_EQ(every.candidates_per_mb, 10 / mb);
  ASSERT_EQ(every.options.size(), 1u);
  EXPECT_EQ(every.options[0].literals, "(?:abcdefghij)");
  EXPECT_EQ(every.options[0].tail_lines, 10u);
  // "qabcdefgh" ends in "abcdefgh" (10 lines); cut to "qabcdefg", on none.
  CostEstimate cut = est.Estimate("qabcdefgh[0-9]", false);
  EXPECT_DOUBLE_EQ(cut.candidates_per_mb, 0);
  EXPECT_EQ(cut.literals, "(?:qabcdefg)");
  ASSERT_EQ(cut.options.size(), 1u);
  EXPECT_EQ(cut.options[0].tail_lines, 0u);
  // A cut never takes a literal the sample holds on more lines than the
  // whole: "mnopqrstu" is on 1 line, its end "nopqrstu" on 11; the cut
  // "mnopqrst" ends on 6, but is on 6 lines, not 1.
  std::string more = "mnopqrstu\n";
  for (int i = 0; i < 10; ++i) more += "b nopqrstu\n";
  for (int i = 0; i < 5; ++i) more += "c mnopqrst\n";
  PatternCostEstimator est2(more, CostModel{4, 1000, 50, 100});
  CostEstimate kept = est2.Estimate("mnopqrstu", false);
  EXPECT_EQ(kept.literals, "(?:mnopqrstu)");
  EXPECT_DOUBLE_EQ(kept.candidates_per_mb, 11 / (static_cast<double>(more.size()) / 1e6));
}

TEST(PatternCost, TheReferenceSampleIsEmbeddedAndStable) {
  std::string_view s = CostReferenceSample();
  ASSERT_GT(s.size(), 100000u);
  EXPECT_EQ(s.back(), '\n');
  PatternCostEstimator a, b;
  for (const char* p : {"NCCL INFO Channel", "[0-9]+ [a-z]+", "Watchdog caught collective operation timeout"}) {
    EXPECT_EQ(a.Estimate(p, false).cost, b.Estimate(p, false).cost) << p;
  }
  EXPECT_GT(a.Estimate("NCCL INFO Channel", false).cost, DefaultCostModel().budget);
  EXPECT_GT(a.Estimate("[0-9]+ [a-z]+", false).cost, DefaultCostModel().budget);
  EXPECT_LT(a.Estimate("Watchdog caught collective operation timeout", false).cost, DefaultCostModel().budget);
}

// The literals that may stand in for a pattern: its rarest factor of 4+
// characters, never for a pattern with an anchor or inline flags.
TEST(PatternCost, LiteralsForAPrefilter) {
  PatternCostEstimator est(kSample);
  // The rarest factor of 4+ characters (the longest of equals), as literals.
  CostEstimate e = est.Estimate("iteration [0-9]+/[0-9]+ \\|[^\\n]* lm loss: ", false);
  EXPECT_EQ(e.literals, "(?:iteration )");
  EXPECT_TRUE(e.re2_confirms);
  EXPECT_EQ(est.Estimate("(Saved|Wrote) [^\\n]*\\.pt", false).literals, "(?:Saved |Wrote )");
  CostEstimate plain = est.Estimate("iteration [0-9]+/[0-9]+ \\| lm loss: ", false);
  EXPECT_FALSE(plain.re2_confirms);
  EXPECT_FALSE(plain.literals.empty());
  EXPECT_TRUE(est.Estimate("\\AName:[^\\n]*node", false).literals.empty());        // anchored
  EXPECT_TRUE(est.Estimate("(a|\\AName:)[^\\n]*node", false).literals.empty());    // an anchored branch
  // A line-start branch is searched by its literal like any other: a
  // progress bar's tail before bash's "Killed" (process-sigkilled) was kept
  // whole and cost the database as much as all its other signals.
  CostEstimate line_start = est.Estimate("(?:[0-9]+% \\|[^\\n]*\\]|^ *[0-9]+/[0-9]+ [^\\n]* - loss: [0-9.]+ *)Killed[ \\t]*$", false);
  EXPECT_EQ(line_start.literals, "(?:Killed)");
  EXPECT_FALSE(line_start.anchored);
  EXPECT_EQ(est.Estimate("^Name:[^\\n]*node", false).literals, "(?:^Name\\x3a)");
  EXPECT_TRUE(est.Estimate("(?i:gpu is lost)[^\\n]*x", false).literals.empty());  // flags
  EXPECT_TRUE(est.Estimate("[^\\n]*ab[0-9]", false).literals.empty());            // short factor
}

// A line's start is part of the literal after it: '^Name:' is searched at
// a line's start (c10d's 'PG Name: 0' is no candidate), '(?:^|: )F ' as
// '^F ' or ': F ' (the line start counting as two characters, so the
// three-byte '^F ' is usable), and no sample line holding 'Name:' elsewhere
// counts.
TEST(PatternCost, ALineStartIsSearchedAtALinesStart) {
  constexpr char kLines[] =
      "Name:   trainer-0\n"
      "x PG Name: 0\n"
      "y PG Name: 1\n"
      "2024-02-27 16:32:33.075782: I a/b.cc:1] ok\n"
      "[I1102 13:00:00.351576 41000 ProcessGroupNCCL.cpp:931] ok\n";
  PatternCostEstimator est(kLines);
  CostEstimate name = est.Estimate("^Name:[ \\t]+[a-z0-9][a-z0-9.-]*[ \\t]*$", false);
  EXPECT_EQ(name.literals, "(?:^Name\\x3a)");
  ASSERT_FALSE(name.options.empty());
  EXPECT_EQ(name.options[0].sample_lines, 1u);  // the first line, with no newline before it
  CostEstimate tf = est.Estimate("(?:^|: )F [A-Za-z0-9_./-]+\\.(?:cc|cpp|cu):[0-9]+\\] [^ \\t\\n]", false);
  EXPECT_EQ(tf.literals, "(?:^F |\\x3a F )");
  EXPECT_EQ(est.Estimate("^^Name:[^\\n]*x", false).literals, "(?:^Name\\x3a)");  // one place
  EXPECT_TRUE(IsLiteralAlternation("(?:^F |\\x3a F )"));
  for (const char* bad : {"(?:^)", "(?:^|a)", "(?:a^b)", "(?:^^a)"}) EXPECT_FALSE(IsLiteralAlternation(bad)) << bad;
}

// The loader takes no other prefilter than the compiler's own form.
TEST(PatternCost, IsLiteralAlternation) {
  EXPECT_TRUE(IsLiteralAlternation("(?:NCCL WARN)"));
  EXPECT_TRUE(IsLiteralAlternation("(?:Saved |Wrote \\x3a\\x5B)"));
  for (const char* bad : {"", "(?:)", "NCCL WARN", "(?:a|)", "(?:a||b)", "(?:a.*b)", "(?:a\\x4)", "(?:a\\d)",
                          "(?:a)b", "(?:a[b])"}) {
    EXPECT_FALSE(IsLiteralAlternation(bad)) << bad;
  }
  PatternCostEstimator est(kSample);
  EXPECT_TRUE(IsLiteralAlternation(est.Estimate("Saved: [^\\n]*\\(x\\)", false).literals));
}

TEST(PatternCost, DefaultRulesetPrefiltersHoldEveryExample) {
  auto rs = Ruleset::LoadDefault();
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  size_t prefiltered = 0;
  for (uint32_t g = 0; g < (*rs)->signal_count(); ++g) {
    const fb::Signal* sig = (*rs)->signal(g).signal;
    if (!sig->prefilter()) continue;
    ++prefiltered;
    RE2::Options o;
    o.set_case_sensitive(!sig->caseless());
    // Hyperscan reads the prefilter's \xNN escapes as bytes: so does RE2 in
    // Latin-1 (in UTF-8 it would read \xe6 as U+00E6, never a byte of 段).
    o.set_encoding(RE2::Options::EncodingLatin1);
    RE2 pre(sig->prefilter()->str(), o);
    ASSERT_TRUE(pre.ok()) << sig->prefilter()->str();
    for (const auto* ex : *sig->examples()) {
      EXPECT_TRUE(RE2::PartialMatch(ex->string_view(), pre)) << sig->id()->str() << ": " << ex->str();
    }
  }
  EXPECT_GT(prefiltered, 0u);
}

// The lines a healthy NCCL_DEBUG=INFO or DEBUG-level run prints on most of
// its lines wake no prefilter whose pattern then fails on them: each such
// stop is a line phase B splits, attributes and confirms for nothing (bench
// README "perf28": on the bench dense log, every c10d options line woke
// three). A prefilter literal that a healthy line holds is a cost on every
// dense log. glog_fatal's TensorFlow 'F <file>.cc:N] ' and kubectl's
// '^Name:' have no rarer literal than '.cc:' and 'Name:' but at a line's
// start, where the prefilter now searches them (bench README "perf31").
TEST(PatternCost, DefaultRulesetPrefiltersSkipTheCommonHealthyLines) {
  auto rs = Ruleset::LoadDefault();
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  const char* kHealthy[] = {
      "[PG ID 0 PG GUID 0(default_pg) Rank 3] ProcessGroupNCCL initialization options: size: 64, global rank: 3, "
      "TIMEOUT(ms): 600000, USE_HIGH_PRIORITY_STREAM: 0, SPLIT_FROM: 0, SPLIT_COLOR: 0, PG Name: 0",
      "[rank3]:[I1102 13:00:00.351576 41000 ProcessGroupNCCL.cpp:931] [PG 0 Rank 3] ProcessGroupNCCL "
      "initialization options: size: 64, global rank: 3, TIMEOUT(ms): 600000, PG Name: 0",
      "I0412 10:01:02.123456 12345 net.cpp:42] Initializing net from parameters: ",
      "node-7:12345:12401 [3] NCCL INFO Channel 05/0 : 3[3] -> 4[4] via P2P/CUMEM/read",
      "node-7:12345:12401 [3] NCCL INFO comm 0x5581c3a0 rank 3 nRanks 64 nNodes 8 localRanks 8 localRank 3 MNNVL 0",
  };
  for (const char* line : kHealthy) {
    for (uint32_t g = 0; g < (*rs)->signal_count(); ++g) {
      const fb::Signal* sig = (*rs)->signal(g).signal;
      if (!sig->prefilter()) continue;
      RE2::Options o;
      o.set_case_sensitive(!sig->caseless());
      o.set_encoding(RE2::Options::EncodingLatin1);
      RE2 pre(sig->prefilter()->str(), o);
      if (!RE2::PartialMatch(line, pre)) continue;
      RE2::Options full_o;
      full_o.set_case_sensitive(!sig->caseless());
      RE2 full(sig->pattern()->str(), full_o);
      EXPECT_TRUE(RE2::PartialMatch(line, full)) << sig->id()->str() << "'s prefilter " << sig->prefilter()->str()
                                                 << " stops on a healthy line it never matches: " << line;
    }
  }
}

}  // namespace
}  // namespace faultline
