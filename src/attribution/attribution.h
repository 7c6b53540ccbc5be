// Which rank, host, GPU and pid a log line belongs to. Two sources of truth:
// the path of the file (per-host directories, one file per rank, torchelastic
// trees, pods/<pod>/<container>.log) and prefixes inside the line (torchrun
// "[rank3]:", srun -l "3: ", mpirun "[1,12]<stdout>:", horovodrun
// "[12]<stderr>:", pdsh "worker-0: ", NCCL "host:pid:tid [dev]", UCX
// "[host:pid:0:tid]", vLLM "(VllmWorker TP0 pid=N)" (coloured or nested:
// the innermost process wrote the line), SGLang "[<time> DP1 TP3]",
// "[Rank 3]"/"[PG 0 Rank 4]" in messages, syslog hostnames).
//
// TopologyMap learns rank<->host<->GPU<->PCI bus and pid->rank links from the
// lines that print them, so a kernel Xid naming a PCI bus or an OOM-killer
// line naming a pid can be attributed to a rank afterwards.
//
// Thread-safety: the free functions are pure. TopologyMap is not
// synchronised: fill it from one thread, then read it from any.
#ifndef FAULTLINE_ATTRIBUTION_ATTRIBUTION_H_
#define FAULTLINE_ATTRIBUTION_ATTRIBUTION_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace faultline {

struct Attribution {
  std::optional<int64_t> rank;        // global rank
  std::optional<int64_t> local_rank;  // e.g. torchelastic local rank, GPU index
  std::optional<int64_t> pid;
  std::string host;                   // empty when unknown
  std::string gpu;                    // PCI bus id "0000:3b:00.0" or device index
  // The srun task a line reports on ("srun: error: node017: task 3: Exited
  // with exit code 1"): the rank when srun launched the ranks itself, a node
  // index when a launcher under srun (torchrun) numbers them
  // (TopologyMap::RankForTask tells which).
  std::optional<int64_t> task;
};

// Attribution implied by a path: "node017/rank-3.log", "logs/worker-3.txt",
// "slurm-1234.out", "job.3.out", "attempt_0/2/stderr.log" (local rank 2),
// "pods/trainer-5/pytorch.log".
//
// `below` is where, in `path`, the part under the input root the user gave
// begins (ScanPaths passes the root's length; 0 reads the whole path). Only
// components past it say anything: folders above the input ("/data/simS2/
// cases/c016") are the user's naming, not machines. The root's own last
// component (the folder the user named, `diagnose gpu-b02/`, or a file's
// folder) counts last, when shaped like a host: "c016" is not.
Attribution AttributeFromPath(std::string_view path, size_t below = 0);

// Where the part of `file` under `root` begins: `file` as ExpandPath(root)
// listed it. A root that is the file itself begins at the file's name (its
// folder is the root); a file not under root is read whole (0).
size_t PathBelowRoot(std::string_view root, std::string_view file);

// Attribution found in one line. `line` is the text after the timestamp has
// been removed by the caller, or the whole line; both must work. Fields the
// line does not name stay unset.
//
// *message_begin (when non-null) receives the offset in `line` where the
// message proper starts, past any launcher prefix ("[rank3]:", "3: ").
Attribution AttributeLine(std::string_view line, size_t* message_begin = nullptr);
// Where AttributeLine puts *message_begin, from the line's prefixes alone.
size_t MessageBegin(std::string_view line);
// AttributeLine keeps, per thread, what the scans of a line's message found
// for the bytes they read, and reuses it for a line that repeats them (a
// dense log's same message under another clock), and what it gave a whole
// line, for a line equal to it but for a glog header's clock. On by
// default; tests turn both off to compare.
void SetMessageMemo(bool on);

// pdsh (and the DeepSpeed launcher over it) puts "host: " in front of every
// line a remote command writes: "gpu1505: gpu1505:22060:22174 [0] NCCL INFO
// ...". Where such a prefix ends (0 without one) and, in *host, the name.
// The shape alone is weak ("python3: can't open file" has it):
// AttributeLine takes it only when a stamp or a launcher prefix follows;
// a caller that saw it on the lines of the whole file may strip it first.
size_t PdshPrefixEnd(std::string_view line, std::string_view* host = nullptr);

// Ray's RayTaskError header, "ray::<title> (pid=N, ip=A[, actor_id=X][,
// repr=R])" (ray/exceptions.py RayTaskError.__str__ prints it in place of
// the "Traceback (most recent call last):" of the task's own traceback, so
// it heads the frames of the process it names): where its process title
// starts in `line` (npos without one), and in *host and *pid what it names.
size_t FindRayTaskHeader(std::string_view line, std::string* host = nullptr,
                         std::optional<int64_t>* pid = nullptr);

// Merges `more` into `base`: fields unset in base are taken from more.
void MergeAttribution(Attribution& base, const Attribution& more);

// Normalises a PCI bus id as NCCL and the NVIDIA driver print it ("3b000",
// "0000:3b:00.0", "00000000:3B:00.0", "PCI:0000:3b:00") to "0000:3b:00.0".
std::string NormalizePciBusId(std::string_view s);

// Host names as every source is compared by: the short name before the first
// '.', because NCCL prints gethostname() cut at the first dot while path
// directories and rsyslog may carry the FQDN. IPv4 literals stay whole.
// Returns "" for something that is not a host name.
std::string NormalizeHost(std::string_view host);

// Slurm's compressed host list ("gpu-[001-004,017]", "node[1-3],login1")
// as one name per host, zero padding kept; empty when malformed or longer
// than 65,536 names.
std::vector<std::string> ExpandNodelist(std::string_view list);

// What an NCCL communicator init line says:
//   node017:12345:12345 [3] NCCL INFO comm 0x55d0c0a0 rank 131 nranks 1024
//   cudaDev 3 nvmlDev 3 busId 3b000 commId 0x1a2b3c4d5e6f7081 - Init START
// `rank` is the rank inside that communicator: only the world communicator's
// (the largest nranks) is the global rank, see TopologyMap::AddNcclInit.
struct NcclInit {
  std::string host;              // normalised; empty when the prefix is missing
  std::optional<int64_t> pid;
  int64_t rank = -1;
  int64_t nranks = 0;
  int64_t cuda_dev = -1;
  std::string bus_id;            // normalised "0000:3b:00.0"
  std::string comm_id;           // "0x1a2b3c4d5e6f7081"; empty on old NCCL
};

// Parses an NCCL "comm ... rank R nranks N cudaDev D ... busId B" INFO line
// (Init START / Init COMPLETE / ncclCommInitRank). nullopt for other lines.
std::optional<NcclInit> ParseNcclInitLine(std::string_view line);

// The HCA list of NCCL's "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/RoCE
// [RO]; OOB eth0:10.0.0.1<0>" line, as (index, name) in line order: the
// text after "Using" (the `ib_devs` field) or the whole line. Rail and
// plane suffixes ("[2]mlx5_4:1:0/IB", NCCL 2.23+) are read past. The
// index is the one a "Channel ... via NET/IB/<index>" line names.
std::vector<std::pair<int64_t, std::string>> ParseNcclIbDevices(std::string_view list);

class TopologyMap {
 public:
  // From an NCCL init line: rank, local device index and busId ("3b000").
  void AddDevice(const std::string& host, int64_t rank, int64_t cuda_dev,
                 std::string_view bus_id);
  void AddPid(const std::string& host, int64_t pid, int64_t rank);
  // A launcher's word that this pid is the worker of that local rank
  // (torchrun's "local_rank: 3 (pid: 4015788)", DeepSpeed's spawn line):
  // the rank follows once the host's device map is known.
  void AddPidLocalRank(const std::string& host, int64_t pid, int64_t local_rank);

  // The rank owning the GPU at this bus on this host (bus in any format).
  std::optional<int64_t> RankForBus(const std::string& host,
                                    std::string_view bus_id) const;
  // When the host is unknown (dmesg without hostname): unique match over all
  // hosts, else nullopt.
  std::optional<int64_t> RankForBusAnyHost(std::string_view bus_id) const;
  std::optional<int64_t> RankForPid(const std::string& host, int64_t pid) const;
  // The one host AddPid linked `pid` on (as spelt there), nullopt when none
  // or several: within one file, the host of a line naming only its pid.
  std::optional<std::string> HostForPid(int64_t pid) const;
  std::optional<int64_t> RankForDevice(const std::string& host,
                                       int64_t cuda_dev) const;
  std::optional<std::string> HostForRank(int64_t rank) const;
  // The rank of srun task `task` reported on `host`: the task itself when
  // the ranks srun launched are its tasks, which the topology shows by rank
  // `task` living on `host`, or by knowing neither that rank's host nor any
  // rank of `host`. A task whose rank lives elsewhere, or a host whose known
  // ranks are others, is a node index of a launcher under srun: nullopt.
  std::optional<int64_t> RankForTask(const std::string& host, int64_t task) const;
  std::optional<std::string> BusForRank(int64_t rank) const;
  // Whether each of ranks 0..nranks-1 has its host and its GPU's bus known:
  // then the job's GPUs are all known, and a GPU of a job host outside them
  // is not the job's.
  bool KnowsEveryBus(int64_t nranks) const;
  // Whether `host` is the known host of a rank; whether the GPU at `bus_id`
  // on it is a rank's.
  bool HasRankOn(const std::string& host) const;
  bool IsRankBus(const std::string& host, std::string_view bus_id) const;

  // An HCA ("mlx5_3") that a rank's own NCCL line names as its device: the
  // completion error's "hca mlx5_3" (NCCL 2.22+), the async event's
  // "NET/IB : mlx5_3:1 Got ...". A kernel line about that HCA on that host
  // (its port went down) is then about these ranks.
  void AddHca(const std::string& host, std::string_view hca, int64_t rank);
  // The ranks known to use `hca` on `host`, ascending; empty when none.
  std::vector<int64_t> RanksForHca(const std::string& host, std::string_view hca) const;
  // The HCA at a PCI function of `host` (NCCL's "NET/IB: [3] mlx5_3:uverbs3:
  // 1/IB ... pciPath=/sys/devices/.../0000:3b:00.0"): a kernel line names
  // the HCA by that function ("mlx5_core 0000:3b:00.0: Port module event").
  void AddHcaPci(const std::string& host, std::string_view pci, std::string_view hca);
  // The HCA's name at that function, nullopt when no line tied one.
  std::optional<std::string> HcaForPci(const std::string& host, std::string_view pci) const;
  // The HCA whose port is the netdev `netdev` of `host` (ibdev2netdev's
  // "mlx5_0 port 1 ==> ibp26s0 (Down)"): a kernel or networkd line names
  // the port by it ("ibp26s0: Lost carrier"). Two HCAs named for one
  // netdev name none.
  void AddHcaNetdev(const std::string& host, std::string_view netdev, std::string_view hca);
  std::optional<std::string> HcaForNetdev(const std::string& host, std::string_view netdev) const;

  // Feeds an NCCL init line, keeping only the world
  // communicator: PyTorch creates sub-communicators (TP/PP/DP groups) whose
  // "rank" is a group rank, and their init lines may come first. Entries
  // learnt from a communicator smaller than the largest seen are retracted.
  // Entries added with AddDevice/AddPid are the caller's word and kept.
  void AddNcclInit(const NcclInit& init);

  // Records what one attributed line proves when it
  // names a rank: pid -> rank and GPU (bus id or device index) -> rank on its
  // host, and the rank's host. Lines without a rank teach nothing.
  void Learn(const Attribution& a);

  // Fills a.rank when the line did not name it, from the PCI bus (any host
  // when the host is unknown), then the pid (its rank, else the local rank
  // a launcher gave it), then the device index (local_rank, else a numeric
  // gpu), then the srun task (RankForTask); device index and task only
  // with a host, a pid without one only as a link learnt without one.
  // Then fills an empty host from the rank. The correlator attributes every
  // line through this. Returns true when `a` changed.
  bool Resolve(Attribution& a) const;

 private:
  // Removes what AddNcclInit learnt from communicators smaller than nranks.
  void RetractSmallerComms(int64_t nranks);

  int64_t world_nranks_ = 0;
  std::vector<NcclInit> world_inits_;
  std::map<std::pair<std::string, std::string>, int64_t> bus_rank_;
  std::map<std::pair<std::string, int64_t>, int64_t> dev_rank_;
  std::map<std::pair<std::string, int64_t>, int64_t> pid_rank_;
  std::map<std::pair<std::string, int64_t>, int64_t> pid_local_;
  std::map<int64_t, std::optional<std::string>> pid_host_;  // nullopt: several hosts
  std::map<int64_t, std::pair<std::string, std::string>> rank_host_bus_;
  std::map<std::pair<std::string, std::string>, std::vector<int64_t>> hca_ranks_;
  std::map<std::pair<std::string, std::string>, std::string> pci_hca_;
  std::map<std::pair<std::string, std::string>, std::string> netdev_hca_;
};

}  // namespace faultline

#endif  // FAULTLINE_ATTRIBUTION_ATTRIBUTION_H_
