// Resource bounds. Evidence: 2M matching lines in one file keep at most
// keep_first + keep_last records per rule, with exact counts, in bounded
// memory (peak RSS printed). Rule compilation: hostile rule sources (huge
// patterns, nested and many bounded repeats, thousands of patterns, huge
// examples) fail fast with an error naming the file, or compile within a
// time bound -- never an unbounded Hyperscan compile.
#include <chrono>
#include <cstring>

#include "faults_util.h"
#include "util/strings.h"
#include "gmock/gmock.h"
#include "rule_tree.h"
#include "ruleset/compiler.h"

namespace faultline::faults {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FL_FAULTS_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FL_FAULTS_SANITIZED 1
#endif
// Sanitized builds run ~10x slower per match: a smaller storm there (the
// caps are the same; memory figures are only meaningful unsanitized).
#ifdef FL_FAULTS_SANITIZED
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

TEST(Bounds, EvidenceCapWithExactCounts) {
  TempDir dir;
  const std::string path = dir.Sub("storm.log");
  const size_t kLines = kSanitized ? 500'000 : 2'000'000;
  {
    std::string text;
    text.reserve(kLines * (kXidLine.size() + 1));
    for (size_t i = 0; i < kLines; ++i) text.append(kXidLine).push_back('\n');
    WriteFile(path, text);
  }
  const uint64_t rss_before = PeakRssBytes();
  AnonSampler anon;
  ScanOptions so;
  so.threads = 2;
  so.keep_first = 1000;
  so.keep_last = 100;
  auto t0 = Clock::now();
  Scanner scanner(Rules(), so);
  ASSERT_TRUE(scanner.ScanPaths({path}).ok());
  ScanResult r = scanner.Finish();
  double secs = Since(t0);
  anon.Stop();
  int rule = Rules()->FindRule(kXidRule);
  size_t kept = CountRule(r, kXidRule);
  std::printf("%zu matching lines: %.1f s, kept %zu, anonymous growth %.1f MiB, peak RSS %.0f MiB "
              "(before the scan %.0f MiB)\n",
              kLines, secs, kept, anon.growth() / 1048576.0, PeakRssBytes() / 1048576.0,
              rss_before / 1048576.0);
  EXPECT_LE(kept, so.keep_first + so.keep_last);
  EXPECT_GE(kept, so.keep_first);
  EXPECT_EQ(r.rule_stats[rule].count, kLines);
  EXPECT_EQ(r.dropped[rule], kLines - kept);
  EXPECT_EQ(r.sources[0].lines, kLines);
  // The last kept record is the last line: the tail is kept, not only the head.
  uint64_t last_line = 0;
  for (const Evidence& ev : r.evidence) {
    if (static_cast<int>(ev.rule) == rule) last_line = std::max(last_line, ev.line);
  }
  EXPECT_EQ(last_line, kLines);
  // 2M records of ~700 bytes would be > 1.3 GiB; the caps keep it far lower
  // (ASan's quarantine and redzones add their own hundreds of MiB).
  EXPECT_LT(anon.growth(), kSanitized ? uint64_t{1} << 30 : uint64_t{512} << 20);
}

// A watchdog timeout on every line, with a progress line every fourth, the
// lines spread over `distinct` ranks.
std::string ManyRanksLog(size_t lines, size_t distinct) {
  std::string text;
  text.reserve(lines * 330);
  for (size_t i = 0; i < lines; ++i) {
    const std::string rank = std::to_string(i % distinct);
    text += "[rank" + rank + "]:[E1116 13:50:27.831000090 ProcessGroupNCCL.cpp:632] [Rank " + rank +
            "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7331, OpType=ALLREDUCE, "
            "NumelIn=6553600, NumelOut=6553600, Timeout(ms)=600000) ran for 600052 milliseconds before "
            "timing out.\n";
    if (i % 4 == 0) {
      text += "[rank" + rank + "]:[I1116 13:40:27.000000 train.py:812] iteration 5/ 100000 | "
              "consumed samples: 12800 | elapsed time per iteration (ms): 812.3 | lm loss: 2.345E+00 |\n";
    }
  }
  return text;
}

struct RanksRun {
  ScanResult result;
  uint64_t anon_growth = 0;
};

RanksRun ScanRanks(const TempDir& dir, size_t lines, size_t distinct) {
  const std::string path = dir.Sub("ranks-" + std::to_string(distinct) + ".log");
  WriteFile(path, ManyRanksLog(lines, distinct));
  AnonSampler anon;
  ScanOptions so;
  so.threads = 2;
  Scanner scanner(Rules(), so);
  EXPECT_TRUE(scanner.ScanPaths({path}).ok());
  RanksRun run{scanner.Finish(), 0};
  anon.Stop();
  run.anon_growth = anon.growth();
  std::printf("%zu lines over %zu distinct ranks: anonymous growth %.1f MiB\n", lines, distinct,
              run.anon_growth / 1048576.0);
  return run;
}

// As many distinct ranks as lines: per-rank state is kept for the first
// kMaxKeptRanks only (rule statistics, progress summaries, last progress
// lines), and the result says what was capped: evidence kept of the matches
// (exact), ranks seen (estimated) against kept.
TEST(Bounds, ManyDistinctRanksCostWhatFewDo) {
  TempDir dir;
  const size_t kLines = kSanitized ? 100'000 : 400'000;
  const RanksRun few = ScanRanks(dir, kLines, 64);
  RanksRun many = ScanRanks(dir, kLines, kLines);
  const ScanResult& r = many.result;
  EXPECT_EQ(r.distinct_ranks.kept.size(), kMaxKeptRanks);
  EXPECT_TRUE(r.distinct_ranks.truncated);
  EXPECT_LE(r.ranks.size(), kMaxKeptRanks + 1);  // + the rank-less summary
  for (const auto& [rule, st] : r.rule_stats) {
    EXPECT_LE(st.ranks.size(), kMaxKeptRanks);
    EXPECT_LE(st.hosts.size(), kMaxKeptHosts);
    EXPECT_LE(st.rank_min_seq.size(), kMaxKeptRanks);
  }
  // The true counts: matches exact, distinct ranks within the sketch's error.
  const ScanCaps caps = CapsOf(r);
  EXPECT_TRUE(caps.any());
  EXPECT_TRUE(caps.ranks_truncated);
  EXPECT_EQ(caps.ranks_kept, kMaxKeptRanks);
  EXPECT_NEAR(static_cast<double>(caps.ranks_seen), static_cast<double>(kLines), kLines * 0.06);
  EXPECT_EQ(caps.evidence_kept, r.evidence.size());
  EXPECT_EQ(caps.matches, few.result.matches);
  EXPECT_FALSE(CapsOf(few.result).ranks_truncated);
  EXPECT_EQ(CapsOf(few.result).ranks_seen, 64u);
  // In the JSON report and the text too.
  Diagnosis d = Correlate(*Rules(), many.result, CorrelateOptions{});
  std::string json = ReportJson(*Rules(), many.result, d);
  EXPECT_THAT(json, HasSubstr("\"caps\":{\"truncated\":true"));
  EXPECT_THAT(json, HasSubstr(StrCat("\"kept\":", kMaxKeptRanks, ",\"truncated\":true")));
  EXPECT_THAT(ReportText(*Rules(), many.result, d), HasSubstr("capped: "));
  // The memory itself is measured in bench/README.md ("Memory bound"):
  // in-flight chunk results dominate both runs here, and the machine's load
  // makes sampled peaks too noisy to assert on; the sizes above are exact.
}

// Below the bound nothing is capped and the counts are exact.
TEST(Bounds, FewRanksAreExact) {
  TempDir dir;
  const std::string path = dir.Sub("ranks.log");
  WriteFile(path, ManyRanksLog(1000, 1000));
  ScanOptions so;
  so.threads = 2;
  Scanner scanner(Rules(), so);
  ASSERT_TRUE(scanner.ScanPaths({path}).ok());
  ScanResult r = scanner.Finish();
  const ScanCaps caps = CapsOf(r);
  EXPECT_FALSE(caps.ranks_truncated);
  EXPECT_EQ(caps.ranks_seen, 1000u);
  EXPECT_EQ(caps.ranks_kept, 1000u);
  EXPECT_FALSE(caps.hosts_truncated);
}

CompileOptions Caps() { return CompileOptions{}; }

absl::Status CompileOne(const TempDir& d, const std::string& name,
                        const std::vector<SignalSpec>& sigs, double* secs,
                        const CompileOptions& opts = Caps()) {
  const std::string src = d.Sub(name);
  WriteTree(src, {{"r", RuleJson("hostile", sigs)}});
  auto t0 = Clock::now();
  auto r = CompileRuleSource(src, opts);
  *secs = Since(t0);
  return r.ok() ? absl::OkStatus() : r.status();
}

TEST(Bounds, OverlongPatternIsRejectedNamingTheField) {
  TempDir d;
  double secs = 0;
  absl::Status st = CompileOne(d, "long", {{"s", "FAIL" + std::string(5000, 'x'), "FAIL" + std::string(5000, 'x')}}, &secs);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr("signals[0].pattern"));
  EXPECT_THAT(std::string(st.message()), HasSubstr("r.json"));
}

// Repeats nested inside repeats multiply: ((x{30}){30}){30} is 27,000
// positions although every single bound is under the cap.
TEST(Bounds, NestedBoundedRepeatsAreCapped) {
  TempDir d;
  double secs = 0;
  absl::Status st = CompileOne(
      d, "nested", {{"s", "FAIL((ab{30}){30}){30}", "FAIL" + std::string("ab")}}, &secs);
  std::printf("nested repeats: %.2f s: %s\n", secs, std::string(st.message()).c_str());
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr("signals[0].pattern"));
  EXPECT_LT(secs, 10.0);
}

// Many bounded repeats in sequence, each under the cap, a pattern under the
// length cap: the total width is capped too.
TEST(Bounds, ManyBoundedRepeatsInOnePatternAreCapped) {
  TempDir d;
  std::string p = "FAIL";
  for (int i = 0; i < 120; ++i) p += "[a-z]{0,30}";
  double secs = 0;
  absl::Status st = CompileOne(d, "wide", {{"s", p, "FAIL"}}, &secs);
  std::printf("120 bounded repeats: %.2f s: %s\n", secs, std::string(st.message()).c_str());
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr("signals[0].pattern"));
  EXPECT_LT(secs, 10.0);
}

// A rule file of a million signals is refused at the cap, while it is read,
// in bounded time -- not after a million RE2 compiles.
TEST(Bounds, MillionSignalsRefusedEarly) {
  TempDir d;
  const std::string src = d.Sub("million");
  std::string body = RuleJson("hostile", {{"s0", "FAIL-0", "FAIL-0"}});
  std::string more;
  more.reserve(size_t{130} * 1'000'000);
  for (int i = 1; i < 1'000'000; ++i) {
    std::string n = std::to_string(i);
    more += ",{\"id\": \"s" + n + "\", \"pattern\": \"FAIL-" + n +
            "\", \"role\": \"initiating\", \"examples\": [\"FAIL-" + n +
            "\"], \"counter_examples\": [\"no\"]}";
  }
  body.insert(body.size() - 2, more);  // before the closing "]}"
  WriteTree(src, {{"r", body}});
  auto t0 = Clock::now();
  CompileOptions opts;
  opts.max_file_bytes = size_t{1} << 30;  // past the file cap: the signal cap must hold
  auto r = CompileRuleSource(src, opts);
  double secs = Since(t0);
  std::printf("1M signals: refused in %.2f s\n", secs);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("cap of 20000 signals"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("r.json"));
  EXPECT_LT(secs, 30.0);
  // With the default file cap it is refused before it is even parsed.
  r = CompileRuleSource(src);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("for one rule file"));
}

// The loader holds a compiled file to the same caps: a ruleset edited (or
// made) by hand past them does not load -- its patterns would otherwise go
// to RE2 and, on a database mismatch, to a Hyperscan recompile.
TEST(Bounds, LoaderEnforcesTheCompilerCaps) {
  TempDir d;
  std::string p = "FAIL", hostile = "FAIL";
  for (int i = 0; i < 8; ++i) p += "[a-z]{0,16}", hostile += "[a-z]{0,99}";
  ASSERT_EQ(p.size(), hostile.size());
  WriteTree(d.Sub("src"), {{"r", RuleJson("wide", {{"s", p, "FAIL"}})}});
  auto r = CompileRuleSource(d.Sub("src"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::string buf = r->buffer;
  auto* pat = fb::GetMutableRuleset(buf.data())->mutable_rules()->GetMutableObject(0)
                  ->mutable_signals()->GetMutableObject(0)->mutable_pattern();
  ASSERT_EQ(pat->size(), hostile.size());
  std::memcpy(const_cast<char*>(pat->c_str()), hostile.data(), hostile.size());
  auto rs = Ruleset::LoadBuffer(buf, "edited.flrules");
  ASSERT_FALSE(rs.ok());
  EXPECT_THAT(std::string(rs.status().message()), HasSubstr("edited.flrules"));
  EXPECT_THAT(std::string(rs.status().message()), HasSubstr("signals[0].pattern"));
}

// Thousands of individually harmless patterns: above the cap they are
// refused before any compile; at a few thousand they compile in bounded time.
TEST(Bounds, ThousandsOfPatterns) {
  TempDir d;
  std::vector<SignalSpec> sigs;
  for (int i = 0; i < 2000; ++i) {
    std::string lit = "ERRCODE-" + std::to_string(i) + "-";
    sigs.push_back({"s" + std::to_string(i), lit + "[0-9a-f]{8}[ :][^\\n]{0,20}x", lit + "deadbeef x"});
  }
  double secs = 0;
  absl::Status st = CompileOne(d, "many", sigs, &secs);
  std::printf("2000 patterns: %.2f s: %s\n", secs, st.ok() ? "ok" : std::string(st.message()).c_str());
  EXPECT_LT(secs, 60.0);
  CompileOptions small = Caps();
  small.max_signals = 1000;
  st = CompileOne(d, "many-capped", sigs, &secs, small);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr("cap"));
  EXPECT_LT(secs, 30.0);
}

}  // namespace
}  // namespace faultline::faults
