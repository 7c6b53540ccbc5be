// Correlate: the passes of state.h, in order, over one CorrelationState,
// and the helpers the passes share. The steps run in one direction:
// attribute -> align clocks -> index -> window -> gate -> conditions ->
// cluster -> explain graph -> survived -> fallback -> incidents ->
// detectors -> flight recorder -> rank.
#include "correlate/correlate.h"

#include <cctype>

#include <utility>

#include "correlate/state.h"

namespace faultline {
namespace internal {

bool HardwareLayer(RuleLayer l) {
  return l == RuleLayer::Hardware || l == RuleLayer::Driver || l == RuleLayer::Kernel;
}

std::string FormatTime(int64_t us) { return us == kNoTime ? "unknown time" : FormatRfc3339(us); }

namespace {

// "rank {rank}" with the rank unknown: the value "the suspect rank" already
// names its noun, so the template's own "rank " before it goes.
size_t DropRepeatedNoun(std::string& t, size_t pos, std::string_view v) {
  if (!v.starts_with("the ")) return pos;
  std::string_view noun = v.substr(v.rfind(' ') + 1);
  if (pos < noun.size() + 1 || t.compare(pos - noun.size() - 1, noun.size(), noun) != 0 ||
      t[pos - 1] != ' ') {
    return pos;
  }
  size_t start = pos - noun.size() - 1;
  if (start > 0 && std::isalnum(static_cast<unsigned char>(t[start - 1]))) return pos;
  t.erase(start, noun.size() + 1);
  return start;
}

}  // namespace

std::string FillTemplate(std::string t, const std::map<std::string, std::string>& vars) {
  for (const auto& [k, v] : vars) {
    std::string key = "{" + k + "}";
    for (size_t pos = t.find(key); pos != std::string::npos; pos = t.find(key, pos + v.size())) {
      pos = DropRepeatedNoun(t, pos, v);
      t.replace(pos, key.size(), v);
    }
  }
  return t;
}

CorrelationState::CorrelationState(const Ruleset& rs, ScanResult& scan,
                                   const CorrelateOptions& opts)
    : rs(rs), scan(scan), opts(opts), evs(scan.evidence) {
  for (size_t r = 0; r < rs.rule_count(); ++r) {
    for (const auto& [tag, role] : kRoleTags) {
      if (RuleHasRole(*rs.rule(r), role)) {
        role_rules[static_cast<size_t>(role)].push_back(static_cast<uint32_t>(r));
      }
    }
  }
}

bool CorrelationState::HasRole(uint32_t rule, RuleRole role) const {
  for (uint32_t r : role_rules[static_cast<size_t>(role)]) {
    if (r == rule) return true;
  }
  return false;
}

bool CorrelationState::RulePresent(const flatbuffers::String* id) const {
  if (!id || id->size() == 0) return false;
  int r = rs.FindRule(id->string_view());
  return r >= 0 && present.contains(static_cast<uint32_t>(r));
}

bool CorrelationState::Edge(uint32_t from, uint32_t to, double* min_lag, double* max_lag) const {
  const auto* ex = rs.rule(from)->explains();
  if (!ex) return false;
  std::string_view to_id = rs.rule(to)->id()->string_view();
  for (const fb::Edge* e : *ex) {
    if (e->rule() && e->rule()->string_view() == to_id) {
      *min_lag = e->min_lag_s();
      *max_lag = e->max_lag_s();
      return true;
    }
  }
  return false;
}

// The order is the contract of state.h: each pass reads what the ones
// before it left.
constexpr void (*kPasses[])(CorrelationState&) = {
    Attribute,       AlignClocks,   BuildEvidenceIndex,  FindJobWindow, GateEvidence,
    ApplyConditions, BuildClusters, LinkCauses,          MarkSurvived,  ChooseFallback,
    BuildIncidents,  RunDetectors,  UseFlightRecorder,   AddPracticeFindings, RankIncidents,
    UseJobState,     EstimatePriors};

// One attempt's evidence (attempts.cc splits a job's attempts first).
Diagnosis CorrelateOnce(const Ruleset& rs, ScanResult& scan, const CorrelateOptions& opts) {
  CorrelationState st(rs, scan, opts);
  for (auto pass : kPasses) pass(st);
  return std::move(st.diag);
}

Diagnosis CorrelateAttempts(const Ruleset& rs, ScanResult& scan, const CorrelateOptions& opts);

}  // namespace internal

Diagnosis Correlate(const Ruleset& rs, ScanResult& scan, const CorrelateOptions& opts) {
  // First: which NCCL warnings were fatal is read off the lines around them.
  internal::KeepReturnChainHeads(rs, scan);
  Diagnosis d = internal::CorrelateAttempts(rs, scan, opts);
  d.job = opts.job;
  // Last: the action reads the ranked incidents and the attempts.
  DecideActions(rs, opts.retry, d);
  return d;
}

}  // namespace faultline
