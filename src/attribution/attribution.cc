// Line attribution: who (rank, host, GPU, pid) wrote one log line, read off
// the prefixes launchers and libraries put in front of it and a few
// well-known markers inside the message. Hand-written scanners rather than
// regexes: this runs on every matched line, and each recogniser only looks at
// a bounded window, so a garbage or multi-megabyte line costs a few linear
// passes at most and never reads past the view.
//
// Order of trust when several sources name the same field: the launcher that
// wrapped the process (torchrun, mpirun, vLLM/Ray) over explicit JSON fields,
// over "[Rank N]" markers inside the message, over the srun task label, which
// is the node index rather than the rank whenever torchrun runs inside srun.

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attribution/attribution.h"
#include "attribution/line_memo.h"
#include "attribution/lex.h"
#include "util/bytescan.h"

namespace faultline {
namespace {

using attribution_internal::At;
using attribution_internal::AtIgnoreCase;
using attribution_internal::EqualsIgnoreCase;
using attribution_internal::HexValue;
using attribution_internal::IsAlnum;
using attribution_internal::IsAlpha;
using attribution_internal::IsDigit;
using attribution_internal::IsHex;
using attribution_internal::IsHostChar;
using attribution_internal::IsIpv4;
using attribution_internal::IsSpace;
using attribution_internal::IsUpper;
using attribution_internal::IsWordChar;
using attribution_internal::kNpos;
using attribution_internal::ParseUint;
using attribution_internal::ParseUintWhole;
using attribution_internal::SkipSpaces;
using attribution_internal::ToLower;

// Launchers print at most a handful of nested prefixes; the cap keeps a line
// of repeated "[rank1]:" from costing more than a few steps.
constexpr int kMaxPrefixes = 8;

// Everything one pass over a line found, per source, so the sources can be
// ranked at the end instead of by the order they appear in the text.
struct Found {
  std::optional<int64_t> launcher_rank;   // [rankN]:, [J,R]<stdout>:, rank=N
  std::optional<int64_t> launcher_local;  // [defaultN]:, vLLM TPn
  bool torchrun = false;                  // a torchrun prefix was present
  std::optional<int64_t> srun_rank;
  std::optional<int64_t> json_rank;
  std::optional<int64_t> json_local;
  std::optional<int64_t> bracket_rank;    // [Rank N], [PG 0 Rank N]
  std::optional<int64_t> loose_rank;      // rank: N, Rank N:
  std::optional<int64_t> device;          // NCCL "[3]"
  std::optional<int64_t> pid;
  // The process id of a glog-style header ("W1102 13:46:41.830000 4015698
  // api.py:719] "): PyTorch's loggers print the pid there, C++ glog the
  // thread id, which is the pid for the main thread. Weakest pid source.
  std::optional<int64_t> header_pid;
  std::string host;
  // pdsh's "host: " in front of a remote line: the host the launcher ran
  // the command on, weaker than a host the line itself prints.
  std::string pdsh_host;
  std::string gpu;
};

void SetIfUnset(std::optional<int64_t>& field, std::optional<int64_t> v) {
  if (!field && v) field = v;
}

void SetHostIfUnset(std::string& field, std::string_view host) {
  if (field.empty()) field = NormalizeHost(host);
}

// Log levels that sit where a syslog hostname would in
// "2026-11-02T13:46:41Z INFO app: msg"-style application logs.
bool IsLevelWord(std::string_view w) {
  static constexpr std::string_view kLevels[] = {
      "trace", "debug", "info",  "notice", "warn", "warning", "error",
      "err",   "crit",  "critical", "alert", "emerg", "fatal", "panic"};
  for (std::string_view l : kLevels) {
    if (EqualsIgnoreCase(w, l)) return true;
  }
  return w.size() == 1;  // glog-style single letters: I W E F D
}

// A host token as printed by NCCL, UCX and syslog: host characters, at least
// one letter (so "12:34:56" never yields host "12"), an IPv4 literal, or an
// address with dashes: NCCL prints gethostname() up to its first '.'
// (debug.cc getHostName), so a machine named after its address stands
// whole; a date has three groups and a clock colons.
bool LooksLikeHostToken(std::string_view h) {
  if (h.empty() || h.size() > 253 || !IsAlnum(h[0])) return false;
  bool letter = false;
  for (char c : h) {
    if (!IsHostChar(c)) return false;
    letter |= IsAlpha(c);
  }
  return letter || IsIpv4(h) || IsIpv4(h, '-');
}

size_t HostTokenEnd(std::string_view s, size_t p) {
  const size_t end = p < s.size() ? p + std::min<size_t>(s.size() - p, 254) : p;
  size_t q = p;
  while (q < end && IsHostChar(s[q])) ++q;
  return q;
}

// ---- timestamps (only recognised so they can be stepped over) ----

// "dd:dd:dd" with an optional ".ffffff" / ",fff" fraction.
size_t MatchClock(std::string_view s, size_t p) {
  if (!(s.size() >= p + 8 && IsDigit(s[p]) && IsDigit(s[p + 1]) &&
        s[p + 2] == ':' && IsDigit(s[p + 3]) && IsDigit(s[p + 4]) &&
        s[p + 5] == ':' && IsDigit(s[p + 6]) && IsDigit(s[p + 7]))) {
    return kNpos;
  }
  size_t q = p + 8;
  if (q + 1 < s.size() && (s[q] == '.' || s[q] == ',') && IsDigit(s[q + 1])) {
    ++q;
    while (q < s.size() && IsDigit(s[q]) && q - p < 24) ++q;
  }
  return q;
}

// ISO 8601 / RFC 3339 / Python logging: "2026-11-02T13:46:41.123456+00:00",
// "2026-11-02 13:46:41,123", "2026/11/02 13:46:41". *used_t says whether the
// date and time were joined by 'T' (rsyslog and journald always do).
size_t MatchIsoDateTime(std::string_view s, size_t p, bool* used_t) {
  if (s.size() < p + 19) return kNpos;
  for (size_t i = 0; i < 4; ++i) {
    if (!IsDigit(s[p + i])) return kNpos;
  }
  char sep = s[p + 4];
  if ((sep != '-' && sep != '/') || !IsDigit(s[p + 5]) || !IsDigit(s[p + 6]) ||
      s[p + 7] != sep || !IsDigit(s[p + 8]) || !IsDigit(s[p + 9])) {
    return kNpos;
  }
  char t = s[p + 10];
  if (t != 'T' && t != ' ') return kNpos;
  size_t q = MatchClock(s, p + 11);
  if (q == kNpos) return kNpos;
  if (q < s.size() && s[q] == 'Z') {
    ++q;
  } else if (q + 2 < s.size() && (s[q] == '+' || s[q] == '-') &&
             IsDigit(s[q + 1]) && IsDigit(s[q + 2])) {
    q += 3;
    if (q + 2 < s.size() && s[q] == ':' && IsDigit(s[q + 1]) &&
        IsDigit(s[q + 2])) {
      q += 3;
    } else if (q + 1 < s.size() && IsDigit(s[q]) && IsDigit(s[q + 1])) {
      q += 2;
    }
  }
  if (used_t != nullptr) *used_t = (t == 'T');
  return q;
}

bool IsMonth(std::string_view s, size_t p) {
  static constexpr std::string_view kMonths[] = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun",
      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (std::string_view m : kMonths) {
    if (At(s, p, m)) return true;
  }
  return false;
}

// Syslog / journald: "Nov  2 13:46:41", "Nov 02 13:46:41.123456".
size_t MatchSyslogTime(std::string_view s, size_t p) {
  if (!IsMonth(s, p) || s.size() < p + 5 || s[p + 3] != ' ') return kNpos;
  size_t q = p + 4;
  if (s[q] == ' ') ++q;  // space-padded day
  size_t day_start = q;
  std::optional<int64_t> day = ParseUint(s, &q, 2);
  if (!day || *day < 1 || *day > 31 || q - day_start == 0) return kNpos;
  if (q >= s.size() || s[q] != ' ') return kNpos;
  return MatchClock(s, q + 1);
}

// ctime(3)'s "Fri Aug 11 12:31:45 2023" (no newline): the body of dmesg
// -T's bracketed stamp, and Open MPI's --timestamp-output, which glues it to
// the --tag-output tag ("Fri Aug 11 12:31:45 2023[1,0]<stdout>:", orte's and
// PMIx's iof output: "%s[%s,%s]<%s>:" with ctime()'s string first).
size_t MatchCtime(std::string_view s, size_t p) {
  static constexpr std::string_view kDays[] = {"Mon ", "Tue ", "Wed ", "Thu ", "Fri ", "Sat ", "Sun "};
  // Every day name ends in the space at p + 3: most tries (a glog level
  // letter, a launcher's bracket on every matched line of a dense log) end
  // there, before the seven compares.
  if (p > s.size() || s.size() - p < 4 || s[p + 3] != ' ') return kNpos;
  bool day = false;
  for (std::string_view d : kDays) day |= At(s, p, d);
  if (!day) return kNpos;
  size_t r = MatchSyslogTime(s, p + 4);
  if (r == kNpos || r + 5 > s.size() || s[r] != ' ') return kNpos;
  for (size_t i = r + 1; i < r + 5; ++i) {
    if (!IsDigit(s[i])) return kNpos;
  }
  return r + 5;
}

enum class StampKind { kNone, kCollector, kGlog };

// Steps over one timestamp-looking token at s[p]. Collector stamps (ISO,
// bracketed kernel/epoch/dmesg stamps, bare clocks) may stand before an srun
// label; glog headers belong to the program and never do.
size_t SkipTimestamp(std::string_view s, size_t p, StampKind* kind,
                     std::optional<int64_t>* glog_pid) {
  *kind = StampKind::kCollector;
  if (s[p] == '[' && p + 1 < s.size() && IsAlpha(s[p + 1])) {
    // Of the bracketed stamps below only dmesg -T's opens with a letter (its
    // day name); the bracket of a glog header after a launcher prefix
    // ("[rank0]:[I1102 ..."), on every line of a torchrun log, is refused
    // by the day name's test alone, not by two ISO tries and a number's.
    const size_t r = MatchCtime(s, p + 1);
    return r != kNpos && r < s.size() && s[r] == ']' ? r + 1 : kNpos;
  }
  bool used_t = false;
  size_t q = MatchIsoDateTime(s, p, &used_t);
  if (q != kNpos) {
    // CRI (containerd/CRI-O) log files: "<RFC3339Nano> stdout F <msg>".
    size_t r = q + 1;
    if (At(s, q, " ") && (At(s, r, "stdout ") || At(s, r, "stderr ")) &&
        r + 7 < s.size() && (s[r + 7] == 'F' || s[r + 7] == 'P') &&
        (r + 8 == s.size() || s[r + 8] == ' ')) {
      q = r + 8;
    }
    return q;
  }
  if (s[p] == '[') {
    // "[ 1000001.682554]", "[1730555201.123456]", "[  +0.000316]".
    size_t r = SkipSpaces(s, p + 1);
    if (r < s.size() && (s[r] == '+' || s[r] == '-')) ++r;
    if (ParseUint(s, &r, 12) && r < s.size() && s[r] == '.') {
      ++r;
      if (ParseUint(s, &r, 9)) {
        r = SkipSpaces(s, r);
        if (r < s.size() && s[r] == ']') return r + 1;
      }
    }
    // "[2026-11-02 13:46:41,123]" (DeepSpeed, NCCL_DEBUG_TIMESTAMP_FORMAT).
    r = MatchIsoDateTime(s, p + 1, nullptr);
    if (r != kNpos && r < s.size() && s[r] == ']') return r + 1;
    // dmesg -T: "[Mon Nov  2 13:46:41 2026]".
    r = MatchCtime(s, p + 1);
    if (r != kNpos && r < s.size() && s[r] == ']') return r + 1;
    return kNpos;
  }
  if (q = MatchCtime(s, p); q != kNpos) return q;
  q = MatchSyslogTime(s, p);
  if (q != kNpos) return q;
  // glog: "I1102 13:46:41.123456  1234 file.cc:56] " (whole header).
  if ((s[p] == 'I' || s[p] == 'W' || s[p] == 'E' || s[p] == 'F') &&
      s.size() >= p + 6 && IsDigit(s[p + 1]) && IsDigit(s[p + 2]) &&
      IsDigit(s[p + 3]) && IsDigit(s[p + 4]) && s[p + 5] == ' ') {
    q = MatchClock(s, p + 6);
    if (q != kNpos) {
      *kind = StampKind::kGlog;
      size_t r = SkipSpaces(s, q);
      std::optional<int64_t> id = ParseUint(s, &r, 12);
      if (id && r < s.size() && s[r] == ' ') {
        size_t close = s.find("] ", r);
        if (close != kNpos && close - r < 128) {
          *glog_pid = id;
          return close + 1;
        }
      }
      return q;
    }
  }
  q = MatchClock(s, p);
  if (q != kNpos && (q == s.size() || IsSpace(s[q]))) return q;
  // Epoch seconds/ms/us a collector put in front: "1730555201.123 ".
  q = p;
  if (ParseUint(s, &q, 16) && q - p >= 9) {
    if (q + 1 < s.size() && s[q] == '.' && IsDigit(s[q + 1])) {
      ++q;
      ParseUint(s, &q, 9);
    }
    if (q < s.size() && IsSpace(s[q])) return q;
  }
  *kind = StampKind::kNone;
  return kNpos;
}

// ---- launcher prefixes ----

// srun -l: "3: ", "  3: ", "12: " (srun pads the task id to a common width).
// A colon followed by a digit ("13:46:41") is a time, not a label.
size_t ParseSrunLabel(std::string_view s, size_t p, Found* f) {
  size_t q = p;
  std::optional<int64_t> v = ParseUint(s, &q, 7);
  if (!v || q >= s.size() || s[q] != ':') return kNpos;
  ++q;
  if (q < s.size() && !IsSpace(s[q])) return kNpos;
  f->srun_rank = v;
  return q;
}

// The role a torchrun agent was given with `--role $(hostname -s):`, the
// multi-node recipe's way to tell nodes apart: TailLog's header is
// "[{role}{local_rank}]:", so a role that is a host name and a colon gives
// "[gpu187:1]:". Shaped like pdsh's host names (lower case, with a digit,
// '-' or '.'; not a log level), so "[INFO:0]:" or "[W:1]:" stay messages.
// Returns where the colon after the host is, or kNpos.
size_t TorchrunRoleHostEnd(std::string_view s, size_t q) {
  const size_t end = HostTokenEnd(s, q);
  if (end == q || end >= s.size() || s[end] != ':') return kNpos;
  std::string_view h = s.substr(q, end - q);
  if (!LooksLikeHostToken(h) || IsLevelWord(h)) return kNpos;
  bool shaped = false;
  for (char c : h) {
    if (IsUpper(c)) return kNpos;
    shaped |= IsDigit(c) || c == '-' || c == '.';
  }
  return shaped ? end : kNpos;
}

// torchrun: "[rank3]:" (global rank), "[default3]:" (role "default",
// local rank) and "[gpu187:3]:" (role "gpu187:", the host, local rank).
size_t ParseTorchrunPrefix(std::string_view s, size_t p, Found* f) {
  if (s[p] != '[') return kNpos;
  size_t q = p + 1;
  // "rank", "default" and a role's host (TorchrunRoleHostEnd) all start
  // in lower case or with a digit: the bracket of a glog header ("[I1102")
  // or of a message ("[PG 0 Rank 0]"), tried after the prefix on every line
  // of a torchrun log, is refused here, before two compares and a host
  // token's walk.
  if (q < s.size() && IsUpper(s[q])) return kNpos;
  bool global;
  std::string_view role_host;
  if (At(s, q, "rank")) {
    global = true;
    q += 4;
  } else if (At(s, q, "default")) {
    global = false;
    q += 7;
  } else if (size_t end = TorchrunRoleHostEnd(s, q); end != kNpos) {
    global = false;
    role_host = s.substr(q, end - q);
    q = end + 1;
  } else {
    return kNpos;
  }
  std::optional<int64_t> v = ParseUint(s, &q, 7);
  if (!v || !At(s, q, "]:")) return kNpos;
  SetIfUnset(global ? f->launcher_rank : f->launcher_local, v);
  // The agent's host, as pdsh's prefix is: a host the line itself prints
  // (an NCCL prefix) still wins.
  if (!role_host.empty() && f->pdsh_host.empty()) f->pdsh_host = NormalizeHost(role_host);
  f->torchrun = true;
  return q + 2;
}

// Open MPI --tag-output: "[1,12]<stdout>:" (job id, rank). horovodrun's
// own launcher (gloo, and elastic mode) tags a worker's lines the same way
// without the job id, "[12]<stderr>:" (safe_shell_exec.forward_stream's
// '{time}[{rank}]<{prefix}>:', the index being the slot's global rank),
// behind asctime()'s stamp with --timestamp-output.
size_t ParseMpirunPrefix(std::string_view s, size_t p, Found* f) {
  if (s[p] != '[') return kNpos;
  size_t q = p + 1;
  std::optional<int64_t> rank = ParseUint(s, &q, 9);
  if (!rank || q >= s.size()) return kNpos;
  if (s[q] == ',') {
    ++q;
    rank = ParseUint(s, &q, 9);
  }
  if (!rank || !At(s, q, "]<")) return kNpos;
  q += 2;
  if (!(At(s, q, "stdout>:") || At(s, q, "stderr>:") || At(s, q, "stddiag>:"))) {
    return kNpos;
  }
  q = s.find(">:", q) + 2;
  SetIfUnset(f->launcher_rank, rank);
  return q;
}

// cuda_memtest's PRINTF/FPRINTF (cuda_memtest.h, every release since 1.0):
// "[%s][%s][%d]:" with time_string()'s local "MM/DD/YYYY HH:MM:SS", the
// gethostname() of the process and the GPU's index, or, with
// --monitor_temp, "[%s][%s][%d][%d C]:" (the temperature): "[11/21/2021
// 13:15:17][nis-arch][0]:ERROR: CUDA error: ...". The host is the line's
// own; the index is a GPU of that host, not a rank.
size_t ParseCudaMemtestPrefix(std::string_view s, size_t p, Found* f) {
  if (s[p] != '[') return kNpos;
  size_t q = p + 1;
  // The stamp: digits and '/' then a space and a clock, within 24 bytes.
  const size_t stamp_begin = q;
  while (q < s.size() && q - stamp_begin < 12 && (IsDigit(s[q]) || s[q] == '/')) ++q;
  if (q == stamp_begin || q >= s.size() || s[q] != ' ') return kNpos;
  const size_t clock_end = MatchClock(s, q + 1);
  if (clock_end == kNpos || !At(s, clock_end, "][")) return kNpos;
  q = clock_end + 2;
  const size_t host_end = HostTokenEnd(s, q);
  if (host_end == q || !At(s, host_end, "][")) return kNpos;
  std::string_view host = s.substr(q, host_end - q);
  if (!LooksLikeHostToken(host)) return kNpos;
  q = host_end + 2;
  const size_t gpu_begin = q;
  if (!ParseUint(s, &q, 4) || !At(s, q, "]")) return kNpos;
  std::string_view gpu = s.substr(gpu_begin, q - gpu_begin);
  ++q;
  if (q < s.size() && s[q] == '[') {  // "[45 C]"
    size_t t = q + 1;
    if (!ParseUint(s, &t, 4) || !At(s, t, " C]")) return kNpos;
    q = t + 3;
  }
  if (q >= s.size() || s[q] != ':') return kNpos;
  if (f->host.empty()) f->host = NormalizeHost(host);
  if (f->gpu.empty()) f->gpu = std::string(gpu);
  return q + 1;
}

// "TP3" in a vLLM process name ("TP3", "Worker_TP3", "Worker_PP0_TP3") is the
// tensor-parallel index, which is the local GPU and the worker's rank in its
// replica as long as there is no pipeline stage beyond the first.
void ParseVllmName(std::string_view tok, Found* f) {
  std::optional<int64_t> tp;
  bool later_stage = false;
  for (size_t i = 0; i + 1 < tok.size(); ++i) {
    if (i > 0 && IsAlpha(tok[i - 1])) continue;  // "...TP" inside a word
    bool is_tp = tok[i] == 'T' && tok[i + 1] == 'P';
    bool is_pp = tok[i] == 'P' && tok[i + 1] == 'P';
    if (!is_tp && !is_pp) continue;
    size_t q = i + 2;
    std::optional<int64_t> v = ParseUint(tok, &q, 5);
    if (!v || (q < tok.size() && IsAlnum(tok[q]))) continue;
    if (is_tp) tp = v;
    if (is_pp && *v > 0) later_stage = true;
  }
  if (tp && !later_stage) {
    // With a single pipeline stage the TP index is also the worker's rank in
    // its replica, which "(VllmWorker rank=N ...)" prints in other versions.
    SetIfUnset(f->launcher_local, tp);
    SetIfUnset(f->launcher_rank, tp);
  }
}

// vLLM / Ray process prefixes: "(EngineCore_0 pid=1234)",
// "(VllmWorker TP0 pid=1234)", "(VllmWorker rank=0 pid=1234)",
// "(RayWorkerWrapper pid=1234, ip=10.0.1.23)". Accepted only with a pid= or
// ip= token and nothing but names and key=value tokens inside, so ordinary
// parenthesised text is left alone.
size_t ParseProcessPrefix(std::string_view s, size_t p, Found* f) {
  if (s[p] != '(') return kNpos;
  size_t close = kNpos;
  for (size_t q = p + 1; q < s.size() && q - p < 160; ++q) {
    if (s[q] == ')') {
      close = q;
      break;
    }
    if (s[q] == '(') return kNpos;
  }
  if (close == kNpos) return kNpos;
  std::string_view body = s.substr(p + 1, close - p - 1);
  Found local;
  bool anchored = false;
  size_t i = 0;
  while (i < body.size()) {
    while (i < body.size() && (body[i] == ' ' || body[i] == ',')) ++i;
    size_t start = i;
    while (i < body.size() && body[i] != ' ' && body[i] != ',') ++i;
    std::string_view tok = body.substr(start, i - start);
    if (tok.empty()) continue;
    size_t eq = tok.find('=');
    if (eq == kNpos) {
      for (char c : tok) {
        if (!IsWordChar(c) && c != '-' && c != '.') return kNpos;
      }
      ParseVllmName(tok, &local);
      continue;
    }
    std::string_view key = tok.substr(0, eq);
    std::string_view value = tok.substr(eq + 1);
    if (key == "pid") {
      std::optional<int64_t> v = ParseUintWhole(value, 10);
      if (!v) return kNpos;
      local.pid = v;
      anchored = true;
    } else if (key == "ip") {
      if (!LooksLikeHostToken(value)) return kNpos;
      local.host = NormalizeHost(value);
      anchored = true;
    } else if (key == "rank") {
      std::optional<int64_t> v = ParseUintWhole(value, 9);
      if (!v) return kNpos;
      local.launcher_rank = v;
    } else {
      for (char c : key) {
        if (!IsWordChar(c)) return kNpos;
      }
    }
  }
  if (!anchored) return kNpos;
  SetIfUnset(f->launcher_rank, local.launcher_rank);
  SetIfUnset(f->launcher_local, local.launcher_local);
  // Nested prefixes ("(APIServer pid=5332) (Worker pid=7181) ..."): each
  // process wraps its children's output, so the innermost one wrote the
  // line, and its pid and address are the writer's.
  f->pid = local.pid;
  if (!local.host.empty()) f->host = local.host;
  return close + 1;
}

// SGLang's logger prefix: configure_logger's "[%(asctime)s{prefix}] " with
// the asctime as "%Y-%m-%d %H:%M:%S" (or "%m-%d %H:%M:%S"), and the prefix
// its scheduler process builds from its indices, " DP<d>", " PP<p>",
// " ATTN_CP<c>", " MOE_DP<m>", " TP<t>", " EP<e>" in some order:
// "[2025-12-26 13:13:14 TP0] Scheduler hit an exception: ...". The TP
// index is the worker's rank as vLLM's is (ParseVllmName), a local GPU only
// on one node, so only the rank is taken. Without a tag (the tokenizer's
// "[2025-02-21 22:59:28] ...") it is a stamp, left to SkipTimestamp.
size_t ParseSglangPrefix(std::string_view s, size_t p, Found* f) {
  if (s[p] != '[') return kNpos;
  size_t q = MatchIsoDateTime(s, p + 1, nullptr);
  if (q == kNpos && p + 7 <= s.size() && IsDigit(s[p + 1]) && IsDigit(s[p + 2]) && s[p + 3] == '-' &&
      IsDigit(s[p + 4]) && IsDigit(s[p + 5]) && s[p + 6] == ' ') {
    q = MatchClock(s, p + 7);
  }
  if (q == kNpos || q >= s.size() || s[q] != ' ') return kNpos;
  size_t tags = q + 1;
  size_t close = kNpos;
  for (size_t i = tags; i < s.size() && i - tags < 64; ++i) {
    if (s[i] == ']') {
      close = i;
      break;
    }
    if (!IsUpper(s[i]) && !IsDigit(s[i]) && s[i] != '_' && s[i] != ' ') return kNpos;
  }
  if (close == kNpos || close == tags) return kNpos;
  // Every tag is letters (and '_') then an index.
  std::string_view body = s.substr(tags, close - tags);
  for (size_t i = 0; i < body.size();) {
    size_t start = i;
    while (i < body.size() && (IsUpper(body[i]) || body[i] == '_')) ++i;
    size_t digits = i;
    while (i < body.size() && IsDigit(body[i])) ++i;
    if (digits == start || i == digits || (i < body.size() && body[i] != ' ')) return kNpos;
    if (i < body.size()) ++i;
  }
  Found local;
  ParseVllmName(body, &local);
  SetIfUnset(f->launcher_rank, local.launcher_rank);
  return close + 1;
}

// Past the ANSI colour sequences ("\x1b[1;36m") a terminal-minded logger
// puts around its prefixes (vLLM v0 colours "(VllmWorkerProcess pid=N)").
size_t SkipAnsi(std::string_view s, size_t p) {
  while (p + 1 < s.size() && s[p] == '\x1b' && s[p + 1] == '[') {
    size_t q = p + 2;
    while (q < s.size() && q - p < 16 && (IsDigit(s[q]) || s[q] == ';')) ++q;
    if (q >= s.size() || !IsAlpha(s[q])) return p;
    p = q + 1;
  }
  return p;
}

// RFC 5424 SD-ELEMENTs ("[exampleSDID@32473 iut="3" eventSource="App"]",
// several back to back) or the NILVALUE "-" at s[p]; returns the index past
// them, kNpos when malformed. Quoted values may hold ']' escaped as "\]".
size_t SkipStructuredData(std::string_view s, size_t p) {
  if (At(s, p, "-")) return p + 1;
  size_t q = p;
  while (q < s.size() && s[q] == '[') {
    bool quoted = false;
    size_t r = q + 1;
    for (; r < s.size() && r - q < 2048; ++r) {
      if (s[r] == '\\') {
        ++r;
      } else if (s[r] == '"') {
        quoted = !quoted;
      } else if (s[r] == ']' && !quoted) {
        break;
      }
    }
    if (r >= s.size() || s[r] != ']') return kNpos;
    q = r + 1;
  }
  return q == p ? kNpos : q;
}

// RFC 5424 after "<PRI>" (or without it, as rsyslog's
// RSYSLOG_SyslogProtocol23Format-like exporters write): "1 TIMESTAMP HOST
// APP-NAME PROCID MSGID SD MSG", each header field "-" when absent:
// "<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47
// [exampleSDID@32473 iut="3"] An application event log entry".
size_t ParseRfc5424Header(std::string_view s, size_t p, Found* f) {
  if (!At(s, p, "1 ")) return kNpos;
  size_t q = p + 2;
  bool used_t = false;
  size_t t = MatchIsoDateTime(s, q, &used_t);
  if (t != kNpos && used_t) {
    q = t;
  } else if (At(s, q, "-")) {
    q += 1;
  } else {
    return kNpos;
  }
  // HOSTNAME, APP-NAME, PROCID, MSGID: printable tokens without spaces.
  std::string_view fields[4];
  for (std::string_view& field : fields) {
    if (!At(s, q, " ")) return kNpos;
    size_t b = q + 1;
    size_t e = b;
    while (e < s.size() && e - b < 255 && s[e] > ' ' && s[e] < 0x7f) ++e;
    if (e == b) return kNpos;
    field = s.substr(b, e - b);
    q = e;
  }
  if (!At(s, q, " ")) return kNpos;
  q = SkipStructuredData(s, q + 1);
  if (q == kNpos || (q < s.size() && s[q] != ' ')) return kNpos;
  if (fields[0] != "-" && LooksLikeHostToken(fields[0])) SetHostIfUnset(f->host, fields[0]);
  SetIfUnset(f->pid, ParseUintWhole(fields[2], 10));
  q = SkipSpaces(s, q);
  if (At(s, q, "\xEF\xBB\xBF")) q += 3;  // the MSG's UTF-8 BOM
  return q;
}

// syslog / journald headers: "Nov  2 13:46:41 node017 kernel: ",
// "2026-11-02T13:46:41.123456+00:00 node017 kernel: " (rsyslog RFC 3339),
// "Nov 02 13:46:41.123456 node017 python3[1234]: " (journalctl
// short-precise), optionally after an "<13>" priority; RFC 5424 headers.
size_t ParseSyslogHeader(std::string_view s, size_t p, Found* f) {
  size_t q = p;
  if (s[q] == '<') {
    size_t r = q + 1;
    if (ParseUint(s, &r, 3) && r < s.size() && s[r] == '>') q = r + 1;
  }
  if (size_t r = ParseRfc5424Header(s, q, f); r != kNpos) return r;
  bool rfc3339 = false;
  size_t t = MatchSyslogTime(s, q);
  if (t == kNpos) {
    bool used_t = false;
    t = MatchIsoDateTime(s, q, &used_t);
    // Python logging and friends use a space; rsyslog/journald use 'T'.
    if (t == kNpos || !used_t) return kNpos;
    rfc3339 = true;
  }
  if (t >= s.size() || s[t] != ' ') return kNpos;
  size_t h = SkipSpaces(s, t);
  size_t h_end = HostTokenEnd(s, h);
  if (h_end >= s.size() || s[h_end] != ' ') return kNpos;
  std::string_view host = s.substr(h, h_end - h);
  if (!LooksLikeHostToken(host) && !IsIpv4(host)) return kNpos;
  if (rfc3339 && IsLevelWord(host)) return kNpos;
  // The tag: "kernel:", "python3[1234]:", "nvidia-persistenced[77]:".
  size_t g = h_end + 1;
  size_t g_end = g;
  while (g_end < s.size() && !IsSpace(s[g_end]) && s[g_end] != ':' &&
         s[g_end] != '[' && g_end - g < 64) {
    ++g_end;
  }
  if (g_end == g || g_end >= s.size()) return kNpos;
  std::optional<int64_t> pid;
  if (s[g_end] == '[') {
    size_t r = g_end + 1;
    pid = ParseUint(s, &r, 10);
    if (!pid || !At(s, r, "]")) return kNpos;
    g_end = r + 1;
  }
  if (g_end >= s.size() || s[g_end] != ':') return kNpos;
  if (g_end + 1 < s.size() && !IsSpace(s[g_end + 1])) return kNpos;
  SetHostIfUnset(f->host, host);
  SetIfUnset(f->pid, pid);
  return g_end + 1;
}

// NCCL: "node017:12345:12399 [3] NCCL INFO ..." (host:pid:tid [cudaDev]).
bool ParseNcclPrefix(std::string_view s, size_t p, Found* f) {
  size_t h_end = HostTokenEnd(s, p);
  if (h_end >= s.size() || s[h_end] != ':') return false;
  std::string_view host = s.substr(p, h_end - p);
  size_t q = h_end + 1;
  std::optional<int64_t> pid = ParseUint(s, &q, 10);
  if (!pid || q >= s.size() || s[q] != ':') return false;
  ++q;
  if (!ParseUint(s, &q, 10) || !At(s, q, " [")) return false;
  q += 2;
  bool negative = At(s, q, "-");
  if (negative) ++q;
  std::optional<int64_t> dev = ParseUint(s, &q, 5);
  if (!dev || !At(s, q, "]") || !LooksLikeHostToken(host)) return false;
  if (q + 1 < s.size() && !IsSpace(s[q + 1])) return false;
  // NCCL prints the process's own hostname: it names the machine better
  // than the address an outer prefix gave ("(RayTrainWorker pid=P,
  // ip=10.0.1.5) node017:P:T [0] NCCL INFO ...").
  if (IsIpv4(f->host) && !IsIpv4(host)) f->host.clear();
  SetHostIfUnset(f->host, host);
  SetIfUnset(f->pid, pid);
  if (!negative) SetIfUnset(f->device, dev);
  return true;
}

// UCX: "[node017:12345:0:12399] Caught signal 7 (Bus error...)" and
// "[node017:12345:0] ucp_worker.c:1234 UCX ERROR ...".
bool ParseUcxPrefix(std::string_view s, size_t p, Found* f) {
  if (s[p] != '[') return false;
  size_t h_end = HostTokenEnd(s, p + 1);
  if (h_end >= s.size() || s[h_end] != ':') return false;
  std::string_view host = s.substr(p + 1, h_end - p - 1);
  size_t q = h_end + 1;
  std::optional<int64_t> pid = ParseUint(s, &q, 10);
  if (!pid || !At(s, q, ":")) return false;
  ++q;
  if (!ParseUint(s, &q, 10)) return false;
  if (At(s, q, ":")) {
    ++q;
    if (!ParseUint(s, &q, 10)) return false;
  }
  if (!At(s, q, "]") || !LooksLikeHostToken(host)) return false;
  SetHostIfUnset(f->host, host);
  SetIfUnset(f->pid, pid);
  return true;
}

// ---- JSON lines ----

// Skips a JSON string starting at s[p] == '"'; returns the index past the
// closing quote, or kNpos when unterminated.
size_t SkipJsonString(std::string_view s, size_t p) {
  for (size_t q = p + 1; q < s.size(); ++q) {
    if (s[q] == '\\') {
      ++q;
    } else if (s[q] == '"') {
      return q + 1;
    }
  }
  return kNpos;
}

// Skips any JSON value at s[p]; nested containers by depth counting so that
// deep nesting costs no stack.
size_t SkipJsonValue(std::string_view s, size_t p) {
  if (p >= s.size()) return kNpos;
  if (s[p] == '"') return SkipJsonString(s, p);
  if (s[p] == '{' || s[p] == '[') {
    size_t depth = 0;
    for (size_t q = p; q < s.size(); ++q) {
      char c = s[q];
      if (c == '"') {
        q = SkipJsonString(s, q);
        if (q == kNpos) return kNpos;
        --q;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) return q + 1;
      }
    }
    return kNpos;
  }
  size_t q = p;
  while (q < s.size() && s[q] != ',' && s[q] != '}' && s[q] != ']' &&
         !IsSpace(s[q])) {
    ++q;
  }
  return q == p ? kNpos : q;
}

bool KeyIs(std::string_view key, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    if (EqualsIgnoreCase(key, n)) return true;
  }
  return false;
}

// An integer JSON value, bare or quoted ("_PID":"1234" in journalctl -o json).
std::optional<int64_t> JsonInt(std::string_view raw) {
  if (raw.size() >= 2 && raw.front() == '"' && raw.back() == '"') {
    raw = raw.substr(1, raw.size() - 2);
  }
  return ParseUintWhole(raw, 18);
}

std::string_view JsonStringBody(std::string_view raw) {
  if (raw.size() < 2 || raw.front() != '"' || raw.back() != '"') return {};
  std::string_view body = raw.substr(1, raw.size() - 2);
  if (body.find('\\') != kNpos) return {};  // never a host or bus id
  return body;
}

// Top-level fields of a JSON-lines record that name the writer. Keys are
// matched whole and case-insensitively; values inside nested objects or
// inside message strings are never taken for fields.
void ScanJsonFields(std::string_view s, size_t p, Found* f) {
  size_t q = p + 1;
  for (int fields = 0; fields < 4096; ++fields) {
    q = SkipSpaces(s, q);
    if (q >= s.size() || s[q] != '"') return;
    size_t key_end = SkipJsonString(s, q);
    if (key_end == kNpos) return;
    std::string_view key = s.substr(q + 1, key_end - q - 2);
    q = SkipSpaces(s, key_end);
    if (q >= s.size() || s[q] != ':') return;
    q = SkipSpaces(s, q + 1);
    size_t v_end = SkipJsonValue(s, q);
    if (v_end == kNpos) return;
    std::string_view raw = s.substr(q, v_end - q);
    if (KeyIs(key, {"rank", "global_rank", "world_rank"})) {
      SetIfUnset(f->json_rank, JsonInt(raw));
    } else if (KeyIs(key, {"local_rank", "localrank"})) {
      SetIfUnset(f->json_local, JsonInt(raw));
    } else if (KeyIs(key, {"pid", "_pid", "process_id"})) {
      SetIfUnset(f->pid, JsonInt(raw));
    } else if (KeyIs(key, {"host", "hostname", "_hostname", "host_name",
                           "node_name", "nodename"})) {
      std::string_view body = JsonStringBody(raw);
      if (f->host.empty() && LooksLikeHostToken(body)) {
        f->host = NormalizeHost(body);
      }
    } else if (KeyIs(key, {"gpu", "gpu_id", "gpu_index", "cuda_device"})) {
      std::optional<int64_t> dev = JsonInt(raw);
      if (dev && f->gpu.empty()) f->gpu = std::to_string(*dev);
    } else if (KeyIs(key, {"bus_id", "pci_bus_id", "busid", "pci"})) {
      std::string bus = NormalizePciBusId(JsonStringBody(raw));
      if (!bus.empty() && f->gpu.empty()) f->gpu = std::move(bus);
    }
    q = SkipSpaces(s, v_end);
    if (q >= s.size() || s[q] != ',') return;
    ++q;
  }
}

// ---- markers inside the message ----

// The word just before s[i] (skipping one separator), lowercased compare.
bool PrecededByWord(std::string_view s, size_t i,
                    std::span<const std::string_view> words) {
  if (i == 0) return false;
  size_t end = i;
  if (s[end - 1] == ' ' || s[end - 1] == '_' || s[end - 1] == '-') --end;
  size_t start = end;
  while (start > 0 && IsAlpha(s[start - 1]) && end - start < 16) --start;
  std::string_view w = s.substr(start, end - start);
  for (std::string_view x : words) {
    if (EqualsIgnoreCase(w, x)) return true;
  }
  return false;
}

// In "[PG ID 12 PG GUID 99(tp_group) Rank 4]" / "[PG 3 Rank 4]" the rank is
// the rank inside that process group; only the default group's is global.
bool IsDefaultProcessGroup(std::string_view content) {
  size_t q = 3;  // past "PG "
  if (At(content, q, "ID ")) q += 3;
  std::optional<int64_t> id = ParseUint(content, &q, 9);
  if (id && *id == 0) return true;
  size_t open = content.find('(');
  if (open == kNpos) return false;
  size_t close = content.find(')', open);
  return close != kNpos && content.substr(open + 1, close - open - 1) == "default_pg";
}

// text-generation-inference's launcher runs each shard under the tracing
// span "shard-manager" with the field rank (span!(Level::INFO,
// "shard-manager", rank = rank), since its first releases), and
// tracing_subscriber's compact format prints the span's name before the
// target and its fields after the message: "<stamp> ERROR shard-manager:
// text_generation_launcher: Shard process was signaled to shutdown with
// signal 4 rank=0". The rank is the shard's, which is its rank in the
// tensor-parallel group. Only a field that ends the line is taken: a message
// of several lines carries it after its last line instead, where the span's
// name is not.
void ScanShardManagerRank(std::string_view s, size_t begin, Found* f) {
  size_t span = s.find("shard-manager: ", begin);
  if (span == kNpos || (span > begin && s[span - 1] != ' ')) return;
  size_t end = s.size();
  while (end > span && (s[end - 1] == ' ' || s[end - 1] == '\r')) --end;
  size_t digits = end;
  while (digits > span && IsDigit(s[digits - 1])) --digits;
  if (digits == end || digits < span + 6 || s.substr(digits - 6, 6) != " rank=") return;
  f->loose_rank = ParseUintWhole(s.substr(digits, end - digits), 9);
}

void ScanMessageRanks(std::string_view s, size_t begin, Found* f) {
  // "local rank: 2", "peer rank 5:" name some other numbering or some other
  // process than the writer.
  static constexpr std::string_view kNotGlobal[] = {
      "local", "node",   "group", "peer", "remote", "root", "src",
      "dst",   "source", "dest",  "target", "next", "prev", "tp", "pp", "dp"};
  const size_t n = s.size();
  ForEachPairStart<true, BytePair{'r', 'a'}>(s, begin, [&](size_t i) {
    if (i + 4 > n || !AtIgnoreCase(s, i, "rank")) return false;
    bool boundary = i == 0 || !IsWordChar(s[i - 1]);
    size_t k = i + 4;
    size_t spaces_end = SkipSpaces(s, k);
    if (k < n && s[k] == ':') {
      // "rank: 3" (also "global rank: 3"), never "local_rank: 3".
      if (!boundary || f->loose_rank || PrecededByWord(s, i, kNotGlobal)) return false;
      size_t m = SkipSpaces(s, k + 1);
      std::optional<int64_t> v = ParseUint(s, &m, 9);
      if (v && (m == n || !IsAlnum(s[m]))) f->loose_rank = v;
      return false;
    }
    size_t m = spaces_end;
    std::optional<int64_t> v = ParseUint(s, &m, 9);
    if (!v) return false;
    if (m < n && s[m] == ']') {
      if (f->bracket_rank) return false;
      if (i > 0 && s[i - 1] == '[') {
        f->bracket_rank = v;  // "[Rank 3]", "[rank3]"
        return false;
      }
      // Find the bracket this "Rank N]" closes.
      size_t lb = kNpos;
      for (size_t j = i; j > 0 && i - j < 160; --j) {
        char c = s[j - 1];
        if (c == ']') break;
        if (c == '[') {
          lb = j - 1;
          break;
        }
      }
      if (lb == kNpos || !At(s, lb + 1, "PG ")) return false;
      if (IsDefaultProcessGroup(s.substr(lb + 1, i - lb - 1))) f->bracket_rank = v;
      return false;
    }
    // "Rank 3: ..." but not "rank 13:46:41" and not NCCL's "rank 131 nranks".
    if (boundary && spaces_end > k && !f->loose_rank && m < n && s[m] == ':' &&
        (m + 1 == n || !IsDigit(s[m + 1])) && !PrecededByWord(s, i, kNotGlobal)) {
      f->loose_rank = v;
    }
    return false;
  });
  if (!f->loose_rank) ScanShardManagerRank(s, begin, f);
}

// A PCI address token at s[p] ("0000:3b:00", "00000000:3B:00.0"), normalised;
// "" when the token is not one. The kernel and the driver always print the
// domain with 4 or 8 digits; demanding it keeps clock times ("13:46:10") out.
// A trailing ':' or '.' is punctuation, not part of the address.
std::string BusTokenAt(std::string_view s, size_t p) {
  size_t q = p;
  while (q < s.size() && q - p < 20 && (IsHex(s[q]) || s[q] == ':' || s[q] == '.')) ++q;
  while (q > p && (s[q - 1] == ':' || s[q - 1] == '.')) --q;
  std::string_view tok = s.substr(p, q - p);
  size_t colon = tok.find(':');
  if (colon != 4 && colon != 8) return {};
  size_t second = tok.find(':', colon + 1);
  if (second == kNpos || tok.find(':', second + 1) != kNpos) return {};
  return NormalizePciBusId(tok);
}

// Kernel and driver lines naming a GPU by PCI address, and the pid some of
// them carry: "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, ...",
// "NVRM: GPU at PCI:0000:3b:00: GPU-...", "nvidia 0000:3b:00.0: ...",
// "Out of memory: Killed process 12345 (python3)", "python3[12345]: segfault
// at 0 ip ...".
//
// Where each marker ScanKernelMarkers looks for first occurs at or after
// `begin` (kNpos: nowhere), from one pass over the line instead of a find
// per marker (most lines of a dense log hold none of them).
struct KernelMarks {
  size_t nvrm = kNpos, nvidia = kNpos, gpu = kNpos, xid = kNpos, killed = kNpos, oom = kNpos,
         segv = kNpos;
};

KernelMarks FindKernelMarks(std::string_view s, size_t begin) {
  KernelMarks m;
  ForEachPairStart<false, BytePair{'N', 'V'}, BytePair{'n', 'v'}, BytePair{'G', 'P'}, BytePair{'X', 'i'},
                   BytePair{'K', 'i'}, BytePair{'o', 'o'}, BytePair{']', ':'}>(s, begin, [&](size_t i) {
    for (auto [at, lit] : {std::pair<size_t*, std::string_view>{&m.nvrm, "NVRM:"}, {&m.nvidia, "nvidia "},
                           {&m.gpu, "GPU "}, {&m.xid, "Xid "}, {&m.killed, "Killed process "},
                           {&m.oom, "oom-kill:"}, {&m.segv, "]: segfault at "}}) {
      if (*at == kNpos && s.substr(i, lit.size()) == lit) *at = i;
    }
    return false;
  });
  return m;
}

void ScanKernelMarkers(std::string_view s, size_t begin, Found* f) {
  const size_t n = s.size();
  const KernelMarks marks = FindKernelMarks(s, begin);
  size_t nv = marks.nvrm;
  if (nv != kNpos && f->gpu.empty()) {
    size_t window_end = nv + 5 + 96 < n ? nv + 5 + 96 : n;
    size_t pci = s.substr(0, window_end).find("PCI:", nv);
    if (pci != kNpos) {
      f->gpu = BusTokenAt(s, pci + 4);
    } else {
      for (size_t i = nv + 5; i < window_end && f->gpu.empty(); ++i) {
        if (IsHex(s[i]) && !IsHex(s[i - 1]) && s[i - 1] != ':' && s[i - 1] != '.') {
          f->gpu = BusTokenAt(s, i);
        }
      }
    }
  }
  if (f->gpu.empty()) {
    // "nvidia 0000:3b:00.0: ..." (the driver's dev_printk), and DCGM /
    // nvidia-smi's "GPU 00000000:3B:00.0".
    for (auto [first, lit] : {std::pair<size_t, std::string_view>{marks.nvidia, "nvidia "}, {marks.gpu, "GPU "}}) {
      for (size_t at = first; at != kNpos && f->gpu.empty(); at = s.find(lit, at + 1)) {
        if (at > 0 && IsWordChar(s[at - 1])) continue;
        f->gpu = BusTokenAt(s, at + lit.size());
      }
    }
  }
  if (!f->pid) {
    size_t xid = marks.xid;
    if (xid != kNpos) {
      size_t pid_at = s.find("pid=", xid);
      if (pid_at != kNpos && pid_at - xid < 128) {
        size_t q = pid_at + 4;
        f->pid = ParseUint(s, &q, 10);
      }
    }
  }
  if (!f->pid) {
    // The kernel's "python3[4015788]: segfault at 0 ip ... sp ... error 4".
    size_t segv = marks.segv;
    if (segv != kNpos) {
      size_t open = segv;
      while (open > begin && IsDigit(s[open - 1]) && segv - open < 10) --open;
      if (open > begin && open < segv && s[open - 1] == '[') {
        size_t q = open;
        f->pid = ParseUint(s, &q, 10);
      }
    }
  }
  if (!f->pid) {
    size_t killed = marks.killed;
    if (killed != kNpos) {
      size_t q = killed + 15;
      f->pid = ParseUint(s, &q, 10);
    } else if (size_t oom = marks.oom; oom != kNpos) {
      size_t pid_at = s.find(",pid=", oom);
      if (pid_at != kNpos) {
        size_t q = pid_at + 5;
        f->pid = ParseUint(s, &q, 10);
      }
    }
  }
}

// Ray's RayTaskError names the worker a task failed in after the task's
// process title, "ray::<name>" (setproctitle's "ray::" and, since Ray 1.x,
// "()" after the name, coloured by colorama): "ray::TaskRunner.run() (pid=N,
// ip=A)", with ", actor_id=X, repr=R)" for an actor's task (ray/exceptions.py
// RayTaskError.__str__; the driver prints it, so it is the only place its log
// names the failed process's host). Sets *host and *pid, or neither;
// returns where the title starts (kNpos without a header).
size_t ScanRayTaskHeader(std::string_view s, size_t begin, std::string* host, std::optional<int64_t>* pid) {
  for (size_t at = s.find(" (pid=", begin); at != kNpos; at = s.find(" (pid=", at + 1)) {
    // The process title is the token before the space; colorama's colour
    // codes around it hold no space.
    size_t t = at;
    while (t > begin && s[t - 1] != ' ' && at - t < 256) --t;
    size_t title = SkipAnsi(s, t);
    if (!At(s, title, "ray::")) continue;
    size_t q = at + 6;
    std::optional<int64_t> v = ParseUint(s, &q, 10);
    if (!v || !At(s, q, ", ip=")) continue;
    q += 5;
    const size_t h_end = HostTokenEnd(s, q);
    if (h_end >= s.size() || (s[h_end] != ',' && s[h_end] != ')')) continue;
    std::string_view h = s.substr(q, h_end - q);
    if (!LooksLikeHostToken(h)) continue;
    *host = NormalizeHost(h);
    *pid = v;
    return t;
  }
  return kNpos;
}

// Past the spaces and the markdown quote markers ("> ", "> > ") a log
// pasted into an issue or mail starts with.
size_t SkipQuoteMarkers(std::string_view s, size_t p) {
  p = SkipSpaces(s, p);
  while (p + 1 < s.size() && s[p] == '>' && IsSpace(s[p + 1])) p = SkipSpaces(s, p + 1);
  return p;
}

}  // namespace

size_t FindRayTaskHeader(std::string_view line, std::string* host, std::optional<int64_t>* pid) {
  std::string h;
  std::optional<int64_t> v;
  const size_t title = ScanRayTaskHeader(line, 0, &h, &v);
  if (title != kNpos) {
    if (host) *host = std::move(h);
    if (pid) *pid = v;
  }
  return title;
}

std::string NormalizeHost(std::string_view host) {
  if (host.empty() || host.size() > 253 || !IsAlnum(host[0])) return {};
  for (char c : host) {
    if (!IsHostChar(c)) return {};
  }
  if (IsIpv4(host)) return std::string(host);
  return std::string(host.substr(0, host.find('.')));
}

size_t PdshPrefixEnd(std::string_view line, std::string_view* host) {
  size_t end = HostTokenEnd(line, 0);
  if (end == 0 || !At(line, end, ": ")) return 0;
  std::string_view h = line.substr(0, end);
  if (!LooksLikeHostToken(h) || IsLevelWord(h)) return 0;
  // pdsh prints the name as given to -w, in practice lower case with a
  // digit, a '-' or a '.' ("gpu1505", "worker-0", "10.0.1.7"); "Error: ",
  // "Traceback: " or "bash: " are messages.
  bool shaped = false;
  for (char c : h) {
    if (IsUpper(c)) return 0;
    shaped |= IsDigit(c) || c == '-' || c == '.';
  }
  if (!shaped) return 0;
  if (host != nullptr) *host = h;
  return end + 2;
}

namespace {

// Whether what follows a "host: " prefix is itself the start of a logged
// line: a stamp, a launcher prefix, an NCCL or UCX prefix or a JSON record.
// Messages that merely begin with "word: " rarely go on like that.
bool PdshRestLaunched(std::string_view s, size_t p) {
  if (p >= s.size()) return false;
  if (s[p] == '{') return true;
  Found scratch;
  StampKind kind;
  return SkipTimestamp(s, p, &kind, &scratch.header_pid) != kNpos ||
         ParseTorchrunPrefix(s, p, &scratch) != kNpos ||
         ParseMpirunPrefix(s, p, &scratch) != kNpos || ParseNcclPrefix(s, p, &scratch) ||
         ParseUcxPrefix(s, p, &scratch);
}

// The launcher, syslog and timestamp prefixes of a line, into *f; returns
// where they end (*p) and where the message begins (after the last launcher
// prefix; 0 without one).
size_t ParsePrefixes(std::string_view line, Found* fp, size_t* p_out) {
  Found& f = *fp;
  const size_t n = line.size();
  size_t p = SkipQuoteMarkers(line, 0);
  size_t msg = 0;
  bool launcher = false;
  bool srun_ok = true;  // nothing but collector stamps so far
  bool syslog_ok = true;

  std::string_view pdsh_host;
  if (size_t pd = PdshPrefixEnd(line.substr(p), &pdsh_host);
      pd != 0 && PdshRestLaunched(line, p + pd)) {
    f.pdsh_host = NormalizeHost(pdsh_host);
    p += pd;
    msg = p;
    launcher = true;
  }
  if (p < n && line[p] == '{') ScanJsonFields(line, p, &f);

  for (int step = 0; step < kMaxPrefixes && p < n; ++step) {
    if (size_t a = SkipAnsi(line, p); a != p) p = SkipSpaces(line, a);
    if (p >= n) break;
    size_t q = kNpos;
    if (srun_ok && !launcher && (q = ParseSrunLabel(line, p, &f)) != kNpos) {
      launcher = true;
      srun_ok = false;
    } else if ((q = ParseTorchrunPrefix(line, p, &f)) != kNpos ||
               (q = ParseMpirunPrefix(line, p, &f)) != kNpos ||
               (q = ParseProcessPrefix(line, p, &f)) != kNpos ||
               (q = ParseSglangPrefix(line, p, &f)) != kNpos ||
               (q = ParseCudaMemtestPrefix(line, p, &f)) != kNpos) {
      launcher = true;
      srun_ok = false;
    } else if (syslog_ok && !launcher &&
               (q = ParseSyslogHeader(line, p, &f)) != kNpos) {
      syslog_ok = false;
      srun_ok = false;
    } else {
      StampKind kind;
      q = SkipTimestamp(line, p, &kind, &f.header_pid);
      if (q == kNpos) break;
      if (kind == StampKind::kGlog) srun_ok = false;
      // A collector's "<stamp>: <line>" (mpirun --timestamp-output).
      if (q < n && line[q] == ':' && kind == StampKind::kCollector) ++q;
      q = SkipSpaces(line, q);
      p = q;
      continue;
    }
    // The colour reset after a prefix is not the message.
    p = SkipSpaces(line, SkipAnsi(line, SkipSpaces(line, q)));
    if (launcher) msg = p;
  }

  *p_out = p;
  return msg;
}

// What the scans of a message find on their own (from a blank Found):
// AttributeLine lays it under what the prefixes found. Only the message
// scans set the bracket and loose ranks; they set the pid and gpu only
// where the prefixes left them unset, and each takes the first of its
// candidates, so scanning blank and filling the unset fields is the same.
struct MessageMarks {
  std::optional<int64_t> bracket_rank, loose_rank, pid;
  std::string gpu;
  // A process the message names as where it failed (Ray's task header):
  // its host and pid, taken together where the prefixes named no host.
  std::string subject_host;
  std::optional<int64_t> subject_pid;
};

// nccl-tests prints its own failures with the host in front: common.h's
// NCCLCHECK and CUDACHECK print "%s: Test NCCL failure %s:%d '%s'" (and
// "Test CUDA failure"), TESTCHECK " .. %s pid %d: Test failure %s:%d"
// (" .. %s: Test failure %s:%d" before the pid was added), each %s the
// gethostname() of the process that failed cut at its first '.'. Such a
// line carries no other prefix, so this is the only place its host is
// named; the pid comes with it where TESTCHECK prints one.
void ScanNcclTestsFailure(std::string_view s, size_t begin, std::string* host, std::optional<int64_t>* pid) {
  size_t p = SkipQuoteMarkers(s, begin);
  const bool trace = At(s, p, ".. ");
  if (trace) p += 3;
  const size_t h_end = HostTokenEnd(s, p);
  if (h_end == p) return;
  std::string_view h = s.substr(p, h_end - p);
  // "Error: Test NCCL failure ..." is someone's message about the test.
  if (!LooksLikeHostToken(h) || IsLevelWord(h)) return;
  size_t q = h_end;
  std::optional<int64_t> v;
  if (trace) {
    if (At(s, q, " pid ")) {
      q += 5;
      v = ParseUint(s, &q, 10);
      if (!v) return;
    }
    if (!At(s, q, ": Test failure ")) return;
  } else if (!At(s, q, ": Test NCCL failure ") && !At(s, q, ": Test CUDA failure ")) {
    return;
  }
  *host = NormalizeHost(h);
  *pid = v;
}

// A row of `sinfo -R` (--list-reasons): REASON USER TIMESTAMP NODELIST,
// Slurm's sinfo default format for it "%50E %9u %19H %N" (older releases
// "%35E %9u %19H %N"). The reason is left-justified, the timestamp is
// Slurm's time format (ISO 8601 by default, "2024-01-25T15:12:23") and the
// node list comes last. The row's node is the host of its reason; a row of
// several nodes names none. Sets *host, or leaves it.
void ScanSinfoReasonRow(std::string_view s, size_t begin, std::string* host) {
  constexpr size_t kMaxList = 1024, kMaxUser = 32, kStamp = 19;
  size_t e = s.size();
  while (e > begin && (IsSpace(s[e - 1]) || s[e - 1] == '\r')) --e;
  size_t n = e;
  while (n > begin && !IsSpace(s[n - 1])) {
    if (e - n > kMaxList) return;
    --n;
  }
  size_t t = n;
  while (t > begin && IsSpace(s[t - 1])) --t;
  if (n == e || t == n || t < begin + kStamp + 4) return;
  const size_t ts = t - kStamp;
  bool used_t = false;
  if (MatchIsoDateTime(s, ts, &used_t) != t || !used_t || !IsSpace(s[ts - 1])) return;
  // The user who set the reason ("root", "slurm"; %9u cuts it), then the
  // reason, which starts the row.
  size_t u = ts;
  while (u > begin && IsSpace(s[u - 1])) --u;
  size_t us = u;
  while (us > begin && !IsSpace(s[us - 1])) {
    const char c = s[us - 1];
    if (!IsAlnum(c) && c != '_' && c != '-' && c != '.') return;
    if (u - us >= kMaxUser) return;
    --us;
  }
  const size_t row = SkipQuoteMarkers(s, begin);
  if (us == u || us <= row || !IsAlpha(s[row]) || !(IsAlpha(s[us]) || s[us] == '_')) return;
  // Prose puts a preposition before a stamp ("saved at <stamp> step100"),
  // where a row has the login name.
  static constexpr std::string_view kProse[] = {"at", "on", "by", "since", "until", "from", "to", "after", "before"};
  for (std::string_view w : kProse) {
    if (EqualsIgnoreCase(s.substr(us, u - us), w)) return;
  }
  std::vector<std::string> hosts = ExpandNodelist(s.substr(n, e - n));
  if (hosts.size() != 1 || !LooksLikeHostToken(hosts[0])) return;
  *host = NormalizeHost(hosts[0]);
}

MessageMarks ScanMessage(std::string_view s, size_t begin) {
  Found f;
  ScanMessageRanks(s, begin, &f);
  ScanKernelMarkers(s, begin, &f);
  MessageMarks m{f.bracket_rank, f.loose_rank, f.pid, std::move(f.gpu), {}, {}};
  ScanRayTaskHeader(s, begin, &m.subject_host, &m.subject_pid);
  if (m.subject_host.empty()) ScanNcclTestsFailure(s, begin, &m.subject_host, &m.subject_pid);
  if (m.subject_host.empty()) ScanSinfoReasonRow(s, begin, &m.subject_host);
  return m;
}

// The first byte of `s` the message scans from `begin` may read: a word
// before a "rank" at or after `begin` (PrecededByWord: up to 18 bytes
// back), the bracket a "Rank N]" closes (up to 160 bytes back, stopping at
// the nearest '[' or ']'), the byte before a marker. The clock and pid of
// a glog or syslog header lie before it, so lines that differ only there
// share the bytes from here on.
size_t MessageReadStart(std::string_view s, size_t begin) {
  constexpr size_t kWordBack = 20, kBracketBack = 160;
  size_t lb = begin > kBracketBack ? begin - kBracketBack : 0;
  for (size_t j = begin; j > lb; --j) {
    if (s[j - 1] == '[' || s[j - 1] == ']') {
      lb = j - 1;
      break;
    }
  }
  return std::min(lb, begin > kWordBack ? begin - kWordBack : 0);
}

// A glog-style header at the message's start ("[I1102 13:00:00.351576
// 41000 file.cc:931] ", also without the bracket): [begin, end) of the run
// of digits, spaces, ':' and '.' after its level letter (the clock and the
// thread id), or an empty range. The message scans read those bytes only
// for their class: no marker starts in the run (each starts with a letter
// or ']'), none ends in it (the byte before is the level letter, after a
// '[' or the message's start), the byte after the run is not a digit (a
// pid in brackets before "]: segfault" is read back over digits only), and
// what reads back into the run (the word before "rank", the bracket a
// "Rank N]" closes, word boundaries) asks only whether a byte is a letter,
// a digit, a bracket or a separator (that bracket's content is read only
// when "PG " follows it, which the header's '[' never has). So two lines whose runs have digits
// at the same places scan alike.
#if defined(__SSE2__)
// -1 in each of the 16 bytes at p that is a digit.
__m128i DigitBytes(const char* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('/')), _mm_cmplt_epi8(v, _mm_set1_epi8(':')));
}
#endif

// Where the run of digits, spaces, ':' and '.' from p ends, 16 bytes at a
// time.
size_t ClockRunEnd(std::string_view s, size_t p) {
#if defined(__SSE2__)
  for (; p + 16 <= s.size(); p += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + p));
    const __m128i other = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
                                       _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(':')), _mm_cmpeq_epi8(v, _mm_set1_epi8('.'))));
    const unsigned out = ~static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(DigitBytes(s.data() + p), other))) & 0xFFFFu;
    if (out != 0) return p + static_cast<size_t>(__builtin_ctz(out));
  }
#endif
  while (p < s.size() && (IsDigit(s[p]) || s[p] == ' ' || s[p] == ':' || s[p] == '.')) ++p;
  return p;
}

std::pair<size_t, size_t> HeaderClockRun(std::string_view s, size_t begin) {
  size_t p = begin;
  if (p < s.size() && s[p] == '[') ++p;
  if (p >= s.size() || (s[p] != 'I' && s[p] != 'W' && s[p] != 'E' && s[p] != 'F')) return {0, 0};
  const size_t run = ++p;
  if (p >= s.size() || !IsDigit(s[p])) return {0, 0};
  return {run, ClockRunEnd(s, p)};
}

// Whether key[0, n) is s[0, n) with each digit as '0': 16 bytes at a time,
// the last 16 read again rather than byte by byte.
bool SameWithDigitsAsZero(const char* key, const char* s, size_t n) {
#if defined(__SSE2__)
  if (n >= 16) {
    auto block = [&](size_t i) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
      const __m128i d = DigitBytes(s + i);
      const __m128i as_key = _mm_or_si128(_mm_andnot_si128(d, v), _mm_and_si128(d, _mm_set1_epi8('0')));
      const __m128i k = _mm_loadu_si128(reinterpret_cast<const __m128i*>(key + i));
      return _mm_movemask_epi8(_mm_cmpeq_epi8(as_key, k)) == 0xFFFF;
    };
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
      if (!block(i)) return false;
    }
    return i == n || block(n - 16);
  }
#endif
  for (size_t i = 0; i < n; ++i) {
    if (key[i] != (IsDigit(s[i]) ? '0' : s[i])) return false;
  }
  return true;
}

std::atomic<bool> g_message_memo{true};

// Dense logs repeat their messages (a rank's every NCCL or c10d line, the
// same context line on every step) under different clocks: the scans'
// result for the bytes they read, kept per thread in a small direct-mapped
// table. The key is those bytes (from MessageReadStart to the end), where
// the message begins in them and whether they start the line (the scans
// test for position 0), so a hit is what scanning again would give.
class MessageMemo {
 public:
  const MessageMarks& Get(std::string_view s, size_t begin) {
    const size_t k = MessageReadStart(s, begin);
    // The header's clock and thread id count by their shape alone.
    auto [run, run_end] = HeaderClockRun(s, begin);
    if (run == run_end) run = run_end = k;
    const Shape shape{s.size() - k, static_cast<uint32_t>(begin - k), static_cast<uint32_t>(run - k),
                      static_cast<uint32_t>(run_end - k), k == 0};
    Set& set = sets_[Slot(s, k, run, run_end, shape)];
    for (unsigned way = 0; way < 2; ++way) {
      Entry& e = set.ways[way];
      if (e.valid && e.shape == shape && Same(e.key, s, k, run, run_end)) {
        set.older = way ^ 1u;
        return e.marks;
      }
    }
    // A miss replaces the way used less recently: two messages that share
    // a set (a dense log's 64 ranks' lines in 256 sets, taken in turn) both
    // stay, where one slot a hash had them evict each other at every line.
    const unsigned way = set.older;
    Entry& e = set.ways[way];
    e.marks = ScanMessage(s, begin);
    e.key.assign(s.substr(k));
    for (size_t i = run; i < run_end; ++i) {
      if (IsDigit(s[i])) e.key[i - k] = '0';
    }
    e.shape = shape;
    e.valid = true;
    set.older = way ^ 1u;
    return e.marks;
  }

 private:
  static constexpr size_t kSets = 256;  // Slot takes the top 8 bits of a hash
  // Where the message begins in the bytes read, where the clock run lies,
  // whether they start the line.
  struct Shape {
    size_t size = 0;
    uint32_t rel = 0, run = 0, run_end = 0;
    bool at_start = false;
    bool operator==(const Shape&) const = default;
  };
  struct Entry {
    std::string key;  // s[k..], the run's digits as '0'
    Shape shape;
    bool valid = false;
    MessageMarks marks;
  };
  // key == s[k..] with the run's digits as '0': the bytes outside the run
  // equal, those inside of the same class.
  static bool Same(const std::string& key, std::string_view s, size_t k, size_t run, size_t run_end) {
    if (run > k && std::memcmp(key.data(), s.data() + k, run - k) != 0) return false;
    if (!SameWithDigitsAsZero(key.data() + (run - k), s.data() + run, run_end - run)) return false;
    const size_t from = std::max(k, run_end);
    return from >= s.size() || std::memcmp(key.data() + (from - k), s.data() + from, s.size() - from) == 0;
  }
  // The bytes before the run (a launcher prefix) and a few 8-byte words
  // after it: a collision only costs a miss.
  static size_t Slot(std::string_view s, size_t k, size_t run, size_t run_end, const Shape& shape) {
    uint64_t h = shape.size * 0x9E3779B97F4A7C15ull ^ shape.rel;
    const size_t from = std::max(k, run_end), n = s.size() - from;
    auto word_at = [&](size_t pos) {
      uint64_t w = 0;
      std::memcpy(&w, s.data() + pos, 8);
      return w;
    };
    auto word = [&](size_t at) { return word_at(from + at); };
    // The prefix 8 bytes at a time, then its last few.
    const size_t pre_end = std::min(run, k + 24);
    size_t p = k;
    for (; p + 8 <= pre_end; p += 8) h = (h ^ word_at(p)) * 0xff51afd7ed558ccdull;
    for (; p < pre_end; ++p) h = (h ^ static_cast<unsigned char>(s[p])) * 0x100000001b3ull;
    if (n >= 8) {
      for (size_t at : {size_t{0}, n / 3, n / 2, n * 2 / 3, n - 8}) {
        h = (h ^ word(std::min(at, n - 8))) * 0xff51afd7ed558ccdull;
      }
    } else {
      for (size_t i = from; i < s.size(); ++i) h = (h ^ static_cast<unsigned char>(s[i])) * 0x100000001b3ull;
    }
    return static_cast<size_t>((h ^ (h >> 29)) * 0xc4ceb9fe1a85ec53ull >> 56);
  }
  struct Set {
    Entry ways[2];
    unsigned older = 0;  // the way to replace on a miss
  };
  Set sets_[kSets];
};

const MessageMarks& MemoMessage(std::string_view s, size_t begin, MessageMarks& scratch) {
  if (!g_message_memo.load(std::memory_order_relaxed)) {
    scratch = ScanMessage(s, begin);
    return scratch;
  }
  // On the heap: its tens of KB as static TLS would keep a dlopen()ed library (the
  // Python binding's) from loading ("cannot allocate memory in static TLS
  // block").
  thread_local std::unique_ptr<MessageMemo> memo;
  if (!memo) memo = std::make_unique<MessageMemo>();
  return memo->Get(s, begin);
}

}  // namespace

void SetMessageMemo(bool on) { g_message_memo.store(on, std::memory_order_relaxed); }

size_t MessageBegin(std::string_view line) {
  Found f;
  size_t p = 0;
  return ParsePrefixes(line, &f, &p);
}

namespace {

// AttributeLine without the line memo (the message memo still used).
Attribution AttributeLineScanned(std::string_view line, size_t* message_begin) {
  Found f;
  const size_t n = line.size();
  size_t p = 0;
  const size_t msg = ParsePrefixes(line, &f, &p);
  // NCCL's prefix starts with its host, UCX's with '[' (no host byte): one
  // of the two is tried, where a glog header's or a message's bracket after
  // the launcher prefix cost a refused NCCL try first on every line of a
  // torchrun log.
  if (p < n) {
    if (line[p] == '[') {
      ParseUcxPrefix(line, p, &f);
    } else {
      ParseNcclPrefix(line, p, &f);
    }
  }
  MessageMarks scratch;
  const MessageMarks& m = MemoMessage(line, msg, scratch);
  f.bracket_rank = m.bracket_rank;
  f.loose_rank = m.loose_rank;
  if (f.host.empty() && !m.subject_host.empty()) {
    // The process the message is about, over the pdsh host that ran the
    // driver; its pid with it where the message names one, not the line's
    // writer's.
    f.host = m.subject_host;
    if (m.subject_pid) f.pid = m.subject_pid;
  }
  if (!f.pid) f.pid = m.pid;
  if (f.gpu.empty()) f.gpu = m.gpu;

  Attribution a;
  a.rank = f.launcher_rank;
  SetIfUnset(a.rank, f.json_rank);
  SetIfUnset(a.rank, f.bracket_rank);
  SetIfUnset(a.rank, f.loose_rank);
  // Under srun, torchrun runs one agent per task: the label is the node.
  if (!f.torchrun) SetIfUnset(a.rank, f.srun_rank);
  a.local_rank = f.launcher_local;
  SetIfUnset(a.local_rank, f.json_local);
  SetIfUnset(a.local_rank, f.device);
  a.pid = f.pid;
  SetIfUnset(a.pid, f.header_pid);
  a.host = f.host.empty() ? std::move(f.pdsh_host) : std::move(f.host);
  a.gpu = std::move(f.gpu);
  if (a.gpu.empty() && f.device) a.gpu = std::to_string(*f.device);
  if (message_begin != nullptr) *message_begin = msg;
  return a;
}

// The digits a line memo compares by their shape alone: a glog header's date
// and clock where the message begins ("[I1102 13:00:00.351576 41000 ...",
// also without the bracket), [begin, end), or an empty range. The prefix
// parsers read them only for their class: tried at the header's '[' or
// level letter, each is refused by a byte's class (a capital or a digit
// where its bracket needs another byte, the space a host token stops at,
// the space a day name would end in), SkipTimestamp's glog branch walks
// them as digits, and none starts inside them; what the header's thread
// id, file and message say lies after them and is compared byte for byte.
// The message scans read the whole clock run by class (HeaderClockRun).
std::pair<size_t, size_t> GlogClockDigits(std::string_view s, size_t msg) {
  size_t p = msg;
  if (p < s.size() && s[p] == '[') ++p;
  if (p >= s.size() || (s[p] != 'I' && s[p] != 'W' && s[p] != 'E' && s[p] != 'F')) return {0, 0};
  const size_t d = p + 1;
  if (s.size() < d + 5 || !IsDigit(s[d]) || !IsDigit(s[d + 1]) || !IsDigit(s[d + 2]) || !IsDigit(s[d + 3]) ||
      s[d + 4] != ' ') {
    return {0, 0};
  }
  const size_t end = MatchClock(s, d + 5);
  if (end == kNpos) return {0, 0};
  return {d, end};
}

// Most matched lines of a dense log differ from an earlier one only in the
// glog header's clock (a rank's every NCCL line, the same options line of
// 64 ranks in turn): what AttributeLine gives such a line (its prefixes'
// parse, the message scans, the record) is kept per thread and handed out
// again for a line equal to it but for the clock's digits. Only lines with
// such a clock are kept; other lines rarely repeat whole. 512 sets of two
// ways, a miss replacing the way used less recently, as the message memo.
class LineMemo {
 public:
  Attribution Get(std::string_view s, size_t* message_begin, LineTimeShape** time_shape) {
    if (time_shape != nullptr) *time_shape = nullptr;
    if (s.size() < kMinLine || s.size() > kMaxLine) return AttributeLineScanned(s, message_begin);
    Set& set = sets_[Slot(s)];
    for (unsigned way = 0; way < 2; ++way) {
      Entry& e = set.ways[way];
      if (e.valid && e.key.size() == s.size() && Same(e, s)) {
        set.older = way ^ 1u;
        if (message_begin != nullptr) *message_begin = e.msg;
        if (time_shape != nullptr && e.begin >= 2) *time_shape = &e.time_shape;
        return e.attribution;
      }
    }
    size_t msg = 0;
    Attribution a = AttributeLineScanned(s, &msg);
    if (message_begin != nullptr) *message_begin = msg;
    const auto [begin, end] = GlogClockDigits(s, msg);
    if (begin == end) return a;
    const unsigned way = set.older;
    Entry& e = set.ways[way];
    e.key.assign(s);
    for (size_t i = begin; i < end; ++i) {
      if (IsDigit(s[i])) e.key[i] = '0';
    }
    e.begin = static_cast<uint32_t>(begin);
    e.end = static_cast<uint32_t>(end);
    e.msg = msg;
    e.attribution = a;
    e.time_shape = LineTimeShape{};
    e.valid = true;
    set.older = way ^ 1u;
    // A time reader that opens at the line's first two bytes sees them
    // exactly on every line of the entry.
    if (time_shape != nullptr && begin >= 2) *time_shape = &e.time_shape;
    return a;
  }

 private:
  static constexpr size_t kSets = 512;  // Slot takes the top 9 bits of a hash
  // A shorter line's words would mostly be its clock; a longer one's key
  // would make the memo large.
  static constexpr size_t kMinLine = 48, kMaxLine = 1024;
  struct Entry {
    std::string key;  // the line, the clock's digits as '0'
    uint32_t begin = 0, end = 0;  // the clock's digits
    size_t msg = 0;
    bool valid = false;
    Attribution attribution;
    LineTimeShape time_shape;  // the caller's, reset with the entry
  };
  // s is key but for digits where key has the clock's '0's.
  static bool Same(const Entry& e, std::string_view s) {
    const char* k = e.key.data();
    return std::memcmp(k, s.data(), e.begin) == 0 &&
           SameWithDigitsAsZero(k + e.begin, s.data() + e.begin, e.end - e.begin) &&
           std::memcmp(k + e.end, s.data() + e.end, s.size() - e.end) == 0;
  }
  // The size, the first 8 bytes (a launcher prefix: "[rank12]"), the 8
  // before the first ']' in the first 64 ("default3" of "[default3]:"),
  // and three words from the middle on. A clock among them (a glog line
  // without a prefix opens with its date and hour) only costs misses.
  static size_t Slot(std::string_view s) {
    const size_t n = s.size();
    auto word = [&](size_t pos) {
      uint64_t w = 0;
      std::memcpy(&w, s.data() + pos, 8);
      return w;
    };
    uint64_t h = n * 0x9E3779B97F4A7C15ull;
    h = (h ^ word(0)) * 0xff51afd7ed558ccdull;
    if (const void* close = std::memchr(s.data() + 8, ']', std::min<size_t>(56, n - 8)); close != nullptr) {
      const size_t at = static_cast<size_t>(static_cast<const char*>(close) - s.data());
      h = (h ^ word(at - 8)) * 0xff51afd7ed558ccdull;
    }
    for (size_t at : {n / 2, n - 16, n - 8}) h = (h ^ word(at)) * 0xff51afd7ed558ccdull;
    return static_cast<size_t>((h ^ (h >> 29)) * 0xc4ceb9fe1a85ec53ull >> 55);
  }
  struct Set {
    Entry ways[2];
    unsigned older = 0;  // the way to replace on a miss
  };
  Set sets_[kSets];
};

}  // namespace

Attribution AttributeLine(std::string_view line, size_t* message_begin, LineTimeShape** time_shape) {
  if (!g_message_memo.load(std::memory_order_relaxed)) {
    if (time_shape != nullptr) *time_shape = nullptr;
    return AttributeLineScanned(line, message_begin);
  }
  // On the heap, as the message memo.
  thread_local std::unique_ptr<LineMemo> memo;
  if (!memo) memo = std::make_unique<LineMemo>();
  return memo->Get(line, message_begin, time_shape);
}

Attribution AttributeLine(std::string_view line, size_t* message_begin) {
  return AttributeLine(line, message_begin, nullptr);
}

void MergeAttribution(Attribution& base, const Attribution& more) {
  if (!base.rank) base.rank = more.rank;
  if (!base.local_rank) base.local_rank = more.local_rank;
  if (!base.pid) base.pid = more.pid;
  if (base.host.empty()) base.host = more.host;
  if (base.gpu.empty()) base.gpu = more.gpu;
  if (!base.task) base.task = more.task;
}

std::string NormalizePciBusId(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  if (AtIgnoreCase(s, 0, "PCI:")) s.remove_prefix(4);
  if (s.empty() || s.size() > 24) return {};

  uint64_t domain = 0, bus = 0, dev = 0, fn = 0;
  if (s.find(':') == kNpos) {
    // NCCL's busId: the hex digits of "DDDD:BB:DD.F" as one number with the
    // leading zeros dropped ("3b000", "1e0" for 0000:00:1e.0).
    if (AtIgnoreCase(s, 0, "0x")) s.remove_prefix(2);
    if (s.empty() || s.size() > 13) return {};
    uint64_t v = 0;
    for (char c : s) {
      int h = HexValue(c);
      if (h < 0) return {};
      v = (v << 4) | static_cast<uint64_t>(h);
    }
    fn = v & 0xf;
    dev = (v >> 4) & 0xff;
    bus = (v >> 12) & 0xff;
    domain = v >> 20;
  } else {
    // [DOMAIN:]BUS:DEV[.FN]; nvidia-smi prints an 8-digit domain.
    std::array<std::string_view, 3> parts;
    size_t count = 0;
    size_t start = 0;
    while (true) {
      size_t colon = s.find(':', start);
      if (count == parts.size()) return {};
      parts[count++] = s.substr(start, colon == kNpos ? kNpos : colon - start);
      if (colon == kNpos) break;
      start = colon + 1;
    }
    if (count < 2) return {};
    std::string_view last = parts[count - 1];
    size_t dot = last.find('.');
    std::string_view fn_str;
    if (dot != kNpos) {
      fn_str = last.substr(dot + 1);
      last = last.substr(0, dot);
      if (fn_str.size() != 1) return {};
    } else if (count == 2) {
      return {};  // "3b:00" could be domain:bus or bus:dev
    }
    auto hex = [](std::string_view h, size_t max_len, uint64_t* out) {
      if (h.empty() || h.size() > max_len) return false;
      uint64_t v = 0;
      for (char c : h) {
        int x = HexValue(c);
        if (x < 0) return false;
        v = (v << 4) | static_cast<uint64_t>(x);
      }
      *out = v;
      return true;
    };
    if (count == 3 && !hex(parts[0], 8, &domain)) return {};
    if (!hex(parts[count - 2], 2, &bus) || !hex(last, 2, &dev)) return {};
    if (!fn_str.empty() && !hex(fn_str, 1, &fn)) return {};
  }
  if (dev > 0x1f || fn > 7 || domain > 0xffffffffULL) return {};
  // "%04x:%02x:%02x.%x" written by hand: snprintf took ~2,000 instructions
  // a call, most of TopologyMap::AddDevice on the merging thread.
  constexpr char kHex[] = "0123456789abcdef";
  char buf[20];
  size_t n = 0;
  int domain_digits = 4;
  while (domain_digits < 8 && (domain >> (4 * domain_digits)) != 0) ++domain_digits;
  for (int i = domain_digits - 1; i >= 0; --i) buf[n++] = kHex[(domain >> (4 * i)) & 0xf];
  buf[n++] = ':';
  buf[n++] = kHex[(bus >> 4) & 0xf];
  buf[n++] = kHex[bus & 0xf];
  buf[n++] = ':';
  buf[n++] = kHex[(dev >> 4) & 0xf];
  buf[n++] = kHex[dev & 0xf];
  buf[n++] = '.';
  buf[n++] = kHex[fn];
  return std::string(buf, n);
}

std::optional<NcclInit> ParseNcclInitLine(std::string_view line) {
  size_t info = line.find("NCCL INFO ");
  if (info == kNpos) return std::nullopt;
  size_t comm = line.find("comm 0x", info);
  if (comm == kNpos) return std::nullopt;
  auto field = [&](std::string_view name) -> std::optional<int64_t> {
    size_t at = line.find(name, comm);
    if (at == kNpos) return std::nullopt;
    size_t q = at + name.size();
    return ParseUint(line, &q, 10);
  };
  NcclInit init;
  std::optional<int64_t> rank = field(" rank ");
  std::optional<int64_t> nranks = field(" nranks ");
  std::optional<int64_t> dev = field(" cudaDev ");
  size_t bus_at = line.find(" busId ", comm);
  if (!rank || !nranks || !dev || bus_at == kNpos || *rank >= *nranks) {
    return std::nullopt;
  }
  size_t q = bus_at + 7;
  size_t bus_end = q;
  while (bus_end < line.size() && IsHex(line[bus_end]) && bus_end - q < 16) ++bus_end;
  init.bus_id = NormalizePciBusId(line.substr(q, bus_end - q));
  if (init.bus_id.empty()) return std::nullopt;
  size_t cid = line.find(" commId 0x", comm);
  if (cid != kNpos) {
    size_t b = cid + 8;
    size_t e = b + 2;
    while (e < line.size() && IsHex(line[e]) && e - b < 18) ++e;
    init.comm_id = std::string(line.substr(b, e - b));
  }
  Attribution a = AttributeLine(line);
  init.host = std::move(a.host);
  init.pid = a.pid;
  init.rank = *rank;
  init.nranks = *nranks;
  init.cuda_dev = *dev;
  return init;
}

std::vector<std::pair<int64_t, std::string>> ParseNcclIbDevices(std::string_view list) {
  std::vector<std::pair<int64_t, std::string>> out;
  if (size_t using_at = list.find("Using"); using_at != kNpos) list = list.substr(using_at + 5);
  // Past the OOB interface: its "eth0:10.0.0.1<0>" is no device.
  if (size_t oob = list.find(';'); oob != kNpos) list = list.substr(0, oob);
  for (size_t q = list.find('['); q != kNpos; q = list.find('[', q)) {
    size_t p = q + 1;
    std::optional<int64_t> index = ParseUint(list, &p, 10);
    q = p;
    if (!index || p >= list.size() || list[p] != ']') continue;
    size_t b = p + 1, e = b;
    while (e < list.size() && (IsWordChar(list[e]) || list[e] == '-' || list[e] == '.')) ++e;
    // A device is "name:port"; "[RO]" (relaxed ordering) is none.
    if (e == b || e >= list.size() || list[e] != ':') continue;
    out.emplace_back(*index, std::string(list.substr(b, e - b)));
    q = e;
  }
  return out;
}

}  // namespace faultline
