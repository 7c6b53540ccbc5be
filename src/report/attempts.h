// The report's parts about a job's attempts (correlate/attempts.h): the
// top-level `attempts` array and, per incident, `attempt`, `step` and
// `recurrence` in JSON; the attempts in order with each one's primary, and
// an incident's attempt and recurrence, in the text report.
//
// Thread-safety: pure functions.
#ifndef FAULTLINE_REPORT_ATTEMPTS_H_
#define FAULTLINE_REPORT_ATTEMPTS_H_

#include <string>

#include "correlate/diagnosis.h"
#include "ruleset/ruleset.h"

namespace faultline {

// ,"step":N (when known) and, when the job ran more than once,
// ,"attempt":K,"recurrence":{...}: appended inside an incident object.
void AppendIncidentHistoryJson(const Diagnosis& d, const Incident& inc, std::string& out);
// ,"attempts":[...] when the job ran more than once.
void AppendAttemptsJson(const Ruleset& rs, const Diagnosis& d, std::string& out);
// "attempts:" and one line per attempt, oldest first; "" for one run.
std::string AttemptsText(const Ruleset& rs, const Diagnosis& d);
// The incident's "attempt: ..." and "recurrence: ..." lines; "" for one run.
std::string IncidentHistoryText(const Diagnosis& d, const Incident& inc);

}  // namespace faultline

#endif  // FAULTLINE_REPORT_ATTEMPTS_H_
