#include "ruleset/digit_shape.h"

#include <cstring>

namespace faultline {
namespace {

constexpr std::string_view kDigits = "[0-9]+)";

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// A byte that stands for itself in RE2 syntax outside a class.
bool IsPlainByte(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c)) return true;
  return c != '\0' && std::strchr(" :,;=-_/'\"<>@#%&!~`", c) != nullptr;
}

// An escaped punctuation byte: "\(" stands for "(".
bool IsEscapable(char c) {
  return c != '\0' && std::strchr(" .[](){}*+?|^$\\-/:,=<>#&!~'\"", c) != nullptr;
}

// Reads a literal up to the next "(?P<" or the end; false on anything else.
bool ReadLiteral(std::string_view p, size_t* i, std::string* lit) {
  while (*i < p.size() && p.substr(*i, 4) != "(?P<") {
    const char c = p[*i];
    if (c == '\\' && *i + 1 < p.size() && IsEscapable(p[*i + 1])) {
      lit->push_back(p[*i + 1]);
      *i += 2;
    } else if (IsPlainByte(c)) {
      lit->push_back(c);
      ++*i;
    } else {
      return false;
    }
  }
  return true;
}

// Reads "(?P<name>[0-9]+)" at *i.
bool ReadCapture(std::string_view p, size_t* i, std::string* name) {
  const size_t open = *i + 4;
  const size_t close = p.find('>', open);
  if (close == std::string_view::npos || close == open) return false;
  for (size_t k = open; k < close; ++k) {
    const char c = p[k];
    if (!(IsDigit(c) || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
      return false;
    }
  }
  if (p.substr(close + 1, kDigits.size()) != kDigits) return false;
  *name = std::string(p.substr(open, close - open));
  *i = close + 1 + kDigits.size();
  return true;
}

// The digits and literals after literals[0], from `at`; false when they do
// not all follow.
bool MatchRest(const DigitShape& shape, std::string_view s, size_t at, std::string_view* vals) {
  for (size_t k = 0; k < shape.captures.size(); ++k) {
    const size_t from = at;
    while (at < s.size() && IsDigit(s[at])) ++at;
    if (at == from) return false;
    vals[k] = s.substr(from, at - from);
    const std::string& lit = shape.literals[k + 1];
    if (s.substr(at, lit.size()) != lit) return false;
    at += lit.size();
  }
  return true;
}

}  // namespace

std::optional<DigitShape> ParseDigitShape(std::string_view pattern) {
  DigitShape shape;
  size_t i = 0;
  shape.literals.emplace_back();
  if (!ReadLiteral(pattern, &i, &shape.literals.back())) return std::nullopt;
  while (i < pattern.size()) {
    if (!ReadCapture(pattern, &i, &shape.captures.emplace_back())) return std::nullopt;
    shape.literals.emplace_back();
    if (!ReadLiteral(pattern, &i, &shape.literals.back())) return std::nullopt;
  }
  if (shape.captures.empty() || shape.captures.size() > kMaxShapeCaptures ||
      shape.literals[0].empty()) {
    return std::nullopt;
  }
  // After each capture: the end, or a literal whose first byte ends the run.
  for (size_t k = 1; k < shape.literals.size(); ++k) {
    const std::string& lit = shape.literals[k];
    const bool last = k + 1 == shape.literals.size();
    if ((lit.empty() && !last) || (!lit.empty() && IsDigit(lit[0]))) return std::nullopt;
  }
  return shape;
}

bool MatchDigitShape(const DigitShape& shape, std::string_view subject, std::string_view* vals) {
  const std::string& head = shape.literals[0];
  for (size_t at = subject.find(head); at != std::string_view::npos;
       at = subject.find(head, at + 1)) {
    if (MatchRest(shape, subject, at + head.size(), vals)) return true;
  }
  return false;
}

}  // namespace faultline
