// Planning: where a mapped source (a whole file, or a byte range of one) is
// cut into chunks for the worker threads.
#include <cstring>

#include "scan/scan_impl.h"

namespace faultline::internal {

std::vector<uint64_t> ChunkCuts(std::string_view all, uint64_t begin, uint64_t end,
                                size_t chunk_bytes, const SourceFraming& framing) {
  std::vector<uint64_t> cuts{begin};
  for (uint64_t pos = begin; pos < end;) {
    uint64_t stop = end;
    if (end - pos > chunk_bytes) {
      const void* nl = std::memchr(all.data() + pos + chunk_bytes, '\n', end - pos - chunk_bytes);
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

}  // namespace faultline::internal
