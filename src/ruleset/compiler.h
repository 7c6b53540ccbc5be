// The rule source compiler: a directory of JSON rule files (see
// rulesets/README.md) -> validated, self-tested, compiled FlatBuffers binary.
//
// Thread-safety: the functions are reentrant.
#ifndef FAULTLINE_RULESET_COMPILER_H_
#define FAULTLINE_RULESET_COMPILER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ruleset/ruleset_key.h"

namespace faultline {

struct CompileOptions {
  // Hyperscan compile caps (resource bounds on hostile rule sources).
  size_t max_pattern_length = 4096;
  size_t max_signals = 20000;
  size_t max_bounded_repeat = 32;
  // Each bound may be small while their sum is not (BoundedRepeatTotal):
  // per pattern, and over the whole source.
  size_t max_repeat_total = 128;
  size_t max_source_repeat_total = 200'000;
  // Bytes of every pattern and extractor together, and of one JSON file:
  // a hostile source is refused before any engine compiles it.
  size_t max_total_pattern_bytes = size_t{4} << 20;
  size_t max_file_bytes = size_t{16} << 20;
  // Memory budget of each RE2 confirmer and extractor (RE2's max_mem).
  int64_t re2_max_mem = int64_t{2} << 20;
  // The cost budget of one signal (pattern_cost.h); negative: the default
  // model's.
  double cost_budget = -1;
};

struct CompileResult {
  std::string buffer;                 // the .flrules bytes
  std::vector<std::string> warnings;  // unselective patterns, ...
  size_t rules = 0;
  size_t signals = 0;
};

// Reads, validates, compiles and self-tests the rule source in src_dir.
// Errors name the file, the rule id and the field.
absl::StatusOr<CompileResult> CompileRuleSource(const std::string& src_dir,
                                                const CompileOptions& opts = {});

// Stamps a compiled ruleset (CompileRuleSource's buffer) with the key's id
// and MAC, in place, so that this installation loads its stored pattern
// database without recompiling it.
absl::Status SignRuleset(std::string* buffer, const RulesetKey& key);

// Writes bytes to path through a temporary file in the same directory and a
// rename, so no half-written file is ever left at path.
absl::Status WriteFileAtomic(const std::string& path, std::string_view bytes);

}  // namespace faultline

#endif  // FAULTLINE_RULESET_COMPILER_H_
