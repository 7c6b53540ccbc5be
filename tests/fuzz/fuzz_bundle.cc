// Evidence bundles from another machine: the input is one or more bundles
// (split at kNext) read with ReadBundle, merged with MergeScans, and
// correlated into a report through fl_report_from_bundles, the C ABI the
// Dask path uses. Seeds are real bundles of the fixtures, whole and as byte
// ranges (this binary writes them: FL_FUZZ_WRITE_BUNDLES=DIR fuzz_bundle
// LOG...). Oracles beyond no crash/UB:
//  - ReadBundle and fl_report_from_bundles agree: the report exists iff
//    every bundle reads, and an error names the bundle ("bundle 1: ...");
//  - a bundle that reads is consistent: evidence names a source of the
//    bundle and a signal of its own rule, line >= 1, text and captures
//    valid UTF-8 within the 4096-byte cap, evidence <= matches, signal
//    hits add up to at most the matches;
//  - the merge keeps every scan invariant of fuzz_util.h (order by source
//    and offset, counts), its sources, bytes and lines are the sums of the
//    parts' (ranges of one name become one source);
//  - the report JSON, signal-hits JSON and every evidence JSON line parse,
//    and the report's totals are the merge's.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "evidence/bundle.h"
#include "faultline/faultline.h"
#include "fuzz_util.h"
#include "simdjson.h"

using namespace faultline;

namespace {

constexpr std::string_view kNext = "\n--FLEB-NEXT--\n";

const fl_ruleset* CRules() {
  static fl_ruleset* rs = [] {
    fl_ruleset* r = nullptr;
    fl_error* err = nullptr;
    if (fl_ruleset_load_default(&r, &err) != FL_OK) fuzz::Die("load default", fl_error_message(err));
    return r;
  }();
  return rs;
}

void CheckJson(const char* what, const char* json, size_t len) {
  static simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(json, len).get(doc)) fuzz::Die(what, std::string_view(json, std::min<size_t>(len, 2000)));
}

// One bundle of `path`, or of its bytes [begin, end).
std::string Export(const std::string& path, uint64_t begin, uint64_t end) {
  fl_session* s = nullptr;
  if (fl_session_new(&s, CRules(), nullptr, nullptr) != FL_OK) fuzz::Die("session_new");
  fl_status st = end ? fl_session_add_range(s, path.c_str(), begin, end, 0) : fl_session_add_path(s, path.c_str());
  if (st != FL_OK) fuzz::Die("add", fl_session_last_error(s));
  void* data = nullptr;
  size_t len = 0;
  if (fl_session_export_bundle(s, &data, &len) != FL_OK) fuzz::Die("export", fl_session_last_error(s));
  std::string out(static_cast<char*>(data), len);
  fl_free(data);
  fl_session_free(s);
  return out;
}

// Seed writer: for each log, its whole bundle, its two halves (as two
// bundles of byte ranges), and it with the next log.
void WriteSeeds(const char* dir, int argc, char** argv) {
  std::vector<std::string> logs;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] != '-') logs.push_back(argv[i]);
  }
  for (size_t i = 0; i < logs.size(); ++i) {
    std::ifstream in(logs[i], std::ios::binary | std::ios::ate);
    const uint64_t size = static_cast<uint64_t>(in.tellg());
    const std::string base = std::string(dir) + "/" + std::to_string(i);
    const std::string whole = Export(logs[i], 0, 0);
    fuzz::WriteWholeFile(base + ".whole", whole);
    if (size > 1) {
      fuzz::WriteWholeFile(base + ".halves", Export(logs[i], 0, size / 2) + std::string(kNext) +
                                                 Export(logs[i], size / 2, size));
    }
    if (i + 1 < logs.size()) {
      fuzz::WriteWholeFile(base + ".pair", whole + std::string(kNext) + Export(logs[i + 1], 0, 0));
    }
  }
}

void CheckPart(const Ruleset& rs, const ScanResult& r) {
  FL_FUZZ_CHECK(r.evidence.size() <= r.matches, "more evidence than matches");
  uint64_t hits = 0;
  for (const auto& [g, n] : r.signal_hits) {
    FL_FUZZ_CHECK(g < rs.signal_count(), "signal hit out of range");
    FL_FUZZ_CHECK(!__builtin_add_overflow(hits, n, &hits), "signal hits overflow");
  }
  FL_FUZZ_CHECK(hits <= r.matches, "signal hits exceed matches");
  for (const Evidence& ev : r.evidence) {
    FL_FUZZ_CHECK(ev.source < r.sources.size(), "evidence source out of range");
    FL_FUZZ_CHECK(ev.signal < rs.signal_count() && rs.signal(ev.signal).rule_index == ev.rule,
                  "evidence signal of another rule");
    FL_FUZZ_CHECK(ev.line >= 1, "line 0");
    FL_FUZZ_CHECK(ev.text.size() <= kMaxEvidenceText && fuzz::IsValidUtf8(ev.text), "evidence text");
    for (const auto& [k, v] : ev.fields) {
      FL_FUZZ_CHECK(v.size() <= kMaxEvidenceText && fuzz::IsValidUtf8(v), "capture");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  if (const char* dir = std::getenv("FL_FUZZ_WRITE_BUNDLES")) {
    WriteSeeds(dir, *argc, *argv);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> parts;
  for (size_t pos = 0;;) {
    size_t next = in.find(kNext, pos);
    if (next == std::string_view::npos || parts.size() == 3) {
      parts.push_back(in.substr(pos));
      break;
    }
    parts.push_back(in.substr(pos, next - pos));
    pos = next + kNext.size();
  }
  // Copies: a FlatBuffer is read in place and wants its alignment.
  std::vector<std::string> bufs(parts.begin(), parts.end());

  const Ruleset& rs = *fuzz::DefaultRules();
  std::vector<ScanResult> scans;
  size_t first_bad = bufs.size();
  uint64_t bytes = 0, lines = 0;
  std::set<std::string> names;
  for (size_t i = 0; i < bufs.size(); ++i) {
    const std::string name = "bundle " + std::to_string(i);
    auto r = ReadBundle(rs, bufs[i], name);
    if (!r.ok()) {
      std::string msg(r.status().message());
      FL_FUZZ_CHECK(msg.rfind(name + ": ", 0) == 0, "error does not name the bundle: " + msg);
      if (first_bad == bufs.size()) first_bad = i;
      continue;
    }
    CheckPart(rs, *r);
    for (const SourceSummary& s : r->sources) names.insert(s.name);
    bytes += r->bytes;
    lines += r->lines;
    scans.push_back(std::move(*r));
  }

  std::vector<const void*> ptrs;
  std::vector<size_t> lens;
  for (const std::string& b : bufs) {
    ptrs.push_back(b.data());
    lens.push_back(b.size());
  }
  fl_report* rep = nullptr;
  fl_error* err = nullptr;
  const fl_status st = fl_report_from_bundles(&rep, CRules(), nullptr, ptrs.data(), lens.data(), ptrs.size(), &err);
  if (first_bad != bufs.size()) {
    FL_FUZZ_CHECK(st == FL_ERR_PARSE, "a bad bundle gave a report");
    const std::string msg = fl_error_message(err);
    FL_FUZZ_CHECK(msg.rfind("bundle " + std::to_string(first_bad) + ": ", 0) == 0,
                  "C ABI error does not name the first bad bundle: " + msg);
    fl_error_free(err);
    return 0;
  }
  FL_FUZZ_CHECK(st == FL_OK, err ? fl_error_message(err) : "no report");

  ScanResult merged = MergeScans(rs, std::move(scans));
  CheckPart(rs, merged);
  for (size_t i = 1; i < merged.evidence.size(); ++i) {
    const Evidence& a = merged.evidence[i - 1];
    const Evidence& b = merged.evidence[i];
    FL_FUZZ_CHECK(a.source < b.source || (a.source == b.source && a.offset <= b.offset), "merge out of order");
  }
  FL_FUZZ_CHECK(merged.sources.size() == names.size(), "merged sources are not the distinct names");
  FL_FUZZ_CHECK(merged.bytes == bytes && merged.lines == lines, "merged bytes/lines are not the sums");

  const char* j;
  size_t n;
  fl_report_json(rep, &j, &n);
  CheckJson("report json", j, n);
  fl_report_signal_hits_json(rep, &j, &n);
  CheckJson("signal hits json", j, n);
  fl_report_evidence_jsonl(rep, &j, &n);
  std::string_view jsonl(j, n);
  size_t lines_out = 0;
  for (size_t pos = 0; pos < jsonl.size();) {
    size_t e = jsonl.find('\n', pos);
    if (e == std::string_view::npos) e = jsonl.size();
    CheckJson("evidence json line", jsonl.data() + pos, e - pos);
    ++lines_out;
    pos = e + 1;
  }
  fl_report_totals t{};
  t.size = sizeof t;
  FL_FUZZ_CHECK(fl_report_totals_get(rep, &t) == FL_OK, "totals");
  FL_FUZZ_CHECK(t.sources == merged.sources.size() && t.bytes == merged.bytes && t.lines == merged.lines &&
                    t.matches == merged.matches && t.evidence == merged.evidence.size(),
                "report totals differ from the merge");
  FL_FUZZ_CHECK(lines_out == merged.evidence.size(), "evidence lines differ from the evidence count");
  fl_report_free(rep);
  return 0;
}
