#include "evidence/merge.h"

#include <algorithm>
#include <cstring>
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

void EvidenceKeeper::TakeInto(std::vector<Evidence>& out) {
  for (auto& [rule, tail] : tail_) {
    for (Evidence& ev : tail) kept_.push_back(std::move(ev));
  }
  tail_.clear();
  seen_.clear();
  std::stable_sort(kept_.begin(), kept_.end(),
                   [](const Evidence& a, const Evidence& b) { return a.offset < b.offset; });
  for (Evidence& ev : kept_) out.push_back(std::move(ev));
  kept_.clear();
  kept_.shrink_to_fit();
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

void RecomputeKeyMax(Reservoir r) {
  r.key_max = r.keys.empty() ? 0 : *std::max_element(r.keys.begin(), r.keys.end());
}

void AddSample(Reservoir r, double value, uint64_t key) {
  // Bundles of an older writer carry no keys: their samples are keyed by
  // position.
  while (r.keys.size() < r.values.size()) r.keys.push_back(StepSampleKey(r.keys.size(), -2, 0));
  if (r.values.size() < kStepReservoir) {
    r.values.push_back(value);
    r.keys.push_back(key);
    if (r.values.size() == kStepReservoir) RecomputeKeyMax(r);
    return;
  }
  if (r.key_max == 0) RecomputeKeyMax(r);
  // Ties keep the sample already there: equal keys mean equal values.
  if (key >= r.key_max) return;
  size_t at = static_cast<size_t>(std::max_element(r.keys.begin(), r.keys.end()) - r.keys.begin());
  r.keys[at] = key;
  r.values[at] = value;
  RecomputeKeyMax(r);
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

bool AlignedLess(const std::pair<int64_t, double>& a, const std::pair<int64_t, double>& b) {
  return a.first < b.first;
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

void AddAlignedStep(RankSummary& r, int64_t step, double cost) {
  auto& a = r.aligned_steps;
  auto it = std::lower_bound(a.begin(), a.end(), std::make_pair(step, 0.0), AlignedLess);
  if (it != a.end() && it->first == step) {
    it->second = std::max(it->second, cost);
    return;
  }
  uint64_t key = StepKey(step);
  auto key_less = [](const std::pair<int64_t, double>& x, const std::pair<int64_t, double>& y) {
    return StepKey(x.first) < StepKey(y.first);
  };
  if (a.size() >= kAlignedSteps) {
    // The full sample drops its largest key, unless this one is larger:
    // most steps stop at the cached bound.
    if (r.aligned_key_max == 0) r.aligned_key_max = StepKey(std::max_element(a.begin(), a.end(), key_less)->first);
    if (key >= r.aligned_key_max) return;
    a.erase(std::max_element(a.begin(), a.end(), key_less));
    it = std::lower_bound(a.begin(), a.end(), std::make_pair(step, 0.0), AlignedLess);
    r.aligned_key_max = 0;
  }
  a.insert(it, {step, cost});
}

void MergeFrom(RankSummary& into, const RankSummary& from) {
  if (into.host.empty()) into.host = from.host;
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
  for (const auto& [step, cost] : from.aligned_steps) AddAlignedStep(into, step, cost);
}

void CountInRuleStats(RuleStats& st, const Evidence& ev, std::optional<int64_t> seq) {
  ++st.count;
  if (ev.rank >= 0) ++st.ranks[ev.rank];
  if (!ev.host.empty()) ++st.hosts[ev.host];
  if (ev.time_us != kNoTime) {
    if (st.first_time_us == kNoTime || ev.time_us < st.first_time_us) st.first_time_us = ev.time_us;
    if (st.last_time_us == kNoTime || ev.time_us > st.last_time_us) st.last_time_us = ev.time_us;
  }
  if (seq && ev.rank >= 0) {
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
