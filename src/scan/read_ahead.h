// A stream source (a compressed file) read ahead on a thread of its own: the
// decoder fills a ring of blocks while the scanning worker takes them, so a
// .gz or .zst file scans at the slower of inflating and scanning rather than
// their sum. The bytes, their order, and where an error stops them are the
// source's own.
#ifndef FAULTLINE_SCAN_READ_AHEAD_H_
#define FAULTLINE_SCAN_READ_AHEAD_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "input/input.h"

namespace faultline::internal {

class ReadAhead {
 public:
  // Starts reading `inner` (which must outlive this object) in blocks of
  // `block` bytes, at most `blocks` of them ahead of Read.
  ReadAhead(Source& inner, size_t block, size_t blocks);
  // Stops the reader (after its current block) and joins it.
  ~ReadAhead();
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // As Source::Read: up to cap bytes, 0 at the end, the source's error once
  // the bytes before it are taken.
  absl::StatusOr<size_t> Read(char* buf, size_t cap);
  // The inner source's compressed_bytes_read() as of the last block read
  // ahead (the inner source is the reader thread's, so it is sampled there).
  std::optional<uint64_t> compressed_bytes_read();

 private:
  void Run();

  Source& inner_;
  const size_t block_, blocks_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> full_;  // filled blocks, in order
  size_t front_pos_ = 0;          // bytes of full_.front() already taken
  bool done_ = false;             // the reader has stopped: end or error
  bool stop_ = false;
  absl::Status error_;
  std::optional<uint64_t> compressed_read_;
  std::thread thread_;
};

}  // namespace faultline::internal

#endif  // FAULTLINE_SCAN_READ_AHEAD_H_
