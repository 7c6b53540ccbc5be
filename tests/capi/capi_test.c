/* The C ABI, tested from C (LevelDB's c_test.c idea): a compiler that sees
 * only faultline.h and a linker that sees only libfaultline.so. */
#include <faultline/faultline.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_check.h"


static const char* kXid =
    "Nov  2 03:12:05 node017 kernel: [1000000.000412] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', "
    "name=<unknown>, GPU has fallen off the bus.\n";

static int evidence_seen = 0;
static void on_evidence(void* user, const fl_evidence_view* ev) {
  (void)user;
  if (ev && ev->rule && ev->text) ++evidence_seen;
}

static int progress_calls = 0;
static int on_progress(void* user, uint64_t done, uint64_t total) {
  (void)user;
  (void)done;
  (void)total;
  ++progress_calls;
  return 0;
}

static void test_versions_and_status(void) {
  CHECK(fl_version_number() == FL_VERSION_NUMBER);
  char want[32];
  sprintf(want, "%d.%d.%d", FL_VERSION_MAJOR, FL_VERSION_MINOR, FL_VERSION_PATCH);
  CHECK(strcmp(fl_version_string(), want) == 0);
  CHECK(strcmp(fl_status_str(FL_OK), "FL_OK") == 0);
  CHECK(strcmp(fl_status_str(FL_ERR_RULESET), "FL_ERR_RULESET") == 0);
  CHECK(strcmp(fl_status_str(-999), "FL_ERR_UNKNOWN") == 0);
  fl_error_free(NULL);
  fl_ruleset_free(NULL);
  fl_session_free(NULL);
  fl_report_free(NULL);
  fl_free(NULL);
}

static void test_ruleset_errors(void) {
  fl_ruleset* rs = (fl_ruleset*)1;
  fl_error* err = NULL;
  CHECK(fl_ruleset_load_file(&rs, "/nonexistent/rules.flrules", &err) == FL_ERR_IO);
  CHECK(rs == NULL);
  CHECK(err != NULL && strstr(fl_error_message(err), "/nonexistent/rules.flrules") != NULL);
  CHECK(fl_error_code(err) == FL_ERR_IO);
  fl_error_free(err);
  err = NULL;
  CHECK(fl_ruleset_load_memory(&rs, "garbage!", 8, &err) == FL_ERR_RULESET);
  CHECK(err != NULL && strlen(fl_error_message(err)) > 0);
  fl_error_free(err);
  CHECK(fl_ruleset_load_memory(&rs, "garbage!", 8, NULL) == FL_ERR_RULESET);
  CHECK(fl_ruleset_load_default(NULL, NULL) == FL_ERR_INVALID_ARG);
}

static void test_ruleset_browse(fl_ruleset* rs) {
  CHECK(fl_ruleset_rule_count(rs) > 0);
  CHECK(strlen(fl_ruleset_name(rs)) > 0);
  char* json = NULL;
  size_t len = 0;
  CHECK(fl_ruleset_rules_json(rs, &json, &len) == FL_OK);
  CHECK(json && len == strlen(json) && json[0] == '[');
  CHECK(strstr(json, "\"xid-79-fallen-off-bus\"") != NULL);
  fl_free(json);
  CHECK(fl_ruleset_rule_json(rs, "xid-79-fallen-off-bus", &json, &len) == FL_OK);
  CHECK(strstr(json, "\"signals\"") != NULL);
  fl_free(json);
  CHECK(fl_ruleset_rule_json(rs, "no-such-rule", &json, &len) == FL_ERR_NOT_FOUND);
  CHECK(fl_ruleset_rule_text(rs, "xid-79-fallen-off-bus", &json, &len) == FL_OK);
  CHECK(strstr(json, "Fix") != NULL);
  fl_free(json);
}

static void test_stream_session(fl_ruleset* rs) {
  fl_session_options opts = FL_SESSION_OPTIONS_INIT;
  opts.threads = 2;
  opts.on_evidence = on_evidence;
  fl_session* s = NULL;
  fl_error* err = NULL;
  CHECK(fl_session_new(&s, rs, &opts, &err) == FL_OK);
  CHECK(err == NULL);
  uint32_t kern = 0, app = 0;
  CHECK(fl_session_stream_open(s, "node017/kern.log", &kern) == FL_OK);
  CHECK(fl_session_stream_open(s, "node018/rank-3.log", &app) == FL_OK);
  /* Feed byte by byte: a line split over chunks must still match. */
  for (const char* p = kXid; *p; ++p) CHECK(fl_session_feed(s, kern, p, 1) == FL_OK);
  CHECK(fl_session_feed(s, app, kWatchdog, strlen(kWatchdog)) == FL_OK);
  CHECK(fl_session_stream_close(s, kern) == FL_OK);
  CHECK(fl_session_feed(s, kern, "x", 1) == FL_ERR_INVALID_ARG);
  CHECK(strlen(fl_session_last_error(s)) > 0);
  fl_report* r = NULL;
  CHECK(fl_session_finish(s, &r) == FL_OK);
  fl_report* again = (fl_report*)1;
  CHECK(fl_session_finish(s, &again) == FL_ERR_INVALID_ARG && again == NULL);
  CHECK(evidence_seen >= 2);
  CHECK(fl_report_incident_count(r) >= 1);
  fl_incident_view inc;
  if (fl_report_incident(r, 0, &inc) != FL_OK) {
    CHECK(!"no incident");
    fl_report_free(r);
    fl_session_free(s);
    return;
  }
  CHECK(strcmp(inc.rule, "xid-79-fallen-off-bus") == 0);
  CHECK(inc.host && strcmp(inc.host, "node017") == 0);
  CHECK(inc.gpu && strcmp(inc.gpu, "0000:3b:00.0") == 0);
  CHECK(inc.inferred == 0);
  CHECK(inc.confidence > 0.5 && inc.confidence <= 1.0);
  CHECK(fl_report_incident(r, 1000, &inc) == FL_ERR_INVALID_ARG);
  fl_evidence_view views[4];
  size_t n = 0;
  CHECK(fl_report_evidence_count(r) == (size_t)evidence_seen);
  CHECK(fl_report_evidence(r, 0, views, 1, &n) == FL_OK && n == 1);
  CHECK(views[0].line == 1 && views[0].offset == 0);
  CHECK(strcmp(views[0].source, "node017/kern.log") == 0);
  CHECK(strcmp(views[0].fields_json, "{}") != 0);
  CHECK(fl_report_evidence(r, 1, views, 4, &n) == FL_OK && n == (size_t)evidence_seen - 1);
  CHECK(fl_report_evidence(r, (size_t)evidence_seen, views, 4, &n) == FL_DONE && n == 0);
  CHECK(fl_report_incident_evidence(r, 0, 0, views, 4, &n) == FL_OK && n >= 1);
  const char* json = NULL;
  size_t len = 0;
  CHECK(fl_report_json(r, &json, &len) == FL_OK && len == strlen(json));
  CHECK(strstr(json, "\"incidents\"") != NULL);
  CHECK(fl_report_text(r, &json, &len) == FL_OK && strstr(json, "PRIMARY DIAGNOSIS") != NULL);
  CHECK(fl_report_evidence_jsonl(r, &json, &len) == FL_OK && len > 0);
  /* The HTML page: built once, then the same borrowed buffer. */
  const char* page = NULL;
  CHECK(fl_report_html(r, &page, &len) == FL_OK && len == strlen(page));
  CHECK(strncmp(page, "<!DOCTYPE html>", 15) == 0 && strstr(page, "data-host=\"node017\"") != NULL);
  CHECK(fl_report_html(r, &json, NULL) == FL_OK && json == page);
  CHECK(fl_report_html(r, NULL, &len) == FL_ERR_INVALID_ARG);
  CHECK(fl_report_html(NULL, &json, &len) == FL_ERR_INVALID_ARG);
  fl_report_totals t;
  t.size = sizeof t;
  CHECK(fl_report_totals_get(r, &t) == FL_OK);
  CHECK(t.sources == 2 && t.lines == 2 && t.evidence == (uint64_t)evidence_seen && t.errors == 0);
  fl_report_free(r);
  fl_session_free(s);
}

/* A snapshot reports what was found so far and the session goes on: the
 * second snapshot and the final report see the line fed after the first,
 * and a partial line stays buffered until its newline arrives. */
static void test_snapshot(fl_ruleset* rs) {
  fl_session* s = NULL;
  CHECK(fl_session_new(&s, rs, NULL, NULL) == FL_OK);
  uint32_t app = 0, kern = 0;
  CHECK(fl_session_stream_open(s, "node018/rank-3.log", &app) == FL_OK);
  CHECK(fl_session_feed(s, app, kWatchdog, strlen(kWatchdog)) == FL_OK);
  fl_report* r = NULL;
  CHECK(fl_session_snapshot(s, NULL) == FL_ERR_INVALID_ARG);
  CHECK(fl_session_snapshot(s, &r) == FL_OK && r != NULL);
  CHECK(fl_report_evidence_count(r) >= 1);
  size_t before = fl_report_evidence_count(r);
  fl_report_free(r);
  /* The Xid line in two pieces: the first snapshot must not see it. */
  size_t half = strlen(kXid) / 2;
  CHECK(fl_session_stream_open(s, "node017/kern.log", &kern) == FL_OK);
  CHECK(fl_session_feed(s, kern, kXid, half) == FL_OK);
  CHECK(fl_session_snapshot(s, &r) == FL_OK);
  CHECK(fl_report_evidence_count(r) == before);
  fl_report_free(r);
  CHECK(fl_session_feed(s, kern, kXid + half, strlen(kXid) - half) == FL_OK);
  CHECK(fl_session_snapshot(s, &r) == FL_OK);
  CHECK(fl_report_evidence_count(r) > before);
  fl_incident_view inc;
  CHECK(fl_report_incident_count(r) >= 1 && fl_report_incident(r, 0, &inc) == FL_OK &&
        strcmp(inc.rule, "xid-79-fallen-off-bus") == 0);
  size_t snap_count = fl_report_evidence_count(r);
  fl_report_free(r);
  CHECK(fl_session_finish(s, &r) == FL_OK);
  CHECK(fl_report_evidence_count(r) == snap_count);
  CHECK(fl_report_incident_count(r) >= 1 && fl_report_incident(r, 0, &inc) == FL_OK &&
        strcmp(inc.rule, "xid-79-fallen-off-bus") == 0);
  fl_report_free(r);
  CHECK(fl_session_snapshot(s, &r) == FL_ERR_INVALID_ARG && r == NULL);
  fl_session_free(s);
}

static void test_options_versioning(fl_ruleset* rs) {
  fl_session* s = NULL;
  fl_error* err = NULL;
  fl_session_options opts;
  /* options_init writes no byte past the size it is given. */
  struct {
    fl_session_options o;
    unsigned char guard[16];
  } padded;
  memset(&padded, 0xAB, sizeof padded);
  CHECK(fl_session_options_init(&padded.o, sizeof padded.o) == FL_OK);
  CHECK(padded.o.size == sizeof padded.o && padded.o.threads == 0 && padded.o.job_start_us == FL_TIME_UNSET);
  CHECK(padded.o.tz == NULL && padded.o.on_evidence == NULL);
  CHECK(padded.guard[0] == 0xAB && padded.guard[15] == 0xAB);
  /* An older caller's shorter struct: only size and threads are written. */
  memset(&padded, 0xAB, sizeof padded);
  CHECK(fl_session_options_init(&padded.o, 8) == FL_OK);
  CHECK(padded.o.size == 8 && padded.o.threads == 0);
  CHECK(((unsigned char*)&padded.o)[8] == 0xAB);
  /* A struct from a newer header than this library's: refused, untouched. */
  memset(&padded, 0xAB, sizeof padded);
  CHECK(fl_session_options_init(&padded.o, sizeof padded) == FL_ERR_INVALID_ARG);
  CHECK(((unsigned char*)&padded)[0] == 0xAB);
  CHECK(fl_session_options_init(&padded.o, 4) == FL_ERR_INVALID_ARG);
  CHECK(fl_session_options_init(NULL, sizeof opts) == FL_ERR_INVALID_ARG);

  fl_session_options_init(&opts, sizeof opts);
  opts.size = sizeof opts + 64; /* from the future */
  CHECK(fl_session_new(&s, rs, &opts, &err) == FL_ERR_INVALID_ARG);
  CHECK(s == NULL && err != NULL);
  fl_error_free(err);
  /* An older, shorter struct: only size and threads. */
  struct {
    uint32_t size;
    uint32_t threads;
  } old = {8, 1};
  CHECK(fl_session_new(&s, rs, (const fl_session_options*)&old, NULL) == FL_OK);
  fl_session_free(s);
  fl_session_options_init(&opts, sizeof opts);
  opts.tz = "Mars/Olympus";
  err = NULL;
  CHECK(fl_session_new(&s, rs, &opts, &err) == FL_ERR_INVALID_ARG);
  CHECK(err && strstr(fl_error_message(err), "Mars/Olympus"));
  fl_error_free(err);
  /* A clock offset that is not a finite number of seconds within ~31 years
   * would overflow converting to microseconds (and print NaN into JSON). */
  {
    static const double bad[] = {0.0 / 0.0, 1.0 / 0.0, -1.0 / 0.0, 1e300, -2e9};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
      fl_clock_offset off = {"node017", bad[i]};
      fl_session_options_init(&opts, sizeof opts);
      opts.clock_offsets = &off;
      opts.clock_offset_count = 1;
      err = NULL;
      CHECK(fl_session_new(&s, rs, &opts, &err) == FL_ERR_INVALID_ARG);
      CHECK(err && strstr(fl_error_message(err), "clock_offsets[0].seconds") &&
            strstr(fl_error_message(err), "node017"));
      fl_error_free(err);
    }
    fl_clock_offset ok = {"node017", -42.5};
    fl_session_options_init(&opts, sizeof opts);
    opts.clock_offsets = &ok;
    opts.clock_offset_count = 1;
    CHECK(fl_session_new(&s, rs, &opts, NULL) == FL_OK);
    fl_session_free(s);
  }
  /* The retry policy: a window that is not a finite number of seconds is
   * refused, naming the field; zeros keep the defaults. */
  {
    static const double bad[] = {0.0 / 0.0, 1.0 / 0.0, -1.0, 1e12};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
      fl_session_options_init(&opts, sizeof opts);
      opts.restart_window_s = bad[i];
      err = NULL;
      CHECK(fl_session_new(&s, rs, &opts, &err) == FL_ERR_INVALID_ARG);
      CHECK(err && strstr(fl_error_message(err), "restart_window_s"));
      fl_error_free(err);
    }
    fl_session_options_init(&opts, sizeof opts);
    CHECK(opts.max_restarts_per_rule == 0 && opts.max_restarts_per_host == 0 && opts.restart_window_s == 0);
    opts.max_restarts_per_rule = 1;
    opts.max_restarts_per_host = 5;
    opts.restart_window_s = 3600;
    CHECK(fl_session_new(&s, rs, &opts, NULL) == FL_OK);
    fl_session_free(s);
  }
  /* How the job ended: unknown by default (a struct that ends before the
   * fields gets that too); a value out of range is refused, naming the
   * field. */
  {
    fl_session_options_init(&opts, sizeof opts);
    CHECK(opts.job_state == FL_JOB_UNKNOWN && opts.job_exit_status == FL_EXIT_STATUS_UNSET);
    static const int32_t bad_state[] = {-1, FL_JOB_RUNNING + 1};
    for (size_t i = 0; i < sizeof bad_state / sizeof bad_state[0]; ++i) {
      fl_session_options_init(&opts, sizeof opts);
      opts.job_state = bad_state[i];
      err = NULL;
      CHECK(fl_session_new(&s, rs, &opts, &err) == FL_ERR_INVALID_ARG);
      CHECK(err && strstr(fl_error_message(err), "job_state"));
      fl_error_free(err);
    }
    static const int32_t bad_status[] = {256, -65};
    for (size_t i = 0; i < sizeof bad_status / sizeof bad_status[0]; ++i) {
      fl_session_options_init(&opts, sizeof opts);
      opts.job_exit_status = bad_status[i];
      err = NULL;
      CHECK(fl_session_new(&s, rs, &opts, &err) == FL_ERR_INVALID_ARG);
      CHECK(err && strstr(fl_error_message(err), "job_exit_status"));
      fl_error_free(err);
    }
    /* A caller built against the header before these fields: whatever
     * follows its struct is never read. */
    fl_session_options_init(&opts, sizeof opts);
    opts.job_state = 99;
    opts.job_exit_status = 999;
    opts.size = (uint32_t)offsetof(fl_session_options, job_state);
    CHECK(fl_session_new(&s, rs, &opts, NULL) == FL_OK);
    fl_session_free(s);
    fl_session_options_init(&opts, sizeof opts);
    opts.job_state = FL_JOB_TIMEOUT;
    opts.job_exit_status = -9;
    CHECK(fl_session_new(&s, rs, &opts, NULL) == FL_OK);
    fl_session_free(s);
  }
}

/* Incident 0's id and action: the xid drains its host. */
static void check_incident_action(const fl_report* r, const char* host) {
  const char* id = fl_report_incident_id(r, 0);
  CHECK(id && strncmp(id, "inc-", 4) == 0 && strlen(id) == 16);
  CHECK(fl_report_incident_id(r, fl_report_incident_count(r)) == NULL);
  fl_incident_view inc;
  CHECK(fl_report_incident(r, 0, &inc) == FL_OK);
  fl_evidence_view ev;
  size_t n = 0;
  CHECK(fl_report_incident_evidence(r, 0, 0, &ev, 1, &n) == FL_OK && n == 1);
  char buf[FL_INCIDENT_ID_SIZE];
  CHECK(fl_incident_id(inc.reference, ev.source, ev.line, NULL, -1, buf) == FL_OK && strcmp(buf, id) == 0);
  CHECK(fl_incident_id(NULL, ev.source, ev.line, NULL, -1, buf) == FL_ERR_INVALID_ARG);
  fl_action_view a;
  a.size = sizeof a;
  CHECK(fl_report_incident_action(r, 0, &a) == FL_OK && a.size == sizeof a);
  CHECK(strcmp(a.kind, "restart_excluding") == 0 && a.exclude_host_count == 1);
  CHECK(strcmp(a.exclude_hosts[0], host) == 0);
  CHECK(a.reason && strstr(a.reason, host) && strcmp(a.set_by, "xid-79-fallen-off-bus") == 0);
  CHECK(a.missing_fact == NULL);
  a.size = 4;
  CHECK(fl_report_incident_action(r, 0, &a) == FL_ERR_INVALID_ARG);
  a.size = sizeof a;
  CHECK(fl_report_incident_action(r, fl_report_incident_count(r), &a) == FL_ERR_INVALID_ARG);
}

/* A file that exists but cannot be read as a log: a .gz that is not gzip. */
static const char* kBadGz = "capi_test_not_gzip.log.gz";

static void test_paths_and_errors(fl_ruleset* rs, const char* dir) {
  FILE* f = fopen(kBadGz, "wb");
  CHECK(f != NULL);
  if (f) {
    fputs("not gzip\n", f);
    fclose(f);
  }
  fl_session_options opts = FL_SESSION_OPTIONS_INIT;
  opts.on_progress = on_progress;
  fl_session* s = NULL;
  CHECK(fl_session_new(&s, rs, &opts, NULL) == FL_OK);
  CHECK(fl_session_add_path(s, dir) == FL_OK);
  /* A path that names nothing is an error of the call that names it (and an
   * input error of the report). */
  CHECK(fl_session_add_path(s, "/nonexistent/node099/rank-1.log") == FL_ERR_NOT_FOUND);
  CHECK(strstr(fl_session_last_error(s), "/nonexistent/node099/rank-1.log") != NULL);
  CHECK(fl_session_add_range(s, "/nonexistent/node099/rank-1.log", 0, 10, 0) == FL_ERR_NOT_FOUND);
  CHECK(fl_session_add_path(s, NULL) == FL_ERR_INVALID_ARG);
  /* One unreadable file among many: the report, with the input error. */
  CHECK(fl_session_add_path(s, kBadGz) == FL_OK);
  fl_report* r = NULL;
  CHECK(fl_session_finish(s, &r) == FL_OK);
  CHECK(strstr(fl_session_last_error(s), "/nonexistent/node099/rank-1.log") != NULL);
  CHECK(fl_session_error_count(s) == 2);
  fl_report_totals t;
  t.size = sizeof t;
  CHECK(fl_report_totals_get(r, &t) == FL_OK && t.errors == 2 && t.sources >= 2);
  fl_incident_view inc;
  memset(&inc, 0, sizeof inc);
  CHECK(fl_report_incident(r, 0, &inc) == FL_OK);
  CHECK(inc.rule && strcmp(inc.rule, "xid-79-fallen-off-bus") == 0);
  CHECK(inc.rank == 2);
  check_incident_action(r, inc.host);
  CHECK(progress_calls > 0);
  const char* json = NULL;
  size_t len = 0;
  fl_report_json(r, &json, &len);
  CHECK(strstr(json, "\"errors\":[{\"source\":\"/nonexistent/node099/rank-1.log\"") != NULL);
  CHECK(strstr(json, "{\"source\":\"capi_test_not_gzip.log.gz\"") != NULL);
  /* The same input errors without the JSON. */
  CHECK(fl_report_input_error_count(r) == 2);
  fl_input_error_view ie;
  ie.size = sizeof ie;
  CHECK(fl_report_input_error(r, 0, &ie) == FL_OK && ie.size == sizeof ie);
  CHECK(strcmp(ie.source, "/nonexistent/node099/rank-1.log") == 0 && ie.status == FL_ERR_IO);
  CHECK(strstr(ie.message, "rank-1.log") != NULL);
  CHECK(fl_report_input_error(r, 1, &ie) == FL_OK && strcmp(ie.source, kBadGz) == 0);
  CHECK(fl_report_input_error(r, 2, &ie) == FL_ERR_INVALID_ARG);
  ie.size = 4;
  CHECK(fl_report_input_error(r, 0, &ie) == FL_ERR_INVALID_ARG);
  /* Collateral clusters: the other ranks' NCCL timeouts. */
  CHECK(inc.collateral >= 1);
  size_t ranks_seen = 0;
  for (size_t k = 0; k < inc.collateral; ++k) {
    fl_collateral_view cv;
    cv.size = sizeof cv;
    CHECK(fl_report_incident_collateral(r, 0, k, &cv) == FL_OK);
    CHECK(cv.rule && cv.reference && cv.count >= cv.rank_count);
    CHECK(cv.sample.rule && strcmp(cv.sample.rule, cv.rule) == 0 && cv.sample.text);
    for (size_t j = 0; j < cv.host_count; ++j) CHECK(cv.hosts[j] && strlen(cv.hosts[j]) > 0);
    for (size_t j = 1; j < cv.rank_count; ++j) CHECK(cv.ranks[j - 1] < cv.ranks[j]);
    ranks_seen += cv.rank_count;
  }
  CHECK(ranks_seen > 0);
  {
    fl_collateral_view cv;
    cv.size = sizeof cv;
    CHECK(fl_report_incident_collateral(r, 0, inc.collateral, &cv) == FL_ERR_INVALID_ARG);
  }
  int64_t start = 0, end = 0;
  CHECK(fl_report_job_window(r, &start, &end) == FL_OK);
  CHECK(start != FL_TIME_UNSET && (end == FL_TIME_UNSET || end >= start));
  CHECK(fl_report_job_window(r, NULL, &end) == FL_ERR_INVALID_ARG);
  fl_report_free(r);
  fl_session_free(s);

  /* Nothing but unreadable input: no report that would read as healthy. */
  CHECK(fl_session_new(&s, rs, NULL, NULL) == FL_OK);
  CHECK(fl_session_add_path(s, kBadGz) == FL_OK);
  r = (fl_report*)1;
  CHECK(fl_session_finish(s, &r) == FL_ERR_IO && r == NULL);
  CHECK(strstr(fl_session_last_error(s), "no log") != NULL);
  CHECK(strstr(fl_session_last_error(s), kBadGz) != NULL);
  fl_session_free(s);
  remove(kBadGz);
}

static void test_signal_costs(fl_ruleset* rs, const char* dir) {
  const char* paths[] = {dir, "/nonexistent/node099/rank-1.log"};
  char* json = NULL;
  size_t len = 0;
  fl_error* err = NULL;
  CHECK(fl_x_ruleset_signal_costs_json(rs, paths, 2, 1 << 20, &json, &len, &err) == FL_OK);
  CHECK(err == NULL);
  CHECK(json && len == strlen(json) && json[0] == '{');
  CHECK(strstr(json, "\"signals\":[{\"signal\":") != NULL);
  const char* xid = json ? strstr(json, "{\"signal\":\"xid-79-fallen-off-bus/xid79\",\"role\":\"initiating\"") : NULL;
  CHECK(xid != NULL && strstr(xid, "\"lines\":1,") != NULL);
  const char* skipped = json ? strstr(json, "\"skipped\":[\"") : NULL;
  CHECK(skipped && strstr(skipped, "/nonexistent/node099/rank-1.log") != NULL);
  fl_free(json);
  json = NULL;
  /* Nothing to sample: an error that says so. */
  CHECK(fl_x_ruleset_signal_costs_json(rs, paths + 1, 1, 1 << 20, &json, &len, &err) == FL_ERR_INVALID_ARG);
  CHECK(err && strstr(fl_error_message(err), "no input") != NULL);
  fl_error_free(err);
  CHECK(fl_x_ruleset_signal_costs_json(rs, NULL, 1, 1 << 20, &json, &len, NULL) == FL_ERR_INVALID_ARG);
  CHECK(fl_x_ruleset_signal_costs_json(NULL, paths, 1, 1 << 20, &json, &len, NULL) == FL_ERR_INVALID_ARG);
}

/* A hardware line before the job window is set aside, not diagnosed. */
static void test_ignored_and_job_window(fl_ruleset* rs) {
  fl_session_options opts;
  CHECK(fl_session_options_init(&opts, sizeof opts) == FL_OK);
  CHECK(fl_time_parse("2026-11-10T05:00:00Z", &opts.job_start_us) == FL_OK);
  CHECK(fl_time_parse("2026-11-10T09:00:00Z", &opts.job_end_us) == FL_OK);
  fl_session* s = NULL;
  CHECK(fl_session_new(&s, rs, &opts, NULL) == FL_OK);
  uint32_t id = 0;
  CHECK(fl_session_stream_open(s, "node017/kern.log", &id) == FL_OK);
  CHECK(fl_session_feed(s, id, kXid, strlen(kXid)) == FL_OK);
  fl_report* r = NULL;
  CHECK(fl_session_finish(s, &r) == FL_OK);
  int64_t start = 0, end = 0;
  CHECK(fl_report_job_window(r, &start, &end) == FL_OK);
  CHECK(start == opts.job_start_us && end == opts.job_end_us);
  CHECK(fl_report_ignored_count(r) == 1);
  fl_ignored_view ig;
  ig.size = sizeof ig;
  CHECK(fl_report_ignored(r, 0, &ig) == FL_OK && ig.size == sizeof ig);
  CHECK(ig.rule && strcmp(ig.rule, "xid-79-fallen-off-bus") == 0);
  CHECK(ig.reason && strlen(ig.reason) > 0 && ig.count == 1);
  CHECK(ig.sample.line == 1 && strcmp(ig.sample.source, "node017/kern.log") == 0);
  CHECK(fl_report_ignored(r, 1, &ig) == FL_ERR_INVALID_ARG);
  const char* json = NULL;
  size_t len = 0;
  CHECK(fl_report_json(r, &json, &len) == FL_OK && strstr(json, ig.reason) != NULL);
  fl_report_free(r);
  fl_session_free(s);
}

static void test_time_parse(void) {
  int64_t us = 0;
  CHECK(fl_time_parse("2026-11-02T03:12:05Z", &us) == FL_OK && us == 1793589125000000LL);
  CHECK(fl_time_parse("1793589125", &us) == FL_OK && us == 1793589125000000LL);
  CHECK(fl_time_parse("yesterday", &us) == FL_ERR_PARSE);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: capi_test INCIDENT_DIR\n");
    return 2;
  }
  test_versions_and_status();
  test_ruleset_errors();
  test_time_parse();
  fl_ruleset* rs = NULL;
  fl_error* err = NULL;
  if (fl_ruleset_load_default(&rs, &err) != FL_OK) {
    fprintf(stderr, "default ruleset: %s\n", fl_error_message(err));
    return 1;
  }
  test_ruleset_browse(rs);
  test_stream_session(rs);
  test_snapshot(rs);
  test_options_versioning(rs);
  test_paths_and_errors(rs, argv[1]);
  test_signal_costs(rs, argv[1]);
  test_ignored_and_job_window(rs);
  fl_ruleset_free(rs);
  CHECK_SUMMARY();
}
