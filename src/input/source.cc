// OpenSource and the uncompressed sources: regular files are mapped, and
// everything that cannot be mapped (standard input, FIFOs, character devices,
// /proc and /sys files, file systems without mmap) is read with read().
// Compressed files are handed to decompress.cc.

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "input/input.h"
#include "input/input_internal.h"
#include "util/status_macros.h"

namespace faultline {
namespace internal {

absl::Status ErrnoError(int err, absl::string_view what,
                        absl::string_view path) {
  return absl::ErrnoToStatus(err, absl::StrCat(what, " '", path, "'"));
}

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.Release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  // Read-only descriptors: close() cannot lose data, and retrying it on
  // EINTR is wrong on Linux (the descriptor is already gone).
  if (fd_ >= 0) close(fd_);
}

}  // namespace internal

namespace {

using internal::ErrnoError;
using internal::UniqueFd;

// A stream waits this long for more bytes before handing back what it has:
// pipes deliver at most their buffer size per read(), and the scanner wants
// pieces of several MiB, but a live feed (tail -f | faultline -) must not sit
// on a line waiting for the buffer to fill.
constexpr int kCoalesceMillis = 10;

// Pipes default to 64 KiB; a larger one halves the wake-ups of both ends.
// Linux lets unprivileged processes go up to /proc/sys/fs/pipe-max-size
// (1 MiB by default).
constexpr int kPipeBytes = 1 << 20;

// How much of a zero-size regular file is read to tell an empty file from a
// /proc or /sys pseudo-file whose size is not known up front.
constexpr size_t kProbeBytes = 64 * 1024;

// The whole of a regular file, mapped read-only. The mapping outlives the
// descriptor (closed once mapped): 100k sources must not hold 100k fds.
class MappedSource final : public Source {
 public:
  MappedSource(std::string name, void* addr, size_t len, int64_t mtime)
      : Source(std::move(name)), addr_(addr), len_(len), mtime_(mtime) {}
  ~MappedSource() override {
    if (addr_ != nullptr) munmap(addr_, len_);
  }
  MappedSource(const MappedSource&) = delete;
  MappedSource& operator=(const MappedSource&) = delete;

  SourceKind kind() const override { return SourceKind::kMapped; }
  std::string_view mapped() const override {
    if (addr_ == nullptr) return {};
    return std::string_view(static_cast<const char*>(addr_), len_);
  }
  uint64_t size_hint() const override { return len_; }
  int64_t mtime() const override { return mtime_; }

 private:
  void* addr_;  // null for an empty file
  size_t len_;
  int64_t mtime_;
};

// Bytes read with read() from a descriptor that cannot be mapped. Starts
// with `prefix`, the bytes a probe already consumed.
class FdStreamSource final : public Source {
 public:
  FdStreamSource(std::string name, UniqueFd owned, int fd, int64_t mtime,
                 uint64_t size_hint, std::string prefix)
      : Source(std::move(name)),
        owned_(std::move(owned)),
        fd_(fd),
        mtime_(mtime),
        size_hint_(size_hint),
        prefix_(std::move(prefix)) {}

  SourceKind kind() const override { return SourceKind::kStream; }
  uint64_t size_hint() const override { return size_hint_; }
  int64_t mtime() const override { return mtime_; }

  absl::StatusOr<size_t> Read(char* buf, size_t cap) override {
    if (!error_.ok()) return error_;
    size_t n = 0;
    if (prefix_pos_ < prefix_.size()) {
      n = std::min(cap, prefix_.size() - prefix_pos_);
      std::memcpy(buf, prefix_.data() + prefix_pos_, n);
      prefix_pos_ += n;
    }
    while (n < cap && !eof_) {
      if (n > 0 && !MoreArrivesSoon()) break;
      const ssize_t got = read(fd_, buf + n, cap - n);
      if (got > 0) {
        n += static_cast<size_t>(got);
      } else if (got == 0) {
        eof_ = true;
      } else if (errno == EINTR) {
        continue;
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        // Someone else set O_NONBLOCK on a shared descriptor (stdin).
        if (n > 0) break;
        WaitReadable(-1);
      } else {
        error_ = ErrnoError(errno, "cannot read", name());
        break;
      }
    }
    // Bytes already read are delivered; a read error surfaces on the next
    // call, so nothing before it is lost.
    if (n > 0) return n;
    if (!error_.ok()) return error_;
    return size_t{0};
  }

 private:
  bool WaitReadable(int timeout_ms) {
    pollfd p{fd_, POLLIN, 0};
    for (;;) {
      const int r = poll(&p, 1, timeout_ms);
      if (r < 0 && errno == EINTR) continue;
      // POLLHUP/POLLERR count as readable: read() then reports EOF or the
      // error itself.
      return r != 0;
    }
  }
  bool MoreArrivesSoon() { return WaitReadable(kCoalesceMillis); }

  UniqueFd owned_;  // empty for standard input, which is not ours to close
  int fd_;
  int64_t mtime_;
  uint64_t size_hint_;
  std::string prefix_;
  size_t prefix_pos_ = 0;
  bool eof_ = false;
  absl::Status error_;
};

void GrowPipe(int fd, const struct stat& st) {
  if (S_ISFIFO(st.st_mode)) {
    // Best effort: a full pipe-max-size or a pipe we may not resize just
    // keeps its current size.
    (void)fcntl(fd, F_SETPIPE_SZ, kPipeBytes);
  }
}

std::unique_ptr<Source> NewStream(std::string name, UniqueFd owned, int fd,
                                  const struct stat& st, std::string prefix) {
  GrowPipe(fd, st);
  const bool regular = S_ISREG(st.st_mode);
  const int64_t mtime = regular ? int64_t{st.st_mtim.tv_sec} : 0;
  const uint64_t size =
      regular && st.st_size > 0 ? static_cast<uint64_t>(st.st_size) : 0;
  return std::make_unique<FdStreamSource>(std::move(name), std::move(owned), fd,
                                          mtime, size, std::move(prefix));
}

absl::StatusOr<std::unique_ptr<Source>> OpenStdin() {
  struct stat st;
  if (fstat(STDIN_FILENO, &st) != 0) {
    return ErrnoError(errno, "cannot stat standard input", "-");
  }
  return NewStream("-", UniqueFd(), STDIN_FILENO, st, "");
}

// Reads up to kProbeBytes from a regular file that claims size 0. Returns
// the bytes read (empty: the file really is empty).
absl::StatusOr<std::string> Probe(int fd, const std::string& path) {
  std::string buf(kProbeBytes, '\0');
  for (;;) {
    const ssize_t got = read(fd, buf.data(), buf.size());
    if (got >= 0) {
      buf.resize(static_cast<size_t>(got));
      return buf;
    }
    if (errno != EINTR) return ErrnoError(errno, "cannot read", path);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<Source>> OpenSource(const std::string& path,
                                                   const InputLimits& limits) {
  if (path == "-") return OpenStdin();
  if (path.empty()) return absl::InvalidArgumentError("empty input path");

  // O_NOCTTY: a terminal named on the command line must not become our
  // controlling terminal.
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) return ErrnoError(errno, "cannot open", path);
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return ErrnoError(errno, "cannot stat", path);
  if (S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("'", path, "' is a directory (expand it with ExpandPath)"));
  }
  const int64_t mtime = S_ISREG(st.st_mode) ? int64_t{st.st_mtim.tv_sec} : 0;

  if (absl::EndsWithIgnoreCase(path, ".gz")) {
    return internal::NewGzipSource(std::move(fd), path, mtime, limits,
                                   internal::HaveIsal()
                                       ? internal::GzipBackend::kIsal
                                       : internal::GzipBackend::kZlib);
  }
  if (absl::EndsWithIgnoreCase(path, ".zst")) {
    return internal::NewZstdSource(std::move(fd), path, mtime, limits);
  }

  if (!S_ISREG(st.st_mode)) {
    const int raw = fd.get();
    return NewStream(path, std::move(fd), raw, st, "");
  }
  if (st.st_size == 0) {
    // Either empty, or a pseudo-file (/proc, debugfs) that only read() can
    // tell apart.
    FL_ASSIGN_OR_RETURN(std::string prefix, Probe(fd.get(), path));
    if (prefix.empty()) {
      return std::make_unique<MappedSource>(path, nullptr, 0, mtime);
    }
    const int raw = fd.get();
    return NewStream(path, std::move(fd), raw, st, std::move(prefix));
  }

  const size_t len = static_cast<size_t>(st.st_size);
  void* addr = mmap(nullptr, len, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (addr == MAP_FAILED) {
    // sysfs attributes, some FUSE and network file systems, or no address
    // space left: the bytes are still there through read().
    const int raw = fd.get();
    return NewStream(path, std::move(fd), raw, st, "");
  }
  // Advice only: a failure changes nothing but read-ahead.
  (void)madvise(addr, len, MADV_SEQUENTIAL);
  return std::make_unique<MappedSource>(path, addr, len, mtime);
}

}  // namespace faultline
