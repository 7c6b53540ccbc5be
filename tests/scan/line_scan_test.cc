// The per-line work of every matched line, done faster than by a find per
// word (issue #20's per-match cost), must give what the plain way gives:
// the 16-byte pair scan against a byte-by-byte one, the traceback-end test
// against a find per word, the time-only split against SplitLine, the
// kernel markers and the display width against hand-checked values.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "attribution/attribution.h"
#include "scan/line_format.h"
#include "scan/traceback.h"
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
                                                 "Ex",  "error", "error:", "Fail", "Failure", " ", "xx", "E", "F"};
  for (int round = 0; round < 3000; ++round) {
    std::string s;
    for (size_t k = rng() % 12; k > 0; --k) s += kPieces[rng() % std::size(kPieces)];
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

}  // namespace
}  // namespace faultline
