#include "evidence/finalize.h"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attribution/attribution.h"
#include "timeparse/timeparse.h"

namespace faultline {

namespace {

// Evidence on the lines of a folded traceback -- a frame in
// distributed_c10d.py, a code line quoting an error string -- belongs to the
// exception line that ends it: it takes that line's time when it has no
// stamp of its own, its rank and host when it lacks them, and the field
// `in_traceback_of` (the exception's line number). Lines of other ranks or
// hosts printed into the same traceback are left alone.
void AttachTracebackLines(ScanResult& r) {
  if (std::none_of(r.evidence.begin(), r.evidence.end(),
                   [](const Evidence& ev) { return ev.traceback_span > 0; })) {
    return;
  }
  std::map<uint32_t, std::vector<size_t>> by_source;  // evidence indices by offset
  for (size_t i = 0; i < r.evidence.size(); ++i) by_source[r.evidence[i].source].push_back(i);
  for (auto& [src, idx] : by_source) {
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      return r.evidence[a].offset < r.evidence[b].offset;
    });
    for (size_t k = 0; k < idx.size(); ++k) {
      const Evidence& exc = r.evidence[idx[k]];
      if (exc.traceback_span == 0) continue;
      const uint64_t begin = exc.offset >= exc.traceback_span ? exc.offset - exc.traceback_span : 0;
      for (size_t j = k; j-- > 0;) {
        Evidence& ev = r.evidence[idx[j]];
        if (ev.offset < begin) break;
        if (ev.offset >= exc.offset) continue;  // another signal of the exception line
        if ((ev.rank >= 0 && ev.rank != exc.rank) || (!ev.host.empty() && ev.host != exc.host)) continue;
        if (ev.rank < 0) ev.rank = exc.rank;
        if (ev.host.empty()) ev.host = exc.host;
        if (exc.time_us != kNoTime &&
            (ev.time_source == TimeSource::kInherited || ev.time_us == kNoTime)) {
          ev.time_us = exc.time_us;
          ev.year_inferred = exc.year_inferred || exc.time_source == TimeSource::kInferredYear;
          // A year still to be placed, or a kernel anchor, stays as such.
          ev.time_source = exc.time_source == TimeSource::kParsed ? TimeSource::kInherited : exc.time_source;
          ev.needs_prev_time = false;
        }
        std::string line = std::to_string(exc.line);
        bool set = false;
        for (auto& [key, value] : ev.fields) {
          if (key == "in_traceback_of") {
            value = line;
            set = true;
          }
        }
        if (!set) ev.fields.emplace_back("in_traceback_of", std::move(line));
      }
    }
  }
}

// A RayTaskError the driver prints nests the error of every task that
// passed it on: the outer task's header ("ray::_Inner.train() (pid=249,
// ip=A, ...)"), its frames, then the inner task's exception line with that
// task's header ("ray.exceptions.RayTaskError(E): ray::Worker.run() (pid=
// 192, ip=B, ...)"), and so on down to the task that raised (ray/
// exceptions.py: each RayTaskError's message is its task's traceback with
// the header in place of "Traceback (most recent call last):"). Each outer
// header only passes the error on: the innermost names the process where
// it was raised, so a header line whose traceback's exception line is a
// nested header's takes that one's host and pid, innermost first so that
// every level gets the deepest.
void TakeInnermostTaskHeaders(ScanResult& r) {
  struct Task {
    std::string host, resolved_host;
    std::optional<int64_t> pid, resolved_pid;
  };
  // Per source, the lines holding a task header, by offset.
  std::map<uint32_t, std::map<uint64_t, Task>> tasks;
  for (const Evidence& ev : r.evidence) {
    if (ev.text.find("ray::") == std::string::npos) continue;
    Task t;
    if (FindRayTaskHeader(ev.text, &t.host, &t.pid) == std::string_view::npos) continue;
    t.resolved_host = t.host;
    t.resolved_pid = t.pid;
    tasks[ev.source].emplace(ev.offset, std::move(t));
  }
  if (tasks.empty()) return;
  std::map<uint32_t, std::vector<size_t>> by_source;  // their evidence, innermost first
  for (size_t i = 0; i < r.evidence.size(); ++i) {
    auto s = tasks.find(r.evidence[i].source);
    if (s != tasks.end() && s->second.count(r.evidence[i].offset)) by_source[r.evidence[i].source].push_back(i);
  }
  for (auto& [src, idx] : by_source) {
    std::map<uint64_t, Task>& lines = tasks[src];
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      return r.evidence[a].offset > r.evidence[b].offset;
    });
    // A header line whose fold reaches up to another header line is the
    // exception line of that one's task.
    for (size_t i : idx) {
      const Evidence& inner = r.evidence[i];
      if (inner.traceback_span == 0 || inner.offset < inner.traceback_span) continue;
      auto outer = lines.find(inner.offset - inner.traceback_span);
      if (outer == lines.end()) continue;
      const Task& t = lines.at(inner.offset);
      outer->second.resolved_host = t.resolved_host;
      outer->second.resolved_pid = t.resolved_pid;
    }
    for (size_t i : idx) {
      Evidence& ev = r.evidence[i];
      const Task& t = lines.at(ev.offset);
      // A prefix's host is the line's own (AttachTracebackLines may have
      // given a bare one its exception line's, the deepest task's).
      if (!ev.host.empty() && ev.host != t.host && ev.host != t.resolved_host) continue;
      ev.host = t.resolved_host;
      if (t.resolved_pid && (ev.pid < 0 || ev.pid == t.pid)) ev.pid = *t.resolved_pid;
    }
  }
}

// Kernel monotonic stamps: anchored to wall time from the same source, else
// from another source of the same host.
void AnchorMonotonic(ScanResult& r) {
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
}

// Year-less stamps (syslog, glog): the year that puts them nearest the job's
// dated evidence, which handles a December-to-January run.
void PlaceYears(ScanResult& r) {
  std::vector<int64_t> dated;
  for (const Evidence& ev : r.evidence) {
    if (ev.time_us != kNoTime && ev.time_source == TimeSource::kParsed) dated.push_back(ev.time_us);
  }
  for (const SourceSummary& s : r.sources) {
    if (s.dated_us != kNoTime) dated.push_back(s.dated_us);
  }
  if (dated.empty()) return;
  std::nth_element(dated.begin(), dated.begin() + dated.size() / 2, dated.end());
  const int64_t ref = dated[dated.size() / 2];
  for (Evidence& ev : r.evidence) {
    if ((ev.time_source == TimeSource::kInferredYear || ev.year_inferred) && ev.time_us != kNoTime) {
      ev.time_us = internal::NearestYear(ev.time_us, ref);
    }
  }
  for (SourceSummary& s : r.sources) {
    if (s.first_time_us != kNoTime && s.first_time_inferred) {
      s.first_time_us = internal::NearestYear(s.first_time_us, ref);
    }
    if (s.last_time_us != kNoTime && s.last_time_inferred) s.last_time_us = internal::NearestYear(s.last_time_us, ref);
  }
}

}  // namespace

namespace internal {

int64_t NearestYearByTimegm(int64_t us, int64_t ref) {
  // The broken-down time once (it was taken again for every shift: half
  // the cost of a many-file archive's year placement).
  const time_t t = static_cast<time_t>(us / 1000000);
  const int64_t frac = us % 1000000;
  struct tm broken;
  gmtime_r(&t, &broken);
  auto shift_years = [&](int k) {
    struct tm tm = broken;
    tm.tm_year += k;
    return static_cast<int64_t>(timegm(&tm)) * 1000000 + frac;
  };
  int64_t best = us;
  for (int k = -3; k <= 3; ++k) {
    int64_t cand = shift_years(k);
    if (std::llabs(cand - ref) < std::llabs(best - ref)) best = cand;
  }
  return best;
}

int64_t NearestYear(int64_t us, int64_t ref) {
  // timegm and gmtime_r took ~5 k instructions a call, 90% of a many-file
  // archive's FinalizeTimes, serial after the scan (bench/README.md
  // "eleventh pass").
  constexpr int64_t kYear10000 = 253402300800;  // seconds at 10000-01-01
  const int64_t secs = us / 1000000;
  if (us < 0 || secs >= kYear10000) return NearestYearByTimegm(us, ref);
  // A year's shift moves a time by 365 days at least (29 February to
  // 1 March of a common year included), and the shifts grow with k: within
  // 182 days of `ref`, every other year is further than 183 days away and
  // the time stays. The civil arithmetic below was ~650 instructions a
  // stamp, 11 M of a many-file archive's serial FinalizeTimes.
  constexpr int64_t kHalfYearUs = int64_t{182} * 86400 * 1000000;
  if (us - ref <= kHalfYearUs && ref - us <= kHalfYearUs) return us;
  const int64_t frac = us % 1000000;
  const int64_t days = secs / 86400, sod = secs % 86400;
  const CivilDate c = CivilFromDays(days);
  int64_t best = us;
  for (int k = -3; k <= 3; ++k) {
    const int64_t cand = (DaysFromCivil(c.year + k, c.month, c.day) * 86400 + sod) * 1000000 + frac;
    if (std::llabs(cand - ref) < std::llabs(best - ref)) best = cand;
  }
  return best;
}

}  // namespace internal

void FinalizeTimes(ScanResult& r) {
  AnchorMonotonic(r);
  AttachTracebackLines(r);
  TakeInnermostTaskHeaders(r);
  PlaceYears(r);
}

}  // namespace faultline
