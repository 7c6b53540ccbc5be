// A compressed file scanned with workers to spare is decoded by one thread
// while the others scan its pieces (stream.cc): the evidence, offsets, line
// counts, the error after the bytes before it, the limits and cancellation
// are those of one thread, with lines straddling every piece boundary.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "scan_test_util.h"

namespace faultline {
namespace {

using namespace scantest;

// zstd frames of `frame` bytes that carry content sizes and checksums.
std::string ZstdChecked(std::string_view text, size_t frame) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
  std::string out;
  for (size_t pos = 0; pos < text.size(); pos += frame) {
    std::string_view part = text.substr(pos, frame);
    std::string buf(ZSTD_compressBound(part.size()), '\0');
    size_t n = ZSTD_compress2(cctx, buf.data(), buf.size(), part.data(), part.size());
    buf.resize(ZSTD_isError(n) ? 0 : n);
    out += buf;
  }
  ZSTD_freeCCtx(cctx);
  return out;
}

std::string Errors(const ScanResult& r) {
  std::string s;
  for (const InputError& e : r.errors)
    s += e.source + ": " + e.message + " (" + std::to_string(e.code) + ")\n";
  return s;
}

// Scans `paths` on 1, 2 and 4 threads; every result must be the first's.
void ExpectSameOnMoreThreads(const std::vector<std::string>& paths, ScanOptions opts = BigCaps(1)) {
  auto rs = TestRules();
  opts.threads = 1;
  ScanResult one = ScanFiles(rs, paths, opts);
  ASSERT_GT(one.evidence.size(), 0u);
  for (unsigned threads : {2u, 4u}) {
    opts.threads = threads;
    ScanResult more = ScanFiles(rs, paths, opts);
    EXPECT_EQ(Diff(Keys(one), Keys(more)), "") << threads << " threads";
    EXPECT_EQ(Errors(one), Errors(more)) << threads << " threads";
    ASSERT_EQ(one.sources.size(), more.sources.size());
    for (size_t i = 0; i < one.sources.size(); ++i) {
      EXPECT_EQ(one.sources[i].lines, more.sources[i].lines) << threads << " threads, source " << i;
      EXPECT_EQ(one.sources[i].bytes, more.sources[i].bytes) << threads << " threads, source " << i;
      EXPECT_EQ(one.sources[i].failed, more.sources[i].failed)
          << threads << " threads, source " << i;
      EXPECT_EQ(one.sources[i].last_time_us, more.sources[i].last_time_us) << threads << " threads";
    }
    EXPECT_EQ(one.lines, more.lines);
    EXPECT_EQ(one.bytes, more.bytes);
  }
}

// 40 MB: many pieces (kStreamBuffer), with 5-20 KiB lines, CRLF and multi-byte
// text straddling their boundaries.
const std::string& Log() {
  static const std::string text = JobLog(3, 40 << 20);
  return text;
}

TEST(StreamPipeline, GzipScansAsWithOneThread) {
  TempDir dir;
  WriteFile(dir / "job.log.gz", Gzip(Log()));
  ExpectSameOnMoreThreads({dir / "job.log.gz"});
}

TEST(StreamPipeline, MultiFrameZstdScansAsWithOneThread) {
  TempDir dir;
  WriteFile(dir / "frames.log.zst", ZstdChecked(Log(), 300000));  // frames cut mid-line
  WriteFile(dir / "one.log.zst", Zstd(Log(), Log().size()));
  ExpectSameOnMoreThreads({dir / "frames.log.zst"});
  ExpectSameOnMoreThreads({dir / "one.log.zst"});
  ExpectSameOnMoreThreads({dir / "frames.log.zst", dir / "one.log.zst"});  // helpers shared out
}

TEST(StreamPipeline, TruncatedGzipFailsAfterTheSameEvidence) {
  TempDir dir;
  std::string gz = Gzip(Log());
  gz.resize(gz.size() * 2 / 3);
  WriteFile(dir / "cut.log.gz", gz);
  ExpectSameOnMoreThreads({dir / "cut.log.gz"});
  ScanResult r = ScanFiles(TestRules(), {dir / "cut.log.gz"}, BigCaps(2));
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].message.find("truncated gzip"), std::string::npos) << r.errors[0].message;
}

TEST(StreamPipeline, ZstdChecksumErrorNamesItsFrameOnTwoThreads) {
  TempDir dir;
  std::string zst = ZstdChecked(Log(), 1 << 20);
  // The frame holding decompressed bytes 33..34 MiB: walk to it, then
  // break its checksum (its last 4 bytes).
  size_t start = 0;
  for (int f = 0; f < 33; ++f)
    start += ZSTD_findFrameCompressedSize(zst.data() + start, zst.size() - start);
  const size_t end = start + ZSTD_findFrameCompressedSize(zst.data() + start, zst.size() - start);
  zst[end - 2] ^= 0x5a;
  WriteFile(dir / "bad.log.zst", zst);
  ExpectSameOnMoreThreads({dir / "bad.log.zst"});
  ScanResult r = ScanFiles(TestRules(), {dir / "bad.log.zst"}, BigCaps(2));
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].message.find("at compressed byte " + std::to_string(end - 4)),
            std::string::npos)
      << r.errors[0].message;
  // Evidence up to the bad frame, none past it.
  ASSERT_FALSE(r.evidence.empty());
  EXPECT_LT(r.evidence.back().offset, uint64_t{34} << 20);
  EXPECT_GT(r.evidence.back().offset, uint64_t{32} << 20);
}

TEST(StreamPipeline, LimitsStopWhereOneThreadStops) {
  TempDir dir;
  WriteFile(dir / "job.log.gz", Gzip(Log()));
  WriteFile(dir / "job.log.zst", ZstdChecked(Log(), 1 << 20));
  ScanOptions capped = BigCaps(1);
  capped.limits.max_source_bytes = (21 << 20) + 12345;
  ExpectSameOnMoreThreads({dir / "job.log.gz"}, capped);
  ExpectSameOnMoreThreads({dir / "job.log.zst"}, capped);
  ScanOptions bomb = BigCaps(1);
  bomb.limits.max_decompressed_bytes = (19 << 20) + 777;
  ExpectSameOnMoreThreads({dir / "job.log.gz"}, bomb);
  ExpectSameOnMoreThreads({dir / "job.log.zst"}, bomb);
}

TEST(StreamPipeline, CancelledMidFileReturnsPromptly) {
  TempDir dir;
  WriteFile(dir / "job.log.gz", Gzip(Log()));
  WriteFile(dir / "job.log.zst", ZstdChecked(Log(), 300000));  // split over decoders from 3 threads
  for (const char* file : {"job.log.gz", "job.log.zst"}) {
    for (unsigned threads : {2u, 4u}) {
      // Through the progress callback (no shared flag), and through the flag.
      ScanOptions opts = BigCaps(threads);
      int calls = 0;
      opts.on_progress = [&](uint64_t, uint64_t) { return ++calls < 2; };
      Scanner a(TestRules(), opts);
      EXPECT_TRUE(absl::IsCancelled(a.ScanPaths({dir / file}))) << file << " " << threads;
      std::atomic<bool> cancel{false};
      ScanOptions flagged = BigCaps(threads);
      flagged.cancel = &cancel;
      flagged.on_progress = [&](uint64_t, uint64_t) {
        cancel = true;
        return true;
      };
      Scanner b(TestRules(), flagged);
      EXPECT_TRUE(absl::IsCancelled(b.ScanPaths({dir / file}))) << file << " " << threads;
    }
  }
}

}  // namespace
}  // namespace faultline
