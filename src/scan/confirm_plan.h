// What phase B must do for each signal's matches, decided once per scan from
// the ruleset: whether the Hyperscan match alone confirms the signal (no RE2
// run), and whether a match the per-rule caps are bound to drop still needs
// its extractors (for the uncapped statistics, topology and pid links Keep
// reads) or is only counted. Dense logs -- a context signal on most lines,
// NCCL INFO chatter -- spend most of their time on such matches.
#ifndef FAULTLINE_SCAN_CONFIRM_PLAN_H_
#define FAULTLINE_SCAN_CONFIRM_PLAN_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "ruleset/ruleset.h"

namespace faultline::internal {

// True when every match Hyperscan reports for `pattern` (compiled as the
// ruleset compiles it: byte mode, optionally caseless) lies inside one line
// without its '\r' and RE2 matches that line too. Conservative: only
// patterns built of printable ASCII literals, escaped punctuation,
// non-negated classes of printable ASCII, groups, alternation and
// quantifiers qualify -- nothing that can match '\n' or '\r', no anchors,
// word boundaries, shorthand classes, escapes by code or non-ASCII bytes,
// where the two engines could disagree.
bool HsMatchConfirms(std::string_view pattern);

// The fields a match the caps will drop keeps (Scanner::Impl::Keep reads
// them for topology and clock sync), and the captures that set its rank,
// pid or host: a signal whose extractors capture none of them is only
// counted when its match is dropped.
bool IsThinField(std::string_view name);
bool SetsAttribution(std::string_view name);

struct SignalPlan {
  bool hs_confirms = false;    // HsMatchConfirms(pattern), false when a prefilter stands in for it
  bool thin_extract = false;   // a dropped match still runs the extractors
};

// One plan per signal of `rs` (the RE2 objects of a signal are built only
// when its extractors' capture names are needed: signals with an `extract`).
std::vector<SignalPlan> PlanSignals(const Ruleset& rs);

}  // namespace faultline::internal

#endif  // FAULTLINE_SCAN_CONFIRM_PLAN_H_
