// gzip (zlib and ISA-L backends, run side by side) and zstd sources: single
// and concatenated members/frames, piece sizes from 1 byte to several MiB,
// padding and garbage after the data, corruption, truncation, and the
// decompressed-size cap.

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "input/input.h"
#include "input/input_internal.h"
#include "test_util.h"
#include "util/status_macros.h"

namespace faultline {
namespace {

using internal::GzipBackend;
using testing::GzipMember;
using testing::LogText;
using testing::ReadAll;
using testing::ScratchDir;
using testing::WriteFile;
using testing::ZstdFrame;

class GzipTest : public ::testing::TestWithParam<GzipBackend> {
 protected:
  void SetUp() override {
    if (GetParam() == GzipBackend::kIsal && !internal::HaveIsal()) {
      GTEST_SKIP() << "built without ISA-L";
    }
  }

  absl::StatusOr<std::unique_ptr<Source>> Open(const std::string& path,
                                               InputLimits limits = {}) {
    return internal::OpenGzipFile(path, limits, GetParam());
  }

  // Writes `compressed` and decodes it with the backend under test.
  absl::StatusOr<std::string> Decode(const std::string& compressed,
                                     size_t piece = 4 << 20,
                                     InputLimits limits = {}) {
    const std::string path = dir_.Sub("t.log.gz");
    WriteFile(path, compressed);
    FL_ASSIGN_OR_RETURN(std::unique_ptr<Source> src, Open(path, limits));
    EXPECT_EQ(src->kind(), SourceKind::kStream);
    return ReadAll(*src, piece);
  }

  ScratchDir dir_;
};

TEST_P(GzipTest, SingleMember) {
  const std::string text = LogText(3 << 20);
  absl::StatusOr<std::string> out = Decode(GzipMember(text));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, text);
}

TEST_P(GzipTest, ReadFillsLargePieces) {
  const std::string text = LogText(8 << 20);
  const std::string path = dir_.Sub("big.log.gz");
  WriteFile(path, GzipMember(text));
  absl::StatusOr<std::unique_ptr<Source>> src = Open(path);
  ASSERT_TRUE(src.ok()) << src.status();
  std::string buf(4 << 20, '\0');
  absl::StatusOr<size_t> n = (*src)->Read(buf.data(), buf.size());
  ASSERT_TRUE(n.ok()) << n.status();
  // The 1 MiB compressed buffer holds more than 4 MiB of text: one call
  // must return a full piece, not one decoder step.
  EXPECT_EQ(*n, buf.size());
}

TEST_P(GzipTest, ManyMembersAcrossBufferBoundaries) {
  // Members of odd sizes so that boundaries fall everywhere relative to the
  // 1 MiB input buffer, including inside headers and trailers.
  std::string text;
  std::string gz;
  for (int i = 0; i < 400; ++i) {
    const std::string part = LogText(1 + (i * 7919) % 40000, i);
    text += part;
    gz += GzipMember(part, i % 10);
  }
  gz += GzipMember(LogText(3 << 20, 99));
  text += LogText(3 << 20, 99);
  ASSERT_GT(gz.size(), internal::kCompressedInputBufferBytes);
  for (size_t piece : {size_t{1} << 22, size_t{65536}, size_t{4093}}) {
    absl::StatusOr<std::string> out = Decode(gz, piece);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(*out == text) << "piece " << piece;
  }
}

TEST_P(GzipTest, TinyReads) {
  const std::string text = LogText(20000);
  const std::string gz = GzipMember(text.substr(0, 9000)) +
                         GzipMember(text.substr(9000));
  absl::StatusOr<std::string> out = Decode(gz, 1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, text);
}

TEST_P(GzipTest, EmptyMembersAndEmptyFile) {
  absl::StatusOr<std::string> out =
      Decode(GzipMember("") + GzipMember("abc\n") + GzipMember(""));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "abc\n");
  out = Decode("");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "");
}

TEST_P(GzipTest, TrailingZeroPaddingIsIgnored) {
  absl::StatusOr<std::string> out =
      Decode(GzipMember("line\n") + std::string(3000, '\0'));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "line\n");
}

TEST_P(GzipTest, TrailingGarbageIsAnErrorAfterTheData) {
  const std::string path = dir_.Sub("g.log.gz");
  WriteFile(path, GzipMember("line\n") + "this is not gzip");
  auto src = Open(path);
  ASSERT_TRUE(src.ok()) << src.status();
  std::string buf(1 << 20, '\0');
  // The member's data comes first and is not lost to the error.
  absl::StatusOr<size_t> n = (*src)->Read(buf.data(), buf.size());
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(std::string(buf.data(), *n), "line\n");
  n = (*src)->Read(buf.data(), buf.size());
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(n.status().message(), "trailing garbage"))
      << n.status();
  EXPECT_TRUE(absl::StrContains(n.status().message(), path)) << n.status();
  // Sticky.
  EXPECT_FALSE((*src)->Read(buf.data(), buf.size()).ok());
}

TEST_P(GzipTest, NotGzip) {
  absl::StatusOr<std::string> out = Decode("plain text, wrong extension\n");
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::StrContains(out.status().message(), "not in gzip format"))
      << out.status();
}

TEST_P(GzipTest, CorruptData) {
  std::string gz = GzipMember(LogText(1 << 20));
  for (size_t i = gz.size() / 2; i < gz.size() / 2 + 64; ++i) gz[i] ^= 0x5a;
  absl::StatusOr<std::string> out = Decode(gz);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDataLoss) << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(), "corrupt gzip data"))
      << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(), "t.log.gz"));
}

TEST_P(GzipTest, CorruptChecksum) {
  std::string gz = GzipMember("some text that compresses\n");
  gz[gz.size() - 6] ^= 1;  // CRC-32 in the trailer
  absl::StatusOr<std::string> out = Decode(gz);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDataLoss) << out.status();
}

TEST_P(GzipTest, Truncated) {
  const std::string gz = GzipMember(LogText(2 << 20));
  // Inside the deflate data, inside the trailer, inside the header of a
  // second member, and one byte of a second member's magic.
  const std::vector<std::string> cuts = {
      gz.substr(0, gz.size() / 2), gz.substr(0, gz.size() - 3),
      gz + gz.substr(0, 5), gz + gz.substr(0, 1)};
  for (const std::string& cut : cuts) {
    absl::StatusOr<std::string> out = Decode(cut);
    ASSERT_FALSE(out.ok()) << cut.size();
    EXPECT_EQ(out.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_TRUE(absl::StrContains(out.status().message(), "truncated gzip"))
        << out.status();
  }
}

TEST_P(GzipTest, BombHitsTheCap) {
  const std::string zeros(32 << 20, '\0');
  const std::string gz = GzipMember(zeros, 9);
  ASSERT_LT(gz.size(), size_t{64} << 10);
  InputLimits limits;
  limits.max_decompressed_bytes = 1 << 20;
  const std::string path = dir_.Sub("bomb.log.gz");
  WriteFile(path, gz);
  auto src = Open(path, limits);
  ASSERT_TRUE(src.ok());
  std::string buf(300000, '\0');
  size_t total = 0;
  absl::Status status;
  for (;;) {
    absl::StatusOr<size_t> n = (*src)->Read(buf.data(), buf.size());
    if (!n.ok()) {
      status = n.status();
      break;
    }
    ASSERT_GT(*n, 0u) << "stream ended without hitting the cap";
    total += *n;
  }
  // Everything up to the cap is delivered, then the error.
  EXPECT_EQ(total, limits.max_decompressed_bytes);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "bomb.log.gz")) << status;
}

TEST_P(GzipTest, ExactlyAtTheCapIsFine) {
  InputLimits limits;
  limits.max_decompressed_bytes = 5;
  absl::StatusOr<std::string> out = Decode(GzipMember("12345"), 1 << 20, limits);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "12345");
  out = Decode(GzipMember("123456"), 1 << 20, limits);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
}

INSTANTIATE_TEST_SUITE_P(Backends, GzipTest,
                         ::testing::Values(GzipBackend::kZlib,
                                           GzipBackend::kIsal),
                         [](const auto& info) {
                           return info.param == GzipBackend::kZlib ? "Zlib"
                                                                   : "Isal";
                         });

TEST(OpenSourceGzip, ByExtensionWithMtime) {
  ScratchDir dir;
  const std::string path = dir.Sub("rank0.LOG.GZ");
  WriteFile(path, GzipMember("hello\n") + GzipMember("world\n"));
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  auto src = OpenSource(path);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_EQ((*src)->kind(), SourceKind::kStream);
  EXPECT_EQ((*src)->name(), path);
  EXPECT_EQ((*src)->mtime(), st.st_mtim.tv_sec);
  absl::StatusOr<std::string> out = ReadAll(**src);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "hello\nworld\n");
}

class ZstdTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::string> Decode(const std::string& compressed,
                                     size_t piece = 4 << 20,
                                     InputLimits limits = {}) {
    const std::string path = dir_.Sub("t.log.zst");
    WriteFile(path, compressed);
    FL_ASSIGN_OR_RETURN(std::unique_ptr<Source> src, OpenSource(path, limits));
    EXPECT_EQ(src->kind(), SourceKind::kStream);
    return ReadAll(*src, piece);
  }
  ScratchDir dir_;
};

TEST_F(ZstdTest, SingleFrame) {
  const std::string text = LogText(5 << 20);
  absl::StatusOr<std::string> out = Decode(ZstdFrame(text));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(*out == text);
}

TEST_F(ZstdTest, ManyFramesAndSmallPieces) {
  std::string text;
  std::string zst;
  for (int i = 0; i < 300; ++i) {
    const std::string part = LogText(1 + (i * 6151) % 50000, i);
    text += part;
    zst += ZstdFrame(part, 1 + i % 5);
  }
  ASSERT_GT(zst.size(), internal::kCompressedInputBufferBytes);
  for (size_t piece : {size_t{1} << 22, size_t{4093}, size_t{1}}) {
    if (piece == 1) {
      text.resize(100000);
      zst = ZstdFrame(text.substr(0, 50000)) + ZstdFrame(text.substr(50000));
    }
    absl::StatusOr<std::string> out = Decode(zst, piece);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(*out == text) << "piece " << piece;
  }
}

TEST_F(ZstdTest, EmptyFileAndEmptyFrame) {
  absl::StatusOr<std::string> out = Decode("");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "");
  out = Decode(ZstdFrame("") + ZstdFrame("x\n"));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "x\n");
}

TEST_F(ZstdTest, CorruptFrame) {
  std::string zst = ZstdFrame(LogText(1 << 20));
  for (size_t i = zst.size() / 2; i < zst.size() / 2 + 32; ++i) zst[i] ^= 0x33;
  absl::StatusOr<std::string> out = Decode(zst);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDataLoss) << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(), "corrupt zstd data"))
      << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(), "t.log.zst"));
}

TEST_F(ZstdTest, NotZstd) {
  absl::StatusOr<std::string> out = Decode("plain text\n");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDataLoss) << out.status();
}

TEST_F(ZstdTest, Truncated) {
  const std::string zst = ZstdFrame(LogText(2 << 20));
  for (const std::string& cut :
       {zst.substr(0, zst.size() / 2), zst.substr(0, zst.size() - 2),
        zst + zst.substr(0, 3)}) {
    absl::StatusOr<std::string> out = Decode(cut);
    ASSERT_FALSE(out.ok()) << cut.size();
    EXPECT_EQ(out.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_TRUE(absl::StrContains(out.status().message(), "truncated zstd"))
        << out.status();
  }
}

TEST_F(ZstdTest, BombHitsTheCap) {
  const std::string zst = ZstdFrame(std::string(64 << 20, 'A'), 19);
  ASSERT_LT(zst.size(), size_t{16} << 10);
  InputLimits limits;
  limits.max_decompressed_bytes = (1 << 20) + 17;
  absl::StatusOr<std::string> out = Decode(zst, 1 << 20, limits);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(out.status().message(), "t.log.zst"));
}

TEST_F(ZstdTest, WindowLimit) {
  // Streamed with no size known up front, so the frame header keeps asking
  // for the full 2^28-byte window.
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, 28);
  const std::string text = LogText(1 << 20);
  std::string zst(ZSTD_compressBound(text.size()) + 1024, '\0');
  ZSTD_outBuffer ob{zst.data(), zst.size(), 0};
  ZSTD_inBuffer ib{text.data(), text.size() / 2, 0};
  ASSERT_FALSE(ZSTD_isError(ZSTD_compressStream2(cctx, &ob, &ib, ZSTD_e_continue)));
  ib = {text.data() + text.size() / 2, text.size() - text.size() / 2, 0};
  size_t left = 0;
  do {
    left = ZSTD_compressStream2(cctx, &ob, &ib, ZSTD_e_end);
    ASSERT_FALSE(ZSTD_isError(left));
  } while (left != 0);
  ZSTD_freeCCtx(cctx);
  zst.resize(ob.pos);
  absl::StatusOr<std::string> out = Decode(zst);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(out.status().message(), "max_zstd_window_log"))
      << out.status();
  InputLimits limits;
  limits.max_zstd_window_log = 28;
  out = Decode(zst, 1 << 20, limits);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(*out == text);
}

}  // namespace
}  // namespace faultline
