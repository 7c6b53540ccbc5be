// Attribution pass: the topology the scan learnt (NCCL init lines, pid
// prefixes) pins lines that name only a PCI bus, a pid or a device index on
// a rank, through TopologyMap::Resolve, the one rank/host resolver.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "attribution/lex.h"
#include "correlate/state.h"
#include "util/strings.h"

namespace faultline::internal {

namespace {

// Calls f on the host field of every record that names one (sources,
// ranks, devices, pids, NICs, sync points, evidence) until f returns true;
// returns whether it did. One list of the fields, for the test that reads
// them and the rename that writes them.
template <typename State, typename F>
bool AnyHostField(State& st, F&& f) {
  auto& scan = st.scan;
  auto in = [&f](auto& records) {
    return std::any_of(records.begin(), records.end(), [&f](auto& r) { return f(r.host); });
  };
  return in(scan.sources) ||
         std::any_of(scan.ranks.begin(), scan.ranks.end(), [&f](auto& r) { return f(r.second.host); }) ||
         in(scan.devices) || in(scan.pids) || in(scan.nics) || in(scan.sync_points) || in(st.evs);
}

// Whether anything is named by an address alone (Ray's "(RayTrainWorker
// pid=P, ip=10.0.1.5)", a folder named after an address): only then can an
// address a host announced name anyone, and only then is ApplyHostAliases'
// walk over every record (a map lookup each: 42 M instructions on a
// 20,736-file archive where no name is an address) worth its cost.
bool NamedByAddress(const CorrelationState& st) {
  return AnyHostField(st, [](const std::string& h) { return !h.empty() && attribution_internal::IsIpv4(h); });
}

// Puts every name of a pod on its node: the folders its logs were collected
// under, the hostname its own lines print (NCCL's "host:pid:tid"), and the
// topology learnt from them. A pod is never a host.
//
// An address a host announced as its own (NCCL's "Bootstrap : Using
// eth0:10.0.1.5<0>" under that host's name) is that host: a line named only
// by the address (Ray's "(RayTrainWorker pid=P, ip=10.0.1.5)", a folder
// named after it) is the named host's.
void ApplyHostAliases(CorrelationState& st) {
  ScanResult& scan = st.scan;
  std::map<std::string, std::string> node_of;
  for (const HostAlias& a : scan.host_aliases) {
    std::string alias = NormalizeHost(a.alias), host = NormalizeHost(a.host);
    if (!alias.empty() && !host.empty() && alias != host) node_of[alias] = host;
  }
  std::map<std::string, std::string> host_of_addr;
  std::set<std::string> shared;  // announced by several hosts: no one's
  if (NamedByAddress(st)) {
    for (const Evidence& ev : st.evs) {
      const std::string* a = ev.Field("addr");
      if (!a || !attribution_internal::IsIpv4(*a) || a->rfind("127.", 0) == 0 || ev.host.empty() ||
          attribution_internal::IsIpv4(ev.host)) {
        continue;
      }
      std::string host = NormalizeHost(ev.host);
      if (auto it = node_of.find(host); it != node_of.end()) host = it->second;
      auto [it, fresh] = host_of_addr.emplace(*a, host);
      if (!fresh && it->second != host) shared.insert(*a);
    }
  }
  for (const auto& [addr, host] : host_of_addr) {
    if (!shared.count(addr)) node_of.emplace(addr, host);
  }
  if (node_of.empty()) return;
  AnyHostField(st, [&node_of](std::string& h) {
    if (h.empty()) return false;
    auto it = node_of.find(NormalizeHost(h));
    if (it != node_of.end()) h = it->second;
    return false;
  });
  // A line about a pod that the archive names (a status row, an event) is
  // about its node.
  for (Evidence& ev : st.evs) {
    if (const std::string* pod = ev.Field("pod"); pod && ev.host.empty()) {
      auto it = node_of.find(NormalizeHost(*pod));
      if (it != node_of.end()) ev.host = it->second;
    }
  }
}

// Whether the archive is one node's: a single host across sources and
// lines, and no global rank named anywhere that the node's local ranks
// could contradict. torchrun's rank is group_rank * local_world_size +
// local_rank, and a single node is group 0.
bool OneNodeWithoutGlobalRanks(const CorrelationState& st) {
  std::string host;
  auto same = [&host](const std::string& h) {
    if (h.empty()) return true;
    if (host.empty()) host = NormalizeHost(h);
    return NormalizeHost(h) == host;
  };
  for (const SourceSummary& s : st.scan.sources) {
    if (!same(s.host) || s.rank >= 0) return false;
  }
  // Progress lines that name no rank are kept under keys below 0 (-1, or a
  // local rank's placeholder): only a key >= 0 is a global rank named.
  if (!st.scan.ranks.empty() && st.scan.ranks.rbegin()->first >= 0) return false;
  if (st.world_nranks > 0) return false;
  for (const Evidence& ev : st.evs) {
    if (!same(ev.host) || ev.rank >= 0) return false;
  }
  return true;
}

// A worker named only by its local rank ("failed (exitcode: -9) local_rank:
// 3") on a one-node archive is that global rank.
void LocalRanksOfOneNode(CorrelationState& st) {
  if (!OneNodeWithoutGlobalRanks(st)) return;
  for (Evidence& ev : st.evs) {
    if (ev.local_rank >= 0) ev.rank = ev.local_rank;
  }
}

// tracing-subscriber's compact format (text-generation-inference's
// launcher: its "shard-manager" span carries `rank`) prints the span's
// fields after the event's message; a message that ends in a newline (the
// shard's standard error it relays: a traceback) leaves them alone on the
// next line, " rank=0" (field `event_rank`). The lines above it, back to
// the event's stamped header, are that rank's message.
constexpr uint64_t kSpanTailLines = 256;

void RanksOfSpanTails(CorrelationState& st) {
  std::vector<Evidence>& evs = st.evs;
  for (size_t i = evs.size(); i-- > 0;) {
    const std::string* r = evs[i].Field("event_rank");
    int64_t rank;
    if (r == nullptr || !ParseInt64(*r, &rank) || rank < 0) continue;
    const uint32_t source = evs[i].source;
    const uint64_t tail = evs[i].line;
    // The message's lines carry its header's stamp (their own, or the one
    // they inherit): a line stamped otherwise is another event's, even when
    // the header itself is no evidence.
    std::optional<int64_t> event_time;
    for (size_t k = i; k-- > 0;) {
      Evidence& ev = evs[k];
      if (ev.source != source || ev.line + kSpanTailLines < tail) break;
      if (ev.line == tail) continue;
      if (ev.Field("event_rank") || (ev.rank >= 0 && ev.rank != rank)) break;
      if (!event_time) event_time = ev.time_us;
      if (ev.time_us != *event_time) break;
      ev.rank = rank;
      // The event's header (its stamp) begins the message.
      if (ev.time_source == TimeSource::kParsed) break;
    }
  }
}

// The HCA list each process (and host) printed ("NET/IB : Using [1]mlx5_3:1/IB
// ..."): an index a channel line names means one HCA. An index that a
// host's processes name differently names none of the host's own.
struct IbDeviceLists {
  // Hosts by number, given in order of first sight: the lists' keys compare
  // numbers, not names (an archive's thousands of NIC lines made the string
  // compares of every map step most of this pass).
  std::map<std::string, uint32_t, std::less<>> host_ids;
  std::map<std::tuple<uint32_t, int64_t, int64_t>, std::string> by_pid;
  std::map<std::pair<uint32_t, int64_t>, std::string> by_host;  // "": several

  void Add(uint32_t host, int64_t pid, int64_t index, const std::string& name) {
    if (pid >= 0) by_pid[{host, pid, index}] = name;
    auto [it, fresh] = by_host.try_emplace({host, index}, name);
    if (!fresh && it->second != name) it->second.clear();
  }
  const std::string* Name(uint32_t host, int64_t pid, int64_t index) const {
    if (auto p = by_pid.find({host, pid, index}); p != by_pid.end()) return &p->second;
    auto h = by_host.find({host, index});
    return h == by_host.end() || h->second.empty() ? nullptr : &h->second;
  }
};

// The number of NormalizeHost(host) in `lists`, given one when `add`, else
// none (nullopt) for a host the lists never saw; `last` keeps the previous
// line's answer, as a run of lines comes from one host.
struct HostIdCache {
  const std::string* raw = nullptr;
  std::optional<uint32_t> id;
};
std::optional<uint32_t> ListHostId(IbDeviceLists& lists, const std::string& host, bool add, HostIdCache& last) {
  if (last.raw && *last.raw == host) return last.id;
  std::string key = NormalizeHost(host);
  std::optional<uint32_t> id;
  if (add) {
    id = lists.host_ids.try_emplace(std::move(key), static_cast<uint32_t>(lists.host_ids.size())).first->second;
  } else if (auto it = lists.host_ids.find(key); it != lists.host_ids.end()) {
    id = it->second;
  }
  last = {&host, id};
  return id;
}

// The HCA each rank sends through: its "Channel 00/0 : 3[3] -> 11[3] [send]
// via NET/IB/1" line names device 1 of its process's list. NCCL's "NET/IB:
// [1] mlx5_3:uverbs3:1/IB ... pciPath=.../0000:3b:00.0" puts the HCA at the
// PCI function the kernel's mlx5_core lines name; ibdev2netdev's "mlx5_3
// port 1 ==> ibp59s0 (Down)" at the netdev a carrier line names. Whether
// any line did.
bool HcasOfChannels(CorrelationState& st) {
  IbDeviceLists lists;
  bool ports = false;
  HostIdCache last;
  for (const NicLink& l : st.scan.nics) {
    if (l.hca.empty() || l.host.empty()) continue;
    if (l.index >= 0) lists.Add(*ListHostId(lists, l.host, true, last), l.pid, l.index, l.hca);
    if (!l.pci.empty()) st.topo.AddHcaPci(l.host, l.pci, l.hca);
    if (!l.netdev.empty()) st.topo.AddHcaNetdev(l.host, l.netdev, l.hca);
    ports = ports || !l.pci.empty() || !l.netdev.empty();
  }
  last = {};
  for (const NicLink& l : st.scan.nics) {
    if (!l.sends || l.host.empty()) continue;
    Attribution a;  // a process's line: its pid, else its launcher's local rank, names its rank
    if (l.rank >= 0) a.rank = l.rank;
    if (l.pid >= 0) a.pid = l.pid;
    a.host = l.host;
    st.topo.Resolve(a);
    const int64_t rank = a.rank.value_or(-1);
    const std::optional<uint32_t> host = ListHostId(lists, l.host, false, last);
    const std::string* hca = host ? lists.Name(*host, l.pid, l.index) : nullptr;
    if (rank >= 0 && hca) st.topo.AddHca(l.host, *hca, rank);
  }
  return ports;
}

// The HCA a line names by its PCI function ("mlx5_core 0000:3b:00.0: ...")
// or by its port's netdev ("ibp59s0: Lost carrier").
std::optional<std::string> HcaOfPort(const TopologyMap& topo, const Evidence& ev) {
  std::optional<std::string> hca;
  if (const std::string* pci = ev.Field("hca_pci")) hca = topo.HcaForPci(ev.host, *pci);
  if (const std::string* netdev = ev.Field("netdev"); netdev && !hca) hca = topo.HcaForNetdev(ev.host, *netdev);
  return hca;
}

// The HCAs ranks name as their own (an IB completion error's "hca mlx5_3",
// an async event's "NET/IB : mlx5_3:1", the device of their NET/IB
// channels): a line about that HCA on that host that names no rank (a
// kernel line, a library's line without a prefix) is about the rank using
// it, when one rank does. A kernel line naming the HCA's PCI function
// ("mlx5_core 0000:3b:00.0: Port module event") or its port's netdev
// ("ibp59s0: Lost carrier") takes the HCA's name.
void RanksOfHcas(CorrelationState& st) {
  for (const Evidence& ev : st.evs) {
    const std::string* hca = ev.Field("hca");
    if (hca && ev.rank >= 0 && !ev.host.empty()) st.topo.AddHca(ev.host, *hca, ev.rank);
  }
  if (HcasOfChannels(st)) {
    for (Evidence& ev : st.evs) {
      if (ev.host.empty() || ev.Field("hca")) continue;
      if (std::optional<std::string> hca = HcaOfPort(st.topo, ev)) ev.fields.emplace_back("hca", *hca);
    }
  }
  for (Evidence& ev : st.evs) {
    const std::string* hca = ev.Field("hca");
    if (!hca || ev.rank >= 0 || ev.host.empty()) continue;
    std::vector<int64_t> ranks = st.topo.RanksForHca(ev.host, *hca);
    if (ranks.size() == 1) ev.rank = ranks.front();
  }
}

// The ranks each pod's own lines name, read before the pods are put on
// their nodes (ApplyHostAliases).
std::map<std::string, std::set<int64_t>> RanksOfPods(const CorrelationState& st) {
  std::set<std::string> pods;
  for (const HostAlias& a : st.scan.host_aliases) pods.insert(NormalizeHost(a.alias));
  std::map<std::string, std::set<int64_t>> out;
  if (pods.empty()) return out;
  auto add = [&](const std::string& host, int64_t rank) {
    std::string h = NormalizeHost(host);
    if (rank >= 0 && pods.count(h)) out[h].insert(rank);
  };
  for (const Evidence& ev : st.evs) add(ev.host.empty() ? st.scan.sources[ev.source].host : ev.host, ev.rank);
  for (const auto& [rank, r] : st.scan.ranks) add(r.host, rank);
  for (const SourceSummary& s : st.scan.sources) add(s.host, s.rank);
  return out;
}

// Key -> pod (host-normalized), from the lines naming both: a container's
// ID and its pod (`kubectl describe pods`), a pod's UID and its name (the
// kubelet's lines).
std::map<std::string, std::string> PodsByKey(const CorrelationState& st, std::string_view key_field,
                                             std::string_view pod_field) {
  std::map<std::string, std::string> pod_of;
  for (const Evidence& ev : st.evs) {
    const std::string* key = ev.Field(key_field);
    const std::string* pod = ev.Field(pod_field);
    if (key && pod && !key->empty()) pod_of[*key] = NormalizeHost(*pod);
  }
  return pod_of;
}

// The one rank the lines of `pod` name, -1 when they name none or several.
int64_t OnlyRankOfPod(const CorrelationState& st, const std::string& pod) {
  auto ranks = st.pod_ranks.find(pod);
  return ranks != st.pod_ranks.end() && ranks->second.size() == 1 ? *ranks->second.begin() : -1;
}

// The OOM killer names the container its victim ran in (task_memcg's
// ".../cri-containerd-<id>.scope" or ".../pod<uid>/<id>"); `kubectl describe
// pods` gives each pod's "Container ID: containerd://<id>". A rankless line
// naming a container of a pod whose lines name one rank is that rank's.
void RanksOfContainers(CorrelationState& st) {
  std::map<std::string, std::string> pod_of = PodsByKey(st, "container_id", "pod");
  if (pod_of.empty()) return;
  for (Evidence& ev : st.evs) {
    const std::string* id = ev.Field("container_id");
    if (!id || ev.rank >= 0 || ev.Field("pod")) continue;
    auto pod = pod_of.find(*id);
    if (pod != pod_of.end()) ev.rank = OnlyRankOfPod(st, pod->second);
  }
}

// The OOM killer's memory cgroup names its victim's pod by UID (cgroupfs
// ".../pod<uid>/<id>", a systemd slice's "...-pod<uid, '_' for '-'>.slice");
// the kubelet's lines name each pod with its UID (`pod="ns/name" podUID=`,
// a PLEG event's ID). Such a line names its pod, and, when the pod's own
// lines name one rank, takes that rank.
void PodsOfUids(CorrelationState& st) {
  std::map<std::string, std::string> pod_of = PodsByKey(st, "pod_uid", "uid_pod");
  if (pod_of.empty()) return;
  for (Evidence& ev : st.evs) {
    const std::string* uid = ev.Field("pod_uid");
    if (!uid || ev.Field("uid_pod") || ev.Field("pod")) continue;
    std::string key = *uid;
    std::replace(key.begin(), key.end(), '_', '-');
    auto pod = pod_of.find(key);
    if (pod == pod_of.end()) continue;
    if (ev.rank < 0) ev.rank = OnlyRankOfPod(st, pod->second);
    ev.fields.emplace_back("pod", pod->second);
  }
}

// A rankless line of a pod's own log naming its local rank (torchrun's
// "failed (exitcode: -9) local_rank: 1"): where several pods share a node,
// each has a local rank 1, so it takes the one rank its pod's world
// communicator put on that device, read before the pods are put on their
// nodes.
void LocalRanksOfPods(CorrelationState& st) {
  std::map<std::pair<std::string, int64_t>, std::set<int64_t>> ranks;
  for (const DeviceLink& l : st.scan.devices) {
    std::string pod = NormalizeHost(l.host);
    if ((l.global || l.nranks == st.world_nranks) && l.rank >= 0 && l.cuda_dev >= 0 && st.pod_ranks.count(pod)) {
      ranks[{pod, l.cuda_dev}].insert(l.rank);
    }
  }
  if (ranks.empty()) return;
  for (Evidence& ev : st.evs) {
    if (ev.rank >= 0 || ev.local_rank < 0) continue;
    const std::string& host = ev.host.empty() ? st.scan.sources[ev.source].host : ev.host;
    auto it = ranks.find({NormalizeHost(host), ev.local_rank});
    if (it != ranks.end() && it->second.size() == 1) ev.rank = *it->second.begin();
  }
}

// A rankless line naming its CUDA device ("GPU 3 has a total capacity of
// ...", a pdsh stream's traceback) on a host whose world communicator puts
// one rank on that device index is that rank's. Where each process sees
// only its own GPU (CUDA_VISIBLE_DEVICES per task) every rank is device 0:
// the index names none.
void RanksOfCudaDevices(CorrelationState& st) {
  std::map<std::pair<std::string, int64_t>, std::set<int64_t>> ranks;
  for (const DeviceLink& l : st.scan.devices) {
    if ((l.global || l.nranks == st.world_nranks) && l.cuda_dev >= 0 && l.rank >= 0) {
      ranks[{NormalizeHost(l.host), l.cuda_dev}].insert(l.rank);
    }
  }
  if (ranks.empty()) return;
  for (Evidence& ev : st.evs) {
    const std::string* dev = ev.Field("cuda_dev");
    int64_t d;
    if (!dev || ev.rank >= 0 || ev.host.empty() || ev.Field("bus_id") || !ParseInt64(*dev, &d)) continue;
    auto it = ranks.find({NormalizeHost(ev.host), d});
    if (it != ranks.end() && it->second.size() == 1) ev.rank = *it->second.begin();
  }
}

// srun reports failed tasks by node: "srun: error: node004: tasks 8-15:
// Exited with exit code 1" (srun's task exit report: the node, then the
// ranged list of its tasks). When srun launched the ranks itself (one
// task per GPU, SLURM_PROCID the rank) each task on the list is the rank
// of that number, on that node: a rank whose own lines name no host (it
// died before NCCL printed its prefix, a per-task file "train-%j-%t.out")
// gets it. Under a launcher per node (srun torchrun) the tasks are node
// indices: that shows as a rank above every task srun reported, or as a
// task whose rank the topology puts elsewhere (TopologyMap::RankForTask),
// and then nothing is learnt. (One task's own report, "task 14: Exited",
// is read without the first test: srun reports only the task that
// failed, and the ranks above it are its siblings.)
void HostsOfSrunTasks(CorrelationState& st) {
  std::vector<std::pair<std::string, int64_t>> on;  // (host, task)
  int64_t top_task = -1;
  for (const Evidence& ev : st.evs) {
    const std::string* list = ev.Field("tasks");
    if (!list) list = ev.Field("task");
    const std::string* host = ev.Field("host");
    if (!list || !host || host->empty()) continue;
    // The task list is a hostlist's ranges ("0-1,3", "[0-3]"): expanded,
    // bounded, by the same reader as a Slurm node list.
    std::string_view ranges = *list;
    if (ranges.starts_with('[')) ranges.remove_prefix(1);
    if (ranges.ends_with(']')) ranges.remove_suffix(1);
    for (const std::string& id : ExpandNodelist(StrCat("[", ranges, "]"))) {
      int64_t t;
      if (!ParseInt64(id, &t)) continue;
      on.emplace_back(*host, t);
      top_task = std::max(top_task, t);
    }
  }
  if (on.empty()) return;
  int64_t top_rank = -1;
  for (const auto& [rank, r] : st.scan.ranks) top_rank = std::max(top_rank, rank);
  for (const SourceSummary& s : st.scan.sources) top_rank = std::max(top_rank, s.rank);
  for (const Evidence& ev : st.evs) top_rank = std::max(top_rank, ev.rank);
  if (top_rank > top_task) return;
  // Decided against the topology as it stood, then learnt: a task learnt
  // first would make its node look like another rank's to the next.
  std::vector<Attribution> learnt;
  for (const auto& [host, task] : on) {
    if (st.topo.RankForTask(host, task) != std::optional<int64_t>(task)) continue;
    Attribution a;
    a.rank = task;
    a.host = host;
    learnt.push_back(std::move(a));
  }
  for (const Attribution& a : learnt) st.topo.Learn(a);
}

}  // namespace

void Attribute(CorrelationState& st) {
  st.pod_ranks = RanksOfPods(st);
  // Ranks on sub-communicator init lines are group ranks: only the largest
  // (world) communicator's, or ranks the prefix or path gave, are global.
  for (const DeviceLink& l : st.scan.devices) st.world_nranks = std::max(st.world_nranks, l.nranks);
  LocalRanksOfPods(st);
  ApplyHostAliases(st);
  const ScanResult& scan = st.scan;
  for (const DeviceLink& l : scan.devices) {
    if (l.global || l.nranks == st.world_nranks) {
      st.topo.AddDevice(l.host, l.rank, l.cuda_dev, l.bus_id);
    }
  }
  for (const PidLink& l : scan.pids) {
    if (l.rank >= 0) {
      // A task's pid in an srun -l environment dump: the rank's host.
      std::string host = l.host.empty() ? st.topo.HostForRank(l.rank).value_or("") : l.host;
      st.topo.AddPid(host, l.pid, l.rank);
    } else {
      st.topo.AddPidLocalRank(l.host, l.pid, l.local_rank);
    }
  }
  HostsOfSrunTasks(st);
  for (Evidence& ev : st.evs) {
    if (ev.host.empty()) ev.host = scan.sources[ev.source].host;
    Attribution a;
    if (ev.rank >= 0) a.rank = ev.rank;
    if (ev.local_rank >= 0) a.local_rank = ev.local_rank;
    if (ev.pid >= 0) a.pid = ev.pid;
    // Moved in and back: a million lines' host and GPU strings not copied.
    a.host = std::move(ev.host);
    a.gpu = std::move(ev.gpu);
    int64_t task;
    if (const std::string* t = ev.Field("task"); t && ParseInt64(*t, &task) && task >= 0) a.task = task;
    // Resolve changes the host only when it resolves the line.
    const bool resolved = st.topo.Resolve(a);
    ev.gpu = std::move(a.gpu);
    ev.host = std::move(a.host);
    if (resolved) ev.rank = a.rank.value_or(-1);
  }
  RanksOfHcas(st);
  RanksOfCudaDevices(st);
  RanksOfContainers(st);
  PodsOfUids(st);
  RanksOfSpanTails(st);
  LocalRanksOfOneNode(st);
}

std::string CorrelationState::HostForRank(int64_t rank) const {
  if (auto h = topo.HostForRank(rank)) return *h;
  auto it = scan.ranks.find(rank);
  if (it != scan.ranks.end() && !it->second.host.empty()) return it->second.host;
  for (const SourceSummary& s : scan.sources) {
    if (s.rank == rank && !s.host.empty()) return s.host;
  }
  auto ev = index.host_of_rank.find(rank);
  return ev == index.host_of_rank.end() ? "" : ev->second;
}

std::string BareAddress(std::string_view a) {
  size_t cut = a.find('<');
  if (cut != std::string_view::npos) a = a.substr(0, cut);
  // "10.0.0.12:58032" -> "10.0.0.12" (not for IPv6, which has several ':').
  if (std::count(a.begin(), a.end(), ':') == 1) a = a.substr(0, a.find(':'));
  return std::string(a);
}

}  // namespace faultline::internal
