// Finding where a few short words may start in a line, 16 bytes at a time:
// the per-line scans of every matched line (rank markers, traceback ends)
// looked at each byte in turn, ~10 instructions a byte on a dense log.
//
// Thread-safety: pure functions.
#ifndef FAULTLINE_UTIL_BYTESCAN_H_
#define FAULTLINE_UTIL_BYTESCAN_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace faultline {

// The first two bytes of a word looked for.
struct BytePair {
  char first, second;
};

// Calls f(i), in increasing order, for every i in [begin, s.size() - 1)
// where s[i], s[i+1] are one of `kPairs`; stops when f returns true. With
// `kFoldCase` a byte is compared with ASCII bit 0x20 set, so pairs of
// lowercase letters also find their uppercase forms (and nothing else).
// Every start of a word of two or more bytes beginning with a pair is
// visited; f checks the rest of the word.
// The pairs are template arguments, so the test of each 16 bytes unrolls.
template <bool kFoldCase, BytePair... kPairs, typename F>
void ForEachPairStart(std::string_view s, size_t begin, F&& f) {
  const size_t n = s.size();
  constexpr char kFold = kFoldCase ? 0x20 : 0;
  size_t i = begin;
#if defined(__SSE2__)
  for (; i + 17 <= n; i += 16) {
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i + 1));
    if constexpr (kFoldCase) {
      a = _mm_or_si128(a, _mm_set1_epi8(kFold));
      b = _mm_or_si128(b, _mm_set1_epi8(kFold));
    }
    __m128i m = _mm_setzero_si128();
    ((m = _mm_or_si128(m, _mm_and_si128(_mm_cmpeq_epi8(a, _mm_set1_epi8(kPairs.first)),
                                        _mm_cmpeq_epi8(b, _mm_set1_epi8(kPairs.second))))),
     ...);
    for (unsigned bits = static_cast<unsigned>(_mm_movemask_epi8(m)); bits != 0; bits &= bits - 1) {
      if (f(i + static_cast<size_t>(__builtin_ctz(bits)))) return;
    }
  }
#endif
  for (; i + 1 < n; ++i) {
    const char a = static_cast<char>(s[i] | kFold), b = static_cast<char>(s[i + 1] | kFold);
    if (((a == kPairs.first && b == kPairs.second) || ...) && f(i)) return;
  }
}

#if defined(__x86_64__)
// ForEachPairStart 32 bytes at a time, on a CPU with AVX2 (the caller asks,
// ForEachPairStartFast below); the rest of the line as ForEachPairStart.
// Bit k set where a pair starts at p + k, k < 32 (reads p[0..32]).
template <bool kFoldCase, BytePair... kPairs>
__attribute__((target("avx2"), always_inline)) inline unsigned PairStarts32(const char* p) {
  constexpr char kFold = kFoldCase ? 0x20 : 0;
  __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 1));
  if constexpr (kFoldCase) {
    a = _mm256_or_si256(a, _mm256_set1_epi8(kFold));
    b = _mm256_or_si256(b, _mm256_set1_epi8(kFold));
  }
  __m256i m = _mm256_setzero_si256();
  ((m = _mm256_or_si256(m, _mm256_and_si256(_mm256_cmpeq_epi8(a, _mm256_set1_epi8(kPairs.first)),
                                            _mm256_cmpeq_epi8(b, _mm256_set1_epi8(kPairs.second))))),
   ...);
  return static_cast<unsigned>(_mm256_movemask_epi8(m));
}

// The line's last 33 bytes are read once more for the starts past the
// 32-byte steps (those already visited masked off), not byte by byte.
template <bool kFoldCase, BytePair... kPairs, typename F>
__attribute__((target("avx2"))) void ForEachPairStartAvx2(std::string_view s, size_t begin, F&& f) {
  const size_t n = s.size();
  if (begin + 33 > n) return ForEachPairStart<kFoldCase, kPairs...>(s, begin, f);
  size_t i = begin;
  for (; i + 33 <= n; i += 32) {
    for (unsigned bits = PairStarts32<kFoldCase, kPairs...>(s.data() + i); bits != 0; bits &= bits - 1) {
      if (f(i + static_cast<size_t>(__builtin_ctz(bits)))) return;
    }
  }
  const size_t last = n - 33;  // i - last is 1..32
  const uint64_t done = (uint64_t{1} << (i - last)) - 1;
  for (uint64_t bits = PairStarts32<kFoldCase, kPairs...>(s.data() + last) & ~done; bits != 0; bits &= bits - 1) {
    if (f(last + static_cast<size_t>(__builtin_ctzll(bits)))) return;
  }
}
#endif

// ForEachPairStart, with AVX2 where the CPU has it: for the scans of every
// matched line (a line of a dense log is a few hundred bytes).
template <bool kFoldCase, BytePair... kPairs, typename F>
void ForEachPairStartFast(std::string_view s, size_t begin, F&& f) {
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return ForEachPairStartAvx2<kFoldCase, kPairs...>(s, begin, f);
#endif
  ForEachPairStart<kFoldCase, kPairs...>(s, begin, f);
}

// Whether s holds only ASCII bytes other than a tab and ESC: then a line's
// display width is its length.
inline bool PlainAscii(std::string_view s) {
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i tab = _mm_set1_epi8('\t'), esc = _mm_set1_epi8('\x1b');
  for (; i + 16 <= s.size(); i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
    const __m128i bad = _mm_or_si128(v, _mm_or_si128(_mm_cmpeq_epi8(v, tab), _mm_cmpeq_epi8(v, esc)));
    if (_mm_movemask_epi8(bad) != 0) return false;
  }
#endif
  for (; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80 || c == '\t' || c == 0x1b) return false;
  }
  return true;
}

// Where `lit` starts in s at or after `from`, or npos: the leftmost
// occurrence, as s.find(lit, from). glibc's memmem sets up a 256-entry shift
// table for a needle of 32 bytes or more on every call (~600 instructions a
// call on a dense log's 240-byte lines, the hand parser's search for a long
// leading literal); this one looks for the literal's first byte that is not
// a blank with memchr and compares the literal at each candidate, and hands
// the rest of s to memmem after a few candidates fail, so a line full of
// near misses costs no more than memmem does.
inline size_t FindBytes(std::string_view s, std::string_view lit, size_t from) {
  if (from > s.size() || lit.size() > s.size() - from) return std::string_view::npos;
  if (lit.empty()) return from;
  size_t k = 0;
  while (k + 1 < lit.size() && lit[k] == ' ') ++k;
  const char* const base = s.data();
  const char* const last = base + (s.size() - lit.size());  // the last start possible
  const char* p = base + from;
  for (int misses = 0; p <= last; ++misses) {
    if (misses == 8) {
      const void* hit = memmem(p, static_cast<size_t>(last - p) + lit.size(), lit.data(), lit.size());
      return hit ? static_cast<size_t>(static_cast<const char*>(hit) - base) : std::string_view::npos;
    }
    const void* a = std::memchr(p + k, lit[k], static_cast<size_t>(last - p) + 1);
    if (a == nullptr) return std::string_view::npos;
    p = static_cast<const char*>(a) - k;
    if (std::memcmp(p, lit.data(), lit.size()) == 0) return static_cast<size_t>(p - base);
    ++p;
  }
  return std::string_view::npos;
}

// The last '\n' in [base, base+n), or nullptr: memrchr over windows of 4 KiB
// from the end. A line start is near; one memrchr over the whole prefix is
// as fast unsanitized, but the sanitizers' memrchr checks all n bytes it is
// given, so a search from each match of a large chunk was quadratic there.
inline const char* LastNewline(const char* base, size_t n) {
  constexpr size_t kWindow = 4096;
  while (n > 0) {
    const size_t w = n < kWindow ? n : kWindow;
    n -= w;
    if (const void* p = memrchr(base + n, '\n', w)) return static_cast<const char*>(p);
  }
  return nullptr;
}

}  // namespace faultline

#endif  // FAULTLINE_UTIL_BYTESCAN_H_
