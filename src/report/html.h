// The HTML incident report: one self-contained page (inline CSS, SVG and a
// few lines of script for the timeline's zoom; nothing fetched from the
// network, and a Content-Security-Policy that forbids it) with the primary
// incident, its initiating evidence, fix and verify, collateral clusters,
// ignored lines and why, missing facts, input errors, clock offsets, and a
// timeline of ranks by time. Everything on it comes from the report data;
// log lines and file names are hostile input and every byte of them is
// escaped (control and bidi characters shown, not obeyed).
//
// The timeline has one row per rank grouped under its host while that fits
// (kMaxRankRows); beyond it, one heat-strip row per host, so a 1,024-rank job
// stays a page a person can read (and a file of bounded size: cells are
// binned, never one element per evidence record).
//
// Thread-safety: pure functions.
#ifndef FAULTLINE_REPORT_HTML_H_
#define FAULTLINE_REPORT_HTML_H_

#include <string>
#include <string_view>

#include "correlate/diagnosis.h"
#include "evidence/evidence.h"
#include "ruleset/ruleset.h"

namespace faultline {

// The whole page. Deterministic: the same report gives the same bytes (no
// generation time, no scan duration), so every binding's page is the CLI's.
std::string ReportHtml(const Ruleset& rs, const ScanResult& scan, const Diagnosis& d);

// Appends s as HTML text, also safe inside a double-quoted attribute:
// & < > " ' as references; C0 controls (but tab and newline) and DEL as
// their visible Control Pictures (U+2400..); invalid UTF-8, C1 controls and
// noncharacters as U+FFFD; bidirectional overrides and isolates as
// "[U+202E]" so a log line cannot reorder what is shown around it.
void AppendHtmlText(std::string& out, std::string_view s);

}  // namespace faultline

#endif  // FAULTLINE_REPORT_HTML_H_
