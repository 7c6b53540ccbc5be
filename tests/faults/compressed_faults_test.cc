// Compressed sources that fail: a gzip bomb and a zstd bomb (capped by
// InputLimits with an error naming the file), a corrupt zstd frame, a
// truncated gzip member, a zstd frame asking for a huge window. The bytes
// decoded before the failure are scanned, and the other sources are still
// diagnosed.
#include <zlib.h>
#include <zstd.h>

#include "faults_util.h"
#include "gmock/gmock.h"

namespace faultline::faults {
namespace {

using ::testing::HasSubstr;

std::string Gzip(std::string_view data, int level = 9) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, data.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

std::string Zstd(std::string_view data, int level = 3, int window_log = 0) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  if (window_log) ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, window_log);
  std::string out(ZSTD_compressBound(data.size()), '\0');
  size_t n = ZSTD_compress2(cctx, out.data(), out.size(), data.data(), data.size());
  EXPECT_FALSE(ZSTD_isError(n));
  ZSTD_freeCCtx(cctx);
  out.resize(n);
  return out;
}

ScanResult ScanWith(const std::vector<std::string>& paths, InputLimits limits = {}) {
  ScanOptions so;
  so.threads = 2;
  so.limits = limits;
  Scanner scanner(Rules(), so);
  EXPECT_TRUE(scanner.ScanPaths(paths).ok());
  return scanner.Finish();
}

class CompressedFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    good_ = dir_.Sub("z-good.log");
    WriteFile(good_, std::string(kXidLine) + "\n");
  }
  void ExpectGoodDiagnosed(const ScanResult& r) {
    EXPECT_EQ(CountRule(r, kXidRule, SourceIndex(r, good_)), 1u);
    EXPECT_EQ(ErrorFor(r, good_), nullptr);
  }
  TempDir dir_;
  std::string good_;
};

// 1 GiB of one repeated line in ~1 MiB of gzip: the cap stops it at the
// limit with an error naming the file; what came before the cap is scanned.
TEST_F(CompressedFaults, GzipBomb) {
  std::string line = std::string(kXidLine) + "\n";
  std::string block;
  while (block.size() < (64u << 20)) block += line;
  std::string member = Gzip(block);
  std::string bomb;
  for (int i = 0; i < 16; ++i) bomb += member;  // 16 members, 1 GiB decoded
  const std::string path = dir_.Sub("bomb.log.gz");
  WriteFile(path, bomb);
  InputLimits limits;
  limits.max_decompressed_bytes = 8 << 20;
  ScanResult r = ScanWith({path, good_}, limits);
  int bi = SourceIndex(r, path);
  const InputError* e = ErrorFor(r, path);
  ASSERT_NE(e, nullptr);
  EXPECT_THAT(e->message, HasSubstr(path));
  EXPECT_THAT(e->message, HasSubstr("exceeds the limit"));
  EXPECT_LT(e->code, 0);
  EXPECT_LE(r.sources[bi].bytes, limits.max_decompressed_bytes);
  EXPECT_GT(r.rule_stats[Rules()->FindRule(kXidRule)].count, 1000u);
  ExpectGoodDiagnosed(r);
  std::string json = ReportOf(r);
  EXPECT_THAT(json, HasSubstr("exceeds the limit"));
}

TEST_F(CompressedFaults, ZstdBomb) {
  std::string block(256u << 20, 'A');
  const std::string path = dir_.Sub("bomb.log.zst");
  WriteFile(path, Zstd(block, 19));
  InputLimits limits;
  limits.max_decompressed_bytes = 1 << 20;
  ScanResult r = ScanWith({path, good_}, limits);
  const InputError* e = ErrorFor(r, path);
  ASSERT_NE(e, nullptr);
  EXPECT_THAT(e->message, HasSubstr(path));
  EXPECT_THAT(e->message, HasSubstr("exceeds the limit"));
  ExpectGoodDiagnosed(r);
}

// A flipped byte in the middle of a zstd frame: the content checksum (or the
// entropy decoder) fails; an error names the file, nothing crashes.
TEST_F(CompressedFaults, CorruptZstdFrame) {
  std::string text = LogWithMatches(200'000, 100);
  std::string frame = Zstd(text);
  for (size_t where : {frame.size() / 2, frame.size() - 6, size_t{20}}) {
    std::string bad = frame;
    bad[where] ^= 0x5a;
    const std::string path = dir_.Sub("corrupt-" + std::to_string(where) + ".log.zst");
    WriteFile(path, bad);
    ScanResult r = ScanWith({path, good_});
    const InputError* e = ErrorFor(r, path);
    ASSERT_NE(e, nullptr) << "corruption at " << where << " went unnoticed";
    EXPECT_THAT(e->message, HasSubstr(path));
    EXPECT_LT(e->code, 0);
    EXPECT_LE(CountRule(r, kXidRule, SourceIndex(r, path)), 2000u);
    ExpectGoodDiagnosed(r);
  }
  // Truncated mid-frame, and trailing garbage after a good frame.
  const std::string cut = dir_.Sub("cut.log.zst");
  WriteFile(cut, frame.substr(0, frame.size() / 3));
  const std::string junk = dir_.Sub("junk.log.zst");
  WriteFile(junk, frame + "this is not a zstd frame");
  ScanResult r = ScanWith({cut, junk, good_});
  for (const std::string& p : {cut, junk}) {
    const InputError* e = ErrorFor(r, p);
    ASSERT_NE(e, nullptr) << p;
    EXPECT_THAT(e->message, HasSubstr(p));
  }
  EXPECT_EQ(CountRule(r, kXidRule, SourceIndex(r, junk)), 2000u);
  ExpectGoodDiagnosed(r);
}

TEST_F(CompressedFaults, TruncatedAndCorruptGzip) {
  std::string text = LogWithMatches(100'000, 100);
  std::string gz = Gzip(text, 6);
  const std::string cut = dir_.Sub("cut.log.gz");
  WriteFile(cut, gz.substr(0, gz.size() / 2));
  std::string flipped = gz;
  flipped[gz.size() / 2] ^= 0xff;
  const std::string bad = dir_.Sub("bad.log.gz");
  WriteFile(bad, flipped);
  const std::string notgz = dir_.Sub("plain-named.log.gz");
  WriteFile(notgz, text.substr(0, 1000));
  ScanResult r = ScanWith({cut, bad, notgz, good_});
  for (const std::string& p : {cut, bad, notgz}) {
    const InputError* e = ErrorFor(r, p);
    ASSERT_NE(e, nullptr) << p;
    EXPECT_THAT(e->message, HasSubstr(p));
    EXPECT_LT(e->code, 0);
  }
  EXPECT_GT(CountRule(r, kXidRule, SourceIndex(r, cut)), 0u) << "bytes before the cut were lost";
  ExpectGoodDiagnosed(r);
}

// A content checksum that does not match, at the end of the second of two
// frames: the error names the checksum's real compressed offset, not the
// place where the failing decoder call began ("near compressed byte 0").
TEST_F(CompressedFaults, ZstdChecksumMismatchNamesItsOffset) {
  const std::string first = Zstd(LogWithMatches(50'000, 100));
  std::string second = Zstd(LogWithMatches(20'000, 100), 1);
  second.back() ^= 0x01;  // the last byte of the frame's 4-byte checksum
  const std::string path = dir_.Sub("checksum.log.zst");
  WriteFile(path, first + second);
  ScanResult r = ScanWith({path, good_});
  const InputError* e = ErrorFor(r, path);
  ASSERT_NE(e, nullptr);
  const uint64_t at = first.size() + second.size() - 4;
  EXPECT_THAT(e->message, HasSubstr("compressed byte " + std::to_string(at) + ":"));
  EXPECT_THAT(e->message, HasSubstr("checksum"));
  // Evidence of the first, intact frame is kept.
  EXPECT_GE(r.rule_stats[static_cast<uint32_t>(Rules()->FindRule(kXidRule))].count, 500u);
  ExpectGoodDiagnosed(r);
}

// A frame written with a 2^28 window (zstd --long=28) needs 256 MiB to
// decode; the default cap (2^27) refuses it with a clear error.
TEST_F(CompressedFaults, ZstdWindowTooLarge) {
  std::string text = LogWithMatches(20'000, 100);
  const std::string path = dir_.Sub("long.log.zst");
  std::string big(300u << 20, 'x');
  WriteFile(path, Zstd(text + big + text, 1, 28));
  ScanResult r = ScanWith({path, good_});
  const InputError* e = ErrorFor(r, path);
  ASSERT_NE(e, nullptr);
  EXPECT_THAT(e->message, HasSubstr(path));
  EXPECT_THAT(e->message, HasSubstr("window"));
  ExpectGoodDiagnosed(r);
}

}  // namespace
}  // namespace faultline::faults
