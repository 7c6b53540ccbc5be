// The merge, on the thread that called the Scanner: each chunk's results
// go into its source in task order (line numbers, inherited times, traceback
// windows cut at the chunk's start), every confirmed match into the uncapped
// statistics, topology and clock sync points, progress lines into per-rank
// summaries, metric lines into series, and the evidence through the
// per-rule caps.
#include <algorithm>
#include <cmath>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

#include "evidence/distinct.h"
#include "evidence/merge.h"
#include "scan/scan_impl.h"
#include "util/strings.h"

namespace faultline {

using internal::TracebackPending;


uint32_t Scanner::Impl::NewSource(const std::string& name, int64_t mtime, size_t below_root, bool defer_path) {
  auto st = std::make_unique<SourceState>(EvidenceCaps{opts.keep_first, opts.keep_last});
  st->index = static_cast<uint32_t>(result.sources.size());
  // Made in place: a summary moved in was two strings more to move.
  SourceSummary& s = result.sources.emplace_back();
  s.name = name;
  s.failed = false;
  st->below_root = below_root;
  st->path_pending = st->summary_pending = defer_path;
  if (!defer_path) {
    st->path_attr = AttributeFromPath(name, below_root);
    s.rank = st->path_attr.rank.value_or(-1);
    s.host = st->path_attr.host;
  }
  st->tctx = tctx;
  st->tctx.default_year = UtcYear(mtime > 0 ? mtime : static_cast<int64_t>(time(nullptr)));
  states.push_back(std::move(st));
  return states.back()->index;
}

void Scanner::Impl::AttributePath(SourceState& st, std::string_view path) {
  if (!st.path_pending) return;
  st.path_attr = AttributeFromPath(path, st.below_root);
  st.path_pending = false;
}

void Scanner::Impl::SummarizePath(SourceState& st) {
  if (!st.summary_pending) return;
  SourceSummary& s = result.sources[st.index];
  AttributePath(st, s.name);
  s.rank = st.path_attr.rank.value_or(-1);
  s.host = st.path_attr.host;
  st.summary_pending = false;
}

void Scanner::Impl::Fail(uint32_t src, std::string msg, int code) {
  result.sources[src].failed = true;
  for (const InputError& e : result.errors) {
    if (e.source == result.sources[src].name && e.message == msg) return;
  }
  result.errors.push_back({result.sources[src].name, std::move(msg), code});
}

std::string Scanner::Impl::OverLimitMessage(const std::string& name, uint64_t read_bytes) const {
  return StrCat(name, ": longer than the limit of ", opts.limits.max_source_bytes,
                " bytes per source (--max-source-bytes); only its first ", read_bytes,
                " bytes are diagnosed");
}

std::string Scanner::Impl::OutOfTimeMessage(const std::string& name, uint64_t read_bytes) const {
  return StrCat(name, ": the time budget of ", opts.time_budget_s,
                " s (--time-budget) ran out; only its first ", read_bytes, " bytes are diagnosed");
}

void Scanner::Impl::Merge(SourceState& st, ChunkOut& out) {
  SourceSummary& sum = result.sources[st.index];
  // Traceback windows cut at this chunk's start: the source's bytes before
  // the chunk complete them, so the fold is the same for any chunking.
  for (TracebackPending& tp : out.tb_pending) {
    bool at_start = false;
    std::string window = st.framing.CompleteTracebackWindow(tp.window, &at_start);
    AddTraceback(out.evidence, tp.first_evidence, tp.evidence_count,
                 FoldTraceback(window, at_start, tp.line, st.framing.format(), st.tctx));
  }
  st.framing.AfterChunk(std::move(out.tail));
  if (!out.error.empty()) {
    const std::string& cause = out.error_cause.empty() ? out.error : out.error_cause;
    if (std::find(st.failed_causes.begin(), st.failed_causes.end(), cause) == st.failed_causes.end()) {
      st.failed_causes.push_back(cause);
      Fail(st.index, out.error, out.error_code);
    }
  }
  uint64_t base_line = st.lines + (st.last_ended_newline ? 1 : 0);
  if (st.lines == 0 && sum.bytes == 0) base_line = 1;
  // Evidence that found no time in its chunk inherits the time the chunks
  // before it ended on (a range scan leaves it to MergeScans when none did).
  const TimeCarry carry = TimeCarry::AtEndOf(sum);
  st.keeper.ReserveFirst(out.evidence.size());
  for (size_t i = 0; i < out.evidence.size(); ++i) {
    Evidence& ev = out.evidence[i];
    ev.line = base_line + ev.line;
    carry.Give(ev);
    // thin 2 (a metric line made without its text) is whole to the caps.
    Keep(st, std::move(ev), i < out.thin.size() && out.thin[i] == 1);
  }
  CountMerged(st, out);
  AppendFollowing(sum, out.edge);
  sum.kernel_log = st.framing.kernel_log();
  // A chunk whose last line lacks a newline still counts that line; the
  // next chunk of a stream never starts mid-line, so this is exact.
  st.lines += out.newlines;
  st.last_ended_newline = out.ends_with_newline;
  sum.lines = st.lines + (out.ends_with_newline || out.edge.bytes == 0 ? 0 : 1);
}

void Scanner::Impl::CountMerged(SourceState& st, const ChunkOut& out) {
  bool reached = false;
  for (const auto& [rule, n] : out.rule_records) reached |= (st.merged_count[rule] += n) >= opts.keep_first;
  std::atomic<uint64_t>* merged = st.merged_of_rule.load(std::memory_order_relaxed);
  if (merged == nullptr) {
    // Made only for a source whose caps begin to drop: not for each of an
    // archive's small files.
    if (!reached) return;
    st.merged_of_rule_owner = std::make_unique<std::atomic<uint64_t>[]>(rs->rule_count());
    merged = st.merged_of_rule_owner.get();
    for (const auto& [rule, n] : st.merged_count) merged[rule].store(n, std::memory_order_relaxed);
    st.merged_of_rule.store(merged, std::memory_order_release);
    return;
  }
  for (const auto& [rule, n] : out.rule_records) merged[rule].store(st.merged_count[rule], std::memory_order_relaxed);
}

namespace {

// The device and pid dedup keys are compared, never read: a number goes in
// as its eight bytes, not its decimal text (~210 instructions a number),
// and each string ends at a '\0' as before. Injective as the decimal form is for strings
// without a '\0'.
void AddKeyNumber(std::string& key, int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); }

void AddKeyString(std::string& key, const std::string& s) {
  key.append(s);
  key.push_back('\0');
}

}  // namespace

// Keeps `link` under `key` once, up to kMaxTopologyRecords links (past
// them the topology says it was truncated).
template <typename Link>
void Scanner::Impl::KeepOnce(absl::flat_hash_set<std::string>& keys, std::vector<Link>& links, std::string key,
                             Link link) {
  if (keys.contains(key)) return;
  if (links.size() >= kMaxTopologyRecords) {
    result.topology_truncated = true;
    return;
  }
  keys.insert(std::move(key));
  links.push_back(std::move(link));
}

void Scanner::Impl::KeepDevice(DeviceLink link) {
  // A set, not a scan of the list: a million init lines would make the scan
  // quadratic.
  std::string key;
  key.reserve(link.host.size() + link.bus_id.size() + 2 * sizeof(int64_t) + 3);
  AddKeyString(key, link.host);
  AddKeyNumber(key, link.rank);
  AddKeyString(key, link.bus_id);
  AddKeyNumber(key, link.nranks);
  key.push_back(link.global ? '1' : '0');
  KeepOnce(device_keys_, result.devices, std::move(key), std::move(link));
}

void Scanner::Impl::KeepPid(PidLink link) {
  // A map to the link, not a scan of the list (quadratic in pids).
  std::string key;
  key.reserve(link.host.size() + sizeof(int64_t) + 1);
  AddKeyString(key, link.host);
  AddKeyNumber(key, link.pid);
  if (auto it = pid_keys_.find(key); it != pid_keys_.end()) {
    PidLink& l = result.pids[it->second];
    // A global rank is worth more than a local one learnt first.
    if (l.rank < 0 && link.rank >= 0) l.rank = link.rank;
    if (l.local_rank < 0 && link.local_rank >= 0) l.local_rank = link.local_rank;
  } else if (result.pids.size() < kMaxTopologyRecords) {
    pid_keys_.emplace(std::move(key), result.pids.size());
    result.pids.push_back(std::move(link));
  } else {
    result.topology_truncated = true;
  }
}

void Scanner::Impl::KeepNic(NicLink link) {
  // As KeepOnce, with the link itself as its key (nic_keys_).
  const size_t hash = absl::HashOf(link.host, link.pid, link.rank, link.index, link.hca, link.pci, link.sends,
                                   link.netdev);
  if (nic_keys_.contains(NicProbe{&link, hash})) return;
  if (result.nics.size() >= kMaxTopologyRecords) {
    result.topology_truncated = true;
    return;
  }
  result.nics.push_back(std::move(link));
  nic_keys_.insert(NicKey{static_cast<uint32_t>(result.nics.size() - 1), hash});
}

void Scanner::Impl::KeepNics(const Evidence& ev) {
  if (ev.fields.empty()) return;
  if (const std::string* list = ev.Field("ib_devs")) {
    for (auto& [index, name] : ParseNcclIbDevices(*list)) {
      KeepNic({ev.host, ev.pid, ev.rank, index, std::move(name), "", false, ""});
    }
    return;
  }
  int64_t index;
  const std::string* dev = ev.Field("ib_dev");
  const std::string* pci = ev.Field("ib_pci");
  // ibdev2netdev's "mlx5_0 port 1 ==> ibp26s0 (Down)", rdma's "link
  // mlx5_0/1 ... netdev ibp26s0": the host's netdev of that HCA.
  if (const std::string* netdev = ev.Field("ib_netdev"); dev && netdev) {
    KeepNic({ev.host, -1, -1, -1, *dev, pci ? *pci : "", false, *netdev});
    return;
  }
  const std::string* at = ev.Field("ib_index");
  if (dev && at && pci && ParseInt64(*at, &index)) {
    KeepNic({ev.host, ev.pid, ev.rank, index, *dev, *pci, false, ""});
    return;
  }
  if (const std::string* net = ev.Field("net_dev"); net && ParseInt64(*net, &index)) {
    KeepNic({ev.host, ev.pid, ev.rank, index, "", "", true, ""});
  }
}

namespace {

// A progress or metric line that names no rank, only its pid or local
// rank, takes the rank this source's own NCCL init and launcher lines tied
// to them (the correlator resolves the other lines so, but the per-rank
// step summaries and metric series are made here).
void ResolveProgressRank(const TopologyMap& topo, Evidence& ev) {
  if (ev.rank >= 0 || ev.host.empty() || (ev.pid < 0 && ev.local_rank < 0)) return;
  Attribution a;
  if (ev.pid >= 0) a.pid = ev.pid;
  if (ev.local_rank >= 0) a.local_rank = ev.local_rank;
  a.host = ev.host;
  if (topo.Resolve(a) && a.rank) ev.rank = *a.rank;
}

}  // namespace

// What earlier lines of the source stated (a failure entry's host and rank,
// a dump's pid, a describe section's pod, an environment dump's host) fills
// this line's unset fields; what this line states is kept for later lines
// (attribution/carry.h). ApplyCarry also keeps the links as topology.
CarryLinks Scanner::Impl::Carry(SourceState& st, Evidence& ev) {
  Attribution a;
  if (ev.rank >= 0) a.rank = ev.rank;
  if (ev.local_rank >= 0) a.local_rank = ev.local_rank;
  if (ev.pid >= 0) a.pid = ev.pid;
  a.host = ev.host;
  std::string pod;
  CarryLinks links = st.carry().Apply(ev.line, ev.fields, a, ev.Field("pod") ? nullptr : &pod);
  ev.rank = a.rank.value_or(-1);
  ev.local_rank = a.local_rank.value_or(-1);
  ev.pid = a.pid.value_or(-1);
  ev.host = a.host;
  if (!pod.empty()) ev.fields.emplace_back("pod", std::move(pod));
  return links;
}

void Scanner::Impl::ApplyCarry(SourceState& st, Evidence& ev) {
  // Nothing to give nor to learn (LineCarry::States): a dense log's
  // rank-naming matches skip the rest.
  if (st.CarryBlank() && !LineCarry::States(ev.fields)) return;
  CarryLinks links = Carry(st, ev);
  if (links.rank && !links.host.empty()) KeepDevice({links.host, *links.rank, -1, "", -1, true});
  if (links.rank && links.pid) KeepPid({links.host, *links.pid, *links.rank, links.local_rank.value_or(-1)});
  for (auto [local, global] : links.local_global) KeepDevice({links.host, global, local, "", -1, true});
  for (const auto& [host, ranks] : links.host_ranks) {
    for (size_t i = 0; i < ranks.size(); ++i) KeepDevice({host, ranks[i], static_cast<int64_t>(i), "", -1, true});
  }
  // Read whole above; the record keeps no copy of a whole job's mapping.
  std::erase_if(ev.fields, [](const auto& f) { return f.first == "rank_mapping"; });
}

// The lines before a byte range, read again so that a block, section or
// dump cut by the range's start reaches the range's first lines as in a
// scan of the whole file. Their evidence, counts and topology are the
// previous range's.
void Scanner::Impl::PrimeCarry(SourceState& st, ChunkOut& out) {
  const uint64_t first_line = st.lines + 1 - std::min(st.lines, out.newlines);
  for (Evidence& ev : out.evidence) {
    ev.line += first_line;
    (void)Carry(st, ev);
    const std::string* pod = ev.Field("pod");
    const std::string* node = ev.Field("node");
    if (pod && !node) st.pending_pod = *pod;
    if (node) st.pending_pod.clear();
  }
}

// What every record adds, whatever the caps do with it: the host of its
// pid, the match counts, the monotonic anchor, the per-rule counts and
// times, the pid link. Returns whether its rank is kept (evidence/distinct.h).
bool Scanner::Impl::CountMatch(SourceState& st, Evidence& ev, std::optional<int64_t> seq) {
  // A line naming only its pid (vLLM v0's "(VllmWorkerProcess pid=N)") is
  // on the host this file's own lines name that pid on (NCCL's
  // "host:pid:tid"); the correlator then finds its rank.
  if (ev.host.empty() && ev.pid >= 0) {
    if (auto h = st.TopoView().HostForPid(ev.pid)) ev.host = *h;
  }
  ++result.matches;
  ++SignalHitsOf(ev.signal);
  SourceSummary& sum = result.sources[st.index];
  if (ev.monotonic_s && ev.time_us != kNoTime && !sum.monotonic_anchor_us) {
    sum.monotonic_anchor_us = ev.time_us - static_cast<int64_t>(*ev.monotonic_s * 1e6);
  }
  if (opts.on_evidence) opts.on_evidence(ev, sum.name);
  // Per-rank and per-host state only for the ranks and hosts kept
  // (evidence/distinct.h): memory stays bounded whatever the logs name. A
  // source's lines mostly name one rank and one host, and admitting a key
  // admitted before changes nothing (its sketch register holds its bit, it
  // stays kept): the ranks below kAdmittedRankBits admitted before, and the
  // last rank and host, are not looked up again (a dense log's ranks take
  // turns, line by line: the last one alone missed nearly every time).
  const bool rank_kept = ev.rank < 0 || AdmittedBefore(ev.rank) || Admit(result.distinct_ranks, ev.rank);
  if (ev.rank >= 0 && rank_kept) NoteAdmitted(ev.rank);
  const bool host_kept = ev.host.empty() || ev.host == admitted_host_ || Admit(result.distinct_hosts, ev.host);
  if (host_kept && !ev.host.empty() && ev.host != admitted_host_) admitted_host_ = ev.host;
  RuleStats& stats = RuleStatsOf(ev.rule);
  CountInRuleStats(stats, ev, seq, rank_kept, false);
  // The host's count as CountInRuleStats makes it, through the rule's
  // memo of the host it counted last: a look-up in the map keyed by host
  // names was ~400 instructions a record on a 128-host archive.
  if (!ev.host.empty() && host_kept) {
    HostCount& hc = host_counts_[ev.rule];
    if (hc.count == nullptr || hc.host != ev.host) {
      hc.count = &stats.hosts[ev.host];
      hc.host = ev.host;
    }
    ++*hc.count;
  }
  return rank_kept;
}

void Scanner::Impl::KeepPidOf(SourceState& st, const Evidence& ev) {
  // A pid with its rank but no host (an srun -l environment dump) takes the
  // rank's host in the correlator.
  if (ev.pid >= 0 && (ev.rank >= 0 || ev.local_rank >= 0) && (!ev.host.empty() || ev.rank >= 0)) {
    KeepPid({ev.host, ev.pid, ev.rank, ev.local_rank});
    if (ev.rank >= 0) {
      st.topo().AddPid(ev.host, ev.pid, ev.rank);
    } else {
      st.topo().AddPidLocalRank(ev.host, ev.pid, ev.local_rank);
    }
  }
}

void Scanner::Impl::KeepCounted(SourceState& st, Evidence& ev) {
  (void)CountMatch(st, ev, std::nullopt);
  KeepPidOf(st, ev);
  st.keeper.Drop(ev.rule, result.dropped);
}

void Scanner::Impl::Keep(SourceState& st, Evidence&& ev, bool thin) {
  const SignalInfo& si = rs->signal(ev.signal);
  // A record the caps drop with no field (phase B keeps only the fields
  // Keep reads, so none of them) and nothing carried to it: the counts and
  // links below and nothing else -- not the look-ups of fields it lacks.
  if (thin && opts.counted_keep && ev.fields.empty() && st.CarryBlank() && si.role != SignalRole::Progress &&
      si.role != SignalRole::Metric) {
    KeepCounted(st, ev);
    return;
  }
  ApplyCarry(st, ev);
  int64_t n;
  std::optional<int64_t> seq;
  if (const std::string* f = ev.Field("seq"); f && ParseInt64(*f, &n)) seq = n;
  const bool rank_kept = CountMatch(st, ev, seq);
  // Topology and clock sync, from every line before any cap. An init line
  // names the rank inside its communicator (comm_rank); the [rankK]: prefix
  // or the path gives the global rank when present.
  const std::string* bus = ev.Field("bus_id");
  const std::string* dev = ev.Field("cuda_dev");
  if (bus) {
    int64_t comm_rank = -1, nranks = -1, d = -1;
    if (const std::string* cr = ev.Field("comm_rank")) (void)ParseInt64(*cr, &comm_rank);
    if (const std::string* nr = ev.Field("nranks")) (void)ParseInt64(*nr, &nranks);
    if (dev) (void)ParseInt64(*dev, &d);
    if (d < 0) d = ev.local_rank;
    bool global = ev.rank >= 0;
    int64_t rank = global ? ev.rank : comm_rank;
    if (rank >= 0) KeepDevice({ev.host, rank, d, *bus, nranks, global});
    if (rank >= 0 && (global || nranks >= st.topo_nranks)) {
      st.topo_nranks = std::max(st.topo_nranks, nranks);
      st.topo().AddDevice(ev.host, rank, d, *bus);
      // The world communicator's rank of the process that printed it (a
      // later, larger communicator overwrites a sub-group's rank).
      if (ev.pid >= 0) st.topo().AddPid(ev.host, ev.pid, rank);
    }
  }
  KeepPidOf(st, ev);
  KeepPlacement(st, ev);
  if (si.role == SignalRole::Context) KeepNics(ev);
  if (const std::string* comm = ev.Field("comm_id");
      comm && ev.time_us != kNoTime && ev.text.find("Init COMPLETE") != std::string::npos) {
    if (result.sync_points.size() < kMaxTopologyRecords) {
      result.sync_points.push_back({StrCat("nccl-init:", *comm), ev.host, ev.rank, ev.time_us});
    } else {
      result.topology_truncated = true;
    }
  }
  if (si.role == SignalRole::Progress) {
    if (ev.rank < 0) {
      ResolveProgressRank(st.TopoView(), ev);
      if (ev.rank >= 0 && !Admit(result.distinct_ranks, ev.rank)) return;
    } else if (!rank_kept) {
      return;
    }
    KeepProgress(st, std::move(ev));
    return;
  }
  if (si.role == SignalRole::Metric) {
    // A loss series is one process's: a journal's lines of many ranks,
    // pooled under "rank unknown", would interleave them.
    ResolveProgressRank(st.TopoView(), ev);
    if (KeepMetric(ev) && !opts.metric_evidence) {
      ++result.metric_points;
      return;
    }
    // A line phase B made without its text (ChunkOut::thin 2) whose series
    // is past kMaxMetricSeries -- its chunk finished phase B before the
    // merge reached the bound -- is kept as a record without its text.
  }
  if (thin) {
    st.keeper.Drop(ev.rule, result.dropped);
  } else {
    st.keeper.Add(std::move(ev), result.dropped);
  }
}

void Scanner::Impl::KeepPlacement(SourceState& st, const Evidence& ev) {
  const std::string* pod = ev.Field("pod");
  const std::string* node = ev.Field("node");
  if (!pod && !node) return;
  std::string alias;
  if (pod && node) {
    alias = *pod;
  } else if (pod) {
    st.pending_pod = *pod;
    return;
  } else {
    alias = std::move(st.pending_pod);
    st.pending_pod.clear();
  }
  if (alias.empty() || node->empty() || alias == *node) return;
  for (HostAlias& a : result.host_aliases) {
    if (a.alias == alias) {
      a.host = *node;  // the newest placement: a restarted pod moves
      return;
    }
  }
  if (result.host_aliases.size() < 1'000'000) result.host_aliases.push_back({alias, *node});
}

namespace {

// A number a progress line states; thousands separators ("tps: 6,321") go.
bool ProgressNumber(const Evidence& ev, const char* key, double* out) {
  const std::string* s = ev.Field(key);
  if (!s) return false;
  if (s->find(',') == std::string::npos) return ParseDouble(*s, out) && std::isfinite(*out);
  std::string digits;
  for (char c : *s) {
    if (c != ',') digits.push_back(c);
  }
  return ParseDouble(digits, out) && std::isfinite(*out);
}

// The step of a line that counts batches within an epoch (field `epoch`:
// Composer's `[epoch=2][batch=37/100]:`, Lightning's `Epoch 3/9 ... 74/100`):
// the batch restarts every epoch, so the step is the pair (epoch, batch) as
// one ordered number: epoch x total + batch when the line states the epoch's
// total, else the batch past the step its epoch started from, which grows by
// the previous epoch's last batch seen as each epoch begins (an epoch below
// the previous line's starts another run, from 0). Lines without an epoch
// keep their step.
int64_t EpochStep(const Evidence& ev, int64_t batch, EpochCount& prev) {
  const std::string* e = ev.Field("epoch");
  int64_t epoch, total;
  if (batch < 0 || !e || !ParseInt64(*e, &epoch) || epoch < 0) return batch;
  if (epoch > prev.epoch && prev.epoch >= 0) {
    prev.base += std::max<int64_t>(prev.batch, 0) * (epoch - prev.epoch);
  } else if (epoch < prev.epoch || prev.epoch < 0) {
    prev.base = 0;
  }
  prev.epoch = epoch;
  prev.batch = batch;
  const std::string* t = ev.Field("total");
  if (t && ParseInt64(*t, &total) && total > 0 && epoch < (int64_t{1} << 62) / total) return epoch * total + batch;
  return prev.base + batch;
}

}  // namespace

int64_t Scanner::Impl::LocalKey(const Evidence& ev) {
  if (ev.local_rank < 0 || ev.host.empty()) return -1;
  auto [it, fresh] = local_keys_.try_emplace({ev.host, ev.local_rank}, 0);
  if (fresh) it->second = -2 - static_cast<int64_t>(local_keys_.size() - 1);
  return it->second;
}

void Scanner::Impl::ResolveLocalKeys(ScanResult& r, std::map<int64_t, Evidence>& last) const {
  if (local_keys_.empty()) return;
  // The world communicator's device links (a sub-group's ranks are not
  // global), as the correlator reads them.
  int64_t world = -1;
  for (const DeviceLink& l : r.devices) world = std::max(world, l.nranks);
  TopologyMap topo;
  for (const DeviceLink& l : r.devices) {
    if (l.global || l.nranks == world) topo.AddDevice(l.host, l.rank, l.cuda_dev, l.bus_id);
  }
  for (const auto& [where, key] : local_keys_) {
    auto node = r.ranks.extract(key);
    if (node.empty()) continue;
    Attribution a;
    a.host = where.first;
    a.local_rank = where.second;
    int64_t rank = topo.Resolve(a) && a.rank ? *a.rank : -1;
    auto ev = last.extract(key);
    // Unresolved, or the rank already logs steps of its own (DeepSpeed's
    // `[Rank N] step=` beside its timer line, which names no rank): one
    // summary, so both kinds of line count for it.
    if (rank < 0 || r.ranks.count(rank)) {
      RankSummary& into = r.ranks[rank];
      MergeFrom(into, node.mapped());
      into.rank = rank;
      if (!ev.empty() && !last.count(rank)) {
        ev.mapped().rank = rank;
        last.emplace(rank, std::move(ev.mapped()));
      }
      continue;
    }
    node.key() = rank;
    node.mapped().rank = rank;
    r.ranks.insert(std::move(node));
    if (!ev.empty()) {
      ev.key() = rank;
      ev.mapped().rank = rank;
      last.insert(std::move(ev));
    }
  }
}

void Scanner::Impl::KeepProgress(SourceState& st, Evidence ev) {
  int64_t rank = ev.rank >= 0 ? ev.rank : LocalKey(ev);
  RankSummary& r = result.ranks[rank];
  r.rank = rank;
  r.AddHost(ev.host);
  ++r.progress_lines;
  int64_t step = -1;
  if (const std::string* s = ev.Field("step")) (void)ParseInt64(*s, &step);
  auto [prev, fresh] = st.rank_last_progress.try_emplace(rank);
  if (int64_t run = EpochStep(ev, step, prev->second.epochs); run != step) {
    step = run;
    ev.fields.emplace_back("run_step", std::to_string(step));
  }
  if (step >= 0) r.last_step = std::max(r.last_step, step);
  // The step time the line states, in seconds: a duration, else a rate in
  // iterations per second (tqdm).
  double step_time = -1, d;
  if (ProgressNumber(ev, "step_time_ms", &d) || ProgressNumber(ev, "elapsed_ms", &d)) step_time = d / 1000.0;
  if (ProgressNumber(ev, "step_time_s", &d) || ProgressNumber(ev, "s_per_it", &d)) step_time = d;
  if (step_time < 0 && ProgressNumber(ev, "it_per_s", &d) && d > 0) step_time = 1.0 / d;
  const bool stated_time = step_time > 0;
  double throughput = -1;
  if (ProgressNumber(ev, "throughput", &d) && d > 0) throughput = d;
  // The previous progress line of this rank in this source: a line of the
  // same step (DeepSpeed prints its step and its timer line for one step)
  // is no new step, and the interval since a line some steps back is
  // spread over those steps (Megatron logs every log_interval steps).
  const bool same_step = !fresh && step >= 0 && prev->second.step == step;
  const int64_t prev_step = fresh ? -1 : prev->second.step;
  if (ev.time_us != kNoTime) {
    if (r.first_progress_us == kNoTime || ev.time_us < r.first_progress_us) r.first_progress_us = ev.time_us;
    int64_t last = prev->second.time_us;
    if (step_time < 0 && throughput < 0 && !same_step && last != kNoTime && ev.time_us > last) {
      int64_t steps = step >= 0 && prev->second.step >= 0 && step > prev->second.step ? step - prev->second.step : 1;
      step_time = static_cast<double>(ev.time_us - last) / 1e6 / static_cast<double>(steps);
    }
    prev->second.time_us = ev.time_us;
    r.last_progress_us = std::max(r.last_progress_us, ev.time_us);
  }
  // A bar its printer redraws when closed (tqdm, field `closing_redraw`)
  // keeps the line of the previous one of this rank here when that one
  // stated another step: only the last progress line stays as evidence, so
  // this is how the correlator tells a bar that moved on after an error
  // from the redraw of the count it had reached (fallback.cc).
  if (ev.Field("closing_redraw") && step >= 0 && prev_step >= 0 && step != prev_step && prev->second.line > 0) {
    ev.fields.emplace_back("moved_from_line", std::to_string(prev->second.line));
  }
  if (step >= 0) prev->second.step = step;
  prev->second.line = ev.line;
  if (step_time >= 0 && !same_step) AddStepTime(r, step_time, StepSampleKey(ev.line, step, step_time));
  // A rate beside a stated step time adds nothing the detectors use.
  if (throughput > 0 && !stated_time) AddThroughput(r, throughput, StepSampleKey(ev.line, step, throughput));
  // Only what the line states goes into the per-step sample: intervals
  // between lines are the job's pace, the same on every rank of a
  // synchronous job.
  if (step >= 0 && (stated_time || throughput > 0)) {
    AddAlignedStep(r, step, stated_time ? step_time : 1.0 / throughput);
  }
  // Untimed lines: a step below the rank's last one in this source starts
  // another run (a restart resumed from a checkpoint), so the run before
  // it keeps its last progress line as evidence too: line order then tells
  // each attempt's step (correlate/attempts.cc).
  auto last = last_progress_.find(rank);
  if (ev.time_us == kNoTime && step >= 0 && step < prev_step && last != last_progress_.end() &&
      last->second.source == ev.source && last->second.time_us == kNoTime) {
    last->second.run_end = true;
    st.keeper.Add(std::move(last->second), result.dropped);
  }
  // The last progress line of each rank stays as evidence (hang reports).
  last_progress_[rank] = std::move(ev);
}

bool Scanner::Impl::KeepMetric(const Evidence& ev) {
  double v;
  const std::string* val = ev.Field("value");
  if (!val || !ParseDouble(*val, &v)) return false;
  std::string key = rs->rule(ev.rule)->id()->str();
  if (const std::string* m = ev.Field("metric")) StrAppend(&key, ":", *m);
  // Series are named by what the line says: a bound on how many.
  if (result.metrics.size() >= kMaxMetricSeries && !result.metrics.contains(key)) {
    result.metric_series_truncated = true;
    return false;
  }
  auto& series = result.metrics[key];
  if (result.metrics.size() >= kMaxMetricSeries) metric_series_full_.store(true, std::memory_order_relaxed);
  MetricPoint mp;
  mp.rank = ev.rank;
  if (const std::string* s = ev.Field("step")) (void)ParseInt64(*s, &mp.step);
  mp.time_us = ev.time_us;
  mp.value = v;
  mp.rule = ev.rule;
  mp.source = ev.source;
  mp.signal = ev.signal;
  mp.line = ev.line;
  mp.offset = ev.offset;
  series.push_back(mp);
  constexpr size_t kMaxSeries = 200'000;
  if (series.size() > kMaxSeries) {
    // Halve the resolution, keeping the newest point.
    std::vector<MetricPoint> half;
    half.reserve(series.size() / 2 + 1);
    for (size_t i = 0; i < series.size(); i += 2) half.push_back(series[i]);
    if (half.back().step != series.back().step) half.push_back(series.back());
    series.swap(half);
  }
  return true;
}

}  // namespace faultline
