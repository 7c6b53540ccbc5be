// Job window and gating passes. The window is the application logs' span
// (unless the user gave it); hardware, driver and kernel evidence far
// outside it is stale (replayed or archived dmesg), and a copy of a line
// already seen in another file is a replay. Gated lines go to `ignored`,
// counted per rule and reason, in the order they were first gated.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "correlate/state.h"
#include "util/strings.h"

namespace faultline::internal {
namespace {

// The scanner is to set SourceSummary::kernel_log (dmesg, kern.log, syslog,
// journal exports); until it does, the file name says it. This is the only
// place that guesses from names, and only from the file's own name: the
// folders above it (an archive called `dmesg-hang-case/`) say nothing of it.
bool NamedLikeKernelLog(std::string_view n) {
  for (size_t i = n.size(); i > 0; --i) {
    if (n[i - 1] == '/' || n[i - 1] == '\\') {
      n.remove_prefix(i);
      break;
    }
  }
  // One pass over the name, the words tried where their first letter is (a
  // find per word cost a thousand instructions a file on an archive).
  static constexpr std::string_view kWords[] = {"dmesg", "kern", "syslog", "messages", "journal"};
  for (size_t i = 0; i < n.size(); ++i) {
    const char c = n[i];
    if (c != 'd' && c != 'k' && c != 's' && c != 'm' && c != 'j') continue;
    for (std::string_view word : kWords) {
      if (c == word[0] && n.substr(i).starts_with(word)) return true;
    }
  }
  return false;
}

// A kernel log, or a source holding only hardware-layer lines, does not
// define the job window: gating judges it.
bool IsKernelSource(const SourceSummary& s, const SourceSpan& span) {
  return s.kernel_log || NamedLikeKernelLog(s.name) || (span.hw_lines > 0 && span.other_lines == 0);
}

// Why a hardware-layer line is not evidence of this job; "" when it is.
// `source_max` is the newest time seen so far per source.
std::string StaleReason(const CorrelationState& st, const Evidence& ev,
                        std::map<uint32_t, int64_t>& source_max) {
  if (ev.time_us == kNoTime) return "";
  const Diagnosis& d = st.diag;
  int64_t tol = st.opts.stale_tolerance_us;
  if (d.job_start_us != kNoTime && ev.time_us < d.job_start_us - tol)
    return "stale: before the job window";
  if (d.job_end_us != kNoTime && ev.time_us > d.job_end_us + tol)
    return "stale: after the job window";
  auto [it, fresh] = source_max.emplace(ev.source, ev.time_us);
  if (!fresh) {
    if (ev.time_us < it->second - 3600 * kSecond)
      return "out-of-order block: timestamps jump backwards";
    it->second = std::max(it->second, ev.time_us);
  }
  return "";
}

// Whether a source of host `host` speaks for the job's hosts: a source of
// no host, or a host the job's evidence names.
bool OfJobHost(const CorrelationState& st, const std::string& host) {
  const std::set<std::string>& hosts = st.index.known_hosts;
  return host.empty() || hosts.empty() || hosts.contains(host);
}

// The newest time the job was still there. The application's lines say it,
// in any source; the kernel and system lines of its hosts (and an
// application log's cut kernel tail) say it only when the job was ended from outside (a cancel, a
// time limit, a launcher's kill: the job ran until then), for the hosts of a
// job that finished go on logging. A stamp past the stale tolerance of the
// application's end is a replayed or archived block, not the job.
int64_t LatestSignOfLife(const CorrelationState& st) {
  const Diagnosis& d = st.diag;
  int64_t ref = d.job_end_us;
  for (const auto& [rank, r] : st.scan.ranks) ref = std::max(ref, r.last_progress_us);
  if (ref == kNoTime) return kNoTime;
  int64_t alive = ref;
  const bool ended_from_outside = st.index.first_termination != nullptr;
  const std::string* last_host = nullptr;  // a run of one host's sources is one look-up
  bool last_of_job = false;
  for (size_t i = 0; i < st.scan.sources.size(); ++i) {
    const SourceSummary& s = st.scan.sources[i];
    const SourceSpan& sp = st.index.sources[i];
    if (!last_host || *last_host != s.host) {
      last_host = &s.host;
      last_of_job = OfJobHost(st, s.host);
    }
    if (!last_of_job) continue;
    // Application lines count wherever they are (a journal of every host
    // holds the workers' and the agent's).
    int64_t t = sp.app_max;
    if (ended_from_outside) t = std::max({t, s.last_time_us, sp.hw_max});
    if (t != kNoTime && t > alive && t <= ref + st.opts.stale_tolerance_us) alive = t;
  }
  return alive;
}

}  // namespace

void FindJobWindow(CorrelationState& st) {
  const std::vector<SourceSummary>& sources = st.scan.sources;
  st.kernel_source.assign(sources.size(), false);
  int64_t start = kNoTime, end = kNoTime;
  int64_t tol = st.opts.stale_tolerance_us;
  for (size_t i = 0; i < sources.size(); ++i) {
    const SourceSummary& s = sources[i];
    const SourceSpan& sp = st.index.sources[i];
    st.kernel_source[i] = IsKernelSource(s, sp);
    if (st.kernel_source[i]) continue;
    // A kernel block at the head or tail of an application log (a prolog's
    // `dmesg -T`, a pasted archive) is what gating judges, so it must not
    // stretch the window to weeks ago.
    int64_t first = s.first_time_us, last = s.last_time_us;
    if (first != kNoTime && sp.hw_min != kNoTime && sp.app_min != kNoTime && first <= sp.hw_min &&
        sp.hw_min < sp.app_min - tol) {
      first = sp.app_min;
    }
    if (last != kNoTime && sp.hw_max != kNoTime && sp.app_max != kNoTime && last >= sp.hw_max &&
        sp.hw_max > sp.app_max + tol) {
      last = sp.app_max;
    }
    // Application evidence bounds too (a source's edges may lack stamps).
    for (int64_t t : {first, sp.app_min}) {
      if (t != kNoTime && (start == kNoTime || t < start)) start = t;
    }
    for (int64_t t : {last, sp.app_max}) {
      if (t != kNoTime && (end == kNoTime || t > end)) end = t;
    }
  }
  st.diag.job_start_us = st.opts.job_start_us != kNoTime ? st.opts.job_start_us : start;
  st.diag.job_end_us = st.opts.job_end_us != kNoTime ? st.opts.job_end_us : end;
  st.alive_end_us = st.opts.job_end_us != kNoTime ? st.opts.job_end_us : LatestSignOfLife(st);
}

namespace {

// A line's rule and text, pointing into the evidence (which this pass does
// not change): the key of the replay check, without a copy of every text.
struct RuleText {
  uint32_t rule;
  std::string_view text;
  bool operator==(const RuleText&) const = default;
};
struct RuleTextHash {
  size_t operator()(const RuleText& k) const {
    return std::hash<std::string_view>()(k.text) ^ (static_cast<size_t>(k.rule) * 0x9E3779B97F4A7C15ull);
  }
};

// A launcher's report of an exit (a role:summary rule's line: torchrun's
// ChildFailedError, a scheduler's job state; the fallback rule's exit
// statuses) after every rank's progress reached its total: the run ended,
// and what killed the process then (an abort at interpreter exit, a
// communicator torn down without destroy_process_group) is its teardown.
constexpr std::string_view kAfterTotal =
    "an exit reported after every rank's progress reached its total: teardown";

// A wrapper's report of a failure at start-up (GateStartupWrappers).
constexpr std::string_view kStartupWrapper =
    "reports a start-up failure whose traceback names its cause: the wrapper, not the failure";

bool ExitReport(const CorrelationState& st, const Evidence& ev) {
  if (st.HasRole(ev.rule, RuleRole::kSummary)) return true;
  return st.HasRole(ev.rule, RuleRole::kFallback) && st.rs.signal(ev.signal).role == SignalRole::Symptom;
}

// Whether the line reports a kill from outside (SIGKILL: the OOM killer, a
// scheduler; SIGTERM: a stop request): never the process's own teardown,
// even after its loop ended (a host OOM while saving the model).
bool KilledFromOutside(const Evidence& ev) {
  std::string sig = ExitSignal(ev);
  return sig == "SIGKILL" || sig == "SIGTERM";
}

// The entries of diag.ignored by rule and reason.
using IgnoredEntries = std::map<std::pair<uint32_t, std::string>, size_t>;

// Gates evidence `i` for `reason`, counted in its rule and reason's entry.
void Ignore(CorrelationState& st, IgnoredEntries& entries, size_t i, std::string_view reason) {
  const Evidence& ev = st.evs[i];
  st.ignore_reason[i] = reason;
  auto [entry, fresh] = entries.emplace(std::make_pair(ev.rule, std::string(reason)), st.diag.ignored.size());
  if (fresh) {
    st.diag.ignored.push_back({ev.rule, std::string(reason), 1, ev});
  } else {
    ++st.diag.ignored[entry->second].count;
  }
}

void GateTeardownReports(CorrelationState& st, IgnoredEntries& entries) {
  const Evidence* done = st.index.progress_done;
  if (!done) return;
  for (size_t i = 0; i < st.evs.size(); ++i) {
    const Evidence& ev = st.evs[i];
    if (!st.ignore_reason[i].empty() || !ExitReport(st, ev) || KilledFromOutside(ev) ||
        !LoggedAfter(*done, ev)) {
      continue;
    }
    Ignore(st, entries, i, kAfterTotal);
  }
}

// A container's end that a stop request explains: docker's event stream
// logs `docker stop` (and `docker kill`) as a kill event naming the signal
// sent (field `kill_signal`), then the die event with the container's exit
// status (field `exitcode`), each with the container's ID (field
// `docker_container`). A die whose status is 128 plus the signal an earlier
// kill event of the same container sent is the process ending of that
// signal, as asked: the records of its line are that stop, not a failure
// (a role:termination rule's, which reads the stop itself, stays).
constexpr std::string_view kRequestedStop =
    "a container's exit by the signal an earlier kill event of it sent: a requested stop";

// A launcher that kills its own main process once a worker failed: Lightning's
// child-process observer (2.1 onwards) logs "Child process with PID P
// terminated with code R. Forcefully terminating all other processes ..."
// (field `kills_main`), then sends SIGKILL to every worker left and to the
// main process, and the shell that ran it reports that process Killed. A
// shell's kill report (field `shell_report`: bash's "line N: PID Killed ...",
// job control's "[1]+ Killed ...", a bare "Killed") after such a line in the
// same source is that kill: the worker's exit status on the launcher's line
// is the failure.
constexpr std::string_view kLauncherOwnKill =
    "the launcher's own SIGKILL of its main process after a worker failed";

void GateLauncherOwnKills(CorrelationState& st, IgnoredEntries& entries) {
  std::map<uint32_t, uint64_t> first_kill;  // source -> line of its first `kills_main`
  for (const Evidence& ev : st.evs) {
    if (!ev.Field("kills_main")) continue;
    auto [it, fresh] = first_kill.try_emplace(ev.source, ev.line);
    if (!fresh) it->second = std::min(it->second, ev.line);
  }
  if (first_kill.empty()) return;
  for (size_t i = 0; i < st.evs.size(); ++i) {
    const Evidence& ev = st.evs[i];
    if (!st.ignore_reason[i].empty() || !ev.Field("shell_report")) continue;
    auto k = first_kill.find(ev.source);
    if (k != first_kill.end() && ev.line > k->second) Ignore(st, entries, i, kLauncherOwnKill);
  }
}

// A start-up failure reported through its rule's wrapper: a context line of
// the rule with the field `startup_frame` (the frame of vLLM's run_engine_core
// that constructs the engine) inside a traceback says the process failed
// before it served, so the rule's own failure lines that report that
// traceback (its header, which gets the same `in_traceback_of`) or follow it
// in the same source within a minute (the client's signal handler) wrap that
// failure: they are gated, and the exception that ends the traceback is read
// as it is without the wrapper.
void GateStartupWrappers(CorrelationState& st, IgnoredEntries& entries) {
  constexpr int64_t kWithinUs = 60'000'000;
  for (size_t f = 0; f < st.evs.size(); ++f) {
    const Evidence& frame = st.evs[f];
    const std::string* tb = frame.Field("in_traceback_of");
    if (!tb || !frame.Field("startup_frame") || !st.ignore_reason[f].empty()) continue;
    uint64_t first = frame.line;  // the traceback's first line of this rule
    for (const Evidence& ev : st.evs) {
      const std::string* its = ev.Field("in_traceback_of");
      if (ev.source == frame.source && ev.rule == frame.rule && its && *its == *tb) first = std::min(first, ev.line);
    }
    for (size_t i = 0; i < st.evs.size(); ++i) {
      const Evidence& ev = st.evs[i];
      const SignalRole role = st.rs.signal(ev.signal).role;
      if (!st.ignore_reason[i].empty() || ev.source != frame.source || ev.rule != frame.rule || ev.line < first ||
          (role != SignalRole::Initiating && role != SignalRole::Symptom)) {
        continue;
      }
      const std::string* its = ev.Field("in_traceback_of");
      const bool same = its && *its == *tb;
      const bool soon = ev.time_us != kNoTime && frame.time_us != kNoTime && ev.time_us >= frame.time_us &&
                        ev.time_us - frame.time_us <= kWithinUs;
      if (same || soon) Ignore(st, entries, i, kStartupWrapper);
    }
  }
}

void GateRequestedStops(CorrelationState& st, IgnoredEntries& entries) {
  // (source, container) -> the exit statuses its kill events' signals give
  std::map<std::pair<uint32_t, std::string>, std::set<std::string>> sent;
  std::set<std::pair<uint32_t, uint64_t>> stopped;  // (source, line) of the dies they explain
  for (const Evidence& ev : st.evs) {
    const std::string* id = ev.Field("docker_container");
    if (!id) continue;
    if (const std::string* sig = ev.Field("kill_signal")) {
      if (sig->empty() || sig->size() > 2) continue;
      sent[{ev.source, *id}].insert(StrCat(128 + std::stoi(*sig)));
      continue;
    }
    const std::string* code = ev.Field("exitcode");
    auto it = sent.find({ev.source, *id});
    if (code && it != sent.end() && it->second.contains(*code)) stopped.emplace(ev.source, ev.line);
  }
  if (stopped.empty()) return;
  for (size_t i = 0; i < st.evs.size(); ++i) {
    if (st.ignore_reason[i].empty() && !st.HasRole(st.evs[i].rule, RuleRole::kTermination) &&
        stopped.contains({st.evs[i].source, st.evs[i].line})) {
      Ignore(st, entries, i, kRequestedStop);
    }
  }
}

// A network link that went down and came back: the link-down lines of a
// rule (mlx5e's "Link down", networkd's "Lost carrier", NetworkManager's
// carrier loss, NCCL's "Got async event : port error"; the device in field
// `netdev` or `hca`) followed, in their file, by the same device's report that
// the link is up again (the rule's context lines with field `link_up`: "Link
// up", "Gained carrier", "port active") were a flap that recovered. When no
// other line of the logs is a failure, they are no fault of the job; a failure
// anywhere else, or a link that did not come back, keeps every one of them.
constexpr std::string_view kLinkBack =
    "recovered: the same link came back up later in its file, and nothing else in the logs failed";

void GateRecoveredLinks(CorrelationState& st, IgnoredEntries& entries) {
  // (source, rule, device) -> the offsets of the device's link-up lines
  std::map<std::tuple<uint32_t, uint32_t, std::string>, std::vector<uint64_t>> ups;
  for (const Evidence& ev : st.evs) {
    if (const std::string* d = ev.Field("link_up")) ups[{ev.source, ev.rule, *d}].push_back(ev.offset);
  }
  if (ups.empty()) return;
  std::vector<size_t> back;
  for (size_t i = 0; i < st.evs.size(); ++i) {
    const Evidence& ev = st.evs[i];
    if (!st.ignore_reason[i].empty()) continue;
    if (st.rs.signal(ev.signal).role != SignalRole::Initiating && !st.HasRole(ev.rule, RuleRole::kFallback)) continue;
    const std::string* dev = ev.Field("netdev");
    if (!dev) dev = ev.Field("hca");
    auto it = ups.find({ev.source, ev.rule, dev ? *dev : std::string()});
    const bool came_back = it != ups.end() && std::any_of(it->second.begin(), it->second.end(),
                                                          [&](uint64_t o) { return o > ev.offset; });
    if (!came_back) return;  // a failure of its own, or a link that stayed down
    back.push_back(i);
  }
  for (size_t i : back) Ignore(st, entries, i, kLinkBack);
}

// journalctl prints "-- Boot <id> --" (before systemd#17475, 2020: "-- Reboot --")
// where the boot changes, the line the replayed-log-markers rule's
// journal-boot-separator signal reads. Per source, the last separator's line
// and the stamp it inherits (the last stamped line of the boot before it).
struct BootEnd {
  uint64_t line = 0;
  int64_t time_us = kNoTime;
};

std::map<uint32_t, BootEnd> LastBootSeparators(const CorrelationState& st) {
  std::map<uint32_t, BootEnd> last;
  const int rule = st.rs.FindRule("replayed-log-markers");
  if (rule < 0) return last;
  for (const Evidence& ev : st.evs) {
    if (ev.rule != static_cast<uint32_t>(rule)) continue;
    const fb::Signal* sig = st.rs.signal(ev.signal).signal;
    if (!sig || !sig->id() || sig->id()->string_view() != "journal-boot-separator") continue;
    BootEnd& b = last[ev.source];
    if (ev.line >= b.line) b = {ev.line, ev.time_us};
  }
  return last;
}

// A hardware line of a boot that ended before the job started: the host
// rebooted between it and the job, so whatever it reports (an Xid that took
// the GPU off the bus, an ECC error) was over before this run, however close
// to the job's start it was logged (the stale tolerance, meant for clock
// skew, does not apply across a reboot). A job that started before the
// reboot keeps the line: the failure may have ended it.
constexpr std::string_view kEarlierBoot = "earlier boot: logged before a reboot that preceded the job";

bool OfEarlierBoot(const CorrelationState& st, const std::map<uint32_t, BootEnd>& boots, const Evidence& ev) {
  const int64_t start = st.diag.job_start_us;
  if (start == kNoTime) return false;
  auto it = boots.find(ev.source);
  if (it == boots.end() || ev.line >= it->second.line) return false;
  // The line must not be newer than the boot's last stamp: `journalctl -r`
  // prints the newest boot first, above the separators.
  const int64_t boot_end = it->second.time_us;
  return boot_end != kNoTime && boot_end < start && ev.time_us != kNoTime && ev.time_us <= boot_end;
}

// A hardware line about a GPU (by its PCI address) on one of the job's hosts
// that none of the job's ranks uses, when every rank's GPU is known (NCCL's
// init lines give each rank's busId): another job's or an idle GPU of a
// shared node. A line that resolved to a rank (its pid is a rank's) is kept.
constexpr std::string_view kOtherGpu = "another GPU: not one of the job's GPUs on its host";

bool OfOtherGpu(const CorrelationState& st, bool every_bus_known, const Evidence& ev) {
  if (!every_bus_known || ev.rank >= 0 || ev.gpu.empty()) return false;
  if (NormalizePciBusId(ev.gpu).empty() || !st.topo.HasRankOn(ev.host)) return false;
  return !st.topo.IsRankBus(ev.host, ev.gpu);
}

// A hardware line of a host none of the job's ranks ran on, when every
// rank's host is known (NCCL's init lines) and the bundle's kernel logs
// spell hosts as the ranks' lines do (one of them is a rank's host): a
// cluster's syslog or a node report covers hosts the job never used, and
// their GPUs' failures are other jobs'. Without a kernel log of a job host
// the names may be of two kinds (a pod's hostname in NCCL's lines, the
// node's in the kernel's), and the line is kept.
constexpr std::string_view kOtherHost = "another host: none of the job's ranks ran on it";

bool KernelLogOfJobHost(const CorrelationState& st) {
  for (size_t i = 0; i < st.scan.sources.size(); ++i) {
    if (st.kernel_source[i] && st.topo.HasRankOn(st.scan.sources[i].host)) return true;
  }
  // A syslog of many hosts names them line by line.
  for (const Evidence& ev : st.evs) {
    if (ev.source < st.kernel_source.size() && st.kernel_source[ev.source] && st.topo.HasRankOn(ev.host)) {
      return true;
    }
  }
  return false;
}

bool OfOtherHost(const CorrelationState& st, bool every_host_known, const Evidence& ev) {
  return every_host_known && ev.rank < 0 && !ev.host.empty() && !st.topo.HasRankOn(ev.host);
}

// DCGM's report of a GPU's NvLink link going down, about a GPU the logs show
// to have no NVLink (nvlink.cc): DCGM reports the links a PCIe board without a
// bridge does not have as down.
constexpr std::string_view kNoLinks = "a GPU with no NVLink: DCGM reports links the GPU does not have as down";

// A line that reports errors the hardware corrected (field `corrected`: the
// driver's Xid 92, "High single-bit ECC error rate", which NVIDIA's Xid
// catalog marks non-critical since the GPU corrects single-bit errors;
// DCGM's DCGM_FR_VOLATILE_SBE_DETECTED, "More than N single-bit ECC
// error(s) detected in GPU N", dcgm_errors.h) says the data stayed right:
// no fault of the job when nothing in the logs failed (no initiating line,
// no fallback rule's line). When something did fail, it stays evidence: the
// corrected errors may have led up to an uncorrectable one.
constexpr std::string_view kCorrected = "corrected by the hardware, and nothing in the logs failed";

// The kernel's AER recovery reports how it ended for the error it last
// reported (field `recovery` on pcie-aer-uncorrectable-gpu's outcome line:
// err.c's "device recovery successful" / "device recovery failed"). An
// initiating line of a rule whose next outcome in its file, of the same
// rule, is "successful" was an error the kernel got the device back from;
// one followed by "failed", or by no outcome, stays evidence.
constexpr std::string_view kRecovered = "recovered: the kernel's AER recovery of it reported success";

// A context-switch timeout of a process whose own fault the driver reported
// first (field `ctxsw_timeout` with `pid`: the driver's Xid 109, `errorString
// CTX SWITCH TIMEOUT`, on the channel of process P; field `app_fault`: an
// Xid 13, 31 or 43 naming the same P, earlier in the same file, on the same
// GPU). The faulting process's channel is what stopped switching: NVIDIA's
// k8s device plugin and DRA driver list 109 with 13, 31, 43, 45 and 68 as
// application errors that leave the GPU healthy. The Xid 13/31 leads; a 109
// of another process, of no earlier fault, or of an unknown pid stays.
constexpr std::string_view kAppFaultTimeout =
    "the context-switch timeout of a process whose own fault an earlier Xid 13/31/43 reported";

// (source, GPU, pid) -> the offset of the first `app_fault` line naming them.
using AppFaults = std::map<std::tuple<uint32_t, std::string, int64_t>, uint64_t>;

AppFaults FirstAppFaults(const CorrelationState& st) {
  AppFaults out;
  for (const Evidence& ev : st.evs) {
    if (ev.pid < 0 || !ev.Field("app_fault")) continue;
    out.try_emplace(std::make_tuple(ev.source, ev.gpu, ev.pid), ev.offset);
  }
  return out;
}

bool TimeoutOfFaultedProcess(const AppFaults& faults, const Evidence& ev) {
  if (ev.pid < 0 || !ev.Field("ctxsw_timeout")) return false;
  auto it = faults.find(std::make_tuple(ev.source, ev.gpu, ev.pid));
  return it != faults.end() && it->second < ev.offset;
}

// nvidia-smi's "couldn't communicate with the NVIDIA driver" (field
// `no_driver`, gpu-init-failure's symptom) where the NVIDIA container runtime
// reported that it could not set the container up (field `container_setup`:
// libnvidia-container's "nvidia-container-cli: <stage> error: ...", the hook
// docker and containerd quote in their "OCI runtime create failed"): the
// driver was never made reachable inside that container (the host's NVML
// library not found or not loadable, no driver loaded for the hook), so no
// GPU failed to initialise and no node needs draining; the runtime's error
// leads. The kernel's own report of a failed bring-up (RmInitAdapter, Xid
// 143, GSP boot) is never gated by it.
constexpr std::string_view kContainerNoDriver =
    "nvidia-smi inside a container the NVIDIA container runtime reported it could not set up";

bool ContainerSetupFailed(const CorrelationState& st) {
  return std::any_of(st.evs.begin(), st.evs.end(),
                     [](const Evidence& ev) { return ev.Field("container_setup") != nullptr; });
}

struct Outcome {
  uint64_t offset;
  uint32_t rule;
  bool success;
};

// Per source, the recovery outcome lines, in file order (the evidence is in
// source order).
using Outcomes = std::map<uint32_t, std::vector<Outcome>>;

Outcomes RecoveryOutcomes(const CorrelationState& st) {
  Outcomes out;
  for (const Evidence& ev : st.evs) {
    if (const std::string* r = ev.Field("recovery")) {
      out[ev.source].push_back(Outcome{ev.offset, ev.rule, *r == "successful"});
    }
  }
  return out;
}

bool RecoveredAfter(const CorrelationState& st, const Outcomes& outcomes, const Evidence& ev) {
  if (st.rs.signal(ev.signal).role != SignalRole::Initiating) return false;
  auto it = outcomes.find(ev.source);
  if (it == outcomes.end()) return false;
  for (const Outcome& o : it->second) {
    if (o.rule == ev.rule && o.offset > ev.offset) return o.success;
  }
  return false;
}

}  // namespace

void GateEvidence(CorrelationState& st) {
  st.ignore_reason.assign(st.evs.size(), "");
  std::unordered_map<RuleText, size_t, RuleTextHash> first_copy;  // rule+text -> evidence
  std::map<uint32_t, int64_t> source_max;
  IgnoredEntries ignored;
  const std::map<uint32_t, BootEnd> boots = LastBootSeparators(st);
  const bool every_bus_known = st.topo.KnowsEveryBus(st.world_nranks);
  const bool other_hosts_known = every_bus_known && KernelLogOfJobHost(st);
  const std::vector<bool> linkless = LinkDownOnLinklessGpu(st);
  const Outcomes outcomes = RecoveryOutcomes(st);
  const AppFaults app_faults = FirstAppFaults(st);
  const bool container_setup_failed = ContainerSetupFailed(st);
  for (size_t i = 0; i < st.evs.size(); ++i) {
    if (!st.index.hardware[i]) continue;
    const Evidence& ev = st.evs[i];
    std::string reason = StaleReason(st, ev, source_max);
    if (reason.empty() && OfEarlierBoot(st, boots, ev)) reason = kEarlierBoot;
    if (reason.empty() && OfOtherGpu(st, every_bus_known, ev)) reason = kOtherGpu;
    if (reason.empty() && OfOtherHost(st, other_hosts_known, ev)) reason = kOtherHost;
    if (reason.empty() && linkless[i]) reason = kNoLinks;
    if (reason.empty() && ev.Field("corrected") && st.index.last_failure.empty()) reason = kCorrected;
    if (reason.empty() && RecoveredAfter(st, outcomes, ev)) reason = kRecovered;
    if (reason.empty() && TimeoutOfFaultedProcess(app_faults, ev)) reason = kAppFaultTimeout;
    if (reason.empty() && container_setup_failed && ev.Field("no_driver")) reason = kContainerNoDriver;
    if (reason.empty()) {
      auto [it, fresh] = first_copy.emplace(RuleText{ev.rule, ev.text}, i);
      if (!fresh && st.evs[it->second].source != ev.source)
        reason = "replayed duplicate of a line in another file";
    }
    if (!reason.empty()) Ignore(st, ignored, i, reason);
  }
  GateTeardownReports(st, ignored);
  GateRequestedStops(st, ignored);
  GateLauncherOwnKills(st, ignored);
  GateStartupWrappers(st, ignored);
  GateRecoveredLinks(st, ignored);
}

}  // namespace faultline::internal
