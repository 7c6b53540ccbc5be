// Hand-written timestamp recognisers for the log formats a GPU job mixes.
//
// ParseLineTime runs on every matched line and on its neighbours (for
// inherited times), so it avoids std::regex, never allocates, and does a
// bounded amount of work per line: each recogniser looks at a fixed-size
// prefix, and the only scans (leading whitespace, fraction digits, the
// "kernel: [" look-ahead) are capped. Every byte read goes through
// Scanner::Peek, which returns '\0' past the end of the view, so truncated
// stamps at the end of a buffer fail cleanly instead of over-reading. A real
// NUL byte in the input reads the same as the end, which is harmless because
// no stamp contains one.
//
// Civil dates are converted with Howard Hinnant's days_from_civil algorithm
// (proleptic Gregorian, no tables, no libc time zone state), so results do not
// depend on the TZ of the process that embeds us.
#include "timeparse/timeparse.h"
#include "timeparse/opening.h"
#include "timeparse/timeparse_internal.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace faultline {
namespace {

constexpr int64_t kUsPerSec = 1'000'000;
constexpr int64_t kSecsPerDay = 86'400;

// Bare numbers count as epoch times only inside [2000, 2100): step counters,
// srun labels ("3: ") and PIDs fall far below, and the four scales (s, ms, µs,
// ns) are a factor 1000 apart while the window spans a factor of ~4.3, so a
// magnitude maps to at most one scale.
constexpr uint64_t kEpochMinS = 946'684'800;    // 2000-01-01T00:00:00Z
constexpr uint64_t kEpochMaxS = 4'102'444'800;  // 2100-01-01T00:00:00Z

// Work bounds that keep garbage input cheap. Real stamps are far shorter.
constexpr size_t kMaxLeadingSpace = 256;
constexpr size_t kMaxFractionDigits = 18;
constexpr size_t kKernelLookahead = 128;
constexpr size_t kMaxBracketPad = 16;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAlnum(char c) { return IsDigit(c) || IsAlpha(c); }
char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

// A bounds-checked read position in a string_view.
struct Scanner {
  std::string_view s;
  size_t i = 0;
  // Off only for internal::ParseLineTimeGeneral, which tests compare the
  // shortcuts (ReadShortGlog) against.
  bool shortcuts = true;

  char Peek(size_t k = 0) const {
    return (k < s.size() && i < s.size() - k) ? s[i + k] : '\0';
  }
  bool AtEnd() const { return i >= s.size(); }
  bool Eat(char c) {
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  // Exactly n digits (the bounds checked once: fewer than n bytes left is
  // what a '\0' from Peek gave).
  bool Digits(int n, int* out) {
    if (i > s.size() || s.size() - i < static_cast<size_t>(n)) return false;
    int v = 0;
    for (int k = 0; k < n; ++k) {
      const char c = s[i + static_cast<size_t>(k)];
      if (!IsDigit(c)) return false;
      v = v * 10 + (c - '0');
    }
    i += static_cast<size_t>(n);
    *out = v;
    return true;
  }
  // 1..max digits; returns how many were read (0: none, nothing consumed).
  int DigitsUpTo(int max, uint64_t* out) {
    uint64_t v = 0;
    int n = 0;
    while (n < max && IsDigit(Peek())) {
      v = v * 10 + static_cast<uint64_t>(Peek() - '0');
      ++i;
      ++n;
    }
    *out = v;
    return n;
  }
  size_t SkipSpaces(size_t max) {
    size_t n = 0;
    while (n < max && Peek() == ' ') {
      ++i;
      ++n;
    }
    return n;
  }
};

// A fraction of a second as read: the first nine digits as nanoseconds (so
// both µs wall times and the double of a monotonic stamp can be built) and
// the digit count. Digits past the ninth are consumed and truncated.
struct Fraction {
  int64_t ns = 0;
  size_t digits = 0;
};

// Reads the digits after a '.' or ','. Fails on more than kMaxFractionDigits.
bool ReadFraction(Scanner& sc, Fraction* f) {
  int64_t v = 0;
  size_t n = 0;
  while (sc.i < sc.s.size() && IsDigit(sc.s[sc.i])) {
    if (n >= kMaxFractionDigits) return false;
    if (n < 9) v = v * 10 + (sc.s[sc.i] - '0');
    ++n;
    ++sc.i;
  }
  for (size_t k = n; k < 9; ++k) v *= 10;
  f->ns = v;
  f->digits = n;
  return n > 0;
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int64_t y, int m) {
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30,
                                    31, 31, 30, 31, 30, 31};
  return (m == 2 && IsLeap(y)) ? 29 : kDays[m - 1];
}

// When the year was inferred, Feb 29 is accepted in any year: the true year
// may have been a leap year, and dropping the stamp would lose more than
// dating it Mar 1.
bool ValidDate(int64_t y, int m, int d, bool year_inferred) {
  if (m < 1 || m > 12 || d < 1) return false;
  if (year_inferred && m == 2) return d <= 29;
  return d <= DaysInMonth(y, m);
}

// Seconds 60 is a leap second (RFC 3339 allows it); it rolls into the next
// minute, which keeps ordering right.
bool ValidTime(int h, int mi, int s) {
  return h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && s >= 0 && s <= 60;
}

struct Civil {
  int64_t year = 1970;
  int month = 1;
  int day = 1;
  int hour = 0;
  int minute = 0;
  int second = 0;
  int64_t frac_ns = 0;
};

// Local civil time at `offset_s` east of UTC -> µs since the epoch (UTC).
int64_t CivilToUs(const Civil& c, int64_t offset_s) {
  const int64_t secs = DaysFromCivil(c.year, c.month, c.day) * kSecsPerDay +
                       c.hour * 3600 + c.minute * 60 + c.second - offset_s;
  return secs * kUsPerSec + c.frac_ns / 1000;
}

// "Jan".."Dec", case-insensitive -> 1..12, else 0.
int MonthFromName(char a, char b, char c) {
  a = Lower(a);
  b = Lower(b);
  c = Lower(c);
  static constexpr char kNames[12][4] = {"jan", "feb", "mar", "apr",
                                         "may", "jun", "jul", "aug",
                                         "sep", "oct", "nov", "dec"};
  for (int k = 0; k < 12; ++k) {
    if (kNames[k][0] == a && kNames[k][1] == b && kNames[k][2] == c) {
      return k + 1;
    }
  }
  return 0;
}

bool IsWeekdayName(char a, char b, char c) {
  a = Lower(a);
  b = Lower(b);
  c = Lower(c);
  static constexpr char kNames[7][4] = {"mon", "tue", "wed", "thu",
                                        "fri", "sat", "sun"};
  for (const auto& n : kNames) {
    if (n[0] == a && n[1] == b && n[2] == c) return true;
  }
  return false;
}

// Reads a month name followed by a non-letter. Returns 1..12 or 0.
int ReadMonthName(Scanner& sc) {
  const int m = MonthFromName(sc.Peek(0), sc.Peek(1), sc.Peek(2));
  if (m == 0 || IsAlpha(sc.Peek(3))) return 0;
  sc.i += 3;
  return m;
}

// The wall time read into c, accepted: out takes it and sc moves past it.
bool Accept(Scanner& sc, const Scanner& t, const Civil& c, int64_t offset_s, TimeFormat format,
            bool year_inferred, ParsedTime* out) {
  out->format = format;
  out->wall_us = CivilToUs(c, offset_s);
  out->year_inferred = year_inferred;
  sc = t;
  return true;
}

// "hh:mm:ss" with an optional fraction after '.' (and ',' if allowed).
bool ReadClock(Scanner& sc, bool comma_fraction, Civil* c, char* frac_sep) {
  if (!sc.Digits(2, &c->hour) || !sc.Eat(':') || !sc.Digits(2, &c->minute) ||
      !sc.Eat(':') || !sc.Digits(2, &c->second)) {
    return false;
  }
  if (!ValidTime(c->hour, c->minute, c->second)) return false;
  const char sep = sc.Peek();
  if ((sep == '.' || (comma_fraction && sep == ',')) && IsDigit(sc.Peek(1))) {
    ++sc.i;
    Fraction f;
    if (!ReadFraction(sc, &f)) return false;
    c->frac_ns = f.ns;
    if (frac_sep != nullptr) *frac_sep = sep;
  }
  // "13:46:412" is not a clock.
  return !IsDigit(sc.Peek());
}

// "+hh", "+hhmm", "+hh:mm" (or '-') at sc; `need_minutes` refuses bare
// "+hh". On a malformed offset returns false and leaves sc unchanged.
bool ReadNumericOffset(Scanner& sc, bool need_minutes, int64_t* offset_s) {
  Scanner t = sc;
  const char sign = t.Peek();
  if (sign != '+' && sign != '-') return false;
  ++t.i;
  int hh = 0;
  int mm = 0;
  if (!t.Digits(2, &hh)) return false;
  if (t.Peek() == ':') {
    ++t.i;
    if (!t.Digits(2, &mm)) return false;
  } else if (IsDigit(t.Peek())) {
    if (!t.Digits(2, &mm)) return false;
  } else if (need_minutes) {
    return false;
  }
  if (IsDigit(t.Peek()) || hh > 23 || mm > 59) return false;
  const int64_t v = hh * 3600 + mm * 60;
  *offset_s = sign == '-' ? -v : v;
  sc = t;
  return true;
}

// Case-insensitive "UTC"/"GMT" followed by a non-letter.
bool ReadUtcWord(Scanner& sc) {
  const char a = Lower(sc.Peek(0));
  const char b = Lower(sc.Peek(1));
  const char c = Lower(sc.Peek(2));
  const bool utc = (a == 'u' && b == 't' && c == 'c') ||
                   (a == 'g' && b == 'm' && c == 't');
  if (!utc || IsAlpha(sc.Peek(3))) return false;
  sc.i += 3;
  return true;
}

struct IsoOptions {
  // Whole-string parsing (ParseIso8601) also takes "2026-11-02" and
  // "2026-11-02T13:46"; at a line start these are too ambiguous.
  bool lenient = false;
};

// "YYYY-MM-DD[Tt ]hh:mm:ss[(.|,)frac][zone]" and the Go log form
// "YYYY/MM/DD hh:mm:ss". Zone: Z, ±hh[[:]mm], or after one space ±hhmm,
// ±hh:mm, UTC, GMT (journalctl short-full, `date`-style collectors).
bool ReadIso(Scanner& sc, const TimeContext& ctx, IsoOptions opt, int64_t* us,
             TimeFormat* fmt) {
  Scanner t = sc;
  Civil c;
  int year = 0;
  if (!t.Digits(4, &year)) return false;
  c.year = year;
  const char dsep = t.Peek();
  if (dsep != '-' && dsep != '/') return false;
  ++t.i;
  if (!t.Digits(2, &c.month) || !t.Eat(dsep) || !t.Digits(2, &c.day)) {
    return false;
  }
  if (!ValidDate(c.year, c.month, c.day, false)) return false;

  const char tsep = t.Peek();
  const bool has_time = (tsep == 'T' || tsep == 't' || tsep == ' ') &&
                        IsDigit(t.Peek(1)) && IsDigit(t.Peek(2)) &&
                        t.Peek(3) == ':';
  char frac_sep = 0;
  bool zoned = false;
  int64_t offset = ctx.tz_offset_s;
  if (!has_time) {
    if (!opt.lenient || IsAlnum(t.Peek())) return false;
  } else {
    ++t.i;
    Scanner probe = t;
    if (!ReadClock(t, /*comma_fraction=*/true, &c, &frac_sep)) {
      // "13:46" without seconds, only when the whole string is a time.
      if (!opt.lenient || !probe.Digits(2, &c.hour) || !probe.Eat(':') ||
          !probe.Digits(2, &c.minute) || !ValidTime(c.hour, c.minute, 0) ||
          IsDigit(probe.Peek()) || probe.Peek() == ':') {
        return false;
      }
      c.second = 0;
      c.frac_ns = 0;
      t = probe;
    }
    const char z = t.Peek();
    if (z == 'Z' || z == 'z') {
      ++t.i;
      offset = 0;
      zoned = true;
    } else if ((z == '+' || z == '-') && IsDigit(t.Peek(1))) {
      // A sign glued to the clock and followed by a digit can only be an
      // offset; a malformed one means we would misdate, so reject.
      if (!ReadNumericOffset(t, /*need_minutes=*/false, &offset)) return false;
      zoned = true;
    } else if (z == ' ') {
      Scanner u = t;
      ++u.i;
      int64_t off = 0;
      // Detached from the clock only the four-digit forms count, so
      // "13:46:41 -12 retries" keeps its text.
      if ((u.Peek() == '+' || u.Peek() == '-') &&
          ReadNumericOffset(u, /*need_minutes=*/true, &off) &&
          !IsAlnum(u.Peek())) {
        offset = off;
        zoned = true;
        t = u;
      } else if (ReadUtcWord(u)) {
        offset = 0;
        zoned = true;
        t = u;
      }
    }
  }
  *us = CivilToUs(c, offset);
  // Python's logging default asctime: "2026-11-02 13:46:41,123", local time.
  *fmt = (!zoned && frac_sep == ',' && tsep == ' ' && dsep == '-')
             ? TimeFormat::kPythonLogging
             : TimeFormat::kIso8601;
  sc = t;
  return true;
}

// glog "I1102 13:46:41.123456" (and glog >= 0.7 "I20261102 ..."): level
// letter, date, clock, all local time.
// The glog stamp as nearly every line prints it, "I1102 13:46:41.123456"
// and then the end, a space or a tab, at fixed offsets: checked byte by
// byte at those offsets and its values read directly, ~4x cheaper than the
// general path's scanner steps (the dense log's matched lines carry one
// each). Read as the general path reads it: the month and day as "mmdd"
// (the eight-digit year form needs a digit where this shape has the
// space), the year inferred, six fraction digits and no seventh. A stamp
// of this shape whose date or clock is out of range is left to the
// general path, which refuses it.
bool ReadShortGlog(Scanner& sc, const TimeContext& ctx, ParsedTime* out) {
  constexpr size_t kLen = 21;  // "I1102 13:46:41.123456"
  const std::string_view s = sc.s;
  if (sc.i > s.size() || s.size() - sc.i < kLen) return false;
  const char* p = s.data() + sc.i;
  if (s.size() - sc.i > kLen && p[kLen] != ' ' && p[kLen] != '\t') return false;
  static constexpr char kShape[] = "L0000 00:00:00.000000";
  auto digit = [&](size_t k) { return static_cast<unsigned>(p[k] - '0'); };
#if defined(__SSE2__)
  // Bytes 1-16 and 5-20 against the shape, 16 at a time: a '0' of the
  // shape takes any digit, its other bytes themselves.
  auto shaped = [&](size_t k) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + k));
    const __m128i shape = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kShape + k));
    const __m128i digit_place = _mm_cmpeq_epi8(shape, _mm_set1_epi8('0'));
    const __m128i is_digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('/')), _mm_cmplt_epi8(v, _mm_set1_epi8(':')));
    const __m128i ok = _mm_or_si128(_mm_and_si128(digit_place, is_digit), _mm_andnot_si128(digit_place, _mm_cmpeq_epi8(v, shape)));
    return _mm_movemask_epi8(ok) == 0xFFFF;
  };
  if (!shaped(1) || !shaped(kLen - 16)) return false;
#else
  for (size_t k = 1; k < kLen; ++k) {
    if (kShape[k] == '0' ? digit(k) > 9 : p[k] != kShape[k]) return false;
  }
#endif
  auto two = [&](size_t k) { return static_cast<int>(digit(k) * 10 + digit(k + 1)); };
  // The minute's first second, kept per thread under the stamp's "mmdd
  // hh:mm" and the context's year and zone: a dense log's lines repeat
  // them for many lines in a row, and the date's checks and day count were
  // most of this read. Kept only for a stamp accepted whole, so a kept
  // minute's date, hour and minute are valid; the second is still checked.
  struct MinuteMemo {
    char key[10] = {};
    int default_year = 0;
    int64_t tz_offset_s = 0;
    int64_t minute_s = 0;  // CivilToUs's seconds, less the second
    bool valid = false;
  };
  thread_local MinuteMemo memo;
  const int second = two(12);
  int64_t minute_s = 0;
  if (memo.valid && memo.default_year == ctx.default_year && memo.tz_offset_s == ctx.tz_offset_s &&
      std::memcmp(memo.key, p + 1, sizeof memo.key) == 0) {
    if (!ValidTime(0, 0, second)) return false;
    minute_s = memo.minute_s;
  } else {
    Civil c;  // second and fraction 0: the minute's first second
    c.year = ctx.default_year;
    c.month = two(1);
    c.day = two(3);
    c.hour = two(6);
    c.minute = two(9);
    if (!ValidDate(c.year, c.month, c.day, true) || !ValidTime(c.hour, c.minute, second)) return false;
    minute_s = CivilToUs(c, ctx.tz_offset_s) / kUsPerSec;
    std::memcpy(memo.key, p + 1, sizeof memo.key);
    memo.default_year = ctx.default_year;
    memo.tz_offset_s = ctx.tz_offset_s;
    memo.minute_s = minute_s;
    memo.valid = true;
  }
  int64_t us = 0;
  for (size_t k = 15; k < kLen; ++k) us = us * 10 + digit(k);
  out->format = TimeFormat::kGlog;
  out->wall_us = (minute_s + second) * kUsPerSec + us;
  out->year_inferred = true;
  sc.i += kLen;
  return true;
}

bool ReadGlog(Scanner& sc, const TimeContext& ctx, ParsedTime* out) {
  Scanner t = sc;
  const char level = t.Peek();
  if (level != 'I' && level != 'W' && level != 'E' && level != 'F') {
    return false;
  }
  if (sc.shortcuts && ReadShortGlog(sc, ctx, out)) return true;
  ++t.i;
  Civil c;
  bool inferred = true;
  int year = 0;
  Scanner y8 = t;
  if (y8.Digits(4, &year) && y8.Digits(2, &c.month) && y8.Digits(2, &c.day) &&
      y8.Peek() == ' ') {
    c.year = year;
    inferred = false;
    t = y8;
  } else {
    Scanner md = t;
    if (md.Digits(2, &c.month) && md.Digits(2, &c.day) && md.Peek() == ' ') {
      t = md;
    } else {
      // c10's own log prefix (PyTorch >= 2.4) leaves the month unpadded:
      // "E304 10:00:02.123456" is March 4th.
      Scanner m3 = t;
      if (!m3.Digits(1, &c.month) || !m3.Digits(2, &c.day) || m3.Peek() != ' ') return false;
      t = m3;
    }
    c.year = ctx.default_year;
  }
  if (!ValidDate(c.year, c.month, c.day, inferred) || !t.Eat(' ')) {
    return false;
  }
  if (!ReadClock(t, /*comma_fraction=*/false, &c, nullptr)) return false;
  if (!t.AtEnd() && t.Peek() != ' ' && t.Peek() != '\t') return false;
  return Accept(sc, t, c, ctx.tz_offset_s, TimeFormat::kGlog, inferred, out);
}

// Syslog RFC 3164 "Nov  2 13:46:41", journalctl short/short-precise
// "Nov 02 13:46:41.123456", and the rarer "Nov  2 2026 13:46:41".
bool ReadSyslog(Scanner& sc, const TimeContext& ctx, ParsedTime* out) {
  Scanner t = sc;
  Civil c;
  c.month = ReadMonthName(t);
  if (c.month == 0 || !t.Eat(' ')) return false;
  t.Eat(' ');  // %e pads single-digit days with a space
  uint64_t day = 0;
  if (t.DigitsUpTo(2, &day) == 0 || !t.Eat(' ')) return false;
  c.day = static_cast<int>(day);
  bool inferred = true;
  c.year = ctx.default_year;
  int year = 0;
  Scanner y = t;
  if (y.Digits(4, &year) && y.Eat(' ')) {
    c.year = year;
    inferred = false;
    t = y;
  }
  if (!ValidDate(c.year, c.month, c.day, inferred)) return false;
  if (!ReadClock(t, /*comma_fraction=*/false, &c, nullptr)) return false;
  if (!t.AtEnd() && t.Peek() != ' ' && t.Peek() != '\t') return false;
  return Accept(sc, t, c, ctx.tz_offset_s, TimeFormat::kSyslog, inferred, out);
}

// ctime "Mon Nov  2 13:46:41 2026" (dmesg -T inside brackets); also takes
// "Mon Nov  2 13:46:41 UTC 2026" as `date` prints it.
bool ReadCtime(Scanner& sc, const TimeContext& ctx, ParsedTime* out) {
  Scanner t = sc;
  if (!IsWeekdayName(t.Peek(0), t.Peek(1), t.Peek(2)) || t.Peek(3) != ' ') {
    return false;
  }
  t.i += 4;
  Civil c;
  c.month = ReadMonthName(t);
  if (c.month == 0 || !t.Eat(' ')) return false;
  t.Eat(' ');
  uint64_t day = 0;
  if (t.DigitsUpTo(2, &day) == 0 || !t.Eat(' ')) return false;
  c.day = static_cast<int>(day);
  if (!ReadClock(t, /*comma_fraction=*/false, &c, nullptr) || !t.Eat(' ')) {
    return false;
  }
  int64_t offset = ctx.tz_offset_s;
  if (ReadUtcWord(t)) {
    offset = 0;
    if (!t.Eat(' ')) return false;
  }
  int year = 0;
  if (!t.Digits(4, &year) || IsDigit(t.Peek())) return false;
  c.year = year;
  if (!ValidDate(c.year, c.month, c.day, false)) return false;
  return Accept(sc, t, c, offset, TimeFormat::kDmesgCtime, false, out);
}

// Epoch value of an integer part plus a fraction of one unit, scale chosen
// by magnitude within [2000, 2100). Sub-µs digits are truncated.
std::optional<int64_t> EpochToUs(uint64_t ip, int64_t frac_ns) {
  if (ip >= kEpochMinS && ip < kEpochMaxS) {
    return static_cast<int64_t>(ip) * kUsPerSec + frac_ns / 1000;
  }
  if (ip >= kEpochMinS * 1000 && ip < kEpochMaxS * 1000) {
    return static_cast<int64_t>(ip) * 1000 + frac_ns / 1'000'000;
  }
  if (ip >= kEpochMinS * 1'000'000 && ip < kEpochMaxS * 1'000'000) {
    return static_cast<int64_t>(ip);
  }
  if (ip >= kEpochMinS * 1'000'000'000 && ip < kEpochMaxS * 1'000'000'000) {
    return static_cast<int64_t>(ip / 1000);
  }
  return std::nullopt;
}

// What may follow a bare number for it to count as a stamp: "1762091201.5 x",
// "1762091201,", "1762091201|". Letters, '-', '/', '_' and more digits mean
// an identifier, a date or a path.
bool IsNumberTerminator(char c) {
  return c == '\0' || c == ' ' || c == '\t' || c == '\r' || c == '\n' ||
         c == ',' || c == ';' || c == '|' || c == ']' || c == ')' ||
         c == ':' || c == '"' || c == '\'';
}

// Epoch number at a line start: digits with an optional '.' fraction.
bool ReadEpoch(Scanner& sc, ParsedTime* out) {
  Scanner t = sc;
  uint64_t ip = 0;
  if (t.DigitsUpTo(19, &ip) == 0 || IsDigit(t.Peek())) return false;
  Fraction f;
  if (t.Peek() == '.' && IsDigit(t.Peek(1))) {
    ++t.i;
    if (!ReadFraction(t, &f)) return false;
  }
  if (!IsNumberTerminator(t.Peek())) return false;
  const std::optional<int64_t> us = EpochToUs(ip, f.ns);
  if (!us) return false;
  out->format = TimeFormat::kEpoch;
  out->wall_us = *us;
  sc = t;
  return true;
}

// "[<pad>secs.frac]" at sc (sc at '['): the kernel's printk stamp. Returns
// the integer part and fraction; `min_frac_digits` lets FindMonotonic insist
// on the kernel's exact six digits when it scans inside free text.
bool ReadBracketNumber(Scanner& sc, size_t min_frac_digits, size_t max_frac_digits,
                       uint64_t* ip, Fraction* f) {
  Scanner t = sc;
  if (!t.Eat('[')) return false;
  t.SkipSpaces(kMaxBracketPad);
  if (t.DigitsUpTo(19, ip) == 0 || IsDigit(t.Peek()) || !t.Eat('.')) {
    return false;
  }
  if (!ReadFraction(t, f) || f->digits < min_frac_digits ||
      f->digits > max_frac_digits || !t.Eat(']')) {
    return false;
  }
  sc = t;
  return true;
}

double MonotonicSeconds(uint64_t ip, const Fraction& f) {
  return static_cast<double>(ip) + static_cast<double>(f.ns) * 1e-9;
}

// "[  +0.000316]" / "[-1.5]" (dmesg -H deltas) at sc; sc at '['.
bool ReadDelta(Scanner& sc, double* delta) {
  Scanner t = sc;
  if (!t.Eat('[')) return false;
  t.SkipSpaces(kMaxBracketPad);
  const char sign = t.Peek();
  if (sign != '+' && sign != '-') return false;
  ++t.i;
  uint64_t ip = 0;
  Fraction f;
  if (t.DigitsUpTo(12, &ip) == 0 || IsDigit(t.Peek()) || !t.Eat('.') ||
      !ReadFraction(t, &f) || !t.Eat(']')) {
    return false;
  }
  const double v = MonotonicSeconds(ip, f);
  *delta = sign == '-' ? -v : v;
  sc = t;
  return true;
}

// dmesg -H first-of-minute stamp: strftime "%b%e %H:%M", so "[Nov 2 13:46]"
// and "[Nov12 13:46]". Minute precision, no year.
bool ReadShortCtime(Scanner& sc, const TimeContext& ctx, ParsedTime* out) {
  Scanner t = sc;
  Civil c;
  c.month = MonthFromName(t.Peek(0), t.Peek(1), t.Peek(2));
  if (c.month == 0) return false;
  t.i += 3;
  t.SkipSpaces(2);
  uint64_t day = 0;
  if (t.DigitsUpTo(2, &day) == 0 || !t.Eat(' ')) return false;
  c.day = static_cast<int>(day);
  c.year = ctx.default_year;
  if (!t.Digits(2, &c.hour) || !t.Eat(':') || !t.Digits(2, &c.minute)) {
    return false;
  }
  if (t.Peek() == ':') {
    ++t.i;
    if (!t.Digits(2, &c.second)) return false;
  }
  if (!ValidTime(c.hour, c.minute, c.second) ||
      !ValidDate(c.year, c.month, c.day, true) || !t.Eat(']')) {
    return false;
  }
  return Accept(sc, t, c, ctx.tz_offset_s, TimeFormat::kDmesgCtime, true, out);
}

// NVIDIA Fabric Manager (and DCGM host engine): "Nov 02 2026 06:21:41"
// inside brackets, "[%b %d %Y %H:%M:%S]". Local time, with its year.
bool ReadMonthDayYear(Scanner& sc, const TimeContext& ctx, ParsedTime* out) {
  Scanner t = sc;
  Civil c;
  c.month = MonthFromName(t.Peek(0), t.Peek(1), t.Peek(2));
  if (c.month == 0 || t.Peek(3) != ' ') return false;
  t.i += 4;
  t.Eat(' ');
  uint64_t day = 0;
  if (t.DigitsUpTo(2, &day) == 0 || !t.Eat(' ')) return false;
  c.day = static_cast<int>(day);
  int year = 0;
  if (!t.Digits(4, &year) || !t.Eat(' ')) return false;
  c.year = year;
  if (!ReadClock(t, /*comma_fraction=*/false, &c, nullptr) || !t.Eat(']') ||
      !ValidDate(c.year, c.month, c.day, false)) {
    return false;
  }
  return Accept(sc, t, c, ctx.tz_offset_s, TimeFormat::kDmesgCtime, false, out);
}

// Everything that can follow '[' at a line start.
// Whether a bracketed stamp can start with `c` after its '[': every
// recogniser of ReadBracketed begins with one of these (padding spaces, a
// number, a delta's sign, a glog level, a month or weekday name). Launcher
// prefixes ("[rank3]:", "[default0]:") fail here at once, before the whole
// chain is tried on them and the stamp after them is read.
bool MayStartBracketedStamp(char c) {
  if (IsDigit(c) || c == ' ' || c == '+' || c == '-') return true;
  if (c == 'I' || c == 'W' || c == 'E' || c == 'F') return true;  // ReadGlog
  // The first letters of the month (jan..dec) and weekday (mon..sun)
  // names, either case, as bits of a mask (a find in "jfmasondtw" was a
  // memchr call on every line a launcher prefix opens).
  constexpr uint32_t kFirstLetters = [] {
    uint32_t m = 0;
    for (char l : std::string_view("jfmasondtw")) m |= uint32_t{1} << (l - 'a');
    return m;
  }();
  const char l = Lower(c);
  return l >= 'a' && l <= 'z' && ((kFirstLetters >> (l - 'a')) & 1u) != 0;
}

bool ReadBracketed(Scanner& sc, const TimeContext& ctx, ParsedTime* out) {
  Scanner t = sc;
  if (t.Peek() != '[' || !MayStartBracketedStamp(t.Peek(1))) return false;

  // Kernel monotonic (or an epoch printed in brackets; the kernel cannot have
  // been up for 30 years, so the two ranges never meet).
  uint64_t ip = 0;
  Fraction f;
  Scanner num = t;
  if (ReadBracketNumber(num, 1, kMaxFractionDigits, &ip, &f)) {
    if (ip < kEpochMinS) {
      out->format = TimeFormat::kKernelMonotonic;
      out->monotonic_s = MonotonicSeconds(ip, f);
    } else {
      const std::optional<int64_t> us = EpochToUs(ip, f.ns);
      if (!us) return false;
      out->format = TimeFormat::kEpoch;
      out->wall_us = *us;
    }
    sc = num;
    return true;
  }
  double delta = 0;
  Scanner rel = t;
  if (ReadDelta(rel, &delta)) {
    // Relative to the previous record: recognised so the caller treats the
    // line as a kernel line, but it carries neither wall nor monotonic time.
    out->format = TimeFormat::kKernelMonotonic;
    out->delta_s = delta;
    sc = rel;
    return true;
  }

  ++t.i;
  // DeepSpeed and many Python apps: "[2026-11-02 13:46:41,123] [INFO] ...".
  int64_t us = 0;
  TimeFormat fmt = TimeFormat::kUnknown;
  Scanner iso = t;
  if (ReadIso(iso, ctx, IsoOptions{}, &us, &fmt)) {
    // "[stamp] msg" ends past the bracket; "[stamp LEVEL ...] msg" after the
    // stamp. Anything else glued on is not a stamp we understand.
    if (!iso.Eat(']') && iso.Peek() != ' ') return false;
    out->format = fmt;
    out->wall_us = us;
    sc = iso;
    return true;
  }
  // PyTorch c10 logging: "[E1102 13:46:41.123456 1234 ProcessGroupNCCL.cpp:1234] ..."
  // The bracket closes after pid and file, so `end` stops after the clock.
  Scanner g = t;
  if (ReadGlog(g, ctx, out)) {
    sc = g;
    return true;
  }
  Scanner ct = t;
  if (ReadCtime(ct, ctx, out)) {
    if (!ct.Eat(']')) {
      *out = ParsedTime{};
      return false;
    }
    sc = ct;
    return true;
  }
  Scanner sh = t;
  if (ReadShortCtime(sh, ctx, out)) {
    sc = sh;
    return true;
  }
  Scanner fm = t;
  if (ReadMonthDayYear(fm, ctx, out)) {
    sc = fm;
    return true;
  }
  return false;
}

// vLLM: "INFO 11-02 13:46:41 [api_server.py:123] ..." (Python logging with
// datefmt "%m-%d %H:%M:%S", so no year), and "ERROR 2026-11-02 13:46:41,123".
bool ReadLevelPrefixed(Scanner& sc, const TimeContext& ctx, ParsedTime* out) {
  static constexpr std::string_view kLevels[] = {"DEBUG", "INFO", "WARNING",
                                                 "WARN",  "ERROR", "CRITICAL"};
  Scanner t = sc;
  bool found = false;
  for (const std::string_view level : kLevels) {
    if (t.s.size() - t.i > level.size() && t.s.substr(t.i, level.size()) == level &&
        t.s[t.i + level.size()] == ' ') {
      t.i += level.size();
      found = true;
      break;
    }
  }
  if (!found || t.SkipSpaces(8) == 0) return false;

  int64_t us = 0;
  TimeFormat fmt = TimeFormat::kUnknown;
  Scanner iso = t;
  if (ReadIso(iso, ctx, IsoOptions{}, &us, &fmt)) {
    out->format = fmt;
    out->wall_us = us;
    sc = iso;
    return true;
  }
  Civil c;
  if (!t.Digits(2, &c.month) || !t.Eat('-') || !t.Digits(2, &c.day) ||
      !t.Eat(' ')) {
    return false;
  }
  c.year = ctx.default_year;
  if (!ValidDate(c.year, c.month, c.day, true) ||
      !ReadClock(t, /*comma_fraction=*/true, &c, nullptr)) {
    return false;
  }
  if (!t.AtEnd() && t.Peek() != ' ') return false;
  return Accept(sc, t, c, ctx.tz_offset_s, TimeFormat::kPythonLogging, true, out);
}

// A wall-clock stamp (no brackets, no syslog priority) at sc.
bool ReadWall(Scanner& sc, const TimeContext& ctx, ParsedTime* out) {
  const char c0 = sc.Peek();
  if (IsDigit(c0)) {
    int64_t us = 0;
    TimeFormat fmt = TimeFormat::kUnknown;
    Scanner t = sc;
    if (ReadIso(t, ctx, IsoOptions{}, &us, &fmt)) {
      out->format = fmt;
      out->wall_us = us;
      sc = t;
      return true;
    }
    return ReadEpoch(sc, out);
  }
  if (!IsAlpha(c0)) return false;
  Scanner t = sc;
  if (ReadGlog(t, ctx, out) || ReadSyslog(t, ctx, out) ||
      ReadLevelPrefixed(t, ctx, out)) {
    sc = t;
    return true;
  }
  // journalctl -o short-full "Mon 2026-11-02 13:46:41 UTC" and bare ctime.
  if (IsWeekdayName(t.Peek(0), t.Peek(1), t.Peek(2)) && t.Peek(3) == ' ') {
    Scanner w = t;
    w.i += 4;
    int64_t us = 0;
    TimeFormat fmt = TimeFormat::kUnknown;
    if (ReadIso(w, ctx, IsoOptions{}, &us, &fmt)) {
      out->format = TimeFormat::kIso8601;
      out->wall_us = us;
      sc = w;
      return true;
    }
    if (ReadCtime(t, ctx, out)) {
      sc = t;
      return true;
    }
  }
  return false;
}

// Syslog lines forwarded from the kernel carry printk's own stamp:
// "... node017 kernel: [1000001.682554] NVRM: ...". Only "kernel:" directly
// before the bracket counts, so an application's "[3.141592]" stays text.
std::optional<double> KernelMonotonicAfter(std::string_view line, size_t from) {
  static constexpr std::string_view kTag = "kernel:";
  const size_t limit = std::min(line.size(), from + kKernelLookahead);
  if (from >= limit) return std::nullopt;
  const std::string_view window = line.substr(from, limit - from);
  const size_t at = window.find(kTag);
  if (at == std::string_view::npos) return std::nullopt;
  Scanner t{line, from + at + kTag.size()};
  t.SkipSpaces(kMaxBracketPad);
  uint64_t ip = 0;
  Fraction f;
  if (!ReadBracketNumber(t, 1, 9, &ip, &f) || ip >= kEpochMinS) {
    return std::nullopt;
  }
  return MonotonicSeconds(ip, f);
}

size_t SkipLeadingSpace(std::string_view line) {
  size_t i = 0;
  // A UTF-8 byte order mark can open the first line of a file.
  if (line.size() >= 3 && line[0] == '\xEF' && line[1] == '\xBB' &&
      line[2] == '\xBF') {
    i = 3;
  }
  // A terminal's echo of Ctrl-C ("^C") runs into the next line the
  // program prints: torchrun's stamped report of the SIGINT it received.
  if (line.size() >= i + 2 && line[i] == '^' && line[i + 1] == 'C') i += 2;
  const size_t limit = std::min(line.size(), i + kMaxLeadingSpace + 1);
  while (i < limit && (line[i] == ' ' || line[i] == '\t')) ++i;
  return i;
}

}  // namespace

// Days since 1970-01-01 of a proleptic Gregorian date (Hinnant). Days past a
// month's end roll over, which year-less formats rely on (see ValidDate).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t mp = m > 2 ? m - 3 : m + 9;
  const int64_t doy = (153 * mp + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

CivilDate CivilFromDays(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return {yoe + era * 400 + (m <= 2 ? 1 : 0), m, d};
}

int UtcYear(int64_t unix_s) {
  constexpr int64_t kYear10000 = 253402300800;  // seconds at 10000-01-01
  if (unix_s >= 0 && unix_s < kYear10000) return static_cast<int>(CivilFromDays(unix_s / 86400).year);
  const time_t t = static_cast<time_t>(unix_s);
  struct tm tm;
  if (gmtime_r(&t, &tm) == nullptr) return 1970;
  return tm.tm_year + 1900;
}

const char* TimeSourceName(TimeSource s) {
  switch (s) {
    case TimeSource::kNone:
      return "none";
    case TimeSource::kParsed:
      return "parsed";
    case TimeSource::kInherited:
      return "inherited";
    case TimeSource::kInferredYear:
      return "inferred_year";
    case TimeSource::kMonotonicAnchored:
      return "monotonic_anchored";
  }
  return "none";
}

// RFC 3339 years, 0000-9999 UTC. A zone offset or leap second at either
// end carries a four-digit local date past them ("0000-01-01" at +01:00),
// to an instant FormatRfc3339 cannot write and no log means.
constexpr int64_t kMinWallUs = -62'167'219'200 * kUsPerSec;     // 0000-01-01T00:00:00Z
constexpr int64_t kMaxWallUs = 253'402'300'800 * kUsPerSec - 1;  // 9999-12-31T23:59:59.999999Z

bool WallInRange(int64_t us) { return us >= kMinWallUs && us <= kMaxWallUs; }

std::optional<ParsedTime> ParseLineTimeAnyYear(std::string_view line, const TimeContext& ctx, bool shortcuts);

std::optional<ParsedTime> ParseLineTimeInRange(std::string_view line, const TimeContext& ctx, bool shortcuts) {
  std::optional<ParsedTime> t = ParseLineTimeAnyYear(line, ctx, shortcuts);
  if (t && t->wall_us && !WallInRange(*t->wall_us)) return std::nullopt;
  return t;
}

std::optional<ParsedTime> ParseLineTime(std::string_view line,
                                        const TimeContext& ctx) {
  // A launcher prefix ("[rank3]:", "[default0]:") opens every line of a
  // torchrun log, and PlainLineTime tries the whole line before the stamp
  // after the prefix: ReadBracketed refuses it at its second byte, and so
  // can this, before the scanner and the result are set up (a line that
  // starts with '[' has no leading space, byte order mark or "^C" to skip).
  if (LineTimeRefusedAtOpening(line)) return std::nullopt;
  return ParseLineTimeInRange(line, ctx, true);
}

bool LineTimeRefusedAtOpening(std::string_view line) {
  return line.size() >= 2 && line[0] == '[' && !MayStartBracketedStamp(line[1]);
}

std::optional<ParsedTime> ParseShortGlogTime(std::string_view line, const TimeContext& ctx) {
  // ParseLineTime's path to ReadShortGlog on such a line: no leading space,
  // byte order mark or "^C" to skip before a level letter, no '[' or '<',
  // and ReadWall tries ReadGlog first on a letter.
  if (line.empty() || (line[0] != 'I' && line[0] != 'W' && line[0] != 'E' && line[0] != 'F')) return std::nullopt;
  Scanner sc{line, 0, true};
  ParsedTime out;
  if (!ReadShortGlog(sc, ctx, &out)) return std::nullopt;
  out.end = sc.i;
  if (out.wall_us && !WallInRange(*out.wall_us)) return std::nullopt;
  return out;
}

std::optional<ParsedTime> internal::ParseLineTimeGeneral(std::string_view line, const TimeContext& ctx) {
  return ParseLineTimeInRange(line, ctx, false);
}

std::optional<ParsedTime> ParseLineTimeAnyYear(std::string_view line,
                                               const TimeContext& ctx, bool shortcuts) {
  const size_t start = SkipLeadingSpace(line);
  if (start > kMaxLeadingSpace) return std::nullopt;
  Scanner sc{line, start, shortcuts};
  ParsedTime out;

  if (sc.Peek() == '[') {
    if (!ReadBracketed(sc, ctx, &out)) return std::nullopt;
    out.end = sc.i;
    return out;
  }

  // Syslog priority as sent on the wire or kept by some collectors:
  // "<13>Nov  2 13:46:41 ..." (RFC 3164) or "<34>1 2026-11-02T..." (RFC 5424).
  if (sc.Peek() == '<') {
    Scanner t = sc;
    ++t.i;
    uint64_t pri = 0;
    if (t.DigitsUpTo(3, &pri) == 0 || !t.Eat('>')) return std::nullopt;
    if (IsDigit(t.Peek()) && t.Peek(1) == ' ') t.i += 2;  // RFC 5424 VERSION
    sc = t;
  }

  if (!ReadWall(sc, ctx, &out)) return std::nullopt;
  out.end = sc.i;
  if (out.format == TimeFormat::kSyslog || out.format == TimeFormat::kIso8601) {
    out.monotonic_s = KernelMonotonicAfter(line, sc.i);
  }
  return out;
}

bool MayHoldLineTime(std::string_view line) {
  const size_t n = line.size();
  auto digit_at = [&](size_t i) { return i < n && IsDigit(line[i]); };
  // ReadClock's "dd:dd:dd" and ReadShortCtime's "dd:dd]".
  for (size_t c = line.find(':'); c != std::string_view::npos; c = line.find(':', c + 1)) {
    if (c >= 2 && digit_at(c - 2) && digit_at(c - 1) && digit_at(c + 1) && digit_at(c + 2) && c + 3 < n &&
        (line[c + 3] == ':' || line[c + 3] == ']')) {
      return true;
    }
  }
  // ReadBracketNumber's and ReadDelta's "digits.digits".
  for (size_t d = line.find('.'); d != std::string_view::npos; d = line.find('.', d + 1)) {
    if (d >= 1 && digit_at(d - 1) && digit_at(d + 1)) return true;
  }
  // ReadEpoch's integer part: a run of nine digits or more covers a
  // position that is a multiple of nine.
  for (size_t i = 0; i < n; i += 9) {
    if (!IsDigit(line[i])) continue;
    size_t b = i;
    while (b > 0 && IsDigit(line[b - 1])) --b;
    size_t e = i + 1;
    while (e < n && IsDigit(line[e])) ++e;
    if (e - b >= 9) return true;
  }
  return false;
}

namespace {

// A kernel stamp "[ secs.usecs]" at line[i] (a '['), with exactly printk's
// six digits: free text is full of "[0.5]"-like things.
std::optional<double> MonotonicAt(std::string_view line, size_t i) {
  Scanner t{line, i};
  uint64_t ip = 0;
  Fraction f;
  if (ReadBracketNumber(t, 6, 6, &ip, &f) && ip < kEpochMinS) return MonotonicSeconds(ip, f);
  return std::nullopt;
}

constexpr size_t kMonotonicWindow = 128;

}  // namespace

std::optional<double> internal::FindMonotonicBytewise(std::string_view line) {
  const size_t limit = std::min<size_t>(line.size(), kMonotonicWindow);
  for (size_t i = 0; i < limit; ++i) {
    const void* bracket = std::memchr(line.data() + i, '[', limit - i);
    if (bracket == nullptr) break;
    i = static_cast<size_t>(static_cast<const char*>(bracket) - line.data());
    // ReadBracketNumber reads padding spaces or a digit first.
    if (i + 1 < line.size() && line[i + 1] != ' ' && !IsDigit(line[i + 1])) continue;
    if (std::optional<double> m = MonotonicAt(line, i)) return m;
  }
  return std::nullopt;
}

// As FindMonotonicBytewise, the '[' found 16 positions at a time: a glog
// line has three or four in its first 128 bytes (the launcher's, the
// stamp's, "[PG 0 Rank 0]"), none a candidate, and a memchr call for each
// cost more than the 8 blocks' compares.
std::optional<double> FindMonotonic(std::string_view line) {
  const size_t limit = std::min<size_t>(line.size(), kMonotonicWindow);
  auto candidate = [&](size_t i) {
    // ReadBracketNumber reads padding spaces or a digit first.
    return i + 1 >= line.size() || line[i + 1] == ' ' || IsDigit(line[i + 1]);
  };
  size_t i = 0;
#if defined(__SSE2__)
  // Whole blocks below the limit (128 is a multiple of 16); the rest byte
  // by byte.
  for (; limit - i >= 16; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(line.data() + i));
    for (unsigned m = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('[')))); m != 0;
         m &= m - 1) {
      const size_t j = i + static_cast<size_t>(__builtin_ctz(m));
      if (!candidate(j)) continue;
      if (std::optional<double> r = MonotonicAt(line, j)) return r;
    }
  }
#endif
  for (; i < limit; ++i) {
    if (line[i] != '[' || !candidate(i)) continue;
    if (std::optional<double> m = MonotonicAt(line, i)) return m;
  }
  return std::nullopt;
}

std::optional<double> ParseDmesgDelta(std::string_view line) {
  const size_t start = SkipLeadingSpace(line);
  if (start > kMaxLeadingSpace) return std::nullopt;
  Scanner sc{line, start};
  double delta = 0;
  if (!ReadDelta(sc, &delta)) return std::nullopt;
  return delta;
}

std::optional<int64_t> ParseIso8601(std::string_view s, const TimeContext& ctx) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' ||
                        s.back() == '\n')) {
    s.remove_suffix(1);
  }
  Scanner sc{s, 0};
  int64_t us = 0;
  TimeFormat fmt = TimeFormat::kUnknown;
  if (!ReadIso(sc, ctx, IsoOptions{.lenient = true}, &us, &fmt) || !sc.AtEnd() || !WallInRange(us)) {
    return std::nullopt;
  }
  return us;
}

std::optional<int64_t> ParseEpochNumber(double v) {
  if (!std::isfinite(v) || v <= 0) return std::nullopt;
  const double lo = static_cast<double>(kEpochMinS);
  const double hi = static_cast<double>(kEpochMaxS);
  if (v >= lo && v < hi) return std::llround(v * 1e6);
  if (v >= lo * 1e3 && v < hi * 1e3) return std::llround(v * 1e3);
  if (v >= lo * 1e6 && v < hi * 1e6) return std::llround(v);
  if (v >= lo * 1e9 && v < hi * 1e9) return std::llround(v / 1e3);
  return std::nullopt;
}

std::string FormatRfc3339(int64_t us) {
  // Floor division so times before 1970 format as the right civil second.
  int64_t secs = us / kUsPerSec;
  int64_t frac = us % kUsPerSec;
  if (frac < 0) {
    frac += kUsPerSec;
    --secs;
  }
  int64_t days = secs / kSecsPerDay;
  int64_t sod = secs % kSecsPerDay;
  if (sod < 0) {
    sod += kSecsPerDay;
    --days;
  }
  const CivilDate d = CivilFromDays(days);
  char buf[64];
  const int n = std::snprintf(
      buf, sizeof(buf), "%04lld-%02d-%02dT%02d:%02d:%02d.%06lldZ",
      static_cast<long long>(d.year), d.month, d.day,
      static_cast<int>(sod / 3600), static_cast<int>(sod / 60 % 60),
      static_cast<int>(sod % 60), static_cast<long long>(frac));
  return std::string(buf, n > 0 ? static_cast<size_t>(n) : 0);
}

std::optional<int64_t> ParseTzOffset(std::string_view tz) {
  while (!tz.empty() && tz.front() == ' ') tz.remove_prefix(1);
  while (!tz.empty() && tz.back() == ' ') tz.remove_suffix(1);
  if (tz.empty()) return std::nullopt;

  auto iequals = [](std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t k = 0; k < a.size(); ++k) {
      if (Lower(a[k]) != Lower(b[k])) return false;
    }
    return true;
  };
  // Zones that are UTC by definition. Named regional zones ("Europe/Berlin",
  // "PST") need the tz database and DST rules, which we deliberately do not
  // carry: they return nullopt and the caller must supply an offset.
  static constexpr std::string_view kUtcNames[] = {
      "Z", "UTC", "GMT", "UT", "Zulu", "Universal", "Etc/UTC", "Etc/GMT",
      "Etc/Universal", "Etc/Zulu", "Etc/UCT", "UCT", "GMT0", "Etc/GMT0"};
  for (const std::string_view n : kUtcNames) {
    if (iequals(tz, n)) return 0;
  }

  // POSIX-style "Etc/GMT+8" means eight hours *west*: the sign is inverted.
  int64_t sign_flip = 1;
  if (tz.size() > 7 && iequals(tz.substr(0, 7), "Etc/GMT")) {
    tz.remove_prefix(7);
    sign_flip = -1;
  } else if (tz.size() > 3 &&
             (iequals(tz.substr(0, 3), "UTC") || iequals(tz.substr(0, 3), "GMT"))) {
    tz.remove_prefix(3);
  }

  Scanner sc{tz, 0};
  const char sign = sc.Peek();
  if (sign != '+' && sign != '-') return std::nullopt;
  ++sc.i;
  uint64_t hh = 0;
  uint64_t mm = 0;
  const int hd = sc.DigitsUpTo(2, &hh);
  if (hd == 0) return std::nullopt;
  if (sc.Eat(':')) {
    if (hd != 2 || sc.DigitsUpTo(2, &mm) != 2) return std::nullopt;
  } else if (!sc.AtEnd()) {
    if (hd != 2 || sc.DigitsUpTo(2, &mm) != 2) return std::nullopt;
  }
  if (!sc.AtEnd() || hh > 23 || mm > 59) return std::nullopt;
  const int64_t v = static_cast<int64_t>(hh * 3600 + mm * 60);
  return (sign == '-' ? -v : v) * sign_flip;
}

}  // namespace faultline
