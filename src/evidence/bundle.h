// Evidence bundles: a ScanResult as FlatBuffers bytes (bundle.fbs), so scans
// of shards run anywhere and one correlation merges them. Reading verifies
// the buffer first and maps rules and signals by id onto the loading ruleset.
//
// Thread-safety: plain functions; the ruleset is shared read-only.
#ifndef FAULTLINE_EVIDENCE_BUNDLE_H_
#define FAULTLINE_EVIDENCE_BUNDLE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "evidence/evidence.h"
#include "evidence/merge.h"
#include "ruleset/ruleset.h"

namespace faultline {

// Format 2 adds the Flight Recorder dumps (bundle.fbs: Bundle.flight_recorder);
// a format 1 bundle, which has none, still loads.
inline constexpr uint32_t kBundleFormatVersion = 2;
inline constexpr uint32_t kOldestBundleFormatVersion = 1;

std::string SerializeBundle(const Ruleset& rs, const ScanResult& scan);

// Errors name `name` and say what is wrong (not a bundle, newer format, a
// rule this ruleset lacks).
absl::StatusOr<ScanResult> ReadBundle(const Ruleset& rs, std::string_view data,
                                      std::string_view name);

// Merges scans of whole sources and of byte ranges of one source (given in
// file order) into one result, as if one scan had read everything: ranges of
// a source become one source, line numbers and inherited times continue
// across range boundaries, per-rank and per-rule statistics add up.
// Evidence is capped as one scan with `caps` would cap it (the parts must
// have been scanned with the same caps).
ScanResult MergeScans(const Ruleset& rs, std::vector<ScanResult> parts, EvidenceCaps caps = {});

}  // namespace faultline

#endif  // FAULTLINE_EVIDENCE_BUNDLE_H_
