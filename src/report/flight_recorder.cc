// The report's flight_recorder section (schema 1.3): the NCCL Flight
// Recorder dumps read, the analysis across them per process group, and the
// findings an incident rests on; JSON and text.
#include <algorithm>

#include "report/report.h"
#include "util/strings.h"
#include "util/utf8.h"

namespace faultline {
namespace {

using flightrec::FrFinding;
using flightrec::FrGroupReport;

void AppendRanks(std::string& out, const char* key, const std::vector<int64_t>& ranks) {
  out += StrCat(",\"", key, "\":[", StrJoin(ranks, ","), "]");
}

void AppendDumpJson(const flightrec::FrDump& dump, std::string& out) {
  out += '{';
  AppendSourceName(out, "source", dump.source);
  out += ",\"rank\":";
  out += dump.rank >= 0 ? StrCat(dump.rank) : "null";
  out += ",\"rank_source\":";
  AppendJsonString(out, flightrec::RankSourceName(dump.rank_source));
  out += ",\"format\":";
  AppendJsonString(out, flightrec::DumpFormatName(dump.format));
  out += ",\"version\":";
  AppendJsonString(out, dump.version);
  if (!dump.comm_lib_version.empty()) {
    out += ",\"comm_lib_version\":";
    AppendJsonString(out, dump.comm_lib_version);
  }
  out += StrCat(",\"entries\":", dump.entries.size(),
                ",\"wrapped\":", dump.wrapped ? "true" : "false", "}");
}

void AppendGroupJson(const FrGroupReport& g, std::string& out) {
  out += "{\"name\":";
  AppendJsonString(out, g.name);
  out += ",\"desc\":";
  AppendJsonString(out, g.desc);
  out += StrCat(",\"size\":", g.members.size(), ",\"dumped\":", g.dumped.size());
  AppendRanks(out, "no_dump", g.no_dump);
  AppendRanks(out, "unknown", g.unknown);
  out += StrCat(",\"lowest_last_seq\":", g.lowest_last_seq,
                ",\"highest_last_seq\":", g.highest_last_seq, ",\"wavefront\":");
  if (g.wavefront) {
    out += StrCat("{\"seq\":", *g.wavefront, ",\"op\":");
    AppendJsonString(out, g.wavefront_op);
    AppendRanks(out, "missing", g.missing);
    out += '}';
  } else {
    out += "null";
  }
  out += ",\"stalled\":";
  if (g.stalled_seq) {
    out += StrCat("{\"seq\":", *g.stalled_seq, ",\"op\":");
    AppendJsonString(out, g.stalled_op);
    AppendRanks(out, "not_completed", g.not_completed);
    out += '}';
  } else {
    out += "null";
  }
  out += ",\"mismatches\":[";
  for (size_t i = 0; i < g.mismatches.size(); ++i) {
    const flightrec::FrMismatch& m = g.mismatches[i];
    out += StrCat(i ? "," : "", "{\"seq\":", m.seq, ",\"field\":");
    AppendJsonString(out, m.field);
    out += ",\"expected\":";
    AppendJsonString(out, m.expected);
    out += ",\"ranks\":[";
    for (size_t k = 0; k < m.odd.size(); ++k) {
      out += StrCat(k ? "," : "", "{\"rank\":", m.odd[k].rank, ",\"got\":");
      AppendJsonString(out, m.odd[k].got);
      out += '}';
    }
    out += "]}";
  }
  out += "]}";
}

// Groups worth a line of text: something happened there.
bool Notable(const FrGroupReport& g) {
  return g.wavefront || g.stalled_seq || !g.mismatches.empty() || !g.no_dump.empty();
}

}  // namespace

void AppendFrFindingsJson(const std::vector<FrFinding>& findings, std::string& out) {
  out += '[';
  for (size_t i = 0; i < findings.size(); ++i) {
    const FrFinding& f = findings[i];
    out += i ? ",{\"kind\":" : "{\"kind\":";
    AppendJsonString(out, flightrec::FrFindingKindName(f.kind));
    out += StrCat(",\"rank\":", f.rank, ",\"group\":");
    AppendJsonString(out, f.group);
    out += ",\"group_desc\":";
    AppendJsonString(out, f.group_desc);
    out += StrCat(",\"seq\":", f.seq, ",\"op\":");
    AppendJsonString(out, f.op);
    out += ",\"detail\":";
    AppendJsonString(out, f.detail);
    out += ',';
    if (f.source.empty()) {
      out += "\"source\":null";
    } else {
      AppendSourceName(out, "source", f.source);
    }
    out += '}';
  }
  out += ']';
}

void AppendFlightRecorderJson(const ScanResult& scan, const Diagnosis& d, std::string& out) {
  if (scan.flight_recorder.empty()) return;
  out += ",\"flight_recorder\":{\"dumps\":[";
  for (size_t i = 0; i < scan.flight_recorder.size(); ++i) {
    if (i) out += ',';
    AppendDumpJson(scan.flight_recorder[i], out);
  }
  out += "],\"groups\":[";
  for (size_t i = 0; i < d.flight_recorder.groups.size(); ++i) {
    if (i) out += ',';
    AppendGroupJson(d.flight_recorder.groups[i], out);
  }
  out += ']';
  AppendRanks(out, "suspects", d.flight_recorder_suspects);
  out += ",\"notes\":[";
  for (size_t i = 0; i < d.flight_recorder.notes.size(); ++i) {
    if (i) out += ',';
    AppendJsonString(out, d.flight_recorder.notes[i]);
  }
  out += "]}";
}

std::string FlightRecorderText(const ScanResult& scan, const Diagnosis& d) {
  if (scan.flight_recorder.empty()) return "";
  const auto& a = d.flight_recorder;
  std::vector<std::string> versions;
  for (const auto& dump : scan.flight_recorder) {
    std::string v = StrCat(dump.version, " ", flightrec::DumpFormatName(dump.format));
    if (std::find(versions.begin(), versions.end(), v) == versions.end()) versions.push_back(v);
  }
  std::string out = StrCat("\nflight recorder: ", scan.flight_recorder.size(), " dump(s) (",
                           StrJoin(versions, ", "), "), ", a.groups.size(), " process group(s)\n");
  size_t quiet = 0;
  for (const FrGroupReport& g : a.groups) {
    if (!Notable(g)) {
      ++quiet;
      continue;
    }
    out += StrCat("  group ", g.name, g.desc.empty() ? "" : StrCat(" (", g.desc, ")"), ", ",
                  g.members.size(), " ranks, last collective #", g.lowest_last_seq, "..#",
                  g.highest_last_seq, "\n");
    if (g.wavefront) {
      out +=
          StrCat("    wavefront: #", *g.wavefront, " (", g.wavefront_op, "), never entered by rank",
                 g.missing.size() > 1 ? "s " : " ", RankRanges(g.missing), "\n");
    }
    if (g.stalled_seq) {
      out += StrCat("    stalled: #", *g.stalled_seq, " (", g.stalled_op,
                    ") entered by all, not completed on ", RankRanges(g.not_completed), "\n");
    }
    if (!g.no_dump.empty())
      out += StrCat("    no dump: rank", g.no_dump.size() > 1 ? "s " : " ", RankRanges(g.no_dump),
                    "\n");
    for (const flightrec::FrMismatch& m : g.mismatches) {
      std::vector<std::string> odd;
      for (size_t k = 0; k < m.odd.size() && k < 8; ++k) {
        odd.push_back(StrCat("rank ", m.odd[k].rank, " ", m.odd[k].got));
      }
      if (m.odd.size() > 8) odd.push_back(StrCat(m.odd.size() - 8, " more"));
      out += StrCat("    mismatch at #", m.seq, ": ", m.field, " ", m.expected, " expected; ",
                    StrJoin(odd, ", "), "\n");
    }
  }
  if (quiet)
    out += StrCat("  ", quiet, " other group(s): every dumped rank at the same collective\n");
  if (!d.flight_recorder_suspects.empty()) {
    out += StrCat("  suspects: rank", d.flight_recorder_suspects.size() > 1 ? "s " : " ",
                  StrJoin(d.flight_recorder_suspects, ", "), "\n");
  }
  for (const std::string& n : a.notes) out += StrCat("  note: ", EscapeControls(n), "\n");
  return out;
}

}  // namespace faultline
