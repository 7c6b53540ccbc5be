// Slurm's compressed host lists ("gpu-[001-004,017]", "node[1-3],login1",
// "a[1-2]-b[3-4]"), as scontrol, sacct, squeue and SLURM_JOB_NODELIST print
// them, expanded to one name per host. Bounded: a list that would expand to
// more than kMaxHosts names is refused (empty), so a hostile
// "n[0-999999999]" costs nothing.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attribution/attribution.h"
#include "attribution/lex.h"

namespace faultline {
namespace {

using attribution_internal::IsDigit;
using attribution_internal::kNpos;
using attribution_internal::ParseUint;

constexpr size_t kMaxHosts = 65536;

// One "001-004" or "017" range of a bracket, with the width to pad to.
struct Range {
  int64_t lo = 0, hi = 0;
  size_t width = 0;
};

// Parses "001-004,017" (the text inside brackets); nullopt when malformed.
std::optional<std::vector<Range>> ParseRanges(std::string_view s) {
  std::vector<Range> out;
  size_t p = 0;
  while (p < s.size()) {
    size_t start = p;
    std::optional<int64_t> lo = ParseUint(s, &p, 12);
    if (!lo) return std::nullopt;
    Range r{*lo, *lo, p - start};
    if (p < s.size() && s[p] == '-') {
      ++p;
      std::optional<int64_t> hi = ParseUint(s, &p, 12);
      if (!hi || *hi < *lo) return std::nullopt;
      r.hi = *hi;
    }
    out.push_back(r);
    if (p < s.size()) {
      if (s[p] != ',') return std::nullopt;
      ++p;
    }
  }
  return out;
}

// Expands one host pattern (no top-level comma) into `out`; false when
// malformed or past kMaxHosts names in all.
bool ExpandOne(std::string_view pat, std::vector<std::string>& out) {
  std::vector<std::string> names = {""};
  size_t p = 0;
  while (p < pat.size()) {
    size_t open = pat.find('[', p);
    std::string_view lit = pat.substr(p, open == kNpos ? kNpos : open - p);
    for (std::string& n : names) n.append(lit);
    if (open == kNpos) break;
    size_t close = pat.find(']', open);
    if (close == kNpos) return false;
    std::optional<std::vector<Range>> ranges = ParseRanges(pat.substr(open + 1, close - open - 1));
    if (!ranges) return false;
    std::vector<std::string> next;
    for (const std::string& n : names) {
      for (const Range& r : *ranges) {
        for (int64_t v = r.lo; v <= r.hi; ++v) {
          if (out.size() + next.size() >= kMaxHosts) return false;
          std::string num = std::to_string(v);
          if (num.size() < r.width) num.insert(0, r.width - num.size(), '0');
          next.push_back(n + num);
        }
      }
    }
    names.swap(next);
    p = close + 1;
  }
  for (std::string& n : names) {
    if (out.size() >= kMaxHosts) return false;
    if (!n.empty()) out.push_back(std::move(n));
  }
  return true;
}

}  // namespace

std::vector<std::string> ExpandNodelist(std::string_view list) {
  std::vector<std::string> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    char c = i < list.size() ? list[i] : ',';
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth < 0) return {};
    if (c == ',' && depth == 0) {
      std::string_view one = list.substr(start, i - start);
      if (!one.empty() && !ExpandOne(one, out)) return {};
      start = i + 1;
    }
  }
  if (depth != 0) return {};
  return out;
}

}  // namespace faultline
