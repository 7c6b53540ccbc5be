// RE2's answer for an extract, the reference the hand parsers of
// ruleset/digit_shape.h and TailRun are checked against.
#ifndef FAULTLINE_TESTS_RULESET_RE2_GROUPS_H_
#define FAULTLINE_TESTS_RULESET_RE2_GROUPS_H_

#include <optional>
#include <string_view>
#include <vector>

#include "re2/re2.h"

namespace faultline::testing {

// RE2's groups in order (a null piece for a group that did not take part),
// or nullopt when it does not match.
inline std::optional<std::vector<re2::StringPiece>> Re2Groups(const RE2& re, std::string_view s) {
  const int n = re.NumberOfCapturingGroups();
  std::vector<re2::StringPiece> vals(n);
  std::vector<RE2::Arg> args(n);
  std::vector<const RE2::Arg*> argp(n);
  for (int k = 0; k < n; ++k) {
    args[k] = &vals[k];
    argp[k] = &args[k];
  }
  if (!RE2::PartialMatchN(re2::StringPiece(s.data(), s.size()), re, argp.data(), n)) return std::nullopt;
  return vals;
}

}  // namespace faultline::testing

#endif  // FAULTLINE_TESTS_RULESET_RE2_GROUPS_H_
