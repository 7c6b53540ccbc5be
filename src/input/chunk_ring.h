// A bounded, ordered hand-off of chunks of one stream from the thread that
// reads (decodes) it to the threads that scan it. The reader puts chunks in
// stream order; any thread takes the oldest; whoever finishes a chunk waits
// for its turn (AwaitTurn) before handing its result on and passing the
// turn (Pass), so results leave in stream order whatever thread scanned
// them. At most `depth` chunks wait: a reader that finds the ring full
// scans one itself (TryTake) instead of decoding further ahead, so on two
// cores the decoder and the scanner share the work rather than one idling.
// Buffers come back for reuse (Recycle), so a warm ring allocates nothing
// per chunk. Abort wakes every waiter (cancellation): AwaitTurn and Put then
// fail and Take returns nothing, so no thread waits for a chunk that will
// never be handed on.
//
// Thread-safety: every method may be called from any thread.
#ifndef FAULTLINE_INPUT_CHUNK_RING_H_
#define FAULTLINE_INPUT_CHUNK_RING_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace faultline::internal {

template <typename Chunk>
class ChunkRing {
 public:
  struct Taken {
    uint64_t seq;  // 0, 1, 2, ... in the order the chunks were put
    Chunk chunk;
  };
  // How often each side found the other behind (for tests and benchmarks).
  struct Waits {
    uint64_t reader = 0;   // Put found the ring full
    uint64_t scanner = 0;  // Take found it empty and still open
  };

  explicit ChunkRing(size_t depth) : depth_(depth > 0 ? depth : 1) {}
  ChunkRing(const ChunkRing&) = delete;
  ChunkRing& operator=(const ChunkRing&) = delete;

  // Queues `c` unless `depth` chunks wait already (then false, c untouched)
  // or the ring was aborted (false).
  bool TryPut(Chunk& c) {
    std::lock_guard<std::mutex> lock(mu_);
    if (aborted_ || queue_.size() >= depth_) return false;
    queue_.push_back(Taken{put_++, std::move(c)});
    cv_.notify_all();
    return true;
  }
  // Queues `c`, waiting for room; false when the ring was aborted.
  bool Put(Chunk c) {
    std::unique_lock<std::mutex> lock(mu_);
    if (queue_.size() >= depth_) ++waits_.reader;
    cv_.wait(lock, [&] { return aborted_ || queue_.size() < depth_; });
    if (aborted_) return false;
    queue_.push_back(Taken{put_++, std::move(c)});
    cv_.notify_all();
    return true;
  }
  // No more chunks will be put.
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }
  // The oldest chunk, waiting for one; nothing once the ring is closed and
  // empty, or aborted.
  std::optional<Taken> Take() {
    std::unique_lock<std::mutex> lock(mu_);
    if (queue_.empty() && !closed_ && !aborted_) ++waits_.scanner;
    cv_.wait(lock, [&] { return aborted_ || closed_ || !queue_.empty(); });
    return PopLocked();
  }
  // The oldest chunk if one waits.
  std::optional<Taken> TryTake() {
    std::lock_guard<std::mutex> lock(mu_);
    return PopLocked();
  }

  // Waits until every chunk before `seq` has passed; false when aborted.
  bool AwaitTurn(uint64_t seq) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return aborted_ || passed_ == seq; });
    return !aborted_;
  }
  // The chunk whose turn it is has been handed on.
  void Pass() {
    std::lock_guard<std::mutex> lock(mu_);
    ++passed_;
    cv_.notify_all();
  }
  // Waits until every chunk put has passed (or the ring was aborted).
  void AwaitAllPassed() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return aborted_ || (closed_ && passed_ == put_); });
  }

  void Abort() {
    std::lock_guard<std::mutex> lock(mu_);
    aborted_ = true;
    queue_.clear();
    cv_.notify_all();
  }
  bool aborted() const {
    std::lock_guard<std::mutex> lock(mu_);
    return aborted_;
  }

  // A buffer of at least `size` bytes: one given back by Recycle when there
  // is one (its bytes are stale), else a new one.
  std::string Buffer(size_t size) {
    std::string b;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        b = std::move(free_.back());
        free_.pop_back();
      }
    }
    if (b.size() < size) b.resize(size);
    return b;
  }
  // Keeps a chunk's buffer for Buffer (at most depth + 4 of them).
  void Recycle(std::string b) {
    std::lock_guard<std::mutex> lock(mu_);
    if (free_.size() < depth_ + 4) free_.push_back(std::move(b));
  }

  Waits waits() const {
    std::lock_guard<std::mutex> lock(mu_);
    return waits_;
  }

 private:
  std::optional<Taken> PopLocked() {
    if (aborted_ || queue_.empty()) return std::nullopt;
    Taken t = std::move(queue_.front());
    queue_.pop_front();
    cv_.notify_all();
    return t;
  }

  const size_t depth_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Taken> queue_;
  std::vector<std::string> free_;
  uint64_t put_ = 0, passed_ = 0;
  bool closed_ = false, aborted_ = false;
  Waits waits_;
};

}  // namespace faultline::internal

#endif  // FAULTLINE_INPUT_CHUNK_RING_H_
