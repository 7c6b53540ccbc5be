// Terminal captures (tmux capture-pane, screen logs, `script`) hard-wrap
// long lines at the terminal's width. The scanner detects the width per
// source and joins each run of full-width lines with the line that ends it
// before matching, so a signal split by the wrap still fires, at the run's
// first line -- the same for any chunking, a .gz, byte ranges and a stream.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "evidence/bundle.h"
#include "scan/line_format.h"
#include "scan_test_util.h"

namespace faultline {
namespace {

using ::testing::HasSubstr;
using scantest::BigCaps;
using scantest::Diff;
using scantest::Keys;

// `line` as a terminal of `width` columns shows it (ASCII: a column a byte).
std::string Wrap(std::string_view line, size_t width) {
  std::string out;
  do {
    out += std::string(line.substr(0, width)) + "\n";
    line.remove_prefix(std::min(width, line.size()));
  } while (!line.empty());
  return out;
}

std::string Repeat(std::string_view s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

std::string Watchdog(int rank, int seq) {
  return "[rank" + std::to_string(rank) + "]:[E1102 13:56:" + std::to_string(10 + seq % 40) +
         ".123456 4711 ProcessGroupNCCL.cpp:632] [PG ID 0 PG GUID 0(default_pg) Rank " +
         std::to_string(rank) + "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=" +
         std::to_string(seq) + ", OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, "
         "Timeout(ms)=600000) ran for 600018 milliseconds before timing out.";
}

// A job's console at 80 columns: step lines (short), NCCL INFO lines (some
// wrapped once), and two watchdog timeouts wrapped over several lines.
std::string Capture(std::vector<size_t>* watchdog_at) {
  std::string log;
  for (int i = 0; i < 600; ++i) {
    std::string l = "[rank3]:2026-11-02 13:46:" + std::to_string(10 + i % 50) + ",123 - INFO - step " +
                    std::to_string(i) + " loss 2.31";
    log += Wrap(l, 80);
    if (i % 5 == 0) {
      log += Wrap("[rank3]:node017:4711:4790 [3] NCCL INFO Channel 0" + std::to_string(i % 10) +
                      "/32 : 3[3b000] -> 4[5e000] via P2P/IPC/read comm 0x55d0c8a1e7f0 nRanks 8",
                  80);
    }
    if (i == 200 || i == 451) {
      watchdog_at->push_back(log.size());
      log += Wrap(Watchdog(3, i), 80);
    }
  }
  return log;
}

TEST(HardWrap, WidthAndDetection) {
  EXPECT_EQ(DisplayWidth("abc"), 3u);
  EXPECT_EQ(DisplayWidth("a\tb"), 9u);
  EXPECT_EQ(DisplayWidth("\x1b[31merror\x1b[0m\r"), 5u);
  EXPECT_EQ(DisplayWidth("GPU \xc3\xa9t\xc3\xa9"), 7u);
  // Lines past 8 bytes (counted a word at a time), multi-byte characters
  // across word edges, a 4-byte character, and a lone lead byte.
  EXPECT_EQ(DisplayWidth("[rank3]: GPU \xc3\xa9t\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x94\xa5 done\r"), 25u);
  EXPECT_EQ(DisplayWidth(std::string(63, 'x') + "\xc3\xa9"), 64u);
  EXPECT_EQ(DisplayWidth("abcdefg\xc3"), 8u);
  EXPECT_EQ(DisplayWidth("abcdefgh\tx"), 17u);
  std::vector<size_t> at;
  const std::string log = Capture(&at);
  EXPECT_EQ(DetectLineFormat(std::string_view(log).substr(0, 64 << 10)).wrap_width, 80u);
  // The same lines unwrapped; and repeated fixed-width lines that are not
  // wrapped (NCCL's channel table) are not taken for a wrap.
  std::string plain;
  for (int i = 0; i < 200; ++i) {
    plain += "[rank3]:2026-11-02 13:46:41,123 - INFO - step " + std::to_string(i) + "\n";
    plain += "[rank3]:node017:4711:4790 [3] NCCL INFO Channel 0" + std::to_string(i % 10) +
             "/32 : 3[3b000] -> 4[5e000] via P2P/IPC/read\n";
  }
  EXPECT_EQ(DetectLineFormat(plain).wrap_width, 0u);
  EXPECT_EQ(DetectLineFormat(Watchdog(3, 1) + "\n" + Watchdog(3, 2) + "\n").wrap_width, 0u);
  // srun -l labels of different widths: rank 1023's lines are the widest and
  // alike, each followed by rank 0's line -- a stamp behind a label, not a
  // continuation.
  std::string srun;
  for (int i = 0; i < 50; ++i) {
    srun += "0: 2026-11-02 01:00:" + std::to_string(10 + i) + ",538 - train - INFO - step: " +
            std::to_string(30000 + i) + "  loss:  2.1777\n";
    srun += "1023: 2026-11-02 01:00:" + std::to_string(10 + i) + ",474 - train - INFO - step: " +
            std::to_string(30000 + i) + "  loss:  2.2071\n";
  }
  EXPECT_EQ(DetectLineFormat(srun).wrap_width, 0u);
  // `kubectl describe pods` of many pods: its widest lines ("Node:" of equal
  // width) are each followed by another aligned field, not a continuation.
  std::string describe;
  for (int i = 0; i < 40; ++i) {
    describe += "Name:             trainer-worker-" + std::to_string(i) + "\nNamespace:        training\n" +
                "Node:             gpu-node-" + std::to_string(100 + i) + "/10.0.0." + std::to_string(10 + i) +
                "\nStatus:           Running\n\n";
  }
  EXPECT_EQ(DetectLineFormat(describe).wrap_width, 0u);

  LineFormat f;
  f.wrap_width = 10;
  std::string chunk = "0123456789\nabc\nxyz\n0123456789\n0123456789\nend\n";
  DerivedChunk jc = JoinPartials(f, chunk);
  ASSERT_EQ(jc.lines.size(), 3u);
  EXPECT_EQ(jc.messages, "0123456789abc\nxyz\n01234567890123456789end\n");
  EXPECT_EQ(jc.lines[2].offset, chunk.find("0123456789\n0123456789"));
  EXPECT_EQ(jc.lines[2].line_rel, 3u);
  size_t mid = chunk.find("end");
  EXPECT_EQ(CutBack(f, chunk, mid), chunk.find("0123456789\n0123456789"));
  EXPECT_EQ(CutForward(f, chunk, mid), chunk.size());
}

// rich draws its traceback panel and other frames to the console's width:
// a line that ends in a box-drawing character (its right edge) is as wide
// as the console without having been wrapped. It continues nothing, and a
// log of such frames is no hard-wrapped capture.
TEST(HardWrap, FrameEdgesAreWholeLines) {
  const std::string top = "\xe2\x95\xad" + Repeat("\xe2\x94\x80", 78) + "\xe2\x95\xae";     // ╭─...─╮
  const std::string bottom = "\xe2\x95\xb0" + Repeat("\xe2\x94\x80", 78) + "\xe2\x95\xaf";  // ╰─...╯
  const std::string vertical = "\xe2\x94\x82";                                              // │
  ASSERT_EQ(DisplayWidth(top), 80u);
  LineFormat f;
  f.wrap_width = 80;
  EXPECT_FALSE(ContinuesNext(f, bottom));
  EXPECT_FALSE(ContinuesNext(f, top + "\r"));
  EXPECT_FALSE(ContinuesNext(f, vertical + " /opt/app/train.py:88 in <module>" + std::string(45, ' ') + vertical));
  EXPECT_TRUE(ContinuesNext(f, std::string(79, 'x') + "\xe2\x80\x94"));  // an em dash is no edge
  const std::string chunk = bottom + "\nRuntimeError: \n";
  EXPECT_EQ(JoinPartials(f, chunk).lines.size(), 2u);
  // Panels, each followed by a plain line: no wrap found.
  std::string panels;
  for (int i = 0; i < 8; ++i) {
    panels += top + "\n" + vertical + " step " + std::to_string(100 * i) + std::string(70, ' ') + vertical + "\n" +
              bottom + "\nsaved checkpoint " + std::to_string(i) + "\n";
  }
  EXPECT_EQ(DetectLineFormat(panels).wrap_width, 0u);
}

// An ASCII table's rows open and close on its frame ('|', '+'), all as wide
// as the table: nvidia-smi's before driver 450 are 79 columns. A log that is
// only such a table is not hard-wrapped, and its rows stay whole lines.
TEST(HardWrap, AsciiTableRowsAreWholeLines) {
  const std::string border = "+" + std::string(77, '-') + "+";
  const std::string header = "| Processes:" + std::string(55, ' ') + "GPU Memory |";
  const std::string rule = "|" + std::string(77, '=') + "|";
  const std::string cells = "+" + std::string(31, '-') + "+" + std::string(22, '-') + "+" + std::string(22, '-') + "+";
  const std::string row = "| N/A   36C    P0    41W / 300W |  12799MiB / 16280MiB |      0%      Default |";
  ASSERT_EQ(DisplayWidth(border), 79u);
  ASSERT_EQ(DisplayWidth(row), 79u);
  LineFormat f;
  f.wrap_width = 79;
  for (const std::string& l : {border, header, rule, cells, row, "> " + border}) {
    EXPECT_FALSE(ContinuesNext(f, l)) << l;
  }
  EXPECT_TRUE(ContinuesNext(f, "|" + std::string(77, 'x') + "y"));  // opens on a bar, ends mid-word
  std::string table;
  for (int i = 0; i < 4; ++i) table += border + "\n" + row + "\n" + cells + "\n" + header + "\n" + rule + "\n";
  table += border + "\n";
  EXPECT_EQ(DetectLineFormat(table).wrap_width, 0u);
}

// A capture pads a line that ended short of the console's edge with blanks
// to it (tmux's capture-pane, a copied screen): as wide as the wrapped
// lines, it ended, and the next record's prefix after it is no sign against
// the wrap.
TEST(HardWrap, PaddedLinesAreWholeLines) {
  LineFormat f;
  f.wrap_width = 80;
  EXPECT_FALSE(ContinuesNext(f, "erwise, please attempt to debug the hang." + std::string(39, ' ')));
  EXPECT_TRUE(ContinuesNext(f, std::string(79, 'x') + " "));  // a wrap between two words
  std::string log;
  for (int seq = 0; seq < 3; ++seq) {
    std::string rec = Watchdog(5, seq);
    for (size_t k = 0; k < rec.size(); k += 80) {
      std::string piece = rec.substr(k, 80);
      log += piece + std::string(80 - piece.size(), ' ') + "\n";
    }
  }
  EXPECT_EQ(DetectLineFormat(log).wrap_width, 80u);
  f = DetectLineFormat(log);
  EXPECT_EQ(JoinPartials(f, log).lines.size(), 3u);
}

TEST(HardWrap, SplitSignalMatchesTheSameEveryWay) {
  scantest::TempDir dir;
  std::vector<size_t> at;
  const std::string log = Capture(&at);
  const std::string path = dir / "node017/console.log";
  scantest::WriteFile(path, log);
  scantest::WriteFile(dir / "gz/node017/console.log.gz", scantest::Gzip(log));
  auto rs = scantest::DefaultRules();

  ScanResult whole = scantest::ScanFiles(rs, {path}, BigCaps(1));
  std::vector<const Evidence*> timeouts = scantest::OfRule(whole, *rs, "nccl-watchdog-timeout");
  ASSERT_EQ(timeouts.size(), 2u) << "the wrapped watchdog lines must be joined and matched";
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(timeouts[i]->offset, at[i]);
    EXPECT_EQ(timeouts[i]->rank, 3);
    EXPECT_THAT(timeouts[i]->text, HasSubstr("Watchdog caught collective operation timeout"));
    EXPECT_NE(timeouts[i]->time_us, kNoTime);
  }
  EXPECT_EQ(timeouts[0]->line, 1 + static_cast<uint64_t>(std::count(log.begin(), log.begin() + at[0], '\n')));

  auto want = Keys(whole);
  for (size_t chunk : {size_t{4096}, at[0] + 81, at[1] + 30}) {
    EXPECT_EQ(Diff(want, Keys(scantest::ScanFiles(rs, {path}, BigCaps(2, chunk)))), "") << chunk;
  }
  EXPECT_EQ(Diff(want, Keys(scantest::ScanFiles(rs, {dir / "gz/node017/console.log.gz"}, BigCaps(1)))), "");
  for (uint64_t cut : {at[0] + 81, at[1] + 5, log.size() / 2}) {
    EXPECT_EQ(Diff(want, Keys(scantest::ScanRangesMerged(rs, path, {cut}, true))), "") << "cut at " << cut;
  }
  // A pushed stream decides its format from its first flush: give it the
  // first 64 KiB, then random pieces, each flushed.
  Scanner s(rs, BigCaps(1));
  uint32_t id = s.OpenStream(path);
  const size_t first = log.rfind('\n', 64 << 10) + 1;
  ASSERT_TRUE(s.Feed(id, std::string_view(log).substr(0, first)).ok());
  ASSERT_TRUE(s.FlushStream(id).ok());
  std::mt19937 rng(13);
  for (size_t pos = first; pos < log.size();) {
    size_t n = std::min<size_t>(1 + rng() % 300, log.size() - pos);
    ASSERT_TRUE(s.Feed(id, std::string_view(log).substr(pos, n)).ok());
    ASSERT_TRUE(s.FlushStream(id).ok());
    pos += n;
  }
  ASSERT_TRUE(s.CloseStream(id).ok());
  EXPECT_EQ(Diff(want, Keys(s.Finish())), "");
}

}  // namespace
}  // namespace faultline
