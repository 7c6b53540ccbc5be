// ReadBundle refuses a bundle whose contents the merge and the correlator
// would otherwise take on trust -- indexes into its own tables, counts that
// must agree, times, numbers and text -- with an error naming the field.
// Each case corrupts one field of a real scan's bundle (a fixture scanned
// with the default ruleset) and expects that field in the error; before
// these checks every one of them was accepted (some records silently
// dropped as "rules this ruleset does not have", the rest passed on).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bundle_generated.h"
#include "evidence/bundle.h"
#include "ruleset/ruleset.h"
#include "scan/scan.h"
#include "util/strings.h"

namespace faultline {
namespace {

std::shared_ptr<const Ruleset> Rules() {
  static auto rs = [] {
    auto r = Ruleset::LoadDefault();
    EXPECT_TRUE(r.ok());
    return *r;
  }();
  return rs;
}

// A real scan with evidence from two rules, rule statistics and hits.
const ScanResult& Base() {
  static const ScanResult base = [] {
    Scanner sc(Rules(), ScanOptions{});
    EXPECT_TRUE(sc.ScanPaths({FL_SOURCE_DIR "/tests/fixtures/gpu/b200-xid150-154-short-uptime/b200-n21"}).ok());
    return sc.Finish();
  }();
  return base;
}

std::string ReadError(const ScanResult& scan) {
  auto r = ReadBundle(*Rules(), SerializeBundle(*Rules(), scan), "b.fleb");
  return r.ok() ? std::string("accepted") : std::string(r.status().message());
}

struct Case {
  const char* name;
  std::function<void(ScanResult&)> corrupt;
  const char* field;  // expected in the error after "b.fleb: not a valid evidence bundle: "
};

// Another rule than the evidence's, with at least one signal.
uint32_t OtherRule(uint32_t rule) { return rule == 0 ? 1 : 0; }

TEST(BundleRead, RealBundleReads) {
  ASSERT_GE(Base().evidence.size(), 2u);
  ASSERT_FALSE(Base().rule_stats.empty());
  EXPECT_EQ(ReadError(Base()), "accepted");
}

// A Flight Recorder dump as the parser leaves one: rank 1 of a two-rank
// group, its last all_reduce started but not completed.
flightrec::FrDump Dump() {
  flightrec::FrDump d;
  d.source = "dumps/nccl_trace_rank_1";
  d.format = flightrec::DumpFormat::kJson;
  d.version = "2.10";
  d.version_major = 2;
  d.version_minor = 10;
  d.comm_lib_version = "2.21.5";
  d.rank = 1;
  d.rank_source = flightrec::RankSource::kGroupMembership;
  d.groups = {{"0", "default_pg", {0, 1}}};
  d.pg_status = {{0, 2, 2, 1}};
  for (int64_t k = 0; k < 2; ++k) {
    flightrec::FrEntry& e = d.entries.emplace_back();
    e.record_id = k;
    e.pg_id = 0;
    e.pg_name = "0";
    e.pg_desc = "default_pg";
    e.collective_seq_id = k + 1;
    e.op_id = k + 1;
    e.profiling_name = "nccl:all_reduce";
    e.op = "all_reduce";
    e.state = k ? "started" : "completed";
    e.input_sizes = {{2048}, {}};
    e.output_sizes = {{2048}};
    e.input_dtypes = {"Float"};
    e.output_dtypes = {"Float"};
    e.time_created_ns = 1'000'000 + k;
    e.time_discovered_started_ns = 1'000'100 + k;
    if (!k) e.time_discovered_completed_ns = 1'000'200;
    e.duration_ms = k ? std::optional<double>() : 0.5;
    e.timeout_ms = 600000;
    e.retired = !k;
    e.thread_name = "pt_nccl_watchdg";
  }
  d.wrapped = true;
  return d;
}

void ExpectSameEntry(const flightrec::FrEntry& a, const flightrec::FrEntry& b) {
  EXPECT_EQ(std::tie(a.record_id, a.pg_id, a.pg_name, a.pg_desc, a.collective_seq_id, a.p2p_seq_id, a.op_id,
                     a.profiling_name, a.op, a.is_p2p, a.state, a.input_sizes, a.output_sizes, a.input_dtypes,
                     a.output_dtypes, a.time_created_ns, a.time_discovered_started_ns,
                     a.time_discovered_completed_ns, a.duration_ms, a.timeout_ms, a.retired, a.thread_name),
            std::tie(b.record_id, b.pg_id, b.pg_name, b.pg_desc, b.collective_seq_id, b.p2p_seq_id, b.op_id,
                     b.profiling_name, b.op, b.is_p2p, b.state, b.input_sizes, b.output_sizes, b.input_dtypes,
                     b.output_dtypes, b.time_created_ns, b.time_discovered_started_ns,
                     b.time_discovered_completed_ns, b.duration_ms, b.timeout_ms, b.retired, b.thread_name));
}

// Format 2 carries the dumps whole: every field comes back, and two bundles
// merge their dumps in order.
TEST(BundleRead, FlightRecorderDumpsRoundTrip) {
  ScanResult s = Base();
  s.flight_recorder = {Dump()};
  auto r = ReadBundle(*Rules(), SerializeBundle(*Rules(), s), "b.fleb");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->flight_recorder.size(), 1u);
  const flightrec::FrDump &got = r->flight_recorder[0], want = Dump();
  EXPECT_EQ(std::tie(got.source, got.format, got.version, got.version_major, got.version_minor,
                     got.comm_lib_version, got.rank, got.rank_source, got.wrapped),
            std::tie(want.source, want.format, want.version, want.version_major, want.version_minor,
                     want.comm_lib_version, want.rank, want.rank_source, want.wrapped));
  ASSERT_EQ(got.groups.size(), 1u);
  EXPECT_EQ(std::tie(got.groups[0].name, got.groups[0].desc, got.groups[0].ranks),
            std::tie(want.groups[0].name, want.groups[0].desc, want.groups[0].ranks));
  ASSERT_EQ(got.pg_status.size(), 1u);
  EXPECT_EQ(std::tie(got.pg_status[0].pg_id, got.pg_status[0].last_enqueued, got.pg_status[0].last_started,
                     got.pg_status[0].last_completed),
            std::tie(want.pg_status[0].pg_id, want.pg_status[0].last_enqueued, want.pg_status[0].last_started,
                     want.pg_status[0].last_completed));
  ASSERT_EQ(got.entries.size(), want.entries.size());
  for (size_t k = 0; k < got.entries.size(); ++k) ExpectSameEntry(got.entries[k], want.entries[k]);

  ScanResult other = Base();
  other.flight_recorder = {Dump()};
  other.flight_recorder[0].rank = 0;
  std::vector<ScanResult> parts{*r, *ReadBundle(*Rules(), SerializeBundle(*Rules(), other), "c.fleb")};
  ScanResult merged = MergeScans(*Rules(), std::move(parts));
  ASSERT_EQ(merged.flight_recorder.size(), 2u);
  EXPECT_EQ(merged.flight_recorder[0].rank, 1);
  EXPECT_EQ(merged.flight_recorder[1].rank, 0);
}

// A bundle of a format this build does not know is refused by its number;
// format 1 (no dumps) still reads.
TEST(BundleRead, FormatVersions) {
  for (uint32_t version : {kOldestBundleFormatVersion - 1, kBundleFormatVersion + 1, kOldestBundleFormatVersion}) {
    flatbuffers::FlatBufferBuilder b;
    b.Finish(fb::CreateBundle(b, version), fb::BundleIdentifier());
    auto r = ReadBundle(*Rules(), std::string_view(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize()),
                        "b.fleb");
    if (version == kOldestBundleFormatVersion) {
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_TRUE(r->flight_recorder.empty());
    } else {
      ASSERT_FALSE(r.ok());
      EXPECT_NE(std::string(r.status().message()).find(StrCat("format version ", version, " is not supported")),
                std::string::npos)
          << r.status();
    }
  }
}

TEST(BundleRead, CorruptFieldIsAnErrorNamingIt) {
  constexpr int64_t kHuge = std::numeric_limits<int64_t>::max() - 1;
  const double kNan = std::numeric_limits<double>::quiet_NaN();
  const uint32_t nrules = static_cast<uint32_t>(Rules()->rule_count());
  const uint32_t nsignals = Rules()->signal_count();
  const std::vector<Case> cases = {
      {"evidence source", [](ScanResult& s) { s.evidence[1].source = static_cast<uint32_t>(s.sources.size()); },
       "evidence[1].source"},
      {"evidence rule", [&](ScanResult& s) { s.evidence[0].rule = nrules + 3; }, "evidence[0].rule"},
      {"evidence signal", [&](ScanResult& s) { s.evidence[0].signal = nsignals + 3; }, "evidence[0].signal"},
      {"signal of another rule", [](ScanResult& s) { s.evidence[0].rule = OtherRule(s.evidence[0].rule); },
       "is not a signal of its rule"},
      {"time source", [](ScanResult& s) { s.evidence[0].time_source = static_cast<TimeSource>(9); },
       "evidence[0].time_source"},
      {"line 0", [](ScanResult& s) { s.evidence[0].line = 0; }, "evidence[0].line"},
      {"evidence time", [&](ScanResult& s) { s.evidence[0].time_us = kHuge; }, "evidence[0].time_us"},
      {"monotonic", [&](ScanResult& s) { s.evidence[0].monotonic_s = kNan; }, "evidence[0].monotonic_s"},
      {"prev delta", [&](ScanResult& s) { s.evidence[0].prev_delta_us = kHuge; }, "evidence[0].prev_delta_us"},
      {"text not UTF-8", [](ScanResult& s) { s.evidence[0].text = "Xid \xff\xfe"; }, "evidence[0].text is not valid UTF-8"},
      {"text too long", [](ScanResult& s) { s.evidence[0].text.assign(kMaxEvidenceText + 1, 'x'); },
       "evidence[0].text is 4097 bytes"},
      {"capture not UTF-8", [](ScanResult& s) { s.evidence[0].fields.emplace_back("k", "\xc0\x80"); },
       "evidence[0].fields["},
      {"host not UTF-8", [](ScanResult& s) { s.evidence[0].host = "node\xff"; }, "evidence[0].host"},
      {"source range", [](ScanResult& s) { s.sources[0].range_begin = 10; s.sources[0].range_end = 5; },
       "sources[0].range_end"},
      {"source time", [&](ScanResult& s) { s.sources[0].last_time_us = kHuge; }, "sources[0].last_time_us"},
      {"source delta", [&](ScanResult& s) { s.sources[0].unanchored_delta_us = -kHuge; },
       "sources[0].unanchored_delta_us"},
      {"source time offset", [](ScanResult& s) { s.sources[0].last_time_offset = -7; }, "sources[0].last_time_offset"},
      {"signal hit index", [&](ScanResult& s) { s.signal_hits[nsignals + 1] = 0; }, ".index"},
      {"matches", [](ScanResult& s) { s.matches += 1; }, "is not the sum of signal_hits"},
      {"evidence past matches",
       [](ScanResult& s) {
         s.signal_hits.clear();
         s.matches = 0;
       },
       "records but matches is 0"},
      {"dropped index", [&](ScanResult& s) { s.dropped[nrules + 1] = 1; }, ".index"},
      {"rule stats rule", [&](ScanResult& s) { s.rule_stats[nrules + 1].count = 1; }, "rule_stats["},
      {"rule stats time", [&](ScanResult& s) { s.rule_stats.begin()->second.first_time_us = -kHuge; }, "rule_stats["},
      {"rank reservoir", [](ScanResult& s) { s.ranks[7].step_time_reservoir.assign(513, 1.0); }, "reservoir has 513"},
      {"rank sum", [&](ScanResult& s) { s.ranks[7].step_time_sum = kNan; }, "step_time_sum"},
      {"rank time", [&](ScanResult& s) { s.ranks[7].last_progress_us = kHuge; }, "progress time"},
      {"metric rule", [&](ScanResult& s) { s.metrics["m"].push_back({0, 1, kNoTime, 1.0, nrules + 2, 0}); },
       "points[0].rule"},
      {"metric value", [&](ScanResult& s) { s.metrics["m"].push_back({0, 1, kNoTime, kNan, 0, 0}); },
       "points[0].value"},
      {"metric time", [&](ScanResult& s) { s.metrics["m"].push_back({0, 1, kHuge, 1.0, 0, 0}); },
       "points[0].time_us"},
      {"sync time", [&](ScanResult& s) { s.sync_points.insert(s.sync_points.begin(), {"k", "h", 0, kHuge}); },
       "sync_points[0].time_us"},
      {"seconds", [&](ScanResult& s) { s.seconds = kNan; }, "seconds"},
      {"dump rank", [](ScanResult& s) { s.flight_recorder.push_back(Dump()); s.flight_recorder[0].rank = -4; },
       "flight_recorder[0].rank"},
      {"dump rank source",
       [](ScanResult& s) {
         s.flight_recorder.push_back(Dump());
         s.flight_recorder[0].rank_source = static_cast<flightrec::RankSource>(9);
       },
       "flight_recorder[0].rank_source"},
      {"dump format",
       [](ScanResult& s) {
         s.flight_recorder.push_back(Dump());
         s.flight_recorder[0].format = static_cast<flightrec::DumpFormat>(5);
       },
       "flight_recorder[0].format"},
      {"dump group rank",
       [](ScanResult& s) { s.flight_recorder.push_back(Dump()); s.flight_recorder[0].groups[0].ranks.push_back(-2); },
       "flight_recorder[0].groups[0].ranks"},
      {"dump entry state not UTF-8",
       [](ScanResult& s) { s.flight_recorder.push_back(Dump()); s.flight_recorder[0].entries[1].state = "st\xff"; },
       "flight_recorder[0].entries[1].state"},
      {"dump entry dtype not UTF-8",
       [](ScanResult& s) {
         s.flight_recorder.push_back(Dump());
         s.flight_recorder[0].entries[0].input_dtypes = {"Float", "\xc0\x80"};
       },
       "flight_recorder[0].entries[0].input_dtypes[1]"},
  };
  for (const Case& c : cases) {
    ScanResult s = Base();
    c.corrupt(s);
    const std::string err = ReadError(s);
    EXPECT_EQ(err.rfind("b.fleb: not a valid evidence bundle: ", 0), 0u) << c.name << ": " << err;
    EXPECT_NE(err.find(c.field), std::string::npos) << c.name << ": " << err;
  }
}

// SerializeBundle writes the two min_seq vectors together; a bundle built
// by hand can give them different lengths.
TEST(BundleRead, MinSeqVectorsOfDifferentLengths) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<std::string> rules{std::string(Rules()->rule(0)->id()->string_view())};
  std::vector<int64_t> ranks{0, 1}, values{5};
  std::vector<flatbuffers::Offset<fb::BRuleStats>> stats{
      fb::CreateBRuleStats(b, 0, 0, 0, 0, b.CreateVector(ranks), b.CreateVector(values), kNoTime, kNoTime)};
  auto root = fb::CreateBundle(b, kBundleFormatVersion, 0, 0, b.CreateVectorOfStrings(rules), 0, 0, 0, 0, 0, 0, 0,
                               0, 0, b.CreateVector(stats));
  b.Finish(root, fb::BundleIdentifier());
  auto r = ReadBundle(*Rules(), std::string_view(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize()),
                      "b.fleb");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("rule_stats[0].min_seq_ranks has 2 entries"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace faultline
