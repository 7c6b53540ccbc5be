// Distinct ranks and hosts with a bound on memory. A scan keeps per-rank
// and per-host breakdowns (rule statistics, progress summaries, topology)
// for the first kMaxKeptRanks ranks and kMaxKeptHosts hosts it meets, in
// source then offset order (so the same for any thread count and any split
// into bundles merged in order); every one met past those is still counted,
// exactly while nothing was turned away, else estimated by a HyperLogLog
// sketch (4 KiB, about 1.6% standard error). A log naming two million ranks
// thus costs what 65,536 cost, and the report says what was capped.
//
// Thread-safety: plain values and functions; no synchronisation.
#ifndef FAULTLINE_EVIDENCE_DISTINCT_H_
#define FAULTLINE_EVIDENCE_DISTINCT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "evidence/evidence.h"

namespace faultline {

// Registers of the sketch: 2^kSketchBits one-byte registers.
inline constexpr int kSketchBits = 12;
inline constexpr size_t kSketchRegisters = size_t{1} << kSketchBits;

// Fixed hashes (never seeded per process: sketches travel in bundles).
uint64_t DistinctHash(int64_t key);
uint64_t DistinctHash(std::string_view key);

// Counts `hash` in the sketch, and keeps `key` when it is kept already or
// there is room; returns whether its breakdown is kept.
bool Admit(DistinctRanks& d, int64_t rank);
bool Admit(DistinctHosts& d, const std::string& host);

// Distinct keys met: exact (kept.size()) unless some were turned away, else
// the sketch's estimate (never below kept.size() + 1).
uint64_t SeenCount(const DistinctRanks& d);
uint64_t SeenCount(const DistinctHosts& d);

// `from` (a later piece of input) into `into`: kept keys in `from`'s order
// while there is room, sketches combined.
void MergeFrom(DistinctRanks& into, const DistinctRanks& from);
void MergeFrom(DistinctHosts& into, const DistinctHosts& from);

}  // namespace faultline

#endif  // FAULTLINE_EVIDENCE_DISTINCT_H_
