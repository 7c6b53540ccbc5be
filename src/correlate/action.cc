// The decide stage (action.h): rule default -> the incident's facts ->
// recurrence -> retry policy. Each stage may change the action and then
// says so in its reason.
#include "correlate/action.h"

#include <string_view>
#include <vector>

#include "timeparse/timeparse.h"
#include "util/strings.h"

namespace faultline {
namespace {

std::string_view RuleIdOf(const fb::Rule& r) { return r.id() ? r.id()->string_view() : ""; }

// The GPU a drain names: the incident's PCI bus id, else one an initiating
// line captured, else "host:index" for a device index.
std::string GpuOf(const Incident& inc) {
  if (inc.gpu.find(':') != std::string::npos) return inc.gpu;
  for (const Evidence& ev : inc.initiating) {
    for (const char* key : {"pci", "bus_id"}) {
      if (const std::string* v = ev.Field(key); v && !v->empty()) return *v;
    }
  }
  if (inc.gpu.empty()) return "";
  return StrCat(inc.host.empty() ? "?" : inc.host, ":", inc.gpu);
}

// "on node017 (rank 3, GPU 0000:3b:00.0)": where the rule matched.
std::string Where(const Incident& inc) {
  std::vector<std::string> parts;
  if (inc.rank >= 0) parts.push_back(StrCat("rank ", inc.rank));
  if (!inc.gpu.empty()) parts.push_back(StrCat("GPU ", inc.gpu));
  if (inc.step >= 0) parts.push_back(StrCat("step ", inc.step));
  std::string out = inc.host.empty() ? "on an unknown host" : StrCat("on ", inc.host);
  if (!parts.empty()) out += StrCat(" (", StrJoin(parts, ", "), ")");
  return out;
}

// What the logs cannot settle, for an unknown action: the incident's own
// missing fact when it has one, else what the rule says.
std::string MissingFact(const Incident& inc, std::string_view fallback) {
  return inc.missing_facts.empty() ? std::string(fallback) : inc.missing_facts.front();
}

// Stage 1: the rule's declared default applied to the incident's facts.
Action FromRule(const fb::Rule& rule, const Incident& inc) {
  Action a;
  a.set_by = std::string(RuleIdOf(rule));
  const fb::ActionDecl* decl = rule.action();
  if (!decl) {
    a.reason = StrCat("Rule ", a.set_by, " declares no action.");
    a.missing_fact = StrCat("whether ", a.set_by, " calls for a restart or a stop (the rule declares no action)");
    return a;
  }
  std::string why = decl->why() ? decl->why()->str() : "";
  a.reason = StrCat(a.set_by, " ", Where(inc), ": ", why);
  switch (decl->default_kind()) {
    case fb::ActionDefault::Restart: a.kind = ActionKind::kRestart; break;
    case fb::ActionDefault::Stop: a.kind = ActionKind::kStop; break;
    case fb::ActionDefault::Unknown: a.missing_fact = MissingFact(inc, why); break;
    case fb::ActionDefault::RestartExcluding: {
      std::string gpu = decl->drain() == fb::Drain::Gpu ? GpuOf(inc) : "";
      if (!gpu.empty()) {
        a.kind = ActionKind::kRestartExcluding;
        a.exclude_gpus.push_back(gpu);
      } else if (!inc.host.empty()) {
        // A GPU drain whose GPU the logs do not name drains its host.
        a.kind = ActionKind::kRestartExcluding;
        a.exclude_hosts.push_back(inc.host);
        if (decl->drain() == fb::Drain::Host && !GpuOf(inc).empty()) a.exclude_gpus.push_back(GpuOf(inc));
      } else {
        a.missing_fact = StrCat("the host to drain: no line of ", a.set_by,
                                " names the host (or GPU) it happened on");
      }
      break;
    }
  }
  return a;
}

// Stage 1b: an error its rank carried on from (Incident::survived) is not
// why the job ended, so its rule's restart or stop does not apply: what
// ended the job is the missing fact. A drain stands: a GPU that faulted
// once is drained at the next restart whether or not the job survived it.
// A numeric detector's call (a straggler, a slowdown) is about a job that
// runs on by nature: its action is the rule's.
// Returns whether it decided (no later stage applies to such an incident).
bool ApplySurvived(const fb::Rule& rule, const Incident& inc, Action& a) {
  if (!inc.survived || !inc.detector.empty() || a.kind == ActionKind::kRestartExcluding) return false;
  std::string_view id = RuleIdOf(rule);
  a = Action{ActionKind::kUnknown, {}, {},
             StrCat(id, " ", Where(inc), " was followed by progress on its rank: the job carried on from it, "
                                          "so its rule's ", ActionKindName(a.kind), " does not apply."),
             "survived",
             "what ended the job, if it ended: the last lines of the rank that stopped, or the scheduler's "
             "record of the job's end (state and exit code)"};
  return true;
}

std::string AttemptLabels(const Diagnosis& d, const std::vector<uint32_t>& idx) {
  std::vector<std::string> labels;
  for (uint32_t i : idx) {
    labels.push_back(i < d.attempts.size() && !d.attempts[i].label.empty() ? d.attempts[i].label
                                                                           : StrCat("attempt ", i + 1));
  }
  return StrJoin(labels, ", ");
}

// Stage 2: a recurrence across the job's attempts changes a default.
void ApplyRecurrence(const fb::Rule& rule, const Diagnosis& d, const Incident& inc, Action& a) {
  const Recurrence& rec = inc.recurrence;
  std::string_view id = RuleIdOf(rule);
  if (rec.resume_failed_on_previous_checkpoint && a.kind != ActionKind::kStop) {
    a = Action{ActionKind::kStop, {}, {},
               StrCat(id, " ", Where(inc), ": the resume failed on the checkpoint the previous attempt wrote, "
                                     "so a restart would load it again; pick a good checkpoint by hand."),
               "recurrence", ""};
    return;
  }
  const fb::ActionDecl* decl = rule.action();
  if (!decl || rec.attempts.empty() || a.kind == ActionKind::kStop || a.kind == ActionKind::kUnknown) return;
  const std::string before = AttemptLabels(d, rec.attempts);
  bool stop = false;
  std::string how;
  switch (decl->stop_on_recurrence()) {
    case fb::RecurrenceScope::SameStep:
      stop = rec.same_step > 0;
      how = StrCat("at the same step", inc.step >= 0 ? StrCat(" (", inc.step, ")") : "");
      break;
    case fb::RecurrenceScope::SameHost:
      stop = rec.same_host > 0;
      how = StrCat("on the same host", inc.host.empty() ? "" : StrCat(" (", inc.host, ")"));
      break;
    case fb::RecurrenceScope::Any: stop = true; how = "before"; break;
    case fb::RecurrenceScope::Never: break;
  }
  if (stop) {
    a = Action{ActionKind::kStop, {}, {},
               StrCat(id, " ", Where(inc), " also ended ", before, " ", how,
                      ": it recurs, so a restart would fail the same way."),
               "recurrence", ""};
    return;
  }
  if (a.kind == ActionKind::kRestart && decl->drain_on_recurrence() != fb::Drain::None &&
      rec.same_host > 0 && !inc.host.empty()) {
    std::string gpu = decl->drain_on_recurrence() == fb::Drain::Gpu ? GpuOf(inc) : "";
    a.kind = ActionKind::kRestartExcluding;
    if (gpu.empty()) a.exclude_hosts.push_back(inc.host); else a.exclude_gpus.push_back(gpu);
    a.reason = StrCat(id, " ", Where(inc), " also ended ", before, " on the same host: drain ",
                      gpu.empty() ? inc.host : StrCat("GPU ", gpu), " rather than restart on it again.");
    a.set_by = "recurrence";
  }
}

std::string Hours(int64_t us) {
  double h = static_cast<double>(us) / 3'600'000'000.0;
  return StrCat(h == static_cast<double>(static_cast<int64_t>(h)) ? StrCat(static_cast<int64_t>(h)) : StrCat(h), " h");
}

// The prior attempts (before the incident's own) that ended within the
// policy's window before the incident and match `same`.
template <typename Pred>
std::vector<uint32_t> PriorAttempts(const Diagnosis& d, const Incident& inc, const RetryPolicy& p, Pred same) {
  std::vector<uint32_t> out;
  const int64_t now = inc.time_us != kNoTime ? inc.time_us : d.job_end_us;
  for (const Attempt& at : d.attempts) {
    if (at.index >= inc.attempt || !same(at)) continue;
    const int64_t t = at.end_us != kNoTime ? at.end_us : at.start_us;
    if (now != kNoTime && t != kNoTime && now - t > p.window_us) continue;
    out.push_back(at.index);
  }
  return out;
}

// Stage 3: the user's retry policy turns a restart into a stop.
void ApplyRetryPolicy(const fb::Rule& rule, const Diagnosis& d, const Incident& inc, const RetryPolicy& p,
                      Action& a) {
  if (a.kind != ActionKind::kRestart && a.kind != ActionKind::kRestartExcluding) return;
  std::string_view id = RuleIdOf(rule);
  const auto rule_idx = static_cast<int64_t>(inc.rule);
  auto same_rule = PriorAttempts(d, inc, p, [&](const Attempt& at) { return at.primary_rule == rule_idx; });
  std::string over;
  if (same_rule.size() >= p.max_restarts_per_rule) {
    over = StrCat(id, " already ended ", same_rule.size(), " earlier attempt", same_rule.size() == 1 ? "" : "s",
                  " (", AttemptLabels(d, same_rule), ") within ", Hours(p.window_us), ", the limit of ",
                  p.max_restarts_per_rule, " restarts per root cause");
  } else if (a.kind == ActionKind::kRestart && !inc.host.empty()) {
    // A restart that drains the host no longer runs there: only a restart
    // on the same host counts against it.
    auto same_host = PriorAttempts(d, inc, p, [&](const Attempt& at) { return at.host == inc.host; });
    if (same_host.size() >= p.max_restarts_per_host) {
      over = StrCat(inc.host, " already failed ", same_host.size(), " earlier attempt",
                    same_host.size() == 1 ? "" : "s", " (", AttemptLabels(d, same_host), ") within ",
                    Hours(p.window_us), ", the limit of ", p.max_restarts_per_host, " restarts per host");
    }
  }
  if (over.empty()) return;
  a = Action{ActionKind::kStop, {}, {},
             StrCat("Retry policy: ", over, ", so stop instead of ", ActionKindName(a.kind), " (", id, " ",
                    Where(inc), ")."),
             "retry-policy", ""};
}

}  // namespace

const char* ActionKindName(ActionKind k) {
  switch (k) {
    case ActionKind::kRestart: return "restart";
    case ActionKind::kRestartExcluding: return "restart_excluding";
    case ActionKind::kStop: return "stop";
    case ActionKind::kUnknown: break;
  }
  return "unknown";
}

Action DecideAction(const Ruleset& rs, const Diagnosis& d, const Incident& inc, const RetryPolicy& policy) {
  const fb::Rule& rule = *rs.rule(inc.rule);
  Action a = FromRule(rule, inc);
  if (ApplySurvived(rule, inc, a)) return a;
  ApplyRecurrence(rule, d, inc, a);
  ApplyRetryPolicy(rule, d, inc, policy, a);
  return a;
}

void DecideActions(const Ruleset& rs, const RetryPolicy& policy, Diagnosis& d) {
  for (Incident& inc : d.incidents) inc.action = DecideAction(rs, d, inc, policy);
  // A save the job was killed during (detector partial_checkpoint_save): a
  // restart must not resume from what it was writing.
  const Incident* partial = nullptr;
  for (const Incident& inc : d.incidents) {
    if (inc.detector == "partial_checkpoint_save" && !inc.initiating.empty()) partial = &inc;
  }
  if (!partial) return;
  const Evidence& start = partial->initiating.front();
  const std::string* dir = start.Field("save_start");
  const std::string* step = start.Field("step");
  std::string what = step ? StrCat("the checkpoint of iteration ", *step) : "the checkpoint being saved";
  if (dir) StrAppend(&what, " (", *dir, ")");
  for (Incident& inc : d.incidents) {
    ActionKind k = inc.action.kind;
    if (&inc == partial || (k != ActionKind::kRestart && k != ActionKind::kRestartExcluding)) continue;
    StrAppend(&inc.action.reason, " Do not resume from ", what, ": its save was interrupted and it is partial (",
              RuleIdOf(*rs.rule(partial->rule)), "); resume from the complete one before it.");
  }
}

}  // namespace faultline
