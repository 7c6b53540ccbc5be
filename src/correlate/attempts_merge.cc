// The attempts' diagnoses as one (attempts.h): the last attempt's incidents
// first, its primary the report's primary, then the earlier attempts' from
// the newest back; each attempt listed with its primary; and recurrence,
// the evidence one attempt's failure gives about the next: the same rule
// again (on the same host, at the same step), a resume failing on the
// checkpoint the previous attempt saved.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "correlate/state.h"
#include "util/strings.h"

namespace faultline::internal {
namespace {

// An incident that ended something: what a later attempt can repeat (a
// practice finding is advice about the run, whatever the attempt).
bool Failed(const Incident& i) { return !i.survived && !PracticeFinding(i); }

std::string_view TrimPath(std::string_view t) {
  while (!t.empty() && std::string_view("'\"`,;:.)]").find(t.back()) != std::string_view::npos) t.remove_suffix(1);
  return t;
}

// What a checkpoint-saved line names: each path in it, and the path's last
// component when it carries a number (checkpoint-1500, global_step1000),
// which a loader's error may name alone.
void CheckpointNames(std::string_view text, std::set<std::string>& out) {
  for (size_t pos = text.find('/'); pos != std::string_view::npos; pos = text.find('/', pos)) {
    size_t begin = pos;
    while (begin > 0 && !std::isspace(static_cast<unsigned char>(text[begin - 1])) && text[begin - 1] != '\'' &&
           text[begin - 1] != '"')
      --begin;
    size_t end = pos;
    while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end])) && text[end] != '\'' &&
           text[end] != '"')
      ++end;
    std::string_view path = TrimPath(text.substr(begin, end - begin));
    pos = end;
    if (path.size() < 4) continue;
    out.emplace(path);
    std::string_view last = path.substr(path.rfind('/') + 1);
    if (last.size() >= 4 && std::any_of(last.begin(), last.end(), [](char c) { return c >= '0' && c <= '9'; }))
      out.emplace(last);
  }
}

std::set<std::string> SavedCheckpoints(const Ruleset& rs, const std::vector<Evidence>& evs) {
  std::set<std::string> names;
  for (const Evidence& ev : evs) {
    if (RuleHasRole(*rs.rule(ev.rule), RuleRole::kCheckpointSaved)) CheckpointNames(ev.text, names);
  }
  return names;
}

// The saved checkpoint an incident's lines name, "" when none.
std::string NamedCheckpoint(const Incident& inc, const std::set<std::string>& saved) {
  auto scan = [&](const std::vector<Evidence>& evs) -> std::string {
    for (const Evidence& ev : evs) {
      for (const std::string& name : saved) {
        if (ev.text.find(name) != std::string::npos) return name;
      }
    }
    return "";
  };
  std::string hit = scan(inc.initiating);
  return hit.empty() ? scan(inc.timeline) : hit;
}

std::string RuleId(const Ruleset& rs, uint32_t rule) { return std::string(rs.rule(rule)->id()->string_view()); }

// Recurrence of one incident of attempt `k` over the attempts before it.
void FindRecurrence(const std::vector<Diagnosis>& per_attempt, uint32_t k, Incident& inc) {
  Recurrence& rec = inc.recurrence;
  if (!Failed(inc)) return;
  for (uint32_t j = 0; j < k; ++j) {
    bool same_rule = false, same_host = false, same_step = false;
    for (const Incident& prev : per_attempt[j].incidents) {
      if (!Failed(prev) || prev.rule != inc.rule) continue;
      same_rule = true;
      same_host |= !inc.host.empty() && prev.host == inc.host;
      same_step |= inc.step >= 0 && prev.step == inc.step;
    }
    if (!same_rule) continue;
    rec.attempts.push_back(j);
    rec.same_host += same_host;
    rec.same_step += same_step;
  }
}

// Says what recurred and raises the confidence: the same failure again is
// less likely chance; again on one host or at one step, less still.
void ExplainRecurrence(const Ruleset& rs, const std::vector<Attempt>& attempts, Incident& inc,
                       const std::string& checkpoint, uint32_t previous) {
  Recurrence& rec = inc.recurrence;
  if (rec.attempts.empty() && !rec.resume_failed_on_previous_checkpoint) return;
  std::string what;
  if (!rec.attempts.empty()) {
    std::vector<std::string> labels;
    for (uint32_t j : rec.attempts) labels.push_back(StrCat(j + 1, " (", attempts[j].label, ")"));
    what = StrCat("the same failure (", RuleId(rs, inc.rule), ") ended attempt", rec.attempts.size() > 1 ? "s " : " ",
                  StrJoin(labels, ", "));
    if (rec.same_host) what += StrCat(", ", rec.same_host, " of them on this host (", inc.host, ")");
    if (rec.same_step) what += StrCat(", ", rec.same_step, " at this step (", inc.step, ")");
  }
  if (rec.resume_failed_on_previous_checkpoint) {
    what += StrCat(what.empty() ? "" : "; ", "it fails on the checkpoint attempt ", previous + 1, " (",
                   attempts[previous].label, ") saved: ", checkpoint);
  }
  bool pinned = rec.same_host || rec.same_step || rec.resume_failed_on_previous_checkpoint;
  double before = inc.confidence;
  double after = std::round(std::min(0.99, before + (1 - before) * (pinned ? 0.5 : 0.25)) * 100) / 100;
  inc.confidence = after;
  if (!inc.explanation.empty() && inc.explanation.back() != ' ') inc.explanation += ' ';
  const char* why =
      rec.attempts.empty()
          ? "The checkpoint the job resumes from is what fails: another restart from it fails the same way"
          : "A failure that repeats across restarts is not chance";
  inc.explanation += StrCat("Recurrence: ", what, ". ", why, ": the confidence rises from ", before, " to ", after,
                            ".");
}

void FillAttempt(Attempt& a, const Diagnosis& d) {
  if (d.incidents.empty()) return;
  const Incident& p = d.incidents.front();
  a.primary_rule = p.rule;
  a.host = p.host;
  a.rank = p.rank;
  a.step = p.step;
}

void MergeFrame(Diagnosis& out, const Diagnosis& d) {
  auto lo = [](int64_t a, int64_t b) { return a == kNoTime ? b : b == kNoTime ? a : std::min(a, b); };
  auto hi = [](int64_t a, int64_t b) { return a == kNoTime ? b : b == kNoTime ? a : std::max(a, b); };
  out.job_start_us = lo(out.job_start_us, d.job_start_us);
  out.job_end_us = hi(out.job_end_us, d.job_end_us);
  out.clock_offsets_s.insert(d.clock_offsets_s.begin(), d.clock_offsets_s.end());
  out.clock_offset_source.insert(d.clock_offset_source.begin(), d.clock_offset_source.end());
  out.ranks = std::max(out.ranks, d.ranks);
  out.hosts = std::max(out.hosts, d.hosts);
  out.ignored.insert(out.ignored.end(), d.ignored.begin(), d.ignored.end());
}

}  // namespace

Diagnosis MergeAttempts(const Ruleset& rs, std::vector<Attempt> attempts, std::vector<Diagnosis> per_attempt,
                        const std::vector<std::vector<Evidence>>& evidence_of) {
  for (uint32_t k = 0; k < per_attempt.size(); ++k) {
    std::set<std::string> saved = k ? SavedCheckpoints(rs, evidence_of[k - 1]) : std::set<std::string>{};
    for (Incident& inc : per_attempt[k].incidents) {
      inc.attempt = k;
      FindRecurrence(per_attempt, k, inc);
      std::string ckpt = saved.empty() || !Failed(inc) ? "" : NamedCheckpoint(inc, saved);
      inc.recurrence.resume_failed_on_previous_checkpoint = !ckpt.empty();
      ExplainRecurrence(rs, attempts, inc, ckpt, k ? k - 1 : 0);
    }
    FillAttempt(attempts[k], per_attempt[k]);
  }
  // The last attempt's view of the job (its priors, its window's end) leads;
  // the frame of the others widens it.
  Diagnosis out;
  out.expectation = per_attempt.back().expectation;
  out.limits = per_attempt.back().limits;
  for (size_t k = per_attempt.size(); k-- > 0;) {
    Diagnosis& d = per_attempt[k];
    MergeFrame(out, d);
    for (Incident& inc : d.incidents) out.incidents.push_back(std::move(inc));
  }
  // The Flight Recorder analysis of the newest attempt that left dumps
  // (each attempt analyses its own: a dump tells one run's collectives).
  for (size_t k = per_attempt.size(); k-- > 0;) {
    if (per_attempt[k].flight_recorder.groups.empty() && per_attempt[k].flight_recorder.notes.empty()) continue;
    out.flight_recorder = std::move(per_attempt[k].flight_recorder);
    out.flight_recorder_suspects = std::move(per_attempt[k].flight_recorder_suspects);
    break;
  }
  out.attempts = std::move(attempts);
  return out;
}

}  // namespace faultline::internal
