// Stream tasks (compressed files, pipes): the worker reads blocks
// (kStreamBuffer), cuts them after the last whole line (a run of CRI partial
// or wrapped lines waits for the line ending it) and scans piece by piece.
// With helpers -- workers the tasks leave idle -- the worker decodes and
// cuts: the pieces go into a ChunkRing (input/chunk_ring.h) that the helpers
// scan, the worker scanning the oldest itself whenever more than one piece
// a helper waits, and the results are pushed in stream order by whichever
// thread completes the run whose turn it is (InOrder), no thread waiting
// for another's piece. A piece is scanned the same way whichever
// thread takes it (its bytes, absolute offset and framing are fixed when it
// is cut), so evidence, offsets, line numbers and the error after the
// bytes before it are those of one thread.
#include <pthread.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "absl/strings/match.h"
#include "input/chunk_ring.h"
#include "scan/scan_impl.h"
#include "util/strings.h"

namespace faultline {

using internal::ChunkOut;
using internal::kMaxStreamLine;
using internal::kStreamBuffer;

// A cut piece of a stream, with what its result reports besides its matches.
struct Scanner::Impl::StreamPiece {
  std::string bytes;  // [0, len) are the piece
  size_t len = 0;
  uint64_t offset = 0;  // of bytes[0] in the decompressed stream
  std::optional<uint64_t> input_bytes;
  std::string error, error_cause;  // the stream stops here
};

ChunkOut Scanner::Impl::ScanPiece(SourceState& st, const StreamPiece& p, hs_scratch_t* scratch,
                                  std::vector<Hit>& hits) const {
  ChunkOut out;
  if (p.len > 0) ProcessBuffer(st, scratch, hits, p.bytes.data(), p.len, p.offset, out);
  out.input_bytes = p.input_bytes;
  if (!p.error.empty()) {
    out.error = p.error;
    out.error_cause = p.error_cause;
  }
  return out;
}

// The helpers of one stream task, the ring between them and the reader, and
// the results on their way to the merge in stream order.
class Scanner::Impl::StreamPipeline {
 public:
  // Up to one piece more than the helpers wait (past that the reader scans
  // the oldest itself): a helper done with a piece finds the next one ready
  // while the reader scans, and memory stays at a few pieces.
  StreamPipeline(Impl& m, Task& t, SourceState& st, unsigned helpers)
      : m_(m), t_(t), st_(st), ring_(helpers + 1) {
    for (unsigned i = 0; i < helpers; ++i) threads_.emplace_back([this] { Help(); });
  }
  ~StreamPipeline() {
    // An early return: nobody waits for pieces never scanned.
    ring_.Abort();
    order_.Abort();
    for (auto& th : threads_) th.join();
  }
  StreamPipeline(const StreamPipeline&) = delete;
  StreamPipeline& operator=(const StreamPipeline&) = delete;

  std::string Buffer(size_t size) { return ring_.Buffer(size); }

  // The reader's hand-off: into the ring, and when too many pieces wait,
  // the reader scans the oldest instead of decoding further ahead.
  void Put(StreamPiece p, hs_scratch_t* scratch, std::vector<Hit>& hits) {
    if (auto c = ring_.PutTakingOldest(std::move(p))) ScanAndPass(*c, scratch, hits);
  }

  // After the last piece: the reader scans what is left with the helpers
  // and returns once every result is pushed (on cancellation, at once).
  void Finish(hs_scratch_t* scratch, std::vector<Hit>& hits) {
    if (m_.Cancelled()) {
      ring_.Abort();
      order_.Abort();
    }
    ring_.Close();
    while (auto c = ring_.Take()) ScanAndPass(*c, scratch, hits);
    if (!ring_.aborted()) order_.AwaitAll(ring_.put());
  }

 private:
  using Ring = internal::ChunkRing<StreamPiece>;

  void Help() {
    pthread_setname_np(pthread_self(), "fl-stream-scan");
    auto sp = m_.rs->AllocScratch();
    if (!sp.ok()) return;  // the reader and the other helpers scan it all
    hs_scratch_t* scratch = sp->release();
    std::vector<Hit> hits;
    while (auto c = ring_.Take()) ScanAndPass(*c, scratch, hits);
    hs_free_scratch(scratch);
  }

  void ScanAndPass(Ring::Taken& c, hs_scratch_t* scratch, std::vector<Hit>& hits) {
    ChunkOut out = m_.ScanPiece(st_, c.chunk, scratch, hits);
    ring_.Recycle(std::move(c.chunk.bytes));
    order_.Done(c.seq, std::move(out), [this](ChunkOut&& o) { m_.Push(t_, std::move(o)); });
  }

  Impl& m_;
  Task& t_;
  SourceState& st_;
  Ring ring_;
  internal::InOrder<ChunkOut> order_;
  std::vector<std::thread> threads_;
};

void Scanner::Impl::ScanStream(Task& t, SourceState& st, Source& s, hs_scratch_t*& scratch,
                               std::vector<Hit>& hits) {
  std::optional<StreamPipeline> pipe;
  if (t.stream_helpers > 0) pipe.emplace(*this, t, st, t.stream_helpers);
  // Pieces are cut as with one thread (the same sizes, so the same chunk
  // edges and times), from the same size of block.
  const size_t block = kStreamBuffer;
  // buf[0, size) is the buffer; a recycled one may be larger.
  size_t size = block;
  std::string buf = pipe ? pipe->Buffer(size) : std::string(size, '\0');
  size_t have = 0;
  uint64_t offset = 0;
  bool eof = false;
  // Compressed bytes read so far that progress has been told of.
  uint64_t input_reported = 0;
  auto count_input = [&](StreamPiece& p) {
    if (auto read = s.compressed_bytes_read()) {
      p.input_bytes = *read - input_reported;
      input_reported = *read;
    }
  };
  // Hands on buf[0, cut) and keeps the rest at the front of buf.
  auto hand_on = [&](size_t cut, std::string error) {
    StreamPiece p;
    p.len = cut;
    p.offset = offset;
    p.error = std::move(error);
    count_input(p);
    if (pipe) {
      p.bytes = std::move(buf);
      buf = pipe->Buffer(size);
      std::memcpy(buf.data(), p.bytes.data() + cut, have - cut);
      pipe->Put(std::move(p), scratch, hits);
    } else {
      p.bytes = std::move(buf);
      Push(t, ScanPiece(st, p, scratch, hits));
      buf = std::move(p.bytes);
      std::memmove(buf.data(), buf.data() + cut, have - cut);
    }
    offset += cut;
    have -= cut;
  };
  // max_source_bytes: reading stops one byte past the cap (so a source of
  // exactly the cap is not an error), and what is past it is dropped.
  const uint64_t cap = opts.limits.max_source_bytes;
  bool over_cap = false, out_of_time = false;
  while (!eof && !Cancelled()) {
    if (OutOfTime()) {
      out_of_time = true;
      break;
    }
    if (size - have < (1 << 20)) size *= 2;
    if (buf.size() < size) buf.resize(size);
    size_t want = size - have;
    if (cap > 0) want = static_cast<size_t>(std::min<uint64_t>(want, cap + 1 - (offset + have)));
    auto n = s.Read(buf.data() + have, want);
    if (!n.ok()) {
      // Scan what arrived before the error, then report it.
      hand_on(have, std::string(n.status().message()));
      break;
    }
    if (*n == 0) eof = true;
    have += *n;
    if (cap > 0 && offset + have > cap) {
      // Whole lines up to the cap.
      have = static_cast<size_t>(cap - offset);
      if (const void* nl = memrchr(buf.data(), '\n', have)) {
        have = static_cast<size_t>(static_cast<const char*>(nl) - buf.data()) + 1;
      }
      over_cap = true;
      eof = true;
    }
    if (offset == 0 && !st.framing.format().json && !st.framing.format().joins()) {
      st.framing.Detect(std::string_view(buf.data(), std::min<size_t>(have, 64 << 10)));
    }
    const size_t cut = eof ? have : StreamCutAt(st, std::string_view(buf.data(), have), block);
    if (cut > 0) hand_on(cut, "");
  }
  if (over_cap || out_of_time) {
    StreamPiece p;
    p.offset = offset;
    p.error = over_cap ? OverLimitMessage(s.name(), offset) : OutOfTimeMessage(s.name(), offset);
    p.error_cause = over_cap ? "size cap" : "time budget";
    if (pipe) {
      pipe->Put(std::move(p), scratch, hits);
    } else {
      Push(t, ScanPiece(st, p, scratch, hits));
    }
  }
  if (pipe) pipe->Finish(scratch, hits);
  if (auto read = s.compressed_bytes_read()) t.input_tail = *read - input_reported;
}

void Scanner::Impl::AssignStreamHelpers(std::vector<std::unique_ptr<Task>>& tasks,
                                        unsigned nthreads) {
  std::vector<Task*> compressed;
  for (auto& t : tasks) {
    // As OpenSource tells them.
    if (!t->shared &&
        (absl::EndsWithIgnoreCase(t->path, ".gz") || absl::EndsWithIgnoreCase(t->path, ".zst"))) {
      compressed.push_back(t.get());
    }
  }
  // A batch counts as the files in it, as when each was a task.
  size_t files = 0;
  for (auto& t : tasks) files += std::max<size_t>(1, t->batch.size());
  if (compressed.empty() || nthreads <= files) return;
  for (size_t spare = nthreads - files, i = 0; spare > 0; --spare, ++i) {
    ++compressed[i % compressed.size()]->stream_helpers;
  }
}

InputLimits Scanner::Impl::StreamLimits(const Task& t) const {
  InputLimits limits = opts.limits;
  if (t.stream_helpers >= 2) limits.zstd_decode_threads = t.stream_helpers - 1;
  return limits;
}

size_t Scanner::Impl::StreamCutAt(const SourceState& st, std::string_view buffered, size_t block) {
  const size_t have = buffered.size();
  size_t cut = have;
  const void* nl = memrchr(buffered.data(), '\n', have);
  if (nl) {
    cut = static_cast<size_t>(static_cast<const char*>(nl) - buffered.data()) + 1;
    // A run of CRI partial or wrapped lines waits for the line ending it.
    cut = st.framing.StreamCut(buffered, cut);
    if (cut == 0 && have < kMaxStreamLine) return 0;
    if (cut == 0) cut = have;
  } else if (have < kMaxStreamLine) {
    return 0;  // a line longer than the buffer: read more
  }
  // Too little to be worth a scan yet.
  if (cut < have && have - cut < (1 << 20) && cut < (4u << 20) && have < block / 2) return 0;
  return cut;
}

}  // namespace faultline
