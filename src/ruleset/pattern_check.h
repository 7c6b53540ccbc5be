// Static checks on signal patterns, before any engine sees them: a pattern
// must stay inside one line (the scanner attributes a match to the line it
// ends on), must not carry large bounded repeats (they explode Hyperscan's
// compile memory), and should carry a literal that keeps the scan selective.
#ifndef FAULTLINE_RULESET_PATTERN_CHECK_H_
#define FAULTLINE_RULESET_PATTERN_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace faultline {

// Rejects constructs that can match a newline: \s \W \D \H \V \R \n \r \v
// \x0a \x0d \f, (?s), and negated classes that do not exclude \n. Rejects
// {n,m} and {n} repeats with a bound above max_repeat.
absl::Status CheckPatternSingleLine(std::string_view pattern, size_t max_repeat);

// The sum of the upper bounds of a pattern's bounded repeats outside
// character classes ({n} and {n,m} count their largest bound, {n,} its n),
// times the bounds of the repeated groups they sit in: roughly how many
// positions Hyperscan unrolls. Each bound may be small while the sum is not
// -- "[a-z]{0,30}" 120 times compiles for seconds per pattern.
size_t BoundedRepeatTotal(std::string_view pattern);

// Length of the longest run of literal characters (outside classes, groups'
// alternations counted per branch), a cheap proxy for selectivity.
size_t LongestLiteral(std::string_view pattern);

// FNV-1a 64, a checksum of the serialized database; `h` continues a running
// checksum. An unkeyed checksum: it detects damage, never tampering.
inline constexpr uint64_t kFnvOffset = 14695981039346656037ull;
// The offset basis files were written with before it was corrected (one
// digit short): the loader recognises their checksums (see Ruleset::Init).
inline constexpr uint64_t kLegacyFnvOffset = 1469598103934665603ull;
uint64_t Fnv1a64(std::string_view data, uint64_t h = kFnvOffset);

// One signal's step of Ruleset.patterns_checksum: its pattern, extract and
// caseless flag, each field terminated so that moving bytes between fields
// changes the sum. Start from kFnvOffset (or kLegacyFnvOffset to check an
// older file); never returns 0 for a non-empty
// ruleset in practice (0 marks "no checksum").
uint64_t SignalsChecksumStep(uint64_t h, std::string_view pattern,
                             const std::vector<std::string_view>& extracts, bool caseless);

}  // namespace faultline

#endif  // FAULTLINE_RULESET_PATTERN_CHECK_H_
