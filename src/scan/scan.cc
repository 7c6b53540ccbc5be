// Scanner implementation. Two phases per chunk:
//  A (inside the SIGBUS guard for mapped files): hs_scan, de-duplicate
//    matches per (line, signal), find line bounds, count newlines, copy the
//    matched lines and a little context before them out of the mapping. Only
//    plain loops and C calls run here, because a fault unwinds with longjmp.
//  B (outside): RE2 confirmation and captures, timestamps, attribution.
// The calling thread merges chunk results in task order, which fixes line
// numbers, inherited timestamps and evidence order independently of how many
// worker threads ran.
#include "scan/scan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <immintrin.h>
#include <mutex>
#include <optional>
#include <thread>


#include "util/strings.h"
#include "attribution/attribution.h"
#include "evidence/finalize.h"
#include "evidence/merge.h"
#include "scan/line_format.h"
#include "scan/traceback.h"
#include "simdjson.h"
#include "util/status_macros.h"

namespace faultline {
namespace {

constexpr size_t kContextBefore = kInheritWindow;  // bytes before a match line kept for inherited times
constexpr size_t kConfirmWindow = 64 << 10;   // RE2 runs on at most this much of a huge line
constexpr size_t kEdgeWindow = 8 << 10;       // chunk head/tail kept for first/last times
constexpr size_t kMaxHsLength = 0xF0000000u;  // hs_scan takes an unsigned length
constexpr size_t kWindowAfterMatch = 4 << 10;  // of a huge line, kept past a match's end
constexpr size_t kStreamBuffer = size_t{16} << 20;
constexpr size_t kMaxStreamLine = size_t{64} << 20;  // a longer line in a stream is split

__attribute__((target("avx2"))) uint64_t CountNewlinesAvx2(const char* p, size_t n) {
  uint64_t count = 0;
  size_t i = 0;
  const __m256i nl = _mm256_set1_epi8('\n');
  for (; i + 32 <= n; i += 32) {
    __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    count += static_cast<uint64_t>(
        __builtin_popcount(static_cast<unsigned>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, nl)))));
  }
  for (; i < n; ++i) count += p[i] == '\n';
  return count;
}

uint64_t CountNewlinesPlain(const char* p, size_t n) {
  uint64_t count = 0;
  const char* end = p + n;
  while (p < end) {
    const void* q = std::memchr(p, '\n', static_cast<size_t>(end - p));
    if (!q) break;
    ++count;
    p = static_cast<const char*>(q) + 1;
  }
  return count;
}

uint64_t CountNewlines(const char* p, size_t n) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2 ? CountNewlinesAvx2(p, n) : CountNewlinesPlain(p, n);
}

// A matched line copied out of the chunk.
struct Pending {
  uint64_t offset = 0;     // absolute offset of the line start
  uint64_t line_rel = 0;   // newlines in the chunk before this line
  std::vector<uint32_t> ids;  // signals that matched the line
  std::string line;        // the line (a window of it, for huge lines)
  // For a line over kConfirmWindow: per id, the window RE2 confirms on.
  std::vector<std::string> windows;
  std::string before;      // up to kContextBefore bytes before the line
  bool before_reaches_chunk_start = false;
  // `before` starts right after the previous matched line of the chunk
  // (whose own or inherited time then carries over).
  bool before_reaches_prev = false;
  // For a line that may end a Python traceback: the kTracebackWindow bytes
  // before it (fewer at the source's start, or at a stream chunk's start:
  // then `tb_cut` and the merge prepends the source's previous bytes).
  bool tb_candidate = false;
  bool tb_cut = false;
  bool tb_at_start = false;  // the window reaches the source's first byte
  std::string tb_window;
};

static_assert(kTracebackWindow <= kEdgeWindow, "the merge completes cut windows from chunk tails");

// A traceback window cut at a stream chunk's start, completed at the merge.
struct TracebackPending {
  size_t first_evidence = 0, evidence_count = 0;  // in ChunkOut::evidence
  uint64_t offset = 0;                            // of the line
  std::string window, line;
};

struct ChunkOut {
  std::vector<Pending> pending;
  std::vector<Evidence> evidence;  // after phase B (line = line_rel for now)
  std::vector<TracebackPending> tb_pending;
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
  bool faulted = false;
  std::string error;  // non-empty: the source failed here
  int error_code = -3;
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

int OnHsMatch(unsigned id, unsigned long long, unsigned long long to, unsigned, void* vctx) {
  auto* c = static_cast<HsCtx*>(vctx);
  // A database that does not belong to this ruleset (the loader checks, but
  // a match must never index past the signal table).
  if (id >= c->signal_count) return 0;
  // `to` is one past the last matched byte; the line holding that byte.
  uint64_t last = to > 0 ? to - 1 : 0;
  if (to > c->len) last = c->len ? c->len - 1 : 0;
  if (!c->have_line || last < c->cur_line_start || last >= c->cur_line_end) {
    // New line: find its bounds.
    uint64_t start = last;
    if (start > 0 && c->base[start - 1] != '\n') {
      const void* p = memrchr(c->base, '\n', start);
      start = p ? static_cast<uint64_t>(static_cast<const char*>(p) - c->base) + 1 : 0;
    }
    const void* e = std::memchr(c->base + last, '\n', c->len - last);
    uint64_t end = e ? static_cast<uint64_t>(static_cast<const char*>(e) - c->base) : c->len;
    c->cur_line_start = start;
    c->cur_line_end = end;
    if (c->cur_line_end < c->cur_line_start) c->cur_line_end = c->cur_line_start;
    c->have_line = true;
    c->seen->clear();
  }
  if (std::find(c->seen->begin(), c->seen->end(), id) != c->seen->end()) return 0;
  c->seen->push_back(id);
  c->hits->push_back({c->cur_line_start, c->cur_line_end, std::min<uint64_t>(to, c->len), id});
  return 0;
}

// A dmesg -H delta in whole microseconds.
int64_t DeltaUs(double s) { return static_cast<int64_t>(std::llround(s * 1e6)); }

// Copies [p, p+n) into s without allocating while the source is read: a
// SIGBUS in the copy unwinds with longjmp, which must not strand a buffer
// that no destructor will free.
void CopyOut(std::string& s, const char* p, size_t n) {
  s.reserve(n);
  s.assign(p, n);
}

// Phase A on [base, base+len), which holds whole lines (the last may lack its
// newline). Plain loops and C calls only, and every allocation is owned by
// `out`, `hits` or thread storage before the mapping is touched: a fault
// (file truncated under the mapping) longjmps out of here.
//
// `readable_before`: bytes before `base` that belong to the same source and
// may be read (a chunk of a mapped file); traceback windows reach into them.
// `fold_tracebacks` is false for JSON messages.
void PhaseA(const Ruleset& rs, hs_scratch_t* scratch, const char* base, size_t len,
            uint64_t abs_offset, ChunkOut& out, std::vector<HsCtx::Hit>& hits,
            size_t readable_before = 0, bool fold_tracebacks = true) {
  thread_local std::vector<uint32_t> seen;
  hits.clear();
  HsCtx ctx;
  ctx.signal_count = static_cast<uint32_t>(rs.signal_count());
  ctx.hits = &hits;
  ctx.seen = &seen;
  for (size_t done = 0; done < len;) {
    // hs_scan takes an unsigned length: chunks over kMaxHsLength (one huge
    // line, or a chunk the caller made huge) are scanned in windows cut
    // after a newline, so no line is split; only a single line longer than
    // the window is cut, and then hits keep that line's true bounds.
    size_t n = std::min(len - done, kMaxHsLength);
    if (n < len - done) {
      const void* nl = memrchr(base + done, '\n', n);
      if (nl) n = static_cast<size_t>(static_cast<const char*>(nl) - (base + done)) + 1;
    }
    ctx.base = base + done;
    ctx.len = n;
    ctx.have_line = false;
    size_t before = hits.size();
    hs_scan(rs.database(), base + done, static_cast<unsigned>(n), 0, scratch, OnHsMatch, &ctx);
    bool cut_head = done > 0 && base[done - 1] != '\n';
    bool cut_tail = done + n < len && base[done + n - 1] != '\n';
    uint64_t true_start = 0, true_end = len;
    if (cut_head) {
      const void* p = memrchr(base, '\n', done);
      true_start = p ? static_cast<uint64_t>(static_cast<const char*>(p) - base) + 1 : 0;
    }
    if (cut_tail) {
      const void* e = std::memchr(base + done + n, '\n', len - done - n);
      true_end = e ? static_cast<uint64_t>(static_cast<const char*>(e) - base) : len;
    }
    for (size_t i = before; i < hits.size(); ++i) {
      hits[i].line_start = cut_head && hits[i].line_start == 0 ? true_start : hits[i].line_start + done;
      hits[i].line_end = cut_tail && hits[i].line_end == n ? true_end : hits[i].line_end + done;
      hits[i].to += done;
    }
    done += n;
  }
  std::sort(hits.begin(), hits.end(), [](const HsCtx::Hit& a, const HsCtx::Hit& b) {
    return a.line_start != b.line_start ? a.line_start < b.line_start
           : a.id != b.id              ? a.id < b.id
                                       : a.to < b.to;
  });
  // A line cut between two windows may report a signal in both.
  hits.erase(std::unique(hits.begin(), hits.end(),
                         [](const HsCtx::Hit& a, const HsCtx::Hit& b) {
                           return a.line_start == b.line_start && a.id == b.id;
                         }),
             hits.end());
  out.edge.bytes = len;
  out.base_offset = abs_offset;
  out.ends_with_newline = len == 0 || base[len - 1] == '\n';
  CopyOut(out.head, base, std::min(len, kEdgeWindow));
  size_t tail_len = std::min(len, kEdgeWindow);
  CopyOut(out.tail, base + len - tail_len, tail_len);
  uint64_t counted_to = 0, lines_before = 0, prev_end = 0;
  size_t lines = 0;
  for (size_t i = 0; i < hits.size(); ++i) lines += i == 0 || hits[i].line_start != hits[i - 1].line_start;
  out.pending.reserve(lines);
  for (size_t i = 0; i < hits.size();) {
    uint64_t ls = hits[i].line_start, le = hits[i].line_end;
    Pending& p = out.pending.emplace_back();
    p.offset = abs_offset + ls;
    lines_before += CountNewlines(base + counted_to, ls - counted_to);
    counted_to = ls;
    p.line_rel = lines_before;
    size_t first = i;
    for (; i < hits.size() && hits[i].line_start == ls; ++i) p.ids.push_back(hits[i].id);
    size_t line_len = le - ls;
    if (line_len > kConfirmWindow) {
      // A huge line: RE2 confirms each signal on a window that ends a little
      // past where Hyperscan saw its match end, not on the line's head,
      // which may be gigabytes before it.
      p.windows.resize(i - first);
      for (size_t k = first; k < i; ++k) {
        uint64_t wend = std::min<uint64_t>(le, hits[k].to + kWindowAfterMatch);
        uint64_t wstart = wend - ls > kConfirmWindow ? wend - kConfirmWindow : ls;
        CopyOut(p.windows[k - first], base + wstart, wend - wstart);
      }
      line_len = kConfirmWindow;
    }
    CopyOut(p.line, base + ls, line_len);
    if (fold_tracebacks && MayEndTraceback(p.line)) {
      uint64_t avail = ls + readable_before;
      size_t w = static_cast<size_t>(std::min<uint64_t>(avail, kTracebackWindow));
      p.tb_candidate = true;
      // Short of the window and not at the source's start: a stream chunk.
      p.tb_at_start = abs_offset + ls == w;
      p.tb_cut = w < kTracebackWindow && !p.tb_at_start;
      const char* wstart = base + ls - w;  // may reach before base (readable_before)
      CopyOut(p.tb_window, wstart, w);
    }
    // Context for inherited times: back to the previous matched line at
    // most (PhaseB chains through it), so the copies add up to at most the
    // chunk, not 8 KiB per match of a match storm.
    size_t bstart = ls > kContextBefore ? ls - kContextBefore : 0;
    bool reaches_prev = false;
    if (out.pending.size() > 1 && bstart <= prev_end) {
      bstart = std::min<uint64_t>(prev_end, ls);
      reaches_prev = true;
    }
    CopyOut(p.before, base + bstart, ls - bstart);
    p.before_reaches_chunk_start = bstart == 0 && out.pending.size() == 1;
    p.before_reaches_prev = reaches_prev;
    prev_end = le + 1;
  }
  // One pass over the chunk: the newlines before the last matched line were
  // counted above.
  out.newlines = lines_before + CountNewlines(base + counted_to, len - counted_to);
}

// After a SIGBUS unwound out of PhaseA, clears the scratch's in-use mark
// so the scratch can be scanned with and freed again; hs_scan re-initialises
// the rest of it on every call. Hyperscan's (and Vectorscan's) hs_scratch
// starts with its magic number (u32) and the in-use byte; anything else
// means a layout we do not know, and the scratch is left alone.
bool ReleaseFaultedScratch(hs_scratch_t* scratch) {
  constexpr uint32_t kScratchMagic = 0x544F4259;  // SCRATCH_MAGIC in scratch.h
  if (scratch == nullptr) return false;
  auto* bytes = reinterpret_cast<unsigned char*>(scratch);
  uint32_t magic;
  std::memcpy(&magic, bytes, sizeof magic);
  if (magic != kScratchMagic || bytes[4] > 1) return false;
  bytes[4] = 0;  // 0 already when the fault was outside hs_scan
  return true;
}

// Makes text valid UTF-8 (invalid bytes and NULs become U+FFFD) and cuts it
// to kMaxEvidenceText bytes at a character boundary.
std::string CleanText(std::string_view s) {
  std::string out;
  out.reserve(std::min(s.size(), kMaxEvidenceText));
  size_t i = 0;
  while (i < s.size()) {
    // Runs of plain ASCII (1..0x7F, most of a log) go over in bulk, eight
    // bytes per test; a trailing '\r' is left to the byte loop.
    size_t run = i, limit = std::min(s.size(), i + (kMaxEvidenceText - out.size()));
    for (uint64_t w; run + 8 <= limit; run += 8) {
      std::memcpy(&w, s.data() + run, 8);
      constexpr uint64_t kLow = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
      if ((w & kHigh) != 0 || ((w - kLow) & ~w & kHigh) != 0) break;  // a byte >= 0x80 or NUL
    }
    while (run < limit && static_cast<unsigned char>(s[run]) - 1u < 0x7Fu) ++run;
    if (run == s.size() && run > i && s[run - 1] == '\r') --run;
    if (run > i) {
      out.append(s.data() + i, run - i);
      i = run;
      if (i >= s.size() || out.size() >= kMaxEvidenceText) break;
    }
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    if (c == '\r' && i + 1 == s.size()) break;
    if (c >= 0x01 && c < 0x80) n = 1;
    else if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) n = 3;
    else if (c >= 0xF0 && c <= 0xF4) n = 4;
    bool ok = n > 0 && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) ok = false;
    }
    if (ok && n == 3) {
      unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0)) ok = false;
    }
    if (ok && n == 4) {
      unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      if ((c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 >= 0x90)) ok = false;
    }
    std::string_view piece = ok ? s.substr(i, n) : std::string_view("\xEF\xBF\xBD");
    if (out.size() + piece.size() > kMaxEvidenceText) break;
    out.append(piece);
    i += ok ? n : 1;
  }
  return out;
}

}  // namespace

struct Scanner::Impl {
  std::shared_ptr<const Ruleset> rs;
  ScanOptions opts;
  TimeContext tctx;
  ScanResult result;

  // Per-source merge state.
  struct SourceState {
    uint32_t index = 0;
    Attribution path_attr;
    LineFormat format;
    TimeContext tctx;
    uint64_t lines = 0;
    bool last_ended_newline = true;
    explicit SourceState(EvidenceCaps caps) : keeper(caps) {}
    EvidenceKeeper keeper;
    std::map<int64_t, int64_t> rank_last_progress_us;
    std::string recent;  // the source's last kTracebackWindow bytes merged so far
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
  HsScratchPtr main_scratch;
  std::vector<HsCtx::Hit> main_hits;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();

  uint32_t NewSource(const std::string& name, int64_t mtime) {
    SourceSummary s;
    s.name = name;
    s.failed = false;
    auto st = std::make_unique<SourceState>(EvidenceCaps{opts.keep_first, opts.keep_last});
    st->index = static_cast<uint32_t>(result.sources.size());
    st->path_attr = AttributeFromPath(name);
    s.rank = st->path_attr.rank.value_or(-1);
    s.host = st->path_attr.host;
    st->tctx = tctx;
    if (mtime > 0) {
      time_t t = static_cast<time_t>(mtime);
      struct tm tm;
      gmtime_r(&t, &tm);
      st->tctx.default_year = tm.tm_year + 1900;
    } else {
      time_t t = time(nullptr);
      struct tm tm;
      gmtime_r(&t, &tm);
      st->tctx.default_year = tm.tm_year + 1900;
    }
    result.sources.push_back(std::move(s));
    states.push_back(std::move(st));
    return states.back()->index;
  }

  void Fail(uint32_t src, std::string msg, int code) {
    result.sources[src].failed = true;
    for (const InputError& e : result.errors) {
      if (e.source == result.sources[src].name && e.message == msg) return;
    }
    result.errors.push_back({result.sources[src].name, std::move(msg), code});
  }

  // Phase B: evidence from pending lines. Runs on worker threads; reads only
  // immutable state (ruleset, the source's format and time context).
  void PhaseB(const SourceState& st, ChunkOut& out) const {
    // The wall time in force at the previous matched line (its own or
    // inherited), and whether it is still to come from the previous chunk.
    int64_t prev_time = kNoTime;
    uint64_t prev_time_at = 0;  // start of the stamped line prev_time comes from
    bool prev_needs_prev = false;
    int64_t prev_pending_delta = 0;  // with prev_needs_prev: dmesg -H deltas since the chunk's start
    bool prev_time_inferred = false;  // prev_time's stamp had no year
    for (Pending& p : out.pending) {
      std::string_view line = p.line;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      LineView view = SplitLine(line, st.format, st.tctx);
      // The time a line without its own stamp inherits: the nearest
      // timestamped line before it. dmesg -H delta lines ("[  +0.000316]")
      // add up from it: the line's own delta and those of the delta lines
      // in between (`acc`), all within the same position bound.
      const bool own_delta = view.time && view.time->delta_s;
      int64_t acc = own_delta ? DeltaUs(*view.time->delta_s) : 0;
      int64_t inherited = kNoTime;
      uint64_t inherited_at = 0;
      bool inherited_inferred = false;  // the stamp inherited from had no year
      bool needs_prev = false;
      int64_t pending_delta = 0;
      if (!(view.time && view.time->wall_us)) {
        std::string_view before = p.before;
        bool found = false;
        while (!before.empty()) {
          if (before.back() == '\n') before.remove_suffix(1);
          size_t nl = before.rfind('\n');
          std::string_view prev = nl == std::string_view::npos ? before : before.substr(nl + 1);
          bool partial = nl == std::string_view::npos && !p.before_reaches_chunk_start &&
                         !p.before_reaches_prev;
          if (partial) break;
          LineView pv = SplitLine(prev, st.format, st.tctx);
          if (pv.time && pv.time->wall_us) {
            inherited = *pv.time->wall_us + acc;
            inherited_inferred = pv.time->year_inferred;
            inherited_at = p.offset - p.before.size() +
                           static_cast<uint64_t>(prev.data() - p.before.data());
            found = true;
            break;
          }
          if (pv.time && pv.time->delta_s) acc += DeltaUs(*pv.time->delta_s);
          if (nl == std::string_view::npos) break;
          before = before.substr(0, nl);
        }
        if (!found && p.before_reaches_prev) {
          // The chain keeps the position bound: the stamped line must start
          // within kInheritWindow of this one, as for any other chunking.
          if (prev_time != kNoTime && prev_time_at + kInheritWindow >= p.offset) {
            inherited = prev_time + acc;
            inherited_inferred = prev_time_inferred;
            inherited_at = prev_time_at;
          }
          needs_prev = prev_needs_prev;
          pending_delta = prev_pending_delta + acc;
        } else if (!found && p.before_reaches_chunk_start) {
          needs_prev = true;
          pending_delta = acc;
        }
      }
      bool own_time = view.time && view.time->wall_us;
      prev_time = own_time ? *view.time->wall_us : inherited;
      prev_time_at = own_time ? p.offset : inherited_at;
      prev_time_inferred = own_time ? view.time->year_inferred : inherited_inferred;
      prev_needs_prev = prev_time == kNoTime && needs_prev;
      prev_pending_delta = pending_delta;
      std::string text;  // cleaned once per line, whatever its number of signals
      bool have_text = false;
      const size_t ev_begin = out.evidence.size();
      for (size_t j = 0; j < p.ids.size(); ++j) {
        uint32_t id = p.ids[j];
        const SignalInfo& si = rs->signal(id);
        // Hyperscan found where; RE2 confirms the match holds on this line alone
        // (for JSON sources, on the message; for a huge line, on the window
        // around the match).
        std::string_view subject = j < p.windows.size() ? std::string_view(p.windows[j]) : view.message;
        const RE2* confirm = si.confirm();
        if (!confirm || !RE2::PartialMatch(subject, *confirm)) continue;
        Evidence ev;
        ev.source = st.index;
        ev.offset = p.offset;
        ev.line = p.line_rel;  // fixed at merge
        ev.rule = si.rule_index;
        ev.signal = id;
        if (!have_text) {
          text = CleanText(line);
          have_text = true;
        }
        ev.text = text;
        if (!si.extracts().empty()) {
          thread_local std::vector<std::pair<std::string_view, std::string_view>> captured;
          captured.clear();
          si.ExtractFields(subject, &captured);
          for (const auto& [name, value] : captured) {
            ev.fields.emplace_back(std::string(name), CleanText(value));
          }
        }
        // Time.
        if (view.time) {
          if (view.time->wall_us) {
            ev.time_us = *view.time->wall_us;
            ev.time_source =
                view.time->year_inferred ? TimeSource::kInferredYear : TimeSource::kParsed;
          }
          ev.monotonic_s = view.time->monotonic_s;
        }
        ev.dmesg_delta = own_delta;
        if (ev.time_us == kNoTime && !ev.monotonic_s) {
          // Inherit the previous timestamped line's time.
          if (inherited != kNoTime) {
            ev.time_us = inherited;
            ev.time_source = ev.InheritedSource();
            ev.year_inferred = inherited_inferred;
          } else {
            ev.needs_prev_time = needs_prev;
            ev.prev_delta_us = pending_delta;
          }
        }
        // Attribution: path, then the line, then captures.
        Attribution a = view.attr;
        MergeAttribution(a, st.path_attr);
        ev.rank = a.rank.value_or(-1);
        ev.local_rank = a.local_rank.value_or(-1);
        ev.pid = a.pid.value_or(-1);
        ev.host = a.host;
        ev.gpu = a.gpu;
        for (const auto& [k, v] : ev.fields) {
          int64_t n;
          if (k == "rank" && ParseInt64(v, &n)) ev.rank = n;
          else if (k == "pid" && ParseInt64(v, &n)) ev.pid = n;
          else if (k == "host" && !v.empty()) ev.host = v;
          else if ((k == "pci" || k == "bus_id") && ev.gpu.empty()) {
            std::string g = NormalizePciBusId(v);
            if (!g.empty()) ev.gpu = g;
          }
        }
        out.evidence.push_back(std::move(ev));
      }
      if (p.tb_candidate && out.evidence.size() > ev_begin) {
        if (p.tb_cut) {
          TracebackPending& tp = out.tb_pending.emplace_back();
          tp.first_evidence = ev_begin;
          tp.evidence_count = out.evidence.size() - ev_begin;
          tp.offset = p.offset;
          tp.window = std::move(p.tb_window);
          tp.line.assign(line);
        } else {
          AddTraceback(out.evidence, ev_begin, out.evidence.size() - ev_begin,
                       FoldTraceback(p.tb_window, p.tb_at_start, line, st.format, st.tctx));
        }
      }
    }
    out.pending.clear();
    out.pending.shrink_to_fit();
    if (!opts.on_evidence) ThinDroppedEvidence(out);
    // First and last times of the chunk.
    auto first_time = [&](std::string_view text) -> int64_t {
      size_t pos = 0;
      for (int k = 0; k < 64 && pos < text.size(); ++k) {
        size_t nl = text.find('\n', pos);
        std::string_view l = text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos);
        LineView v = SplitLine(l, st.format, st.tctx);
        if (v.time && v.time->wall_us) {
          if (!v.time->year_inferred) out.edge.dated_us = *v.time->wall_us;
          out.edge.first_time_inferred = v.time->year_inferred;
          return *v.time->wall_us;
        }
        if (nl == std::string_view::npos) break;
        pos = nl + 1;
      }
      return kNoTime;
    };
    out.edge.first_time_us = first_time(out.head);
    std::string_view tail = out.tail;
    if (!tail.empty() && tail.back() == '\n') tail.remove_suffix(1);
    const uint64_t tail_start = out.base_offset + out.edge.bytes - out.tail.size();
    int64_t tail_acc = 0;  // dmesg -H deltas after the last stamped line
    while (!tail.empty()) {
      size_t nl = tail.rfind('\n');
      if (nl == std::string_view::npos && out.tail.size() >= kEdgeWindow) break;  // partial
      std::string_view l = nl == std::string_view::npos ? tail : tail.substr(nl + 1);
      LineView v = SplitLine(l, st.format, st.tctx);
      if (v.time && v.time->delta_s) tail_acc += DeltaUs(*v.time->delta_s);
      if (v.time && v.time->wall_us) {
        out.edge.last_time_us = *v.time->wall_us + tail_acc;
        out.edge.last_time_inferred = v.time->year_inferred;
        out.edge.last_time_offset = static_cast<int64_t>(tail_start + (nl == std::string_view::npos ? 0 : nl + 1));
        if (v.time->monotonic_s) {
          out.edge.monotonic_anchor_us =
              *v.time->wall_us - static_cast<int64_t>(*v.time->monotonic_s * 1e6);
        }
        break;
      }
      if (nl == std::string_view::npos) break;
      tail = tail.substr(0, nl);
    }
    if (out.edge.last_time_us == kNoTime && out.tail.size() == out.edge.bytes && out.edge.bytes < kEdgeWindow) {
      out.edge.unanchored_delta_us = tail_acc;
    }
    out.head.clear();
    // The tail stays: the merge keeps the source's last bytes from it to
    // complete traceback windows cut at the next chunk's start.
  }

  // Evidence the per-rule caps are bound to drop -- past the first
  // keep_first and before the last keep_last of its rule in this chunk, so
  // neither among the first nor the last of its source -- keeps only what
  // the uncapped statistics in Keep read. A match storm (every line a
  // watchdog timeout) then holds a couple of hundred bytes per match in
  // flight between the workers and the merge, not its text and captures.
  // Progress and metric evidence feed series and stays whole.
  // The fields of a folded traceback on the evidence of its exception line.
  static void AddTraceback(std::vector<Evidence>& evs, size_t first, size_t count,
                           const std::optional<TracebackFold>& fold) {
    if (!fold) return;
    for (size_t i = first; i < first + count && i < evs.size(); ++i) {
      Evidence& ev = evs[i];
      if (!ev.Field("raised_at")) ev.fields.emplace_back("raised_at", CleanText(fold->raised_at));
      if (!ev.Field("traceback")) ev.fields.emplace_back("traceback", CleanText(fold->frames));
      ev.traceback_span = static_cast<uint32_t>(fold->span);
    }
  }

  void ThinDroppedEvidence(ChunkOut& out) const {
    std::map<uint32_t, size_t> total, index;
    for (const Evidence& ev : out.evidence) {
      if (rs->signal(ev.signal).role != SignalRole::Progress) ++total[ev.rule];
    }
    for (Evidence& ev : out.evidence) {
      SignalRole role = rs->signal(ev.signal).role;
      if (role == SignalRole::Progress) continue;
      size_t i = index[ev.rule]++;
      if (role == SignalRole::Metric || i < opts.keep_first || i + opts.keep_last >= total[ev.rule]) {
        continue;
      }
      bool comm = false;
      std::vector<std::pair<std::string, std::string>> keep;
      for (auto& kv : ev.fields) {
        if (kv.first == "seq" || kv.first == "bus_id" || kv.first == "cuda_dev" ||
            kv.first == "comm_id") {
          comm |= kv.first == "comm_id";
          keep.push_back(std::move(kv));
        }
      }
      ev.fields.swap(keep);
      if (!comm) std::string().swap(ev.text);  // sync points read the text
    }
  }

  // Phase A on a text derived from the chunk (JSON messages, joined CRI
  // records; one record per line, `jc.lines` says where each came from),
  // with the chunk's own counts and edges, and each pending line placed at
  // its record's first original line; `each(pending, record)` then adjusts
  // what the derived text got wrong for that format.
  template <typename Each>
  void PhaseADerived(hs_scratch_t* scratch, std::vector<HsCtx::Hit>& hits, const char* data,
                     size_t len, uint64_t abs_offset, const JsonChunk& jc, bool fold_tracebacks,
                     ChunkOut& out, Each&& each) const {
    PhaseA(*rs, scratch, jc.messages.data(), jc.messages.size(), 0, out, hits, 0, fold_tracebacks);
    out.newlines = CountNewlines(data, len);
    out.edge.bytes = len;
    out.base_offset = abs_offset;
    out.ends_with_newline = len == 0 || data[len - 1] == '\n';
    for (Pending& p : out.pending) {
      size_t idx = p.line_rel;
      if (idx < jc.lines.size()) {
        p.offset = abs_offset + jc.lines[idx].offset;
        p.line_rel = jc.lines[idx].line_rel;
        each(p, jc.lines[idx]);
      }
    }
    out.head.assign(data, std::min(len, kEdgeWindow));
    size_t tail_len = std::min(len, kEdgeWindow);
    out.tail.assign(data + len - tail_len, tail_len);
  }

  void ProcessBuffer(SourceState& st, hs_scratch_t* scratch, std::vector<HsCtx::Hit>& hits,
                     const char* data, size_t len, uint64_t abs_offset, ChunkOut& out) const {
    if (st.format.json) {
      // JSON lines: scan the messages, not the raw JSON; confirm on the raw
      // line (SplitLine takes the message from it again).
      JsonChunk jc = ExtractJsonMessages(std::string_view(data, len));
      PhaseADerived(scratch, hits, data, len, abs_offset, jc, false, out,
                    [&](Pending& p, const JsonLine& jl) {
                      p.line.assign(data + jl.offset, std::min<size_t>(jl.length, kConfirmWindow));
                      p.before.clear();
                      p.before_reaches_chunk_start = false;
                      p.before_reaches_prev = false;
                    });
    } else if (st.format.joins() && HasPartial(st.format, std::string_view(data, len))) {
      // CRI partial lines, hard-wrapped lines: match on the joined records.
      // Traceback windows come from the joined text, which starts at this
      // chunk's start.
      JsonChunk jc = JoinPartials(st.format, std::string_view(data, len));
      PhaseADerived(scratch, hits, data, len, abs_offset, jc, true, out,
                    [&](Pending& p, const JsonLine&) {
                      if (!p.tb_candidate) return;
                      p.tb_at_start = p.tb_at_start && abs_offset == 0;
                      p.tb_cut = p.tb_window.size() < kTracebackWindow && !p.tb_at_start;
                    });
    } else {
      PhaseA(*rs, scratch, data, len, abs_offset, out, hits);
    }
    PhaseB(st, out);
  }

  // Merges one chunk's results into its source, in order.
  void Merge(SourceState& st, ChunkOut& out) {
    SourceSummary& sum = result.sources[st.index];
    // Traceback windows cut at this chunk's start: the source's bytes before
    // the chunk complete them, so the fold is the same for any chunking.
    for (TracebackPending& tp : out.tb_pending) {
      std::string window = st.recent + tp.window;
      // `recent` holds the whole source so far while it is shorter than the
      // window: a short window starts at the source's first byte.
      bool at_start = window.size() < kTracebackWindow;
      if (!at_start) window.erase(0, window.size() - kTracebackWindow);
      AddTraceback(out.evidence, tp.first_evidence, tp.evidence_count,
                   FoldTraceback(window, at_start, tp.line, st.format, st.tctx));
    }
    st.recent += out.tail;
    if (st.recent.size() > kTracebackWindow) st.recent.erase(0, st.recent.size() - kTracebackWindow);
    if (!out.error.empty()) Fail(st.index, out.error, out.error_code);
    uint64_t base_line = st.lines + (st.last_ended_newline ? 1 : 0);
    if (st.lines == 0 && sum.bytes == 0) base_line = 1;
    // Evidence that found no time in its chunk inherits the time the chunks
    // before it ended on (a range scan leaves it to MergeScans when none did).
    const TimeCarry carry = TimeCarry::AtEndOf(sum);
    for (Evidence& ev : out.evidence) {
      ev.line = base_line + ev.line;
      carry.Give(ev);
      Keep(st, std::move(ev));
    }
    AppendFollowing(sum, out.edge);
    // A chunk whose last line lacks a newline still counts that line; the
    // next chunk of a stream never starts mid-line, so this is exact.
    st.lines += out.newlines;
    st.last_ended_newline = out.ends_with_newline;
    sum.lines = st.lines + (out.ends_with_newline || out.edge.bytes == 0 ? 0 : 1);
  }

  void Keep(SourceState& st, Evidence ev) {
    const SignalInfo& si = rs->signal(ev.signal);
    ++result.matches;
    ++result.signal_hits[ev.signal];
    SourceSummary& sum = result.sources[st.index];
    if (ev.monotonic_s && ev.time_us != kNoTime && !sum.monotonic_anchor_us) {
      sum.monotonic_anchor_us = ev.time_us - static_cast<int64_t>(*ev.monotonic_s * 1e6);
    }
    if (opts.on_evidence) opts.on_evidence(ev, sum.name);
    int64_t n;
    std::optional<int64_t> seq;
    if (const std::string* f = ev.Field("seq"); f && ParseInt64(*f, &n)) seq = n;
    CountInRuleStats(result.rule_stats[ev.rule], ev, seq);
    // Topology and clock sync, from every line before any cap. An init line
    // names the rank inside its communicator (comm_rank); the [rankK]: prefix
    // or the path gives the global rank when present.
    const std::string* bus = ev.Field("bus_id");
    const std::string* dev = ev.Field("cuda_dev");
    if (bus) {
      int64_t comm_rank = -1, nranks = -1, d = -1;
      if (const std::string* cr = ev.Field("comm_rank")) (void)ParseInt64(*cr, &comm_rank);
      if (const std::string* nr = ev.Field("nranks")) (void)ParseInt64(*nr, &nranks);
      if (dev) (void)ParseInt64(*dev, &d);
      if (d < 0) d = ev.local_rank;
      bool global = ev.rank >= 0;
      int64_t rank = global ? ev.rank : comm_rank;
      if (rank >= 0) {
        bool dup = false;
        for (const DeviceLink& l : result.devices) {
          if (l.rank == rank && l.host == ev.host && l.bus_id == *bus && l.nranks == nranks && l.global == global) {
            dup = true;
          }
        }
        if (!dup && result.devices.size() < 1'000'000) {
          result.devices.push_back({ev.host, rank, d, *bus, nranks, global});
        }
      }
    }
    if (ev.pid >= 0 && ev.rank >= 0 && !ev.host.empty()) {
      bool dup = false;
      for (const PidLink& l : result.pids) {
        if (l.pid == ev.pid && l.host == ev.host) dup = true;
      }
      if (!dup && result.pids.size() < 1'000'000) result.pids.push_back({ev.host, ev.pid, ev.rank});
    }
    if (const std::string* comm = ev.Field("comm_id");
        comm && ev.time_us != kNoTime && ev.text.find("Init COMPLETE") != std::string::npos) {
      result.sync_points.push_back({StrCat("nccl-init:", *comm), ev.host, ev.rank, ev.time_us});
    }
    if (si.role == SignalRole::Progress) {
      KeepProgress(st, ev);
      return;
    }
    if (si.role == SignalRole::Metric) {
      KeepMetric(ev);
    }
    st.keeper.Add(std::move(ev), result.dropped);
  }

  void KeepProgress(SourceState& st, const Evidence& ev) {
    int64_t rank = ev.rank >= 0 ? ev.rank : -1;
    RankSummary& r = result.ranks[rank];
    r.rank = rank;
    if (r.host.empty()) r.host = ev.host;
    ++r.progress_lines;
    int64_t step = -1;
    if (const std::string* s = ev.Field("step")) (void)ParseInt64(*s, &step);
    if (step >= 0) r.last_step = std::max(r.last_step, step);
    double step_time = -1;
    for (const char* key : {"step_time_ms", "elapsed_ms"}) {
      double d;
      if (const std::string* s = ev.Field(key); s && ParseDouble(*s, &d)) step_time = d / 1000.0;
    }
    if (const std::string* s = ev.Field("step_time_s")) {
      double d;
      if (ParseDouble(*s, &d)) step_time = d;
    }
    if (ev.time_us != kNoTime) {
      if (r.first_progress_us == kNoTime || ev.time_us < r.first_progress_us) r.first_progress_us = ev.time_us;
      int64_t& last = st.rank_last_progress_us[rank];
      if (step_time < 0 && last != 0 && ev.time_us > last) step_time = (ev.time_us - last) / 1e6;
      last = ev.time_us;
      r.last_progress_us = std::max(r.last_progress_us, ev.time_us);
    }
    if (step_time >= 0) AddStepTime(r, step_time, StepSampleKey(ev.line, step, step_time));
    // The last progress line of each rank stays as evidence (hang reports).
    auto& last_ev = last_progress_[rank];
    last_ev = ev;
  }

  void KeepMetric(const Evidence& ev) {
    double v;
    const std::string* val = ev.Field("value");
    if (!val || !ParseDouble(*val, &v)) return;
    std::string key = rs->rule(ev.rule)->id()->str();
    if (const std::string* m = ev.Field("metric")) StrAppend(&key, ":", *m);
    auto& series = result.metrics[key];
    MetricPoint mp;
    mp.rank = ev.rank;
    if (const std::string* s = ev.Field("step")) (void)ParseInt64(*s, &mp.step);
    mp.time_us = ev.time_us;
    mp.value = v;
    mp.rule = ev.rule;
    series.push_back(mp);
    constexpr size_t kMaxSeries = 200'000;
    if (series.size() > kMaxSeries) {
      // Halve the resolution, keeping the newest point.
      std::vector<MetricPoint> half;
      half.reserve(series.size() / 2 + 1);
      for (size_t i = 0; i < series.size(); i += 2) half.push_back(series[i]);
      if (half.back().step != series.back().step) half.push_back(series.back());
      series.swap(half);
    }
  }

  void EndSource(SourceState& st) { st.keeper.TakeInto(result.evidence); }

  std::map<int64_t, Evidence> last_progress_;
  // Set when a cancelled RunTasks stops merging: workers drop what they would
  // push instead of waiting for room in a queue nobody drains any more.
  std::atomic<bool> abandon_{false};

  // Work items for ScanPaths.
  struct Task {
    uint32_t source = 0;
    std::string path;               // whole-file task when source_ptr is null
    std::shared_ptr<Source> shared;  // chunk of a large mapped file
    uint64_t begin = 0, end = 0;
    bool last_chunk = true;
    // Results (in order) and completion.
    std::mutex mu;
    std::condition_variable cv;
    std::deque<ChunkOut> outs;
    bool done = false;
  };

  absl::Status RunTasks(std::vector<std::unique_ptr<Task>>& tasks, uint64_t total_bytes);
  void RunTask(Task& t, hs_scratch_t*& scratch, std::vector<HsCtx::Hit>& hits);
  LineFormat Detect(std::string_view head) const { return DetectLineFormat(head); }
};

void Scanner::Impl::RunTask(Task& t, hs_scratch_t*& scratch, std::vector<HsCtx::Hit>& hits) {
  SourceState& st = *states[t.source];
  auto push = [&](ChunkOut&& out) {
    std::unique_lock<std::mutex> lock(t.mu);
    // Bounded: a stream ahead of the merge point waits.
    t.cv.wait(lock, [&] { return t.outs.size() < 4 || abandon_.load(); });
    if (abandon_.load()) return;
    t.outs.push_back(std::move(out));
    t.cv.notify_all();
  };
  auto finish = [&] {
    std::lock_guard<std::mutex> lock(t.mu);
    t.done = true;
    t.cv.notify_all();
  };
  auto cancelled = [&] {
    return abandon_.load(std::memory_order_relaxed) || (opts.cancel && opts.cancel->load(std::memory_order_relaxed));
  };
  auto fresh_scratch = [&] {
    // A fault unwound out of hs_scan: its scratch is left marked in use, and
    // hs_scan and hs_free_scratch both refuse it from then on.
    if (ReleaseFaultedScratch(scratch)) return;
    // Unknown scratch layout: a new one; the old one cannot be freed (a
    // bounded leak, once per fault, only with an unknown Hyperscan).
    hs_scratch_t* s = nullptr;
    if (hs_alloc_scratch(rs->database(), &s) == HS_SUCCESS) scratch = s;
  };

  if (t.shared) {
    // This task's reference to the mapping moves here, so the worker that
    // scans a file's last outstanding chunk unmaps it (the matched lines are
    // copied out by then), in parallel with the merge, rather than the
    // merging thread, where munmap of a large file was serial time. The
    // merging thread reads t.shared only after `finish` below.
    std::shared_ptr<Source> mapping = std::move(t.shared);
    ChunkOut out;
    std::string_view all = mapping->mapped();
    const char* base = all.data() + t.begin;
    size_t len = t.end - t.begin;
    bool join = false;
    if (st.format.joins() &&
        !GuardedRead(all.data(), all.size(),
                     [&] { join = HasPartial(st.format, std::string_view(base, len)); })) {
      join = false;  // the scan below meets the same fault and reports it
    }
    if (st.format.json || join) {
      // JSON lines match on their messages (escaped quotes, \uXXXX), as a
      // whole-file task does, not on the raw records.
      std::string copy;
      if (GuardedRead(all.data(), all.size(), [&] { CopyOut(copy, base, len); })) {
        ProcessBuffer(st, scratch, hits, copy.data(), copy.size(), t.begin, out);
      } else {
        out.error = StrCat(mapping->name(), ": the file shrank or vanished while it was being "
                                 "read (truncated under the mapping); evidence after offset ",
                                 t.begin, " is lost");
        out.error_code = -3;
      }
      push(std::move(out));
      finish();
      return;
    }
    bool ok = GuardedRead(all.data(), all.size(), [&] {
      PhaseA(*rs, scratch, base, len, t.begin, out, hits, t.begin);
    });
    if (!ok) {
      fresh_scratch();
      out = ChunkOut();
      out.error = StrCat(mapping->name(), ": the file shrank or vanished while it was being "
                               "read (truncated under the mapping); evidence after offset ",
                               t.begin, " is lost");
      out.error_code = -3;
    } else {
      PhaseB(st, out);
    }
    push(std::move(out));
    finish();
    return;
  }

  auto src = OpenSource(t.path, opts.limits);
  if (!src.ok()) {
    ChunkOut out;
    out.error = std::string(src.status().message());
    push(std::move(out));
    finish();
    return;
  }
  Source& s = **src;
  if (s.kind() == SourceKind::kMapped) {
    std::string_view all = s.mapped();
    ChunkOut out;
    // JSON messages and joined CRI records are scanned from a copy
    // (ProcessBuffer); only a plain file is scanned in place.
    bool derived = st.format.json;
    bool ok = GuardedRead(all.data(), all.size(), [&] {
      if (!derived && st.format.joins()) derived = HasPartial(st.format, all);
      if (!derived) PhaseA(*rs, scratch, all.data(), all.size(), 0, out, hits);
    });
    if (!ok) {
      fresh_scratch();
      out = ChunkOut();
      out.error = StrCat(t.path, ": the file shrank or vanished while it was being read "
                               "(truncated under the mapping)");
    } else if (derived) {
      std::string copy;
      bool ok2 = GuardedRead(all.data(), all.size(), [&] { CopyOut(copy, all.data(), all.size()); });
      if (ok2) {
        ProcessBuffer(st, scratch, hits, copy.data(), copy.size(), 0, out);
      } else {
        out.error = StrCat(t.path, ": the file shrank while it was being read");
      }
    } else {
      PhaseB(st, out);
    }
    push(std::move(out));
    finish();
    return;
  }
  // A stream: read big blocks, scan whole lines, carry the rest.
  std::string buf;
  buf.resize(kStreamBuffer);
  size_t have = 0;
  uint64_t offset = 0;
  bool eof = false;
  while (!eof && !cancelled()) {
    if (buf.size() - have < (1 << 20)) buf.resize(buf.size() * 2);
    auto n = s.Read(buf.data() + have, buf.size() - have);
    if (!n.ok()) {
      // Scan what arrived before the error, then report it.
      ChunkOut out;
      if (have > 0) ProcessBuffer(st, scratch, hits, buf.data(), have, offset, out);
      out.error = std::string(n.status().message());
      push(std::move(out));
      break;
    }
    if (*n == 0) eof = true;
    have += *n;
    size_t cut = have;
    if (offset == 0 && !st.format.json && !st.format.joins()) {
      st.format = Detect(std::string_view(buf.data(), std::min<size_t>(have, 64 << 10)));
    }
    if (!eof) {
      const void* nl = memrchr(buf.data(), '\n', have);
      if (nl) {
        cut = static_cast<size_t>(static_cast<const char*>(nl) - buf.data()) + 1;
        // A run of CRI partial or wrapped lines waits for the line ending it.
        if (st.format.joins()) cut = CutBack(st.format, std::string_view(buf.data(), have), cut);
        if (cut == 0 && have < kMaxStreamLine) continue;
        if (cut == 0) cut = have;
      } else if (have < kMaxStreamLine) {
        continue;  // a line longer than the buffer: read more
      }
      if (cut < have && have - cut < (1 << 20) && cut < (4u << 20)) {
        // Too little to be worth a scan yet.
        if (have < kStreamBuffer / 2) continue;
      }
    }
    if (cut == 0) continue;
    ChunkOut out;
    ProcessBuffer(st, scratch, hits, buf.data(), cut, offset, out);
    push(std::move(out));
    offset += cut;
    std::memmove(buf.data(), buf.data() + cut, have - cut);
    have -= cut;
  }
  finish();
}

absl::Status Scanner::Impl::RunTasks(std::vector<std::unique_ptr<Task>>& tasks,
                                     uint64_t total_bytes) {
  unsigned nthreads = opts.threads ? opts.threads : std::max(1u, std::thread::hardware_concurrency());
  std::atomic<size_t> next{0};
  std::atomic<size_t> merged{0};
  std::mutex window_mu;
  std::condition_variable window_cv;
  const size_t window = 2 * nthreads + 2;
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
      std::vector<HsCtx::Hit> hits;
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
    SourceState& st = *states[t.source];
    while (true) {
      std::unique_lock<std::mutex> lock(t.mu);
      t.cv.wait_for(lock, std::chrono::milliseconds(100),
                    [&] { return !t.outs.empty() || t.done; });
      if (scratch_fail.load() && t.outs.empty() && !t.done) {
        lock.unlock();
        wake([&] { stop = true; });
        for (auto& th : workers) th.join();
        return absl::ResourceExhaustedError("cannot allocate Hyperscan scratch");
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
      done_bytes += out.edge.bytes;
      Merge(st, out);
      if (opts.on_progress && !opts.on_progress(done_bytes, total_bytes)) {
        cancelled = true;
      }
      if (cancelled && opts.cancel == nullptr) {
        // No shared flag to stop the workers: stop issuing new tasks.
      }
    }
    if (t.last_chunk) EndSource(st);
    t.shared.reset();  // a task that never ran (cancelled) still holds its mapping
    wake([&] { merged = i + 1; });
    if (cancelled || (opts.cancel && opts.cancel->load())) {
      cancelled = true;
      wake([&] { stop = true; });
      // Drain: let running tasks finish so no worker blocks on a full queue.
      for (size_t k = i + 1; k < tasks.size(); ++k) {
        std::lock_guard<std::mutex> lock(tasks[k]->mu);
        tasks[k]->outs.clear();
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
      tp->cv.notify_all();
    }
  }
  wake([&] { stop = true; });
  for (auto& th : workers) th.join();
  abandon_ = false;
  if (cancelled) return absl::CancelledError("scan cancelled");
  return absl::OkStatus();
}

Scanner::Scanner(std::shared_ptr<const Ruleset> rules, ScanOptions opts)
    : impl_(std::make_unique<Impl>()) {
  impl_->rs = std::move(rules);
  impl_->opts = std::move(opts);
  impl_->tctx.tz_offset_s = impl_->opts.tz_offset_s;
}

Scanner::~Scanner() = default;

absl::Status Scanner::ScanPaths(const std::vector<std::string>& paths) {
  Impl& m = *impl_;
  std::vector<std::unique_ptr<Impl::Task>> tasks;
  uint64_t total = 0;
  for (const std::string& path : paths) {
    std::vector<SkippedPath> skipped;
    auto files = ExpandPath(path, &skipped);
    if (!files.ok()) {
      uint32_t src = m.NewSource(path, 0);
      m.Fail(src, std::string(files.status().message()), -3);
      continue;
    }
    // Entries a directory walk could not read are input errors; second names
    // of one file (hard links, symlinks) and special files are passed over.
    for (const SkippedPath& sk : skipped) {
      absl::StatusCode c = sk.reason.code();
      if (c == absl::StatusCode::kAlreadyExists || c == absl::StatusCode::kFailedPrecondition) continue;
      m.result.errors.push_back({sk.path, std::string(sk.reason.message()), -3});
    }
    for (const std::string& f : *files) {
      struct stat stt {};
      bool is_reg = f != "-" && ::stat(f.c_str(), &stt) == 0 && S_ISREG(stt.st_mode);
      uint32_t src = m.NewSource(f, is_reg ? stt.st_mtime : 0);
      bool compressed = f.ends_with(".gz") || f.ends_with(".zst");
      if (is_reg && !compressed && static_cast<size_t>(stt.st_size) > m.opts.chunk_bytes) {
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
        // Line-aligned chunk boundaries (read under the guard).
        std::vector<uint64_t> cuts{0};
        std::string head;
        bool ok = GuardedRead(all.data(), all.size(), [&] {
          CopyOut(head, all.data(), std::min<size_t>(all.size(), 64 << 10));
        });
        if (ok) m.states[src]->format = m.Detect(head);
        const LineFormat fmt = m.states[src]->format;
        ok = ok && GuardedRead(all.data(), all.size(), [&] {
          uint64_t pos = 0;
          while (all.size() - pos > m.opts.chunk_bytes) {
            uint64_t nominal = pos + m.opts.chunk_bytes;
            const void* nl = std::memchr(all.data() + nominal, '\n', all.size() - nominal);
            if (!nl) break;
            pos = static_cast<uint64_t>(static_cast<const char*>(nl) - all.data()) + 1;
            // Never inside a run of CRI partial or wrapped lines.
            if (fmt.joins()) pos = CutForward(fmt, all, pos);
            if (pos >= all.size()) break;
            cuts.push_back(pos);
          }
        });
        if (!ok) {
          m.Fail(src, StrCat(f, ": the file shrank while it was being read"), -3);
          continue;
        }
        // JSON lines are chunked too: each chunk extracts its own messages.
        cuts.push_back(all.size());
        for (size_t k = 0; k + 1 < cuts.size(); ++k) {
          auto t = std::make_unique<Impl::Task>();
          t->source = src;
          t->shared = shared;
          t->begin = cuts[k];
          t->end = cuts[k + 1];
          t->last_chunk = k + 2 == cuts.size();
          tasks.push_back(std::move(t));
        }
      } else {
        if (is_reg && !compressed) {
          // Detect the format from the head, cheaply.
          int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
          if (fd >= 0) {
            char head[4096];
            ssize_t n = ::read(fd, head, sizeof head);
            ::close(fd);
            if (n > 0) m.states[src]->format = m.Detect(std::string_view(head, n));
          }
          total += stt.st_size;
        }
        auto t = std::make_unique<Impl::Task>();
        t->source = src;
        t->path = f;
        tasks.push_back(std::move(t));
      }
    }
  }
  return m.RunTasks(tasks, total);
}

absl::Status Scanner::ScanRange(const std::string& path, uint64_t begin, uint64_t end,
                                uint64_t first_line) {
  Impl& m = *impl_;
  struct stat stt {};
  int64_t mtime = ::stat(path.c_str(), &stt) == 0 ? stt.st_mtime : 0;
  uint32_t src = m.NewSource(path, mtime);
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
  st.format = m.Detect(head);
  if (st.format.joins()) {
    // Both ends move past a run of CRI partial or wrapped lines, as every
    // range of the same file does: the run belongs to the range holding its
    // first line.
    uint64_t old_begin = begin;
    ok = GuardedRead(all.data(), all.size(), [&] {
      begin = CutForward(st.format, all, begin);
      if (end < all.size()) end = CutForward(st.format, all, end);
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
  uint64_t pos = begin;
  while (pos < end) {
    uint64_t stop = std::min(end, pos + m.opts.chunk_bytes);
    if (stop < end) {
      bool ok2 = GuardedRead(all.data(), all.size(), [&] {
        const void* nl = std::memchr(all.data() + stop, '\n', end - stop);
        stop = nl ? static_cast<uint64_t>(static_cast<const char*>(nl) - all.data()) + 1 : end;
        if (st.format.joins()) stop = std::min<uint64_t>(end, CutForward(st.format, all, stop));
      });
      if (!ok2) break;
    }
    auto t = std::make_unique<Impl::Task>();
    t->source = src;
    t->shared = shared;
    t->begin = pos;
    t->end = stop;
    t->last_chunk = stop >= end;
    tasks.push_back(std::move(t));
    pos = stop;
  }
  if (tasks.empty()) {
    m.EndSource(st);
    return absl::OkStatus();
  }
  FL_RETURN_IF_ERROR(m.RunTasks(tasks, end - begin));
  // Lines of this range only.
  m.result.sources[src].lines -= std::min(m.result.sources[src].lines, lines_before);
  return absl::OkStatus();
}

uint32_t Scanner::OpenStream(const std::string& name) {
  Impl& m = *impl_;
  auto ps = std::make_unique<Impl::PushStream>();
  ps->source = m.NewSource(name, 0);
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

absl::Status Scanner::FlushStream(uint32_t stream) {
  Impl& m = *impl_;
  if (stream >= m.streams.size() || m.streams[stream]->closed) {
    return absl::InvalidArgumentError(StrCat("stream ", stream, " is not open"));
  }
  Impl::PushStream& ps = *m.streams[stream];
  if (!m.main_scratch) {
    FL_ASSIGN_OR_RETURN(m.main_scratch, m.rs->AllocScratch());
  }
  Impl::SourceState& st = *m.states[ps.source];
  size_t nl = ps.buf.rfind('\n');
  size_t cut = nl == std::string::npos ? 0 : nl + 1;
  if (ps.offset == 0 && cut > 0) {
    st.format = DetectLineFormat(std::string_view(ps.buf).substr(0, std::min<size_t>(cut, 64 << 10)));
  }
  // A run of CRI partial or wrapped lines waits for the line that ends it
  // (the stream's close scans whatever is left).
  if (st.format.joins() && cut > 0) cut = CutBack(st.format, ps.buf, cut);
  if (cut == 0 && ps.buf.size() >= kMaxStreamLine) cut = ps.buf.size();
  if (cut == 0) return absl::OkStatus();
  ChunkOut out;
  m.ProcessBuffer(st, m.main_scratch.get(), m.main_hits, ps.buf.data(), cut, ps.offset, out);
  m.Merge(st, out);
  ps.offset += cut;
  ps.buf.erase(0, cut);
  return absl::OkStatus();
}

absl::Status Scanner::CloseStream(uint32_t stream) {
  Impl& m = *impl_;
  if (stream >= m.streams.size() || m.streams[stream]->closed) {
    return absl::InvalidArgumentError(StrCat("stream ", stream, " is not open"));
  }
  Impl::PushStream& ps = *m.streams[stream];
  if (!m.main_scratch) {
    FL_ASSIGN_OR_RETURN(m.main_scratch, m.rs->AllocScratch());
  }
  Impl::SourceState& st = *m.states[ps.source];
  if (!ps.buf.empty()) {
    if (ps.offset == 0) st.format = DetectLineFormat(std::string_view(ps.buf).substr(0, 64 << 10));
    ChunkOut out;
    m.ProcessBuffer(st, m.main_scratch.get(), m.main_hits, ps.buf.data(), ps.buf.size(), ps.offset,
                    out);
    m.Merge(st, out);
    ps.offset += ps.buf.size();
    ps.buf.clear();
  }
  m.EndSource(st);
  ps.closed = true;
  return absl::OkStatus();
}

const ScanResult& Scanner::partial() const { return impl_->result; }

ScanResult Scanner::Finish() {
  Impl& m = *impl_;
  for (size_t i = 0; i < m.streams.size(); ++i) {
    if (!m.streams[i]->closed) (void)CloseStream(static_cast<uint32_t>(i));
  }
  ScanResult& r = m.result;
  // Last progress line of every rank, as evidence.
  for (auto& [rank, ev] : m.last_progress_) r.evidence.push_back(std::move(ev));
  m.last_progress_.clear();
  // Global order: source, then offset.
  std::stable_sort(r.evidence.begin(), r.evidence.end(), [](const Evidence& a, const Evidence& b) {
    return a.source != b.source ? a.source < b.source : a.offset < b.offset;
  });
  FinalizeTimes(r);
  for (const SourceSummary& s : r.sources) {
    r.bytes += s.bytes;
    r.lines += s.lines;
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - m.t0).count();
  ScanResult out = std::move(r);
  m.result = ScanResult();
  return out;
}

}  // namespace faultline
