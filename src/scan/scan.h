// The scanner: sources -> evidence. One Hyperscan block-mode scan per
// line-aligned chunk finds where signals match; only matched lines are then
// confirmed with RE2 (the same pattern, on that line alone), their named
// captures extracted, their timestamp parsed and their rank/host attributed.
// Chunks of mapped files are spread over N threads, each with its own
// scratch; results merge per source in offset order, so the output is the
// same whatever the thread count. Compressed files and standard input are
// streamed; many of them are decompressed on many threads at once.
//
// Thread-safety: a Scanner is used by one thread at a time (it runs its own
// worker threads inside ScanPaths). The Ruleset it holds is shared.
#ifndef FAULTLINE_SCAN_SCAN_H_
#define FAULTLINE_SCAN_SCAN_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "evidence/evidence.h"
#include "evidence/merge.h"
#include "input/input.h"
#include "ruleset/ruleset.h"

namespace faultline {

struct ScanOptions {
  unsigned threads = 0;                   // 0: one per core
  // Target chunk size for mapped files. A chunk's phase A and B work on
  // buffers about the chunk's size on a dense log (its matched lines and
  // their context copied out of the mapping, the pending lines, the
  // evidence): at 16 MiB they were some 36 MB, far past the caches, and
  // every page of them was faulted in and zeroed once; at 4 MiB a dense
  // log takes ~20% less CPU with the same output (bench/README.md,
  // "2026-12-06: chunks of 4 MiB").
  size_t chunk_bytes = size_t{4} << 20;
  // Small plain files (up to 256 KiB) scanned by one worker task, one after
  // another, up to 1 MiB in all; 1: each file is a task of its own. The
  // results are the same either way (tests/scan/batch_test.cc).
  size_t batch_files = 64;
  // A record the per-rule caps drop that has no field goes Keep's short way
  // (counts, pid link); false: every record goes the whole way. The results
  // are the same (tests/scan/dense_match_test.cc).
  bool counted_keep = true;
  // Phase A leaves the bytes before a matched line in the chunk, and phase
  // B reads them only for a line that inherits its time; false: they are
  // copied for every matched line. The results are the same
  // (tests/scan/lazy_context_test.cc).
  bool lazy_context = true;
  // Evidence kept per rule: the first `keep_first` and the last `keep_last`
  // records; counts stay exact past the cap.
  size_t keep_first = EvidenceCaps{}.keep_first;
  size_t keep_last = EvidenceCaps{}.keep_last;
  // A metric line (a loss or grad-norm value) whose value goes into its
  // series is kept as that point alone (MetricPoint: value, step, time,
  // line and offset), not as an evidence record: a job's loss lines are
  // most of its matches, and the correlator makes the record of the points
  // a detector reports (ScanResult::metric_points counts the others). true:
  // each is an evidence record too, under the caps.
  bool metric_evidence = false;
  int64_t tz_offset_s = 0;                // zone of naive timestamps
  // limits.cancel defaults to `cancel` below; limits.deadline to the
  // Scanner's creation plus time_budget_s.
  InputLimits limits;
  // Wall-clock budget for reading the inputs, from the Scanner's creation;
  // 0: none. Sources (or their rest) not read in time are input errors
  // naming the budget; what was read is still diagnosed.
  double time_budget_s = 0;
  // Called on the thread that called ScanPaths/Feed/Finish, in source then
  // offset order within a source.
  std::function<void(const Evidence&, const std::string& source)> on_evidence;
  // Bytes done, bytes total (0 unknown); return false to cancel.
  std::function<bool(uint64_t, uint64_t)> on_progress;
  const std::atomic<bool>* cancel = nullptr;
};

class Scanner {
 public:
  Scanner(std::shared_ptr<const Ruleset> rules, ScanOptions opts);
  ~Scanner();
  Scanner(const Scanner&) = delete;
  Scanner& operator=(const Scanner&) = delete;

  // Scans files, directories, .gz/.zst files and "-" (stdin). Sources that
  // cannot be read are recorded in errors(); the others go on. Returns
  // CancelledError when cancelled.
  absl::Status ScanPaths(const std::vector<std::string>& paths);

  // The scan ScanPaths makes of one path, given what ListFiles(root,
  // &skipped) listed: the listing's facts (regular, size, mtime) plan the
  // scan without a second stat() of each file; a file that changed or went
  // since is met when it is opened (an input error naming it, as any file
  // that cannot be opened). Returns CancelledError when cancelled.
  absl::Status ScanListed(const std::string& root, const std::vector<ListedFile>& files,
                          const std::vector<SkippedPath>& skipped);

  // Scans only bytes [begin, end) of a file, line-aligned at both ends: a
  // range that starts inside a line skips to the next line start, and one
  // that ends inside a line runs to that line's end. first_line is the line
  // number of the line at `begin` (1-based), when known; 0 means count the
  // newlines before `begin` (a cheap memchr pass).
  absl::Status ScanRange(const std::string& path, uint64_t begin, uint64_t end,
                         uint64_t first_line);

  // Push streams.
  uint32_t OpenStream(const std::string& name);
  absl::Status Feed(uint32_t stream, std::string_view data);
  // Scans the complete lines buffered on a stream now.
  absl::Status FlushStream(uint32_t stream);
  absl::Status CloseStream(uint32_t stream);

  // Closes open streams and hands over what the scan found, with
  // post-processing across sources (year inference, monotonic anchoring).
  ScanResult Finish();

  // What Finish would hand over if the scan ended now, without ending it:
  // complete lines buffered on open streams are scanned first (a trailing
  // partial line stays buffered), then the evidence kept so far is copied
  // and post-processed as Finish does. The scan goes on; a later Snapshot
  // or Finish sees everything. For follow mode, which re-correlates a live
  // job at a cadence.
  ScanResult Snapshot();

  const ScanResult& partial() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The text a metric point's line (ScanResult::metrics) would have had as an
// evidence record, which the scan did not make: the line read back from
// its source at the point's offset, without the terminal escapes the scan
// strips from a line of a text source (a JSON source's record text is its
// raw line). nullopt when the source cannot be read again (stdin, not a
// file, shorter now than scanned, no line starting at the offset). A line
// the scan joined with the lines after it (a CRI partial run, a
// hard-wrapped line) gives its first physical line.
std::optional<std::string> PointLineText(const SourceSummary& source, uint64_t offset);

}  // namespace faultline

#endif  // FAULTLINE_SCAN_SCAN_H_
