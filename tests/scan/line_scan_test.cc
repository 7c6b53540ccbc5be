// The per-line work of every matched line, done faster than by a find per
// word (issue #20's per-match cost), must give what the plain way gives:
// the 16-byte pair scan against a byte-by-byte one, the traceback-end test
// against a find per word, the time-only split against SplitLine, the
// kernel markers and the display width against hand-checked values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "attribution/attribution.h"
#include "scan/line_format.h"
#include "scan/traceback.h"
#include "timeparse/timeparse.h"
#include "util/bytescan.h"

namespace faultline {
namespace {

std::string RandomLine(std::mt19937& rng, size_t len) {
  static constexpr std::string_view kBytes = "rRaAnNkKEeIiFfxX:[] \t0123\x1b\xc3\xa9";
  std::string s;
  for (size_t i = 0; i < len; ++i) s.push_back(kBytes[rng() % kBytes.size()]);
  return s;
}

TEST(ForEachPairStart, VisitsWhatAByteByByteScanFinds) {
  std::mt19937 rng(7);
  for (int round = 0; round < 3000; ++round) {
    const std::string s = RandomLine(rng, rng() % 80);
    const size_t begin = rng() % (s.size() + 3);
    std::vector<size_t> want_fold, want_exact, got_fold, got_exact;
    for (size_t i = begin; i + 1 < s.size(); ++i) {
      const char a = s[i], b = s[i + 1];
      if ((a | 0x20) == 'r' && (b | 0x20) == 'a') want_fold.push_back(i);
      if ((a == 'E' && b == 'x') || (a == 'e' && b == 'r')) want_exact.push_back(i);
    }
    ForEachPairStart<true, BytePair{'r', 'a'}>(s, begin, [&](size_t i) {
      got_fold.push_back(i);
      return false;
    });
    ForEachPairStart<false, BytePair{'E', 'x'}, BytePair{'e', 'r'}>(s, begin, [&](size_t i) {
      got_exact.push_back(i);
      return false;
    });
    ASSERT_EQ(got_fold, want_fold) << s;
    ASSERT_EQ(got_exact, want_exact) << s;
  }
}

// The AVX2 scan (where the CPU has it) visits what the 16-byte one does, on
// lines long enough for several of its 32-byte steps and a tail.
TEST(ForEachPairStartFast, VisitsWhatForEachPairStartVisits) {
  std::mt19937 rng(9);
  for (int round = 0; round < 3000; ++round) {
    const std::string s = RandomLine(rng, rng() % 300);
    const size_t begin = rng() % (s.size() + 3);
    std::vector<size_t> want, got;
    ForEachPairStart<false, BytePair{'E', 'x'}, BytePair{'e', 'r'}, BytePair{'I', 'n'}>(s, begin, [&](size_t i) {
      want.push_back(i);
      return false;
    });
    ForEachPairStartFast<false, BytePair{'E', 'x'}, BytePair{'e', 'r'}, BytePair{'I', 'n'}>(s, begin, [&](size_t i) {
      got.push_back(i);
      return false;
    });
    ASSERT_EQ(got, want) << s;
    std::vector<size_t> folded;
    ForEachPairStartFast<true, BytePair{'r', 'a'}>(s, begin, [&](size_t i) {
      folded.push_back(i);
      return i >= 100;  // stops where asked, in either part of the scan
    });
    std::vector<size_t> want_folded;
    for (size_t i = begin; i + 1 < s.size(); ++i) {
      if ((s[i] | 0x20) != 'r' || (s[i + 1] | 0x20) != 'a') continue;
      want_folded.push_back(i);
      if (i >= 100) break;
    }
    ASSERT_EQ(folded, want_folded) << s;
  }
}

// The hand parser's literal search (digit_shape.cc FindLiteral) against
// string_view::find: literals led by blanks and not, candidates that fail at
// every byte, more failed candidates than the memchr walk takes before it
// hands over to memmem, literals at the very end, longer than the rest of the
// text and empty, from every start.
TEST(FindBytes, SameAsFind) {
  std::mt19937 rng(11);
  static constexpr std::string_view kBytes = "  ab";
  for (int round = 0; round < 20000; ++round) {
    std::string s;
    const size_t n = rng() % 120;
    for (size_t i = 0; i < n; ++i) s.push_back(kBytes[rng() % kBytes.size()]);
    std::string lit;
    if (round % 3 == 0 && !s.empty()) {
      const size_t at = rng() % s.size();
      lit = s.substr(at, 1 + rng() % 40);
    } else {
      const size_t m = rng() % 40;
      for (size_t i = 0; i < m; ++i) lit.push_back(kBytes[rng() % kBytes.size()]);
    }
    const size_t from = rng() % (s.size() + 2);
    ASSERT_EQ(FindBytes(s, lit, from), std::string_view(s).find(lit, from))
        << "s='" << s << "' lit='" << lit << "' from=" << from;
  }
  // A long literal after many near misses (the memmem hand-over).
  const std::string lit = "ProcessGroupNCCL initialization options: size: ";
  std::string line;
  for (int i = 0; i < 30; ++i) line += "ProcessGroupNCCL initialization options: size ";
  line += lit;
  EXPECT_EQ(FindBytes(line, lit, 0), std::string_view(line).find(lit));
  EXPECT_EQ(FindBytes(line, lit, line.size() - lit.size()), line.size() - lit.size());
  EXPECT_EQ(FindBytes(line, lit, line.size() - lit.size() + 1), std::string_view::npos);
}

TEST(ForEachPairStart, StopsWhenAsked) {
  const std::string s = std::string(40, '.') + "ra" + std::string(40, '.') + "RA";
  std::vector<size_t> seen;
  ForEachPairStart<true, BytePair{'r', 'a'}>(s, 0, [&](size_t i) {
    seen.push_back(i);
    return true;
  });
  EXPECT_EQ(seen, std::vector<size_t>{40});
}

TEST(PlainAscii, TabEscapeAndHighBytesAreNot) {
  EXPECT_TRUE(PlainAscii(""));
  EXPECT_TRUE(PlainAscii(std::string(100, 'x')));
  for (size_t at : {0, 5, 15, 16, 17, 40, 99}) {
    for (char c : {'\t', '\x1b', '\xc3'}) {
      std::string s(100, 'x');
      s[at] = c;
      EXPECT_FALSE(PlainAscii(s)) << at << " " << int(c);
    }
  }
}

// Escape sequences go, whatever their form; text that only looks like one
// part stays.
TEST(WithoutEscapes, CsiOscAndSyslogForms) {
  EXPECT_EQ(WithoutEscapes("\x1b[31mKeyError: 'x'\x1b[0m"), "KeyError: 'x'");
  EXPECT_EQ(WithoutEscapes("\x1b[1;36m(VllmWorker pid=1)\x1b[0;0m \x1b[2KERROR"), "(VllmWorker pid=1) ERROR");
  EXPECT_EQ(WithoutEscapes("#033[31;1mFATAL: x#033[0;m"), "FATAL: x");
  EXPECT_EQ(WithoutEscapes("\x1b]8;;file:///w/a.py\x1b\\a.py\x1b]8;;\x1b\\:12"), "a.py:12");
  EXPECT_EQ(WithoutEscapes("[36m(RayTrainWorker pid=3462)[0m [rank0] took [3 min]"),
            "(RayTrainWorker pid=3462) [rank0] took [3 min]");
  EXPECT_EQ(WithoutEscapes("issue #033 [x] and [31m"), "issue #033 [x] and [31m");  // no reset
  EXPECT_FALSE(HasEscapes("issue #033 [x] and [31m"));
  EXPECT_TRUE(HasEscapes("a\x1b[0m"));
  EXPECT_TRUE(HasEscapes("#033[0m"));
  DerivedChunk d = StripEscapes(std::string_view("a\x1b[1mb\nc\n"));
  EXPECT_EQ(d.messages, "ab\nc\n");
  ASSERT_EQ(d.lines.size(), 2u);
  EXPECT_EQ(d.lines[1].offset, 7u);
  EXPECT_EQ(d.lines[1].line_rel, 1u);
}

// HasEscapes finds every form at every offset of a long text, across the
// 16- and 32-byte steps of its pair scan and at the text's end, and takes
// no near miss ("#034[", "[0x", "[1m" with no reset) for one.
TEST(HasEscapes, EveryFormAtEveryOffset) {
  const std::string filler(80, 'x');
  const std::vector<std::string> forms = {"\x1b", "#033[", "[0m", "[0;0m"};
  const std::vector<std::string> misses = {"#034[", "#03", "[0x", "[1m", "[0;1m", "#0", "[0"};
  EXPECT_FALSE(HasEscapes(std::string_view()));  // null data: no memchr (UBSan)
  for (size_t at = 0; at <= filler.size(); ++at) {
    for (const std::string& f : forms) {
      std::string s = filler;
      s.insert(at, f);
      EXPECT_TRUE(HasEscapes(s)) << f << " at " << at;
    }
    for (const std::string& m : misses) {
      std::string s = filler;
      s.insert(at, m);
      EXPECT_FALSE(HasEscapes(s)) << m << " at " << at;
    }
  }
}

// The one-pass chunk test (128 bytes at a time) answers as the plain
// memchr and pair pass: every form and near miss at every offset of texts
// that end at every alignment past the last whole 128 bytes, two forms
// across a block's edge, and random texts of the forms' bytes.
TEST(HasEscapes, OnePassSameAsPlainAtEveryOffsetAndAlignment) {
  const std::vector<std::string> pieces = {"\x1b", "#033[", "[0m", "[0;0m", "#034[", "#03",
                                           "[0x",  "[1m",   "[0;1m", "#0", "[0"};
  for (size_t len : {129u, 200u, 256u, 257u, 300u}) {
    const std::string filler(len, 'x');
    ASSERT_FALSE(HasEscapes(filler));
    for (size_t at = 0; at <= filler.size(); ++at) {
      for (const std::string& f : pieces) {
        std::string s = filler;
        s.insert(at, f);
        ASSERT_EQ(HasEscapes(s), HasEscapesPlain(s)) << f << " at " << at << " of " << s.size();
        // A near miss before a form, so a block's first candidate is not the answer.
        std::string t = filler;
        t.insert(at, "[0x");
        t.insert(std::min(t.size(), at + 60), f);
        ASSERT_EQ(HasEscapes(t), HasEscapesPlain(t)) << f << " after a miss at " << at << " of " << t.size();
      }
    }
  }
  std::mt19937 rng(13);
  static constexpr std::string_view kBytes = "x[#0;m3\n";
  int found = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string s;
    const size_t len = 129 + rng() % 400;
    for (size_t i = 0; i < len; ++i) s.push_back(rng() % 4 == 0 ? kBytes[rng() % kBytes.size()] : 'x');
    if (rng() % 2 == 0) s.insert(rng() % (s.size() + 1), pieces[rng() % pieces.size()]);
    found += HasEscapesPlain(s);
    ASSERT_EQ(HasEscapes(s), HasEscapesPlain(s)) << s;
  }
  EXPECT_GT(found, 2000);  // both answers are common
  EXPECT_LT(found, 18000);
  // A text that must be read to its end: the last byte is ESC, or a
  // rsyslog escape ends the text, after many blocks of candidates.
  std::string many;
  for (int i = 0; i < 100; ++i) many += "[0x#0 [0;1m ";
  EXPECT_FALSE(HasEscapes(many));
  EXPECT_TRUE(HasEscapes(many + "\x1b"));
  EXPECT_TRUE(HasEscapes(many + "#033["));
  EXPECT_FALSE(HasEscapes(many + "#033"));
}

// The escape test's newline index (HasEscapes with an index, which phase A
// numbers a chunk's lines from) holds the newlines a byte count gives at
// every block start and in all, and answers as HasEscapes: texts of every
// length around the 128-byte steps and the 4096-byte blocks, runs of
// newlines longer than a step's counters hold between sums, texts that are
// all newlines, with an escape word somewhere or none.
TEST(HasEscapes, NewlineIndexSameAsCountingEveryByte) {
  auto check = [](const std::string& s) {
    NewlineIndex index;
    index.complete = true;  // must be reset when not filled
    const bool found = HasEscapes(s, &index);
    ASSERT_EQ(found, HasEscapes(s)) << s.size();
    ASSERT_EQ(found, HasEscapesPlain(s)) << s.size();
    if (found) {
      ASSERT_FALSE(index.complete) << s.size();
      return;
    }
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx2")) {
      ASSERT_EQ(index.complete, s.size() >= 129) << s.size();
    }
#endif
    if (!index.complete) return;
    ASSERT_EQ(index.bytes, s.size());
    ASSERT_EQ(index.total, static_cast<uint64_t>(std::count(s.begin(), s.end(), '\n'))) << s.size();
    ASSERT_EQ(index.before.size(), s.size() / NewlineIndex::kBlock + 1) << s.size();
    for (size_t k = 0; k < index.before.size(); ++k) {
      const auto end = s.begin() + static_cast<std::ptrdiff_t>(k * NewlineIndex::kBlock);
      ASSERT_EQ(index.before[k], static_cast<uint64_t>(std::count(s.begin(), end, '\n'))) << k << " of " << s.size();
    }
  };
  std::mt19937 rng(41);
  std::vector<size_t> lengths = {0, 1, 128, 129, 130, 255, 256, 257, 300};
  for (size_t block : {4096u, 8192u, 12288u}) {
    for (size_t d = 0; d <= 260; ++d) {
      lengths.push_back(block + d);
      lengths.push_back(block - d);
    }
  }
  for (int r = 0; r < 300; ++r) lengths.push_back(rng() % 40000);
  for (size_t len : lengths) {
    std::string s(len, '\n');  // every byte a newline: 4 a step in each counter
    check(s);
    for (char& c : s) c = rng() % 3 == 0 ? '\n' : "x[#0;m3 "[rng() % 8];
    check(s);
    if (len > 0) {
      s.replace(rng() % len, 1, "\x1b");
      check(s);
    }
  }
  // Newline runs across block edges, an escape word in the last bytes.
  std::string runs(20000, 'x');
  runs.replace(4000, 9000, std::string(9000, '\n'));
  check(runs);
  check(runs + "#033[");
  check(runs + "[0m");
}

// StripEscapes tests only the lines holding an escape word (NextEscapeWord
// over the chunk): its records are the per-line reference's -- each line
// without its escapes when HasEscapes finds any, else as it is -- on
// random multi-line texts of the forms, near misses and bare codes, and a
// line's bare SGR codes stay unless that line holds a bare reset.
TEST(StripEscapes, SameAsTestingEveryLine) {
  const std::vector<std::string> pieces = {"\x1b[31m", "#033[0m", "[0m", "[0;0m", "[36m", "#034[", "#03",
                                           "[0x",       "[1m",     "[0]", "#0",    "[0",   "\x1b", "\r"};
  std::mt19937 rng(29);
  int stripped = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string s;
    const size_t lines = 1 + rng() % 12;
    for (size_t l = 0; l < lines; ++l) {
      const size_t len = rng() % 300;
      std::string line;
      for (size_t i = 0; i < len; ++i) line.push_back(rng() % 6 == 0 ? "x[#0;m3 "[rng() % 8] : 'x');
      for (int k = rng() % 3; k > 0 && rng() % 3 == 0; --k) line.insert(rng() % (line.size() + 1), pieces[rng() % pieces.size()]);
      s += line;
      if (l + 1 < lines || rng() % 2 == 0) s.push_back('\n');
    }
    std::string want;
    for (size_t pos = 0; pos < s.size();) {
      size_t nl = s.find('\n', pos);
      size_t end = nl == std::string::npos ? s.size() : nl;
      std::string_view line(s.data() + pos, end - pos);
      stripped += HasEscapes(line);
      want += HasEscapes(line) ? WithoutEscapes(line) : std::string(line);
      want.push_back('\n');
      pos = end + 1;
    }
    ASSERT_EQ(StripEscapes(s).messages, want) << s;
    // Every offset where an escape word starts, tested one by one; the
    // answer for `from` is the first of them at or after it.
    std::vector<size_t> starts;
    for (size_t i = 0; i < s.size(); ++i) {
      const std::string_view at(s.data() + i, s.size() - i);
      if (at.starts_with('\x1b') || at.starts_with("#033[") || at.starts_with("[0m") || at.starts_with("[0;0m")) starts.push_back(i);
    }
    for (size_t from = 0; from <= s.size(); from += 1 + rng() % 40) {
      const auto it = std::lower_bound(starts.begin(), starts.end(), from);
      const size_t first = it == starts.end() ? std::string_view::npos : *it;
      ASSERT_EQ(NextEscapeWord(s, from), first) << "from " << from << " in " << s;
    }
  }
  EXPECT_GT(stripped, 5000);
}

// WithoutEscapes copies the bytes between escape starts in one append:
// the same text as a byte-by-byte walk of the escape forms (ESC CSI, OSC
// and two-byte sequences, rsyslog's "#033[", bare SGR codes in a line
// holding a bare reset), on random lines of the forms and near misses.
std::string StripByteByByte(std::string_view s) {
  const bool bare = s.find("[0m") != std::string_view::npos || s.find("[0;0m") != std::string_view::npos;
  auto after_esc = [](std::string_view t) -> size_t {  // EscapeLength's grammar
    if (t.empty()) return 0;
    if (t[0] == '[') {
      size_t i = 1;
      while (i < t.size() && t[i] >= 0x20 && t[i] <= 0x3f) ++i;
      return i < t.size() && t[i] >= 0x40 && t[i] <= 0x7e ? i + 1 : i;
    }
    if (t[0] == ']') {
      for (size_t i = 1; i < t.size(); ++i) {
        if (t[i] == '\a') return i + 1;
        if (t[i] == '\x1b' && i + 1 < t.size() && t[i + 1] == '\\') return i + 2;
      }
      return t.size();
    }
    return 1;
  };
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const std::string_view at = s.substr(i);
    size_t n = 0;
    if (bare && at[0] == '[') {
      size_t k = 1;
      while (k < at.size() && k < 16 && ((at[k] >= '0' && at[k] <= '9') || at[k] == ';')) ++k;
      n = k > 1 && k < at.size() && at[k] == 'm' ? k + 1 : 0;
    } else if (at[0] == '\x1b') {
      n = 1 + after_esc(at.substr(1));
    } else if (at.starts_with("#033[")) {
      n = 4 + after_esc(at.substr(4));
    }
    if (n == 0) out.push_back(s[i++]);
    i += n;
  }
  return out;
}

TEST(WithoutEscapes, SameAsAByteByByteWalk) {
  const std::vector<std::string> pieces = {"\x1b[31m", "#033[0m", "[0m", "[0;0m", "[1;38;5;208m", "\x1b]8;;f\x1b\\",
                                           "\x1b]0;t\a", "\x1b(", "#033", "#03", "[0x", "[0]", "\x1b", "\x1b[", "]"};
  std::mt19937 rng(31);
  for (int round = 0; round < 20000; ++round) {
    std::string line;
    const size_t len = rng() % 120;
    for (size_t i = 0; i < len; ++i) line.push_back(rng() % 5 == 0 ? "x[#0;m3 \x1b"[rng() % 9] : 'x');
    for (int k = rng() % 4; k > 0; --k) line.insert(rng() % (line.size() + 1), pieces[rng() % pieces.size()]);
    ASSERT_EQ(WithoutEscapes(line), StripByteByByte(line)) << line;
  }
}

TEST(DisplayWidth, AsciiFastPathAndTheRest) {
  EXPECT_EQ(DisplayWidth(std::string(57, 'a')), 57u);
  EXPECT_EQ(DisplayWidth(std::string(57, 'a') + "\r"), 57u);
  EXPECT_EQ(DisplayWidth("a\tb"), 9u);
  EXPECT_EQ(DisplayWidth("caf\xc3\xa9 au lait, caf\xc3\xa9 au lait"), 26u);
  EXPECT_EQ(DisplayWidth("\x1b[31mred\x1b[0m and more plain text after it"), 32u);
}

TEST(MayEndTraceback, SameAsAFindPerWord) {
  static constexpr std::string_view kWords[] = {"Error", "Exception", "Interrupt", "Exit", "error:", "Failure"};
  std::mt19937 rng(11);
  static constexpr std::string_view kPieces[] = {"Err", "Error", "Exc", "Exception", "Int", "Interrupt", "Exit",
                                                 "Ex",  "error", "error:", "Fail", "Failure", " ", "xx", "E", "F",
                                                 "rr",  "rrr",   "Interr", "Errror", "e",     "I",  "r",  ":"};
  for (int round = 0; round < 6000; ++round) {
    std::string s;
    for (size_t k = rng() % 40; k > 0; --k) s += kPieces[rng() % std::size(kPieces)];
    bool want = false;
    for (std::string_view w : kWords) want |= s.find(w) != std::string::npos;
    ASSERT_EQ(MayEndTraceback(s), want) << s;
  }
}

// Lines of the formats the scanner reads times from, with and without
// launcher prefixes, carriage returns and kernel stamps.
const std::vector<std::string>& TimeLines() {
  static const std::vector<std::string> lines = {
      "[rank3]:[E1102 13:46:41.123456 41000 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught",
      "[rank0]:2026-11-02 13:00:06,218 - DEBUG - prefetch.py:96 - pinned buffer 8 recycled",
      "[rank0]:node000:41000:41211 [0] NCCL INFO Channel 22/1 : 0[0] -> 167[7] [send] via NET/IB/0/GDRDMA",
      "2026-11-02 13:46:41,123 - INFO - data_loader.py:211 - worker 4 prefetched 256 samples",
      "Nov  2 13:46:41 node017 kernel: [1000001.682554] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234",
      "[1000001.682554] NVRM: GPU at PCI:0000:3b:00: GPU-1234",
      "[  +0.000316] mlx5_core 0000:3b:00.0: link down",
      "[Mon Nov  2 13:46:41 2026] Out of memory: Killed process 12345 (python3)",
      "0: [titan] 2025-03-01 09:00:05,123 - root - INFO - step: 10 loss: 7.1",
      "\r 10%|#         | 7/67 [00:26<03:30, 3.51s/it]2026-03-01 09:09:53,318 - INFO - heartbeat",
      "\r 10%|#         | 7/67 [00:26<03:30, 3.51s/it]\r 11%|#         | 8/67 [00:30<03:37, 3.69s/it]",
      "2026-11-02T13:46:41.123456789Z stdout F [rank1]:[W1102 13:00:06.791248 41000 x.h:28] Warning",
      "no stamp at all, rank 5: something",
      "",
  };
  return lines;
}

void ExpectSameTime(const std::optional<ParsedTime>& got, const std::optional<ParsedTime>& want,
                    const std::string& line) {
  ASSERT_EQ(got.has_value(), want.has_value()) << line;
  if (!want) return;
  EXPECT_EQ(got->format, want->format) << line;
  EXPECT_EQ(got->wall_us, want->wall_us) << line;
  EXPECT_EQ(got->monotonic_s, want->monotonic_s) << line;
  EXPECT_EQ(got->delta_s, want->delta_s) << line;
  EXPECT_EQ(got->year_inferred, want->year_inferred) << line;
}

TEST(LineTime, SameAsSplitLine) {
  TimeContext tctx;
  tctx.default_year = 2026;
  for (const std::string& line : TimeLines()) {
    ExpectSameTime(LineTime(line, LineFormat{}, tctx), SplitLine(line, LineFormat{}, tctx).time, line);
  }
  LineFormat json;
  json.json = true;
  for (const std::string& line :
       {std::string(R"({"time":"2026-11-02T13:46:41.5Z","message":"NCCL WARN x","rank":3})"),
        std::string(R"({"message":"[rank2]:[E1102 13:46:41.123456 41000 a.cpp:1] boom"})"),
        std::string("not json at all 2026-11-02 13:46:41")}) {
    ExpectSameTime(LineTime(line, json, tctx), SplitLine(line, json, tctx).time, line);
  }
}

// A line of a chunk found clean is split as SplitLine splits it.
TEST(SplitCleanLine, SameAsSplitLineWithoutEscapes) {
  TimeContext tctx;
  tctx.default_year = 2026;
  for (const std::string& line : TimeLines()) {
    ASSERT_FALSE(HasEscapes(line)) << line;
    const LineView want = SplitLine(line, LineFormat{}, tctx), got = SplitCleanLine(line, LineFormat{}, tctx);
    ExpectSameTime(got.time, want.time, line);
    EXPECT_EQ(got.message, want.message) << line;
    EXPECT_EQ(got.attr.rank, want.attr.rank) << line;
    EXPECT_EQ(got.attr.host, want.attr.host) << line;
    EXPECT_EQ(got.attr.pid, want.attr.pid) << line;
    EXPECT_EQ(got.attr.gpu, want.attr.gpu) << line;
    ExpectSameTime(CleanLineTime(line, LineFormat{}, tctx), LineTime(line, LineFormat{}, tctx), line);
  }
}

// A line read for its stream and message only (a traceback's fold) has
// SplitLine's message and attribution: coloured lines, pdsh prefixes, and a
// tqdm bar whose record after a carriage return names another rank.
TEST(SplitLineUntimed, SameMessageAndAttributionAsSplitLine) {
  TimeContext tctx;
  tctx.default_year = 2026;
  std::vector<std::string> lines = TimeLines();
  lines.push_back("[rank1]: 50%|#####     | 5/10 [00:01<00:01]\r2026-11-02 13:46:41,123 [rank3]: boom");
  lines.push_back("\x1b[36m(RayWorker pid=4242, ip=10.0.0.7)\x1b[0m [rank5]: Traceback (most recent call last):");
  lines.push_back("[rank2]:   File \"/opt/app/train.py\", line 12, in <module>");
  LineFormat pdsh;
  pdsh.pdsh = true;
  for (const LineFormat& fmt : {LineFormat{}, pdsh}) {
    for (const std::string& line : lines) {
      const LineView want = SplitLine(line, fmt, tctx), got = SplitLineUntimed(line, fmt, tctx);
      EXPECT_EQ(got.message, want.message) << line;
      EXPECT_EQ(got.attr.rank, want.attr.rank) << line;
      EXPECT_EQ(got.attr.host, want.attr.host) << line;
      EXPECT_EQ(got.attr.pid, want.attr.pid) << line;
      EXPECT_EQ(got.attr.gpu, want.attr.gpu) << line;
    }
  }
  const LineView tqdm = SplitLineUntimed(lines[lines.size() - 3], LineFormat{}, tctx);
  EXPECT_EQ(tqdm.attr.rank, std::optional<int64_t>(3));
}

// pdsh's "host: " before a bracketed stamp: an unmatched line of a
// DeepSpeed launcher stream (the tail of the job) has its time.
TEST(LineTime, PdshHostBeforeABracketedStamp) {
  TimeContext tctx;
  const std::string line =
      "gpu-d01-002: [2025-03-20 12:51:06,453] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 25117";
  std::optional<ParsedTime> t = LineTime(line, LineFormat{}, tctx);
  ASSERT_TRUE(t.has_value());
  ASSERT_TRUE(t->wall_us.has_value());
  std::optional<ParsedTime> bare = ParseLineTime(line.substr(13), tctx);
  ASSERT_TRUE(bare && bare->wall_us);
  EXPECT_EQ(*t->wall_us, *bare->wall_us);
}

// A JSON record behind a launcher tag: its time field dates the line.
TEST(LineTime, JsonRecordBehindALauncherTag) {
  TimeContext tctx;
  for (const std::string line : {R"([1,15]<stdout>:{"ts": 1714214861.784, "rank": 15, "step": 31})",
                                 R"(3: {"ts": 1714214861.784, "rank": 3, "step": 31})"}) {
    std::optional<ParsedTime> t = LineTime(line, LineFormat{}, tctx);
    ASSERT_TRUE(t && t->wall_us) << line;
    EXPECT_EQ(*t->wall_us, 1714214861'784000) << line;
    ExpectSameTime(t, SplitLine(line, LineFormat{}, tctx).time, line);
  }
}

// The lines of every log the repository holds (fixtures, incidents, the
// real-world cases, the endings samples), as physical lines with their
// carriage returns.
std::vector<std::string> SampleLines() {
  std::vector<std::string> files;
  for (const char* root : {"/tests/fixtures", "/examples/incidents", "/tests/realworld/cases", "/tests/cli/endings"}) {
    const std::filesystem::path dir = std::string(FL_SOURCE_DIR) + root;
    if (!std::filesystem::exists(dir)) continue;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
      if (e.is_regular_file() && e.file_size() < (8u << 20)) files.push_back(e.path().string());
    }
  }
  std::vector<std::string> lines;
  for (const std::string& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
  }
  return lines;
}

// LineTime and CleanLineTime turn a line away before MessageBegin and the
// recognisers when it cannot hold a stamp (MayHoldLineTime, no '{'): over
// every sample line, plain and under pdsh, they give what SplitLine (which
// reads every start) gives, and no start of a line turned away parses.
TEST(LineTime, QuickRejectSameAsTheWholeChainOnEverySampleLine) {
  TimeContext tctx;
  tctx.default_year = 2026;
  const std::vector<std::string> lines = SampleLines();
  ASSERT_GT(lines.size(), 20000u);
  LineFormat pdsh;
  pdsh.pdsh = true;
  size_t turned_away = 0;
  for (const std::string& line : lines) {
    for (const LineFormat& fmt : {LineFormat{}, pdsh}) {
      ExpectSameTime(LineTime(line, fmt, tctx), SplitLine(line, fmt, tctx).time, line);
      if (!HasEscapes(line)) {
        ExpectSameTime(CleanLineTime(line, fmt, tctx), SplitCleanLine(line, fmt, tctx).time, line);
      }
    }
    if (MayHoldLineTime(line)) continue;
    ++turned_away;
    for (size_t k = 0; k <= line.size(); ++k) {
      ASSERT_FALSE(ParseLineTime(std::string_view(line).substr(k), tctx).has_value()) << line << " at " << k;
    }
  }
  EXPECT_GT(turned_away, 1000u);
}

TEST(MessageBegin, SameAsAttributeLine) {
  for (const std::string& line : TimeLines()) {
    size_t mb = 12345;
    (void)AttributeLine(line, &mb);
    EXPECT_EQ(MessageBegin(line), mb) << line;
  }
}

TEST(AttributeLine, KernelMarkersFromOnePass) {
  Attribution a = AttributeLine("[1000001.682554] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3");
  EXPECT_EQ(a.gpu, "0000:3b:00.0");
  EXPECT_EQ(a.pid, 1234);
  a = AttributeLine("Out of memory: Killed process 12345 (python3) total-vm:1kB");
  EXPECT_EQ(a.pid, 12345);
  a = AttributeLine("oom-kill:constraint=CONSTRAINT_NONE,task=python3,pid=777,uid=0");
  EXPECT_EQ(a.pid, 777);
  // The first "nvidia " is part of a word; the second names the device.
  a = AttributeLine("libnvidia 1.0 loaded; nvidia 0000:3b:00.0: GPU has fallen off the bus");
  EXPECT_EQ(a.gpu, "0000:3b:00.0");
  a = AttributeLine("DCGM: GPU 00000000:3B:00.0 reported an XID error");
  EXPECT_EQ(a.gpu, "0000:3b:00.0");
  a = AttributeLine("[rank4]: plain line with nothing of the kind");
  EXPECT_EQ(a.gpu, "");
  EXPECT_FALSE(a.pid);
  EXPECT_EQ(a.rank, 4);
}

// AttributeLine's memo of message scans (a dense log's same message under
// another clock): with it on, every line attributes as with it off, however
// the lines repeat, whatever stands before or in the message -- rank words
// and brackets right after a glog header's clock, kernel markers, a pid in
// brackets before "]: segfault", clocks of other widths.
std::string MemoLine(std::mt19937& rng) {
  static const std::vector<std::string> kPrefix = {"", "[rank3]:", "[default0]:", "node1:123:456 [0] ", "3: ", "> "};
  static const std::vector<std::string> kLevel = {"[I", "[W", "[E", "I", "F", "[X", ""};
  // '#': a digit from a few, so lines differ there and still repeat.
  static const std::vector<std::string> kFile = {"pg.cpp:12] ", "rank.py:3] ", "trainer.py:9] ", "", "] ",
                                                  "x.cc:1 ", "[PG 0 Rank #] ", "Rank #: ", "rank #]: ", "[# "};
  static const std::vector<std::string> kPiece = {
      "[PG 0 Rank 3] ", "rank: 5 ", "Rank 7: ", "local rank: 2 ", "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234 ",
      "GPU 00000000:3B:00.0 ", "python3[4015788]: segfault at 0 ", "Killed process 123 (p) ", "]: segfault at ",
      "oom-kill:task=p,pid=77 ", "nvidia 0000:3b:00.0: ", "rank 13:46:41 ", "[Rank 1] ", "PG 0 Rank 4] ", "x ",
      "peer rank: 9 ", "12 ", ": ", "[PG 0 Rank #] ", "rank: # ", "python3[#]: segfault at 0 "};
  auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
  auto digits = [&](int n) {
    std::string d;
    for (int i = 0; i < n; ++i) d.push_back(static_cast<char>('0' + rng() % 10));
    return d;
  };
  std::string line = pick(kPrefix) + pick(kLevel);
  // The clock and thread id: the part the memo keys by shape.
  line += digits(4) + " " + digits(2) + ":" + digits(2) + ":" + digits(2) + "." + digits(rng() % 8 ? 6 : 3) + " " +
          digits(rng() % 8 ? 5 : 1);
  if (rng() % 8 == 0) line += "]";  // a bracket glued to the thread id
  if (rng() % 8 != 0) line += " ";
  line += pick(kFile);
  // Few distinct messages, so the memo hits.
  std::mt19937 msg_rng(static_cast<uint32_t>(rng() % 8));
  for (size_t k = 0, n = 1 + msg_rng() % 4; k < n; ++k) line += kPiece[msg_rng() % kPiece.size()];
  for (char& c : line) {
    if (c == '#') c = static_cast<char>('0' + rng() % 3);
  }
  return line;
}

// Attributes `lines` without the message memo, then with it, and checks
// that every line gets the same attribution and message bytes; returns the
// attributions (the memo left on, as it is by default).
std::vector<Attribution> MemoAgreesWithScanning(const std::vector<std::string>& lines) {
  struct Got {
    Attribution a;
    size_t mb = 0;
  };
  auto attribute_all = [&](bool memo) {
    SetMessageMemo(memo);
    std::vector<Got> got;
    for (const std::string& l : lines) {
      Got g;
      g.a = AttributeLine(l, &g.mb);
      got.push_back(std::move(g));
    }
    return got;
  };
  const std::vector<Got> plain = attribute_all(false);
  const std::vector<Got> memo = attribute_all(true);
  SetMessageMemo(true);
  std::vector<Attribution> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const Attribution &want = plain[i].a, &got = memo[i].a;
    EXPECT_EQ(got.rank, want.rank) << lines[i];
    EXPECT_EQ(got.local_rank, want.local_rank) << lines[i];
    EXPECT_EQ(got.pid, want.pid) << lines[i];
    EXPECT_EQ(got.host, want.host) << lines[i];
    EXPECT_EQ(got.gpu, want.gpu) << lines[i];
    EXPECT_EQ(memo[i].mb, plain[i].mb) << lines[i];
    if (::testing::Test::HasFailure()) break;
    out.push_back(want);
  }
  return out;
}

// How many of a memo test's attributions name each field: the lines must
// exercise what the memo has to get right.
struct Named {
  size_t ranks = 0, pids = 0, gpus = 0, hosts = 0;
};
Named CountNamed(const std::vector<Attribution>& got) {
  Named n;
  for (const Attribution& a : got) {
    n.ranks += a.rank.has_value();
    n.pids += a.pid.has_value();
    n.gpus += !a.gpu.empty();
    n.hosts += !a.host.empty();
  }
  return n;
}

TEST(AttributeLine, MessageMemoGivesWhatScanningGives) {
  std::mt19937 rng(11);
  std::vector<std::string> lines;
  for (int i = 0; i < 20000; ++i) lines.push_back(MemoLine(rng));
  const std::vector<Attribution> got = MemoAgreesWithScanning(lines);
  ASSERT_EQ(got.size(), lines.size());
  const Named n = CountNamed(got);
  EXPECT_GT(n.ranks, lines.size() / 4);
  EXPECT_GT(n.pids, lines.size() / 8);
  EXPECT_GT(n.gpus, lines.size() / 8);
}

// The memo's sets hold two messages each: many distinct messages taken in
// turn (a dense log's ranks, more of them than the memo holds, so both ways
// of a set are replaced) attribute as without the memo, on the first round,
// where every line misses, and on the later ones.
TEST(AttributeLine, MessageMemoWithManyMessagesInTurn) {
  std::vector<std::string> lines;
  for (int round = 0; round < 3; ++round) {
    for (int rank = 0; rank < 700; ++rank) {
      const std::string r = std::to_string(rank);
      lines.push_back("[rank" + r + "]:[I1102 13:00:0" + std::to_string(round) + ".35157" + std::to_string(rank % 10) +
                      " 4100" + std::to_string(rank % 7) + " ProcessGroupNCCL.cpp:931] [PG 0 Rank " + r +
                      "] ProcessGroupNCCL initialization options: size: 64, global rank: " + r);
      if (rank % 3 == 0) lines.push_back("node" + r + ":123:456 [" + std::to_string(rank % 8) + "] NCCL INFO x");
    }
  }
  EXPECT_EQ(MemoAgreesWithScanning(lines).size(), lines.size());
}

// AttributeLine's memo of whole lines keyed but for a glog header's clock
// digits: lines that differ only there, behind every kind of prefix (each
// parser is tried at the header's bracket or level letter, and some read
// ahead into it), with clocks of other shapes (a ',' fraction, none, a
// date glued to a colon, a bracket after the clock) and thread ids from a
// few values, attribute as without it.
std::string LineMemoLine(std::mt19937& rng, std::mt19937& clock_rng) {
  static const std::vector<std::string> kPrefix = {
      "", "[rank3]:", "[rank12]:", "[default0]:", "[default1]:", "[gpu187:1]:", "node017: ", "gpu-2: [rank4]:",
      "3: ", "12: [rank5]:", "[1,3]<stdout>:", "[7]<stderr>:", "(VllmWorker TP1 pid=77) ",
      "(RayWorkerWrapper pid=9, ip=10.0.1.2) ", "[2025-12-26 13:13:14 TP0] ", "node1:123:456 [0] ",
      "[node1:123:0:456] ", "Nov  2 13:00:00 host1 python3[55]: ", "2026-11-02T13:00:00Z ", "[ 1000.5] ",
      "\x1b[0m[rank2]:\x1b[0m", "> ", "[rank1]:node2:1:2 [1] ", "host3: 2026-11-02 13:00:00 "};
  static const std::vector<std::string> kLevel = {"[I", "[W", "[E", "I", "F", "[X", "E", "I"};
  static const std::vector<std::string> kAfter = {" ", "] ", ": ", "]: ", "", " [PG 0 Rank 1] "};
  static const std::vector<std::string> kThread = {"41000", "41097", "7", "123:0", ""};
  static const std::vector<std::string> kFile = {"ProcessGroupNCCL.cpp:931] ", "x.cc:1] ", "", "] ",
                                                  "[PG 0 Rank 2] ", "node9:1:2 [3] "};
  static const std::vector<std::string> kMessage = {
      "[PG 0 Rank 3] ProcessGroupNCCL initialization options: size: 64, global rank: 3, TIMEOUT(ms): 600000",
      "NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>, rank: 5 of 64 on this node",
      "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.",
      "python3[4015788]: segfault at 0 ip 00007f rank 6 of the job, local rank: 2 on gpu 3",
      "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE) ran for 600000 ms"};
  auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
  // The clock's digits, from their own generator: the rest of the line
  // repeats where the shape's does.
  auto digits = [&](int n) {
    std::string d;
    for (int i = 0; i < n; ++i) d.push_back(static_cast<char>('0' + clock_rng() % 10));
    return d;
  };
  std::string line = pick(kPrefix) + pick(kLevel);
  // The date and clock, in the shapes glog and near misses print.
  switch (rng() % 8) {
    case 0: line += digits(4) + " " + digits(2) + ":" + digits(2) + ":" + digits(2); break;
    case 1: line += digits(4) + " " + digits(2) + ":" + digits(2) + ":" + digits(2) + "," + digits(3); break;
    case 2: line += digits(4) + ":" + digits(2) + ":" + digits(2) + ":" + digits(2) + "." + digits(6); break;
    case 3: line += digits(3) + " " + digits(2) + ":" + digits(2) + ":" + digits(2) + "." + digits(6); break;
    default: line += digits(4) + " " + digits(2) + ":" + digits(2) + ":" + digits(2) + "." + digits(6); break;
  }
  // The thread id (the header's pid) from the clock's generator too: lines
  // of one shape differ in it, and a memo that took it by shape would give
  // one line's pid to another.
  line += pick(kAfter) + kThread[clock_rng() % kThread.size()] + " " + pick(kFile) + pick(kMessage);
  return line;
}

TEST(AttributeLine, LineMemoGivesWhatParsingGives) {
  std::mt19937 rng(23);
  std::vector<std::string> lines;
  // A few hundred shapes, each repeated under other clocks, in turn.
  std::vector<uint32_t> seeds;
  for (int i = 0; i < 600; ++i) seeds.push_back(static_cast<uint32_t>(rng()));
  for (int round = 0; round < 30; ++round) {
    for (uint32_t seed : seeds) {
      // The same shape each round, under one of seven clocks.
      std::mt19937 shape_rng(seed);
      std::mt19937 clock_rng(seed ^ static_cast<uint32_t>(round % 7 * 7919));
      lines.push_back(LineMemoLine(shape_rng, clock_rng));
    }
  }
  const std::vector<Attribution> got = MemoAgreesWithScanning(lines);
  ASSERT_EQ(got.size(), lines.size());
  const Named n = CountNamed(got);
  EXPECT_GT(n.ranks, lines.size() / 4);
  EXPECT_GT(n.pids, lines.size() / 8);
  EXPECT_GT(n.hosts, lines.size() / 8);
}

// SplitLine's time with AttributeLine's line memo (PlainLineTime then reads
// a shape's stamp at the offset its first line found and takes its noted
// kernel stamp) and without it (every line read whole): lines of a few
// hundred shapes, each under many clocks, mostly in range (months 00-13,
// hours to 29, seconds to 99 at times), behind launcher prefixes, with
// kernel stamps of printk's six digits and near misses before and after
// the clock, a carriage return, a pdsh host; the context's year and zone
// change between rounds.
std::string TimeShapeLine(std::mt19937& rng, std::mt19937& clock_rng) {
  static const std::vector<std::string> kPrefix = {
      "[rank3]:", "[rank12]:", "[default0]:", "[gpu187:1]:", "[1,3]<stdout>:", "[ 1234.567890] [rank2]:",
      "[  77.000001] ", "[7]<stderr>:", "3: ", "[rank1]:[ 12.345678] ", "[rank4]:[12.5] ", "",
      "[node1:123:0:456] ", "gpu-a01: [rank5]:", "[r", "[titan] "};
  static const std::vector<std::string> kLevel = {"[I", "[W", "[E", "[F", "I", "E", "[X"};
  static const std::vector<std::string> kMessage = {
      " 41000 ProcessGroupNCCL.cpp:931] [PG 0 Rank 3] ProcessGroupNCCL initialization options: size: 64",
      " 7 x.cc:1] [  12.345678] kernel stamp after the clock, in the first bytes",
      "] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0> [ 99.000000]",
      " 41097 a.cc:2] tqdm\r[rank3]:[I1102 13:00:00.000000 1 b.cc:3] after a carriage return",
      "\t123 c.cc:4] a tab after the stamp, then a long message to pass the memo's shortest line",
      "x 41000 glued to the clock: no stamp read at its fixed offsets, [ 5.123456]"};
  // Half the lines behind a launcher prefix ParseLineTime refuses at its
  // opening, the ones read by their shape.
  static const std::vector<std::string> kRefused = {
      "[rank3]:", "[rank12]:", "[gpu187:1]:", "[rank1]:[ 12.345678] ", "[r", "[rank0]:[  7.000001] ",
      "[rank5]:[7] ", "[rank63]:"};
  auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
  auto two = [&](int below) {
    const int v = static_cast<int>(clock_rng() % static_cast<unsigned>(below));
    return std::string(1, static_cast<char>('0' + v / 10)) + static_cast<char>('0' + v % 10);
  };
  auto frac = [&](int n) {
    std::string d;
    for (int i = 0; i < n; ++i) d.push_back(static_cast<char>('0' + clock_rng() % 10));
    return d;
  };
  const bool wide = clock_rng() % 8 == 0;  // out of range now and then
  std::string line = pick(rng() % 2 ? kRefused : kPrefix) + pick(kLevel) + two(wide ? 14 : 13) + two(wide ? 40 : 32) + " " +
                     two(wide ? 30 : 24) + ":" + two(60) + ":" + two(wide ? 100 : 60);
  switch (rng() % 6) {
    case 0: break;
    case 1: line += "." + frac(3); break;
    default: line += "." + frac(6); break;
  }
  return line + pick(kMessage);
}

TEST(SplitLine, TimeShapeGivesWhatTheWholeReadGives) {
  std::mt19937 rng(29);
  std::vector<uint32_t> seeds;
  // Groups of shapes the memo holds, each taken in turn for a few rounds
  // (the later rounds read by the shape), and more of them in all than it
  // holds: entries are replaced, and a new one must not keep the time
  // shape of the line it replaced.
  constexpr size_t kGroup = 200, kRounds = 6;
  for (size_t i = 0; i < 12 * kGroup; ++i) seeds.push_back(static_cast<uint32_t>(rng()));
  std::vector<std::string> lines;
  for (size_t g = 0; g < seeds.size(); g += kGroup) {
    for (size_t round = 0; round < kRounds; ++round) {
      for (size_t k = g; k < g + kGroup; ++k) {
        std::mt19937 shape_rng(seeds[k]);
        std::mt19937 clock_rng(seeds[k] ^ static_cast<uint32_t>(round * 7919));
        lines.push_back(TimeShapeLine(shape_rng, clock_rng));
      }
    }
  }
  // Shapes that differ only in their message, all with the stamp at one
  // offset, half with a kernel stamp after the clock: an entry replaced by
  // another of them reads the new line's stamp where the old one's was,
  // and only the noted kernel stamp tells them apart.
  for (size_t g = 0; g < 3000; g += kGroup) {
    for (size_t round = 0; round < kRounds; ++round) {
      for (size_t k = g; k < g + kGroup; ++k) {
        const std::string second = std::to_string(10 + (k + round) % 50);
        lines.push_back("[rank3]:[I1102 13:00:" + second + ".000001 41000 x.cc:1] " +
                        (k % 2 ? "[  12.345678] " : "") + "step " + std::to_string(k) + " of many");
      }
    }
  }
  LineFormat plain, pdsh;
  pdsh.pdsh = true;
  auto read_all = [&](bool memo) {
    SetMessageMemo(memo);
    std::vector<std::optional<ParsedTime>> got;
    for (size_t i = 0; i < lines.size(); ++i) {
      TimeContext ctx;
      ctx.default_year = i / kGroup % 3 == 0 ? 2024 : 2026;  // Feb 29 valid in one
      ctx.tz_offset_s = i / kGroup % 5 == 0 ? 3600 : 0;
      got.push_back(SplitLine(lines[i], i % 3 == 0 ? pdsh : plain, ctx).time);
    }
    return got;
  };
  const auto want = read_all(false);
  const auto got = read_all(true);
  SetMessageMemo(true);
  size_t timed = 0, monotonic = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    ASSERT_EQ(got[i].has_value(), want[i].has_value()) << lines[i];
    if (!want[i]) continue;
    ++timed;
    monotonic += want[i]->monotonic_s.has_value();
    EXPECT_EQ(got[i]->format, want[i]->format) << lines[i];
    EXPECT_EQ(got[i]->wall_us, want[i]->wall_us) << lines[i];
    EXPECT_EQ(got[i]->monotonic_s, want[i]->monotonic_s) << lines[i];
    EXPECT_EQ(got[i]->year_inferred, want[i]->year_inferred) << lines[i];
    EXPECT_EQ(got[i]->delta_s, want[i]->delta_s) << lines[i];
    EXPECT_EQ(got[i]->end, want[i]->end) << lines[i];
  }
  // Most lines are read, and many of them with a kernel stamp.
  EXPECT_GT(timed, lines.size() / 3);
  EXPECT_GT(monotonic, lines.size() / 8);
}

// The windowed search finds memrchr's newline: none, in the first, last and
// middle window, on a window's edge, and in a prefix shorter than a window.
TEST(LastNewline, SameAsOneMemrchr) {
  std::mt19937 rng(11);
  for (int round = 0; round < 400; ++round) {
    std::string s(rng() % 20000, 'x');
    const int newlines = static_cast<int>(rng() % 4);
    for (int k = 0; k < newlines && !s.empty(); ++k) s[rng() % s.size()] = '\n';
    if (round % 7 == 0 && s.size() > 4096) s[s.size() - 4096] = '\n';
    for (size_t n : {s.size(), s.size() / 2, size_t{4096}, size_t{4097}, size_t{1}, size_t{0}}) {
      if (n > s.size()) continue;
      const void* want = n ? memrchr(s.data(), '\n', n) : nullptr;
      EXPECT_EQ(static_cast<const void*>(LastNewline(s.data(), n)), want) << round << " " << n;
    }
  }
}

}  // namespace
}  // namespace faultline
