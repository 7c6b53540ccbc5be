// The C ABI shim: handles, status mapping and the exception firewall. No C++
// exception and no Abseil type crosses this file's functions.
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <vector>

#include "correlate/attempts.h"
#include "correlate/correlate.h"
#include "evidence/bundle.h"
#include "faultline/faultline.h"
#include "input/input.h"
#include "report/html.h"
#include "report/report.h"
#include "ruleset/compiler.h"
#include "ruleset/ruleset.h"
#include "scan/scan.h"
#include "scan/signal_cost.h"
#include "util/fl_status.h"
#include "util/strings.h"

using faultline::StrCat;

struct fl_error {
  fl_status code;
  std::string message;
};

struct fl_ruleset {
  std::shared_ptr<const faultline::Ruleset> rs;
};

struct fl_report {
  std::shared_ptr<const faultline::Ruleset> rs;
  faultline::ScanResult scan;
  faultline::Diagnosis diag;
  std::string json, text, hits_json;
  // Built on first request (it can be large); once_flag keeps concurrent
  // readers of an immutable report safe.
  mutable std::once_flag jsonl_once;
  mutable std::string jsonl;
  mutable std::once_flag html_once;  // the HTML page, built on first request too
  mutable std::string html;
  // Per evidence record, built on the first fl_report_evidence call: a
  // diagnosis that never lists the evidence never pays for its fields' JSON
  // (a million metric lines' worth on a large step-line archive).
  mutable std::once_flag views_once;
  mutable std::vector<std::string> fields_json;
  mutable std::vector<fl_evidence_view> views;
  struct IncidentViews {
    std::vector<std::string> fields_json;
    std::vector<fl_evidence_view> views;
  };
  std::vector<IncidentViews> incident_views;
  // What fl_report_incident_collateral and fl_report_ignored point into:
  // each sample's fields_json and view, a cluster's host pointers. Sized
  // before they are filled, so the views' pointers never move.
  struct SampleView {
    std::string fields_json;
    fl_evidence_view view;
  };
  struct CollateralViews {
    std::vector<const char*> hosts;
    SampleView sample;
  };
  std::vector<std::vector<CollateralViews>> collateral_views;  // [incident][cluster]
  std::vector<SampleView> ignored_views;
  // What fl_report_incident_id and fl_report_incident_action point into.
  struct ActionViews {
    std::string id;
    std::vector<const char*> hosts, gpus;
  };
  std::vector<ActionViews> action_views;  // [incident]
};

struct fl_session {
  std::shared_ptr<const faultline::Ruleset> rs;
  fl_session_options opts;
  std::unique_ptr<faultline::Scanner> scanner;
  faultline::CorrelateOptions copts;
  std::vector<std::string> pending_paths;
  struct Range {
    std::string path;
    uint64_t begin, end, first_line;
  };
  std::vector<Range> pending_ranges;
  std::vector<std::string> named_inputs;  // every path and range added
  bool streams_opened = false;
  std::atomic<bool> cancel{false};
  // Set while a call owns the session (SessionCall): a second thread, or a
  // callback calling back into its own session, gets FL_ERR_BUSY instead of
  // racing the owner. fl_session_cancel never claims it.
  std::atomic<bool> in_call{false};
  // fl_session_error_count's answer, published when each call ends, so that
  // it can be read without claiming the session.
  std::atomic<size_t> error_count{0};
  std::string last_error;
  bool finished = false;
  size_t errors_at_finish = 0;
  std::vector<uint32_t> stream_ids;  // fl stream id -> scanner stream id
  // Earlier attempts' scans (fl_session_add_prior_bundle), sources renamed.
  std::vector<faultline::ScanResult> priors;
};

namespace {

fl_status MapStatus(const absl::Status& s, fl_status fallback) {
  switch (s.code()) {
    case absl::StatusCode::kOk: return FL_OK;
    case absl::StatusCode::kCancelled: return FL_ERR_CANCELLED;
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kDataLoss: return FL_ERR_IO;
    case absl::StatusCode::kFailedPrecondition:
      return fallback == FL_ERR_RULESET ? FL_ERR_RULESET_VERSION : fallback;
    case absl::StatusCode::kResourceExhausted: return fallback == FL_ERR_RULESET ? FL_ERR_IO : FL_ERR_NOMEM;
    case absl::StatusCode::kInternal: return FL_ERR_INTERNAL;
    default: return fallback;
  }
}

fl_status SetError(fl_error** err, fl_status code, std::string msg) {
  if (err) {
    *err = new (std::nothrow) fl_error{code, std::move(msg)};
  }
  return code;
}

fl_status SessionError(fl_session* s, fl_status code, std::string msg) {
  if (s) s->last_error = std::move(msg);
  return code;
}

// Runs fn, turning exceptions into status codes.
template <typename F>
fl_status Guard(F&& fn, fl_error** err) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return SetError(err, FL_ERR_NOMEM, "out of memory");
  } catch (const std::exception& e) {
    return SetError(err, FL_ERR_INTERNAL, StrCat("internal error: ", e.what()));
  } catch (...) {
    return SetError(err, FL_ERR_INTERNAL, "internal error");
  }
}

// Claims a session for the duration of one API call. The thread-safety rules
// in faultline.h make concurrent calls the caller's bug, but a bug that used
// to corrupt memory or lose matches silently; a claim that fails reports it
// as FL_ERR_BUSY and leaves the session (and its last error, which belongs
// to the call in progress) untouched.
class SessionCall {
 public:
  explicit SessionCall(fl_session* s) : s_(s) {
    bool idle = false;
    owned_ = s_->in_call.compare_exchange_strong(idle, true, std::memory_order_acquire);
  }
  ~SessionCall() {
    if (!owned_) return;
    s_->error_count.store(s_->finished ? s_->errors_at_finish : s_->scanner->partial().errors.size(),
                          std::memory_order_relaxed);
    s_->in_call.store(false, std::memory_order_release);
  }
  SessionCall(const SessionCall&) = delete;
  SessionCall& operator=(const SessionCall&) = delete;
  bool owned() const { return owned_; }

 private:
  fl_session* s_;
  bool owned_;
};

#define FL_CLAIM_SESSION(s)      \
  SessionCall fl_call_(s);       \
  if (!fl_call_.owned()) return FL_ERR_BUSY

template <typename F>
fl_status GuardS(fl_session* s, F&& fn) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return SessionError(s, FL_ERR_NOMEM, "out of memory");
  } catch (const std::exception& e) {
    return SessionError(s, FL_ERR_INTERNAL, StrCat("internal error: ", e.what()));
  } catch (...) {
    return SessionError(s, FL_ERR_INTERNAL, "internal error");
  }
}

char* DupString(const std::string& s, size_t* len) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (!p) return nullptr;
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  if (len) *len = s.size();
  return p;
}

std::string FieldsJson(const faultline::Evidence& ev) { return faultline::EvidenceFieldsJson(ev); }

fl_evidence_view MakeView(const faultline::Ruleset& rs, const faultline::ScanResult& scan,
                          const faultline::Evidence& ev, const std::string& fields) {
  fl_evidence_view v;
  v.source = ev.source < scan.sources.size() ? scan.sources[ev.source].name.c_str() : "";
  v.line = ev.line;
  v.offset = ev.offset;
  v.time_us = ev.time_us == faultline::kNoTime ? FL_TIME_UNSET : ev.time_us;
  v.time_source = ev.time_us == faultline::kNoTime ? "none" : faultline::TimeSourceName(ev.time_source);
  v.rank = ev.rank;
  v.host = ev.host.empty() ? nullptr : ev.host.c_str();
  v.rule = rs.rule(ev.rule)->id()->c_str();
  v.signal = rs.signal(ev.signal).signal->id()->c_str();
  v.text = ev.text.c_str();
  v.fields_json = fields.c_str();
  return v;
}

constexpr uint32_t kOptionsV1Size = sizeof(fl_session_options);
constexpr double kMaxClockOffsetS = 1e9;  // ~31 years

// The smallest size a size-versioned struct may declare: its size field and
// the first field after it.
#define FL_MIN_SIZE(T, first) static_cast<uint32_t>(offsetof(T, first) + sizeof(T::first))

// Copies a size-versioned result into a caller's struct of out->size bytes
// (older callers pass a shorter one) and records how much was written.
template <typename T>
fl_status FillSized(const T& full, T* out, uint32_t min_size) {
  if (!out || out->size < min_size) return FL_ERR_INVALID_ARG;
  uint32_t size = std::min<uint32_t>(out->size, sizeof(T));
  std::memcpy(static_cast<void*>(out), &full, size);
  out->size = size;
  return FL_OK;
}

// The options' retry policy; zero fields keep the defaults.
fl_status ReadRetryPolicy(const fl_session_options& o, faultline::RetryPolicy* p, fl_error** err) {
  constexpr double kMaxWindowS = 1e9;
  if (!std::isfinite(o.restart_window_s) || o.restart_window_s < 0 || o.restart_window_s > kMaxWindowS) {
    return SetError(err, FL_ERR_INVALID_ARG,
                    StrCat("restart_window_s is ", o.restart_window_s,
                           ": not a finite, non-negative number of seconds up to ", kMaxWindowS));
  }
  if (o.max_restarts_per_rule > 0) p->max_restarts_per_rule = o.max_restarts_per_rule;
  if (o.max_restarts_per_host > 0) p->max_restarts_per_host = o.max_restarts_per_host;
  if (o.restart_window_s > 0) p->window_us = static_cast<int64_t>(o.restart_window_s * 1e6);
  return FL_OK;
}

// Reads a caller's options struct (possibly older and shorter) into the
// full struct and the correlator's options.
fl_status ReadOptions(const fl_session_options* opts, fl_session_options* o,
                      faultline::CorrelateOptions* copts, fl_error** err) {
  *o = FL_SESSION_OPTIONS_INIT;
  if (opts) {
    if (opts->size < offsetof(fl_session_options, threads) + sizeof(uint32_t) || opts->size > kOptionsV1Size) {
      return SetError(err, FL_ERR_INVALID_ARG,
                      StrCat("fl_session_options.size ", opts->size, " is not a size this library knows"));
    }
    std::memcpy(o, opts, opts->size);
    o->size = kOptionsV1Size;
  }
  copts->job_start_us = o->job_start_us == FL_TIME_UNSET ? faultline::kNoTime : o->job_start_us;
  copts->job_end_us = o->job_end_us == FL_TIME_UNSET ? faultline::kNoTime : o->job_end_us;
  for (size_t i = 0; i < o->clock_offset_count; ++i) {
    if (!o->clock_offsets || !o->clock_offsets[i].host) {
      return SetError(err, FL_ERR_INVALID_ARG, "clock_offsets entry without a host");
    }
    // Applied as int64 microseconds: NaN, infinities and huge values would
    // overflow the conversion, and no two clocks of one job are decades apart.
    const double secs = o->clock_offsets[i].seconds;
    if (!std::isfinite(secs) || std::fabs(secs) > kMaxClockOffsetS) {
      return SetError(err, FL_ERR_INVALID_ARG,
                      StrCat("clock_offsets[", i, "].seconds for host '", o->clock_offsets[i].host, "' is ", secs,
                             ": not a finite number of seconds within +-", kMaxClockOffsetS));
    }
    copts->clock_offsets_s[o->clock_offsets[i].host] = secs;
  }
  o->clock_offsets = nullptr;  // copied; never kept
  if (!std::isfinite(o->time_budget_s) || o->time_budget_s < 0) {
    return SetError(err, FL_ERR_INVALID_ARG,
                    StrCat("time_budget_s is ", o->time_budget_s, ": not a finite, non-negative number of seconds"));
  }
  if (o->job_state < FL_JOB_UNKNOWN || o->job_state > FL_JOB_RUNNING) {
    return SetError(err, FL_ERR_INVALID_ARG, StrCat("job_state ", o->job_state, " is not an FL_JOB_* value"));
  }
  copts->job.state = static_cast<faultline::JobState>(o->job_state);
  if (o->job_exit_status != FL_EXIT_STATUS_UNSET) {
    if (o->job_exit_status < -64 || o->job_exit_status > 255) {
      return SetError(err, FL_ERR_INVALID_ARG,
                      StrCat("job_exit_status ", o->job_exit_status,
                             " is not an exit status (0 to 255) nor a negative signal number (-1 to -64)"));
    }
    copts->job.has_exit_status = true;
    copts->job.exit_status = o->job_exit_status;
  }
  return ReadRetryPolicy(*o, &copts->retry, err);
}

// The views of every evidence record (fl_report_evidence), once.
const std::vector<fl_evidence_view>& EvidenceViews(const fl_report& r) {
  std::call_once(r.views_once, [&r] {
    r.fields_json.reserve(r.scan.evidence.size());
    for (const auto& ev : r.scan.evidence) r.fields_json.push_back(FieldsJson(ev));
    r.views.reserve(r.scan.evidence.size());
    for (size_t i = 0; i < r.scan.evidence.size(); ++i) {
      r.views.push_back(MakeView(*r.rs, r.scan, r.scan.evidence[i], r.fields_json[i]));
    }
  });
  return r.views;
}

std::unique_ptr<fl_report> BuildReport(std::shared_ptr<const faultline::Ruleset> rs, faultline::ScanResult scan,
                                       const faultline::CorrelateOptions& copts) {
  auto r = std::make_unique<fl_report>();
  r->rs = std::move(rs);
  r->scan = std::move(scan);
  // A metric point a detector reports takes its line from its file (the
  // scan kept the point, not the line); a plain file must still be at least
  // as long as the scan found it.
  faultline::CorrelateOptions co = copts;
  if (!co.line_at) {
    co.line_at = [](const faultline::SourceSummary& s, uint64_t offset) { return faultline::PointLineText(s, offset); };
  }
  r->diag = faultline::Correlate(*r->rs, r->scan, co);
  r->json = faultline::ReportJson(*r->rs, r->scan, r->diag);
  r->text = faultline::ReportText(*r->rs, r->scan, r->diag);
  r->incident_views.resize(r->diag.incidents.size());
  for (size_t i = 0; i < r->diag.incidents.size(); ++i) {
    auto& iv = r->incident_views[i];
    const auto& evs = r->diag.incidents[i].initiating;
    iv.fields_json.reserve(evs.size());
    for (const auto& ev : evs) iv.fields_json.push_back(FieldsJson(ev));
    for (size_t k = 0; k < evs.size(); ++k) iv.views.push_back(MakeView(*r->rs, r->scan, evs[k], iv.fields_json[k]));
  }
  auto fill_sample = [&](fl_report::SampleView& sv, const faultline::Evidence& ev) {
    sv.fields_json = FieldsJson(ev);
    sv.view = MakeView(*r->rs, r->scan, ev, sv.fields_json);
  };
  r->collateral_views.resize(r->diag.incidents.size());
  for (size_t i = 0; i < r->diag.incidents.size(); ++i) {
    const auto& clusters = r->diag.incidents[i].collateral;
    r->collateral_views[i].resize(clusters.size());
    for (size_t k = 0; k < clusters.size(); ++k) {
      auto& cv = r->collateral_views[i][k];
      for (const auto& h : clusters[k].hosts) cv.hosts.push_back(h.c_str());
      fill_sample(cv.sample, clusters[k].sample);
    }
  }
  r->action_views.resize(r->diag.incidents.size());
  for (size_t i = 0; i < r->diag.incidents.size(); ++i) {
    const faultline::Incident& inc = r->diag.incidents[i];
    auto& av = r->action_views[i];
    av.id = faultline::IncidentId(*r->rs, r->scan, inc);
    for (const auto& h : inc.action.exclude_hosts) av.hosts.push_back(h.c_str());
    for (const auto& g : inc.action.exclude_gpus) av.gpus.push_back(g.c_str());
  }
  r->ignored_views.resize(r->diag.ignored.size());
  for (size_t i = 0; i < r->diag.ignored.size(); ++i) fill_sample(r->ignored_views[i], r->diag.ignored[i].sample);
  std::string hits = "{";
  for (const auto& [id, n] : r->scan.signal_hits) {
    const auto& si = r->rs->signal(id);
    if (hits.size() > 1) hits += ',';
    faultline::AppendJsonString(hits, StrCat(si.rule->id()->string_view(), "/", si.signal->id()->string_view()));
    hits += StrCat(":", n);
  }
  r->hits_json = hits + "}";
  return r;
}


}  // namespace

extern "C" {

FL_API unsigned fl_version_number(void) { return FL_VERSION_NUMBER; }

FL_API const char* fl_version_string(void) { return faultline::kVersionString; }

FL_API const char* fl_status_str(fl_status rc) { return faultline::StatusName(rc); }

FL_API const char* fl_error_message(const fl_error* err) { return err ? err->message.c_str() : ""; }
FL_API fl_status fl_error_code(const fl_error* err) { return err ? err->code : FL_OK; }
FL_API void fl_error_free(fl_error* err) { delete err; }
FL_API void fl_free(void* p) { std::free(p); }

FL_API fl_status fl_time_parse(const char* text, int64_t* out_us) {
  if (!text || !out_us) return FL_ERR_INVALID_ARG;
  try {
    faultline::TimeContext ctx;
    std::string_view t(text);
    if (auto v = faultline::ParseIso8601(t, ctx)) {
      *out_us = *v;
      return FL_OK;
    }
    double d;
    if (faultline::ParseDouble(t, &d)) {
      if (auto v = faultline::ParseEpochNumber(d)) {
        *out_us = *v;
        return FL_OK;
      }
    }
  } catch (...) {
    return FL_ERR_INTERNAL;
  }
  return FL_ERR_PARSE;
}

// ---- Rulesets

static fl_status WrapRuleset(fl_ruleset** out, absl::StatusOr<std::shared_ptr<const faultline::Ruleset>> rs,
                             fl_error** err) {
  if (!rs.ok()) {
    return SetError(err, MapStatus(rs.status(), FL_ERR_RULESET), faultline::StatusMessage(rs.status()));
  }
  *out = new fl_ruleset{std::move(*rs)};
  return FL_OK;
}

FL_API fl_status fl_ruleset_load_default(fl_ruleset** out, fl_error** err) {
  if (err) *err = nullptr;
  if (!out) return SetError(err, FL_ERR_INVALID_ARG, "out is NULL");
  *out = nullptr;
  return Guard([&] { return WrapRuleset(out, faultline::Ruleset::LoadDefault(), err); }, err);
}

FL_API fl_status fl_ruleset_load_file(fl_ruleset** out, const char* path, fl_error** err) {
  if (err) *err = nullptr;
  if (!out || !path) return SetError(err, FL_ERR_INVALID_ARG, "out or path is NULL");
  *out = nullptr;
  return Guard([&] { return WrapRuleset(out, faultline::Ruleset::LoadFile(path), err); }, err);
}

FL_API fl_status fl_ruleset_load_memory(fl_ruleset** out, const void* data, size_t len, fl_error** err) {
  if (err) *err = nullptr;
  if (!out || (!data && len)) return SetError(err, FL_ERR_INVALID_ARG, "out or data is NULL");
  *out = nullptr;
  return Guard(
      [&] {
        return WrapRuleset(out,
                           faultline::Ruleset::LoadBuffer(
                               std::string_view(static_cast<const char*>(data), len), "<memory>"),
                           err);
      },
      err);
}

FL_API fl_status fl_ruleset_compile(const char* src_dir, const char* out_path, fl_error** err) {
  if (err) *err = nullptr;
  if (!src_dir || !out_path) return SetError(err, FL_ERR_INVALID_ARG, "src_dir or out_path is NULL");
  return Guard(
      [&]() -> fl_status {
        auto r = faultline::CompileRuleSource(src_dir);
        if (!r.ok()) return SetError(err, MapStatus(r.status(), FL_ERR_RULESET), faultline::StatusMessage(r.status()));
        // Signed with the installation's key (created on first use) so that
        // loading it deserializes its pattern database instead of
        // recompiling it. Without a usable key the file is written unsigned:
        // it still loads, by recompiling (fl_ruleset_load_info says why).
        if (auto key = faultline::ReadOrCreateRulesetKey(); key.ok()) {
          auto signed_st = faultline::SignRuleset(&r->buffer, *key);
          if (!signed_st.ok()) return SetError(err, FL_ERR_INTERNAL, faultline::StatusMessage(signed_st));
        }
        auto st = faultline::WriteFileAtomic(out_path, r->buffer);
        if (!st.ok()) return SetError(err, FL_ERR_IO, faultline::StatusMessage(st));
        return FL_OK;
      },
      err);
}

FL_API void fl_ruleset_free(fl_ruleset* rs) { delete rs; }

FL_API const char* fl_ruleset_name(const fl_ruleset* rs) {
  return rs && rs->rs->fb()->name() ? rs->rs->fb()->name()->c_str() : "";
}
FL_API const char* fl_ruleset_version(const fl_ruleset* rs) {
  return rs && rs->rs->fb()->version() ? rs->rs->fb()->version()->c_str() : "";
}
FL_API const char* fl_ruleset_load_info(const fl_ruleset* rs) {
  return rs ? rs->rs->load_note().c_str() : "";
}
FL_API size_t fl_ruleset_rule_count(const fl_ruleset* rs) { return rs ? rs->rs->rule_count() : 0; }

FL_API fl_status fl_ruleset_rules_json(const fl_ruleset* rs, char** json, size_t* len) {
  if (!rs || !json) return FL_ERR_INVALID_ARG;
  return Guard(
      [&]() -> fl_status {
        *json = DupString(faultline::RulesListJson(*rs->rs), len);
        return *json ? FL_OK : FL_ERR_NOMEM;
      },
      nullptr);
}

FL_API fl_status fl_x_ruleset_signal_costs_json(const fl_ruleset* rs, const char* const* paths,
                                              size_t npaths, uint64_t sample_bytes, char** json,
                                              size_t* len, fl_error** err) {
  if (err) *err = nullptr;
  if (!rs || !json || (npaths > 0 && !paths)) return SetError(err, FL_ERR_INVALID_ARG, "rs, paths or json is NULL");
  return Guard(
      [&]() -> fl_status {
        std::vector<std::string> ps;
        for (size_t i = 0; i < npaths; ++i) {
          if (!paths[i]) return SetError(err, FL_ERR_INVALID_ARG, StrCat("paths[", i, "] is NULL"));
          ps.emplace_back(paths[i]);
        }
        auto costs = faultline::MeasureSignalCosts(*rs->rs, ps, sample_bytes);
        if (!costs.ok()) {
          return SetError(err, MapStatus(costs.status(), FL_ERR_INVALID_ARG), faultline::StatusMessage(costs.status()));
        }
        char num[160];
        std::snprintf(num, sizeof num, "%.6f", costs->full_s_per_gb);
        std::string out = StrCat("{\"sample_bytes\":", costs->sample_bytes, ",\"full_s_per_gb\":", num,
                                 ",\"skipped\":[");
        for (size_t i = 0; i < costs->skipped.size(); ++i) {
          if (i) out += ',';
          faultline::AppendJsonString(out, costs->skipped[i]);
        }
        out += "],\"signals\":[";
        for (size_t i = 0; i < costs->signals.size(); ++i) {
          const faultline::SignalCost& c = costs->signals[i];
          const auto& si = rs->rs->signal(c.signal);
          if (i) out += ',';
          out += "{\"signal\":";
          faultline::AppendJsonString(out, StrCat(si.rule->id()->string_view(), "/", si.signal->id()->string_view()));
          out += ",\"role\":";
          faultline::AppendJsonString(out, faultline::RoleName(si.role));
          std::snprintf(num, sizeof num, ",\"alone_s_per_gb\":%.6f,\"lines\":%llu,\"confirm_us_per_line\":%.4f}",
                        c.alone_s_per_gb, static_cast<unsigned long long>(c.lines), c.confirm_us_per_line);
          out += num;
        }
        out += "]}";
        *json = DupString(out, len);
        return *json ? FL_OK : FL_ERR_NOMEM;
      },
      err);
}

// One rule rendered by `render` into a caller-owned string.
static fl_status RuleString(const fl_ruleset* rs, const char* id, char** out, size_t* len,
                            std::string (*render)(const faultline::Ruleset&, size_t)) {
  if (!rs || !id || !out) return FL_ERR_INVALID_ARG;
  return Guard(
      [&]() -> fl_status {
        int r = rs->rs->FindRule(id);
        if (r < 0) return FL_ERR_NOT_FOUND;
        *out = DupString(render(*rs->rs, static_cast<size_t>(r)), len);
        return *out ? FL_OK : FL_ERR_NOMEM;
      },
      nullptr);
}

FL_API fl_status fl_ruleset_rule_json(const fl_ruleset* rs, const char* id, char** json, size_t* len) {
  return RuleString(rs, id, json, len, faultline::RuleJson);
}

FL_API fl_status fl_ruleset_rule_text(const fl_ruleset* rs, const char* id, char** text, size_t* len) {
  return RuleString(rs, id, text, len, faultline::RuleText);
}

// ---- Sessions

FL_API fl_status fl_session_options_init(fl_session_options* opts, size_t size) {
  // Never write past the caller's struct: one compiled against an older
  // header is shorter, one from a newer header has fields this library
  // cannot honour (refused, like fl_session_new refuses it).
  if (!opts || size < offsetof(fl_session_options, threads) + sizeof(uint32_t) || size > kOptionsV1Size) {
    return FL_ERR_INVALID_ARG;
  }
  fl_session_options d = FL_SESSION_OPTIONS_INIT;
  d.size = static_cast<uint32_t>(size);
  std::memcpy(static_cast<void*>(opts), &d, size);
  return FL_OK;
}

FL_API fl_status fl_session_new(fl_session** out, const fl_ruleset* rs, const fl_session_options* opts,
                                fl_error** err) {
  if (err) *err = nullptr;
  if (!out || !rs) return SetError(err, FL_ERR_INVALID_ARG, "out or ruleset is NULL");
  *out = nullptr;
  return Guard(
      [&]() -> fl_status {
        fl_session_options o;
        faultline::CorrelateOptions copts;
        if (fl_status rc = ReadOptions(opts, &o, &copts, err); rc != FL_OK) return rc;
        auto s = std::make_unique<fl_session>();
        s->rs = rs->rs;
        s->opts = o;
        faultline::ScanOptions so;
        so.threads = o.threads;
        if (o.tz && *o.tz) {
          auto tz = faultline::ParseTzOffset(o.tz);
          if (!tz) {
            return SetError(err, FL_ERR_INVALID_ARG,
                            StrCat("time zone '", o.tz, "' is not understood (use UTC or an offset like +05:30)"));
          }
          so.tz_offset_s = *tz;
        }
        so.cancel = &s->cancel;
        so.limits.max_source_bytes = o.max_source_bytes;
        if (o.max_decompressed_bytes > 0) so.limits.max_decompressed_bytes = o.max_decompressed_bytes;
        so.time_budget_s = o.time_budget_s;
        fl_session* raw = s.get();
        if (o.on_evidence) {
          so.on_evidence = [raw](const faultline::Evidence& ev, const std::string&) {
            std::string fields = FieldsJson(ev);
            fl_evidence_view v = MakeView(*raw->rs, raw->scanner->partial(), ev, fields);
            raw->opts.on_evidence(raw->opts.evidence_user, &v);
          };
        }
        if (o.on_progress) {
          so.on_progress = [raw](uint64_t done, uint64_t total) {
            if (raw->opts.on_progress(raw->opts.progress_user, done, total) == 0) return true;
            // A progress callback's stop is a cancel like any other: final.
            raw->cancel.store(true);
            return false;
          };
        }
        s->scanner = std::make_unique<faultline::Scanner>(s->rs, std::move(so));
        s->copts = std::move(copts);
        s->opts.tz = nullptr;
        *out = s.release();
        return FL_OK;
      },
      err);
}

FL_API void fl_session_free(fl_session* s) { delete s; }

FL_API const char* fl_session_last_error(const fl_session* s) { return s ? s->last_error.c_str() : ""; }

// A path that names nothing is the caller's mistake, reported by the call
// that names it (a typo would otherwise read as a healthy job); a path that
// exists but cannot be read is an input error of the report only.
static fl_status CheckPathExists(fl_session* s, const char* path) {
  if (std::strcmp(path, "-") == 0) return FL_OK;
  struct stat st {};
  if (::stat(path, &st) == 0) return FL_OK;
  int e = errno;
  if (e == ENOENT || e == ENOTDIR) {
    return SessionError(s, FL_ERR_NOT_FOUND, StrCat(path, ": no such file or directory"));
  }
  return FL_OK;  // EACCES and the like: scanned, and recorded as an input error
}

FL_API fl_status fl_session_add_path(fl_session* s, const char* path) {
  if (!s) return FL_ERR_INVALID_ARG;
  FL_CLAIM_SESSION(s);
  if (!path || !*path) return SessionError(s, FL_ERR_INVALID_ARG, "path is NULL or empty");
  if (s->finished) return SessionError(s, FL_ERR_INVALID_ARG, "the session is finished");
  return GuardS(s, [&] {
    // A missing path stays in the scan so that the report still lists it
    // among its input errors, as the record of what was asked.
    s->pending_paths.emplace_back(path);
    s->named_inputs.emplace_back(path);
    return CheckPathExists(s, path);
  });
}

FL_API fl_status fl_session_add_range(fl_session* s, const char* path, uint64_t begin, uint64_t end,
                                      uint64_t first_line) {
  if (!s) return FL_ERR_INVALID_ARG;
  FL_CLAIM_SESSION(s);
  if (!path || !*path) return SessionError(s, FL_ERR_INVALID_ARG, "path is NULL or empty");
  if (s->finished) return SessionError(s, FL_ERR_INVALID_ARG, "the session is finished");
  if (end < begin) return SessionError(s, FL_ERR_INVALID_ARG, StrCat(path, ": range end before begin"));
  return GuardS(s, [&] {
    if (fl_status rc = CheckPathExists(s, path); rc != FL_OK) return rc;
    s->pending_ranges.push_back({path, begin, end, first_line});
    s->named_inputs.emplace_back(path);
    return FL_OK;
  });
}

FL_API fl_status fl_session_stream_open(fl_session* s, const char* name, uint32_t* stream_id) {
  if (!s) return FL_ERR_INVALID_ARG;
  FL_CLAIM_SESSION(s);
  if (!name || !stream_id) return SessionError(s, FL_ERR_INVALID_ARG, "NULL argument");
  if (s->finished) return SessionError(s, FL_ERR_INVALID_ARG, "the session is finished");
  return GuardS(s, [&] {
    *stream_id = s->scanner->OpenStream(name);
    s->streams_opened = true;
    return FL_OK;
  });
}

FL_API fl_status fl_session_feed(fl_session* s, uint32_t stream_id, const void* data, size_t len) {
  if (!s) return FL_ERR_INVALID_ARG;
  FL_CLAIM_SESSION(s);
  if (!data && len) return SessionError(s, FL_ERR_INVALID_ARG, "NULL argument");
  if (s->finished) return SessionError(s, FL_ERR_INVALID_ARG, "the session is finished");
  return GuardS(s, [&]() -> fl_status {
    auto st = s->scanner->Feed(stream_id, std::string_view(static_cast<const char*>(data), len));
    if (!st.ok()) return SessionError(s, MapStatus(st, FL_ERR_INVALID_ARG), faultline::StatusMessage(st));
    return FL_OK;
  });
}

FL_API fl_status fl_session_stream_flush(fl_session* s, uint32_t stream_id) {
  if (!s) return FL_ERR_INVALID_ARG;
  FL_CLAIM_SESSION(s);
  if (s->finished) return SessionError(s, FL_ERR_INVALID_ARG, "the session is finished");
  return GuardS(s, [&]() -> fl_status {
    auto st = s->scanner->FlushStream(stream_id);
    if (!st.ok()) return SessionError(s, MapStatus(st, FL_ERR_INVALID_ARG), faultline::StatusMessage(st));
    return FL_OK;
  });
}

FL_API fl_status fl_session_stream_close(fl_session* s, uint32_t stream_id) {
  if (!s) return FL_ERR_INVALID_ARG;
  FL_CLAIM_SESSION(s);
  if (s->finished) return SessionError(s, FL_ERR_INVALID_ARG, "the session is finished");
  return GuardS(s, [&]() -> fl_status {
    auto st = s->scanner->CloseStream(stream_id);
    if (!st.ok()) return SessionError(s, MapStatus(st, FL_ERR_INVALID_ARG), faultline::StatusMessage(st));
    return FL_OK;
  });
}

// fl_session_scan's work, for a caller that holds the session's claim.
static fl_status ScanClaimed(fl_session* s) {
  if (s->finished) return SessionError(s, FL_ERR_INVALID_ARG, "the session is finished");
  if (s->cancel.load()) return SessionError(s, FL_ERR_CANCELLED, "the session was cancelled");
  return GuardS(s, [&]() -> fl_status {
    std::vector<std::string> paths;
    paths.swap(s->pending_paths);
    size_t errors_before = s->scanner->partial().errors.size();
    auto st = s->scanner->ScanPaths(paths);
    if (!st.ok()) return SessionError(s, MapStatus(st, FL_ERR_IO), faultline::StatusMessage(st));
    std::vector<fl_session::Range> ranges;
    ranges.swap(s->pending_ranges);
    for (const auto& r : ranges) {
      st = s->scanner->ScanRange(r.path, r.begin, r.end, r.first_line);
      if (!st.ok()) return SessionError(s, MapStatus(st, FL_ERR_IO), faultline::StatusMessage(st));
    }
    const auto& errs = s->scanner->partial().errors;
    if (errs.size() > errors_before) s->last_error = errs[errors_before].message;
    return FL_OK;
  });
}

FL_API fl_status fl_session_scan(fl_session* s) {
  if (!s) return FL_ERR_INVALID_ARG;
  FL_CLAIM_SESSION(s);
  return ScanClaimed(s);
}

FL_API void fl_session_cancel(fl_session* s) {
  if (s) s->cancel.store(true);
}

FL_API size_t fl_session_error_count(const fl_session* s) {
  return s ? s->error_count.load(std::memory_order_relaxed) : 0;
}

// Scans what is left and ends the scan for fl_session_finish and
// fl_session_export_bundle. Fails when the session was cancelled (before or
// during the call: cancellation is final), and, for a report, when it was
// given paths but none of them yielded a log (an empty directory, only
// unreadable files), which would otherwise read as a healthy job. A bundle
// is one piece of a scan spread over workers: its input errors travel in it
// to the correlation.
static fl_status FinishScan(fl_session* s, bool need_log, faultline::ScanResult* scan) {
  if (fl_status rc = ScanClaimed(s); rc != FL_OK) return rc;
  const faultline::ScanResult& part = s->scanner->partial();
  if (need_log && !s->named_inputs.empty() && !s->streams_opened) {
    std::set<std::string_view> failed;
    for (const auto& e : part.errors) failed.insert(e.source);
    size_t readable = 0;
    // A source with an error still counts when some of it was read (cut at
    // a limit, truncated mid-scan): those bytes are diagnosed.
    for (const auto& src : part.sources) readable += failed.count(src.name) == 0 || src.bytes > 0 ? 1 : 0;
    if (readable == 0) {
      std::string msg = "no log to diagnose in ";
      for (size_t i = 0; i < s->named_inputs.size() && i < 8; ++i) {
        msg += StrCat(i ? ", " : "", s->named_inputs[i]);
      }
      if (s->named_inputs.size() > 8) msg += StrCat(" and ", s->named_inputs.size() - 8, " more");
      msg += part.errors.empty() ? " (no file found)" : StrCat(" (", part.errors[0].message, ")");
      return SessionError(s, FL_ERR_IO, std::move(msg));
    }
  }
  *scan = s->scanner->Finish();
  s->finished = true;
  s->errors_at_finish = scan->errors.size();
  // Finish scans the streams' last lines; a cancel from a callback there, or
  // from another thread, must not yield a report that looks complete.
  if (s->cancel.load()) return SessionError(s, FL_ERR_CANCELLED, "the session was cancelled");
  return FL_OK;
}

// The session's scan after its prior attempts' (kept for a later snapshot).
static faultline::ScanResult WithPriors(const fl_session* s, faultline::ScanResult scan) {
  if (s->priors.empty()) return scan;
  std::vector<faultline::ScanResult> parts = s->priors;
  parts.push_back(std::move(scan));
  return faultline::MergeScans(*s->rs, std::move(parts));
}

FL_API fl_status fl_session_finish(fl_session* s, fl_report** out) {
  if (!s) return FL_ERR_INVALID_ARG;
  FL_CLAIM_SESSION(s);
  if (!out) return SessionError(s, FL_ERR_INVALID_ARG, "NULL argument");
  *out = nullptr;
  return GuardS(s, [&]() -> fl_status {
    faultline::ScanResult scan;
    if (fl_status rc = FinishScan(s, /*need_log=*/true, &scan); rc != FL_OK) return rc;
    *out = BuildReport(s->rs, WithPriors(s, std::move(scan)), s->copts).release();
    return FL_OK;
  });
}

FL_API fl_status fl_session_snapshot(fl_session* s, fl_report** out) {
  if (!s) return FL_ERR_INVALID_ARG;
  FL_CLAIM_SESSION(s);
  if (!out) return SessionError(s, FL_ERR_INVALID_ARG, "NULL argument");
  *out = nullptr;
  return GuardS(s, [&]() -> fl_status {
    if (fl_status rc = ScanClaimed(s); rc != FL_OK) return rc;
    faultline::ScanResult scan = s->scanner->Snapshot();
    if (s->cancel.load()) return SessionError(s, FL_ERR_CANCELLED, "the session was cancelled");
    *out = BuildReport(s->rs, WithPriors(s, std::move(scan)), s->copts).release();
    return FL_OK;
  });
}

FL_API fl_status fl_session_export_bundle(fl_session* s, void** data, size_t* len) {
  if (!s) return FL_ERR_INVALID_ARG;
  FL_CLAIM_SESSION(s);
  if (!data || !len) return SessionError(s, FL_ERR_INVALID_ARG, "NULL argument");
  *data = nullptr;
  *len = 0;
  return GuardS(s, [&]() -> fl_status {
    faultline::ScanResult scan;
    if (fl_status rc = FinishScan(s, /*need_log=*/false, &scan); rc != FL_OK) return rc;
    std::string bytes = faultline::SerializeBundle(*s->rs, scan);
    void* p = std::malloc(bytes.size() ? bytes.size() : 1);
    if (!p) return SessionError(s, FL_ERR_NOMEM, "out of memory");
    std::memcpy(p, bytes.data(), bytes.size());
    *data = p;
    *len = bytes.size();
    return FL_OK;
  });
}

FL_API fl_status fl_report_from_bundles(fl_report** out, const fl_ruleset* rs, const fl_session_options* opts,
                                        const void* const* bundles, const size_t* lens, size_t count,
                                        fl_error** err) {
  if (err) *err = nullptr;
  if (!out || !rs || (count && (!bundles || !lens))) return SetError(err, FL_ERR_INVALID_ARG, "NULL argument");
  *out = nullptr;
  return Guard(
      [&]() -> fl_status {
        fl_session_options o;
        faultline::CorrelateOptions copts;
        if (fl_status rc = ReadOptions(opts, &o, &copts, err); rc != FL_OK) return rc;
        std::vector<faultline::ScanResult> parts;
        parts.reserve(count);
        for (size_t i = 0; i < count; ++i) {
          if (!bundles[i]) return SetError(err, FL_ERR_INVALID_ARG, StrCat("bundle ", i, " is NULL"));
          auto part = faultline::ReadBundle(
              *rs->rs, std::string_view(static_cast<const char*>(bundles[i]), lens[i]), StrCat("bundle ", i));
          if (!part.ok()) return SetError(err, FL_ERR_PARSE, faultline::StatusMessage(part.status()));
          parts.push_back(std::move(*part));
        }
        faultline::ScanResult merged = faultline::MergeScans(*rs->rs, std::move(parts));
        *out = BuildReport(rs->rs, std::move(merged), copts).release();
        return FL_OK;
      },
      err);
}

// ---- Reports

FL_API void fl_report_free(fl_report* r) { delete r; }

FL_API fl_status fl_report_json(const fl_report* r, const char** json, size_t* len) {
  if (!r || !json) return FL_ERR_INVALID_ARG;
  *json = r->json.c_str();
  if (len) *len = r->json.size();
  return FL_OK;
}

FL_API fl_status fl_report_text(const fl_report* r, const char** text, size_t* len) {
  if (!r || !text) return FL_ERR_INVALID_ARG;
  *text = r->text.c_str();
  if (len) *len = r->text.size();
  return FL_OK;
}

FL_API fl_status fl_report_evidence_jsonl(const fl_report* r, const char** jsonl, size_t* len) {
  if (!r || !jsonl) return FL_ERR_INVALID_ARG;
  try {
    std::call_once(r->jsonl_once, [r] { r->jsonl = faultline::EvidenceJsonLines(*r->rs, r->scan); });
  } catch (...) {
    return FL_ERR_NOMEM;
  }
  *jsonl = r->jsonl.c_str();
  if (len) *len = r->jsonl.size();
  return FL_OK;
}

FL_API fl_status fl_report_html(const fl_report* r, const char** html, size_t* len) {
  if (!r || !html) return FL_ERR_INVALID_ARG;
  try {
    std::call_once(r->html_once, [r] { r->html = faultline::ReportHtml(*r->rs, r->scan, r->diag); });
  } catch (...) {
    return FL_ERR_NOMEM;
  }
  *html = r->html.c_str();
  if (len) *len = r->html.size();
  return FL_OK;
}

FL_API fl_status fl_report_signal_hits_json(const fl_report* r, const char** json, size_t* len) {
  if (!r || !json) return FL_ERR_INVALID_ARG;
  *json = r->hits_json.c_str();
  if (len) *len = r->hits_json.size();
  return FL_OK;
}

FL_API size_t fl_report_input_error_count(const fl_report* r) { return r ? r->scan.errors.size() : 0; }

FL_API fl_status fl_report_input_error(const fl_report* r, size_t i, fl_input_error_view* out) {
  if (!r || i >= r->scan.errors.size()) return FL_ERR_INVALID_ARG;
  const faultline::InputError& e = r->scan.errors[i];
  fl_input_error_view v;
  v.size = sizeof v;
  v.source = e.source.c_str();
  v.message = e.message.c_str();
  v.status = e.code;
  return FillSized(v, out, FL_MIN_SIZE(fl_input_error_view, source));
}

FL_API size_t fl_report_input_warning_count(const fl_report* r) { return r ? r->scan.warnings.size() : 0; }

FL_API fl_status fl_report_input_warning(const fl_report* r, size_t i, fl_input_error_view* out) {
  if (!r || i >= r->scan.warnings.size()) return FL_ERR_INVALID_ARG;
  const faultline::InputError& e = r->scan.warnings[i];
  fl_input_error_view v;
  v.size = sizeof v;
  v.source = e.source.c_str();
  v.message = e.message.c_str();
  v.status = FL_OK;
  return FillSized(v, out, FL_MIN_SIZE(fl_input_error_view, source));
}

FL_API fl_status fl_report_incident_collateral(const fl_report* r, size_t i, size_t k, fl_collateral_view* out) {
  if (!r || i >= r->diag.incidents.size() || k >= r->diag.incidents[i].collateral.size()) return FL_ERR_INVALID_ARG;
  const faultline::Collateral& c = r->diag.incidents[i].collateral[k];
  const fl_report::CollateralViews& cv = r->collateral_views[i][k];
  const faultline::fb::Rule* rule = r->rs->rule(c.rule);
  fl_collateral_view v;
  v.size = sizeof v;
  v.rule = rule->id()->c_str();
  v.reference = rule->reference()->c_str();
  v.count = c.count;
  v.ranks = c.ranks.data();
  v.rank_count = c.ranks.size();
  v.hosts = cv.hosts.data();
  v.host_count = cv.hosts.size();
  v.first_time_us = c.first_time_us == faultline::kNoTime ? FL_TIME_UNSET : c.first_time_us;
  v.last_time_us = c.last_time_us == faultline::kNoTime ? FL_TIME_UNSET : c.last_time_us;
  v.sample = cv.sample.view;
  return FillSized(v, out, FL_MIN_SIZE(fl_collateral_view, rule));
}

FL_API const char* fl_report_incident_id(const fl_report* r, size_t i) {
  if (!r || i >= r->action_views.size()) return nullptr;
  return r->action_views[i].id.c_str();
}

FL_API fl_status fl_incident_id(const char* reference, const char* source, uint64_t line, const char* host,
                                int64_t rank, char* out) {
  if (!reference || !out) return FL_ERR_INVALID_ARG;
  std::string id = faultline::IncidentIdFor(reference, source ? source : "", line, host ? host : "", rank,
                                            source == nullptr);
  std::snprintf(out, FL_INCIDENT_ID_SIZE, "%s", id.c_str());
  return FL_OK;
}

FL_API fl_status fl_report_incident_action(const fl_report* r, size_t i, fl_action_view* out) {
  if (!r || i >= r->diag.incidents.size()) return FL_ERR_INVALID_ARG;
  const faultline::Action& a = r->diag.incidents[i].action;
  const fl_report::ActionViews& av = r->action_views[i];
  fl_action_view v;
  v.size = sizeof v;
  v.kind = faultline::ActionKindName(a.kind);
  v.exclude_hosts = av.hosts.data();
  v.exclude_host_count = av.hosts.size();
  v.exclude_gpus = av.gpus.data();
  v.exclude_gpu_count = av.gpus.size();
  v.reason = a.reason.c_str();
  v.set_by = a.set_by.c_str();
  v.missing_fact = a.kind == faultline::ActionKind::kUnknown ? a.missing_fact.c_str() : nullptr;
  return FillSized(v, out, FL_MIN_SIZE(fl_action_view, kind));
}

FL_API size_t fl_report_ignored_count(const fl_report* r) { return r ? r->diag.ignored.size() : 0; }

FL_API fl_status fl_report_ignored(const fl_report* r, size_t i, fl_ignored_view* out) {
  if (!r || i >= r->diag.ignored.size()) return FL_ERR_INVALID_ARG;
  const faultline::Ignored& ig = r->diag.ignored[i];
  fl_ignored_view v;
  v.size = sizeof v;
  v.rule = r->rs->rule(ig.rule)->id()->c_str();
  v.reason = ig.reason.c_str();
  v.count = ig.count;
  v.sample = r->ignored_views[i].view;
  return FillSized(v, out, FL_MIN_SIZE(fl_ignored_view, rule));
}

FL_API fl_status fl_report_job_window(const fl_report* r, int64_t* start_us, int64_t* end_us) {
  if (!r || !start_us || !end_us) return FL_ERR_INVALID_ARG;
  *start_us = r->diag.job_start_us == faultline::kNoTime ? FL_TIME_UNSET : r->diag.job_start_us;
  *end_us = r->diag.job_end_us == faultline::kNoTime ? FL_TIME_UNSET : r->diag.job_end_us;
  return FL_OK;
}

FL_API fl_status fl_report_totals_get(const fl_report* r, fl_report_totals* out) {
  if (!r || !out || out->size < sizeof(uint32_t) + sizeof(uint64_t)) return FL_ERR_INVALID_ARG;
  fl_report_totals t;
  t.size = sizeof(fl_report_totals);
  t.sources = r->scan.sources.size();
  t.bytes = r->scan.bytes;
  t.lines = r->scan.lines;
  t.seconds = r->scan.seconds;
  t.evidence = r->scan.evidence.size();
  t.matches = r->scan.matches;
  t.incidents = r->diag.incidents.size();
  t.errors = r->scan.errors.size();
  const faultline::ScanCaps c = faultline::CapsOf(r->scan);
  t.ranks_seen = c.ranks_seen;
  t.ranks_kept = c.ranks_kept;
  t.hosts_seen = c.hosts_seen;
  t.hosts_kept = c.hosts_kept;
  t.capped = (c.evidence_truncated ? FL_CAPPED_EVIDENCE : 0u) | (c.ranks_truncated ? FL_CAPPED_RANKS : 0u) |
             (c.hosts_truncated ? FL_CAPPED_HOSTS : 0u) | (c.topology_truncated ? FL_CAPPED_TOPOLOGY : 0u) |
             (c.metric_series_truncated ? FL_CAPPED_METRICS : 0u);
  uint32_t size = std::min<uint32_t>(out->size, sizeof(fl_report_totals));
  std::memcpy(out, &t, size);
  out->size = size;
  return FL_OK;
}

FL_API size_t fl_report_incident_count(const fl_report* r) { return r ? r->diag.incidents.size() : 0; }

FL_API fl_status fl_report_incident(const fl_report* r, size_t i, fl_incident_view* out) {
  if (!r || !out || i >= r->diag.incidents.size()) return FL_ERR_INVALID_ARG;
  const faultline::Incident& inc = r->diag.incidents[i];
  const faultline::fb::Rule* rule = r->rs->rule(inc.rule);
  out->rule = rule->id()->c_str();
  out->reference = rule->reference()->c_str();
  out->title = rule->title()->c_str();
  out->category = rule->category()->c_str();
  out->confidence = inc.confidence;
  out->rank = inc.rank;
  out->host = inc.host.empty() ? nullptr : inc.host.c_str();
  out->gpu = inc.gpu.empty() ? nullptr : inc.gpu.c_str();
  out->time_us = inc.time_us == faultline::kNoTime ? FL_TIME_UNSET : inc.time_us;
  out->inferred = inc.inferred ? 1 : 0;
  out->fix = inc.fix.c_str();
  out->verify = inc.verify.c_str();
  out->explanation = inc.explanation.c_str();
  out->initiating_evidence = inc.initiating.size();
  out->collateral = inc.collateral.size();
  out->missing_facts = inc.missing_facts.size();
  return FL_OK;
}

FL_API const char* fl_report_incident_missing_fact(const fl_report* r, size_t i, size_t j) {
  if (!r || i >= r->diag.incidents.size() || j >= r->diag.incidents[i].missing_facts.size()) return nullptr;
  return r->diag.incidents[i].missing_facts[j].c_str();
}

static fl_status CopyViews(const std::vector<fl_evidence_view>& v, size_t first, fl_evidence_view* out,
                           size_t cap, size_t* n) {
  if (!n || (!out && cap)) return FL_ERR_INVALID_ARG;
  *n = 0;
  if (first >= v.size()) return FL_DONE;
  size_t k = std::min(cap, v.size() - first);
  std::memcpy(out, v.data() + first, k * sizeof(fl_evidence_view));
  *n = k;
  return FL_OK;
}

FL_API fl_status fl_report_incident_evidence(const fl_report* r, size_t i, size_t first, fl_evidence_view* out,
                                             size_t cap, size_t* n) {
  if (!r || i >= r->incident_views.size()) return FL_ERR_INVALID_ARG;
  return CopyViews(r->incident_views[i].views, first, out, cap, n);
}

FL_API size_t fl_report_evidence_count(const fl_report* r) { return r ? r->scan.evidence.size() : 0; }

FL_API fl_status fl_report_evidence(const fl_report* r, size_t first, fl_evidence_view* out, size_t cap,
                                    size_t* n) {
  if (!r) return FL_ERR_INVALID_ARG;
  return CopyViews(EvidenceViews(*r), first, out, cap, n);
}

// ---- Attempts

static_assert(FL_MAX_PRIOR_BUNDLES == faultline::kMaxPriorBundles);
static_assert(FL_MAX_PRIOR_BUNDLE_BYTES == faultline::kMaxPriorBundleBytes);

FL_API fl_status fl_session_add_prior_bundle(fl_session* s, const void* data, size_t len) {
  if (!s) return FL_ERR_INVALID_ARG;
  FL_CLAIM_SESSION(s);
  if (!data) return SessionError(s, FL_ERR_INVALID_ARG, "NULL argument");
  if (s->finished) return SessionError(s, FL_ERR_INVALID_ARG, "the session is finished");
  const size_t k = s->priors.size() + 1;
  if (s->priors.size() >= faultline::kMaxPriorBundles) {
    return SessionError(s, FL_ERR_INVALID_ARG,
                        StrCat("prior bundle ", k, ": a session takes at most ", faultline::kMaxPriorBundles,
                               " prior bundles"));
  }
  if (len > faultline::kMaxPriorBundleBytes) {
    return SessionError(s, FL_ERR_INVALID_ARG,
                        StrCat("prior bundle ", k, " is ", len, " bytes, over the ",
                               faultline::kMaxPriorBundleBytes, "-byte (64 MiB) bound on a prior bundle"));
  }
  return GuardS(s, [&]() -> fl_status {
    auto part = faultline::ReadBundle(*s->rs, std::string_view(static_cast<const char*>(data), len),
                                      StrCat("prior bundle ", k));
    if (!part.ok()) return SessionError(s, FL_ERR_PARSE, faultline::StatusMessage(part.status()));
    for (auto& src : part->sources) src.name = faultline::PriorBundleSourceName(k, src.name);
    for (auto& dump : part->flight_recorder) dump.source = faultline::PriorBundleSourceName(k, dump.source);
    // What could not be read then was reported then: not this session's.
    part->errors.clear();
    part->warnings.clear();
    s->priors.push_back(std::move(*part));
    return FL_OK;
  });
}

FL_API size_t fl_report_attempt_count(const fl_report* r) {
  return r && r->diag.attempts.size() > 1 ? r->diag.attempts.size() : 0;
}

FL_API fl_status fl_report_attempt(const fl_report* r, size_t i, fl_attempt_view* out) {
  if (!r || i >= fl_report_attempt_count(r)) return FL_ERR_INVALID_ARG;
  const faultline::Attempt& a = r->diag.attempts[i];
  fl_attempt_view v;
  v.size = sizeof v;
  v.index = a.index;
  v.label = a.label.c_str();
  v.recognised = a.recognised.c_str();
  v.start_us = a.start_us == faultline::kNoTime ? FL_TIME_UNSET : a.start_us;
  v.end_us = a.end_us == faultline::kNoTime ? FL_TIME_UNSET : a.end_us;
  v.primary_rule = a.primary_rule < 0 ? nullptr : r->rs->rule(static_cast<size_t>(a.primary_rule))->id()->c_str();
  v.host = a.host.empty() ? nullptr : a.host.c_str();
  v.rank = a.rank;
  v.step = a.step;
  return FillSized(v, out, FL_MIN_SIZE(fl_attempt_view, index));
}

FL_API fl_status fl_report_incident_history(const fl_report* r, size_t i, fl_incident_history* out) {
  if (!r || i >= r->diag.incidents.size()) return FL_ERR_INVALID_ARG;
  const faultline::Incident& inc = r->diag.incidents[i];
  fl_incident_history h;
  h.size = sizeof h;
  h.step = inc.step;
  h.attempt = inc.attempt;
  h.recurrence_attempts = inc.recurrence.attempts.data();
  h.recurrence_attempt_count = inc.recurrence.attempts.size();
  h.same_host = inc.recurrence.same_host;
  h.same_step = inc.recurrence.same_step;
  h.resume_failed_on_previous_checkpoint = inc.recurrence.resume_failed_on_previous_checkpoint ? 1 : 0;
  return FillSized(h, out, FL_MIN_SIZE(fl_incident_history, step));
}

}  // extern "C"
