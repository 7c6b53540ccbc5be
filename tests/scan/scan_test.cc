// Scanner tests: the same evidence whatever the input path (plain file, .gz,
// .zst, push stream in random pieces, 1/2/4 threads, tiny chunks, byte
// ranges); line numbers, offsets and inherited times checked against a naive
// reference; huge lines, NULs and invalid UTF-8; JSON-lines and CRI sources;
// evidence caps; missing files.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <future>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "evidence/bundle.h"
#include "gtest/gtest.h"
#include "re2/re2.h"
#include "scan/line_format.h"
#include "scan/scan.h"
#include "scan_test_util.h"

namespace faultline::scantest {
namespace {

// The ruleset under test: the small test rules (stable whatever the default
// rules become) and the build's default ruleset (breadth).
struct RulesParam {
  const char* name;
  std::shared_ptr<const Ruleset> (*get)();
};

class ScanAgree : public ::testing::TestWithParam<RulesParam> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    FixtureOptions o;
    text_ = new std::string(JobLog(20261102, 3 << 20, o));
    WriteFile(*dir_ / "plain/job.log", *text_);
    WriteFile(*dir_ / "gz/job.log.gz", Gzip(*text_));
    WriteFile(*dir_ / "zst/job.log.zst", Zstd(*text_));
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete text_;
  }
  std::shared_ptr<const Ruleset> Rules() const { return GetParam().get(); }
  std::string PlainPath() const { return *dir_ / "plain/job.log"; }

  // The reference: the plain file, one thread, default chunks.
  const ScanResult& Reference() {
    auto& slot = refs_[GetParam().name];
    if (!slot) slot = std::make_unique<ScanResult>(ScanFiles(Rules(), {PlainPath()}, BigCaps()));
    return *slot;
  }

  void ExpectSame(const ScanResult& got, const std::string& what) {
    const ScanResult& want = Reference();
    ASSERT_TRUE(got.errors.empty()) << what << ": " << got.errors[0].message;
    std::string d = Diff(Keys(want), Keys(got));
    EXPECT_EQ(d, "") << what;
    EXPECT_EQ(want.matches, got.matches) << what;
    EXPECT_EQ(want.signal_hits, got.signal_hits) << what;
    EXPECT_EQ(want.lines, got.lines) << what;
    EXPECT_EQ(want.bytes, got.bytes) << what;
    ASSERT_EQ(want.ranks.size(), got.ranks.size()) << what;
    for (const auto& [rank, rs] : want.ranks) {
      const RankSummary& g = got.ranks.at(rank);
      EXPECT_EQ(rs.progress_lines, g.progress_lines) << what << " rank " << rank;
      EXPECT_EQ(rs.last_step, g.last_step) << what << " rank " << rank;
      EXPECT_EQ(rs.last_progress_us, g.last_progress_us) << what << " rank " << rank;
    }
  }

  static TempDir* dir_;
  static std::string* text_;
  static std::map<std::string, std::unique_ptr<ScanResult>> refs_;
};
TempDir* ScanAgree::dir_ = nullptr;
std::string* ScanAgree::text_ = nullptr;
std::map<std::string, std::unique_ptr<ScanResult>> ScanAgree::refs_;

TEST_P(ScanAgree, ReferenceFindsEvidence) {
  const ScanResult& r = Reference();
  // Metric lines are points of their series, not records.
  EXPECT_GT(r.evidence.size() + r.metric_points, 1000u);
  EXPECT_GT(r.evidence.size(), 500u);
  EXPECT_GT(r.ranks.size(), 1u);
  size_t inherited = 0;
  for (const Evidence& e : r.evidence) inherited += e.time_source == TimeSource::kInherited;
  EXPECT_GT(inherited, 100u) << "the fixture must exercise inherited times";
}

TEST_P(ScanAgree, GzipAndZstdMatchPlain) {
  ExpectSame(ScanFiles(Rules(), {*dir_ / "gz/job.log.gz"}, BigCaps()), "gzip");
  ExpectSame(ScanFiles(Rules(), {*dir_ / "zst/job.log.zst"}, BigCaps()), "zstd");
  ExpectSame(ScanFiles(Rules(), {*dir_ / "zst/job.log.zst"}, BigCaps(2)), "zstd, 2 threads");
}

TEST_P(ScanAgree, ThreadsAndSmallChunksMatchOneThread) {
  for (unsigned threads : {1u, 2u, 4u}) {
    for (size_t chunk : {size_t{4} << 10, size_t{64} << 10, size_t{1} << 20}) {
      ExpectSame(ScanFiles(Rules(), {PlainPath()}, BigCaps(threads, chunk)),
                 "threads " + std::to_string(threads) + " chunk " + std::to_string(chunk));
    }
  }
}

TEST_P(ScanAgree, PushStreamInRandomPiecesMatchesFile) {
  // The stream's name is the file's path, so path attribution is the same.
  const std::string& text = *text_;
  ExpectSame(ScanStream(Rules(), PlainPath(), text, BigCaps(), [&](size_t) { return text.size(); }),
             "one piece");
  std::mt19937_64 rng(7);
  // Mostly small pieces that split lines and UTF-8 sequences, runs of
  // 1-byte pieces, and the odd big one.
  int ones = 0;
  auto sizes = [&](size_t left) -> size_t {
    if (ones > 0) {
      --ones;
      return 1;
    }
    switch (rng() % 8) {
      case 0: ones = static_cast<int>(rng() % 5000); return 1;
      case 1: return 1 + rng() % 7;
      case 2: return 1 + rng() % 300;
      case 3: return 1 + rng() % 5000;
      case 4: return 1 + rng() % 70000;
      case 5: return 1 + rng() % (3u << 20);
      default: return std::min<size_t>(left, 1 + rng() % (600u << 10));
    }
  };
  ExpectSame(ScanStream(Rules(), PlainPath(), text, BigCaps(), sizes), "random pieces");
  // Every piece one byte: 3 MiB of Feed calls.
  ExpectSame(ScanStream(Rules(), PlainPath(), text, BigCaps(), [](size_t) { return 1; }),
             "1-byte pieces");
}

TEST_P(ScanAgree, ByteRangesMatchWholeFile) {
  const std::string& text = *text_;
  const ScanResult& want = Reference();
  std::mt19937_64 rng(11);
  // Cut points: random, the middle of a run of matching lines (evidence i
  // and i+1 on adjacent lines), exact line starts, mid-line.
  std::vector<uint64_t> cuts;
  for (int i = 0; i < 12; ++i) cuts.push_back(rng() % text.size());
  for (size_t i = 0; i + 1 < want.evidence.size(); ++i) {
    const Evidence& a = want.evidence[i];
    const Evidence& b = want.evidence[i + 1];
    if (b.line == a.line + 1) {
      cuts.push_back(b.offset);          // at the start of the second line
      cuts.push_back(b.offset - 1);      // on the newline before it
      cuts.push_back(a.offset + 3);      // inside the first
      if (cuts.size() > 40) break;
    }
  }
  cuts.push_back(0);
  cuts.push_back(text.size());
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::map<std::pair<uint64_t, uint32_t>, EvKey> whole;
  for (const EvKey& k : Keys(want)) whole.emplace(std::make_pair(k.offset, k.signal), k);
  for (bool give_first_line : {false, true}) {
    std::vector<ScanResult> parts;
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
      uint64_t first_line = 0;
      if (give_first_line) {
        // The line number of the line the range starts with (after the
        // skip to the next line start).
        uint64_t b = cuts[i];
        if (b > 0 && text[b - 1] != '\n') {
          size_t nl = text.find('\n', b);
          b = nl == std::string::npos ? text.size() : nl + 1;
        }
        first_line = 1 + static_cast<uint64_t>(std::count(text.begin(), text.begin() + b, '\n'));
      }
      Scanner s(Rules(), BigCaps(1, size_t{64} << 10));
      ASSERT_TRUE(s.ScanRange(PlainPath(), cuts[i], cuts[i + 1], first_line).ok());
      parts.push_back(s.Finish());
      const ScanResult& part = parts.back();
      ASSERT_TRUE(part.errors.empty());
      // Alone, a range already has the whole scan's lines, offsets and
      // captures; only times inherited from before its start wait for the
      // merge.
      for (const Evidence& e : part.evidence) {
        if (Rules()->signal(e.signal).role == SignalRole::Progress) continue;  // last per rank
        auto it = whole.find({e.offset, e.signal});
        ASSERT_NE(it, whole.end()) << "range " << cuts[i] << "-" << cuts[i + 1] << ": "
                                   << Describe(Key(e));
        EvKey k = Key(e);
        if (e.needs_prev_time) {
          EXPECT_EQ(e.time_us, kNoTime);
          k.time_us = it->second.time_us;
          k.time_source = it->second.time_source;
        }
        EXPECT_EQ(Diff({it->second}, {k}), "") << "range " << cuts[i] << "-" << cuts[i + 1];
      }
    }
    // Merged (what a scale-out does with the bundles), exactly the whole scan.
    ScanResult got = MergeScans(*Rules(), std::move(parts));
    EXPECT_EQ(Diff(Keys(want), Keys(got)), "") << "first_line given: " << give_first_line;
    EXPECT_EQ(want.signal_hits, got.signal_hits);
    EXPECT_EQ(want.matches, got.matches);
    EXPECT_EQ(want.lines, got.lines);
    ASSERT_EQ(got.sources.size(), 1u);
    EXPECT_EQ(got.sources[0].lines, want.sources[0].lines);
  }
}

INSTANTIATE_TEST_SUITE_P(Rules, ScanAgree,
                         ::testing::Values(RulesParam{"test", &TestRules},
                                           RulesParam{"default", &DefaultRules}),
                         [](const auto& info) { return std::string(info.param.name); });

// Every evidence record sits at a line start with the right line number, and
// the scanner finds exactly what a naive line-by-line RE2 pass finds.
TEST(ScanReference, LineNumbersOffsetsAndMatchesAgreeWithNaivePass) {
  TempDir dir;
  FixtureOptions o;
  std::string text = JobLog(5, 2 << 20, o);
  WriteFile(dir / "job.log", text);
  auto rs = TestRules();
  for (size_t chunk : {size_t{16} << 20, size_t{4} << 10}) {
    ScanResult r = ScanFiles(rs, {dir / "job.log"}, BigCaps(2, chunk));
    ASSERT_TRUE(r.errors.empty());
    // Naive pass.
    std::map<uint32_t, uint64_t> hits;
    std::set<std::pair<uint64_t, uint32_t>> want;  // (offset, signal) of non-progress matches
    std::map<uint64_t, uint64_t> line_of;           // offset -> line number
    uint64_t line_no = 0;
    for (size_t pos = 0; pos < text.size();) {
      size_t nl = text.find('\n', pos);
      size_t end = nl == std::string::npos ? text.size() : nl;
      std::string_view line(text.data() + pos, end - pos);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      ++line_no;
      for (uint32_t id = 0; id < rs->signal_count(); ++id) {
        if (RE2::PartialMatch(line, *rs->signal(id).confirm())) {
          ++hits[id];
          if (rs->signal(id).role != SignalRole::Progress) want.insert({pos, id});
          line_of[pos] = line_no;
        }
      }
      pos = end + 1;
    }
    EXPECT_EQ(hits, r.signal_hits) << "chunk " << chunk;
    std::set<std::pair<uint64_t, uint32_t>> got;
    for (const Evidence& e : r.evidence) {
      ASSERT_LT(e.offset, text.size());
      ASSERT_TRUE(e.offset == 0 || text[e.offset - 1] == '\n') << "offset " << e.offset;
      ASSERT_EQ(line_of[e.offset], e.line) << "offset " << e.offset;
      if (rs->signal(e.signal).role != SignalRole::Progress) got.insert({e.offset, e.signal});
      // The text is the line (these lines are short and valid UTF-8).
      size_t nl = text.find('\n', e.offset);
      std::string line = text.substr(e.offset, nl - e.offset);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.size() <= kMaxEvidenceText) {
        EXPECT_EQ(line, e.text);
      } else {
        EXPECT_EQ(line.substr(0, e.text.size()), e.text);
        EXPECT_GT(e.text.size(), kMaxEvidenceText - 4);
      }
    }
    // A metric line is a point of its series, which names its line.
    uint64_t points = 0;
    for (const auto& [key, series] : r.metrics) {
      for (const MetricPoint& p : series) {
        ASSERT_EQ(line_of[p.offset], p.line) << key << " offset " << p.offset;
        got.insert({p.offset, p.signal});
        ++points;
      }
    }
    EXPECT_EQ(points, r.metric_points) << "chunk " << chunk;
    EXPECT_EQ(want, got) << "chunk " << chunk;
    EXPECT_EQ(line_no, r.lines);
  }
}

// Matching lines without a stamp take the time of the last stamped line
// before them when that line starts at most kInheritWindow bytes earlier, and
// no time otherwise -- the same whatever the chunking, threads or input path.
TEST(ScanReference, InheritedTimesAreBoundedByPositionNotByChunks) {
  TempDir dir;
  std::string text;
  std::vector<int64_t> want_time;  // per init line, in order
  size_t within = 0, beyond = 0;
  // 2026-11-02T13:46:41.123Z
  const int64_t base_us = 1793627201123000;
  for (int block = 0; block < 40; ++block) {
    int64_t t = base_us + block * 1000000LL;
    unsigned s = 41 + block;
    char stamp[128];
    std::snprintf(stamp, sizeof stamp, "[rank1]:2026-11-02 13:%02u:%02u,123 - INFO - train.py:1 - tick\n",
                  46 + s / 60, s % 60);
    size_t stamp_at = text.size();
    text += stamp;
    // Untimed chatter, longer every block, so later matches fall outside the
    // window and chunk boundaries land everywhere.
    int lines = 20 + block * 7;
    for (int i = 0; i < lines; ++i) {
      if (i % 9 == 8) {
        bool in = text.size() <= stamp_at + kInheritWindow;
        want_time.push_back(in ? t : kNoTime);
        (in ? within : beyond) += 1;
        text += "[rank1]:node000:41001:41212 [1] NCCL INFO ncclCommInitRank comm 0x55d3a0001 rank 1 "
                "nranks 8 cudaDev 1 busId 29000 commId 0x5f - Init COMPLETE\n";
      } else {
        text += "[rank1]:node000:41001:41212 [1] NCCL INFO Channel 07/32 : 1[29000] -> 2[3a000] via "
                "P2P/IPC and a little more padding to make the line longer than usual\n";
      }
    }
  }
  ASSERT_GT(within, 50u);
  ASSERT_GT(beyond, 50u);
  WriteFile(dir / "job.log", text);
  auto check = [&](const ScanResult& r, const std::string& what) {
    std::vector<int64_t> got;
    for (const Evidence& e : r.evidence) {
      if (e.text.find("ncclCommInitRank") == std::string::npos) continue;
      EXPECT_EQ(e.time_source, e.time_us == kNoTime ? TimeSource::kNone : TimeSource::kInherited)
          << what << " line " << e.line;
      got.push_back(e.time_us);
    }
    EXPECT_EQ(want_time, got) << what;
  };
  for (unsigned threads : {1u, 2u}) {
    for (size_t chunk : {size_t{1} << 10, size_t{4} << 10, size_t{16} << 20}) {
      check(ScanFiles(TestRules(), {dir / "job.log"}, BigCaps(threads, chunk)),
            "threads " + std::to_string(threads) + " chunk " + std::to_string(chunk));
    }
  }
  check(ScanStream(TestRules(), dir / "job.log", text, BigCaps(), [](size_t) { return 1000; }),
        "stream");
  WriteFile(dir / "gz/job.log.gz", Gzip(text));
  check(ScanFiles(TestRules(), {dir / "gz/job.log.gz"}, BigCaps()), "gzip");
}

TEST(ScanHugeLines, LineOverOneMiBIsFoundAndTextCutToValidUtf8) {
  TempDir dir;
  auto rs = TestRules();
  // A line of 1.5 MiB: stamp, the match near its start, then multi-byte
  // characters across the 4096-byte cut; a second huge line whose match sits
  // at its very end.
  std::string head = "[rank2]:[E1102 13:46:41.123456 41000 ProcessGroupNCCL.cpp:616] [Rank 2] "
                     "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=42, x) ";
  std::string line1 = head;
  while (line1.size() < (size_t{3} << 19)) line1 += "\xE2\x9C\x93\xF0\x9F\x9A\x80z";  // ✓🚀z
  std::string line2 = "[rank3]:2026-11-02 13:46:42,000 - INFO - dump ";
  while (line2.size() < (size_t{3} << 19)) line2 += "0123456789abcdef";
  line2 += " [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=43, y)";
  std::string text = "2026-11-02 13:46:40,000 - INFO - start\n" + line1 + "\n" + line2 + "\nlast\n";
  WriteFile(dir / "huge.log", text);
  for (unsigned threads : {1u, 2u}) {
    ScanResult r = ScanFiles(rs, {dir / "huge.log"}, BigCaps(threads, 64 << 10));
    ASSERT_TRUE(r.errors.empty());
    std::vector<const Evidence*> wd;
    for (const Evidence& e : r.evidence) {
      if (rs->signal(e.signal).signal->id()->str() == "watchdog") wd.push_back(&e);
    }
    ASSERT_GE(wd.size(), 1u);
    EXPECT_EQ(wd[0]->line, 2u);
    EXPECT_EQ(wd[0]->offset, text.find(line1));
    EXPECT_LE(wd[0]->text.size(), kMaxEvidenceText);
    EXPECT_GT(wd[0]->text.size(), kMaxEvidenceText - 8);
    EXPECT_TRUE(ValidUtf8(wd[0]->text));
    EXPECT_EQ(wd[0]->text, line1.substr(0, wd[0]->text.size()));
    EXPECT_EQ(wd[0]->rank, 2);
    EXPECT_EQ(wd[0]->Field("seq") ? *wd[0]->Field("seq") : "", "42");
    // The match at the end of a 1.5 MiB line.
    ASSERT_EQ(wd.size(), 2u) << "the match 1.5 MiB into line 3 was lost";
    EXPECT_EQ(wd[1]->line, 3u);
    EXPECT_EQ(wd[1]->offset, text.find(line2));
    EXPECT_LE(wd[1]->text.size(), kMaxEvidenceText);
    EXPECT_TRUE(ValidUtf8(wd[1]->text));
    EXPECT_EQ(r.lines, 4u);
  }
  // The same through a stream and gzip.
  ScanResult s = ScanStream(rs, dir / "huge.log", text, BigCaps(),
                            [](size_t) { return size_t{100} << 10; });
  ScanResult g;
  WriteFile(dir / "gz/huge.log.gz", Gzip(text));
  g = ScanFiles(rs, {dir / "gz/huge.log.gz"}, BigCaps());
  ScanResult f = ScanFiles(rs, {dir / "huge.log"}, BigCaps());
  EXPECT_EQ(Diff(Keys(f), Keys(s)), "");
  EXPECT_EQ(Diff(Keys(f), Keys(g)), "");
}

TEST(ScanJunk, NulsAndInvalidUtf8NeverBreakTheScan) {
  TempDir dir;
  FixtureOptions o;
  o.junk = true;
  std::string text = JobLog(99, 1 << 20, o);
  // And a stretch of random bytes with a matching line in the middle.
  std::mt19937_64 rng(3);
  std::string noise(300000, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  text += noise.substr(0, 150000);
  text += "\n[rank5]:[E1102 13:46:41.1 1 x.cpp:1] [Rank 5] Watchdog caught collective operation "
          "timeout: WorkNCCL(SeqNum=9\xFF\xC3\x00\n";
  text += noise.substr(150000);
  WriteFile(dir / "junk.log", text);
  auto rs = TestRules();
  ScanResult r = ScanFiles(rs, {dir / "junk.log"}, BigCaps(2, 16 << 10));
  ASSERT_TRUE(r.errors.empty());
  size_t junk_matches = 0;
  for (const Evidence& e : r.evidence) {
    EXPECT_TRUE(ValidUtf8(e.text)) << e.line;
    EXPECT_LE(e.text.size(), kMaxEvidenceText);
    for (const auto& [k, v] : e.fields) EXPECT_TRUE(ValidUtf8(v)) << k;
    EXPECT_TRUE(e.offset == 0 || text[e.offset - 1] == '\n');
    if (e.text.find("\xEF\xBF\xBD") != std::string::npos &&
        e.text.find("Watchdog") != std::string::npos) {
      ++junk_matches;
    }
  }
  EXPECT_GT(junk_matches, 3u) << "matches on lines with NULs and invalid bytes are kept";
  // Same through a stream and zstd.
  ScanResult ref = ScanFiles(rs, {dir / "junk.log"}, BigCaps());
  ScanResult s = ScanStream(rs, dir / "junk.log", text, BigCaps(), [](size_t) { return 777; });
  EXPECT_EQ(Diff(Keys(ref), Keys(s)), "");
  EXPECT_EQ(Diff(Keys(ref), Keys(r)), "");
}

// Docker json-file: the message is matched, the original line keeps its
// number and offset, the time comes from the record.
// fuzz_jsonl's find: a quoted number of more digits than int64_t holds in a
// field read as a whole number ("rank", "_PID") overflowed while it was
// being refused (UBSan's signed-overflow report in the sanitizer builds).
TEST(ScanJsonLines, OverlongQuotedNumbersAreNoNumbers) {
  DerivedChunk jc = ExtractJsonMessages(
      "{\"rank\":\"9999999999999999999999\",\"_PID\":\"99999999999999999999999999999\","
      "\"MESSAGE\":\"NVRM: Xid (PCI:0000:3b:00): 79, pid=1\"}\n");
  ASSERT_EQ(jc.lines.size(), 1u);
  EXPECT_NE(jc.messages.find("Xid (PCI:0000:3b:00): 79"), std::string::npos);
}

TEST(ScanJsonLines, DockerJsonFileMatchesTheMessage) {
  TempDir dir;
  std::string text;
  std::vector<uint64_t> want_offsets, want_lines;
  uint64_t line = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string rec;
    char buf[600];
    if (i % 50 == 7) {
      // The quote of the pattern is escaped in the JSON: only the decoded
      // message matches.
      std::snprintf(buf, sizeof buf,
                    "{\"log\":\"[rank%d]:[W1102 13:46:%02d.000001 1 ProcessGroupNCCL.cpp:1234] Failed to "
                    "check the \\\"should dump\\\" flag on TCPStore \\u00b5s\\n\",\"stream\":\"stderr\","
                    "\"time\":\"2026-11-02T13:46:%02d.123456789Z\"}",
                    i % 8, i % 60, i % 60);
      want_offsets.push_back(text.size());
      want_lines.push_back(line + 1);
    } else if (i % 50 == 21) {
      std::snprintf(buf, sizeof buf,
                    "{\"log\":\"[rank%d]:[E1102 13:46:%02d.000001 1 ProcessGroupNCCL.cpp:616] [Rank %d] "
                    "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, "
                    "OpType=ALLREDUCE)\\n\",\"stream\":\"stderr\",\"time\":\"2026-11-02T13:47:%02d."
                    "500000000Z\"}",
                    i % 8, i % 60, i % 8, 1000 + i, i % 60);
      want_offsets.push_back(text.size());
      want_lines.push_back(line + 1);
    } else {
      std::snprintf(buf, sizeof buf,
                    "{\"log\":\"[rank%d]:2026-11-02 13:46:41,123 - INFO - data_loader.py:211 - worker "
                    "prefetched 256 samples\\n\",\"stream\":\"stdout\",\"time\":\"2026-11-02T13:46:41."
                    "123456789Z\"}",
                    i % 8);
    }
    text += buf;
    text += '\n';
    ++line;
  }
  WriteFile(dir / "c0ffee-json.log", text);
  auto rs = TestRules();
  auto check = [&](const ScanResult& r, const std::string& what) {
    ASSERT_TRUE(r.errors.empty()) << what;
    std::vector<uint64_t> offs, lines;
    for (const Evidence& e : r.evidence) {
      offs.push_back(e.offset);
      lines.push_back(e.line);
      std::string sig = rs->signal(e.signal).signal->id()->str();
      if (sig == "dump-flag") {
        EXPECT_EQ(e.time_us % 60000000, (e.line - 1) % 60 * 1000000LL + 123456) << what;
      } else {
        EXPECT_EQ(sig, "watchdog");
        EXPECT_EQ(e.time_us % 1000000, 500000) << what;
        EXPECT_EQ(e.rank, static_cast<int64_t>((e.line - 1) % 8)) << what;
      }
      EXPECT_EQ(e.time_source, TimeSource::kParsed) << what;
      EXPECT_EQ(text.compare(e.offset, 2, "{\""), 0) << what;
    }
    EXPECT_EQ(offs, want_offsets) << what;
    EXPECT_EQ(lines, want_lines) << what;
    EXPECT_EQ(r.lines, 3000u) << what;
  };
  check(ScanFiles(rs, {dir / "c0ffee-json.log"}, BigCaps()), "file");
  check(ScanFiles(rs, {dir / "c0ffee-json.log"}, BigCaps(2, 4 << 10)), "file, 4 KiB chunks");
  WriteFile(dir / "gz/c0ffee-json.log.gz", Gzip(text));
  check(ScanFiles(rs, {dir / "gz/c0ffee-json.log.gz"}, BigCaps()), "gzip");
  check(ScanStream(rs, dir / "c0ffee-json.log", text, BigCaps(), [](size_t) { return 4093; }),
        "stream");
}

TEST(ScanJsonLines, JournalctlJsonUsesRealtimeTimestampAndHostname) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 200; ++i) {
    char buf[700];
    // 2026-11-02T13:46:41.123456Z + i s
    std::snprintf(buf, sizeof buf,
                  "{\"__CURSOR\":\"s=1;i=%x\",\"__REALTIME_TIMESTAMP\":\"%lld\",\"__MONOTONIC_TIMESTAMP\":"
                  "\"%lld\",\"_HOSTNAME\":\"node017\",\"SYSLOG_IDENTIFIER\":\"kernel\",\"PRIORITY\":\"4\","
                  "\"MESSAGE\":\"%s\"}\n",
                  i, 1793627201123456LL + i * 1000000LL, 1000001682554LL + i * 1000000LL,
                  i == 150 ? "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has "
                             "fallen off the bus."
                           : "mlx5_core 0000:0c:00.0: firmware version: 28.39.1002");
    text += buf;
  }
  WriteFile(dir / "journal.json", text);
  ScanResult r = ScanFiles(TestRules(), {dir / "journal.json"}, BigCaps());
  ASSERT_EQ(r.evidence.size(), 1u);
  const Evidence& e = r.evidence[0];
  EXPECT_EQ(e.line, 151u);
  size_t off = 0;
  for (int i = 0; i < 150; ++i) off = text.find('\n', off) + 1;
  EXPECT_EQ(e.offset, off);
  EXPECT_EQ(e.time_us, 1793627201123456LL + 150 * 1000000LL);
  EXPECT_EQ(e.host, "node017");
  ASSERT_NE(e.Field("xid"), nullptr);
  EXPECT_EQ(*e.Field("xid"), "79");
}

// Platform exports nest the node: a GCP Cloud Logging LogEntry (textPayload,
// labels."compute.googleapis.com/resource_name" for a container,
// resource.labels.node_name for a k8s_node) and fluent-bit's kubernetes
// filter as CloudWatch Container Insights ships it (kubernetes.host).
TEST(ScanJsonLines, PlatformExportsNameTheirNode) {
  TempDir dir;
  const std::string xid = "NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python3, GPU has fallen off the bus.";
  const std::string other = "mlx5_core 0000:0c:00.0: firmware version: 28.39.1002";
  struct Case {
    std::string file, host, line;
  };
  std::vector<Case> cases = {
      {"gcp_container.json", "gke-train-a3-pool-f76d27f1-tdtx",
       "{\"insertId\":\"1a\",\"labels\":{\"compute.googleapis.com/resource_name\":"
       "\"gke-train-a3-pool-f76d27f1-tdtx\"},\"logName\":\"projects/p/logs/stderr\","
       "\"resource\":{\"labels\":{\"pod_name\":\"trainer-0\"},\"type\":\"k8s_container\"},"
       "\"severity\":\"ERROR\",\"textPayload\":\"@\",\"timestamp\":\"2026-11-02T13:46:41.123456789Z\"}"},
      {"gcp_node.json", "dgx004",
       "{\"insertId\":\"1b\",\"logName\":\"projects/p/logs/kernel\",\"resource\":{\"labels\":"
       "{\"node_name\":\"dgx004\",\"project_id\":\"p\"},\"type\":\"k8s_node\"},"
       "\"jsonPayload\":{\"message\":\"@\"},\"timestamp\":\"2026-11-02T13:46:41.123456789Z\"}"},
      {"fluentbit.jsonl", "ip-172-31-8-12",
       // An EKS node's name is its FQDN; its kernel names it by the short name.
       "{\"kubernetes\":{\"host\":\"ip-172-31-8-12.ec2.internal\",\"pod_name\":\"trainer-0\"},"
       "\"log\":\"@\\n\",\"stream\":\"stderr\",\"time\":\"2026-11-02T13:46:41.123456789Z\"}"},
  };
  for (const Case& c : cases) {
    std::string text;
    for (int i = 0; i < 20; ++i) {
      std::string line = c.line;
      line.replace(line.find('@'), 1, i == 10 ? xid : other);
      text += line + "\n";
    }
    WriteFile(dir / c.file, text);
    ScanResult r = ScanFiles(TestRules(), {dir / c.file}, BigCaps());
    ASSERT_EQ(r.evidence.size(), 1u) << c.file;
    EXPECT_EQ(r.evidence[0].line, 11u) << c.file;
    EXPECT_EQ(r.evidence[0].host, c.host) << c.file;
    EXPECT_EQ(r.evidence[0].time_us, 1793627201123456LL) << c.file;
  }
}

TEST(ScanCri, KubernetesCriLinesMatchWithTheirStamp) {
  TempDir dir;
  std::string text =
      "2026-11-02T13:46:40.000000001Z stdout F [rank3]:2026-11-02 13:46:40,000 - INFO - train.py:1 - "
      "hello\n"
      "2026-11-02T13:46:41.123456789Z stderr F [rank3]:[E1102 13:46:41.123456 41000 "
      "ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout: "
      "WorkNCCL(SeqNum=4711, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600005 milliseconds\n"
      "2026-11-02T13:46:42.000000000Z stderr P [rank3]:part one of a long line \n"
      "2026-11-02T13:46:42.000000000Z stderr F and its end\n";
  WriteFile(dir / "pod_trainer-0_abc/trainer/0.log", text);
  ScanResult r = ScanFiles(TestRules(), {dir / "pod_trainer-0_abc/trainer/0.log"}, BigCaps());
  ASSERT_EQ(r.evidence.size(), 1u);
  const Evidence& e = r.evidence[0];
  EXPECT_EQ(e.line, 2u);
  EXPECT_EQ(e.offset, text.find("2026-11-02T13:46:41"));
  EXPECT_EQ(e.time_us, 1793627201123456LL);  // the CRI stamp, truncated to µs
  EXPECT_EQ(e.time_source, TimeSource::kParsed);
  EXPECT_EQ(e.rank, 3);
  EXPECT_EQ(r.lines, 4u);
}

// A journald export's NCCL init lines of ranks 0-2 on node017, each worker
// named only by the pid syslog stamps its lines with (4100 + rank).
std::string JournalNcclInits() {
  std::string text;
  char buf[400];
  for (int r = 0; r < 3; ++r) {
    std::snprintf(buf, sizeof buf,
                  "Nov  2 13:46:0%d node017 python3[%d]: node017:%d:%d [%d] NCCL INFO comm 0x55d4c8a0 rank %d "
                  "nranks 3 cudaDev %d nvmlDev %d busId %d000 commId 0x5d80767af00d - Init COMPLETE\n",
                  r, 4100 + r, 4100 + r, 4100 + r, r, r, r, r, 18 + r);
    text += buf;
  }
  return text;
}

// A journald export names each worker only by the pid syslog stamps its
// lines with; the worker's NCCL init line ties that pid to its rank, so its
// step lines count for that rank (a straggler or hang detector needs them
// per rank), not all for "rank unknown".
TEST(ScanProgress, StepLinesNamingOnlyTheirPidCountForTheirRank) {
  TempDir dir;
  std::string text = JournalNcclInits();
  char buf[400];
  for (int step = 1; step <= 5; ++step) {
    for (int r = 0; r < 3; ++r) {
      std::snprintf(buf, sizeof buf,
                    "Nov  2 13:47:%02d node017 python3[%d]:  [2026-11-02 13:47:%02d] iteration %8d/  500000 | "
                    "consumed samples: %12d | elapsed time per iteration (ms): %d.0 | lm loss: 7.1E+00 |\n",
                    step * 2, 4100 + r, step * 2, step, step * 512, r == 2 ? 2600 : 2000);
      text += buf;
    }
  }
  WriteFile(dir / "journal.txt", text);
  ScanResult res = ScanFiles(DefaultRules(), {dir / "journal.txt"}, BigCaps());
  EXPECT_FALSE(res.ranks.contains(-1));
  for (int r = 0; r < 3; ++r) {
    ASSERT_TRUE(res.ranks.contains(r)) << "rank " << r;
    EXPECT_EQ(res.ranks.at(r).progress_lines, 5u) << "rank " << r;
    EXPECT_EQ(res.ranks.at(r).last_step, 5) << "rank " << r;
  }
  ASSERT_FALSE(res.ranks.at(2).step_time_reservoir.empty());
  EXPECT_DOUBLE_EQ(res.ranks.at(2).step_time_reservoir.front(), 2.6);
}

// Their loss lines too: a loss series is one process's, and the ranks'
// lines pooled under "rank unknown" interleave (a host whose clock runs
// ahead puts its first, high losses among the others' later ones: a spike).
TEST(ScanMetrics, LossLinesNamingOnlyTheirPidCountForTheirRank) {
  TempDir dir;
  std::string text = JournalNcclInits();
  char buf[400];
  for (int step = 1; step <= 5; ++step) {
    for (int r = 0; r < 3; ++r) {
      std::snprintf(buf, sizeof buf,
                    "Nov  2 13:47:%02d node017 python3[%d]: Epoch 0:   1%%|#    | %d/500 [00:0%d<11:00, 0.26it/s, "
                    "v_num=0, train_loss=%d.5]\n",
                    step * 2, 4100 + r, step, step, 10 - step);
      text += buf;
    }
  }
  WriteFile(dir / "journal.txt", text);
  ScanResult res = ScanFiles(DefaultRules(), {dir / "journal.txt"}, BigCaps());
  ASSERT_TRUE(res.metrics.contains("sdc-loss-spike-divergence:train_loss"));
  std::map<int64_t, int> per_rank;
  for (const MetricPoint& p : res.metrics.at("sdc-loss-spike-divergence:train_loss")) ++per_rank[p.rank];
  EXPECT_EQ(per_rank, (std::map<int64_t, int>{{0, 5}, {1, 5}, {2, 5}}));
}

// The same in `journalctl -o json`: the pid is the record's _PID field.
TEST(ScanProgress, JournalJsonStepLinesCountForTheRankOfTheirPid) {
  TempDir dir;
  std::string text;
  char buf[600];
  for (int r = 0; r < 3; ++r) {
    std::snprintf(buf, sizeof buf,
                  "{\"MESSAGE\": \"node017:%d:%d [%d] NCCL INFO comm 0x55d4c8a0 rank %d nranks 3 cudaDev %d "
                  "nvmlDev %d busId %d000 commId 0x5d80767af00d - Init COMPLETE\", \"SYSLOG_IDENTIFIER\": "
                  "\"python3\", \"_HOSTNAME\": \"node017\", \"_PID\": \"%d\", \"__REALTIME_TIMESTAMP\": "
                  "\"%lld\"}\n",
                  4100 + r, 4100 + r, r, r, r, r, 18 + r, 4100 + r, 1793627201123456LL + r);
    text += buf;
  }
  for (int step = 1; step <= 5; ++step) {
    for (int r = 0; r < 3; ++r) {
      std::snprintf(buf, sizeof buf,
                    "{\"MESSAGE\": \" [2026-11-02 13:47:%02d] iteration %8d/  500000 | consumed samples: %12d | "
                    "elapsed time per iteration (ms): %d.0 | lm loss: 7.1E+00 |\", \"SYSLOG_IDENTIFIER\": "
                    "\"python3\", \"_HOSTNAME\": \"node017\", \"_PID\": \"%d\", \"__REALTIME_TIMESTAMP\": "
                    "\"%lld\"}\n",
                    step * 2, step, step * 512, r == 2 ? 2600 : 2000, 4100 + r,
                    1793627261123456LL + step * 2000000LL + r);
      text += buf;
    }
  }
  WriteFile(dir / "journal.json", text);
  ScanResult res = ScanFiles(DefaultRules(), {dir / "journal.json"}, BigCaps());
  EXPECT_FALSE(res.ranks.contains(-1));
  for (int r = 0; r < 3; ++r) {
    ASSERT_TRUE(res.ranks.contains(r)) << "rank " << r;
    EXPECT_EQ(res.ranks.at(r).progress_lines, 5u) << "rank " << r;
  }
}

// Caps bound what is kept per rule and source; counts stay exact.
TEST(ScanCaps, CountsStayExactPastTheCaps) {
  TempDir dir;
  std::string text;
  const int kLines = 100000;
  for (int i = 0; i < kLines; ++i) {
    char buf[300];
    std::snprintf(buf, sizeof buf,
                  "[rank%d]:[E1102 13:46:41.%06d 41000 ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog "
                  "caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE)\n",
                  i % 64, i % 1000000, i % 64, i);
    text += buf;
    if (i % 10 == 0) text += "[rank0]:node000:1:2 [0] NCCL INFO Channel 00/32 : 0 -> 1 via P2P/IPC\n";
  }
  WriteFile(dir / "a/job.log", text);
  WriteFile(dir / "b/job.log", text);
  auto rs = TestRules();
  int rule = rs->FindRule("test-watchdog");
  ASSERT_GE(rule, 0);
  uint32_t sig = rs->first_signal(static_cast<size_t>(rule));
  for (unsigned threads : {1u, 2u}) {
    ScanOptions o;
    o.threads = threads;
    o.chunk_bytes = 64 << 10;
    o.keep_first = 10;
    o.keep_last = 5;
    ScanResult r = ScanFiles(rs, {dir / "a/job.log", dir / "b/job.log"}, o);
    EXPECT_EQ(r.signal_hits[sig], 2u * kLines);
    EXPECT_EQ(r.rule_stats[rule].count, 2u * kLines);
    EXPECT_EQ(r.rule_stats[rule].ranks.size(), 64u);
    EXPECT_EQ(r.rule_stats[rule].ranks[5], 2u * (kLines / 64 + (5 < kLines % 64 ? 1 : 0)));
    EXPECT_EQ(r.matches, 2u * kLines);
    EXPECT_EQ(r.dropped[rule], 2u * (kLines - 15));
    for (uint32_t src : {0u, 1u}) {
      std::vector<uint64_t> seqs;
      for (const Evidence& e : r.evidence) {
        if (e.source == src && e.rule == static_cast<uint32_t>(rule)) {
          seqs.push_back(std::stoull(*e.Field("seq")));
        }
      }
      std::vector<uint64_t> want = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
      for (int k = kLines - 5; k < kLines; ++k) want.push_back(k);
      EXPECT_EQ(seqs, want) << "threads " << threads << " source " << src;
    }
  }
}

// The HCAs NCCL's lines name are topology: read from every line, past the
// evidence caps (a 1,024-rank srun stream holds thousands of such lines),
// once per process and index, and kept through a bundle.
TEST(ScanNics, NcclHcaLinesPastTheCapsAndThroughABundle) {
  TempDir dir;
  std::string text;
  char buf[400];
  for (int r = 0; r < 40; ++r) {
    const int pid = 5000 + r;
    for (int comm = 0; comm < 2; ++comm) {  // the world and a sub-communicator
      std::snprintf(buf, sizeof buf,
                    "%d: node%03d:%d:%d [%d] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/IB ; OOB eth0:10.0.0.%d<0>\n",
                    r, r / 8, pid, pid, r % 8, r / 8 + 1);
      text += buf;
      std::snprintf(buf, sizeof buf,
                    "%d: node%03d:%d:%d [%d] NCCL INFO NET/IB: [1] mlx5_3:uverbs3:1/IB provider=Mlx5 speed=400000 "
                    "context=0x55d4c1a1b2c0 pciPath=/sys/devices/pci0000:30/0000:30:01.0/0000:3c:00.0 ar=1 oooRqSize=0\n",
                    r, r / 8, pid, pid, r % 8);
      text += buf;
      std::snprintf(buf, sizeof buf,
                    "%d: node%03d:%d:%d [%d] NCCL INFO Channel 00/0 : %d[%d] -> %d[%d] [send] via NET/IB/%d/GDRDMA\n",
                    r, r / 8, pid, pid + 2, r % 8, r, r % 8, (r + 8) % 40, r % 8, (r % 8) / 4);
      text += buf;
    }
  }
  WriteFile(dir / "slurm-1.out", text);
  auto rs = DefaultRules();
  ScanOptions o = BigCaps();
  o.keep_first = 4;
  o.keep_last = 2;
  ScanResult r = ScanFiles(rs, {dir / "slurm-1.out"}, o);
  size_t sends = 0, pcis = 0;
  for (const NicLink& l : r.nics) {
    ASSERT_GE(l.rank, 0);
    std::snprintf(buf, sizeof buf, "node%03d", static_cast<int>(l.rank / 8));
    EXPECT_EQ(l.host, buf);
    EXPECT_EQ(l.pid, 5000 + l.rank);
    if (l.sends) {
      ++sends;
      EXPECT_EQ(l.index, (l.rank % 8) / 4);
      EXPECT_TRUE(l.hca.empty());
    }
    if (!l.pci.empty()) {
      ++pcis;
      EXPECT_EQ(l.hca, "mlx5_3");
      EXPECT_EQ(l.pci, "0000:3c:00.0");
    }
  }
  EXPECT_EQ(sends, 40u);
  EXPECT_EQ(pcis, 40u);
  EXPECT_EQ(r.nics.size(), 40u * 4);  // two listed, one placed, one sent through
  auto back = ReadBundle(*rs, SerializeBundle(*rs, r), "part");
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->nics.size(), r.nics.size());
  for (size_t i = 0; i < r.nics.size(); ++i) {
    const NicLink &a = r.nics[i], &b = back->nics[i];
    EXPECT_EQ(std::tie(a.host, a.pid, a.rank, a.index, a.hca, a.pci, a.sends),
              std::tie(b.host, b.pid, b.rank, b.index, b.hca, b.pci, b.sends));
  }
}

// Many tiny chunks, 1-4 threads, scans that run to the end and scans
// cancelled from the progress callback at every point: each returns (the
// worker window and the stop flag are handed over without lost wakeups) with
// the same evidence as an uncancelled scan, or CancelledError.
TEST(ScanThreads, TinyChunksAndCancellationNeverHang) {
  TempDir dir;
  std::string text = JobLog(17, 256 << 10);
  WriteFile(dir / "job.log", text);
  auto rs = TestRules();
  ScanResult ref = ScanFiles(rs, {dir / "job.log"}, BigCaps());
  auto run = [&] {
    std::mt19937_64 rng(5);
    for (int iter = 0; iter < 150; ++iter) {
      ScanOptions o = BigCaps(1 + static_cast<unsigned>(iter % 4), 1 << 10);
      int cancel_at = iter % 3 == 0 ? -1 : static_cast<int>(rng() % 300);
      int calls = 0;
      o.on_progress = [&](uint64_t, uint64_t) { return cancel_at < 0 || calls++ < cancel_at; };
      Scanner s(rs, o);
      absl::Status st = s.ScanPaths({dir / "job.log"});
      ScanResult r = s.Finish();
      if (cancel_at < 0) {
        ASSERT_TRUE(st.ok()) << st.message();
        ASSERT_EQ(Diff(Keys(ref), Keys(r)), "") << "iteration " << iter;
      } else if (!st.ok()) {
        ASSERT_TRUE(absl::IsCancelled(st)) << st.message();
      }
    }
  };
  auto done = std::async(std::launch::async, run);
  if (done.wait_for(std::chrono::seconds(120)) != std::future_status::ready) {
    std::fprintf(stderr, "scan hung (lost wakeup in the worker window?)\n");
    std::abort();  // a hung worker cannot be joined; fail loudly
  }
  done.get();
}

// Progress counts every file by its size on disk, compressed ones by the
// compressed bytes read: the total is known up front and reached at the end.
TEST(ScanProgress, CompressedFilesCountTheirBytesOnDisk) {
  TempDir dir;
  FixtureOptions fo;
  const std::string text = JobLog(7, 6 << 20, fo);
  WriteFile(dir / "plain.log", text);
  WriteFile(dir / "a.log.gz", Gzip(text));
  WriteFile(dir / "b.log.zst", Zstd(text));
  uint64_t on_disk = 0;
  for (const char* f : {"plain.log", "a.log.gz", "b.log.zst"}) {
    on_disk += std::filesystem::file_size(std::filesystem::path(dir / f));
  }
  ASSERT_LT(on_disk, 2 * text.size());  // the compressed files are small
  for (unsigned threads : {1u, 3u}) {
    std::vector<std::pair<uint64_t, uint64_t>> calls;
    ScanOptions o = BigCaps(threads, 1 << 20);
    o.on_progress = [&](uint64_t done, uint64_t total) {
      calls.emplace_back(done, total);
      return true;
    };
    Scanner s(TestRules(), o);
    ASSERT_TRUE(s.ScanPaths({dir / "plain.log", dir / "a.log.gz", dir / "b.log.zst"}).ok());
    ASSERT_GT(calls.size(), 3u);
    uint64_t prev = 0;
    for (const auto& [done, total] : calls) {
      EXPECT_EQ(total, on_disk);
      EXPECT_GE(done, prev);
      EXPECT_LE(done, total);
      prev = done;
    }
    EXPECT_EQ(calls.back().first, on_disk) << threads << " thread(s)";
  }
}

TEST(ScanErrors, MissingFileIsNamedAndTheOthersAreScanned) {
  TempDir dir;
  WriteFile(dir / "good.log",
            "[rank1]:[E1102 13:46:41.123456 1 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught "
            "collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE)\n");
  WriteFile(dir / "good.log.gz", Gzip("NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x\n"));
  std::string missing = dir / "no/such/rank-3.log";
  std::string missing_gz = dir / "gone.log.zst";
  ScanResult r = ScanFiles(TestRules(), {missing, dir / "good.log", missing_gz, dir / "good.log.gz"},
                           BigCaps(2));
  ASSERT_EQ(r.errors.size(), 2u);
  std::set<std::string> named;
  for (const InputError& e : r.errors) {
    named.insert(e.source);
    EXPECT_NE(e.message.find(e.source == missing ? "rank-3.log" : "gone.log.zst"), std::string::npos)
        << e.message;
  }
  EXPECT_EQ(named, (std::set<std::string>{missing, missing_gz}));
  EXPECT_EQ(r.evidence.size(), 2u);
  size_t failed = 0;
  for (const SourceSummary& s : r.sources) failed += s.failed;
  EXPECT_EQ(failed, 2u);
}

}  // namespace
}  // namespace faultline::scantest

namespace faultline::scantest {
namespace {

// '^' and '$' are a line's start and end, as RE2 sees them when it confirms
// the line: the default rules' bare "Killed" (a shell's SIGKILL report) is
// found on any line of the block, not only on the first.
TEST(ScanAnchors, LineAnchoredPatternMatchesEveryLine) {
  TempDir dir;
  WriteFile(dir / "train.out", "step 1 loss 2.0\nKilled\nstep 1 Killed by the user\nKilled\n");
  auto rs = DefaultRules();
  Scanner s(rs, ScanOptions{});
  ASSERT_TRUE(s.ScanPaths({dir / "train.out"}).ok());
  ScanResult r = s.Finish();
  std::vector<uint64_t> lines;
  for (const Evidence& e : r.evidence) {
    if (rs->signal(e.signal).signal->id()->str() == "shell-killed-bare") lines.push_back(e.line);
  }
  EXPECT_EQ(lines, (std::vector<uint64_t>{2, 4}));
}

}  // namespace
}  // namespace faultline::scantest
