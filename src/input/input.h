// Sources of log bytes. A path becomes one or more Sources: a regular file is
// memory-mapped (MADV_SEQUENTIAL) and its bytes are read inside a SIGBUS
// guard, so a file truncated under the mapping yields an error for that
// source instead of killing the process; .gz files stream through ISA-L's
// inflate when available, else zlib; .zst files stream through libzstd;
// "-" is standard input. Directories expand recursively into sorted files.
//
// Thread-safety: a Source is used by one thread at a time. The SIGBUS guard is
// per thread and may be used by any number of threads at once.
#ifndef FAULTLINE_INPUT_INPUT_H_
#define FAULTLINE_INPUT_INPUT_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace faultline {

// What reading one source may cost, and when to give up waiting for it.
struct InputLimits {
  // Cap on the decompressed size of one compressed source (gzip bombs).
  uint64_t max_decompressed_bytes = uint64_t{1} << 40;  // 1 TiB
  // Cap on the bytes of log read from one source (after decompression);
  // 0: none. Enforced by the scanner: past it, the source is an input error
  // naming the limit and the bytes before it are still diagnosed.
  uint64_t max_source_bytes = 0;
  // A stream waiting for bytes (a FIFO with no writer yet, a terminal) gives
  // up when `cancel` is set or `deadline` passes, checking both every
  // kWaitSliceMillis; the scanner also stops reading any source then.
  const std::atomic<bool>* cancel = nullptr;
  std::chrono::steady_clock::time_point deadline =
      std::chrono::steady_clock::time_point::max();
  // Largest window (log2 of bytes) a zstd frame may ask the decoder to
  // allocate. 27 (128 MiB) is libzstd's own default; frames written with
  // `zstd --long=28` or more fail with an error naming this limit instead of
  // letting one hostile file claim up to 2 GiB per stream.
  int max_zstd_window_log = 27;
  // Threads that decode the frames of a .zst file of several frames (pzstd,
  // the seekable format) ahead of Read, several at once; 0: one decoder
  // streams it. The bytes, and an error with the bytes before it, are the
  // streaming decoder's: at a frame that fails, it takes over (reading the
  // file again from its start and dropping what was delivered).
  unsigned zstd_decode_threads = 0;
};

// Lists the files a path stands for: the path itself for a file or "-",
// every regular file below a directory (recursively, sorted by path, symlinks
// to files followed, symlink loops ignored). Errors name the path.
absl::StatusOr<std::vector<std::string>> ExpandPath(const std::string& path);

// An entry below a directory that ExpandPath did not return, and why: an
// unreadable subdirectory, a dangling symlink, a symlink loop, a special file
// (FIFO, socket, device), or a second name (hard link, symlink) of a file or
// directory already listed -- scanning it again would count its evidence
// twice. The reason's message names the path.
struct SkippedPath {
  std::string path;
  absl::Status reason;
};

// The same list as ExpandPath(path), plus every entry passed over, appended
// to *skipped sorted by path (skipped may be null). Fails only when `path`
// itself is unusable (missing, unreadable directory); problems below it are
// reported in *skipped, never silently dropped. Where one file has several
// names the real path wins over one through a symlink, then the smallest.
absl::StatusOr<std::vector<std::string>> ExpandPath(
    const std::string& path, std::vector<SkippedPath>* skipped);

// A file ExpandPath lists, with what the walk learned of it (stat of the
// file, symlinks followed), so a caller plans its scan without a second
// stat() by path per file (a path lookup in the kernel each, on the thread
// before the workers). The facts are as of the walk: a file may change or
// go before it is opened, which the open then says.
struct ListedFile {
  std::string path;
  bool regular = false;  // false for "-" and a named FIFO, device, ...
  uint64_t size = 0;     // regular files only
  int64_t mtime = 0;     // seconds since the epoch; 0 when not regular
  uint64_t dev = 0, ino = 0;
};

// ExpandPath(path, skipped), each file with its ListedFile facts.
absl::StatusOr<std::vector<ListedFile>> ListFiles(const std::string& path,
                                                  std::vector<SkippedPath>* skipped);

enum class SourceKind { kMapped, kStream };

class Source {
 public:
  virtual ~Source() = default;
  const std::string& name() const { return name_; }
  virtual SourceKind kind() const = 0;

  // kMapped only: the whole file's bytes. Read them only inside
  // GuardedRead(); after a fault the source must not be read again.
  virtual std::string_view mapped() const { return {}; }
  // kMapped only: tells the kernel that bytes [begin, end) were scanned, so
  // their pages leave this process's resident set (the whole pages inside
  // the range; a later read faults them back in from the file). Keeps RSS
  // flat in the file size instead of growing to the whole mapping.
  virtual void Release(uint64_t begin, uint64_t end) const {
    (void)begin;
    (void)end;
  }
  // Size in bytes when known up front (0 otherwise), for progress.
  virtual uint64_t size_hint() const { return 0; }
  // Compressed sources: bytes read from the file so far, which progress
  // counts against the file's size on disk (the decompressed size is not
  // known up front). nullopt for sources whose bytes are the file's.
  virtual std::optional<uint64_t> compressed_bytes_read() const {
    return std::nullopt;
  }
  // Modification time in seconds since the epoch (0 when unknown), used to
  // infer the year of year-less timestamps.
  virtual int64_t mtime() const { return 0; }

  // kStream only: reads up to cap bytes; returns 0 at the end. Errors name
  // the source (corrupt frame, size cap exceeded, I/O error).
  virtual absl::StatusOr<size_t> Read(char* buf, size_t cap) {
    (void)buf;
    (void)cap;
    return absl::UnimplementedError("not a stream");
  }

 protected:
  explicit Source(std::string name) : name_(std::move(name)) {}

 private:
  std::string name_;
};

// How often a waiting stream looks at InputLimits::cancel and deadline.
inline constexpr int kWaitSliceMillis = 100;

// A stream that is not a regular file (character device, FIFO, standard
// input) whose first block holds a NUL byte is binary, not a log: its first
// Read fails with FailedPreconditionError naming it ("/dev/zero" and
// "/dev/urandom" would otherwise be read forever). Regular files are not
// tested: a log with NUL runs left by a crash is still a log, and its size
// bounds the read.
inline constexpr size_t kBinaryProbeBytes = 64 * 1024;

// Opens a file path (by extension: .gz, .zst, else plain) or "-". A FIFO is
// opened without blocking and its first Read waits for a writer as
// InputLimits says; a block device or socket is refused (FailedPrecondition
// naming it).
absl::StatusOr<std::unique_ptr<Source>> OpenSource(const std::string& path,
                                                   const InputLimits& limits = {});

// The bytes of the line that starts at `offset` of a regular file (plain,
// .gz or .zst, decompressed), without its end of line, at most max_bytes;
// nullopt when the file cannot be read there, is not a regular file, or is
// plain and shorter than `expect_bytes` or with no line starting there: it
// was cut or replaced since (a file that grew, as a watched log does, is
// still read). For the record of a line a scan kept no evidence of (a
// metric point).
std::optional<std::string> ReadLineAt(const std::string& path, uint64_t offset, size_t max_bytes,
                                      uint64_t expect_bytes = 0);

// Runs fn(); if touching [base, base+len) raises SIGBUS during fn, returns
// false instead of crashing (the work fn did is abandoned: fn must not hold
// resources that need unwinding -- keep it to plain loops and C calls such as
// hs_scan and memcpy). Nested guards are not supported. A SIGBUS outside a
// guarded range keeps its default behaviour.
bool GuardedRead(const void* base, size_t len, const std::function<void()>& fn);

}  // namespace faultline

#endif  // FAULTLINE_INPUT_INPUT_H_
