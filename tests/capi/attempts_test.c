/* A job's history through the C ABI: the first attempt's session exports
 * its bundle, the second attempt's session is given it as a prior bundle,
 * and the report lists both attempts and what recurs. The bounds on prior
 * bundles are refused with a message. */
#include <faultline/faultline.h>
#include <stdlib.h>
#include <string.h>

#include "c_check.h"

/* Rank 3 logs its steps and runs out of GPU memory at step 1200. */
static void feed_attempt(fl_session* s, const char* name, int hour) {
  uint32_t id = 0;
  char line[512];
  CHECK(fl_session_stream_open(s, name, &id) == FL_OK);
  for (int step = 1100; step <= 1200; step += 50) {
    snprintf(line, sizeof line,
             "[rank3]:[titan] 2026-11-02 %02d:%02d:00,000 - root - INFO - step: %d  loss:  2.1000  "
             "memory: 61.20GiB(77.32%%)  tps: 6,321  tflops: 366.06  mfu: 37.01%%\n",
             hour, (step - 1100) / 10, step);
    CHECK(fl_session_feed(s, id, line, strlen(line)) == FL_OK);
  }
  const char* oom =
      "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total "
      "capacity of 79.15 GiB of which 1.23 GiB is free.\n";
  CHECK(fl_session_feed(s, id, oom, strlen(oom)) == FL_OK);
  CHECK(fl_session_stream_close(s, id) == FL_OK);
}

static void test_prior_bundle(fl_ruleset* rs) {
  fl_session* s = NULL;
  CHECK(fl_session_new(&s, rs, NULL, NULL) == FL_OK);
  feed_attempt(s, "node02/train.log", 9);
  void* bundle = NULL;
  size_t len = 0;
  CHECK(fl_session_export_bundle(s, &bundle, &len) == FL_OK && len > 0);
  fl_session_free(s);

  CHECK(fl_session_new(&s, rs, NULL, NULL) == FL_OK);
  CHECK(fl_session_add_prior_bundle(s, bundle, len) == FL_OK);
  feed_attempt(s, "node02/train.log", 11);
  fl_report* r = NULL;
  CHECK(fl_session_finish(s, &r) == FL_OK);
  CHECK(fl_session_add_prior_bundle(s, bundle, len) == FL_ERR_INVALID_ARG);
  fl_session_free(s);
  fl_free(bundle);
  if (!r) return;

  CHECK(fl_report_attempt_count(r) == 2);
  fl_attempt_view a;
  a.size = sizeof a;
  CHECK(fl_report_attempt(r, 0, &a) == FL_OK);
  CHECK(a.index == 0 && strcmp(a.recognised, "bundle") == 0 && strcmp(a.label, "prior bundle 1") == 0);
  CHECK(a.primary_rule && strcmp(a.primary_rule, "cuda-oom") == 0 && a.rank == 3 && a.step == 1200);
  CHECK(fl_report_attempt(r, 1, &a) == FL_OK);
  CHECK(a.index == 1 && strcmp(a.recognised, "session") == 0);
  CHECK(a.primary_rule && strcmp(a.primary_rule, "cuda-oom") == 0 && a.step == 1200);
  CHECK(fl_report_attempt(r, 2, &a) == FL_ERR_INVALID_ARG);
  a.size = 4;
  CHECK(fl_report_attempt(r, 0, &a) == FL_ERR_INVALID_ARG);

  /* The primary is the second attempt's, and it recurs: same host, same step. */
  fl_incident_history h;
  h.size = sizeof h;
  CHECK(fl_report_incident_history(r, 0, &h) == FL_OK);
  CHECK(h.attempt == 1 && h.step == 1200);
  CHECK(h.recurrence_attempt_count == 1 && h.recurrence_attempts[0] == 0);
  CHECK(h.same_host == 1 && h.same_step == 1 && h.resume_failed_on_previous_checkpoint == 0);
  CHECK(fl_report_incident_history(r, fl_report_incident_count(r), &h) == FL_ERR_INVALID_ARG);
  fl_incident_view inc;
  CHECK(fl_report_incident(r, 0, &inc) == FL_OK && strstr(inc.explanation, "Recurrence:") != NULL);
  fl_report_free(r);
}

static void test_bounds(fl_ruleset* rs) {
  fl_session* s = NULL;
  CHECK(fl_session_new(&s, rs, NULL, NULL) == FL_OK);
  CHECK(fl_session_add_prior_bundle(s, NULL, 0) == FL_ERR_INVALID_ARG);
  CHECK(fl_session_add_prior_bundle(NULL, "x", 1) == FL_ERR_INVALID_ARG);
  CHECK(fl_session_add_prior_bundle(s, "not a bundle", 12) == FL_ERR_PARSE);
  CHECK(strstr(fl_session_last_error(s), "prior bundle 1") != NULL);
  /* Over the size bound: refused before it is read. */
  static const char big_byte = 0;
  CHECK(fl_session_add_prior_bundle(s, &big_byte, (size_t)FL_MAX_PRIOR_BUNDLE_BYTES + 1) == FL_ERR_INVALID_ARG);
  CHECK(strstr(fl_session_last_error(s), "64 MiB") != NULL);
  fl_session_free(s);

  /* At most FL_MAX_PRIOR_BUNDLES. */
  fl_session* one = NULL;
  CHECK(fl_session_new(&one, rs, NULL, NULL) == FL_OK);
  feed_attempt(one, "node02/train.log", 9);
  void* bundle = NULL;
  size_t len = 0;
  CHECK(fl_session_export_bundle(one, &bundle, &len) == FL_OK);
  fl_session_free(one);
  CHECK(fl_session_new(&s, rs, NULL, NULL) == FL_OK);
  for (int k = 0; k < FL_MAX_PRIOR_BUNDLES; ++k) CHECK(fl_session_add_prior_bundle(s, bundle, len) == FL_OK);
  CHECK(fl_session_add_prior_bundle(s, bundle, len) == FL_ERR_INVALID_ARG);
  CHECK(strstr(fl_session_last_error(s), "at most 16") != NULL);
  fl_session_free(s);
  fl_free(bundle);
}

/* One run: no attempts, and the incident's history says only its step. */
static void test_single_run(fl_ruleset* rs) {
  fl_session* s = NULL;
  CHECK(fl_session_new(&s, rs, NULL, NULL) == FL_OK);
  feed_attempt(s, "node02/train.log", 9);
  fl_report* r = NULL;
  CHECK(fl_session_finish(s, &r) == FL_OK);
  fl_session_free(s);
  if (!r) return;
  CHECK(fl_report_attempt_count(r) == 0);
  fl_incident_history h;
  h.size = sizeof h;
  CHECK(fl_report_incident_history(r, 0, &h) == FL_OK);
  CHECK(h.attempt == 0 && h.step == 1200 && h.recurrence_attempt_count == 0);
  fl_report_free(r);
}

int main(void) {
  (void)kWatchdog; /* c_check.h's, for the tests that feed it */
  fl_ruleset* rs = NULL;
  CHECK(fl_ruleset_load_default(&rs, NULL) == FL_OK);
  if (!rs) CHECK_SUMMARY();
  test_prior_bundle(rs);
  test_bounds(rs);
  test_single_run(rs);
  fl_ruleset_free(rs);
  CHECK_SUMMARY();
}
