// Huge inputs made cheaply from sparse files: a 2 GiB single line with the
// match at its very end, and a file over 4 GiB (hs_scan takes an unsigned
// length, so the scanner must split) with matches past the 4 GiB mark. The
// match must be found with the right offset and line, its text cut to 4096
// bytes, and the scanner's own memory must stay bounded.
#include <sys/statvfs.h>

#include "faults_util.h"
#include "gmock/gmock.h"

namespace faultline::faults {
namespace {

// Sparse files need a file system with holes; the temp dir normally is one.
bool HaveSparseRoom(const std::string& dir, uint64_t bytes) {
  const std::string probe = dir + "/probe";
  MakeSparse(probe, bytes);
  struct stat st {};
  bool ok = ::stat(probe.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_blocks) * 512 < (1 << 20);
  ::unlink(probe.c_str());
  return ok;
}

const Evidence* FindXid(const ScanResult& r) {
  for (const Evidence& ev : r.evidence) {
    if (static_cast<int>(ev.rule) == Rules()->FindRule(kXidRule)) return &ev;
  }
  return nullptr;
}

// One line of 2 GiB: zeros, then the Xid message at the end. The line is far
// past the confirm window, so the scanner must confirm around the match, not
// at the line start, and keep only a window of it.
TEST(HugeFaults, TwoGigabyteSingleLine) {
  TempDir dir;
  constexpr uint64_t kSize = uint64_t{2} << 30;
  if (!HaveSparseRoom(dir.path(), kSize)) GTEST_SKIP() << "no sparse files in " << dir.path();
  const std::string path = dir.Sub("one-line.log");
  const std::string tail = " " + std::string(kXidLine) + "\n";
  MakeSparse(path, kSize);
  PWrite(path, kSize - tail.size(), tail);
  Rules();
  AnonSampler anon;
  Scanner scanner(Rules(), ScanOptions{.threads = 2});
  ASSERT_TRUE(scanner.ScanPaths({path}).ok());
  ScanResult r = scanner.Finish();
  anon.Stop();
  std::printf("2 GiB line: scanner anonymous memory growth %.1f MiB, peak RSS %.0f MiB\n",
              anon.growth() / 1048576.0, PeakRssBytes() / 1048576.0);
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.sources[0].bytes, kSize);
  EXPECT_EQ(r.sources[0].lines, 1u);
  const Evidence* ev = FindXid(r);
  ASSERT_NE(ev, nullptr) << "the match at the end of a 2 GiB line was lost";
  EXPECT_EQ(ev->line, 1u);
  EXPECT_EQ(ev->offset, 0u);
  EXPECT_LE(ev->text.size(), kMaxEvidenceText);
  EXPECT_GE(ev->text.size(), kMaxEvidenceText - 3);
  // The scanner keeps windows of the line, never the line.
  EXPECT_LT(anon.growth(), uint64_t{256} << 20);
}

// Over 4 GiB: a hole of zeros, then real lines after the 4 GiB mark. Scanned
// with the default chunking and as a single chunk (so PhaseA itself must cut
// the chunk into hs_scan-sized windows).
TEST(HugeFaults, SparseFileOverFourGiB) {
  TempDir dir;
  constexpr uint64_t kHole = (uint64_t{4} << 30) + 12345;
  if (!HaveSparseRoom(dir.path(), kHole + 4096)) GTEST_SKIP() << "no sparse files";
  const std::string path = dir.Sub("sparse.log");
  // Line 1: the hole (zeros) ending in '\n'; line 2: filler; line 3: Xid.
  std::string tail = "\n" + std::string(kFiller) + "\n" + std::string(kXidLine) + "\n";
  MakeSparse(path, kHole + tail.size());
  PWrite(path, kHole, tail);
  const uint64_t xid_offset = kHole + 1 + kFiller.size() + 1;
  for (size_t chunk : {size_t{16} << 20, size_t{8} << 30}) {
    SCOPED_TRACE("chunk_bytes " + std::to_string(chunk));
    Rules();
    AnonSampler anon;
    Scanner scanner(Rules(), ScanOptions{.threads = 2, .chunk_bytes = chunk});
    ASSERT_TRUE(scanner.ScanPaths({path}).ok());
    ScanResult r = scanner.Finish();
    anon.Stop();
    std::printf("4 GiB sparse, chunk %zu: anonymous growth %.1f MiB\n", chunk,
                anon.growth() / 1048576.0);
    EXPECT_TRUE(r.errors.empty());
    EXPECT_EQ(r.sources[0].bytes, kHole + tail.size());
    EXPECT_EQ(r.sources[0].lines, 3u);
    const Evidence* ev = FindXid(r);
    ASSERT_NE(ev, nullptr) << "the match past 4 GiB was lost";
    EXPECT_EQ(ev->offset, xid_offset);
    EXPECT_EQ(ev->line, 3u);
    EXPECT_EQ(ev->text, kXidLine);
    EXPECT_LT(anon.growth(), uint64_t{256} << 20);
  }
}

// A match straddling the point where a > 4 GiB chunk is cut for hs_scan:
// lines are never cut, so it is found (the cut goes to a line boundary).
TEST(HugeFaults, MatchAtTheHyperscanWindowEdge) {
  TempDir dir;
  constexpr uint64_t kEdge = 0xF0000000u;  // the scanner's hs_scan window
  constexpr uint64_t kSize = (uint64_t{4} << 30) + 4096;
  if (!HaveSparseRoom(dir.path(), kSize)) GTEST_SKIP() << "no sparse files";
  const std::string path = dir.Sub("edge.log");
  MakeSparse(path, kSize);
  // Newline-terminated lines around the edge; the Xid line spans it.
  const std::string before = "\n" + std::string(kFiller) + "\n";
  const uint64_t xid_at = kEdge - kXidLine.size() / 2;
  PWrite(path, xid_at - before.size(), before);
  PWrite(path, xid_at, std::string(kXidLine) + "\n");
  PWrite(path, kSize - 1, "\n");
  ScanResult r;
  {
    Scanner scanner(Rules(), ScanOptions{.threads = 1, .chunk_bytes = size_t{8} << 30});
    ASSERT_TRUE(scanner.ScanPaths({path}).ok());
    r = scanner.Finish();
  }
  const Evidence* ev = FindXid(r);
  ASSERT_NE(ev, nullptr) << "a match across the hs_scan window edge was lost";
  EXPECT_EQ(ev->offset, xid_at);
  EXPECT_EQ(ev->line, 3u);
  EXPECT_EQ(ev->text, kXidLine);
}

}  // namespace
}  // namespace faultline::faults
