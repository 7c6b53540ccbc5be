#include "evidence/merge.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <utility>

namespace faultline {

void TimeCarry::Advance(const TimeCarry& next) {
  if (next.time_us != kNoTime) {
    time_us = next.time_us;
    offset = next.offset;
    inferred = next.inferred;
  } else if (time_us != kNoTime) {
    time_us += next.unanchored_delta_us;
  } else {
    unanchored_delta_us += next.unanchored_delta_us;
  }
}

void TimeCarry::Give(Evidence& ev) const {
  if (!ev.needs_prev_time || ev.time_us != kNoTime) return;
  if (time_us == kNoTime) {
    ev.prev_delta_us += unanchored_delta_us;
    return;
  }
  ev.needs_prev_time = false;
  if (offset >= 0 && static_cast<uint64_t>(offset) + kInheritWindow >= ev.offset) {
    ev.time_us = time_us + ev.prev_delta_us;
    ev.time_source = ev.InheritedSource();
    ev.year_inferred = inferred;
  }
}

void AppendFollowing(SourceSummary& into, const SourceSummary& next) {
  into.bytes += next.bytes;
  if (into.first_time_us == kNoTime) {
    into.first_time_us = next.first_time_us;
    into.first_time_inferred = next.first_time_inferred;
  }
  TimeCarry carry = TimeCarry::AtEndOf(into);
  carry.Advance(TimeCarry::AtEndOf(next));
  carry.WriteTo(into);
  if (!into.monotonic_anchor_us) into.monotonic_anchor_us = next.monotonic_anchor_us;
  if (into.dated_us == kNoTime) into.dated_us = next.dated_us;
  into.failed = into.failed || next.failed;
  into.range_end = std::max(into.range_end, next.range_end);
  if (into.rank < 0) into.rank = next.rank;
  if (into.host.empty()) into.host = next.host;
  into.kernel_log = into.kernel_log || next.kernel_log;
}

void EvidenceKeeper::Add(Evidence ev, std::map<uint32_t, uint64_t>& dropped) {
  uint64_t& seen = seen_[ev.rule];
  ++seen;
  if (seen <= caps_.keep_first) {
    kept_.push_back(std::move(ev));
    return;
  }
  auto& tail = tail_[ev.rule];
  tail.push_back(std::move(ev));
  if (tail.size() > caps_.keep_last) {
    ++dropped[tail.front().rule];
    tail.pop_front();
  }
}

void EvidenceKeeper::Drop(uint32_t rule, std::map<uint32_t, uint64_t>& dropped) {
  ++seen_[rule];
  ++dropped[rule];
}

void EvidenceKeeper::TakeInto(std::vector<Evidence>& out) {
  for (auto& [rule, tail] : tail_) {
    for (Evidence& ev : tail) kept_.push_back(std::move(ev));
  }
  tail_.clear();
  seen_.clear();
  // Mostly in order already (the tails and a rank's last progress lines
  // come after): a stable sort would move every record through a buffer.
  auto by_offset = [](const Evidence& a, const Evidence& b) { return a.offset < b.offset; };
  if (!std::is_sorted(kept_.begin(), kept_.end(), by_offset)) {
    std::stable_sort(kept_.begin(), kept_.end(), by_offset);
  }
  out.insert(out.end(), std::make_move_iterator(kept_.begin()), std::make_move_iterator(kept_.end()));
  kept_.clear();
  kept_.shrink_to_fit();
}

void EvidenceKeeper::CopyInto(std::vector<Evidence>& out) const {
  size_t first = out.size();
  out.insert(out.end(), kept_.begin(), kept_.end());
  for (const auto& [rule, tail] : tail_) out.insert(out.end(), tail.begin(), tail.end());
  std::stable_sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                   [](const Evidence& a, const Evidence& b) { return a.offset < b.offset; });
}

namespace {

uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// One keyed reservoir of a RankSummary (step times or throughputs).
struct Reservoir {
  std::vector<double>& values;
  std::vector<uint64_t>& keys;
  uint64_t& key_max;
};

// A full reservoir is a max-heap on key (values moved alongside), so a
// sample that goes in costs log n, not two passes over the reservoir.
void SiftDown(Reservoir r, size_t i) {
  const size_t n = r.keys.size();
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) return;
    if (c + 1 < n && r.keys[c + 1] > r.keys[c]) ++c;
    if (r.keys[c] <= r.keys[i]) return;
    std::swap(r.keys[c], r.keys[i]);
    std::swap(r.values[c], r.values[i]);
    i = c;
  }
}

void Heapify(Reservoir r) {
  for (size_t i = r.keys.size() / 2; i-- > 0;) SiftDown(r, i);
  r.key_max = r.keys.empty() ? 0 : r.keys[0];
}

void AddSample(Reservoir r, double value, uint64_t key) {
  // Bundles of an older writer carry no keys: their samples are keyed by
  // position.
  while (r.keys.size() < r.values.size()) r.keys.push_back(StepSampleKey(r.keys.size(), -2, 0));
  if (r.values.size() < kStepReservoir) {
    r.values.push_back(value);
    r.keys.push_back(key);
    if (r.values.size() == kStepReservoir) Heapify(r);
    return;
  }
  // key_max 0: not a heap yet (a merge or a bundle filled it).
  if (r.key_max == 0) Heapify(r);
  // Ties keep the sample already there: equal keys mean equal values.
  if (key >= r.key_max) return;
  r.keys[0] = key;
  r.values[0] = value;
  SiftDown(r, 0);
  r.key_max = r.keys[0];
}

// The union of both reservoirs, cut to the smallest keys: the reservoir a
// single pass over both inputs keeps.
void MergeSamples(Reservoir into, const std::vector<double>& values, const std::vector<uint64_t>& keys) {
  std::vector<std::pair<uint64_t, double>> all;
  auto add = [&](const std::vector<double>& v, const std::vector<uint64_t>& k) {
    for (size_t i = 0; i < v.size(); ++i) {
      all.emplace_back(i < k.size() ? k[i] : StepSampleKey(i, -2, 0), v[i]);
    }
  };
  add(into.values, into.keys);
  add(values, keys);
  if (all.size() > kStepReservoir) {
    std::nth_element(all.begin(), all.begin() + kStepReservoir, all.end());
    all.resize(kStepReservoir);
  }
  into.values.clear();
  into.keys.clear();
  for (const auto& [key, value] : all) {
    into.keys.push_back(key);
    into.values.push_back(value);
  }
  into.key_max = 0;
}

}  // namespace

uint64_t StepSampleKey(uint64_t line, int64_t step, double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  // Never 0, which step_key_max reserves for "not computed".
  return Mix(Mix(line) ^ Mix(static_cast<uint64_t>(step) + 0x9E3779B97F4A7C15ull) ^ bits) | 1;
}

uint64_t StepKey(int64_t step) { return Mix(static_cast<uint64_t>(step) ^ 0xD1B54A32D192ED03ull); }

void AddStepTime(RankSummary& r, double step_time, uint64_t key) {
  ++r.step_samples;
  r.step_time_sum += step_time;
  r.step_time_sumsq += step_time * step_time;
  AddSample({r.step_time_reservoir, r.step_time_keys, r.step_key_max}, step_time, key);
}

void AddThroughput(RankSummary& r, double throughput, uint64_t key) {
  ++r.throughput_samples;
  AddSample({r.throughput_reservoir, r.throughput_keys, r.throughput_key_max}, throughput, key);
}

namespace {

bool KeyLess(const RankSummary::AlignedStep& a, const RankSummary::AlignedStep& b) {
  return a.key != b.key ? a.key < b.key : a.step < b.step;
}

}  // namespace

void AddAlignedStep(RankSummary& r, int64_t step, double cost) {
  auto& a = r.aligned_steps;
  if (a.size() < kAlignedSteps) {
    // Lines come in step order: a step logged twice is the last one added.
    if (!a.empty() && a.back().step == step) {
      a.back().cost = std::max(a.back().cost, cost);
      return;
    }
    a.push_back({StepKey(step), step, cost});
    if (a.size() == kAlignedSteps) std::make_heap(a.begin(), a.end(), KeyLess);
    return;
  }
  // Full: a max-heap on key; most steps stop at its top.
  RankSummary::AlignedStep s{StepKey(step), step, cost};
  if (!KeyLess(s, a.front())) {
    if (a.front().step == step) a.front().cost = std::max(a.front().cost, cost);
    return;
  }
  // It goes in (rarely, for a long run): unless it is there already.
  for (auto& e : a) {
    if (e.step == step) {
      e.cost = std::max(e.cost, cost);
      return;
    }
  }
  std::pop_heap(a.begin(), a.end(), KeyLess);
  a.back() = s;
  std::push_heap(a.begin(), a.end(), KeyLess);
}

std::vector<std::pair<int64_t, double>> AlignedBySteps(const RankSummary& r) {
  std::vector<std::pair<int64_t, double>> out;
  out.reserve(r.aligned_steps.size());
  for (const auto& s : r.aligned_steps) out.emplace_back(s.step, s.cost);
  std::sort(out.begin(), out.end());
  // Sorted by (step, cost): the last of equal steps has the largest cost.
  size_t n = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (n > 0 && out[n - 1].first == out[i].first) {
      out[n - 1].second = out[i].second;
    } else {
      out[n++] = out[i];
    }
  }
  out.resize(n);
  return out;
}

void MergeFrom(RankSummary& into, const RankSummary& from) {
  into.several_hosts |= from.several_hosts;
  into.AddHost(from.host);
  into.progress_lines += from.progress_lines;
  if (into.first_progress_us == kNoTime ||
      (from.first_progress_us != kNoTime && from.first_progress_us < into.first_progress_us)) {
    into.first_progress_us = from.first_progress_us;
  }
  into.last_progress_us = std::max(into.last_progress_us, from.last_progress_us);
  into.last_step = std::max(into.last_step, from.last_step);
  MergeSamples({into.step_time_reservoir, into.step_time_keys, into.step_key_max}, from.step_time_reservoir,
               from.step_time_keys);
  into.step_samples += from.step_samples;
  into.step_time_sum += from.step_time_sum;
  into.step_time_sumsq += from.step_time_sumsq;
  MergeSamples({into.throughput_reservoir, into.throughput_keys, into.throughput_key_max},
               from.throughput_reservoir, from.throughput_keys);
  into.throughput_samples += from.throughput_samples;
  // The smallest keys of both samples' distinct steps: the sample a single
  // pass over both inputs keeps.
  std::vector<std::pair<int64_t, double>> both = AlignedBySteps(into), more = AlignedBySteps(from);
  both.insert(both.end(), more.begin(), more.end());
  RankSummary merged;
  merged.aligned_steps.reserve(both.size());
  std::sort(both.begin(), both.end());
  for (size_t i = 0; i < both.size(); ++i) {
    if (i + 1 < both.size() && both[i + 1].first == both[i].first) continue;  // keep the largest cost
    merged.aligned_steps.push_back({StepKey(both[i].first), both[i].first, both[i].second});
  }
  auto& m = merged.aligned_steps;
  if (m.size() > kAlignedSteps) {
    std::nth_element(m.begin(), m.begin() + kAlignedSteps, m.end(), KeyLess);
    m.resize(kAlignedSteps);
  }
  if (m.size() == kAlignedSteps) std::make_heap(m.begin(), m.end(), KeyLess);
  into.aligned_steps = std::move(m);
}

void CountInRuleStats(RuleStats& st, const Evidence& ev, std::optional<int64_t> seq, bool rank_kept,
                      bool host_kept) {
  ++st.count;
  if (ev.rank >= 0 && rank_kept) ++st.ranks[ev.rank];
  if (!ev.host.empty() && host_kept) ++st.hosts[ev.host];
  if (ev.time_us != kNoTime) {
    if (st.first_time_us == kNoTime || ev.time_us < st.first_time_us) st.first_time_us = ev.time_us;
    if (st.last_time_us == kNoTime || ev.time_us > st.last_time_us) st.last_time_us = ev.time_us;
  }
  if (seq && ev.rank >= 0 && rank_kept) {
    auto [it, fresh] = st.rank_min_seq.emplace(ev.rank, *seq);
    if (!fresh) it->second = std::min(it->second, *seq);
  }
}

void MergeFrom(RuleStats& into, const RuleStats& from) {
  into.count += from.count;
  for (const auto& [rank, n] : from.ranks) into.ranks[rank] += n;
  for (const auto& [host, n] : from.hosts) into.hosts[host] += n;
  for (const auto& [rank, seq] : from.rank_min_seq) {
    auto [it, fresh] = into.rank_min_seq.emplace(rank, seq);
    if (!fresh) it->second = std::min(it->second, seq);
  }
  if (into.first_time_us == kNoTime ||
      (from.first_time_us != kNoTime && from.first_time_us < into.first_time_us)) {
    into.first_time_us = from.first_time_us;
  }
  if (from.last_time_us != kNoTime &&
      (into.last_time_us == kNoTime || from.last_time_us > into.last_time_us)) {
    into.last_time_us = from.last_time_us;
  }
}

}  // namespace faultline
