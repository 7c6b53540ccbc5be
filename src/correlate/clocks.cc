// Clock alignment pass: the spread of one sync moment (an NCCL init that
// every rank logs at once) across hosts is clock skew. The host with the
// most sync points is the reference; user offsets override the estimate.
// Evidence, source and rank-progress times are shifted to aligned time.
// First, a host's kernel lines stamped only in seconds since boot (plain
// dmesg) are placed by a crash they share with a launcher: the kernel's
// "python3[PID]: segfault" or "Killed process PID" is logged just before the
// launcher on that host reports the worker PID dead of that signal.
#include <cmath>
#include <string>
#include <vector>

#include "correlate/state.h"
#include "detect/detect.h"
#include "util/strings.h"

namespace faultline::internal {
namespace {

// Host -> seconds to add, for hosts whose median skew is half a second or more.
std::map<std::string, double> EstimateOffsets(const std::vector<SyncPoint>& points) {
  std::map<std::string, std::map<std::string, std::vector<int64_t>>> by_key;
  std::map<std::string, int> host_keys;
  for (const SyncPoint& p : points) {
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
  std::map<std::string, double> out;
  for (auto& [h, ds] : diffs) {
    double off = Median(ds);
    if (std::fabs(off) >= 0.5) out[h] = std::round(off * 1000) / 1000;
  }
  return out;
}

// Whether `ev` reports a worker's death by a crash or a kill (not the
// SIGTERM a launcher sends the rest).
bool CrashReport(const Evidence& ev) {
  std::string m = ExitMeaning(ev);
  return !m.empty() && !m.starts_with("SIGTERM");
}

// Host -> boot time (wall µs at monotonic 0), from an unstamped kernel line
// naming a pid and a launcher's stamped report of that pid's crash on the
// same host.
std::map<std::string, int64_t> BootTimesFromCrashes(const CorrelationState& st) {
  std::map<std::pair<std::string, int64_t>, const Evidence*> kernel;  // (host, pid)
  for (const Evidence& ev : st.evs) {
    if (ev.time_us != kNoTime || !ev.monotonic_s || ev.host.empty()) continue;
    if (int64_t pid = PidOf(ev); pid > 0) kernel.emplace(std::pair(NormalizeHost(ev.host), pid), &ev);
  }
  std::map<std::string, int64_t> boot;
  if (kernel.empty()) return boot;
  for (const Evidence& ev : st.evs) {
    if (ev.time_us == kNoTime || ev.monotonic_s || ev.host.empty() || !CrashReport(ev)) continue;
    std::string host = NormalizeHost(ev.host);
    auto it = kernel.find({host, PidOf(ev)});
    if (it == kernel.end() || boot.count(host)) continue;
    boot[host] = ev.time_us - static_cast<int64_t>(*it->second->monotonic_s * 1e6);
  }
  return boot;
}

void AnchorKernelByCrashes(CorrelationState& st) {
  std::map<std::string, int64_t> boot = BootTimesFromCrashes(st);
  if (boot.empty()) return;
  for (Evidence& ev : st.evs) {
    if (ev.time_us != kNoTime || !ev.monotonic_s) continue;
    auto it = boot.find(NormalizeHost(ev.host));
    if (it == boot.end()) continue;
    ev.time_us = it->second + static_cast<int64_t>(*ev.monotonic_s * 1e6);
    ev.time_source = TimeSource::kMonotonicAnchored;
  }
}

void Shift(int64_t& t, int64_t off) {
  if (t != kNoTime) t += off;
}

}  // namespace

int64_t PidOf(const Evidence& ev) {
  int64_t pid = ev.pid;
  if (const std::string* p = ev.Field("pid"); pid < 0 && p && !ParseInt64(*p, &pid)) pid = -1;
  return pid;
}

int64_t ClockOffsetUs(const Diagnosis& d, const std::string& host) {
  auto it = d.clock_offsets_s.find(host);
  return it == d.clock_offsets_s.end() ? 0 : static_cast<int64_t>(it->second * 1e6);
}

void AlignClocks(CorrelationState& st) {
  AnchorKernelByCrashes(st);
  Diagnosis& d = st.diag;
  for (const auto& [h, off] : EstimateOffsets(st.scan.sync_points)) {
    d.clock_offsets_s[h] = off;
    d.clock_offset_source[h] = "estimated";
  }
  for (const auto& [h, off] : st.opts.clock_offsets_s) {
    d.clock_offsets_s[h] = off;
    d.clock_offset_source[h] = "user";
  }
  auto offset_us = [&d](const std::string& host) { return ClockOffsetUs(d, host); };
  for (Evidence& ev : st.evs) Shift(ev.time_us, offset_us(ev.host));
  for (SourceSummary& s : st.scan.sources) {
    int64_t off = offset_us(s.host);
    Shift(s.first_time_us, off);
    Shift(s.last_time_us, off);
  }
  for (auto& [rank, r] : st.scan.ranks) {
    int64_t off = offset_us(r.host);
    Shift(r.first_progress_us, off);
    Shift(r.last_progress_us, off);
  }
}

}  // namespace faultline::internal
