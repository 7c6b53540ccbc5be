"""Endings the fortieth endings audit (tests/cli/endings, e40-*.log, the
newest core training stack's threads of 2025-2026: PyTorch 2.6-2.11,
NCCL 2.26-2.28 with its RAS subsystem, DeepSpeed 0.17, Megatron-Core) got
no incident for, read where the program that printed them writes them
(issue #18):

- Open MPI's crash-signal report cut after its first line. The handler
  Open MPI installs for SIGABRT, SIGBUS, SIGFPE and SIGSEGV
  (opal/util/stacktrace.c show_stackframe, 4.1 and 5.0 alike) writes
  '[<host>:<pid>] *** Process received signal ***' by itself, then the
  'Signal: <name> (<n>)' line and the rest, and re-raises the signal, so
  the process dies. A whole report is led by its Signal line; a log that
  ends in the header showed nothing a rule read. The header is now a
  failure where the log ends in it (field `ending`), and only there.
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # An mpirun-launched all-reduce test whose rank crashed while NCCL set up
    # its connections: the log ends in the handler's first line.
    "ompi-header-ends-log": ("""\
node17:1208:1291 [2] NCCL INFO Channel 03/0 : 2[2] -> 3[3] via P2P/CUMEM
node17:1208:1291 [2] NCCL INFO Connected all rings, use ring PXN 0 GDR 1
node17:1208:1291 [2] NCCL INFO ncclCommInitRankConfig comm 0x55d0c1 rank 2 nranks 16 - Init COMPLETE
[node17:01208] *** Process received signal ***
""", "[node17:01208] *** Process received signal ***"),
    # Two ranks' handlers began at once; the paste ends after the second
    # header. The first header leads.
    "ompi-two-headers-end-log": ("""\
step 40 | loss 3.2214 | 1.92 it/s
[gpu-a3:30511] *** Process received signal ***
[gpu-a4:30877] *** Process received signal ***
""", "[gpu-a3:30511] *** Process received signal ***"),
}

# Whole reports: the Signal line names the crash and leads, not the header.
WHOLE = {
    "ompi-whole-report": ("""\
[node17:01208] *** Process received signal ***
[node17:01208] Signal: Bus error (7)
[node17:01208] Signal code: Non-existant physical address (2)
[node17:01208] Failing at address: 0x7f3a2c000000
[node17:01208] [ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x42520)[0x7f3a61e42520]
[node17:01208] *** End of error message ***
""", "Signal: Bus error (7)"),
}

HEALTHY = {
    # A run's notes that name the report's line in prose (no [host:pid]).
    "ompi-header-quoted-in-notes": """\
epoch 3 done, val_loss 0.412
if a rank crashes, grep the logs for 'Process received signal'
training complete
""",
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_failed_ending_leads(faultline_bin, validate, tmp_path, name):
    text, initiating = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=initiating)


@pytest.mark.parametrize("name", sorted(WHOLE))
def test_whole_report_led_by_signal_line(faultline_bin, validate, tmp_path, name):
    text, initiating = WHOLE[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=initiating)


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_healthy_ending_has_no_incident(faultline_bin, validate, tmp_path, name):
    assert not diagnose_text(faultline_bin, validate, tmp_path, HEALTHY[name])
