// Flight Recorder pass: the analysis across the job's NCCL Flight Recorder
// dumps (flightrec::AnalyzeFlightRecorder) enters the diagnosis as evidence
// about ranks, next to what the logs say of them.
//  - Hang suspects: the ranks missing at a process group's wavefront, then
//    the few members that left no dump while the others did. When an
//    incident the logs made already names one of them (the rank silent in
//    an all-rank watchdog timeout, the first to stop progressing, a seen
//    failure on that rank), logs and dumps name one suspect: it leads the
//    incident and the confidence rises as for two independent witnesses,
//    1 - (1 - logs) (1 - dumps). An incident the logs inferred without a
//    suspect, or with another one, takes the dumps' ranks first (the dumps
//    record who entered which collective; the logs only who complained).
//    Without such an incident the dumps make their own, of the rule whose
//    conditions.detector is "flight_recorder".
//  - Desync: the ranks that recorded another op, size or dtype at a
//    sequence id make an incident of the "flight_recorder_mismatch" rule;
//    survived (ranked below what ended a rank) when every dumped rank went
//    on to later collectives of the group.
// Each incident lists the findings it rests on (Incident::flight_recorder)
// and its explanation says what the dumps showed.
#include <algorithm>
#include <cmath>

#include "correlate/state.h"
#include "util/strings.h"

namespace faultline::internal {
namespace {

using flightrec::FrAnalysis;
using flightrec::FrFinding;

// What the dumps alone are worth as a witness of the suspect.
constexpr double kDumpsConfidence = 0.6;
constexpr size_t kMaxFindings = 16;

bool Has(const std::vector<int64_t>& v, int64_t r) {
  return std::find(v.begin(), v.end(), r) != v.end();
}

// Missing ranks, those of the largest groups first (the world group's
// wavefront is the job's), then members without a dump when they are few.
std::vector<int64_t> HangSuspects(const FrAnalysis& a) {
  std::vector<const flightrec::FrGroupReport*> groups;
  for (const auto& g : a.groups) groups.push_back(&g);
  std::stable_sort(groups.begin(), groups.end(),
                   [](auto* x, auto* y) { return x->members.size() > y->members.size(); });
  std::vector<int64_t> out;
  for (const auto* g : groups) {
    for (int64_t r : g->missing) {
      if (!Has(out, r)) out.push_back(r);
    }
  }
  for (const auto* g : groups) {
    if (g->no_dump.size() > std::max<size_t>(1, g->members.size() / 4)) continue;
    for (int64_t r : g->no_dump) {
      if (!Has(out, r)) out.push_back(r);
    }
  }
  return out;
}

std::vector<FrFinding> FindingsFor(const FrAnalysis& a, const std::vector<int64_t>& ranks,
                                   bool mismatches) {
  std::vector<FrFinding> out;
  for (int64_t r : ranks) {
    for (const FrFinding& f : a.findings) {
      bool kind_ok = mismatches ? f.kind == FrFinding::Kind::kMismatch
                                : (f.kind == FrFinding::Kind::kMissingRank ||
                                   f.kind == FrFinding::Kind::kNoDump);
      if (kind_ok && f.rank == r && out.size() < kMaxFindings) out.push_back(f);
    }
  }
  return out;
}

std::string DumpsSay(const std::vector<FrFinding>& fs) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < fs.size() && i < 3; ++i) parts.push_back(fs[i].detail);
  if (fs.size() > 3) parts.push_back(StrCat(fs.size() - 3, " more"));
  return StrJoin(parts, "; ");
}

// When rank `r` last recorded anything, from its dump (kNoTime without).
int64_t LastRecordUs(const CorrelationState& st, int64_t r) {
  int64_t t = kNoTime;
  for (const flightrec::FrDump& d : st.scan.flight_recorder) {
    if (d.rank != r) continue;
    for (const flightrec::FrEntry& e : d.entries) {
      if (e.time_created_ns > 0) t = std::max(t, e.time_created_ns / 1000);
    }
  }
  return t;
}

// Whether incident `i` of the logs names rank `r`: as its rank or a
// suspect, or, for a failure seen on a host without a rank (a kernel Xid
// line), as a rank running on that host.
bool Names(const CorrelationState& st, const Incident& i, int64_t r) {
  if (r == i.rank || Has(i.suspects, r)) return true;
  return i.rank < 0 && !i.inferred && !i.host.empty() && st.HostForRank(r) == i.host;
}

// The incident the dumps' suspects belong to: one that names one of them
// already (*agrees), else the first one the logs inferred (a symptom-only
// incident, the hang detector's); -1 when none.
int TargetIncident(const CorrelationState& st, const std::vector<int64_t>& suspects, bool* agrees) {
  const std::vector<Incident>& incs = st.diag.incidents;
  auto eligible = [](const Incident& i) { return i.detector.empty() || i.detector == "hang"; };
  for (size_t k = 0; k < incs.size(); ++k) {
    const Incident& i = incs[k];
    if (!eligible(i) || i.survived) continue;
    bool named = false;
    for (int64_t r : suspects) named |= Names(st, i, r);
    if (named) {
      *agrees = true;
      return static_cast<int>(k);
    }
  }
  *agrees = false;
  for (size_t k = 0; k < incs.size(); ++k) {
    if (eligible(incs[k]) && incs[k].inferred && !incs[k].survived) return static_cast<int>(k);
  }
  return -1;
}

// The incident now leads with `rank`: its host, GPU, fix and verify follow
// (a GPU seen on the same host stays).
void Refocus(const CorrelationState& st, int64_t rank, Incident& inc) {
  if (inc.rank == rank) return;
  std::string host = st.HostForRank(rank);
  bool same_host = !inc.host.empty() && host == inc.host;
  inc.rank = rank;
  if (!same_host) {
    inc.host = host;
    inc.gpu.clear();
  }
  if (auto bus = st.topo.BusForRank(rank); bus && inc.gpu.empty()) inc.gpu = *bus;
  auto vars = TemplateVars(inc, inc.time_us, st.diag.job_end_us, &st.scan.devices);
  FillFixAndVerify(*st.rs.rule(inc.rule), vars, inc);
}

// Two independent witnesses of one suspect; never below what the logs gave.
double BothWitnesses(double logs) {
  double both = std::min(0.95, 1 - (1 - logs) * (1 - kDumpsConfidence));
  return std::max(logs, std::round(both * 100) / 100);
}

void JoinIncident(const CorrelationState& st, const std::vector<int64_t>& suspects, bool agrees,
                  Incident& inc) {
  std::vector<int64_t> logs = inc.suspects;
  if (logs.empty() && inc.rank >= 0) logs.push_back(inc.rank);
  std::vector<int64_t> both;
  for (int64_t r : suspects) {
    if (Names(st, inc, r)) both.push_back(r);
  }
  const FrAnalysis& a = st.diag.flight_recorder;
  size_t dumps = st.scan.flight_recorder.size();
  if (agrees) {
    inc.flight_recorder = FindingsFor(a, both, false);
    inc.suspects = both;
    Refocus(st, both.front(), inc);
    inc.confidence = BothWitnesses(inc.confidence);
    inc.explanation += StrCat("The NCCL Flight Recorder dumps (", dumps,
                              ") agree: ", DumpsSay(inc.flight_recorder),
                              ". Logs and dumps name one suspect: rank",
                              both.size() > 1 ? "s " : " ", StrJoin(both, ", "), ". ");
    return;
  }
  inc.flight_recorder = FindingsFor(a, suspects, false);
  inc.suspects = suspects;
  for (int64_t r : logs) {
    if (!Has(inc.suspects, r)) inc.suspects.push_back(r);
  }
  Refocus(st, suspects.front(), inc);
  inc.inferred = true;
  if (logs.empty()) inc.confidence = std::max(inc.confidence, kDumpsConfidence * 0.9);
  inc.explanation +=
      StrCat("The NCCL Flight Recorder dumps (", dumps, ") name the suspect",
             logs.empty() ? "" : " instead", ": ", DumpsSay(inc.flight_recorder), ".",
             logs.empty() ? ""
                          : StrCat(" The logs' suspect", logs.size() > 1 ? "s " : " ",
                                   StrJoin(logs, ", "), " follow", logs.size() > 1 ? "" : "s", "."),
             " ");
}

// The dumps' own incident, of the rule named by `detector`.
void OwnIncident(CorrelationState& st, const char* detector, const std::vector<int64_t>& ranks,
                 std::vector<FrFinding> findings, double conf) {
  Finding f;
  f.detector = detector;
  f.rank = ranks.front();
  f.time_us = LastRecordUs(st, f.rank);
  f.detail = StrCat("the NCCL Flight Recorder dumps (", st.scan.flight_recorder.size(),
                    ") show: ", DumpsSay(findings));
  if (!AddFinding(st, f, conf)) return;
  Incident& inc = st.diag.incidents.back();
  if (inc.detector != detector) return;
  inc.suspects = ranks;
  inc.flight_recorder = std::move(findings);
}

std::vector<int64_t> MismatchedRanks(const FrAnalysis& a) {
  std::vector<int64_t> out;
  for (const FrFinding& f : a.findings) {
    if (f.kind == FrFinding::Kind::kMismatch && !Has(out, f.rank)) out.push_back(f.rank);
  }
  return out;
}

// Whether every dumped member of each group went past its mismatches.
bool PassedEveryMismatch(const FrAnalysis& a) {
  for (const auto& g : a.groups) {
    for (const auto& m : g.mismatches) {
      if (m.seq >= g.lowest_last_seq) return false;
    }
  }
  return true;
}

}  // namespace

void UseFlightRecorder(CorrelationState& st) {
  if (st.scan.flight_recorder.empty()) return;
  st.diag.flight_recorder = flightrec::AnalyzeFlightRecorder(st.scan.flight_recorder);
  const FrAnalysis& a = st.diag.flight_recorder;
  std::vector<int64_t> suspects = HangSuspects(a);
  st.diag.flight_recorder_suspects = suspects;
  if (!suspects.empty()) {
    bool agrees = false;
    int k = TargetIncident(st, suspects, &agrees);
    if (k >= 0) {
      JoinIncident(st, suspects, agrees, st.diag.incidents[static_cast<size_t>(k)]);
    } else {
      OwnIncident(st, "flight_recorder", suspects, FindingsFor(a, suspects, false),
                  kDumpsConfidence);
    }
  }
  std::vector<int64_t> odd = MismatchedRanks(a);
  if (odd.empty()) return;
  OwnIncident(st, "flight_recorder_mismatch", odd, FindingsFor(a, odd, true), 0.7);
  Incident& inc = st.diag.incidents.back();
  if (inc.detector == "flight_recorder_mismatch" && PassedEveryMismatch(a)) {
    inc.survived = true;
    inc.explanation +=
        " Every dumped rank went on to later collectives of the group: the job carried on past "
        "the mismatch, so it did not stop the job.";
  }
}

}  // namespace faultline::internal
