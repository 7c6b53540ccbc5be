// A hand parser for the commonest extract shape: literals with decimal
// numbers captured between them, e.g.
//   global rank: (?P<rank>[0-9]+), TIMEOUT\(ms\): (?P<timeout_ms>[0-9]+)
// chosen when a signal's regexes are built (SignalInfo::BuildRegex) and used
// instead of RE2 on every matched line. It answers exactly what
// RE2::PartialMatch would (tests/ruleset/digit_shape_test.cc), because the
// shape admits only patterns whose match at a start is unique: every capture
// is followed by the end or by a literal that does not start with a digit,
// so the greedy digit run is always taken whole.
#ifndef FAULTLINE_RULESET_DIGIT_SHAPE_H_
#define FAULTLINE_RULESET_DIGIT_SHAPE_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace faultline {

// At most this many captures (ExtractFields keeps their values on the stack).
constexpr size_t kMaxShapeCaptures = 8;

struct DigitShape {
  // literals.size() == captures.size() + 1; literals[0] is not empty.
  std::vector<std::string> literals;
  std::vector<std::string> captures;  // capture names, in group order
};

// The shape of a case-sensitive extract pattern, or nullopt when the pattern
// is anything else (then RE2 extracts).
std::optional<DigitShape> ParseDigitShape(std::string_view pattern);

// The leftmost match of `shape` in `subject`: the digit runs of its captures,
// in group order, in vals[0 .. captures.size()). False when there is none.
bool MatchDigitShape(const DigitShape& shape, std::string_view subject, std::string_view* vals);

}  // namespace faultline

#endif  // FAULTLINE_RULESET_DIGIT_SHAPE_H_
