"""Endings the ninth endings audit (tests/cli/endings, e9-*.log) read as
nothing or by the wrong line, read where the program that printed them
writes them (issue #18):

- Platforms' and runners' words for a child's exit status: Vertex AI's
  (and AI Platform's) "The replica <name> exited with a non-zero status of
  <code>", Determined's container failure "... (exit code <code>)" (aproto's
  ContainerFailure.Error), a runner's "failed with exit code: <code>", and Go's
  os.ProcessState, which writes a Windows child's status in hex ("exit status
  0xc0000005", an access violation: docker model runner's, ollama's).
- SkyPilot's end of a failed job: "ERROR: Job <id> failed with return code
  list: [<codes>]" and "Job finished (status: FAILED...)." (its JobStatus).
- GNU make's "*** [<target>] Error <status>" (job.c child_error), an exit
  status like any other; an error make was told to ignore is none.
- glog's FATAL level whatever its message (LOG(FATAL) aborts right after
  it): TensorFlow's "F <file>:<line>] could not set cudnn tensor descriptor:
  ...", not only a failed CHECK; the E level is no fatal line.
- dash's error that stops a script (sh_error: "<script>: <line>: cd: can't
  cd to <dir>", "Syntax error: ..."; status 2) leads the runner's exit
  status below it.
- Lightning's "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/<n>"
  (_init_dist_connection, just before init_process_group) as the last line
  of the log: rank 0 writes "All distributed processes registered" as soon
  as the group forms, so it is still waiting for the other ranks.
- The notebook front end's dialog for a kernel that died: "The kernel (for
  <path>) appears to have died. It will restart automatically." (the
  classic notebook's notificationarea.js, JupyterLab's sessioncontext).
- TensorRT's own error, whatever logger prints it ("[<file>::<function>::
  <line>] Error Code <n>: <subsystem> (...)", before 8.0 "[TensorRT]
  INTERNAL ERROR: Assertion failed: ..."), leads what follows from it
  (trtexec's "&&&& FAILED", a script's RuntimeError, make's error); the
  samples' "&&&& FAILED <test>" result line is a failure of its own.
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    "vertex-replica-exit": ("""\
Job failed with:
code: 3
message: "The replica workerpool0-0 exited with a non-zero status of 1. Termination reason: Error.
""", "exited with a non-zero status of 1"),
    "determined-container-exit": ("""\
[2021-04-28T01:55:38Z] e54b4385 || INFO: container failed with non-zero exit code: container failed with non-zero exit code: 1 (exit code 1)
Trial log stream ended. To reopen log stream, run: det trial logs -f 2
""", "(exit code 1)"),
    "argo-node-message": ("""\
STEP                 TEMPLATE  PODNAME                 DURATION  MESSAGE
 ✖ train-7kq2x       train     train-7kq2x-2894381924  41m       Error (exit code 1)
""", "Error (exit code 1)"),
    "runner-exit-code-colon": ("""\
Downloading weights ... done
Runner failed with exit code: 2
""", "Runner failed with exit code: 2"),
    "go-windows-exit-status-hex": ("""\
time=2026-01-28T10:00:01.000+01:00 level=INFO msg="starting runner"
Error: unable to load runner: llama.cpp terminated unexpectedly: exit status 0xc0000005
""", "exit status 0xc0000005"),
    "dash-cd-error-leads-runner-exit": ("""\
/opt/entrypoint.sh: 4: cd: can't cd to /workspace
Runner failed with exit code: 2
""", "cd: can't cd to /workspace"),
    "lightning-rank0-waits-at-init": ("""\
[rank: 0] Seed set to 42
Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4
""", "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4"),
    "skypilot-return-code-list": ("""\
(task, pid=2811) Epoch 3: loss 0.412
ERROR: Job 12 failed with return code list: [1]
✓ Job finished (status: FAILED).
""", "failed with return code list: [1]"),
    "skypilot-failed-setup": ("""\
(setup pid=1915) ERROR: Could not install packages due to an OSError
✓ Job finished (status: FAILED_SETUP).
""", "status: FAILED_SETUP"),
    "make-recipe-error": ("""\
g++ -O2 -o train main.o -lcudart
make: *** [Makefile:42: run] Error 2
""", "*** [Makefile:42: run] Error 2"),
    "glog-fatal-any-message": ("""\
I tensorflow/core/platform/cpu_feature_guard.cc:35] Your CPU supports instructions that this TensorFlow binary was not compiled to use: SSE4.1
F tensorflow/core/platform/cpu_feature_guard.cc:37] The TensorFlow library was compiled to use AVX instructions, but these aren't available on your machine.
""", "The TensorFlow library was compiled to use AVX instructions"),
    "jupyter-kernel-died": ("""\
Epoch 1/10
Kernel Restarting
The kernel for notebooks/train.ipynb appears to have died. It will restart automatically.
""", "appears to have died"),
    "trtexec-error-code-leads-failed": ("""\
[03/01/2024-10:00:00] [E] Error[2]: [ltWrapper.cpp::setupHeuristic::327] Error Code 2: Internal Error (Assertion cublasStatus == CUBLAS_STATUS_SUCCESS failed. )
[03/01/2024-10:00:00] [E] Engine set up failed
&&&& FAILED TensorRT.trtexec [TensorRT v8203] # trtexec --onnx=model.onnx
""", "Error Code 2: Internal Error"),
    "trt7-internal-error-leads-runtime-error": ("""\
[TensorRT] INTERNAL ERROR: Assertion failed: cublasStatus == CUBLAS_STATUS_SUCCESS
../rtSafe/cublas/cublasLtWrapper.cpp:279
Aborting...
Traceback (most recent call last):
  File "build.py", line 12, in <module>
    raise RuntimeError("Building engine failed!")
RuntimeError: Building engine failed!
make[1]: *** [engine] Error 1
""", "INTERNAL ERROR: Assertion failed"),
    "trt-test-failed-alone": ("""\
&&&& RUNNING TensorRT.sample_onnx_mnist [TensorRT v8601] # ./sample_onnx_mnist
&&&& FAILED TensorRT.sample_onnx_mnist [TensorRT v8601] # ./sample_onnx_mnist
""", "&&&& FAILED TensorRT.sample_onnx_mnist"),
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_ending_is_a_fatal_line(faultline_bin, validate, tmp_path, name):
    text, initiating = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=initiating)


HEALTHY = {
    "skypilot-succeeded": """\
(task, pid=4100) Hello from Docker!
✓ Job finished (status: SUCCEEDED).
""",
    "make-error-ignored": """\
rm build/*.o
make: [Makefile:12: clean] Error 1 (ignored)
g++ -O2 -o train main.o
""",
    "trtexec-passed": """\
[03/01/2024-10:00:00] [I] Engine built in 41.2 sec.
&&&& PASSED TensorRT.trtexec [TensorRT v8601] # trtexec --onnx=model.onnx --saveEngine=model.engine
""",
    "container-exit-code-zero": """\
INFO: container exited successfully with exit code 0 (exit code 0)
""",
    "lightning-init-went-on": """\
Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4
----------------------------------------------------------------------------------------------------
distributed_backend=nccl
All distributed processes registered. Starting with 4 processes
----------------------------------------------------------------------------------------------------

""",
    # Only rank 0 writes more after the group formed: another rank's log
    # ends on its line in a healthy run.
    "lightning-other-rank-line-last": """\
[rank: 2] Seed set to 42
Initializing distributed: GLOBAL_RANK: 2, MEMBER: 3/4
""",
    "dash-command-not-found-goes-on": """\
sh: 1: nvidia-smi: not found
Epoch 1: loss 0.52
""",
    "glog-error-level": """\
2016-06-28 10:00:00.100000: E tensorflow/core/grappler/optimizers/meta_optimizer.cc:502] layout failed: Invalid argument: MutableGraphView::SortTopologically error: detected edge(s) creating cycle(s)
2016-06-28 10:00:01: step 1, loss 2.31
2016-06-28 10:00:02: step 2, loss 2.29
""",
}


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_healthy_ending_is_no_incident(faultline_bin, validate, tmp_path, name):
    found = diagnose_text(faultline_bin, validate, tmp_path, HEALTHY[name])
    assert not [i for i in found if not (i["initiating"] or {}).get("survived")], \
        [(i["rule"], i["explanation"]) for i in found]
