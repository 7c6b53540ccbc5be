// What each signal adds to a scan, for `faultline bench --costs`: on a
// sample of the input, the signal's pattern alone in Hyperscan (a literal
// that is rare and long scans at many GB/s; a pattern without one drags the
// whole database down), the lines it matches, and what phase B spends on
// them: the confirmation the scanner makes (none where the Hyperscan match
// stands for the pattern; the hand parser, or RE2 where that cannot tell)
// and the extracts. CPU time of the calling thread, best of 3.
//
// Thread-safety: a plain function; the ruleset is shared read-only.
#ifndef FAULTLINE_SCAN_SIGNAL_COST_H_
#define FAULTLINE_SCAN_SIGNAL_COST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ruleset/ruleset.h"

namespace faultline {

struct SignalCost {
  uint32_t signal = 0;             // global signal id
  uint64_t lines = 0;              // sample lines the pattern matched (confirmed)
  double alone_s_per_gb = 0;       // Hyperscan, the pattern alone over the sample
  double confirm_us_per_line = 0;  // confirm + extract per matched line, as phase B does them
};

struct SignalCosts {
  uint64_t sample_bytes = 0;
  double full_s_per_gb = 0;          // the whole database over the same sample
  std::vector<SignalCost> signals;   // every signal, costliest alone first
  std::vector<std::string> skipped;  // inputs the sample could not use, with why
};

// The sample: at most `sample_bytes` (counted decompressed) from the start
// of the files `paths` stand for (directories read recursively; .gz/.zst
// decompressed, and read no further than their share), shared in proportion
// to their sizes on disk and cut after a newline; what a file cannot fill
// passes to the files after it. Standard input ("-") is skipped. Fails when
// no input gives a byte.
absl::StatusOr<SignalCosts> MeasureSignalCosts(const Ruleset& rs,
                                               const std::vector<std::string>& paths,
                                               uint64_t sample_bytes);

}  // namespace faultline

#endif  // FAULTLINE_SCAN_SIGNAL_COST_H_
