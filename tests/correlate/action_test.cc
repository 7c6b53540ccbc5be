// The decide stage (correlate/action.h) on Diagnosis and Incident values
// built by hand: each action kind from the default ruleset's declarations,
// recurrence across attempts, and the retry policy with its window.
#include "correlate/action.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ruleset/ruleset.h"

namespace faultline {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int64_t kHour = 3'600'000'000LL;
constexpr int64_t kT0 = 1'793'081'600LL * 1'000'000;

const Ruleset& Rules() {
  static const std::shared_ptr<const Ruleset> rs = *Ruleset::LoadDefault();
  return *rs;
}

Incident Make(const char* rule, const char* host = "node017", const char* gpu = "") {
  Incident inc;
  int r = Rules().FindRule(rule);
  EXPECT_GE(r, 0) << rule;
  inc.rule = static_cast<uint32_t>(r);
  inc.host = host;
  inc.gpu = gpu;
  inc.rank = 3;
  inc.time_us = kT0;
  return inc;
}

Action Decide(const Incident& inc, const Diagnosis& d = {}, const RetryPolicy& p = {}) {
  return DecideAction(Rules(), d, inc, p);
}

// A job that ran `n` earlier attempts, each ended by `rule` on `host`, an
// hour apart before kT0, and the incident in attempt n.
Diagnosis Attempts(int n, const char* rule, const char* host) {
  Diagnosis d;
  for (int i = 0; i <= n; ++i) {
    Attempt a;
    a.index = static_cast<uint32_t>(i);
    a.label = "attempt_" + std::to_string(i + 1);
    a.start_us = kT0 - (n - i + 1) * kHour;
    a.end_us = kT0 - (n - i) * kHour + (i == n ? 0 : -1);
    if (i < n) {
      a.primary_rule = Rules().FindRule(rule);
      a.host = host;
    }
    d.attempts.push_back(a);
  }
  return d;
}

TEST(Action, HardwareFaultDrainsItsHostWithItsGpu) {
  Action a = Decide(Make("xid-79-fallen-off-bus", "node017", "0000:3b:00.0"));
  EXPECT_EQ(a.kind, ActionKind::kRestartExcluding);
  EXPECT_THAT(a.exclude_hosts, ElementsAre("node017"));
  EXPECT_THAT(a.exclude_gpus, ElementsAre("0000:3b:00.0"));
  EXPECT_EQ(a.set_by, "xid-79-fallen-off-bus");
  EXPECT_THAT(a.reason, HasSubstr("xid-79-fallen-off-bus on node017 (rank 3, GPU 0000:3b:00.0)"));
}

TEST(Action, GpuFaultDrainsTheGpuFromEvidenceOrItsHost) {
  Incident inc = Make("xid-ecc-uncorrectable", "node017", "2");  // a device index
  Evidence ev;
  ev.fields.emplace_back("pci", "0000:9a:00.0");
  inc.initiating.push_back(ev);
  Action a = Decide(inc);
  EXPECT_EQ(a.kind, ActionKind::kRestartExcluding);
  EXPECT_THAT(a.exclude_hosts, IsEmpty());
  EXPECT_THAT(a.exclude_gpus, ElementsAre("0000:9a:00.0"));
  // Only the index: host:index.
  a = Decide(Make("xid-ecc-uncorrectable", "node017", "2"));
  EXPECT_THAT(a.exclude_gpus, ElementsAre("node017:2"));
  // No GPU at all: the host goes.
  a = Decide(Make("xid-ecc-uncorrectable", "node017"));
  EXPECT_THAT(a.exclude_hosts, ElementsAre("node017"));
}

TEST(Action, NoHostToDrainIsUnknownWithTheMissingFact) {
  Action a = Decide(Make("xid-79-fallen-off-bus", ""));
  EXPECT_EQ(a.kind, ActionKind::kUnknown);
  EXPECT_THAT(a.missing_fact, HasSubstr("the host to drain"));
}

TEST(Action, TransientRestartsAndBugsStop) {
  Action a = Decide(Make("preemption"));
  EXPECT_EQ(a.kind, ActionKind::kRestart);
  EXPECT_THAT(a.exclude_hosts, IsEmpty());
  a = Decide(Make("cuda-device-assert"));
  EXPECT_EQ(a.kind, ActionKind::kStop);
  EXPECT_EQ(a.set_by, "cuda-device-assert");
  EXPECT_EQ(Decide(Make("checkpoint-corrupt-write")).kind, ActionKind::kStop);
  EXPECT_EQ(Decide(Make("cuda-oom")).kind, ActionKind::kRestart);
}

TEST(Action, FallbackIsUnknownWithItsMissingFact) {
  Incident inc = Make("unrecognised-fatal-error");
  inc.missing_facts.push_back("the full log of rank 3");
  Action a = Decide(inc);
  EXPECT_EQ(a.kind, ActionKind::kUnknown);
  EXPECT_EQ(a.missing_fact, "the full log of rank 3");
  EXPECT_EQ(a.set_by, "unrecognised-fatal-error");
}

// A rank that logged progress after the error carried on from it: the
// rule's restart or stop is not for it, and what ended the job is missing.
// A drain stands: the GPU faulted whether or not the job survived it.
TEST(Action, SurvivedIsUnknownButKeepsADrain) {
  Incident oom = Make("cuda-oom");
  oom.survived = true;
  Action a = Decide(oom, Attempts(1, "cuda-oom", "node017"));
  EXPECT_EQ(a.kind, ActionKind::kUnknown);
  EXPECT_EQ(a.set_by, "survived");
  EXPECT_THAT(a.reason, HasSubstr("cuda-oom on node017 (rank 3) was followed by progress"));
  EXPECT_THAT(a.reason, HasSubstr("rule's restart does not apply"));
  EXPECT_THAT(a.missing_fact, HasSubstr("what ended the job"));
  Incident bug = Make("cuda-device-assert");
  bug.survived = true;
  EXPECT_EQ(Decide(bug).kind, ActionKind::kUnknown);
  Incident xid = Make("xid-79-fallen-off-bus", "node017", "0000:3b:00.0");
  xid.survived = true;
  a = Decide(xid);
  EXPECT_EQ(a.kind, ActionKind::kRestartExcluding);
  EXPECT_THAT(a.exclude_gpus, ElementsAre("0000:3b:00.0"));
  // A detector's straggler runs on by nature: the rule's action stands.
  Incident slow = Make("python-gc-straggler");
  slow.survived = true;
  slow.detector = "periodic-straggler";
  EXPECT_EQ(Decide(slow).kind, ActionKind::kRestart);
}

TEST(Action, OomAtTheSameStepAgainStops) {
  Diagnosis d = Attempts(1, "cuda-oom", "node017");
  Incident inc = Make("cuda-oom");
  inc.attempt = 1;
  inc.step = 1200;
  inc.recurrence.attempts = {0};
  // Another step: still a restart.
  EXPECT_EQ(Decide(inc, d).kind, ActionKind::kRestart);
  inc.recurrence.same_step = 1;
  Action a = Decide(inc, d);
  EXPECT_EQ(a.kind, ActionKind::kStop);
  EXPECT_EQ(a.set_by, "recurrence");
  EXPECT_THAT(a.reason, HasSubstr("also ended attempt_1 at the same step (1200)"));
}

TEST(Action, NetworkFaultOnTheSameHostAgainDrainsIt) {
  Diagnosis d = Attempts(1, "ib-port-down", "node017");
  Incident inc = Make("ib-port-down");
  inc.attempt = 1;
  inc.recurrence.attempts = {0};
  EXPECT_EQ(Decide(inc, d).kind, ActionKind::kRestart);  // another host before
  inc.recurrence.same_host = 1;
  Action a = Decide(inc, d);
  EXPECT_EQ(a.kind, ActionKind::kRestartExcluding);
  EXPECT_THAT(a.exclude_hosts, ElementsAre("node017"));
  EXPECT_EQ(a.set_by, "recurrence");
  EXPECT_THAT(a.reason, HasSubstr("drain node017"));
}

TEST(Action, ResumeOnThePreviousCheckpointStops) {
  Incident inc = Make("preemption");
  inc.recurrence.resume_failed_on_previous_checkpoint = true;
  Action a = Decide(inc);
  EXPECT_EQ(a.kind, ActionKind::kStop);
  EXPECT_EQ(a.set_by, "recurrence");
}

TEST(Action, RetryPolicyStopsARootCauseOverItsLimit) {
  RetryPolicy p;
  p.max_restarts_per_rule = 2;
  p.max_restarts_per_host = 100;
  Incident inc = Make("preemption");
  Diagnosis d = Attempts(1, "preemption", "node001");
  inc.attempt = 1;
  EXPECT_EQ(Decide(inc, d, p).kind, ActionKind::kRestart);
  d = Attempts(2, "preemption", "node001");
  inc.attempt = 2;
  Action a = Decide(inc, d, p);
  EXPECT_EQ(a.kind, ActionKind::kStop);
  EXPECT_EQ(a.set_by, "retry-policy");
  EXPECT_THAT(a.reason, HasSubstr("preemption already ended 2 earlier attempts (attempt_1, attempt_2) within "
                                  "24 h, the limit of 2 restarts per root cause, so stop instead of restart"));
  // A drain counts against the root cause too.
  d = Attempts(2, "xid-79-fallen-off-bus", "node001");
  Incident xid = Make("xid-79-fallen-off-bus");
  xid.attempt = 2;
  EXPECT_EQ(Decide(xid, d, p).kind, ActionKind::kStop);
}

TEST(Action, RetryPolicyCountsOnlyTheWindow) {
  RetryPolicy p;
  p.max_restarts_per_rule = 2;
  p.window_us = 90 * 60 * 1'000'000LL;  // 1.5 h: only the last attempt is in it
  Diagnosis d = Attempts(2, "preemption", "node001");
  Incident inc = Make("preemption");
  inc.attempt = 2;
  EXPECT_EQ(Decide(inc, d, p).kind, ActionKind::kRestart);
  p.window_us = 3 * kHour;
  EXPECT_EQ(Decide(inc, d, p).kind, ActionKind::kStop);
  // Attempts with no time count.
  p.window_us = kHour / 2;
  for (Attempt& a : d.attempts) a.start_us = a.end_us = kNoTime;
  EXPECT_EQ(Decide(inc, d, p).kind, ActionKind::kStop);
}

TEST(Action, RetryPolicyStopsAHostOverItsLimit) {
  RetryPolicy p;
  p.max_restarts_per_rule = 100;
  p.max_restarts_per_host = 1;
  Diagnosis d = Attempts(1, "cuda-oom", "node017");  // another cause, same host
  Incident inc = Make("preemption");
  inc.attempt = 1;
  Action a = Decide(inc, d, p);
  EXPECT_EQ(a.kind, ActionKind::kStop);
  EXPECT_THAT(a.reason, HasSubstr("node017 already failed 1 earlier attempt (attempt_1)"));
  // A restart that drains the host no longer runs on it.
  Incident xid = Make("xid-79-fallen-off-bus");
  xid.attempt = 1;
  EXPECT_EQ(Decide(xid, d, p).kind, ActionKind::kRestartExcluding);
  // Another host: not counted.
  inc.host = "node018";
  EXPECT_EQ(Decide(inc, d, p).kind, ActionKind::kRestart);
}

TEST(Action, SingleAttemptLeavesTheDefault) {
  Diagnosis d;
  d.incidents.push_back(Make("cuda-oom"));
  d.incidents.push_back(Make("xid-79-fallen-off-bus"));
  DecideActions(Rules(), RetryPolicy{}, d);
  EXPECT_EQ(d.incidents[0].action.kind, ActionKind::kRestart);
  EXPECT_EQ(d.incidents[1].action.kind, ActionKind::kRestartExcluding);
  EXPECT_STREQ(ActionKindName(ActionKind::kRestartExcluding), "restart_excluding");
}

}  // namespace
}  // namespace faultline
