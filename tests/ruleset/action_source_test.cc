// The rule source's `action` object: compiled into the ruleset, and every
// value the compiler does not know is an error naming file, rule and field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "ruleset/compiler.h"
#include "ruleset/ruleset.h"
#include "test_rules.h"

namespace faultline {
namespace {

using ::testing::HasSubstr;
using testing::MakeRuleTree;
using testing::Replace;
using testing::WriteFile;

constexpr const char* kLayer = R"J("layer": "hardware",)J";

std::string WithAction(const std::string& action) {
  return Replace(testing::kXidRule, kLayer, std::string(kLayer) + " \"action\": " + action + ",");
}

std::string CompileError(const std::string& dir) {
  auto r = CompileRuleSource(dir);
  return r.ok() ? std::string("compiled") : std::string(r.status().message());
}

TEST(ActionSource, CompiledIntoTheRule) {
  std::string dir = MakeRuleTree("action-ok");
  WriteFile(dir + "/gpu/xid-79.json",
            WithAction(R"J({"default": "restart_excluding", "drain": "gpu", "stop_on_recurrence": "same_host",
                            "why": "The GPU is gone."})J"));
  auto r = CompileRuleSource(dir);
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto rs = Ruleset::LoadBuffer(r->buffer, "test");
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  const fb::ActionDecl* a = (*rs)->rule((*rs)->FindRule("xid-79-fallen-off-bus"))->action();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->default_kind(), fb::ActionDefault::RestartExcluding);
  EXPECT_EQ(a->drain(), fb::Drain::Gpu);
  EXPECT_EQ(a->stop_on_recurrence(), fb::RecurrenceScope::SameHost);
  EXPECT_EQ(a->drain_on_recurrence(), fb::Drain::None);
  EXPECT_EQ(a->why()->str(), "The GPU is gone.");
  // A rule without one has none (the decide stage makes that unknown).
  EXPECT_EQ((*rs)->rule((*rs)->FindRule("nccl-watchdog-timeout"))->action(), nullptr);
}

TEST(ActionSource, UnknownValuesNameFileRuleAndField) {
  std::string dir = MakeRuleTree("action-bad");
  const std::string file = dir + "/gpu/xid-79.json";
  const std::string where = file + ": rule 'xid-79-fallen-off-bus': ";
  WriteFile(file, WithAction(R"J({"default": "reboot", "why": "w"})J"));
  EXPECT_THAT(CompileError(dir), HasSubstr(where + "action.default: unknown value 'reboot' (one of restart, "
                                                   "restart_excluding, stop, unknown)"));
  WriteFile(file, WithAction(R"J({"default": "restart_excluding", "drain": "rack", "why": "w"})J"));
  EXPECT_THAT(CompileError(dir), HasSubstr(where + "action.drain: unknown value 'rack'"));
  WriteFile(file, WithAction(R"J({"default": "restart", "stop_on_recurrence": "twice", "why": "w"})J"));
  EXPECT_THAT(CompileError(dir), HasSubstr(where + "action.stop_on_recurrence: unknown value 'twice'"));
  WriteFile(file, WithAction(R"J({"default": "restart", "drain_on_recurrence": "node", "why": "w"})J"));
  EXPECT_THAT(CompileError(dir), HasSubstr(where + "action.drain_on_recurrence: unknown value 'node'"));
  WriteFile(file, WithAction(R"J({"default": "restart", "why": "w", "when": "x"})J"));
  EXPECT_THAT(CompileError(dir), HasSubstr(where + "action.when: unknown field"));
  WriteFile(file, WithAction(R"J({"default": "restart"})J"));
  EXPECT_THAT(CompileError(dir), HasSubstr(where + "action.why: missing field"));
  WriteFile(file, WithAction(R"J("restart")J"));
  EXPECT_THAT(CompileError(dir), HasSubstr(where + "action: must be an object"));
}

TEST(ActionSource, DrainBelongsToRestartExcluding) {
  std::string dir = MakeRuleTree("action-drain");
  const std::string file = dir + "/gpu/xid-79.json";
  WriteFile(file, WithAction(R"J({"default": "restart_excluding", "why": "w"})J"));
  EXPECT_THAT(CompileError(dir), HasSubstr("action.drain: restart_excluding needs what it drains"));
  WriteFile(file, WithAction(R"J({"default": "stop", "drain": "host", "why": "w"})J"));
  EXPECT_THAT(CompileError(dir), HasSubstr("action.drain: only a restart_excluding default drains"));
  WriteFile(file, WithAction(R"J({"default": "stop", "drain_on_recurrence": "host", "why": "w"})J"));
  EXPECT_THAT(CompileError(dir), HasSubstr("action.drain_on_recurrence: only a restart default"));
}

// Every rule of the default ruleset says what to do about its incidents.
TEST(ActionSource, EveryDefaultRuleDeclaresOne) {
  auto rs = Ruleset::LoadDefault();
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  for (size_t i = 0; i < (*rs)->rule_count(); ++i) {
    const fb::Rule* r = (*rs)->rule(i);
    ASSERT_NE(r->action(), nullptr) << r->id()->str();
    EXPECT_GT(r->action()->why()->size(), 0u) << r->id()->str();
  }
}

}  // namespace
}  // namespace faultline
