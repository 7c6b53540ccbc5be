#!/usr/bin/env bash
# Sanitizer builds (clang):
#  - ASan+UBSan (build-fuzz/, shared with fuzz.sh): the whole ctest suite, then
#    the CLI and golden pytest suites against that build's faultline binary,
#    then the Python binding tests with the ASan runtime preloaded into
#    python (leak checking off there: CPython's own allocations are not ours).
#  - TSan (build-tsan/): the multi-threaded tests (tsan_targets below), less
#    the single-threaded huge-input ones that TSan would only slow down.
#    capi.misuse_test is among them: two threads on one session, callbacks
#    re-entering it, cancel from another thread (issue #17). For it alone:
#    FL_TSAN_ONLY=capi_misuse_test builds and runs just that (a minute or so
#    once the library is built).
# Build directories are kept between runs; a clean clone builds them anew.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
ASAN_BUILD=${FL_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
TSAN_BUILD=${FL_TSAN_BUILD_DIR:-$ROOT/build-tsan}
fail=0
step() {  # step NAME CMD...: runs, reports, remembers failure
  local name=$1; shift
  local t0=$SECONDS
  if "$@"; then echo "sanitizers: $name ok ($((SECONDS - t0)) s)"
  else echo "sanitizers: $name FAILED ($((SECONDS - t0)) s)"; fail=$((fail + 1)); fi
}

command -v clang++ >/dev/null || { echo "sanitizers: clang++ not installed"; exit 1; }
# handle_sigbus=0: GuardedRead installs its own SIGBUS handler and a fault
# outside any guard must kill with SIGBUS as it does unsanitized (a death
# test checks that), not end in an ASan report with exit status 1.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:handle_sigbus=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

if [ -n "${FL_TSAN_ONLY:-}" ]; then
  .ci/configure-sanitized "$TSAN_BUILD" thread -DFL_BUILD_CLI=OFF
  step "tsan build ($FL_TSAN_ONLY)" cmake --build "$TSAN_BUILD" -j2 --target "$FL_TSAN_ONLY"
  [ $fail -eq 0 ] && step "tsan ctest ($FL_TSAN_ONLY)" ctest --test-dir "$TSAN_BUILD" --output-on-failure \
    -R "$(echo "$FL_TSAN_ONLY" | sed 's/^capi_/capi./')"
  echo "sanitizers: $((fail == 0 ? 1 : 0)) passed, $((fail == 0 ? 0 : 1)) failed"
  exit $fail
fi

# ---- ASan + UBSan
.ci/configure-sanitized "$ASAN_BUILD" address,undefined -DFL_FUZZ=ON
build_asan() { cmake --build "$ASAN_BUILD" -j2 >"$ASAN_BUILD/asan-build.log" 2>&1 || { tail -40 "$ASAN_BUILD/asan-build.log"; return 1; }; }
step "asan build" build_asan
[ $fail -eq 0 ] || { echo "sanitizers: 0 passed, 1 failed"; exit 1; }
step "asan+ubsan ctest" ctest --test-dir "$ASAN_BUILD" --output-on-failure -j2 --timeout 600
export FAULTLINE_BIN=$ASAN_BUILD/src/cli/faultline
export FAULTLINE_LIBRARY=$ASAN_BUILD/src/capi/libfaultline.so
step "asan pytest: cli and golden" python3 -m pytest -q -n "$(nproc)" -p no:cacheprovider tests/cli tests/golden
asan_rt=$(clang++ -print-file-name=libclang_rt.asan-x86_64.so)
if [ -d bindings/python/tests ] && [ -f "$asan_rt" ]; then
  py_asan() {
    ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 LD_PRELOAD=$asan_rt \
      python3 -m pytest -q -p no:cacheprovider bindings/python/tests
  }
  step "asan pytest: python binding" py_asan
fi

# ---- TSan
.ci/configure-sanitized "$TSAN_BUILD" thread -DFL_BUILD_CLI=OFF
# Only the tests that run scans on worker threads, or C API sessions from
# several threads: the scanner's own (whole scans, batches, streamed and
# compressed pipelines, merges of ranges, dense matches, confirm plans,
# ordinary lines on 2 threads), the fault-injection suite and the C API's.
# The scanner's single-threaded line-level tests (escapes, tracebacks, wraps,
# years, pdsh, CRI, dmesg, framing, costs, carried ranges) gain nothing
# from TSan; they run under ASan+UBSan above.
tsan_gtests=(scan_test scan_batch_test scan_stream_pipeline_test scan_merge_test
             scan_dense_match_test scan_confirm_plan_test scan_ordinary_lines_test faults_test)
tsan_targets=("${tsan_gtests[@]}" capi_test capi_misuse_test)
build_tsan() { cmake --build "$TSAN_BUILD" -j2 --target "${tsan_targets[@]}" >"$TSAN_BUILD/tsan-build.log" 2>&1 || { tail -40 "$TSAN_BUILD/tsan-build.log"; return 1; }; }
step "tsan build (${tsan_targets[*]})" build_tsan
# ctest names the gtest cases <executable>.<suite>.<case>, the C API's
# programs capi.<name> (capi_test's is capi.c_test).
tsan_tests="^(($(IFS='|'; echo "${tsan_gtests[*]}"))[.]|capi[.](c_test|misuse_test)\$)"
[ $fail -eq 0 ] && step "tsan ctest" ctest --test-dir "$TSAN_BUILD" --output-on-failure -j2 --timeout 600 \
  -R "$tsan_tests" -E 'HugeFaults|Bounds\.|HundredThousand'

echo "sanitizers: $((fail == 0 ? 1 : 0)) passed, $((fail == 0 ? 0 : 1)) failed"
[ $fail -eq 0 ]
