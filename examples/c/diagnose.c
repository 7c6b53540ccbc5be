/* Embedding faultline from C: diagnose the paths given on the command line
 * with the embedded default ruleset and print the primary diagnosis.
 *
 *   cc diagnose.c $(pkg-config --cflags --libs faultline) -o diagnose
 *   ./diagnose ../incidents/xid79-two-hosts
 */
#include <faultline/faultline.h>
#include <stdio.h>

int main(int argc, char **argv) {
  /* While the major is 0, a minor release may change the ABI: the library
   * must have this header's major and minor. */
  if (fl_version_number() / 100 != FL_VERSION_NUMBER / 100) {
    fprintf(stderr, "libfaultline %s does not match this header\n", fl_version_string());
    return 1;
  }
  fl_ruleset *rules = NULL;
  fl_error *err = NULL;
  if (fl_ruleset_load_default(&rules, &err) != FL_OK) {
    fprintf(stderr, "ruleset: %s\n", fl_error_message(err));
    fl_error_free(err);
    return 2;
  }
  fl_session_options opts;
  fl_session_options_init(&opts, sizeof opts);
  fl_session *s = NULL;
  if (fl_session_new(&s, rules, &opts, &err) != FL_OK) {
    fprintf(stderr, "session: %s\n", fl_error_message(err));
    fl_error_free(err);
    fl_ruleset_free(rules);
    return 2;
  }
  int rc = 0;
  for (int i = 1; i < argc; ++i) {
    if (fl_session_add_path(s, argv[i]) != FL_OK) { /* e.g. FL_ERR_NOT_FOUND */
      fprintf(stderr, "%s\n", fl_session_last_error(s));
      rc = 2;
    }
  }
  fl_report *report = NULL;
  if (fl_session_finish(s, &report) != FL_OK) { /* FL_ERR_IO: no log at all */
    fprintf(stderr, "scan: %s\n", fl_session_last_error(s));
    rc = 2;
  } else if (fl_report_incident_count(report) == 0) {
    printf("no incident\n");
  } else {
    fl_incident_view inc;
    fl_report_incident(report, 0, &inc);
    printf("%s: %s\n", inc.rule, inc.title);
    printf("initiating: rank %lld on %s (confidence %.2f%s)\n", (long long)inc.rank,
           inc.host ? inc.host : "?", inc.confidence, inc.inferred ? ", inferred" : "");
    fl_evidence_view ev[4];
    size_t n = 0;
    if (fl_report_incident_evidence(report, 0, 0, ev, 4, &n) == FL_OK) {
      for (size_t k = 0; k < n; ++k) printf("  %s:%llu: %s\n", ev[k].source, (unsigned long long)ev[k].line, ev[k].text);
    }
    printf("fix: %s\nverify: %s\n", inc.fix, inc.verify);
  }
  /* Inputs that could not be read: the diagnosis covers the others. */
  for (size_t i = 0; report && i < fl_report_input_error_count(report); ++i) {
    fl_input_error_view e;
    e.size = sizeof e;
    if (fl_report_input_error(report, i, &e) == FL_OK) fprintf(stderr, "unreadable: %s\n", e.message);
    rc = 2;
  }
  fl_report_free(report);
  fl_session_free(s);
  fl_ruleset_free(rules);
  return rc;
}
