// AttributeLine over real prefix formats, and the look-alikes it must refuse.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attribution/attribution.h"
#include "attribution/lex.h"
#include "gtest/gtest.h"

namespace faultline {
namespace {

struct Line {
  Attribution a;
  size_t begin = 0;
  std::string_view message;
};

Line Attr(std::string_view s) {
  Line l;
  l.a = AttributeLine(s, &l.begin);
  EXPECT_LE(l.begin, s.size());
  l.message = s.substr(l.begin);
  return l;
}

TEST(AttributeLine, TorchrunRankPrefixWithWatchdog) {
  Line l = Attr(
      "[rank3]:[E1102 13:46:41.123456 1234 ProcessGroupNCCL.cpp:1234] [PG ID 0 "
      "PG GUID 0(default_pg) Rank 3] Watchdog caught collective operation "
      "timeout: WorkNCCL(SeqNum=1234, OpType=ALLREDUCE, NumelIn=1, "
      "NumelOut=1, Timeout(ms)=600000) ran for 600012 milliseconds before "
      "timing out.");
  EXPECT_EQ(l.a.rank, 3);
  EXPECT_FALSE(l.a.local_rank.has_value());
  EXPECT_TRUE(l.a.host.empty());
  // The c10 glog header stays: timeparse reads the time from it.
  EXPECT_TRUE(l.message.starts_with("[E1102 13:46:41.123456 1234"));
}

TEST(AttributeLine, MarkdownQuoteMarkersBeforeAnNcclPrefix) {
  // A log pasted into an issue as a quote keeps its "> " markers.
  Line l = Attr("> node201:127799:127863 [0] transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_0:1 "
                "Got async event : local access violation work queue error");
  EXPECT_EQ(l.a.host, "node201");
  EXPECT_EQ(l.a.pid, 127799);
  l = Attr("> > [rank3]: Traceback (most recent call last):");
  EXPECT_EQ(l.a.rank, 3);
  l = Attr(">node201:1:2 [0] NCCL WARN x");  // no space: not a quote marker
  EXPECT_TRUE(l.a.host.empty());
}

TEST(AttributeLine, CollectorStampWithAColonBeforeMpirunPrefix) {
  // mpirun --timestamp-output: "<stamp>: [job,rank]<stdout>:<line>".
  Line l = Attr("2019-06-02T16:13:44.884Z: [1,12]<stdout>:container-e275-01-000057:815:864 [0] "
                "transport/net_ib.cu:80 NCCL WARN NET/IB : Got async event : local catastrophic error");
  EXPECT_EQ(l.a.rank, 12);
  EXPECT_EQ(l.a.host, "container-e275-01-000057");
}

TEST(AttributeLine, CtimeStampGluedToMpirunTag) {
  // Open MPI's --timestamp-output with --tag-output: ctime()'s string glued
  // to the tag (orte iof: "%s[%s,%s]<%s>:").
  Line l = Attr("Fri Aug 11 12:31:45 2023[1,3]<stdout>:tomte401:1850304:1881110 [3] transport.cc:154 "
                "NCCL WARN Cuda failure 'invalid argument'");
  EXPECT_EQ(l.a.rank, 3);
  EXPECT_EQ(l.a.host, "tomte401");
  EXPECT_EQ(l.a.pid, 1850304);
  l = Attr("Mon Feb  3 09:01:02 2025<stderr>:Traceback (most recent call last):");
  EXPECT_FALSE(l.a.rank.has_value());
  // Not a weekday, or no year: no stamp, so no prefix after it is read.
  EXPECT_FALSE(Attr("Fry Aug 11 12:31:45 2023[1,3]<stdout>:x").a.rank.has_value());
  EXPECT_FALSE(Attr("Fri Aug 11 12:31:45 [1,3]<stdout>:x").a.rank.has_value());
}

TEST(AttributeLine, HorovodrunTagWithoutJobId) {
  // horovodrun's own launcher (gloo, elastic) tags a worker's lines with its
  // global rank alone (safe_shell_exec: '{time}[{rank}]<{prefix}>:'),
  // behind asctime()'s stamp with --timestamp-output.
  Line l = Attr("[1]<stderr>:RuntimeError: ncclCommInitRank failed: unhandled cuda error");
  EXPECT_EQ(l.a.rank, 1);
  EXPECT_TRUE(l.message.starts_with("RuntimeError"));
  l = Attr("Fri Sep 25 16:52:36 2020[6]<stderr>:    op=op,");
  EXPECT_EQ(l.a.rank, 6);
  // A bracketed number before any other angle bracket is no tag.
  EXPECT_FALSE(Attr("[1]<module>: x").a.rank.has_value());
  EXPECT_FALSE(Attr("[1] <stderr>: x").a.rank.has_value());
}

TEST(AttributeLine, SglangLoggerPrefixNamesTheTpRank) {
  // configure_logger's "[%(asctime)s{prefix}] " with the scheduler's
  // " DP<d>", " PP<p>", " TP<t>", " EP<e>" tags.
  Line l = Attr("[2025-12-26 13:13:14 TP0] Scheduler hit an exception: Traceback (most recent call last):");
  EXPECT_EQ(l.a.rank, 0);
  EXPECT_TRUE(l.message.starts_with("Scheduler hit"));
  EXPECT_EQ(Attr("[2025-02-14 07:20:44 DP14 TP14] Init torch distributed begin.").a.rank, 14);
  EXPECT_EQ(Attr("[2025-11-05 17:42:27 TP2 EP2] Load weight end.").a.rank, 2);
  EXPECT_EQ(Attr("[05-27 04:36:06 DP1 TP4] Scheduler hit an exception:").a.rank, 4);
  // A later pipeline stage's TP index is not its rank; no local GPU is
  // taken (TP ranks span nodes).
  EXPECT_FALSE(Attr("[2025-11-05 17:42:27 PP1 TP3] x").a.rank.has_value());
  EXPECT_FALSE(Attr("[2025-11-05 17:42:27 TP3] x").a.local_rank.has_value());
  // The tokenizer manager's untagged stamp, and other bracketed words.
  EXPECT_FALSE(Attr("[2025-02-21 22:59:28] Received sigquit from a child process.").a.rank.has_value());
  EXPECT_FALSE(Attr("[2025-02-21 22:59:28 main] x").a.rank.has_value());
}

TEST(AttributeLine, TorchrunPythonTraceback) {
  Line l = Attr("[rank12]: Traceback (most recent call last):");
  EXPECT_EQ(l.a.rank, 12);
  EXPECT_EQ(l.message, "Traceback (most recent call last):");
}

TEST(AttributeLine, TorchrunDefaultRoleIsLocalRank) {
  Line l = Attr("[default3]:RuntimeError: CUDA error: an illegal memory access was encountered");
  EXPECT_FALSE(l.a.rank.has_value());
  EXPECT_EQ(l.a.local_rank, 3);
  EXPECT_TRUE(l.message.starts_with("RuntimeError"));
}

// `torchrun --role $(hostname -s): --tee 3` (the multi-node recipe of
// ml-engineering and many Slurm scripts): TailLog's "[{role}{local_rank}]:"
// header carries the host.
TEST(AttributeLine, TorchrunHostRoleIsHostAndLocalRank) {
  Line l = Attr("[gpu187:1]:torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB");
  EXPECT_EQ(l.a.host, "gpu187");
  EXPECT_EQ(l.a.local_rank, 1);
  EXPECT_FALSE(l.a.rank.has_value());
  EXPECT_TRUE(l.message.starts_with("torch.cuda.OutOfMemoryError")) << l.message;
  // Host names are kept short, as every other prefix's are.
  l = Attr("[node-03.cluster:12]:    main()");
  EXPECT_EQ(l.a.host, "node-03");
  EXPECT_EQ(l.a.local_rank, 12);
  // A host the line prints itself (NCCL's prefix) wins over the role.
  l = Attr("[gpu187:0]:gpu188:4015:4099 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.7<0>");
  EXPECT_EQ(l.a.host, "gpu188");
  for (const char* not_role : {"[INFO:0]: x", "[W:1]: x", "[12:34]: x", "[Trainer:3]: x",
                               "[worker:2]: x", "[gpu187:x]: y", "[gpu187:1] y"}) {
    Line n = Attr(not_role);
    EXPECT_TRUE(n.a.host.empty()) << not_role;
    EXPECT_FALSE(n.a.local_rank.has_value()) << not_role;
  }
}

// ParseTorchrunPrefix refuses an upper-case byte after the bracket at once:
// a role host may still start with a digit, and each accepted form with an
// upper-case letter put first is a message, as without the shortcut.
TEST(AttributeLine, TorchrunPrefixAfterItsBracketByFirstByte) {
  Line l = Attr("[10gpu:2]: x");
  EXPECT_EQ(l.a.host, "10gpu");
  EXPECT_EQ(l.a.local_rank, 2);
  EXPECT_EQ(l.message, "x");
  for (const char* form : {"rank3]: x", "default3]: x", "gpu187:3]: x", "10gpu:3]: x"}) {
    for (char c = 'A'; c <= 'Z'; ++c) {
      const std::string line = std::string("[") + c + form;
      Line n = Attr(line);
      EXPECT_FALSE(n.a.rank.has_value()) << line;
      EXPECT_FALSE(n.a.local_rank.has_value()) << line;
      EXPECT_TRUE(n.a.host.empty()) << line;
      EXPECT_EQ(n.begin, 0u) << line;
    }
  }
  // The glog header after the prefix, then the message's bracket.
  l = Attr("[rank5]:[I1102 13:00:00.351576 41000 ProcessGroupNCCL.cpp:931] [PG 0 Rank 5] options");
  EXPECT_EQ(l.a.rank, 5);
  EXPECT_EQ(l.begin, 8u);
}

// The bracketed stamps a collector puts before a launcher prefix are
// stepped over; a bracket with a letter after it is a stamp only as dmesg
// -T's (SkipTimestamp tries nothing else there).
TEST(AttributeLine, BracketedStampsBeforeLauncherPrefix) {
  for (const char* stamp : {"[Mon Nov  2 13:46:41 2026]", "[Sun Nov 22 13:46:41 2026]", "[ 1000001.682554]",
                            "[1730555201.123456]", "[  +0.000316]", "[2026-11-02 13:46:41,123]"}) {
    const std::string line = std::string(stamp) + " [rank3]: x";
    Line l = Attr(line);
    EXPECT_EQ(l.a.rank, 3) << line;
    EXPECT_EQ(l.message, "x") << line;
  }
  for (const char* not_stamp : {"[Mon Nov  2 13:46:41 2026 [rank3]: x", "[Mon Nov  2 13:46:41] [rank3]: x",
                                "[Noon Nov  2 13:46:41 2026] [rank3]: x", "[I1102 13:46:41.1 1 f.cc:1] [rank3]: x",
                                "[mon Nov  2 13:46:41 2026] [rank3]: x"}) {
    EXPECT_EQ(Attr(not_stamp).begin, 0u) << not_stamp;
  }
}

// After the launcher prefixes AttributeLine tries UCX's prefix on a '['
// and NCCL's on anything else: each still read there.
TEST(AttributeLine, NcclOrUcxPrefixAfterLauncherPrefix) {
  Line l = Attr("[rank3]:node017:12345:12399 [2] NCCL INFO Bootstrap : Using ib0:10.0.0.7<0>");
  EXPECT_EQ(l.a.rank, 3);
  EXPECT_EQ(l.a.host, "node017");
  EXPECT_EQ(l.a.pid, 12345);
  EXPECT_EQ(l.a.local_rank, 2);
  l = Attr("[rank3]:[node018:4242:0:4250] Caught signal 7 (Bus error: nonexistent physical address)");
  EXPECT_EQ(l.a.rank, 3);
  EXPECT_EQ(l.a.host, "node018");
  EXPECT_EQ(l.a.pid, 4242);
  l = Attr("[rank3]:[I1102 13:00:00.351576 41000 ProcessGroupNCCL.cpp:931] [PG 0 Rank 3] options");
  EXPECT_EQ(l.a.rank, 3);
  EXPECT_TRUE(l.a.host.empty());
}

TEST(AttributeLine, CollectorTimestampBeforeLauncherPrefix) {
  Line l = Attr("2026-11-02T13:46:41.123Z [rank3]: torch.distributed.DistBackendError: NCCL error");
  EXPECT_EQ(l.a.rank, 3);
  EXPECT_TRUE(l.message.starts_with("torch.distributed"));
  l = Attr("2026-11-02T13:46:41.123456789Z stderr F [rank5]:[W1102 13:46:41.1 1 x.cpp:1] hi");
  EXPECT_EQ(l.a.rank, 5);  // CRI container log framing
  l = Attr("1730555201.123 [rank4]: x");  // epoch stamp from a collector
  EXPECT_EQ(l.a.rank, 4);
  EXPECT_EQ(l.message, "x");
}

TEST(AttributeLine, GlogLineWithoutLauncher) {
  Line l = Attr("I1102 13:46:41.123456  4567 ProcessGroupNCCL.cpp:900] [PG ID 0 PG GUID 0(default_pg) Rank 7] ProcessGroupNCCL initialization options");
  EXPECT_EQ(l.a.rank, 7);
  EXPECT_EQ(l.begin, 0u);  // no launcher prefix
}

// PyTorch's loggers print the process id in the glog header: the weakest
// pid source, below a kernel or launcher line's own pid.
TEST(AttributeLine, GlogHeaderPid) {
  Line l = Attr("[rank3]:W1102 13:46:41.830000 4015788 torch/distributed/run.py:793] x");
  EXPECT_EQ(l.a.rank, 3);
  EXPECT_EQ(l.a.pid, 4015788);
  l = Attr("I1102 13:46:41.123456  4567 ProcessGroupNCCL.cpp:900] msg");
  EXPECT_EQ(l.a.pid, 4567);
  // The OOM killer's victim, not the logger's pid.
  l = Attr("W1102 13:46:41.830000 77 log.py:1] Out of memory: Killed process 12345 (python3)");
  EXPECT_EQ(l.a.pid, 12345);
  // A glog-looking stamp without the "file:line]" part names no pid.
  l = Attr("I1102 13:46:41.123456 4567 no closing bracket");
  EXPECT_FALSE(l.a.pid.has_value());
}

TEST(AttributeLine, SrunLabels) {
  Line l = Attr("3: Epoch 1 step 200 loss 2.31");
  EXPECT_EQ(l.a.rank, 3);
  EXPECT_EQ(l.message, "Epoch 1 step 200 loss 2.31");
  l = Attr("  3: padded");
  EXPECT_EQ(l.a.rank, 3);
  EXPECT_EQ(l.message, "padded");
  l = Attr("12: ");
  EXPECT_EQ(l.a.rank, 12);
  EXPECT_EQ(l.message, "");
  l = Attr("12:");
  EXPECT_EQ(l.a.rank, 12);
}

TEST(AttributeLine, SrunWrappingTorchrunLabelIsTheNode) {
  // One srun task per node runs one torchrun agent: the label is the node.
  Line l = Attr("1: [default3]:RuntimeError: NCCL communicator was aborted");
  EXPECT_FALSE(l.a.rank.has_value());
  EXPECT_EQ(l.a.local_rank, 3);
  EXPECT_TRUE(l.message.starts_with("RuntimeError"));
  l = Attr("1: [rank11]:[E1102 13:46:41.1 1 ProcessGroupNCCL.cpp:1] x");
  EXPECT_EQ(l.a.rank, 11);
  EXPECT_TRUE(l.message.starts_with("[E1102"));
}

TEST(AttributeLine, TimesAreNotSrunLabels) {
  for (std::string_view s :
       {"13:46:41 something happened", "13:46:41.123 x", "10:30 AM meeting",
        "2026-11-02 13:46:41,123 - INFO - 3: loss", "step 3: loss 2.0",
        "Epoch 12: 100%|##########| 50/50", "3:x", "I1102 13:46:41.123456 1234 a.cc:1] 3: x"}) {
    Line l = Attr(s);
    EXPECT_FALSE(l.a.rank.has_value()) << s;
    EXPECT_EQ(l.begin, 0u) << s;
  }
}

TEST(AttributeLine, MpirunTagOutput) {
  Line l = Attr("[1,12]<stdout>:Step 100, loss=2.1");
  EXPECT_EQ(l.a.rank, 12);
  EXPECT_EQ(l.message, "Step 100, loss=2.1");
  l = Attr("[1,0]<stderr>:node017:12345:12399 [0] NCCL WARN NET/IB : Got completion with error 12");
  EXPECT_EQ(l.a.rank, 0);
  EXPECT_EQ(l.a.host, "node017");
  EXPECT_EQ(l.a.pid, 12345);
  EXPECT_TRUE(l.message.starts_with("node017:"));
  EXPECT_FALSE(Attr("[1,12]<foo>:x").a.rank.has_value());
}

TEST(AttributeLine, NcclInfoInitLine) {
  Line l = Attr(
      "node017:12345:12345 [3] NCCL INFO comm 0x55d0c0a0 rank 131 nranks 1024 "
      "cudaDev 3 nvmlDev 3 busId 3b000 commId 0x1a2b3c4d5e6f7081 - Init START");
  EXPECT_EQ(l.a.host, "node017");
  EXPECT_EQ(l.a.pid, 12345);
  EXPECT_EQ(l.a.local_rank, 3);
  EXPECT_EQ(l.a.gpu, "3");
  // "rank 131" is a communicator rank, not the writer's global rank.
  EXPECT_FALSE(l.a.rank.has_value());
  EXPECT_EQ(l.begin, 0u);
}

TEST(AttributeLine, NcclWarnAndTimestampedNccl) {
  Line l = Attr("gpu-node-3:9876:10011 [7] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.0.1.23<57221> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.0.1.22");
  EXPECT_EQ(l.a.host, "gpu-node-3");
  EXPECT_EQ(l.a.pid, 9876);
  EXPECT_EQ(l.a.local_rank, 7);
  EXPECT_EQ(l.a.gpu, "7");
  l = Attr("[2026-11-02 13:46:41] node017.cluster.local:1:2 [0] NCCL INFO Bootstrap");
  EXPECT_EQ(l.a.host, "node017");
  EXPECT_EQ(l.a.local_rank, 0);
  l = Attr("[rank9]:node017:12345:12399 [1] NCCL INFO Channel 00/0 : 9[1] -> 10[2] via P2P/CUMEM");
  EXPECT_EQ(l.a.rank, 9);
  EXPECT_EQ(l.a.host, "node017");
  EXPECT_EQ(l.a.local_rank, 1);
}

TEST(AttributeLine, NcclHostNamedAfterItsAddressWithDashes) {
  // A hostname made of the address with dashes has no letter; NCCL's
  // prefix still names it (pytorch/pytorch#124380).
  Line l = Attr("10-12-3-162:7991:8061 [1] proxy.cc:1533 NCCL WARN [Service thread] Could not receive type "
                "from localRank 2, res=3, closed=0");
  EXPECT_EQ(l.a.host, "10-12-3-162");
  EXPECT_EQ(l.a.pid, 7991);
  // Three groups is a date, a group over 255 no address: neither is a host.
  l = Attr("2024-03-05:7991:8061 [1] NCCL WARN x");
  EXPECT_TRUE(l.a.host.empty());
  l = Attr("10-12-3-999:7991:8061 [1] NCCL WARN x");
  EXPECT_TRUE(l.a.host.empty());
}

TEST(AttributeLine, UcxPrefixes) {
  Line l = Attr("[node017:12345:0:12399] Caught signal 7 (Bus error: nonexistent physical address)");
  EXPECT_EQ(l.a.host, "node017");
  EXPECT_EQ(l.a.pid, 12345);
  l = Attr("[1730555201.123456] [node018:4242:0]        ucp_worker.c:1234 UCX  ERROR ibv_post_send failed");
  EXPECT_EQ(l.a.host, "node018");
  EXPECT_EQ(l.a.pid, 4242);
  EXPECT_TRUE(Attr("[12:34:56] started").a.host.empty());
}

TEST(AttributeLine, VllmAndRayPrefixes) {
  Line l = Attr("(EngineCore_0 pid=1234) ERROR 11-02 13:46:41 [core.py:588] EngineCore encountered a fatal error.");
  EXPECT_EQ(l.a.pid, 1234);
  EXPECT_FALSE(l.a.local_rank.has_value());
  EXPECT_TRUE(l.message.starts_with("ERROR 11-02"));
  l = Attr("(VllmWorker TP3 pid=4321) INFO 11-02 13:46:41 [multiproc_executor.py:1] x");
  EXPECT_EQ(l.a.pid, 4321);
  EXPECT_EQ(l.a.local_rank, 3);
  EXPECT_EQ(l.a.rank, 3);  // the worker's rank in its replica (one stage)
  l = Attr("(Worker_TP5 pid=70405) ERROR 11-02 12:01:02 [multiproc_executor.py:546] RuntimeError: x");
  EXPECT_EQ(l.a.rank, 5);
  l = Attr("(VllmWorker rank=2 pid=777) WARNING x");
  EXPECT_EQ(l.a.pid, 777);
  EXPECT_EQ(l.a.rank, 2);
  l = Attr("(Worker_PP1_TP0 pid=55) x");
  EXPECT_EQ(l.a.pid, 55);
  EXPECT_FALSE(l.a.local_rank.has_value());  // TP index of a later stage
  EXPECT_FALSE(l.a.rank.has_value());
  l = Attr("(RayWorkerWrapper pid=1234, ip=10.0.1.23) INFO x");
  EXPECT_EQ(l.a.pid, 1234);
  EXPECT_EQ(l.a.host, "10.0.1.23");
  // vLLM v0 colours its worker prefix (multiproc_worker_utils._add_prefix).
  l = Attr("\x1b[1;36m(VllmWorkerProcess pid=240)\x1b[0;0m INFO 02-14 08:23:15 worker.py:266] x");
  EXPECT_EQ(l.a.pid, 240);
  EXPECT_TRUE(l.message.starts_with("INFO 02-14")) << l.message;
  // pdsh (DeepSpeed's multi-node runner) puts the host first.
  l = Attr("worker-0: [2022-09-08 12:02:16,517] [INFO] [launch.py:155:main] x");
  EXPECT_EQ(l.a.host, "worker-0");
  l = Attr("gpu-001: [rank3]:[E1102 13:46:41.830000 4015788 ProcessGroupNCCL.cpp:1] x");
  EXPECT_EQ(l.a.host, "gpu-001");
  EXPECT_EQ(l.a.rank, 3);
  for (const char* not_pdsh : {"RuntimeError: CUDA error: an illegal memory access was encountered",
                               "ERROR: x", "x86_64: x", "Process 165: sglang::scheduler", "torch.cuda: x",
                               "2026-11-02: x"}) {
    EXPECT_TRUE(Attr(not_pdsh).a.host.empty()) << not_pdsh;
  }
  // Nested prefixes: the innermost process wrote the line.
  l = Attr("(vLLMHttpServer pid=6840) (Worker pid=7181) ERROR 06-09 17:58:55 [multiproc_executor.py:852] x");
  EXPECT_EQ(l.a.pid, 7181);
  l = Attr("(APIServer pid=5332) (DPEngineCoreActor pid=5439, ip=10.233.69.249) INFO 01-12 06:15:21 x");
  EXPECT_EQ(l.a.pid, 5439);
  EXPECT_EQ(l.a.host, "10.233.69.249");
  // NCCL's own "host:pid:tid [dev]" inside names the machine by its
  // hostname, which beats the address Ray's prefix gave.
  l = Attr("(RayTrainWorker pid=84494, ip=10.21.0.92) dgx003:84494:84587 [4] NCCL INFO Bootstrap : Using "
           "eth0:10.21.0.92<0>");
  EXPECT_EQ(l.a.pid, 84494);
  EXPECT_EQ(l.a.host, "dgx003");
  // Ordinary parenthesised text is not a prefix.
  l = Attr("(see docs) pid 3");
  EXPECT_FALSE(l.a.pid.has_value());
  EXPECT_EQ(l.begin, 0u);
}

TEST(AttributeLine, RayTaskErrorNamesTheFailedWorker) {
  // ray/exceptions.py RayTaskError.__str__: "<proctitle>() (pid=N, ip=A" and
  // ", actor_id=X, repr=R)" for an actor's task, printed by the driver.
  Line l = Attr("ray.exceptions.RayTaskError(ActorDiedError): ray::TaskRunner.run() (pid=16209, "
                "ip=10.96.200.252, actor_id=af67a3a6fa70baaa8f2d6ff301000000, repr=<main_ppo.TaskRunner "
                "object at 0x7ecf611e7670>)");
  EXPECT_EQ(l.a.host, "10.96.200.252");
  EXPECT_EQ(l.a.pid, 16209);
  l = Attr("\x1b[36mray::train_fn()\x1b[39m (pid=4101, ip=gpu-node-7.cluster)");
  EXPECT_EQ(l.a.host, "gpu-node-7");
  EXPECT_EQ(l.a.pid, 4101);
  // A host the line's own prefix names wins.
  l = Attr("node017:12:13 [0] NCCL WARN ray::x() (pid=5, ip=10.0.0.9)");
  EXPECT_EQ(l.a.host, "node017");
  // Not a Ray process title, or no ip: nothing.
  for (const char* no : {"spawned worker (pid=123, ip=10.0.0.1)", "ray::x() (pid=123)",
                         "ray::x() (pid=abc, ip=10.0.0.1)", "ray::x() (pid=1, ip=:::)"}) {
    Line m = Attr(no);
    EXPECT_TRUE(m.a.host.empty()) << no;
    EXPECT_FALSE(m.a.pid.has_value()) << no;
  }
}

TEST(AttributeLine, NcclTestsFailuresNameTheirHost) {
  // nccl-tests' CUDACHECK/NCCLCHECK and TESTCHECK put gethostname() in
  // front of the failure (NVIDIA/nccl-tests#41 and #92, as posted).
  Line l = Attr("ip-0AB85F07: Test NCCL failure common.cu:775 'internal error'");
  EXPECT_EQ(l.a.host, "ip-0AB85F07");
  EXPECT_FALSE(l.a.pid.has_value());
  l = Attr("node1: Test CUDA failure common.cu:963 'invalid device ordinal'");
  EXPECT_EQ(l.a.host, "node1");
  l = Attr(" .. node1 pid 198671: Test failure common.cu:925");
  EXPECT_EQ(l.a.host, "node1");
  EXPECT_EQ(l.a.pid, 198671);
  l = Attr(" .. gpu-node-3.cluster: Test failure common.cu:890");
  EXPECT_EQ(l.a.host, "gpu-node-3");
  // A host the line's own NCCL prefix names wins.
  l = Attr("node017:12:13 [0] NCCL WARN x: Test NCCL failure common.cu:1 'y'");
  EXPECT_EQ(l.a.host, "node017");
  // No host in front, or not nccl-tests' wording: nothing.
  for (const char* no : {"Test CUDA failure common.cu:730 'unknown error'",
                         "NCCL failure all_reduce.cu:95 'unhandled cuda error'",
                         " .. pid 4101: Test failure common.cu:915", "Error: Test NCCL failure here",
                         "node1: Test NCCL failed common.cu:1 'x'"}) {
    Line m = Attr(no);
    EXPECT_TRUE(m.a.host.empty()) << no;
    EXPECT_FALSE(m.a.pid.has_value()) << no;
  }
}

// sinfo -R's rows (REASON USER TIMESTAMP NODELIST, Slurm's "%50E %9u %19H
// %N"): the row's one node is the host of its reason.
TEST(AttributeLine, SinfoReasonRowNamesItsNode) {
  Line l = Attr("Kill task failed                                   root      2024-01-25T15:12:23 gpu-node-7");
  EXPECT_EQ(l.a.host, "gpu-node-7");
  l = Attr("gpu dead                 slurm     2023-03-02T10:04:55 dgx[017]   ");
  EXPECT_EQ(l.a.host, "dgx017");
  l = Attr("NHC: check_nv_healthmon: GPU 3 ECC  root      2021-10-11T08:12:00 cn105.cluster.local");
  EXPECT_EQ(l.a.host, "cn105");
  // Several nodes name none; a header, a line whose last words are not a
  // user, a stamp and a node, or a row cut before its node name none.
  for (const char* no : {"Not responding                                     slurm     2024-01-25T15:12:23 gpu-[01-04]",
                         "REASON               USER      TIMESTAMP           NODELIST",
                         "checkpoint saved at 2024-01-25T15:12:23 step100",
                         "job started on 2024-01-25T15:12:23 node7",
                         "Kill task failed root 2024-01-25 15:12:23 node7",
                         "Kill task failed root 2024-01-25T15:12:23",
                         "  root 2024-01-25T15:12:23 node7",
                         "Kill task failed r@t 2024-01-25T15:12:23 node7"}) {
    EXPECT_TRUE(Attr(no).a.host.empty()) << no;
  }
}

TEST(AttributeLine, RanksInsideMessages) {
  EXPECT_EQ(Attr("[2026-11-02 13:46:41,123] [INFO] [logging.py:96:log_dist] [Rank 3] step=100").a.rank, 3);
  EXPECT_EQ(Attr("[PG 0 Rank 4] Timeout at NCCL work: 1").a.rank, 4);
  EXPECT_EQ(Attr("[PG ID 0 PG GUID 0(default_pg) Rank 6] Exception").a.rank, 6);
  EXPECT_EQ(Attr("x [PG ID 12 PG GUID 99(default_pg) Rank 4] y").a.rank, 4);
  EXPECT_EQ(Attr("ProcessGroupNCCL initialization options: size: 8, global rank: 3, TIMEOUT(ms): 600000").a.rank, 3);
  EXPECT_EQ(Attr("Rank 3: heartbeat monitor timed out").a.rank, 3);
  EXPECT_EQ(Attr("rank: 5 failed").a.rank, 5);
}

TEST(AttributeLine, GroupRanksAreNotGlobalRanks) {
  // Rank inside a TP/PP sub-group: its global rank is unknown.
  EXPECT_FALSE(Attr("[PG ID 12 PG GUID 99(tp_group) Rank 4] Watchdog caught collective operation timeout").a.rank.has_value());
  EXPECT_FALSE(Attr("[PG 3 Rank 4] Timeout").a.rank.has_value());
  EXPECT_FALSE(Attr("local_rank: 2").a.rank.has_value());
  EXPECT_FALSE(Attr("local rank: 2").a.rank.has_value());
  EXPECT_FALSE(Attr("peer rank: 2 unreachable").a.rank.has_value());
  EXPECT_FALSE(Attr("nranks 8 ranks: ok").a.rank.has_value());
  EXPECT_FALSE(Attr("frank: 2").a.rank.has_value());
  EXPECT_FALSE(Attr("rank 13:46:41").a.rank.has_value());
  // A launcher prefix beats a marker inside the message.
  EXPECT_EQ(Attr("[rank3]:[PG ID 0 PG GUID 0(default_pg) Rank 5] x").a.rank, 3);
}

TEST(AttributeLine, SyslogHeaders) {
  Line l = Attr("Nov  2 13:46:41 node017 kernel: [1000001.682554] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.");
  EXPECT_EQ(l.a.host, "node017");
  EXPECT_EQ(l.a.gpu, "0000:3b:00.0");
  EXPECT_EQ(l.a.pid, 1234);
  EXPECT_EQ(l.begin, 0u);
  l = Attr("2026-11-02T13:46:41.123456+00:00 node017 kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error");
  EXPECT_EQ(l.a.host, "node017");
  EXPECT_EQ(l.a.gpu, "0000:3b:00.0");
  EXPECT_FALSE(l.a.pid.has_value());
  l = Attr("Nov 02 13:46:41.123456 node017.cluster.local kernel: nvidia 0000:3b:00.0: AER: aer_status: 0x00004000");
  EXPECT_EQ(l.a.host, "node017");
  EXPECT_EQ(l.a.gpu, "0000:3b:00.0");
  l = Attr("Nov  2 13:46:41 node017 python3[22334]: [rank3]: hello");
  EXPECT_EQ(l.a.host, "node017");
  EXPECT_EQ(l.a.pid, 22334);
  EXPECT_EQ(l.a.rank, 3);
  EXPECT_EQ(l.message, "hello");
  l = Attr("<6>Nov  2 13:46:41 ip-10-0-1-23 kernel: Out of memory: Killed process 4242 (python3) total-vm:1kB");
  EXPECT_EQ(l.a.host, "ip-10-0-1-23");
  EXPECT_EQ(l.a.pid, 4242);
}

TEST(AttributeLine, ApplicationLogsAreNotSyslog) {
  EXPECT_TRUE(Attr("2026-11-02T13:46:41.123Z INFO trainer: step 3").a.host.empty());
  EXPECT_TRUE(Attr("2026-11-02 13:46:41,123 myapp worker: msg").a.host.empty());
  EXPECT_TRUE(Attr("2026-11-02T13:46:41Z E app: x").a.host.empty());
  EXPECT_TRUE(Attr("Nov  2 13:46:41 node017 no colon tag").a.host.empty());
}

TEST(AttributeLine, KernelPciDevices) {
  EXPECT_EQ(Attr("[1000001.682554] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.").a.gpu, "0000:3b:00.0");
  EXPECT_EQ(Attr("NVRM: Xid (0000:03:00): 13, Graphics Exception").a.gpu, "0000:03:00.0");
  EXPECT_EQ(Attr("NVRM: GPU at PCI:0000:B1:00: GPU-3f1c8d7a-0000-1111-2222-333344445555").a.gpu, "0000:b1:00.0");
  EXPECT_EQ(Attr("NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x23:0x56:515)").a.gpu, "0000:3b:00.0");
  EXPECT_EQ(Attr("[  12.3] nvidia 0000:3b:00.0: enabling device (0000 -> 0002)").a.gpu, "0000:3b:00.0");
  EXPECT_EQ(Attr("GPU 00000000:3B:00.0: Detected Critical Xid Error").a.gpu, "0000:3b:00.0");
  // Not a GPU: a PCIe port, and times inside NVRM text.
  EXPECT_TRUE(Attr("pcieport 0000:3a:00.0: AER: Uncorrected (Fatal) error received").a.gpu.empty());
  EXPECT_TRUE(Attr("NVRM: loading NVIDIA UNIX x86_64 Kernel Module 550.54.15 at 13:46:10").a.gpu.empty());
  EXPECT_EQ(Attr("Memory cgroup out of memory: Killed process 12345 (python)").a.pid, 12345);
  EXPECT_EQ(Attr("oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),task=python3,pid=777,uid=0").a.pid, 777);
  // The kernel names a segfault's victim by its pid.
  EXPECT_EQ(Attr("Nov  2 13:46:41 gpu-003 kernel: [1000001.5] python3[41234]: segfault at 0 ip 00007f3a1c2b4e10 "
                 "sp 00007ffd5e0b1c40 error 4 in libc.so.6[7f3a1c228000+195000]").a.pid, 41234);
  EXPECT_EQ(Attr("pt_main_thread[88213]: segfault at 18 ip 00007f0c8a5d2b1e sp 00007f0c6dffe9c0 error 4 likely on CPU 17")
                .a.pid, 88213);
  EXPECT_FALSE(Attr("python3: segfault at 0 ip 00007f3a1c2b4e10").a.pid.has_value());
  EXPECT_FALSE(Attr("[123456789012]: segfault at 0").a.pid.has_value());
}

TEST(AttributeLine, JsonLines) {
  Line l = Attr(R"({"ts":"2026-11-02T13:46:41Z","rank":3,"local_rank":"1","hostname":"node017.x","pid":99,"msg":"\"rank\": 7 [Rank 8]"})");
  EXPECT_EQ(l.a.rank, 3);
  EXPECT_EQ(l.a.local_rank, 1);
  EXPECT_EQ(l.a.host, "node017");
  EXPECT_EQ(l.a.pid, 99);
  l = Attr(R"({"_HOSTNAME":"node018","_PID":"4242","MESSAGE":"x"})");
  EXPECT_EQ(l.a.host, "node018");
  EXPECT_EQ(l.a.pid, 4242);
  // Nested fields are not the writer's.
  l = Attr(R"({"peer":{"rank":5,"host":"node3"},"msg":"x"})");
  EXPECT_FALSE(l.a.rank.has_value());
  EXPECT_TRUE(l.a.host.empty());
  EXPECT_EQ(Attr(R"({"pci_bus_id":"00000000:3B:00.0"})").a.gpu, "0000:3b:00.0");
}

TEST(AttributeLine, UrlsAndPortsAreNotPrefixes) {
  for (std::string_view s :
       {"http://node017:8080/health returned 503",
        "connecting to node017:29500", "tcp://10.0.1.23:29500 refused",
        "node017:29500 [3]x", "MASTER_ADDR=node017:29500"}) {
    Line l = Attr(s);
    EXPECT_TRUE(l.a.host.empty()) << s;
    EXPECT_FALSE(l.a.pid.has_value()) << s;
    EXPECT_FALSE(l.a.rank.has_value()) << s;
  }
}

TEST(AttributeLine, EmptyAndNullMessageBegin) {
  EXPECT_FALSE(AttributeLine("").rank.has_value());
  EXPECT_EQ(AttributeLine("[rank1]:x", nullptr).rank, 1);
  size_t b = 99;
  AttributeLine("", &b);
  EXPECT_EQ(b, 0u);
}

TEST(ParseNcclInitLine, InitStartAndComplete) {
  auto init = ParseNcclInitLine(
      "[rank131]:node017:12345:12345 [3] NCCL INFO comm 0x55d0c0a0 rank 131 "
      "nranks 1024 cudaDev 3 nvmlDev 3 busId 3b000 commId 0x1a2b3c4d5e6f7081 - "
      "Init START");
  ASSERT_TRUE(init.has_value());
  EXPECT_EQ(init->host, "node017");
  EXPECT_EQ(init->pid, 12345);
  EXPECT_EQ(init->rank, 131);
  EXPECT_EQ(init->nranks, 1024);
  EXPECT_EQ(init->cuda_dev, 3);
  EXPECT_EQ(init->bus_id, "0000:3b:00.0");
  EXPECT_EQ(init->comm_id, "0x1a2b3c4d5e6f7081");
  init = ParseNcclInitLine("node2:7:7 [0] NCCL INFO comm 0x7f00 rank 0 nranks 8 cudaDev 0 busId 1000 - Init COMPLETE");
  ASSERT_TRUE(init.has_value());
  EXPECT_EQ(init->bus_id, "0000:01:00.0");
  EXPECT_TRUE(init->comm_id.empty());
  EXPECT_FALSE(ParseNcclInitLine("node2:7:7 [0] NCCL INFO Channel 00/02 : 0 1 2 3").has_value());
  EXPECT_FALSE(ParseNcclInitLine("node2:7:7 [0] NCCL INFO comm 0x7f00 rank 9 nranks 8 cudaDev 0 busId 1000").has_value());
}


// NCCL's net_ib "Using" line in the forms of 2.12 to 2.30 (src/transport/
// net_ib.cc, net_ib/init.cc): " [d]name:port[:rail][:plane]/LL" per device.
TEST(ParseNcclIbDevices, DeviceListOfEveryVersion) {
  using Devs = std::vector<std::pair<int64_t, std::string>>;
  EXPECT_EQ(ParseNcclIbDevices("gpu-a01:23456:23456 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB "
                               "[1]mlx5_3:1/RoCE ; OOB eth0:10.0.0.11<0>"),
            (Devs{{0, "mlx5_0"}, {1, "mlx5_3"}}));
  EXPECT_EQ(ParseNcclIbDevices(" [0]mlx5_0:1:0/IB [1]mlx5_1:1::0/IB [2]mlx5_4:1:1:1/IB [RO]"),
            (Devs{{0, "mlx5_0"}, {1, "mlx5_1"}, {2, "mlx5_4"}}));
  // The OOB interface and the relaxed-ordering mark are no devices.
  EXPECT_EQ(ParseNcclIbDevices("NET/IB : Using [0]bnxt_re0:1/RoCE [RO]; OOB [1]eth0:10.0.0.1<0>"),
            (Devs{{0, "bnxt_re0"}}));
  EXPECT_TRUE(ParseNcclIbDevices("NET/IB : No device found.").empty());
  EXPECT_TRUE(ParseNcclIbDevices("NET/IB : Using [x]mlx5_0:1/IB []:1/IB [2]mlx5_2/IB").empty());
}

// pdsh (DeepSpeed's multi-node runner) prefixes every remote line with the
// host; behind it the line is an ordinary one (huggingface/accelerate#1317,
// huggingface/transformers#22363).
TEST(AttributeLine, PdshHostPrefixBeforeAnNcclPrefix) {
  Line l = Attr("gpu1505: gpu1505:22060:22174 [0] NCCL INFO Connected all rings");
  EXPECT_EQ(l.a.host, "gpu1505");
  EXPECT_EQ(l.a.pid, 22060);
  EXPECT_EQ(l.a.local_rank, 0);
  // pdsh given addresses: the NCCL prefix's own name is the better host.
  l = Attr("104.171.201.171: lambda-scalar02:95753:96917 [3] NCCL INFO Using network Socket");
  EXPECT_EQ(l.a.host, "lambda-scalar02");
  EXPECT_EQ(l.a.pid, 95753);
}

TEST(AttributeLine, PdshHostPrefixBeforeAStampAndTorchrunPrefix) {
  Line l = Attr("worker-1: [2023-03-24 10:44:59,412] [INFO] [launch.py:142:main] "
                "WORLD INFO DICT: {'worker-0': [0, 1], 'worker-1': [0, 1]}");
  EXPECT_EQ(l.a.host, "worker-1");
  EXPECT_TRUE(l.message.starts_with("[2023-03-24"));
  l = Attr("gpu-b02-008: [rank12]:[E1109 10:38:15.553009 ProcessGroupNCCL.cpp:607] "
           "[Rank 12] Watchdog caught collective operation timeout");
  EXPECT_EQ(l.a.host, "gpu-b02-008");
  EXPECT_EQ(l.a.rank, 12);
}

TEST(AttributeLine, WordColonMessagesAreNotPdshHosts) {
  // A bare "word: " is a message unless a logged line follows it.
  EXPECT_TRUE(Attr("python3: can't open file 'train.py': [Errno 2] No such file").a.host.empty());
  EXPECT_TRUE(Attr("nvidia-smi: command not found").a.host.empty());
  EXPECT_TRUE(Attr("RuntimeError: 2024-05-28 17:40:21 CUDA error").a.host.empty());
  EXPECT_TRUE(Attr("error: [2024-05-28 17:40:21,436] failed").a.host.empty());
  std::string_view host;
  EXPECT_EQ(PdshPrefixEnd("node0017: Traceback (most recent call last):", &host), 10u);
  EXPECT_EQ(host, "node0017");
  EXPECT_EQ(PdshPrefixEnd("Traceback: x"), 0u);
  EXPECT_EQ(PdshPrefixEnd("node0017:22060:22174 [0] NCCL INFO"), 0u);
}


// RFC 5424 (section 6.5's examples; rsyslog's RSYSLOG_SyslogProtocol23Format
// and journal exporters write the same header, some without "<PRI>").
TEST(AttributeLine, Rfc5424Header) {
  Line l = Attr("<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - "
                "%% It's time to make the do-nuts.");
  EXPECT_EQ(l.a.host, "192.0.2.1");
  EXPECT_EQ(l.a.pid, 8710);
  l = Attr("<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 "
           "[exampleSDID@32473 iut=\"3\" eventSource=\"Application\" eventID=\"1011\"]"
           "[examplePriority@32473 class=\"high\"] An application event log entry");
  EXPECT_EQ(l.a.host, "mymachine");
  EXPECT_FALSE(l.a.pid.has_value());
  // The kernel's lines carry no PROCID; an NCCL prefix in the MSG still counts.
  l = Attr("<3>1 2025-03-29T18:58:35.832621+00:00 h100-iad-0001 kernel - - - NVRM: Xid "
           "(PCI:0000:3b:00): 74, pid=325296, name=python3, NVLink: fatal error detected");
  EXPECT_EQ(l.a.host, "h100-iad-0001");
  EXPECT_EQ(l.a.gpu, "0000:3b:00.0");
  EXPECT_EQ(l.a.pid, 325296);
  l = Attr("1 2025-03-29T18:58:35.832621+00:00 h100-iad-0001 python3 325296 - - "
           "h100-iad-0001:325296:325299 [5] enqueue.cc:1556 NCCL WARN Cuda failure");
  EXPECT_EQ(l.a.host, "h100-iad-0001");
  EXPECT_EQ(l.a.pid, 325296);
  EXPECT_EQ(l.a.local_rank, 5);
  // Not RFC 5424: a count before an ISO stamp, an unterminated SD-ELEMENT.
  EXPECT_TRUE(Attr("1 2025-03-29T18:58:35Z retries left").a.host.empty());
  EXPECT_TRUE(Attr("<3>1 2025-03-29T18:58:35Z h1 app 12 - [x a=\"1\" msg").a.host.empty());
}

// IsHostChar's table against its definition, a letter, a digit, '-', '.'
// or '_', for every byte (the high half, negative as char, included).
TEST(HostChars, TableIsLettersDigitsDashDotUnderscore) {
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    const bool host = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                      c == '.' || c == '_';
    EXPECT_EQ(attribution_internal::IsHostChar(c), host) << "byte " << b;
  }
}

// A host token is read up to 253 bytes (LooksLikeHostToken's bound): a
// 253-byte name behind an NCCL prefix is the host, a 254-byte one is not.
TEST(HostChars, HostTokenBound) {
  const std::string h253 = "n" + std::string(251, 'a') + "1";
  const std::string h254 = "n" + std::string(252, 'a') + "1";
  EXPECT_EQ(Attr(h253 + ":41000:41211 [0] NCCL INFO x").a.host, h253);
  EXPECT_TRUE(Attr(h254 + ":41000:41211 [0] NCCL INFO x").a.host.empty());
}

}  // namespace
}  // namespace faultline
