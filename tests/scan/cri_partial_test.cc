// Kubernetes CRI log files split a long message into `P` (partial) lines
// ended by an `F` line; the scanner joins them before matching, so a signal
// whose text straddles the split still fires, with the offset and line of the
// run's first line -- the same for any chunking and any way the file arrives.
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

constexpr std::string_view kOom =
    "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has "
    "a total capacity of 79.15 GiB of which 1.23 GiB is free.";

std::string Cri(int sec, std::string_view stream, char tag, std::string_view msg) {
  char ts[64];
  std::snprintf(ts, sizeof ts, "2026-11-02T13:%02d:%02d.123456789Z", 40 + sec / 60, sec % 60);
  return std::string(ts) + " " + std::string(stream) + " " + tag + " " + std::string(msg) + "\n";
}

// The OOM line split in three pieces, the middle one cutting "out of memory".
std::string SplitOom(int sec) {
  std::string_view m = kOom;
  size_t a = m.find("out of me") + 6, b = a + 40;
  return Cri(sec, "stderr", 'P', m.substr(0, a)) + Cri(sec, "stderr", 'P', m.substr(a, b - a)) +
         Cri(sec, "stderr", 'F', m.substr(b));
}

TEST(CriPartial, TagsAndJoin) {
  size_t payload = 0;
  bool err = false;
  std::string l = Cri(1, "stderr", 'P', "abc");
  l.pop_back();
  EXPECT_EQ(CriTag(l, &payload, &err), 'P');
  EXPECT_TRUE(err);
  EXPECT_EQ(l.substr(payload), "abc");
  EXPECT_EQ(CriTag("[rank3]: stdout F not a cri line"), 0);
  EXPECT_TRUE(DetectLineFormat(Cri(1, "stdout", 'F', "a") + Cri(2, "stdout", 'F', "b")).cri);
  EXPECT_FALSE(DetectLineFormat("plain\nlines\n").cri);

  // stdout's F line arrives between stderr's partial lines: both records are
  // whole, each at its own first line.
  std::string chunk = Cri(1, "stderr", 'P', "hello ") + Cri(1, "stdout", 'F', "other") +
                      Cri(2, "stderr", 'F', "world") + Cri(3, "stdout", 'F', "last");
  DerivedChunk jc = JoinCriPartials(chunk);
  ASSERT_EQ(jc.lines.size(), 3u);
  EXPECT_THAT(jc.messages, HasSubstr("stderr P hello world\n"));
  EXPECT_EQ(jc.lines[0].offset, 0u);
  EXPECT_EQ(jc.lines[0].line_rel, 0u);
  EXPECT_EQ(jc.lines[1].line_rel, 1u);
  EXPECT_EQ(jc.lines[2].line_rel, 3u);

  // Cuts never fall between a P line and its F line.
  std::string run = Cri(1, "stdout", 'F', "a") + Cri(2, "stdout", 'P', "b") + Cri(2, "stdout", 'F', "c");
  size_t after_p = run.find("\n", run.find(" P ")) + 1;
  EXPECT_EQ(CriCutBack(run, after_p), run.find('\n') + 1);
  EXPECT_EQ(CriCutForward(run, after_p), run.size());
  EXPECT_EQ(CriCutBack(run, run.size()), run.size());
}

TEST(CriPartial, SplitSignalMatchesTheSameEveryWay) {
  scantest::TempDir dir;
  std::string log;
  int sec = 0;
  for (int i = 0; i < 400; ++i) {
    log += Cri(sec++ % 1200, "stdout", 'F', "[rank3]: step " + std::to_string(i) + " loss 2.31 throughput 412.0 samples/s");
    if (i == 150 || i == 333) log += SplitOom(sec++ % 1200);
  }
  const std::string path = dir / "pods/trainer-3/pytorch.log";
  scantest::WriteFile(path, log);
  scantest::WriteFile(dir / "gz/pods/trainer-3/pytorch.log.gz", scantest::Gzip(log));
  auto rs = scantest::DefaultRules();

  ScanResult whole = scantest::ScanFiles(rs, {path}, BigCaps(1));
  std::vector<const Evidence*> ooms = scantest::OfRule(whole, *rs, "cuda-oom");
  ASSERT_EQ(ooms.size(), 2u) << "the split OOM lines must be joined and matched";
  size_t first = log.find(" stderr P ");
  first = log.rfind('\n', first) + 1;
  EXPECT_EQ(ooms[0]->offset, first);
  EXPECT_EQ(ooms[0]->line, 152u);  // 151 step lines before it
  EXPECT_THAT(ooms[0]->text, HasSubstr("CUDA out of memory. Tried to allocate"));
  EXPECT_EQ(ooms[0]->rank, 3);

  auto want = Keys(whole);
  // 4 KiB chunks: the chunk cuts move past the runs.
  EXPECT_EQ(Diff(want, Keys(scantest::ScanFiles(rs, {path}, BigCaps(2, 4096)))), "");
  // A chunk size whose first cut would fall right after the first P line.
  EXPECT_EQ(Diff(want, Keys(scantest::ScanFiles(rs, {path}, BigCaps(2, first + 10)))), "");
  auto gz = Keys(scantest::ScanFiles(rs, {dir / "gz/pods/trainer-3/pytorch.log.gz"}, BigCaps(1)));
  ASSERT_EQ(gz.size(), want.size());
  for (size_t i = 0; i < gz.size(); ++i) {
    EXPECT_EQ(gz[i].offset, want[i].offset);
    EXPECT_EQ(gz[i].line, want[i].line);
    EXPECT_EQ(gz[i].text, want[i].text);
  }
  // Byte ranges (a scale-out's partitions) cut anywhere, inside the runs
  // too; merged, they are the whole scan. The first line is not given (the
  // range finds it).
  for (uint64_t at : {first + 5, first + 120, log.size() / 2}) {
    EXPECT_EQ(Diff(want, Keys(scantest::ScanRangesMerged(rs, path, {at}, false))), "") << "cut at " << at;
  }
  // A pushed stream flushed after every random piece.
  for (uint32_t round = 0; round < 4; ++round) {
    EXPECT_EQ(Diff(want, Keys(scantest::ScanStreamFlushed(rs, path, log, BigCaps(1), 11 + round, 900))), "")
        << "round " << round;
  }
}

}  // namespace
}  // namespace faultline
