// The shortcuts of timeparse against its general paths: ParseLineTime's
// read of the common glog stamp at fixed offsets (ReadShortGlog), its
// refusal of a line a launcher prefix's '[' opens, and
// FindMonotonic's 16-at-a-time candidate search give what the byte-by-byte
// recognisers give, on every stamp form ParseLineTime reads, cut at every
// length, started at every byte, and with each byte of a glog stamp
// replaced.
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "timeparse/timeparse.h"
#include "timeparse/timeparse_internal.h"

namespace faultline {
namespace {

std::string Describe(const std::optional<ParsedTime>& t) {
  if (!t) return "none";
  std::string s = "format " + std::to_string(static_cast<int>(t->format)) + " end " + std::to_string(t->end);
  if (t->wall_us) s += " wall " + std::to_string(*t->wall_us);
  if (t->monotonic_s) s += " mono " + std::to_string(*t->monotonic_s);
  if (t->delta_s) s += " delta " + std::to_string(*t->delta_s);
  if (t->year_inferred) s += " inferred";
  return s;
}

bool Same(const std::optional<ParsedTime>& a, const std::optional<ParsedTime>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  return a->format == b->format && a->wall_us == b->wall_us && a->monotonic_s == b->monotonic_s &&
         a->year_inferred == b->year_inferred && a->delta_s == b->delta_s && a->end == b->end;
}

std::vector<TimeContext> Contexts() {
  std::vector<TimeContext> out;
  for (int year : {1970, 2024, 2026}) {
    for (int64_t tz : {int64_t{0}, int64_t{-8 * 3600}, int64_t{5 * 3600 + 1800}}) {
      TimeContext c;
      c.default_year = year;
      c.tz_offset_s = tz;
      out.push_back(c);
    }
  }
  return out;
}

void ExpectSameTime(std::string_view line) {
  for (const TimeContext& ctx : Contexts()) {
    const std::optional<ParsedTime> fast = ParseLineTime(line, ctx);
    const std::optional<ParsedTime> general = internal::ParseLineTimeGeneral(line, ctx);
    ASSERT_TRUE(Same(fast, general)) << "line '" << line << "' year " << ctx.default_year << " tz " << ctx.tz_offset_s
                                     << ": " << Describe(fast) << " against " << Describe(general);
  }
}

// Every stamp form ParseLineTime reads, with the launcher and collector
// prefixes that stand before them, and malformed neighbours of each.
const char* const kLines[] = {
    "I1102 13:46:41.123456  1234 main.cc:56] hello",
    "W1102 13:46:41.123456\tx",
    "E1102 13:46:41.123456",
    "F0229 23:59:60.999999 1 x.cc:1] leap",
    "I0230 13:46:41.123456 1 x.cc:1] no such day",
    "I1301 13:46:41.123456 1 x.cc:1] no such month",
    "I0000 13:46:41.123456 1 x.cc:1] month zero",
    "I1100 13:46:41.123456 1 x.cc:1] day zero",
    "I1131 13:46:41.123456 1 x.cc:1] November 31st",
    "I1102 24:00:00.000000 1 x.cc:1] hour 24",
    "I1102 13:60:41.123456 1 x.cc:1] minute 60",
    "I1102 13:46:61.123456 1 x.cc:1] second 61",
    "I1102 13:46:41.1234567 1 x.cc:1] seven fraction digits",
    "I1102 13:46:41.12345 1 x.cc:1] five fraction digits",
    "I1102 13:46:41 1 x.cc:1] no fraction",
    "I1102 13:46:41.123456x",
    "I1102 13:46:41.123456:",
    "I1102  13:46:41.123456 two spaces",
    "I20261102 13:46:41.123456 1 main.cc:1] glog 0.7",
    "I2026110 13:46:41.123456 seven date digits",
    "E304 10:00:02.123456 99 ProcessGroupNCCL.cpp:616] c10 March 4th",
    "[E1102 13:46:41.123456 1234 ProcessGroupNCCL.cpp:1234] [PG 0 Rank 3] c10",
    "[E304 10:00:02.123456 99 ProcessGroupNCCL.cpp:616] x",
    "[rank3]:[E1102 13:46:41.123456 1234 ProcessGroupNCCL.cpp:1234] x",
    "[rank0]:[I1102 13:00:00.351576 41000 ProcessGroupNCCL.cpp:931] [PG 0 Rank 0] options",
    "  I1102 13:46:41.123456 1 x.cc:1] leading spaces",
    "\xEF\xBB\xBFI1102 13:46:41.123456 1 x.cc:1] byte order mark",
    "^CI1102 13:46:41.123456 1 x.cc:1] echoed Ctrl-C",
    "<13>I1102 13:46:41.123456 priority",
    "2026-11-02T13:46:41.123456Z hello",
    "2026-11-02T13:46:41.123456789Z stdout F [rank3]:[E1102 13:46:40.000000 1 x.cc:1] cri",
    "2026-11-02 13:46:41,123 INFO python logging",
    "2026-11-02 13:46:41+05:30 zoned",
    "2026/11/02 13:46:41 go log",
    "[2026-11-02 13:46:41,123] [INFO] deepspeed",
    "Nov  2 13:46:41 node017 kernel: [1000001.682554] NVRM: Xid",
    "Nov 02 13:46:41.123456 node017 systemd[1]: journal",
    "<34>1 2026-11-02T13:46:41Z node017 app - - msg",
    "Mon 2026-11-02 13:46:41 UTC node017 kernel: x",
    "[Mon Nov  2 13:46:41 2026] NVRM: dmesg -T",
    "[Nov 2 13:46] dmesg -H",
    "[Nov12 13:46] dmesg -H",
    "[  +0.000316] delta",
    "[1000001.682554] NVRM: Xid 79",
    "[    5.123456] boot",
    "[1762091201.123] epoch in brackets",
    "1762091201.123 epoch",
    "INFO 11-02 13:46:41 [api_server.py:123] vllm",
    "ERROR 2026-11-02 13:46:41,123 vllm with year",
    "gpu-a01-001: [2025-03-20 12:51:06,453] [INFO] pdsh",
    "3: I1102 13:46:41.123456 1 x.cc:1] srun label",
};

TEST(ParseLineTimeShortcut, SameAsGeneralOnEveryFormCutAndStartedAnywhere) {
  for (std::string_view line : kLines) {
    for (size_t n = 0; n <= line.size(); ++n) ExpectSameTime(line.substr(0, n));
    for (size_t k = 0; k <= line.size(); ++k) ExpectSameTime(line.substr(k));
  }
}

// ParseLineTime refuses a line at once where a '[' opens it and the byte
// after cannot start a bracketed stamp (a launcher prefix): every byte after
// the bracket, before each form (and its tail from the second byte on, so
// "[2026-..." and "[[rank3]:..." are tried), gives what the general path gives.
TEST(ParseLineTimeShortcut, SameAsGeneralWithEveryByteAfterAnOpeningBracket) {
  for (int b = 0; b < 256; ++b) {
    const std::string open = std::string("[") + static_cast<char>(b);
    ExpectSameTime(open);
    for (std::string_view line : kLines) {
      ExpectSameTime(open + std::string(line));
      ExpectSameTime(open + std::string(line.substr(1)));
    }
  }
}

// Both paths ask MayStartBracketedStamp for the byte after the '[': a
// month or weekday name it forgot, in any case, would fail them alike.
TEST(ParseLineTimeShortcut, EveryMonthAndWeekdayNameMayOpenABracketedStamp) {
  const TimeContext ctx = Contexts()[0];
  auto cased = [](std::string name, int how) {
    for (char& c : name) {
      if (how == 1 || (how == 2 && &c == &name[0])) c = static_cast<char>(c - 'a' + 'A');
    }
    return name;
  };
  for (int how = 0; how < 3; ++how) {
    for (const char* month : {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}) {
      const std::string line = "[" + cased(month, how) + " 02 2026 06:21:41] [ERROR] x";
      EXPECT_TRUE(ParseLineTime(line, ctx).has_value()) << line;
    }
    for (const char* day : {"mon", "tue", "wed", "thu", "fri", "sat", "sun"}) {
      const std::string line = "[" + cased(day, how) + " Nov  2 13:46:41 2026] NVRM: x";
      EXPECT_TRUE(ParseLineTime(line, ctx).has_value()) << line;
    }
  }
}

// A glog stamp with what may follow it (nothing, a header's rest, a tab, a
// seventh fraction digit), each of its bytes replaced by each of
// `replacements` in turn, handed to `f`.
template <typename F>
void EachGlogStampWithAByteReplaced(const std::string& replacements, F f) {
  const std::string stamp = "I1102 13:46:41.123456";
  for (const std::string& after : {std::string(), std::string(" 1 x.cc:1] m"), std::string("\tm"), std::string("9")}) {
    for (size_t k = 0; k < stamp.size() + after.size(); ++k) {
      for (char c : replacements) {
        std::string line = stamp + after;
        line[k] = c;
        f(line);
      }
    }
  }
}

TEST(ParseLineTimeShortcut, SameAsGeneralWithEachByteOfAGlogStampReplaced) {
  EachGlogStampWithAByteReplaced(std::string("0123456789 :.\t,xIZ") + '\0' + '\xff' + '/',
                                 [](const std::string& line) {
                                   ExpectSameTime(line);
                                   ExpectSameTime("[" + line);
                                   ExpectSameTime("[rank1]:[" + line);
                                 });
}

TEST(ParseLineTimeShortcut, SameAsGeneralOnRandomGlogStamps) {
  std::mt19937 rng(20);
  auto digits = [&](int n, int hi) {
    std::string s;
    for (int k = 0; k < n; ++k) s += static_cast<char>('0' + std::uniform_int_distribution<int>(0, hi)(rng));
    return s;
  };
  for (int round = 0; round < 20000; ++round) {
    std::string line(1, "IWEF"[round % 4]);
    line += digits(1, 1) + digits(1, 9) + digits(1, 3) + digits(1, 9) + ' ' + digits(1, 2) + digits(1, 9) + ':' +
            digits(1, 6) + digits(1, 9) + ':' + digits(1, 6) + digits(1, 9) + '.' + digits(6, 9);
    if (round % 3 == 1) line += " 4100 x.cc:1] m";
    ExpectSameTime(line);
  }
}

// ReadShortGlog keeps the start of the last minute it read, per thread,
// under the stamp's date, hour and minute and the context's year and zone:
// stamps in runs that share a minute (as a dense log's do), any second
// 00-99 within them, under contexts that change in the middle of a run,
// and dates and clocks out of range, each read with and without the
// shortcut. Fails with the year or the zone left out of the memo's key, or
// the second unchecked on a hit.
TEST(ParseLineTimeShortcut, SameAsGeneralOnRunsOfStampsInOneMinute) {
  std::mt19937 rng(24);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto two = [](int v) { return std::string(1, static_cast<char>('0' + v / 10)) + static_cast<char>('0' + v % 10); };
  const std::vector<TimeContext> contexts = Contexts();
  std::string minute = "1102 13:46";
  for (int round = 0; round < 20000; ++round) {
    if (pick(0, 7) == 0) {
      // A new minute, now and then one out of range (day 30 of February,
      // month 13, hour 24, minute 60).
      minute = two(pick(0, 13)) + two(pick(0, 31)) + ' ' + two(pick(0, 24)) + ':' + two(pick(0, 60));
    }
    const TimeContext& ctx = contexts[static_cast<size_t>(round / 5) % contexts.size()];
    std::string line(1, "IWEF"[pick(0, 3)]);
    line += minute + ':' + two(pick(0, 99)) + '.';
    for (int k = 0; k < 6; ++k) line += static_cast<char>('0' + pick(0, 9));
    if (round % 2 == 1) line += " 4100 x.cc:1] m";
    if (round % 3 == 1) line = "[" + line;
    const std::optional<ParsedTime> fast = ParseLineTime(line, ctx);
    const std::optional<ParsedTime> general = internal::ParseLineTimeGeneral(line, ctx);
    ASSERT_TRUE(Same(fast, general)) << "line '" << line << "' year " << ctx.default_year << " tz " << ctx.tz_offset_s
                                     << ": " << Describe(fast) << " against " << Describe(general);
  }
}

// ParseShortGlogTime, where it reads a line, gives what ParseLineTime's
// general path gives: on every line above and each glog stamp with a byte
// replaced, at every cut, and on random stamps in and out of range; it
// reads the common stamp (the test is not passed by refusing all).
TEST(ParseShortGlogTime, SameAsGeneralWhereItReads) {
  size_t read = 0;
  auto expect = [&](std::string_view line) {
    for (const TimeContext& ctx : Contexts()) {
      const std::optional<ParsedTime> fast = ParseShortGlogTime(line, ctx);
      if (!fast) continue;
      ++read;
      const std::optional<ParsedTime> general = internal::ParseLineTimeGeneral(line, ctx);
      ASSERT_TRUE(Same(fast, general)) << "line '" << line << "' year " << ctx.default_year << " tz "
                                       << ctx.tz_offset_s << ": " << Describe(fast) << " against " << Describe(general);
    }
  };
  for (std::string_view line : kLines) {
    for (size_t n = 0; n <= line.size(); ++n) expect(line.substr(0, n));
  }
  EachGlogStampWithAByteReplaced(std::string("0123456789 :.\t,xIZ[") + '\0' + '\xff' + '/',
                                 [&](const std::string& line) {
                                   expect(line);
                                   expect(" " + line);
                                 });
  std::mt19937 rng(2024);
  auto digit = [&](int hi) { return static_cast<char>('0' + std::uniform_int_distribution<int>(0, hi)(rng)); };
  for (int round = 0; round < 20000; ++round) {
    std::string line(1, "IWEFD"[round % 5]);
    for (const char* shape = "0000 00:00:00.000000"; *shape != '\0'; ++shape) {
      line += *shape == '0' ? digit(9) : *shape;
    }
    if (round % 3 == 1) line += " 4100 x.cc:1] m";
    expect(line);
  }
  EXPECT_GT(read, 1000u);
}

void ExpectSameMonotonic(std::string_view line) {
  const std::optional<double> fast = FindMonotonic(line);
  const std::optional<double> bytewise = internal::FindMonotonicBytewise(line);
  ASSERT_EQ(fast.has_value(), bytewise.has_value()) << "line '" << line << "'";
  if (fast) {
    ASSERT_EQ(*fast, *bytewise) << "line '" << line << "'";
  }
}

TEST(FindMonotonicShortcut, SameAsBytewiseOnStampsAtEveryOffset) {
  const std::string stamps[] = {"[1000001.682554]", "[    5.123456]", "[5.12345]", "[5.1234567]", "[ 5.123456",
                                "[rank3]", "[0]", "[ 12.123456] x"};
  for (const std::string& stamp : stamps) {
    for (size_t at = 0; at < 150; ++at) {
      const std::string line = std::string(at, 'x') + stamp + " tail";
      for (size_t n = 0; n <= line.size(); ++n) ExpectSameMonotonic(std::string_view(line).substr(0, n));
      ExpectSameMonotonic(std::string(at, '[') + stamp);
      ExpectSameMonotonic(std::string(at, ' ') + "[" + stamp);
    }
  }
  for (std::string_view line : kLines) ExpectSameMonotonic(line);
}

TEST(FindMonotonicShortcut, SameAsBytewiseOnRandomBracketText) {
  std::mt19937 rng(7);
  const std::string alphabet = "[[[ ]0123456789.x";
  for (int round = 0; round < 20000; ++round) {
    const size_t n = std::uniform_int_distribution<size_t>(0, 200)(rng);
    std::string line;
    for (size_t k = 0; k < n; ++k) line += alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)];
    ExpectSameMonotonic(line);
  }
}

// UtcYear reads the year from the day count where gmtime_r was called (a
// source's default year, once per file): the same year as gmtime_r at each
// year's first and last second 1970-9999, around the bound, and at 200,000
// random times; past the bound and before 1970 it is gmtime_r's.
TEST(UtcYear, SameAsGmtime) {
  auto gm = [](int64_t s) {
    const time_t t = static_cast<time_t>(s);
    struct tm tm;
    EXPECT_NE(gmtime_r(&t, &tm), nullptr) << s;
    return tm.tm_year + 1900;
  };
  for (int64_t y = 1970; y <= 10001; ++y) {
    const int64_t start = DaysFromCivil(y, 1, 1) * 86400;
    for (int64_t s : {start - 1, start, start + 1, start + 86399, start + 86400}) {
      if (s < 0) continue;
      ASSERT_EQ(UtcYear(s), gm(s)) << s;
    }
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const int64_t s = static_cast<int64_t>(rng() % 253402400000);
    ASSERT_EQ(UtcYear(s), gm(s)) << s;
  }
  for (int64_t s : {int64_t{-1}, int64_t{-86401}, int64_t{-2208988800}}) EXPECT_EQ(UtcYear(s), gm(s)) << s;
}

}  // namespace
}  // namespace faultline
