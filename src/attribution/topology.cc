// TopologyMap: the rank <-> host <-> GPU <-> pid links a job's own logs
// print (NCCL init lines, "[rank3]:node017:12345:..." prefixes), kept so that
// lines which name only hardware or a process — a kernel Xid on
// 0000:3b:00.0, an OOM kill of pid 12345 — can be pinned on a rank later.
//
// Hosts are keyed by their short name (NormalizeHost) and buses by their
// canonical form (NormalizePciBusId), so "node017.cluster" and "node017",
// "3b000" and "00000000:3B:00.0" meet.

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attribution/attribution.h"
#include "attribution/lex.h"

namespace faultline {
namespace {

using attribution_internal::ParseUintWhole;

// Keeps a caller's odd host string (not a valid host name) as given rather
// than folding every such string onto "".
std::string HostKey(std::string_view host) {
  std::string h = NormalizeHost(host);
  return h.empty() ? std::string(host) : h;
}

// NCCL merges the ports of a card and, by default, its virtual functions
// into one device: its pciPath ends in the function and device digits
// zeroed. The domain and bus name the card; two HCAs on one bus (two
// ports as two functions) leave it unnamed.
std::string CardKey(std::string_view pci) {
  std::string bus = NormalizePciBusId(pci);
  return bus.empty() ? bus : bus.substr(0, 7);
}

// A host's port keyed by its PCI card or its netdev names one HCA; a key
// two HCAs claim names neither (kept as "", so a third claim cannot revive
// it).
using PortHcas = std::map<std::pair<std::string, std::string>, std::string>;

void KeepUniqueHca(PortHcas& map, std::pair<std::string, std::string> key, std::string_view hca) {
  auto [it, fresh] = map.try_emplace(std::move(key), hca);
  if (!fresh && it->second != hca) it->second.clear();
}

std::optional<std::string> UniqueHca(const PortHcas& map, const std::pair<std::string, std::string>& key) {
  auto it = map.find(key);
  if (it == map.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

}  // namespace

void TopologyMap::AddDevice(const std::string& host, int64_t rank,
                            int64_t cuda_dev, std::string_view bus_id) {
  std::string h = HostKey(host);
  std::string bus = NormalizePciBusId(bus_id);
  if (!bus.empty()) bus_rank_[{h, bus}] = rank;
  if (cuda_dev >= 0) dev_rank_[{h, cuda_dev}] = rank;
  auto& [known_host, known_bus] = rank_host_bus_[rank];
  if (!h.empty()) known_host = h;
  if (!bus.empty()) known_bus = bus;
}

void TopologyMap::AddPid(const std::string& host, int64_t pid, int64_t rank) {
  std::string h = HostKey(host);
  pid_rank_[{h, pid}] = rank;
  auto& known_host = rank_host_bus_[rank].first;
  if (known_host.empty()) known_host = h;
  if (h.empty()) return;
  auto [it, fresh] = pid_host_.try_emplace(pid, host);
  if (!fresh && it->second && HostKey(*it->second) != h) it->second.reset();
}

std::optional<std::string> TopologyMap::HostForPid(int64_t pid) const {
  auto it = pid_host_.find(pid);
  return it == pid_host_.end() ? std::nullopt : it->second;
}

void TopologyMap::AddPidLocalRank(const std::string& host, int64_t pid, int64_t local_rank) {
  if (local_rank < 0) return;
  pid_local_[{HostKey(host), pid}] = local_rank;
}

std::optional<int64_t> TopologyMap::RankForBus(const std::string& host,
                                               std::string_view bus_id) const {
  if (host.empty()) return RankForBusAnyHost(bus_id);
  std::string bus = NormalizePciBusId(bus_id);
  if (bus.empty()) return std::nullopt;
  auto it = bus_rank_.find({HostKey(host), bus});
  if (it == bus_rank_.end()) return std::nullopt;
  return it->second;
}

bool TopologyMap::KnowsEveryBus(int64_t nranks) const {
  if (nranks <= 0) return false;
  for (int64_t r = 0; r < nranks; ++r) {
    auto it = rank_host_bus_.find(r);
    if (it == rank_host_bus_.end() || it->second.first.empty() || it->second.second.empty()) return false;
  }
  return true;
}

bool TopologyMap::HasRankOn(const std::string& host) const {
  const std::string h = HostKey(host);
  if (h.empty()) return false;
  for (const auto& [rank, host_bus] : rank_host_bus_) {
    if (host_bus.first == h) return true;
  }
  return false;
}

bool TopologyMap::IsRankBus(const std::string& host, std::string_view bus_id) const {
  const std::string bus = NormalizePciBusId(bus_id);
  return !bus.empty() && bus_rank_.contains({HostKey(host), bus});
}

std::optional<int64_t> TopologyMap::RankForBusAnyHost(
    std::string_view bus_id) const {
  std::string bus = NormalizePciBusId(bus_id);
  if (bus.empty()) return std::nullopt;
  // Every node of a homogeneous cluster has a GPU at 0000:3b:00.0, so the
  // bus alone names a rank only in small or single-host jobs.
  std::optional<int64_t> found;
  for (const auto& [key, rank] : bus_rank_) {
    if (key.second != bus) continue;
    if (found && *found != rank) return std::nullopt;
    found = rank;
  }
  return found;
}

std::optional<int64_t> TopologyMap::RankForPid(const std::string& host,
                                               int64_t pid) const {
  auto it = pid_rank_.find({HostKey(host), pid});
  if (it == pid_rank_.end()) return std::nullopt;
  return it->second;
}

std::optional<int64_t> TopologyMap::RankForDevice(const std::string& host,
                                                  int64_t cuda_dev) const {
  auto it = dev_rank_.find({HostKey(host), cuda_dev});
  if (it == dev_rank_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> TopologyMap::HostForRank(int64_t rank) const {
  auto it = rank_host_bus_.find(rank);
  if (it == rank_host_bus_.end() || it->second.first.empty()) return std::nullopt;
  return it->second.first;
}

std::optional<int64_t> TopologyMap::RankForTask(const std::string& host, int64_t task) const {
  std::string h = HostKey(host);
  if (h.empty() || task < 0) return std::nullopt;
  if (std::optional<std::string> known = HostForRank(task)) {
    if (*known == h) return task;
    return std::nullopt;
  }
  for (const auto& [rank, host_bus] : rank_host_bus_) {
    if (host_bus.first == h) return std::nullopt;
  }
  return task;
}

std::optional<std::string> TopologyMap::BusForRank(int64_t rank) const {
  auto it = rank_host_bus_.find(rank);
  if (it == rank_host_bus_.end() || it->second.second.empty()) return std::nullopt;
  return it->second.second;
}

void TopologyMap::AddHca(const std::string& host, std::string_view hca, int64_t rank) {
  if (hca.empty() || rank < 0) return;
  std::vector<int64_t>& ranks = hca_ranks_[{HostKey(host), std::string(hca)}];
  auto at = std::lower_bound(ranks.begin(), ranks.end(), rank);
  if (at == ranks.end() || *at != rank) ranks.insert(at, rank);
}

std::vector<int64_t> TopologyMap::RanksForHca(const std::string& host, std::string_view hca) const {
  auto it = hca_ranks_.find({HostKey(host), std::string(hca)});
  if (it == hca_ranks_.end()) return {};
  return it->second;
}

void TopologyMap::AddHcaPci(const std::string& host, std::string_view pci, std::string_view hca) {
  std::string card = CardKey(pci);
  if (card.empty() || hca.empty()) return;
  KeepUniqueHca(pci_hca_, {HostKey(host), std::move(card)}, hca);
}

std::optional<std::string> TopologyMap::HcaForPci(const std::string& host, std::string_view pci) const {
  return UniqueHca(pci_hca_, {HostKey(host), CardKey(pci)});
}

void TopologyMap::AddHcaNetdev(const std::string& host, std::string_view netdev, std::string_view hca) {
  if (netdev.empty() || hca.empty()) return;
  KeepUniqueHca(netdev_hca_, {HostKey(host), std::string(netdev)}, hca);
}

std::optional<std::string> TopologyMap::HcaForNetdev(const std::string& host, std::string_view netdev) const {
  return UniqueHca(netdev_hca_, {HostKey(host), std::string(netdev)});
}

void TopologyMap::RetractSmallerComms(int64_t nranks) {
  std::vector<NcclInit> kept;
  for (NcclInit& init : world_inits_) {
    if (init.nranks >= nranks) {
      kept.push_back(std::move(init));
      continue;
    }
    // Erase only what still holds this init's word: a later AddDevice or a
    // larger communicator may have overwritten it since.
    auto bus = bus_rank_.find({init.host, init.bus_id});
    if (bus != bus_rank_.end() && bus->second == init.rank) bus_rank_.erase(bus);
    auto dev = dev_rank_.find({init.host, init.cuda_dev});
    if (dev != dev_rank_.end() && dev->second == init.rank) dev_rank_.erase(dev);
    if (init.pid) {
      auto pid = pid_rank_.find({init.host, *init.pid});
      if (pid != pid_rank_.end() && pid->second == init.rank) pid_rank_.erase(pid);
    }
    auto rank = rank_host_bus_.find(init.rank);
    if (rank != rank_host_bus_.end() && rank->second.first == init.host &&
        rank->second.second == init.bus_id) {
      rank_host_bus_.erase(rank);
    }
  }
  world_inits_ = std::move(kept);
}

void TopologyMap::AddNcclInit(const NcclInit& init) {
  if (init.rank < 0 || init.nranks <= 0 || init.rank >= init.nranks) return;
  if (init.nranks < world_nranks_) return;
  if (init.nranks > world_nranks_) {
    world_nranks_ = init.nranks;
    RetractSmallerComms(init.nranks);
  }
  NcclInit stored = init;
  stored.host = HostKey(init.host);
  stored.bus_id = NormalizePciBusId(init.bus_id);
  AddDevice(stored.host, stored.rank, stored.cuda_dev, stored.bus_id);
  if (stored.pid) AddPid(stored.host, *stored.pid, stored.rank);
  world_inits_.push_back(std::move(stored));
}

void TopologyMap::Learn(const Attribution& a) {
  if (!a.rank) return;
  std::string h = HostKey(a.host);
  if (a.pid) pid_rank_[{h, *a.pid}] = *a.rank;
  if (!a.gpu.empty()) {
    if (std::optional<int64_t> dev = ParseUintWhole(a.gpu, 6)) {
      dev_rank_[{h, *dev}] = *a.rank;
    } else if (std::string bus = NormalizePciBusId(a.gpu); !bus.empty()) {
      bus_rank_[{h, bus}] = *a.rank;
      auto& known_bus = rank_host_bus_[*a.rank].second;
      if (known_bus.empty()) known_bus = bus;
    }
  }
  if (!h.empty()) {
    auto& known_host = rank_host_bus_[*a.rank].first;
    if (known_host.empty()) known_host = h;
  }
}

bool TopologyMap::Resolve(Attribution& a) const {
  const bool had_rank = a.rank.has_value();
  // A link learnt without a rank (-1) names none: the next clue is tried.
  auto take = [&a](std::optional<int64_t> r) {
    if (r && *r >= 0) a.rank = r;
  };
  std::optional<int64_t> dev_index = ParseUintWhole(a.gpu, 6);
  // The bus names the GPU itself, so it goes first.
  if (!a.rank && !a.gpu.empty() && !dev_index) take(RankForBus(a.host, a.gpu));
  // A pid or a device index means nothing without its host; a pid seen only
  // on hostless lines (a single server's log) meets its own kind only.
  if (!a.rank && a.pid) take(RankForPid(a.host, *a.pid));
  if (!a.rank && a.pid && !a.host.empty() && !a.local_rank) {
    auto it = pid_local_.find({HostKey(a.host), *a.pid});
    if (it != pid_local_.end()) a.local_rank = it->second;
  }
  if (!a.rank && !a.host.empty()) {
    if (a.local_rank) {
      take(RankForDevice(a.host, *a.local_rank));
    } else if (dev_index) {
      take(RankForDevice(a.host, *dev_index));
    }
  }
  if (!a.rank && a.task && !a.host.empty()) take(RankForTask(a.host, *a.task));
  bool changed = !had_rank && a.rank.has_value();
  if (a.rank && a.host.empty()) {
    if (std::optional<std::string> h = HostForRank(*a.rank)) {
      a.host = *h;
      changed = true;
    }
  }
  return changed;
}

}  // namespace faultline
