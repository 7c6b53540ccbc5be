// A job's metric lines (Megatron's "lm loss" and "grad norm", most of a
// large job's matches) are kept as points of their series, not as evidence
// records (issue #20, "metric points"): the scan keeps each point's value,
// step, time and line, counts every line, and keeps no record of them; the
// points of a file scanned in byte ranges and merged are those of the whole
// file; ReadLineAt gives back the line a point names, and PointLineText
// the text its record would have had, whatever the source's framing.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "evidence/bundle.h"
#include "gtest/gtest.h"
#include "input/input.h"
#include "scan/scan.h"
#include "scan_test_util.h"
#include "util/utf8.h"

namespace faultline::scantest {
namespace {

constexpr int kSteps = 3000;

std::string MegatronLog() {
  std::string out;
  for (int i = 1; i <= kSteps; ++i) {
    out += "[2026-01-16 07:" + std::to_string(10 + i / 3600 % 50) + ":" + std::to_string(10 + i / 60 % 50) +
           "] iteration " + std::to_string(i) +
           "/  159576 | consumed samples: 216960 | elapsed time per iteration (ms): 310.1 | learning rate: "
           "5.997E-05 | global batch size:    80 | lm loss: " +
           std::to_string(3.0 + (i % 7) * 0.01) + "E+00 | loss scale: 4096.0 | grad norm: " +
           std::to_string(1.0 + (i % 5) * 0.1) + " | number of skipped iterations:   0 |\n";
    if (i % 100 == 0) out += "some other line\n";
  }
  return out;
}

ScanResult ScanWhole(const std::string& path, bool metric_evidence) {
  ScanOptions o;
  o.threads = 2;
  o.chunk_bytes = size_t{64} << 10;  // several chunks
  o.metric_evidence = metric_evidence;
  Scanner s(DefaultRules(), o);
  EXPECT_TRUE(s.ScanPaths({path}).ok());
  return s.Finish();
}

size_t MetricRecords(const ScanResult& r) {
  const auto rs = DefaultRules();
  return static_cast<size_t>(std::count_if(r.evidence.begin(), r.evidence.end(), [&](const Evidence& ev) {
    return rs->signal(ev.signal).role == SignalRole::Metric;
  }));
}

size_t Points(const ScanResult& r) {
  size_t n = 0;
  for (const auto& [key, series] : r.metrics) n += series.size();
  return n;
}

TEST(MetricPoints, KeptAsPointsNotRecords) {
  TempDir dir;
  const std::string path = dir / "rank-0.log";
  const std::string text = MegatronLog();
  WriteFile(path, text);
  const ScanResult r = ScanWhole(path, /*metric_evidence=*/false);
  // Two series (lm loss, grad norm), a point per line each, every line counted.
  ASSERT_EQ(r.metrics.size(), 2u);
  EXPECT_EQ(Points(r), 2u * kSteps);
  EXPECT_EQ(r.metric_points, 2u * kSteps);
  EXPECT_GE(r.matches, 2u * kSteps);
  EXPECT_EQ(MetricRecords(r), 0u);
  EXPECT_LT(r.evidence.size(), 100u);
  for (const auto& [key, series] : r.metrics) {
    // One rule (sdc-loss-spike-divergence), both signals: every line counted.
    EXPECT_EQ(r.rule_stats.at(series.front().rule).count, 2u * kSteps) << key;
    for (const MetricPoint& p : series) {
      // The point names its line: the line at its offset is its step's.
      ASSERT_LT(p.offset, text.size()) << key;
      ASSERT_TRUE(p.offset == 0 || text[p.offset - 1] == '\n') << key;
      const std::string line = text.substr(p.offset, text.find('\n', p.offset) - p.offset);
      EXPECT_NE(line.find("iteration " + std::to_string(p.step) + "/"), std::string::npos) << line;
      EXPECT_EQ(static_cast<uint64_t>(std::count(text.begin(), text.begin() + static_cast<long>(p.offset), '\n')) + 1,
                p.line);
    }
  }
  // And ReadLineAt reads it back (plain file of the length scanned).
  const MetricPoint& last = r.metrics.begin()->second.back();
  std::optional<std::string> line = ReadLineAt(path, last.offset, kMaxEvidenceText, text.size());
  ASSERT_TRUE(line.has_value());
  EXPECT_NE(line->find("iteration " + std::to_string(kSteps) + "/"), std::string::npos) << *line;
  // A file shorter than scanned (cut, replaced) is not read, nor an offset
  // that is not a line start.
  EXPECT_FALSE(ReadLineAt(path, last.offset, kMaxEvidenceText, text.size() + 1).has_value());
  EXPECT_FALSE(ReadLineAt(path, last.offset + 1, kMaxEvidenceText, text.size()).has_value());
  // Gzip: read through the decompression.
  WriteFile(dir / "rank-0.log.gz", Gzip(text));
  std::optional<std::string> gz = ReadLineAt(dir / "rank-0.log.gz", last.offset, kMaxEvidenceText);
  ASSERT_TRUE(gz.has_value());
  EXPECT_EQ(*gz, *line);

  // ScanOptions::metric_evidence: each line an evidence record too, as
  // before, under the rule's caps.
  const ScanResult with = ScanWhole(path, /*metric_evidence=*/true);
  EXPECT_EQ(MetricRecords(with), EvidenceCaps{}.keep_first + EvidenceCaps{}.keep_last);
  EXPECT_EQ(with.metric_points, 0u);
  EXPECT_EQ(with.matches, r.matches);
  EXPECT_EQ(Points(with), Points(r));
}

TEST(MetricPoints, ByteRangesGiveTheWholeFilesPoints) {
  TempDir dir;
  const std::string path = dir / "rank-0.log";
  const std::string text = MegatronLog();
  WriteFile(path, text);
  const ScanResult want = ScanWhole(path, false);
  std::vector<ScanResult> parts;
  const std::vector<uint64_t> cuts = {0, text.size() / 3 + 17, text.size() / 2 + 5, text.size()};
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    ScanOptions o;
    o.threads = 1;
    Scanner s(DefaultRules(), o);
    EXPECT_TRUE(s.ScanRange(path, cuts[i], cuts[i + 1], 0).ok());
    parts.push_back(s.Finish());
  }
  const ScanResult got = MergeScans(*DefaultRules(), std::move(parts));
  EXPECT_EQ(got.metric_points, want.metric_points);
  ASSERT_EQ(got.metrics.size(), want.metrics.size());
  for (const auto& [key, w] : want.metrics) {
    const auto& g = got.metrics.at(key);
    ASSERT_EQ(g.size(), w.size()) << key;
    for (size_t i = 0; i < w.size(); ++i) {
      EXPECT_EQ(g[i].offset, w[i].offset) << key << " " << i;
      EXPECT_EQ(g[i].line, w[i].line) << key << " " << i;
      EXPECT_EQ(g[i].step, w[i].step) << key << " " << i;
      EXPECT_EQ(g[i].value, w[i].value) << key << " " << i;
      EXPECT_EQ(g[i].source, w[i].source) << key << " " << i;
    }
  }
  EXPECT_EQ(got.evidence.size(), want.evidence.size());
}


// The record a detector reports for a point (correlate PointEvidence) takes
// its text from PointLineText: the text the scan gives the same line's
// record (ScanOptions::metric_evidence), for a plain file, terminal-coloured
// lines (whose escapes the scan strips), CRI and Docker JSON files.
TEST(MetricPoints, ReadBackTextIsTheRecordsText) {
  std::vector<std::string> lines;
  {
    const std::string log = MegatronLog();
    size_t pos = 0;
    for (int i = 0; i < 60 && pos < log.size(); ++i) {
      const size_t nl = log.find('\n', pos);
      lines.push_back(log.substr(pos, nl - pos));
      pos = nl + 1;
    }
  }
  auto framed = [&](auto frame) {
    std::string out;
    for (const std::string& l : lines) out += frame(l) + "\n";
    return out;
  };
  const std::vector<std::pair<std::string, std::string>> files = {
      {"plain.log", framed([](const std::string& l) { return l; })},
      {"coloured.log", framed([](const std::string& l) {
         const size_t at = l.find("lm loss");
         return "\x1b[1m" + l.substr(0, at) + "\x1b[32m" + l.substr(at) + "\x1b[0m";
       })},
      {"cri.log", framed([](const std::string& l) { return "2026-01-16T07:10:10.000000000Z stdout F " + l; })},
      {"docker-json.log", framed([](const std::string& l) {
         return R"({"log":")" + l + R"(\n","stream":"stdout","time":"2026-01-16T07:10:10.000000000Z"})";
       })},
  };
  for (const auto& [name, body] : files) {
    TempDir dir;
    const std::string path = dir / name;
    WriteFile(path, body);
    const ScanResult records = ScanWhole(path, /*metric_evidence=*/true);
    const ScanResult points = ScanWhole(path, /*metric_evidence=*/false);
    ASSERT_EQ(points.sources.size(), 1u) << name;
    size_t compared = 0;
    for (const auto& [key, series] : points.metrics) {
      for (const MetricPoint& p : series) {
        auto rec = std::find_if(records.evidence.begin(), records.evidence.end(), [&](const Evidence& ev) {
          return ev.offset == p.offset && ev.signal == p.signal;
        });
        if (rec == records.evidence.end()) continue;  // past the caps
        std::optional<std::string> text = PointLineText(points.sources[0], p.offset);
        ASSERT_TRUE(text.has_value()) << name;
        EXPECT_EQ(CleanUtf8(*text, kMaxEvidenceText), rec->text) << name;
        ++compared;
      }
    }
    EXPECT_GE(compared, 2u * lines.size() * 9 / 10) << name;
  }
}

}  // namespace
}  // namespace faultline::scantest
