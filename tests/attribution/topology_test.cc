// PCI bus id normalisation, MergeAttribution, NormalizeHost and TopologyMap.

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "attribution/attribution.h"
#include "gtest/gtest.h"

namespace faultline {
namespace {

TEST(NormalizePciBusId, EveryPrintedForm) {
  EXPECT_EQ(NormalizePciBusId("3b000"), "0000:3b:00.0");     // NCCL busId
  EXPECT_EQ(NormalizePciBusId("0x3b000"), "0000:3b:00.0");
  EXPECT_EQ(NormalizePciBusId("1000"), "0000:01:00.0");
  EXPECT_EQ(NormalizePciBusId("1e0"), "0000:00:1e.0");       // AWS 00:1e.0
  EXPECT_EQ(NormalizePciBusId("10003b000"), "1000:3b:00.0"); // domain 0x1000
  EXPECT_EQ(NormalizePciBusId("0000:3b:00.0"), "0000:3b:00.0");
  EXPECT_EQ(NormalizePciBusId("00000000:3B:00.0"), "0000:3b:00.0");  // nvidia-smi
  EXPECT_EQ(NormalizePciBusId("PCI:0000:3b:00"), "0000:3b:00.0");    // NVRM Xid
  EXPECT_EQ(NormalizePciBusId("pci:0000:3b:00"), "0000:3b:00.0");
  EXPECT_EQ(NormalizePciBusId("0000:3b:00"), "0000:3b:00.0");
  EXPECT_EQ(NormalizePciBusId("3b:00.0"), "0000:3b:00.0");           // lspci
  EXPECT_EQ(NormalizePciBusId(" 0000:B1:1f.7 "), "0000:b1:1f.7");
  EXPECT_EQ(NormalizePciBusId("10000:e1:00.0"), "10000:e1:00.0");     // VMD
}

// The canonical form is written by hand, not by snprintf: it must be
// snprintf's "%04x:%02x:%02x.%x" for every domain width, bus, device and
// function, from both the NCCL number and the colon form.
TEST(NormalizePciBusId, SameAsPrintf) {
  for (uint64_t domain : {0x0ull, 0x1ull, 0xfull, 0x10ull, 0xfffull, 0x1000ull, 0xffffull, 0x10000ull, 0xabcdeull,
                          0xfffffull, 0x100000ull, 0x1234567ull, 0xfffffffull, 0x10000000ull, 0xffffffffull}) {
    for (uint64_t bus = 0; bus <= 0xff; bus += 0x11) {
      for (uint64_t dev = 0; dev <= 0x1f; dev += 0x7) {
        for (uint64_t fn = 0; fn <= 7; fn += 3) {
          char want[32], colon[40], number[24];
          std::snprintf(want, sizeof want, "%04x:%02x:%02x.%x", static_cast<unsigned>(domain),
                        static_cast<unsigned>(bus), static_cast<unsigned>(dev), static_cast<unsigned>(fn));
          std::snprintf(colon, sizeof colon, "%X:%X:%x.%x", static_cast<unsigned>(domain),
                        static_cast<unsigned>(bus), static_cast<unsigned>(dev), static_cast<unsigned>(fn));
          EXPECT_EQ(NormalizePciBusId(colon), want) << colon;
          const uint64_t v = domain << 20 | bus << 12 | dev << 4 | fn;
          std::snprintf(number, sizeof number, "%llx", static_cast<unsigned long long>(v));
          EXPECT_EQ(NormalizePciBusId(number), want) << number;  // 13 hex digits at most
        }
      }
    }
  }
}

TEST(NormalizePciBusId, GarbageIsEmpty) {
  for (std::string_view s : std::initializer_list<std::string_view>{
           "", "zz", "PCI:", "3b:00", "0000:3b:00.8", "0000:3b:20.0",
        "0000:3b:00.00", "0000:3b:000.0", "0000:3bb:00.0", "0:0:0:0",
        "000000000:3b:00.0", "12345678901234", "3b000g", ":::", "0000::00.0",
        "0000:3b:.0", "0000:3b:00.", "gpu0", std::string_view("3b\0" "00", 5)}) {
    EXPECT_EQ(NormalizePciBusId(s), "") << s;
  }
}

TEST(NormalizeHost, ShortNames) {
  EXPECT_EQ(NormalizeHost("node017.cluster.local"), "node017");
  EXPECT_EQ(NormalizeHost("node017"), "node017");
  EXPECT_EQ(NormalizeHost("10.0.1.23"), "10.0.1.23");
  EXPECT_EQ(NormalizeHost(""), "");
  EXPECT_EQ(NormalizeHost("-bad"), "");
  EXPECT_EQ(NormalizeHost("a b"), "");
}

TEST(MergeAttribution, FillsOnlyUnsetFields) {
  Attribution base;
  base.rank = 3;
  base.host = "node017";
  Attribution more;
  more.rank = 9;
  more.local_rank = 1;
  more.pid = 42;
  more.host = "node018";
  more.gpu = "0000:3b:00.0";
  MergeAttribution(base, more);
  EXPECT_EQ(base.rank, 3);
  EXPECT_EQ(base.local_rank, 1);
  EXPECT_EQ(base.pid, 42);
  EXPECT_EQ(base.host, "node017");
  EXPECT_EQ(base.gpu, "0000:3b:00.0");

  // Line first, then path: the typical caller.
  Attribution line = AttributeLine("NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.");
  MergeAttribution(line, AttributeFromPath("archive/node017/dmesg"));
  EXPECT_EQ(line.host, "node017");
  EXPECT_EQ(line.gpu, "0000:3b:00.0");
}

TEST(TopologyMap, HcaRanksPerHost) {
  TopologyMap t;
  EXPECT_TRUE(t.RanksForHca("node017", "mlx5_3").empty());
  t.AddHca("node017.cluster", "mlx5_3", 5);
  t.AddHca("node017", "mlx5_3", 4);
  t.AddHca("node017", "mlx5_3", 5);  // restated: kept once
  t.AddHca("node017", "mlx5_0", 0);
  t.AddHca("node018", "mlx5_3", 13);
  t.AddHca("node017", "", 1);        // no device: nothing learnt
  t.AddHca("node017", "mlx5_1", -1);  // no rank: nothing learnt
  EXPECT_EQ(t.RanksForHca("node017", "mlx5_3"), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(t.RanksForHca("node017.cluster", "mlx5_0"), (std::vector<int64_t>{0}));
  EXPECT_EQ(t.RanksForHca("node018", "mlx5_3"), (std::vector<int64_t>{13}));
  EXPECT_TRUE(t.RanksForHca("node017", "mlx5_1").empty());
  EXPECT_TRUE(t.RanksForHca("node019", "mlx5_3").empty());
}

// NCCL's pciPath names the card with its function (and, merging VFs, its
// device) zeroed; the kernel names the function it speaks of.
TEST(TopologyMap, HcaAtPciFunction) {
  TopologyMap t;
  EXPECT_FALSE(t.HcaForPci("node017", "0000:3b:00.0").has_value());
  t.AddHcaPci("node017.cluster", "0000:3b:00.0", "mlx5_3");
  t.AddHcaPci("node017", "0000:1a:00.0", "mlx5_0");
  t.AddHcaPci("node017", "0000:1a:00.0", "mlx5_1");  // two ports on one card: neither
  t.AddHcaPci("node017", "not-a-bus", "mlx5_9");
  EXPECT_EQ(t.HcaForPci("node017", "0000:3b:00.0"), "mlx5_3");
  EXPECT_EQ(t.HcaForPci("node017", "0000:3b:00.1"), "mlx5_3");
  EXPECT_EQ(t.HcaForPci("node017", "0000:3b:02.3"), "mlx5_3");
  EXPECT_FALSE(t.HcaForPci("node017", "0000:1a:00.0").has_value());
  EXPECT_FALSE(t.HcaForPci("node018", "0000:3b:00.0").has_value());
  EXPECT_FALSE(t.HcaForPci("node017", "0000:3c:00.0").has_value());
}

TEST(TopologyMap, DeviceBusPidLookups) {
  TopologyMap t;
  t.AddDevice("node017", 131, 3, "3b000");
  t.AddDevice("node017.cluster.local", 130, 2, "0000:3a:00.0");
  t.AddDevice("node018", 139, 3, "3b000");
  t.AddPid("node017", 12345, 131);

  EXPECT_EQ(t.RankForBus("node017", "00000000:3B:00.0"), 131);
  EXPECT_EQ(t.RankForBus("node017", "PCI:0000:3b:00"), 131);
  EXPECT_EQ(t.RankForBus("node017.cluster.local", "3b000"), 131);
  EXPECT_EQ(t.RankForBus("node018", "0000:3b:00.0"), 139);
  EXPECT_FALSE(t.RankForBus("node019", "0000:3b:00.0").has_value());
  EXPECT_FALSE(t.RankForBus("node017", "garbage").has_value());

  // Two hosts have a GPU at 3b: the bus alone is ambiguous.
  EXPECT_FALSE(t.RankForBusAnyHost("0000:3b:00.0").has_value());
  EXPECT_EQ(t.RankForBusAnyHost("3a000"), 130);
  EXPECT_FALSE(t.RankForBusAnyHost("0000:99:00.0").has_value());
  EXPECT_FALSE(t.RankForBus("", "0000:3b:00.0").has_value());  // = any host
  EXPECT_EQ(t.RankForBus("", "3a000"), 130);

  EXPECT_EQ(t.RankForPid("node017", 12345), 131);
  EXPECT_FALSE(t.RankForPid("node018", 12345).has_value());
  EXPECT_EQ(t.RankForDevice("node017", 3), 131);
  EXPECT_EQ(t.RankForDevice("node017", 2), 130);
  EXPECT_FALSE(t.RankForDevice("node017", 4).has_value());

  EXPECT_EQ(t.HostForRank(131), "node017");
  EXPECT_EQ(t.HostForRank(130), "node017");
  EXPECT_EQ(t.BusForRank(139), "0000:3b:00.0");
  EXPECT_FALSE(t.HostForRank(7).has_value());
  EXPECT_FALSE(t.BusForRank(7).has_value());
}

TEST(TopologyMap, UniqueBusAcrossHosts) {
  TopologyMap t;
  t.AddDevice("node017", 5, 3, "3b000");
  EXPECT_EQ(t.RankForBusAnyHost("0000:3b:00.0"), 5);
  t.AddDevice("node017", 5, 3, "3b000");  // repeated line: still unique
  EXPECT_EQ(t.RankForBusAnyHost("0000:3b:00.0"), 5);
}

TEST(TopologyMap, NcclInitKeepsTheWorldCommunicator) {
  TopologyMap t;
  // A TP sub-communicator initialises first: "rank 3" is a group rank.
  auto tp = ParseNcclInitLine("node017:12345:12345 [3] NCCL INFO comm 0x1 rank 3 nranks 8 cudaDev 3 nvmlDev 3 busId 3b000 commId 0x2 - Init COMPLETE");
  ASSERT_TRUE(tp.has_value());
  t.AddNcclInit(*tp);
  EXPECT_EQ(t.RankForBus("node017", "0000:3b:00.0"), 3);

  auto world = ParseNcclInitLine("node017:12345:12345 [3] NCCL INFO comm 0x3 rank 131 nranks 1024 cudaDev 3 nvmlDev 3 busId 3b000 commId 0x1a2b3c4d5e6f7081 - Init START");
  ASSERT_TRUE(world.has_value());
  t.AddNcclInit(*world);
  EXPECT_EQ(t.RankForBus("node017", "0000:3b:00.0"), 131);
  EXPECT_EQ(t.RankForPid("node017", 12345), 131);
  EXPECT_EQ(t.RankForDevice("node017", 3), 131);
  EXPECT_EQ(t.HostForRank(131), "node017");
  EXPECT_FALSE(t.HostForRank(3).has_value());  // retracted

  // Later smaller communicators are ignored.
  auto pp = ParseNcclInitLine("node017:12345:12345 [3] NCCL INFO comm 0x4 rank 1 nranks 4 cudaDev 3 busId 3b000 - Init COMPLETE");
  ASSERT_TRUE(pp.has_value());
  t.AddNcclInit(*pp);
  EXPECT_EQ(t.RankForBus("node017", "3b000"), 131);
  EXPECT_FALSE(t.HostForRank(1).has_value());
}

TEST(TopologyMap, LearnAndResolve) {
  TopologyMap t;
  t.Learn(AttributeLine("[rank9]:node017:12345:12399 [1] NCCL INFO Channel 00/0 : 9[1] -> 10[2] via P2P/CUMEM"));
  t.Learn(AttributeLine("no rank here node018:1:1 [0] NCCL INFO x"));
  EXPECT_EQ(t.RankForPid("node017", 12345), 9);
  EXPECT_EQ(t.RankForDevice("node017", 1), 9);
  EXPECT_EQ(t.HostForRank(9), "node017");
  EXPECT_FALSE(t.RankForPid("node018", 1).has_value());

  // An OOM kill names only a pid; the host comes from the syslog header.
  Attribution oom = AttributeLine("Nov  2 13:46:41 node017 kernel: Out of memory: Killed process 12345 (python3) total-vm:1kB");
  EXPECT_TRUE(t.Resolve(oom));
  EXPECT_EQ(oom.rank, 9);

  // A Xid on a bus, host from the path.
  t.AddDevice("node017", 9, 1, "0000:3b:00.0");
  Attribution xid = AttributeLine("NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.");
  EXPECT_TRUE(t.Resolve(xid));  // unique over hosts, host filled from rank
  EXPECT_EQ(xid.rank, 9);
  EXPECT_EQ(xid.host, "node017");

  Attribution named;
  named.rank = 9;
  named.host = "node017";
  EXPECT_FALSE(t.Resolve(named));
  Attribution unknown;
  unknown.pid = 1;
  EXPECT_FALSE(t.Resolve(unknown));
  Attribution bare_dev;
  bare_dev.gpu = "1";
  EXPECT_FALSE(t.Resolve(bare_dev));  // device index without a host
}

// A launcher names its worker's pid with a local rank only (torchrun's
// "local_rank: 3 (pid: 4015788)", DeepSpeed's spawn line); the host's device
// map turns it into the global rank the OOM killer's victim was.
TEST(TopologyMap, PidThroughLocalRank) {
  TopologyMap t;
  t.AddDevice("gpu-003", 19, 3, "0000:5d:00.0");
  t.AddPidLocalRank("gpu-003", 4015788, 3);
  t.AddPidLocalRank("gpu-003", 1, -1);  // no local rank: ignored
  Attribution oom = AttributeLine(
      "Nov  2 13:46:41 gpu-003 kernel: Out of memory: Killed process 4015788 (python3) total-vm:1kB");
  EXPECT_TRUE(t.Resolve(oom));
  EXPECT_EQ(oom.rank, 19);
  // Another host's pid of the same number is another process.
  Attribution other = AttributeLine(
      "Nov  2 13:46:41 gpu-004 kernel: Out of memory: Killed process 4015788 (python3) total-vm:1kB");
  EXPECT_FALSE(t.Resolve(other));
  // A pid's own rank wins over its local rank.
  t.AddPid("gpu-003", 4015788, 7);
  Attribution again = AttributeLine(
      "Nov  2 13:46:41 gpu-003 kernel: Out of memory: Killed process 4015788 (python3) total-vm:1kB");
  EXPECT_TRUE(t.Resolve(again));
  EXPECT_EQ(again.rank, 7);
}

// The order the correlator attributes every line in: the bus names the GPU
// itself, then the pid, then the device index; pid and device index only
// on a known host; a link learnt without a rank names none.
TEST(TopologyMap, ResolveOrderAndClues) {
  TopologyMap t;
  t.AddDevice("node017", 4, 1, "0000:3b:00.0");
  t.AddPid("node017", 12345, 6);
  t.AddDevice("node017", 7, 2, "");

  Attribution both;  // an Xid naming the bus and the pid of another rank
  both.host = "node017";
  both.gpu = "0000:3b:00.0";
  both.pid = 12345;
  EXPECT_TRUE(t.Resolve(both));
  EXPECT_EQ(both.rank, 4);

  Attribution local;  // torchelastic local rank 2
  local.host = "node017";
  local.local_rank = 2;
  EXPECT_TRUE(t.Resolve(local));
  EXPECT_EQ(local.rank, 7);

  Attribution dev_index;  // NCCL "[2]" prefix: a device index, not a bus
  dev_index.host = "node017";
  dev_index.gpu = "2";
  EXPECT_TRUE(t.Resolve(dev_index));
  EXPECT_EQ(dev_index.rank, 7);

  Attribution hostless_pid;
  hostless_pid.pid = 12345;
  EXPECT_FALSE(t.Resolve(hostless_pid));
  // A single server's log names no host: its pid links are hostless too.
  t.AddPid("", 240, 2);
  Attribution v0_worker = AttributeLine("(VllmWorkerProcess pid=240) INFO 02-14 08:23:15 worker.py:266] x");
  EXPECT_TRUE(t.Resolve(v0_worker));
  EXPECT_EQ(v0_worker.rank, 2);
  Attribution elsewhere;
  elsewhere.host = "node018";
  elsewhere.pid = 240;
  EXPECT_FALSE(t.Resolve(elsewhere));

  TopologyMap unranked;
  unranked.AddDevice("node017", -1, 0, "0000:3b:00.0");
  unranked.AddPid("node017", 12345, 6);
  Attribution fallback;
  fallback.host = "node017";
  fallback.gpu = "0000:3b:00.0";
  fallback.pid = 12345;
  EXPECT_TRUE(unranked.Resolve(fallback));
  EXPECT_EQ(fallback.rank, 6);
}

// "srun: error: gpu-002: task 9: Exited with exit code 1": the task is the
// rank when srun launched the ranks, a node index when torchrun runs under
// srun (then rank 9 lives on another host, or gpu-002 holds other ranks).
TEST(TopologyMap, SrunTaskIsTheRankOnlyWhereTheTopologyAgrees) {
  auto task_line = [](const std::string& host, int64_t task) {
    Attribution a;
    a.host = host;
    a.task = task;
    return a;
  };
  TopologyMap srun_ranks;
  srun_ranks.AddDevice("gpu-002", 9, 1, "");
  Attribution same = task_line("gpu-002", 9);
  EXPECT_TRUE(srun_ranks.Resolve(same));
  EXPECT_EQ(same.rank, 9);

  TopologyMap torchrun;  // 8 ranks a node, srun task = node index
  for (int r = 0; r < 16; ++r) torchrun.AddDevice(r < 8 ? "gpu-001" : "gpu-002", r, r % 8, "");
  Attribution node_index = task_line("gpu-002", 1);
  EXPECT_FALSE(torchrun.Resolve(node_index));
  EXPECT_FALSE(node_index.rank.has_value());
  // Rank 20 unknown, but gpu-002's ranks are known and are others.
  EXPECT_FALSE(torchrun.RankForTask("gpu-002", 20).has_value());
  // Nothing known of either: srun's own numbering.
  EXPECT_EQ(torchrun.RankForTask("gpu-009", 70), 70);
  EXPECT_FALSE(TopologyMap().RankForTask("", 3).has_value());
  EXPECT_EQ(TopologyMap().RankForTask("node017", 3), 3);
}

// The job's GPUs are all known once every rank 0..n-1 has a host and a bus;
// a bus of a job host that no rank uses is another GPU, in any printed form.
TEST(TopologyMap, EveryBusKnownAndTheJobsGpus) {
  TopologyMap t;
  EXPECT_FALSE(t.KnowsEveryBus(2));
  t.AddDevice("node017", 0, 0, "3b000");
  EXPECT_FALSE(t.KnowsEveryBus(2));  // rank 1 unknown
  t.AddDevice("node017", 1, 1, "");
  EXPECT_FALSE(t.KnowsEveryBus(2));  // rank 1's bus unknown
  TopologyMap full;
  full.AddDevice("node017", 0, 0, "3b000");
  full.AddDevice("node017", 1, 1, "5e000");
  EXPECT_TRUE(full.KnowsEveryBus(2));
  EXPECT_FALSE(full.KnowsEveryBus(3));
  EXPECT_FALSE(full.KnowsEveryBus(0));
  EXPECT_TRUE(full.HasRankOn("node017"));
  EXPECT_FALSE(full.HasRankOn("node018"));
  EXPECT_FALSE(full.HasRankOn(""));
  EXPECT_TRUE(full.IsRankBus("node017", "0000:3b:00.0"));
  EXPECT_TRUE(full.IsRankBus("node017", "00000000:5E:00.0"));
  EXPECT_FALSE(full.IsRankBus("node017", "0000:86:00.0"));
  EXPECT_FALSE(full.IsRankBus("node018", "0000:3b:00.0"));
  EXPECT_FALSE(full.IsRankBus("node017", "garbage"));
}

}  // namespace
}  // namespace faultline
