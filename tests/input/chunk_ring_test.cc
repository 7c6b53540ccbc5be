// ChunkRing: results leave in the order the chunks were put whatever thread
// takes them, a full ring holds its reader back, Abort releases every
// waiter, and buffers come back for reuse.
#include "input/chunk_ring.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace faultline::internal {
namespace {

TEST(ChunkRing, ResultsInPutOrderWhicheverThreadTakes) {
  constexpr int kChunks = 2000;
  ChunkRing<int> ring(2);
  std::vector<int> passed;
  // Work of uneven length, so that chunks finish out of order.
  auto scan_and_pass = [&](ChunkRing<int>::Taken& c) {
    volatile unsigned spin = 0;
    for (int i = 0; i < (c.chunk * 7919) % 5000; ++i) spin = spin + 1;
    ASSERT_TRUE(ring.AwaitTurn(c.seq));
    passed.push_back(c.chunk);
    ring.Pass();
  };
  std::vector<std::thread> helpers;
  for (int h = 0; h < 3; ++h) {
    helpers.emplace_back([&] {
      while (auto c = ring.Take()) scan_and_pass(*c);
    });
  }
  // The reader scans the oldest chunk itself while the ring is full.
  for (int i = 0; i < kChunks; ++i) {
    int c = i;
    while (!ring.TryPut(c)) {
      if (auto t = ring.TryTake()) scan_and_pass(*t);
    }
  }
  ring.Close();
  while (auto c = ring.Take()) scan_and_pass(*c);
  ring.AwaitAllPassed();
  for (auto& th : helpers) th.join();
  ASSERT_EQ(passed.size(), size_t{kChunks});
  for (int i = 0; i < kChunks; ++i) ASSERT_EQ(passed[i], i);
}

TEST(ChunkRing, FullRingHoldsTheReaderBack) {
  ChunkRing<int> ring(2);
  int a = 0, b = 1, c = 2;
  EXPECT_TRUE(ring.TryPut(a));
  EXPECT_TRUE(ring.TryPut(b));
  EXPECT_FALSE(ring.TryPut(c));  // full: c stays with the reader
  EXPECT_EQ(c, 2);
  std::atomic<bool> put{false};
  std::thread reader([&] {
    EXPECT_TRUE(ring.Put(3));
    put = true;
  });
  // The reader cannot get past a full ring until a chunk is taken.
  while (ring.waits().reader == 0) std::this_thread::yield();
  EXPECT_FALSE(put.load());
  auto first = ring.Take();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->seq, 0u);
  EXPECT_EQ(first->chunk, 0);
  reader.join();
  EXPECT_TRUE(put.load());
  ring.Close();
  std::vector<int> rest;
  while (auto t = ring.Take()) rest.push_back(t->chunk);
  EXPECT_EQ(rest, (std::vector<int>{1, 3}));
}

TEST(ChunkRing, AbortReleasesEveryWaiter) {
  ChunkRing<int> ring(1);
  EXPECT_TRUE(ring.Put(0));
  std::thread put([&] { EXPECT_FALSE(ring.Put(1)); });         // ring full
  std::thread turn([&] { EXPECT_FALSE(ring.AwaitTurn(5)); });  // 0..4 never pass
  ChunkRing<int> empty(1);
  std::thread take([&] { EXPECT_FALSE(empty.Take().has_value()); });
  while (ring.waits().reader == 0 || empty.waits().scanner == 0) std::this_thread::yield();
  ring.Abort();
  empty.Abort();
  put.join();
  turn.join();
  take.join();
  EXPECT_FALSE(ring.TryTake().has_value());  // queued chunks are dropped
  int c = 2;
  EXPECT_FALSE(ring.TryPut(c));
}

TEST(ChunkRing, ClosedAndEmptyEndsTake) {
  ChunkRing<int> ring(4);
  std::thread take([&] { EXPECT_FALSE(ring.Take().has_value()); });
  while (ring.waits().scanner == 0) std::this_thread::yield();
  ring.Close();
  take.join();
  ring.AwaitAllPassed();  // nothing put: returns at once
}

TEST(ChunkRing, BuffersAreReused) {
  ChunkRing<int> ring(2);
  std::string b = ring.Buffer(1000);
  EXPECT_GE(b.size(), 1000u);
  const char* data = b.data();
  ring.Recycle(std::move(b));
  std::string again = ring.Buffer(500);
  EXPECT_EQ(again.data(), data);
  EXPECT_GE(again.size(), 1000u);          // kept whole
  std::string bigger = ring.Buffer(4000);  // none left: a new one
  EXPECT_GE(bigger.size(), 4000u);
}

}  // namespace
}  // namespace faultline::internal
