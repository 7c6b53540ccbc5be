// A .zst file of frames that declare their content sizes, decoded several
// frames at a time (InputLimits::zstd_decode_threads): the bytes are the
// streaming decoder's, whatever the read sizes; a frame that fails hands
// over to the streaming decoder, so the bytes before the error and the
// error itself (its text and offsets) are exactly the streaming decoder's;
// files that are not split go to the streaming decoder from the start.
#include <zstd.h>

#include <string>

#include "gtest/gtest.h"
#include "input/input.h"
#include "input/input_internal.h"
#include "test_util.h"

namespace faultline {
namespace {

using testing::LogText;
using testing::ScratchDir;
using testing::WriteFile;
using testing::ZstdFrame;

// The bytes read until the end or an error, and the error.
struct Outcome {
  std::string bytes;
  absl::Status status;
};

Outcome ReadThrough(const std::string& path, unsigned threads, size_t piece, InputLimits limits = {}) {
  limits.zstd_decode_threads = threads;
  Outcome o;
  auto src = OpenSource(path, limits);
  if (!src.ok()) {
    o.status = src.status();
    return o;
  }
  std::string buf(piece, '\0');
  for (;;) {
    absl::StatusOr<size_t> n = (*src)->Read(buf.data(), buf.size());
    if (!n.ok()) {
      o.status = n.status();
      return o;
    }
    if (*n == 0) return o;
    o.bytes.append(buf.data(), *n);
  }
}

// 40 MB in frames of `frame` bytes (cut mid-line), pzstd-style skippable
// frames in between when asked.
std::string Frames(const std::string& text, size_t frame, bool skippable) {
  std::string out;
  for (size_t pos = 0; pos < text.size(); pos += frame) {
    if (skippable) out += std::string("\x50\x2a\x4d\x18\x04\x00\x00\x00\x01\x02\x03\x04", 12);
    out += ZstdFrame(std::string_view(text).substr(pos, frame), 1);
  }
  return out;
}

const std::string& Text() {
  static const std::string text = LogText(40 << 20, 7);
  return text;
}

bool Splits(const std::string& path, InputLimits limits = {}) {
  internal::UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  limits.zstd_decode_threads = 3;
  return internal::NewZstdFramesSource(fd, path, 0, limits) != nullptr;
}

TEST(ZstdFrames, SameBytesAsStreaming) {
  ScratchDir dir;
  for (bool skippable : {false, true}) {
    for (size_t frame : {size_t{300000}, size_t{5} << 20}) {
      const std::string path = dir.Sub("f.log.zst");
      WriteFile(path, Frames(Text(), frame, skippable));
      ASSERT_TRUE(Splits(path));
      for (size_t piece : {size_t{16} << 20, size_t{65537}}) {
        Outcome o = ReadThrough(path, 3, piece);
        ASSERT_TRUE(o.status.ok()) << o.status;
        EXPECT_TRUE(o.bytes == Text()) << "frame " << frame << " piece " << piece;
      }
    }
  }
}

TEST(ZstdFrames, WhatIsNotSplit) {
  ScratchDir dir;
  const std::string one = dir.Sub("one.log.zst");
  WriteFile(one, ZstdFrame(Text()));
  EXPECT_FALSE(Splits(one));  // a single frame
  const std::string frames = dir.Sub("frames.log.zst");
  WriteFile(frames, Frames(Text(), 1 << 20, false));
  InputLimits small;
  small.max_decompressed_bytes = 30 << 20;
  EXPECT_FALSE(Splits(frames, small));  // more than the cap: the streaming decoder says so
  // No content size: a streamed frame.
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  std::string streamed(ZSTD_compressBound(1 << 20) * 2, '\0');
  ZSTD_outBuffer ob{streamed.data(), streamed.size(), 0};
  for (int f = 0; f < 2; ++f) {
    ZSTD_inBuffer ib{Text().data(), 1 << 20, 0};
    size_t left;
    do {
      left = ZSTD_compressStream2(cctx, &ob, &ib, ZSTD_e_end);
      ASSERT_FALSE(ZSTD_isError(left));
    } while (left != 0);
  }
  ZSTD_freeCCtx(cctx);
  streamed.resize(ob.pos);
  const std::string unsized = dir.Sub("unsized.log.zst");
  WriteFile(unsized, streamed);
  EXPECT_FALSE(Splits(unsized));
  Outcome o = ReadThrough(unsized, 3, 1 << 20);
  ASSERT_TRUE(o.status.ok()) << o.status;
  EXPECT_EQ(o.bytes, Text().substr(0, 1 << 20) + Text().substr(0, 1 << 20));
}

// A broken frame in the middle (checksum, corrupt block) and a truncated
// last frame: the same bytes, then the same error, as the streaming decoder.
TEST(ZstdFrames, ErrorsAreTheStreamingDecodersExactly) {
  ScratchDir dir;
  const std::string good = Frames(Text(), 1 << 20, false);
  size_t start = 0;
  for (int f = 0; f < 25; ++f) start += ZSTD_findFrameCompressedSize(good.data() + start, good.size() - start);
  const size_t end = start + ZSTD_findFrameCompressedSize(good.data() + start, good.size() - start);
  std::string checksum = good;
  checksum[end - 1] ^= 0x11;
  std::string corrupt = good;
  for (size_t i = (start + end) / 2; i < (start + end) / 2 + 40; ++i) corrupt[i] ^= 0x5c;
  std::string truncated = good.substr(0, good.size() - 100);
  for (const std::string* zst : {&checksum, &corrupt, &truncated}) {
    const std::string path = dir.Sub("bad.log.zst");
    WriteFile(path, *zst);
    Outcome alone = ReadThrough(path, 0, 4 << 20);
    Outcome split = ReadThrough(path, 3, 4 << 20);
    ASSERT_FALSE(alone.status.ok());
    EXPECT_EQ(split.status, alone.status);
    EXPECT_TRUE(split.bytes == alone.bytes) << split.bytes.size() << " vs " << alone.bytes.size();
  }
  // The truncated file is caught by the index (its last frame ends past the
  // file): streamed from the start. The others split and hand over.
  const std::string path = dir.Sub("check.log.zst");
  WriteFile(path, checksum);
  EXPECT_TRUE(Splits(path));
}

}  // namespace
}  // namespace faultline
