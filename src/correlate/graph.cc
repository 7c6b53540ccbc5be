// Causal graph passes. Active evidence of one rule forms clusters (a gap of
// more than cluster_gap_us starts a new one); each cluster then gets its best
// cause among the others: an explains edge of the rules within its lag
// window, or a lower layer's initiating cluster near in time and place.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>

#include "correlate/state.h"
#include "util/strings.h"

namespace faultline::internal {

bool IsNotice(const CorrelationState& st, const Cluster& c) {
  return c.initiating && st.HasRole(c.rule, RuleRole::kTermination);
}

namespace {

void AddToCluster(const CorrelationState& st, size_t i, Cluster& c) {
  const Evidence& ev = st.evs[i];
  c.ev.push_back(i);
  if (st.rs.signal(ev.signal).role == SignalRole::Initiating) c.initiating = true;
  if (ev.rank >= 0) c.ranks.insert(ev.rank);
  if (!ev.host.empty()) c.hosts.insert(ev.host);
}

// A launcher's summary lists every failed worker and marks the one it
// observed first (torchrun's "Failures:" entries, then "Root Cause (first
// observed failure):" and its entry, evidence field `first_failure`). When
// a rule matches several entries of one summary (every rank died of the same
// signal) and time does not order them, the file order would make the first
// entry listed the initiating line, which is the launcher's other failures:
// its own mark is the better order. The cluster's first line moves after
// the first line of the cluster that follows the summary's mark, at the same
// time.
void FirstObservedFirst(const CorrelationState& st, Cluster& c) {
  if (c.ev.size() < 2) return;
  const Evidence& front = st.evs[c.ev.front()];
  const Evidence* mark = nullptr;  // the summary's mark nearest after the first line
  for (size_t h : st.index.first_failure_marks) {  // not every line: once per cluster
    const Evidence& m = st.evs[h];
    if (m.source != front.source || m.offset <= front.offset) continue;
    if (h < st.ignore_reason.size() && !st.ignore_reason[h].empty()) continue;
    if (!mark || m.offset < mark->offset) mark = &m;
  }
  if (!mark) return;
  for (size_t k = 1; k < c.ev.size(); ++k) {
    const Evidence& ev = st.evs[c.ev[k]];
    if (ev.time_us != front.time_us) break;  // time order decides past here
    if (ev.source != front.source || ev.offset <= mark->offset) continue;
    std::rotate(c.ev.begin(), c.ev.begin() + static_cast<std::ptrdiff_t>(k),
                c.ev.begin() + static_cast<std::ptrdiff_t>(k) + 1);
    return;
  }
}

// Clusters of one rule's evidence `idxs`, time order.
void ClusterRule(CorrelationState& st, uint32_t rule, std::vector<size_t>& idxs) {
  std::stable_sort(idxs.begin(), idxs.end(), [&](size_t a, size_t b) {
    int64_t ta = st.evs[a].time_us, tb = st.evs[b].time_us;
    if ((ta == kNoTime) != (tb == kNoTime)) return tb == kNoTime;  // timed first
    return ta < tb;
  });
  std::vector<Cluster>& clusters = st.clusters;
  size_t cur = clusters.size();  // none yet
  size_t first_cluster = clusters.size();
  for (size_t i : idxs) {
    int64_t t = st.evs[i].time_us;
    bool have = cur < clusters.size();
    if (t == kNoTime && have && clusters[cur].first != kNoTime) {
      // Untimed lines of a rule that also has timed ones (a kubectl
      // describe block, nvidia-smi output) join its first cluster rather
      // than make an incident of their own.
      AddToCluster(st, i, clusters[first_cluster]);
      continue;
    }
    bool split = !have || (t == kNoTime) != (clusters[cur].first == kNoTime) ||
                 (t != kNoTime && t - clusters[cur].last > st.opts.cluster_gap_us);
    if (split) {
      cur = clusters.size();
      Cluster& c = clusters.emplace_back();
      c.rule = rule;
      c.layer = st.rs.rule(rule)->layer();
      c.first = t;
    }
    clusters[cur].last = t;
    AddToCluster(st, i, clusters[cur]);
  }
  for (size_t k = first_cluster; k < clusters.size(); ++k) FirstObservedFirst(st, clusters[k]);
}

// How far a notice reaches: from a little before it (clock skew between the
// host that got the notice and the ranks that report the loss) to the
// slowest collective timeout after the machine is gone.
constexpr double kNoticeMinLagS = -90;
constexpr double kNoticeMaxLagS = 3600;

// Whether notice `a` explains `b`: anything above the kernel layer that
// starts within its reach. Hardware, driver and kernel events are causes of
// their own, and another notice is its own story. A deadline (a time limit
// the job knew of) reaches only the rules it declares: how the job met it
// (no SIGTERM handler) is the job's own story.
bool NoticeExplains(const CorrelationState& st, const Cluster& a, const Cluster& b,
                    std::string* why) {
  if (!IsNotice(st, a) || IsNotice(st, b) || b.layer <= RuleLayer::Kernel) return false;
  double min_lag, max_lag;
  if (st.HasRole(a.rule, RuleRole::kDeadline) && !st.Edge(a.rule, b.rule, &min_lag, &max_lag)) {
    return false;
  }
  if (a.first == kNoTime || b.first == kNoTime) return false;
  double lag = static_cast<double>(b.first - a.first) / 1e6;
  if (lag < kNoticeMinLagS || lag > kNoticeMaxLagS) return false;
  *why = StrCat("termination notice ", st.rs.rule(a.rule)->id()->str(), " -> ",
                st.rs.rule(b.rule)->id()->str(), ", lag ", static_cast<int64_t>(std::round(lag)),
                " s");
  return true;
}

// Initiating lines first, then earlier, then the lower layer. Of two
// initiating causes of one layer that no line dates, the one placed on a
// host (a kernel's kill on its node) over one that names none (a pod
// status table): the order of the rules in the ruleset settles nothing.
bool BetterCause(const Cluster& a, const Cluster& b) {
  if (a.initiating != b.initiating) return a.initiating;
  if (a.first != b.first) {
    if (a.first == kNoTime) return false;
    if (b.first == kNoTime) return true;
    if (std::llabs(a.first - b.first) > 60 * kSecond) return a.first < b.first;
  }
  if (a.layer != b.layer) return a.layer < b.layer;
  if (a.initiating && a.first == kNoTime && a.hosts.empty() != b.hosts.empty()) return b.hosts.empty();
  return a.first < b.first;
}

// Whether launcher summary `a` (a role:summary rule: DeepSpeed's "exits with
// return code = N", torchrun's ChildFailedError) was printed after a line of
// `b` in a file they share, with no time on either to order them otherwise:
// the summary reports a worker's exit, and a line the file shows above it
// (the worker's own error: a store it could not reach) came before that exit,
// so it is not the exit's consequence (a store lost after node 0's failure).
bool SummaryAfterItsLine(const CorrelationState& st, const Cluster& a, const Cluster& b) {
  if (!st.HasRole(a.rule, RuleRole::kSummary) || (a.first != kNoTime && b.first != kNoTime)) return false;
  for (size_t j : b.ev) {
    const Evidence& y = st.evs[j];
    bool below = false, above = false;
    for (size_t i : a.ev) {
      const Evidence& x = st.evs[i];
      if (x.source != y.source) continue;
      (x.offset > y.offset ? below : above) = true;
    }
    if (below && !above) return true;
  }
  return false;
}

// Whether cluster `a` can explain `b`, and how (for the explanation).
bool CanExplain(const CorrelationState& st, const Cluster& a, const Cluster& b, std::string* why) {
  if (NoticeExplains(st, a, b, why)) return true;
  double min_lag, max_lag;
  bool explicit_edge = st.Edge(a.rule, b.rule, &min_lag, &max_lag);
  if (explicit_edge && SummaryAfterItsLine(st, a, b)) return false;
  // The other way round: summary `b` reports the exit of the worker whose
  // error `a` is, and is its collateral (as it is of a fallback line that
  // shows the worker's own error).
  double back_lo, back_hi;
  if (st.Edge(b.rule, a.rule, &back_lo, &back_hi) && SummaryAfterItsLine(st, b, a)) {
    *why = StrCat(st.rs.rule(b.rule)->id()->str(), " reports the exit after ",
                  st.rs.rule(a.rule)->id()->str(), "'s line above it in the same file, with no time to order them");
    return true;
  }
  bool ok = false;
  if (explicit_edge) {
    std::string edge =
        StrCat("edge ", st.rs.rule(a.rule)->id()->str(), " -> ", st.rs.rule(b.rule)->id()->str());
    if (a.first == kNoTime || b.first == kNoTime) {
      ok = a.layer <= b.layer;
      *why = StrCat(edge, " (times unknown)");
    } else {
      double lag = static_cast<double>(b.first - a.first) / 1e6;
      ok = lag >= min_lag && lag <= max_lag;
      *why = StrCat(edge, ", lag ", static_cast<int64_t>(std::round(lag)), " s within [",
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
    *why = StrCat("layer ", LayerName(a.layer), " below ", LayerName(b.layer), ", lag ",
                  static_cast<int64_t>(std::round(lag)), " s");
  }
  if (!ok) return false;
  // No cycles: a cause is not itself explained by its effect's rule first.
  // An explicit edge also decides a tie (neither cause is better: both
  // seen, untimed, on one layer) that no edge back contradicts.
  if (BetterCause(a, b) || (explicit_edge && a.layer < b.layer)) return true;
  double back_min, back_max;
  return explicit_edge && a.initiating && b.initiating && !BetterCause(b, a) &&
         !st.Edge(b.rule, a.rule, &back_min, &back_max);
}

}  // namespace

void BuildClusters(CorrelationState& st) {
  std::map<uint32_t, std::vector<size_t>> by_rule;
  for (size_t i = 0; i < st.evs.size(); ++i) {
    // Fallback lines make an incident only in ChooseFallback.
    if (st.active[i] && !st.HasRole(st.evs[i].rule, RuleRole::kFallback)) {
      by_rule[st.evs[i].rule].push_back(i);
    }
  }
  for (auto& [rule, idxs] : by_rule) ClusterRule(st, rule, idxs);
}

void LinkCauses(CorrelationState& st) {
  std::vector<Cluster>& clusters = st.clusters;
  for (size_t bi = 0; bi < clusters.size(); ++bi) {
    Cluster& b = clusters[bi];
    int best = -1;
    std::string how;
    for (size_t ai = 0; ai < clusters.size(); ++ai) {
      const Cluster& a = clusters[ai];
      if (ai == bi || a.rule == b.rule) continue;
      std::string why;
      if (!CanExplain(st, a, b, &why)) continue;
      // A notice that reaches b outranks the errors it caused (they are
      // the network and collective failures of a machine being taken
      // away), unless a lower-layer failure came clearly before it.
      bool better;
      if (best < 0) {
        better = true;
      } else if (IsNotice(st, a) != IsNotice(st, clusters[best])) {
        const Cluster& other = IsNotice(st, a) ? clusters[best] : a;
        const Cluster& notice = IsNotice(st, a) ? a : clusters[best];
        bool other_first = other.first != kNoTime && notice.first != kNoTime &&
                           other.layer <= RuleLayer::Kernel &&
                           notice.first - other.first > 60 * kSecond;
        better = IsNotice(st, a) ? !other_first : other_first;
      } else {
        better = BetterCause(a, clusters[best]);
      }
      if (better) {
        best = static_cast<int>(ai);
        how = std::move(why);
      }
    }
    b.parent = best;
    b.parent_how = std::move(how);
  }
}

}  // namespace faultline::internal
