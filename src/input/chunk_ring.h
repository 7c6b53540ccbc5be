// A bounded, ordered hand-off of chunks of one stream from the thread that
// reads (decodes) it to the threads that scan it. The reader puts chunks in
// stream order (PutTakingOldest); any thread takes the oldest (Take). At
// most `depth` chunks wait: a put that leaves more takes the oldest back
// out for the reader to scan itself instead of decoding further ahead, so
// on two cores the decoder and the scanner share the work rather than one
// idling, and a scanner done with its chunk still finds the next one
// waiting. Results may finish in any order: InOrder hands them on in
// stream order, on whichever thread completes the run whose turn it is, so
// no thread waits for another's chunk. Buffers come back for reuse
// (Recycle), so a warm ring allocates nothing per chunk. Abort wakes every
// waiter (cancellation): Take then returns nothing, so no thread waits for
// a chunk that will never be handed on.
//
// Thread-safety: every method may be called from any thread.
#ifndef FAULTLINE_INPUT_CHUNK_RING_H_
#define FAULTLINE_INPUT_CHUNK_RING_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
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
    uint64_t reader = 0;   // a put found `depth` chunks waiting already
    uint64_t scanner = 0;  // Take found it empty and still open
  };

  explicit ChunkRing(size_t depth) : depth_(depth > 0 ? depth : 1) {}
  ChunkRing(const ChunkRing&) = delete;
  ChunkRing& operator=(const ChunkRing&) = delete;

  // Queues `c` as the next chunk; when that leaves more than `depth` chunks
  // waiting, takes the oldest back out for the caller to scan. The caller
  // never waits, and the chunk it takes is never the only one waiting (a
  // reader that took the last waiting chunk would leave the scanners idle
  // until it had scanned it and decoded the next). Nothing when the ring
  // was aborted (c dropped).
  std::optional<Taken> PutTakingOldest(Chunk c) {
    std::lock_guard<std::mutex> lock(mu_);
    if (aborted_) return std::nullopt;
    queue_.push_back(Taken{put_++, std::move(c)});
    cv_.notify_all();
    if (queue_.size() <= depth_) return std::nullopt;
    ++waits_.reader;
    return PopLocked();
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
  // How many chunks were put.
  uint64_t put() const {
    std::lock_guard<std::mutex> lock(mu_);
    return put_;
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
  uint64_t put_ = 0;
  bool closed_ = false, aborted_ = false;
  Waits waits_;
};

// The results of chunks 0, 1, 2, ... finished in any order, handed on in
// that order. Done(seq, r, hand_on) files `r`; if it is the turn of `seq`
// and no other thread is handing on, this thread hands on r and every
// later result already filed, one after another (hand_on runs outside the
// lock, so it may wait, e.g. for room in the merge's queue); otherwise it
// returns at once and the thread handing on, or the one whose chunk is
// next, takes r later. No thread waits for another's chunk.
template <typename Result>
class InOrder {
 public:
  template <typename HandOn>
  void Done(uint64_t seq, Result r, HandOn&& hand_on) {
    std::unique_lock<std::mutex> lock(mu_);
    if (aborted_) return;
    filed_.emplace(seq, std::move(r));
    if (handing_on_) return;
    handing_on_ = true;
    while (!aborted_ && !filed_.empty() && filed_.begin()->first == next_) {
      Result next = std::move(filed_.begin()->second);
      filed_.erase(filed_.begin());
      lock.unlock();
      hand_on(std::move(next));
      lock.lock();
      ++next_;
    }
    handing_on_ = false;
    cv_.notify_all();
  }
  // Waits until results 0 .. n-1 have all been handed on (or Abort).
  void AwaitAll(uint64_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return aborted_ || (next_ >= n && !handing_on_); });
  }
  // Drops what is filed and what comes; AwaitAll returns.
  void Abort() {
    std::lock_guard<std::mutex> lock(mu_);
    aborted_ = true;
    filed_.clear();
    cv_.notify_all();
  }
  uint64_t handed_on() const {
    std::lock_guard<std::mutex> lock(mu_);
    return next_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, Result> filed_;
  uint64_t next_ = 0;
  bool handing_on_ = false, aborted_ = false;
};

}  // namespace faultline::internal

#endif  // FAULTLINE_INPUT_CHUNK_RING_H_
