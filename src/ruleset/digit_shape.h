// A hand parser for the commonest extract shape: literals with decimal
// numbers captured between them, e.g.
//   global rank: (?P<rank>[0-9]+), TIMEOUT\(ms\): (?P<timeout_ms>[0-9]+)
// A capture is a digit run `[0-9]+`, a run of digits and dots `[0-9.]+`, a
// literal `(?P<metric>lm loss)`, or, last in the pattern, the rulesets'
// number `[-+]?(?:[0-9]+\.?[0-9]*(?:[eE][-+]?[0-9]+)?|nan|...|Infinity)`;
// a run of blanks (`[ \t]+`, ` +`) or an optional byte (`'?`) may come
// before a capture, and items without captures (ShapeItem) may follow the
// last capture's literal: `iteration +(?P<step>[0-9]+)/ *[0-9]+ \|`.
// chosen when a signal's regexes are built (SignalInfo::BuildRegex) and used
// instead of RE2 on every matched line. It answers exactly what
// RE2::PartialMatch would (tests/ruleset/digit_shape_test.cc), because the
// shape admits only patterns whose match at a start is unique: every capture
// is followed by the end or by a literal that does not start with a digit,
// so the greedy digit run is always taken whole (a number ends the pattern, a
// blank run is followed by a capture that does not start with a blank).
#ifndef FAULTLINE_RULESET_DIGIT_SHAPE_H_
#define FAULTLINE_RULESET_DIGIT_SHAPE_H_

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace faultline {

// At most this many captures (ExtractFields keeps their values on the stack).
constexpr size_t kMaxShapeCaptures = 8;

enum class ShapeKind { kDigits, kDigitsDots, kLiteral, kNumber };

// A piece of a pattern: a literal, a run of a byte class (`[0-9]+`,
// `[ \t]*`, ` +`, `[a-z_]*`, or one byte of a class, `[ \t,\]]`, or
// at most one, `[0-9]?`), an optional byte (`'?`), the rulesets' number, a
// group of literal alternatives (`(?:grad_norm|learning_rate)`), a gap
// (`[^\n]*`), the start of the subject (`^`), or a group of item sequences
// (`(?:a=(?P<x>[0-9]+)|b)`, `(?:...)?`), which may capture.
struct ShapeItem {
  enum Kind { kLit, kRun, kOpt, kNumber, kAlt, kGap, kBegin, kGroup };
  Kind kind = kLit;
  std::vector<std::string> texts;  // kLit, kOpt: one; kAlt: each alternative
  std::string set;                 // kRun: the class's bytes
  std::bitset<256> bytes;          // kRun: the same, as a table
  size_t min = 0;                  // kRun: 0 (`*`, `?`) or 1 (`+`, none)
  size_t max = SIZE_MAX;           // kRun: 1 for a class without `*` or `+`
  std::vector<std::vector<ShapeItem>> branches;  // kGroup: its alternatives
  int capture = -1;                // kGroup: its capture's index, or -1
  bool optional = false;           // kGroup: followed by `?`
};

// A pattern as items: a signal's pattern to confirm a line with, or an
// extract whose groups capture (a shape the digit shape does not take:
// `[ \t,](?:(?:a|b)=(?P<x>[0-9.]+)|c=(?P<y>[0-9.]+))`).
struct ItemShape {
  std::vector<ShapeItem> items;
  std::vector<std::string> captures;  // capture names, in group order
  std::bitset<256> first;             // the bytes a match can start with
  bool any_start = false;             // a match may start with any byte
  // When the first item is one byte of a class: the bytes the second item
  // can start with (any_second false), as a second filter of the starts.
  std::bitset<256> second;
  bool any_second = true;
  bool gap = false;                   // a gap is among the items
};

struct DigitShape {
  // literals.size() == captures.size() + 1; literals[0] is not empty.
  std::vector<std::string> literals;
  std::vector<std::string> captures;  // capture names, in group order
  // Per capture: its kind, its text (kLiteral), the blanks of a run before it
  // ("" when there is none).
  std::vector<ShapeKind> kinds;
  std::vector<std::string> texts;
  std::vector<std::string> blanks;
  std::string opts;  // per capture: its optional byte, '\0' when none
  // Items after the last capture's literal (which is then not empty): they
  // decide whether the match at a start holds, not what it captures.
  std::vector<ShapeItem> tail;
  // The text every match starts with: literals[0] and the literal captures
  // (without blanks) and literals that follow it; `lead` such captures.
  std::string head;
  size_t lead = 0;
};

// The shape of a case-sensitive extract pattern, or nullopt when the pattern
// is anything else (then RE2 extracts).
std::optional<DigitShape> ParseDigitShape(std::string_view pattern);

// The leftmost match of `shape` in `subject`: the digit runs of its captures,
// in group order, in vals[0 .. captures.size()), and with `start` where the
// match starts. False when there is none; nullopt when the search of its
// items gave up (then RE2 must answer).
std::optional<bool> MatchDigitShape(const DigitShape& shape, std::string_view subject, std::string_view* vals,
                                    size_t* start = nullptr);

// A pattern as items (a signal's pattern, to confirm a line with; its groups
// do not capture), or nullopt when it is anything else.
std::optional<ItemShape> ParseItemShape(std::string_view pattern);

// Whether RE2::PartialMatch(subject, pattern) holds, for the items of
// `pattern`; nullopt when the hand parser cannot tell (a gap, `[^\n]`, over
// a subject with non-ASCII bytes, which RE2 reads as UTF-8, or the search's
// step budget ran out).
std::optional<bool> MatchItemShape(const ItemShape& shape, std::string_view subject);

// A pattern whose items end in another's (an extract's, its captures plain
// groups): the items before those, a literal the two share cut where the
// other's starts. Nullopt when the pattern does not end so, or when an item
// before is other than a literal, a run of a class, an optional byte or a
// list of literal alternatives (what ItemsEndAt reads).
std::optional<std::vector<ShapeItem>> ItemsBefore(const ItemShape& pattern, const ItemShape& suffix);

// Whether `items` (as ItemsBefore gives them) match some stretch of `s`
// that ends at `end`: 1 yes, 0 no, -1 when the search's step budget ran out.
int ItemsEndAt(const std::vector<ShapeItem>& items, std::string_view s, size_t end);

// The items of a case-sensitive extract pattern with named captures, or
// nullopt when it holds anything the items cannot tell in RE2's order (a
// gap, a number, an unnamed capture) or no capture.
std::optional<ItemShape> ParseCaptureShape(std::string_view pattern);

// The leftmost-first match of `shape` in `subject`, as RE2::PartialMatch:
// each capture's text in vals[0 .. captures.size()), a null view for one
// that did not take part. False when there is none; nullopt when the search
// gave up (then RE2 must answer).
std::optional<bool> MatchCaptureShape(const ItemShape& shape, std::string_view subject, std::string_view* vals);

}  // namespace faultline

#endif  // FAULTLINE_RULESET_DIGIT_SHAPE_H_
