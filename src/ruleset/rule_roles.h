// What a rule is to the correlator beyond what its signals' roles say: the
// line that marks normal completion, the one that announces an external
// termination signal, the one that says a checkpoint was saved, the generic
// fatal line that only explains a failure no catalog rule does, the launcher
// summary that only points at a worker's own error, the line that says the
// process is already exiting. A rule
// declares these as "role:<name>" entries among its tags (rulesets/README.md,
// "Roles"), so the correlator never names rule ids; the compiler rejects a
// "role:" tag it does not know.
//
// Thread-safety: pure functions over immutable data.
#ifndef FAULTLINE_RULESET_RULE_ROLES_H_
#define FAULTLINE_RULESET_RULE_ROLES_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include "ruleset_generated.h"

namespace faultline {

enum class RuleRole : uint8_t {
  kCompletion,       // training finished normally (hang detection stops at it)
  kTermination,      // the job was asked to stop (SIGTERM, scancel, preemption)
  kCheckpointSaved,  // a checkpoint was written (what a stop would lose)
  kFallback,         // a generic fatal line: an incident only when no rule explains the failure
  kSummary,          // a launcher's failure summary: collateral of the worker's own error
  kPeriodicStraggler,  // names the straggler detector's periodic pauses (garbage collection)
  kMovingStraggler,    // names the straggler detector's imbalance that moves between ranks
  kAttemptStart,       // the job starts again: a launcher's restart, a scheduler's requeue
  kDeadline,           // a termination the job knew in advance (a scheduler time limit)
  kServed,             // a server answered a request: it carried on after an error
  kTeardown,           // the process is exiting (the CUDA runtime unloaded): no failure of its own
  kCarriedOn,          // the program says it handled an error and went on ("Skipping batch")
};
inline constexpr size_t kRuleRoleCount = 12;

inline constexpr std::string_view kRoleTagPrefix = "role:";
inline constexpr std::pair<std::string_view, RuleRole> kRoleTags[kRuleRoleCount] = {
    {"role:completion", RuleRole::kCompletion},
    {"role:termination", RuleRole::kTermination},
    {"role:checkpoint-saved", RuleRole::kCheckpointSaved},
    {"role:fallback", RuleRole::kFallback},
    {"role:summary", RuleRole::kSummary},
    {"role:periodic-straggler", RuleRole::kPeriodicStraggler},
    {"role:moving-straggler", RuleRole::kMovingStraggler},
    {"role:attempt-start", RuleRole::kAttemptStart},
    {"role:deadline", RuleRole::kDeadline},
    {"role:served", RuleRole::kServed},
    {"role:teardown", RuleRole::kTeardown},
    {"role:carried-on", RuleRole::kCarriedOn},
};

// The role a tag declares; nullopt for an ordinary tag or an unknown role.
inline std::optional<RuleRole> RoleOfTag(std::string_view tag) {
  for (const auto& [name, role] : kRoleTags) {
    if (tag == name) return role;
  }
  return std::nullopt;
}

inline bool RuleHasRole(const fb::Rule& rule, RuleRole role) {
  if (!rule.tags()) return false;
  for (const flatbuffers::String* tag : *rule.tags()) {
    if (tag && RoleOfTag(tag->string_view()) == role) return true;
  }
  return false;
}

}  // namespace faultline

#endif  // FAULTLINE_RULESET_RULE_ROLES_H_
