"""Endings the fourteenth endings audit (tests/cli/endings, e14-*.log) read as
nothing or by the wrong line, read where the program that printed them
writes them (issue #18):

- The Slurm plugin pyxis, when the enroot command it ran for a step fails,
  reports the child's exit ("pyxis: child <pid> failed with error code: 1",
  "pyxis: container start failed with error code: 1") and then prints the
  child's own log, each line as "pyxis:     <line>" (common.c
  memfd_print_log): enroot's "[ERROR] <message>" (src/common.sh) and the
  errors of the tools it ran say why, and lead the exit reports; enroot's
  "[INFO]" and "[WARN]" lines do not.
- Metaflow's local runtime (metaflow/runtime.py): a task's "Task failed."
  under its "[<run>/<step>/<task> (pid N)]" prefix, then "Workflow failed."
  when no retry is left; a task that finished successfully after a failed
  one shows that the failed one was retried and the run went on.
- A glog CHECK_EQ of a CUDA call's result against cudaSuccess that failed
  with 2, cudaErrorMemoryAllocation, then cudaGetErrorString's "out of
  memory" (Caffe's CUDA_CHECK, copied widely; OneFlow's OF_CUDA_CHECK): a
  CUDA out-of-memory error, not an unexplained check failure.
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"
CUDA_OOM = "cuda-oom"

FAILURES = {
    "pyxis-enroot-error-leads-child-exit": ("""\
pyxis: importing docker image: nvcr.io#nvidia/pytorch:24.01-py3
slurmstepd: error: pyxis: child 4242 failed with error code: 1
slurmstepd: error: pyxis: failed to import docker image
slurmstepd: error: pyxis: printing enroot log file:
slurmstepd: error: pyxis:     [INFO] Querying registry for permission grant
slurmstepd: error: pyxis:     [INFO] Authenticating with user: <anonymous>
slurmstepd: error: pyxis:     [ERROR] URL https://nvcr.io/proxy_auth?scope=repository:nvidia/pytorch:pull returned error code: 401 Unauthorized
slurmstepd: error: pyxis: couldn't start container
slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1
srun: error: gpu17: task 0: Exited with exit code 1
""", FALLBACK, "returned error code: 401 Unauthorized"),
    "pyxis-tool-error-in-quoted-log": ("""\
slurmstepd: error: pyxis: child 881 failed with error code: 1
slurmstepd: error: pyxis: failed to import docker image
slurmstepd: error: pyxis: printing contents of log file ...
slurmstepd: error: pyxis:     [INFO] Creating squashfs filesystem...
slurmstepd: error: pyxis:     Parallel mksquashfs: Using 16 processors
slurmstepd: error: pyxis:     Write failed because No space left on device
slurmstepd: error: pyxis:     FATAL ERROR:Failed to write to output filesystem
srun: error: gpu03: task 0: Exited with exit code 1
""", FALLBACK, "Write failed because No space left on device"),
    "pyxis-container-start-switchroot": ("""\
slurmstepd: error: pyxis: container start failed with error code: 1
slurmstepd: error: pyxis: printing enroot log file:
slurmstepd: error: pyxis:     enroot-switchroot: failed to execute: /bin/sh: No such file or directory
slurmstepd: error: pyxis: couldn't start container
srun: error: node2: task 1: Exited with exit code 1
""", FALLBACK, "enroot-switchroot: failed to execute: /bin/sh"),
    "metaflow-task-failed": ("""\
2024-03-01 09:12:40.101 [1709284321/start/1 (pid 5101)] Task finished successfully.
2024-03-01 09:12:40.350 [1709284321/train/2 (pid 5120)] Task is starting.
2024-03-01 09:12:44.210 [1709284321/train/2 (pid 5120)] Task failed with a segmentation fault.
2024-03-01 09:12:44.211 Workflow failed.
2024-03-01 09:12:44.211 Terminating 0 active tasks...
""", FALLBACK, "Task failed with a segmentation fault."),
    "metaflow-workflow-failed-alone": ("""\
2024-03-01 09:12:44.211 Workflow failed.
2024-03-01 09:12:44.211 Terminating 2 active tasks...
2024-03-01 09:12:44.230 Flushing logs...
""", FALLBACK, "Workflow failed."),
    "caffe-cuda-check-oom": ("""\
I0415 10:21:40.101010  5121 solver.cpp:218] Iteration 0 (0 iter/s, 0.5s/20 iters), loss = 6.9
F0415 10:21:47.123456  5121 syncedmem.cpp:71] Check failed: error == cudaSuccess (2 vs. 0)  out of memory
*** Check failure stack trace: ***
    @     0x7f2c0a1b2daa  (unknown)
    @     0x7f2c0a1b2ce4  (unknown)
""", CUDA_OOM, "Check failed: error == cudaSuccess (2 vs. 0)  out of memory"),
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_ending_leads(faultline_bin, validate, tmp_path, name):
    text, rule, initiating = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, line=initiating)


HEALTHY = {
    "pyxis-imported-image": """\
pyxis: importing docker image: nvcr.io#nvidia/pytorch:24.01-py3
pyxis: imported docker image: nvcr.io#nvidia/pytorch:24.01-py3
epoch 3 done
""",
    # A failed task with a retry left is run again; its later success shows
    # the run went on.
    "metaflow-task-retried-then-finished": """\
2024-03-01 09:12:44.210 [1709284321/train/2 (pid 5120)] Task failed.
2024-03-01 09:12:44.300 [1709284321/train/2 (pid 5188)] Task is starting (retry).
2024-03-01 09:13:02.514 [1709284321/train/2 (pid 5188)] Task finished successfully.
2024-03-01 09:13:02.800 [1709284321/end/3 (pid 5201)] Task is starting.
2024-03-01 09:13:04.950 [1709284321/end/3 (pid 5201)] Task finished successfully.
2024-03-01 09:13:05.010 Done!
""",
}


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_healthy_ending_is_no_incident(faultline_bin, validate, tmp_path, name):
    found = diagnose_text(faultline_bin, validate, tmp_path, HEALTHY[name])
    assert not [i for i in found if not (i["initiating"] or {}).get("survived")], \
        [(i["rule"], i["explanation"]) for i in found]
