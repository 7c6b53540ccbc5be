/* CHECK for the C tests of the ABI: counts checks and failures, prints each
 * failure with its place, and CHECK_SUMMARY() ends main with the tally. One
 * copy for every test that sees only faultline.h. */
#ifndef FAULTLINE_TESTS_CAPI_C_CHECK_H_
#define FAULTLINE_TESTS_CAPI_C_CHECK_H_

#include <stdio.h>

static int failures = 0;
static int checks = 0;
#define CHECK(cond)                                                            \
  do {                                                                         \
    ++checks;                                                                  \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

#define CHECK_SUMMARY()                                            \
  do {                                                             \
    printf("%d passed, %d failed\n", checks - failures, failures); \
    return failures ? 1 : 0;                                       \
  } while (0)

static const char* kWatchdog =
    "[rank3]:[E1102 03:42:05.065000 52307 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective "
    "operation timeout: WorkNCCL(SeqNum=4711, OpType=ALLREDUCE, NumelIn=5, NumelOut=5, Timeout(ms)=1800000) "
    "ran for 1800085 milliseconds before timing out.\n";

#endif  // FAULTLINE_TESTS_CAPI_C_CHECK_H_
