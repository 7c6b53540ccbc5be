// The C ABI end to end: a session over the default ruleset, the input pushed
// through fl_session_feed in chunks whose sizes the first bytes choose (a
// line split over chunks must match as one), then fl_session_finish and
// every report accessor. Checks: the report JSON and evidence JSON lines
// parse as JSON, views hold valid UTF-8 of at most 4096 bytes, evidence
// count and totals agree, chunking does not change what is found.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "faultline/faultline.h"
#include "fuzz_util.h"
#include "simdjson.h"

namespace {

using faultline::fuzz::Die;

const fl_ruleset* Rules() {
  static fl_ruleset* rs = [] {
    fl_ruleset* r = nullptr;
    fl_error* err = nullptr;
    if (fl_ruleset_load_default(&r, &err) != FL_OK) Die("load default", fl_error_message(err));
    return r;
  }();
  return rs;
}

void CheckJson(const char* what, const char* json, size_t len) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element doc;
  auto err = parser.parse(json, len).get(doc);
  if (err) Die(what, std::string_view(json, std::min<size_t>(len, 2000)));
}

struct Run {
  std::string evidence_jsonl;
  uint64_t evidence = 0, matches = 0, lines = 0, bytes = 0;
};

Run Session(std::string_view log, const std::vector<size_t>& chunks, bool split_streams) {
  fl_session_options opts;
  fl_session_options_init(&opts, sizeof opts);
  opts.threads = 1;
  fl_session* s = nullptr;
  fl_error* err = nullptr;
  if (fl_session_new(&s, Rules(), &opts, &err) != FL_OK) Die("session_new", fl_error_message(err));
  uint32_t id = 0, id2 = 0;
  if (fl_session_stream_open(s, "node017/rank-3.log", &id) != FL_OK) Die("stream_open");
  if (split_streams && fl_session_stream_open(s, "node018/rank-4.log", &id2) != FL_OK) {
    Die("stream_open");
  }
  size_t pos = 0, k = 0;
  while (pos < log.size()) {
    size_t n = chunks.empty() ? log.size() : std::min(chunks[k++ % chunks.size()], log.size() - pos);
    if (fl_session_feed(s, id, log.data() + pos, n) != FL_OK) Die("feed", fl_session_last_error(s));
    if (split_streams && fl_session_feed(s, id2, log.data() + pos, n) != FL_OK) Die("feed2");
    pos += n;
  }
  // Empty feeds are allowed; a closed stream refuses more.
  if (fl_session_feed(s, id, "", 0) != FL_OK) Die("empty feed");
  if (fl_session_stream_close(s, id) != FL_OK) Die("close", fl_session_last_error(s));
  if (fl_session_feed(s, id, "x", 1) == FL_OK) Die("feed after close accepted");
  fl_report* r = nullptr;
  if (fl_session_finish(s, &r) != FL_OK) Die("finish", fl_session_last_error(s));
  const char* json = nullptr;
  size_t len = 0;
  if (fl_report_json(r, &json, &len) != FL_OK || std::strlen(json) != len) Die("report_json");
  CheckJson("report JSON does not parse", json, len);
  if (fl_report_text(r, &json, &len) != FL_OK) Die("report_text");
  if (fl_report_signal_hits_json(r, &json, &len) != FL_OK) Die("hits");
  CheckJson("signal hits JSON does not parse", json, len);
  Run out;
  if (fl_report_evidence_jsonl(r, &json, &len) != FL_OK) Die("jsonl");
  out.evidence_jsonl.assign(json, len);
  size_t lp = 0;
  while (lp < out.evidence_jsonl.size()) {
    size_t nl = out.evidence_jsonl.find('\n', lp);
    if (nl == std::string::npos) nl = out.evidence_jsonl.size();
    CheckJson("evidence JSON line does not parse", out.evidence_jsonl.data() + lp, nl - lp);
    lp = nl + 1;
  }
  fl_report_totals t;
  t.size = sizeof t;
  if (fl_report_totals_get(r, &t) != FL_OK) Die("totals");
  size_t n_ev = fl_report_evidence_count(r);
  if (n_ev != t.evidence) Die("evidence count disagrees with totals");
  std::vector<fl_evidence_view> views(16);
  size_t got = 0, first = 0;
  while (fl_report_evidence(r, first, views.data(), views.size(), &got) == FL_OK) {
    for (size_t i = 0; i < got; ++i) {
      const fl_evidence_view& v = views[i];
      size_t tl = std::strlen(v.text);
      if (tl > 4096 || !faultline::fuzz::IsValidUtf8(std::string_view(v.text, tl))) {
        Die("evidence text", v.text);
      }
      if (!v.rule || !v.signal || !v.source || !v.time_source || !v.fields_json) Die("null view");
      CheckJson("fields_json", v.fields_json, std::strlen(v.fields_json));
    }
    first += got;
  }
  if (first != n_ev) Die("evidence iteration count");
  for (size_t i = 0; i < fl_report_incident_count(r); ++i) {
    fl_incident_view iv;
    if (fl_report_incident(r, i, &iv) != FL_OK) Die("incident");
    for (size_t j = 0; j < iv.missing_facts; ++j) {
      if (!fl_report_incident_missing_fact(r, i, j)) Die("missing fact");
    }
    size_t ifirst = 0;
    while (fl_report_incident_evidence(r, i, ifirst, views.data(), views.size(), &got) == FL_OK) {
      ifirst += got;
    }
    if (ifirst != iv.initiating_evidence) Die("incident evidence count");
  }
  out.evidence = t.evidence;
  out.matches = t.matches;
  out.lines = t.lines;
  out.bytes = t.bytes;
  fl_report_free(r);
  fl_session_free(s);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  faultline::fuzz::Choices c(data, size);
  uint8_t nchunks = c.Byte() & 7;
  std::vector<size_t> chunks;
  for (uint8_t i = 0; i < nchunks; ++i) chunks.push_back(1 + (c.U16() & 0x3fff));
  bool two = c.Byte() & 1;
  std::string_view log = c.Rest();
  Run chunked = Session(log, chunks, two);
  Run whole = Session(log, {}, false);
  if (!two) {
    // Chunk boundaries are arbitrary: the same evidence either way.
    if (chunked.evidence_jsonl != whole.evidence_jsonl || chunked.matches != whole.matches ||
        chunked.lines != whole.lines || chunked.bytes != whole.bytes) {
      Die("chunking changed the result");
    }
  }
  if (whole.bytes != log.size()) Die("bytes");
  return 0;
}
