// Writers of the diagnosis: the JSON report (schema/report.schema.json),
// the JSON-lines evidence stream of `faultline scan --json`, and the human
// text report (primary diagnosis first, initiating evidence as file:line,
// collateral summarised as counts and rank ranges).
//
// Thread-safety: pure functions.
#ifndef FAULTLINE_REPORT_REPORT_H_
#define FAULTLINE_REPORT_REPORT_H_

#include <string>
#include <string_view>
#include <vector>

#include "correlate/diagnosis.h"
#include "evidence/evidence.h"
#include "ruleset/ruleset.h"
#include "util/json.h"

namespace faultline {

std::string EvidenceJson(const Ruleset& rs, const ScanResult& scan, const Evidence& ev);
// The evidence's `fields` object: named captures plus gpu, monotonic_s, pid.
std::string EvidenceFieldsJson(const Evidence& ev);
std::string EvidenceJsonLines(const Ruleset& rs, const ScanResult& scan);
std::string ReportJson(const Ruleset& rs, const ScanResult& scan, const Diagnosis& d);
std::string ReportText(const Ruleset& rs, const ScanResult& scan, const Diagnosis& d);

// What a scan capped, with the true counts (the report's input.caps): the
// evidence kept of the matches (exact), and the distinct ranks and hosts
// seen (exact unless truncated, then estimated) against those whose
// breakdowns were kept (evidence/distinct.h).
struct ScanCaps {
  uint64_t matches = 0, evidence_kept = 0;
  // Metric lines kept as series points, not records (ScanResult::
  // metric_points): the evidence list holds only those a detector reported.
  uint64_t metric_points = 0;
  bool evidence_truncated = false;
  uint64_t ranks_seen = 0, ranks_kept = 0;
  bool ranks_truncated = false;
  uint64_t hosts_seen = 0, hosts_kept = 0;
  bool hosts_truncated = false;
  bool topology_truncated = false, metric_series_truncated = false;
  bool any() const {
    return evidence_truncated || ranks_truncated || hosts_truncated || topology_truncated || metric_series_truncated;
  }
};
ScanCaps CapsOf(const ScanResult& scan);
std::string CapsJson(const ScanResult& scan);

// "<key>":"<name>", plus "<key>_escaped" when the name is not UTF-8.
void AppendSourceName(std::string& out, std::string_view key, std::string_view name);

// flight_recorder.cc: the report's flight_recorder section (appended as
// ,"flight_recorder":{...}; nothing without dumps), an incident's findings
// array, and the text block.
void AppendFlightRecorderJson(const ScanResult& scan, const Diagnosis& d, std::string& out);
void AppendFrFindingsJson(const std::vector<flightrec::FrFinding>& findings, std::string& out);
std::string FlightRecorderText(const ScanResult& scan, const Diagnosis& d);
// An incident's stable id (the report's incidents[].id, "inc-" and 12 hex
// digits): a hash of its reference and of where its first initiating line
// is (source, line), or, for an inferred incident without a line, of its
// suspect (host, rank). The same in every re-diagnosis of growing logs.
std::string IncidentIdFor(std::string_view reference, std::string_view source, uint64_t line,
                          std::string_view host, int64_t rank, bool inferred);
std::string IncidentId(const Ruleset& rs, const ScanResult& scan, const Incident& inc);

// The incident's action as one line of text: "restart without node017
// (GPU 0000:3b:00.0)", "stop", "unknown (missing: ...)".
std::string ActionSummary(const Action& a);

// A time as JSON: an RFC 3339 string in UTC, or null when unknown.
void AppendTime(std::string& out, int64_t us);

// "0-7,9,12-15"
std::string RankRanges(const std::vector<int64_t>& sorted_ranks);

// The rule catalog as JSON: every rule's summary, or one rule's full entry.
std::string RulesListJson(const Ruleset& rs);
std::string RuleJson(const Ruleset& rs, size_t rule_index);
std::string RuleText(const Ruleset& rs, size_t rule_index);

}  // namespace faultline

#endif  // FAULTLINE_REPORT_REPORT_H_
