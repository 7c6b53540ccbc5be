// Writers of the attempts (report/attempts.h).
#include "report/attempts.h"

#include "report/report.h"

#include "timeparse/timeparse.h"
#include "util/json.h"
#include "util/strings.h"

namespace faultline {
namespace {

std::string AttemptName(const Attempt& a) { return StrCat(a.index + 1, " (", a.label, ")"); }

}  // namespace

void AppendIncidentHistoryJson(const Diagnosis& d, const Incident& inc, std::string& out) {
  if (inc.step >= 0) out += StrCat(",\"step\":", inc.step);
  if (d.attempts.size() < 2) return;
  const Recurrence& r = inc.recurrence;
  out += StrCat(",\"attempt\":", inc.attempt, ",\"recurrence\":{\"attempts\":[");
  for (size_t k = 0; k < r.attempts.size(); ++k) out += StrCat(k ? "," : "", r.attempts[k]);
  out += StrCat("],\"same_host\":", r.same_host, ",\"same_step\":", r.same_step,
                ",\"resume_failed_on_previous_checkpoint\":",
                r.resume_failed_on_previous_checkpoint ? "true" : "false", "}");
}

void AppendAttemptsJson(const Ruleset& rs, const Diagnosis& d, std::string& out) {
  if (d.attempts.size() < 2) return;
  out += ",\"attempts\":[";
  for (size_t k = 0; k < d.attempts.size(); ++k) {
    const Attempt& a = d.attempts[k];
    out += StrCat(k ? "," : "", "{\"index\":", a.index, ",\"label\":");
    AppendJsonString(out, a.label);
    out += ",\"recognised\":";
    AppendJsonString(out, a.recognised);
    out += ",\"start\":";
    AppendTime(out, a.start_us);
    out += ",\"end\":";
    AppendTime(out, a.end_us);
    out += ",\"primary\":";
    if (a.primary_rule < 0) {
      out += "null}";
      continue;
    }
    out += "{\"rule\":";
    AppendJsonString(out, rs.rule(static_cast<size_t>(a.primary_rule))->id()->string_view());
    out += ",\"host\":";
    if (a.host.empty()) out += "null"; else AppendJsonString(out, a.host);
    out += ",\"rank\":";
    out += a.rank >= 0 ? StrCat(a.rank) : "null";
    out += ",\"step\":";
    out += a.step >= 0 ? StrCat(a.step) : "null";
    out += "}}";
  }
  out += ']';
}

std::string AttemptsText(const Ruleset& rs, const Diagnosis& d) {
  if (d.attempts.size() < 2) return "";
  std::string out = StrCat("\nattempts (", d.attempts.size(), ", oldest first; the primary is the newest one's):\n");
  for (const Attempt& a : d.attempts) {
    out += StrCat("  ", AttemptName(a), " [", a.recognised, "]");
    if (a.start_us != kNoTime) out += StrCat(" ", FormatRfc3339(a.start_us));
    if (a.end_us != kNoTime) out += StrCat(" .. ", FormatRfc3339(a.end_us));
    if (a.primary_rule < 0) {
      out += ": no incident\n";
      continue;
    }
    out += StrCat(": ", rs.rule(static_cast<size_t>(a.primary_rule))->id()->string_view());
    if (a.rank >= 0) out += StrCat(" rank ", a.rank);
    if (!a.host.empty()) out += StrCat(" on ", a.host);
    if (a.step >= 0) out += StrCat(" at step ", a.step);
    out += '\n';
  }
  return out;
}

std::string IncidentHistoryText(const Diagnosis& d, const Incident& inc) {
  std::string out;
  if (inc.step >= 0) out += StrCat("step: ", inc.step, "\n");
  if (d.attempts.size() < 2 || inc.attempt >= d.attempts.size()) return out;
  out += StrCat("attempt: ", AttemptName(d.attempts[inc.attempt]), "\n");
  const Recurrence& r = inc.recurrence;
  if (r.attempts.empty() && !r.resume_failed_on_previous_checkpoint) return out;
  std::vector<std::string> names;
  for (uint32_t j : r.attempts) {
    if (j < d.attempts.size()) names.push_back(AttemptName(d.attempts[j]));
  }
  out += "recurrence:";
  if (!names.empty()) {
    out += StrCat(" same failure in attempt", names.size() > 1 ? "s " : " ", StrJoin(names, ", "), "; ", r.same_host,
                  " on this host, ", r.same_step, " at this step");
  }
  if (r.resume_failed_on_previous_checkpoint) {
    out += StrCat(names.empty() ? "" : ";", " fails on the checkpoint the previous attempt saved");
  }
  return out + "\n";
}

}  // namespace faultline
