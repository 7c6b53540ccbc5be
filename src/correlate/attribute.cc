// Attribution pass: the topology the scan learnt (NCCL init lines, pid
// prefixes) pins lines that name only a PCI bus, a pid or a device index on
// a rank, through TopologyMap::Resolve, the one rank/host resolver.
#include <algorithm>
#include <string>

#include "correlate/state.h"

namespace faultline::internal {

void Attribute(CorrelationState& st) {
  const ScanResult& scan = st.scan;
  // Ranks on sub-communicator init lines are group ranks: only the largest
  // (world) communicator's, or ranks the prefix or path gave, are global.
  for (const DeviceLink& l : scan.devices) st.world_nranks = std::max(st.world_nranks, l.nranks);
  for (const DeviceLink& l : scan.devices) {
    if (l.global || l.nranks == st.world_nranks) {
      st.topo.AddDevice(l.host, l.rank, l.cuda_dev, l.bus_id);
    }
  }
  for (const PidLink& l : scan.pids) st.topo.AddPid(l.host, l.pid, l.rank);
  for (Evidence& ev : st.evs) {
    if (ev.host.empty()) ev.host = scan.sources[ev.source].host;
    Attribution a;
    if (ev.rank >= 0) a.rank = ev.rank;
    if (ev.local_rank >= 0) a.local_rank = ev.local_rank;
    if (ev.pid >= 0) a.pid = ev.pid;
    a.host = ev.host;
    a.gpu = ev.gpu;
    if (!st.topo.Resolve(a)) continue;
    ev.rank = a.rank.value_or(-1);
    ev.host = a.host;
  }
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
