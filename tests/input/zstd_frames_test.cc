// A .zst file of several frames, decoded several frames at a time
// (InputLimits::zstd_decode_threads): the bytes are the
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

Outcome ReadThrough(const std::string& path, unsigned threads, size_t piece,
                    InputLimits limits = {}) {
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

// A frame written by a streaming writer: no content size in its header.
std::string UnsizedFrame(std::string_view data) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  std::string out(ZSTD_compressBound(data.size()) + 1024, '\0');
  ZSTD_outBuffer ob{out.data(), out.size(), 0};
  // Given in two calls, as a streaming writer would: the size is not known
  // when the header is written.
  ZSTD_inBuffer ib{data.data(), data.size() / 2, 0};
  EXPECT_FALSE(ZSTD_isError(ZSTD_compressStream2(cctx, &ob, &ib, ZSTD_e_continue)));
  ib = {data.data() + data.size() / 2, data.size() - data.size() / 2, 0};
  size_t left;
  do {
    left = ZSTD_compressStream2(cctx, &ob, &ib, ZSTD_e_end);
    EXPECT_FALSE(ZSTD_isError(left));
  } while (left != 0 && !ZSTD_isError(left));
  ZSTD_freeCCtx(cctx);
  out.resize(ob.pos);
  EXPECT_EQ(ZSTD_getFrameContentSize(out.data(), out.size()), ZSTD_CONTENTSIZE_UNKNOWN);
  return out;
}

// Frames of `frame` bytes (cut mid-line), with or without content sizes,
// pzstd-style skippable frames in between when asked.
std::string Frames(const std::string& text, size_t frame, bool skippable, bool sized = true) {
  std::string out;
  for (size_t pos = 0; pos < text.size(); pos += frame) {
    if (skippable) out += std::string("\x50\x2a\x4d\x18\x04\x00\x00\x00\x01\x02\x03\x04", 12);
    std::string_view part = std::string_view(text).substr(pos, frame);
    out += sized ? ZstdFrame(part, 1) : UnsizedFrame(part);
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
      WriteFile(path, Frames(Text(), frame, skippable, /*sized=*/frame > 300000));
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
  // Declared sizes past the cap; undeclared ones are caught as they decode.
  const std::string unsized = dir.Sub("unsized.log.zst");
  WriteFile(unsized, Frames(Text(), 1 << 20, true, false));
  EXPECT_TRUE(Splits(unsized, small));
  Outcome alone = ReadThrough(unsized, 0, 1 << 20, small);
  Outcome split = ReadThrough(unsized, 3, 1 << 20, small);
  EXPECT_EQ(alone.status.code(), absl::StatusCode::kResourceExhausted) << alone.status;
  EXPECT_EQ(split.status, alone.status);
  EXPECT_TRUE(split.bytes == alone.bytes) << split.bytes.size() << " vs " << alone.bytes.size();
}

// A broken frame in the middle (checksum, corrupt block) and a truncated
// last frame: the same bytes, then the same error, as the streaming decoder.
TEST(ZstdFrames, ErrorsAreTheStreamingDecodersExactly) {
  ScratchDir dir;
  const std::string good = Frames(Text(), 1 << 20, false);
  size_t start = 0;
  for (int f = 0; f < 25; ++f)
    start += ZSTD_findFrameCompressedSize(good.data() + start, good.size() - start);
  const size_t end = start + ZSTD_findFrameCompressedSize(good.data() + start, good.size() - start);
  std::string checksum = good;
  checksum[end - 1] ^= 0x11;
  std::string corrupt = good;
  for (size_t i = (start + end) / 2; i < (start + end) / 2 + 40; ++i) corrupt[i] ^= 0x5c;
  std::string truncated = good.substr(0, good.size() - 100);
  std::string unsized = Frames(Text(), 1 << 20, false, false);
  unsized[unsized.size() / 2] ^= 0x21;
  for (const std::string* zst : {&checksum, &corrupt, &truncated, &unsized}) {
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
