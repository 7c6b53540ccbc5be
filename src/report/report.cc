// JSON and text writers. The JSON is written by hand: the schema is small,
// field order stays stable for diffing, and no DOM is built for a report
// that may carry thousands of evidence records.
#include "report/report.h"

#include <cmath>
#include <cstdio>

#include "correlate/action.h"
#include "evidence/distinct.h"
#include "ruleset/pattern_check.h"
#include "report/attempts.h"
#include "util/fl_status.h"
#include "util/strings.h"
#include "util/utf8.h"

namespace faultline {

using flightrec::FrFinding;
void AppendTime(std::string& out, int64_t us) {
  if (us == kNoTime) {
    out += "null";
  } else {
    AppendJsonString(out, FormatRfc3339(us));
  }
}

namespace {

void AppendNumber(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "0";
    return;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  out += buf;
}

void AppendStrings(std::string& out, const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* v) {
  out += '[';
  for (flatbuffers::uoffset_t i = 0; v && i < v->size(); ++i) {
    if (i) out += ',';
    AppendJsonString(out, v->Get(i)->string_view());
  }
  out += ']';
}

std::string_view Str(const flatbuffers::String* s) { return s ? s->string_view() : std::string_view(); }

const char* RuleId(const Ruleset& rs, uint32_t rule) { return rs.rule(rule)->id()->c_str(); }

}  // namespace


std::string IncidentIdFor(std::string_view reference, std::string_view source, uint64_t line,
                          std::string_view host, int64_t rank, bool inferred) {
  std::string key = StrCat(reference, "\n");
  if (!inferred) {
    StrAppend(&key, source, "\n", line);
  } else {
    StrAppend(&key, "inferred\n", host, "\n", rank);
  }
  // The offset basis `faultline watch` used before the id moved here: ids
  // stay what they were.
  char buf[32];
  std::snprintf(buf, sizeof buf, "inc-%012llx",
                static_cast<unsigned long long>(Fnv1a64(key, kLegacyFnvOffset) & 0xffffffffffffull));
  return buf;
}

std::string IncidentId(const Ruleset& rs, const ScanResult& scan, const Incident& inc) {
  std::string_view reference = Str(rs.rule(inc.rule)->reference());
  if (inc.initiating.empty()) return IncidentIdFor(reference, "", 0, inc.host, inc.rank, true);
  const Evidence& ev = inc.initiating.front();
  std::string_view source;
  if (ev.source < scan.sources.size()) source = scan.sources[ev.source].name;
  return IncidentIdFor(reference, source, ev.line, "", -1, false);
}

std::string ActionSummary(const Action& a) {
  std::string out = ActionKindName(a.kind);
  if (a.kind == ActionKind::kRestartExcluding) {
    out = "restart without";
    if (!a.exclude_hosts.empty()) StrAppend(&out, " ", StrJoin(a.exclude_hosts, ", "));
    if (!a.exclude_gpus.empty()) {
      StrAppend(&out, a.exclude_hosts.empty() ? " GPU " : " (GPU ", StrJoin(a.exclude_gpus, ", "),
                a.exclude_hosts.empty() ? "" : ")");
    }
  }
  return out;
}

std::string RankRanges(const std::vector<int64_t>& r) {
  std::string out;
  for (size_t i = 0; i < r.size();) {
    size_t j = i;
    while (j + 1 < r.size() && r[j + 1] == r[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += StrCat(r[i]);
    if (j > i) out += StrCat(j == i + 1 ? "," : "-", r[j]);
    i = j + 1;
  }
  return out;
}

// "<key>":"<name>", plus "<key>_escaped" when the name is not UTF-8: JSON
// strings are Unicode, so the display form has U+FFFD where the name has
// bytes that are not, and only the escaped form (EscapeBytes) maps back to
// the file.
void AppendSourceName(std::string& out, std::string_view key, std::string_view name) {
  out += '"';
  out += key;
  out += "\":";
  AppendJsonString(out, name);
  if (!IsValidUtf8(name)) {
    out += ",\"";
    out += key;
    out += "_escaped\":";
    AppendJsonString(out, EscapeBytes(name));
  }
}

std::string EvidenceJson(const Ruleset& rs, const ScanResult& scan, const Evidence& ev) {
  std::string out;
  out.reserve(256 + ev.text.size());
  out += '{';
  AppendSourceName(out, "source", ev.source < scan.sources.size() ? scan.sources[ev.source].name : "");
  out += StrCat(",\"line\":", ev.line, ",\"offset\":", ev.offset, ",\"time\":");
  AppendTime(out, ev.time_us);
  out += ",\"time_source\":";
  AppendJsonString(out, ev.time_us == kNoTime ? "none" : TimeSourceName(ev.time_source));
  out += ",\"rank\":";
  out += ev.rank >= 0 ? StrCat(ev.rank) : "null";
  out += ",\"host\":";
  if (ev.host.empty()) out += "null"; else AppendJsonString(out, ev.host);
  out += ",\"rule\":";
  AppendJsonString(out, RuleId(rs, ev.rule));
  out += ",\"signal\":";
  AppendJsonString(out, Str(rs.signal(ev.signal).signal->id()));
  out += ",\"text\":";
  AppendJsonString(out, ev.text);
  out += ",\"fields\":";
  out += EvidenceFieldsJson(ev);
  out += "}";
  return out;
}

std::string EvidenceFieldsJson(const Evidence& ev) {
  std::string out = "{";
  bool first = true;
  auto field = [&](std::string_view k, std::string_view v) {
    if (!first) out += ',';
    first = false;
    AppendJsonString(out, k);
    out += ':';
    AppendJsonString(out, v);
  };
  for (const auto& [k, v] : ev.fields) field(k, v);
  if (!ev.gpu.empty() && !ev.Field("gpu")) field("gpu", ev.gpu);
  if (ev.monotonic_s && !ev.Field("monotonic_s")) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6f", *ev.monotonic_s);
    field("monotonic_s", buf);
  }
  if (ev.pid >= 0 && !ev.Field("pid")) field("pid", StrCat(ev.pid));
  out += "}";
  return out;
}


std::string EvidenceJsonLines(const Ruleset& rs, const ScanResult& scan) {
  std::string out;
  for (const Evidence& ev : scan.evidence) {
    out += EvidenceJson(rs, scan, ev);
    out += '\n';
  }
  return out;
}

std::string CapsJson(const ScanResult& scan) {
  const ScanCaps c = CapsOf(scan);
  auto b = [](bool v) { return v ? "true" : "false"; };
  return StrCat("{\"truncated\":", b(c.any()), ",\"evidence\":{\"kept\":", c.evidence_kept,
                ",\"matches\":", c.matches, ",\"truncated\":", b(c.evidence_truncated),
                ",\"metric_points\":", c.metric_points, "},\"ranks\":{\"seen\":", c.ranks_seen, ",\"seen_estimated\":", b(c.ranks_truncated),
                ",\"kept\":", c.ranks_kept, ",\"truncated\":", b(c.ranks_truncated), ",\"limit\":", kMaxKeptRanks,
                "},\"hosts\":{\"seen\":", c.hosts_seen, ",\"seen_estimated\":", b(c.hosts_truncated),
                ",\"kept\":", c.hosts_kept, ",\"truncated\":", b(c.hosts_truncated), ",\"limit\":", kMaxKeptHosts,
                "},\"topology_truncated\":", b(c.topology_truncated),
                ",\"metric_series_truncated\":", b(c.metric_series_truncated), "}");
}

ScanCaps CapsOf(const ScanResult& scan) {
  ScanCaps c;
  c.matches = scan.matches;
  c.evidence_kept = scan.evidence.size();
  c.metric_points = scan.metric_points;
  for (const auto& [rule, n] : scan.dropped) c.evidence_truncated = c.evidence_truncated || n > 0;
  c.ranks_seen = SeenCount(scan.distinct_ranks);
  c.ranks_kept = scan.distinct_ranks.kept.size();
  c.ranks_truncated = scan.distinct_ranks.truncated;
  c.hosts_seen = SeenCount(scan.distinct_hosts);
  c.hosts_kept = scan.distinct_hosts.kept.size();
  c.hosts_truncated = scan.distinct_hosts.truncated;
  c.topology_truncated = scan.topology_truncated;
  c.metric_series_truncated = scan.metric_series_truncated;
  return c;
}

namespace {

// The report's sections, in the order of schema/report.schema.json.
void AppendInputJson(const ScanResult& scan, const Diagnosis& d, std::string& out) {
  out += StrCat(",\"input\":{\"sources\":", scan.sources.size(), ",\"bytes\":", scan.bytes,
                ",\"lines\":", scan.lines, ",\"seconds\":");
  AppendNumber(out, scan.seconds);
  out += StrCat(",\"ranks\":", d.ranks, ",\"hosts\":", d.hosts, ",\"matches\":", scan.matches,
                ",\"evidence\":", scan.evidence.size());
  out += ",\"errors\":[";
  for (size_t i = 0; i < scan.errors.size(); ++i) {
    if (i) out += ',';
    out += '{';
    AppendSourceName(out, "source", scan.errors[i].source);
    out += ",\"message\":";
    AppendJsonString(out, scan.errors[i].message);
    out += ",\"status\":";
    AppendJsonString(out, StatusName(scan.errors[i].code));
    out += '}';
  }
  out += "],\"caps\":";
  out += CapsJson(scan);
  out += ",\"warnings\":[";
  for (size_t i = 0; i < scan.warnings.size(); ++i) {
    if (i) out += ',';
    out += '{';
    AppendSourceName(out, "source", scan.warnings[i].source);
    out += ",\"message\":";
    AppendJsonString(out, scan.warnings[i].message);
    out += '}';
  }
  out += ']';
  if (d.job.Stated()) {  // what the caller said of the job's end
    out += ",\"job\":{\"state\":";
    if (d.job.state == JobState::kUnknown) out += "null";
    else AppendJsonString(out, JobStateName(d.job.state));
    out += ",\"exit_status\":";
    out += d.job.has_exit_status ? std::to_string(d.job.exit_status) : std::string("null");
    out += '}';
  }
  out += '}';
}

void AppendWindowJson(const Diagnosis& d, std::string& out) {
  out += ",\"job_window\":{\"start\":";
  AppendTime(out, d.job_start_us);
  out += ",\"end\":";
  AppendTime(out, d.job_end_us);
  out += '}';
  out += ",\"clock_offsets\":{";
  {
    bool first = true;
    for (const auto& [h, off] : d.clock_offsets_s) {
      if (!first) out += ',';
      first = false;
      AppendJsonString(out, h);
      out += ":{\"seconds\":";
      AppendNumber(out, off);
      out += ",\"source\":";
      auto it = d.clock_offset_source.find(h);
      AppendJsonString(out, it == d.clock_offset_source.end() ? "estimated" : it->second);
      out += '}';
    }
  }
  out += '}';
}

void AppendCollateralJson(const Ruleset& rs, const ScanResult& scan, const Collateral& c, std::string& out) {
  out += "{\"rule\":";
  AppendJsonString(out, RuleId(rs, c.rule));
  out += ",\"reference\":";
  AppendJsonString(out, Str(rs.rule(c.rule)->reference()));
  out += StrCat(",\"count\":", c.count, ",\"ranks\":[");
  for (size_t j = 0; j < c.ranks.size(); ++j) out += StrCat(j ? "," : "", c.ranks[j]);
  out += "],\"hosts\":[";
  for (size_t j = 0; j < c.hosts.size(); ++j) {
    if (j) out += ',';
    AppendJsonString(out, c.hosts[j]);
  }
  out += "],\"first_time\":";
  AppendTime(out, c.first_time_us);
  out += ",\"last_time\":";
  AppendTime(out, c.last_time_us);
  out += ",\"sample\":";
  out += EvidenceJson(rs, scan, c.sample);
  out += '}';
}

void AppendStringArray(std::string& out, const std::vector<std::string>& v) {
  out += '[';
  for (size_t k = 0; k < v.size(); ++k) {
    if (k) out += ',';
    AppendJsonString(out, v[k]);
  }
  out += ']';
}

void AppendActionJson(const Action& a, std::string& out) {
  out += ",\"action\":{\"kind\":";
  AppendJsonString(out, ActionKindName(a.kind));
  out += ",\"exclude_hosts\":";
  AppendStringArray(out, a.exclude_hosts);
  out += ",\"exclude_gpus\":";
  AppendStringArray(out, a.exclude_gpus);
  out += ",\"reason\":";
  AppendJsonString(out, a.reason);
  out += ",\"set_by\":";
  AppendJsonString(out, a.set_by);
  if (a.kind == ActionKind::kUnknown) {
    out += ",\"missing_fact\":";
    AppendJsonString(out, a.missing_fact);
  }
  out += '}';
}

void AppendIncidentJson(const Ruleset& rs, const ScanResult& scan, const Diagnosis& d, const Incident& inc,
                        std::string& out) {
  const fb::Rule* rule = rs.rule(inc.rule);
  out += "{\"id\":";
  AppendJsonString(out, IncidentId(rs, scan, inc));
  out += ",\"rule\":";
  AppendJsonString(out, Str(rule->id()));
  out += ",\"reference\":";
  AppendJsonString(out, Str(rule->reference()));
  out += ",\"title\":";
  AppendJsonString(out, Str(rule->title()));
  out += ",\"category\":";
  AppendJsonString(out, Str(rule->category()));
  out += ",\"layer\":";
  AppendJsonString(out, LayerName(rule->layer()));
  out += ",\"confidence\":";
  AppendNumber(out, inc.confidence);
  out += ",\"initiating\":{\"rank\":";
  out += inc.rank >= 0 ? StrCat(inc.rank) : "null";
  out += ",\"host\":";
  if (inc.host.empty()) out += "null"; else AppendJsonString(out, inc.host);
  out += ",\"gpu\":";
  if (inc.gpu.empty()) out += "null"; else AppendJsonString(out, inc.gpu);
  if (!inc.hca.empty()) {
    out += ",\"hca\":";
    AppendJsonString(out, inc.hca);
  }
  out += ",\"time\":";
  AppendTime(out, inc.time_us);
  out += inc.inferred ? ",\"inferred\":true" : ",\"inferred\":false";
  if (inc.survived) out += ",\"survived\":true";
  out += ",\"suspects\":[";
  for (size_t k = 0; k < inc.suspects.size(); ++k) out += StrCat(k ? "," : "", inc.suspects[k]);
  out += "],\"evidence\":[";
  for (size_t k = 0; k < inc.initiating.size(); ++k) {
    if (k) out += ',';
    out += EvidenceJson(rs, scan, inc.initiating[k]);
  }
  out += "]},\"collateral\":[";
  for (size_t k = 0; k < inc.collateral.size(); ++k) {
    if (k) out += ',';
    AppendCollateralJson(rs, scan, inc.collateral[k], out);
  }
  out += "],\"fix\":";
  AppendJsonString(out, inc.fix);
  out += ",\"verify\":";
  AppendJsonString(out, inc.verify);
  out += ",\"missing_facts\":[";
  for (size_t k = 0; k < inc.missing_facts.size(); ++k) {
    if (k) out += ',';
    AppendJsonString(out, inc.missing_facts[k]);
  }
  out += "],\"explanation\":";
  AppendJsonString(out, inc.explanation);
  if (!inc.detector.empty()) {
    out += ",\"detector\":";
    AppendJsonString(out, inc.detector);
  }
  if (!inc.flight_recorder.empty()) {
    out += ",\"flight_recorder\":";
    AppendFrFindingsJson(inc.flight_recorder, out);
  }
  AppendActionJson(inc.action, out);
  AppendIncidentHistoryJson(d, inc, out);
  out += ",\"timeline\":[";
  for (size_t k = 0; k < inc.timeline.size(); ++k) {
    if (k) out += ',';
    out += EvidenceJson(rs, scan, inc.timeline[k]);
  }
  out += "]}";
}

void AppendIgnoredJson(const Ruleset& rs, const ScanResult& scan, const Diagnosis& d, std::string& out) {
  for (size_t i = 0; i < d.ignored.size(); ++i) {
    const Ignored& ig = d.ignored[i];
    if (i) out += ',';
    out += "{\"rule\":";
    AppendJsonString(out, RuleId(rs, ig.rule));
    out += ",\"reason\":";
    AppendJsonString(out, ig.reason);
    out += StrCat(",\"count\":", ig.count, ",\"sample\":");
    out += EvidenceJson(rs, scan, ig.sample);
    out += '}';
  }
}

void AppendLimitsJson(const Diagnosis& d, std::string& out) {
  if (d.limits.empty()) return;
  out += ",\"limits\":[";
  for (size_t i = 0; i < d.limits.size(); ++i) {
    if (i) out += ',';
    AppendJsonString(out, d.limits[i]);
  }
  out += ']';
}

void AppendExpectationJson(const Diagnosis& d, std::string& out) {
  if (d.expectation.gpus > 0) {
    out += ",\"expectation\":{\"gpus\":";
    AppendNumber(out, d.expectation.gpus);
    out += ",\"hours\":";
    AppendNumber(out, d.expectation.hours);
    out += ",\"expected_hardware_interruptions\":";
    AppendNumber(out, d.expectation.expected_interruptions);
    out += ",\"basis\":[";
    for (size_t k = 0; k < d.expectation.basis.size(); ++k) {
      if (k) out += ',';
      AppendJsonString(out, d.expectation.basis[k]);
    }
    out += "]}";
  }
}

}  // namespace

std::string ReportJson(const Ruleset& rs, const ScanResult& scan, const Diagnosis& d) {
  std::string out;
  // The version of schema/report.schema.json this report follows ("x-schema-version"
  // there); tests/cli checks that the two agree.
  out += "{\"schema_version\":\"1.4\",\"faultline_version\":";
  AppendJsonString(out, kVersionString);
  out += ",\"ruleset\":{\"name\":";
  AppendJsonString(out, rs.name());
  out += ",\"version\":";
  AppendJsonString(out, rs.version());
  out += StrCat(",\"rules\":", rs.rule_count(), "}");
  AppendInputJson(scan, d, out);
  AppendWindowJson(d, out);
  out += ",\"incidents\":[";
  for (size_t i = 0; i < d.incidents.size(); ++i) {
    if (i) out += ',';
    AppendIncidentJson(rs, scan, d, d.incidents[i], out);
  }
  out += "],\"ignored\":[";
  AppendIgnoredJson(rs, scan, d, out);
  out += ']';
  AppendAttemptsJson(rs, d, out);
  AppendExpectationJson(d, out);
  AppendLimitsJson(d, out);
  AppendFlightRecorderJson(scan, d, out);
  out += "}\n";
  return out;
}

std::string ReportText(const Ruleset& rs, const ScanResult& scan, const Diagnosis& d) {
  std::string out;
  auto where = [&](const Evidence& ev) {
    return StrCat(EscapeControls(ev.source < scan.sources.size() ? scan.sources[ev.source].name : "?"), ":",
                  ev.line);
  };
  out += StrCat("faultline ", kVersionString, " - ", scan.sources.size(), " source(s), ",
                scan.lines, " lines, ", scan.bytes, " bytes, ", d.ranks, " rank(s), ", d.hosts,
                " host(s)\n");
  if (d.job.Stated()) {
    out += StrCat("job end as stated: ", d.job.Text(), "\n");
  }
  if (d.job_start_us != kNoTime) {
    out += StrCat("job window: ", FormatRfc3339(d.job_start_us), " .. ",
                  d.job_end_us == kNoTime ? "?" : FormatRfc3339(d.job_end_us), "\n");
  }
  for (const auto& [h, off] : d.clock_offsets_s) {
    auto it = d.clock_offset_source.find(h);
    out += StrCat("clock offset: ", h, " ", off > 0 ? "+" : "", off, " s (",
                  it == d.clock_offset_source.end() ? "estimated" : it->second, ")\n");
  }
  // Messages name files, and a file name may hold a newline: escaped, so
  // that it cannot forge report lines.
  for (const InputError& e : scan.errors) out += StrCat("input error: ", EscapeControls(e.message), "\n");
  for (const InputError& w : scan.warnings) out += StrCat("input warning: ", EscapeControls(w.message), "\n");
  // What the counts below cover, when something was capped.
  if (const ScanCaps c = CapsOf(scan); c.any()) {
    std::vector<std::string> parts;
    if (c.evidence_truncated) {
      parts.push_back(StrCat("evidence: ", c.evidence_kept, " records kept of ", c.matches, " matches (all counted",
                             c.metric_points > 0 ? StrCat("; ", c.metric_points, " metric lines as series points")
                                                 : std::string(),
                             ")"));
    }
    if (c.ranks_truncated) {
      parts.push_back(StrCat("ranks: about ", c.ranks_seen, " seen, per-rank counts for the first ", c.ranks_kept));
    }
    if (c.hosts_truncated) {
      parts.push_back(StrCat("hosts: about ", c.hosts_seen, " seen, per-host counts for the first ", c.hosts_kept));
    }
    if (c.topology_truncated) parts.push_back(StrCat("topology: the first ", kMaxTopologyRecords, " records"));
    if (c.metric_series_truncated) parts.push_back(StrCat("metrics: the first ", kMaxMetricSeries, " series"));
    out += StrCat("capped: ", StrJoin(parts, "; "), "\n");
  }
  for (const std::string& l : d.limits) out += StrCat("cannot be known: ", l, "\n");
  if (d.incidents.empty()) {
    out += "\nNo incident: nothing in the catalog applies to these logs.\n";
  }
  for (size_t i = 0; i < d.incidents.size(); ++i) {
    const Incident& inc = d.incidents[i];
    const fb::Rule* rule = rs.rule(inc.rule);
    out += i == 0 ? "\n== PRIMARY DIAGNOSIS ==\n" : StrCat("\n== incident ", i + 1, " ==\n");
    out += StrCat(Str(rule->title()), "  [", Str(rule->id()), ", confidence ",
                  std::round(inc.confidence * 100), "%]\n");
    out += StrCat("reference: ", Str(rule->reference()), "\n");
    out += StrCat(inc.inferred ? "suspect: " : "initiating: ",
                  inc.rank >= 0 ? StrCat("rank ", inc.rank) : std::string("rank ?"),
                  inc.host.empty() ? "" : StrCat(" on ", inc.host),
                  inc.gpu.empty() ? "" : StrCat(", GPU ", inc.gpu),
                  inc.hca.empty() ? "" : StrCat(", HCA ", inc.hca),
                  inc.time_us == kNoTime ? "" : StrCat(", at ", FormatRfc3339(inc.time_us)),
                  inc.inferred ? " (inferred)" : "", "\n");
    out += IncidentHistoryText(d, inc);
    out += StrCat("why: ", inc.explanation, "\n");
    if (!inc.initiating.empty()) out += "evidence:\n";
    for (size_t k = 0; k < inc.initiating.size() && k < 5; ++k) {
      out += StrCat("  ", where(inc.initiating[k]), ": ", inc.initiating[k].text.substr(0, 300), "\n");
    }
    if (inc.initiating.size() > 5) out += StrCat("  ... ", inc.initiating.size() - 5, " more\n");
    if (!inc.collateral.empty()) out += "collateral:\n";
    for (const Collateral& c : inc.collateral) {
      out += StrCat("  ", c.count, " x ", RuleId(rs, c.rule));
      if (!c.ranks.empty()) out += StrCat(" on rank", c.ranks.size() > 1 ? "s " : " ", RankRanges(c.ranks));
      if (!c.hosts.empty()) out += StrCat(" (", c.hosts.size(), " host", c.hosts.size() > 1 ? "s" : "", ")");
      if (c.first_time_us != kNoTime) {
        out += StrCat(", ", FormatRfc3339(c.first_time_us));
        if (c.last_time_us != c.first_time_us && c.last_time_us != kNoTime) {
          out += StrCat(" .. ", FormatRfc3339(c.last_time_us));
        }
      }
      out += StrCat("\n    e.g. ", where(c.sample), ": ", c.sample.text.substr(0, 200), "\n");
    }
    out += StrCat("fix: ", inc.fix, "\n");
    out += StrCat("verify: ", inc.verify, "\n");
    for (const FrFinding& f : inc.flight_recorder) {
      out += StrCat(&f == &inc.flight_recorder.front() ? "flight recorder:\n" : "", "  ",
                    EscapeControls(f.source.empty() ? "(no dump)" : f.source), ": ", f.detail, "\n");
    }
    for (const std::string& m : inc.missing_facts) out += StrCat("missing fact: ", m, "\n");
    out += StrCat("action: ", ActionSummary(inc.action), " - ", inc.action.reason, "\n");
  }
  out += FlightRecorderText(scan, d);
  out += AttemptsText(rs, d);
  if (!d.ignored.empty()) {
    out += "\nignored:\n";
    for (const Ignored& ig : d.ignored) {
      out += StrCat("  ", ig.count, " x ", RuleId(rs, ig.rule), ": ", ig.reason, " (e.g. ",
                    where(ig.sample), ")\n");
    }
  }
  if (d.expectation.gpus > 0) {
    out += StrCat("\nexpected hardware interruptions for ", d.expectation.gpus, " GPUs over ",
                  d.expectation.hours, " h: ", d.expectation.expected_interruptions, "\n");
  }
  return out;
}

std::string RulesListJson(const Ruleset& rs) {
  std::string out = "[";
  for (size_t i = 0; i < rs.rule_count(); ++i) {
    const fb::Rule* r = rs.rule(i);
    if (i) out += ',';
    out += "{\"id\":";
    AppendJsonString(out, Str(r->id()));
    out += ",\"title\":";
    AppendJsonString(out, Str(r->title()));
    out += ",\"reference\":";
    AppendJsonString(out, Str(r->reference()));
    out += ",\"category\":";
    AppendJsonString(out, Str(r->category()));
    out += ",\"tags\":";
    AppendStrings(out, r->tags());
    out += ",\"layer\":";
    AppendJsonString(out, LayerName(r->layer()));
    out += StrCat(",\"signals\":", r->signals() ? r->signals()->size() : 0, "}");
  }
  out += "]\n";
  return out;
}

std::string RuleJson(const Ruleset& rs, size_t i) {
  const fb::Rule* r = rs.rule(i);
  std::string out = "{\"id\":";
  AppendJsonString(out, Str(r->id()));
  auto str = [&](const char* k, const flatbuffers::String* v) {
    out += StrCat(",\"", k, "\":");
    AppendJsonString(out, Str(v));
  };
  auto arr = [&](const char* k, const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* v) {
    out += StrCat(",\"", k, "\":");
    AppendStrings(out, v);
  };
  str("reference", r->reference());
  str("title", r->title());
  str("category", r->category());
  arr("tags", r->tags());
  out += ",\"layer\":";
  AppendJsonString(out, LayerName(r->layer()));
  str("summary", r->summary());
  arr("root_cause", r->root_cause());
  out += ",\"symptoms\":[";
  for (flatbuffers::uoffset_t k = 0; r->symptoms() && k < r->symptoms()->size(); ++k) {
    if (k) out += ',';
    out += "{\"symptom\":";
    AppendJsonString(out, Str(r->symptoms()->Get(k)->symptom()));
    out += ",\"why\":";
    AppendJsonString(out, Str(r->symptoms()->Get(k)->why()));
    out += '}';
  }
  out += ']';
  arr("confirm", r->confirm());
  str("fix", r->fix());
  str("verify", r->verify());
  arr("prevention", r->prevention());
  str("fingerprint", r->fingerprint());
  arr("related", r->related());
  arr("sources", r->sources());
  str("missing_fact", r->missing_fact());
  out += ",\"weight\":";
  AppendNumber(out, r->weight());
  if (const fb::ActionDecl* a = r->action()) {
    out += ",\"action\":{\"default\":";
    AppendJsonString(out, ActionDefaultName(a->default_kind()));
    auto opt = [&](const char* k, const char* v) {
      if (!*v) return;
      out += StrCat(",\"", k, "\":");
      AppendJsonString(out, v);
    };
    opt("drain", DrainName(a->drain()));
    opt("stop_on_recurrence", RecurrenceScopeName(a->stop_on_recurrence()));
    opt("drain_on_recurrence", DrainName(a->drain_on_recurrence()));
    str("why", a->why());
    out += '}';
  }
  out += ",\"signals\":[";
  for (flatbuffers::uoffset_t k = 0; r->signals() && k < r->signals()->size(); ++k) {
    const fb::Signal* s = r->signals()->Get(k);
    if (k) out += ',';
    out += "{\"id\":";
    AppendJsonString(out, Str(s->id()));
    out += ",\"pattern\":";
    AppendJsonString(out, Str(s->pattern()));
    out += ",\"extract\":";
    AppendJsonString(out, Str(s->extract()));
    if (s->extract_more() && s->extract_more()->size() > 0) {
      // Kept a string for readers of `extract`; the further extractors apart.
      out += ",\"extract_more\":";
      AppendStrings(out, s->extract_more());
    }
    out += ",\"role\":";
    AppendJsonString(out, RoleName(s->role()));
    out += ",\"examples\":";
    AppendStrings(out, s->examples());
    out += ",\"counter_examples\":";
    AppendStrings(out, s->counter_examples());
    out += '}';
  }
  out += "],\"explains\":[";
  for (flatbuffers::uoffset_t k = 0; r->explains() && k < r->explains()->size(); ++k) {
    const fb::Edge* e = r->explains()->Get(k);
    if (k) out += ',';
    out += "{\"rule\":";
    AppendJsonString(out, Str(e->rule()));
    out += ",\"min_lag_s\":";
    AppendNumber(out, e->min_lag_s());
    out += ",\"max_lag_s\":";
    AppendNumber(out, e->max_lag_s());
    out += '}';
  }
  out += ']';
  if (const fb::Conditions* c = r->conditions()) {
    out += ",\"conditions\":{";
    bool first = true;
    auto num = [&](const char* k, double v) {
      if (v < 0) return;
      out += StrCat(first ? "" : ",", "\"", k, "\":");
      first = false;
      AppendNumber(out, v);
    };
    auto s = [&](const char* k, const flatbuffers::String* v) {
      if (!v || v->size() == 0) return;
      out += StrCat(first ? "" : ",", "\"", k, "\":");
      first = false;
      AppendJsonString(out, v->string_view());
    };
    num("min_uptime_days", c->min_uptime_days());
    num("max_uptime_days", c->max_uptime_days());
    s("requires_rule", c->requires_rule());
    s("excludes_rule", c->excludes_rule());
    s("after_rule", c->after_rule());
    s("detector", c->detector());
    out += '}';
  }
  out += "}\n";
  return out;
}

std::string RuleText(const Ruleset& rs, size_t i) {
  const fb::Rule* r = rs.rule(i);
  std::string out;
  auto list = [&](const char* head, const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* v) {
    if (!v || v->size() == 0) return;
    out += StrCat("\n", head, "\n");
    for (const auto* s : *v) out += StrCat("  - ", s->string_view(), "\n");
  };
  out += StrCat(Str(r->title()), "\n", std::string(r->title() ? r->title()->size() : 0, '='), "\n");
  out += StrCat("id: ", Str(r->id()), "\nreference: ", Str(r->reference()), "\ncategory: ",
                Str(r->category()), "  layer: ", LayerName(r->layer()), "\n");
  if (r->tags()) {
    out += "tags:";
    for (const auto* t : *r->tags()) out += StrCat(" #", t->string_view());
    out += "\n";
  }
  out += StrCat("\n", Str(r->summary()), "\n");
  list("Root cause", r->root_cause());
  if (r->symptoms() && r->symptoms()->size()) {
    out += "\nSymptoms and why\n";
    for (const fb::Symptom* s : *r->symptoms()) {
      out += StrCat("  - ", Str(s->symptom()), "\n      why: ", Str(s->why()), "\n");
    }
  }
  list("How to confirm", r->confirm());
  if (const fb::ActionDecl* a = r->action()) {
    out += StrCat("\nAction\n  ", ActionDefaultName(a->default_kind()));
    if (*DrainName(a->drain())) out += StrCat(" (drain the ", DrainName(a->drain()), ")");
    if (*RecurrenceScopeName(a->stop_on_recurrence())) {
      out += StrCat("; stop when it recurs (", RecurrenceScopeName(a->stop_on_recurrence()), ")");
    }
    if (*DrainName(a->drain_on_recurrence())) {
      out += StrCat("; drain the ", DrainName(a->drain_on_recurrence()), " when it recurs there");
    }
    out += StrCat(": ", Str(a->why()), "\n");
  }
  out += StrCat("\nFix\n  ", Str(r->fix()), "\n");
  out += StrCat("\nVerify\n  ", Str(r->verify()), "\n");
  list("Prevention", r->prevention());
  out += StrCat("\nFingerprint to monitor\n  ", Str(r->fingerprint()), "\n");
  list("Related", r->related());
  list("Sources", r->sources());
  if (r->signals() && r->signals()->size()) {
    out += "\nSignals\n";
    for (const fb::Signal* s : *r->signals()) {
      out += StrCat("  ", Str(s->id()), " (", RoleName(s->role()), "): ", Str(s->pattern()), "\n");
    }
  }
  if (r->explains() && r->explains()->size()) {
    out += "\nExplains\n";
    for (const fb::Edge* e : *r->explains()) {
      out += StrCat("  ", Str(e->rule()), " within ", e->min_lag_s(), "..", e->max_lag_s(), " s\n");
    }
  }
  return out;
}

}  // namespace faultline
