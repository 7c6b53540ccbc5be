#include "ruleset/digit_shape.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "util/bytescan.h"

namespace faultline {
namespace {

constexpr std::string_view kDigits = "[0-9]+)";
constexpr std::string_view kDigitsDots = "[0-9.]+)";
constexpr std::string_view kNumber =
    "[-+]?(?:[0-9]+\\.?[0-9]*(?:[eE][-+]?[0-9]+)?|nan|NaN|NAN|inf|INF|Infinity))";
constexpr std::string_view kNumberWords[] = {"nan", "NaN", "NAN", "inf", "INF", "Infinity"};
// The blank runs, as written before a capture, and their bytes.
constexpr std::string_view kBlankRuns[][2] = {{"[ \\t]+(?P<", " \t"}, {" +(?P<", " "}};
// The classes an item run may be of, as written, and their bytes.
constexpr std::string_view kGap = "[^\\n]*";

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

bool IsQuantifier(char c) { return c == '*' || c == '+' || c == '?'; }

// At p[i]: a capture, or a blank run or an optional byte and a capture.
bool AtCapture(std::string_view p, size_t i) {
  if (p.substr(i, 4) == "(?P<") return true;
  if (i < p.size() && IsPlainByte(p[i]) && p.substr(i + 1, 5) == "?(?P<") return true;
  for (const auto& run : kBlankRuns) {
    if (p.substr(i, run[0].size()) == run[0]) return true;
  }
  return false;
}

// Reads a literal up to the next capture, `)` or `|` (when in_group), a
// quantified byte, anything else (outside a group: what follows is read as
// items, ReadItems) or the end; false on anything else in a group.
bool ReadLiteral(std::string_view p, size_t* i, std::string* lit, bool in_group = false) {
  while (*i < p.size() && !(in_group ? p[*i] == ')' || p[*i] == '|' : AtCapture(p, *i))) {
    const char c = p[*i];
    const size_t n = c == '\\' ? 2 : 1;
    if (*i + n < p.size() && IsQuantifier(p[*i + n])) return true;
    if (c == '\\' && *i + 1 < p.size() && IsEscapable(p[*i + 1])) {
      lit->push_back(p[*i + 1]);
      *i += 2;
    } else if (IsPlainByte(c)) {
      lit->push_back(c);
      ++*i;
    } else {
      return !in_group;
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
  if (!ReadLiteral(p, i, &text, /*in_group=*/true) || *i == p.size() || p[*i] != ')' || text.empty()) {
    return false;
  }
  ++*i;
  return true;
}

// Reads an optional byte before a capture, if any, at *i into shape.opts.
void ReadOpt(std::string_view p, size_t* i, DigitShape* shape) {
  const bool opt = shape->blanks.back().empty() && p.substr(*i + 1, 5) == "?(?P<";
  shape->opts.push_back(opt ? p[*i] : '\0');
  if (opt) *i += 2;
}

// Reads "[blank run](?P<name>body)" at *i.
bool ReadCapture(std::string_view p, size_t* i, DigitShape* shape) {
  ReadBlanks(p, i, shape);
  ReadOpt(p, i, shape);
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

// Whether capture k cannot start with its optional byte (then the byte is
// taken whenever it is there).
bool AfterOpt(const DigitShape& shape, size_t k) {
  const char b = shape.opts[k];
  if (b == '\0') return true;
  switch (shape.kinds[k]) {
    case ShapeKind::kDigits: return !IsDigit(b);
    case ShapeKind::kDigitsDots: return !IsDigit(b) && b != '.';
    case ShapeKind::kNumber: return std::strchr("+-0123456789nNiI", b) == nullptr;
    case ShapeKind::kLiteral: return shape.texts[k][0] != b;
  }
  return false;
}

// Whether `lit` is at s[at]; the first byte is compared before memcmp is
// called (most tries of an alternative fail there).
bool StartsWith(std::string_view s, size_t at, std::string_view lit) {
  if (at > s.size() || s.size() - at < lit.size()) return false;
  return lit.empty() || (s[at] == lit[0] && std::memcmp(s.data() + at + 1, lit.data() + 1, lit.size() - 1) == 0);
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

// The captures and literals after the head, from *at to *at; false when
// they do not all follow.
bool MatchRest(const DigitShape& shape, std::string_view s, size_t* pos, std::string_view* vals) {
  size_t& at = *pos;
  for (size_t k = shape.lead; k < shape.captures.size(); ++k) {
    const std::string& blanks = shape.blanks[k];
    const size_t run = at;
    while (!blanks.empty() && at < s.size() && blanks.find(s[at]) != std::string::npos) ++at;
    if (!blanks.empty() && at == run) return false;
    if (shape.opts[k] != '\0' && at < s.size() && s[at] == shape.opts[k]) ++at;
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
    if (shape->kinds[k] != ShapeKind::kLiteral || !shape->blanks[k].empty() || shape->opts[k]) break;
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


// What a group's capture becomes while items are read: refused (a digit
// shape's tail), a plain group (a pattern to confirm with), or recorded.
enum class CaptureMode { kRefuse, kIgnore, kRecord };

struct ReadContext {
  CaptureMode mode = CaptureMode::kRefuse;
  std::vector<std::string>* names = nullptr;  // kRecord: the captures read
  int depth = 0;
};

bool ReadSeq(std::string_view p, size_t* i, std::vector<ShapeItem>* items, ReadContext* ctx);

void SetBytes(ShapeItem* item) {
  for (char c : item->set) item->bytes.set(static_cast<unsigned char>(c));
}

// One byte of a class at *i: an escape, or a printable byte other than
// `\`, `[` and `]`.
bool ReadClassByte(std::string_view p, size_t* i, char* c) {
  if (*i >= p.size()) return false;
  if (p[*i] == '\\') {
    if (*i + 1 >= p.size()) return false;
    const char e = p[*i + 1];
    *c = e == 't' ? '\t' : e == 'n' ? '\n' : e == 'r' ? '\r' : e;
    *i += 2;
    return e == 't' || e == 'n' || e == 'r' || e == ']' || e == '^' || IsEscapable(e);
  }
  *c = p[*i];
  ++*i;
  return *c > ' ' - 1 && *c < 127 && *c != '[' && *c != ']';
}

// Reads a class, `[a-z_,\]]`, and its quantifier at *i into a run.
bool ReadClass(std::string_view p, size_t* i, ShapeItem* item) {
  size_t j = *i + 1;
  if (j >= p.size() || p[j] == '^' || p[j] == ']') return false;
  while (j < p.size() && p[j] != ']') {
    char lo = 0, hi = 0;
    if (!ReadClassByte(p, &j, &lo)) return false;
    hi = lo;
    if (j + 1 < p.size() && p[j] == '-' && p[j + 1] != ']') {
      ++j;
      if (!ReadClassByte(p, &j, &hi) || hi < lo) return false;
    }
    for (int c = lo; c <= hi; ++c) item->set.push_back(static_cast<char>(c));
  }
  if (j >= p.size()) return false;
  *i = j + 1;
  item->kind = ShapeItem::kRun;
  item->min = 1;
  item->max = 1;
  if (*i < p.size() && IsQuantifier(p[*i])) {
    item->min = p[*i] == '+' ? 1 : 0;
    item->max = p[*i] == '?' ? 1 : SIZE_MAX;
    ++*i;
  }
  SetBytes(item);
  return *i == p.size() || !(IsQuantifier(p[*i]) || p[*i] == '{');  // lazy, possessive, counted
}

// Reads a byte and its quantifier at *i: a run or an optional byte.
bool ReadQuantified(std::string_view p, size_t* i, ShapeItem* item) {
  size_t n = 0;
  if (p[*i] == '\\' && *i + 1 < p.size() && IsEscapable(p[*i + 1])) {
    item->set = std::string(1, p[*i + 1]);
    n = 2;
  } else if (IsPlainByte(p[*i])) {
    item->set = std::string(1, p[*i]);
    n = 1;
  }
  if (n == 0 || *i + n >= p.size() || !IsQuantifier(p[*i + n])) return false;
  const char q = p[*i + n];
  *i += n + 1;
  if (*i < p.size() && IsQuantifier(p[*i])) return false;  // lazy or possessive
  item->kind = q == '?' ? ShapeItem::kOpt : ShapeItem::kRun;
  if (q == '?') item->texts.push_back(item->set);
  item->min = q == '+' ? 1 : 0;
  SetBytes(item);
  return true;
}

// Reads a group's opening at *i: `(?:`, `(?P<name>` or `(`; sets its capture.
bool ReadGroupOpen(std::string_view p, size_t* i, ShapeItem* item, ReadContext* ctx) {
  if (p.substr(*i, 3) == "(?:") {
    *i += 3;
    return true;
  }
  const bool named = p.substr(*i, 4) == "(?P<";
  if (!named && p.substr(*i, 2) == "(?") return false;
  if (ctx->mode == CaptureMode::kRefuse || (!named && ctx->mode == CaptureMode::kRecord)) return false;
  size_t close = *i + 1;
  if (named) {
    close = p.find('>', *i + 4);
    if (close == std::string_view::npos || close == *i + 4) return false;
    for (size_t k = *i + 4; k < close; ++k) {
      const char c = p[k];
      if (!(IsDigit(c) || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return false;
    }
    ++close;
  }
  if (ctx->mode == CaptureMode::kRecord) {
    item->capture = static_cast<int>(ctx->names->size());
    ctx->names->emplace_back(p.substr(*i + 4, close - 1 - (*i + 4)));
  }
  *i = close;
  return true;
}

// Whether a group is a list of literal alternatives (then an kAlt).
bool LiteralsOnly(const ShapeItem& g) {
  if (g.capture >= 0 || g.optional) return false;
  for (const auto& b : g.branches) {
    if (b.size() != 1 || b[0].kind != ShapeItem::kLit) return false;
  }
  return true;
}

// Reads a group, its branches and a `?` after it at *i.
bool ReadGroup(std::string_view p, size_t* i, ShapeItem* item, ReadContext* ctx) {
  item->kind = ShapeItem::kGroup;
  if (ctx->depth > 8 || !ReadGroupOpen(p, i, item, ctx)) return false;
  ++ctx->depth;
  for (;;) {
    if (!ReadSeq(p, i, &item->branches.emplace_back(), ctx) || *i == p.size()) return false;
    if (p[(*i)++] == ')') break;
  }
  --ctx->depth;
  if (*i < p.size() && p[*i] == '?') {
    item->optional = true;
    ++*i;
  }
  if (*i < p.size() && (IsQuantifier(p[*i]) || p[*i] == '{')) return false;
  if (LiteralsOnly(*item)) {
    item->kind = ShapeItem::kAlt;
    for (auto& b : item->branches) item->texts.push_back(std::move(b[0].texts[0]));
    item->branches.clear();
  }
  return true;
}

// Reads one literal byte at *i.
bool ReadLiteralByte(std::string_view p, size_t* i, ShapeItem* item) {
  std::string& lit = item->texts.emplace_back();
  if (p[*i] == '\\' && *i + 1 < p.size() && IsEscapable(p[*i + 1])) {
    lit.push_back(p[*i + 1]);
    *i += 2;
    return true;
  }
  if (!IsPlainByte(p[*i])) return false;
  lit.push_back(p[(*i)++]);
  return true;
}

// Appends `item`, joining a literal to a literal before it; a group of one
// branch that does not capture is its items.
void Append(ShapeItem&& item, std::vector<ShapeItem>* items) {
  if (item.kind == ShapeItem::kGroup && item.capture < 0 && !item.optional && item.branches.size() == 1) {
    for (ShapeItem& it : item.branches[0]) Append(std::move(it), items);
  } else if (item.kind == ShapeItem::kLit && !items->empty() && items->back().kind == ShapeItem::kLit) {
    items->back().texts[0] += item.texts[0];
  } else {
    items->push_back(std::move(item));
  }
}

// Reads the item at *i.
bool ReadItem(std::string_view p, size_t* i, std::vector<ShapeItem>* items, ReadContext* ctx) {
  const std::string_view rest = p.substr(*i);
  const std::string_view number = kNumber.substr(0, kNumber.size() - 1);
  ShapeItem item;
  if (rest.substr(0, number.size()) == number) {
    item.kind = ShapeItem::kNumber;
    *i += number.size();
  } else if (rest.substr(0, kGap.size()) == kGap) {
    item.kind = ShapeItem::kGap;
    *i += kGap.size();
  } else if (rest[0] == '^') {
    item.kind = ShapeItem::kBegin;
    ++*i;
  } else if (rest[0] == '(') {
    if (!ReadGroup(p, i, &item, ctx)) return false;
  } else if (rest[0] == '[') {
    if (!ReadClass(p, i, &item)) return false;
  } else if (!ReadQuantified(p, i, &item)) {
    item = ShapeItem();
    if (!ReadLiteralByte(p, i, &item)) return false;
  }
  Append(std::move(item), items);
  return true;
}

// Reads items from *i up to the end, a `|` or a `)`.
bool ReadSeq(std::string_view p, size_t* i, std::vector<ShapeItem>* items, ReadContext* ctx) {
  while (*i < p.size() && p[*i] != '|' && p[*i] != ')') {
    if (!ReadItem(p, i, items, ctx)) return false;
  }
  return true;
}

// Reads items from *i to the end of the pattern.
bool ReadItems(std::string_view p, size_t* i, std::vector<ShapeItem>* items, ReadContext* ctx) {
  return ReadSeq(p, i, items, ctx) && *i == p.size();
}

// Every end of the rulesets' number started at `at`, up to `cap` of them;
// their count, or cap + 1 when there are more.
size_t NumberEnds(std::string_view s, size_t at, size_t* ends, size_t cap) {
  size_t n = 0;
  auto add = [&](size_t e) {
    if (n < cap) ends[n] = e;
    ++n;
  };
  size_t i = at < s.size() && (s[at] == '-' || s[at] == '+') ? at + 1 : at;
  for (std::string_view w : kNumberWords) {
    if (StartsWith(s, i, w)) add(i + w.size());
  }
  if (i == s.size() || !IsDigit(s[i])) return std::min(n, cap + 1);
  while (i < s.size() && IsDigit(s[i])) add(++i);
  if (i < s.size() && s[i] == '.') add(++i);
  while (i < s.size() && IsDigit(s[i])) add(++i);
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1 < s.size() && (s[i + 1] == '-' || s[i + 1] == '+') ? i + 2 : i + 1;
    while (j < s.size() && IsDigit(s[j])) add(++j);
  }
  return std::min(n, cap + 1);
}

// Where `lit` starts at or after `from`, or npos (FindBytes: string_view::find
// stops at every occurrence of the first byte, often a blank; memmem sets up
// a table on every call).
size_t FindLiteral(std::string_view s, std::string_view lit, size_t from) {
  if (from >= s.size()) return std::string_view::npos;
  return FindBytes(s, lit, from);
}

// A search's subject, its steps left and where its captures go (null when
// nothing captures).
struct Search {
  std::string_view s;
  int budget = 0;
  std::string_view* vals = nullptr;
};

// What follows a group's branch: the items after the group, and the capture
// the group closes (-1 for none) with its start.
struct Cont {
  const std::vector<ShapeItem>* items;
  size_t k;
  const Cont* up;
  int close;
  size_t start;
};

// Whether items[k..], then `up`, match from `at`: 1 yes, 0 no, -1 when the
// budget (steps) ran out. A backtracking search over every way each item can
// match, in RE2's order of preference (leftmost-first) but for the gap and the
// number (the items of an extract have neither).
int Follows(const std::vector<ShapeItem>& items, size_t k, size_t at, Search* st, const Cont* up);

// The rest after a group's branch ended at `at`: its capture, then `up`.
int Resume(const Cont* up, size_t at, Search* st) {
  if (up == nullptr) return 1;
  if (up->close < 0) return Follows(*up->items, up->k, at, st, up->up);
  std::string_view& v = st->vals[up->close];
  const std::string_view old = v;
  v = st->s.substr(up->start, at - up->start);
  const int r = Follows(*up->items, up->k, at, st, up->up);
  if (r == 0) v = old;
  return r;
}

// Tries items[k..] after each end of ends[0..n), in order.
int FollowsAny(const std::vector<ShapeItem>& items, size_t k, const size_t* ends, size_t n, Search* st,
               const Cont* up) {
  for (size_t e = 0; e < n; ++e) {
    const int r = Follows(items, k, ends[e], st, up);
    if (r != 0) return r;
  }
  return 0;
}

// A gap, `[^\n]*`, at items[k] from `at`.
int FollowsGap(const std::vector<ShapeItem>& items, size_t k, size_t at, Search* st, const Cont* up) {
  const std::string_view s = st->s;
  const size_t nl = std::min(s.find('\n', at), s.size());
  if (k + 1 < items.size() && items[k + 1].kind == ShapeItem::kLit) {
    const std::string& lit = items[k + 1].texts[0];
    for (size_t hit = FindLiteral(s, lit, at); hit != std::string_view::npos && hit <= nl;
         hit = FindLiteral(s, lit, hit + 1)) {
      const int r = Follows(items, k + 2, hit + lit.size(), st, up);
      if (r != 0) return r;
    }
    return 0;
  }
  // A class byte after the gap (`[^\n]*[ \t,]`): only the ends before one.
  const ShapeItem* next = k + 1 < items.size() && items[k + 1].kind == ShapeItem::kRun && items[k + 1].min > 0
                              ? &items[k + 1]
                              : nullptr;
  for (size_t e = nl + 1; e-- > at;) {
    if (next != nullptr && (e == s.size() || !next->bytes[static_cast<unsigned char>(s[e])])) continue;
    const int r = Follows(items, k + 1, e, st, up);
    if (r != 0) return r;
  }
  return 0;
}

// A run of a class at items[k] from `at`, longest first.
int FollowsRun(const std::vector<ShapeItem>& items, size_t k, size_t at, Search* st, const Cont* up) {
  const ShapeItem& item = items[k];
  const std::string_view s = st->s;
  size_t end = at;
  while (end < s.size() && end - at < item.max && item.bytes[static_cast<unsigned char>(s[end])]) ++end;
  for (size_t e = end + 1; e-- > at + item.min;) {
    const int r = Follows(items, k + 1, e, st, up);
    if (r != 0) return r;
  }
  return 0;
}

// A group at items[k] from `at`: each branch in order, then (`?`) none.
int FollowsGroup(const std::vector<ShapeItem>& items, size_t k, size_t at, Search* st, const Cont* up) {
  const ShapeItem& item = items[k];
  const Cont next{&items, k + 1, up, item.capture, at};
  for (const std::vector<ShapeItem>& branch : item.branches) {
    const int r = Follows(branch, 0, at, st, &next);
    if (r != 0) return r;
  }
  return item.optional ? Follows(items, k + 1, at, st, up) : 0;
}

int Follows(const std::vector<ShapeItem>& items, size_t k, size_t at, Search* st, const Cont* up) {
  if (k == items.size()) return Resume(up, at, st);
  if (--st->budget < 0) return -1;
  const ShapeItem& item = items[k];
  const std::string_view s = st->s;
  constexpr size_t kCap = 32;
  size_t ends[kCap];
  size_t n = 0;
  switch (item.kind) {
    case ShapeItem::kLit:
    case ShapeItem::kAlt:
      for (const std::string& t : item.texts) {
        if (n < kCap && StartsWith(s, at, t)) ends[n++] = at + t.size();
      }
      break;
    case ShapeItem::kOpt:
      if (at < s.size() && s[at] == item.texts[0][0]) ends[n++] = at + 1;
      ends[n++] = at;
      break;
    case ShapeItem::kRun: return FollowsRun(items, k, at, st, up);
    case ShapeItem::kNumber:
      n = NumberEnds(s, at, ends, kCap);
      if (n > kCap) return -1;
      break;
    case ShapeItem::kGap: return FollowsGap(items, k, at, st, up);
    case ShapeItem::kBegin: return at == 0 ? Follows(items, k + 1, at, st, up) : 0;
    case ShapeItem::kGroup: return FollowsGroup(items, k, at, st, up);
  }
  return FollowsAny(items, k + 1, ends, n, st, up);
}

// The steps a search may take on `s` before RE2 is asked instead.
int BudgetFor(std::string_view s) { return 64 + 4 * static_cast<int>(std::min<size_t>(s.size(), 1 << 20)); }

// Whether an item of `kind` is among `items` or in their groups.
bool Has(const std::vector<ShapeItem>& items, ShapeItem::Kind kind) {
  return std::any_of(items.begin(), items.end(), [&](const ShapeItem& it) {
    return it.kind == kind ||
           std::any_of(it.branches.begin(), it.branches.end(), [&](const auto& b) { return Has(b, kind); });
  });
}

bool HasGap(const std::vector<ShapeItem>& items) { return Has(items, ShapeItem::kGap); }

// Adds the bytes a match of items[k..] can start with (past the subject's
// start) to *first; false when it may start with any byte or be empty.
bool AddFirst(const std::vector<ShapeItem>& items, size_t k, std::bitset<256>* first) {
  for (; k < items.size(); ++k) {
    const ShapeItem& it = items[k];
    switch (it.kind) {
      case ShapeItem::kLit:
      case ShapeItem::kAlt:
        for (const std::string& t : it.texts) first->set(static_cast<unsigned char>(t[0]));
        return true;
      case ShapeItem::kOpt:
      case ShapeItem::kRun:
        *first |= it.bytes;
        if (it.kind == ShapeItem::kRun && it.min > 0) return true;
        break;
      case ShapeItem::kNumber:
        for (char c : std::string_view("+-0123456789nNiI")) first->set(static_cast<unsigned char>(c));
        return true;
      case ShapeItem::kGap: return false;
      case ShapeItem::kBegin: return true;  // at the start only, which is always tried
      case ShapeItem::kGroup:
        if (it.optional) return false;
        for (const auto& b : it.branches) {
          if (!AddFirst(b, 0, first)) return false;
        }
        return true;
    }
  }
  return false;
}

// The shape of `items`: its start bytes.
ItemShape MakeShape(std::vector<ShapeItem> items, std::vector<std::string> names) {
  ItemShape shape;
  shape.items = std::move(items);
  shape.captures = std::move(names);
  shape.any_start = !AddFirst(shape.items, 0, &shape.first);
  const ShapeItem& lead = shape.items[0];
  if (lead.kind == ShapeItem::kRun && lead.min == 1 && lead.max == 1) {
    shape.any_second = !AddFirst(shape.items, 1, &shape.second);
  }
  shape.gap = HasGap(shape.items);
  return shape;
}

// The leftmost start at which the items match; vals as the match left them.
std::optional<bool> MatchFromLeft(const ItemShape& shape, std::string_view subject, std::string_view* vals) {
  Search st{subject, BudgetFor(subject), vals};
  const std::vector<ShapeItem>& items = shape.items;
  if (items[0].kind == ShapeItem::kLit) {
    const std::string& lead = items[0].texts[0];
    for (size_t at = FindLiteral(subject, lead, 0); at != std::string_view::npos;
         at = FindLiteral(subject, lead, at + 1)) {
      const int r = Follows(items, 1, at + lead.size(), &st, nullptr);
      if (r != 0) return r > 0 ? std::optional<bool>(true) : std::nullopt;
    }
    return false;
  }
  const size_t n = subject.size();
  for (size_t at = 0; at <= n; ++at) {
    if (at > 0 && !shape.any_start && (at == n || !shape.first[static_cast<unsigned char>(subject[at])])) continue;
    if (!shape.any_second && (at + 1 >= n || !shape.second[static_cast<unsigned char>(subject[at + 1])])) continue;
    const int r = Follows(items, 0, at, &st, nullptr);
    if (r != 0) return r > 0 ? std::optional<bool>(true) : std::nullopt;
  }
  return false;
}

bool IsAscii(std::string_view s) {
  uint64_t high = 0;
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    high |= w;
  }
  for (; i < s.size(); ++i) high |= static_cast<unsigned char>(s[i]);
  return (high & 0x8080808080808080ULL) == 0;
}

}  // namespace

std::optional<DigitShape> ParseDigitShape(std::string_view pattern) {
  DigitShape shape;
  size_t i = 0;
  shape.literals.emplace_back();
  if (!ReadLiteral(pattern, &i, &shape.literals.back())) return std::nullopt;
  while (i < pattern.size() && AtCapture(pattern, i)) {
    if (!ReadCapture(pattern, &i, &shape)) return std::nullopt;
    shape.literals.emplace_back();
    if (!ReadLiteral(pattern, &i, &shape.literals.back())) return std::nullopt;
  }
  ReadContext tail_ctx;  // a tail's groups do not capture
  if (i < pattern.size() && (shape.literals.back().empty() || !ReadItems(pattern, &i, &shape.tail, &tail_ctx) ||
                             HasGap(shape.tail))) {
    return std::nullopt;
  }
  if (shape.captures.empty() || shape.captures.size() > kMaxShapeCaptures ||
      shape.literals[0].empty()) {
    return std::nullopt;
  }
  for (size_t k = 0; k < shape.captures.size(); ++k) {
    if (!EndsRun(shape, k) || !AfterBlanks(shape, k) || !AfterOpt(shape, k)) return std::nullopt;
  }
  SetHead(&shape);
  return shape;
}

std::optional<bool> MatchDigitShape(const DigitShape& shape, std::string_view subject, std::string_view* vals,
                                    size_t* start) {
  const std::string& head = shape.head;
  Search st{subject, BudgetFor(subject), nullptr};
  for (size_t at = subject.find(head); at != std::string_view::npos;
       at = subject.find(head, at + 1)) {
    size_t end = at + head.size();
    if (!MatchRest(shape, subject, &end, vals)) continue;
    const int tail = shape.tail.empty() ? 1 : Follows(shape.tail, 0, end, &st, nullptr);
    if (tail < 0) return std::nullopt;
    if (tail == 1) {
      HeadValues(shape, subject, at, vals);
      if (start != nullptr) *start = at;
      return true;
    }
  }
  return false;
}

std::optional<ItemShape> ParseItemShape(std::string_view pattern) {
  std::vector<ShapeItem> items;
  size_t i = 0;
  ReadContext ctx{CaptureMode::kIgnore};
  if (!ReadItems(pattern, &i, &items, &ctx) || items.empty()) return std::nullopt;
  return MakeShape(std::move(items), {});
}

std::optional<bool> MatchItemShape(const ItemShape& shape, std::string_view subject) {
  if (shape.gap && !IsAscii(subject)) return std::nullopt;
  return MatchFromLeft(shape, subject, nullptr);
}

namespace {

bool SameItems(const std::vector<ShapeItem>& a, const std::vector<ShapeItem>& b);

// Whether two items match the same text the same way (a class by its bytes).
bool SameItem(const ShapeItem& a, const ShapeItem& b) {
  if (a.kind != b.kind || a.texts != b.texts || a.capture != b.capture || a.optional != b.optional) return false;
  if (a.kind == ShapeItem::kRun && (a.bytes != b.bytes || a.min != b.min || a.max != b.max)) return false;
  if (a.branches.size() != b.branches.size()) return false;
  for (size_t i = 0; i < a.branches.size(); ++i) {
    if (!SameItems(a.branches[i], b.branches[i])) return false;
  }
  return true;
}

bool SameItems(const std::vector<ShapeItem>& a, const std::vector<ShapeItem>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!SameItem(a[i], b[i])) return false;
  }
  return true;
}

// Whether literal `t` ends at s[end] (its last byte compared first: most
// tries fail there).
bool LiteralEndsAt(std::string_view s, size_t end, const std::string& t) {
  const size_t n = t.size();
  return end >= n && (n == 0 || (s[end - 1] == t[n - 1] && std::memcmp(s.data() + end - n, t.data(), n - 1) == 0));
}

// items[0..k) ending at `end`, trying every way each matches (backwards).
int EndAt(const std::vector<ShapeItem>& items, size_t k, std::string_view s, size_t end, int* budget) {
  // Without a choice first: a literal ends at `end` or not; a run that
  // starts the items or follows a literal whose last byte is not of its
  // class can only be its longest (a shorter one would leave a byte of the
  // class where the literal ends).
  while (k > 0) {
    const ShapeItem& it = items[k - 1];
    if (it.kind == ShapeItem::kLit) {
      const std::string& t = it.texts[0];
      if (!LiteralEndsAt(s, end, t)) return 0;
      end -= t.size();
      --k;
      continue;
    }
    const ShapeItem* before = k >= 2 ? &items[k - 2] : nullptr;
    if (it.kind != ShapeItem::kRun ||
        (before != nullptr && (before->kind != ShapeItem::kLit || before->texts[0].empty() ||
                               it.bytes[static_cast<unsigned char>(before->texts[0].back())]))) {
      break;
    }
    size_t from = end;
    while (from > 0 && end - from < it.max && it.bytes[static_cast<unsigned char>(s[from - 1])]) --from;
    if (end - from < it.min) return 0;
    end = from;
    --k;
  }
  if (k == 0) return 1;
  if (--*budget < 0) return -1;
  const ShapeItem& it = items[k - 1];
  switch (it.kind) {
    case ShapeItem::kLit:
    case ShapeItem::kAlt:
      for (const std::string& t : it.texts) {
        if (!LiteralEndsAt(s, end, t)) continue;
        const int r = EndAt(items, k - 1, s, end - t.size(), budget);
        if (r != 0) return r;
      }
      return 0;
    case ShapeItem::kOpt: {
      if (end > 0 && s[end - 1] == it.texts[0][0]) {
        const int r = EndAt(items, k - 1, s, end - 1, budget);
        if (r != 0) return r;
      }
      return EndAt(items, k - 1, s, end, budget);
    }
    case ShapeItem::kRun: {
      size_t from = end;
      while (from > 0 && end - from < it.max && it.bytes[static_cast<unsigned char>(s[from - 1])]) --from;
      for (size_t b = from; end - b >= it.min; ++b) {
        const int r = EndAt(items, k - 1, s, b, budget);
        if (r != 0) return r;
        if (b == end) break;
      }
      return 0;
    }
    default: return -1;
  }
}

}  // namespace

std::optional<std::vector<ShapeItem>> ItemsBefore(const ItemShape& pattern, const ItemShape& suffix) {
  const std::vector<ShapeItem>& p = pattern.items;
  const std::vector<ShapeItem>& x = suffix.items;
  if (x.empty() || p.size() < x.size()) return std::nullopt;
  const size_t j = p.size() - x.size();
  for (size_t i = 1; i < x.size(); ++i) {
    if (!SameItem(p[j + i], x[i])) return std::nullopt;
  }
  std::vector<ShapeItem> before(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(j));
  if (!SameItem(p[j], x[0])) {
    // A literal the two share: "..., global rank: " before "global rank: ".
    if (p[j].kind != ShapeItem::kLit || x[0].kind != ShapeItem::kLit || !p[j].texts[0].ends_with(x[0].texts[0])) {
      return std::nullopt;
    }
    ShapeItem cut = p[j];
    cut.texts[0].resize(cut.texts[0].size() - x[0].texts[0].size());
    before.push_back(std::move(cut));
  }
  for (const ShapeItem& it : before) {
    if (it.kind != ShapeItem::kLit && it.kind != ShapeItem::kRun && it.kind != ShapeItem::kOpt &&
        it.kind != ShapeItem::kAlt) {
      return std::nullopt;
    }
  }
  return before;
}

int ItemsEndAt(const std::vector<ShapeItem>& items, std::string_view s, size_t end) {
  if (end > s.size()) return 0;
  int budget = BudgetFor(s);
  return EndAt(items, items.size(), s, end, &budget);
}

std::optional<ItemShape> ParseCaptureShape(std::string_view pattern) {
  std::vector<ShapeItem> items;
  std::vector<std::string> names;
  size_t i = 0;
  ReadContext ctx{CaptureMode::kRecord, &names};
  if (!ReadItems(pattern, &i, &items, &ctx) || items.empty() || names.empty() ||
      names.size() > kMaxShapeCaptures || Has(items, ShapeItem::kGap) || Has(items, ShapeItem::kNumber)) {
    return std::nullopt;
  }
  return MakeShape(std::move(items), std::move(names));
}

std::optional<bool> MatchCaptureShape(const ItemShape& shape, std::string_view subject, std::string_view* vals) {
  std::fill(vals, vals + shape.captures.size(), std::string_view());
  return MatchFromLeft(shape, subject, vals);
}

}  // namespace faultline
