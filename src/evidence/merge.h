// How what a scan keeps combines: the one rule for each summary, used both
// by the scanner (chunks of a source into the source, evidence into the
// result) and by MergeScans (bundles of byte ranges and whole files into one
// result), so that merged bundles equal one session by construction.
//  - TimeCarry: the time a stamp-less line inherits from the source's bytes
//    before it, carried across chunk and range boundaries.
//  - AppendFollowing: a source's summary extended by its next piece.
//  - EvidenceKeeper: the per-rule caps (first keep_first, last keep_last of
//    each rule in each source, progress records aside).
//  - MergeFrom: per-rank and per-rule statistics added up, including a
//    step-time reservoir whose sample does not depend on how the input was
//    split.
//
// Thread-safety: plain values and functions; no synchronisation.
#ifndef FAULTLINE_EVIDENCE_MERGE_H_
#define FAULTLINE_EVIDENCE_MERGE_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "evidence/evidence.h"

namespace faultline {

// Evidence kept per rule and source: the first `keep_first` and the last
// `keep_last` records; counts stay exact past the cap.
struct EvidenceCaps {
  size_t keep_first = 2000;
  size_t keep_last = 500;
};

// The end of what has been read of a source (or of one piece of it): the
// last wall time in force, where the line giving it starts, and, while no
// line had a stamp yet, the sum of dmesg -H deltas seen.
struct TimeCarry {
  int64_t time_us = kNoTime;
  int64_t offset = -1;
  bool inferred = false;  // the stamp had no year
  int64_t unanchored_delta_us = 0;

  static TimeCarry AtEndOf(const SourceSummary& s) {
    return {s.last_time_us, s.last_time_offset, s.last_time_inferred, s.unanchored_delta_us};
  }
  void WriteTo(SourceSummary& s) const {
    s.last_time_us = time_us;
    s.last_time_offset = offset;
    s.last_time_inferred = inferred;
    s.unanchored_delta_us = unanchored_delta_us;
  }
  // Moves past the next piece of the same source, which ended as `next` says.
  void Advance(const TimeCarry& next);
  // Evidence of the next piece that found no time in it (needs_prev_time)
  // takes the carried time when the stamped line is within kInheritWindow.
  // Once the source's time before the piece is known the question is
  // settled either way; until then the piece's dmesg -H deltas add up.
  void Give(Evidence& ev) const;
};

// `into` (a source's summary so far) extended by the summary of the bytes
// that follow it in the same source: a chunk, or the next byte range.
// Lines are left to the caller (a chunk may end inside a line).
void AppendFollowing(SourceSummary& into, const SourceSummary& next);

// The per-rule caps of one source. Records arrive in source order.
class EvidenceKeeper {
 public:
  explicit EvidenceKeeper(EvidenceCaps caps) : caps_(caps) {}
  // Keeps ev or pushes out an older record of its rule, counted in dropped.
  void Add(Evidence ev, std::map<uint32_t, uint64_t>& dropped);
  // Counts a record of `rule` the caps are bound to drop (at least keep_last
  // records of its rule follow it, and keep_first came before it) without
  // moving it through the tail: what is kept and the dropped counts are as
  // with Add.
  void Drop(uint32_t rule, std::map<uint32_t, uint64_t>& dropped);
  // Room for up to `n` records to come, when nothing is kept yet: a
  // source's first chunk says how many records it brings, and a small
  // file's records then go in without the vector's regrowth moving them.
  void ReserveFirst(size_t n) {
    if (kept_.capacity() == 0) kept_.reserve(std::min<size_t>(n, 64));
  }
  // Appends what is kept to `out`, in offset order, and starts over.
  void TakeInto(std::vector<Evidence>& out);
  // Appends a copy of what is kept so far to `out`, in offset order, and
  // keeps it: a snapshot of a source that is still being read.
  void CopyInto(std::vector<Evidence>& out) const;

 private:
  EvidenceCaps caps_;
  std::vector<Evidence> kept_;
  std::map<uint32_t, uint64_t> seen_;
  std::map<uint32_t, std::deque<Evidence>> tail_;
};

// One step-time sample of a rank's progress line. The reservoir keeps the
// kStepReservoir samples of smallest key, the key a hash of the line and the
// value, so that it is the same sample however the lines were split across
// scans and merged.
inline constexpr size_t kStepReservoir = 512;
uint64_t StepSampleKey(uint64_t line, int64_t step, double value);
void AddStepTime(RankSummary& r, double step_time, uint64_t key);
void AddThroughput(RankSummary& r, double throughput, uint64_t key);
// The aligned per-step sample (RankSummary::aligned_steps): the steps of
// smallest StepKey, a step logged twice in a row keeping its largest cost.
inline constexpr size_t kAlignedSteps = 256;
uint64_t StepKey(int64_t step);
void AddAlignedStep(RankSummary& r, int64_t step, double cost);
// The sample as (step, cost) by step, a step held twice once (largest cost).
std::vector<std::pair<int64_t, double>> AlignedBySteps(const RankSummary& r);
void MergeFrom(RankSummary& into, const RankSummary& from);

// A confirmed match counted in its rule's uncapped statistics.
// Its rank's (host's) counts only when that rank (host) is kept
// (evidence/distinct.h); the rule's count always.
void CountInRuleStats(RuleStats& st, const Evidence& ev, std::optional<int64_t> seq,
                      bool rank_kept = true, bool host_kept = true);
void MergeFrom(RuleStats& into, const RuleStats& from);

}  // namespace faultline

#endif  // FAULTLINE_EVIDENCE_MERGE_H_
