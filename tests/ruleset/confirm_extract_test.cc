// SignalInfo::ConfirmAndExtract (ruleset.h): where a signal's pattern ends
// in its extract, one walk confirms the line and takes the extract's
// captures. Its answer must be RE2's: the pattern's PartialMatch, and the
// extract's captures, on every signal of the default ruleset it takes.
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "re2/re2.h"
#include "re2_groups.h"
#include "ruleset/ruleset.h"

namespace faultline {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

// The extract in RE2: its named groups that captured, in group order.
Fields ByRe2(const RE2& re, std::string_view s) {
  Fields out;
  const auto groups = testing::Re2Groups(re, s);
  if (!groups) return out;
  std::vector<std::string> names(groups->size());
  for (const auto& [name, idx] : re.NamedCapturingGroups()) names[idx - 1] = name;
  for (size_t k = 0; k < names.size(); ++k) {
    const re2::StringPiece& v = (*groups)[k];
    if (!names[k].empty() && v.data() != nullptr) out.emplace_back(names[k], std::string(v.data(), v.size()));
  }
  return out;
}

// Lines around an example: the example, cut, its digits changed, the text
// before its match repeated or dropped, another of its own matches (or a
// piece of one) before or after it.
std::vector<std::string> Around(const std::string& e, std::mt19937& rng) {
  std::vector<std::string> out{e, e + e, e.substr(e.size() / 2) + " " + e, e + " " + e.substr(e.size() / 3)};
  for (size_t cut = 0; cut < e.size(); cut += 5) {
    out.push_back(e.substr(0, cut));
    out.push_back(e.substr(cut));
    out.push_back(e.substr(cut) + ", " + e);
  }
  for (int n = 0; n < 60; ++n) {
    std::string m = e;
    for (int k = 0; k < 3; ++k) {
      const size_t at = rng() % m.size();
      switch (rng() % 4) {
        case 0: m[at] = static_cast<char>('0' + rng() % 10); break;
        case 1: m.erase(at, 1 + rng() % 3); break;
        case 2: m.insert(at, m.substr(rng() % m.size(), 1 + rng() % 12)); break;
        case 3: m[at] = ' '; break;
      }
      if (m.empty()) m = e;
    }
    out.push_back(m);
  }
  return out;
}

TEST(ConfirmAndExtract, SameAsRe2OnEveryRulesetSignalItTakes) {
  auto rs = Ruleset::LoadDefault();
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  std::mt19937 rng(7);
  size_t signals = 0, lines = 0, confirmed = 0;
  bool pg_init = false;
  for (uint32_t g = 0; g < (*rs)->signal_count(); ++g) {
    const SignalInfo& si = (*rs)->signal(g);
    std::vector<std::pair<std::string_view, std::string_view>> got_views;
    std::vector<std::string> examples;
    for (const auto* ex : *si.signal->examples()) examples.push_back(ex->str());
    if (si.signal->counter_examples()) {
      for (const auto* ex : *si.signal->counter_examples()) examples.push_back(ex->str());
    }
    bool taken = false;
    for (const std::string& e : examples) taken |= si.ConfirmAndExtract(e, &got_views).has_value();
    if (!taken) continue;
    ++signals;
    pg_init |= si.signal->id()->str() == "pg_init_options";
    RE2::Options ro;
    ro.set_log_errors(false);
    RE2 pattern(si.signal->pattern()->string_view(), ro);
    RE2 extract(si.signal->extract()->string_view(), ro);
    ASSERT_TRUE(pattern.ok() && extract.ok());
    for (const std::string& e : examples) {
      for (const std::string& s : Around(e, rng)) {
        got_views.clear();
        const std::optional<bool> got = si.ConfirmAndExtract(s, &got_views);
        if (!got) continue;
        const bool want = RE2::PartialMatch(s, pattern);
        EXPECT_EQ(*got, want) << si.signal->id()->str() << ": " << s;
        Fields fields;
        for (const auto& [k, v] : got_views) fields.emplace_back(std::string(k), std::string(v));
        if (want) {
          EXPECT_EQ(fields, ByRe2(extract, s)) << si.signal->id()->str() << ": " << s;
          ++confirmed;
        } else {
          EXPECT_TRUE(fields.empty()) << si.signal->id()->str() << ": " << s;
        }
        ++lines;
      }
    }
  }
  EXPECT_TRUE(pg_init);
  EXPECT_GE(signals, 1u);
  EXPECT_GT(confirmed, 100u);
  EXPECT_GT(lines - confirmed, 100u);
}

}  // namespace
}  // namespace faultline
