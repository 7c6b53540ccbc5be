// LineCarry: a block's, a section's and an environment dump's word given to
// the lines after it, and the links it teaches.

#include <string>
#include <utility>
#include <vector>

#include "attribution/carry.h"
#include "gtest/gtest.h"

namespace faultline {
namespace {

using Fields = LineCarry::Fields;

struct Fed {
  Attribution a;
  std::string pod;
  CarryLinks links;
};

Fed Feed(LineCarry& c, uint64_t line, Fields fields, Attribution a = {}, bool has_pod = false) {
  Fed f;
  f.a = std::move(a);
  f.links = c.Apply(line, fields, f.a, has_pod ? nullptr : &f.pod);
  return f;
}

TEST(ParseRankList, PythonLists) {
  EXPECT_EQ(ParseRankList("[0, 1, 2, 3]"), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(ParseRankList("[8,9]"), (std::vector<int64_t>{8, 9}));
  EXPECT_TRUE(ParseRankList("[]").empty());
  EXPECT_TRUE(ParseRankList("[1, x]").empty());
  EXPECT_TRUE(ParseRankList("[1, 2").empty());
  EXPECT_TRUE(ParseRankList("1, 2]").empty());
}

// torchrun's ChildFailedError entries: host, then rank, then exitcode (pid).
TEST(LineCarry, FailureEntryLinksPidToRankAndHost) {
  LineCarry c;
  Feed(c, 10, {{"block_host", "node01.cluster.internal"}});
  Attribution rank_line;
  rank_line.rank = 27;
  Feed(c, 11, {{"block_rank", "27"}, {"block_local_rank", "3"}}, rank_line);
  Attribution exit_line;
  exit_line.pid = 4015788;
  Fed f = Feed(c, 12, {{"exitcode", "-9"}}, exit_line);
  EXPECT_EQ(f.a.rank, 27);
  EXPECT_EQ(f.a.local_rank, 3);
  EXPECT_EQ(f.a.host, "node01");
  EXPECT_EQ(f.a.pid, 4015788);
  // The next entry restates the host: the previous rank does not leak.
  Feed(c, 17, {{"block_host", "node01"}});
  Fed g = Feed(c, 18, {});
  EXPECT_FALSE(g.a.rank.has_value());
  EXPECT_EQ(g.a.host, "node01");
  // Far past the block, nothing is carried.
  Fed h = Feed(c, 18 + kBlockLines + 1, {});
  EXPECT_TRUE(h.a.host.empty());
}

TEST(LineCarry, AnotherProcessIsNotTheBlocks) {
  LineCarry c;
  Feed(c, 1, {{"block_host", "node01"}});
  Feed(c, 2, {{"block_rank", "27"}, {"block_local_rank", "3"}});
  Attribution worker0;
  worker0.local_rank = 0;
  Fed f = Feed(c, 5, {}, worker0);
  EXPECT_FALSE(f.a.rank.has_value());
  EXPECT_TRUE(f.a.host.empty());
  Attribution worker3;
  worker3.local_rank = 3;
  EXPECT_EQ(Feed(c, 6, {}, worker3).a.rank, 27);
  LineCarry dump;
  Feed(dump, 1, {{"block_pid", "100"}});
  Attribution other_pid;
  other_pid.pid = 200;
  EXPECT_EQ(Feed(dump, 2, {}, other_pid).a.pid, 200);
}

TEST(LineCarry, LineKeepsWhatItSaysItself) {
  LineCarry c;
  Feed(c, 1, {{"block_host", "node01"}, {"block_rank", "3"}});
  Attribution own;
  own.rank = 5;
  own.host = "node02";
  Fed f = Feed(c, 2, {}, own);
  EXPECT_EQ(f.a.rank, 5);
  EXPECT_EQ(f.a.host, "node02");
}

// A py-spy dump: the pid of "Process N:" holds for the thread stacks below.
TEST(LineCarry, PySpyProcessHoldsForItsStacks) {
  LineCarry c;
  Fed p = Feed(c, 1, {{"pid", "4015788"}, {"block_pid", "4015788"}});
  EXPECT_EQ(p.a.pid, 4015788);
  EXPECT_EQ(Feed(c, 4, {}).a.pid, 4015788);
  Feed(c, 20, {{"block_pid", "4015789"}});
  EXPECT_EQ(Feed(c, 22, {}).a.pid, 4015789);
}

// kubectl describe pods: "Reason: OOMKilled" belongs to the section's pod.
TEST(LineCarry, DescribeSectionPod) {
  LineCarry c;
  Feed(c, 1, {{"pod", "trainer-worker-0"}, {"section_pod", "trainer-worker-0"}}, {}, true);
  EXPECT_EQ(Feed(c, 30, {}).pod, "trainer-worker-0");
  Feed(c, 40, {{"section_pod", "trainer-worker-1"}});
  EXPECT_EQ(Feed(c, 400, {}).pod, "trainer-worker-1");
  // A line naming its own host or pod keeps it.
  Attribution hosted;
  hosted.host = "gpu-node-3";
  EXPECT_TRUE(Feed(c, 401, {}, hosted).pod.empty());
  EXPECT_TRUE(Feed(c, 402, {}, {}, true).pod.empty());
}

// srun -l: "  3: SLURMD_NODENAME=gpu-003" is rank 3's host, not the file's.
TEST(LineCarry, LabelledEnvironmentIsTheRanks) {
  LineCarry c;
  Attribution labelled;
  labelled.rank = 3;
  Fed host = Feed(c, 1, {{"file_host", "gpu-003"}}, labelled);
  EXPECT_EQ(host.links.rank, 3);
  EXPECT_EQ(host.links.host, "gpu-003");
  EXPECT_EQ(host.a.host, "gpu-003");
  Fed pid = Feed(c, 2, {{"file_pid", "418630"}}, labelled);
  EXPECT_EQ(pid.links.rank, 3);
  EXPECT_EQ(pid.links.pid, 418630);
  // Another task's line does not take rank 3's host.
  Attribution other;
  other.rank = 9;
  EXPECT_TRUE(Feed(c, 3, {}, other).a.host.empty());
  EXPECT_TRUE(Feed(c, 4, {}).a.host.empty());
}

// An unlabelled dump (a task's own file, or the batch script's output, which
// holds other tasks' lines too): rank, host and pid are links only.
TEST(LineCarry, FileEnvironmentLinksInAnyOrder) {
  LineCarry c;
  Feed(c, 1, {{"file_local_rank", "2"}});
  Fed first = Feed(c, 1, {{"file_pid", "418630"}});
  EXPECT_FALSE(first.links.rank.has_value());
  Feed(c, 2, {{"file_host", "cn1"}});
  Fed rank = Feed(c, 3, {{"file_rank", "0"}});
  EXPECT_EQ(rank.links.rank, 0);
  EXPECT_EQ(rank.links.host, "cn1");
  EXPECT_EQ(rank.links.pid, 418630);
  EXPECT_EQ(rank.links.local_rank, 2);
  Fed later = Feed(c, 50, {});
  EXPECT_TRUE(later.a.host.empty());
  EXPECT_FALSE(later.a.rank.has_value());
  EXPECT_FALSE(later.a.pid.has_value());
  Attribution ranked;
  ranked.rank = 5;
  EXPECT_TRUE(Feed(c, 51, {}, ranked).a.host.empty());
}

// The elastic agent's rendezvous result pairs local and global ranks on the
// agent's host.
TEST(LineCarry, RendezvousRanks) {
  LineCarry c;
  Attribution on_host;
  on_host.host = "gpu-007";
  Feed(c, 5, {{"local_ranks", "[0, 1, 2, 3]"}}, on_host);
  Fed g = Feed(c, 7, {{"global_ranks", "[4, 5, 6, 7]"}}, on_host);
  ASSERT_EQ(g.links.local_global.size(), 4u);
  EXPECT_EQ(g.links.local_global[2], (std::pair<int64_t, int64_t>{2, 6}));
  EXPECT_EQ(g.links.host, "gpu-007");
  // Lists of different lengths, or a global list long after, pair nothing.
  Feed(c, 20, {{"local_ranks", "[0, 1]"}}, on_host);
  EXPECT_TRUE(Feed(c, 21, {{"global_ranks", "[4, 5, 6]"}}, on_host).links.local_global.empty());
  Feed(c, 30, {{"local_ranks", "[0, 1]"}}, on_host);
  EXPECT_TRUE(Feed(c, 300, {{"global_ranks", "[4, 5]"}}, on_host).links.local_global.empty());
  // Without a host the pairs say nothing.
  Feed(c, 400, {{"local_ranks", "[0, 1]"}});
  EXPECT_TRUE(Feed(c, 401, {{"global_ranks", "[4, 5]"}}).links.local_global.empty());
}

// Open MPI's job map (mpirun --display-map): a node's line, then one line
// per process placed on it, each naming its rank only.
TEST(LineCarry, JobMapLinksEachRankToTheNodeAbove) {
  LineCarry c;
  EXPECT_FALSE(Feed(c, 3, {{"map_rank", "0"}}).links.rank);  // no node yet
  Feed(c, 10, {{"map_host", "node01"}});
  Fed r0 = Feed(c, 11, {{"map_rank", "0"}});
  ASSERT_TRUE(r0.links.rank);
  EXPECT_EQ(*r0.links.rank, 0);
  EXPECT_EQ(r0.links.host, "node01");
  EXPECT_TRUE(r0.a.host.empty());  // a link, not the line's host
  Feed(c, 12, {{"map_host", "node02"}});
  Fed r1 = Feed(c, 13, {{"map_rank", "1"}});
  EXPECT_EQ(r1.links.host, "node02");
  // Lines after the map take no host from it.
  EXPECT_TRUE(Feed(c, 14, {{"rank", "7"}}).a.host.empty());
  // A process line far below the last one is no part of that node's list.
  EXPECT_FALSE(Feed(c, 14 + 2 * kBlockLines, {{"map_rank", "2"}}).links.rank);
}

// DeepSpeed's launcher prints the whole job's mapping on every node:
// host -> global ranks, the i-th being local rank i.
// The merge skips Apply for a line whose captures Apply does not read while
// nothing is carried (scan/keep.cc): States must name every capture that
// teaches something, and none that does not.
TEST(LineCarry, StatesNamesWhatApplyReads) {
  const Fields teaching[] = {{{"block_host", "node01"}},   {{"block_rank", "3"}},     {{"block_local_rank", "3"}},
                             {{"block_pid", "1234"}},      {{"file_host", "node01"}}, {{"file_rank", "3"}},
                             {{"file_local_rank", "3"}},   {{"file_pid", "1234"}},    {{"section_pod", "pod-0"}},
                             {{"local_ranks", "[0, 1]"}},  {{"rank_mapping", "{'node01': [0, 1]}"}},
                             {{"map_host", "node01"}}};
  for (const Fields& f : teaching) {
    LineCarry c;
    ASSERT_TRUE(c.Blank());
    Fed fed = Feed(c, 1, f);
    EXPECT_TRUE(!c.Blank() || fed.links.rank || !fed.links.host_ranks.empty()) << f[0].first;
    EXPECT_TRUE(LineCarry::States(f)) << f[0].first;
  }
  EXPECT_TRUE(LineCarry::States({{"global_ranks", "[8, 9]"}}));
  const Fields plain = {{"rank", "3"}, {"pid", "1234"}, {"host", "node01"}, {"seq", "7"}, {"comm_id", "0x1"}};
  EXPECT_FALSE(LineCarry::States(plain));
  LineCarry c;
  Attribution a;
  a.rank = 3;
  Fed fed = Feed(c, 1, plain, a);
  EXPECT_TRUE(c.Blank());
  EXPECT_EQ(fed.a.rank, 3);
  EXPECT_FALSE(fed.a.pid);
  EXPECT_TRUE(fed.a.host.empty());
  EXPECT_FALSE(fed.links.rank);
}

TEST(ParseRankMapping, DeepSpeedGlobalRankMapping) {
  auto m = ParseRankMapping("{'worker-0': [0, 1], 'worker-1': [2, 3]}");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].first, "worker-0");
  EXPECT_EQ(m[1].second, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ParseRankMapping("{\"gpu-001\": [8]}").size(), 1u);
  EXPECT_EQ(ParseRankMapping("{'worker-0': [0, 1], 'worker-1': [2,").size(), 1u);  // cut short
  EXPECT_TRUE(ParseRankMapping("{'worker-0' [0]}").empty());
  EXPECT_TRUE(ParseRankMapping("{'worker-0': []}").empty());
  EXPECT_TRUE(ParseRankMapping("[0, 1]").empty());
}

TEST(LineCarry, RankMappingLinksEveryHostsLocalRanks) {
  LineCarry c;
  Attribution head;
  head.host = "gpu-001";
  Fed f = Feed(c, 3, {{"rank_mapping", "{'gpu-001': [0, 1], 'gpu-002': [2, 3]}"}}, head);
  ASSERT_EQ(f.links.host_ranks.size(), 2u);
  EXPECT_EQ(f.links.host_ranks[1].first, "gpu-002");
  EXPECT_EQ(f.links.host_ranks[1].second[1], 3);
  // One node: "localhost" is the line's host, and no host without one.
  Fed one = Feed(c, 4, {{"rank_mapping", "{'localhost': [0, 1, 2, 3]}"}}, head);
  ASSERT_EQ(one.links.host_ranks.size(), 1u);
  EXPECT_EQ(one.links.host_ranks[0].first, "gpu-001");
  EXPECT_TRUE(Feed(c, 5, {{"rank_mapping", "{'localhost': [0]}"}}).links.host_ranks.empty());
}

}  // namespace
}  // namespace faultline
