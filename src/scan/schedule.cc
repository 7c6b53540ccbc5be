// Scheduling: ScanPaths and ScanRange tasks (a whole file, a chunk of a
// mapped file, a stream) run on worker threads, each with its own Hyperscan
// scratch; the calling thread merges their results in task order, with a
// bounded window of tasks ahead of the merge, and handles cancellation.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "scan/scan_impl.h"
#include "util/strings.h"

namespace faultline {

using internal::ChunkOut;
using internal::CopyOut;
using internal::kSmallFile;
using internal::PhaseA;
using internal::ReleaseFaultedScratch;

void Scanner::Impl::Push(Task& t, ChunkOut&& out) {
  std::unique_lock<std::mutex> lock(t.mu);
  // Bounded: a stream ahead of the merge point waits.
  t.cv.wait(lock, [&] { return t.unbounded || t.outs.size() < 4 || abandon_.load(); });
  if (abandon_.load()) return;
  t.outs.push_back(std::move(out));
  t.cv.notify_all();
}

void Scanner::Impl::Finish(Task& t) {
  std::lock_guard<std::mutex> lock(t.mu);
  t.done = true;
  t.cv.notify_all();
}

bool Scanner::Impl::Cancelled() const {
  return abandon_.load(std::memory_order_relaxed) || (opts.cancel && opts.cancel->load(std::memory_order_relaxed));
}

void Scanner::Impl::FreshScratch(hs_scratch_t*& scratch) const {
  // A fault unwound out of hs_scan: its scratch is left marked in use, and
  // hs_scan and hs_free_scratch both refuse it from then on.
  if (ReleaseFaultedScratch(scratch)) return;
  // Unknown scratch layout: a new one; the old one cannot be freed (a
  // bounded leak, once per fault, only with an unknown Hyperscan).
  hs_scratch_t* s = nullptr;
  if (hs_alloc_scratch(rs->database(), &s) == HS_SUCCESS) scratch = s;
}

void Scanner::Impl::RunBatch(Task& t, hs_scratch_t*& scratch, std::vector<Hit>& hits) {
  std::vector<ChunkOut> outs;
  for (uint32_t k = 0; k < t.batch.size() && !Cancelled(); ++k) {
    AttributePath(*states[t.batch[k].source], t.batch[k].path);
    Task one;
    one.source = t.batch[k].source;
    one.path = t.batch[k].path;
    one.detect_head = true;
    one.unbounded = true;
    one.item = &t.batch[k];
    RunTask(one, scratch, hits);
    // The dump test planning used to make (a log is scanned, as it was
    // then); a file that may be a dump is tested again by the merge.
    // ScanSmallFile made it on the bytes it read, but for a file it left
    // to OpenSource (gone, grown, no longer regular).
    if (!one.item_tested) t.batch[k].maybe_dump = !HeadRulesOutDump(one.path);
    for (ChunkOut& out : one.outs) {
      out.batch_item = k;
      outs.push_back(std::move(out));
    }
  }
  std::lock_guard<std::mutex> lock(t.mu);
  if (!abandon_.load()) t.batch_outs = std::move(outs);
  t.done = true;
  t.cv.notify_all();
}

void Scanner::Impl::RunTask(Task& t, hs_scratch_t*& scratch, std::vector<Hit>& hits) {
  if (!t.batch.empty()) {
    RunBatch(t, scratch, hits);
    return;
  }
  SourceState& st = *states[t.source];
  if (OutOfTime()) {
    // Not started in time: said once per source (error_cause), with the
    // offset the source was read up to.
    ChunkOut out;
    out.error = OutOfTimeMessage(t.shared ? t.shared->name() : t.path, t.shared ? t.begin : 0);
    out.error_cause = "time budget";
    t.shared.reset();
    Push(t, std::move(out));
    Finish(t);
    return;
  }
  if (t.shared) {
    // This task's reference to the mapping moves here, so the worker that
    // scans a file's last outstanding chunk unmaps it (the matched lines are
    // copied out by then), in parallel with the merge, rather than the
    // merging thread, where munmap of a large file was serial time. The
    // merging thread reads t.shared only after Finish below.
    std::shared_ptr<Source> mapping = std::move(t.shared);
    ChunkOut out = ScanMappedChunk(st, *mapping, t.begin, t.end, scratch, hits);
    // Matched lines are copied out: the chunk's pages may go (RSS stays
    // flat however large the file).
    mapping->Release(t.begin, t.end);
    Push(t, std::move(out));
    Finish(t);
    return;
  }
  if (t.detect_head && ScanSmallFile(t, st, scratch, hits)) {
    Finish(t);
    return;
  }
  auto src = OpenSource(t.path, StreamLimits(t));
  if (t.detect_head) DetectHead(t, st, src.ok() ? src->get() : nullptr);
  if (!src.ok()) {
    ChunkOut out;
    out.error = std::string(src.status().message());
    Push(t, std::move(out));
  } else if ((*src)->kind() == SourceKind::kMapped) {
    Push(t, ScanMappedFile(st, t.path, **src, scratch, hits));
  } else {
    ScanStream(t, st, **src, scratch, hits);
  }
  Finish(t);
}

bool Scanner::Impl::ScanSmallFile(Task& t, SourceState& st, hs_scratch_t*& scratch, std::vector<Hit>& hits) {
  // O_NONBLOCK: a FIFO put in the file's place since the stat must not
  // block the open (it is then not regular, and goes the general way).
  int fd = ::open(t.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return false;  // OpenSource says why
  struct stat sb {};
  if (::fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0 ||
      static_cast<uint64_t>(sb.st_size) > kSmallFile) {
    ::close(fd);
    return false;
  }
  const size_t size = static_cast<size_t>(sb.st_size);
  thread_local std::string buf;
  buf.resize(size + 1);  // one byte more: a file that grew goes the general way
  size_t have = 0;
  bool ok = true;
  while (have < buf.size()) {
    ssize_t n = ::read(fd, buf.data() + have, buf.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ok = false;
    if (n <= 0) break;
    have += static_cast<size_t>(n);
  }
  ::close(fd);
  if (!ok || have == 0 || have > size) return false;
  const std::string_view data(buf.data(), have);
  if (t.item != nullptr) {
    t.item->maybe_dump = !HeadRulesOutDump(data);
    t.item_tested = true;
  }
  st.framing.Detect(data.substr(0, 4096));
  ChunkOut out;
  if (const SourceFraming::Derivation how = st.framing.HowDerived(data); how != SourceFraming::Derivation::kAsIs) {
    ProcessBuffer(st, scratch, hits, data.data(), data.size(), 0, out, how);
  } else {
    out.lazy_context = opts.lazy_context;  // `buf` outlives phase B
    PhaseA(*rs, scratch, data.data(), data.size(), 0, out, hits);
    PhaseB(st, out, true);
  }
  Push(t, std::move(out));
  return true;
}

void Scanner::Impl::DetectHead(const Task& t, SourceState& st, const Source* src) const {
  constexpr size_t kHead = 4096;
  if (src != nullptr && src->kind() == SourceKind::kMapped) {
    std::string_view all = src->mapped();
    std::string head;
    // A fault here is met again, and reported, by the scan.
    if (GuardedRead(all.data(), all.size(), [&] { CopyOut(head, all.data(), std::min(all.size(), kHead)); }) &&
        !head.empty()) {
      st.framing.Detect(head);
    }
    return;
  }
  int fd = ::open(t.path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return;
  char head[kHead];
  ssize_t n = ::read(fd, head, sizeof head);
  ::close(fd);
  if (n > 0) st.framing.Detect(std::string_view(head, static_cast<size_t>(n)));
}

ChunkOut Scanner::Impl::ScanMappedChunk(SourceState& st, const Source& mapping, uint64_t begin, uint64_t end,
                                        hs_scratch_t*& scratch, std::vector<Hit>& hits) const {
  ChunkOut out;
  std::string_view all = mapping.mapped();
  const char* base = all.data() + begin;
  size_t len = end - begin;
  auto lost = [&] {
    out = ChunkOut();
    out.error = StrCat(mapping.name(), ": the file shrank or vanished while it was being "
                                      "read (truncated under the mapping); evidence after offset ",
                       begin, " is lost");
    out.error_code = -3;
    out.error_cause = "truncated";
  };
  using Derivation = SourceFraming::Derivation;
  Derivation how = st.framing.format().json ? Derivation::kJson : Derivation::kAsIs;
  NewlineIndex newlines;  // counted by the escape test, for PhaseA
  if (how == Derivation::kAsIs &&
      !GuardedRead(all.data(), all.size(), [&] { how = st.framing.HowDerived(std::string_view(base, len), &newlines); })) {
    how = Derivation::kAsIs;  // the scan below meets the same fault and reports it
  }
  if (how != Derivation::kAsIs) {
    // JSON lines match on their messages (escaped quotes, \uXXXX), as a
    // whole-file task does, not on the raw records.
    std::string copy;
    if (GuardedRead(all.data(), all.size(), [&] { CopyOut(copy, base, len); })) {
      ProcessBuffer(st, scratch, hits, copy.data(), copy.size(), begin, out, how);
    } else {
      lost();
    }
    return out;
  }
  out.lazy_context = opts.lazy_context;
  out.context_guard = all;
  if (GuardedRead(all.data(), all.size(), [&] {
        PhaseA(*rs, scratch, base, len, begin, out, hits, begin, true, all.size() - end, &newlines);
      })) {
    PhaseB(st, out, true);
    if (out.faulted) lost();
  } else {
    FreshScratch(scratch);
    lost();
  }
  return out;
}

ChunkOut Scanner::Impl::ScanMappedFile(SourceState& st, const std::string& path, const Source& s,
                                       hs_scratch_t*& scratch, std::vector<Hit>& hits) const {
  std::string_view all = s.mapped();
  ChunkOut out;
  // JSON messages and joined CRI records are scanned from a copy
  // (ProcessBuffer); only a plain file is scanned in place.
  using Derivation = SourceFraming::Derivation;
  Derivation how = st.framing.format().json ? Derivation::kJson : Derivation::kAsIs;
  NewlineIndex newlines;  // counted by the escape test, for PhaseA
  bool ok = GuardedRead(all.data(), all.size(), [&] {
    if (how == Derivation::kAsIs) how = st.framing.HowDerived(all, &newlines);
    out.lazy_context = how == Derivation::kAsIs && opts.lazy_context;
    out.context_guard = all;
    if (how == Derivation::kAsIs) PhaseA(*rs, scratch, all.data(), all.size(), 0, out, hits, 0, true, 0, &newlines);
  });
  const bool derived = how != Derivation::kAsIs;
  // A fault in phase A, or in phase B's read of a line's context.
  auto truncated = [&] {
    out = ChunkOut();
    out.error = StrCat(path, ": the file shrank or vanished while it was being read "
                             "(truncated under the mapping)");
  };
  if (!ok) {
    FreshScratch(scratch);
    truncated();
  } else if (derived) {
    std::string copy;
    bool ok2 = GuardedRead(all.data(), all.size(), [&] { CopyOut(copy, all.data(), all.size()); });
    if (ok2) {
      ProcessBuffer(st, scratch, hits, copy.data(), copy.size(), 0, out, how);
    } else {
      out.error = StrCat(path, ": the file shrank while it was being read");
    }
  } else {
    PhaseB(st, out, true);
    if (out.faulted) truncated();
  }
  return out;
}

bool Scanner::Impl::MergeTask(Task& t, uint64_t& done_bytes, uint64_t& total_bytes, bool& cancelled,
                              const std::atomic<int>& scratch_fail) {
  // A batch's items in order: each is first tested for a dump (then its
  // outputs are dropped and its source not ended, as a dump found while
  // planning had no task), and ended after its last output.
  size_t started = 0, ended = 0;
  std::vector<bool> dump(t.batch.size());
  auto start_items = [&](size_t upto) {
    for (; started < upto; ++started) {
      SummarizePath(*states[t.batch[started].source]);
      dump[started] = TakeDeferredDump(t.batch[started], total_bytes);
    }
  };
  auto end_items = [&](size_t upto) {
    start_items(upto);
    for (; ended < upto; ++ended) {
      if (!dump[ended]) EndSource(*states[t.batch[ended].source]);
    }
  };
  auto merge_out = [&](ChunkOut& out) {
    if (t.carry_only) {  // the lines before a range: carried state only
      PrimeCarry(*states[t.source], out);
      return;
    }
    if (!t.batch.empty()) {
      end_items(out.batch_item);
      start_items(out.batch_item + 1);
      if (dump[out.batch_item]) return;
    }
    done_bytes += out.input_bytes.value_or(out.edge.bytes);
    Merge(*states[t.batch.empty() ? t.source : t.batch[out.batch_item].source], out);
    if (opts.on_progress && !opts.on_progress(done_bytes, total_bytes)) cancelled = true;
  };
  while (true) {
    std::unique_lock<std::mutex> lock(t.mu);
    t.cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return !t.outs.empty() || t.done; });
    if (scratch_fail.load() && t.outs.empty() && !t.done) return false;
    if (!t.batch.empty() && t.done) {
      // No worker touches a finished batch's outputs any more: they are
      // merged where they lie (Task::batch_outs).
      lock.unlock();
      for (ChunkOut& out : t.batch_outs) merge_out(out);
      t.batch_outs.clear();
      break;
    }
    if (t.outs.empty()) {
      if (t.done) break;
      if (opts.cancel && opts.cancel->load()) cancelled = true;
      continue;
    }
    ChunkOut out = std::move(t.outs.front());
    t.outs.pop_front();
    t.cv.notify_all();
    lock.unlock();
    merge_out(out);
  }
  if (t.input_tail > 0 && !cancelled) {
    done_bytes += t.input_tail;
    if (opts.on_progress && !opts.on_progress(done_bytes, total_bytes)) cancelled = true;
  }
  if (!t.batch.empty()) {
    end_items(t.batch.size());
  } else if (t.last_chunk) {
    EndSource(*states[t.source]);
  }
  return true;
}

absl::Status Scanner::Impl::RunTasks(std::vector<std::unique_ptr<Task>>& tasks,
                                     uint64_t total_bytes) {
  const unsigned nthreads = internal::Workers(opts);
  std::atomic<size_t> next{0};
  std::atomic<size_t> merged{0};
  std::mutex window_mu;
  std::condition_variable window_cv;
  const size_t window = 2 * nthreads + 2;
  AssignStreamHelpers(tasks, nthreads);
  std::atomic<bool> stop{false};
  // `merged` and `stop` change under window_mu: a worker that has just found
  // the window closed would otherwise miss the notify and sleep through the
  // last merge (the scan then hangs waiting for a task nobody takes) or
  // through `stop` (the join hangs).
  auto wake = [&](auto&& update) {
    {
      std::lock_guard<std::mutex> lock(window_mu);
      update();
    }
    window_cv.notify_all();
  };
  std::vector<std::thread> workers;
  std::atomic<int> scratch_fail{0};
  for (unsigned w = 0; w < nthreads; ++w) {
    workers.emplace_back([&] {
      auto sp = rs->AllocScratch();
      if (!sp.ok()) {
        scratch_fail = 1;
        return;
      }
      hs_scratch_t* scratch = sp->release();
      std::vector<Hit> hits;
      while (!stop.load()) {
        size_t i;
        {
          std::unique_lock<std::mutex> lock(window_mu);
          window_cv.wait(lock, [&] {
            return stop.load() || next.load() >= tasks.size() || next.load() < merged.load() + window;
          });
          if (stop.load() || next.load() >= tasks.size()) break;
          i = next++;
        }
        RunTask(*tasks[i], scratch, hits);
      }
      hs_free_scratch(scratch);
    });
  }
  uint64_t done_bytes = 0;
  bool cancelled = false;
  for (size_t i = 0; i < tasks.size(); ++i) {
    Task& t = *tasks[i];
    if (!MergeTask(t, done_bytes, total_bytes, cancelled, scratch_fail)) {
      wake([&] { stop = true; });
      for (auto& th : workers) th.join();
      SummarizePaths();
      return absl::ResourceExhaustedError("cannot allocate Hyperscan scratch");
    }
    t.shared.reset();  // a task that never ran (cancelled) still holds its mapping
    wake([&] { merged = i + 1; });
    if (cancelled || (opts.cancel && opts.cancel->load())) {
      cancelled = true;
      wake([&] { stop = true; });
      // Drain: let running tasks finish so no worker blocks on a full queue.
      for (size_t k = i + 1; k < tasks.size(); ++k) {
        std::lock_guard<std::mutex> lock(tasks[k]->mu);
        tasks[k]->outs.clear();
        tasks[k]->batch_outs.clear();
        tasks[k]->cv.notify_all();
      }
      break;
    }
  }
  if (cancelled) {
    // Release workers blocked pushing into a full queue; from now on they
    // drop their results (abandon_) instead of waiting.
    abandon_ = true;
    for (auto& tp : tasks) {
      std::lock_guard<std::mutex> lock(tp->mu);
      tp->outs.clear();
      tp->batch_outs.clear();
      tp->cv.notify_all();
    }
  }
  wake([&] { stop = true; });
  for (auto& th : workers) th.join();
  abandon_ = false;
  SummarizePaths();
  if (cancelled) return absl::CancelledError("scan cancelled");
  return absl::OkStatus();
}

}  // namespace faultline
