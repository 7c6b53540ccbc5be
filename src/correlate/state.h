// The correlator's working state and its passes. Correlate (correlate.cc)
// runs the passes in order over one CorrelationState; each pass reads what
// the earlier ones left and adds its own part:
//
//   attribute.cc    ranks and hosts of lines that name only a bus or a pid
//   clocks.cc       host clock offsets from sync points; times shifted
//   index.cc        EvidenceIndex: what later passes look up, built once
//   window.cc       kernel-log sources, job window, stale/replayed gating
//   nvlink.cc       which GPUs the logs show to have no NVLink (a gate of window.cc)
//   conditions.cc   rule conditions decide which evidence may make incidents
//   graph.cc        clusters per rule and each cluster's best cause
//   fallback.cc     survived clusters; the generic fatal line when no rule
//                   explains the failure, launcher summaries as its collateral
//   incidents.cc    one incident per root cluster: collateral, suspects, fix
//   findings.cc     numeric detectors and practice findings
//   flight_recorder.cc  NCCL Flight Recorder dumps: their suspects join the
//                   incidents the logs made, or make their own
//   rank.cc         incident order and the failure-rate priors
//
// Nothing here is public: see correlate.h for the contract.
//
// Thread-safety: a state belongs to one Correlate call.
#ifndef FAULTLINE_CORRELATE_STATE_H_
#define FAULTLINE_CORRELATE_STATE_H_

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "attribution/attribution.h"
#include "correlate/correlate.h"
#include "correlate/diagnosis.h"
#include "detect/detect.h"
#include "evidence/evidence.h"
#include "ruleset/rule_roles.h"
#include "ruleset/ruleset.h"

namespace faultline::internal {

inline constexpr int64_t kSecond = 1'000'000;

// Hardware, driver and kernel evidence: what the job window gates.
bool HardwareLayer(RuleLayer l);
std::string FormatTime(int64_t us);
// "{host}"-style placeholders of a rule's fix, verify and missing fact.
std::string FillTemplate(std::string t, const std::map<std::string, std::string>& vars);
// "10.0.0.12:58032" and "10.0.0.12<0>" -> "10.0.0.12".
std::string BareAddress(std::string_view a);

// Evidence of one rule close enough in time to be one event.
struct Cluster {
  uint32_t rule = 0;
  std::vector<size_t> ev;  // evidence indices, time order
  int64_t first = kNoTime, last = kNoTime;
  bool initiating = false;  // holds an initiating-role line
  RuleLayer layer = RuleLayer::Application;
  int parent = -1;  // the cluster that explains this one
  std::string parent_how;
  std::set<int64_t> ranks;
  std::set<std::string> hosts;
  bool survived = false;  // its rank(s) logged progress after every line
  std::string note;       // what a pass found about it, for its incident's explanation
};

// Per source: how many of its lines are hardware-layer, and the time span of
// those and of the rest.
struct SourceSpan {
  int hw_lines = 0, other_lines = 0;
  int64_t hw_min = kNoTime, hw_max = kNoTime, app_min = kNoTime, app_max = kNoTime;
  // The one host the source's lines name of their own (a node's log whose
  // NCCL INFO lines print `cn136:970:1023`), "" when none or several do; a
  // line that blames its peer names no host of the source.
  std::string own_host;
  bool several_hosts = false;
};

// Built once, after attribution and clock alignment (the last passes that
// change evidence), in one walk over the evidence.
struct EvidenceIndex {
  std::vector<bool> hardware;                      // per evidence
  std::vector<SourceSpan> sources;                 // per source
  std::map<std::string, std::string> addr_host;    // announced address -> host
  std::map<int64_t, std::string> host_of_rank;     // first evidence naming both
  std::map<int64_t, size_t> last_progress;         // rank -> its last progress line
  std::map<int64_t, std::vector<size_t>> progress; // rank -> its progress lines, in evidence order
  std::map<int64_t, std::vector<size_t>> metrics;  // rank -> its metric lines
  std::map<uint32_t, size_t> last_served;          // source -> its last role:served line
  std::map<uint32_t, size_t> last_carried_on;      // source -> its last role:carried-on line
  // source -> the offset of its last role:carried-on line with the field
  // `next_step` (the program began a later step after a check it ran failed)
  std::map<uint32_t, uint64_t> last_next_step;
  // source -> the offset of its last failure line (an initiating-role line,
  // or a role:fallback rule's generic fatal line)
  std::map<uint32_t, uint64_t> last_failure;
  // source -> the line numbers of its lines with the field `stops_workers`
  // (a launcher stopping the workers still running: DeepSpeed's "Killing
  // subprocess N", torchrun's "Sending process N closing signal SIGTERM"),
  // in evidence order
  std::map<uint32_t, std::vector<uint64_t>> workers_stopped;
  const Evidence* first_termination = nullptr;     // first line of a role:termination rule
  const Evidence* first_completion = nullptr;      // first line of a role:completion rule
  const Evidence* first_interrupt = nullptr;       // first line with field `interrupt` (Ctrl-C)
  // Lines with field `first_failure` (a launcher summary's mark of the
  // failure it observed first), in evidence order: few, one a summary.
  std::vector<size_t> first_failure_marks;
  // The run's loop reached its end: every rank's last progress line states
  // its step equal to the total it counts to (tqdm's `74/74`, Megatron's
  // `iteration 1000/ 1000`); the latest of those lines, else null.
  const Evidence* progress_done = nullptr;
  int64_t last_checkpoint_us = kNoTime;            // newest role:checkpoint-saved line
  std::string last_checkpoint_host;                // and the host that logged it
  // Per source, its last role:checkpoint-saved line with no timestamp (not a
  // save's start): placed only by its order in its file.
  std::map<uint32_t, const Evidence*> last_untimed_checkpoint;
  std::set<int64_t> known_ranks;
  std::set<std::string> known_hosts;
};

struct CorrelationState {
  CorrelationState(const Ruleset& rs, ScanResult& scan, const CorrelateOptions& opts);

  const Ruleset& rs;
  ScanResult& scan;
  const CorrelateOptions& opts;
  std::vector<Evidence>& evs;
  // Rule indices per RuleRole, from the rules' role tags.
  std::array<std::vector<uint32_t>, kRuleRoleCount> role_rules;

  TopologyMap topo;
  int64_t world_nranks = -1;  // the largest communicator: its ranks are global
  // The ranks each pod's own lines name (attribute.cc RanksOfPods).
  std::map<std::string, std::set<int64_t>> pod_ranks;
  EvidenceIndex index;

  std::vector<bool> kernel_source;                 // per source
  // The newest sign that the job's hosts were still up (window.cc): the end
  // the hang detector measures silence against.
  int64_t alive_end_us = kNoTime;
  std::vector<std::string> ignore_reason;          // per evidence; empty = kept
  std::set<uint32_t> present;                      // rules with kept evidence
  std::map<uint32_t, int64_t> first_time_of_rule;  // over kept evidence
  std::vector<bool> active;                        // per evidence: may make incidents
  std::vector<Cluster> clusters;
  // A generic fatal line whose message goes on to a catalog rule's line
  // (fallback.cc): (source, that line) -> the fatal line's evidence. The
  // incident of that line shows it first: "RuntimeError: NCCL communicator
  // was aborted ... Original reason for failure was:" over the watchdog's
  // hard-wrapped timeout.
  std::map<std::pair<uint32_t, uint64_t>, size_t> message_heads;
  // Evidence of a generic signal that is a fatal line only where the log
  // ends in it (field `ending`, fallback.cc) and is not that line: its
  // source goes on after the signal's last line, or it is not the first.
  std::set<size_t> unended;

  Diagnosis diag;

  bool HasRole(uint32_t rule, RuleRole role) const;
  // Whether the rule a conditions' field names (requires_rule, ...) has kept
  // evidence (`present`); false for an empty name.
  bool RulePresent(const flatbuffers::String* id) const;
  // The host running `rank`: the topology, then the rank's summary, its
  // source, its evidence; "" when none says.
  std::string HostForRank(int64_t rank) const;
  // Whether rule `from` declares an explains edge to rule `to`, and its lags.
  bool Edge(uint32_t from, uint32_t to, double* min_lag, double* max_lag) const;
};

// A termination notice: a cluster holding an initiating line of a
// role:termination rule (a spot interruption, a preemption, a node
// shutdown). The job was ended from outside: what breaks after it within
// its reach is its doing (graph.cc), and progress in the minutes the notice
// leaves does not make it survived (fallback.cc).
bool IsNotice(const CorrelationState& st, const Cluster& c);
// How long after a notice the job may still log progress before the notice
// counts as survived: the longest grace the clouds and schedulers give
// (AWS two minutes, Slurm's GraceTime, a pod's termination grace period).
inline constexpr int64_t kNoticeGraceUs = 15 * 60 * kSecond;

// The passes, in the order Correlate runs them.
void Attribute(CorrelationState& st);
void AlignClocks(CorrelationState& st);
// The correction AlignClocks applies to `host`'s stamps, in microseconds
// (0 for a host with no offset); for a record made after it (a metric
// point's, findings.cc).
int64_t ClockOffsetUs(const Diagnosis& d, const std::string& host);
void BuildEvidenceIndex(CorrelationState& st);
void FindJobWindow(CorrelationState& st);
void GateEvidence(CorrelationState& st);
void ApplyConditions(CorrelationState& st);
void BuildClusters(CorrelationState& st);
void LinkCauses(CorrelationState& st);
void MarkSurvived(CorrelationState& st);
void ChooseFallback(CorrelationState& st);
void BuildIncidents(CorrelationState& st);
void RunDetectors(CorrelationState& st);
// With no incident: an nvidia-smi table whose GPU holds memory while its
// Processes section names no process (orphaned_gpu_memory.cc).
void AddOrphanedGpuMemory(CorrelationState& st);
void UseFlightRecorder(CorrelationState& st);
void AddPracticeFindings(CorrelationState& st);
void RankIncidents(CorrelationState& st);
// What the caller stated about the job's end (job_state.cc).
void UseJobState(CorrelationState& st);
void EstimatePriors(CorrelationState& st);

// findings.cc: a detector finding's incident, of the first rule whose
// conditions.detector names it (or the collateral of a seen incident whose
// rule explains it); false when no rule names the detector or it was folded.
bool AddFinding(CorrelationState& st, const Finding& f, double conf);

// A practice finding (no checkpoint after SIGTERM, the newest checkpoint
// hours old): advice about the run, not a failure of it.
bool PracticeFinding(const Incident& i);
// Incident `n` and its collateral become collateral of `into`.
void AddAsCollateral(const Incident& n, Incident& into);

// Whether the rank of evidence `i` logged progress after it (a later
// progress line of the same rank: later in the same file, or clearly later
// in time in another).
bool SurvivedLine(const CorrelationState& st, size_t i);
// Per evidence: a line with the field `link_down` (DCGM's NvLink link-down
// report) about a GPU the logs show to have no NVLink (nvlink.cc).
std::vector<bool> LinkDownOnLinklessGpu(const CorrelationState& st);
// What an exit status or crash line says about how the process ended
// ("SIGKILL: ..."), "" for a plain error exit or none.
// The same from an exit status as text (a shell's 128+N, Python's and
// torchrun's -N), a signal's name and the C library's words for it; any
// may be empty (a status the caller states: job_state.cc).
std::string ExitMeaningOf(std::string_view code, std::string_view name, std::string_view crash);
std::string ExitMeaning(const Evidence& ev);
// The signal a line says its process died of ("SIGSEGV"), empty if none.
std::string ExitSignal(const Evidence& ev);
// Whether `ev` was logged after line `t`: later in t's file, else stamped
// no earlier than t (two files' stamps give no finer order).
bool LoggedAfter(const Evidence& t, const Evidence& ev);
// The pid a line names (its prefix's, else its "pid" field), -1 when none.
int64_t PidOf(const Evidence& ev);

// return_chain.cc, before the passes: a role:fallback line with the field
// `warning` (NCCL's WARN) stays in the scan's evidence only when a return
// chain of its `thread` (lines with the field `returned`) follows it; the
// chain's lines go.
void KeepReturnChainHeads(const Ruleset& rs, ScanResult& scan);

// Shared by incidents.cc and findings.cc: the placeholders of a rule's
// texts ({host}, {rank}, {gpu}, {bus}, {gpu_index}, {start}, {end}), and
// the rule's fix and verify filled in. `devices` gives the CUDA index of
// the incident's GPU when the evidence names only its bus or rank.
std::map<std::string, std::string> TemplateVars(const Incident& inc, int64_t start, int64_t end,
                                                const std::vector<DeviceLink>* devices = nullptr);
// The facts a filled text still lacks (a placeholder left as <gpu bus id>).
void AddPlaceholderFacts(const std::string& text, const std::map<std::string, std::string>& vars,
                         std::vector<std::string>& facts);
void FillFixAndVerify(const fb::Rule& rule, const std::map<std::string, std::string>& vars,
                      Incident& inc);

}  // namespace faultline::internal

#endif  // FAULTLINE_CORRELATE_STATE_H_
