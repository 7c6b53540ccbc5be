// Planning: where a mapped source (a whole file, or a byte range of one) is
// cut into chunks for the worker threads: the same cuts for ScanPaths and
// ScanRange.
#include <algorithm>
#include <cstring>

#include "scan/scan_impl.h"
#include "util/strings.h"

namespace faultline::internal {

std::vector<uint64_t> ChunkCuts(std::string_view all, uint64_t begin, uint64_t end,
                                size_t chunk_bytes, const SourceFraming& framing,
                                uint64_t tail_span, size_t tail_chunk_bytes) {
  std::vector<uint64_t> cuts{begin};
  for (uint64_t pos = begin; pos < end;) {
    uint64_t stop = end;
    const size_t size = tail_chunk_bytes > 0 && end - pos <= tail_span ? tail_chunk_bytes : chunk_bytes;
    if (end - pos > size) {
      const void* nl = std::memchr(all.data() + pos + size, '\n', end - pos - size);
      if (nl) {
        stop = static_cast<uint64_t>(static_cast<const char*>(nl) - all.data()) + 1;
        // Never inside a run of CRI partial or wrapped lines.
        stop = std::min<uint64_t>(end, framing.BoundaryAfter(all, stop));
      }
    }
    cuts.push_back(stop);
    pos = stop;
  }
  return cuts;
}

// With chunks of 16 MiB, 77 MB on two workers: 6 chunks of 12.9 MB, not
// four of 16 MiB and one of 10 MB, three of which one worker scans while the
// other waits (and the last two of the six in quarters, TailChunks).
size_t EvenChunkBytes(uint64_t bytes, size_t chunk_bytes, unsigned workers) {
  if (chunk_bytes == 0 || workers == 0) return chunk_bytes;
  if (bytes <= chunk_bytes) {
    if (workers < 2 || bytes <= kSplitFile) return chunk_bytes;
    return static_cast<size_t>((bytes + workers - 1) / workers);
  }
  uint64_t n = (bytes + chunk_bytes - 1) / chunk_bytes;
  n = (n + workers - 1) / workers * workers;
  return static_cast<size_t>((bytes + n - 1) / n);
}

std::pair<uint64_t, size_t> TailChunks(uint64_t bytes, size_t chunk_bytes, unsigned workers) {
  if (workers < 2 || chunk_bytes < 4 || bytes <= chunk_bytes) return {0, 0};
  return {uint64_t{workers} * chunk_bytes, chunk_bytes / 4};
}

}  // namespace faultline::internal

namespace faultline {

bool Scanner::Impl::PlanChunks(uint32_t src, const std::shared_ptr<Source>& shared, uint64_t begin, uint64_t end,
                               std::vector<std::unique_ptr<Task>>& tasks) {
  std::string_view all = shared->mapped();
  std::vector<uint64_t> cuts;
  if (!GuardedRead(all.data(), all.size(), [&] {
        const unsigned workers = internal::Workers(opts);
        const size_t chunk = internal::EvenChunkBytes(end - begin, opts.chunk_bytes, workers);
        const auto [tail_span, tail_chunk] = internal::TailChunks(end - begin, chunk, workers);
        cuts = internal::ChunkCuts(all, begin, end, chunk, states[src]->framing, tail_span, tail_chunk);
      })) {
    Fail(src, StrCat(shared->name(), ": the file shrank while it was being read"), -3);
    return false;
  }
  for (size_t k = 0; k + 1 < cuts.size(); ++k) {
    auto t = std::make_unique<Task>();
    t->source = src;
    t->shared = shared;
    t->begin = cuts[k];
    t->end = cuts[k + 1];
    t->last_chunk = k + 2 == cuts.size();
    tasks.push_back(std::move(t));
  }
  return true;
}

void Scanner::Impl::PlanCarryLookback(uint32_t src, const std::shared_ptr<Source>& shared, uint64_t begin,
                                      std::vector<std::unique_ptr<Task>>& tasks) {
  // At most this many bytes back: a lookback over a few huge lines stays
  // cheap (what lies further back is out of a block's reach anyway).
  constexpr uint64_t kLookbackBytes = 256 << 10;
  if (begin == 0) return;
  std::string_view all = shared->mapped();
  const uint64_t floor = begin > kLookbackBytes ? begin - kLookbackBytes : 0;
  uint64_t from = begin;  // a line start
  if (!GuardedRead(all.data(), all.size(), [&] {
        for (uint64_t n = 0; n < kCarryLookbackLines && from > floor; ++n) {
          // The line before `from` starts past the newline before its own.
          const void* nl = from - 1 > floor ? memrchr(all.data() + floor, '\n', from - 1 - floor) : nullptr;
          if (nl == nullptr) {
            if (floor == 0) from = 0;
            break;
          }
          from = static_cast<uint64_t>(static_cast<const char*>(nl) - all.data()) + 1;
        }
        // Never inside a run of CRI partial or wrapped lines.
        from = std::min(begin, states[src]->framing.BoundaryAfter(all, from));
      })) {
    return;  // the range's own chunks meet the fault and report it
  }
  if (from == begin) return;
  auto t = std::make_unique<Task>();
  t->source = src;
  t->shared = shared;
  t->begin = from;
  t->end = begin;
  t->last_chunk = false;
  t->carry_only = true;
  tasks.insert(tasks.begin(), std::move(t));
}

}  // namespace faultline
