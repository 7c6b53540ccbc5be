// ReadAhead hands on a stream's bytes in order, whatever the sizes its
// reader and the source use, and the source's error after the bytes before
// it; a compressed file scanned with a worker to spare (read ahead) gives
// what one thread gives.
#include "scan/read_ahead.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "scan_test_util.h"

namespace faultline {
namespace {

using internal::ReadAhead;
using namespace scantest;

// A stream of `text` in pieces of 1..7 bytes, then `error` (if any).
class PiecesSource : public Source {
 public:
  PiecesSource(std::string text, absl::Status error)
      : Source("pieces"), text_(std::move(text)), error_(std::move(error)) {}
  SourceKind kind() const override { return SourceKind::kStream; }
  absl::StatusOr<size_t> Read(char* buf, size_t cap) override {
    if (pos_ == text_.size()) {
      if (!error_.ok()) return error_;
      return size_t{0};
    }
    size_t n = std::min({cap, text_.size() - pos_, size_t{1} + (pos_ % 7)});
    text_.copy(buf, n, pos_);
    pos_ += n;
    return n;
  }

 private:
  std::string text_;
  absl::Status error_;
  size_t pos_ = 0;
};

std::string Numbers(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += std::to_string(i) + "\n";
  return s;
}

TEST(ReadAhead, SameBytesThenTheError) {
  const std::string text = Numbers(20000);
  for (size_t block : {1u, 5u, 4096u, 1u << 20}) {
    for (absl::Status err : {absl::OkStatus(), absl::DataLossError("pieces: truncated")}) {
      PiecesSource src(text, err);
      ReadAhead ra(src, block, 3);
      std::string got;
      absl::Status end;
      char buf[333];
      while (true) {
        absl::StatusOr<size_t> n = ra.Read(buf, 1 + got.size() % sizeof buf);
        if (!n.ok()) {
          end = n.status();
          break;
        }
        if (*n == 0) break;
        got.append(buf, *n);
      }
      EXPECT_EQ(got, text) << "block " << block;
      EXPECT_EQ(end, err) << "block " << block;
    }
  }
}

TEST(ReadAhead, StopsWhenDroppedEarly) {
  PiecesSource src(Numbers(100000), absl::OkStatus());
  ReadAhead ra(src, 64, 2);
  char buf[10];
  ASSERT_TRUE(ra.Read(buf, sizeof buf).ok());
}  // the destructor joins a reader waiting for room

TEST(ReadAhead, CompressedFileScansAsWithOneThread) {
  TempDir dir;
  const std::string text = JobLog(3, 6 << 20);
  WriteFile(dir / "job.log.gz", Gzip(text));
  auto rs = TestRules();
  ScanResult one = ScanFiles(rs, {dir / "job.log.gz"}, BigCaps(1));
  ScanResult two = ScanFiles(rs, {dir / "job.log.gz"}, BigCaps(2));  // read ahead
  ASSERT_GT(one.evidence.size(), 0u);
  ASSERT_EQ(one.evidence.size(), two.evidence.size());
  for (size_t i = 0; i < one.evidence.size(); ++i) {
    EXPECT_EQ(one.evidence[i].offset, two.evidence[i].offset);
    EXPECT_EQ(one.evidence[i].line, two.evidence[i].line);
    EXPECT_EQ(one.evidence[i].text, two.evidence[i].text);
  }
  EXPECT_EQ(one.sources[0].lines, two.sources[0].lines);
  EXPECT_EQ(one.sources[0].bytes, two.sources[0].bytes);
}

}  // namespace
}  // namespace faultline
