// An extract ending in a bounded run of [^\n] (ruleset.h, TailRun): RE2
// runs its head (the run cut to its minimum) and the run's rest is taken
// by hand. The answer must be the whole extract's in RE2, on every signal
// of the default ruleset that has such an extract.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "re2/re2.h"
#include "re2_groups.h"
#include "ruleset/ruleset.h"

namespace faultline {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

// The whole extract in RE2: its named groups that captured, in group order
// (what ExtractFields appends), or nullopt when it does not match.
std::optional<Fields> ByRe2(const RE2& re, std::string_view s) {
  const auto groups = testing::Re2Groups(re, s);
  if (!groups) return std::nullopt;
  const std::vector<re2::StringPiece>& vals = *groups;
  const int n = static_cast<int>(vals.size());
  std::vector<std::string> names(n);
  for (const auto& [name, idx] : re.NamedCapturingGroups()) names[idx - 1] = name;
  Fields out;
  for (int k = 0; k < n; ++k) {
    if (!names[k].empty() && vals[k].data() != nullptr) out.emplace_back(names[k], std::string(vals[k].data(), vals[k].size()));
  }
  return out;
}

TEST(TailRun, ParsesTheRunAndTheGroupsHoldingIt) {
  auto t = ParseTailRun(R"((?P<exception>[A-Z][a-z]*Error)(?: \(see above\))?: (?P<message>[^\n]{1,200}))");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->head, R"((?P<exception>[A-Z][a-z]*Error)(?: \(see above\))?: (?P<message>[^\n]{1}))");
  EXPECT_EQ(t->more, 199u);
  EXPECT_THAT(t->groups, ::testing::ElementsAre(1));
  t = ParseTailRun(R"((?:    |pid=[0-9]+\) +)(?P<statement>(?:assert|raise) [^\n]{1,200}))");
  ASSERT_TRUE(t.has_value());
  EXPECT_THAT(t->groups, ::testing::ElementsAre(0));
  t = ParseTailRun(R"((?P<crash>(?:double free|free\(\))[^\n]{0,60}))");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->head, R"((?P<crash>(?:double free|free\(\))))");
  EXPECT_EQ(t->more, 60u);
  t = ParseTailRun(R"(what\(\): +[^\n]{1,9})");  // no group holds it: nothing to extend
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->groups.empty());
  // Not taken: a branch beside the run, a run that is not last, a fixed or
  // unbounded run, a run inside a class or escaped, flags.
  EXPECT_FALSE(ParseTailRun(R"((?P<m>abc|x[^\n]{1,200}))"));
  EXPECT_FALSE(ParseTailRun(R"(a|(?P<m>x[^\n]{1,200}))"));
  EXPECT_FALSE(ParseTailRun(R"((?P<m>x[^\n]{1,200})y)"));
  EXPECT_FALSE(ParseTailRun(R"((?P<m>x[^\n]{5}))"));
  EXPECT_FALSE(ParseTailRun(R"((?P<m>x[^\n]{5,5}))"));
  EXPECT_FALSE(ParseTailRun(R"((?P<m>x[^\n]*))"));
  EXPECT_FALSE(ParseTailRun(R"((?P<m>x\[^\n]{1,200}))"));
  EXPECT_FALSE(ParseTailRun(R"((?i)(?P<m>x[^\n]{1,200}))"));
  EXPECT_FALSE(ParseTailRun(R"((?P<m>x[^\n]{1,200})))"));
}

// Every ruleset signal with such an extract, on its examples and on
// messages of every length around the run's bounds, cut by a newline, and
// with a non-ASCII character before, at and past the run's reach (RE2
// counts characters there, not bytes): the same fields as the whole
// extract in RE2.
TEST(TailRun, SameAsTheWholeExtractOnEveryRulesetSignal) {
  auto rs = Ruleset::LoadDefault();
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  size_t signals = 0, lines = 0;
  for (uint32_t g = 0; g < (*rs)->signal_count(); ++g) {
    const SignalInfo& si = (*rs)->signal(g);
    const std::vector<std::string_view> srcs = ExtractsOf(*si.signal);
    bool has_tail = false;
    for (const Extractor& x : si.extracts()) has_tail |= x.tail.has_value();
    if (!has_tail) continue;
    ++signals;
    RE2::Options ro;
    ro.set_log_errors(false);
    ro.set_case_sensitive(!si.signal->caseless());
    std::vector<std::unique_ptr<RE2>> whole;
    for (std::string_view src : srcs) whole.push_back(std::make_unique<RE2>(src, ro));
    std::vector<std::string> subjects;
    for (const auto* ex : *si.signal->examples()) {
      const std::string e = ex->str();
      subjects.push_back(e);
      for (size_t len : {0, 1, 2, 59, 60, 61, 62, 198, 199, 200, 201, 202, 450}) {
        std::string tailtext;
        for (size_t k = 0; k < len; ++k) tailtext.push_back(static_cast<char>('a' + k % 26));
        subjects.push_back(e + tailtext);
        subjects.push_back(e + tailtext + "\nnext line " + tailtext);
        for (size_t at : {size_t{0}, len / 2, len, len + 5}) {
          std::string u = e + tailtext;
          u.insert(std::min(u.size(), e.size() + at), "\xc3\xa9");
          subjects.push_back(u);
          std::string bad = e + tailtext;
          bad.insert(std::min(bad.size(), e.size() + at), "\xff");
          subjects.push_back(bad);
        }
      }
      for (size_t cut = 0; cut < e.size(); cut += 7) subjects.push_back(e.substr(0, cut));
    }
    for (const std::string& s : subjects) {
      std::optional<Fields> want_all;
      Fields want;
      bool any = false;
      for (const auto& re : whole) {
        ASSERT_TRUE(re->ok()) << re->error();
        if (auto f = ByRe2(*re, s)) {
          any = true;
          want.insert(want.end(), f->begin(), f->end());
        }
      }
      std::vector<std::pair<std::string_view, std::string_view>> got_views;
      EXPECT_EQ(si.ExtractFields(s, &got_views), any) << si.signal->id()->str() << ": " << s;
      Fields got;
      for (const auto& [k, v] : got_views) got.emplace_back(std::string(k), std::string(v));
      EXPECT_EQ(got, want) << si.signal->id()->str() << ": " << s;
      ++lines;
    }
  }
  EXPECT_GE(signals, 5u);
  EXPECT_GT(lines, 1000u);
}

// On an ASCII line the whole extract's RE2 is not built; past a non-ASCII
// byte in the run's reach it is, and answers.
TEST(TailRun, WholeExtractBuiltOnlyPastNonAscii) {
  auto rs = Ruleset::LoadDefault();
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  const int rule = (*rs)->FindRule("unrecognised-fatal-error");
  ASSERT_GE(rule, 0);
  const SignalInfo* exc = nullptr;
  for (uint32_t g = (*rs)->first_signal(rule); g < (*rs)->signal_count(); ++g) {
    const SignalInfo& si = (*rs)->signal(g);
    if (si.rule_index != static_cast<uint32_t>(rule)) break;
    if (si.signal->id()->string_view() == "python_exception") exc = &si;
  }
  ASSERT_NE(exc, nullptr);
  ASSERT_FALSE(exc->extracts().empty());
  ASSERT_TRUE(exc->extracts()[0].tail.has_value());
  using P = std::pair<std::string_view, std::string_view>;
  std::vector<P> got;
  EXPECT_TRUE(exc->ExtractFields("[rank3]: torch.OutOfMemoryError: CUDA out of memory.", &got));
  EXPECT_THAT(got, ::testing::ElementsAre(P{"exception", "torch.OutOfMemoryError"},
                                          P{"message", "CUDA out of memory."}));
  EXPECT_FALSE(exc->regex->extracts_built.load());
  got.clear();
  EXPECT_TRUE(exc->ExtractFields("ValueError: caf\xc3\xa9 closed", &got));
  EXPECT_THAT(got, ::testing::ElementsAre(P{"exception", "ValueError"}, P{"message", "caf\xc3\xa9 closed"}));
  EXPECT_TRUE(exc->regex->extracts_built.load());
}

}  // namespace
}  // namespace faultline
