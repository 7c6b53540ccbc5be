#include "evidence/finalize.h"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <map>

namespace faultline {

void FinalizeTimes(ScanResult& r) {
  // Kernel monotonic stamps: anchor to wall time from the same source, else
  // from another source of the same host.
  std::map<std::string, int64_t> host_anchor;
  for (const SourceSummary& s : r.sources) {
    if (s.monotonic_anchor_us && !s.host.empty()) host_anchor.emplace(s.host, *s.monotonic_anchor_us);
  }
  for (Evidence& ev : r.evidence) {
    if (ev.time_us != kNoTime || !ev.monotonic_s) continue;
    const SourceSummary& s = r.sources[ev.source];
    std::optional<int64_t> anchor = s.monotonic_anchor_us;
    if (!anchor && !ev.host.empty()) {
      auto it = host_anchor.find(ev.host);
      if (it != host_anchor.end()) anchor = it->second;
    }
    if (anchor) {
      ev.time_us = *anchor + static_cast<int64_t>(*ev.monotonic_s * 1e6);
      ev.time_source = TimeSource::kMonotonicAnchored;
    }
  }
  // Year-less stamps (syslog, glog): pick the year that puts them nearest the
  // job's dated evidence, which handles a December-to-January run.
  std::vector<int64_t> dated;
  for (const Evidence& ev : r.evidence) {
    if (ev.time_us != kNoTime && ev.time_source == TimeSource::kParsed) dated.push_back(ev.time_us);
  }
  for (const SourceSummary& s : r.sources) {
    if (s.dated_us != kNoTime) dated.push_back(s.dated_us);
  }
  if (!dated.empty()) {
    std::nth_element(dated.begin(), dated.begin() + dated.size() / 2, dated.end());
    int64_t ref = dated[dated.size() / 2];
    auto shift_years = [](int64_t us, int k) {
      time_t t = static_cast<time_t>(us / 1000000);
      int64_t frac = us % 1000000;
      struct tm tm;
      gmtime_r(&t, &tm);
      tm.tm_year += k;
      return static_cast<int64_t>(timegm(&tm)) * 1000000 + frac;
    };
    for (Evidence& ev : r.evidence) {
      if (ev.time_source != TimeSource::kInferredYear || ev.time_us == kNoTime) continue;
      int64_t best = ev.time_us;
      for (int k = -3; k <= 3; ++k) {
        int64_t cand = shift_years(ev.time_us, k);
        if (std::llabs(cand - ref) < std::llabs(best - ref)) best = cand;
      }
      ev.time_us = best;
    }
    for (SourceSummary& s : r.sources) {
      for (auto [t, inferred] : {std::pair{&s.first_time_us, s.first_time_inferred},
                                 std::pair{&s.last_time_us, s.last_time_inferred}}) {
        if (*t == kNoTime || !inferred) continue;
        int64_t best = *t;
        for (int k = -3; k <= 3; ++k) {
          int64_t cand = shift_years(*t, k);
          if (std::llabs(cand - ref) < std::llabs(best - ref)) best = cand;
        }
        *t = best;
      }
    }
  }
}

}  // namespace faultline
