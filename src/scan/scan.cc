// The Scanner API: sources are planned into tasks here (whole files, chunks
// of large mapped files, byte ranges, push streams) and handed to the
// scheduler; Finish adds what needs every source (FinalizeTimes). The stages
// are described in scan_impl.h.
#include "scan/scan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "evidence/finalize.h"
#include "scan/scan_impl.h"
#include "util/status_macros.h"
#include "util/strings.h"

namespace faultline {

using internal::ChunkOut;
using internal::CopyOut;
using internal::CountNewlines;
using internal::kMaxStreamLine;

Scanner::Scanner(std::shared_ptr<const Ruleset> rules, ScanOptions opts)
    : impl_(std::make_unique<Impl>()) {
  impl_->rs = std::move(rules);
  if (impl_->rs) impl_->plans_ = internal::PlanSignals(*impl_->rs);
  impl_->opts = std::move(opts);
  impl_->tctx.tz_offset_s = impl_->opts.tz_offset_s;
  InputLimits& limits = impl_->opts.limits;
  if (limits.cancel == nullptr) limits.cancel = impl_->opts.cancel;
  const double budget = impl_->opts.time_budget_s;
  if (budget > 0 && std::isfinite(budget) && budget < 1e9) {
    limits.deadline = std::min(limits.deadline,
                               impl_->t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                               std::chrono::duration<double>(budget)));
  }
}

Scanner::~Scanner() = default;

// Small plain files go into batch tasks (Task::batch) of at most
// ScanOptions::batch_files files and this many bytes: a batch is about a
// millisecond of a worker's time, so two workers still share a small archive.
constexpr uint64_t kBatchBytes = 1 << 20;

void Scanner::Impl::AddToBatch(std::vector<std::unique_ptr<Task>>& tasks, uint32_t src, std::string_view f,
                               uint64_t size) const {
  if (tasks.empty() || tasks.back()->batch.empty() || tasks.back()->batch.size() >= opts.batch_files ||
      tasks.back()->batch_bytes + size > kBatchBytes) {
    tasks.push_back(std::make_unique<Task>());
  }
  Task& t = *tasks.back();
  t.batch.push_back({src, f, size, result.errors.size(), result.flight_recorder.size()});
  t.batch_bytes += size;
}

absl::Status Scanner::ScanPaths(const std::vector<std::string>& paths) {
  Impl& m = *impl_;
  std::vector<std::unique_ptr<Impl::Task>> tasks;
  uint64_t total = 0;
  // Kept until the tasks are run: batch items name their files' paths here.
  std::vector<std::vector<ListedFile>> listings;
  listings.reserve(paths.size());
  for (const std::string& path : paths) {
    std::vector<SkippedPath> skipped;
    auto files = ListFiles(path, &skipped);
    if (!files.ok()) {
      uint32_t src = m.NewSource(path, 0, PathBelowRoot(path, path));
      m.Fail(src, std::string(files.status().message()), -3);
      continue;
    }
    listings.push_back(std::move(*files));
    m.PlanListed(path, listings.back(), skipped, tasks, total);
  }
  return m.RunTasks(tasks, total);
}

absl::Status Scanner::ScanListed(const std::string& root, const std::vector<ListedFile>& files,
                                 const std::vector<SkippedPath>& skipped) {
  Impl& m = *impl_;
  std::vector<std::unique_ptr<Impl::Task>> tasks;
  uint64_t total = 0;
  m.PlanListed(root, files, skipped, tasks, total);
  return m.RunTasks(tasks, total);
}

void Scanner::Impl::PlanListed(const std::string& path, const std::vector<ListedFile>& files,
                               const std::vector<SkippedPath>& skipped, std::vector<std::unique_ptr<Task>>& tasks,
                               uint64_t& total) {
  Impl& m = *this;
  // Entries a directory walk could not read are input errors; special
  // files (devices, FIFOs, sockets) and symlink loops are passed over with
  // a warning; second names of one file (hard links, symlinks) silently.
  for (const SkippedPath& sk : skipped) {
    absl::StatusCode c = sk.reason.code();
    if (c == absl::StatusCode::kAlreadyExists) continue;
    if (c == absl::StatusCode::kFailedPrecondition) {
      m.result.warnings.push_back({sk.path, std::string(sk.reason.message()), 0});
      continue;
    }
    m.result.errors.push_back({sk.path, std::string(sk.reason.message()), -3});
  }
  // Room for the files' sources at once, not a move of every summary and
  // state at each doubling (growing, though, as a doubling would, when many
  // paths are planned one after another).
  auto room = [&](auto& v) {
    if (v.capacity() - v.size() < files.size()) v.reserve(std::max(v.size() + files.size(), 2 * v.capacity()));
  };
  room(m.result.sources);
  room(m.states);
  for (const ListedFile& lf : files) {
    // What the walk saw (no second stat() by path): a file that changed
    // or went since is met by the open, which says so.
    const std::string& f = lf.path;
    const bool is_reg = lf.regular;
    bool compressed = f.ends_with(".gz") || f.ends_with(".zst");
    const uint64_t cap = m.opts.limits.max_source_bytes;
    const uint64_t size = lf.size;
    const bool over_cap = cap > 0 && size > cap;
    const bool batched = is_reg && !compressed && !over_cap && m.opts.batch_files > 1 &&
                         size <= internal::kSmallFile && size <= m.opts.chunk_bytes;
    uint32_t src = m.NewSource(f, lf.mtime, PathBelowRoot(path, f), batched);
    if (batched) {
      // The worker looks for a Flight Recorder dump (Impl::TakeDeferredDump).
      total += size;
      m.AddToBatch(tasks, src, f, size);
      continue;
    }
    if (is_reg && m.TakeFlightRecorderDump(src, f)) continue;
    if (is_reg && !compressed &&
        (size > m.opts.chunk_bytes || over_cap ||
         (size > internal::kSplitFile && internal::Workers(m.opts) > 1))) {
      auto opened = OpenSource(f, m.opts.limits);
      if (!opened.ok()) {
        m.Fail(src, std::string(opened.status().message()), -3);
        continue;
      }
      std::shared_ptr<Source> shared(std::move(*opened));
      if (shared->kind() != SourceKind::kMapped) {
        auto t = std::make_unique<Impl::Task>();
        t->source = src;
        t->path = f;
        tasks.push_back(std::move(t));
        continue;
      }
      std::string_view all = shared->mapped();
      total += all.size();
      std::string head;
      bool ok = GuardedRead(all.data(), all.size(), [&] {
        CopyOut(head, all.data(), std::min<size_t>(all.size(), 64 << 10));
      });
      if (!ok) {
        m.Fail(src, StrCat(f, ": the file shrank while it was being read"), -3);
        continue;
      }
      m.states[src]->framing.Detect(head);
      uint64_t end = all.size();
      if (over_cap) {
        // Whole lines up to the cap; the rest is reported, not read.
        end = cap;
        ok = GuardedRead(all.data(), all.size(), [&] {
          const void* nl = memrchr(all.data(), '\n', cap);
          if (nl) end = static_cast<uint64_t>(static_cast<const char*>(nl) - all.data()) + 1;
        });
        if (!ok) {
          m.Fail(src, StrCat(f, ": the file shrank while it was being read"), -3);
          continue;
        }
        m.Fail(src, m.OverLimitMessage(f, end), -3);
      }
      // JSON lines are chunked too: each chunk extracts its own messages.
      const size_t before = tasks.size();
      if (m.PlanChunks(src, shared, 0, end, tasks) && tasks.size() == before) {
        m.EndSource(*m.states[src]);
      }
    } else {
      // A compressed file counts by its size on disk: progress counts the
      // compressed bytes read (its decompressed size is unknown up front).
      if (is_reg) total += size;
      auto t = std::make_unique<Impl::Task>();
      t->source = src;
      t->path = f;
      // The format comes from the head, read on the worker.
      t->detect_head = is_reg && !compressed;
      tasks.push_back(std::move(t));
    }
  }
}

absl::Status Scanner::ScanRange(const std::string& path, uint64_t begin, uint64_t end,
                                uint64_t first_line) {
  Impl& m = *impl_;
  struct stat stt {};
  int64_t mtime = ::stat(path.c_str(), &stt) == 0 ? stt.st_mtime : 0;
  uint32_t src = m.NewSource(path, mtime, PathBelowRoot(path, path));
  auto opened = OpenSource(path, m.opts.limits);
  if (!opened.ok()) {
    m.Fail(src, std::string(opened.status().message()), -3);
    return absl::OkStatus();
  }
  std::shared_ptr<Source> shared(std::move(*opened));
  if (shared->kind() != SourceKind::kMapped) {
    m.Fail(src, StrCat(path, ": byte ranges need a regular, uncompressed file"), -1);
    return absl::OkStatus();
  }
  std::string_view all = shared->mapped();
  end = std::min<uint64_t>(end, all.size());
  begin = std::min(begin, end);
  uint64_t lines_before = 0;
  std::string head;
  bool ok = GuardedRead(all.data(), all.size(), [&] {
    if (begin > 0 && all[begin - 1] != '\n') {
      const void* nl = std::memchr(all.data() + begin, '\n', all.size() - begin);
      begin = nl ? static_cast<uint64_t>(static_cast<const char*>(nl) - all.data()) + 1 : all.size();
    }
    if (end > 0 && end < all.size() && all[end - 1] != '\n') {
      const void* nl = std::memchr(all.data() + end, '\n', all.size() - end);
      end = nl ? static_cast<uint64_t>(static_cast<const char*>(nl) - all.data()) + 1 : all.size();
    }
    if (end < begin) end = begin;
    if (first_line == 0) lines_before = CountNewlines(all.data(), begin);
    CopyOut(head, all.data(), std::min<size_t>(all.size(), 64 << 10));
  });
  if (!ok) {
    m.Fail(src, StrCat(path, ": the file shrank while it was being read"), -3);
    return absl::OkStatus();
  }
  if (first_line > 0) lines_before = first_line - 1;
  Impl::SourceState& st = *m.states[src];
  st.framing.Detect(head);
  if (st.framing.format().joins()) {
    // Both ends move past a run of CRI partial or wrapped lines, as every
    // range of the same file does: the run belongs to the range holding its
    // first line.
    uint64_t old_begin = begin;
    ok = GuardedRead(all.data(), all.size(), [&] {
      begin = st.framing.BoundaryAfter(all, begin);
      if (end < all.size()) end = st.framing.BoundaryAfter(all, end);
      if (end < begin) end = begin;
      lines_before += CountNewlines(all.data() + old_begin, begin - old_begin);
    });
    if (!ok) {
      m.Fail(src, StrCat(path, ": the file shrank while it was being read"), -3);
      return absl::OkStatus();
    }
  }
  st.lines = lines_before;
  // Line numbers continue from the range's first line.
  st.last_ended_newline = true;
  m.result.sources[src].bytes = 0;
  m.result.sources[src].range_begin = begin;
  m.result.sources[src].range_end = end;
  std::vector<std::unique_ptr<Impl::Task>> tasks;
  if (!m.PlanChunks(src, shared, begin, end, tasks)) return absl::OkStatus();
  if (tasks.empty()) {
    m.EndSource(st);
    return absl::OkStatus();
  }
  m.PlanCarryLookback(src, shared, begin, tasks);
  FL_RETURN_IF_ERROR(m.RunTasks(tasks, end - begin));
  // Lines of this range only.
  m.result.sources[src].lines -= std::min(m.result.sources[src].lines, lines_before);
  return absl::OkStatus();
}

uint32_t Scanner::OpenStream(const std::string& name) {
  Impl& m = *impl_;
  auto ps = std::make_unique<Impl::PushStream>();
  // A stream's name reads like a file given directly: its folder is the root.
  ps->source = m.NewSource(name, 0, PathBelowRoot(name, name));
  m.streams.push_back(std::move(ps));
  return static_cast<uint32_t>(m.streams.size() - 1);
}

absl::Status Scanner::Feed(uint32_t stream, std::string_view data) {
  Impl& m = *impl_;
  if (stream >= m.streams.size() || m.streams[stream]->closed) {
    return absl::InvalidArgumentError(StrCat("stream ", stream, " is not open"));
  }
  Impl::PushStream& ps = *m.streams[stream];
  ps.buf.append(data);
  // Scan whole lines once enough bytes are buffered; the rest waits for the
  // next chunk, so a line split across feeds matches as one.
  constexpr size_t kFeedScan = 1 << 20;
  if (ps.buf.size() < kFeedScan) return absl::OkStatus();
  return FlushStream(stream);
}

absl::StatusOr<Scanner::Impl::PushStream*> Scanner::Impl::OpenPushStream(uint32_t stream) {
  if (stream >= streams.size() || streams[stream]->closed) {
    return absl::InvalidArgumentError(StrCat("stream ", stream, " is not open"));
  }
  if (!main_scratch) {
    FL_ASSIGN_OR_RETURN(main_scratch, rs->AllocScratch());
  }
  return streams[stream].get();
}

void Scanner::Impl::ScanPushed(PushStream& ps, size_t cut) {
  SourceState& st = *states[ps.source];
  ChunkOut out;
  ProcessBuffer(st, main_scratch.get(), main_hits, ps.buf.data(), cut, ps.offset, out);
  Merge(st, out);
  ps.offset += cut;
  ps.buf.erase(0, cut);
}

absl::Status Scanner::FlushStream(uint32_t stream) {
  Impl& m = *impl_;
  FL_ASSIGN_OR_RETURN(Impl::PushStream* ps, m.OpenPushStream(stream));
  Impl::SourceState& st = *m.states[ps->source];
  size_t nl = ps->buf.rfind('\n');
  size_t cut = nl == std::string::npos ? 0 : nl + 1;
  if (ps->offset == 0 && cut > 0) {
    st.framing.Detect(std::string_view(ps->buf).substr(0, std::min<size_t>(cut, 64 << 10)));
  }
  // A run of CRI partial or wrapped lines waits for the line that ends it
  // (the stream's close scans whatever is left).
  if (cut > 0) cut = st.framing.StreamCut(ps->buf, cut);
  if (cut == 0 && ps->buf.size() >= kMaxStreamLine) cut = ps->buf.size();
  if (cut > 0) m.ScanPushed(*ps, cut);
  return absl::OkStatus();
}

absl::Status Scanner::CloseStream(uint32_t stream) {
  Impl& m = *impl_;
  FL_ASSIGN_OR_RETURN(Impl::PushStream* ps, m.OpenPushStream(stream));
  Impl::SourceState& st = *m.states[ps->source];
  if (!ps->buf.empty()) {
    if (ps->offset == 0) st.framing.Detect(std::string_view(ps->buf).substr(0, 64 << 10));
    m.ScanPushed(*ps, ps->buf.size());
  }
  m.EndSource(st);
  ps->closed = true;
  return absl::OkStatus();
}

const ScanResult& Scanner::partial() const { return impl_->result; }

namespace {

// Global order: source, then offset; equal keys keep their order. The first
// `sorted` records are usually in order already (each source's kept
// evidence, sources in turn) and only the ranks' last progress lines after
// them are not: those are sorted and merged in, one pass instead of a merge
// sort moving every record some twenty times.
void SortEvidence(std::vector<Evidence>& evs, size_t sorted) {
  auto by = [](const Evidence& a, const Evidence& b) {
    return a.source != b.source ? a.source < b.source : a.offset < b.offset;
  };
  const auto mid = evs.begin() + static_cast<std::ptrdiff_t>(sorted);
  if (!std::is_sorted(evs.begin(), mid, by)) {
    std::stable_sort(evs.begin(), evs.end(), by);
    return;
  }
  std::stable_sort(mid, evs.end(), by);
  std::inplace_merge(evs.begin(), mid, evs.end(), by);
}

}  // namespace

ScanResult Scanner::Snapshot() {
  Impl& m = *impl_;
  for (size_t i = 0; i < m.streams.size(); ++i) {
    if (!m.streams[i]->closed) (void)FlushStream(static_cast<uint32_t>(i));
  }
  ScanResult r = m.result;
  // A source still open keeps its evidence in its keeper until it ends; a
  // closed one's keeper is empty.
  for (const auto& st : m.states) st->keeper.CopyInto(r.evidence);
  std::map<int64_t, Evidence> last = m.last_progress_;
  m.ResolveLocalKeys(r, last);
  const size_t kept = r.evidence.size();
  for (const auto& [rank, ev] : last) r.evidence.push_back(ev);
  SortEvidence(r.evidence, kept);
  FinalizeTimes(r);
  for (const SourceSummary& s : r.sources) {
    r.bytes += s.bytes;
    r.lines += s.lines;
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - m.t0).count();
  return r;
}

ScanResult Scanner::Finish() {
  Impl& m = *impl_;
  for (size_t i = 0; i < m.streams.size(); ++i) {
    if (!m.streams[i]->closed) (void)CloseStream(static_cast<uint32_t>(i));
  }
  ScanResult& r = m.result;
  // Last progress line of every rank, as evidence.
  m.ResolveLocalKeys(r, m.last_progress_);
  const size_t kept = r.evidence.size();
  for (auto& [rank, ev] : m.last_progress_) r.evidence.push_back(std::move(ev));
  m.last_progress_.clear();
  SortEvidence(r.evidence, kept);
  FinalizeTimes(r);
  for (const SourceSummary& s : r.sources) {
    r.bytes += s.bytes;
    r.lines += s.lines;
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - m.t0).count();
  ScanResult out = std::move(r);
  m.result = ScanResult();
  m.device_keys_.clear();
  m.pid_keys_.clear();
  // Indices and pointers into the result just handed over.
  m.nic_keys_.clear();
  m.host_counts_.clear();
  m.admitted_rank_ = -1;
  m.admitted_ranks_.reset();
  m.hits_at_.clear();
  m.stats_at_.clear();
  m.admitted_host_.clear();
  return out;
}

std::optional<std::string> PointLineText(const SourceSummary& source, uint64_t offset) {
  const bool whole = source.range_begin == 0 && source.range_end == 0;
  // As much as phase B confirms of a line: the escapes go before the text
  // is cut to kMaxEvidenceText.
  std::optional<std::string> line = ReadLineAt(source.name, offset, internal::kConfirmWindow, whole ? source.bytes : 0);
  if (line && !source.json_lines && HasEscapes(*line)) *line = WithoutEscapes(*line);
  return line;
}

}  // namespace faultline

