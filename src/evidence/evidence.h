// The evidence record (one matched, confirmed line with its time, rank, host
// and captures) and the summaries a scan keeps per source and per rank. Scans
// produce these; the correlator consumes them. Plain data, no behaviour.
//
// Thread-safety: plain values; no synchronisation.
#ifndef FAULTLINE_EVIDENCE_EVIDENCE_H_
#define FAULTLINE_EVIDENCE_EVIDENCE_H_

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "flightrec/dump.h"
#include "timeparse/timeparse.h"

namespace faultline {

inline constexpr int64_t kNoTime = std::numeric_limits<int64_t>::min();
inline constexpr size_t kMaxEvidenceText = 4096;
// A line without a timestamp inherits the nearest stamped line's time when
// that line starts at most this many bytes before it (whatever the chunking).
inline constexpr uint64_t kInheritWindow = 8 << 10;

struct Evidence {
  uint32_t source = 0;        // index into ScanResult::sources
  uint64_t line = 0;          // 1-based
  uint64_t offset = 0;        // byte offset of the line start
  int64_t time_us = kNoTime;  // as the line says (before clock alignment)
  TimeSource time_source = TimeSource::kNone;
  std::optional<double> monotonic_s;  // kernel stamp, when the line has one
  int64_t rank = -1;
  int64_t local_rank = -1;
  int64_t pid = -1;
  std::string host;
  std::string gpu;
  uint32_t rule = 0;          // rule index in the ruleset
  uint32_t signal = 0;        // global signal id
  std::string text;           // valid UTF-8, at most kMaxEvidenceText bytes
  // No timestamp on the line nor before it in what this scan saw: a scan of
  // a byte range leaves it to the merge to inherit from the range before.
  bool needs_prev_time = false;
  // dmesg -H: the line carries its own "[  +0.000316]" delta, so it is dated
  // by adding the deltas up from the last "[Nov 2 13:46]" line, whose year is
  // inferred (FinalizeTimes then places the year as for syslog stamps). With
  // needs_prev_time, prev_delta_us is the sum of the deltas from the scan's
  // start through this line, added to the time the merge hands down.
  bool dmesg_delta = false;
  // The time comes from a stamp without a year (syslog, glog, dmesg -H), the
  // line's own or the one it inherits: FinalizeTimes places its year.
  bool year_inferred = false;
  // A progress line that ended a run of untimed lines: the rank's next one
  // in the source went back to a lower step (a restart). Kept beside each
  // rank's last progress line (scan/keep.cc, MergeScans) so line order tells
  // every attempt's step.
  bool run_end = false;
  // An exception line with a folded traceback: the traceback's bytes before
  // the line. Evidence on those lines (frames, quoted code) belongs to it.
  uint32_t traceback_span = 0;
  int64_t prev_delta_us = 0;
  TimeSource InheritedSource() const {
    return dmesg_delta ? TimeSource::kInferredYear : TimeSource::kInherited;
  }
  std::vector<std::pair<std::string, std::string>> fields;  // named captures

  const std::string* Field(std::string_view name) const {
    for (const auto& [k, v] : fields) {
      if (k == name) return &v;
    }
    return nullptr;
  }
};

// A source that could not be read (fully).
struct InputError {
  std::string source;
  std::string message;
  int code = 0;  // fl_status
};

struct SourceSummary {
  std::string name;
  uint64_t bytes = 0;
  uint64_t lines = 0;
  int64_t first_time_us = kNoTime;
  int64_t last_time_us = kNoTime;
  // The year of first/last_time_us was guessed (syslog, glog stamps).
  bool first_time_inferred = false, last_time_inferred = false;
  int64_t rank = -1;        // when the whole source is one rank's (path, prefix)
  std::string host;
  bool json_lines = false;
  bool kernel_log = false;  // dmesg/kern.log-like: hardware evidence source
  // Offset between wall and kernel monotonic time on this source's host,
  // learnt from lines carrying both: wall_us = mono_s*1e6 + anchor_us.
  std::optional<int64_t> monotonic_anchor_us;
  // The first timestamp of this source that carries its own year, a
  // reference for placing year-less stamps (syslog, glog).
  int64_t dated_us = kNoTime;
  bool failed = false;
  // The byte range scanned, for ScanRange; both 0 for a whole source.
  uint64_t range_begin = 0, range_end = 0;
  // Start offset of the line that gave last_time_us (-1 when none).
  int64_t last_time_offset = -1;
  // While no line of this scan had a stamp: the sum of its dmesg -H deltas,
  // which the merge adds to the time the scan before it ended on.
  int64_t unanchored_delta_us = 0;
};

// Streaming per-rank statistics from progress lines.
struct RankSummary {
  int64_t rank = -1;
  std::string host;
  // A summary of lines that name no rank, from more than one host: one
  // process per host (Accelerate's local main process), pooled; it names
  // no host of its own.
  bool several_hosts = false;
  // Takes `h` as the summary's host when it has none; a rankless summary
  // seeing another host holds several.
  void AddHost(const std::string& h) {
    if (host.empty()) {
      host = h;
    } else if (rank < 0 && !h.empty() && h != host) {
      several_hosts = true;
    }
  }
  uint64_t progress_lines = 0;
  // The earliest and latest progress times, whatever the order in which
  // sources were read.
  int64_t first_progress_us = kNoTime;
  int64_t last_progress_us = kNoTime;
  int64_t last_step = -1;
  // Step-time statistics (seconds between successive progress lines, or the
  // step time the line states).
  uint64_t step_samples = 0;
  double step_time_sum = 0;
  double step_time_sumsq = 0;
  std::vector<double> step_time_reservoir;  // bounded sample for medians
  // The reservoir's sample keys (evidence/merge.h), one per sample, and the
  // largest of them once it is full (0: not computed yet).
  std::vector<uint64_t> step_time_keys;
  uint64_t step_key_max = 0;
  // Throughput the progress lines state (tokens or samples per second,
  // higher is faster), sampled like the step times: formats that print a
  // rate and no step time (torchtitan's tps, DeepSpeed's CurrSamplesPerSec)
  // still compare ranks.
  uint64_t throughput_samples = 0;
  std::vector<double> throughput_reservoir;
  std::vector<uint64_t> throughput_keys;
  uint64_t throughput_key_max = 0;
  // The cost of individual steps (step time in seconds, else 1/throughput)
  // for the kAlignedSteps steps of smallest StepKey: the key depends on the
  // step number alone, so ranks that ran the same steps keep the same ones
  // and the detectors can compare ranks step by step (one slow device vs a
  // slowness that moves between ranks). Unordered (a max-heap on key once
  // full, so each new step costs a compare); AlignedBySteps (merge.h) reads
  // it by step.
  struct AlignedStep {
    uint64_t key = 0;
    int64_t step = -1;
    double cost = 0;
  };
  std::vector<AlignedStep> aligned_steps;
};

// One point of a metric series (loss, grad norm, parameter distance).
struct MetricPoint {
  int64_t rank = -1;
  int64_t step = -1;
  int64_t time_us = kNoTime;
  double value = 0;
  uint32_t rule = 0;
  uint32_t evidence = 0;  // index into ScanResult::evidence of a kept sample
  // The line the point was read from: its source (index into
  // ScanResult::sources), 1-based line, byte offset and matching signal, so
  // that the correlator can make the evidence record of a point a detector
  // reports (the line itself is not kept: ScanResult::metric_points).
  uint32_t source = 0;
  uint32_t signal = 0;
  uint64_t line = 0;
  uint64_t offset = 0;
};

// What the scan learns of the job's topology and clocks, from every matching
// line (before any evidence cap), for the correlator.
struct DeviceLink {
  std::string host;
  int64_t rank = -1;
  int64_t cuda_dev = -1;
  std::string bus_id;
  int64_t nranks = -1;    // size of the communicator the line describes
  bool global = false;    // rank from a [rankK]: prefix or the path, not comm_rank
};
struct PidLink {
  std::string host;
  int64_t pid = -1;
  int64_t rank = -1;       // -1 when only the local rank is known
  int64_t local_rank = -1;  // a launcher's worker line (torchrun, DeepSpeed)
};
// An HCA a process's NCCL lines name: its "NET/IB : Using [1]mlx5_3:1/IB"
// list (index and name), "NET/IB: [1] mlx5_3:uverbs3:1/IB ... pciPath=
// .../0000:3c:00.0" (index, name and PCI function), or its "Channel 00/0 :
// 3[3] -> 11[3] [send] via NET/IB/1" line (the index it sends through).
struct NicLink {
  std::string host;
  int64_t pid = -1;
  int64_t rank = -1;
  int64_t index = -1;
  std::string hca;     // empty on a channel line
  std::string pci;     // a pciPath line's last component
  bool sends = false;  // a channel line
  std::string netdev;  // the HCA port's netdev (ibdev2netdev, rdma link)
};
// Another name of a host: a Kubernetes pod (the hostname inside it, and the
// folder its logs are collected under) and the node it runs on, from
// `kubectl get pods -o wide`, `describe` and events. The correlator puts
// every line of the pod on its node.
struct HostAlias {
  std::string alias;
  std::string host;
};
// A moment every rank of a communicator logs at once (NCCL Init COMPLETE of
// one commId): the spread of its times across hosts is clock skew.
struct SyncPoint {
  std::string key;   // e.g. "nccl-init:<commId>"
  std::string host;
  int64_t rank = -1;
  int64_t time_us = kNoTime;
};

// Uncapped per-rule statistics.
struct RuleStats {
  uint64_t count = 0;
  std::map<int64_t, uint64_t> ranks;      // rank -> count
  std::map<std::string, uint64_t> hosts;  // host -> count
  std::map<int64_t, int64_t> rank_min_seq;  // rank -> lowest collective SeqNum
  int64_t first_time_us = kNoTime;
  int64_t last_time_us = kNoTime;
};

// The bound on per-rank and per-host state (evidence/distinct.h): ranks and
// hosts past these, in source then offset order, are counted but not broken
// down; the report says so (input.caps).
inline constexpr size_t kMaxKeptRanks = 65536;
inline constexpr size_t kMaxKeptHosts = 16384;
// Topology records (rank<->device, pid<->rank links, clock sync points) kept.
inline constexpr size_t kMaxTopologyRecords = 262144;
// Metric series (rule id and the metric name the line gives) kept.
inline constexpr size_t kMaxMetricSeries = 1024;

// Distinct ranks (hosts) met: those whose breakdowns are kept, whether any
// was turned away, and a HyperLogLog sketch of all (empty: none met).
struct DistinctRanks {
  std::unordered_set<int64_t> kept;
  bool truncated = false;
  std::vector<uint8_t> sketch;
};
struct DistinctHosts {
  std::unordered_set<std::string> kept;
  bool truncated = false;
  std::vector<uint8_t> sketch;
};

struct ScanResult {
  std::vector<DeviceLink> devices;
  std::vector<PidLink> pids;
  std::vector<NicLink> nics;
  std::vector<HostAlias> host_aliases;
  std::vector<SyncPoint> sync_points;
  std::map<uint32_t, RuleStats> rule_stats;  // rule index -> stats
  std::vector<SourceSummary> sources;
  std::vector<Evidence> evidence;  // source, then offset order
  std::map<int64_t, RankSummary> ranks;
  std::map<std::string, std::vector<MetricPoint>> metrics;  // by rule id/metric
  // PyTorch NCCL Flight Recorder dumps among the inputs, recognised by
  // content (scan/flight_recorder.cc), in input order. Each is also a source
  // (no lines); one that fails to parse is an input error instead.
  std::vector<flightrec::FrDump> flight_recorder;
  std::vector<InputError> errors;
  // Files passed over on purpose, each with why (code 0): devices, FIFOs
  // and sockets found while walking a directory, symlink loops. Not errors:
  // the exit status does not change; the report lists them.
  std::vector<InputError> warnings;
  uint64_t bytes = 0;
  uint64_t lines = 0;
  uint64_t matches = 0;      // confirmed matches, including those past the caps
  // Metric lines kept as points of their series (metrics) and not as
  // evidence records: counted in rule_stats and matches, their values in
  // the series; the correlator makes the record of a point a detector
  // reports (the report's caps say how many lines this is).
  uint64_t metric_points = 0;
  std::map<uint32_t, uint64_t> signal_hits;  // global signal id -> matches
  std::map<uint32_t, uint64_t> dropped;      // rule index -> evidence past the cap
  DistinctRanks distinct_ranks;
  DistinctHosts distinct_hosts;
  bool topology_truncated = false;      // past kMaxTopologyRecords
  bool metric_series_truncated = false;  // past kMaxMetricSeries
  double seconds = 0;
};

}  // namespace faultline

#endif  // FAULTLINE_EVIDENCE_EVIDENCE_H_
