// The hand parser of literal-and-digits extracts (ruleset/digit_shape.h)
// against RE2::PartialMatch: on the examples and counter-examples of every
// signal of rulesets/ whose extract it takes over, and on edge cases.
#include "ruleset/digit_shape.h"

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include "re2/re2.h"
#include "re2_groups.h"

namespace faultline {
namespace {

using testing::Re2Groups;

// RE2's answer: the captures in group order, or nullopt when it does not match.
std::optional<std::vector<std::string>> ByRe2(const RE2& re, std::string_view s) {
  auto vals = Re2Groups(re, s);
  if (!vals) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& v : *vals) out.emplace_back(v.data(), v.size());
  return out;
}

std::optional<std::vector<std::string>> ByShape(const DigitShape& shape, std::string_view s) {
  std::string_view vals[kMaxShapeCaptures];
  if (!MatchDigitShape(shape, s, vals).value_or(false)) return std::nullopt;
  return std::vector<std::string>(vals, vals + shape.captures.size());
}

// RE2 compiles `pattern` and names its groups as the hand parser does.
void ExpectRe2Names(const RE2& re, const std::vector<std::string>& captures, std::string_view pattern) {
  EXPECT_TRUE(re.ok()) << pattern;
  std::vector<std::string> names(re.NumberOfCapturingGroups());
  for (const auto& [name, idx] : re.NamedCapturingGroups()) names[idx - 1] = name;
  EXPECT_EQ(captures, names) << pattern;
}

// Both ways on `lines`; the number of lines compared.
int ExpectSame(std::string_view pattern, const std::vector<std::string>& lines) {
  const std::optional<DigitShape> shape = ParseDigitShape(pattern);
  if (!shape) return 0;
  RE2 re(pattern);
  // SignalInfo names a shape's captures by the shape, without building RE2.
  ExpectRe2Names(re, shape->captures, pattern);
  for (const std::string& line : lines) {
    EXPECT_EQ(ByShape(*shape, line), ByRe2(re, line)) << pattern << "\n  on: " << line;
  }
  return static_cast<int>(lines.size());
}

TEST(DigitShape, TakesLiteralsAndDigitsOnly) {
  EXPECT_TRUE(ParseDigitShape("rank (?P<rank>[0-9]+)"));
  EXPECT_TRUE(ParseDigitShape("global rank: (?P<rank>[0-9]+), TIMEOUT\\(ms\\): (?P<t>[0-9]+)"));
  EXPECT_FALSE(ParseDigitShape("(?P<rank>[0-9]+) rank"));          // no leading literal
  EXPECT_FALSE(ParseDigitShape("rank (?P<rank>[0-9]+)0"));         // literal starts with a digit
  EXPECT_FALSE(ParseDigitShape("r(?P<a>[0-9]+)(?P<b>[0-9]+)"));   // two runs back to back
  EXPECT_FALSE(ParseDigitShape("rank.(?P<rank>[0-9]+)"));          // a metacharacter
  EXPECT_FALSE(ParseDigitShape("rank (?P<rank>[0-9]*)"));
  EXPECT_FALSE(ParseDigitShape("rank (?P<rank>\\d+)"));
  EXPECT_FALSE(ParseDigitShape("rank ([0-9]+)"));                  // unnamed
  EXPECT_FALSE(ParseDigitShape("(?i)rank (?P<rank>[0-9]+)"));
  EXPECT_FALSE(ParseDigitShape("rank (?P<rank>[0-9]+)|x"));
  EXPECT_FALSE(ParseDigitShape("ranks? (?P<rank>[0-9]+)"));
}

constexpr char kNumber[] =
    "[-+]?(?:[0-9]+\\.?[0-9]*(?:[eE][-+]?[0-9]+)?|nan|NaN|NAN|inf|INF|Infinity)";

TEST(DigitShape, TakesBlankRunsLiteralCapturesAndALastNumber) {
  const std::string number = kNumber;
  EXPECT_TRUE(ParseDigitShape("iteration[ \\t]+(?P<step>[0-9]+)/"));
  EXPECT_TRUE(ParseDigitShape("iteration +(?P<step>[0-9]+)"));
  EXPECT_TRUE(ParseDigitShape("ms\\): (?P<ms>[0-9.]+)"));
  EXPECT_TRUE(ParseDigitShape(" (?P<metric>lm loss): (?P<value>" + number + ")"));
  EXPECT_FALSE(ParseDigitShape(" (?P<value>" + number + ") x"));        // a number not last
  EXPECT_FALSE(ParseDigitShape("a (?P<v>[0-9.]+).b"));                  // a dot after [0-9.]+
  EXPECT_FALSE(ParseDigitShape("a[ \\t]+(?P<m> x)"));                 // a blank after blanks
  EXPECT_FALSE(ParseDigitShape("a(?P<v>[0-9]+)[ \\t]*(?P<w>[0-9]+)")); // not a blank run
  EXPECT_FALSE(ParseDigitShape("a (?P<m>l.ss)"));                       // not a literal
}

TEST(DigitShape, SameAsRe2OnNumbersAndBlankRuns) {
  const std::vector<std::string> lines = {
      "",
      " iteration       10/     100 | lm loss: 3.412E+00 | grad norm: 1.2 |",
      "iteration\t\t7/ 9 | lm loss: nan |",
      "iteration /iteration 5/ | lm loss: -nan | lm loss: 1",
      "iteration5/ iteration 6/",
      " lm loss: -x lm loss: +Infinity",
      " lm loss: 1. lm loss: 2",
      " lm loss: 1e lm loss: 1e+ 1e-3",
      " lm loss: 1.5e-3x",
      " lm loss: inf lm loss: INFINITY lm loss: Inf",
      " lm loss: -.5",
      " lm loss: + 1 lm loss: 0x10",
      "elapsed time per iteration (ms): 1234.5.6 | x",
      "elapsed time per iteration (ms): .",
      "elapsed time per iteration (ms): | elapsed time per iteration (ms): 7",
  };
  const std::string number = kNumber;
  for (const std::string& p :
       {std::string("iteration[ \\t]+(?P<step>[0-9]+)/"), std::string("iteration +(?P<step>[0-9]+)"),
        " (?P<metric>lm loss): (?P<value>" + number + ")", "lm loss: (?P<value>" + number + ")",
        std::string("elapsed time per iteration \\(ms\\): (?P<elapsed_ms>[0-9.]+)"),
        std::string("iteration[ \\t]+(?P<step>[0-9]+)/ +(?P<of>[0-9]+) \\| (?P<m>lm loss)")}) {
    EXPECT_EQ(ExpectSame(p, lines), static_cast<int>(lines.size())) << p;
  }
}

TEST(DigitShape, SameAsRe2OnEdgeCases) {
  const std::vector<std::string> lines = {
      "",
      "rank",
      "rank ",
      "rank x",
      "rank 7",
      "rank 12345678901234567890",
      "rank rank 3",
      "rank x rank 4 rank 5",
      "rank 1, size: x rank 2, size: 3",
      "rank 1, size: 2",
      "rank 1, size: ",
      "rank 1, size: 2, size: 3",
      "rankrank 9",
      "rank 0009 ",
      "rank 9\nrank 8",
      "global rank: 3, TIMEOUT(ms): 600000",
      "global rank: 3, TIMEOUT(ms):  600000 global rank: 4, TIMEOUT(ms): 5",
      "global rank: , TIMEOUT(ms): 1 global rank: 2, TIMEOUT(ms): 3",
      "global rank: 3, TIMEOUT(ms): x",
  };
  for (const char* p : {"rank (?P<rank>[0-9]+)", "rank (?P<r>[0-9]+), size: (?P<s>[0-9]+)",
                        "rank (?P<r>[0-9]+) ", "rank\\ (?P<r>[0-9]+)",
                        "global rank: (?P<rank>[0-9]+), TIMEOUT\\(ms\\): (?P<t>[0-9]+)"}) {
    EXPECT_EQ(ExpectSame(p, lines), static_cast<int>(lines.size())) << p;
  }
}

TEST(DigitShape, TakesOptionalBytesAndItemsAfterTheLastCapture) {
  const std::string number = kNumber;
  EXPECT_TRUE(ParseDigitShape("iteration +(?P<step>[0-9]+)/ *[0-9]+ \\|"));
  EXPECT_TRUE(ParseDigitShape("\\{'(?P<metric>loss)': '?(?P<value>" + number + ")"));
  EXPECT_FALSE(ParseDigitShape("a '?(?P<v>" + number + ") b"));      // a number not last
  EXPECT_FALSE(ParseDigitShape("a 1?(?P<v>[0-9]+)"));                  // the byte can start it
  EXPECT_FALSE(ParseDigitShape("a (?P<v>[0-9]+)[0-9]*"));              // a run after the run
  EXPECT_FALSE(ParseDigitShape("a (?P<v>[0-9]+)/[^\\n]*x"));         // a gap after a capture
  EXPECT_FALSE(ParseDigitShape("a (?P<v>[0-9]+)/ *[0-9]+?"));          // lazy
  EXPECT_FALSE(ParseDigitShape("a (?P<v>[0-9]+)/ *(?P<w>[0-9]+)"));    // not a blank run before it
}

TEST(DigitShape, SameAsRe2WithOptionalBytesAndTails) {
  const std::vector<std::string> lines = {
      "",
      " iteration      100/  100000 | consumed samples: 3 |",
      " iteration      100/100000 |",
      " iteration 100/ x | iteration 101/ 7 |",
      " iteration 100/ 7| iteration 102/7 |",
      "iteration  5/  |",
      "{'loss': 2.3456, 'grad_norm': 1.2345, 'learning_rate': 4.9e-05, 'epoch': 0.01}",
      "{'loss': '1.832', 'grad_norm': '0.9412', 'learning_rate': '1.998e-05', 'epoch': '0.42'}",
      "{'loss': nan, 'grad_norm': ''nan'}",
      "{'loss': ''1 {'loss': 'x {'loss': '-inf",
      "'grad_norm': 'x 'grad_norm': '+.5 'grad_norm': -3e+7'",
  };
  const std::string number = kNumber;
  for (const std::string& p : {std::string("iteration +(?P<step>[0-9]+)/ *[0-9]+ \\|"),
                               "\\{'(?P<metric>loss)': '?(?P<value>" + number + ")",
                               "'(?P<metric>grad_norm)': '?(?P<value>" + number + ")"}) {
    EXPECT_EQ(ExpectSame(p, lines), static_cast<int>(lines.size())) << p;
  }
}

// RE2's and the items' answers on `lines`; the number of lines compared.
int ExpectSameItems(std::string_view pattern, const std::vector<std::string>& lines) {
  const std::optional<ItemShape> items = ParseItemShape(pattern);
  if (!items) return 0;
  RE2 re(pattern);
  EXPECT_TRUE(re.ok()) << pattern;
  int n = 0;
  for (const std::string& line : lines) {
    const std::optional<bool> m = MatchItemShape(*items, line);
    if (!m) continue;
    EXPECT_EQ(*m, RE2::PartialMatch(line, re)) << pattern << "\n  on: " << line;
    ++n;
  }
  return n;
}

TEST(ItemShape, TakesLiteralsRunsOptionalBytesNumbersGroupsAndGaps) {
  const std::string number = kNumber;
  EXPECT_TRUE(ParseItemShape("iteration[ \\t]+[0-9]+/[ \\t]*[0-9]+ \\|[^\\n]* lm loss: " + number));
  EXPECT_TRUE(ParseItemShape("\\{'loss': '?" + number + "'?, '(?:grad_norm|learning_rate)'"));
  EXPECT_TRUE(ParseItemShape("consumed samples: +[0-9]+ \\|"));
  EXPECT_TRUE(ParseItemShape("[0-9]+ x"));                  // no leading literal
  EXPECT_TRUE(ParseItemShape("a(?P<v>[0-9]+)"));            // its capture is a plain group
  EXPECT_TRUE(ParseItemShape("a(?:b|c)?"));
  EXPECT_TRUE(ParseItemShape("a(?:b?|c)"));
  EXPECT_TRUE(ParseItemShape("(?:^|[ \\t,\\]])rank=[a-z_]*[0-9]?"));
  EXPECT_FALSE(ParseItemShape("a[0-9]+?"));                 // lazy
  EXPECT_FALSE(ParseItemShape("a[0-9]{2}"));                // counted
  EXPECT_FALSE(ParseItemShape("a[^0-9]"));                  // negated, but for the gap
  EXPECT_FALSE(ParseItemShape("a.b"));
  EXPECT_FALSE(ParseItemShape("a|b"));
  EXPECT_FALSE(ParseItemShape("a(?:b|c)+"));
  EXPECT_FALSE(ParseItemShape("a[^\\n]+b"));
  EXPECT_FALSE(ParseItemShape("(?i)abc"));
  EXPECT_FALSE(ParseItemShape("a\\b"));
}

TEST(ItemShape, SameAsRe2OnEdgeCases) {
  const std::vector<std::string> lines = {
      "",
      "iteration 1/2 | lm loss: 3",
      "iteration 1/2 | lm loss: x | lm loss: -1e5",
      "iteration 1/2 |lm loss: 3",
      "iteration\t1/\t2 | grad norm: 3 lm loss: .5",
      "iteration 1/2 |\n lm loss: 3",
      "iteration 1/ | lm loss: 3 iteration 4/5 | lm loss: nan",
      "iteration 1/2 | lm loss: 3 \xc3\xa9",
      "lm loss: 1 iteration 1/2 |",
      "{'loss': 2.3456, 'grad_norm': 1.2345, 'learning_rate': 4.9e-05}",
      "{'loss': '1.832', 'learning_rate': '1.998e-05'}",
      "{'loss': '1.832, 'grad_norm': 1}",
      "{'loss': 1e, 'grad_norm': 2}",
      "{'loss': 1.e5', 'grad_norm': '+inf",
      "{'loss': '', 'grad_norm': 1}",
      "{'loss': Infinity', 'epoch': 1}",
      "{'loss': 2, 'grad_norm': 'x {'loss': 3, 'grad_norm': 4",
      "consumed samples:    12 | consumed samples: 1|",
  };
  const std::string number = kNumber;
  int n = 0;
  for (const std::string& p :
       {"iteration[ \\t]+[0-9]+/[ \\t]*[0-9]+ \\|[^\\n]* lm loss: " + number,
        "iteration[ \\t]+[0-9]+/[ \\t]*[0-9]+ \\|[^\\n]* grad norm: " + number,
        "\\{'loss': '?" + number + "'?, '(?:grad_norm|learning_rate)'",
        "\\{'loss': '?" + number + "'?, 'grad_norm': '?" + number,
        std::string("consumed samples: +[0-9]+ \\|"), std::string("iteration 1/2 \\|[^\\n]*")}) {
    n += ExpectSameItems(p, lines);
  }
  // A gap over a line with non-ASCII bytes is left to RE2 (UTF-8 there).
  EXPECT_FALSE(MatchItemShape(*ParseItemShape("a[^\\n]*b"), "a\xc3\xa9" "b"));
  EXPECT_EQ(MatchItemShape(*ParseItemShape("a +b"), "a \xc3" "b"), std::optional<bool>(false));
  EXPECT_GT(n, 90);
}

// RE2's captures, a null for a group that did not take part; nullopt when
// it does not match.
std::optional<std::vector<std::optional<std::string>>> CapturesByRe2(const RE2& re, std::string_view s) {
  auto vals = Re2Groups(re, s);
  if (!vals) return std::nullopt;
  std::vector<std::optional<std::string>> out;
  for (const auto& v : *vals) {
    out.push_back(v.data() ? std::optional<std::string>(std::string(v.data(), v.size())) : std::nullopt);
  }
  return out;
}

// RE2's and the capture items' answers on `lines` (the names too); the number
// of lines compared.
int ExpectSameCaptures(std::string_view pattern, const std::vector<std::string>& lines) {
  const std::optional<ItemShape> shape = ParseCaptureShape(pattern);
  if (!shape) return 0;
  RE2 re(pattern);
  ExpectRe2Names(re, shape->captures, pattern);
  int n = 0;
  for (const std::string& line : lines) {
    std::string_view vals[kMaxShapeCaptures];
    const std::optional<bool> m = MatchCaptureShape(*shape, line, vals);
    if (!m) continue;
    std::optional<std::vector<std::optional<std::string>>> mine;
    if (*m) {
      mine.emplace();
      for (size_t k = 0; k < shape->captures.size(); ++k) {
        mine->push_back(vals[k].data() ? std::optional<std::string>(std::string(vals[k])) : std::nullopt);
      }
    }
    EXPECT_EQ(mine, CapturesByRe2(re, line)) << pattern << "\n  on: " << line;
    ++n;
  }
  return n;
}

// The patterns of key_value_step (rulesets/nccl/training-progress.json).
const char* const kKvPattern =
    "[ \\t,|\\]](global_step|step|iter|iteration)=[0-9]+[ \\t,][^\\n]*[ \\t,](step_time|iter_time|time_per_step|"
    "step_ms|time_ms|elapsed|tokens_per_s|tokens_per_sec|tok_per_s|tps|samples_per_s|samples_per_sec|"
    "throughput)[a-z_]*=[0-9]";
const char* const kKvExtracts[] = {
    "[ \\t,|\\]](?:global_step|step|iter|iteration)=(?P<step>[0-9]+)",
    "[ \\t,](?:(?:step_time_ms|iter_time_ms|step_ms|time_ms|elapsed_ms)=(?P<step_time_ms>[0-9.]+)|(?:step_time|"
    "step_time_s|iter_time|iter_time_s|time_per_step|elapsed_s)=(?P<step_time_s>[0-9.]+)|(?:tokens_per_s|"
    "tokens_per_sec|tok_per_s|tps|samples_per_s|samples_per_sec|throughput)=(?P<throughput>[0-9.]+))",
    "(?:^|[ \\t,\\]])rank=(?P<rank>[0-9]+)",
};

// Lines of key=value pieces in random order and spacing, some cut short.
std::vector<std::string> RandomKvLines(int count) {
  const char* const keys[] = {"rank", "step", "global_step", "iter", "iteration", "step_time", "step_time_ms",
                              "step_time_s", "time_ms", "elapsed", "elapsed_s", "tokens_per_s", "tps",
                              "throughput", "tok_per_s_x", "loss", "lr", "xstep", "myrank", "samples_per_sec"};
  const char* const values[] = {"12", "0", "4428.4", "1.2.3", "", "x", "9e5", "007", "3s", "78927"};
  const char* const seps[] = {" ", "\t", ",", " | ", "]", ", ", "", "="};
  std::mt19937 rng(20261204);
  std::vector<std::string> lines;
  for (int i = 0; i < count; ++i) {
    std::string line = rng() % 3 == 0 ? "[train]" : rng() % 2 ? "" : "2025-01-07 10:12:03,441 INFO ";
    const int pieces = 1 + static_cast<int>(rng() % 7);
    for (int k = 0; k < pieces; ++k) {
      line += std::string(k || rng() % 2 ? seps[rng() % 8] : "") + keys[rng() % 20] + "=" + values[rng() % 10];
    }
    if (rng() % 5 == 0) line.resize(rng() % (line.size() + 1));
    lines.push_back(line);
  }
  return lines;
}

TEST(ItemShape, TakesKeyValueStepWithGroupsClassesAndStart) {
  ASSERT_TRUE(ParseItemShape(kKvPattern));
  for (const char* x : kKvExtracts) {
    EXPECT_FALSE(ParseDigitShape(x)) << x;
    ASSERT_TRUE(ParseCaptureShape(x)) << x;
  }
  EXPECT_FALSE(ParseCaptureShape("a(?P<v>[0-9]+)[^\\n]*b"));  // a gap: RE2's order is not the search's
  EXPECT_FALSE(ParseCaptureShape("a([0-9]+)"));               // unnamed
  EXPECT_FALSE(ParseCaptureShape("a[0-9]+"));                 // no capture
}

TEST(ItemShape, SameAsRe2OnKeyValueLines) {
  std::vector<std::string> lines = RandomKvLines(4000);
  for (const char* real : {"[train] rank=19 step=20 loss=8.7287 step_time_ms=4428.4 tokens_per_s=78927",
                           "2025-01-07 10:12:03,441 INFO rank=3 step=1200 loss=2.8812 lr=2.9e-04 tokens_per_sec=41233.9",
                           "rank=0 | iter=500 | step_time=0.412s | tps=9832 | grad_norm=0.88",
                           "rank=7 step=3 step_time=1.5 step_time_ms=1500 throughput=9",
                           "[rank3]: rank=3 step=3 time_ms=12 tps=1", "rank=x,rank=4 step=1 elapsed=2"}) {
    lines.emplace_back(real);
  }
  EXPECT_EQ(ExpectSameItems(kKvPattern, lines), static_cast<int>(lines.size()));
  int matched = 0;
  for (const char* x : kKvExtracts) {
    EXPECT_EQ(ExpectSameCaptures(x, lines), static_cast<int>(lines.size())) << x;
    const RE2 re(x);
    for (const std::string& line : lines) matched += RE2::PartialMatch(line, re) ? 1 : 0;
  }
  EXPECT_GT(matched, 3000);  // the random lines match often, not only the real ones
}

TEST(ItemShape, SameAsRe2OnOptionalGroupsAndClasses) {
  const std::vector<std::string> lines = {"", "a", "ab", "abc", "a1", "a12b", "xa_1", "a_b2c", "a-", "ac3", "abb",
                                          "a\xc3\xa9" "b", "zz ab1 ac", "A_1", "a9", "a 1"};
  for (const char* p : {"a(?:b|c)?(?P<d>[0-9])", "a(?:b?|c)(?P<d>[0-9]+)?", "(?:^|[ _])(?P<w>[a-z]+)[0-9]?",
                        "a(?P<x>b|bc)c?", "[A-Za-z_]+(?P<n>[0-9])", "a(?:(?P<p>b)|(?P<q>c)|_)[0-9]*",
                        "a[_-]?(?P<t>[b-c]*)"}) {
    if (ParseCaptureShape(p)) {
      EXPECT_EQ(ExpectSameCaptures(p, lines), static_cast<int>(lines.size())) << p;
    } else {
      ADD_FAILURE() << "not taken: " << p;
    }
    EXPECT_EQ(ExpectSameItems(p, lines), static_cast<int>(lines.size())) << p;
  }
}

void AddStrings(simdjson::simdjson_result<simdjson::dom::element> e, std::vector<std::string>* out) {
  simdjson::dom::array a;
  if (e.get(a)) return;
  for (simdjson::dom::element x : a) {
    std::string_view s;
    if (!x.get(s)) out->emplace_back(s);
  }
}

TEST(DigitShape, SameAsRe2OnEveryRulesetExample) {
  int signals = 0;
  int lines = 0;
  int items = 0;
  int captured = 0;
  simdjson::dom::parser parser;
  const std::filesystem::path dir = std::filesystem::path(FL_SOURCE_DIR) / "rulesets";
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir)) {
    if (f.path().extension() != ".json") continue;
    simdjson::dom::element doc;
    ASSERT_FALSE(parser.load(f.path().string()).get(doc)) << f.path();
    simdjson::dom::array sigs;
    if (doc["signals"].get(sigs)) continue;
    for (simdjson::dom::element sig : sigs) {
      bool caseless = false;
      if (sig["caseless"].get(caseless) == simdjson::SUCCESS && caseless) continue;
      std::vector<std::string> text;
      AddStrings(sig["examples"], &text);
      AddStrings(sig["counter_examples"], &text);
      std::vector<std::string> extracts;
      std::string_view one;
      if (!sig["extract"].get(one)) extracts.emplace_back(one);
      AddStrings(sig["extract"], &extracts);
      AddStrings(sig["extract_more"], &extracts);
      std::string_view pattern;
      if (!sig["pattern"].get(pattern)) items += ExpectSameItems(pattern, text) > 0 ? 1 : 0;
      for (const std::string& x : extracts) {
        const int n = ExpectSame(x, text);
        signals += n > 0 || ParseDigitShape(x) ? 1 : 0;
        lines += n;
        captured += ParseDigitShape(x) ? 0 : ExpectSameCaptures(x, text) > 0 ? 1 : 0;
      }
    }
  }
  // The default ruleset has such extracts (pg_init_options among them).
  EXPECT_GT(signals, 10);
  EXPECT_GT(lines, 20);
  // Patterns the items take (the Megatron and HF metric lines among them).
  EXPECT_GT(items, 20);
  // Extracts with groups the items take (key_value_step's among them).
  EXPECT_GT(captured, 3);
}

// ItemsBefore: the items of a pattern before the items of an extract it ends
// in, a literal they share cut in two.
TEST(ItemsBefore, TheItemsBeforeASuffixOnly) {
  auto items = [](std::string_view p) { return *ParseItemShape(p); };
  const ItemShape pg = items(R"(ProcessGroupNCCL initialization options: size: [0-9]+, global rank: [0-9]+, TIMEOUT\(ms\): [0-9]+)");
  std::optional<std::vector<ShapeItem>> before =
      ItemsBefore(pg, items(R"(global rank: (?P<rank>[0-9]+), TIMEOUT\(ms\): (?P<timeout_ms>[0-9]+))"));
  ASSERT_TRUE(before);
  ASSERT_EQ(before->size(), 3u);
  EXPECT_EQ((*before)[0].texts[0], "ProcessGroupNCCL initialization options: size: ");
  EXPECT_EQ((*before)[1].kind, ShapeItem::kRun);
  EXPECT_EQ((*before)[2].texts[0], ", ");
  // The whole pattern: nothing before.
  before = ItemsBefore(pg, pg);
  ASSERT_TRUE(before);
  EXPECT_TRUE(before->empty());
  // Not a suffix: a capture short of the end, another literal, another class.
  EXPECT_FALSE(ItemsBefore(pg, items("global rank: (?P<rank>[0-9]+)")));
  EXPECT_FALSE(ItemsBefore(pg, items(R"(global Rank: (?P<rank>[0-9]+), TIMEOUT\(ms\): (?P<t>[0-9]+))")));
  EXPECT_FALSE(ItemsBefore(pg, items(R"(global rank: (?P<rank>[0-9]+), TIMEOUT\(ms\): (?P<t>[0-9.]+))")));
  EXPECT_FALSE(ItemsBefore(items("ab [0-9]+ x"), items("x[0-9]+")));
  // Before the suffix, only what ItemsEndAt reads back: not a gap, a group, '^'.
  EXPECT_FALSE(ItemsBefore(items(R"(a[^\n]*b: [0-9]+)"), items("b: (?P<x>[0-9]+)")));
  EXPECT_FALSE(ItemsBefore(items("a(?:b [0-9]+)?c: [0-9]+"), items("c: (?P<x>[0-9]+)")));
  EXPECT_FALSE(ItemsBefore(items("^a c: [0-9]+"), items("c: (?P<x>[0-9]+)")));
  EXPECT_TRUE(ItemsBefore(items("(?:ab|cd)'?x*[0-9]+c: [0-9]+"), items("c: (?P<x>[0-9]+)")));
}

// ItemsEndAt against RE2: some start b with the items matching s[b, end)
// whole, on random texts of the items' bytes, at every end.
TEST(ItemsBefore, EndAtSameAsRe2) {
  std::mt19937 rng(20);
  const char kBytes[] = "ab0 1,'x\t";
  int checked = 0, held = 0;
  for (std::string_view p : {"ab[0-9]+, ", R"(x[ \t]*[0-9]+)", "a'?[0-9]+ ", "(?:ab|a)b+", "[0-9]+[0-9]", "a+a+b",
                             "[0-9]+,? ?x*", "b a'?'?1", "x", "a1[0-9]+", "[0-9]+, [0-9]+", "a,x?[0-9]*", "1[0-9]+1"}) {
    const std::optional<ItemShape> shape = ParseItemShape(p);
    ASSERT_TRUE(shape) << p;
    RE2 re(p);
    ASSERT_TRUE(re.ok()) << p;
    for (int n = 0; n < 400; ++n) {
      std::string s;
      const size_t len = rng() % 14;
      for (size_t k = 0; k < len; ++k) s.push_back(kBytes[rng() % (sizeof(kBytes) - 1)]);
      for (size_t end = 0; end <= s.size() + 1; ++end) {
        bool want = false;
        for (size_t b = 0; b <= end && end <= s.size() && !want; ++b) want = RE2::FullMatch(s.substr(b, end - b), re);
        EXPECT_EQ(ItemsEndAt(shape->items, s, end), want ? 1 : 0) << p << " on '" << s << "' at " << end;
        ++checked;
        held += want;
      }
    }
  }
  EXPECT_GT(held, 1000);
  EXPECT_GT(checked - held, 1000);
}

}  // namespace
}  // namespace faultline
