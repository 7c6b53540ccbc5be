// Correlator implementation; see correlate.h for what it decides. The steps
// run in one direction: attribute -> align clocks -> window -> gate ->
// conditions -> cluster -> explain graph -> incidents -> suspects ->
// detectors -> rank.
#include "correlate/correlate.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

#include "attribution/attribution.h"
#include "detect/detect.h"
#include "util/strings.h"

namespace faultline {
namespace {

constexpr int64_t kSecond = 1'000'000;

bool HardwareLayer(RuleLayer l) {
  return l == RuleLayer::Hardware || l == RuleLayer::Driver || l == RuleLayer::Kernel;
}

std::string HostOf(const Evidence& ev, const ScanResult& scan) {
  if (!ev.host.empty()) return ev.host;
  return scan.sources[ev.source].host;
}

std::string FormatTime(int64_t us) { return us == kNoTime ? "unknown time" : FormatRfc3339(us); }

// "13:02" style short times for missing facts read better as full RFC 3339.
std::string FillTemplate(std::string t, const std::map<std::string, std::string>& vars) {
  for (const auto& [k, v] : vars) {
    std::string key = "{" + k + "}";
    for (size_t pos = t.find(key); pos != std::string::npos; pos = t.find(key, pos + v.size())) {
      t.replace(pos, key.size(), v);
    }
  }
  return t;
}

struct Cluster {
  uint32_t rule = 0;
  std::vector<size_t> ev;  // evidence indices, time order
  int64_t first = kNoTime, last = kNoTime;
  bool initiating = false;  // holds an initiating-role line
  RuleLayer layer = RuleLayer::Application;
  int parent = -1;
  std::string parent_how;
  std::set<int64_t> ranks;
  std::set<std::string> hosts;
};

}  // namespace

Diagnosis Correlate(const Ruleset& rs, ScanResult& scan, const CorrelateOptions& opts) {
  Diagnosis d;
  std::vector<Evidence>& evs = scan.evidence;

  // ---- Attribution through the topology learnt from NCCL init and pid lines.
  TopologyMap topo;
  // Ranks on sub-communicator init lines are group ranks: only the largest
  // (world) communicator's, or ranks the prefix or path gave, are global.
  int64_t world = -1;
  for (const DeviceLink& l : scan.devices) world = std::max(world, l.nranks);
  for (const DeviceLink& l : scan.devices) {
    if (l.global || l.nranks == world) topo.AddDevice(l.host, l.rank, l.cuda_dev, l.bus_id);
  }
  for (const PidLink& l : scan.pids) topo.AddPid(l.host, l.pid, l.rank);
  for (Evidence& ev : evs) {
    std::string host = HostOf(ev, scan);
    if (ev.host.empty()) ev.host = host;
    if (ev.rank < 0 && !ev.gpu.empty()) {
      // Only a line with no host may borrow another host's bus map: the same
      // bus id exists on every host.
      auto r = host.empty() ? topo.RankForBusAnyHost(ev.gpu) : topo.RankForBus(host, ev.gpu);
      if (r) ev.rank = *r;
    }
    if (ev.rank < 0 && ev.pid >= 0 && !host.empty()) {
      if (auto r = topo.RankForPid(host, ev.pid)) ev.rank = *r;
    }
    if (ev.rank < 0 && ev.local_rank >= 0 && !host.empty()) {
      if (auto r = topo.RankForDevice(host, ev.local_rank)) ev.rank = *r;
    }
    if (ev.host.empty() && ev.rank >= 0) {
      if (auto h = topo.HostForRank(ev.rank)) ev.host = *h;
    }
  }

  // Addresses hosts announce (NCCL "Bootstrap : Using eth0:10.1.0.12<0>"),
  // so a line blaming a peer address names a host.
  std::map<std::string, std::string> addr_host;
  auto bare_addr = [](std::string_view a) {
    size_t cut = a.find('<');
    if (cut != std::string_view::npos) a = a.substr(0, cut);
    // "10.0.0.12:58032" -> "10.0.0.12" (not for IPv6, which has several ':').
    if (std::count(a.begin(), a.end(), ':') == 1) a = a.substr(0, a.find(':'));
    return std::string(a);
  };
  for (const Evidence& ev : evs) {
    if (const std::string* a = ev.Field("addr"); a && !ev.host.empty()) addr_host.emplace(bare_addr(*a), ev.host);
  }

  // ---- Clock alignment: the spread of one sync moment across hosts is skew.
  {
    std::map<std::string, std::map<std::string, std::vector<int64_t>>> by_key;
    std::map<std::string, int> host_keys;
    for (const SyncPoint& p : scan.sync_points) {
      if (p.host.empty() || p.time_us == kNoTime) continue;
      by_key[p.key][p.host].push_back(p.time_us);
    }
    for (auto& [key, hosts] : by_key) {
      for (auto& [h, t] : hosts) ++host_keys[h];
    }
    std::string ref;
    int best = 0;
    for (auto& [h, n] : host_keys) {
      if (n > best) {
        best = n;
        ref = h;
      }
    }
    std::map<std::string, std::vector<double>> diffs;
    for (auto& [key, hosts] : by_key) {
      auto it = hosts.find(ref);
      if (it == hosts.end() || hosts.size() < 2) continue;
      std::vector<double> rt(it->second.begin(), it->second.end());
      double ref_t = Median(rt);
      for (auto& [h, t] : hosts) {
        if (h == ref) continue;
        std::vector<double> ht(t.begin(), t.end());
        diffs[h].push_back((ref_t - Median(ht)) / 1e6);
      }
    }
    for (auto& [h, ds] : diffs) {
      double off = Median(ds);
      if (std::fabs(off) >= 0.5) {
        d.clock_offsets_s[h] = std::round(off * 1000) / 1000;
        d.clock_offset_source[h] = "estimated";
      }
    }
    for (const auto& [h, off] : opts.clock_offsets_s) {
      d.clock_offsets_s[h] = off;
      d.clock_offset_source[h] = "user";
    }
  }
  auto offset_us = [&](const std::string& host) -> int64_t {
    auto it = d.clock_offsets_s.find(host);
    return it == d.clock_offsets_s.end() ? 0 : static_cast<int64_t>(it->second * 1e6);
  };
  for (Evidence& ev : evs) {
    if (ev.time_us != kNoTime) ev.time_us += offset_us(ev.host);
  }
  for (SourceSummary& s : scan.sources) {
    int64_t off = offset_us(s.host);
    if (s.first_time_us != kNoTime) s.first_time_us += off;
    if (s.last_time_us != kNoTime) s.last_time_us += off;
  }
  for (auto& [rank, r] : scan.ranks) {
    int64_t off = offset_us(r.host);
    if (r.first_progress_us != kNoTime) r.first_progress_us += off;
    if (r.last_progress_us != kNoTime) r.last_progress_us += off;
  }

  // ---- Job window: the application logs' span, unless the user said.
  std::vector<bool> kernel_source(scan.sources.size(), false);
  {
    std::vector<int> hw(scan.sources.size(), 0), other(scan.sources.size(), 0);
    for (const Evidence& ev : evs) {
      (HardwareLayer(rs.rule(ev.rule)->layer()) ? hw : other)[ev.source]++;
    }
    for (size_t i = 0; i < scan.sources.size(); ++i) {
      const std::string& n = scan.sources[i].name;
      bool named = n.find("dmesg") != std::string::npos || n.find("kern") != std::string::npos ||
                   n.find("syslog") != std::string::npos || n.find("messages") != std::string::npos ||
                   n.find("journal") != std::string::npos;
      kernel_source[i] = named || (hw[i] > 0 && other[i] == 0);
    }
    // Per application source, the span of its hardware lines and of the rest:
    // a kernel block at the head or tail of an application log (a prolog's
    // `dmesg -T`, a pasted archive) is what gating judges, so it must not
    // stretch the window to weeks ago.
    size_t ns = scan.sources.size();
    std::vector<int64_t> app_min(ns, kNoTime), app_max(ns, kNoTime), hw_min(ns, kNoTime), hw_max(ns, kNoTime);
    for (const Evidence& ev : evs) {
      if (ev.time_us == kNoTime) continue;
      bool h = HardwareLayer(rs.rule(ev.rule)->layer());
      int64_t& lo = (h ? hw_min : app_min)[ev.source];
      int64_t& hi = (h ? hw_max : app_max)[ev.source];
      if (lo == kNoTime || ev.time_us < lo) lo = ev.time_us;
      if (hi == kNoTime || ev.time_us > hi) hi = ev.time_us;
    }
    int64_t start = kNoTime, end = kNoTime;
    for (size_t i = 0; i < ns; ++i) {
      const SourceSummary& s = scan.sources[i];
      if (kernel_source[i]) continue;
      int64_t first = s.first_time_us, last = s.last_time_us;
      if (first != kNoTime && hw_min[i] != kNoTime && app_min[i] != kNoTime && first <= hw_min[i] &&
          hw_min[i] < app_min[i] - opts.stale_tolerance_us) {
        first = app_min[i];
      }
      if (last != kNoTime && hw_max[i] != kNoTime && app_max[i] != kNoTime && last >= hw_max[i] &&
          hw_max[i] > app_max[i] + opts.stale_tolerance_us) {
        last = app_max[i];
      }
      if (first != kNoTime && (start == kNoTime || first < start)) start = first;
      if (last != kNoTime && (end == kNoTime || last > end)) end = last;
    }
    // Application evidence bounds too (a source's edges may lack stamps).
    for (const Evidence& ev : evs) {
      if (kernel_source[ev.source] || ev.time_us == kNoTime) continue;
      if (HardwareLayer(rs.rule(ev.rule)->layer())) continue;
      if (start == kNoTime || ev.time_us < start) start = ev.time_us;
      if (end == kNoTime || ev.time_us > end) end = ev.time_us;
    }
    d.job_start_us = opts.job_start_us != kNoTime ? opts.job_start_us : start;
    d.job_end_us = opts.job_end_us != kNoTime ? opts.job_end_us : end;
  }

  // ---- Gating: stale, replayed and out-of-order hardware evidence.
  std::vector<std::string> ignore_reason(evs.size());
  {
    std::unordered_map<std::string, size_t> first_copy;  // rule+text -> evidence
    std::map<uint32_t, int64_t> source_max;
    for (size_t i = 0; i < evs.size(); ++i) {
      const Evidence& ev = evs[i];
      const fb::Rule* rule = rs.rule(ev.rule);
      if (!HardwareLayer(rule->layer())) continue;
      if (ev.time_us != kNoTime) {
        if (d.job_start_us != kNoTime && ev.time_us < d.job_start_us - opts.stale_tolerance_us) {
          ignore_reason[i] = "stale: before the job window";
          continue;
        }
        if (d.job_end_us != kNoTime && ev.time_us > d.job_end_us + opts.stale_tolerance_us) {
          ignore_reason[i] = "stale: after the job window";
          continue;
        }
        auto [it, fresh] = source_max.emplace(ev.source, ev.time_us);
        if (!fresh) {
          if (ev.time_us < it->second - 3600 * kSecond) {
            ignore_reason[i] = "out-of-order block: timestamps jump backwards";
            continue;
          }
          it->second = std::max(it->second, ev.time_us);
        }
      }
      std::string key = StrCat(ev.rule, "\x1f", ev.text);
      auto [it, fresh] = first_copy.emplace(key, i);
      if (!fresh && evs[it->second].source != ev.source) {
        ignore_reason[i] = "replayed duplicate of a line in another file";
      }
    }
  }

  // ---- Conditions of rules.
  std::set<uint32_t> present;
  std::map<uint32_t, int64_t> first_time_of_rule;
  for (size_t i = 0; i < evs.size(); ++i) {
    if (!ignore_reason[i].empty()) continue;
    present.insert(evs[i].rule);
    if (evs[i].time_us != kNoTime) {
      auto [it, fresh] = first_time_of_rule.emplace(evs[i].rule, evs[i].time_us);
      if (!fresh) it->second = std::min(it->second, evs[i].time_us);
    }
  }
  auto rule_present = [&](const flatbuffers::String* id) {
    if (!id || id->size() == 0) return false;
    int r = rs.FindRule(id->string_view());
    return r >= 0 && present.count(static_cast<uint32_t>(r));
  };
  std::vector<bool> active(evs.size(), false);
  for (size_t i = 0; i < evs.size(); ++i) {
    if (!ignore_reason[i].empty()) continue;
    const Evidence& ev = evs[i];
    const fb::Rule* rule = rs.rule(ev.rule);
    SignalRole role = rs.signal(ev.signal).role;
    if (role != SignalRole::Initiating && role != SignalRole::Symptom) continue;
    if (const fb::Conditions* c = rule->conditions()) {
      double uptime_days = ev.monotonic_s ? *ev.monotonic_s / 86400.0 : -1;
      if (c->min_uptime_days() >= 0 && (uptime_days < 0 || uptime_days < c->min_uptime_days())) continue;
      if (c->max_uptime_days() >= 0 && uptime_days >= 0 && uptime_days >= c->max_uptime_days()) continue;
      if (c->requires_rule() && c->requires_rule()->size() && !rule_present(c->requires_rule())) continue;
      if (c->excludes_rule() && c->excludes_rule()->size() && rule_present(c->excludes_rule())) continue;
      if (c->after_rule() && c->after_rule()->size()) {
        int r = rs.FindRule(c->after_rule()->string_view());
        auto it = r >= 0 ? first_time_of_rule.find(static_cast<uint32_t>(r)) : first_time_of_rule.end();
        if (it == first_time_of_rule.end() || ev.time_us == kNoTime || ev.time_us < it->second) continue;
      }
      if (c->before_rule() && c->before_rule()->size()) {
        // E.g. a watchdog line printed at interpreter exit, after training
        // completed, is not a failure.
        int r = rs.FindRule(c->before_rule()->string_view());
        auto it = r >= 0 ? first_time_of_rule.find(static_cast<uint32_t>(r)) : first_time_of_rule.end();
        if (it != first_time_of_rule.end() && ev.time_us != kNoTime && ev.time_us >= it->second) continue;
      }
      if (c->detector() && c->detector()->size()) continue;  // detectors decide these
    }
    active[i] = true;
  }

  // ---- Ignored, aggregated per rule and reason.
  {
    std::map<std::pair<uint32_t, std::string>, size_t> idx;
    for (size_t i = 0; i < evs.size(); ++i) {
      if (ignore_reason[i].empty()) continue;
      auto key = std::make_pair(evs[i].rule, ignore_reason[i]);
      auto it = idx.find(key);
      if (it == idx.end()) {
        idx.emplace(key, d.ignored.size());
        d.ignored.push_back({evs[i].rule, ignore_reason[i], 1, evs[i]});
      } else {
        ++d.ignored[it->second].count;
      }
    }
  }

  // ---- Clusters per rule.
  std::vector<Cluster> clusters;
  {
    std::map<uint32_t, std::vector<size_t>> by_rule;
    for (size_t i = 0; i < evs.size(); ++i) {
      if (active[i]) by_rule[evs[i].rule].push_back(i);
    }
    for (auto& [rule, idxs] : by_rule) {
      std::stable_sort(idxs.begin(), idxs.end(), [&](size_t a, size_t b) {
        int64_t ta = evs[a].time_us, tb = evs[b].time_us;
        if ((ta == kNoTime) != (tb == kNoTime)) return tb == kNoTime;  // timed first
        return ta < tb;
      });
      Cluster* cur = nullptr;
      size_t first_cluster = clusters.size();
      for (size_t i : idxs) {
        int64_t t = evs[i].time_us;
        if (t == kNoTime && cur && cur->first != kNoTime) {
          // Untimed lines of a rule that also has timed ones (a kubectl
          // describe block, nvidia-smi output) join its first cluster rather
          // than make an incident of their own.
          Cluster& c0 = clusters[first_cluster];
          c0.ev.push_back(i);
          if (rs.signal(evs[i].signal).role == SignalRole::Initiating) c0.initiating = true;
          if (evs[i].rank >= 0) c0.ranks.insert(evs[i].rank);
          if (!evs[i].host.empty()) c0.hosts.insert(evs[i].host);
          continue;
        }
        bool split = !cur || (t == kNoTime) != (cur->first == kNoTime) ||
                     (t != kNoTime && t - cur->last > opts.cluster_gap_us);
        if (split) {
          clusters.emplace_back();
          cur = &clusters.back();
          cur->rule = rule;
          cur->layer = rs.rule(rule)->layer();
          cur->first = t;
        }
        cur->ev.push_back(i);
        cur->last = t;
        if (rs.signal(evs[i].signal).role == SignalRole::Initiating) cur->initiating = true;
        if (evs[i].rank >= 0) cur->ranks.insert(evs[i].rank);
        if (!evs[i].host.empty()) cur->hosts.insert(evs[i].host);
      }
    }
  }

  // ---- Explains graph: each cluster's best cause.
  auto edge = [&](uint32_t from, uint32_t to, double* min_lag, double* max_lag) {
    const auto* ex = rs.rule(from)->explains();
    if (!ex) return false;
    std::string_view to_id = rs.rule(to)->id()->string_view();
    for (const fb::Edge* e : *ex) {
      if (e->rule() && e->rule()->string_view() == to_id) {
        *min_lag = e->min_lag_s();
        *max_lag = e->max_lag_s();
        return true;
      }
    }
    return false;
  };
  auto better_cause = [&](const Cluster& a, const Cluster& b) {
    // Initiating lines first, then earlier, then the lower layer.
    if (a.initiating != b.initiating) return a.initiating;
    if (a.first != b.first) {
      if (a.first == kNoTime) return false;
      if (b.first == kNoTime) return true;
      if (std::llabs(a.first - b.first) > 60 * kSecond) return a.first < b.first;
    }
    if (a.layer != b.layer) return a.layer < b.layer;
    return a.first < b.first;
  };
  for (size_t bi = 0; bi < clusters.size(); ++bi) {
    Cluster& b = clusters[bi];
    int best = -1;
    std::string how;
    for (size_t ai = 0; ai < clusters.size(); ++ai) {
      if (ai == bi) continue;
      const Cluster& a = clusters[ai];
      if (a.rule == b.rule) continue;
      double min_lag, max_lag;
      bool explicit_edge = edge(a.rule, b.rule, &min_lag, &max_lag);
      bool ok = false;
      std::string why;
      if (explicit_edge) {
        if (a.first == kNoTime || b.first == kNoTime) {
          ok = a.layer <= b.layer;
          why = StrCat("edge ", rs.rule(a.rule)->id()->str(), " -> ", rs.rule(b.rule)->id()->str(),
                       " (times unknown)");
        } else {
          double lag = static_cast<double>(b.first - a.first) / 1e6;
          ok = lag >= min_lag && lag <= max_lag;
          why = StrCat("edge ", rs.rule(a.rule)->id()->str(), " -> ", rs.rule(b.rule)->id()->str(),
                       ", lag ", static_cast<int64_t>(std::round(lag)), " s within [",
                       static_cast<int64_t>(min_lag), ", ", static_cast<int64_t>(max_lag), "] s");
        }
      } else if (a.initiating && !b.initiating && a.layer < b.layer && a.first != kNoTime &&
                 b.first != kNoTime) {
        // Lower layers explain higher ones, near in time and place.
        double lag = static_cast<double>(b.first - a.first) / 1e6;
        bool shared = false;
        for (int64_t r : a.ranks) shared |= b.ranks.count(r) > 0;
        for (const std::string& h : a.hosts) shared |= b.hosts.count(h) > 0;
        ok = lag >= -5 && lag <= 1800 && (shared || b.ranks.size() > 1);
        why = StrCat("layer ", LayerName(a.layer), " below ", LayerName(b.layer), ", lag ",
                     static_cast<int64_t>(std::round(lag)), " s");
      }
      if (!ok) continue;
      // No cycles: a cause is not itself explained by its effect's rule first.
      if (!better_cause(a, b) && !(explicit_edge && a.layer < b.layer)) continue;
      if (best < 0 || better_cause(a, clusters[best])) {
        best = static_cast<int>(ai);
        how = why;
      }
    }
    b.parent = best;
    b.parent_how = how;
  }
  auto root_of = [&](int c) {
    int steps = 0;
    while (clusters[c].parent >= 0 && steps++ < 64) c = clusters[c].parent;
    return c;
  };

  // ---- Known ranks and hosts of the job.
  std::set<int64_t> known_ranks;
  std::set<std::string> known_hosts;
  int64_t nranks = 0;
  for (const Evidence& ev : evs) {
    if (ev.rank >= 0) known_ranks.insert(ev.rank);
    if (!ev.host.empty()) known_hosts.insert(ev.host);
    if (const std::string* n = ev.Field("nranks")) {
      int64_t v;
      if (ParseInt64(*n, &v) && v > 0 && v < 10'000'000) nranks = std::max(nranks, v);
    }
  }
  for (const auto& [rank, r] : scan.ranks) {
    if (rank >= 0) known_ranks.insert(rank);
  }
  for (const SourceSummary& s : scan.sources) {
    if (s.rank >= 0) known_ranks.insert(s.rank);
    if (!s.host.empty()) known_hosts.insert(s.host);
  }
  for (const DeviceLink& l : scan.devices) {
    if (l.global || l.nranks == world) known_ranks.insert(l.rank);
  }
  if (nranks > static_cast<int64_t>(known_ranks.size())) {
    for (int64_t r = 0; r < nranks; ++r) known_ranks.insert(r);
  }
  d.ranks = known_ranks.size();
  d.hosts = known_hosts.size();

  auto host_for_rank = [&](int64_t rank) -> std::string {
    if (auto h = topo.HostForRank(rank)) return *h;
    auto it = scan.ranks.find(rank);
    if (it != scan.ranks.end() && !it->second.host.empty()) return it->second.host;
    for (const SourceSummary& s : scan.sources) {
      if (s.rank == rank && !s.host.empty()) return s.host;
    }
    for (const Evidence& ev : evs) {
      if (ev.rank == rank && !ev.host.empty()) return ev.host;
    }
    return "";
  };

  // ---- Incidents from root clusters.
  std::map<int, std::vector<int>> members;
  for (size_t c = 0; c < clusters.size(); ++c) members[root_of(static_cast<int>(c))].push_back(static_cast<int>(c));
  for (auto& [root, cl] : members) {
    const Cluster& rc = clusters[root];
    const fb::Rule* rule = rs.rule(rc.rule);
    Incident inc;
    inc.rule = rc.rule;
    // Initiating evidence: the root cluster's lines, earliest first (capped).
    for (size_t k = 0; k < rc.ev.size() && inc.initiating.size() < 20; ++k) {
      inc.initiating.push_back(evs[rc.ev[k]]);
    }
    const Evidence& first = evs[rc.ev.front()];
    inc.time_us = first.time_us;
    inc.rank = first.rank;
    inc.host = first.host;
    inc.gpu = first.gpu;
    // Collateral: every explained cluster, merged per rule.
    std::map<uint32_t, Collateral> coll;
    uint64_t coll_total = 0;
    std::vector<std::string> hows;
    for (int c : cl) {
      if (c == root) continue;
      const Cluster& k = clusters[c];
      Collateral& co = coll[k.rule];
      co.rule = k.rule;
      for (size_t i : k.ev) {
        const Evidence& ev = evs[i];
        ++co.count;
        if (co.count == 1) co.sample = ev;
        if (ev.time_us != kNoTime) {
          if (co.first_time_us == kNoTime || ev.time_us < co.first_time_us) {
            co.first_time_us = ev.time_us;
            co.sample = ev;
          }
          if (co.last_time_us == kNoTime || ev.time_us > co.last_time_us) co.last_time_us = ev.time_us;
        }
      }
      for (int64_t r : k.ranks) co.ranks.push_back(r);
      for (const std::string& h : k.hosts) co.hosts.push_back(h);
      if (!k.parent_how.empty() && hows.size() < 4) hows.push_back(k.parent_how);
    }
    for (auto& [r, co] : coll) {
      // Exact counts survive the evidence cap: use the rule's full stats when
      // the whole rule is collateral here.
      auto st = scan.rule_stats.find(r);
      if (st != scan.rule_stats.end() && st->second.count > co.count && members.size() == 1) {
        co.count = st->second.count;
        for (auto& [rank, n] : st->second.ranks) co.ranks.push_back(rank);
      }
      std::sort(co.ranks.begin(), co.ranks.end());
      co.ranks.erase(std::unique(co.ranks.begin(), co.ranks.end()), co.ranks.end());
      std::sort(co.hosts.begin(), co.hosts.end());
      co.hosts.erase(std::unique(co.hosts.begin(), co.hosts.end()), co.hosts.end());
      coll_total += co.count;
      inc.collateral.push_back(std::move(co));
    }
    std::sort(inc.collateral.begin(), inc.collateral.end(), [](const Collateral& a, const Collateral& b) {
      return a.first_time_us < b.first_time_us;
    });

    double conf = rule->weight();
    std::string explanation;
    std::string start_s, end_s;
    int64_t window_start = inc.time_us, window_end = inc.time_us;
    const std::string* peer = first.Field("peer");
    if (!rc.initiating) {
      // Only symptoms: infer the suspect.
      inc.inferred = true;
      conf *= 0.55;
      std::set<int64_t> cluster_ranks = rc.ranks;
      std::vector<int64_t> absent;
      for (int64_t r : known_ranks) {
        if (!cluster_ranks.count(r)) absent.push_back(r);
      }
      std::string basis;
      if (cluster_ranks.size() >= 2 && !absent.empty() &&
          absent.size() <= std::max<size_t>(1, known_ranks.size() / 4)) {
        inc.suspects = absent;
        basis = StrCat(cluster_ranks.size(), " of ", known_ranks.size(), " ranks report ",
                       rule->id()->str(), "; rank", absent.size() > 1 ? "s " : " ",
                       StrJoin(absent, ", "), absent.size() > 1 ? " do" : " does", " not");
      }
      if (inc.suspects.empty()) {
        auto st = scan.rule_stats.find(rc.rule);
        if (st != scan.rule_stats.end() && st->second.rank_min_seq.size() >= 2) {
          std::map<int64_t, int> freq;
          for (auto& [r, s] : st->second.rank_min_seq) ++freq[s];
          int64_t mode = 0;
          int mode_n = 0;
          for (auto& [s, n] : freq) {
            if (n > mode_n) {
              mode_n = n;
              mode = s;
            }
          }
          std::vector<int64_t> low;
          for (auto& [r, s] : st->second.rank_min_seq) {
            if (s < mode) low.push_back(r);
          }
          if (!low.empty() && low.size() <= st->second.rank_min_seq.size() / 2) {
            inc.suspects = low;
            basis = StrCat("rank", low.size() > 1 ? "s " : " ", StrJoin(low, ", "),
                           " stopped at a lower collective SeqNum than the other ranks (", mode, ")");
          }
        }
      }
      if (inc.suspects.empty()) {
        // The rank whose progress stopped first.
        std::vector<std::pair<int64_t, int64_t>> lasts;
        for (auto& [r, s] : scan.ranks) {
          if (r >= 0 && s.last_progress_us != kNoTime) lasts.emplace_back(s.last_progress_us, r);
        }
        if (lasts.size() >= 2) {
          std::sort(lasts.begin(), lasts.end());
          std::vector<double> ts;
          for (auto& [t, r] : lasts) ts.push_back(static_cast<double>(t));
          double med = Median(ts);
          if (med - static_cast<double>(lasts.front().first) > 60e6) {
            inc.suspects = {lasts.front().second};
            basis = StrCat("rank ", lasts.front().second, " stopped making progress first, at ",
                           FormatTime(lasts.front().first), ", ",
                           static_cast<int64_t>((med - static_cast<double>(lasts.front().first)) / 1e6),
                           " s before the median rank");
          }
        }
      }
      if (!inc.suspects.empty()) {
        inc.rank = inc.suspects.front();
        inc.host = host_for_rank(inc.rank);
        inc.gpu.clear();
        if (auto bus = topo.BusForRank(inc.rank)) inc.gpu = *bus;
        auto it = scan.ranks.find(inc.rank);
        if (it != scan.ranks.end() && it->second.last_progress_us != kNoTime) {
          window_start = it->second.last_progress_us - 5 * 60 * kSecond;
        } else if (inc.time_us != kNoTime) {
          window_start = inc.time_us - 35 * 60 * kSecond;
        }
        explanation = StrCat("No initiating line was found. Suspect inferred: ", basis, ". ");
      } else {
        inc.rank = -1;
        // One host named by every line of the cluster is still a fact.
        if (rc.hosts.size() != 1) inc.host.clear();
        if (rc.ranks.size() == 1) {
          inc.rank = *rc.ranks.begin();
          // A line about another rank ("ranks [13] are the lagging ranks",
          // printed by rank 0) names that rank, which lives on its own host.
          if (std::string h = host_for_rank(inc.rank); !h.empty()) inc.host = h;
        }
        if (inc.time_us != kNoTime) window_start = inc.time_us - 35 * 60 * kSecond;
        explanation = StrCat("No initiating line was found and no rank stands out: ",
                             rc.ranks.size(), " rank(s) report ", rule->id()->str(), ". ");
        conf *= 0.8;
      }
    } else {
      explanation = StrCat(rule->title()->str(), " at ", FormatTime(inc.time_us),
                           inc.host.empty() ? "" : StrCat(" on ", inc.host),
                           inc.rank >= 0 ? StrCat(" (rank ", inc.rank, ")") : "",
                           inc.gpu.empty() ? "" : StrCat(" GPU ", inc.gpu), " is the earliest ",
                           LayerName(rc.layer), "-layer event of this incident");
      if (!coll.empty()) {
        explanation += StrCat(" and explains ", coll_total, " later line(s) of ", coll.size(),
                              " other rule(s) (", StrJoin(hows, "; "), ")");
      }
      explanation += ". ";
      if (first.time_source == TimeSource::kNone) {
        conf *= 0.85;
        explanation += "Its time is unknown (kernel stamp not anchored to wall time). ";
      }
      if (peer && !peer->empty()) {
        std::string peer_host = *peer;
        if (auto it = addr_host.find(bare_addr(*peer)); it != addr_host.end()) peer_host = it->second;
        explanation += StrCat("The line blames the remote peer ", *peer,
                              peer_host != *peer ? StrCat(" (", peer_host, ")") : std::string(),
                              ": that peer is the suspect, not the rank that printed it. ");
        inc.host = peer_host;
        inc.rank = -1;
        inc.gpu.clear();
        inc.inferred = true;
        inc.suspects.clear();
      }
    }
    if (!coll.empty()) conf = std::min(0.99, conf + 0.03 * std::log10(1.0 + static_cast<double>(coll_total)));
    inc.confidence = std::round(std::clamp(conf, 0.01, 0.99) * 100) / 100;
    for (const Collateral& co : inc.collateral) {
      if (co.first_time_us != kNoTime) window_end = std::max(window_end, co.first_time_us);
    }
    if (window_end == kNoTime) window_end = window_start;
    // Fix and verify with placeholders filled.
    std::map<std::string, std::string> vars = {
        {"host", inc.host.empty() ? "the suspect host" : inc.host},
        {"rank", inc.rank >= 0 ? StrCat(inc.rank) : "the suspect rank"},
        {"gpu", inc.gpu.empty() ? "<gpu>" : inc.gpu},
        {"start", FormatTime(window_start)},
        {"end", FormatTime(window_end)}};
    inc.fix = FillTemplate(rule->fix()->str(), vars);
    inc.verify = FillTemplate(rule->verify()->str(), vars);
    // Missing facts: what would settle it.
    if (inc.inferred || first.time_source == TimeSource::kNone || inc.host.empty()) {
      if (rule->missing_fact() && rule->missing_fact()->size()) {
        inc.missing_facts.push_back(FillTemplate(rule->missing_fact()->str(), vars));
      }
      if (inc.inferred && !inc.host.empty()) {
        inc.missing_facts.push_back(FillTemplate(
            "dmesg of {host} between {start} and {end} (journalctl -k --since/--until, or dmesg -T)", vars));
      }
      if (inc.inferred && inc.rank >= 0 && inc.host.empty()) {
        inc.missing_facts.push_back(StrCat(
            "which host runs rank ", inc.rank,
            ": the NCCL init lines (NCCL_DEBUG=INFO) or the launcher's rank map"));
      }
      if (inc.inferred && inc.suspects.empty() && !peer) {
        inc.missing_facts.push_back(FillTemplate(
            "kernel logs (dmesg) of every host between {start} and {end}, and the application log "
            "of any rank missing from the collected files",
            vars));
      }
      if (first.time_source == TimeSource::kNone && rc.initiating) {
        inc.missing_facts.push_back(FillTemplate(
            "a wall-clock kernel log of {host} (dmesg -T or journalctl -k -o short-iso) to date the event",
            vars));
      }
      if (peer && !peer->empty()) {
        inc.missing_facts.push_back(StrCat("kernel and NCCL logs of the peer ", inc.host,
                                           " around ", FormatTime(inc.time_us),
                                           " (ibstat, dmesg | grep -i mlx5)"));
      }
    }
    std::sort(inc.missing_facts.begin(), inc.missing_facts.end());
    inc.missing_facts.erase(std::unique(inc.missing_facts.begin(), inc.missing_facts.end()),
                            inc.missing_facts.end());
    inc.explanation = std::move(explanation);
    // Timeline: the initiating lines and the first line of each collateral.
    for (const Evidence& ev : inc.initiating) {
      if (inc.timeline.size() < 10) inc.timeline.push_back(ev);
    }
    for (const Collateral& co : inc.collateral) inc.timeline.push_back(co.sample);
    std::stable_sort(inc.timeline.begin(), inc.timeline.end(), [](const Evidence& a, const Evidence& b) {
      if ((a.time_us == kNoTime) != (b.time_us == kNoTime)) return b.time_us == kNoTime;
      return a.time_us < b.time_us;
    });
    d.incidents.push_back(std::move(inc));
  }

  // ---- Numeric detectors.
  auto rule_for_detector = [&](std::string_view name) -> int {
    for (size_t r = 0; r < rs.rule_count(); ++r) {
      const fb::Conditions* c = rs.rule(r)->conditions();
      if (c && c->detector() && c->detector()->string_view() == name) return static_cast<int>(r);
    }
    return -1;
  };
  auto progress_evidence = [&](int64_t rank) -> const Evidence* {
    const Evidence* best = nullptr;
    for (const Evidence& ev : evs) {
      if (ev.rank == rank && rs.signal(ev.signal).role == SignalRole::Progress) best = &ev;
    }
    return best;
  };
  auto add_finding = [&](const Finding& f, double conf) {
    int r = rule_for_detector(f.detector);
    if (r < 0) return;
    const fb::Rule* rule = rs.rule(r);
    Incident inc;
    inc.rule = static_cast<uint32_t>(r);
    inc.detector = f.detector;
    inc.rank = f.rank;
    inc.host = f.host.empty() && f.rank >= 0 ? host_for_rank(f.rank) : f.host;
    inc.time_us = f.time_us;
    inc.inferred = true;
    inc.confidence = conf;
    if (f.rank >= 0) inc.suspects = {f.rank};
    if (const Evidence* ev = progress_evidence(f.rank)) inc.initiating.push_back(*ev);
    if (!f.series.empty()) {
      for (const Evidence& ev : evs) {
        if (ev.rank == f.rank && rs.signal(ev.signal).role == SignalRole::Metric &&
            (f.time_us == kNoTime || ev.time_us >= f.time_us)) {
          inc.initiating.push_back(ev);
          break;
        }
      }
    }
    inc.explanation = StrCat("Detector ", f.detector, ": ", f.detail, ".");
    std::map<std::string, std::string> vars = {
        {"host", inc.host.empty() ? "the suspect host" : inc.host},
        {"rank", inc.rank >= 0 ? StrCat(inc.rank) : "the suspect rank"},
        {"gpu", "<gpu>"},
        {"start", FormatTime(f.time_us)},
        {"end", FormatTime(d.job_end_us)}};
    inc.fix = FillTemplate(rule->fix()->str(), vars);
    inc.verify = FillTemplate(rule->verify()->str(), vars);
    if (rule->missing_fact() && rule->missing_fact()->size()) {
      inc.missing_facts.push_back(FillTemplate(rule->missing_fact()->str(), vars));
    }
    inc.timeline = inc.initiating;
    // A finding that a seen event explains (a loss spike after Megatron's
    // hardware-fault verdict) is that event's collateral, not its own story.
    for (Incident& host_inc : d.incidents) {
      if (!host_inc.detector.empty()) continue;
      double min_lag, max_lag;
      if (!edge(host_inc.rule, inc.rule, &min_lag, &max_lag)) continue;
      if (host_inc.time_us != kNoTime && f.time_us != kNoTime) {
        double lag = static_cast<double>(f.time_us - host_inc.time_us) / 1e6;
        if (lag < min_lag || lag > max_lag) continue;
      }
      Collateral co;
      co.rule = inc.rule;
      co.count = 1;
      if (f.rank >= 0) co.ranks.push_back(f.rank);
      if (!inc.host.empty()) co.hosts.push_back(inc.host);
      co.first_time_us = co.last_time_us = f.time_us;
      if (!inc.initiating.empty()) co.sample = inc.initiating.back();
      else if (!host_inc.initiating.empty()) co.sample = host_inc.initiating.front();
      host_inc.collateral.push_back(std::move(co));
      host_inc.explanation += StrCat("Detector ", f.detector, " agrees: ", f.detail, ". ");
      return;
    }
    d.incidents.push_back(std::move(inc));
  };
  bool log_incidents = !d.incidents.empty();
  for (const Finding& f : DetectStragglers(scan.ranks)) {
    add_finding(f, std::min(0.85, 0.5 + 0.05 * f.score));
  }
  int64_t end_us = d.job_end_us;
  // Progress that stops before the logs say training completed is the end
  // of training, not a hang (the exit-time watchdog keeps the logs going).
  bool completed = false;
  if (int tc = rs.FindRule("training-completed"); tc >= 0) {
    auto it = first_time_of_rule.find(static_cast<uint32_t>(tc));
    int64_t latest = kNoTime;
    for (const auto& [r, s] : scan.ranks) latest = std::max(latest, s.last_progress_us);
    completed = it != first_time_of_rule.end() &&
                (latest == kNoTime || it->second >= latest - 60 * kSecond);
  }
  if (!log_incidents && !completed) {
    auto hangs = DetectHangs(scan.ranks, end_us);
    if (!hangs.empty()) {
      // All ranks stopped together: one job-level hang; else the first to stop.
      add_finding(hangs.front(), hangs.size() == scan.ranks.size() ? 0.5 : 0.6);
    }
  }
  for (const auto& [key, series] : scan.metrics) {
    int rule_idx = series.empty() ? -1 : static_cast<int>(series.front().rule);
    const fb::Conditions* c = rule_idx >= 0 ? rs.rule(rule_idx)->conditions() : nullptr;
    std::string_view det = c && c->detector() ? c->detector()->string_view() : "";
    if (det == "sdc_drift") {
      for (const Finding& f : DetectSdcDrift(key, series)) add_finding(f, 0.6);
    } else if (det == "loss_spike") {
      auto spikes = DetectLossSpikes(key, series);
      if (!spikes.empty()) add_finding(spikes.front(), 0.5);
    }
  }
  // SIGTERM without a checkpoint after it, and a run killed with its newest
  // checkpoint hours old. Practices, not causes: they never outrank what
  // killed the job, and they are skipped when another incident comes first
  // (the SIGTERM of a drained node or a hung job at its time limit is
  // collateral).
  {
    int sig = rs.FindRule("sigterm-received");
    int ckpt = rs.FindRule("checkpoint-saved");
    const Evidence* term = nullptr;
    int64_t last_ckpt = kNoTime;
    for (const Evidence& ev : evs) {
      if (sig >= 0 && static_cast<int>(ev.rule) == sig && !term) term = &ev;
      if (ckpt >= 0 && static_cast<int>(ev.rule) == ckpt && ev.time_us != kNoTime) {
        last_ckpt = std::max(last_ckpt, ev.time_us);
      }
    }
    bool earlier_incident = false;
    for (const Incident& inc : d.incidents) {
      if (!term || term->time_us == kNoTime || inc.time_us == kNoTime || inc.time_us <= term->time_us) {
        earlier_incident = true;
      }
    }
    auto add_practice = [&](const Finding& f, const Evidence* lead) {
      size_t before = d.incidents.size();
      add_finding(f, 0.4);
      if (d.incidents.size() > before && lead) {
        d.incidents.back().initiating.insert(d.incidents.back().initiating.begin(), *lead);
        d.incidents.back().timeline = d.incidents.back().initiating;
      }
    };
    if (term && !earlier_incident &&
        (last_ckpt == kNoTime || (term->time_us != kNoTime && last_ckpt < term->time_us))) {
      Finding f;
      f.detector = "missing_checkpoint_after_sigterm";
      f.rank = term->rank;
      f.host = term->host;
      f.time_us = term->time_us;
      f.detail = last_ckpt == kNoTime
                     ? "the job received SIGTERM and no checkpoint was saved in the logs"
                     : StrCat("the job received SIGTERM at ", FormatTime(term->time_us),
                              " and the newest checkpoint is from ", FormatTime(last_ckpt));
      add_practice(f, term);
    }
    // Killed (SIGTERM or a failure incident) with the newest checkpoint more
    // than two hours before the end: hours of work lost.
    constexpr int64_t kStale = 2 * 3600 * kSecond;
    int64_t end = d.job_end_us;
    bool killed = term != nullptr || !d.incidents.empty();
    if (killed && end != kNoTime && d.job_start_us != kNoTime && end - d.job_start_us > kStale &&
        (last_ckpt == kNoTime || end - last_ckpt > kStale)) {
      Finding f;
      f.detector = "stale_checkpoint";
      f.time_us = end;
      if (term) {
        f.rank = term->rank;
        f.host = term->host;
      }
      f.detail = last_ckpt == kNoTime
                     ? StrCat("the run ended at ", FormatTime(end), " after ",
                              (end - d.job_start_us) / 3600 / kSecond, " h with no checkpoint saved in the logs")
                     : StrCat("the run ended at ", FormatTime(end), " and its newest checkpoint is from ",
                              FormatTime(last_ckpt), ", ", (end - last_ckpt) / 60 / kSecond,
                              " min of training lost");
      add_practice(f, term);
    }
  }

  // ---- Rank: seen initiating lines first, then confidence, then time.
  auto collateral_count = [](const Incident& i) {
    uint64_t n = 0;
    for (const Collateral& c : i.collateral) n += c.count;
    return n;
  };
  std::stable_sort(d.incidents.begin(), d.incidents.end(), [&](const Incident& a, const Incident& b) {
    // Tiers: a seen initiating line; a suspect inferred from log lines; a
    // numeric detector; a practice finding (no checkpoint after SIGTERM).
    auto tier = [](const Incident& i) {
      if (i.detector == "missing_checkpoint_after_sigterm" || i.detector == "stale_checkpoint") return 3;
      if (!i.detector.empty()) return 2;
      return i.inferred ? 1 : 0;
    };
    if (tier(a) != tier(b)) return tier(a) < tier(b);
    double score_a = a.confidence + 0.05 * std::min(3.0, std::log10(1.0 + collateral_count(a)));
    double score_b = b.confidence + 0.05 * std::min(3.0, std::log10(1.0 + collateral_count(b)));
    if (std::fabs(score_a - score_b) > 1e-9) return score_a > score_b;
    if ((a.time_us == kNoTime) != (b.time_us == kNoTime)) return b.time_us == kNoTime;
    return a.time_us < b.time_us;
  });

  // ---- Priors: what a job of this size and length should expect.
  if (d.job_start_us != kNoTime && d.job_end_us != kNoTime && d.job_end_us > d.job_start_us) {
    double gpus = static_cast<double>(std::max<size_t>(1, known_ranks.size()));
    double hours = static_cast<double>(d.job_end_us - d.job_start_us) / 3.6e9;
    std::vector<double> est;
    for (const Prior& p : rs.priors()) {
      if (p.gpus <= 0 || p.value <= 0) continue;
      if (p.kind == "mttf_hours") {
        double mttf = p.value * p.gpus / gpus;  // MTTF falls inversely with GPU count
        est.push_back(hours / mttf);
        d.expectation.basis.push_back(StrCat(p.reference, ": MTTF ", p.value, " h at ", p.gpus, " GPUs"));
      } else if (p.kind == "failures_per_week" || p.kind == "failures_per_gpu_hour") {
        double rate = p.value / 168.0 / p.gpus;  // per GPU-hour
        est.push_back(rate * gpus * hours);
        d.expectation.basis.push_back(StrCat(p.reference, ": ", p.value, " failures/week at ", p.gpus, " GPUs"));
      }
    }
    if (!est.empty()) {
      d.expectation.gpus = gpus;
      d.expectation.hours = std::round(hours * 100) / 100;
      d.expectation.expected_interruptions = std::round(Median(est) * 10000) / 10000;
    }
  }
  return d;
}

}  // namespace faultline
