// The compiler's cost check: what one signal's pattern adds to a scan,
// estimated without a clock. Every pattern of the ruleset is one Hyperscan
// database; its speed follows the literals Hyperscan can anchor on -- how
// short they are and how often they occur in ordinary lines, each
// occurrence a candidate Hyperscan has to confirm -- and the engines a
// pattern without a usable literal needs over every byte.
//
// The estimate reads a pattern's required literal factors from its syntax
// (sets of strings of which every match holds one), counts the lines of a
// fixed reference sample -- ordinary lines of the bench generator's logs,
// embedded in the library -- that hold the rarest factor, and adds fixed
// penalties for a short or missing factor and for a leading class. Same
// pattern, same figure, on any machine under any load; bench/README.md
// ("The cost budget") has its calibration against timed scans.
//
// Thread-safety: plain functions; the sample is immutable.
#ifndef FAULTLINE_RULESET_PATTERN_COST_H_
#define FAULTLINE_RULESET_PATTERN_COST_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace faultline {

// A set of strings of which every match of the pattern holds at least one
// (lowercase when the pattern is caseless).
struct LiteralFactor {
  std::vector<std::string> alternatives;
  size_t ShortestLength() const;
};

struct PatternShape {
  std::vector<LiteralFactor> factors;
  // Some branch starts with a repeated class or '.' before any literal
  // ([A-Za-z_]+Error, .*foo): Hyperscan runs an engine over the bytes before
  // each candidate, or over all of them.
  bool leading_class = false;
  // Every branch starts with \A: Hyperscan tries it only where a scan
  // starts. (^ is a line's start: the database is compiled multi-line.)
  bool anchored = false;
  // Uses '.', [^...], an escape of a letter, $ or a named group: Hyperscan's
  // match alone never confirms it, RE2 confirms its lines anyway.
  bool beyond_plain = false;
  // Has \A, \Q or inline flags anywhere: no literal search stands in for it.
  bool has_anchor_or_flags = false;
};

// The factors and the leading-class fact of a pattern in the PCRE subset the
// rules use (rulesets/README.md). Constructs it does not know count as a
// class (no literal), so the estimate errs on the costly side.
PatternShape AnalysePattern(std::string_view pattern, bool caseless);

// Penalties and the budget, in candidate lines per MB of the reference
// sample (calibration in bench/README.md).
struct CostModel {
  size_t min_factor_length = 4;       // a factor shorter than this counts as none
  double short_factor_penalty = 0;    // added when the best factor is shorter
  double leading_class_penalty = 0;   // added for a leading class
  double budget = 0;                  // CheckSignalCost fails above it
};
const CostModel& DefaultCostModel();

struct CostEstimate {
  // Reference lines holding the chosen factor, or the end Hyperscan
  // searches it by (its last 8 bytes) where more lines hold that, per MB.
  double candidates_per_mb = 0;
  double cost = 0;               // candidates plus penalties: compared with the budget
  std::string factor;            // the chosen factor, "a|b" (empty: none)
  size_t factor_length = 0;      // its shortest alternative
  bool leading_class = false;
  bool anchored = false;
  // The chosen factor as one Hyperscan expression, (?:a|b), when it has
  // min_factor_length characters or more and the pattern has no \A, \Q or
  // inline flag; empty otherwise. Every match of the pattern holds one of
  // its literals, so searching them finds every line the pattern matches.
  std::string literals;
  // Every factor that could stand in as `literals` does, best first (the
  // first is `literals`): the literals, the sample lines holding them, the
  // shortest alternative's length, and the sample lines holding the last 8
  // bytes of one (where Hyperscan's literal matcher stops to confirm).
  // Each literal is the factor's alternative cut where that tail is rarest
  // in the sample (a cut literal is in every line the whole one is).
  struct Option {
    std::string literals;
    size_t sample_lines = 0;
    size_t length = 0;
    size_t tail_lines = 0;
  };
  std::vector<Option> options;
  // The pattern is beyond_plain: RE2 confirms its lines whatever Hyperscan
  // searches for.
  bool re2_confirms = false;
  // Why the figure is what it is, one clause: "factor 'ab' (2 chars, below
  // 4), 1,234 candidate lines per MB, leading class".
  std::string Explain(const CostModel& model) const;
};

// Whether `expr` is a literal alternation as CostEstimate::literals writes
// it: "(?:" alternatives of letters, digits, blanks, '_' and \xHH, each
// maybe led by '^' (at a line's start), "|", ")". The loader accepts no
// other prefilter.
bool IsLiteralAlternation(std::string_view expr);

// The reference sample (src/ruleset/cost_sample.log, embedded).
std::string_view CostReferenceSample();

class SampleIndex;

// Estimates on one sample (lines ending in '\n'). It remembers which lines
// hold each literal it looked up, so one estimator serves a whole ruleset.
// Not thread-safe: one per thread.
class PatternCostEstimator {
 public:
  explicit PatternCostEstimator(std::string_view sample = CostReferenceSample(),
                                const CostModel& model = DefaultCostModel());
  ~PatternCostEstimator();
  PatternCostEstimator(const PatternCostEstimator&) = delete;
  PatternCostEstimator& operator=(const PatternCostEstimator&) = delete;

  CostEstimate Estimate(std::string_view pattern, bool caseless);
  const CostModel& model() const { return model_; }

 private:
  CostModel model_;
  std::unique_ptr<SampleIndex> index_;
};

}  // namespace faultline

#endif  // FAULTLINE_RULESET_PATTERN_COST_H_
