// Internal to the scanner (src/scan/*.cc): what a chunk carries from phase A
// (Hyperscan, inside the SIGBUS guard) through phase B (RE2, evidence) to the
// merge, and the scanner's state. The stages live in their own files:
//   phase_a.cc        chunk matching: Hyperscan callbacks, line bounds,
//                     matched lines copied out of the mapping
//   line_evidence.cc  phase B: RE2 confirmation and captures, times,
//                     attribution, tracebacks, chunk edge times
//   keep.cc           the merge: per-source and per-rank summaries, caps,
//                     topology, metrics
//   schedule.cc       tasks on worker threads, streams, cancellation
//   plan.cc           where chunks of a mapped file are cut
//   scan.cc           the Scanner API
//
// Thread-safety: ChunkOut moves between one worker and the merging thread;
// Impl is the Scanner's, used as scan.h says.
#ifndef FAULTLINE_SCAN_SCAN_IMPL_H_
#define FAULTLINE_SCAN_SCAN_IMPL_H_

#include <hs/hs.h>

#include <algorithm>
#include <atomic>
#include <bitset>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "attribution/attribution.h"
#include "attribution/carry.h"
#include "evidence/evidence.h"
#include "evidence/merge.h"
#include "input/input.h"
#include "ruleset/ruleset.h"
#include "scan/confirm_plan.h"
#include "scan/line_format.h"
#include "scan/scan.h"
#include "scan/source_framing.h"
#include "scan/traceback.h"
#include "util/utf8.h"

namespace faultline {
namespace internal {

constexpr size_t kContextBefore = kInheritWindow;  // bytes before a match line kept for inherited times
constexpr size_t kConfirmWindow = 64 << 10;   // RE2 runs on at most this much of a huge line
constexpr size_t kEdgeWindow = 8 << 10;       // chunk head/tail kept for first/last times
constexpr size_t kMaxHsLength = 0xF0000000u;  // hs_scan takes an unsigned length
constexpr size_t kWindowAfterMatch = 4 << 10;  // of a huge line, kept past a match's end
// A stream (.gz, .zst, a pipe) is read and scanned in pieces of about this
// size: small enough that a piece decoded on one core is still in the shared
// cache when another scans it, that the scanners wait little for the first
// piece and the last one is short (16 MiB pieces: a .gz on 2 threads took
// 0.35 CPU s against 0.28 on one; bench/README.md, "2026-12-05: a
// compressed file's decode and scan overlapped").
constexpr size_t kStreamBuffer = size_t{2} << 20;
// A plain file up to this size is read whole with one read() (ScanSmallFile)
// and scanned in a batch with others (Task::batch).
constexpr size_t kSmallFile = 256 << 10;
// On several workers a plain file over this size is mapped and cut into a
// chunk a worker even when it is under Options::chunk_bytes (one chunk, one
// worker, before: a 16 MiB file took as long on 2 threads as on 1).
constexpr size_t kSplitFile = size_t{4} << 20;
// The worker threads a scan runs: ScanOptions::threads, 0 meaning one a
// hardware thread of the machine (at least one).
inline unsigned Workers(const ScanOptions& opts) {
  return opts.threads ? opts.threads : std::max(1u, std::thread::hardware_concurrency());
}
constexpr size_t kMaxStreamLine = size_t{64} << 20;  // a longer line in a stream is split


// What few matched lines need besides their bytes: a line of a derived
// chunk, a JSON message, a huge line's windows, a traceback's window and
// the lines around a traceback's header (Pending::Extra).
struct PendingExtra {
  // Set by a derived chunk (JSON lines): the raw line, held here instead.
  std::string line;
  // Phase B: the JSON message captures are taken from, when it is not a
  // piece of `line`.
  std::string message;
  // For a line over kConfirmWindow: per id, the window RE2 confirms on.
  std::vector<std::string> windows;
  // For a line that may end a Python traceback (Pending::tb_candidate):
  // the kTracebackWindow bytes before it.
  std::string tb_window;
  // A signal of the line matched a traceback's header
  // (detail_exception_line): the line above the header, up to
  // kTracebackWindow bytes of the lines after it (those the chunk holds)
  // with the offset and number of each, and, from phase B, the exception
  // line found in them. A signal that may take the line above a crash
  // report (detail_line_above) has that line in `above` too.
  std::string above, after;
  std::vector<std::pair<uint64_t, uint64_t>> after_lines;  // (offset, line_rel)
  std::optional<ExceptionLine> exception;
};

// A matched line copied out of the chunk. Its bytes, the context before it
// and its signal ids live in the chunk's ChunkOut::pending_text and
// pending_ids (ChunkOut::LineOf, BeforeOf, IdsOf): one buffer a chunk, not
// three allocations a matched line (on a dense log malloc and free took 7%
// of the scan's instructions, bench/README.md "fourth pass"). What only a
// few lines need is in `extra`, allocated for those lines alone: with it
// inline a record was 424 bytes, written in phase A and read in phase B for
// every matched line of a dense log, nearly all of them empty strings.
struct Pending {
  uint64_t offset = 0;     // absolute offset of the line start
  uint64_t line_rel = 0;   // newlines in the chunk before this line
  uint32_t ids_at = 0, ids_n = 0;  // signals that matched the line
  // The line (a window of it, for huge lines) and up to kContextBefore
  // bytes before it, in pending_text; with ChunkOut::lazy_context the
  // context is not copied and before_at is its offset in the chunk.
  size_t line_at = 0, line_len = 0;
  size_t before_at = 0, before_len = 0;
  // The line is Extra().line (a derived chunk's JSON line).
  bool line_owned = false;
  bool before_reaches_chunk_start = false;
  // `before` starts right after the previous matched line of the chunk
  // (whose own or inherited time then carries over).
  bool before_reaches_prev = false;
  // For a line that may end a Python traceback: the kTracebackWindow bytes
  // before it in Extra().tb_window (fewer at the source's start, or at a
  // stream chunk's start: then `tb_cut` and the merge prepends the
  // source's previous bytes).
  bool tb_candidate = false;
  bool tb_cut = false;
  bool tb_at_start = false;  // the window reaches the source's first byte
  // A signal of the line takes the next line as its evidence
  // (detail_next_line): that line (up to kMaxEvidenceText bytes of it) in
  // pending_text, where it starts and its number; none when the line is
  // the chunk's last.
  bool has_next = false;
  // No exception line: the source ends inside the traceback's frames (fewer
  // than kTracebackWindow bytes after the header, all frames of its stream).
  bool ends_in_frames = false;
  size_t next_at = 0, next_len = 0;
  uint64_t next_offset = 0, next_line_rel = 0;
  std::unique_ptr<PendingExtra> extra;

  // The line's extra parts, empty when it has none (never allocates).
  const PendingExtra& Extra() const {
    static const PendingExtra kNone;
    return extra ? *extra : kNone;
  }
  // The same, made for the line when it has none.
  PendingExtra& MakeExtra() {
    if (!extra) extra = std::make_unique<PendingExtra>();
    return *extra;
  }
};

static_assert(kTracebackWindow <= kEdgeWindow, "the merge completes cut windows from chunk tails");

// Phase B's note on one evidence record of a chunk (same index): the
// pending line and signal it came from, where its captures are taken, and
// whether the per-rule caps are bound to drop it (then only what Keep
// reads is extracted).
struct EvidenceRef {
  uint32_t pending = 0;
  uint32_t j = 0;  // index into Pending::ids
  bool own_message = false;  // captures from Pending::message
  bool thin = false;
  uint32_t sub_begin = 0;         // captures from subject.substr(sub_begin, sub_len)
  uint32_t sub_len = UINT32_MAX;  // (a progress line's newest tqdm update)
  // The captures the confirm took (SignalInfo::ConfirmAndExtract), in
  // ChunkOut::held[held_at, held_at + held_n); held_at UINT32_MAX when none.
  uint32_t held_at = UINT32_MAX;
  uint32_t held_n = 0;
  // A metric line whose value the merge keeps as a series point alone
  // (ScanOptions::metric_evidence false): pass 2 makes no text for it when
  // its value parses (ChunkOut::thin 2).
  bool point = false;
};

// A capture of the line, taken in phase B's first pass: its name (the
// extractor's) and where it lies in the line.
struct HeldCapture {
  std::string_view name;
  uint32_t begin = 0, len = 0;
};

// A traceback window cut at a stream chunk's start, completed at the merge.
struct TracebackPending {
  size_t first_evidence = 0, evidence_count = 0;  // in ChunkOut::evidence
  uint64_t offset = 0;                            // of the line
  std::string window, line;
};

struct ChunkOut {
  std::vector<Pending> pending;
  std::string pending_text;             // the pending lines and their context
  std::vector<uint32_t> pending_ids;    // their signals, line after line
  std::vector<HeldCapture> held;        // phase B: EvidenceRef::held_at
  // Set by the caller before PhaseA: the context before each matched line
  // stays where it is, in the chunk's bytes at `context_base` (set by
  // PhaseA; they outlive PhaseB), and phase B reads it only for a line
  // without a stamp of its own (ContextBefore). Phase A copied it for
  // every matched line: on a dense log that is nearly the whole chunk
  // copied once more, and then read from memory again, for lines whose
  // own stamps make it unneeded. `context_guard`, when not empty: the
  // mapping the bytes lie in, read under a SIGBUS guard (a file truncated
  // after phase A; then `faulted`).
  bool lazy_context = false;
  const char* context_base = nullptr;
  std::string_view context_guard;
  std::string_view LineOf(const Pending& p) const {
    return p.line_owned ? std::string_view(p.Extra().line) : std::string_view(pending_text.data() + p.line_at, p.line_len);
  }
  std::string_view BeforeOf(const Pending& p) const {
    return std::string_view(pending_text.data() + p.before_at, p.before_len);
  }
  const uint32_t* IdsOf(const Pending& p) const { return pending_ids.data() + p.ids_at; }
  std::string_view NextOf(const Pending& p) const {
    return std::string_view(pending_text.data() + p.next_at, p.next_len);
  }
  std::vector<Evidence> evidence;  // after phase B (line = line_rel for now)
  // Per evidence record (empty: none): 1, the per-rule caps are bound to
  // drop it (Scanner::Impl::MarkThin), so the merge counts it and moves it
  // no further; 2, a metric line bound to be a series point alone, made
  // without its text (EvidenceRef::point).
  std::vector<uint8_t> thin;
  std::vector<TracebackPending> tb_pending;
  // Per rule, the chunk's records that count against the caps (MarkThin's
  // totals; empty when MarkThin did not run): the merge adds them up for
  // the source (SourceState::merged_of_rule).
  std::vector<std::pair<uint32_t, uint64_t>> rule_records;
  uint64_t newlines = 0;
  bool ends_with_newline = true;
  std::string head, tail;
  // The chunk as a piece of its source: bytes, first and last times (the
  // line giving the last), first stamp with its own year, monotonic anchor.
  // A chunk without a stamped line has the sum of its dmesg -H deltas in
  // unanchored_delta_us, which carry the previous chunk's last time forward
  // (0 when the chunk is longer than the tail kept: the next stamp is then
  // out of inheritance reach).
  SourceSummary edge;
  uint64_t base_offset = 0;       // absolute offset of the chunk
  bool faulted = false;  // phase B met a fault reading context_guard
  std::string error;  // non-empty: the source failed here
  int error_code = -3;
  // The item of a batch task (Task::batch) this output belongs to.
  uint32_t batch_item = 0;
  // Progress: the file bytes behind this chunk, when they are not
  // edge.bytes (compressed bytes read for a .gz/.zst source).
  std::optional<uint64_t> input_bytes;
  // What went wrong, independent of where: a source reports each cause
  // once, however many of its chunks meet it (a file truncated under its
  // mapping faults in every chunk past the new end). Empty: the message.
  std::string error_cause;
};

// State of the Hyperscan callback while scanning one chunk.
struct HsCtx {
  const char* base = nullptr;
  size_t len = 0;
  uint32_t signal_count = 0;
  uint64_t cur_line_start = 0, cur_line_end = 0;
  bool have_line = false;
  struct Hit {
    uint64_t line_start, line_end;
    uint64_t to;  // end of the first match of `id` on the line
    uint32_t id;
  };
  std::vector<Hit>* hits = nullptr;
  std::vector<uint32_t>* seen = nullptr;  // ids seen on the current line
};

// A dmesg -H delta in whole microseconds.
inline int64_t DeltaUs(double s) { return static_cast<int64_t>(std::llround(s * 1e6)); }

// Copies [p, p+n) into s without allocating while the source is read: a
// SIGBUS in the copy unwinds with longjmp, which must not strand a buffer
// that no destructor will free.
inline void CopyOut(std::string& s, const char* p, size_t n) {
  s.reserve(n);
  s.assign(p, n);
}


// The wall time in force at a matched line: its own, or inherited from the
// nearest stamped line before it. `needs_prev`: no stamp before the line in
// its chunk, so the time is to come from the chunks before (plus
// pending_delta, the dmesg -H deltas since the chunk's start).
struct TimeInForce {
  int64_t time_us = kNoTime;
  uint64_t at = 0;  // start of the stamped line it comes from
  bool inferred = false;  // that stamp had no year
  bool needs_prev = false;
  int64_t pending_delta = 0;
};

// Makes evidence text valid UTF-8, at most kMaxEvidenceText bytes.
inline std::string CleanText(std::string_view s) { return CleanUtf8(s, kMaxEvidenceText); }
// Whether CleanText(s) == s: at most kMaxEvidenceText bytes, every one ASCII
// but NUL, and no '\r' last (the one byte CleanUtf8 drops from ASCII).
inline bool CleansToItself(std::string_view s) {
  if (s.size() > kMaxEvidenceText || (!s.empty() && s.back() == '\r')) return false;
  for (char c : s) {
    if (static_cast<unsigned char>(c) - 1u >= 0x7Fu) return false;
  }
  return true;
}

// phase_a.cc
uint64_t CountNewlines(const char* p, size_t n);
// Phase A on [base, base+len), which holds whole lines (the last may lack its
// newline). Plain loops and C calls only, and every allocation is owned by
// `out`, `hits` or thread storage before the mapping is touched: a fault
// (file truncated under the mapping) longjmps out of here.
//
// `readable_before`: bytes before `base` that belong to the same source and
// may be read (a chunk of a mapped file); traceback windows reach into them.
// `fold_tracebacks` is false for JSON messages. `readable_after`: the same
// after `base + len`; the lines after a traceback's header reach into them.
// `newlines`: [base, base+len)'s newline index when complete (the escape
// test's pass counted them), else the chunk is counted after hs_scan.
void PhaseA(const Ruleset& rs, hs_scratch_t* scratch, const char* base, size_t len,
            uint64_t abs_offset, ChunkOut& out, std::vector<HsCtx::Hit>& hits,
            size_t readable_before = 0, bool fold_tracebacks = true, size_t readable_after = 0,
            const NewlineIndex* newlines = nullptr);
// After a SIGBUS unwound out of PhaseA, clears the scratch's in-use mark so
// it can be scanned with and freed again (false: a layout we do not know).
bool ReleaseFaultedScratch(hs_scratch_t* scratch);

// plan.cc
// Line-aligned chunk boundaries of [begin, end) of a mapped source, about
// chunk_bytes apart and never inside a run of CRI partial or wrapped lines:
// begin, the cuts, end (just begin when the range is empty). Reads the
// mapping: call under GuardedRead. The last `tail_span` bytes are cut about
// `tail_chunk_bytes` apart instead (0: no tail of its own).
std::vector<uint64_t> ChunkCuts(std::string_view all, uint64_t begin, uint64_t end,
                                size_t chunk_bytes, const SourceFraming& framing,
                                uint64_t tail_span = 0, size_t tail_chunk_bytes = 0);
// The chunk size for `bytes` of one source: chunks of one size, no larger
// than chunk_bytes, as many as a multiple of the workers, so that no worker
// is left to scan a last chunk alone. A source of kSplitFile to chunk_bytes
// on several workers gets a chunk a worker.
size_t EvenChunkBytes(uint64_t bytes, size_t chunk_bytes, unsigned workers);
// The tail of a source cut into smaller chunks (ChunkCuts' tail_span and
// tail_chunk_bytes) for `workers` scanning `bytes` in chunks of
// `chunk_bytes` (EvenChunkBytes): the last round -- a chunk a worker -- in
// quarters, so that the worker taking the last chunk finishes at most a
// quarter chunk after the others, not up to a whole one. None on one worker
// or for a single chunk.
std::pair<uint64_t, size_t> TailChunks(uint64_t bytes, size_t chunk_bytes, unsigned workers);

}  // namespace internal

// A rank's last progress line that counts batches within an epoch: its
// epoch, its batch and the step its epoch started from (scan/keep.cc
// EpochStep).
struct EpochCount {
  int64_t epoch = -1;
  int64_t batch = -1;
  int64_t base = 0;
};

struct Scanner::Impl {
  using ChunkOut = internal::ChunkOut;
  using Hit = internal::HsCtx::Hit;

  std::shared_ptr<const Ruleset> rs;
  ScanOptions opts;
  TimeContext tctx;
  ScanResult result;

  // Per-source merge state.
  struct SourceState {
    uint32_t index = 0;
    Attribution path_attr;
    // A batched file's path is attributed by the worker that scans it
    // (AttributePath), not while the merging thread walks the input: on a
    // many-file archive that was a good part of the walk's serial time.
    size_t below_root = 0;
    bool path_pending = false;     // path_attr is still to be made
    bool summary_pending = false;  // the summary's rank and host too (merging thread)
    SourceFraming framing;
    TimeContext tctx;
    uint64_t lines = 0;
    bool last_ended_newline = true;
    explicit SourceState(EvidenceCaps caps) : keeper(caps) {}
    EvidenceKeeper keeper;
    // Per rank, the time and step of its previous progress line here, and
    // for lines that count batches within an epoch, its epoch count.
    struct LastProgress {
      int64_t time_us = kNoTime;
      int64_t step = -1;
      uint64_t line = 0;  // 0: none yet (lines count from 1)
      EpochCount epochs;
    };
    std::map<int64_t, LastProgress> rank_last_progress;
    // `kubectl describe pod` prints "Name:" lines before "Node:": the pod
    // a later node line of this source belongs to.
    std::string pending_pod;
    // What a block, section or the file stated earlier (carry()), and the
    // rank <-> pid <-> device links this source printed so far (topo()), so
    // a progress line that names only its pid (a journald export) or its
    // local rank (torchrun's "[default3]:") is counted for its rank. Both
    // are made by the merging thread at the first line that states
    // something: empty, they were 784 of a SourceState's 1,320 bytes, made
    // and faulted in on the planning thread, before any worker starts, for
    // each of an archive's 20k files, most of which never use them
    // (bench/README.md, "the 2-thread target, the serial part's fourth
    // pass").
    std::unique_ptr<LineCarry> carry_;
    std::unique_ptr<TopologyMap> topo_;
    LineCarry& carry() {
      if (!carry_) carry_ = std::make_unique<LineCarry>();
      return *carry_;
    }
    bool CarryBlank() const { return !carry_ || carry_->Blank(); }
    TopologyMap& topo() {
      if (!topo_) topo_ = std::make_unique<TopologyMap>();
      return *topo_;
    }
    // For reading: an empty map where none was made.
    const TopologyMap& TopoView() const {
      static const TopologyMap kNone;
      return topo_ ? *topo_ : kNone;
    }
    int64_t topo_nranks = 0;  // the largest communicator in topo
    std::vector<std::string> failed_causes;  // reported already (ChunkOut::error_cause)
    // Per rule, the records of the chunks merged so far that count against
    // the caps (merging thread only). Once a rule's count reaches
    // keep_first, `merged_of_rule` is made (rule_count() entries, published
    // with release) and holds each rule's count: a worker's MarkThin of a
    // later chunk reads it as a lower bound of the records before its
    // chunk, and marks thin what the caps drop whatever the true count --
    // past the source's first keep_first, before the chunk's last
    // keep_last. A record marked thin or not is counted and linked alike
    // (Keep), so the output does not depend on when the merge ran.
    absl::flat_hash_map<uint32_t, uint64_t> merged_count;
    std::atomic<std::atomic<uint64_t>*> merged_of_rule{nullptr};
    std::unique_ptr<std::atomic<uint64_t>[]> merged_of_rule_owner;
  };
  std::vector<std::unique_ptr<SourceState>> states;

  // Streams pushed by the caller.
  struct PushStream {
    uint32_t source;
    std::string buf;
    uint64_t offset = 0;
    bool closed = false;
    HsScratchPtr scratch;
  };
  std::vector<std::unique_ptr<PushStream>> streams;
  // The open stream `stream`, with the scratch its scans use.
  absl::StatusOr<PushStream*> OpenPushStream(uint32_t stream);
  // Scans and merges the first `cut` bytes buffered on a pushed stream.
  void ScanPushed(PushStream& ps, size_t cut);
  HsScratchPtr main_scratch;
  std::vector<Hit> main_hits;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();

  // keep.cc: sources, and what the merge keeps of each chunk.
  // `below_root`: where the part of `name` under the input root begins
  // (PathBelowRoot); the path attribution reads nothing above it.
  // `defer_path`: the path is attributed later (AttributePath), by the
  // worker of the batch the file goes into.
  uint32_t NewSource(const std::string& name, int64_t mtime, size_t below_root = 0, bool defer_path = false);
  // The path attribution NewSource deferred (a no-op once made): the
  // worker of a batched file makes it before scanning the file (`path` is
  // the source's name).
  static void AttributePath(SourceState& st, std::string_view path);
  // ... and the merging thread puts it into the source's summary before the
  // file's outputs (or dump) are merged, making it first if no worker did
  // (a cancelled scan).
  void SummarizePath(SourceState& st);
  // Every source's, once the workers are joined (the files of tasks a
  // cancelled scan never merged).
  void SummarizePaths() {
    for (auto& st : states) SummarizePath(*st);
  }
  // A line placing a pod on a node (fields `pod` and `node`, or a `pod`
  // line then a `node` line of the same source) into result.host_aliases.
  void KeepPlacement(SourceState& st, const Evidence& ev);
  void ApplyCarry(SourceState& st, Evidence& ev);
  // What earlier lines stated, into `ev`; the links this line teaches.
  CarryLinks Carry(SourceState& st, Evidence& ev);
  // A carry_only chunk, which ends where the source's first range line
  // begins: its lines feed the LineCarry and the pending pod, nothing else.
  void PrimeCarry(SourceState& st, ChunkOut& out);
  template <typename Link>
  void KeepOnce(absl::flat_hash_set<std::string>& keys, std::vector<Link>& links, std::string key, Link link);
  void KeepDevice(DeviceLink link);
  void KeepPid(PidLink link);
  void KeepNic(NicLink link);
  // The HCAs an NCCL line names (NicLink), before any evidence cap.
  void KeepNics(const Evidence& ev);
  void Fail(uint32_t src, std::string msg, int code);
  // flight_recorder.cc: whether file `path` (source `src`) is a Flight
  // Recorder dump, recognised by content (compressed too); if so it is read
  // whole into result.flight_recorder, or failed with an error naming it,
  // and not scanned as a log.
  bool TakeFlightRecorderDump(uint32_t src, const std::string& path);
  // Whether a plain file's first 64 bytes rule a dump out (one read()).
  static bool HeadRulesOutDump(const std::string& path);
  // The same test on the first bytes of a plain file already read.
  static bool HeadRulesOutDump(std::string_view head);
  // The input errors of InputLimits::max_source_bytes and the time budget:
  // they name the source, the limit and the option that sets it.
  std::string OverLimitMessage(const std::string& name, uint64_t read_bytes) const;
  std::string OutOfTimeMessage(const std::string& name, uint64_t read_bytes) const;
  bool OutOfTime() const { return std::chrono::steady_clock::now() >= opts.limits.deadline; }

  // line_evidence.cc. Phase B: evidence from pending lines. Runs on worker threads; reads only
  // immutable state (ruleset, the source's format and time context).
  // `clean_lines`: the chunk was scanned as it is, HasEscapes having found
  // no terminal escape in it, so its matched lines are not looked at again.
  void PhaseB(const SourceState& st, ChunkOut& out, bool clean_lines) const;
  // Pass 1: RE2 confirmation of a pending line's signals (or the Hyperscan
  // match, where it suffices), their evidence with time and attribution.
  void ConfirmLine(const SourceState& st, internal::Pending& p, uint32_t pending_index, std::string_view line,
                   const LineView& view, bool own_delta, const internal::TimeInForce& inherited, ChunkOut& out,
                   std::vector<internal::EvidenceRef>& refs) const;
  // Which records the per-rule caps are bound to drop: past the first
  // keep_first of its rule in the source (the records of the chunks merged
  // before, as far as the merge has published them, and those before it
  // in this chunk) and before the last keep_last of its rule in this
  // chunk. Sets out.rule_records.
  void MarkThin(const SourceState& st, ChunkOut& out, std::vector<internal::EvidenceRef>& refs) const;
  // After a chunk's Keep: its rule_records into st.merged_count, published
  // in st.merged_of_rule once a rule reaches keep_first (merging thread).
  void CountMerged(SourceState& st, const ChunkOut& out);
  // Pass 2: text and captures of the evidence [first, end) of one line,
  // and its traceback fold.
  void FinishLine(const SourceState& st, internal::Pending& p, size_t first, size_t end, bool all_thin,
                  ChunkOut& out, const std::vector<internal::EvidenceRef>& refs) const;

  // The fields of a folded traceback on the evidence of its exception line.
  static void AddTraceback(std::vector<Evidence>& evs, size_t first, size_t count,
                           const std::optional<TracebackFold>& fold);

  // confirm_plan.h, per signal; set with `rs`.
  std::vector<internal::SignalPlan> plans_;

  // Phase A on a text derived from the chunk (JSON messages, joined CRI
  // records; one record per line, `jc.lines` says where each came from),
  // with the chunk's own counts and edges, and each pending line placed at
  // its record's first original line; `each(pending, record)` then adjusts
  // what the derived text got wrong for that format.
  template <typename Each>
  void PhaseADerived(hs_scratch_t* scratch, std::vector<Hit>& hits, const char* data,
                     size_t len, uint64_t abs_offset, const DerivedChunk& jc, bool fold_tracebacks,
                     ChunkOut& out, Each&& each) const;

  // `how`: SourceFraming::HowDerived of these bytes when the caller asked
  // it already (kUnknown: asked here).
  void ProcessBuffer(SourceState& st, hs_scratch_t* scratch, std::vector<Hit>& hits,
                     const char* data, size_t len, uint64_t abs_offset, ChunkOut& out,
                     SourceFraming::Derivation how = SourceFraming::Derivation::kUnknown) const;

  // keep.cc. Merges one chunk's results into its source, in order.
  void Merge(SourceState& st, ChunkOut& out);

  // Takes what it keeps out of `ev` (the merge passes its chunk's records).
  void Keep(SourceState& st, Evidence&& ev, bool thin = false);
  // Keep's parts: what every record counts (true: its rank is kept), its
  // pid link, and all a dropped record without fields adds.
  bool CountMatch(SourceState& st, Evidence& ev, std::optional<int64_t> seq);
  void KeepPidOf(SourceState& st, const Evidence& ev);
  void KeepCounted(SourceState& st, Evidence& ev);
  void KeepTopology(const Evidence& ev);
  void KeepProgress(SourceState& st, Evidence ev);
  int64_t LocalKey(const Evidence& ev);
  // Step summaries kept under a (host, local rank) key get the rank the
  // whole archive's NCCL init lines give that device.
  void ResolveLocalKeys(ScanResult& r, std::map<int64_t, Evidence>& last) const;
  bool KeepMetric(const Evidence& ev);

  void EndSource(SourceState& st) { st.keeper.TakeInto(result.evidence); }

  std::map<int64_t, Evidence> last_progress_;
  // (host, local rank) -> a RankSummary key below -1, for step lines whose
  // source names only a local rank (torchelastic's attempt_N/<local_rank>/
  // stdout.log) and whose rank another source's NCCL init gives.
  std::map<std::pair<std::string, int64_t>, int64_t> local_keys_;
  // CountMatch's memos, for the result being made (Finish clears them): the
  // rank and host it admitted last, and per rule the host it counted last
  // with its count in result.rule_stats (a std::map node: it stays put).
  int64_t admitted_rank_ = -1;
  std::string admitted_host_;
  // Per signal and per rule, its count in result.signal_hits and its node
  // in result.rule_stats (std::map nodes stay put), made at the first match
  // as the maps' operator[] made them: two tree look-ups a match otherwise.
  std::vector<uint64_t*> hits_at_;
  std::vector<RuleStats*> stats_at_;
  uint64_t& SignalHitsOf(uint32_t signal) {
    if (signal >= hits_at_.size()) hits_at_.resize(size_t{signal} + 1, nullptr);
    if (hits_at_[signal] == nullptr) hits_at_[signal] = &result.signal_hits[signal];
    return *hits_at_[signal];
  }
  RuleStats& RuleStatsOf(uint32_t rule) {
    if (rule >= stats_at_.size()) stats_at_.resize(size_t{rule} + 1, nullptr);
    if (stats_at_[rule] == nullptr) stats_at_[rule] = &result.rule_stats[rule];
    return *stats_at_[rule];
  }
  // The ranks below kAdmittedRankBits admitted (and kept) for this result.
  static constexpr int64_t kAdmittedRankBits = 4096;
  std::bitset<kAdmittedRankBits> admitted_ranks_;
  bool AdmittedBefore(int64_t rank) const {
    return rank < kAdmittedRankBits ? admitted_ranks_[static_cast<size_t>(rank)] : rank == admitted_rank_;
  }
  void NoteAdmitted(int64_t rank) {
    if (rank < kAdmittedRankBits) {
      admitted_ranks_.set(static_cast<size_t>(rank));
    } else {
      admitted_rank_ = rank;
    }
  }
  struct HostCount {
    std::string host;
    uint64_t* count = nullptr;
  };
  absl::flat_hash_map<uint32_t, HostCount> host_counts_;
  // Topology records kept so far, for deduplication.
  absl::flat_hash_set<std::string> device_keys_;
  // The NIC links as indices into result.nics with their hashes, compared
  // by their fields: a key string built for every link (its allocation, its
  // hash and its move into the set) was ~1,000 instructions of the merging
  // thread, and an NCCL HCA list gives a link per HCA per rank (8,192 on the
  // 20,736-file archive). The hash is kept so that the set's growth does
  // not hash every link's strings again.
  struct NicKey {
    uint32_t index;
    size_t hash;
  };
  // A link looked up (not yet in result.nics).
  struct NicProbe {
    const NicLink* link;
    size_t hash;
  };
  struct NicKeyHash {
    using is_transparent = void;
    size_t operator()(const NicKey& k) const { return k.hash; }
    size_t operator()(const NicProbe& p) const { return p.hash; }
  };
  struct NicKeyEq {
    using is_transparent = void;
    const std::vector<NicLink>* links;
    const NicLink& Of(const NicKey& k) const { return (*links)[k.index]; }
    static const NicLink& Of(const NicProbe& p) { return *p.link; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      const NicLink& x = Of(a);
      const NicLink& y = Of(b);
      return x.pid == y.pid && x.rank == y.rank && x.index == y.index && x.sends == y.sends && x.host == y.host &&
             x.hca == y.hca && x.pci == y.pci && x.netdev == y.netdev;
    }
  };
  absl::flat_hash_set<NicKey, NicKeyHash, NicKeyEq> nic_keys_{0, NicKeyHash{}, NicKeyEq{&result.nics}};
  absl::flat_hash_map<std::string, size_t> pid_keys_;  // -> index in result.pids
  // Set when a cancelled RunTasks stops merging: workers drop what they would
  // push instead of waiting for room in a queue nobody drains any more.
  std::atomic<bool> abandon_{false};
  // Set by the merge when the metric series reached kMaxMetricSeries: phase
  // B then makes metric lines' records whole again (a line of a new series
  // is kept as a record, text and all).
  std::atomic<bool> metric_series_full_{false};

  // Work items for ScanPaths.
  struct Task {
    uint32_t source = 0;
    std::string path;               // whole-file task when source_ptr is null
    std::shared_ptr<Source> shared;  // chunk of a large mapped file
    uint64_t begin = 0, end = 0;
    bool last_chunk = true;
    // The lines just before a byte range (ScanRange): scanned only so the
    // source's LineCarry learns what they state (PrimeCarry), never kept.
    bool carry_only = false;
    // A small plain file: the worker detects its format from its first
    // 4 KiB (the merging thread used to, at ~90k instructions a source).
    bool detect_head = false;
    // Small plain files scanned one after another by one worker, each as a
    // task of its own would be (RunBatch): one hand-off between worker and
    // merge for the lot, not one a file (the futex wake-ups and context
    // switches of a task were a good part of a many-file archive's time).
    // Their outputs carry ChunkOut::batch_item; the merge keeps file order.
    struct BatchItem {
      uint32_t source = 0;
      // The file's ListedFile::path: the listing outlives the tasks (a copy
      // a file was ~320 instructions of the merging thread's planning).
      std::string_view path;
      uint64_t size = 0;
      // The input errors and dumps found before this file was planned: where
      // a dump test made while planning would have put its own.
      size_t errors_at = 0, dumps_at = 0;
      // Set by the worker: the file's first bytes may start a Flight
      // Recorder dump, so the merge tests it as planning did before
      // (TakeDeferredDump).
      bool maybe_dump = false;
    };
    std::vector<BatchItem> batch;
    uint64_t batch_bytes = 0;
    // The task of one batch item (RunBatch): ScanSmallFile makes the item's
    // dump test on the bytes it read and sets `item_tested`, so the file is
    // opened once; else RunBatch makes it with a read of its own.
    BatchItem* item = nullptr;
    bool item_tested = false;
    // Push never waits for the merge (a batch item's own task, which
    // nobody drains while it runs).
    bool unbounded = false;
    // A stream task with fewer tasks than workers: the idle workers' share,
    // threads that scan its pieces while this task's worker decodes
    // (stream.cc).
    unsigned stream_helpers = 0;
    // Results (in order) and completion.
    std::mutex mu;
    std::condition_variable cv;
    std::deque<ChunkOut> outs;
    // A batch's outputs, in file order: RunBatch hands them over at once,
    // with `done`, and the merge reads them where they lie (a deque holds
    // one output a node: a node allocated by the worker and freed by the
    // merging thread for every file, and the output moved in and out).
    std::vector<ChunkOut> batch_outs;
    bool done = false;
    // Compressed bytes read after the last chunk pushed (the end of the
    // file), for progress; written before `done` is set.
    uint64_t input_tail = 0;
  };

  // scan.cc: the tasks of the files ListFiles listed under `path` (and the
  // errors and warnings of what it skipped), appended to `tasks`; `total`
  // grows by their bytes. The batched files' tasks refer to `files`' paths:
  // `files` is to outlive the tasks.
  void PlanListed(const std::string& path, const std::vector<ListedFile>& files,
                  const std::vector<SkippedPath>& skipped, std::vector<std::unique_ptr<Task>>& tasks,
                  uint64_t& total);
  // scan.cc: file `f` (source `src`, `size` bytes) into the last batch
  // task, or a new one when that is full or the last task is no batch.
  void AddToBatch(std::vector<std::unique_ptr<Task>>& tasks, uint32_t src, std::string_view f,
                  uint64_t size) const;
  // plan.cc: the chunk tasks of [begin, end) of a mapped source, appended
  // to `tasks`; false (and the source failed) when the mapping faulted.
  bool PlanChunks(uint32_t src, const std::shared_ptr<Source>& shared, uint64_t begin, uint64_t end,
                  std::vector<std::unique_ptr<Task>>& tasks);
  // A carry_only task for the kCarryLookbackLines lines before a byte
  // range's `begin`, put first in `tasks`; none at the file's start.
  void PlanCarryLookback(uint32_t src, const std::shared_ptr<Source>& shared, uint64_t begin,
                         std::vector<std::unique_ptr<Task>>& tasks);

  // schedule.cc: tasks on worker threads, merged in task order.
  absl::Status RunTasks(std::vector<std::unique_ptr<Task>>& tasks, uint64_t total_bytes);
  void RunTask(Task& t, hs_scratch_t*& scratch, std::vector<Hit>& hits);
  void RunBatch(Task& t, hs_scratch_t*& scratch, std::vector<Hit>& hits);
  // The merge of one task's outputs, in order, with each source ended after
  // its last output; false when the scan was cancelled meanwhile.
  bool MergeTask(Task& t, uint64_t& done_bytes, uint64_t& total_bytes, bool& cancelled,
                 const std::atomic<int>& scratch_fail);
  // flight_recorder.cc: the dump test of a batch item whose first bytes
  // may start a dump, made on the merging thread in file order; what it
  // finds (a dump, an error) goes where planning would have put it. True:
  // the file is a dump (its outputs are dropped, and its bytes leave
  // `total_bytes`, as a dump found while planning never entered them).
  bool TakeDeferredDump(const Task::BatchItem& item, uint64_t& total_bytes);
  size_t deferred_errors_ = 0, deferred_dumps_ = 0;  // put back so far
  // A small plain file (up to 256 KiB) read whole with one read(), not
  // mapped: mmap, madvise, the page faults and munmap were most of the
  // system time per file of a many-file archive. False (nothing done) when
  // the file is not one: OpenSource takes it, and reports what is wrong.
  bool ScanSmallFile(Task& t, SourceState& st, hs_scratch_t*& scratch, std::vector<Hit>& hits);
  // The format of a small plain file's source from its first 4 KiB: from
  // the mapping, or read (a source OpenSource did not map).
  void DetectHead(const Task& t, SourceState& st, const Source* src) const;
  // The three kinds of task: a chunk of a mapped file, a whole mapped file,
  // a stream (compressed file, pipe), pushed chunk by chunk as it is read.
  ChunkOut ScanMappedChunk(SourceState& st, const Source& mapping, uint64_t begin, uint64_t end,
                           hs_scratch_t*& scratch, std::vector<Hit>& hits) const;
  ChunkOut ScanMappedFile(SourceState& st, const std::string& path, const Source& s, hs_scratch_t*& scratch,
                          std::vector<Hit>& hits) const;
  void ScanStream(Task& t, SourceState& st, Source& s, hs_scratch_t*& scratch, std::vector<Hit>& hits);
  // stream.cc: a stream's pieces, scanned on the worker or its helpers.
  // Workers the tasks leave idle become helpers of the compressed files'
  // tasks, shared out in turn (pipes are read as they come, by one thread).
  static void AssignStreamHelpers(std::vector<std::unique_ptr<Task>>& tasks, unsigned nthreads);
  // The input limits a task opens its source with: with two helpers or
  // more, all but one of them decode a splittable .zst file's frames ahead.
  InputLimits StreamLimits(const Task& t) const;
  struct StreamPiece;
  class StreamPipeline;
  ChunkOut ScanPiece(SourceState& st, const StreamPiece& p, hs_scratch_t* scratch, std::vector<Hit>& hits) const;
  // Where buffered stream bytes are cut for a scan (after the last whole
  // line, never inside a run; 0: read more first).
  static size_t StreamCutAt(const SourceState& st, std::string_view buffered, size_t block);
  void Push(Task& t, ChunkOut&& out);
  void Finish(Task& t);
  bool Cancelled() const;
  // A scratch usable again after a fault unwound out of hs_scan.
  void FreshScratch(hs_scratch_t*& scratch) const;
};


}  // namespace faultline

#endif  // FAULTLINE_SCAN_SCAN_IMPL_H_
