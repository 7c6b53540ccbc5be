// Seams inside the input module: the pieces its .cc files share, and the
// entry points its tests and benchmark need to reach one decoder directly
// (zlib and ISA-L side by side in one build). The scanner uses input.h only.
//
// Thread-safety: as input.h -- a Source is used by one thread at a time.
#ifndef FAULTLINE_INPUT_INPUT_INTERNAL_H_
#define FAULTLINE_INPUT_INPUT_INTERNAL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "input/input.h"

namespace faultline::internal {

// Compressed bytes are read in pieces this large: big enough that the
// per-read() cost vanishes next to inflate, small enough to stay in L2/L3.
inline constexpr size_t kCompressedInputBufferBytes = size_t{1} << 20;

// "<what> '<path>': <strerror>", with the absl code matching errno.
absl::Status ErrnoError(int err, absl::string_view what,
                        absl::string_view path);

// Owns a file descriptor; closing on destruction keeps the early returns of
// OpenSource from leaking descriptors when a scan opens 100k files.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  int Release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

enum class GzipBackend { kZlib, kIsal };

// True when this build links ISA-L, i.e. GzipBackend::kIsal is available.
bool HaveIsal();

// Decoders over an open compressed file. `name` names the source in errors;
// `mtime` is reported by Source::mtime(). Multi-member gzip and multi-frame
// zstd files decode as one stream.
absl::StatusOr<std::unique_ptr<Source>> NewGzipSource(UniqueFd fd,
                                                      std::string name,
                                                      int64_t mtime,
                                                      const InputLimits& limits,
                                                      GzipBackend backend);
std::unique_ptr<Source> NewZstdSource(UniqueFd fd, std::string name,
                                      int64_t mtime, const InputLimits& limits);

// Exact bytes [at, at + n) of the file, or false.
bool PreadFull(int fd, uint64_t at, uint8_t* buf, size_t n);

// The end offset of the zstd (or skippable) frame that starts at `start`,
// walking its block headers with pread (RFC 8878, section 3.1); nothing
// when the bytes are not there or not a frame.
std::optional<uint64_t> ZstdFrameEnd(int fd, uint64_t start);

// A regular .zst file of several frames, decoded limits.zstd_decode_threads
// frames at a time ahead of Read (zstd_frames.cc). nullptr when the file is
// not split (one job's worth of frames, a dictionary, a window over the
// limit, declared sizes over max_decompressed_bytes, anything not a
// well-formed frame): NewZstdSource reads it then, and reports what is wrong.
std::unique_ptr<Source> NewZstdFramesSource(const UniqueFd& fd, const std::string& name,
                                            int64_t mtime, const InputLimits& limits);

// Opens a gzip file with a chosen backend (tests, benchmark).
absl::StatusOr<std::unique_ptr<Source>> OpenGzipFile(const std::string& path,
                                                     const InputLimits& limits,
                                                     GzipBackend backend);

}  // namespace faultline::internal

#endif  // FAULTLINE_INPUT_INPUT_INTERNAL_H_
