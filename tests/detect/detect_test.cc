// The detectors' maths on synthetic per-rank summaries built the way the
// scanner builds them (AddStepTime, AddThroughput, AddAlignedStep).
#include "detect/detect.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "evidence/merge.h"

namespace faultline {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int64_t kT0 = 1'772'355'600'000'000;  // 2026-03-01 09:00 UTC
constexpr int64_t kSec = 1'000'000;

// cost(rank, step) -> seconds; each rank logs steps 1..steps, 8 per host.
template <typename Cost>
std::map<int64_t, RankSummary> Job(int64_t nranks, int64_t steps, Cost cost, bool rate = false) {
  std::map<int64_t, RankSummary> ranks;
  for (int64_t r = 0; r < nranks; ++r) {
    RankSummary& s = ranks[r];
    s.rank = r;
    s.host = "gpu-" + std::to_string(r / 8);
    s.first_progress_us = kT0;
    for (int64_t k = 1; k <= steps; ++k) {
      double c = cost(r, k);
      uint64_t key = StepSampleKey(static_cast<uint64_t>(r * 100000 + k), k, c);
      if (rate) {
        AddThroughput(s, 1000.0 / c, key);
      } else {
        AddStepTime(s, c, key);
      }
      AddAlignedStep(s, k, rate ? c / 1000.0 : c);
      s.last_progress_us = kT0 + k * kSec;
      s.last_step = k;
    }
  }
  return ranks;
}

TEST(PausePeriodTest, FindsTheCommonPeriod) {
  std::vector<int64_t> steps;
  std::vector<bool> paused;
  for (int64_t s = 1; s <= 120; ++s) {
    steps.push_back(s);
    paused.push_back(s % 15 == 4);
  }
  EXPECT_EQ(PausePeriod(steps, paused), 15);
  // A stray pause breaks the common factor: no period is claimed.
  paused[6] = true;
  EXPECT_EQ(PausePeriod(steps, paused), 0);
  // Two pauses are no pattern.
  std::vector<bool> two(steps.size(), false);
  two[3] = two[18] = true;
  EXPECT_EQ(PausePeriod(steps, two), 0);
}

TEST(PausePeriodTest, MostStepsOfTheRemainderMustPause) {
  // Pauses every 40 steps on a sample of every 10th step.
  std::vector<int64_t> steps;
  std::vector<bool> paused;
  for (int64_t s = 10; s <= 130; s += 10) {
    steps.push_back(s);
    paused.push_back(s == 10 || s == 50 || s == 90 || s == 130);
  }
  EXPECT_EQ(PausePeriod(steps, paused), 40);
  paused[4] = false;  // 50 no longer pauses: gcd 40 still, 3 of its 4 steps paused
  EXPECT_EQ(PausePeriod(steps, paused), 40);
  paused[8] = false;  // 90 neither: 2 of 4 is no period
  EXPECT_EQ(PausePeriod(steps, paused), 0);
}

TEST(StragglerTest, OneSlowDeviceWithFigures) {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(1.0, 0.03);
  auto ranks = Job(16, 60, [&](int64_t r, int64_t) { return 2.0 * noise(rng) * (r == 5 ? 1.2 : 1.0); });
  auto f = DetectStragglers(ranks);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rank, 5);
  EXPECT_EQ(f[0].pattern, "slow_device");
  EXPECT_THAT(f[0].detail, HasSubstr("for the other 15 ranks"));
  EXPECT_THAT(f[0].detail, HasSubstr("steps 1-60"));
  EXPECT_THAT(f[0].detail, HasSubstr("of 60 steps all ranks logged"));
}

TEST(StragglerTest, SlowHostNamesAllItsRanks) {
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(1.0, 0.02);
  auto ranks = Job(64, 40, [&](int64_t r, int64_t) { return noise(rng) * (r / 8 == 2 ? 1.3 : 1.0); });
  auto f = DetectStragglers(ranks);
  ASSERT_EQ(f.size(), 8u);
  EXPECT_EQ(f[0].host, "gpu-2");
  EXPECT_THAT(f[0].detail, HasSubstr("all 8 ranks of host gpu-2 are this slow"));
}

TEST(StragglerTest, ThroughputOnlyLines) {
  std::mt19937 rng(5);
  std::normal_distribution<double> noise(1.0, 0.03);
  auto ranks = Job(16, 40, [&](int64_t r, int64_t) { return noise(rng) * (r == 11 ? 1.25 : 1.0); }, true);
  auto f = DetectStragglers(ranks);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rank, 11);
  EXPECT_THAT(f[0].detail, HasSubstr("median throughput"));
}

TEST(StragglerTest, PeriodicPausesOneRankAtATime) {
  std::mt19937 rng(11);
  std::normal_distribution<double> noise(1.0, 0.02);
  auto ranks = Job(32, 80, [&](int64_t r, int64_t s) { return noise(rng) * (s % 12 == r % 12 ? 1.8 : 1.0); });
  auto f = DetectStragglers(ranks);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].pattern, "periodic");
  EXPECT_THAT(f[0].detail, HasSubstr("pause every 12 steps"));
}

TEST(StragglerTest, ImbalanceThatMoves) {
  std::mt19937 rng(13);
  std::normal_distribution<double> tokens(0, 0.2);
  auto ranks = Job(64, 60, [&](int64_t, int64_t) { return std::exp(tokens(rng)); });
  auto f = DetectStragglers(ranks);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].pattern, "moving");
  EXPECT_EQ(f[0].rank, -1);
  EXPECT_THAT(f[0].detail, HasSubstr("the slowest rank changes from step to step"));
}

TEST(StragglerTest, NoFindingOnNoiseAt1024Ranks) {
  for (double sigma : {0.01, 0.03, 0.05}) {
    std::mt19937 rng(static_cast<unsigned>(sigma * 1000));
    std::normal_distribution<double> noise(1.0, sigma);
    auto ranks = Job(1024, 50, [&](int64_t, int64_t) { return 1.5 * noise(rng); });
    EXPECT_THAT(DetectStragglers(ranks), IsEmpty()) << "sigma " << sigma;
  }
}

TEST(StragglerTest, SlowRankAt1024RanksAmongImbalance) {
  // 20% slower at every step under a 10% per-step spread.
  std::mt19937 rng(17);
  std::normal_distribution<double> tokens(0, 0.1);
  auto ranks = Job(1024, 60, [&](int64_t r, int64_t) { return std::exp(tokens(rng)) * (r == 700 ? 1.2 : 1.0); });
  auto f = DetectStragglers(ranks);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].rank, 700);
  EXPECT_EQ(f[0].pattern, "slow_device");
}

TEST(HangTest, LowestStepFirstWhateverTheClock) {
  std::map<int64_t, RankSummary> ranks;
  for (int64_t r = 0; r < 16; ++r) {
    RankSummary& s = ranks[r];
    s.rank = r;
    s.step_time_reservoir = {1.0, 1.0};
    s.last_step = r == 9 ? 99 : 100;
    // Rank 9's host clock runs a minute ahead: its stop looks latest.
    s.last_progress_us = kT0 + (r == 9 ? 60 : 0) * kSec + r * 1000;
  }
  auto f = DetectHangs(ranks, kT0 + 3600 * kSec);
  ASSERT_EQ(f.size(), 16u);
  EXPECT_EQ(f[0].rank, 9);
  EXPECT_THAT(f[0].detail, HasSubstr("the others reached step 100"));
  EXPECT_TRUE(f[0].missing.empty());
}

TEST(HangTest, SameStepEverywhereSaysWhatCannotBeTold) {
  std::map<int64_t, RankSummary> ranks;
  for (int64_t r = 0; r < 4; ++r) {
    ranks[r].rank = r;
    ranks[r].last_step = 50;
    ranks[r].last_progress_us = kT0 + r * kSec;
  }
  auto f = DetectHangs(ranks, kT0 + 3600 * kSec);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0].rank, 0);
  EXPECT_THAT(f[0].missing, HasSubstr("cannot tell which one blocked"));
}

TEST(HangTest, OneLoggingRankOfManySaysWhatCannotBeKnown) {
  std::map<int64_t, RankSummary> ranks;
  ranks[0].rank = 0;
  ranks[0].last_step = 500;
  ranks[0].last_progress_us = kT0;
  auto f = DetectHangs(ranks, kT0 + 3600 * kSec, DetectOptions(), 1024);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].missing, HasSubstr("Only rank 0 of 1024 logs step lines"));
  EXPECT_THAT(DetectHangs(ranks, kT0 + 3600 * kSec)[0].missing, IsEmpty());
}

// tqdm bars with no stamp: the rank left a step behind all the others is
// the one they waited for, and the finding says its time cannot be known;
// ranks spread over steps (a job cut mid-step) or all at one step name none.
TEST(HangTest, UntimedStepLinesNameTheRankLeftBehind) {
  auto job = [](std::function<int64_t(int64_t)> step) {
    std::map<int64_t, RankSummary> ranks;
    for (int64_t r = 0; r < 16; ++r) {
      ranks[r].rank = r;
      ranks[r].progress_lines = 20;
      ranks[r].last_step = step(r);
    }
    return ranks;
  };
  auto f = DetectHangs(job([](int64_t r) { return r == 12 ? 35 : 36; }), kT0 + 3600 * kSec);
  ASSERT_EQ(f.size(), 16u);
  EXPECT_EQ(f[0].rank, 12);
  EXPECT_EQ(f[0].time_us, kNoTime);
  EXPECT_THAT(f[0].detail, HasSubstr("15 of the 16 ranks that log steps reached step 36"));
  EXPECT_THAT(f[0].missing, HasSubstr("no time stamps"));
  EXPECT_THAT(DetectHangs(job([](int64_t r) { return 36 - r % 2; }), kT0 + 3600 * kSec), IsEmpty());
  EXPECT_THAT(DetectHangs(job([](int64_t) { return 36; }), kT0 + 3600 * kSec), IsEmpty());
  // Nor do they need the logs' end: an archive of untimed step lines and
  // an untimed launcher abort has none.
  auto untimed_end = DetectHangs(job([](int64_t r) { return r == 12 ? 35 : 36; }), kNoTime);
  ASSERT_FALSE(untimed_end.empty());
  EXPECT_EQ(untimed_end[0].rank, 12);
}

TEST(AlignedStepsTest, SameSampleHoweverSplitAndMerged) {
  RankSummary whole, a, b;
  for (int64_t s = 1; s <= 3000; ++s) {
    double c = 1.0 + static_cast<double>(s % 7) / 10;
    AddAlignedStep(whole, s, c);
    AddAlignedStep(s % 3 ? a : b, s, c);
  }
  EXPECT_EQ(whole.aligned_steps.size(), kAlignedSteps);
  MergeFrom(a, b);
  EXPECT_EQ(AlignedBySteps(a), AlignedBySteps(whole));
  // Every rank keeps the same steps: the key depends on the step alone.
  RankSummary other;
  for (int64_t s = 1; s <= 3000; ++s) AddAlignedStep(other, s, 5.0);
  auto o = AlignedBySteps(other), w = AlignedBySteps(whole);
  ASSERT_EQ(o.size(), w.size());
  for (size_t i = 0; i < o.size(); ++i) EXPECT_EQ(o[i].first, w[i].first);
  // A step logged twice keeps its larger cost, before and after the sample fills.
  RankSummary dup;
  AddAlignedStep(dup, 4, 1.0);
  AddAlignedStep(dup, 4, 3.0);
  AddAlignedStep(dup, 4, 2.0);
  ASSERT_EQ(AlignedBySteps(dup).size(), 1u);
  EXPECT_EQ(AlignedBySteps(dup)[0].second, 3.0);
  RankSummary full = whole;
  int64_t kept = w.front().first;
  AddAlignedStep(full, kept, 99.0);
  EXPECT_EQ(AlignedBySteps(full).size(), w.size());
  EXPECT_EQ(AlignedBySteps(full).front().second, 99.0);
}

}  // namespace
}  // namespace faultline
