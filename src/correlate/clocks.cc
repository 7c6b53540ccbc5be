// Clock alignment pass: the spread of one sync moment (an NCCL init that
// every rank logs at once) across hosts is clock skew. The host with the
// most sync points is the reference; user offsets override the estimate.
// Evidence, source and rank-progress times are shifted to aligned time.
#include <cmath>
#include <string>
#include <vector>

#include "correlate/state.h"
#include "detect/detect.h"

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

void Shift(int64_t& t, int64_t off) {
  if (t != kNoTime) t += off;
}

}  // namespace

void AlignClocks(CorrelationState& st) {
  Diagnosis& d = st.diag;
  for (const auto& [h, off] : EstimateOffsets(st.scan.sync_points)) {
    d.clock_offsets_s[h] = off;
    d.clock_offset_source[h] = "estimated";
  }
  for (const auto& [h, off] : st.opts.clock_offsets_s) {
    d.clock_offsets_s[h] = off;
    d.clock_offset_source[h] = "user";
  }
  auto offset_us = [&d](const std::string& host) -> int64_t {
    auto it = d.clock_offsets_s.find(host);
    return it == d.clock_offsets_s.end() ? 0 : static_cast<int64_t>(it->second * 1e6);
  };
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
