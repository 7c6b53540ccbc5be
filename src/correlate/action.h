// The decide stage: what a platform should do about each incident. It
// starts from the action the incident's rule declares (rule source:
// `action`, rulesets/README.md), applies it to the incident's facts (the
// host or GPU a restart_excluding drains; an incident its rank carried on
// from, Incident::survived, keeps only a drain and is otherwise unknown:
// it is not what ended the job), lets a recurrence across the
// job's attempts change it (Incident::recurrence: the same step again stops
// an OOM, the same host again drains a network fault), then applies the
// user's retry policy, which turns a restart into a stop once a root cause
// or a host has used up its restarts within a time window. Every change
// says why in Action::reason and who made it in Action::set_by.
//
// Thread-safety: pure functions over the values passed in.
#ifndef FAULTLINE_CORRELATE_ACTION_H_
#define FAULTLINE_CORRELATE_ACTION_H_

#include <cstdint>
#include <string>

#include "correlate/diagnosis.h"
#include "ruleset/ruleset.h"

namespace faultline {

// How many restarts the job may use, counted over Diagnosis::attempts: the
// attempts before an incident's own whose primary incident had the same
// rule (per rule) or was on the same host (per host), and that ended within
// `window_us` before the incident. An attempt whose time is unknown counts.
struct RetryPolicy {
  uint32_t max_restarts_per_rule = 3;
  uint32_t max_restarts_per_host = 3;
  int64_t window_us = 24 * 3'600'000'000LL;  // 24 h
};

// "restart", "restart_excluding", "stop", "unknown" (the report's names).
const char* ActionKindName(ActionKind k);

// The action of one incident of `d` (which supplies the attempts).
Action DecideAction(const Ruleset& rs, const Diagnosis& d, const Incident& inc,
                    const RetryPolicy& policy);

// Fills Incident::action of every incident.
void DecideActions(const Ruleset& rs, const RetryPolicy& policy, Diagnosis& d);

}  // namespace faultline

#endif  // FAULTLINE_CORRELATE_ACTION_H_
