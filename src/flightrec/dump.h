// PyTorch NCCL Flight Recorder dumps: recognition by content, a typed
// per-rank view, and the cross-rank analysis (wavefront, missing ranks,
// mismatched collectives) that becomes evidence for the correlator.
//
// With TORCH_NCCL_TRACE_BUFFER_SIZE=N, every rank keeps its last N
// collectives in a ring buffer and, on a watchdog timeout, writes it to
// TORCH_NCCL_DEBUG_INFO_TEMP_FILE + rank (default /tmp/nccl_trace_rank_<r>),
// pickled by torch::jit::Pickler; the same content is also available as JSON
// (FlightRecorder::dump_json, the _dump_nccl_trace_json API, torchcomms'
// FlightRecorderHook). The file prefix is configurable and tools rename the
// files, so recognition is by content (SniffFlightRecorderDump) and the rank
// comes from the content where it can (RankSource).
//
// Formats, from PyTorch's source (the "version" key; minor bumps add fields):
//   2.0  torch/csrc/distributed/c10d/TraceUtils.h: version, entries,
//        pg_config {name: {name, desc, ranks: "[0, 1, ...]"}},
//        nccl_comm_state (optional); entries carry record_id, pg_id,
//        process_group (name, desc), collective_seq_id, p2p_seq_id, op_id,
//        profiling_name ("nccl:all_reduce", "nccl:send 0->1"),
//        time_created_ns, duration_ms (optional), input_sizes, input_dtypes
//        (TypeMeta names: "float"), output_sizes, output_dtypes, state
//        (scheduled | started | completed), time_discovered_started_ns and
//        time_discovered_completed_ns (None until seen), retired, is_p2p,
//        frames. Pickle only.
//   2.2  keys as 2.0 (seen only in a third-party copy of NCCLUtils.hpp).
//   2.3  NCCLUtils.hpp: adds pg_status {pg_id: {last_enqueued_collective,
//        last_started_collective, last_completed_collective}} and
//        timeout_ms; the JSON dump (dump_json) appears, with pg_status
//        numbers as strings and no frames.
//   2.4  FlightRecorder.hpp: dtypes become ScalarType names ("Float").
//   2.7  FlightRecorder.hpp: adds nccl_version.
//   2.10 FlightRecorder.hpp / FlightRecorderDetail.hpp: comm_lib_version
//        replaces nccl_version; entries add thread_id, thread_name; the JSON
//        writes 0 for undiscovered times and omits "entries" when empty.
//        (torchcomms' FlightRecorder drops p2p_seq_id and is_p2p.)
// nlohmann::json sorts object keys, so a JSON dump's keys come out in
// alphabetical order; torch::jit::Pickler keeps insertion order.
//
// Thread-safety: all functions are pure.
#ifndef FAULTLINE_FLIGHTREC_DUMP_H_
#define FAULTLINE_FLIGHTREC_DUMP_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace faultline::flightrec {

enum class DumpFormat : uint8_t { kPickle, kJson };
const char* DumpFormatName(DumpFormat f);

// How a dump's rank was established, strongest first.
enum class RankSource : uint8_t {
  kUnknown,
  // The one global rank common to every process group in pg_config: a rank
  // records only the groups it belongs to, so with two or more orthogonal
  // groups (TP x DP, ...) the intersection is the rank itself.
  kGroupMembership,
  // The own side of a point-to-point profiling name ("nccl:send 3->5" is
  // group rank 3 sending), mapped to a global rank through pg_config.
  kP2pName,
  // The last digits of the file name (PyTorch writes prefix + rank). Used
  // only when the content cannot tell.
  kFileName,
};
const char* RankSourceName(RankSource s);

struct FrEntry {
  int64_t record_id = 0;
  int64_t pg_id = -1;
  std::string pg_name;  // process_group[0]
  std::string pg_desc;  // process_group[1]
  int64_t collective_seq_id = 0;
  int64_t p2p_seq_id = -1;  // absent in torchcomms dumps
  int64_t op_id = -1;
  std::string profiling_name;  // "nccl:all_reduce", "nccl:send 0->1"
  std::string op;              // "all_reduce", "send"
  bool is_p2p = false;
  std::string state;  // scheduled | started | completed
  std::vector<std::vector<int64_t>> input_sizes;
  std::vector<std::vector<int64_t>> output_sizes;
  std::vector<std::string> input_dtypes;
  std::vector<std::string> output_dtypes;
  int64_t time_created_ns = 0;
  std::optional<int64_t> time_discovered_started_ns;
  std::optional<int64_t> time_discovered_completed_ns;
  std::optional<double> duration_ms;
  std::optional<int64_t> timeout_ms;
  bool retired = false;
  std::string thread_name;
};

struct FrGroup {
  std::string name;  // the pg_config key (process group name / guid)
  std::string desc;  // "default_pg", user descriptions
  std::vector<int64_t> ranks;  // global ranks, sorted
};

struct FrPgStatus {
  int64_t pg_id = -1;
  int64_t last_enqueued = -1;
  int64_t last_started = -1;
  int64_t last_completed = -1;
};

struct FrDump {
  std::string source;  // the name it was read under
  DumpFormat format = DumpFormat::kPickle;
  std::string version;  // "2.10"
  int version_major = 0;
  int version_minor = 0;
  std::string comm_lib_version;  // comm_lib_version (2.10) or nccl_version (2.7)
  int64_t rank = -1;
  RankSource rank_source = RankSource::kUnknown;
  std::vector<FrGroup> groups;
  std::vector<FrPgStatus> pg_status;
  std::vector<FrEntry> entries;  // oldest first, as recorded
  // The ring buffer had overwritten older entries (the first record_id is
  // not 0), so a group without entries here may still have had collectives.
  bool wrapped = false;

  const FrGroup* FindGroup(std::string_view name) const;
};

enum class DumpSniff : uint8_t { kNo, kPickle, kJson };
// Bytes of a file's head SniffFlightRecorderDump needs to decide.
inline constexpr size_t kSniffBytes = size_t{64} << 10;
// Whether a file's first bytes look like a Flight Recorder dump: a binary
// pickle (PROTO 2..5), a protocol 0/1 pickle of a dict, or a JSON object that names Flight Recorder keys
// (pg_config, collective_seq_id) near its start.
DumpSniff SniffFlightRecorderDump(std::string_view head);

// Parses a whole dump. `source` names it in errors and is the fallback for
// the rank. Errors: NotFound when the data is well formed but not a Flight
// Recorder dump (a pickle or JSON of something else); InvalidArgument for a
// malformed or hostile dump, an unsupported version, or a field of the wrong
// type. Messages start with `source` and name the field
// ("entries[3].collective_seq_id").
absl::StatusOr<FrDump> ParseFlightRecorderDump(std::string_view data, std::string_view source);

// ----- Analysis across the dumps of one job -----

// A collective recorded differently at one sequence id of one group.
struct FrMismatch {
  int64_t seq = 0;
  std::string field;     // op | input_sizes | output_sizes | dtypes
  std::string expected;  // what most ranks recorded (ties: the lowest rank's)
  struct Odd {
    int64_t rank;
    std::string got;
  };
  std::vector<Odd> odd;  // ranks that recorded something else, by rank
};

struct FrGroupReport {
  std::string name;
  std::string desc;
  std::vector<int64_t> members;  // from pg_config
  std::vector<int64_t> dumped;   // members with a dump
  std::vector<int64_t> no_dump;  // members without a dump
  // Members whose dump lost this group's entries to the ring buffer: what
  // they entered is unknown, so they are neither missing nor present.
  std::vector<int64_t> unknown;
  // The last collective sequence id each dumped member entered, lowest and
  // highest (0: none).
  int64_t lowest_last_seq = 0;
  int64_t highest_last_seq = 0;
  // The wavefront: the lowest collective sequence id some dumped members
  // never entered while others did, the op those others ran there, and the
  // members that never entered it.
  std::optional<int64_t> wavefront;
  std::string wavefront_op;
  std::vector<int64_t> missing;
  // Every dumped member entered the same last collective but it had not
  // completed on these ranks: a hang inside the collective, not a rank that
  // never came.
  std::optional<int64_t> stalled_seq;
  std::string stalled_op;
  std::vector<int64_t> not_completed;
  std::vector<FrMismatch> mismatches;  // earliest first, at most kMaxMismatches
  static constexpr size_t kMaxMismatches = 16;
};

// One suspect, as the correlator will take it: a rank, what the dumps say of
// it, and in which group and collective.
struct FrFinding {
  enum class Kind : uint8_t {
    kMissingRank,  // a dumped rank never entered the group's wavefront collective
    kNoDump,       // a member left no dump while the others did
    kMismatch,     // a rank ran another op / sizes / dtypes at a sequence id
    kStalled,      // all entered the last collective; it never completed here
  };
  Kind kind = Kind::kMissingRank;
  int64_t rank = -1;
  std::string group;  // name
  std::string group_desc;
  int64_t seq = 0;     // wavefront / mismatch / stalled sequence id
  std::string op;      // the collective at seq ("all_reduce")
  std::string detail;  // one line for humans
  // How the rank was known (kNoDump: the group's membership list).
  RankSource rank_source = RankSource::kUnknown;
  std::string source;  // the dump file (empty for kNoDump)
};
const char* FrFindingKindName(FrFinding::Kind k);

struct FrAnalysis {
  std::vector<FrGroupReport> groups;  // by name, then ranks
  std::vector<FrFinding> findings;    // by group, kind, rank
  std::vector<std::string> notes;     // dumps skipped (no rank, duplicates)
};

FrAnalysis AnalyzeFlightRecorder(std::span<const FrDump> dumps);

}  // namespace faultline::flightrec

#endif  // FAULTLINE_FLIGHTREC_DUMP_H_
