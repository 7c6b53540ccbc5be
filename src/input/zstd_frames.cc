// A .zst file of several frames (pzstd, the seekable format, writers that
// end a frame every few MB) is split at frame boundaries, found by walking
// the block headers: groups of whole frames decode on several threads at
// once -- in one ZSTD_decompressDCtx call when their content sizes are
// declared, streamed into a growing buffer when not -- and Read hands their
// bytes on in file order.
// Whatever goes wrong in a group (corrupt data, a checksum, a content size
// that lies) hands the file to the streaming decoder, which reads it again
// from its start, drops the bytes already delivered and goes on: its bytes,
// its error and the error's offsets are then exactly those of reading the
// file with it alone.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "input/input.h"
#include "input/input_internal.h"

namespace faultline::internal {
namespace {

// Whole frames are grouped into jobs of at least this many compressed
// bytes, or decompressed ones where the sizes are declared (pzstd writes
// frames of about 1 MB compressed).
constexpr uint64_t kJobCompressed = uint64_t{1} << 20;
constexpr uint64_t kJobBytes = uint64_t{8} << 20;
// A job's output is one buffer: a job that would decode to more fails (and
// the streaming decoder takes over). With `threads` decoders, at most
// 3 x threads + 3 of these buffers exist (decoding, decoded ahead, kept for
// reuse): 64 MiB bounds what a hostile file can make them cost.
constexpr uint64_t kMaxJobBytes = uint64_t{64} << 20;

// A job's output: bytes [0, len) of a buffer that is reused (its bytes are
// never cleared: a buffer's pages are touched once, not per job).
struct Output {
  std::unique_ptr<char[]> data;
  size_t cap = 0, len = 0;
  bool ok = false;
  // Room for `n` bytes, keeping the first `keep`.
  void Reserve(size_t n, size_t keep) {
    if (n <= cap) return;
    auto bigger = std::make_unique_for_overwrite<char[]>(n);
    if (keep > 0) std::memcpy(bigger.get(), data.get(), keep);
    data = std::move(bigger);
    cap = n;
  }
};

struct Job {
  uint64_t cbegin = 0, cend = 0;  // compressed bytes, whole frames
  uint64_t dsize = 0;             // their declared content sizes, summed
  bool sized = true;              // every frame declares its size
};

uint32_t Le32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

// The window a frame header asks for (RFC 8878, 3.1.1.1.2), or nothing.
std::optional<uint64_t> WindowSize(const uint8_t* h, size_t n, uint64_t content) {
  if (n < 6) return std::nullopt;
  if ((h[4] >> 5) & 1) return content;  // single segment: the content is the window
  const unsigned exponent = h[5] >> 3, mantissa = h[5] & 7;
  const uint64_t base = uint64_t{1} << (10 + exponent);
  return base + base / 8 * mantissa;
}

// The file's frames in jobs, or nothing when it is not to be split.
std::optional<std::vector<Job>> IndexFrames(int fd, uint64_t file_size, const InputLimits& limits) {
  std::vector<Job> jobs;
  uint64_t pos = 0, unassigned = 0, total = 0;
  size_t frames = 0;
  while (pos < file_size) {
    uint8_t h[18];
    const size_t n = static_cast<size_t>(std::min<uint64_t>(sizeof h, file_size - pos));
    if (n < 5 || !PreadFull(fd, pos, h, n)) return std::nullopt;
    const std::optional<uint64_t> end = ZstdFrameEnd(fd, pos);
    if (!end || *end > file_size) return std::nullopt;
    if ((Le32(h) & 0xFFFFFFF0u) == 0x184D2A50u) {  // skippable: goes with its neighbours
      pos = *end;
      continue;
    }
    const unsigned long long content = ZSTD_getFrameContentSize(h, n);
    const bool sized = content != ZSTD_CONTENTSIZE_UNKNOWN;
    if (content == ZSTD_CONTENTSIZE_ERROR || (sized && content > kMaxJobBytes) ||
        ZSTD_getDictID_fromFrame(h, n) != 0) {
      return std::nullopt;
    }
    const std::optional<uint64_t> window = WindowSize(h, n, sized ? content : 0);
    if (!window || *window > (uint64_t{1} << limits.max_zstd_window_log)) return std::nullopt;
    const uint64_t declared = sized ? content : 0;
    total += declared;
    if (total > limits.max_decompressed_bytes) return std::nullopt;
    if (jobs.empty() || jobs.back().cend - jobs.back().cbegin >= kJobCompressed ||
        (jobs.back().sized && jobs.back().dsize >= kJobBytes) ||
        jobs.back().dsize + declared > kMaxJobBytes) {
      jobs.push_back(Job{unassigned, 0, 0, true});
    }
    jobs.back().cend = *end;
    jobs.back().dsize += declared;
    jobs.back().sized = jobs.back().sized && sized;
    unassigned = *end;
    pos = *end;
    ++frames;
  }
  if (frames < 2 || jobs.size() < 2) return std::nullopt;
  jobs.back().cend = file_size;  // trailing skippable frames (a seek table)
  return jobs;
}

class ZstdFramesSource final : public Source {
 public:
  ZstdFramesSource(std::string name, UniqueFd fd, int64_t mtime, const InputLimits& limits,
                   std::vector<Job> jobs)
      : Source(std::move(name)),
        fd_(std::move(fd)),
        mtime_(mtime),
        limits_(limits),
        jobs_(std::move(jobs)) {
    const unsigned threads = std::max(1u, limits.zstd_decode_threads);
    ahead_ = threads + 1;
    for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { Decode(); });
  }
  ~ZstdFramesSource() override { StopDecoders(); }
  ZstdFramesSource(const ZstdFramesSource&) = delete;
  ZstdFramesSource& operator=(const ZstdFramesSource&) = delete;

  SourceKind kind() const override { return SourceKind::kStream; }
  int64_t mtime() const override { return mtime_; }
  std::optional<uint64_t> compressed_bytes_read() const override {
    if (streaming_) return streaming_->compressed_bytes_read();
    return cur_ == 0 ? 0 : jobs_[cur_ - 1].cend;
  }

  absl::StatusOr<size_t> Read(char* buf, size_t cap) override {
    if (streaming_) return streaming_->Read(buf, cap);
    if (cur_ == jobs_.size() || cap == 0) return size_t{0};
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return done_.count(cur_) > 0; });
    Output& out = done_[cur_];
    if (!out.ok || (pos_ == 0 && out.len > limits_.max_decompressed_bytes - delivered_)) {
      // A failed job, or one past the cap: the streaming decoder says what.
      lock.unlock();
      return HandOver(buf, cap);
    }
    const size_t n = std::min(cap, out.len - pos_);
    std::memcpy(buf, out.data.get() + pos_, n);
    pos_ += n;
    delivered_ += n;
    if (pos_ == out.len) {
      if (free_.size() < ahead_ + 1) free_.push_back(std::move(out));
      done_.erase(cur_);
      ++cur_;
      pos_ = 0;
      cv_.notify_all();
    }
    return n;
  }

 private:
  void Decode() {
    ZSTD_DCtx* dctx = ZSTD_createDCtx();
    if (dctx != nullptr)
      ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, limits_.max_zstd_window_log);
    std::string in;
    for (;;) {
      size_t j;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || next_ >= jobs_.size() || next_ < cur_ + ahead_; });
        if (stop_ || next_ >= jobs_.size()) break;
        j = next_++;
      }
      Output out;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (!free_.empty()) {
          out = std::move(free_.back());
          free_.pop_back();
        }
      }
      out.ok = DecodeJob(dctx, jobs_[j], in, out);
      std::lock_guard<std::mutex> lock(mu_);
      done_[j] = std::move(out);
      cv_.notify_all();
    }
    ZSTD_freeDCtx(dctx);
  }

  // The job's bytes into `out`; false when anything is wrong with it.
  bool DecodeJob(ZSTD_DCtx* dctx, const Job& job, std::string& in, Output& out) const {
    if (dctx == nullptr) return false;
    in.resize(job.cend - job.cbegin);
    if (!PreadFull(fd_.get(), job.cbegin, reinterpret_cast<uint8_t*>(in.data()), in.size()))
      return false;
    if (job.sized) {
      out.Reserve(job.dsize, 0);
      const size_t rc = ZSTD_decompressDCtx(dctx, out.data.get(), job.dsize, in.data(), in.size());
      out.len = ZSTD_isError(rc) ? 0 : rc;
      return !ZSTD_isError(rc) && rc == job.dsize;
    }
    return DecodeUnsized(dctx, in, out);
  }

  // Frames without declared sizes: streamed into a buffer that grows.
  static bool DecodeUnsized(ZSTD_DCtx* dctx, const std::string& in, Output& out) {
    ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
    out.Reserve(std::max<size_t>(in.size() * 8, 1 << 20), 0);
    ZSTD_inBuffer ib{in.data(), in.size(), 0};
    ZSTD_outBuffer ob{out.data.get(), out.cap, 0};
    size_t rc = 0;
    while (ib.pos < in.size() || rc != 0) {
      if (ob.pos == ob.size) {
        if (out.cap >= kMaxJobBytes) return false;
        out.Reserve(out.cap * 2, ob.pos);
        ob = {out.data.get(), out.cap, ob.pos};
      }
      const size_t in_before = ib.pos, out_before = ob.pos;
      rc = ZSTD_decompressStream(dctx, &ob, &ib);
      if (ZSTD_isError(rc)) return false;
      if (ib.pos == in_before && ob.pos == out_before && ob.pos < ob.size)
        return false;  // cut short
    }
    out.len = ob.pos;
    return true;
  }

  // From the failed job on, the streaming decoder reads the file: from its
  // start, dropping the bytes delivered already.
  absl::StatusOr<size_t> HandOver(char* buf, size_t cap) {
    StopDecoders();
    UniqueFd again(dup(fd_.get()));
    if (again.get() < 0 || lseek(again.get(), 0, SEEK_SET) != 0) {
      return ErrnoError(errno, "cannot read", name());
    }
    streaming_ = NewZstdSource(std::move(again), name(), mtime_, limits_);
    std::string skip(std::min<uint64_t>(delivered_, uint64_t{4} << 20), '\0');
    for (uint64_t left = delivered_; left > 0;) {
      absl::StatusOr<size_t> n =
          streaming_->Read(skip.data(), std::min<uint64_t>(left, skip.size()));
      if (!n.ok()) return n.status();
      if (*n == 0) break;
      left -= *n;
    }
    return streaming_->Read(buf, cap);
  }

  void StopDecoders() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& th : threads_) th.join();
    threads_.clear();
  }

  UniqueFd fd_;
  const int64_t mtime_;
  const InputLimits limits_;
  const std::vector<Job> jobs_;
  size_t ahead_ = 1;  // jobs decoded ahead of the one Read is in, at most
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<size_t, Output> done_;  // decoded jobs (ok false: failed)
  std::vector<Output> free_;       // buffers of jobs read, for reuse
  size_t next_ = 0;                // the next job to decode
  size_t cur_ = 0;                 // the job Read is in
  size_t pos_ = 0;                 // bytes of it read
  uint64_t delivered_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
  std::unique_ptr<Source> streaming_;  // after a failed job
};

}  // namespace

std::unique_ptr<Source> NewZstdFramesSource(const UniqueFd& fd, const std::string& name,
                                            int64_t mtime, const InputLimits& limits) {
  struct stat st;
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return nullptr;
  std::optional<std::vector<Job>> jobs =
      IndexFrames(fd.get(), static_cast<uint64_t>(st.st_size), limits);
  if (!jobs) return nullptr;
  UniqueFd own(fcntl(fd.get(), F_DUPFD_CLOEXEC, 0));
  if (own.get() < 0) return nullptr;
  return std::make_unique<ZstdFramesSource>(name, std::move(own), mtime, limits, std::move(*jobs));
}

}  // namespace faultline::internal
