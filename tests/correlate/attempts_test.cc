// Which attempt of a job a source's path names (correlate/attempts.h): the
// restart-directory forms clusters leave, and names that only look like one.
#include <optional>
#include <string>
#include <vector>

#include "correlate/attempts.h"
#include "gtest/gtest.h"

namespace faultline {
namespace {

int64_t Number(const std::string& path) {
  std::optional<PathAttempt> a = AttemptOfPath(path);
  return a ? a->number : -1;
}

TEST(AttemptOfPath, RestartDirectoryForms) {
  EXPECT_EQ(Number("job/attempt_2/node01/train.log"), 2);
  EXPECT_EQ(Number("job/attempt-3/train.log"), 3);
  EXPECT_EQ(Number("job/Attempt.4/train.log"), 4);
  EXPECT_EQ(Number("logs/restart-1/rank-0.log"), 1);
  EXPECT_EQ(Number("logs/restart0/rank-0.log"), 0);
  EXPECT_EQ(Number("logs/restarts_2/rank-0.log"), 2);
  EXPECT_EQ(Number("logs/retry_7/out.txt"), 7);
  EXPECT_EQ(Number("logs/requeue-1/slurm.out"), 1);
  EXPECT_EQ(Number("runs/run_attempt2/train.log"), 2);
  EXPECT_EQ(Number("runs/job_88231.r2/train.log"), 2);
  EXPECT_EQ(Number("runs/job-88231-r3/train.log"), 3);
  EXPECT_EQ(Number("train_retry_1.log"), 1);
}

TEST(AttemptOfPath, DeepestComponentWins) {
  std::optional<PathAttempt> a = AttemptOfPath("sweep/retry_1/attempt_3/node01/train.log");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->number, 3);
  EXPECT_EQ(a->label, "attempt_3");
}

TEST(AttemptOfPath, NamesThatOnlyLookLikeOne) {
  EXPECT_EQ(Number("node01/train.log"), -1);
  EXPECT_EQ(Number("rulesets/ops/restart-port-in-use.json"), -1);  // no number
  EXPECT_EQ(Number("logs/attempt_2x/train.log"), -1);              // a letter after it
  EXPECT_EQ(Number("logs/noretry3/train.log"), -1);                // inside a word
  EXPECT_EQ(Number("logs/attempts-log/train.log"), -1);
  EXPECT_EQ(Number("jobs/job_88231/train.log"), -1);               // a job id alone
  EXPECT_EQ(Number("logs/restart_1234567890123/train.log"), -1);   // no restart count
}

TEST(AttemptOfPath, PriorBundleSourcesAreTheirBundles) {
  const std::string name = PriorBundleSourceName(2, "attempt_1/train.log");
  EXPECT_EQ(name, "<prior bundle 2>/attempt_1/train.log");
  EXPECT_FALSE(AttemptOfPath(name));
}

TEST(AttemptOfPath, AnyCase) {
  EXPECT_EQ(Number("logs/RESTART-1/rank-0.log"), 1);
  EXPECT_EQ(Number("logs/ReTrY_7/out.txt"), 7);
  EXPECT_EQ(Number("logs/RESTARTS_2/out.txt"), 2);
  EXPECT_EQ(Number("runs/JOB_88231.R2/train.log"), 2);
  EXPECT_EQ(Number("runs/JOB_88231.X2/train.log"), -1);
  EXPECT_EQ(Number("logs/NoRetry3/train.log"), -1);
}

// SourceAttempts answers as AttemptOfPath, path by path, whatever order the
// paths come in: a directory's answer is kept only for the paths in it.
TEST(SourceAttempts, AnswersAsAttemptOfPath) {
  const std::vector<std::string> paths = {
      "job/attempt_2/node01/train.log",
      "job/attempt_2/node01/retry_5.log",  // the file's own name is deeper
      "job/attempt_2/node01/dmesg.log",
      "job/attempt_2/node02/train.log",
      "job/node01/train.log",  // a sibling directory with no attempt
      "job/attempt_2/node01/train.log",  // back to an earlier directory
      "job/attempt_2",
      "job/attempt_2/",
      "job/attempt_2x/node01/train.log",
      "attempt_3/train.log",
      "train_retry_1.log",
      "train.log",
      "/abs/restart-4/x.log",
      "/x.log",
      "",
      "/",
      "a//b/requeue-1//c.log",
      "runs/job_88231.r2/train.log",
      PriorBundleSourceName(1, "attempt_1/train.log"),
      "attempt_1/train.log",
  };
  internal::SourceAttempts of;
  for (const std::string& p : paths) {
    std::optional<PathAttempt> want = AttemptOfPath(p);
    std::optional<PathAttempt> got = of.Of(p);
    ASSERT_EQ(got.has_value(), want.has_value()) << p;
    if (!want) continue;
    EXPECT_EQ(got->number, want->number) << p;
    EXPECT_EQ(got->label, want->label) << p;
  }
}

}  // namespace
}  // namespace faultline
