// OpenSource and the uncompressed sources: regular files are mapped, and
// everything that cannot be mapped (standard input, FIFOs, character devices,
// /proc and /sys files, file systems without mmap) is read with read().
// Streams never block past InputLimits' cancel flag and deadline, and a
// device or FIFO whose first block is binary is refused, not read forever.
// Compressed files are handed to decompress.cc.

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
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
  void Release(uint64_t begin, uint64_t end) const override {
    static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    end = std::min<uint64_t>(end, len_);
    // The pages at both ends may hold bytes of the neighbouring chunks,
    // which other workers may be reading: harmless, since a read-only
    // private mapping of a file drops pages, never loses them (the next
    // touch reads them back from the page cache or the file).
    const uint64_t first = begin / page * page;
    if (addr_ == nullptr || first >= end) return;
    // Advice only: a failure changes nothing but RSS.
    (void)madvise(static_cast<char*>(addr_) + first, end - first, MADV_DONTNEED);
  }

 private:
  void* addr_;  // null for an empty file
  size_t len_;
  int64_t mtime_;
};

// Waits until `fd` has bytes, an end or an error to report, checking
// limits.cancel and limits.deadline every kWaitSliceMillis, so a FIFO
// nobody writes to or a quiet terminal never holds a scan (or an embedding
// agent's fl_session_cancel) hostage.
absl::Status WaitForInput(int fd, const InputLimits& limits, const std::string& name) {
  pollfd p{fd, POLLIN, 0};
  for (;;) {
    if (limits.cancel != nullptr && limits.cancel->load(std::memory_order_relaxed)) {
      return absl::CancelledError(absl::StrCat("'", name, "': cancelled while waiting for input"));
    }
    if (std::chrono::steady_clock::now() >= limits.deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "'", name, "': the time budget ran out while waiting for input (a FIFO without a writer?)"));
    }
    const int r = poll(&p, 1, kWaitSliceMillis);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return ErrnoError(errno, "cannot poll", name);
    // POLLHUP/POLLERR count as ready: read() then reports EOF or the error.
    if (r > 0) return absl::OkStatus();
  }
}

// Bytes read with read() from a descriptor that cannot be mapped. Starts
// with `prefix`, the bytes a probe already consumed. A FIFO is open without
// O_NONBLOCK's blocking open(), so until a writer shows up read() says 0:
// the first read waits for input instead (WaitForInput).
class FdStreamSource final : public Source {
 public:
  FdStreamSource(std::string name, UniqueFd owned, int fd, int64_t mtime,
                 uint64_t size_hint, std::string prefix, const InputLimits& limits,
                 bool fifo, bool probe_binary)
      : Source(std::move(name)),
        owned_(std::move(owned)),
        fd_(fd),
        mtime_(mtime),
        size_hint_(size_hint),
        prefix_(std::move(prefix)),
        limits_(limits),
        await_writer_(fifo),
        probe_binary_(probe_binary) {}

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
    if (await_writer_ && n == 0 && cap > 0) {
      await_writer_ = false;
      error_ = WaitForInput(fd_, limits_, name());
      if (!error_.ok()) return error_;
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
        // A FIFO (opened O_NONBLOCK) between writes, or someone else set
        // O_NONBLOCK on a shared descriptor (stdin).
        if (n > 0) break;
        error_ = WaitForInput(fd_, limits_, name());
        if (!error_.ok()) break;
      } else {
        error_ = ErrnoError(errno, "cannot read", name());
        break;
      }
    }
    if (probe_binary_ && n > 0) {
      probe_binary_ = false;
      const size_t probe = std::min(n, kBinaryProbeBytes);
      if (const void* nul = std::memchr(buf, '\0', probe)) {
        error_ = absl::FailedPreconditionError(absl::StrCat(
            "'", name(), "' is binary, not a log: a NUL byte at offset ",
            static_cast<const char*>(nul) - buf, " of its first ", probe,
            " bytes; skipped"));
        return error_;
      }
    }
    // Bytes already read are delivered; a read error surfaces on the next
    // call, so nothing before it is lost.
    if (n > 0) return n;
    if (!error_.ok()) return error_;
    return size_t{0};
  }

 private:
  bool MoreArrivesSoon() {
    pollfd p{fd_, POLLIN, 0};
    for (;;) {
      const int r = poll(&p, 1, kCoalesceMillis);
      if (r < 0 && errno == EINTR) continue;
      return r != 0;
    }
  }

  UniqueFd owned_;  // empty for standard input, which is not ours to close
  int fd_;
  int64_t mtime_;
  uint64_t size_hint_;
  std::string prefix_;
  size_t prefix_pos_ = 0;
  InputLimits limits_;
  bool await_writer_;
  bool probe_binary_;
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
                                  const struct stat& st, std::string prefix,
                                  const InputLimits& limits, bool await_writer) {
  GrowPipe(fd, st);
  const bool regular = S_ISREG(st.st_mode);
  const int64_t mtime = regular ? int64_t{st.st_mtim.tv_sec} : 0;
  const uint64_t size =
      regular && st.st_size > 0 ? static_cast<uint64_t>(st.st_size) : 0;
  return std::make_unique<FdStreamSource>(std::move(name), std::move(owned), fd,
                                          mtime, size, std::move(prefix), limits,
                                          await_writer, /*probe_binary=*/!regular);
}

absl::StatusOr<std::unique_ptr<Source>> OpenStdin(const InputLimits& limits) {
  struct stat st;
  if (fstat(STDIN_FILENO, &st) != 0) {
    return ErrnoError(errno, "cannot stat standard input", "-");
  }
  return NewStream("-", UniqueFd(), STDIN_FILENO, st, "", limits, false);
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
  if (path == "-") return OpenStdin(limits);
  if (path.empty()) return absl::InvalidArgumentError("empty input path");

  // O_NOCTTY: a terminal named on the command line must not become our
  // controlling terminal. O_NONBLOCK: open() of a FIFO without a writer
  // would block, uninterruptibly for fl_session_cancel; the first Read
  // waits instead. Other files get blocking reads back below.
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) {
    if (errno == ENXIO) {
      return absl::FailedPreconditionError(
          absl::StrCat("'", path, "' is a socket (or a device without a driver); not read"));
    }
    return ErrnoError(errno, "cannot open", path);
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return ErrnoError(errno, "cannot stat", path);
  if (S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("'", path, "' is a directory (expand it with ExpandPath)"));
  }
  if (S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "'", path, "' is a ", S_ISBLK(st.st_mode) ? "block device" : "socket",
        "; not read (a log is a file, a FIFO or a character device)"));
  }
  const bool fifo = S_ISFIFO(st.st_mode);
  if (fifo && (absl::EndsWithIgnoreCase(path, ".gz") ||
               absl::EndsWithIgnoreCase(path, ".zst"))) {
    // The decoders read with plain blocking read(): wait for the writer
    // here, then hand over a blocking descriptor.
    FL_RETURN_IF_ERROR(WaitForInput(fd.get(), limits, path));
  }
  if (!fifo || absl::EndsWithIgnoreCase(path, ".gz") ||
      absl::EndsWithIgnoreCase(path, ".zst")) {
    const int flags = fcntl(fd.get(), F_GETFL);
    if (flags < 0 || fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
      return ErrnoError(errno, "cannot set blocking reads on", path);
    }
  }
  const int64_t mtime = S_ISREG(st.st_mode) ? int64_t{st.st_mtim.tv_sec} : 0;

  if (absl::EndsWithIgnoreCase(path, ".gz")) {
    return internal::NewGzipSource(std::move(fd), path, mtime, limits,
                                   internal::HaveIsal()
                                       ? internal::GzipBackend::kIsal
                                       : internal::GzipBackend::kZlib);
  }
  if (absl::EndsWithIgnoreCase(path, ".zst")) {
    if (limits.zstd_decode_threads > 0 && S_ISREG(st.st_mode)) {
      if (auto frames = internal::NewZstdFramesSource(fd, path, mtime, limits)) return frames;
    }
    return internal::NewZstdSource(std::move(fd), path, mtime, limits);
  }

  if (!S_ISREG(st.st_mode)) {
    const int raw = fd.get();
    return NewStream(path, std::move(fd), raw, st, "", limits, fifo);
  }
  if (st.st_size == 0) {
    // Either empty, or a pseudo-file (/proc, debugfs) that only read() can
    // tell apart.
    FL_ASSIGN_OR_RETURN(std::string prefix, Probe(fd.get(), path));
    if (prefix.empty()) {
      return std::make_unique<MappedSource>(path, nullptr, 0, mtime);
    }
    const int raw = fd.get();
    return NewStream(path, std::move(fd), raw, st, std::move(prefix), limits, false);
  }

  const size_t len = static_cast<size_t>(st.st_size);
  void* addr = mmap(nullptr, len, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (addr == MAP_FAILED) {
    // sysfs attributes, some FUSE and network file systems, or no address
    // space left: the bytes are still there through read().
    const int raw = fd.get();
    return NewStream(path, std::move(fd), raw, st, "", limits, false);
  }
  // Advice only: a failure changes nothing but read-ahead.
  (void)madvise(addr, len, MADV_SEQUENTIAL);
  return std::make_unique<MappedSource>(path, addr, len, mtime);
}

std::optional<std::string> ReadLineAt(const std::string& path, uint64_t offset, size_t max_bytes,
                                      uint64_t expect_bytes) {
  struct stat sb;
  if (path == "-" || ::stat(path.c_str(), &sb) != 0 || !S_ISREG(sb.st_mode)) return std::nullopt;
  absl::StatusOr<std::unique_ptr<Source>> src = OpenSource(path);
  if (!src.ok()) return std::nullopt;
  Source& s = **src;
  std::string out;
  if (s.kind() == SourceKind::kMapped) {
    const std::string_view m = s.mapped();
    if (offset >= m.size() || m.size() < expect_bytes) return std::nullopt;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(m.size() - offset, max_bytes));
    out.resize(n);
    size_t len = n;
    bool line_start = true;
    if (!GuardedRead(m.data(), m.size(), [&] {
          const char* at = m.data() + offset;
          line_start = offset == 0 || at[-1] == '\n';
          const void* nl = std::memchr(at, '\n', n);
          len = nl ? static_cast<size_t>(static_cast<const char*>(nl) - at) : n;
          std::memcpy(out.data(), at, len);
        })) {
      return std::nullopt;
    }
    if (!line_start) return std::nullopt;
    out.resize(len);
  } else {
    std::string buf(size_t{1} << 16, '\0');
    uint64_t pos = 0;
    bool done = false;
    while (!done) {
      absl::StatusOr<size_t> got = s.Read(buf.data(), buf.size());
      if (!got.ok()) return std::nullopt;
      if (*got == 0) break;
      const uint64_t end = pos + *got;
      if (end > offset) {
        std::string_view piece(buf.data(), *got);
        if (pos < offset) piece.remove_prefix(static_cast<size_t>(offset - pos));
        size_t nl = piece.find('\n');
        if (nl != std::string_view::npos) {
          piece = piece.substr(0, nl);
          done = true;
        }
        out.append(piece.substr(0, max_bytes - std::min(max_bytes, out.size())));
        done = done || out.size() >= max_bytes;
      }
      pos = end;
    }
    if (pos <= offset) return std::nullopt;
  }
  if (!out.empty() && out.back() == '\r') out.pop_back();
  return out;
}

}  // namespace faultline
