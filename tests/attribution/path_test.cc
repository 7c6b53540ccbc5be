// AttributeFromPath over the layouts job archives use, and the directory
// names that only look like hosts.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attribution/attribution.h"
#include "gtest/gtest.h"

namespace faultline {
namespace {

struct Want {
  std::string_view path;
  std::optional<int64_t> rank;
  std::optional<int64_t> local_rank;
  std::string_view host;
};

void Check(const Want& w) {
  Attribution a = AttributeFromPath(w.path);
  EXPECT_EQ(a.rank, w.rank) << w.path;
  EXPECT_EQ(a.local_rank, w.local_rank) << w.path;
  EXPECT_EQ(a.host, w.host) << w.path;
  EXPECT_FALSE(a.pid.has_value()) << w.path;
  EXPECT_TRUE(a.gpu.empty()) << w.path;
}

TEST(AttributeFromPath, PerHostDirectories) {
  Check({"node017/rank-3.log", 3, std::nullopt, "node017"});
  Check({"/archive/job-1234/node017/dmesg", std::nullopt, std::nullopt, "node017"});
  Check({"/archive/job-1234/node017/kern.log", std::nullopt, std::nullopt, "node017"});
  Check({"/archive/host-a12/messages", std::nullopt, std::nullopt, "host-a12"});
  Check({"logs/gpu-node-3/syslog.1", std::nullopt, std::nullopt, "gpu-node-3"});
  Check({"logs/ip-10-0-1-23.ec2.internal/train.log", std::nullopt, std::nullopt, "ip-10-0-1-23"});
  Check({"logs/worker-3/stdout.log", std::nullopt, std::nullopt, "worker-3"});
  Check({"logs/nid001234/out.txt", std::nullopt, std::nullopt, "nid001234"});
  Check({"logs/10.0.1.23/dmesg.txt", std::nullopt, std::nullopt, "10.0.1.23"});
  Check({"node017.cluster.local/var/log/kern.log", std::nullopt, std::nullopt, "node017"});
  Check({"C:\\logs\\node017\\rank_2.out", 2, std::nullopt, "node017"});
  // A generic host-shaped directory when nothing is named like a node.
  Check({"/data/a100-03/train.log", std::nullopt, std::nullopt, "a100-03"});
  Check({"/archive/cn042/dmesg", std::nullopt, std::nullopt, "cn042"});
  // Preferred beats generic; the deepest preferred wins.
  Check({"/mnt/a100-cluster7/node017/rank3.txt", 3, std::nullopt, "node017"});
  Check({"/logs/host-a12/node018/x.log", std::nullopt, std::nullopt, "node018"});
  Check({"sosreport-node017-12345-2026-11-02-abcde/var/log/messages", std::nullopt, std::nullopt, "node017"});
  // A file named after its host.
  Check({"collected/dmesg/node017.log", std::nullopt, std::nullopt, "node017"});
  Check({"collected/node017.dmesg.txt.gz", std::nullopt, std::nullopt, "node017"});
  // Under a folder of hosts, a host name need not end in a digit (GKE
  // nodes end in four random characters).
  Check({"nodes/gke-train-a3-pool-f76d27f1-tdtx/dmesg.txt", std::nullopt, std::nullopt,
         "gke-train-a3-pool-f76d27f1-tdtx"});
  Check({"hosts/gpu-east-b/kern.log", std::nullopt, std::nullopt, "gpu-east-b"});
  // Not a name of a host, even there.
  Check({"nodes/summary/kern.log", std::nullopt, std::nullopt, ""});
  Check({"nodes/run-final/kern.log", std::nullopt, std::nullopt, ""});
  Check({"logs/gke-train-a3-pool-f76d27f1-tdtx/dmesg.txt", std::nullopt, std::nullopt, ""});
  // A file in a folder of hosts is named after what it holds, not a host:
  // only its subfolders are hosts (a file's own name still is one when it
  // ends in a digit, as anywhere).
  Check({"hosts/slurm-task-bus-error.log", std::nullopt, std::nullopt, ""});
  Check({"nodes/torchrun-childfailed-pod-host.log", std::nullopt, std::nullopt, ""});
  Check({"nodes/node017.log", std::nullopt, std::nullopt, "node017"});
}

size_t Below(std::string_view root, std::string_view file) { return PathBelowRoot(root, file); }

// Only the part below the input root the user gave names hosts: a folder
// above it ("simS2" in /data/simS2/cases/c016) is somebody's naming, not a
// machine. The root's own name counts when it is named like a node.
TEST(AttributeFromPath, BelowTheInputRoot) {
  std::string_view root = "/data/simS2/cases/c016";
  std::string_view f = "/data/simS2/cases/c016/rank-3.log";
  EXPECT_EQ(AttributeFromPath(f).host, "simS2");  // the whole path: the bug
  Attribution a = AttributeFromPath(f, Below(root, f));
  EXPECT_EQ(a.host, "");
  EXPECT_EQ(a.rank, 3);
  f = "/data/simS2/cases/c016/node017/kern.log";
  EXPECT_EQ(AttributeFromPath(f, Below(root, f)).host, "node017");
  // The root is a node's folder (`diagnose node055/`); and a file given
  // directly, in one.
  root = "/archive/node017";
  f = "/archive/node017/kern.log";
  EXPECT_EQ(AttributeFromPath(f, Below(root, f)).host, "node017");
  EXPECT_EQ(AttributeFromPath(f, Below(f, f)).host, "node017");
  EXPECT_EQ(AttributeFromPath("node017.log", Below("node017.log", "node017.log")).host, "node017");
  // Anything below the root beats its name; a root not shaped like a host
  // names none.
  f = "/archive/node017/a100-03/train.log";
  EXPECT_EQ(AttributeFromPath(f, Below(root, f)).host, "a100-03");
  root = "/data/gpu-b02";
  f = "/data/gpu-b02/train.log";
  EXPECT_EQ(AttributeFromPath(f, Below(root, f)).host, "gpu-b02");
  root = "/data/run-7";
  f = "/data/run-7/train.log";
  EXPECT_EQ(AttributeFromPath(f, Below(root, f)).host, "");
  root = "/home/node017";
  f = "/home/node017/train.log";
  EXPECT_EQ(AttributeFromPath(f, Below(root, f)).host, "");
  // A trailing separator, and a root that only shares a prefix.
  EXPECT_EQ(Below("/data/c016/", "/data/c016/x.log"), 11u);
  EXPECT_EQ(Below("/data/c01", "/data/c016/x.log"), 0u);
  EXPECT_EQ(Below("-", "-"), 0u);
  EXPECT_EQ(Below("kern.log", "kern.log"), 0u);
}

TEST(AttributeFromPath, OneFilePerRank) {
  Check({"rank-3.log", 3, std::nullopt, ""});
  Check({"logs/rank3.txt", 3, std::nullopt, ""});
  Check({"logs/rank_3.out", 3, std::nullopt, ""});
  Check({"logs/rank-3.log.gz", 3, std::nullopt, ""});
  Check({"logs/train_rank12.log", 12, std::nullopt, ""});
  Check({"logs/rank-3-of-8.stderr", 3, std::nullopt, ""});
  Check({"logs/worker-3.log", 3, std::nullopt, ""});
  Check({"logs/worker_3.txt", 3, std::nullopt, ""});
  Check({"logs/train.12.out", 12, std::nullopt, ""});
  Check({"logs/train.0.err", 0, std::nullopt, ""});
  Check({"logs/1234567.5.out", 5, std::nullopt, ""});   // %j.%t.out
  Check({"logs/train-1234567-5.out", 5, std::nullopt, ""});   // %x-%j-%t.out
  Check({"logs/1234567-12.err", 12, std::nullopt, ""});       // %j-%t.err
  // A date, an array task (%A_%a), a log that is not srun's.
  Check({"logs/app-2026-11.out", std::nullopt, std::nullopt, ""});
  Check({"logs/train-1234567_5.out", std::nullopt, std::nullopt, ""});
  Check({"logs/train-1234567-5.log", std::nullopt, std::nullopt, ""});
  Check({"logs/rank_7/stderr.log", 7, std::nullopt, ""});
  Check({"logs/local_rank_2.log", std::nullopt, 2, ""});
  // Open MPI's mpirun --output-filename DIR: DIR/1/rank.N/{stdout,stderr}.
  Check({"mpi_out/1/rank.12/stdout", 12, std::nullopt, ""});
  Check({"mpi_out/1/rank.0/stderr", 0, std::nullopt, ""});
  Check({"mpi_out/1/rank.x/stderr", std::nullopt, std::nullopt, ""});
}

TEST(AttributeFromPath, TorchelasticLogDir) {
  Check({"/tmp/torchelastic/none_3kd8a2fw/attempt_0/2/stderr.log", std::nullopt, 2, ""});
  Check({"run/job_abc/attempt_1/0/stdout.log", std::nullopt, 0, ""});
  Check({"node017/elastic/attempt_0/7/error.json", std::nullopt, 7, "node017"});
  // "attempt_0" itself is never a host, and without a rank dir says nothing.
  Check({"elastic/attempt_0/stdout.log", std::nullopt, std::nullopt, ""});
}

TEST(AttributeFromPath, SlurmAndKubernetes) {
  Check({"slurm-1234.out", std::nullopt, std::nullopt, ""});
  Check({"/home/u/slurm-1234_7.out", std::nullopt, std::nullopt, ""});
  // Pod name as host: pod logs do not say which node ran them.
  Check({"pods/trainer-5/pytorch.log", std::nullopt, std::nullopt, "trainer-5"});
  Check({"pods/llm-train-worker-xk2p9/pytorch.log", std::nullopt, std::nullopt, "llm-train-worker-xk2p9"});
  Check({"/var/log/pods/default_trainer-5_0b1c2d3e-1111-2222-3333-444455556666/pytorch/0.log",
         std::nullopt, std::nullopt, "trainer-5"});
  Check({"/var/log/containers/trainer-5_default_pytorch-0123456789abcdef.log",
         std::nullopt, std::nullopt, "trainer-5"});
  // A real node directory beats the pod name.
  Check({"node017/pods/trainer-5/pytorch.log", std::nullopt, std::nullopt, "node017"});
}

TEST(AttributeFromPath, FalsePositives) {
  for (std::string_view p :
       {"/tmp/run-2026/logs/app.log", "/data/exp3/logs/app.log",
        "/home/alice2/train.log", "/Users/bob7/x.log", "/ckpt/step100/log.txt",
        "/models/llama3-70b/out.log", "/opt/python3.11/lib/x.log",
        "/usr/local/cuda-12.4/x.log", "/work/2026-11-02/x.log",
        "/runs/v2/train.log", "/tmp/gpu3/x.log", "/scratch/data1/x.log",
        "/job/3f2a9c1d7e/x.log", "/a/123e4567-e89b-12d3-a456-426614174000/x.log",
        "/logs/job-1234/app.log", "/log/x86_64/a.log", "/logs/kern.log.1",
        "/logs/app.2026.log", "/logs/python3.11.log", "/logs/app.20261102.log",
        "/logs/frank3.log", "/logs/node_rank1.log", "/logs/group_rank2.log",
        "/logs/seed42/ranks.txt", "/logs/cluster1/x.log", "/logs/rack3/x.log", "/logs/app.02.log", "", "/", "////", ".", ".."}) {
    Attribution a = AttributeFromPath(p);
    EXPECT_FALSE(a.rank.has_value()) << p;
    EXPECT_FALSE(a.local_rank.has_value()) << p;
    EXPECT_TRUE(a.host.empty()) << p << " -> " << a.host;
  }
}

TEST(AttributeFromPath, TrailingSeparatorMeansDirectory) {
  Check({"archive/node017/", std::nullopt, std::nullopt, "node017"});
  Check({"archive/rank-3.log/", std::nullopt, std::nullopt, ""});
}

TEST(AttributeFromPath, VeryDeepPathKeepsTheTail) {
  std::string p;
  for (int i = 0; i < 200; ++i) p += "d/";
  p += "node017/rank-9.log";
  Check({p, 9, std::nullopt, "node017"});
}

TEST(ExpandNodelist, SlurmHostLists) {
  using V = std::vector<std::string>;
  EXPECT_EQ(ExpandNodelist("gpu-[001-004,017]"), (V{"gpu-001", "gpu-002", "gpu-003", "gpu-004", "gpu-017"}));
  EXPECT_EQ(ExpandNodelist("node[1-3],login1"), (V{"node1", "node2", "node3", "login1"}));
  EXPECT_EQ(ExpandNodelist("f006"), (V{"f006"}));
  EXPECT_EQ(ExpandNodelist("a[1-2]-b[3-4]"), (V{"a1-b3", "a1-b4", "a2-b3", "a2-b4"}));
  EXPECT_EQ(ExpandNodelist("queue-0-dy-compute-resource-g4dn-1-[1-3]"),
            (V{"queue-0-dy-compute-resource-g4dn-1-1", "queue-0-dy-compute-resource-g4dn-1-2",
               "queue-0-dy-compute-resource-g4dn-1-3"}));
  EXPECT_TRUE(ExpandNodelist("gpu-[004-001]").empty());
  EXPECT_TRUE(ExpandNodelist("gpu-[001").empty());
  EXPECT_TRUE(ExpandNodelist("gpu-]001[").empty());
  EXPECT_TRUE(ExpandNodelist("").empty());
  EXPECT_TRUE(ExpandNodelist("n[0-999999999]").empty());  // refused, not expanded
  EXPECT_EQ(ExpandNodelist("n[0-65535]").size(), 65536u);
  EXPECT_TRUE(ExpandNodelist("n[0-65536]").empty());
}

}  // namespace
}  // namespace faultline
