// Static checks on signal patterns, before any engine sees them: a pattern
// must stay inside one line (the scanner attributes a match to the line it
// ends on), must not carry large bounded repeats (they explode Hyperscan's
// compile memory), and should carry a literal that keeps the scan selective.
#ifndef FAULTLINE_RULESET_PATTERN_CHECK_H_
#define FAULTLINE_RULESET_PATTERN_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"

namespace faultline {

// Rejects constructs that can match a newline: \s \W \D \H \V \R \n \r \v
// \x0a \x0d \f, (?s), and negated classes that do not exclude \n. Rejects
// {n,m} and {n} repeats with a bound above max_repeat.
absl::Status CheckPatternSingleLine(std::string_view pattern, size_t max_repeat);

// Length of the longest run of literal characters (outside classes, groups'
// alternations counted per branch), a cheap proxy for selectivity.
size_t LongestLiteral(std::string_view pattern);

// FNV-1a 64, a checksum of the serialized database.
uint64_t Fnv1a64(std::string_view data);

}  // namespace faultline

#endif  // FAULTLINE_RULESET_PATTERN_CHECK_H_
