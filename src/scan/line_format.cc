#include "scan/line_format.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <vector>

#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "attribution/line_memo.h"
#include "simdjson.h"
#include "timeparse/opening.h"
#include "util/bytescan.h"

namespace faultline {
namespace {

constexpr std::string_view kMessageKeys[] = {"message", "msg", "log", "MESSAGE", "text", "event"};
constexpr std::string_view kTimeKeys[] = {"time", "timestamp", "@timestamp", "ts", "asctime",
                                          "created", "__REALTIME_TIMESTAMP", "t"};
constexpr std::string_view kRankKeys[] = {"rank", "RANK", "global_rank"};
constexpr std::string_view kHostKeys[] = {"host", "hostname", "_HOSTNAME", "node", "nodename"};
constexpr std::string_view kPidKeys[] = {"_PID", "pid"};
// Nested fields (JSON pointers) of platform exports: a GCP Cloud Logging
// LogEntry keeps the text in textPayload (or jsonPayload.message) and its
// node in labels."compute.googleapis.com/resource_name" (a container's) or
// resource.labels.node_name (a k8s_node's); fluent-bit's kubernetes filter
// (CloudWatch Container Insights) in kubernetes.host.
constexpr std::string_view kNestedMessageKeys[] = {"/textPayload", "/jsonPayload/message"};
constexpr std::string_view kNestedHostKeys[] = {"/labels/compute.googleapis.com~1resource_name",
                                                "/resource/labels/node_name", "/kubernetes/host"};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool LooksJson(std::string_view line) {
  line = Trim(line);
  return line.size() >= 2 && line.front() == '{' && line.back() == '}';
}

// Fields of one JSON line that matter here.
struct JsonFields {
  std::string message;
  bool has_message = false;
  std::optional<int64_t> time_us;
  std::optional<double> monotonic_s;
  std::optional<int64_t> rank;
  std::optional<int64_t> pid;  // the writer's: journald's _PID
  std::string host;
};

// A whole number a field holds, bare or quoted ("_PID":"1234" in journalctl
// -o json); nullopt when absent or not one.
std::optional<int64_t> WholeNumber(simdjson::dom::object& obj, std::string_view key) {
  simdjson::dom::element e;
  if (obj[key].get(e)) return std::nullopt;
  int64_t i;
  std::string_view sv;
  if (!e.get_int64().get(i)) return i;
  if (e.get_string().get(sv)) return std::nullopt;
  // Nine digits at most: the value is never read past them (a longer one
  // overflowed int64_t here, which the fuzzer found).
  if (sv.empty() || sv.size() >= 10) return std::nullopt;
  int64_t v = 0;
  for (char c : sv) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

bool ParseJsonLine(std::string_view line, const TimeContext& tctx, JsonFields& out) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(line.data(), line.size(), true).get(doc)) return false;
  simdjson::dom::object obj;
  if (doc.get_object().get(obj)) return false;
  for (std::string_view key : kMessageKeys) {
    std::string_view v;
    if (!obj[key].get_string().get(v)) {
      out.message.assign(v.data(), v.size());
      out.has_message = true;
      break;
    }
  }
  for (size_t i = 0; !out.has_message && i < std::size(kNestedMessageKeys); ++i) {
    std::string_view v;
    if (!doc.at_pointer(kNestedMessageKeys[i]).get_string().get(v)) {
      out.message.assign(v.data(), v.size());
      out.has_message = true;
    }
  }
  for (std::string_view key : kTimeKeys) {
    simdjson::dom::element e;
    if (obj[key].get(e)) continue;
    std::string_view sv;
    double d;
    if (!e.get_string().get(sv)) {
      if (key == "__REALTIME_TIMESTAMP") {
        // At most 18 digits (31,000 years of microseconds): more would
        // overflow, and is no journal's timestamp.
        int64_t us = 0;
        bool ok = !sv.empty() && sv.size() <= 18;
        for (char c : sv) {
          if (c < '0' || c > '9') ok = false;
          else if (ok) us = us * 10 + (c - '0');
        }
        if (ok) out.time_us = us;
      } else {
        out.time_us = ParseIso8601(sv, tctx);
        if (!out.time_us) {
          auto pt = ParseLineTime(sv, tctx);
          if (pt && pt->wall_us) out.time_us = pt->wall_us;
        }
      }
    } else if (!e.get_double().get(d)) {
      out.time_us = ParseEpochNumber(d);
    } else {
      int64_t i;
      if (!e.get_int64().get(i)) out.time_us = ParseEpochNumber(static_cast<double>(i));
    }
    if (out.time_us) break;
  }
  std::string_view mono;
  if (!obj["__MONOTONIC_TIMESTAMP"].get_string().get(mono)) {
    double us = 0;
    bool ok = !mono.empty() && mono.size() <= 18;  // as above: a sane uptime
    for (char c : mono) {
      if (c < '0' || c > '9') ok = false;
      else us = us * 10 + (c - '0');
    }
    if (ok) out.monotonic_s = us / 1e6;
  }
  for (std::string_view key : kRankKeys) {
    out.rank = WholeNumber(obj, key);
    if (out.rank) break;
  }
  for (std::string_view key : kPidKeys) {
    out.pid = WholeNumber(obj, key);
    if (out.pid) break;
  }
  for (std::string_view key : kHostKeys) {
    std::string_view v;
    if (!obj[key].get_string().get(v)) {
      out.host.assign(v.data(), v.size());
      break;
    }
  }
  for (size_t i = 0; out.host.empty() && i < std::size(kNestedHostKeys); ++i) {
    std::string_view v;
    if (!doc.at_pointer(kNestedHostKeys[i]).get_string().get(v)) out.host.assign(v.data(), v.size());
  }
  return true;
}

void Flatten(std::string& msg) {
  // A message is one line to the scanner: docker's trailing "\n" goes, inner
  // newlines (a traceback in one record) become spaces.
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == '\r')) msg.pop_back();
  for (char& c : msg) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (HasEscapes(msg)) msg = WithoutEscapes(msg);
}

constexpr char kEsc = '\x1b';
// rsyslog's escape of a control character (its "#033" for ESC).
constexpr std::string_view kSyslogEsc = "#033";

// The length of the escape sequence after its ESC (which `s` starts
// after): a CSI sequence (`[`, parameter bytes, intermediate bytes, a final
// byte: SGR colours `[31m`, cursor moves `[2K`), an OSC one (`]` up to BEL
// or ST: rich's and terminals' hyperlinks) or a two-byte one.
size_t EscapeLength(std::string_view s) {
  if (s.empty()) return 0;
  if (s[0] == '[') {
    size_t i = 1;
    while (i < s.size() && s[i] >= 0x20 && s[i] <= 0x3f) ++i;
    return i < s.size() && s[i] >= 0x40 && s[i] <= 0x7e ? i + 1 : i;
  }
  if (s[0] == ']') {
    for (size_t i = 1; i < s.size(); ++i) {
      if (s[i] == '\a') return i + 1;
      if (s[i] == kEsc && i + 1 < s.size() && s[i + 1] == '\\') return i + 2;
    }
    return s.size();
  }
  return 1;
}

// The reset codes that show a line's colour codes lost their ESC (a log
// pasted into an issue thread or a web page: "[36m(RayTrainWorker
// pid=3462)[0m"). Only such a line loses its bare SGR codes.
constexpr std::string_view kBareResets[] = {"[0m", "[0;0m"};
// The longest bare SGR code taken ("[1;38;5;208m" and the like).
constexpr size_t kMaxBareSgr = 16;

bool HasBareReset(std::string_view s) {
  return std::any_of(std::begin(kBareResets), std::end(kBareResets),
                     [&](std::string_view r) { return s.find(r) != std::string_view::npos; });
}

// The length of a bare SGR code at the start of `s` (`[`, digits and
// semicolons, `m`); 0 when none is there.
size_t BareSgrLength(std::string_view s) {
  if (s.empty() || s[0] != '[') return 0;
  size_t i = 1;
  while (i < s.size() && i < kMaxBareSgr && ((s[i] >= '0' && s[i] <= '9') || s[i] == ';')) ++i;
  return i > 1 && i < s.size() && s[i] == 'm' ? i + 1 : 0;
}

// The bytes of `line` from `i`, an escape's start, to its end; 0 when none
// starts there. `bare`: the line's SGR codes lost their ESC.
size_t EscapeAt(std::string_view line, size_t i, bool bare) {
  if (bare && line[i] == '[') return BareSgrLength(line.substr(i));
  if (line[i] == kEsc) return 1 + EscapeLength(line.substr(i + 1));
  if (line.substr(i, kSyslogEsc.size()) == kSyslogEsc && i + kSyslogEsc.size() < line.size() &&
      line[i + kSyslogEsc.size()] == '[') {
    return kSyslogEsc.size() + EscapeLength(line.substr(i + kSyslogEsc.size()));
  }
  return 0;
}

// Whether one of the words starts at p[j], a '#' or '[' before a '0' in
// the n bytes at p: rsyslog's "#033[" or a bare reset ("[0m", "[0;0m",
// kBareResets), compared in place (a generated log's NCCL lines hold
// "[0]": one candidate a line).
inline bool EscapeWordAfterPair(const char* p, size_t j, size_t n) {
  if (p[j] == '[') {
    return j + 2 < n && (p[j + 2] == 'm' || (p[j + 2] == ';' && j + 4 < n && p[j + 3] == '0' && p[j + 4] == 'm'));
  }
  return j + 4 < n && p[j + 2] == '3' && p[j + 3] == '3' && p[j + 4] == '[';
}

// HasEscapes of s's bytes from `begin` (a word may start at begin).
bool HasEscapesFrom(std::string_view s, size_t begin) {
  if (begin >= s.size()) return false;  // an empty mapping's data() may be null, which memchr must not get
  if (std::memchr(s.data() + begin, kEsc, s.size() - begin) != nullptr) return true;
  // rsyslog's "#033[" and the bare resets "[0m", "[0;0m" all start with a
  // '#' or '[' before a '0': one pass over the pairs (a chunk-wide find of
  // each word was 16% of a sparse log's scan), each start checked in place.
  bool found = false;
  ForEachPairStartFast<false, BytePair{'#', '0'}, BytePair{'[', '0'}>(
      s, begin, [&](size_t i) { return found = EscapeWordAfterPair(s.data(), i, s.size()); });
  return found;
}

#if defined(__x86_64__)
// -1 in each byte k of the 32 at p where p[k] is ESC, or a '#' or '['
// before a '0' (`a` holds p[0..32), `b` p[1..33)).
__attribute__((target("avx2"), always_inline)) inline __m256i EscapeCandidates32(__m256i a, __m256i b) {
  const __m256i opener =
      _mm256_or_si256(_mm256_cmpeq_epi8(a, _mm256_set1_epi8('#')), _mm256_cmpeq_epi8(a, _mm256_set1_epi8('[')));
  return _mm256_or_si256(_mm256_cmpeq_epi8(a, _mm256_set1_epi8(kEsc)),
                         _mm256_and_si256(opener, _mm256_cmpeq_epi8(b, _mm256_set1_epi8('0'))));
}

__attribute__((target("avx2"), always_inline)) inline __m256i Load32(const char* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// The sum of the 32 byte counters of `acc`.
__attribute__((target("avx2"), always_inline)) inline uint64_t SumBytes(__m256i acc) {
  const __m256i sums = _mm256_sad_epu8(acc, _mm256_setzero_si256());
  return static_cast<uint64_t>(_mm256_extract_epi64(sums, 0)) + static_cast<uint64_t>(_mm256_extract_epi64(sums, 1)) +
         static_cast<uint64_t>(_mm256_extract_epi64(sums, 2)) + static_cast<uint64_t>(_mm256_extract_epi64(sums, 3));
}

// A chunk's escapes in one pass, 128 bytes at a time: ESC and the pairs
// tested together and the four blocks' masks at once, where the plain way
// is a memchr for ESC and then a second pass over the pairs (together
// ~0.6 instructions a byte of every chunk, 7% of a sparse log's scan).
// The last bytes, fewer than 129, the plain way.
// kCount: the newlines counted in the same pass into `index` (a compare and
// a subtract per 32 bytes; the byte counters, at most 4 a step, are summed
// at every block of 4096 bytes, 32 steps, before they can wrap), so phase A
// need not read the chunk a second time after hs_scan to number its lines.
template <bool kCount>
__attribute__((target("avx2"))) bool HasEscapesAvx2(std::string_view s, NewlineIndex* index) {
  static_assert(NewlineIndex::kBlock % 128 == 0 && NewlineIndex::kBlock / 128 * 4 < 256);
  const char* p = s.data();
  const size_t n = s.size();
  size_t i = 0;
  const __m256i nl = _mm256_set1_epi8('\n');
  __m256i acc = _mm256_setzero_si256();
  uint64_t count = 0;
  if constexpr (kCount) {
    index->before.clear();
    index->before.reserve(n / NewlineIndex::kBlock + 1);
  }
  // Whole blocks of kBlock bytes (the last one short), 128 bytes a step;
  // at each block's start i is a multiple of kBlock.
  while (i + 129 <= n) {
    if constexpr (kCount) {
      count += SumBytes(acc);
      acc = _mm256_setzero_si256();
      index->before.push_back(count);
    }
    const size_t block_end = std::min(i + NewlineIndex::kBlock, n - 128);
    for (; i < block_end; i += 128) {
      const __m256i a[4] = {Load32(p + i), Load32(p + i + 32), Load32(p + i + 64), Load32(p + i + 96)};
      if constexpr (kCount) {
        acc = _mm256_sub_epi8(acc, _mm256_add_epi8(_mm256_add_epi8(_mm256_cmpeq_epi8(a[0], nl), _mm256_cmpeq_epi8(a[1], nl)),
                                                   _mm256_add_epi8(_mm256_cmpeq_epi8(a[2], nl), _mm256_cmpeq_epi8(a[3], nl))));
      }
      const __m256i m[4] = {EscapeCandidates32(a[0], Load32(p + i + 1)), EscapeCandidates32(a[1], Load32(p + i + 33)),
                            EscapeCandidates32(a[2], Load32(p + i + 65)), EscapeCandidates32(a[3], Load32(p + i + 97))};
      const __m256i any = _mm256_or_si256(_mm256_or_si256(m[0], m[1]), _mm256_or_si256(m[2], m[3]));
      if (_mm256_testz_si256(any, any)) continue;
      for (size_t k = 0; k < 4; ++k) {
        for (auto bits = static_cast<unsigned>(_mm256_movemask_epi8(m[k])); bits != 0; bits &= bits - 1) {
          const size_t j = i + 32 * k + static_cast<size_t>(__builtin_ctz(bits));
          if (p[j] == kEsc || EscapeWordAfterPair(p, j, n)) return true;
        }
      }
    }
  }
  if (HasEscapesFrom(s, i)) return true;
  if constexpr (kCount) {
    // The last bytes, fewer than 129, one by one; a block may start among
    // them, or at the text's end.
    count += SumBytes(acc);
    for (size_t at = i;; ++at) {
      if (at % NewlineIndex::kBlock == 0 && index->before.size() == at / NewlineIndex::kBlock) {
        index->before.push_back(count);
      }
      if (at == n) break;
      count += p[at] == '\n';
    }
    index->total = count;
    index->bytes = n;
    index->complete = true;
  }
  return false;
}
#endif

}  // namespace

bool HasEscapesPlain(std::string_view s) { return HasEscapesFrom(s, 0); }

size_t NextEscapeWord(std::string_view s, size_t from) {
  if (from >= s.size()) return std::string_view::npos;
  const void* esc = std::memchr(s.data() + from, kEsc, s.size() - from);
  const size_t end = esc == nullptr ? s.size() : static_cast<size_t>(static_cast<const char*>(esc) - s.data());
  // A pair before the first ESC; one at end - 1 would need s[end], the ESC.
  size_t found = end;
  ForEachPairStartFast<false, BytePair{'#', '0'}, BytePair{'[', '0'}>(s.substr(0, end), from, [&](size_t i) {
    if (!EscapeWordAfterPair(s.data(), i, s.size())) return false;
    found = i;
    return true;
  });
  return found == s.size() ? std::string_view::npos : found;
}

bool HasEscapes(std::string_view s) {
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2 && s.size() >= 129) return HasEscapesAvx2<false>(s, nullptr);
#endif
  return HasEscapesFrom(s, 0);
}

bool HasEscapes(std::string_view s, NewlineIndex* index) {
  index->complete = false;
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2 && s.size() >= 129) return HasEscapesAvx2<true>(s, index);
#endif
  return HasEscapesFrom(s, 0);
}

namespace {

// An escape starts only at an ESC, at rsyslog's '#' or, in a line whose
// codes lost their ESC, at a '['; the bytes between such starts are
// copied in one append (byte by byte, this copy was most of the cost of
// reading a log coloured on every line).
void AppendWithoutEscapes(std::string_view line, std::string& out) {
  const bool bare = HasBareReset(line);
  const size_t n = line.size();
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && line[j] != kEsc && line[j] != '#' && !(bare && line[j] == '[')) ++j;
    out.append(line.data() + i, j - i);
    if (j == n) break;
    const size_t len = EscapeAt(line, j, bare);
    if (len == 0) out.push_back(line[j]);
    i = j + (len == 0 ? 1 : len);
  }
}

}  // namespace

std::string WithoutEscapes(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  AppendWithoutEscapes(line, out);
  return out;
}

DerivedChunk StripEscapes(std::string_view chunk) {
  DerivedChunk out;
  out.messages.reserve(chunk.size());
  uint64_t line_no = 0;
  // A line holds an escape word (HasEscapes of the line) exactly when the
  // chunk's next word at or after its start lies before its end: no word
  // spans a newline. The lines before the next word are copied as they are.
  size_t next = NextEscapeWord(chunk, 0);
  for (size_t pos = 0; pos < chunk.size(); ++line_no) {
    size_t nl = chunk.find('\n', pos);
    size_t end = nl == std::string_view::npos ? chunk.size() : nl;
    std::string_view line = chunk.substr(pos, end - pos);
    if (next < end) {
      AppendWithoutEscapes(line, out.messages);
      next = NextEscapeWord(chunk, end);
    } else {
      out.messages.append(line);
    }
    out.messages.push_back('\n');
    out.lines.push_back({pos, end - pos, line_no});
    pos = end + 1;
  }
  return out;
}

void StripEscapes(DerivedChunk& jc) {
  if (!HasEscapes(jc.messages)) return;
  jc.messages = StripEscapes(jc.messages).messages;
}

namespace {
// Whether a line ends in a box-drawing character (U+2500-U+257F, UTF-8
// E2 94|95 80-BF): the right edge of a frame a console library draws to the
// terminal's full width -- rich's tracebacks and panels ("│ ... │",
// "╰───╯", its ROUNDED box), tables of SQUARE, HEAVY and DOUBLE boxes. Such
// a line is as wide as the console without having been wrapped.
bool EndsInBoxEdge(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.size() < 3) return false;
  const auto* b = reinterpret_cast<const unsigned char*>(line.data() + line.size() - 3);
  return b[0] == 0xE2 && (b[1] == 0x94 || b[1] == 0x95) && (b[2] & 0xC0) == 0x80;
}

// Whether a line is a row of a table drawn in ASCII: it opens and closes on
// the frame's edge ('|' or '+', after a markdown quote's '>'), as
// nvidia-smi's table does (every row 79 columns before driver 450, 87 or 89
// after), PrettyTable's and psql's too. Such a row is as wide as its table,
// not wrapped at the console's edge.
bool AsciiFrameRow(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  size_t p = 0;
  while (p < line.size() && (line[p] == ' ' || line[p] == '\t' || line[p] == '>')) ++p;
  if (line.size() < p + 2) return false;
  const char first = line[p], last = line.back();
  return (first == '|' || first == '+') && (last == '|' || last == '+');
}

// Whether a line ends in a run of spaces: a terminal capture pads a line
// that ended short of the width with blanks to the console's edge (a
// message's last line in tmux's capture-pane or a copied screen), so it is
// as wide as the wrapped ones without having been wrapped. One space is
// where a wrap may fall between words; two or more are padding.
bool EndsInPadding(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line.size() >= 2 && line[line.size() - 1] == ' ' && line[line.size() - 2] == ' ';
}

// A blank line, or an aligned "Key:   value" field ("Status:           Running",
// "Start Time:       Mon, 02 Nov ..." in `kubectl describe`, scontrol's
// fields): it begins something of its own and continues no wrapped line.
bool BeginsOwnRecord(std::string_view line) {
  size_t p = 0;
  while (p < line.size() && (line[p] == ' ' || line[p] == '\t')) ++p;
  if (p == line.size()) return true;
  if (line[p] < 'A' || line[p] > 'Z') return false;
  size_t q = p;
  while (q < line.size() && q - p < 48 &&
         (std::isalnum(static_cast<unsigned char>(line[q])) || line[q] == ' ' || line[q] == '-' || line[q] == '_')) {
    ++q;
  }
  if (q >= line.size() || line[q] != ':') return false;
  return q + 1 == line.size() || (q + 2 < line.size() && line[q + 1] == ' ' && line[q + 2] == ' ');
}

// The whole lines of a head (a partial last line says nothing), at most 4096.
void HeadLines(std::string_view head, std::vector<std::string_view>& lines) {
  lines.clear();
  for (size_t at = 0; at < head.size() && lines.size() < 4096;) {
    size_t nl = head.find('\n', at);
    if (nl == std::string_view::npos) break;
    lines.push_back(head.substr(at, nl - at));
    at = nl + 1;
  }
}

// See DetectLineFormat: `widest` wide lines (at least four, 40 columns or
// more), nearly all of them followed by a continuation-looking line (no
// stamp, no rank prefix, not the same first bytes). `widths` holds the
// width of every line as wide as `widest` and less for the others.
size_t WrapVerdict(const std::vector<std::string_view>& lines, const std::vector<uint32_t>& widths,
                   size_t widest) {
  const size_t count = static_cast<size_t>(std::count(widths.begin(), widths.end(), widest));
  if (widest < 40 || count < 4) return 0;
  size_t continued = 0, followed = 0;
  TimeContext tc;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    // A frame's edge, or padding, fills the width unwrapped: no evidence
    // either way.
    if (widths[i] != widest || EndsInBoxEdge(lines[i]) || EndsInPadding(lines[i]) || AsciiFrameRow(lines[i])) {
      continue;
    }
    ++followed;
    std::string_view next = lines[i + 1];
    const size_t k = std::min<size_t>({8, next.size(), lines[i].size()});
    const bool same_start = k > 0 && next.substr(0, k) == lines[i].substr(0, k);
    if (same_start) continue;
    // Launcher prefixes ("0: ", "[rank3]:") stand before a stamp: read the
    // line as a line of the source, not its first bytes.
    const LineView v = SplitLine(next, LineFormat{}, tc);
    if (!v.time && !v.attr.rank && !BeginsOwnRecord(next)) ++continued;
  }
  return followed >= 4 && continued * 10 >= followed * 9 ? widest : 0;
}

// pdsh output: of the first 32 lines, at least two and two in three start
// with "host: " (the runner's own lines before the fan-out do not). A cut
// last line counts: its prefix is whole, and DeepSpeed's launcher prints
// lines (its global_rank_mapping) longer than a 4 KiB head on big jobs.
bool DetectPdsh(std::string_view head) {
  int seen = 0, prefixed = 0;
  for (size_t at = 0; at < head.size() && seen < 32;) {
    size_t nl = std::min(head.find('\n', at), head.size());
    std::string_view line = head.substr(at, nl - at);
    at = nl + 1;
    if (Trim(line).empty()) continue;
    ++seen;
    if (PdshPrefixEnd(line) != 0) ++prefixed;
  }
  return prefixed >= 2 && prefixed * 3 >= seen * 2;
}
}  // namespace

size_t WrapWidthEveryLine(std::string_view head) {
  std::vector<std::string_view> lines;
  HeadLines(head, lines);
  std::vector<uint32_t> widths(lines.size());
  size_t widest = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    widths[i] = static_cast<uint32_t>(DisplayWidth(lines[i]));
    widest = std::max<size_t>(widest, widths[i]);
  }
  return WrapVerdict(lines, widths, widest);
}

size_t DetectWrapWidth(std::string_view head) {
  // A tab can make a line wider than its bytes: every line is measured.
  if (std::memchr(head.data(), '\t', head.size()) != nullptr) return WrapWidthEveryLine(head);
  // Without one, a line takes at most a column a byte (escapes, UTF-8
  // continuation bytes and a last '\r' take none), so only lines with at
  // least as many bytes as the widest width found so far can be as wide:
  // the longest is measured first, then those as long (format detection
  // reads every source's head; most lines of a log are not measured).
  thread_local std::vector<std::string_view> lines;
  thread_local std::vector<uint32_t> widths;
  HeadLines(head, lines);
  size_t longest = 0, long_lines = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].size() > lines[longest].size()) longest = i;
    long_lines += lines[i].size() >= 40;
  }
  if (long_lines < 4) return 0;  // four lines of 40 columns or more are needed
  size_t widest = DisplayWidth(lines[longest]);
  widths.assign(lines.size(), 0);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].size() < widest) continue;  // narrower than the widest: stays 0
    widths[i] = static_cast<uint32_t>(DisplayWidth(lines[i]));
    widest = std::max<size_t>(widest, widths[i]);
  }
  return WrapVerdict(lines, widths, widest);
}

LineFormat DetectLineFormat(std::string_view head) {
  LineFormat f;
  size_t pos = 0;
  int looked = 0, json = 0;
  while (pos < head.size() && looked < 8) {
    size_t nl = head.find('\n', pos);
    if (nl == std::string_view::npos) break;  // a partial last line says nothing
    std::string_view line = Trim(head.substr(pos, nl - pos));
    pos = nl + 1;
    if (line.empty()) continue;
    ++looked;
    if (LooksJson(line)) ++json;
  }
  if (looked == 0 && pos < head.size()) {
    std::string_view line = Trim(head.substr(pos));
    if (LooksJson(line)) {
      looked = 1;
      json = 1;
    }
  }
  f.json = looked > 0 && json * 2 > looked;
  if (!f.json) {
    int cri = 0, seen = 0;
    for (size_t at = 0; at < head.size() && seen < 8;) {
      size_t nl = head.find('\n', at);
      if (nl == std::string_view::npos) break;
      std::string_view line = head.substr(at, nl - at);
      at = nl + 1;
      if (Trim(line).empty()) continue;
      ++seen;
      if (CriTag(line) != 0) ++cri;
    }
    f.cri = seen > 0 && cri * 2 > seen;
  }
  if (!f.json && !f.cri) f.wrap_width = static_cast<uint32_t>(DetectWrapWidth(head));
  if (!f.json && !f.cri) f.pdsh = DetectPdsh(head);
  return f;
}

char CriTag(std::string_view line, size_t* payload, bool* is_stderr) {
  // "2026-11-02T13:46:41.123456789Z stdout F msg": the stamp has no space.
  size_t sp = line.find(' ');
  if (sp == std::string_view::npos || sp < 20 || sp > 40 || line[4] != '-' || line[10] != 'T') {
    return 0;
  }
  std::string_view rest = line.substr(sp + 1);
  bool err = rest.substr(0, 7) == "stderr ";
  if (!err && rest.substr(0, 7) != "stdout ") return 0;
  if (rest.size() < 8 || (rest[7] != 'P' && rest[7] != 'F')) return 0;
  if (rest.size() > 8 && rest[8] != ' ') return 0;
  if (payload) *payload = std::min(line.size(), sp + 1 + 9);
  if (is_stderr) *is_stderr = err;
  return rest[7];
}

bool HasCriPartial(std::string_view chunk) {
  return chunk.find(" stdout P ") != std::string_view::npos ||
         chunk.find(" stderr P ") != std::string_view::npos ||
         chunk.find(" stdout P\n") != std::string_view::npos ||
         chunk.find(" stderr P\n") != std::string_view::npos;
}

DerivedChunk JoinCriPartials(std::string_view chunk) {
  struct Record {
    DerivedRecord where;
    std::string text;
  };
  std::vector<Record> done;
  // The open run of each stream (stdout, stderr): index into `done`, whose
  // text grows until its F line.
  std::optional<size_t> open[2];
  size_t pos = 0;
  uint64_t line_rel = 0;
  while (pos < chunk.size()) {
    size_t nl = chunk.find('\n', pos);
    size_t end = nl == std::string_view::npos ? chunk.size() : nl;
    std::string_view line = chunk.substr(pos, end - pos);
    std::string_view bare = line;
    if (!bare.empty() && bare.back() == '\r') bare.remove_suffix(1);
    size_t payload = 0;
    bool err = false;
    char tag = CriTag(bare, &payload, &err);
    if (tag != 0 && open[err]) {
      Record& r = done[*open[err]];
      r.text.append(bare.substr(payload));
      r.where.length = end - r.where.offset;
      if (tag == 'F') open[err].reset();
    } else {
      Record& r = done.emplace_back();
      r.where = {pos, end - pos, line_rel};
      r.text.assign(bare);
      if (tag == 'P') open[err] = done.size() - 1;
    }
    ++line_rel;
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  DerivedChunk out;
  out.lines.reserve(done.size());
  for (Record& r : done) {
    out.messages += r.text;
    out.messages += '\n';
    out.lines.push_back(r.where);
  }
  return out;
}

namespace {
// Whether the line that ends right before `cut` (a line start > 0)
// continues on the next one; *start is where that line starts.
bool PartialBefore(const LineFormat& f, std::string_view data, size_t cut, size_t* start) {
  size_t nl = cut >= 2 ? data.rfind('\n', cut - 2) : std::string_view::npos;
  *start = nl == std::string_view::npos ? 0 : nl + 1;
  return ContinuesNext(f, data.substr(*start, cut - 1 - *start));
}

LineFormat CriFormat() {
  LineFormat f;
  f.cri = true;
  return f;
}

// Hard-wrapped runs: each line exactly f.wrap_width wide joined with the next.
DerivedChunk JoinWrapped(const LineFormat& f, std::string_view chunk) {
  DerivedChunk out;
  size_t pos = 0;
  uint64_t line_rel = 0;
  bool open = false;
  while (pos < chunk.size()) {
    size_t nl = chunk.find('\n', pos);
    size_t end = nl == std::string_view::npos ? chunk.size() : nl;
    std::string_view bare = chunk.substr(pos, end - pos);
    if (!bare.empty() && bare.back() == '\r') bare.remove_suffix(1);
    if (open) {
      out.lines.back().length = end - out.lines.back().offset;
    } else {
      if (!out.lines.empty()) out.messages += '\n';
      out.lines.push_back({pos, end - pos, line_rel});
    }
    out.messages.append(bare);
    open = ContinuesNext(f, bare);
    ++line_rel;
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  if (!out.lines.empty()) out.messages += '\n';
  return out;
}
}  // namespace

size_t DisplayWidth(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (PlainAscii(line)) return line.size();  // most lines, 16 bytes at a time
  if (line.find('\t') == std::string_view::npos && line.find('\x1b') == std::string_view::npos) {
    // No tab, no escape (the usual line; format detection asks for every
    // line of every source's head): one column per byte that starts a UTF-8
    // sequence, counted 8 bytes at a time -- a continuation byte is
    // 10xxxxxx.
    constexpr uint64_t kHigh = 0x8080808080808080ull;
    size_t cont = 0, i = 0;
    for (; i + 8 <= line.size(); i += 8) {
      uint64_t w;
      std::memcpy(&w, line.data() + i, 8);
      // At most one bit a byte (bit 7): their sum by one multiply, not a
      // popcount (a libgcc call without -mpopcnt).
      cont += static_cast<size_t>((((w & kHigh & ~(w << 1)) >> 7) * 0x0101010101010101ull) >> 56);
    }
    for (; i < line.size(); ++i) cont += (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80;
    return line.size() - cont;
  }
  size_t cols = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(line[i]);
    if (c == 0x1b && i + 1 < line.size() && line[i + 1] == '[') {
      // CSI: parameters and intermediates, then one final byte 0x40-0x7e.
      i += 2;
      while (i < line.size() && (static_cast<unsigned char>(line[i]) < 0x40 ||
                                 static_cast<unsigned char>(line[i]) > 0x7e)) {
        ++i;
      }
      continue;
    }
    if (c == '\t') {
      cols = (cols / 8 + 1) * 8;
    } else if ((c & 0xC0) != 0x80) {
      ++cols;
    }
  }
  return cols;
}

bool ContinuesNext(const LineFormat& f, std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (f.cri) return CriTag(line) == 'P';
  // A line of `wrap_width` columns has at least that many bytes. One that
  // ends in a frame's edge (rich's box closed at the console's width) or is
  // an ASCII table's row (nvidia-smi's) is whole.
  return f.wrap_width > 0 && line.size() >= f.wrap_width && DisplayWidth(line) == f.wrap_width &&
         !EndsInBoxEdge(line) && !EndsInPadding(line) && !AsciiFrameRow(line);
}

bool HasPartial(const LineFormat& f, std::string_view chunk) {
  if (f.cri) return HasCriPartial(chunk);
  if (f.wrap_width == 0) return false;
  for (size_t pos = 0; pos < chunk.size();) {
    size_t nl = chunk.find('\n', pos);
    if (nl == std::string_view::npos) return false;  // the last line has nothing to join
    if (ContinuesNext(f, chunk.substr(pos, nl - pos))) return true;
    pos = nl + 1;
  }
  return false;
}

DerivedChunk JoinPartials(const LineFormat& f, std::string_view chunk) {
  return f.cri ? JoinCriPartials(chunk) : JoinWrapped(f, chunk);
}

size_t CutBack(const LineFormat& f, std::string_view data, size_t cut) {
  size_t start = 0;
  while (cut > 0) {
    if (!PartialBefore(f, data, cut, &start)) return cut;
    cut = start;
  }
  return 0;
}

size_t CutForward(const LineFormat& f, std::string_view data, size_t cut) {
  size_t start = 0;
  while (cut > 0 && cut < data.size()) {
    if (!PartialBefore(f, data, cut, &start)) return cut;
    size_t nl = data.find('\n', cut);
    cut = nl == std::string_view::npos ? data.size() : nl + 1;
  }
  return std::min(cut, data.size());
}

size_t CriCutBack(std::string_view data, size_t cut) { return CutBack(CriFormat(), data, cut); }
size_t CriCutForward(std::string_view data, size_t cut) { return CutForward(CriFormat(), data, cut); }

namespace {

// A plain-text line's time: at its start, after its launcher prefixes (which
// end at `mb`), or after a carriage return (then, with `attr`, the
// attribution of that segment goes first).
// pdsh's "host: " before a bracketed wall-clock stamp ("gpu-a01-001:
// [2025-03-20 12:51:06,453] [INFO] ..."): a tag of one word, no spaces.
std::optional<ParsedTime> StampAfterHostTag(std::string_view rest, const TimeContext& tctx) {
  size_t tag = rest.find(": [");
  if (tag == 0 || tag >= 64 || rest.substr(0, tag).find(' ') != std::string_view::npos) return std::nullopt;
  std::optional<ParsedTime> t = ParseLineTime(rest.substr(tag + 3), tctx);
  if (!t || !t->wall_us) return std::nullopt;
  return t;
}

// With `shape` (AttributeLine's line memo's entry for this line, see
// LineTimeShape), the work that depends on the line's shape alone is done
// once per shape. A torchrun line's time is its glog stamp after the
// launcher prefix: the whole line's read, refused at its opening bytes,
// and the kernel stamp's search (FindMonotonic) give the same on every
// line of the entry, and the stamp's offset is the same. The first line
// of a shape takes the general path and notes what it found; the others
// read the stamp at that offset, as the general path would, and take the
// noted monotonic stamp. FindMonotonic's '[' candidates lie outside the
// clock's digits ([ is none of a clock's bytes) and a read from one before
// them stops at the level letter, so its result is the shape's.
std::optional<ParsedTime> PlainLineTime(std::string_view line, size_t mb, const TimeContext& tctx,
                                        Attribution* attr, LineTimeShape* shape = nullptr) {
  if (shape != nullptr && shape->stamp != 0) {
    if (std::optional<ParsedTime> t = ParseShortGlogTime(line.substr(shape->stamp), tctx)) {
      t->monotonic_s = shape->monotonic_s;
      return t;
    }
    // A clock out of range: the general path reads what else there is.
    shape = nullptr;
  }
  // Where the general path read the stamp, when a later line of the shape
  // will read it there too.
  size_t noted_stamp = 0;
  std::optional<ParsedTime> time = ParseLineTime(line, tctx);
  if (!time && mb < line.size()) {
    // The stamp may follow a launcher prefix: "[rank3]:[E1102 13:46:41.12 ...".
    std::string_view rest = line.substr(mb);
    // "[E1102 13:46:41 ...": a glog stamp in brackets; "[titan] 2025-...":
    // a short tag before the stamp. Try both, two tags deep at most.
    for (int k = 0; k < 3 && !time && !rest.empty(); ++k) {
      if (rest.front() == '[') rest.remove_prefix(1);
      // A torchrun line's glog stamp, read at its fixed offsets first:
      // what ParseLineTime would give, without its chain of readers.
      time = ParseShortGlogTime(rest, tctx);
      if (time && k == 0 && shape != nullptr && LineTimeRefusedAtOpening(line)) {
        noted_stamp = static_cast<size_t>(rest.data() - line.data());
      }
      if (!time) time = ParseLineTime(rest, tctx);
      if (time) break;
      size_t close = rest.find(']');
      if (close == std::string_view::npos || close > 32) break;
      rest.remove_prefix(close + 1);
      while (!rest.empty() && (rest.front() == ' ' || rest.front() == ':')) rest.remove_prefix(1);
    }
  }
  if (!time) time = StampAfterHostTag(line.substr(std::min(mb, line.size())), tctx);
  if (!time && mb < line.size() && line[mb] == '{') {
    // A JSON record behind a launcher tag ("[1,3]<stdout>:{\"ts\": ...}",
    // "3: {...}" under srun -l): its time field.
    JsonFields jf;
    if (ParseJsonLine(line.substr(mb), tctx, jf) && jf.time_us) {
      ParsedTime pt;
      pt.format = TimeFormat::kIso8601;
      pt.wall_us = jf.time_us;
      time = pt;
    }
  }
  if (!time && line.find('\r') != std::string_view::npos) {
    // tqdm bars glued to a record with carriage returns: the record's own
    // stamp and prefix follow the last '\r' that starts one.
    for (size_t cr = line.rfind('\r'); cr != std::string_view::npos && !time;
         cr = cr == 0 ? std::string_view::npos : line.rfind('\r', cr - 1)) {
      std::string_view seg = line.substr(cr + 1);
      if (auto t = ParseLineTime(seg, tctx)) {
        time = t;
        if (attr != nullptr) {
          size_t seg_mb = 0;
          Attribution a = AttributeLine(seg, &seg_mb);
          MergeAttribution(a, *attr);
          *attr = a;
        }
      }
    }
  }
  if (time && !time->monotonic_s) {
    // A syslog or collector header before a kernel stamp.
    time->monotonic_s = FindMonotonic(line);
  }
  if (noted_stamp != 0) {
    // The time came from the stamp read at noted_stamp, with nothing after
    // it tried (no carriage return's AttributeLine has replaced the entry).
    shape->stamp = static_cast<uint32_t>(noted_stamp);
    shape->monotonic_s = time->monotonic_s;
  }
  return time;
}

LineView Split(std::string_view line, const LineFormat& fmt, const TimeContext& tctx, bool may_have_escapes,
               bool read_time = true) {
  LineView v;
  if (fmt.json && LooksJson(line)) {
    JsonFields jf;
    if (ParseJsonLine(line, tctx, jf)) {
      if (jf.has_message) {
        Flatten(jf.message);
        v.storage = std::move(jf.message);
        v.message = v.storage;
      } else {
        v.message = line;
      }
      // The message may carry its own prefixes (docker json-file wraps whole
      // launcher lines).
      size_t mb = 0;
      v.attr = AttributeLine(v.message, &mb);
      if (jf.time_us) {
        ParsedTime pt;
        pt.format = TimeFormat::kIso8601;
        pt.wall_us = jf.time_us;
        pt.monotonic_s = jf.monotonic_s;
        v.time = pt;
      } else {
        v.time = ParseLineTime(v.message, tctx);
      }
      if (jf.rank) v.attr.rank = jf.rank;
      if (!v.attr.pid) v.attr.pid = jf.pid;  // a pid the message prints is its own
      if (!jf.host.empty()) v.attr.host = NormalizeHost(jf.host);
      return v;
    }
  }
  if (may_have_escapes && HasEscapes(line)) {
    v.storage = WithoutEscapes(line);
    line = v.storage;
  }
  v.message = line;
  size_t mb = 0;
  std::string_view pdsh_host;
  const size_t pd = fmt.pdsh ? PdshPrefixEnd(line, &pdsh_host) : 0;
  LineTimeShape* shape = nullptr;
  v.attr = AttributeLine(line.substr(pd), &mb, &shape);
  mb += pd;
  if (pd != 0 && v.attr.host.empty()) v.attr.host = NormalizeHost(pdsh_host);
  // The memo's entry is of the line less its pdsh prefix, whose host may
  // differ from one line to the next: its time shape is the whole line's
  // only without one.
  if (pd != 0) shape = nullptr;
  // Without the time the attribution is the same, but where a carriage
  // return may bring the record's own prefix (PlainLineTime's tqdm bars).
  if (read_time || line.find('\r') != std::string_view::npos) v.time = PlainLineTime(line, mb, tctx, &v.attr, shape);
  return v;
}

}  // namespace

LineView SplitLine(std::string_view line, const LineFormat& fmt, const TimeContext& tctx) {
  return Split(line, fmt, tctx, true);
}

LineView SplitCleanLine(std::string_view line, const LineFormat& fmt, const TimeContext& tctx) {
  return Split(line, fmt, tctx, false);
}

LineView SplitLineUntimed(std::string_view line, const LineFormat& fmt, const TimeContext& tctx) {
  return Split(line, fmt, tctx, true, false);
}

namespace {

// Whether PlainLineTime may find a time in a line: every stamp it reads is
// read by ParseLineTime from a suffix of the line (its start, after the
// prefixes, a '[', a pdsh "host: [", a '\r'), but for a JSON record's time
// field behind a launcher tag, which needs a '{'. An NCCL INFO line with no
// stamp, walked back over for an inherited time, then costs no
// MessageBegin and no recogniser chain.
bool MayHoldPlainLineTime(std::string_view line) {
  return line.find('{') != std::string_view::npos || MayHoldLineTime(line);
}

}  // namespace

std::optional<ParsedTime> LineTime(std::string_view line, const LineFormat& fmt, const TimeContext& tctx) {
  if ((fmt.json && LooksJson(line)) || HasEscapes(line)) return SplitLine(line, fmt, tctx).time;
  if (!MayHoldPlainLineTime(line)) return std::nullopt;
  return PlainLineTime(line, MessageBegin(line), tctx, nullptr);
}

std::optional<ParsedTime> CleanLineTime(std::string_view line, const LineFormat& fmt, const TimeContext& tctx) {
  if (fmt.json && LooksJson(line)) return SplitLine(line, fmt, tctx).time;
  if (!MayHoldPlainLineTime(line)) return std::nullopt;
  return PlainLineTime(line, MessageBegin(line), tctx, nullptr);
}

DerivedChunk ExtractJsonMessages(std::string_view chunk) {
  DerivedChunk jc;
  TimeContext tctx;
  size_t pos = 0;
  uint64_t line_no = 0;
  while (pos < chunk.size()) {
    size_t nl = chunk.find('\n', pos);
    size_t end = nl == std::string_view::npos ? chunk.size() : nl;
    std::string_view line = chunk.substr(pos, end - pos);
    JsonFields jf;
    std::string msg;
    if (LooksJson(line) && ParseJsonLine(line, tctx, jf) && jf.has_message) {
      msg = std::move(jf.message);
    } else {
      msg.assign(line.data(), line.size());
    }
    Flatten(msg);
    for (char& c : msg) {
      if (c == '\0') c = ' ';
    }
    jc.messages.append(msg);
    jc.messages.push_back('\n');
    jc.lines.push_back({pos, end - pos, line_no});
    ++line_no;
    pos = end + 1;
  }
  return jc;
}

}  // namespace faultline
