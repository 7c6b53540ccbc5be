#include "ruleset/digit_shape.h"

#include <cstring>

namespace faultline {
namespace {

constexpr std::string_view kDigits = "[0-9]+)";
constexpr std::string_view kDigitsDots = "[0-9.]+)";
constexpr std::string_view kNumber =
    "[-+]?(?:[0-9]+\\.?[0-9]*(?:[eE][-+]?[0-9]+)?|nan|NaN|NAN|inf|INF|Infinity))";
constexpr std::string_view kNumberWords[] = {"nan", "NaN", "NAN", "inf", "INF", "Infinity"};
// The blank runs, as written before a capture, and their bytes.
constexpr std::string_view kBlankRuns[][2] = {{"[ \\t]+(?P<", " \t"}, {" +(?P<", " "}};

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

// At p[i]: a capture, or a blank run and a capture.
bool AtCapture(std::string_view p, size_t i) {
  if (p.substr(i, 4) == "(?P<") return true;
  for (const auto& run : kBlankRuns) {
    if (p.substr(i, run[0].size()) == run[0]) return true;
  }
  return false;
}

// Reads a literal up to the next capture, `)` (when in_group) or the end;
// false on anything else.
bool ReadLiteral(std::string_view p, size_t* i, std::string* lit, bool in_group = false) {
  while (*i < p.size() && !(in_group ? p[*i] == ')' : AtCapture(p, *i))) {
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

// Reads a blank run, if any, at *i into shape.blanks.
void ReadBlanks(std::string_view p, size_t* i, DigitShape* shape) {
  std::string& blanks = shape->blanks.emplace_back();
  for (const auto& run : kBlankRuns) {
    const size_t n = run[0].size() - 4;  // without the "(?P<"
    if (p.substr(*i, run[0].size()) == run[0]) {
      blanks = std::string(run[1]);
      *i += n;
      return;
    }
  }
}

// Reads the body of a capture after its name, at *i: a run, a number or a
// literal and its ")".
bool ReadBody(std::string_view p, size_t* i, DigitShape* shape) {
  const std::string_view rest = p.substr(*i);
  ShapeKind& kind = shape->kinds.emplace_back(ShapeKind::kLiteral);
  std::string& text = shape->texts.emplace_back();
  for (const auto& [body, k] : {std::pair{kDigits, ShapeKind::kDigits},
                                std::pair{kDigitsDots, ShapeKind::kDigitsDots},
                                std::pair{kNumber, ShapeKind::kNumber}}) {
    if (rest.substr(0, body.size()) == body) {
      kind = k;
      *i += body.size();
      return true;
    }
  }
  if (!ReadLiteral(p, i, &text, /*in_group=*/true) || *i == p.size() || text.empty()) return false;
  ++*i;
  return true;
}

// Reads "[blank run](?P<name>body)" at *i.
bool ReadCapture(std::string_view p, size_t* i, DigitShape* shape) {
  ReadBlanks(p, i, shape);
  const size_t open = *i + 4;
  const size_t close = p.find('>', open);
  if (close == std::string_view::npos || close == open) return false;
  for (size_t k = open; k < close; ++k) {
    const char c = p[k];
    if (!(IsDigit(c) || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
      return false;
    }
  }
  shape->captures.emplace_back(p.substr(open, close - open));
  *i = close + 1;
  return ReadBody(p, i, shape);
}

// Whether the text after capture k (its literal, or the next capture's
// blanks) ends its greedy match where the pattern's match must end it.
bool EndsRun(const DigitShape& shape, size_t k) {
  const std::string& lit = shape.literals[k + 1];
  const bool last = k + 1 == shape.captures.size();
  const char next = !lit.empty() ? lit[0] : last ? '\0' : shape.blanks[k + 1].empty() ? '\1' : ' ';
  switch (shape.kinds[k]) {
    case ShapeKind::kDigits: return next != '\1' && !IsDigit(next);
    case ShapeKind::kDigitsDots: return next != '\1' && !IsDigit(next) && next != '.';
    case ShapeKind::kNumber: return next == '\0';
    case ShapeKind::kLiteral: return true;
  }
  return false;
}

// Whether capture k starts with a byte its blank run cannot take.
bool AfterBlanks(const DigitShape& shape, size_t k) {
  if (shape.blanks[k].empty() || shape.kinds[k] != ShapeKind::kLiteral) return true;
  return shape.blanks[k].find(shape.texts[k][0]) == std::string::npos;
}

bool StartsWith(std::string_view s, size_t at, std::string_view lit) {
  return s.substr(at, lit.size()) == lit;
}

// The end of the rulesets' number at `at`, or npos.
size_t NumberEnd(std::string_view s, size_t at) {
  size_t i = at < s.size() && (s[at] == '-' || s[at] == '+') ? at + 1 : at;
  const size_t digits = i;
  while (i < s.size() && IsDigit(s[i])) ++i;
  if (i == digits) {
    for (std::string_view w : kNumberWords) {
      if (StartsWith(s, i, w)) return i + w.size();
    }
    return std::string_view::npos;
  }
  if (i < s.size() && s[i] == '.') ++i;
  while (i < s.size() && IsDigit(s[i])) ++i;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1 < s.size() && (s[i + 1] == '-' || s[i + 1] == '+') ? i + 2 : i + 1;
    const size_t exp = j;
    while (j < s.size() && IsDigit(s[j])) ++j;
    if (j > exp) i = j;
  }
  return i;
}

// The end of capture k's match at `at`, or npos.
size_t CaptureEnd(const DigitShape& shape, size_t k, std::string_view s, size_t at) {
  size_t i = at;
  switch (shape.kinds[k]) {
    case ShapeKind::kDigits:
      while (i < s.size() && IsDigit(s[i])) ++i;
      break;
    case ShapeKind::kDigitsDots:
      while (i < s.size() && (IsDigit(s[i]) || s[i] == '.')) ++i;
      break;
    case ShapeKind::kNumber:
      return NumberEnd(s, at);
    case ShapeKind::kLiteral:
      return StartsWith(s, at, shape.texts[k]) ? at + shape.texts[k].size() : std::string_view::npos;
  }
  return i == at ? std::string_view::npos : i;
}

// The captures and literals after the head, from `at`; false when they do
// not all follow.
bool MatchRest(const DigitShape& shape, std::string_view s, size_t at, std::string_view* vals) {
  for (size_t k = shape.lead; k < shape.captures.size(); ++k) {
    const std::string& blanks = shape.blanks[k];
    const size_t run = at;
    while (!blanks.empty() && at < s.size() && blanks.find(s[at]) != std::string::npos) ++at;
    if (!blanks.empty() && at == run) return false;
    const size_t end = CaptureEnd(shape, k, s, at);
    if (end == std::string_view::npos) return false;
    vals[k] = s.substr(at, end - at);
    const std::string& lit = shape.literals[k + 1];
    if (!StartsWith(s, end, lit)) return false;
    at = end + lit.size();
  }
  return true;
}

// The head: literals[0], then each literal capture without blanks and the
// literal after it.
void SetHead(DigitShape* shape) {
  shape->head = shape->literals[0];
  size_t& k = shape->lead;
  for (k = 0; k < shape->captures.size(); ++k) {
    if (shape->kinds[k] != ShapeKind::kLiteral || !shape->blanks[k].empty()) break;
    shape->head += shape->texts[k] + shape->literals[k + 1];
  }
}

// The values of the head's captures, for a head at `at`.
void HeadValues(const DigitShape& shape, std::string_view s, size_t at, std::string_view* vals) {
  at += shape.literals[0].size();
  for (size_t k = 0; k < shape.lead; ++k) {
    vals[k] = s.substr(at, shape.texts[k].size());
    at += shape.texts[k].size() + shape.literals[k + 1].size();
  }
}

}  // namespace

std::optional<DigitShape> ParseDigitShape(std::string_view pattern) {
  DigitShape shape;
  size_t i = 0;
  shape.literals.emplace_back();
  if (!ReadLiteral(pattern, &i, &shape.literals.back())) return std::nullopt;
  while (i < pattern.size()) {
    if (!ReadCapture(pattern, &i, &shape)) return std::nullopt;
    shape.literals.emplace_back();
    if (!ReadLiteral(pattern, &i, &shape.literals.back())) return std::nullopt;
  }
  if (shape.captures.empty() || shape.captures.size() > kMaxShapeCaptures ||
      shape.literals[0].empty()) {
    return std::nullopt;
  }
  for (size_t k = 0; k < shape.captures.size(); ++k) {
    if (!EndsRun(shape, k) || !AfterBlanks(shape, k)) return std::nullopt;
  }
  SetHead(&shape);
  return shape;
}

bool MatchDigitShape(const DigitShape& shape, std::string_view subject, std::string_view* vals) {
  const std::string& head = shape.head;
  for (size_t at = subject.find(head); at != std::string_view::npos;
       at = subject.find(head, at + 1)) {
    if (MatchRest(shape, subject, at + head.size(), vals)) {
      HeadValues(shape, subject, at, vals);
      return true;
    }
  }
  return false;
}

}  // namespace faultline
