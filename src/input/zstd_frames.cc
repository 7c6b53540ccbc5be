// A .zst file of several frames that all declare their content size
// (pzstd, the seekable format, writers that flush a frame every few MB) is
// split at frame boundaries: its decompressed offsets are known up front,
// so groups of whole frames decode on several threads at once, each in one
// ZSTD_decompressDCtx call, and Read hands their bytes on in file order.
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
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "input/input.h"
#include "input/input_internal.h"

namespace faultline::internal {
namespace {

// Whole frames are grouped into jobs of at least this many decompressed
// bytes (pzstd writes frames of a few MB; one-call decoding wants more).
constexpr uint64_t kJobBytes = uint64_t{8} << 20;
// A frame larger than this is not split off (a job's output is one buffer).
constexpr uint64_t kMaxFrameBytes = uint64_t{256} << 20;

struct Job {
  uint64_t cbegin = 0, cend = 0;  // compressed bytes, whole frames
  uint64_t dsize = 0;             // their content sizes, summed
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
    if (content == ZSTD_CONTENTSIZE_UNKNOWN || content == ZSTD_CONTENTSIZE_ERROR || content > kMaxFrameBytes ||
        ZSTD_getDictID_fromFrame(h, n) != 0) {
      return std::nullopt;
    }
    const std::optional<uint64_t> window = WindowSize(h, n, content);
    if (!window || *window > (uint64_t{1} << limits.max_zstd_window_log)) return std::nullopt;
    total += content;
    if (total > limits.max_decompressed_bytes) return std::nullopt;
    if (jobs.empty() || jobs.back().dsize >= kJobBytes) jobs.push_back(Job{unassigned, 0, 0});
    jobs.back().cend = *end;
    jobs.back().dsize += content;
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
      : Source(std::move(name)), fd_(std::move(fd)), mtime_(mtime), limits_(limits), jobs_(std::move(jobs)) {
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
    std::optional<std::string>& out = done_[cur_];
    if (!out) {
      lock.unlock();
      return HandOver(buf, cap);
    }
    const size_t n = std::min(cap, out->size() - pos_);
    std::memcpy(buf, out->data() + pos_, n);
    pos_ += n;
    delivered_ += n;
    if (pos_ == out->size()) {
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
    if (dctx != nullptr) ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, limits_.max_zstd_window_log);
    std::string in;
    for (;;) {
      size_t j;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || next_ >= jobs_.size() || next_ < cur_ + ahead_; });
        if (stop_ || next_ >= jobs_.size()) break;
        j = next_++;
      }
      std::optional<std::string> out = DecodeJob(dctx, jobs_[j], in);
      std::lock_guard<std::mutex> lock(mu_);
      done_[j] = std::move(out);
      cv_.notify_all();
    }
    ZSTD_freeDCtx(dctx);
  }

  // The job's bytes, or nothing when anything is wrong with it.
  std::optional<std::string> DecodeJob(ZSTD_DCtx* dctx, const Job& job, std::string& in) const {
    if (dctx == nullptr) return std::nullopt;
    in.resize(job.cend - job.cbegin);
    if (!PreadFull(fd_.get(), job.cbegin, reinterpret_cast<uint8_t*>(in.data()), in.size())) return std::nullopt;
    std::string out(job.dsize, '\0');
    const size_t rc = ZSTD_decompressDCtx(dctx, out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(rc) || rc != out.size()) return std::nullopt;
    return out;
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
      absl::StatusOr<size_t> n = streaming_->Read(skip.data(), std::min<uint64_t>(left, skip.size()));
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
  std::map<size_t, std::optional<std::string>> done_;  // decoded jobs; nullopt: failed
  size_t next_ = 0;      // the next job to decode
  size_t cur_ = 0;       // the job Read is in
  size_t pos_ = 0;       // bytes of it read
  uint64_t delivered_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
  std::unique_ptr<Source> streaming_;  // after a failed job
};

}  // namespace

std::unique_ptr<Source> NewZstdFramesSource(const UniqueFd& fd, const std::string& name, int64_t mtime,
                                            const InputLimits& limits) {
  struct stat st;
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return nullptr;
  std::optional<std::vector<Job>> jobs = IndexFrames(fd.get(), static_cast<uint64_t>(st.st_size), limits);
  if (!jobs) return nullptr;
  UniqueFd own(fcntl(fd.get(), F_DUPFD_CLOEXEC, 0));
  if (own.get() < 0) return nullptr;
  return std::make_unique<ZstdFramesSource>(name, std::move(own), mtime, limits, std::move(*jobs));
}

}  // namespace faultline::internal
