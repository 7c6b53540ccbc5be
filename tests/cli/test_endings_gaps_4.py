"""Endings gaps of the wrong initiating line (issue #18, "initiating line
right"): a give-up line that names no cause, under the error its program
printed right above it.

A program that gives up often says so in a line of its own that names no
cause, right after the line that does: GNU tar's FATAL_ERROR (src/common.h)
is ERROR(...) and then fatal_exit(), which prints `tar: Error is not
recoverable: exiting now` under the error itself (`tar: <archive>: Cannot
open: No such file or directory`); gRPC's GPR_ASSERT before abseil's CHECK
(src/core/lib/gpr/log.cc gpr_assertion_failed) logs `assertion failed:
<expression>` at ERROR under the record that said why the expression is
false (thread_manager.cc's `Could not create grpc_sync_server worker-thread`
over `assertion failed: worker->created()`); an assert() on a constant
that is false (`assert(0)`, `assert(false)`: glibc's `Assertion `0'
failed.`, Apple's and the BSDs' `Assertion failed: (0), function ...`,
the Microsoft C runtime's `Assertion failed: 0, file ...`) names no
condition, and the program printed its own error just before it. Such
signals carry the
ruleset's `detail_line_above` flag, as the crash reports that name no cause
do: the line right above, of the same stream, that reads as an error
message is the evidence. An error message now also reads in `could not` and
`couldn't` (the words of the gRPC record above), beside `cannot` and `can't`.

Not taken: a line above that names no error (tar's `gzip: stdin: not in
gzip format`, a progress line, an INFO record), a warning, another
stream's line. The give-up line then stays the evidence.
"""
import pytest

from conftest import leading_incident

# (lines of the log, the text the first initiating line must hold)
TAKEN = {
    # GNU tar: the archive it could not open, then its fatal exit.
    "tar-cannot-open": ("Setting up task environment.\n"
                        "tar: job.tar: Cannot open: No such file or directory\n"
                        "tar: Error is not recoverable: exiting now\n",
                        "tar: job.tar: Cannot open: No such file or directory"),
    # The same under a log shipper's column prefix (CloudWatch's export).
    "tar-cannot-open-shipper-prefix": (
        "  | 2023-05-03T13:58:18.077-07:00 | Setting up task environment.\n"
        "  | 2023-05-03T13:58:24.322-07:00 | tar: data.tar.gz: Cannot open: Permission denied\n"
        "  | 2023-05-03T13:58:24.323-07:00 | tar: Error is not recoverable: exiting now\n",
        "tar: data.tar.gz: Cannot open: Permission denied"),
    # tar's decompressor side ('tar (child)'), its own error above.
    "tar-child-cannot-open": ("tar (child): weights.tgz: Cannot open: No such file or directory\n"
                              "tar (child): Error is not recoverable: exiting now\n",
                              "tar (child): weights.tgz: Cannot open"),
    # gRPC's GPR_ASSERT under the ERROR record that says why (Ray's raylet).
    "grpc-assert-could-not-create": (
        "(raylet) E1129 20:49:22.899110778 1346720 thread_manager.cc:42]       Could not create grpc_sync_server worker-thread\n"
        "(raylet) E1129 20:49:22.899130657 1346720 thread_manager.cc:145]      assertion failed: worker->created()\n"
        "(raylet) *** SIGABRT received at time=1701290962 on cpu 5 ***\n",
        "Could not create grpc_sync_server worker-thread"),
    # assert(0) under the program's own error, then the shell's abort report.
    "glibc-assert-zero": ("Running the Job\n"
                          "SetKernelsGpuData copy to cData failed invalid device symbol\n"
                          "autodock_gpu_64wi: ./device/cuda/kernels.cu:147: void SetKernelsGpuData(GpuData*): "
                          "Assertion `0' failed.\n"
                          "Aborted (core dumped)\n",
                          "SetKernelsGpuData copy to cData failed invalid device symbol"),
    # assert(false) in Apple's libc words, with no abort report after it.
    "bsd-assert-false": ("loading weights\n"
                         "error: cannot open weights file model.bin\n"
                         "Assertion failed: (false), function load_model, file model.c, line 412.\n",
                         "error: cannot open weights file model.bin"),
}


@pytest.mark.parametrize("name", sorted(TAKEN))
def test_give_up_line_reads_the_error_above(faultline_bin, validate, tmp_path, name):
    text, want = TAKEN[name]
    leading_incident(faultline_bin, validate, tmp_path, text, line=want)


# The give-up line stays the evidence: the line above names no error.
KEPT = {
    # gzip's complaint names no error word; tar's fatal line leads.
    "tar-under-gzip": ("gzip: stdin: not in gzip format\n"
                       "tar: Child returned status 1\n"
                       "tar: Error is not recoverable: exiting now\n",
                       "tar: Error is not recoverable: exiting now"),
    # A progress line above.
    "tar-under-progress": ("Extracting dataset shard 3 of 8\n"
                           "tar: Error is not recoverable: exiting now\n",
                           "tar: Error is not recoverable: exiting now"),
    # An INFO record above the assertion.
    "grpc-assert-under-info": (
        "I0312 08:01:44.120518306   41203 ev_epoll1_linux.cc:122]    grpc epoll fd: 3\n"
        "E0312 08:01:44.120518306   41203 server.cc:1034]            assertion failed: !started_\n",
        "assertion failed: !started_"),
    # A warning that could not do something is no error message.
    "grpc-assert-under-warning": (
        "W0312 08:01:44.120518306   41203 server.cc:1020]            Warning: could not set SO_REUSEPORT\n"
        "E0312 08:01:44.120518306   41203 server.cc:1034]            assertion failed: !started_\n",
        "assertion failed: !started_"),
    # An assertion on a real condition names it: it stays the evidence.
    "glibc-assert-condition": ("SetKernelsGpuData copy to cData failed invalid device symbol\n"
                               "vector_add: vector_add.cu:48: int main(): Assertion `n > 0' failed.\n",
                               "Assertion `n > 0' failed."),
    # assert(0) under a progress line: the assertion stays the evidence.
    "glibc-assert-zero-under-progress": ("step 40 loss 1.92\n"
                                         "train: loader.c:91: next_batch: Assertion `0' failed.\n",
                                         "Assertion `0' failed."),
}


@pytest.mark.parametrize("name", sorted(KEPT))
def test_give_up_line_keeps_leading_below_other_lines(faultline_bin, validate, tmp_path, name):
    text, want = KEPT[name]
    leading_incident(faultline_bin, validate, tmp_path, text, line=want)


def test_crash_report_reads_a_could_not_line_above(faultline_bin, validate, tmp_path):
    """A crash report that names no cause (a shell's segfault) under a C
    program's `Could not ...` line: that line is the evidence, as a `cannot`
    line already was."""
    text = ("loading model weights\n"
            "Could not map the shared memory segment /ggml-shm-4 (size 4294967296)\n"
            "./run.sh: line 7: 31337 Segmentation fault      (core dumped) ./main -m model.gguf\n")
    leading_incident(faultline_bin, validate, tmp_path, text, line="Could not map the shared memory segment")
