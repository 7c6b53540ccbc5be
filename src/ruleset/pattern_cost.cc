#include "ruleset/pattern_cost.h"

#include <algorithm>
#include <bitset>
#include <cctype>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "util/strings.h"

extern "C" const char fl_internal_cost_sample_begin[];
extern "C" const char fl_internal_cost_sample_end[];

namespace faultline {
namespace {

// Bounds of the analysis: an exact set grows by cross products and is cut
// into factors above these.
constexpr size_t kMaxSet = 16;
constexpr size_t kMaxString = 256;
constexpr size_t kInfinite = std::numeric_limits<size_t>::max();

// Hyperscan's literal matcher finds a literal by its last 8 bytes (Rose's
// short literal length; a longer literal is confirmed whole after): each
// place the text holds those 8 bytes costs a confirmation, whether or not
// the rest of the literal is there (bench/README.md, "the database alone,
// second pass").
constexpr size_t kHsLiteralTail = 8;

// A line's start ('^') in a factor's alternative: the newline before the
// line. Leading an alternative it is searched as '^' (the scan's start or
// after a newline), elsewhere as the byte: either way a superset of where
// the pattern can match, so the prefilter still finds every matched line.
constexpr char kLineStart = '\n';

// Whether alternative `a` begins at a line's start.
bool AtLineStart(std::string_view a) { return !a.empty() && a.front() == kLineStart; }

// Lower is better: the sample's candidate lines, or a static score.
using FactorScore = std::function<double(const LiteralFactor&)>;

// What a node of the pattern matches, as far as literals go.
struct Info {
  bool exact = false;              // `set` is every string the node matches
  std::vector<std::string> set;    // when exact
  std::vector<LiteralFactor> factors;  // required factors (when not exact)
  bool leading_class = false;      // an unbounded class repeat before any literal
  bool anchored = false;           // starts with \A
  bool zero_width = false;         // ^ $ \b ...
};

Info Exact(std::vector<std::string> set) {
  Info i;
  i.exact = true;
  std::sort(set.begin(), set.end());
  set.erase(std::unique(set.begin(), set.end()), set.end());
  i.set = std::move(set);
  return i;
}

Info AnyChar() { return Info{}; }

bool HasEmpty(const std::vector<std::string>& set) {
  return std::any_of(set.begin(), set.end(), [](const std::string& s) { return s.empty(); });
}

bool HasLineStartOnly(const std::vector<std::string>& set) {
  return std::any_of(set.begin(), set.end(), [](const std::string& s) { return s.size() == 1 && s[0] == kLineStart; });
}

// The best factor of a node (exact nodes: their set), or none.
std::optional<LiteralFactor> BestFactor(const Info& in, const FactorScore& score) {
  if (in.exact) {
    if (in.set.empty() || HasEmpty(in.set)) return std::nullopt;
    return LiteralFactor{in.set};
  }
  const LiteralFactor* best = nullptr;
  double best_score = 0;
  for (const LiteralFactor& f : in.factors) {
    double s = score(f);
    if (!best || s < best_score) {
      best = &f;
      best_score = s;
    }
  }
  if (!best) return std::nullopt;
  return *best;
}

class Parser {
 public:
  Parser(std::string_view p, bool caseless, const FactorScore& score)
      : p_(p), caseless_(caseless), score_(score) {}

  Info Parse() { return Alternation(); }
  // Whether the pattern uses something beyond printable literals, classes
  // without ^, groups, alternation and quantifiers ('.', [^...], \b, \t,
  // $, named groups): Hyperscan's match alone never confirms such a
  // pattern; RE2 runs on its lines anyway.
  bool beyond_plain() const { return beyond_plain_; }
  // Whether it has \A, \Q or inline flags: a factor search would not be
  // equivalent (\A is the scan's start to Hyperscan).
  bool has_anchor_or_flags() const { return anchor_or_flags_; }

 private:
  bool More() const { return i_ < p_.size(); }
  char Peek() const { return p_[i_]; }

  Info Alternation() {
    std::vector<Info> branches;
    branches.push_back(Sequence());
    while (More() && Peek() == '|') {
      ++i_;
      branches.push_back(Sequence());
    }
    if (branches.size() == 1) return std::move(branches[0]);
    return Union(branches);
  }

  Info Union(const std::vector<Info>& branches) {
    Info out;
    out.anchored = true;
    bool all_exact = true;
    std::vector<std::string> set;
    for (const Info& b : branches) {
      out.leading_class |= b.leading_class;
      out.anchored &= b.anchored;
      all_exact &= b.exact;
      if (b.exact) set.insert(set.end(), b.set.begin(), b.set.end());
    }
    if (all_exact && set.size() <= kMaxSet) {
      Info e = Exact(std::move(set));
      e.leading_class = out.leading_class;
      return e;
    }
    // One factor: the union of every branch's best one. A branch anchored
    // at the scan's start adds no candidate; one without a factor spoils it.
    LiteralFactor all;
    for (const Info& b : branches) {
      if (b.anchored) continue;
      std::optional<LiteralFactor> f = BestFactor(b, score_);
      if (!f) return out;
      all.alternatives.insert(all.alternatives.end(), f->alternatives.begin(),
                              f->alternatives.end());
    }
    if (!all.alternatives.empty()) {
      std::sort(all.alternatives.begin(), all.alternatives.end());
      all.alternatives.erase(std::unique(all.alternatives.begin(), all.alternatives.end()),
                             all.alternatives.end());
      out.factors.push_back(std::move(all));
    }
    return out;
  }

  Info Sequence() {
    Info out;
    std::vector<std::string> run{""};
    bool flushed = false, before_literal = true, first = true;
    auto flush = [&] {
      if (!HasEmpty(run)) out.factors.push_back(LiteralFactor{run});
      run.assign(1, "");
      flushed = true;
    };
    while (More() && Peek() != '|' && Peek() != ')') {
      Info item = Repeat();
      if (first && item.anchored) out.anchored = true;
      if (!item.zero_width) first = false;
      if (before_literal) {
        out.leading_class |= item.leading_class;
        // A line start alone is no literal here: '^[a-z]+Error' still leads with a class.
        if (item.exact && !item.set.empty() && !HasEmpty(item.set) && !HasLineStartOnly(item.set)) {
          before_literal = false;
        }
        if (!item.exact && !item.factors.empty()) before_literal = false;
      }
      if (item.exact && Fits(run, item.set)) {
        run = Cross(run, item.set);
        continue;
      }
      flush();
      if (item.exact) {
        if (!HasEmpty(item.set)) out.factors.push_back(LiteralFactor{item.set});
      } else {
        for (LiteralFactor& f : item.factors) out.factors.push_back(std::move(f));
      }
    }
    if (!flushed) {
      Info e = Exact(std::move(run));
      e.leading_class = out.leading_class;
      e.anchored = out.anchored;
      return e;
    }
    flush();
    return out;
  }

  static bool Fits(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    if (b.empty() || a.size() * b.size() > kMaxSet) return false;
    for (const std::string& x : a) {
      for (const std::string& y : b) {
        if (x.size() + y.size() > kMaxString) return false;
      }
    }
    return true;
  }

  static std::vector<std::string> Cross(const std::vector<std::string>& a,
                                        const std::vector<std::string>& b) {
    std::vector<std::string> out;
    for (const std::string& x : a) {
      for (const std::string& y : b) {
        // Two line starts in a row ('^^', '(?:^|x)^') are one place.
        const bool twice = !x.empty() && x.back() == kLineStart && AtLineStart(y);
        out.push_back(twice ? x + y.substr(1) : x + y);
      }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  Info Repeat() {
    Info atom = Atom();
    if (!More()) return atom;
    size_t lo = 1, hi = 1;
    char c = Peek();
    if (c == '*') {
      lo = 0, hi = kInfinite;
    } else if (c == '+') {
      lo = 1, hi = kInfinite;
    } else if (c == '?') {
      lo = 0, hi = 1;
    } else if (c == '{' && Braces(&lo, &hi)) {
      // Braces moved i_ onto the closing brace.
    } else {
      return atom;
    }
    ++i_;
    if (More() && (Peek() == '?' || Peek() == '+')) ++i_;  // lazy, possessive
    return Repeated(std::move(atom), lo, hi);
  }

  // {n}, {n,}, {n,m}: true with i_ on the '}'; false (a literal '{') else.
  bool Braces(size_t* lo, size_t* hi) {
    size_t j = i_ + 1, a = 0, b = 0;
    bool digits = false, comma = false, b_digits = false;
    for (; j < p_.size() && (std::isdigit(static_cast<unsigned char>(p_[j])) || p_[j] == ','); ++j) {
      if (p_[j] == ',') {
        if (comma) return false;
        comma = true;
      } else if (!comma) {
        a = std::min<size_t>(a * 10 + static_cast<size_t>(p_[j] - '0'), 1000000);
        digits = true;
      } else {
        b = std::min<size_t>(b * 10 + static_cast<size_t>(p_[j] - '0'), 1000000);
        b_digits = true;
      }
    }
    if (j >= p_.size() || p_[j] != '}' || !digits) return false;
    *lo = a;
    *hi = !comma ? a : b_digits ? b : kInfinite;
    i_ = j;
    return true;
  }

  static Info Repeated(Info atom, size_t lo, size_t hi) {
    Info out;
    out.leading_class = atom.leading_class || (hi == kInfinite && !atom.exact);
    out.anchored = atom.anchored;
    if (atom.zero_width) return atom;
    if (atom.exact && lo == 0 && hi == 1) {
      atom.set.push_back("");
      Info e = Exact(std::move(atom.set));
      e.leading_class = out.leading_class;
      return e;
    }
    if (lo == 0) return out;
    if (atom.exact && lo == hi && lo <= 4) {
      std::vector<std::string> set{""};
      for (size_t k = 0; k < lo; ++k) {
        if (!Fits(set, atom.set)) break;
        set = Cross(set, atom.set);
      }
      if (set.size() <= kMaxSet && !set.front().empty() &&
          std::all_of(set.begin(), set.end(), [&](const std::string& s) {
            return s.size() == lo * atom.set.front().size();
          }) && std::all_of(atom.set.begin(), atom.set.end(), [&](const std::string& s) {
            return s.size() == atom.set.front().size();
          })) {
        return Exact(std::move(set));
      }
    }
    if (atom.exact) {
      if (!HasEmpty(atom.set)) out.factors.push_back(LiteralFactor{atom.set});
    } else {
      out.factors = std::move(atom.factors);
    }
    return out;
  }

  Info Atom() {
    char c = Peek();
    ++i_;
    switch (c) {
      case '(':
        return Group();
      case '[':
        return Class();
      case '.':
        beyond_plain_ = true;
        return AnyChar();
      case '^': {
        // A line's start: the database is compiled multi-line, so Hyperscan
        // tries it after every newline, not only where a scan starts. RE2
        // confirms on the line, where ^ is the line's start. As a literal it
        // is the newline before the line (kLineStart), so '^Name:' is the
        // factor "\nName:", searched as ^Name: (HsLiteralAlternation): a
        // line that holds "Name:" elsewhere ("PG Name: 0") is no candidate.
        beyond_plain_ = true;
        Info z = Exact({std::string(1, kLineStart)});
        z.zero_width = true;
        return z;
      }
      case '$': {
        beyond_plain_ = true;
        Info z = Exact({""});
        z.zero_width = true;
        return z;
      }
      case '\\':
        return Escape();
      default:
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) beyond_plain_ = true;
        return Char(static_cast<unsigned char>(c));
    }
  }

  Info Char(unsigned char c) {
    if (caseless_) c = static_cast<unsigned char>(std::tolower(c));
    return Exact({std::string(1, static_cast<char>(c))});
  }

  Info Group() {
    bool saved = caseless_;
    if (More() && Peek() == '?') {
      ++i_;
      beyond_plain_ = true;
      if (More() && (Peek() == 'P' || Peek() == '<')) {  // (?P<name> / (?<name>
        while (More() && Peek() != '>') ++i_;
        if (More()) ++i_;
      } else {
        // (?:  (?i:  (?i)  (?-i:
        if (Peek() != ':') anchor_or_flags_ = true;
        bool on = true;
        while (More() && Peek() != ':' && Peek() != ')') {
          if (Peek() == '-') on = false;
          if (Peek() == 'i') caseless_ = on;
          ++i_;
        }
        if (More() && Peek() == ')') {  // (?i): the flags hold to the end of the enclosing group
          ++i_;
          Info z = Exact({""});
          z.zero_width = true;
          return z;
        }
        if (More()) ++i_;
      }
    }
    Info in = Alternation();
    if (More() && Peek() == ')') ++i_;
    caseless_ = saved;
    return in;
  }

  Info Escape() {
    if (!More()) return AnyChar();
    char e = Peek();
    ++i_;
    if (std::isalnum(static_cast<unsigned char>(e))) beyond_plain_ = true;
    // \A anchors; \Q...\E quotes metacharacters this parser would read as
    // syntax: no literal search stands in for either.
    if (e == 'A' || e == 'Q') anchor_or_flags_ = true;
    if (e == 'p' || e == 'P') {  // \pL, \p{Greek}: one character of a class
      if (More() && Peek() == '{') {
        while (More() && Peek() != '}') ++i_;
      }
      if (More()) ++i_;
      return AnyChar();
    }
    if (e >= '0' && e <= '7') {  // an octal code, up to three digits
      for (int k = 0; k < 2 && More() && Peek() >= '0' && Peek() <= '7'; ++k) ++i_;
      return AnyChar();
    }
    switch (e) {
      case 't': return Char('\t');
      case 'n': return Char('\n');
      case 'r': return Char('\r');
      case 'f': return Char('\f');
      case 'v': return Char('\v');
      case 'a': return Char('\a');
      case 'e': return Char(0x1b);
      case 'x': return Char(static_cast<unsigned char>(Hex()));
      case 'b': case 'B': case 'z': case 'Z': case 'G': {
        Info z = Exact({""});
        z.zero_width = true;
        return z;
      }
      case 'A': {
        Info z = Exact({""});
        z.zero_width = true;
        z.anchored = true;
        return z;
      }
      default:
        if (std::isalnum(static_cast<unsigned char>(e))) return AnyChar();  // \d \w \s \p ...
        return Char(static_cast<unsigned char>(e));
    }
  }

  // After "\x": two hex digits or {hex}.
  unsigned Hex() {
    unsigned v = 0;
    auto digit = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    if (More() && Peek() == '{') {
      ++i_;
      while (More() && Peek() != '}') v = (v << 4) | static_cast<unsigned>(std::max(0, digit(p_[i_++])));
      if (More()) ++i_;
      return v & 0xff;
    }
    for (int k = 0; k < 2 && More() && digit(Peek()) >= 0; ++k) v = (v << 4) | static_cast<unsigned>(digit(p_[i_++]));
    return v;
  }

  // A class: exact when it holds at most four characters (after case
  // folding), else one unknown character.
  Info Class() {
    std::bitset<256> set;
    bool negated = More() && Peek() == '^';
    if (negated) ++i_;
    bool first = true;
    int prev = -1;
    while (More() && (Peek() != ']' || first)) {
      first = false;
      int c = static_cast<unsigned char>(Peek());
      ++i_;
      if (c == '\\' && More()) {
        char e = Peek();
        ++i_;
        if (e == 'd') {
          for (int d = '0'; d <= '9'; ++d) set.set(static_cast<size_t>(d));
          prev = -1;
          continue;
        }
        if (std::isalpha(static_cast<unsigned char>(e)) && e != 't' && e != 'n' && e != 'x' &&
            e != 'r' && e != 'f' && e != 'v' && e != 'e') {
          set.set();  // \w \s ...: many characters
          prev = -1;
          continue;
        }
        c = e == 't' ? '\t' : e == 'n' ? '\n' : e == 'r' ? '\r' : e == 'f' ? '\f'
            : e == 'v' ? '\v' : e == 'e' ? 0x1b : e == 'x' ? static_cast<int>(Hex())
            : static_cast<unsigned char>(e);
      } else if (c == '-' && prev >= 0 && More() && Peek() != ']') {
        int hi = static_cast<unsigned char>(Peek());
        ++i_;
        if (hi == '\\' && More()) hi = static_cast<unsigned char>(p_[i_++]);
        for (int k = prev; k <= hi; ++k) set.set(static_cast<size_t>(k));
        prev = -1;
        continue;
      }
      set.set(static_cast<size_t>(c));
      prev = c;
    }
    if (More()) ++i_;  // ']'
    if (negated) {
      beyond_plain_ = true;
      set.flip();
    }
    std::vector<std::string> chars;
    for (int k = 0; k < 256; ++k) {
      if (!set.test(static_cast<size_t>(k))) continue;
      int ch = caseless_ ? std::tolower(k) : k;
      chars.push_back(std::string(1, static_cast<char>(ch)));
    }
    std::sort(chars.begin(), chars.end());
    chars.erase(std::unique(chars.begin(), chars.end()), chars.end());
    if (chars.empty() || chars.size() > 4) return AnyChar();
    return Exact(std::move(chars));
  }

  std::string_view p_;
  size_t i_ = 0;
  bool beyond_plain_ = false;
  bool anchor_or_flags_ = false;
  bool caseless_;
  const FactorScore& score_;
};

// Static preference without a sample: the longest shortest alternative,
// then the fewest alternatives.
double StaticScore(const LiteralFactor& f) {
  return -static_cast<double>(f.ShortestLength()) * 1000 + static_cast<double>(f.alternatives.size());
}

PatternShape Shape(std::string_view pattern, bool caseless, const FactorScore& score) {
  Parser parser(pattern, caseless, score);
  Info top = parser.Parse();
  PatternShape shape;
  shape.beyond_plain = parser.beyond_plain();
  shape.has_anchor_or_flags = parser.has_anchor_or_flags();
  shape.leading_class = top.leading_class;
  shape.anchored = top.anchored;
  if (std::optional<LiteralFactor> f = top.exact ? BestFactor(top, score) : std::nullopt) {
    shape.factors.push_back(std::move(*f));
  } else {
    shape.factors = std::move(top.factors);
  }
  return shape;
}

}  // namespace

// The lines of a sample that hold each string, case-sensitively or in the
// lowercased sample, memoised.
class SampleIndex {
 public:
  explicit SampleIndex(std::string_view text) : text_(text), lower_(text) {
    for (char& c : lower_) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (size_t i = 0; i < text_.size(); ++i) {
      if (text_[i] == '\n') line_ends_.push_back(i);
    }
    if (text_.empty() || text_.back() != '\n') line_ends_.push_back(text_.size());
  }

  size_t lines() const { return line_ends_.size(); }
  size_t bytes() const { return text_.size(); }

  // Lines holding any alternative of f.
  size_t Lines(const LiteralFactor& f, bool caseless) {
    std::vector<uint32_t> all;
    for (const std::string& a : f.alternatives) {
      const std::vector<uint32_t>& l = LinesOf(a, caseless);
      all.insert(all.end(), l.begin(), l.end());
    }
    std::sort(all.begin(), all.end());
    return static_cast<size_t>(std::unique(all.begin(), all.end()) - all.begin());
  }

  // Lines holding the last kHsLiteralTail bytes of any alternative of f:
  // where Hyperscan's literal matcher stops to confirm one.
  size_t TailLines(const LiteralFactor& f, bool caseless) {
    LiteralFactor tails;
    for (const std::string& a : f.alternatives) {
      tails.alternatives.push_back(a.size() > kHsLiteralTail ? a.substr(a.size() - kHsLiteralTail) : a);
    }
    return Lines(tails, caseless);
  }

 private:
  const std::vector<uint32_t>& LinesOf(const std::string& s, bool caseless) {
    auto key = std::make_pair(s, caseless);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    std::vector<uint32_t>& out = memo_[key];
    std::string_view hay = caseless ? std::string_view(lower_) : text_;
    if (s.empty()) return out;
    // A line-start literal at the sample's very start has no newline before it.
    if (AtLineStart(s) && hay.substr(0, s.size() - 1) == std::string_view(s).substr(1)) out.push_back(0);
    for (size_t pos = hay.find(s); pos != std::string_view::npos; pos = hay.find(s, pos + 1)) {
      // A leading newline is the end of the line before the one it starts.
      const size_t at = AtLineStart(s) ? pos + 1 : pos;
      uint32_t line = static_cast<uint32_t>(
          std::lower_bound(line_ends_.begin(), line_ends_.end(), at) - line_ends_.begin());
      if (out.empty() || out.back() != line) out.push_back(line);
    }
    return out;
  }

  std::string_view text_;
  std::string lower_;
  std::vector<size_t> line_ends_;
  std::map<std::pair<std::string, bool>, std::vector<uint32_t>> memo_;
};

namespace {

std::string Printable(std::string_view s) {
  std::string out;
  if (AtLineStart(s)) {
    out = "^";
    s.remove_prefix(1);
  }
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// What Hyperscan is given to search for a factor: each alternative cut at
// the end where its last kHsLiteralTail bytes are in the fewest sample lines
// (then the longest), among the cuts no shorter than kHsLiteralTail (or the
// alternative) whose literal is in no more sample lines than the whole.
// Every match of the pattern holds the whole alternative, so it holds the
// cut one: the lines found are the same, and Hyperscan stops on fewer
// places ("saving checkpoint at iteration" ends in "teration", on every
// progress line of some trainers; cut to "saving checkpoint at iterat").
LiteralFactor SearchedForm(const LiteralFactor& f, bool caseless, SampleIndex& index) {
  LiteralFactor out;
  for (const std::string& a : f.alternatives) {
    LiteralFactor whole{{a}};
    const size_t whole_lines = index.Lines(whole, caseless);
    size_t best_end = a.size(), best_tail = index.TailLines(whole, caseless);
    for (size_t end = a.size(); best_tail > 0 && end-- > kHsLiteralTail;) {
      LiteralFactor cut{{a.substr(0, end)}};
      const size_t tail = index.TailLines(cut, caseless);
      if (tail < best_tail && index.Lines(cut, caseless) <= whole_lines) best_end = end, best_tail = tail;
    }
    std::string lit = a.substr(0, best_end);
    if (std::find(out.alternatives.begin(), out.alternatives.end(), lit) == out.alternatives.end()) {
      out.alternatives.push_back(std::move(lit));
    }
  }
  return out;
}

// Literals as one Hyperscan expression: (?:a|b), every byte but letters,
// digits, blank and underscore as \xHH.
std::string HsLiteralAlternation(const std::vector<std::string>& alternatives) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "(?:";
  for (size_t k = 0; k < alternatives.size(); ++k) {
    if (k) out += '|';
    std::string_view a = alternatives[k];
    if (AtLineStart(a)) {
      out += '^';
      a.remove_prefix(1);
    }
    for (unsigned char c : a) {
      if (std::isalnum(c) || c == ' ' || c == '_') {
        out += static_cast<char>(c);
      } else {
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 15];
      }
    }
  }
  out += ')';
  return out;
}

}  // namespace

size_t LiteralFactor::ShortestLength() const {
  size_t n = kInfinite;
  // A line start counts as two characters: where a byte may be anywhere in
  // a line, it is one place a line, at its start ('^F ' is rarer than 'F ' or
  // '\nF'; lines that start so are what the sample counts).
  for (const std::string& a : alternatives) n = std::min(n, a.size() + (AtLineStart(a) ? 1 : 0));
  return alternatives.empty() ? 0 : n;
}

PatternShape AnalysePattern(std::string_view pattern, bool caseless) {
  return Shape(pattern, caseless, StaticScore);
}

bool IsLiteralAlternation(std::string_view expr) {
  if (expr.size() < 5 || expr.substr(0, 3) != "(?:" || expr.back() != ')') return false;
  std::string_view body = expr.substr(3, expr.size() - 4);
  size_t run = 0;
  bool line_start = false;
  for (size_t i = 0; i < body.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(body[i]);
    if (c == '^' && run == 0 && !line_start) {
      line_start = true;  // an alternative at a line's start
    } else if (c == '|') {
      line_start = false;
      if (run == 0) return false;
      run = 0;
    } else if (c == '\\') {
      if (i + 3 >= body.size() || body[i + 1] != 'x' || !std::isxdigit(static_cast<unsigned char>(body[i + 2])) ||
          !std::isxdigit(static_cast<unsigned char>(body[i + 3]))) {
        return false;
      }
      i += 3;
      ++run;
    } else if (std::isalnum(c) || c == ' ' || c == '_') {
      ++run;
    } else {
      return false;
    }
  }
  return run > 0;
}

const CostModel& DefaultCostModel() {
  // Calibrated against `faultline bench --costs` (bench/README.md, "The
  // cost budget"): one line of the 136 KB sample is 7.4 per MB.
  static const CostModel model{/*min_factor_length=*/4, /*short_factor_penalty=*/1000,
                               /*leading_class_penalty=*/50, /*budget=*/300};
  return model;
}

std::string_view CostReferenceSample() {
  return std::string_view(fl_internal_cost_sample_begin,
                          static_cast<size_t>(fl_internal_cost_sample_end - fl_internal_cost_sample_begin));
}

std::string CostEstimate::Explain(const CostModel& model) const {
  std::string out;
  if (anchored) return "anchored at the start of a scan";
  if (factor.empty()) {
    out = "no literal factor";
  } else {
    StrAppend(&out, "literal factor '", factor, "'");
    if (factor_length < model.min_factor_length) {
      StrAppend(&out, " (", factor_length, " char", factor_length == 1 ? "" : "s", ", below ",
                model.min_factor_length, ")");
    }
  }
  StrAppend(&out, ", ", static_cast<long>(candidates_per_mb + 0.5), " candidate lines per MB");
  if (leading_class) out += ", a leading class";
  return out;
}

PatternCostEstimator::PatternCostEstimator(std::string_view sample, const CostModel& model)
    : model_(model), index_(std::make_unique<SampleIndex>(sample)) {}

PatternCostEstimator::~PatternCostEstimator() = default;

CostEstimate PatternCostEstimator::Estimate(std::string_view pattern, bool caseless) {
  SampleIndex& index = *index_;
  const size_t min_length = model_.min_factor_length;
  FactorScore score = [&](const LiteralFactor& f) {
    // Fewest candidate lines, then the longest: a longer literal is cheaper
    // to search. A short factor loses to any usable one.
    double lines = static_cast<double>(index.Lines(f, caseless));
    double length = static_cast<double>(std::min<size_t>(f.ShortestLength(), 64));
    return (f.ShortestLength() < min_length ? 1e12 : 0) + lines * 100 - length;
  };
  PatternShape shape = Shape(pattern, caseless, score);
  CostEstimate est;
  est.leading_class = shape.leading_class;
  est.anchored = shape.anchored;
  est.re2_confirms = shape.beyond_plain;
  if (shape.anchored) return est;
  const LiteralFactor* best = nullptr;
  double best_score = 0;
  for (const LiteralFactor& f : shape.factors) {
    double s = score(f);
    if (!best || s < best_score) best = &f, best_score = s;
  }
  const double mb = static_cast<double>(std::max<size_t>(index.bytes(), 1)) / 1e6;
  if (best) {
    // A factor too short to anchor on leaves every line a candidate.
    est.candidates_per_mb = static_cast<double>(best->ShortestLength() < min_length ? index.lines()
                                                                                   : index.Lines(*best, caseless)) /
                            mb;
    est.factor_length = best->ShortestLength();
    for (size_t k = 0; k < best->alternatives.size() && k < 4; ++k) {
      StrAppend(&est.factor, k ? "|" : "", Printable(best->alternatives[k]));
    }
    if (best->alternatives.size() > 4) StrAppend(&est.factor, "|...");
    if (est.factor_length >= min_length) {
      // Hyperscan stops wherever the sample holds the end of the literal it
      // searches, which may be far more lines than hold the literal.
      const size_t tails = index.TailLines(SearchedForm(*best, caseless, index), caseless);
      est.candidates_per_mb = std::max(est.candidates_per_mb, static_cast<double>(tails) / mb);
    }
    if (!shape.has_anchor_or_flags && est.factor_length >= min_length) {
      est.literals = HsLiteralAlternation(SearchedForm(*best, caseless, index).alternatives);
      // Every usable factor, best first, for a caller that weighs them
      // against the other signals' (a literal many signals share finds
      // all of them on each other's lines).
      std::vector<std::pair<double, const LiteralFactor*>> usable;
      for (const LiteralFactor& f : shape.factors) {
        if (f.ShortestLength() >= min_length) usable.emplace_back(score(f), &f);
      }
      std::stable_sort(usable.begin(), usable.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& [unused, f] : usable) {
        LiteralFactor searched = SearchedForm(*f, caseless, index);
        est.options.push_back({HsLiteralAlternation(searched.alternatives), index.Lines(searched, caseless),
                               searched.ShortestLength(), index.TailLines(searched, caseless)});
      }
    }
  } else {
    est.candidates_per_mb = static_cast<double>(index.lines()) / mb;
  }
  est.cost = est.candidates_per_mb;
  if (est.factor_length < min_length) est.cost += model_.short_factor_penalty;
  if (est.leading_class) est.cost += model_.leading_class_penalty;
  return est;
}

}  // namespace faultline
