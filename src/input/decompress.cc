// Streaming decoders for compressed log files: gzip through ISA-L's
// isal_inflate (several times zlib's speed on AVX2/AVX-512 machines) or
// zlib, and zstd through ZSTD_decompressStream. All of them decode straight
// into the caller's buffer (no staging copy of the output) from a 1 MiB
// buffer of compressed bytes, treat concatenated gzip members and zstd frames
// as one stream, and turn corrupt data, a file that ends inside a member or
// frame, and output past InputLimits into errors that name the file.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#if defined(FL_HAVE_ISAL)
#if __has_include(<isa-l/igzip_lib.h>)
#include <isa-l/igzip_lib.h>
#else
#include <igzip_lib.h>
#endif
#endif

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "input/input.h"
#include "input/input_internal.h"
#include "util/status_macros.h"

namespace faultline::internal {
namespace {

// zlib and ISA-L count output in 32-bit fields; one decoder call writes at
// most this much, and Decode loops for larger caller buffers.
constexpr size_t kMaxStepBytes = size_t{1} << 30;

// Common to the decoders: the compressed input buffer, the decompressed-size
// cap, sticky errors, and the error texts.
class CompressedSource : public Source {
 public:
  CompressedSource(std::string name, UniqueFd fd, int64_t mtime,
                   const InputLimits& limits, const char* format)
      : Source(std::move(name)),
        fd_(std::move(fd)),
        mtime_(mtime),
        limit_(limits.max_decompressed_bytes),
        format_(format),
        in_(std::make_unique_for_overwrite<uint8_t[]>(
            kCompressedInputBufferBytes)) {
    // Advice only: doubles the kernel's read-ahead window.
    (void)posix_fadvise(fd_.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  }

  SourceKind kind() const final { return SourceKind::kStream; }
  int64_t mtime() const final { return mtime_; }
  std::optional<uint64_t> compressed_bytes_read() const final {
    return in_offset_ + in_len_;
  }

  absl::StatusOr<size_t> Read(char* buf, size_t cap) final {
    if (!error_.ok()) return error_;
    if (finished_ || cap == 0) return size_t{0};
    // Asking for one byte past the cap tells a stream that ends exactly at
    // the cap from one that goes on.
    const uint64_t room = limit_ - produced_;
    size_t want = cap;
    if (room < want) want = static_cast<size_t>(room) + 1;
    size_t n = 0;
    absl::Status status = Decode(reinterpret_cast<uint8_t*>(buf), want, &n);
    if (n > room) {
      // Deliver everything up to the cap; the error comes with the next call.
      n = static_cast<size_t>(room);
      status = absl::ResourceExhaustedError(absl::StrCat(
          "'", name(), "': decompressed size exceeds the limit of ", limit_,
          " bytes (--max-decompressed-bytes, fl_session_options."
          "max_decompressed_bytes); a decompression bomb, or a limit set too "
          "low"));
    }
    produced_ += n;
    if (!status.ok()) {
      error_ = std::move(status);
      if (n == 0) return error_;
    }
    return n;
  }

 protected:
  // Writes up to cap bytes to out, stopping early only at the end of the
  // data (then sets finished_) or on an error; *produced counts the bytes
  // written either way.
  virtual absl::Status Decode(uint8_t* out, size_t cap, size_t* produced) = 0;

  // Drops the first `consumed` buffered bytes, moves the rest to the front
  // and reads more behind them (sets in_eof_ at the end of the file).
  absl::Status Refill(size_t consumed) {
    const size_t keep = in_len_ - consumed;
    if (keep > 0 && consumed > 0) {
      std::memmove(in_.get(), in_.get() + consumed, keep);
    }
    in_offset_ += consumed;
    in_len_ = keep;
    while (in_len_ < kCompressedInputBufferBytes && !in_eof_) {
      const ssize_t got = read(fd_.get(), in_.get() + in_len_,
                               kCompressedInputBufferBytes - in_len_);
      if (got > 0) {
        in_len_ += static_cast<size_t>(got);
        break;
      }
      if (got == 0) {
        in_eof_ = true;
      } else if (errno != EINTR) {
        return ErrnoError(errno, "cannot read", name());
      }
    }
    return absl::OkStatus();
  }

  // Between gzip members: leaves *pos at the next member's magic number and
  // returns true, or returns false at a clean end of file. Zero bytes after
  // a member are padding (tape blocks, preallocated files) and skipped, as
  // gzip does; anything else is an error, not silently ignored.
  absl::StatusOr<bool> FindNextMember(size_t* pos, int members_done) {
    for (;;) {
      if (members_done > 0) {
        while (*pos < in_len_ && in_[*pos] == 0) ++*pos;
      }
      const size_t left = in_len_ - *pos;
      if (left >= 2) {
        if (in_[*pos] == 0x1f && in_[*pos + 1] == 0x8b) return true;
        return NotGzip(*pos, members_done);
      }
      if (in_eof_) {
        if (left == 0) return false;
        if (in_[*pos] == 0x1f) return TruncatedError(members_done + 1);
        return NotGzip(*pos, members_done);
      }
      FL_RETURN_IF_ERROR(Refill(*pos));
      *pos = 0;
    }
  }

  absl::Status CorruptError(absl::string_view detail, size_t pos) const {
    return absl::DataLossError(absl::StrCat("'", name(), "': corrupt ",
                                            format_, " data near compressed "
                                            "byte ", in_offset_ + pos, ": ",
                                            detail));
  }

  // `unit` is the 1-based gzip member, or 0 for zstd.
  absl::Status TruncatedError(int unit) const {
    const std::string where =
        unit > 0 ? absl::StrCat("inside gzip member ", unit) : "inside a frame";
    return absl::DataLossError(absl::StrCat(
        "'", name(), "': truncated ", format_, " file: it ends ", where,
        " after ", in_offset_ + in_len_, " compressed bytes"));
  }

  UniqueFd fd_;
  const int64_t mtime_;
  const uint64_t limit_;
  const char* const format_;
  std::unique_ptr<uint8_t[]> in_;
  size_t in_len_ = 0;       // valid bytes in in_
  uint64_t in_offset_ = 0;  // file offset of in_[0]
  bool in_eof_ = false;
  bool finished_ = false;

 private:
  absl::Status NotGzip(size_t pos, int members_done) const {
    if (members_done == 0) return CorruptError("not in gzip format", pos);
    return CorruptError(
        absl::StrCat("trailing garbage after gzip member ", members_done), pos);
  }

  uint64_t produced_ = 0;
  absl::Status error_;
};

class ZlibGzipSource final : public CompressedSource {
 public:
  ZlibGzipSource(std::string name, UniqueFd fd, int64_t mtime,
                 const InputLimits& limits)
      : CompressedSource(std::move(name), std::move(fd), mtime, limits,
                         "gzip") {}
  ~ZlibGzipSource() override {
    if (initialized_) inflateEnd(&zs_);
  }

  absl::Status Init() {
    zs_.next_in = in_.get();
    zs_.avail_in = 0;
    // 15+32: largest window, gzip or zlib header detected automatically
    // (members are still required to start with the gzip magic).
    const int rc = inflateInit2(&zs_, 15 + 32);
    if (rc != Z_OK) {
      return absl::ResourceExhaustedError(
          absl::StrCat("'", name(), "': inflateInit2 failed (", rc, ")"));
    }
    initialized_ = true;
    return absl::OkStatus();
  }

 protected:
  absl::Status Decode(uint8_t* out, size_t cap, size_t* produced) override {
    size_t total = 0;
    absl::Status status;
    while (total < cap) {
      if (between_members_) {
        size_t pos = static_cast<size_t>(zs_.next_in - in_.get());
        absl::StatusOr<bool> found = FindNextMember(&pos, members_);
        if (!found.ok()) {
          status = found.status();
          break;
        }
        if (!*found) {
          finished_ = true;
          break;
        }
        inflateReset(&zs_);
        zs_.next_in = in_.get() + pos;
        zs_.avail_in = static_cast<uInt>(in_len_ - pos);
        between_members_ = false;
      }
      if (zs_.avail_in == 0 && !in_eof_) {
        status = Refill(in_len_);
        if (!status.ok()) break;
        zs_.next_in = in_.get();
        zs_.avail_in = static_cast<uInt>(in_len_);
      }
      const size_t room = std::min(cap - total, kMaxStepBytes);
      zs_.next_out = out + total;
      zs_.avail_out = static_cast<uInt>(room);
      const int rc = inflate(&zs_, Z_NO_FLUSH);
      total += room - zs_.avail_out;
      const size_t pos = static_cast<size_t>(zs_.next_in - in_.get());
      if (rc == Z_STREAM_END) {
        between_members_ = true;
        ++members_;
      } else if (rc == Z_OK) {
        continue;
      } else if (rc == Z_BUF_ERROR) {
        // No progress was possible: out of input (output has room).
        if (zs_.avail_in == 0 && in_eof_) {
          status = TruncatedError(members_ + 1);
          break;
        }
        if (zs_.avail_in != 0) {
          status = absl::InternalError(absl::StrCat(
              "'", name(), "': zlib made no progress with input available"));
          break;
        }
      } else if (rc == Z_NEED_DICT) {
        status = CorruptError("member needs a preset dictionary", pos);
        break;
      } else if (rc == Z_MEM_ERROR) {
        status = absl::ResourceExhaustedError(
            absl::StrCat("'", name(), "': out of memory in inflate"));
        break;
      } else {
        status = CorruptError(zs_.msg != nullptr ? zs_.msg : "invalid data",
                              pos);
        break;
      }
    }
    *produced = total;
    return status;
  }

 private:
  z_stream zs_{};
  bool initialized_ = false;
  bool between_members_ = true;
  int members_ = 0;  // members decoded completely
};

#if defined(FL_HAVE_ISAL)

const char* IsalErrorText(int rc) {
  switch (rc) {
    case ISAL_INVALID_BLOCK:
      return "invalid deflate block";
    case ISAL_INVALID_SYMBOL:
      return "invalid Huffman code";
    case ISAL_INVALID_LOOKBACK:
      return "back-reference before the start of the data";
    case ISAL_INVALID_WRAPPER:
      return "invalid gzip header";
    case ISAL_UNSUPPORTED_METHOD:
      return "unsupported compression method";
    case ISAL_INCORRECT_CHECKSUM:
      return "CRC-32 or length check failed";
    default:
      return "isal_inflate failed";
  }
}

class IsalGzipSource final : public CompressedSource {
 public:
  IsalGzipSource(std::string name, UniqueFd fd, int64_t mtime,
                 const InputLimits& limits)
      : CompressedSource(std::move(name), std::move(fd), mtime, limits, "gzip"),
        // ~100 KiB of tables and history: on the heap, never on a stack.
        state_(std::make_unique<inflate_state>()) {
    isal_inflate_init(state_.get());
    state_->next_in = in_.get();
    state_->avail_in = 0;
  }

 protected:
  absl::Status Decode(uint8_t* out, size_t cap, size_t* produced) override {
    inflate_state& s = *state_;
    size_t total = 0;
    absl::Status status;
    while (total < cap) {
      if (between_members_) {
        size_t pos = static_cast<size_t>(s.next_in - in_.get());
        absl::StatusOr<bool> found = FindNextMember(&pos, members_);
        if (!found.ok()) {
          status = found.status();
          break;
        }
        if (!*found) {
          finished_ = true;
          break;
        }
        // At ISAL_BLOCK_FINISH isal_inflate has given back every byte past
        // the member's trailer, so next_in is exactly the next member.
        isal_inflate_reset(&s);
        s.crc_flag = ISAL_GZIP;  // parse the header, verify CRC-32 and size
        s.next_in = in_.get() + pos;
        s.avail_in = static_cast<uint32_t>(in_len_ - pos);
        between_members_ = false;
      }
      if (s.avail_in == 0 && !in_eof_) {
        // isal_inflate keeps partial headers and bits internally, so the
        // whole buffer can be replaced.
        status = Refill(in_len_);
        if (!status.ok()) break;
        s.next_in = in_.get();
        s.avail_in = static_cast<uint32_t>(in_len_);
      }
      const size_t room = std::min(cap - total, kMaxStepBytes);
      s.next_out = out + total;
      s.avail_out = static_cast<uint32_t>(room);
      const uint32_t in_before = s.avail_in;
      const int rc = isal_inflate(&s);
      const size_t wrote = room - s.avail_out;
      total += wrote;
      if (rc < 0) {
        status = CorruptError(IsalErrorText(rc),
                              static_cast<size_t>(s.next_in - in_.get()));
        break;
      }
      if (s.block_state == ISAL_BLOCK_FINISH) {
        between_members_ = true;
        ++members_;
        continue;
      }
      if (wrote == 0 && s.avail_in == in_before) {
        // No progress although the output has room: input is needed.
        if (in_eof_ && s.avail_in == 0) {
          status = TruncatedError(members_ + 1);
          break;
        }
        if (s.avail_in != 0) {
          status = absl::InternalError(absl::StrCat(
              "'", name(), "': isal_inflate made no progress with input "
              "available"));
          break;
        }
      }
    }
    *produced = total;
    return status;
  }

 private:
  std::unique_ptr<inflate_state> state_;
  bool between_members_ = true;
  int members_ = 0;  // members decoded completely
};

#endif  // FL_HAVE_ISAL

class ZstdSource final : public CompressedSource {
 public:
  ZstdSource(std::string name, UniqueFd fd, int64_t mtime,
             const InputLimits& limits)
      : CompressedSource(std::move(name), std::move(fd), mtime, limits, "zstd"),
        window_log_max_(limits.max_zstd_window_log),
        dctx_(ZSTD_createDCtx()) {
    if (dctx_ != nullptr) {
      ZSTD_DCtx_setParameter(dctx_, ZSTD_d_windowLogMax, window_log_max_);
    }
  }
  ~ZstdSource() override { ZSTD_freeDCtx(dctx_); }
  ZstdSource(const ZstdSource&) = delete;
  ZstdSource& operator=(const ZstdSource&) = delete;

 protected:
  absl::Status Decode(uint8_t* out, size_t cap, size_t* produced) override {
    size_t total = 0;
    absl::Status status;
    if (dctx_ == nullptr) {
      *produced = 0;
      return absl::ResourceExhaustedError(
          absl::StrCat("'", name(), "': ZSTD_createDCtx failed"));
    }
    while (total < cap) {
      if (pos_ == in_len_ && !in_eof_) {
        status = Refill(in_len_);
        if (!status.ok()) break;
        pos_ = 0;
        continue;
      }
      const bool at_eof = pos_ == in_len_ && in_eof_;
      // 0 from the last call: a frame ended and all of it was flushed.
      if (at_eof && frame_hint_ == 0) {
        finished_ = true;
        break;
      }
      // ZSTD_decompressStream stops at the end of each frame (returns 0),
      // so the first call after that starts the next frame.
      if (frame_hint_ == 0) frame_start_ = in_offset_ + pos_;
      ZSTD_inBuffer ib{in_.get(), in_len_, pos_};
      ZSTD_outBuffer ob{out + total, cap - total, 0};
      const size_t rc = ZSTD_decompressStream(dctx_, &ob, &ib);
      const size_t consumed = ib.pos - pos_;
      pos_ = ib.pos;
      total += ob.pos;
      if (ZSTD_isError(rc)) {
        status = ZstdError(rc);
        break;
      }
      frame_hint_ = rc;
      if (at_eof && ob.pos == 0 && consumed == 0) {
        status = TruncatedError(0);
        break;
      }
    }
    *produced = total;
    return status;
  }

 private:
  std::string ZstdErrorText(size_t rc) const {
    if (ZSTD_getErrorCode(rc) == ZSTD_error_frameParameter_windowTooLarge) {
      return absl::StrCat(
          "frame window exceeds 2^", window_log_max_,
          " bytes (InputLimits::max_zstd_window_log; written with --long?)");
    }
    return ZSTD_getErrorName(rc);
  }

  // On an error, libzstd leaves the input position where the failing call
  // began, which may be the start of the buffer or of the file ("near
  // compressed byte 0" for a checksum at the end of a 50 MB frame). The
  // frame's own layout says where its content checksum is; other errors
  // name the frame they are in.
  absl::Status ZstdError(size_t rc) const {
    const std::optional<uint64_t> end = FrameEnd(frame_start_);
    if (ZSTD_getErrorCode(rc) == ZSTD_error_checksum_wrong && end && *end >= 4) {
      return absl::DataLossError(absl::StrCat(
          "'", name(), "': corrupt zstd data at compressed byte ", *end - 4,
          ": the content checksum of the frame at compressed bytes ", frame_start_, "..",
          *end, " does not match its data"));
    }
    return absl::DataLossError(absl::StrCat(
        "'", name(), "': corrupt zstd data in the frame starting at compressed byte ",
        frame_start_, ", before byte ", in_offset_ + in_len_, ": ", ZstdErrorText(rc)));
  }

  std::optional<uint64_t> FrameEnd(uint64_t start) const { return ZstdFrameEnd(fd_.get(), start); }

  const int window_log_max_;
  ZSTD_DCtx* const dctx_;
  size_t pos_ = 0;          // next unread byte of in_
  size_t frame_hint_ = 0;   // last ZSTD_decompressStream result
  uint64_t frame_start_ = 0;  // file offset of the frame being decoded
};

}  // namespace

bool PreadFull(int fd, uint64_t at, uint8_t* buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = pread(fd, buf + got, n - got, static_cast<off_t>(at + got));
    if (r > 0) {
      got += static_cast<size_t>(r);
    } else if (r < 0 && errno == EINTR) {
      continue;
    } else {
      return false;
    }
  }
  return true;
}

std::optional<uint64_t> ZstdFrameEnd(int fd, uint64_t start) {
  uint8_t h[14];
  if (!PreadFull(fd, start, h, 5)) return std::nullopt;
  const uint32_t magic = uint32_t{h[0]} | uint32_t{h[1]} << 8 | uint32_t{h[2]} << 16 |
                         uint32_t{h[3]} << 24;
  if ((magic & 0xFFFFFFF0u) == 0x184D2A50u) {
    if (!PreadFull(fd, start + 4, h, 4)) return std::nullopt;
    return start + 8 + (uint32_t{h[0]} | uint32_t{h[1]} << 8 | uint32_t{h[2]} << 16 |
                        uint32_t{h[3]} << 24);
  }
  if (magic != 0xFD2FB528u) return std::nullopt;
  const uint8_t fhd = h[4];
  const bool single_segment = (fhd >> 5) & 1;
  const bool checksum = (fhd >> 2) & 1;
  static constexpr uint64_t kDictIdBytes[] = {0, 1, 2, 4};
  static constexpr uint64_t kContentSizeBytes[] = {0, 2, 4, 8};
  const unsigned fcs_flag = fhd >> 6;
  uint64_t pos = start + 5 + (single_segment ? 0 : 1) + kDictIdBytes[fhd & 3] +
                 (fcs_flag == 0 ? (single_segment ? 1 : 0) : kContentSizeBytes[fcs_flag]);
  for (;;) {
    if (!PreadFull(fd, pos, h, 3)) return std::nullopt;
    const uint32_t bh = uint32_t{h[0]} | uint32_t{h[1]} << 8 | uint32_t{h[2]} << 16;
    const unsigned type = (bh >> 1) & 3;
    if (type == 3) return std::nullopt;  // reserved block type
    pos += 3 + (type == 1 ? 1 : bh >> 3);  // an RLE block holds one byte
    if (bh & 1) break;                    // last block
  }
  return pos + (checksum ? 4 : 0);
}

bool HaveIsal() {
#if defined(FL_HAVE_ISAL)
  return true;
#else
  return false;
#endif
}

absl::StatusOr<std::unique_ptr<Source>> NewGzipSource(UniqueFd fd,
                                                      std::string name,
                                                      int64_t mtime,
                                                      const InputLimits& limits,
                                                      GzipBackend backend) {
  if (backend == GzipBackend::kIsal) {
#if defined(FL_HAVE_ISAL)
    return std::make_unique<IsalGzipSource>(std::move(name), std::move(fd),
                                            mtime, limits);
#else
    return absl::UnimplementedError("built without ISA-L");
#endif
  }
  auto source = std::make_unique<ZlibGzipSource>(std::move(name), std::move(fd),
                                                 mtime, limits);
  FL_RETURN_IF_ERROR(source->Init());
  return source;
}

std::unique_ptr<Source> NewZstdSource(UniqueFd fd, std::string name,
                                      int64_t mtime, const InputLimits& limits) {
  return std::make_unique<ZstdSource>(std::move(name), std::move(fd), mtime,
                                      limits);
}

absl::StatusOr<std::unique_ptr<Source>> OpenGzipFile(const std::string& path,
                                                     const InputLimits& limits,
                                                     GzipBackend backend) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoError(errno, "cannot open", path);
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return ErrnoError(errno, "cannot stat", path);
  return NewGzipSource(std::move(fd), path, int64_t{st.st_mtim.tv_sec}, limits,
                       backend);
}

}  // namespace faultline::internal
