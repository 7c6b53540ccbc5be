// The attempts stage (attempts.h): which attempt each evidence record
// belongs to, one correlation per attempt, and the comparison of the
// attempts' failures. Three ways to tell attempts apart, tried in order:
//   1. prior bundles and restart directories: a source belongs to the
//      attempt its name says; a source naming none (a node's dmesg across
//      the runs) is split by time between the attempts of the session;
//   2. restart lines (rules with role:attempt-start) when no name says:
//      each starts an attempt at its time (the lines several agents or
//      slurmctld write for one restart within a minute are one boundary);
//      in logs with no time at all, where it stands in its own file;
//   3. otherwise the job ran once: one correlation, no attempts listed.
#include "correlate/attempts.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "attribution/lex.h"
#include "correlate/correlate.h"
#include "correlate/state.h"
#include "util/strings.h"

namespace faultline {
namespace internal {
Diagnosis CorrelateOnce(const Ruleset& rs, ScanResult& scan, const CorrelateOptions& opts);
}  // namespace internal

namespace {

using internal::kSecond;

constexpr std::string_view kBundleOpen = "<prior bundle ";
// Restart lines of one restart (each node's agent, slurmctld's several
// lines for one requeue) fall within this of the first.
constexpr int64_t kBoundaryMergeUs = 60 * kSecond;

// The attempt of each evidence record and the attempts, in time order.
struct Plan {
  std::vector<Attempt> attempts;
  std::vector<uint32_t> of_evidence;
  // Per source, the attempt its name puts it in (restart directories,
  // prior bundles); -1 when its lines are placed one by one.
  std::vector<int64_t> of_source;
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

// Digits at `pos` after an optional single separator; -1 when none, or when
// they run into a letter (attempt_2x is not attempt 2).
int64_t NumberAt(std::string_view s, size_t pos) {
  if (pos < s.size() && (s[pos] == '_' || s[pos] == '-' || s[pos] == '.')) ++pos;
  size_t end = pos;
  while (end < s.size() && IsDigit(s[end]) && end - pos < 9) ++end;
  if (end == pos || (end < s.size() && (IsDigit(s[end]) || IsAlpha(s[end])))) return -1;
  int64_t v = -1;
  return ParseInt64(s.substr(pos, end - pos), &v) ? v : -1;
}

using attribution_internal::AtIgnoreCase;
using attribution_internal::ToLower;

// Where `kw` starts in `s` at or after `from`, in any case; npos when
// nowhere. Paths are read in place: a lowered copy of every component of
// every source was most of what the attempts stage cost on a many-file
// archive.
size_t FindAnyCase(std::string_view s, std::string_view kw, size_t from) {
  for (size_t at = from; at + kw.size() <= s.size(); ++at) {
    if (AtIgnoreCase(s, at, kw)) return at;
  }
  return std::string_view::npos;
}

// The attempt number one path component names, -1 when none.
int64_t NumberOfComponent(std::string_view comp) {
  // Most names hold no keyword's first two letters ("at", "re", "jo").
  bool maybe = false;
  for (size_t i = 0; i + 1 < comp.size() && !maybe; ++i) {
    const char a = ToLower(comp[i]), b = ToLower(comp[i + 1]);
    maybe = (a == 'a' && b == 't') || (a == 'r' && b == 'e') || (a == 'j' && b == 'o');
  }
  if (!maybe) return -1;
  constexpr size_t npos = std::string_view::npos;
  for (std::string_view kw : {"attempt", "restart", "retry", "requeue"}) {
    for (size_t at = FindAnyCase(comp, kw, 0); at != npos; at = FindAnyCase(comp, kw, at + 1)) {
      if (at > 0 && IsAlpha(comp[at - 1])) continue;
      size_t after = at + kw.size();
      if (after < comp.size() && ToLower(comp[after]) == 's') ++after;  // restarts_2
      if (int64_t n = NumberAt(comp, after); n >= 0) return n;
    }
  }
  // A job id and a restart count: job_88231.r2, job-88231-r2.
  for (size_t at = FindAnyCase(comp, "job", 0); at != npos; at = FindAnyCase(comp, "job", at + 1)) {
    size_t p = at + 3;
    if (p < comp.size() && (comp[p] == '_' || comp[p] == '-')) ++p;
    size_t digits = p;
    while (p < comp.size() && IsDigit(comp[p])) ++p;
    if (p == digits || p + 1 >= comp.size() || (comp[p] != '.' && comp[p] != '_' && comp[p] != '-')) continue;
    if (ToLower(comp[p + 1]) != 'r') continue;
    if (int64_t n = NumberAt(comp, p + 2); n >= 0) return n;
  }
  return -1;
}

// The K of a source renamed by PriorBundleSourceName, 0 for the session's own.
size_t BundleOfSource(std::string_view name) {
  if (name.substr(0, kBundleOpen.size()) != kBundleOpen) return 0;
  size_t close = name.find(">/", kBundleOpen.size());
  int64_t k = 0;
  if (close == std::string_view::npos ||
      !ParseInt64(name.substr(kBundleOpen.size(), close - kBundleOpen.size()), &k) || k <= 0)
    return 0;
  return static_cast<size_t>(k);
}

void Widen(int64_t t, int64_t& lo, int64_t& hi) {
  if (t == kNoTime) return;
  if (lo == kNoTime || t < lo) lo = t;
  if (hi == kNoTime || t > hi) hi = t;
}

// A group of sources that one name puts in one attempt.
struct SourceGroup {
  size_t bundle = 0;       // K, 0 for the session's own
  int64_t number = -1;     // the directory's attempt number
  std::string label;
  int64_t start = kNoTime, end = kNoTime;
};

// Stage 1: groups by name. Empty when fewer than two attempts show.
std::vector<SourceGroup> GroupSources(const ScanResult& scan, std::vector<int>& group_of_source) {
  std::map<std::pair<size_t, int64_t>, size_t> index;
  std::vector<SourceGroup> groups;
  group_of_source.assign(scan.sources.size(), -1);
  size_t own_numbered = 0;
  bool any_bundle = false;
  internal::SourceAttempts attempt_of;
  for (size_t s = 0; s < scan.sources.size(); ++s) {
    const SourceSummary& src = scan.sources[s];
    SourceGroup g;
    g.bundle = BundleOfSource(src.name);
    std::optional<PathAttempt> pa = g.bundle ? std::nullopt : attempt_of.Of(src.name);
    if (!g.bundle && !pa) continue;
    g.number = pa ? pa->number : 0;
    g.label = pa ? pa->label : StrCat("prior bundle ", g.bundle);
    auto [it, fresh] = index.emplace(std::make_pair(g.bundle, g.number), groups.size());
    if (fresh) {
      groups.push_back(g);
      if (g.bundle) {
        any_bundle = true;
      } else {
        ++own_numbered;
      }
    }
    group_of_source[s] = static_cast<int>(it->second);
    Widen(src.first_time_us, groups[it->second].start, groups[it->second].end);
    Widen(src.last_time_us, groups[it->second].start, groups[it->second].end);
  }
  if (!any_bundle && own_numbered < 2) return {};
  if (groups.size() < 2 && std::all_of(group_of_source.begin(), group_of_source.end(), [](int g) { return g >= 0; }))
    return {};  // one prior bundle and nothing of the session's own: one run
  return groups;
}

// The attempts of stage 1 in order: bundles as given, then the session's
// directories by start time (then number); the session's unnamed sources
// make an attempt of their own only when no directory does.
Plan PlanFromGroups(const ScanResult& scan, std::vector<SourceGroup> groups, std::vector<int> group_of_source) {
  bool own_named = std::any_of(groups.begin(), groups.end(), [](const SourceGroup& g) { return !g.bundle; });
  bool unnamed = std::any_of(group_of_source.begin(), group_of_source.end(), [](int g) { return g < 0; });
  if (!own_named && unnamed) {
    SourceGroup own;
    own.label = "this session";
    for (size_t s = 0; s < scan.sources.size(); ++s) {
      if (group_of_source[s] >= 0) continue;
      group_of_source[s] = static_cast<int>(groups.size());
      Widen(scan.sources[s].first_time_us, own.start, own.end);
      Widen(scan.sources[s].last_time_us, own.start, own.end);
    }
    groups.push_back(own);
  }
  std::vector<size_t> order(groups.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const SourceGroup &x = groups[a], &y = groups[b];
    if ((x.bundle == 0) != (y.bundle == 0)) return x.bundle != 0;
    if (x.bundle) return x.bundle < y.bundle;
    if (x.start != y.start && x.start != kNoTime && y.start != kNoTime) return x.start < y.start;
    return x.number < y.number;
  });
  std::vector<uint32_t> rank_of(groups.size());
  Plan plan;
  for (size_t i = 0; i < order.size(); ++i) {
    rank_of[order[i]] = static_cast<uint32_t>(i);
    const SourceGroup& g = groups[order[i]];
    Attempt a;
    a.index = static_cast<uint32_t>(i);
    a.label = g.label;
    a.recognised = g.bundle ? "bundle" : own_named ? "directory" : "session";
    a.start_us = g.start;
    a.end_us = g.end;
    plan.attempts.push_back(a);
  }
  plan.of_source.assign(scan.sources.size(), -1);
  for (size_t s = 0; s < scan.sources.size(); ++s) {
    if (group_of_source[s] >= 0) plan.of_source[s] = rank_of[group_of_source[s]];
  }
  // Unnamed sources of the session: the last of its attempts started by
  // the line's time; an undated line goes with the line before it.
  std::vector<uint32_t> own;
  for (const Attempt& a : plan.attempts) {
    if (a.recognised != "bundle") own.push_back(a.index);
  }
  plan.of_evidence.reserve(scan.evidence.size());
  std::vector<int64_t> last_of_source(scan.sources.size(), -1);
  for (const Evidence& ev : scan.evidence) {
    // Every source is in a group unless the session has attempts of its own.
    uint32_t a = own.empty() ? 0 : own.front();
    if (int g = group_of_source[ev.source]; g >= 0) {
      a = rank_of[g];
    } else if (ev.time_us != kNoTime) {
      for (uint32_t o : own) {
        if (plan.attempts[o].start_us != kNoTime && plan.attempts[o].start_us <= ev.time_us) a = o;
      }
    } else if (last_of_source[ev.source] >= 0) {
      a = static_cast<uint32_t>(last_of_source[ev.source]);
    }
    last_of_source[ev.source] = a;
    plan.of_evidence.push_back(a);
  }
  return plan;
}

// A restart line and the job it names (Slurm), for stage 2.
struct Marker {
  int64_t time_us;
  size_t ev;
  std::string recognised;
};

// Stage 2: restart lines. A slurmctld log holds every job's requeues: only
// the job most of them name counts.
std::vector<Marker> RestartMarkers(const Ruleset& rs, const ScanResult& scan) {
  std::vector<Marker> out;
  std::map<std::string, size_t> per_job;
  // Each rule's role read once, not from its tags at every line.
  std::vector<bool> starts(rs.rule_count());
  for (size_t r = 0; r < starts.size(); ++r) starts[r] = RuleHasRole(*rs.rule(r), RuleRole::kAttemptStart);
  for (size_t i = 0; i < scan.evidence.size(); ++i) {
    const Evidence& ev = scan.evidence[i];
    // A restart count (scontrol's Restarts=N) marks no moment.
    if (!starts[ev.rule] || ev.Field("restarts")) continue;
    const std::string* job = ev.Field("jobid");
    // sacct's REQUEUED row: the run ended (and the next was queued) at its End.
    int64_t t = ev.time_us;
    if (const std::string* end = ev.Field("end")) t = ParseIso8601(*end, TimeContext{}).value_or(t);
    out.push_back({t, i, job ? "slurm-requeue" : "elastic-restart"});
    if (job) ++per_job[*job];
  }
  if (per_job.size() > 1) {
    auto top = std::max_element(per_job.begin(), per_job.end(),
                                [](const auto& a, const auto& b) { return a.second < b.second; });
    std::erase_if(out, [&](const Marker& m) {
      const std::string* job = scan.evidence[m.ev].Field("jobid");
      return job && *job != top->first;
    });
  }
  std::stable_sort(out.begin(), out.end(), [](const Marker& a, const Marker& b) { return a.time_us < b.time_us; });
  return out;
}

// Where each attempt starts for the sources that are not the job's own (a
// scheduler's log, a node's kernel log): at the job's first line after the
// restart line. What they say between the two (slurmctld setting the failed
// node DOWN) is the aftermath of the attempt that ended. The job's own
// sources hold lines of ranks.
std::vector<int64_t> OtherSourceStarts(const ScanResult& scan, const std::vector<int64_t>& starts,
                                       std::vector<bool>& job_source) {
  job_source.assign(scan.sources.size(), false);
  for (size_t s = 0; s < scan.sources.size(); ++s) job_source[s] = scan.sources[s].rank >= 0;
  for (const Evidence& ev : scan.evidence) {
    if (ev.rank >= 0) job_source[ev.source] = true;
  }
  std::vector<int64_t> out;
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t limit = k + 1 < starts.size() ? starts[k + 1] : std::numeric_limits<int64_t>::max();
    int64_t first = limit;
    for (const Evidence& ev : scan.evidence) {
      if (job_source[ev.source] && ev.time_us != kNoTime && ev.time_us >= starts[k]) {
        first = std::min(first, ev.time_us);
      }
    }
    out.push_back(first == std::numeric_limits<int64_t>::max() ? starts[k] : first);
  }
  return out;
}

Plan PlanFromMarkers(const ScanResult& scan, const std::vector<Marker>& markers) {
  Plan plan;
  std::vector<int64_t> starts;  // of attempts 1..n
  std::vector<std::set<uint32_t>> sources_of;
  std::map<std::string, int> kind_count;
  plan.attempts.push_back({});
  for (const Marker& m : markers) {
    // slurmctld writes several lines for one requeue; each node's agent
    // one line for one restart, and one agent a line for each of its own.
    uint32_t src = scan.evidence[m.ev].source;
    bool same = !starts.empty() && m.time_us - starts.back() <= kBoundaryMergeUs &&
                (m.recognised == "slurm-requeue" || !sources_of.back().count(src));
    if (same) {
      sources_of.back().insert(src);
      continue;
    }
    starts.push_back(m.time_us);
    sources_of.push_back({src});
    Attempt a;
    a.index = static_cast<uint32_t>(plan.attempts.size());
    a.recognised = m.recognised;
    a.label = StrCat(m.recognised == "slurm-requeue" ? "requeue " : "restart ", ++kind_count[m.recognised]);
    a.start_us = m.time_us;
    plan.attempts.push_back(a);
  }
  plan.attempts[0].label = "first run";
  plan.attempts[0].recognised = plan.attempts[1].recognised;
  std::vector<bool> job_source;
  const std::vector<int64_t> other_starts = OtherSourceStarts(scan, starts, job_source);
  std::vector<int64_t> last_of_source(scan.sources.size(), -1);
  for (const Evidence& ev : scan.evidence) {
    uint32_t a = 0;
    if (ev.time_us != kNoTime) {
      const std::vector<int64_t>& st = job_source[ev.source] ? starts : other_starts;
      a = static_cast<uint32_t>(std::upper_bound(st.begin(), st.end(), ev.time_us) - st.begin());
    } else if (last_of_source[ev.source] >= 0) {
      a = static_cast<uint32_t>(last_of_source[ev.source]);
    }
    last_of_source[ev.source] = a;
    plan.of_evidence.push_back(a);
    Widen(ev.time_us, plan.attempts[a].start_us, plan.attempts[a].end_us);
  }
  return plan;
}

// Restart lines in logs that carry no time at all (an older torchrun's
// "INFO:torch.distributed.elastic...:[default] Worker group FAILED. ...")
// split their own source where they stand: the k-th restart line of each
// source is the job's k-th restart (every node's agent logs each restart).
// Other sources cannot be placed: they go with the last attempt.
Plan PlanFromUntimedMarkers(const ScanResult& scan, const std::vector<Marker>& markers) {
  std::map<uint32_t, std::vector<uint64_t>> offsets;  // source -> marker offsets, in order
  size_t restarts = 0;
  for (const Marker& m : markers) {
    auto& v = offsets[scan.evidence[m.ev].source];
    v.push_back(scan.evidence[m.ev].offset);
    restarts = std::max(restarts, v.size());
  }
  Plan plan;
  for (size_t k = 0; k <= restarts; ++k) {
    Attempt a;
    a.index = static_cast<uint32_t>(k);
    a.label = k ? StrCat("restart ", k) : "first run";
    a.recognised = markers.front().recognised;
    plan.attempts.push_back(a);
  }
  for (const Evidence& ev : scan.evidence) {
    auto it = offsets.find(ev.source);
    uint32_t a = static_cast<uint32_t>(restarts);
    if (it != offsets.end()) {
      a = static_cast<uint32_t>(std::upper_bound(it->second.begin(), it->second.end(), ev.offset) -
                                it->second.begin());
    }
    plan.of_evidence.push_back(a);
  }
  return plan;
}

// A crash loop restarts hundreds of times: the newest attempts are kept
// apart, the earliest ones read as one ("attempts 1-N"), so the
// correlations stay bounded.
void CapAttempts(Plan& plan) {
  if (plan.attempts.size() <= kMaxAttempts) return;
  const uint32_t fold = static_cast<uint32_t>(plan.attempts.size() - kMaxAttempts);  // into attempt 0
  Attempt& first = plan.attempts[0];
  first.label = StrCat("attempts 1-", fold + 1);
  first.end_us = plan.attempts[fold].end_us;
  plan.attempts.erase(plan.attempts.begin() + 1, plan.attempts.begin() + fold + 1);
  for (uint32_t k = 0; k < plan.attempts.size(); ++k) plan.attempts[k].index = k;
  for (uint32_t& a : plan.of_evidence) a = a <= fold ? 0 : a - fold;
}

Plan MakePlan(const Ruleset& rs, const ScanResult& scan) {
  std::vector<int> group_of_source;
  std::vector<SourceGroup> groups = GroupSources(scan, group_of_source);
  std::vector<Marker> markers = groups.empty() ? RestartMarkers(rs, scan) : std::vector<Marker>{};
  std::vector<Marker> timed;
  std::copy_if(markers.begin(), markers.end(), std::back_inserter(timed),
               [](const Marker& m) { return m.time_us != kNoTime; });
  Plan plan = !groups.empty()  ? PlanFromGroups(scan, std::move(groups), std::move(group_of_source))
              : !timed.empty() ? PlanFromMarkers(scan, timed)
              : !markers.empty() ? PlanFromUntimedMarkers(scan, markers)
                                 : Plan{};
  CapAttempts(plan);
  return plan;
}

// The step each incident's rank had reached: its last progress line, or
// metric point (the scan keeps only each rank's last progress line; a metric
// line such as a loss states its step too), up to the incident (any rank's
// when the incident names none).
void FillSteps(const Ruleset& rs, const ScanResult& scan, Diagnosis& d) {
  struct Point {
    int64_t rank, time_us, step;
  };
  std::vector<Point> points;
  for (const Evidence& ev : scan.evidence) {
    int64_t step = -1;
    const std::string* s = ev.Field("run_step");  // (epoch, batch) as one step
    if (!s) s = ev.Field("step");
    if (rs.signal(ev.signal).role == SignalRole::Progress && s && ParseInt64(*s, &step))
      points.push_back({ev.rank, ev.time_us, step});
  }
  for (const auto& [series, ps] : scan.metrics) {
    for (const MetricPoint& p : ps) {
      if (p.step >= 0) points.push_back({p.rank, p.time_us, p.step});
    }
  }
  std::map<int64_t, std::vector<Point>> by_rank;
  for (const Point& p : points) by_rank[p.rank].push_back(p);
  for (Incident& inc : d.incidents) {
    int64_t rank = inc.rank >= 0 ? inc.rank : inc.suspects.size() == 1 ? inc.suspects[0] : -1;
    auto it = by_rank.find(rank);
    if (rank >= 0 && it == by_rank.end()) continue;
    for (const Point& p : rank >= 0 ? it->second : points) {
      if (inc.time_us != kNoTime && p.time_us != kNoTime && p.time_us > inc.time_us) continue;
      inc.step = std::max(inc.step, p.step);
    }
  }
}

// The attempt running at `t`: the last one started by then (the last one
// for an undated point).
uint32_t AttemptAt(const Plan& plan, int64_t t) {
  uint32_t a = t == kNoTime ? static_cast<uint32_t>(plan.attempts.size() - 1) : 0;
  for (const Attempt& at : plan.attempts) {
    if (t != kNoTime && at.start_us != kNoTime && at.start_us <= t) a = at.index;
  }
  return a;
}

// One attempt's evidence (and metric points, by time) out of the whole.
ScanResult SubScan(const ScanResult& frame, const std::vector<Evidence>& all,
                   const std::map<std::string, std::vector<MetricPoint>>& metrics, const Plan& plan, uint32_t a,
                   std::vector<size_t>& picked) {
  ScanResult sub = frame;  // the frame holds neither evidence nor metrics
  for (size_t i = 0; i < all.size(); ++i) {
    if (plan.of_evidence[i] != a) continue;
    sub.evidence.push_back(all[i]);
    picked.push_back(i);
  }
  // Flight Recorder dumps: with the attempt their source's name puts them
  // in; dumps placed by nothing (they carry no time) go with the last one,
  // as undated metric points do.
  const uint32_t last = static_cast<uint32_t>(plan.attempts.size() - 1);
  std::map<std::string_view, int64_t> of_name;
  for (size_t s = 0; s < plan.of_source.size() && s < frame.sources.size(); ++s) {
    of_name.emplace(frame.sources[s].name, plan.of_source[s]);
  }
  std::erase_if(sub.flight_recorder, [&](const flightrec::FrDump& d) {
    auto it = of_name.find(d.source);
    int64_t of = it == of_name.end() ? -1 : it->second;
    return (of >= 0 ? static_cast<uint32_t>(of) : last) != a;
  });
  for (const auto& [series, points] : metrics) {
    std::vector<MetricPoint> mine;
    std::copy_if(points.begin(), points.end(), std::back_inserter(mine),
                 [&](const MetricPoint& p) { return AttemptAt(plan, p.time_us) == a; });
    if (!mine.empty()) sub.metrics.emplace(series, std::move(mine));
  }
  return sub;
}

}  // namespace

std::string PriorBundleSourceName(size_t k, std::string_view name) {
  return StrCat(kBundleOpen, k, ">/", name);
}

std::optional<PathAttempt> AttemptOfPath(std::string_view path) {
  if (BundleOfSource(path)) return std::nullopt;
  size_t end = path.size();
  while (end > 0) {
    size_t slash = path.rfind('/', end - 1);
    size_t begin = slash == std::string_view::npos ? 0 : slash + 1;
    std::string_view comp = path.substr(begin, end - begin);
    if (int64_t n = NumberOfComponent(comp); n >= 0) return PathAttempt{std::string(comp), n};
    if (slash == std::string_view::npos) break;
    end = slash;
  }
  return std::nullopt;
}

namespace internal {

std::optional<PathAttempt> SourceAttempts::Of(std::string_view path) {
  if (BundleOfSource(path)) return std::nullopt;
  const size_t slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (int64_t n = NumberOfComponent(base); n >= 0) return PathAttempt{std::string(base), n};
  if (slash == std::string_view::npos) return std::nullopt;
  std::string_view dir = path.substr(0, slash);
  if (!have_dir_ || dir_ != dir) {
    dir_.assign(dir);
    have_dir_ = true;
    dir_attempt_ = AttemptOfPath(dir);
  }
  return dir_attempt_;
}

// The scheduler counts more restarts (scontrol's Restarts=N) than the input
// holds runs: the earlier runs are what would show a recurrence.
void NoteMissingRuns(const Ruleset& rs, const ScanResult& scan, Diagnosis& d) {
  int64_t restarts = 0;
  for (const Evidence& ev : scan.evidence) {
    int64_t n = 0;
    const std::string* r = ev.Field("restarts");
    if (r && ParseInt64(*r, &n) && RuleHasRole(*rs.rule(ev.rule), RuleRole::kAttemptStart)) {
      restarts = std::max(restarts, n);
    }
  }
  const size_t seen = std::max<size_t>(1, d.attempts.size());
  if (d.incidents.empty() || restarts + 1 <= static_cast<int64_t>(seen)) return;
  d.incidents.front().missing_facts.push_back(
      StrCat("the scheduler counts ", restarts, " restart(s) (Restarts=", restarts, ") but the input holds ", seen,
             " run(s): the earlier runs' logs, or their bundles (scan --bundle, diagnose --prior-bundle), would show "
             "whether this failure recurs"));
}

// attempts_merge.cc: the attempts' diagnoses as one, compared.
Diagnosis MergeAttempts(const Ruleset& rs, std::vector<Attempt> attempts, std::vector<Diagnosis> per_attempt,
                        const std::vector<std::vector<Evidence>>& evidence_of);

Diagnosis CorrelateAttempts(const Ruleset& rs, ScanResult& scan, const CorrelateOptions& opts) {
  Plan plan = MakePlan(rs, scan);
  if (plan.attempts.size() < 2) {
    Diagnosis d = CorrelateOnce(rs, scan, opts);
    FillSteps(rs, scan, d);
    NoteMissingRuns(rs, scan, d);
    return d;
  }
  std::vector<Evidence> all = std::move(scan.evidence);
  std::map<std::string, std::vector<MetricPoint>> metrics = std::move(scan.metrics);
  scan.evidence.clear();
  scan.metrics.clear();
  std::vector<Diagnosis> per_attempt;
  std::vector<std::vector<Evidence>> evidence_of;
  for (uint32_t a = 0; a < plan.attempts.size(); ++a) {
    std::vector<size_t> picked;
    ScanResult sub = SubScan(scan, all, metrics, plan, a, picked);
    // What the caller states about the job's end is about its last attempt.
    CorrelateOptions o = opts;
    if (a + 1 < plan.attempts.size()) o.job = {};
    per_attempt.push_back(CorrelateOnce(rs, sub, o));
    FillSteps(rs, sub, per_attempt.back());
    // Attribution and clock alignment changed the attempt's records: the
    // report shows them as its incidents do.
    if (sub.evidence.size() == picked.size()) {
      for (size_t k = 0; k < picked.size(); ++k) all[picked[k]] = sub.evidence[k];
    }
    evidence_of.push_back(std::move(sub.evidence));
  }
  scan.evidence = std::move(all);
  scan.metrics = std::move(metrics);
  Diagnosis d = MergeAttempts(rs, std::move(plan.attempts), std::move(per_attempt), evidence_of);
  NoteMissingRuns(rs, scan, d);
  return d;
}

}  // namespace internal
}  // namespace faultline
