// The cross-rank analysis on hand-made dumps: the cases the generated jobs
// do not reach (ring-buffer wrap, duplicate and unplaceable dumps, ops whose
// sizes legitimately differ, ties).
#include <string>
#include <vector>

#include "flightrec/dump.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace faultline::flightrec {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

FrEntry E(int64_t seq, std::string op, std::vector<int64_t> in, std::string state = "completed",
          std::string dtype = "Float") {
  FrEntry e;
  e.record_id = seq;
  e.pg_name = "0";
  e.pg_desc = "default_pg";
  e.collective_seq_id = seq;
  e.op = op;
  e.profiling_name = "nccl:" + op;
  e.state = std::move(state);
  e.input_sizes = {in};
  e.output_sizes = {in};
  e.input_dtypes = {dtype};
  e.output_dtypes = {dtype};
  return e;
}

FrDump D(int64_t rank, int world, std::vector<FrEntry> entries) {
  FrDump d;
  d.source = "dump" + std::to_string(rank);
  d.rank = rank;
  d.rank_source = RankSource::kGroupMembership;
  FrGroup g;
  g.name = "0";
  g.desc = "default_pg";
  for (int r = 0; r < world; ++r) g.ranks.push_back(r);
  d.groups.push_back(g);
  d.entries = std::move(entries);
  d.wrapped = !d.entries.empty() && d.entries.front().record_id > 0;
  return d;
}

TEST(AnalyzeTest, WrappedBufferWithoutTheGroupIsUnknownNotMissing) {
  FrDump a = D(0, 3, {E(1, "all_reduce", {4}), E(2, "all_reduce", {4})});
  FrDump b = D(1, 3, {E(1, "all_reduce", {4}), E(2, "all_reduce", {4})});
  FrDump c = D(2, 3, {});
  FrEntry other = E(90, "all_gather", {4});
  other.pg_name = "7";  // only another group's entries survived the wrap
  c.entries.push_back(other);
  c.wrapped = true;
  FrAnalysis r = AnalyzeFlightRecorder(std::vector<FrDump>{a, b, c});
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_THAT(r.groups[0].unknown, ElementsAre(2));
  EXPECT_THAT(r.groups[0].dumped, ElementsAre(0, 1));
  EXPECT_FALSE(r.groups[0].wavefront.has_value());
  EXPECT_THAT(r.findings, IsEmpty());

  // Without the wrap, the same dump says rank 2 never entered #1.
  c.wrapped = false;
  r = AnalyzeFlightRecorder(std::vector<FrDump>{a, b, c});
  ASSERT_TRUE(r.groups[0].wavefront.has_value());
  EXPECT_EQ(*r.groups[0].wavefront, 1);
  EXPECT_THAT(r.groups[0].missing, ElementsAre(2));
}

TEST(AnalyzeTest, DuplicateAndUnplaceableDumpsAreNoted) {
  FrDump a = D(0, 2, {E(1, "all_reduce", {4})});
  FrDump again = a;
  again.source = "copy-of-0";
  FrDump lost = D(1, 2, {E(1, "all_reduce", {4})});
  lost.rank = -1;
  lost.source = "mystery.bin";
  FrAnalysis r = AnalyzeFlightRecorder(std::vector<FrDump>{a, again, lost});
  ASSERT_EQ(r.notes.size(), 2u);
  EXPECT_THAT(r.notes[0], HasSubstr("copy-of-0: a second dump of rank 0 (first: dump0)"));
  EXPECT_THAT(r.notes[1], HasSubstr("mystery.bin: rank unknown"));
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_THAT(r.groups[0].no_dump, ElementsAre(1));
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].kind, FrFinding::Kind::kNoDump);
  EXPECT_EQ(r.findings[0].rank, 1);
  EXPECT_EQ(r.findings[0].seq, 1);
  EXPECT_EQ(r.findings[0].op, "all_reduce");
}

TEST(AnalyzeTest, SizesThatLegitimatelyDifferAreNotMismatches) {
  // all_to_all splits differ per rank; only scatter's root has an input.
  auto scatter = [](std::vector<int64_t> in) {
    FrEntry e = E(2, "scatter", in);
    e.output_sizes = {{3}};
    return e;
  };
  FrAnalysis r = AnalyzeFlightRecorder(std::vector<FrDump>{
      D(0, 3, {E(1, "all_to_all", {6}), scatter({9}), E(3, "all_reduce", {4})}),
      D(1, 3, {E(1, "all_to_all", {2}), scatter({0}), E(3, "all_reduce", {4})}),
      D(2, 3, {E(1, "all_to_all", {4}), scatter({0}), E(3, "all_reduce", {4})})});
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_THAT(r.groups[0].mismatches, IsEmpty());

  // The same sizes on an all_reduce are a mismatch.
  r = AnalyzeFlightRecorder(std::vector<FrDump>{D(0, 2, {E(1, "all_reduce", {6})}),
                                                D(1, 2, {E(1, "all_reduce", {2})})});
  ASSERT_EQ(r.groups[0].mismatches.size(), 1u);
  EXPECT_EQ(r.groups[0].mismatches[0].field, "input_sizes");
}

TEST(AnalyzeTest, DtypeMismatchAndTieGoesToTheLowestRank) {
  FrAnalysis r = AnalyzeFlightRecorder(std::vector<FrDump>{
      D(0, 2, {E(1, "all_reduce", {4}, "completed", "Float")}),
      D(1, 2, {E(1, "all_reduce", {4}, "completed", "BFloat16")})});
  ASSERT_EQ(r.groups[0].mismatches.size(), 1u);
  const FrMismatch& m = r.groups[0].mismatches[0];
  EXPECT_EQ(m.field, "dtypes");
  EXPECT_EQ(m.expected, "[Float] -> [Float]");
  ASSERT_EQ(m.odd.size(), 1u);
  EXPECT_EQ(m.odd[0].rank, 1);
  EXPECT_EQ(m.odd[0].got, "[BFloat16] -> [BFloat16]");
}

TEST(AnalyzeTest, CoalescedOpsCompareAsOneCollective) {
  std::vector<FrEntry> a = {E(1, "all_reduce", {4}), E(1, "all_reduce", {8})};
  std::vector<FrEntry> b = {E(1, "all_reduce", {4}), E(1, "all_reduce", {16})};
  FrAnalysis r = AnalyzeFlightRecorder(std::vector<FrDump>{D(0, 3, a), D(1, 3, a), D(2, 3, b)});
  ASSERT_EQ(r.groups[0].mismatches.size(), 1u);
  EXPECT_EQ(r.groups[0].mismatches[0].expected, "[[4]] + [[8]]");
  EXPECT_EQ(r.groups[0].mismatches[0].odd[0].rank, 2);
  EXPECT_EQ(r.groups[0].mismatches[0].odd[0].got, "[[4]] + [[16]]");
}

TEST(AnalyzeTest, OnlyCollectivesMoveTheWavefront) {
  FrEntry send = E(2, "send", {4});
  send.is_p2p = true;
  // Rank 1 recorded a p2p op carrying seq 2, but never collective #2.
  FrAnalysis r = AnalyzeFlightRecorder(std::vector<FrDump>{
      D(0, 2, {E(1, "all_reduce", {4}), E(2, "all_reduce", {4}, "started")}),
      D(1, 2, {E(1, "all_reduce", {4}), send})});
  ASSERT_TRUE(r.groups[0].wavefront.has_value());
  EXPECT_EQ(*r.groups[0].wavefront, 2);
  EXPECT_THAT(r.groups[0].missing, ElementsAre(1));
}

TEST(AnalyzeTest, NoDumpsNoGroups) {
  FrAnalysis r = AnalyzeFlightRecorder(std::vector<FrDump>{});
  EXPECT_THAT(r.groups, IsEmpty());
  EXPECT_THAT(r.findings, IsEmpty());
}

}  // namespace
}  // namespace faultline::flightrec
