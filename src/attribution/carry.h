// What a line of a file says about the lines after it. Launchers and tools
// print who a process is once and the rest without it:
//   - a block: torchrun's ChildFailedError entry ("host : node01", then
//     "rank : 3 (local_rank: 3)", then "exitcode : -9 (pid: 1234)"), a
//     py-spy dump ("Process 1234: python train.py" over its threads);
//   - a section: `kubectl describe pod` prints "Name: <pod>" and, many lines
//     later, "Reason: OOMKilled" without the pod;
//   - a task: a SLURM_* environment dump (SLURMD_NODENAME, SLURM_PROCID,
//     SLURM_LOCALID, SLURM_TASK_PID), one task's or, under srun -l, every
//     task's with its label;
//   - a list: the elastic agent's "Rendezvous complete for workers" block
//     (local_ranks=[0, 1], then global_ranks=[8, 9]) pairs local ranks
//     with global ranks on the agent's host;
//   - a job map: Open MPI's mpirun --display-map prints "Data for node:
//     <host> ..." and under it one "Process [OMPI ]jobid: J App: A Process
//     rank: R ..." line per process placed there.
//
// Rules say which by the names of their captures: block_host, block_rank,
// block_local_rank, block_pid (the next kBlockLines lines, until restated),
// section_pod (until the next one), file_host, file_rank, file_local_rank,
// file_pid (a task's environment, in any order: its rank, pid and host are
// linked, never given to every line of the file, which may be a batch
// script's output holding other tasks' lines; on a line that names its own
// rank, as an srun -l label does, they are that rank's host and pid), and
// local_ranks / global_ranks (Python lists), rank_mapping (a Python
// dict of host -> global ranks, local rank = position: DeepSpeed's
// launcher), and map_host / map_rank (a job map's node, then each rank
// under it: links of that rank to that host, never any line's host).
//
// Thread-safety: one LineCarry per source, fed in line order from one
// thread.
#ifndef FAULTLINE_ATTRIBUTION_CARRY_H_
#define FAULTLINE_ATTRIBUTION_CARRY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attribution/attribution.h"

namespace faultline {

// How far a block's word reaches: a ChildFailedError entry is 7 lines, a
// py-spy thread list a few dozen.
inline constexpr uint64_t kBlockLines = 64;

// How many lines before a byte range a range scan re-reads to learn what
// they stated (Scanner::ScanRange): two blocks' reach, so a block whose
// host came a block before its rank is whole. A describe section or an
// environment dump that began further back is not seen by the range.
inline constexpr uint64_t kCarryLookbackLines = 2 * kBlockLines;

// What one line taught beyond itself, for the caller to record.
struct CarryLinks {
  // A task's rank with its host and pid as an environment dump states them
  // (either may be missing).
  std::optional<int64_t> rank;
  std::optional<int64_t> local_rank;
  std::string host;
  std::optional<int64_t> pid;
  // (local rank, global rank) pairs on `host` from a rendezvous result.
  std::vector<std::pair<int64_t, int64_t>> local_global;
  // Every host's global ranks, local rank i the i-th, from a launcher's
  // whole mapping (DeepSpeed's global_rank_mapping); "localhost" is `host`.
  std::vector<std::pair<std::string, std::vector<int64_t>>> host_ranks;
};

class LineCarry {
 public:
  using Fields = std::vector<std::pair<std::string, std::string>>;

  // Fills the unset fields of `a` (and an empty *pod) from what earlier
  // lines stated, then records what `fields` state for later lines. `line`
  // is the 1-based line number in the file. Returns the links this line
  // taught.
  CarryLinks Apply(uint64_t line, const Fields& fields, Attribution& a, std::string* pod);
  // Whether Apply reads any of `fields` (the capture names above); when
  // none and the carry is Blank, Apply changes nothing.
  static bool States(const Fields& fields);
  // Nothing stated yet: Apply with no fields then changes nothing (a dense
  // log's dropped matches skip it).
  bool Blank() const {
    return block_.host.empty() && !block_.rank && !block_.local_rank && !block_.pid && section_pod_.empty() &&
           !file_.rank && !file_.local_rank && !file_.pid && file_.host.empty() && file_.gpu.empty() &&
           local_ranks_.empty() && map_host_.empty();
  }

 private:
  struct Block {
    std::string host;
    std::optional<int64_t> rank, local_rank, pid;
    uint64_t line = 0;
  };
  void Inherit(uint64_t line, Attribution& a, std::string* pod) const;
  void TakeBlock(uint64_t line, const Fields& fields, Attribution& a);
  void TakeFile(const Fields& fields, Attribution& a, CarryLinks& out);
  void TakeRanks(uint64_t line, const Fields& fields, const Attribution& a, CarryLinks& out);
  void TakeMap(uint64_t line, const Fields& fields, CarryLinks& out);

  Block block_;
  std::string section_pod_;
  Attribution file_;
  std::vector<int64_t> local_ranks_;
  uint64_t local_ranks_line_ = 0;
  // The job map's node whose process lines follow, and the line of the
  // last of them (a node's list is contiguous).
  std::string map_host_;
  uint64_t map_line_ = 0;
};

// "[0, 1, 2, 3]" -> {0, 1, 2, 3}; empty when malformed or over 4,096 items.
std::vector<int64_t> ParseRankList(std::string_view s);

// DeepSpeed's "{'worker-0': [0, 1], 'worker-1': [2, 3]}" -> each host with
// its ranks, in order; empty when malformed or over 65,536 hosts; text cut
// short gives the entries it holds whole.
std::vector<std::pair<std::string, std::vector<int64_t>>> ParseRankMapping(std::string_view s);

}  // namespace faultline

#endif  // FAULTLINE_ATTRIBUTION_CARRY_H_
