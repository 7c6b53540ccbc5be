"""Endings the eleventh endings audit (tests/cli/endings, e11-*.log) read as
nothing or by the wrong line, read where the program that printed them
writes them (issue #18):

- LLVM's libc++abi terminate handler (cxa_default_handlers.cpp; macOS,
  Android, clang with libc++): "libc++abi: terminating due to uncaught
  exception of type <type>: <what()>" ("libc++abi.dylib: terminating with
  ..." before LLVM 15), the type and the message on one line, then an
  abort: MLX's "[METAL] Command buffer execution failed: ..." reaches a log
  this way.
- The ROCm runtime's GPU page fault, "Memory access fault by GPU node-<n>
  (Agent handle: <p>) on address <a>. Reason: ...", and HIP's
  "hipErrorNoBinaryForGpu: Unable to find code object for all current
  devices!": both abort right after, so they lead the shell's "Aborted".
- llama.cpp's loader, "<function>: error loading model: <what>", and its
  callers' "failed to load model" / "main: error: unable to load model":
  the loader's reason leads what wraps it (ollama's runner, a Python
  exception).
- runc's "standard_init_linux.go:<line>: exec user process caused: <error>":
  the container's process never started (AWS Batch's "Essential container
  in task exited" follows).
- bash's "Is a directory" for a script it was given or a command of one
  (status 126), read like its "Permission denied".
- Composer's launcher, "Rank <n> crashed with exit code <code>.", an exit
  status like any other.
- The XLA coordination service's "DEADLINE_EXCEEDED: Barrier timed out. Id:
  ..." (jax.distributed): a task never reached the barrier, and every task
  gets the error.
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    "libcxxabi-metal-oom": ("""\
Loading pretrained model
libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)
""", "[METAL] Command buffer execution failed: Insufficient Memory"),
    "libcxxabi-dylib-before-llvm15": ("""\
libc++abi.dylib: terminating with uncaught exception of type std::invalid_argument: stoi: no conversion
./run.sh: line 4:  9917 Abort trap: 6           ./train --config run.yaml
""", "terminating with uncaught exception of type std::invalid_argument"),
    "hsa-memory-fault-leads-abort": ("""\
step 120 loss 2.31
Memory access fault by GPU node-1 (Agent handle: 0x55d2c0a41c80) on address 0x7f3a00000000. Reason: Page not present or supervisor privilege.
Aborted (core dumped)
""", "Memory access fault by GPU node-1"),
    "hip-no-binary-leads-abort": ("""\
"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"
./run.sh: line 3:   812 Aborted                 (core dumped) python train.py
""", "hipErrorNoBinaryForGpu: Unable to find code object"),
    "llama-load-error-leads-runner": ("""\
llama_model_load: error loading model: error loading model architecture: unknown model architecture: 'gemma9'
llama_load_model_from_file: failed to load model
time=2025-01-10T10:00:02.000Z level=ERROR source=sched.go:455 msg="error loading llama server" error="llama runner process has terminated: exit status 2"
""", "unknown model architecture: 'gemma9'"),
    "llama-main-unable-to-load": ("""\
main: build = 1100 (7d5f184)
main: error: unable to load model
""", "main: error: unable to load model"),
    "runc-exec-user-process": ("""\
standard_init_linux.go:228: exec user process caused: exec format error
""", "exec user process caused: exec format error"),
    "bash-script-is-a-directory": ("""\
/bin/bash: /opt/job/run.sh: Is a directory
""", "/opt/job/run.sh: Is a directory"),
    "bash-command-is-a-directory-leads-exit": ("""\
/opt/job/run.sh: line 7: /opt/models: Is a directory
Runner failed with exit code: 126
""", "/opt/models: Is a directory"),
    "composer-rank-crashed": ("""\
Building trainer...
ERROR:composer.cli.launcher:Rank 1 crashed with exit code 1.
Waiting up to 30 seconds for all training processes to terminate. Press Ctrl-C to exit immediately.
""", "Rank 1 crashed with exit code 1"),
    "coordination-barrier-timeout": ("""\
E0301 10:00:00.000000  1122 coordination_service.cc:1019] Stopping coordination service as cluster registration failed. This may be due to 1) some tasks crashed earlier before connecting, 2) some tasks were never scheduled, or 3) scheduling delays.
Original error: DEADLINE_EXCEEDED: Barrier timed out. Id: [Init]Wait_for_all_tasks_to_register::0. This usually happens because a task triggered the barrier too early or too slowly.
""", "DEADLINE_EXCEEDED: Barrier timed out"),
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_ending_is_a_fatal_line(faultline_bin, validate, tmp_path, name):
    text, initiating = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=initiating)


HEALTHY = {
    "llama-server-loaded": """\
main: loading model
llama_model_loader: loaded meta data with 25 key-value pairs and 579 tensors
main: model loaded
main: server is listening on http://127.0.0.1:8080 - starting the main loop
""",
    "composer-rank-finished": """\
INFO:composer.cli.launcher:Rank 0 finished successfully.
INFO:composer.cli.launcher:Rank 1 finished successfully.
""",
    # cp's refusal to copy a directory without -r is no shell failing to run
    # the job's program.
    "cp-omits-directory-goes-on": """\
cp: -r not specified; omitting directory 'ckpt': Is a directory
Epoch 1: loss 0.52
""",
    # A Python logger's own wording, capitalised, is no llama.cpp loader line.
    "python-logger-error-loading-model": """\
2024-05-01 10:00:00 WARNING Error loading model: falling back to fp16 weights
2024-05-01 10:00:05 INFO step 1 loss 2.31
""",
}


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_healthy_ending_is_no_incident(faultline_bin, validate, tmp_path, name):
    found = diagnose_text(faultline_bin, validate, tmp_path, HEALTHY[name])
    assert not [i for i in found if not (i["initiating"] or {}).get("survived")], \
        [(i["rule"], i["explanation"]) for i in found]
