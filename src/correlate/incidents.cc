// Incident building pass: one incident per root of the causal graph. The
// root cluster's lines are the initiating evidence, the clusters it explains
// its collateral (merged per rule). A root made only of symptoms gets an
// inferred suspect: the rank most of its lines name, the rank absent from
// an all-rank report, the rank at the lowest collective SeqNum, or the
// first rank to stop progressing. A line that blames a remote peer makes
// the peer the suspect. The rule's fix, verify and missing facts are
// filled in for the incident's place and time.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <string>
#include <utility>

#include "correlate/state.h"
#include "detect/detect.h"
#include "util/strings.h"

namespace faultline::internal {
namespace {

// What one incident is built from, and what its steps decide on the way.
struct Draft {
  const Cluster& rc;
  const fb::Rule& rule;
  const Evidence& first;          // the root's earliest line
  const std::string* peer;        // its `peer` field, when it has one
  uint64_t coll_total = 0;        // collateral lines
  std::vector<std::string> hows;  // how the first few clusters are explained
  double conf = 0;
  int64_t window_start = kNoTime, window_end = kNoTime;
  std::string explanation;
  bool unresolved_peer = false;   // the peer maps to none of the job's hosts
};

// The job host a blamed peer names: through an address a host announced
// (NCCL bootstrap lines), else the peer itself when it is a host the
// archive holds; "" when it is neither.
std::string JobHostOf(const CorrelationState& st, const std::string& peer) {
  if (auto it = st.index.addr_host.find(BareAddress(peer)); it != st.index.addr_host.end())
    return it->second;
  std::string h = NormalizeHost(BareAddress(peer));
  if (!h.empty() && st.index.known_hosts.count(h)) return h;
  return "";
}

struct Suspects {
  std::vector<int64_t> ranks;
  std::string basis;  // why, for the explanation
};

int RootOf(const std::vector<Cluster>& clusters, int c) {
  int steps = 0;
  while (clusters[c].parent >= 0 && steps++ < 64) c = clusters[c].parent;
  return c;
}

void MergeCluster(const CorrelationState& st, const Cluster& k, Collateral& co) {
  co.rule = k.rule;
  for (size_t i : k.ev) {
    const Evidence& ev = st.evs[i];
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
}

template <typename T>
void SortUnique(std::vector<T>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// Every explained cluster of `members`, merged per rule, into inc.collateral.
void AddCollateral(const CorrelationState& st, int root, const std::vector<int>& members,
                   bool only_incident, Draft& dr, Incident& inc) {
  std::map<uint32_t, Collateral> coll;
  for (int c : members) {
    if (c == root) continue;
    const Cluster& k = st.clusters[c];
    MergeCluster(st, k, coll[k.rule]);
    if (!k.parent_how.empty() && dr.hows.size() < 4) dr.hows.push_back(k.parent_how);
  }
  for (auto& [r, co] : coll) {
    // Exact counts survive the evidence cap: use the rule's full stats when
    // the whole rule is collateral here.
    auto stats = st.scan.rule_stats.find(r);
    if (stats != st.scan.rule_stats.end() && stats->second.count > co.count && only_incident) {
      co.count = stats->second.count;
      for (auto& [rank, n] : stats->second.ranks) co.ranks.push_back(rank);
    }
    SortUnique(co.ranks);
    SortUnique(co.hosts);
    dr.coll_total += co.count;
    inc.collateral.push_back(std::move(co));
  }
  std::sort(
      inc.collateral.begin(), inc.collateral.end(),
      [](const Collateral& a, const Collateral& b) { return a.first_time_us < b.first_time_us; });
}

// A few ranks missing from a cluster that most ranks report.
bool AbsentRanks(const CorrelationState& st, const Draft& dr, Suspects* out) {
  const std::set<int64_t>& known = st.index.known_ranks;
  std::vector<int64_t> absent;
  for (int64_t r : known) {
    if (!dr.rc.ranks.count(r)) absent.push_back(r);
  }
  if (dr.rc.ranks.size() < 2 || absent.empty() ||
      absent.size() > std::max<size_t>(1, known.size() / 4)) {
    return false;
  }
  out->basis = StrCat(dr.rc.ranks.size(), " of ", known.size(), " ranks report ",
                      dr.rule.id()->str(), "; rank", absent.size() > 1 ? "s " : " ",
                      StrJoin(absent, ", "), absent.size() > 1 ? " do" : " does", " not");
  out->ranks = std::move(absent);
  return true;
}

// The rank the cluster's lines name (field `named_rank`: the rank a
// fingerprint check compares its own collective with) more often than any
// other: every rank in step names the one out of step, which names one of
// them. A tie (two ranks naming each other) settles nothing.
bool MostNamedRank(const CorrelationState& st, const Draft& dr, Suspects* out) {
  std::map<int64_t, size_t> named;
  for (size_t i : dr.rc.ev) {
    const std::string* s = st.evs[i].Field("named_rank");
    int64_t r;
    if (s && ParseInt64(*s, &r) && r >= 0) ++named[r];
  }
  int64_t best = -1;
  size_t best_n = 0, runner_up = 0;
  for (auto& [r, n] : named) {
    if (n > best_n) {
      runner_up = best_n;
      best_n = n;
      best = r;
    } else {
      runner_up = std::max(runner_up, n);
    }
  }
  if (best < 0 || best_n == runner_up) return false;
  out->ranks = {best};
  out->basis = StrCat(best_n, best_n > 1 ? " lines of " : " line of ", dr.rule.id()->str(),
                      best_n > 1 ? " name" : " names", " rank ", best, " as out of step");
  return true;
}

// The ranks a collective's report leaves out of the ranks it names as
// ready (field `ready_ranks`: Horovod up to 0.13's "[ready ranks: 5, 6,
// 3, 1, 4, 0]"): ranks are numbered from 0, so a rank below the highest
// one known that no line counts ready never submitted the tensor. A few
// of them at most; a rank above every known one cannot be told.
bool UnreadyRanks(const CorrelationState& st, const Draft& dr, Suspects* out) {
  std::set<int64_t> ready;
  for (size_t i : dr.rc.ev) {
    const std::string* s = st.evs[i].Field("ready_ranks");
    if (!s) continue;
    // A run of digits is a rank; one of more than 9 digits is no rank
    // (the bound attribution's rank lists keep), so nothing overflows.
    int64_t r = 0;
    int digits = 0;
    for (char c : *s + ",") {
      if (c >= '0' && c <= '9') {
        if (digits++ < 9) r = r * 10 + (c - '0');
        continue;
      }
      if (digits > 0 && digits <= 9) ready.insert(r);
      r = 0;
      digits = 0;
    }
  }
  if (ready.size() < 2) return false;
  int64_t top = *ready.rbegin();
  if (!st.index.known_ranks.empty()) top = std::max(top, *st.index.known_ranks.rbegin());
  // Every ready rank is at most `top`: how many are not is known before
  // listing them, so a rank number far above the others lists nothing.
  const auto missing = static_cast<uint64_t>(top + 1) - ready.size();
  if (missing == 0 || missing > std::max<uint64_t>(1, static_cast<uint64_t>(top + 1) / 4)) return false;
  std::vector<int64_t> unready;
  for (int64_t r = 0; r <= top; ++r) {
    if (!ready.contains(r)) unready.push_back(r);
  }
  out->basis = StrCat("every rank up to ", top, " but ", StrJoin(unready, ", "), " is named ready by ",
                      dr.rule.id()->str());
  out->ranks = std::move(unready);
  return true;
}

// The ranks that stopped at a lower collective SeqNum than most.
bool LowestSeqNum(const CorrelationState& st, uint32_t rule, Suspects* out) {
  auto stats = st.scan.rule_stats.find(rule);
  if (stats == st.scan.rule_stats.end() || stats->second.rank_min_seq.size() < 2) return false;
  const std::map<int64_t, int64_t>& min_seq = stats->second.rank_min_seq;
  std::map<int64_t, int> freq;
  for (auto& [r, s] : min_seq) ++freq[s];
  int64_t mode = 0;
  int mode_n = 0;
  for (auto& [s, n] : freq) {
    if (n > mode_n) {
      mode_n = n;
      mode = s;
    }
  }
  std::vector<int64_t> low;
  for (auto& [r, s] : min_seq) {
    if (s < mode) low.push_back(r);
  }
  if (low.empty() || low.size() > min_seq.size() / 2) return false;
  out->basis = StrCat("rank", low.size() > 1 ? "s " : " ", StrJoin(low, ", "),
                      " stopped at a lower collective SeqNum than the other ranks (", mode, ")");
  out->ranks = std::move(low);
  return true;
}

// The rank whose progress stopped a minute or more before the median rank's.
bool FirstToStop(const CorrelationState& st, Suspects* out) {
  std::vector<std::pair<int64_t, int64_t>> lasts;
  for (auto& [r, s] : st.scan.ranks) {
    if (r >= 0 && s.last_progress_us != kNoTime) lasts.emplace_back(s.last_progress_us, r);
  }
  if (lasts.size() < 2) return false;
  std::sort(lasts.begin(), lasts.end());
  std::vector<double> ts;
  for (auto& [t, r] : lasts) ts.push_back(static_cast<double>(t));
  double lead = Median(ts) - static_cast<double>(lasts.front().first);
  if (lead <= 60e6) return false;
  out->ranks = {lasts.front().second};
  out->basis = StrCat("rank ", lasts.front().second, " stopped making progress first, at ",
                      FormatTime(lasts.front().first), ", ", static_cast<int64_t>(lead / 1e6),
                      " s before the median rank");
  return true;
}

// The rank that reported the cluster's failure first, a minute or more
// before any other rank did: a collective timeout, which every rank in the
// collective reports once its own timeout runs out, came first on the rank
// that entered the collective first, the one the others left waiting (a
// rank 2 that timed out at 05:06 in an ALLGATHER, the others' watchdogs
// found stuck 8 minutes later). Ranks that report within the minute are
// the same event, and settle nothing.
bool FirstToReport(const CorrelationState& st, const Draft& dr, Suspects* out) {
  std::map<int64_t, int64_t> first;  // rank -> its earliest line of the cluster
  for (size_t i : dr.rc.ev) {
    const Evidence& ev = st.evs[i];
    if (ev.rank < 0 || ev.time_us == kNoTime) continue;
    auto [it, fresh] = first.try_emplace(ev.rank, ev.time_us);
    if (!fresh) it->second = std::min(it->second, ev.time_us);
  }
  if (first.size() < 2) return false;
  std::vector<std::pair<int64_t, int64_t>> order;  // (time, rank)
  for (auto& [r, t] : first) order.emplace_back(t, r);
  std::sort(order.begin(), order.end());
  const int64_t lead = order[1].first - order[0].first;
  if (lead < 60 * kSecond) return false;
  out->ranks = {order[0].second};
  out->basis = StrCat("rank ", order[0].second, " reported ", dr.rule.id()->str(), " first, at ",
                      FormatTime(order[0].first), ", ", lead / kSecond, " s before any other rank");
  return true;
}

// The one host the lines of cluster `c` name, else "". A line that blames
// its peer (an IB completion error from peer X) is a witness on its own
// host, not a failure of it: when other lines name a host of their own
// (the HCA's local work queue error), only theirs count.
std::string OwnHost(const CorrelationState& st, const Cluster& c) {
  std::set<std::string> own;
  for (size_t i : c.ev) {
    const Evidence& ev = st.evs[i];
    if (!ev.host.empty() && !ev.Field("peer")) own.insert(ev.host);
  }
  if (own.size() == 1) return *own.begin();
  return own.empty() && c.hosts.size() == 1 ? *c.hosts.begin() : std::string();
}

// A launcher's summary that marks which of its entries is the first
// observed failure (torchrun's "Root Cause (first observed failure):", field
// `first_failure`): the rank of the cluster's first line after the mark.
bool NamedFirstFailure(const CorrelationState& st, const Draft& dr, Suspects* out) {
  for (size_t h = 0; h < st.evs.size(); ++h) {
    const Evidence& mark = st.evs[h];
    if (!st.ignore_reason[h].empty() || !mark.Field("first_failure")) continue;
    const Evidence* next = nullptr;
    for (size_t i : dr.rc.ev) {
      const Evidence& ev = st.evs[i];
      if (ev.source == mark.source && ev.offset > mark.offset && ev.rank >= 0 &&
          (!next || ev.offset < next->offset)) {
        next = &ev;
      }
    }
    if (!next) continue;
    out->ranks = {next->rank};
    out->basis = StrCat("the launcher's summary names rank ", next->rank,
                        " as its first observed failure");
    return true;
  }
  return false;
}

// Only symptoms: infer the suspect, or say that no rank stands out.
void InferSuspect(const CorrelationState& st, Draft& dr, Incident& inc) {
  inc.inferred = true;
  dr.conf *= 0.55;
  Suspects s;
  if (NamedFirstFailure(st, dr, &s) || MostNamedRank(st, dr, &s) || UnreadyRanks(st, dr, &s) ||
      AbsentRanks(st, dr, &s) ||
      LowestSeqNum(st, dr.rc.rule, &s) || FirstToStop(st, &s) || FirstToReport(st, dr, &s)) {
    inc.suspects = s.ranks;
    inc.rank = inc.suspects.front();
    inc.host = st.HostForRank(inc.rank);
    inc.gpu.clear();
    if (auto bus = st.topo.BusForRank(inc.rank)) inc.gpu = *bus;
    auto it = st.scan.ranks.find(inc.rank);
    if (it != st.scan.ranks.end() && it->second.last_progress_us != kNoTime) {
      dr.window_start = it->second.last_progress_us - 5 * 60 * kSecond;
    } else if (inc.time_us != kNoTime) {
      dr.window_start = inc.time_us - 35 * 60 * kSecond;
    }
    dr.explanation = StrCat("No initiating line was found. Suspect inferred: ", s.basis, ". ");
    return;
  }
  inc.rank = -1;
  // One host named by every line of the cluster is still a fact.
  inc.host = OwnHost(st, dr.rc);
  if (dr.rc.ranks.size() == 1) {
    inc.rank = *dr.rc.ranks.begin();
    // A line about another rank ("ranks [13] are the lagging ranks",
    // printed by rank 0) names that rank, which lives on its own host.
    if (std::string h = st.HostForRank(inc.rank); !h.empty()) inc.host = h;
  }
  if (inc.time_us != kNoTime) dr.window_start = inc.time_us - 35 * 60 * kSecond;
  dr.explanation =
      StrCat("No initiating line was found and no rank stands out: ", dr.rc.ranks.size(),
             " rank(s) report ", dr.rule.id()->str(), ". ");
  dr.conf *= 0.8;
}

// How far after a kernel crash or kill a launcher's line about the worker
// it ended may come: torchrun and DeepSpeed poll their children every
// few seconds.
constexpr int64_t kExitReportUs = 120 * kSecond;

// The signal an exit meaning names ("SIGKILL: ..." -> "SIGKILL").
std::string_view SignalOf(const std::string& meaning) {
  return std::string_view(meaning).substr(0, meaning.find(':'));
}

// Whether collateral line `ev`, on the root's host, says that its own rank
// was the one the root hit: its IB connection failed (a line naming the
// remote peer or its HCA) after a network-layer root, or its worker died of
// the signal the root means (a kill or a crash, never the SIGTERM a
// launcher sends the rest) soon after it.
bool HitByRoot(const Draft& dr, const Evidence& ev) {
  if (dr.rc.layer == RuleLayer::Network) {
    const std::string* root_hca = dr.first.Field("hca");
    const std::string* hca = ev.Field("hca");
    if (root_hca && hca) return *root_hca == *hca;
    return hca || ev.Field("peer");
  }
  std::string meaning = ExitMeaning(ev);
  std::string_view sig = SignalOf(meaning);
  if (sig.empty() || sig == "SIGTERM" || sig == "SIGABRT") return false;
  if (std::string root = ExitMeaning(dr.first); !root.empty() && SignalOf(root) != sig) return false;
  if (ev.time_us == kNoTime || dr.first.time_us == kNoTime) return true;
  return ev.time_us >= dr.first.time_us - 5 * kSecond && ev.time_us <= dr.first.time_us + kExitReportUs;
}

// How far apart a kernel line and a rank's line of another incident may be
// to be one event: NCCL's retries end within seconds, the rest is skew
// between the host's kernel clock and the application's stamps.
constexpr int64_t kSameEventUs = 5 * 60 * kSecond;

// The ranks of the pod the root names (an OOM kill's task_memcg UID, which
// the kubelet ties to its pod): its own line's, else its cluster's first
// such line's; null when none names a pod the archive's lines know.
const std::set<int64_t>* RanksOfRootPod(const CorrelationState& st, int root, const Draft& dr) {
  const std::string* pod = dr.first.Field("pod");
  for (size_t k = 0; !pod && k < st.clusters[root].ev.size(); ++k) {
    pod = st.evs[st.clusters[root].ev[k]].Field("pod");
  }
  if (!pod) return nullptr;
  auto it = st.pod_ranks.find(NormalizeHost(*pod));
  return it == st.pod_ranks.end() ? nullptr : &it->second;
}

// The earliest line of `clusters` on `host` (an unstamped line last) whose
// own rank the root hit; `near`: only lines within kSameEventUs of the root.
// Where the root names its pod, only that pod's ranks (other pods share the
// node).
const Evidence* HitOnHost(const CorrelationState& st, int root, const std::vector<int>& clusters,
                          const Draft& dr, const std::string& host, bool near) {
  const std::set<int64_t>* in_pod = RanksOfRootPod(st, root, dr);
  const Evidence* best = nullptr;
  for (int c : clusters) {
    if (c == root) continue;
    for (size_t i : st.clusters[c].ev) {
      const Evidence& ev = st.evs[i];
      if (ev.rank < 0 || NormalizeHost(ev.host) != host || !HitByRoot(dr, ev)) continue;
      if (in_pod && !in_pod->count(ev.rank)) continue;
      if (near && ev.time_us != kNoTime && dr.first.time_us != kNoTime &&
          std::llabs(ev.time_us - dr.first.time_us) > kSameEventUs) {
        continue;
      }
      bool earlier = !best || (ev.time_us != kNoTime &&
                               (best->time_us == kNoTime || ev.time_us < best->time_us));
      if (earlier) best = &ev;
    }
  }
  return best;
}

// A root line that names its host but no rank: a kernel line about an HCA
// whose port went down, a segfault or an OOM kill of a pid the job's logs
// know under another pid namespace (a pod's). The rank is the one that HCA
// serves (the topology), else the rank on that host whose own line says it
// was hit, the earliest (an unstamped line last): among the incident's
// lines, else, for a network root, among the host's other network lines.
void RankOnRootHost(const CorrelationState& st, int root, const std::vector<int>& members, Draft& dr,
                    Incident& inc) {
  if (inc.rank >= 0 || inc.host.empty() || !dr.rc.initiating || IsNotice(st, dr.rc)) return;
  if (dr.peer && !dr.peer->empty()) return;  // the suspect is the peer's host
  const std::string host = NormalizeHost(inc.host);
  if (const std::string* hca = dr.first.Field("hca")) {
    std::vector<int64_t> ranks = st.topo.RanksForHca(inc.host, *hca);
    if (!ranks.empty()) {
      inc.rank = ranks.front();
      dr.explanation += StrCat("The HCA ", *hca, " on ", inc.host, " is the one rank",
                               ranks.size() > 1 ? "s " : " ", StrJoin(ranks, ", "),
                               " named as theirs. ");
      return;
    }
  }
  const Evidence* best = HitOnHost(st, root, members, dr, host, false);
  if (!best && dr.rc.layer == RuleLayer::Network) {
    std::vector<int> others;
    // The rank's own failure may be an incident of its own: its line blames
    // the remote peer, or the host's clock put it before the kernel's.
    for (int c = 0; c < static_cast<int>(st.clusters.size()); ++c) {
      if (st.clusters[c].layer == RuleLayer::Network) others.push_back(c);
    }
    best = HitOnHost(st, root, others, dr, host, true);
  }
  if (!best) return;
  inc.rank = best->rank;
  dr.explanation += StrCat("Rank ", inc.rank, " on ", inc.host, " is the rank there whose own line says it was hit (",
                           st.scan.sources[best->source].name, ":", best->line, "). ");
}

// How far the notice's clock is ahead of other hosts' at least: lines
// there of the failures it explains (its rule's edges), whichever incident
// they went to, stamped before it by more than the edge allows, up to
// 5 min. 0 when none.
int64_t NoticeAhead(const CorrelationState& st, const Incident& inc) {
  int64_t ahead = 0;
  double min_lag, max_lag;
  for (size_t i = 0; i < st.evs.size(); ++i) {
    const Evidence& ev = st.evs[i];
    if (ev.time_us == kNoTime || ev.time_us >= inc.time_us || inc.time_us - ev.time_us > 5 * 60 * kSecond) continue;
    if (ev.host.empty() || ev.host == inc.host || !st.ignore_reason[i].empty()) continue;
    if (!st.Edge(inc.rule, ev.rule, &min_lag, &max_lag)) continue;
    const int64_t lead = inc.time_us - ev.time_us;
    if (static_cast<double>(lead) > -min_lag * static_cast<double>(kSecond)) ahead = std::max(ahead, lead);
  }
  return ahead;
}

// Whether a checkpoint came after the notice that ended the job. A
// checkpoint on another host stamped shortly before the notice (within how
// far the notice's clock is shown ahead, plus a cloud's two-minute warning)
// may have come after it: those clocks are not aligned.
std::string CheckpointAfterNotice(const CorrelationState& st, const Incident& inc) {
  const int64_t ckpt = st.index.last_checkpoint_us;
  if (ckpt == kNoTime) {
    // A checkpoint line with no timestamp (Lightning's 'requeing job N...'
    // after its requeue save) is placed only by its order in its file.
    // With no stamped checkpoint line, every one is untimed: the last.
    const auto& untimed = st.index.last_untimed_checkpoint;
    if (untimed.empty()) return "No checkpoint line was found in the logs, before or after the notice. ";
    const Evidence* seen = untimed.rbegin()->second;
    const Evidence* notice = inc.initiating.empty() ? nullptr : &inc.initiating.front();
    const bool same = notice && notice->source == seen->source;
    return StrCat("A checkpoint line with no timestamp was found", same ? (seen->offset < notice->offset ? " before the notice" : " after the notice") : "",
                  " (", seen->text, "). ");
  }
  if (inc.time_us != kNoTime && ckpt >= inc.time_us) {
    return StrCat("A checkpoint was saved after the notice, at ", FormatTime(ckpt), ". ");
  }
  const int64_t ahead = inc.time_us == kNoTime ? 0 : NoticeAhead(st, inc);
  if (ahead > 0 && st.index.last_checkpoint_host != inc.host && inc.time_us - ckpt <= ahead + 2 * 60 * kSecond) {
    return StrCat("A checkpoint was saved at ", FormatTime(ckpt),
                  st.index.last_checkpoint_host.empty() ? "" : StrCat(" on ", st.index.last_checkpoint_host), ", ",
                  (inc.time_us - ckpt) / kSecond, " s before the notice by the hosts' clocks; the notice's "
                  "consequences on other hosts are stamped up to ", ahead / kSecond,
                  " s before it, so those clocks are not aligned and whether the checkpoint came after the notice "
                  "cannot be known from these logs. ");
  }
  return StrCat("No checkpoint was saved after the notice; the newest is from ", FormatTime(ckpt), ". ");
}

// A seen initiating line: say what explains what; a blamed peer is the suspect.
void ExplainSeen(const CorrelationState& st, Draft& dr, Incident& inc) {
  std::string& e = dr.explanation;
  e = StrCat(dr.rule.title()->str(), " at ", FormatTime(inc.time_us),
             inc.host.empty() ? "" : StrCat(" on ", inc.host),
             inc.rank >= 0 ? StrCat(" (rank ", inc.rank, ")") : "",
             inc.gpu.empty() ? "" : StrCat(" GPU ", inc.gpu), " is the earliest ",
             LayerName(dr.rc.layer), "-layer event of this incident");
  if (!inc.collateral.empty()) {
    e += StrCat(" and explains ", dr.coll_total, " later line(s) of ", inc.collateral.size(),
                " other rule(s) (", StrJoin(dr.hows, "; "), ")");
  }
  e += ". ";
  if (dr.first.time_source == TimeSource::kNone) {
    dr.conf *= 0.85;
    e += dr.first.monotonic_s ? "Its time is unknown (kernel stamp not anchored to wall time). "
                              : "Its time is unknown (the line carries no timestamp). ";
  }
  if (IsNotice(st, dr.rc)) {
    // Who ended the job, and what it lost: the newest checkpoint line.
    e += StrCat("The job was ended from outside (", dr.rule.title()->str(), ", ",
                inc.host.empty() ? "host unknown" : StrCat("on ", inc.host),
                "): the failures that follow it are its doing. ");
    e += CheckpointAfterNotice(st, inc);
  }
  if (const std::string* odd = dr.first.Field("odd_version")) e += *odd;
  if (const std::string* server = dr.first.Field("server"); server && !server->empty()) {
    // A service outside the job (NFS server, rendezvous store): the host
    // that logged the line is where the job felt it.
    e += StrCat("The line names the server ", *server, ", which ",
                inc.host.empty() ? "a host of the job" : inc.host,
                " could not reach; the incident stays on the host that logged it. ");
  }
  if (dr.peer && !dr.peer->empty()) {
    const std::string& peer = *dr.peer;
    std::string peer_host = JobHostOf(st, peer);
    if (peer_host.empty()) {
      // Nothing in the archive says which of the job's hosts has this
      // address: naming it as the host would put a machine on the report
      // that the archive does not hold.
      e += StrCat("The line blames the remote peer ", peer,
                  ", which no line of the archive ties to one of the job's hosts. ");
      dr.unresolved_peer = true;
    } else {
      e += StrCat("The line blames the remote peer ", peer,
                  peer_host != peer ? StrCat(" (", peer_host, ")") : std::string(),
                  ": that peer is the suspect, not the rank that printed it. ");
      inc.host = peer_host;
      inc.rank = -1;
      inc.gpu.clear();
      inc.inferred = true;
      inc.suspects.clear();
    }
  }
}

// What would settle an incident the logs leave open.
void AddMissingFacts(const CorrelationState& st, const Draft& dr,
                     const std::map<std::string, std::string>& vars, Incident& inc) {
  bool untimed = dr.first.time_source == TimeSource::kNone;
  std::vector<std::string>& facts = inc.missing_facts;
  AddPlaceholderFacts(inc.fix + inc.verify, vars, facts);
  bool fallback = st.HasRole(dr.rc.rule, RuleRole::kFallback);
  bool summary_only = st.HasRole(dr.rc.rule, RuleRole::kSummary) ||
                      (fallback && st.rs.signal(dr.first.signal).role != SignalRole::Initiating);
  if (summary_only) {
    // A summary or a bare exit status says that a worker ended, not why.
    facts.push_back(FillTemplate(
        "the worker's own log: the stderr of rank {rank} on {host} up to its exit (its "
        "traceback or last error line), which this line only points at",
        vars));
  }
  if (fallback && ExitSignal(dr.first) == "SIGKILL") {
    // A SIGKILL leaves no line of the process: its sender is the cause.
    facts.push_back(FillTemplate(
        "dmesg -T of {host} around {start} and the scheduler's record of the job (sacct State: "
        "OUT_OF_MEMORY, TIMEOUT, CANCELLED, NODE_FAIL): who sent the SIGKILL, the OOM killer, "
        "the scheduler after its grace period, or a person",
        vars));
  }
  if (const std::string* code = dr.first.Field("statement"); code && fallback) {
    // A traceback cut after a code line: what it raised is the lead.
    facts.push_back(StrCat("the rest of the traceback after '", *code,
                           "': the exception type and message it raised"));
  }
  if (const std::string* err = dr.first.Field("cuda_error"); err && fallback) {
    // A CUDA runtime error no catalog rule reads (the samples' check of
    // cudaGetDeviceCount returning cudaErrorNoDevice): what the runtime
    // found on the host settles it, not the program's log.
    const std::string* name = dr.first.Field("cuda_error_name");
    facts.push_back(FillTemplate(
        StrCat("why the CUDA runtime returned error ", *err, name ? StrCat(" (", *name, ")") : std::string(),
               " on {host}: nvidia-smi -L and nvidia-smi -q there (the driver loaded, its GPUs present "
               "and healthy), the devices the job was given (CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES, "
               "the container's --gpus) and dmesg -T of {host} around {start}"),
        vars));
  }
  if (dr.peer && !dr.peer->empty() && dr.unresolved_peer) {
    facts.push_back(StrCat("which host has the address ", *dr.peer,
                           " (the NCCL 'Bootstrap : Using' lines of every host), then its kernel "
                           "and NCCL logs around ",
                           FormatTime(inc.time_us)));
  }
  if (!inc.inferred && !untimed && !inc.host.empty() && !fallback) return;
  if (dr.rule.missing_fact() && dr.rule.missing_fact()->size()) {
    std::string fact = FillTemplate(dr.rule.missing_fact()->str(), vars);
    AddPlaceholderFacts(fact, vars, facts);
    facts.push_back(std::move(fact));
  }
  if (inc.inferred && !inc.host.empty()) {
    facts.push_back(FillTemplate(
        "dmesg of {host} between {start} and {end} (journalctl -k --since/--until, or dmesg -T)",
        vars));
  }
  if (inc.inferred && inc.rank >= 0 && inc.host.empty()) {
    facts.push_back(StrCat("which host runs rank ", inc.rank,
                           ": the NCCL init lines (NCCL_DEBUG=INFO) or the launcher's rank map"));
  }
  if (inc.inferred && inc.suspects.empty() && !dr.peer) {
    facts.push_back(FillTemplate(
        "kernel logs (dmesg) of every host between {start} and {end}, and the application log "
        "of any rank missing from the collected files",
        vars));
  }
  if (untimed && dr.rc.initiating && !fallback) {
    facts.push_back(
        FillTemplate("a wall-clock kernel log of {host} (dmesg -T or journalctl -k -o short-iso) "
                     "to date the event",
                     vars));
  }
  if (dr.peer && !dr.peer->empty() && !dr.unresolved_peer) {
    facts.push_back(StrCat("kernel and NCCL logs of the peer ", inc.host, " around ",
                           FormatTime(inc.time_us), " (ibstat, dmesg | grep -i mlx5)"));
  }
}

// The initiating lines (ten at most) and the first line of each collateral.
void BuildTimeline(Incident& inc) {
  for (const Evidence& ev : inc.initiating) {
    if (inc.timeline.size() < 10) inc.timeline.push_back(ev);
  }
  for (const Collateral& co : inc.collateral) inc.timeline.push_back(co.sample);
  std::stable_sort(inc.timeline.begin(), inc.timeline.end(),
                   [](const Evidence& a, const Evidence& b) {
                     if ((a.time_us == kNoTime) != (b.time_us == kNoTime)) {
                       return b.time_us == kNoTime;
                     }
                     return a.time_us < b.time_us;
                   });
}

Incident BuildIncident(const CorrelationState& st, int root, const std::vector<int>& members,
                       bool only_incident) {
  const Cluster& rc = st.clusters[root];
  const Evidence& first = st.evs[rc.ev.front()];
  Draft dr{rc, *st.rs.rule(rc.rule), first, first.Field("peer")};
  Incident inc;
  inc.rule = rc.rule;
  // Initiating evidence: the root cluster's lines, earliest first (capped),
  // each after the generic fatal line whose message goes on to it.
  std::set<size_t> heads;
  for (size_t k = 0; k < rc.ev.size() && inc.initiating.size() < 20; ++k) {
    const Evidence& ev = st.evs[rc.ev[k]];
    auto head = st.message_heads.find({ev.source, ev.line});
    if (head != st.message_heads.end() && heads.insert(head->second).second) {
      inc.initiating.push_back(st.evs[head->second]);
    }
    inc.initiating.push_back(ev);
  }
  inc.time_us = first.time_us;
  inc.rank = first.rank;
  inc.host = first.host;
  // A first line that names no rank (a pdsh stream's traceback) beside a
  // later one of the root that does (the Xid's bus): one rank across the
  // root's lines, on the first line's host, is the incident's.
  if (inc.rank < 0 && rc.ranks.size() == 1) {
    int64_t r = *rc.ranks.begin();
    std::string h = st.HostForRank(r);
    if (inc.host.empty() || h.empty() || NormalizeHost(h) == NormalizeHost(inc.host)) inc.rank = r;
  }
  // A line that names no host ("Detected 1 oom-kill event(s) in step ...")
  // is on the one host the rest of its cluster names ("srun: error: node7:").
  if (inc.host.empty() && first.rank < 0 && rc.hosts.size() == 1) inc.host = *rc.hosts.begin();
  // A line that names its rank but no host (mpirun --tag-output's
  // "[1,1]<stderr>:" stream, a torchrun "[rank3]:" line) is on the host
  // the log gives that rank elsewhere (mpirun's "process rank 1 with PID 0
  // on node h exited on signal 6", a NCCL init line, a node's log).
  if (inc.host.empty() && inc.rank >= 0) inc.host = st.HostForRank(inc.rank);
  inc.gpu = first.gpu;
  if (const std::string* hca = first.Field("hca")) inc.hca = *hca;
  AddCollateral(st, root, members, only_incident, dr, inc);
  dr.conf = dr.rule.weight();
  dr.window_start = dr.window_end = inc.time_us;
  if (rc.initiating) {
    ExplainSeen(st, dr, inc);
    RankOnRootHost(st, root, members, dr, inc);
  } else {
    InferSuspect(st, dr, inc);
  }
  // A line that names no host, in a file whose other lines name one (a
  // node's log: its NCCL INFO lines print `cn136:970:1023`, its kernel
  // lines a syslog host), is on that host; not when the incident's rank came
  // from another line (a suspect inferred elsewhere) or its line blames a peer.
  if (inc.host.empty() && inc.rank == first.rank && !(dr.peer && !dr.peer->empty()) &&
      first.source < st.index.sources.size()) {
    inc.host = st.index.sources[first.source].own_host;
  }
  // The first line that says how the process ended (an exception line may
  // share its line with the signal that ended it: "process 0 terminated
  // with signal SIGKILL").
  for (size_t i : rc.ev) {
    if (std::string m = ExitMeaning(st.evs[i]); !m.empty()) {
      dr.explanation += StrCat("Exit status: ", m, ". ");
      break;
    }
  }
  dr.explanation += rc.note;
  if (rc.survived) {
    inc.survived = true;
    dr.explanation +=
        "Progress was logged on its rank after it (steps, or requests its server answered): the "
        "job carried on, so this did not end the rank. ";
  }
  if (!inc.collateral.empty()) {
    dr.conf = std::min(0.99, dr.conf + 0.03 * std::log10(1.0 + static_cast<double>(dr.coll_total)));
  }
  inc.confidence = std::round(std::clamp(dr.conf, 0.01, 0.99) * 100) / 100;
  for (const Collateral& co : inc.collateral) {
    if (co.first_time_us != kNoTime) dr.window_end = std::max(dr.window_end, co.first_time_us);
  }
  if (dr.window_end == kNoTime) dr.window_end = dr.window_start;
  std::map<std::string, std::string> vars =
      TemplateVars(inc, dr.window_start, dr.window_end, &st.scan.devices);
  // What the initiating line itself named ({hca}, {hca_pci}, {pid}): a
  // device the incident's own evidence printed, never an example's.
  for (const auto& [k, v] : dr.first.fields) {
    if (!v.empty()) vars.emplace(k, v);
  }
  FillFixAndVerify(dr.rule, vars, inc);
  AddMissingFacts(st, dr, vars, inc);
  SortUnique(inc.missing_facts);
  inc.explanation = std::move(dr.explanation);
  BuildTimeline(inc);
  return inc;
}

}  // namespace

std::map<std::string, std::string> TemplateVars(const Incident& inc, int64_t start, int64_t end,
                                                const std::vector<DeviceLink>* devices) {
  // inc.gpu is a PCI bus id ("0000:9a:00.0") or a device index.
  bool is_bus = inc.gpu.find(':') != std::string::npos;
  std::string bus = is_bus ? inc.gpu : "";
  std::string index = !is_bus ? inc.gpu : "";
  if (devices) {
    // NCCL's busId "9a000" is the bus id 0000:9a:00.0 of the same GPU.
    auto short_bus = [](std::string_view b) {
      std::string s;
      for (char ch : b) {
        if (ch != ':' && ch != '.') s += static_cast<char>(std::tolower(ch));
      }
      return s.size() > 4 && s.rfind("0000", 0) == 0 ? s.substr(4) : s;
    };
    for (const DeviceLink& l : *devices) {
      bool same_place = inc.host.empty() || l.host.empty() || l.host == inc.host;
      if (!same_place || l.cuda_dev < 0) continue;
      bool same_gpu = (!bus.empty() && short_bus(l.bus_id) == short_bus(bus)) ||
                      (bus.empty() && index.empty() && inc.rank >= 0 && l.rank == inc.rank);
      if (same_gpu) {
        if (index.empty()) index = StrCat(l.cuda_dev);
        if (bus.empty() && !l.bus_id.empty()) bus = l.bus_id;
        break;
      }
    }
  }
  return {{"host", inc.host.empty() ? "the suspect host" : inc.host},
          {"rank", inc.rank >= 0 ? StrCat(inc.rank) : "the suspect rank"},
          {"gpu", inc.gpu.empty() ? "<gpu>" : inc.gpu},
          {"bus", bus.empty() ? "<gpu bus id>" : bus},
          {"gpu_index", index.empty() ? "<gpu index>" : index},
          {"start", FormatTime(start)},
          {"end", FormatTime(end)}};
}

void AddPlaceholderFacts(const std::string& text, const std::map<std::string, std::string>& vars,
                         std::vector<std::string>& facts) {
  if (vars.at("bus") == "<gpu bus id>" && text.find("<gpu bus id>") != std::string::npos) {
    facts.push_back(
        "the PCI bus id of the failing GPU (the Xid line's PCI:..., nvidia-smi -q, or the NCCL "
        "init line's busId of its rank)");
  }
  if (vars.at("gpu_index") == "<gpu index>" && text.find("<gpu index>") != std::string::npos) {
    facts.push_back(
        "the CUDA index of the failing GPU (nvidia-smi -L, or the NCCL init line 'cudaDev' of its "
        "rank)");
  }
}

// A "{name}" the evidence did not fill becomes "<name>" and a missing fact:
// the advice never names a device it does not know.
void MarkUnfilledPlaceholders(std::string& text, std::vector<std::string>& facts) {
  for (size_t open = text.find('{'); open != std::string::npos; open = text.find('{', open + 1)) {
    size_t close = text.find('}', open);
    if (close == std::string::npos) return;
    std::string name = text.substr(open + 1, close - open - 1);
    bool word = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return std::islower(static_cast<unsigned char>(c)) || c == '_';
    });
    if (!word) continue;
    text.replace(open, close - open + 1, StrCat("<", name, ">"));
    facts.push_back(StrCat("the ", name, " the advice names (not printed by the initiating line)"));
  }
}

void FillFixAndVerify(const fb::Rule& rule, const std::map<std::string, std::string>& vars,
                      Incident& inc) {
  inc.fix = FillTemplate(rule.fix()->str(), vars);
  inc.verify = FillTemplate(rule.verify()->str(), vars);
  MarkUnfilledPlaceholders(inc.fix, inc.missing_facts);
  MarkUnfilledPlaceholders(inc.verify, inc.missing_facts);
}

void BuildIncidents(CorrelationState& st) {
  std::map<int, std::vector<int>> members;  // root cluster -> its clusters
  for (size_t c = 0; c < st.clusters.size(); ++c) {
    members[RootOf(st.clusters, static_cast<int>(c))].push_back(static_cast<int>(c));
  }
  for (const auto& [root, cl] : members) {
    st.diag.incidents.push_back(BuildIncident(st, root, cl, members.size() == 1));
  }
}

}  // namespace faultline::internal
