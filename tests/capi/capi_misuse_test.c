/* Misuse of a session that faultline.h calls the caller's fault, which the
 * library must report as FL_ERR_BUSY (or FL_ERR_CANCELLED) rather than turn
 * into memory corruption or a report with wrong counts (issue #17): two
 * threads calling into one session, a callback calling back into its own
 * session, and finishing a session that was cancelled. Run under TSan and
 * ASan by .ci/test.d/sanitizers.sh. */
#define _POSIX_C_SOURCE 200809L
#include <faultline/faultline.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_check.h"



static fl_ruleset* rs;

static fl_session_options Defaults(void) {
  fl_session_options o = FL_SESSION_OPTIONS_INIT;
  return o;
}

static uint64_t Matches(fl_report* r) {
  fl_report_totals t;
  memset(&t, 0, sizeof t);
  t.size = sizeof t;
  CHECK(fl_report_totals_get(r, &t) == FL_OK);
  return t.matches;
}

/* ---- A second thread calling while a call is in progress. The first call
 * is held inside its evidence callback, so the overlap is certain. */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int inside = 0, release_it = 0;

static void HoldInCallback(void* user, const fl_evidence_view* ev) {
  (void)user;
  (void)ev;
  pthread_mutex_lock(&mu);
  if (inside) { /* only the first callback waits */
    pthread_mutex_unlock(&mu);
    return;
  }
  inside = 1;
  pthread_cond_broadcast(&cv);
  while (!release_it) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
}

struct FlushArgs {
  fl_session* s;
  uint32_t id;
  fl_status rc;
};

static void* FlushThread(void* p) {
  struct FlushArgs* a = (struct FlushArgs*)p;
  a->rc = fl_session_stream_flush(a->s, a->id);
  return NULL;
}

static void test_busy_while_another_thread_calls(void) {
  fl_session_options opts = FL_SESSION_OPTIONS_INIT;
  opts.on_evidence = HoldInCallback;
  fl_session* s = NULL;
  CHECK(fl_session_new(&s, rs, &opts, NULL) == FL_OK);
  struct FlushArgs a;
  a.s = s;
  a.rc = 99;
  CHECK(fl_session_stream_open(s, "node018/rank-3.log", &a.id) == FL_OK);
  CHECK(fl_session_feed(s, a.id, kWatchdog, strlen(kWatchdog)) == FL_OK);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, FlushThread, &a) == 0);
  pthread_mutex_lock(&mu);
  while (!inside) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);

  /* The flush is inside on_evidence on the other thread. */
  uint32_t other = 0;
  fl_report* r = (fl_report*)&a;
  void* bundle = NULL;
  size_t len = 0;
  CHECK(fl_session_feed(s, a.id, kWatchdog, strlen(kWatchdog)) == FL_ERR_BUSY);
  CHECK(fl_session_stream_flush(s, a.id) == FL_ERR_BUSY);
  CHECK(fl_session_stream_open(s, "other.log", &other) == FL_ERR_BUSY);
  CHECK(fl_session_stream_close(s, a.id) == FL_ERR_BUSY);
  CHECK(fl_session_add_path(s, "-") == FL_ERR_BUSY);
  CHECK(fl_session_add_range(s, "x.log", 0, 1, 0) == FL_ERR_BUSY);
  CHECK(fl_session_scan(s) == FL_ERR_BUSY);
  CHECK(fl_session_finish(s, &r) == FL_ERR_BUSY);
  CHECK(fl_session_export_bundle(s, &bundle, &len) == FL_ERR_BUSY && bundle == NULL);
  CHECK(fl_session_snapshot(s, &r) == FL_ERR_BUSY);
  CHECK(fl_session_error_count(s) == 0);
  /* Cancel is the one call any thread may make while another is running. */
  fl_session_cancel(s);

  pthread_mutex_lock(&mu);
  release_it = 1;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  CHECK(pthread_join(t, NULL) == 0);
  CHECK(a.rc == FL_OK);
  /* The session was cancelled while the flush ran: finishing says so. */
  r = NULL;
  CHECK(fl_session_finish(s, &r) == FL_ERR_CANCELLED && r == NULL);
  fl_session_free(s);
}

/* ---- A callback calling back into its own session. */

static fl_session* reentered;
static fl_status reentry_rc[3];
static int reentry_calls = 0;

static void FeedFromCallback(void* user, const fl_evidence_view* ev) {
  uint32_t* id = (uint32_t*)user;
  (void)ev;
  if (reentry_calls++) return;
  reentry_rc[0] = fl_session_feed(reentered, *id, kWatchdog, strlen(kWatchdog));
  reentry_rc[1] = fl_session_stream_flush(reentered, *id);
  fl_report* r = NULL;
  reentry_rc[2] = fl_session_finish(reentered, &r);
  fl_report_free(r);
}

static void test_reentry_from_callback(void) {
  uint32_t id = 0;
  fl_session_options opts = FL_SESSION_OPTIONS_INIT;
  opts.on_evidence = FeedFromCallback;
  opts.evidence_user = &id;
  CHECK(fl_session_new(&reentered, rs, &opts, NULL) == FL_OK);
  CHECK(fl_session_stream_open(reentered, "node018/rank-3.log", &id) == FL_OK);
  CHECK(fl_session_feed(reentered, id, kWatchdog, strlen(kWatchdog)) == FL_OK);
  CHECK(fl_session_stream_flush(reentered, id) == FL_OK);
  CHECK(reentry_calls >= 1);
  CHECK(reentry_rc[0] == FL_ERR_BUSY);
  CHECK(reentry_rc[1] == FL_ERR_BUSY);
  CHECK(reentry_rc[2] == FL_ERR_BUSY);
  /* The session is intact: the one line fed is all the report has. */
  fl_report* r = NULL;
  CHECK(fl_session_finish(reentered, &r) == FL_OK);
  fl_report_totals t;
  memset(&t, 0, sizeof t);
  t.size = sizeof t;
  CHECK(r && fl_report_totals_get(r, &t) == FL_OK && t.lines == 1);
  fl_report_free(r);
  fl_session_free(reentered);
}

/* ---- Finishing after a cancel: FL_ERR_CANCELLED however the cancel came. */

static int StopAtOnce(void* user, uint64_t done, uint64_t total) {
  (void)user;
  (void)done;
  (void)total;
  return 1;
}

static fl_session* to_cancel;
static void CancelFromCallback(void* user, const fl_evidence_view* ev) {
  (void)user;
  (void)ev;
  fl_session_cancel(to_cancel);
}

static void test_finish_after_cancel(const char* dir) {
  fl_session_options opts = FL_SESSION_OPTIONS_INIT;
  opts.on_progress = StopAtOnce;
  fl_session* s = NULL;
  fl_report* r = NULL;
  CHECK(fl_session_new(&s, rs, &opts, NULL) == FL_OK);
  CHECK(fl_session_add_path(s, dir) == FL_OK);
  CHECK(fl_session_scan(s) == FL_ERR_CANCELLED);
  CHECK(fl_session_finish(s, &r) == FL_ERR_CANCELLED && r == NULL);
  fl_report_free(r);
  fl_session_free(s);

  /* Cancelled during finish itself (the stream's last line is scanned
   * there). */
  opts = Defaults();
  opts.on_evidence = CancelFromCallback;
  CHECK(fl_session_new(&to_cancel, rs, &opts, NULL) == FL_OK);
  uint32_t id = 0;
  CHECK(fl_session_stream_open(to_cancel, "node018/rank-3.log", &id) == FL_OK);
  CHECK(fl_session_feed(to_cancel, id, kWatchdog, strlen(kWatchdog) - 1) == FL_OK); /* no newline */
  r = NULL;
  CHECK(fl_session_finish(to_cancel, &r) == FL_ERR_CANCELLED && r == NULL);
  CHECK(strstr(fl_session_last_error(to_cancel), "cancel") != NULL);
  fl_report_free(r);
  fl_session_free(to_cancel);

  /* The same for an exported bundle. */
  opts = Defaults();
  CHECK(fl_session_new(&s, rs, &opts, NULL) == FL_OK);
  CHECK(fl_session_add_path(s, dir) == FL_OK);
  fl_session_cancel(s);
  void* bundle = NULL;
  size_t len = 0;
  CHECK(fl_session_export_bundle(s, &bundle, &len) == FL_ERR_CANCELLED && bundle == NULL);
  fl_session_free(s);

  /* And for a snapshot of a cancelled session. */
  opts = Defaults();
  CHECK(fl_session_new(&s, rs, &opts, NULL) == FL_OK);
  CHECK(fl_session_add_path(s, dir) == FL_OK);
  fl_session_cancel(s);
  fl_report* snap = (fl_report*)&len;
  CHECK(fl_session_snapshot(s, &snap) == FL_ERR_CANCELLED && snap == NULL);
  fl_session_free(s);
}

/* ---- Two threads feeding one session as fast as they can: every call is
 * either done (FL_OK) or refused (FL_ERR_BUSY), and the report counts exactly
 * the lines of the calls that were done. */

enum { kLinesPerChunk = 8, kCallsPerThread = 3000 };

struct Feeder {
  fl_session* s;
  uint32_t id;
  const char* chunk;
  size_t len;
  long ok, busy, other;
};

static void* FeedThread(void* p) {
  struct Feeder* f = (struct Feeder*)p;
  for (int i = 0; i < kCallsPerThread; ++i) {
    fl_status rc = (i % 64 == 63) ? fl_session_stream_flush(f->s, f->id) : fl_session_feed(f->s, f->id, f->chunk, f->len);
    if (rc == FL_OK) {
      if (i % 64 != 63) ++f->ok;
    } else if (rc == FL_ERR_BUSY) {
      ++f->busy;
    } else {
      ++f->other;
    }
  }
  return NULL;
}

static void test_two_threads_feeding(void) {
  size_t line = strlen(kWatchdog);
  char* chunk = (char*)malloc(line * kLinesPerChunk + 1);
  for (int i = 0; i < kLinesPerChunk; ++i) memcpy(chunk + (size_t)i * line, kWatchdog, line);
  size_t len = line * kLinesPerChunk;

  /* Matches one chunk gives, fed alone. */
  fl_session* s = NULL;
  uint32_t id = 0;
  fl_report* r = NULL;
  CHECK(fl_session_new(&s, rs, NULL, NULL) == FL_OK);
  CHECK(fl_session_stream_open(s, "node018/rank-3.log", &id) == FL_OK);
  CHECK(fl_session_feed(s, id, chunk, len) == FL_OK);
  CHECK(fl_session_finish(s, &r) == FL_OK);
  uint64_t per_chunk = Matches(r);
  CHECK(per_chunk >= kLinesPerChunk);
  fl_report_free(r);
  fl_session_free(s);

  struct Feeder f[2];
  CHECK(fl_session_new(&s, rs, NULL, NULL) == FL_OK);
  for (int k = 0; k < 2; ++k) {
    memset(&f[k], 0, sizeof f[k]);
    f[k].s = s;
    f[k].chunk = chunk;
    f[k].len = len;
    CHECK(fl_session_stream_open(s, k ? "node018/rank-3.log" : "node017/rank-1.log", &f[k].id) == FL_OK);
  }
  pthread_t t[2];
  for (int k = 0; k < 2; ++k) CHECK(pthread_create(&t[k], NULL, FeedThread, &f[k]) == 0);
  for (int k = 0; k < 2; ++k) CHECK(pthread_join(t[k], NULL) == 0);
  CHECK(f[0].other == 0 && f[1].other == 0);
  r = NULL;
  CHECK(fl_session_finish(s, &r) == FL_OK);
  if (r) {
    uint64_t want = (uint64_t)(f[0].ok + f[1].ok) * per_chunk;
    uint64_t got = Matches(r);
    if (got != want) {
      fprintf(stderr, "two threads: %llu matches, want %llu (%ld + %ld calls done, %ld + %ld refused)\n",
              (unsigned long long)got, (unsigned long long)want, f[0].ok, f[1].ok, f[0].busy, f[1].busy);
    }
    CHECK(got == want);
  }
  fl_report_free(r);
  fl_session_free(s);
  free(chunk);
}

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: capi_misuse_test INCIDENT_DIR [busy|reentry|cancel|threads]\n");
    return 2;
  }
  fl_error* err = NULL;
  if (fl_ruleset_load_default(&rs, &err) != FL_OK) {
    fprintf(stderr, "default ruleset: %s\n", fl_error_message(err));
    return 1;
  }
  /* An optional second argument runs one test alone. */
  const char* only = argc > 2 ? argv[2] : "";
  if (!*only || strcmp(only, "busy") == 0) test_busy_while_another_thread_calls();
  if (!*only || strcmp(only, "reentry") == 0) test_reentry_from_callback();
  if (!*only || strcmp(only, "cancel") == 0) test_finish_after_cancel(argv[1]);
  if (!*only || strcmp(only, "threads") == 0) test_two_threads_feeding();
  fl_ruleset_free(rs);
  CHECK_SUMMARY();
}
