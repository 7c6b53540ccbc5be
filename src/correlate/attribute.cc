// Attribution pass: the topology the scan learnt (NCCL init lines, pid
// prefixes) pins lines that name only a PCI bus, a pid or a device index on
// a rank, through TopologyMap::Resolve, the one rank/host resolver.
#include <algorithm>
#include <map>
#include <string>

#include "correlate/state.h"
#include "util/strings.h"

namespace faultline::internal {

namespace {

// Puts every name of a pod on its node: the folders its logs were collected
// under, the hostname its own lines print (NCCL's "host:pid:tid"), and the
// topology learnt from them. A pod is never a host.
void ApplyHostAliases(CorrelationState& st) {
  ScanResult& scan = st.scan;
  if (scan.host_aliases.empty()) return;
  std::map<std::string, std::string> node_of;
  for (const HostAlias& a : scan.host_aliases) {
    std::string alias = NormalizeHost(a.alias), host = NormalizeHost(a.host);
    if (!alias.empty() && !host.empty() && alias != host) node_of[alias] = host;
  }
  auto fix = [&node_of](std::string& h) {
    if (h.empty()) return;
    auto it = node_of.find(NormalizeHost(h));
    if (it != node_of.end()) h = it->second;
  };
  for (SourceSummary& s : scan.sources) fix(s.host);
  for (auto& [rank, r] : scan.ranks) fix(r.host);
  for (DeviceLink& l : scan.devices) fix(l.host);
  for (PidLink& l : scan.pids) fix(l.host);
  for (SyncPoint& p : scan.sync_points) fix(p.host);
  for (Evidence& ev : st.evs) {
    fix(ev.host);
    // A line about a pod that the archive names (a status row, an event)
    // is about its node.
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
  if (!st.scan.ranks.empty() || st.world_nranks > 0) return false;
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

}  // namespace

void Attribute(CorrelationState& st) {
  ApplyHostAliases(st);
  const ScanResult& scan = st.scan;
  // Ranks on sub-communicator init lines are group ranks: only the largest
  // (world) communicator's, or ranks the prefix or path gave, are global.
  for (const DeviceLink& l : scan.devices) st.world_nranks = std::max(st.world_nranks, l.nranks);
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
  for (Evidence& ev : st.evs) {
    if (ev.host.empty()) ev.host = scan.sources[ev.source].host;
    Attribution a;
    if (ev.rank >= 0) a.rank = ev.rank;
    if (ev.local_rank >= 0) a.local_rank = ev.local_rank;
    if (ev.pid >= 0) a.pid = ev.pid;
    a.host = ev.host;
    a.gpu = ev.gpu;
    int64_t task;
    if (const std::string* t = ev.Field("task"); t && ParseInt64(*t, &task) && task >= 0) a.task = task;
    if (!st.topo.Resolve(a)) continue;
    ev.rank = a.rank.value_or(-1);
    ev.host = a.host;
  }
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
