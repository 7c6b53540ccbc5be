#include "scan/read_ahead.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace faultline::internal {

ReadAhead::ReadAhead(Source& inner, size_t block, size_t blocks)
    : inner_(inner), block_(std::max<size_t>(block, 1)), blocks_(std::max<size_t>(blocks, 1)) {
  thread_ = std::thread([this] { Run(); });
}

ReadAhead::~ReadAhead() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void ReadAhead::Run() {
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || full_.size() < blocks_; });
      if (stop_) break;
    }
    std::string b(block_, '\0');
    size_t have = 0;
    absl::Status error;
    // Fill the block (a decoder returns less than asked at a frame's end).
    while (have < block_) {
      absl::StatusOr<size_t> n = inner_.Read(b.data() + have, block_ - have);
      if (!n.ok()) {
        error = n.status();
        break;
      }
      if (*n == 0) break;
      have += *n;
    }
    const bool end = !error.ok() || have < block_;
    b.resize(have);
    const std::optional<uint64_t> compressed_read = inner_.compressed_bytes_read();
    {
      std::lock_guard<std::mutex> lock(mu_);
      compressed_read_ = compressed_read;
      if (have > 0) full_.push_back(std::move(b));
      if (end) {
        error_ = std::move(error);
        done_ = true;
      }
    }
    cv_.notify_all();
    if (end) return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  done_ = true;
}

std::optional<uint64_t> ReadAhead::compressed_bytes_read() {
  std::lock_guard<std::mutex> lock(mu_);
  return compressed_read_;
}

absl::StatusOr<size_t> ReadAhead::Read(char* buf, size_t cap) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return !full_.empty() || done_; });
  if (full_.empty()) {
    if (!error_.ok()) return error_;
    return size_t{0};
  }
  const std::string& b = full_.front();
  const size_t n = std::min(cap, b.size() - front_pos_);
  std::memcpy(buf, b.data() + front_pos_, n);
  front_pos_ += n;
  if (front_pos_ == b.size()) {
    full_.pop_front();
    front_pos_ = 0;
    lock.unlock();
    cv_.notify_all();
  }
  return n;
}

}  // namespace faultline::internal
