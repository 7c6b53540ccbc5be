// Phase B, on worker threads: the lines phase A copied out are confirmed
// with RE2 (the same pattern, on that line alone), their named captures
// extracted, their timestamp parsed (or inherited from the nearest stamped
// line before them) and their rank/host attributed; tracebacks are folded
// onto their exception line; the chunk's first and last times are read from
// its head and tail.
#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attribution/attribution.h"
#include "attribution/prompt.h"
#include "scan/confirm_plan.h"
#include "scan/scan_impl.h"
#include "timeparse/timeparse.h"
#include "util/strings.h"

namespace faultline {

using internal::ChunkOut;
using internal::CleanText;
using internal::CleansToItself;
using internal::CopyOut;
using internal::CountNewlines;
using internal::DeltaUs;
using internal::EvidenceRef;
using internal::IsThinField;
using internal::SetsAttribution;
using internal::kConfirmWindow;
using internal::kEdgeWindow;
using internal::Pending;
using internal::PendingExtra;
using internal::PhaseA;
using internal::TimeInForce;
using internal::TracebackPending;

namespace {

// For a matched line without its own stamp, the time it inherits: that of
// the nearest stamped line before it (in the context phase A copied, else
// through the previous matched line of the chunk, whose time in force is
// `prev`). dmesg -H delta lines ("[  +0.000316]") add up from it: the line's
// own delta `acc` and those of the delta lines in between, all within the
// same position bound.
TimeInForce InheritedTime(const Pending& p, std::string_view p_before, int64_t acc, const TimeInForce& prev,
                          const LineFormat& fmt, const TimeContext& tctx, bool clean_lines) {
  TimeInForce t;
  std::string_view before = p_before;
  while (!before.empty()) {
    if (before.back() == '\n') before.remove_suffix(1);
    size_t nl = before.rfind('\n');
    std::string_view line = nl == std::string_view::npos ? before : before.substr(nl + 1);
    bool partial = nl == std::string_view::npos && !p.before_reaches_chunk_start && !p.before_reaches_prev;
    if (partial) break;
    const std::optional<ParsedTime> pt = clean_lines ? CleanLineTime(line, fmt, tctx) : LineTime(line, fmt, tctx);
    if (pt && pt->wall_us) {
      t.time_us = *pt->wall_us + acc;
      t.inferred = pt->year_inferred;
      t.at = p.offset - p_before.size() + static_cast<uint64_t>(line.data() - p_before.data());
      return t;
    }
    if (pt && pt->delta_s) acc += DeltaUs(*pt->delta_s);
    if (nl == std::string_view::npos) break;
    before = before.substr(0, nl);
  }
  if (p.before_reaches_prev) {
    // The chain keeps the position bound: the stamped line must start
    // within kInheritWindow of this one, as for any other chunking.
    if (prev.time_us != kNoTime && prev.at + kInheritWindow >= p.offset) {
      t.time_us = prev.time_us + acc;
      t.inferred = prev.inferred;
      t.at = prev.at;
    }
    t.needs_prev = prev.needs_prev;
    t.pending_delta = prev.pending_delta + acc;
  } else if (p.before_reaches_chunk_start) {
    t.needs_prev = true;
    t.pending_delta = acc;
  }
  return t;
}

// The chunk's first and last wall times, from its head and tail (the last
// carried forward by the dmesg -H deltas after it), the first stamp with its
// own year, and a monotonic anchor from the last line carrying both clocks.
void ChunkEdgeTimes(const LineFormat& fmt, const TimeContext& tctx, bool clean_lines, ChunkOut& out) {
  auto line_time = [&](std::string_view l) { return clean_lines ? CleanLineTime(l, fmt, tctx) : LineTime(l, fmt, tctx); };
  auto first_time = [&](std::string_view text) -> int64_t {
    size_t pos = 0;
    for (int k = 0; k < 64 && pos < text.size(); ++k) {
      size_t nl = text.find('\n', pos);
      std::string_view l = text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos);
      const std::optional<ParsedTime> t = line_time(l);
      if (t && t->wall_us) {
        if (!t->year_inferred) out.edge.dated_us = *t->wall_us;
        out.edge.first_time_inferred = t->year_inferred;
        return *t->wall_us;
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
    const std::optional<ParsedTime> t = line_time(l);
    if (t && t->delta_s) tail_acc += DeltaUs(*t->delta_s);
    if (t && t->wall_us) {
      out.edge.last_time_us = *t->wall_us + tail_acc;
      out.edge.last_time_inferred = t->year_inferred;
      out.edge.last_time_offset = static_cast<int64_t>(tail_start + (nl == std::string_view::npos ? 0 : nl + 1));
      if (t->monotonic_s) {
        out.edge.monotonic_anchor_us = *t->wall_us - static_cast<int64_t>(*t->monotonic_s * 1e6);
      }
      break;
    }
    if (nl == std::string_view::npos) break;
    tail = tail.substr(0, nl);
  }
  if (out.edge.last_time_us == kNoTime && out.tail.size() == out.edge.bytes && out.edge.bytes < kEdgeWindow) {
    out.edge.unanchored_delta_us = tail_acc;
  }
}

// tqdm redraws its bar with carriage returns, so one line of the file holds
// every update: the newest segment the progress signal matches is where the
// rank got to (the line as a whole matched, so one does).
std::string_view NewestUpdate(std::string_view subject, const SignalInfo& si) {
  size_t end = subject.size();
  for (size_t cr = subject.rfind('\r'); cr != std::string_view::npos;
       cr = cr == 0 ? std::string_view::npos : subject.rfind('\r', cr - 1)) {
    std::string_view seg = subject.substr(cr + 1, end - cr - 1);
    if (si.Confirms(seg)) return seg;
    end = cr;
  }
  return subject;
}

// The line's attribution, the path's for what the line leaves unset
// (MergeAttribution, without copying either).
void AttributeRecord(const Attribution& line, const Attribution& path, Evidence& ev) {
  ev.rank = line.rank ? *line.rank : path.rank.value_or(-1);
  ev.local_rank = line.local_rank ? *line.local_rank : path.local_rank.value_or(-1);
  ev.pid = line.pid ? *line.pid : path.pid.value_or(-1);
  ev.host = line.host.empty() ? path.host : line.host;
  ev.gpu = line.gpu.empty() ? path.gpu : line.gpu;
}

// The context phase A kept before matched line `p`: copied, or where it
// lies in the chunk (ChunkOut::lazy_context), copied out of a mapping
// under the SIGBUS guard. False: the mapping faulted (truncated since
// phase A).
bool ContextBefore(const ChunkOut& out, const Pending& p, std::string_view& before) {
  if (!out.lazy_context) {
    before = out.BeforeOf(p);
    return true;
  }
  if (out.context_guard.empty()) {
    before = std::string_view(out.context_base + p.before_at, p.before_len);
    return true;
  }
  // Room made before the guard: the copy inside it never allocates (a
  // fault unwinds with longjmp).
  thread_local std::string copy;
  copy.reserve(internal::kContextBefore);
  struct Read {
    std::string* to;
    const char* from;
    size_t n;
  } read{&copy, out.context_base + p.before_at, std::min(p.before_len, internal::kContextBefore)};
  const Read* r = &read;
  if (!GuardedRead(out.context_guard.data(), out.context_guard.size(), [r] { r->to->assign(r->from, r->n); })) {
    return false;
  }
  before = copy;
  return true;
}

// The shell prompt in force at the end of the context phase A kept before
// matched line `p` (attribution/prompt.h), read where that context lies: a
// mapping's bytes are searched in place under the SIGBUS guard (no copy of
// the context for a line that has a stamp of its own), and only the
// prompt's host is copied out. False: the mapping faulted.
struct PromptFound {
  bool found = false;
  bool remote = false;  // its command runs elsewhere
  char host[64];        // a label: \h and %m stop at the first dot
  size_t host_len = 0;
};

void LookForPrompt(std::string_view text, PromptFound* f) {
  ShellPrompt sp;
  f->found = LastShellPrompt(text, &sp);
  if (!f->found) return;
  f->remote = RunsElsewhere(sp.command);
  f->host_len = std::min(sp.host.size(), sizeof f->host);
  std::memcpy(f->host, sp.host.data(), f->host_len);
}

bool PromptBefore(const ChunkOut& out, const Pending& p, PromptFound& f) {
  if (!out.lazy_context) {
    LookForPrompt(out.BeforeOf(p), &f);
    return true;
  }
  const std::string_view context(out.context_base + p.before_at, std::min(p.before_len, internal::kContextBefore));
  if (out.context_guard.empty()) {
    LookForPrompt(context, &f);
    return true;
  }
  struct Args {
    std::string_view context;
    PromptFound* f;
  } args{context, &f};
  const Args* a = &args;
  return GuardedRead(out.context_guard.data(), out.context_guard.size(), [a] { LookForPrompt(a->context, a->f); });
}

}  // namespace

void Scanner::Impl::PhaseB(const SourceState& st, ChunkOut& out, bool clean_lines) const {
  // Pass 1: each line's time in force and attribution, its signals
  // confirmed; the evidence made without its text and captures.
  std::vector<EvidenceRef> refs;
  refs.reserve(out.pending.size());
  // A record per matched signal: sized once, not grown by moving records.
  size_t records = 0;
  for (const Pending& p : out.pending) records += p.ids_n;
  out.evidence.reserve(out.evidence.size() + records);
  // The time in force at the previous matched line (its own or inherited).
  TimeInForce prev;
  // The host of the shell prompt the previous matched line sat under
  // (attribution/prompt.h; empty: none, or its command ran elsewhere), and
  // whether that is known (the context before the line was read).
  std::string prompt_host;
  bool prompt_known = false;
  auto MayFail = [&](const Pending& p) {
    const uint32_t* ids = out.IdsOf(p);
    for (size_t j = 0; j < p.ids_n; ++j) {
      const SignalRole role = rs->signal(ids[j]).role;
      if (role != SignalRole::Context && role != SignalRole::Progress && role != SignalRole::Metric) return true;
    }
    return false;
  };
  out.held.clear();
  for (uint32_t i = 0; i < out.pending.size(); ++i) {
    Pending& p = out.pending[i];
    std::string_view line = out.LineOf(p);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    LineView view = clean_lines ? SplitCleanLine(line, st.framing.format(), st.tctx)
                                : SplitLine(line, st.framing.format(), st.tctx);
    if (view.attr.host.empty() && st.path_attr.host.empty() && MayFail(p)) {
      // A line naming no host under a shell prompt in the chunk (the
      // context before it, or the prompt found above the previous matched
      // line when that context reaches it) is the prompt's host's. Only
      // the lines a failure may stand on are looked at: a dense log's
      // context and progress lines would have the whole chunk read again
      // (6% of a dense scan's CPU time).
      PromptFound above;
      if (!PromptBefore(out, p, above)) {
        out.faulted = true;
        return;
      }
      if (!p.before_reaches_prev || !prompt_known) prompt_host.clear();
      if (above.found) {
        prompt_host = above.remote ? std::string() : NormalizeHost(std::string_view(above.host, above.host_len));
      }
      prompt_known = true;
      if (ShellPrompt own; ParseShellPrompt(line, &own)) {
        view.attr.host = NormalizeHost(own.host);
        prompt_host = RunsElsewhere(own.command) ? std::string() : view.attr.host;
      } else if (!prompt_host.empty()) {
        view.attr.host = prompt_host;
      }
    } else {
      prompt_known = false;
    }
    const bool own_delta = view.time && view.time->delta_s;
    if (view.time && view.time->wall_us) {
      ConfirmLine(st, p, i, line, view, own_delta, TimeInForce(), out, refs);
      prev = {*view.time->wall_us, p.offset, view.time->year_inferred, false, 0};
    } else {
      std::string_view before;
      if (!ContextBefore(out, p, before)) {
        out.faulted = true;
        return;
      }
      const TimeInForce inherited =
          InheritedTime(p, before, own_delta ? DeltaUs(*view.time->delta_s) : 0, prev, st.framing.format(),
                        st.tctx, clean_lines);
      ConfirmLine(st, p, i, line, view, own_delta, inherited, out, refs);
      prev = inherited;
      prev.needs_prev = inherited.time_us == kNoTime && inherited.needs_prev;
    }
  }
  // Pass 2: text and captures, in full for evidence the caps may keep, and
  // only what Keep reads for the rest.
  MarkThin(st, out, refs);
  out.thin.clear();
  for (size_t k = 0; k < refs.size(); ++k) {
    if (!refs[k].thin) continue;
    out.thin.resize(refs.size());
    out.thin[k] = 1;
  }
  for (size_t k = 0; k < refs.size();) {
    const uint32_t pi = refs[k].pending;
    size_t end = k;
    bool all_thin = true;
    while (end < refs.size() && refs[end].pending == pi) all_thin &= refs[end++].thin;
    FinishLine(st, out.pending[pi], k, end, all_thin, out, refs);
    k = end;
  }
  out.pending.clear();
  out.pending.shrink_to_fit();
  out.pending_text.clear();
  out.pending_text.shrink_to_fit();
  out.pending_ids.clear();
  out.pending_ids.shrink_to_fit();
  out.held.clear();
  out.held.shrink_to_fit();
  ChunkEdgeTimes(st.framing.format(), st.tctx, clean_lines, out);
  // Freed here, not by the merging thread that destroys the output (a
  // small file's head, up to kEdgeWindow bytes, was a free of its own
  // there for every file of an archive).
  std::string().swap(out.head);
  // The tail stays: the merge keeps the source's last bytes from it to
  // complete traceback windows cut at the next chunk's start.
}

void Scanner::Impl::ConfirmLine(const SourceState& st, Pending& p, uint32_t pending_index, std::string_view line,
                                const LineView& view, bool own_delta, const TimeInForce& inherited, ChunkOut& out,
                                std::vector<EvidenceRef>& refs) const {
  // The subject the captures are taken from in pass 2: the line, or the
  // JSON message held in the view.
  const bool message_in_line =
      view.message.data() >= line.data() && view.message.data() + view.message.size() <= line.data() + line.size();
  const bool subject_is_line = message_in_line && view.message.size() == line.size();
  bool kept_message = false;
  const uint32_t* ids = out.IdsOf(p);
  thread_local std::vector<std::pair<std::string_view, std::string_view>> captured;
  for (size_t j = 0; j < p.ids_n; ++j) {
    uint32_t id = ids[j];
    const SignalInfo& si = rs->signal(id);
    // Hyperscan found where; RE2 confirms the match holds on this line alone
    // (for JSON sources, on the message; for a huge line, on the window
    // around the match) -- unless the pattern is one whose Hyperscan match
    // cannot reach past the line (confirm_plan.h).
    const bool windowed = j < p.Extra().windows.size();
    std::string_view subject = windowed ? std::string_view(p.Extra().windows[j]) : view.message;
    if (!si.Usable()) continue;
    const bool hs_enough = plans_[id].hs_confirms && !windowed && subject_is_line && !st.framing.format().json;
    // Where the pattern ends in the extract, one walk confirms and captures
    // (on the line itself: pass 2 extracts from it).
    captured.clear();
    std::optional<bool> fused;
    if (!hs_enough && !windowed && subject_is_line && si.role != SignalRole::Progress) {
      fused = si.ConfirmAndExtract(subject, &captured);
    }
    if (fused ? !*fused : !hs_enough && !si.Confirms(subject)) continue;
    if (si.detail_exception_line) {
      PendingExtra& x = p.MakeExtra();
      if (!x.exception) {
        bool in_frames = false;
        x.exception = FindExceptionLine(line, x.after, st.framing.format(), st.tctx, &in_frames);
        // The source ends in the frames of the program's own traceback (no
        // thread's or child process's): the process died printing it, or the
        // excerpt stops there. The header is the evidence, field `cut`.
        p.ends_in_frames = !x.exception && in_frames && x.after.size() < kTracebackWindow &&
                           !UnderChildHeader(line, x.above, st.framing.format(), st.tctx);
      }
      if ((!x.exception || x.exception->index >= x.after_lines.size()) && !p.ends_in_frames) continue;
    }
    if (!windowed && !message_in_line && !kept_message) {
      p.MakeExtra().message.assign(view.message);
      kept_message = true;
    }
    // tqdm's carriage-return redraws: the captures come from the newest
    // update (relative to the subject pass 2 extracts from).
    uint32_t sub_begin = 0, sub_len = UINT32_MAX;
    if (si.role == SignalRole::Progress) {
      const std::string_view base = windowed ? std::string_view(p.Extra().windows[j]) : kept_message ? view.message : line;
      const std::string_view seg = NewestUpdate(subject, si);
      if (seg.size() != subject.size() && seg.data() >= base.data()) {
        sub_begin = static_cast<uint32_t>(seg.data() - base.data());
        sub_len = static_cast<uint32_t>(seg.size());
      }
    }
    Evidence& ev = out.evidence.emplace_back();
    ev.source = st.index;
    ev.offset = p.offset;
    ev.line = p.line_rel;  // fixed at merge
    ev.rule = si.rule_index;
    ev.signal = id;
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
      if (inherited.time_us != kNoTime) {
        ev.time_us = inherited.time_us;
        ev.time_source = ev.InheritedSource();
        ev.year_inferred = inherited.inferred;
      } else {
        ev.needs_prev_time = inherited.needs_prev;
        ev.prev_delta_us = inherited.pending_delta;
      }
    }
    // Attribution: the line, then the path (captures come in pass 2).
    AttributeRecord(view.attr, st.path_attr, ev);
    EvidenceRef& ref = refs.emplace_back(
        EvidenceRef{pending_index, static_cast<uint32_t>(j), kept_message, false, sub_begin, sub_len});
    if (fused) {
      ref.held_at = static_cast<uint32_t>(out.held.size());
      ref.held_n = static_cast<uint32_t>(captured.size());
      for (const auto& [name, value] : captured) {
        out.held.push_back({name, static_cast<uint32_t>(value.data() - line.data()), static_cast<uint32_t>(value.size())});
      }
    }
  }
}

void Scanner::Impl::MarkThin(const SourceState& st, ChunkOut& out, std::vector<EvidenceRef>& refs) const {
  // The per-rule caps keep the first keep_first and the last keep_last of a
  // rule in a source; past the first keep_first (the chunks merged before
  // this one counted in) and before the last keep_last of its rule in this
  // chunk, a record is neither. Such a match storm (every line a watchdog
  // timeout) then holds a couple of hundred bytes per match in flight
  // between the workers and the merge, not its text and captures. Progress
  // and metric evidence feed series and stays whole; with an on_evidence
  // callback every record is whole.
  out.rule_records.clear();
  if (opts.on_evidence) return;
  thread_local std::vector<uint64_t> total, index, before;
  total.assign(rs->rule_count(), 0);
  index.assign(rs->rule_count(), 0);
  before.assign(rs->rule_count(), 0);
  auto thinnable = [&](const Evidence& ev) {
    SignalRole role = rs->signal(ev.signal).role;
    return role != SignalRole::Progress && role != SignalRole::Metric;
  };
  for (const Evidence& ev : out.evidence) {
    if (rs->signal(ev.signal).role != SignalRole::Progress && total[ev.rule]++ == 0) {
      out.rule_records.emplace_back(ev.rule, 0);
    }
  }
  for (auto& [rule, n] : out.rule_records) n = total[rule];
  // What the merge has published of the chunks before this one: a lower
  // bound of each rule's records before the chunk (0 when nothing yet).
  if (const std::atomic<uint64_t>* merged = st.merged_of_rule.load(std::memory_order_acquire)) {
    for (const auto& [rule, n] : out.rule_records) before[rule] = merged[rule].load(std::memory_order_relaxed);
  }
  for (size_t k = 0; k < refs.size(); ++k) {
    const Evidence& ev = out.evidence[k];
    if (rs->signal(ev.signal).role == SignalRole::Progress) continue;
    uint64_t i = index[ev.rule]++;
    refs[k].thin = thinnable(ev) && before[ev.rule] + i >= opts.keep_first && i + opts.keep_last < total[ev.rule];
  }
  // A metric line goes into its series as a point, and the merge keeps
  // nothing more of it (Keep): its text is not made -- unless the line is
  // not its own evidence (the next line, a traceback's exception line) or
  // the series may be past their bound.
  if (opts.metric_evidence || metric_series_full_.load(std::memory_order_relaxed)) return;
  for (size_t k = 0; k < refs.size(); ++k) {
    const SignalInfo& si = rs->signal(out.evidence[k].signal);
    refs[k].point = si.role == SignalRole::Metric && !si.detail_next_line && !si.detail_exception_line;
  }
}

namespace {

// A line that states when it happened (`at`: srun's "CANCELLED AT
// 2026-11-02T13:46:41" written after the fact, into an unstamped stream)
// takes that time when it has no stamp of its own.
void StatedTime(std::string_view at, const TimeContext& tctx, Evidence& ev) {
  if (ev.time_source == TimeSource::kParsed) return;
  std::optional<int64_t> t = ParseIso8601(at, tctx);
  if (!t) return;
  ev.time_us = *t;
  ev.time_source = TimeSource::kParsed;
  ev.year_inferred = false;
  ev.needs_prev_time = false;
}

// A signal whose message goes on on the next line (detail_next_line):
// its evidence is that line, which says what failed, with the time and
// attribution of the line it matched.
//
// Unless the next line says nothing of its own: a blank line, or a
// traceback's header, whose own signal reads the exception line that ends
// it (Hydra writes its "Error executing job with overrides" line above the
// job's exception, printed alone for its compact exceptions and as a
// traceback for the others). The matched line is then its evidence.
bool NextLineGoesOn(std::string_view next) {
  if (next.find_first_not_of(" \t\r") == std::string_view::npos) return false;
  return next.find("Traceback (most recent call last)") == std::string_view::npos;
}

// The exception that ends a Ray task's traceback was raised in the task's
// process, whose host its header names; the line the driver printed it on
// names none.
void TakeTaskHost(const TracebackFold& fold, Evidence& ev) {
  if (fold.task_host.empty() || !ev.host.empty()) return;
  ev.host = fold.task_host;
  if (fold.task_pid) ev.pid = *fold.task_pid;
}

void TakeNextLine(std::string_view next, const Pending& p, Evidence& ev) {
  if (!next.empty() && next.back() == '\r') next.remove_suffix(1);
  ev.offset = p.next_offset;
  ev.line = p.next_line_rel;
  ev.text = CleanText(next);
}

// Evidence `ev` moved to the line right above pending line `p` (phase A's
// copy of it, Extra().above), with `text` (that line, without its end) as
// its text; nothing when `text` is empty.
void TakeAbove(const Pending& p, std::string_view text, Evidence& ev) {
  const std::string& above = p.Extra().above;
  if (text.empty() || p.line_rel == 0 || p.offset < above.size()) return;
  ev.offset = p.offset - above.size();
  ev.line = p.line_rel - 1;
  ev.text = CleanText(text);
}

// A traceback cut in its frames (field `cut`) has no exception line: the
// record that printed it as its exc_info, on the line above its header
// (RecordAboveHeader), says what failed and is its evidence.
void TakeRecordAbove(const LineFormat& fmt, const TimeContext& tctx, std::string_view header, const Pending& p,
                     Evidence& ev) {
  TakeAbove(p, RecordAboveHeader(header, p.Extra().above, fmt, tctx), ev);
}

// A crash or abort report that names no cause (detail_line_above: a shell's
// "Segmentation fault (core dumped)", MPI_Abort's notice): a C or C++
// program prints its error to stderr and then aborts, exits through
// MPI_Abort or crashes, so the line right above the report, of the
// report's stream, that reads as an error message (ErrorMessageAbove) says
// what failed and is its evidence, with the report's fields.
void TakeLineAbove(const LineFormat& fmt, const TimeContext& tctx, std::string_view report, const Pending& p,
                   Evidence& ev) {
  TakeAbove(p, ErrorMessageAbove(report, p.Extra().above, fmt, tctx), ev);
}

// A signal that matched a traceback's header (detail_exception_line): its
// evidence is the exception line that ends the traceback, with that line's
// class and message and the traceback folded into it as for a signal of
// that line itself.
void TakeExceptionLine(const LineFormat& fmt, const TimeContext& tctx, std::string_view header, const Pending& p,
                       Evidence& ev) {
  const PendingExtra& x = p.Extra();
  const ExceptionLine& e = *x.exception;
  std::string_view line = std::string_view(x.after).substr(e.begin, e.end - e.begin);
  ev.offset = x.after_lines[e.index].first;
  ev.line = x.after_lines[e.index].second;
  ev.text = CleanText(line);
  ev.fields.emplace_back("exception", CleanText(e.exception));
  if (!e.message.empty()) ev.fields.emplace_back("message", CleanText(e.message));
  std::string window = StrCat("\n", x.above, header, "\n", std::string_view(x.after).substr(0, e.begin));
  if (auto fold = FoldTraceback(window, false, line, fmt, tctx)) {
    ev.fields.emplace_back("raised_at", CleanText(fold->raised_at));
    ev.fields.emplace_back("traceback", CleanText(fold->frames));
    if (!fold->logged_level.empty()) ev.fields.emplace_back("logged_level", fold->logged_level);
    ev.traceback_span = static_cast<uint32_t>(fold->span);
    TakeTaskHost(*fold, ev);
  }
}

}  // namespace

void Scanner::Impl::FinishLine(const SourceState& st, Pending& p, size_t first, size_t end, bool all_thin,
                               ChunkOut& out, const std::vector<EvidenceRef>& refs) const {
  std::string_view line = out.LineOf(p);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::string text;  // cleaned once per line, whatever its number of signals
  bool have_text = false;
  auto line_text = [&]() -> const std::string& {
    if (!have_text) {
      text = CleanText(line);
      have_text = true;
    }
    return text;
  };
  thread_local std::vector<std::pair<std::string_view, std::string_view>> captured;
  for (size_t k = first; k < end; ++k) {
    const EvidenceRef& r = refs[k];
    Evidence& ev = out.evidence[k];
    const SignalInfo& si = rs->signal(ev.signal);
    const bool extract = !si.extracts().empty() && (!r.thin || plans_[ev.signal].thin_extract);
    captured.clear();
    if (extract && r.held_at != UINT32_MAX) {
      for (uint32_t h = r.held_at; h < r.held_at + r.held_n; ++h) {
        captured.emplace_back(out.held[h].name, line.substr(out.held[h].begin, out.held[h].len));
      }
    } else if (extract) {
      std::string_view subject = r.j < p.Extra().windows.size() ? std::string_view(p.Extra().windows[r.j])
                                 : r.own_message                      ? std::string_view(p.Extra().message)
                                                              : line;
      if (r.sub_len != UINT32_MAX) subject = subject.substr(std::min<size_t>(r.sub_begin, subject.size()), r.sub_len);
      si.ExtractFields(subject, &captured);
    }
    bool comm = false;
    // One allocation for a whole record's fields, not one a doubling.
    if (!r.thin && captured.size() > 1) ev.fields.reserve(ev.fields.size() + captured.size());
    for (const auto& [name, value] : captured) {
      // A record the caps drop keeps only the fields Keep reads.
      if (r.thin && !IsThinField(name) && !SetsAttribution(name)) continue;
      // A dropped record's rank, pid or local rank is read and not kept: a
      // capture CleanText would leave as it is is parsed where it lies, not
      // copied first (every line of a dense log's match storm).
      if (r.thin && !IsThinField(name) && name != "host" && CleansToItself(value)) {
        int64_t n;
        if (name == "rank" && ParseInt64(value, &n)) ev.rank = n;
        else if (name == "pid" && ParseInt64(value, &n)) ev.pid = n;
        else if (name == "local_rank" && ParseInt64(value, &n)) ev.local_rank = n;
        continue;
      }
      // A launcher's rank mapping lists every host's ranks (8 KB at 1,024
      // ranks); Keep's LineCarry consumes it and drops it from the record.
      std::string v = name == "rank_mapping" ? CleanUtf8(value, kConfirmWindow) : CleanText(value);
      int64_t n;
      if (name == "rank" && ParseInt64(v, &n)) ev.rank = n;
      else if (name == "pid" && ParseInt64(v, &n)) ev.pid = n;
      else if (name == "local_rank" && ParseInt64(v, &n)) ev.local_rank = n;
      else if (name == "host" && !v.empty()) ev.host = v;
      else if ((name == "pci" || name == "bus_id") && ev.gpu.empty()) {
        std::string g = NormalizePciBusId(v);
        if (!g.empty()) ev.gpu = g;
      }
      if (name == "at") StatedTime(v, st.tctx, ev);
      if (r.thin && !IsThinField(name)) continue;
      comm |= name == "comm_id";
      ev.fields.emplace_back(std::string(name), std::move(v));
    }
    // A metric line whose value parses is a series point at the merge
    // (KeepMetric reads the same field): no text.
    bool point = false;
    if (r.point) {
      double v;
      const std::string* val = ev.Field("value");
      point = val && ParseDouble(*val, &v);
      if (point) {
        if (out.thin.size() < refs.size()) out.thin.resize(refs.size());
        out.thin[k] = 2;
      }
    }
    // Sync points read the text of a dropped record with a comm_id.
    if ((!r.thin && !point) || comm) ev.text = line_text();
    if (si.detail_next_line && p.has_next && NextLineGoesOn(out.NextOf(p))) TakeNextLine(out.NextOf(p), p, ev);
    if (si.detail_line_above) TakeLineAbove(st.framing.format(), st.tctx, line, p, ev);
    if (si.detail_exception_line && p.Extra().exception) TakeExceptionLine(st.framing.format(), st.tctx, line, p, ev);
    else if (si.detail_exception_line && p.ends_in_frames) {
      ev.fields.emplace_back("cut", "in its frames");
      TakeRecordAbove(st.framing.format(), st.tctx, line, p, ev);
    }
  }
  if (p.tb_candidate && end > first && !all_thin) {
    if (p.tb_cut) {
      TracebackPending& tp = out.tb_pending.emplace_back();
      tp.first_evidence = first;
      tp.evidence_count = end - first;
      tp.offset = p.offset;
      tp.window = std::move(p.MakeExtra().tb_window);
      tp.line.assign(line);
    } else {
      AddTraceback(out.evidence, first, end - first,
                   FoldTraceback(p.Extra().tb_window, p.tb_at_start, line, st.framing.format(), st.tctx));
    }
  }
}

void Scanner::Impl::AddTraceback(std::vector<Evidence>& evs, size_t first, size_t count,
                                        const std::optional<TracebackFold>& fold) {
  if (!fold) return;
  for (size_t i = first; i < first + count && i < evs.size(); ++i) {
    Evidence& ev = evs[i];
    if (!ev.Field("raised_at")) ev.fields.emplace_back("raised_at", CleanText(fold->raised_at));
    if (!ev.Field("traceback")) ev.fields.emplace_back("traceback", CleanText(fold->frames));
    if (!fold->logged_level.empty() && !ev.Field("logged_level")) {
      ev.fields.emplace_back("logged_level", fold->logged_level);
    }
    ev.traceback_span = static_cast<uint32_t>(fold->span);
    TakeTaskHost(*fold, ev);
    // A bare exception line of a record whose header had the prefix.
    if (const auto& h = fold->header_attr; h && ev.rank < 0 && ev.host.empty()) {
      ev.rank = h->rank.value_or(-1);
      ev.host = h->host;
      if (ev.pid < 0) ev.pid = h->pid.value_or(-1);
      if (ev.local_rank < 0) ev.local_rank = h->local_rank.value_or(-1);
    }
  }
}

template <typename Each>
void Scanner::Impl::PhaseADerived(hs_scratch_t* scratch, std::vector<Hit>& hits, const char* data,
                                  size_t len, uint64_t abs_offset, const DerivedChunk& jc, bool fold_tracebacks,
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
      // The next line is the next record.
      p.has_next = p.has_next && idx + 1 < jc.lines.size();
      if (p.has_next) {
        p.next_offset = abs_offset + jc.lines[idx + 1].offset;
        p.next_line_rel = jc.lines[idx + 1].line_rel;
      }
      // So are the lines after a traceback's header.
      for (size_t j = 0; p.extra && j < p.extra->after_lines.size(); ++j) {
        if (idx + 1 + j >= jc.lines.size()) {
          p.extra->after_lines.resize(j);
          break;
        }
        p.extra->after_lines[j] = {abs_offset + jc.lines[idx + 1 + j].offset, jc.lines[idx + 1 + j].line_rel};
      }
      each(p, jc.lines[idx]);
    }
  }
  out.head.assign(data, std::min(len, kEdgeWindow));
  size_t tail_len = std::min(len, kEdgeWindow);
  out.tail.assign(data + len - tail_len, tail_len);
}

void Scanner::Impl::ProcessBuffer(SourceState& st, hs_scratch_t* scratch, std::vector<Hit>& hits,
                                  const char* data, size_t len, uint64_t abs_offset, ChunkOut& out,
                                  SourceFraming::Derivation how) const {
  using Derivation = SourceFraming::Derivation;
  if (how == Derivation::kUnknown) how = st.framing.HowDerived(std::string_view(data, len));
  // A derived text is gone before phase B: its contexts are copied.
  out.lazy_context = false;
  out.context_guard = {};
  // Traceback windows of derived records come from the derived text, which
  // starts at this chunk's start.
  auto fix_tb_window = [&](Pending& p, const DerivedRecord&) {
    if (!p.tb_candidate) return;
    p.tb_at_start = p.tb_at_start && abs_offset == 0;
    p.tb_cut = p.Extra().tb_window.size() < kTracebackWindow && !p.tb_at_start;
  };
  bool clean_lines = false;
  if (how == Derivation::kJson) {
    // JSON lines: scan the messages, not the raw JSON; confirm on the raw
    // line (SplitLine takes the message from it again).
    DerivedChunk jc = ExtractJsonMessages(std::string_view(data, len));
    PhaseADerived(scratch, hits, data, len, abs_offset, jc, false, out,
                  [&](Pending& p, const DerivedRecord& jl) {
                    p.MakeExtra().line.assign(data + jl.offset, std::min<size_t>(jl.length, kConfirmWindow));
                    p.line_owned = true;
                    p.before_len = 0;
                    p.before_reaches_chunk_start = false;
                    p.before_reaches_prev = false;
                  });
  } else if (how == Derivation::kRuns) {
    // CRI partial lines, hard-wrapped lines: match on the joined records.
    DerivedChunk jc = JoinPartials(st.framing.format(), std::string_view(data, len));
    StripEscapes(jc);
    PhaseADerived(scratch, hits, data, len, abs_offset, jc, true, out, fix_tb_window);
  } else if (how == Derivation::kEscapes) {
    // Coloured lines (Ray's, rich's, loguru's): matched, and their times
    // read, without the escapes; the evidence text is the line without them.
    DerivedChunk jc = StripEscapes(std::string_view(data, len));
    PhaseADerived(scratch, hits, data, len, abs_offset, jc, true, out, fix_tb_window);
  } else {
    out.lazy_context = opts.lazy_context;  // `data` outlives phase B
    PhaseA(*rs, scratch, data, len, abs_offset, out, hits);
    clean_lines = true;
  }
  PhaseB(st, out, clean_lines);
}

}  // namespace faultline
