// Conditions pass: of the kept evidence, the initiating and symptom lines
// whose rule's conditions hold (uptime, another rule present or absent,
// before or after another rule's first line) may make incidents. Rules a
// numeric detector decides never do from their lines.
#include <algorithm>

#include "correlate/state.h"

namespace faultline::internal {
namespace {

// The first kept time of the rule named `id`, or nullptr.
const int64_t* FirstTimeOf(const CorrelationState& st, const flatbuffers::String* id) {
  int r = st.rs.FindRule(id->string_view());
  if (r < 0) return nullptr;
  auto it = st.first_time_of_rule.find(static_cast<uint32_t>(r));
  return it == st.first_time_of_rule.end() ? nullptr : &it->second;
}

bool Named(const flatbuffers::String* s) { return s && s->size() > 0; }

bool ConditionsHold(const CorrelationState& st, const Evidence& ev, const fb::Conditions& c) {
  double uptime_days = ev.monotonic_s ? *ev.monotonic_s / 86400.0 : -1;
  if (c.min_uptime_days() >= 0 && (uptime_days < 0 || uptime_days < c.min_uptime_days()))
    return false;
  if (c.max_uptime_days() >= 0 && uptime_days >= 0 && uptime_days >= c.max_uptime_days())
    return false;
  if (Named(c.requires_rule()) && !st.RulePresent(c.requires_rule())) return false;
  if (Named(c.excludes_rule()) && st.RulePresent(c.excludes_rule())) return false;
  if (Named(c.after_rule())) {
    const int64_t* t = FirstTimeOf(st, c.after_rule());
    if (!t || ev.time_us == kNoTime || ev.time_us < *t) return false;
  }
  if (Named(c.before_rule())) {
    // E.g. a watchdog line printed at interpreter exit, after training
    // completed, is not a failure.
    const int64_t* t = FirstTimeOf(st, c.before_rule());
    if (t && ev.time_us != kNoTime && ev.time_us >= *t) return false;
  }
  return !Named(c.detector());  // detectors decide these
}

}  // namespace

void ApplyConditions(CorrelationState& st) {
  for (size_t i = 0; i < st.evs.size(); ++i) {
    if (!st.ignore_reason[i].empty()) continue;
    const Evidence& ev = st.evs[i];
    st.present.insert(ev.rule);
    if (ev.time_us != kNoTime) {
      auto [it, fresh] = st.first_time_of_rule.emplace(ev.rule, ev.time_us);
      if (!fresh) it->second = std::min(it->second, ev.time_us);
    }
  }
  st.active.assign(st.evs.size(), false);
  for (size_t i = 0; i < st.evs.size(); ++i) {
    if (!st.ignore_reason[i].empty()) continue;
    const Evidence& ev = st.evs[i];
    SignalRole role = st.rs.signal(ev.signal).role;
    if (role != SignalRole::Initiating && role != SignalRole::Symptom) continue;
    const fb::Conditions* c = st.rs.rule(ev.rule)->conditions();
    st.active[i] = !c || st.rs.signal(ev.signal).signal->unconditional() || ConditionsHold(st, ev, *c);
  }
}

}  // namespace faultline::internal
