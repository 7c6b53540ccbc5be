// Finding where a few short words may start in a line, 16 bytes at a time:
// the per-line scans of every matched line (rank markers, traceback ends)
// looked at each byte in turn, ~10 instructions a byte on a dense log.
//
// Thread-safety: pure functions.
#ifndef FAULTLINE_UTIL_BYTESCAN_H_
#define FAULTLINE_UTIL_BYTESCAN_H_

#include <cstddef>
#include <initializer_list>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace faultline {

// The first two bytes of a word looked for.
struct BytePair {
  char first, second;
};

// Calls f(i), in increasing order, for every i in [begin, s.size() - 1)
// where s[i], s[i+1] are one of `pairs`; stops when f returns true. With
// `fold_case` a byte is compared with ASCII bit 0x20 set, so pairs of
// lowercase letters also find their uppercase forms (and nothing else).
// Every start of a word of two or more bytes beginning with a pair is
// visited; f checks the rest of the word.
template <typename F>
void ForEachPairStart(std::string_view s, size_t begin, std::initializer_list<BytePair> pairs, bool fold_case,
                      F&& f) {
  const size_t n = s.size();
  const char fold = fold_case ? 0x20 : 0;
  size_t i = begin;
#if defined(__SSE2__)
  const __m128i fold_v = _mm_set1_epi8(fold);
  for (; i + 17 <= n; i += 16) {
    const __m128i a = _mm_or_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i)), fold_v);
    const __m128i b = _mm_or_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i + 1)), fold_v);
    __m128i m = _mm_setzero_si128();
    for (const BytePair& p : pairs) {
      m = _mm_or_si128(m, _mm_and_si128(_mm_cmpeq_epi8(a, _mm_set1_epi8(p.first)),
                                        _mm_cmpeq_epi8(b, _mm_set1_epi8(p.second))));
    }
    for (unsigned bits = static_cast<unsigned>(_mm_movemask_epi8(m)); bits != 0; bits &= bits - 1) {
      if (f(i + static_cast<size_t>(__builtin_ctz(bits)))) return;
    }
  }
#endif
  for (; i + 1 < n; ++i) {
    const char a = static_cast<char>(s[i] | fold), b = static_cast<char>(s[i + 1] | fold);
    for (const BytePair& p : pairs) {
      if (a == p.first && b == p.second) {
        if (f(i)) return;
        break;
      }
    }
  }
}

}  // namespace faultline

#endif  // FAULTLINE_UTIL_BYTESCAN_H_
