// Evidence index pass: one walk over the evidence, after the passes that
// change it (attribution, clocks), collects what the later passes look up:
// layer per line, per-source spans, announced addresses, the lines of
// progress, metric, termination and checkpoint rules, and the job's known
// ranks and hosts.
#include <algorithm>

#include "correlate/state.h"
#include "util/strings.h"

namespace faultline::internal {
namespace {

void Widen(int64_t t, int64_t& lo, int64_t& hi) {
  if (lo == kNoTime || t < lo) lo = t;
  if (hi == kNoTime || t > hi) hi = t;
}

// The ranks of the job: every rank a line, summary, source or world
// communicator names, and 0..nranks-1 when a line states a larger size.
void CollectKnownRanks(CorrelationState& st, int64_t nranks) {
  EvidenceIndex& ix = st.index;
  for (const auto& [rank, r] : st.scan.ranks) {
    if (rank >= 0) ix.known_ranks.insert(rank);
  }
  const std::string* last_host = nullptr;  // a run of one host's sources is one insert
  for (const SourceSummary& s : st.scan.sources) {
    if (s.rank >= 0) ix.known_ranks.insert(s.rank);
    if (!s.host.empty() && !(last_host && *last_host == s.host)) {
      ix.known_hosts.insert(s.host);
      last_host = &s.host;
    }
  }
  for (const DeviceLink& l : st.scan.devices) {
    if (l.global || l.nranks == st.world_nranks) ix.known_ranks.insert(l.rank);
  }
  if (nranks > static_cast<int64_t>(ix.known_ranks.size())) {
    for (int64_t r = 0; r < nranks; ++r) ix.known_ranks.insert(r);
  }
  st.diag.ranks = ix.known_ranks.size();
  st.diag.hosts = ix.known_hosts.size();
}

// Whether progress line `ev` is in the run's last epoch, where it names an
// epoch (field `epoch`): a bar per epoch (`Epoch 3/10: ... 74/74`,
// Lightning's `Epoch 3: ... 74/74`) reaches its total every epoch, so only
// the bar whose epoch equals the number of epochs it states (`epochs`) ends
// the run; an epoch with no count of them may be any. A line that names no
// epoch counts the whole run.
bool InLastEpoch(const Evidence& ev) {
  const std::string* epoch = ev.Field("epoch");
  if (!epoch) return true;
  const std::string* epochs = ev.Field("epochs");
  int64_t e, n;
  return epochs && ParseInt64(*epoch, &e) && ParseInt64(*epochs, &n) && e == n;
}

// Whether progress line `ev` states the last step of what it counts: its
// step equals its total (field `total`), a loop of more than one step, in
// the last epoch.
bool AtTotal(const Evidence& ev) {
  const std::string* step = ev.Field("step");
  const std::string* total = ev.Field("total");
  int64_t s, t;
  return step && total && ParseInt64(*step, &s) && ParseInt64(*total, &t) && t > 1 && s == t &&
         InLastEpoch(ev);
}

// Index::progress_done: the latest of the ranks' last progress lines when
// each of them reached its total.
const Evidence* ProgressDone(const CorrelationState& st) {
  const Evidence* done = nullptr;
  for (const auto& [rank, i] : st.index.last_progress) {
    const Evidence& ev = st.evs[i];
    if (!AtTotal(ev)) return nullptr;
    if (!done || (ev.time_us != kNoTime && ev.time_us > done->time_us)) done = &ev;
  }
  return done;
}

}  // namespace

void BuildEvidenceIndex(CorrelationState& st) {
  EvidenceIndex& ix = st.index;
  ix.hardware.assign(st.evs.size(), false);
  ix.sources.assign(st.scan.sources.size(), SourceSpan{});
  int64_t nranks = 0;
  // A run of one host's lines (the evidence is in source order) is one
  // insert into known_hosts, not one per line.
  const std::string* last_host = nullptr;
  for (size_t i = 0; i < st.evs.size(); ++i) {
    const Evidence& ev = st.evs[i];
    bool hw = HardwareLayer(st.rs.rule(ev.rule)->layer());
    ix.hardware[i] = hw;
    SourceSpan& span = ix.sources[ev.source];
    ++(hw ? span.hw_lines : span.other_lines);
    if (ev.time_us != kNoTime) {
      Widen(ev.time_us, hw ? span.hw_min : span.app_min, hw ? span.hw_max : span.app_max);
    }
    if (const std::string* a = ev.Field("addr"); a && !ev.host.empty()) {
      ix.addr_host.emplace(BareAddress(*a), ev.host);
    }
    if (!ev.host.empty()) ix.host_of_rank.try_emplace(ev.rank, ev.host);  // no node when known
    SignalRole role = st.rs.signal(ev.signal).role;
    if (role == SignalRole::Progress) {
      ix.last_progress[ev.rank] = i;
      ix.progress[ev.rank].push_back(i);
    }
    if (role == SignalRole::Metric) ix.metrics[ev.rank].push_back(i);
    if (st.HasRole(ev.rule, RuleRole::kServed)) ix.last_served[ev.source] = i;
    if (st.HasRole(ev.rule, RuleRole::kCarriedOn)) {
      ix.last_carried_on[ev.source] = i;
      if (ev.Field("next_step")) {
        uint64_t& n = ix.last_next_step.try_emplace(ev.source, ev.offset).first->second;
        n = std::max(n, ev.offset);
      }
    }
    if (role == SignalRole::Initiating || st.HasRole(ev.rule, RuleRole::kFallback)) {
      uint64_t& f = ix.last_failure.try_emplace(ev.source, ev.offset).first->second;
      f = std::max(f, ev.offset);
    }
    if (ev.Field("stops_workers")) ix.workers_stopped[ev.source].push_back(ev.line);
    if (!ix.first_termination && st.HasRole(ev.rule, RuleRole::kTermination)) {
      ix.first_termination = &ev;
    }
    if (!ix.first_completion && st.HasRole(ev.rule, RuleRole::kCompletion)) {
      ix.first_completion = &ev;
    }
    if (!ix.first_interrupt && ev.Field("interrupt")) ix.first_interrupt = &ev;
    if (ev.Field("first_failure")) ix.first_failure_marks.push_back(i);
    if (ev.time_us != kNoTime && st.HasRole(ev.rule, RuleRole::kCheckpointSaved) &&
        (ix.last_checkpoint_us == kNoTime || ev.time_us >= ix.last_checkpoint_us)) {
      ix.last_checkpoint_us = ev.time_us;
      ix.last_checkpoint_host = ev.host;
    }
    if (ev.time_us == kNoTime && st.HasRole(ev.rule, RuleRole::kCheckpointSaved) && !ev.Field("save_start")) {
      ix.last_untimed_checkpoint[ev.source] = &ev;  // the evidence is in source-then-offset order
    }
    if (ev.rank >= 0) ix.known_ranks.insert(ev.rank);
    if (!ev.host.empty() && !(last_host && *last_host == ev.host)) {
      ix.known_hosts.insert(ev.host);
      last_host = &ev.host;
    }
    if (!ev.host.empty() && !span.several_hosts && span.own_host != ev.host && !ev.Field("peer")) {
      if (span.own_host.empty()) {
        span.own_host = ev.host;
      } else if (NormalizeHost(span.own_host) != NormalizeHost(ev.host)) {
        span.own_host.clear();
        span.several_hosts = true;
      }
    }
    // The scheduler's list of the job's nodes (scontrol's NodeList=): hosts
    // of the job even when none of their logs were collected.
    if (const std::string* nl = ev.Field("nodelist")) {
      for (const std::string& h : ExpandNodelist(*nl)) {
        if (std::string n = NormalizeHost(h); !n.empty()) ix.known_hosts.insert(n);
      }
    }
    if (const std::string* n = ev.Field("nranks")) {
      int64_t v;
      if (ParseInt64(*n, &v) && v > 0 && v < 10'000'000) nranks = std::max(nranks, v);
    }
  }
  ix.progress_done = ProgressDone(st);
  CollectKnownRanks(st, nranks);
}

}  // namespace faultline::internal
