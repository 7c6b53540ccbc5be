// Phase A: one Hyperscan block-mode scan per chunk; matches de-duplicated
// per (line, signal), line bounds found, newlines counted, and the matched
// lines with a little context before them copied out of the mapping. Runs
// inside the SIGBUS guard for mapped files, so only plain loops and C calls
// run here: a fault unwinds with longjmp.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "scan/scan_impl.h"
#include "util/bytescan.h"

namespace faultline::internal {
namespace {

// -1 in each byte of the 32 at p that is a newline, 0 elsewhere.
__attribute__((target("avx2"))) inline __m256i NewlineMask(const char* p, __m256i nl) {
  return _mm256_cmpeq_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), nl);
}

// Newlines 128 bytes at a time: the compares give -1 a newline byte, taken
// from per-byte counters that psadbw sums every 252 blocks of 32, before
// they can wrap (four compares, three adds and a subtract for 128 bytes:
// the chunk's second pass over its bytes, after hs_scan, costs little more
// than reading them).
// Past the last whole 32 bytes, the final 32 are read once more and the
// newlines already counted masked off, not counted byte by byte.
__attribute__((target("avx2,popcnt"))) uint64_t CountNewlinesAvx2(const char* p, size_t n) {
  uint64_t count = 0;
  size_t i = 0;
  const __m256i nl = _mm256_set1_epi8('\n');
  while (i + 32 <= n) {
    __m256i acc = _mm256_setzero_si256();
    const size_t blocks = std::min<size_t>((n - i) / 32, 252);
    size_t b = 0;
    for (; b + 4 <= blocks; b += 4, i += 128) {
      acc = _mm256_sub_epi8(acc, _mm256_add_epi8(_mm256_add_epi8(NewlineMask(p + i, nl), NewlineMask(p + i + 32, nl)),
                                                 _mm256_add_epi8(NewlineMask(p + i + 64, nl), NewlineMask(p + i + 96, nl))));
    }
    for (; b < blocks; ++b, i += 32) acc = _mm256_sub_epi8(acc, NewlineMask(p + i, nl));
    const __m256i sums = _mm256_sad_epu8(acc, _mm256_setzero_si256());
    count += static_cast<uint64_t>(_mm256_extract_epi64(sums, 0)) + static_cast<uint64_t>(_mm256_extract_epi64(sums, 1)) +
             static_cast<uint64_t>(_mm256_extract_epi64(sums, 2)) + static_cast<uint64_t>(_mm256_extract_epi64(sums, 3));
  }
  if (i < n && n >= 32) {
    const auto last = static_cast<unsigned>(_mm256_movemask_epi8(NewlineMask(p + n - 32, nl)));
    return count + static_cast<uint64_t>(__builtin_popcount(last >> (32 - (n - i))));
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
      const char* p = LastNewline(c->base, start);
      start = p ? static_cast<uint64_t>(p - c->base) + 1 : 0;
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

}  // namespace

uint64_t CountNewlines(const char* p, size_t n) {
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
  return avx2 ? CountNewlinesAvx2(p, n) : CountNewlinesPlain(p, n);
}

namespace {

// The newlines of base[0, x), given `known` of them in base[0, counted_to)
// (counted_to <= x): counted on from counted_to, or, with the chunk's index,
// from the start of x's block when that is nearer (a sparse log's matched
// lines are blocks apart: the bytes read are those of x's block before x,
// not every byte of the chunk a second time).
uint64_t NewlinesBefore(const char* base, uint64_t x, uint64_t counted_to, uint64_t known,
                        const NewlineIndex* index) {
  if (index != nullptr) {
    const uint64_t block = x / NewlineIndex::kBlock * NewlineIndex::kBlock;
    if (counted_to < block) return index->before[x / NewlineIndex::kBlock] + CountNewlines(base + block, x - block);
  }
  return known + CountNewlines(base + counted_to, x - counted_to);
}

bool HitLess(const HsCtx::Hit& a, const HsCtx::Hit& b) {
  return a.line_start != b.line_start ? a.line_start < b.line_start
         : a.id != b.id              ? a.id < b.id
                                     : a.to < b.to;
}

// Hits by line, then signal, then end. Hyperscan reports a scan's matches
// by end offset, so the lines come in order already and only each line's
// few hits need sorting (a sort of the whole vector cost ~450 instructions
// a match on a dense log); when they do not (windows of a huge chunk), the
// whole vector is sorted. Either way the order is HitLess's, which leaves
// only identical hits unordered.
void SortHits(std::vector<HsCtx::Hit>& hits) {
  for (size_t i = 1; i < hits.size(); ++i) {
    if (hits[i].line_start < hits[i - 1].line_start) {
      std::sort(hits.begin(), hits.end(), HitLess);
      return;
    }
  }
  for (size_t i = 0; i < hits.size();) {
    size_t end = i + 1;
    while (end < hits.size() && hits[end].line_start == hits[i].line_start) ++end;
    if (end - i > 1) {
      std::sort(hits.begin() + static_cast<std::ptrdiff_t>(i), hits.begin() + static_cast<std::ptrdiff_t>(end),
                HitLess);
    }
    i = end;
  }
}

// Where the context copied before a matched line starts: kContextBefore
// back at most, and not before the end of the previous matched line of the
// chunk (`prev_end`; phase B chains through it), so the copies add up to at
// most the chunk, not 8 KiB per match of a match storm.
struct BeforeSpan {
  uint64_t start;
  bool reaches_prev;
};
BeforeSpan BeforeStart(uint64_t ls, uint64_t prev_end, bool first) {
  const uint64_t start = ls > kContextBefore ? ls - kContextBefore : 0;
  if (!first && start <= prev_end) return {std::min(prev_end, ls), true};
  return {start, false};
}

// Reserves the chunk's pending lines, their ids and the bytes their lines
// and contexts take (so no copy out of the mapping reallocates), with room
// for the next line of a hit whose signal takes it (detail_next_line).
void ReservePending(const Ruleset& rs, const std::vector<HsCtx::Hit>& hits, bool copy_before, ChunkOut& out) {
  size_t lines = 0, bytes = 0;
  uint64_t prev_end = 0;
  for (size_t i = 0; i < hits.size(); ++i) {
    if (rs.signal(hits[i].id).detail_next_line) bytes += kMaxEvidenceText;
    if (i > 0 && hits[i].line_start == hits[i - 1].line_start) continue;
    const uint64_t ls = hits[i].line_start, le = hits[i].line_end;
    if (copy_before) bytes += ls - BeforeStart(ls, prev_end, lines == 0).start;
    bytes += std::min<uint64_t>(le - ls, kConfirmWindow);
    ++lines;
    prev_end = le + 1;
  }
  out.pending.reserve(out.pending.size() + lines);
  out.pending_ids.reserve(out.pending_ids.size() + hits.size());
  out.pending_text.reserve(out.pending_text.size() + bytes);
}

// Whether one of the `n` signals `ids` takes the next line as its evidence.
bool WantsNextLine(const Ruleset& rs, const uint32_t* ids, size_t n) {
  return std::any_of(ids, ids + n, [&](uint32_t id) { return rs.signal(id).detail_next_line; });
}

// The line after the one ending at `le` of [base, base+len), when the chunk
// holds one, copied into `out` for pending line `p` (room reserved).
void CopyNextLine(const char* base, size_t len, uint64_t le, uint64_t abs_offset, ChunkOut& out,
                  Pending& p) {
  if (le + 1 >= len) return;
  const uint64_t start = le + 1;
  const void* e = std::memchr(base + start, '\n', len - start);
  const uint64_t end = e ? static_cast<uint64_t>(static_cast<const char*>(e) - base) : len;
  p.has_next = true;
  p.next_at = out.pending_text.size();
  p.next_len = std::min<uint64_t>(end - start, kMaxEvidenceText);
  out.pending_text.append(base + start, p.next_len);
  p.next_offset = abs_offset + start;
  p.next_line_rel = p.line_rel + 1;
}

// Whether one of the `n` signals `ids` takes the exception line after a
// traceback's header as its evidence.
bool WantsExceptionLine(const Ruleset& rs, const uint32_t* ids, size_t n) {
  return std::any_of(ids, ids + n, [&](uint32_t id) { return rs.signal(id).detail_exception_line; });
}

// Whether one of the `n` signals `ids` may take the line above as its
// evidence (detail_line_above).
bool WantsLineAbove(const Ruleset& rs, const uint32_t* ids, size_t n) {
  return std::any_of(ids, ids + n, [&](uint32_t id) { return rs.signal(id).detail_line_above; });
}

// Where the line above the one starting at `ls` (> 0) of the chunk at
// `base` starts.
uint64_t LineAboveStart(const char* base, uint64_t ls) {
  const char* nl = ls >= 2 ? LastNewline(base, ls - 1) : nullptr;
  return nl ? static_cast<uint64_t>(nl - base) + 1 : 0;
}

// The line above the one starting at `ls` of the chunk at `base`, when the
// chunk holds one, copied into pending line `p`'s Extra().above.
void CopyLineAbove(const char* base, uint64_t ls, Pending& p) {
  if (ls == 0 || !p.Extra().above.empty()) return;
  const uint64_t a = LineAboveStart(base, ls);
  if (ls - a > kMaxEvidenceText) return;  // no message a crash report's line above would be
  p.MakeExtra().above.assign(base + a, ls - a);
}

// For pending line `p` (the header, [ls, le) of [base, base+len)): the line
// above it and the lines after it, up to kTracebackWindow bytes of whole
// lines in the chunk and the `readable_after` bytes after it, with where
// each starts. A stream's cut waits for a traceback to end (StreamCut).
void CopyTracebackAround(const char* base, size_t len, size_t readable_after, uint64_t ls, uint64_t le,
                         uint64_t abs_offset, Pending& p) {
  len += readable_after;
  PendingExtra& x = p.MakeExtra();
  if (ls > 0) {
    const uint64_t a = LineAboveStart(base, ls);
    x.above.assign(base + a, ls - a);
  }
  if (le + 1 >= len) return;
  const uint64_t start = le + 1;
  x.after.assign(base + start, std::min<uint64_t>(len - start, kTracebackWindow));
  // The source's or chunk's last line is whole (chunks end at a line's end).
  if (start + x.after.size() == len && x.after.back() != '\n') x.after.push_back('\n');
  for (size_t at = 0, j = 1; at < x.after.size(); ++j) {
    x.after_lines.emplace_back(abs_offset + start + at, p.line_rel + j);
    size_t nl = x.after.find('\n', at);
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
}

}  // namespace

void PhaseA(const Ruleset& rs, hs_scratch_t* scratch, const char* base, size_t len,
            uint64_t abs_offset, ChunkOut& out, std::vector<HsCtx::Hit>& hits,
            size_t readable_before, bool fold_tracebacks, size_t readable_after,
            const NewlineIndex* newlines) {
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
      const char* p = LastNewline(base, done);
      true_start = p ? static_cast<uint64_t>(p - base) + 1 : 0;
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
  SortHits(hits);
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
  const bool indexed = newlines != nullptr && newlines->complete && newlines->bytes == len &&
                       newlines->before.size() == len / NewlineIndex::kBlock + 1;
  ReservePending(rs, hits, !out.lazy_context, out);
  if (out.lazy_context) out.context_base = base;
  const size_t first_pending = out.pending.size();
  for (size_t i = 0; i < hits.size();) {
    uint64_t ls = hits[i].line_start, le = hits[i].line_end;
    Pending& p = out.pending.emplace_back();
    p.offset = abs_offset + ls;
    lines_before = NewlinesBefore(base, ls, counted_to, lines_before, indexed ? newlines : nullptr);
    counted_to = ls;
    p.line_rel = lines_before;
    size_t first = i;
    p.ids_at = static_cast<uint32_t>(out.pending_ids.size());
    for (; i < hits.size() && hits[i].line_start == ls; ++i) out.pending_ids.push_back(hits[i].id);
    p.ids_n = static_cast<uint32_t>(i - first);
    size_t line_len = le - ls;
    if (line_len > kConfirmWindow) {
      // A huge line: RE2 confirms each signal on a window that ends a little
      // past where Hyperscan saw its match end, not on the line's head,
      // which may be gigabytes before it.
      std::vector<std::string>& windows = p.MakeExtra().windows;
      windows.resize(i - first);
      for (size_t k = first; k < i; ++k) {
        uint64_t wend = std::min<uint64_t>(le, hits[k].to + kWindowAfterMatch);
        uint64_t wstart = wend - ls > kConfirmWindow ? wend - kConfirmWindow : ls;
        CopyOut(windows[k - first], base + wstart, wend - wstart);
      }
      line_len = kConfirmWindow;
    }
    // Context for inherited times (BeforeStart), then the line.
    const bool first_line = out.pending.size() == first_pending + 1;
    const BeforeSpan b = BeforeStart(ls, prev_end, first_line);
    p.before_len = ls - b.start;
    if (out.lazy_context) {
      p.before_at = b.start;
    } else {
      p.before_at = out.pending_text.size();
      out.pending_text.append(base + b.start, p.before_len);
    }
    p.before_reaches_chunk_start = b.start == 0 && first_line;
    p.before_reaches_prev = b.reaches_prev;
    p.line_at = out.pending_text.size();
    p.line_len = line_len;
    out.pending_text.append(base + ls, line_len);
    if (fold_tracebacks && MayEndTraceback(out.LineOf(p))) {
      uint64_t avail = ls + readable_before;
      size_t w = static_cast<size_t>(std::min<uint64_t>(avail, kTracebackWindow));
      p.tb_candidate = true;
      // Short of the window and not at the source's start: a stream chunk.
      p.tb_at_start = abs_offset + ls == w;
      p.tb_cut = w < kTracebackWindow && !p.tb_at_start;
      const char* wstart = base + ls - w;  // may reach before base (readable_before)
      CopyOut(p.MakeExtra().tb_window, wstart, w);
    }
    if (WantsNextLine(rs, out.IdsOf(p), p.ids_n)) CopyNextLine(base, len, le, abs_offset, out, p);
    if (WantsExceptionLine(rs, out.IdsOf(p), p.ids_n)) {
      CopyTracebackAround(base, len, readable_after, ls, le, abs_offset, p);
    }
    if (WantsLineAbove(rs, out.IdsOf(p), p.ids_n)) CopyLineAbove(base, ls, p);
    prev_end = le + 1;
  }
  // One pass over the chunk: the newlines before the last matched line were
  // counted above (or all of them, with the escape test).
  out.newlines = indexed ? newlines->total : lines_before + CountNewlines(base + counted_to, len - counted_to);
}


// Hyperscan's (and Vectorscan's) hs_scratch starts with its magic number
// (u32) and the in-use byte; hs_scan re-initialises the rest of it on every
// call. Anything else means a layout we do not know: the scratch is left
// alone.
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


}  // namespace faultline::internal
