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
#include <string>
#include <vector>

#include "bundle_generated.h"
#include "evidence/bundle.h"
#include "ruleset/ruleset.h"
#include "scan/scan.h"

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
