#include "ruleset/pattern_check.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "util/strings.h"

namespace faultline {
namespace {

// Escapes whose class includes '\n'.
bool EscapeMatchesNewline(char c) {
  switch (c) {
    case 's': case 'W': case 'D': case 'H': case 'V': case 'R':
    case 'n': case 'r': case 'v': case 'f':
      return true;
    default:
      return false;
  }
}

bool IsNewlineHex(std::string_view p, size_t i) {
  // p[i] == 'x' after a backslash: \x0a \x0A \x0d \x{a} \x{0a}
  std::string hex;
  if (i + 1 < p.size() && p[i + 1] == '{') {
    size_t j = i + 2;
    while (j < p.size() && p[j] != '}') hex += p[j++];
  } else {
    hex = std::string(p.substr(i + 1, 2));
  }
  char* end = nullptr;
  long v = std::strtol(hex.c_str(), &end, 16);
  return !hex.empty() && (v == 0x0a || v == 0x0d || v == 0x0b || v == 0x0c);
}

}  // namespace

absl::Status CheckPatternSingleLine(std::string_view p, size_t max_repeat) {
  bool in_class = false;
  bool class_negated = false;
  bool class_has_nl = false;
  size_t class_start = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\') {
      if (i + 1 >= p.size()) return absl::InvalidArgumentError("ends with a lone backslash");
      char e = p[i + 1];
      bool nl = EscapeMatchesNewline(e) || (e == 'x' && IsNewlineHex(p, i + 1));
      if (in_class) {
        if (e == 'n' || e == 's' || e == 'v' || (e == 'x' && IsNewlineHex(p, i + 1))) {
          class_has_nl = true;
        }
        if (nl && !class_negated) {
          return absl::InvalidArgumentError(
              StrCat("can match a newline: \\", std::string(1, e), " inside a class at offset ", i));
        }
      } else if (nl) {
        return absl::InvalidArgumentError(StrCat(
            "can match a newline: \\", std::string(1, e), " at offset ", i,
            " (use [ \\t] for blanks, [^\\n] for any character)"));
      }
      ++i;
      continue;
    }
    if (in_class) {
      if (c == ']' && i > class_start) {
        in_class = false;
        if (class_negated && !class_has_nl) {
          return absl::InvalidArgumentError(StrCat(
              "can match a newline: the negated class at offset ", class_start,
              " lacks \\n (write [^...\\n])"));
        }
      }
      continue;
    }
    if (c == '[') {
      in_class = true;
      class_start = i;
      class_negated = i + 1 < p.size() && p[i + 1] == '^';
      class_has_nl = false;
      if (class_negated) ++i;
      if (i + 1 < p.size() && p[i + 1] == ']') ++i;  // leading ']' is literal
      continue;
    }
    if (c == '(' && i + 1 < p.size() && p[i + 1] == '?') {
      // inline flags (?s) / (?is) / (?s:...)
      size_t j = i + 2;
      while (j < p.size() && std::isalpha(static_cast<unsigned char>(p[j]))) {
        if (p[j] == 's') return absl::InvalidArgumentError("(?s) lets '.' match a newline");
        ++j;
      }
      if (i + 2 < p.size() && (p[i + 2] == '=' || p[i + 2] == '!' ||
                               (p[i + 2] == '<' && i + 3 < p.size() &&
                                (p[i + 3] == '=' || p[i + 3] == '!')))) {
        return absl::InvalidArgumentError("lookaround is not supported by RE2");
      }
      continue;
    }
    if (c == '{') {
      size_t j = i + 1;
      std::string num;
      size_t biggest = 0;
      bool any = false;
      while (j < p.size() && (std::isdigit(static_cast<unsigned char>(p[j])) || p[j] == ',')) {
        if (p[j] == ',') {
          if (!num.empty()) biggest = std::max<size_t>(biggest, std::stoul(num.substr(0, 9)));
          num.clear();
        } else {
          num += p[j];
          any = true;
        }
        ++j;
      }
      if (j < p.size() && p[j] == '}' && any) {
        if (!num.empty()) biggest = std::max<size_t>(biggest, std::stoul(num.substr(0, 9)));
        if (biggest > max_repeat) {
          return absl::InvalidArgumentError(StrCat(
              "bounded repeat {", p.substr(i + 1, j - i - 1), "} above ", max_repeat,
              " (use + or *: bounded repeats blow up Hyperscan's compile memory)"));
        }
      }
    }
  }
  if (in_class) return absl::InvalidArgumentError("unterminated character class");
  return absl::OkStatus();
}

size_t BoundedRepeatTotal(std::string_view p) {
  // A stack of groups: the repeat total inside each open group, so a
  // repeated group multiplies its contents' total.
  std::vector<size_t> group{0};
  size_t last_group_total = 0;  // of the group that just closed
  bool after_group = false;
  constexpr size_t kBig = size_t{1} << 40;
  auto add = [&](size_t v) { group.back() = std::min(kBig, group.back() + v); };
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\') {
      ++i;
      after_group = false;
      continue;
    }
    if (c == '[') {
      // Skip the class: a leading ']' (or '^]') is literal.
      size_t j = i + 1;
      if (j < p.size() && p[j] == '^') ++j;
      if (j < p.size() && p[j] == ']') ++j;
      for (; j < p.size() && p[j] != ']'; ++j) {
        if (p[j] == '\\') ++j;
      }
      i = j;
      after_group = false;
      continue;
    }
    if (c == '(') {
      group.push_back(0);
      after_group = false;
      continue;
    }
    if (c == ')') {
      if (group.size() > 1) {
        last_group_total = group.back();
        group.pop_back();
        add(last_group_total);
        after_group = true;
      }
      continue;
    }
    if (c == '{') {
      size_t j = i + 1;
      size_t lo = 0, hi = 0;
      bool digits = false, comma = false, hi_digits = false;
      for (; j < p.size() && (std::isdigit(static_cast<unsigned char>(p[j])) || p[j] == ','); ++j) {
        if (p[j] == ',') {
          if (comma) break;
          comma = true;
        } else if (!comma) {
          lo = std::min(kBig, lo * 10 + static_cast<size_t>(p[j] - '0'));
          digits = true;
        } else {
          hi = std::min(kBig, hi * 10 + static_cast<size_t>(p[j] - '0'));
          hi_digits = true;
        }
      }
      if (j < p.size() && p[j] == '}' && digits) {
        size_t bound = comma && hi_digits ? std::max(lo, hi) : lo;
        if (after_group) {
          // The group's contents repeat `bound` times.
          group.back() -= std::min(group.back(), last_group_total);
          add(std::min(kBig, (last_group_total + 1) * std::max<size_t>(bound, 1)));
        } else {
          add(bound);
        }
        i = j;
      }
      after_group = false;
      continue;
    }
    after_group = false;
  }
  return group.front();
}

size_t LongestLiteral(std::string_view p) {
  size_t best = 0, run = 0;
  int depth_class = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (depth_class) {
      if (c == '\\') ++i;
      else if (c == ']') depth_class = 0;
      continue;
    }
    if (c == '\\' && i + 1 < p.size()) {
      char e = p[i + 1];
      ++i;
      if (std::isalnum(static_cast<unsigned char>(e))) {  // \d \w \b ...: not literal
        run = 0;
        continue;
      }
      ++run;  // escaped punctuation is literal
    } else if (c == '[') {
      depth_class = 1;
      run = 0;
      continue;
    } else if (c == '(' || c == ')' || c == '|' || c == '.' || c == '^' || c == '$') {
      run = 0;
      continue;
    } else if (c == '*' || c == '?' || c == '{') {
      // The quantified character does not count.
      run = run > 0 ? run - 1 : 0;
      best = std::max(best, run);
      run = 0;
      continue;
    } else if (c == '+') {
      best = std::max(best, run);
      run = 0;
      continue;
    } else {
      ++run;
    }
    best = std::max(best, run);
  }
  return best;
}

uint64_t Fnv1a64(std::string_view data, uint64_t h) {
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

uint64_t SignalsChecksumStep(uint64_t h, std::string_view pattern,
                             const std::vector<std::string_view>& extracts, bool caseless) {
  static constexpr char kSep[3] = {'\0', '\1', '\2'};
  h = Fnv1a64(pattern, h);
  for (std::string_view x : extracts) {
    h = Fnv1a64(std::string_view(kSep, 1), h);
    h = Fnv1a64(x, h);
  }
  h = Fnv1a64(std::string_view(kSep + (caseless ? 2 : 1), 1), h);
  return h;
}

}  // namespace faultline
