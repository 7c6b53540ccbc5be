"""Endings the thirty-second endings audit (tests/cli/endings, e32-*.log, a
random sample of failed endings from LLM serving and inference stacks'
threads) gave no incident or the wrong first line, read where the program
that printed them writes them (issue #18):

- kubectl's table printer (printPod) puts an init container's state in the
  STATUS column after `Init:`: `Init:<reason>` for one that terminated with
  a reason (`Init:Error`) or waits with one (`Init:CrashLoopBackOff`),
  `Init:N/M` while the init containers run. A pod whose init container
  fails never starts its main containers (a KServe predictor whose
  storage-initializer cannot fetch the model). Only `Error` and
  `CrashLoopBackOff` were read, so a table whose failed row said
  `Init:CrashLoopBackOff` gave no incident; nor was a row a poster opened
  as inline code with a backtick.
- ggml's CUDA backend (ggml_cuda_error) prints `CUDA error: <string>`, the
  device and call site, and aborts; a catalog rule reads the strings it
  knows, and the fallback the others, but not where the poster quoted the
  lines with `> `: the GGML_ASSERT after it led instead.
"""
from conftest import ending_tests

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # A KServe predictor whose storage initializer keeps failing.
    "pods-init-crashloopbackoff": ("""\
NAME                                                         READY   STATUS                  RESTARTS   AGE
model-a-predictor-default-00001-deployment-64bb9bc765-x7k2p  0/2     Init:CrashLoopBackOff   94         27d
""", "Init:CrashLoopBackOff"),
    # kubectl get pods -A: an init container that exited with a reason.
    "pods-all-namespaces-init-error": ("""\
NAMESPACE   NAME                                                READY   STATUS       RESTARTS   AGE
serving     model-b-predictor-default-5f69b747f-2sjdd          0/1     Init:Error   3          6m
serving     model-c-predictor-default-7d9c8b6f5-q2lmn          1/1     Running      0          6m
""", "Init:Error"),
    # The failed row pasted as inline code.
    "pods-row-inline-code": ("""\
k get pods -A | grep model-d
`serving        model-d-predictor-default-vcwhr-deployment-oooo    0/3    CrashLoopBackOff   356        40m46s`
""", "CrashLoopBackOff"),
    # ggml's CUDA error report quoted with '> ', a string no catalog rule reads.
    "ggml-cuda-error-quoted": ("""\
> CUDA error: operation failed due to a previous error during capture
>   current device: 0, in function ggml_cuda_op_mul_mat at ggml/src/ggml-cuda.cu:1503
>   cudaGetLastError()
> GGML_ASSERT: ggml/src/ggml-cuda.cu:101: !"CUDA error"
""", "CUDA error: operation failed due to a previous error during capture"),
}

HEALTHY = {
    # Init containers still running, then the pod running: no failure.
    "pods-initializing": """\
NAME                                                         READY   STATUS            RESTARTS   AGE
model-a-predictor-default-00001-deployment-64bb9bc765-x7k2p  0/2     Init:0/1          0          12s
model-e-predictor-default-00001-deployment-7f6d5b9c4d-9zq8w  0/2     PodInitializing   0          40s
model-f-predictor-default-00001-deployment-5c8d7e6f9b-r4t6y  2/2     Running           0          3m
""",
}


test_failed_ending_leads, test_healthy_ending_has_no_incident = ending_tests(FAILURES, HEALTHY, FALLBACK)
