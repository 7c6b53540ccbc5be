// ChunkRing and InOrder: results leave in the order the chunks were put
// whatever thread takes them, a reader that puts past the depth scans the
// oldest chunk and leaves the next one waiting, a finished chunk never waits
// for an earlier one, Abort releases every waiter, and buffers come back
// for reuse.
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
  InOrder<int> order;
  std::vector<int> passed;  // only ever appended to by the thread handing on
  // Work of uneven length, so that chunks finish out of order.
  auto scan_and_pass = [&](ChunkRing<int>::Taken& c) {
    volatile unsigned spin = 0;
    for (int i = 0; i < (c.chunk * 7919) % 5000; ++i) spin = spin + 1;
    order.Done(c.seq, c.chunk, [&](int r) { passed.push_back(r); });
  };
  std::vector<std::thread> helpers;
  for (int h = 0; h < 3; ++h) {
    helpers.emplace_back([&] {
      while (auto c = ring.Take()) scan_and_pass(*c);
    });
  }
  // The reader scans the oldest chunk itself when too many wait.
  for (int i = 0; i < kChunks; ++i) {
    if (auto t = ring.PutTakingOldest(i)) scan_and_pass(*t);
  }
  ring.Close();
  while (auto c = ring.Take()) scan_and_pass(*c);
  order.AwaitAll(ring.put());
  for (auto& th : helpers) th.join();
  ASSERT_EQ(passed.size(), size_t{kChunks});
  for (int i = 0; i < kChunks; ++i) ASSERT_EQ(passed[i], i);
}

TEST(ChunkRing, PutPastTheDepthTakesTheOldestAndLeavesTheRestWaiting) {
  ChunkRing<int> ring(2);
  EXPECT_FALSE(ring.PutTakingOldest(0).has_value());
  EXPECT_FALSE(ring.PutTakingOldest(1).has_value());
  // A third: the reader gets the oldest back to scan, and two still wait,
  // so a scanner finishing its chunk now finds the next one at once.
  auto back = ring.PutTakingOldest(2);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->seq, 0u);
  EXPECT_EQ(back->chunk, 0);
  EXPECT_EQ(ring.waits().reader, 1u);
  // One waiting, depth one: the reader never takes the only waiting chunk.
  ChunkRing<int> one(1);
  EXPECT_FALSE(one.PutTakingOldest(7).has_value());
  auto old = one.PutTakingOldest(8);
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->chunk, 7);
  auto next = one.Take();
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->chunk, 8);
  EXPECT_EQ(one.waits().scanner, 0u);
  ring.Close();
  std::vector<int> rest;
  while (auto t = ring.Take()) rest.push_back(t->chunk);
  EXPECT_EQ(rest, (std::vector<int>{1, 2}));
  EXPECT_EQ(ring.put(), 3u);
}

TEST(InOrder, ALaterChunkDoesNotWaitForAnEarlierOne) {
  InOrder<std::string> order;
  std::vector<std::string> out;
  auto hand_on = [&](std::string s) { out.push_back(std::move(s)); };
  // On one thread: chunk 1 is filed and Done returns at once (waiting for
  // chunk 0's turn here would never end); chunk 0 then hands on both.
  order.Done(1, "b", hand_on);
  order.Done(2, "c", hand_on);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(order.handed_on(), 0u);
  order.Done(0, "a", hand_on);
  EXPECT_EQ(out, (std::vector<std::string>{"a", "b", "c"}));
  order.AwaitAll(3);  // all handed on: returns at once
  order.Done(4, "e", hand_on);
  EXPECT_EQ(out.size(), 3u);
}

TEST(InOrder, AnotherThreadHandsOnWhatWasFiledMeanwhile) {
  InOrder<int> order;
  std::vector<int> out;
  std::atomic<bool> in_hand_on{false}, release{false};
  std::thread first([&] {
    order.Done(0, 0, [&](int r) {
      out.push_back(r);
      if (r == 0) {
        in_hand_on = true;
        while (!release.load()) std::this_thread::yield();
      }
    });
  });
  while (!in_hand_on.load()) std::this_thread::yield();
  // Thread `first` is handing on 0: chunk 1 is filed, and `first` hands it
  // on after 0 without this thread waiting.
  order.Done(1, 1, [&](int r) { out.push_back(r + 100); });
  release = true;
  first.join();
  order.AwaitAll(2);
  EXPECT_EQ(out, (std::vector<int>{0, 1}));
}

TEST(ChunkRing, AbortReleasesEveryWaiter) {
  ChunkRing<int> empty(1);
  InOrder<int> order;
  std::thread take([&] { EXPECT_FALSE(empty.Take().has_value()); });
  std::thread all([&] { order.AwaitAll(5); });  // 0..4 never finish
  while (empty.waits().scanner == 0) std::this_thread::yield();
  empty.Abort();
  order.Abort();
  take.join();
  all.join();
  ChunkRing<int> ring(2);
  EXPECT_FALSE(ring.PutTakingOldest(0).has_value());
  ring.Abort();
  EXPECT_FALSE(ring.Take().has_value());  // queued chunks are dropped
  EXPECT_FALSE(ring.PutTakingOldest(1).has_value());
  EXPECT_TRUE(ring.aborted());
  int handed = 0;
  order.Done(0, 0, [&](int) { ++handed; });
  EXPECT_EQ(handed, 0);  // after Abort nothing is handed on
}

TEST(ChunkRing, ClosedAndEmptyEndsTake) {
  ChunkRing<int> ring(4);
  std::thread take([&] { EXPECT_FALSE(ring.Take().has_value()); });
  while (ring.waits().scanner == 0) std::this_thread::yield();
  ring.Close();
  take.join();
  InOrder<int> order;
  order.AwaitAll(ring.put());  // nothing put: returns at once
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
