"""
Phrasing across versions, fourth pass (issue #18): NCCL 2.27 to 2.30, read
in the source of each release, whose messages the catalog's signals did not
read:

- NCCL 2.29 moved the socket calls to src/os/linux.cc, whose WARNs name
  the new functions: "ncclOsSocketTryAccept: exceeded error retry count
  after N attempts, <strerror>", "ncclOsSocketTryAccept: Accept failed:
  <strerror>", "ncclOsSocketPollConnect to <addr> failed with error
  <strerror>" and "ncclOsSocketStartConnect|ncclOsSocketPollConnect:
  connect to <addr> failed : <strerror>" (2.27 and 2.28: "socketTryAccept:
  exceeded error retry count after N attempts", "socketStartConnect: connect
  to ...", already read). Without NCCL_DEBUG PyTorch's DistBackendError
  prints the bare text under "Last error:". The old catalog gave the
  fallback. No post of the new forms was found: the excerpts are the 2.29.7
  format strings rendered with realistic values.
- NCCL 2.30's IB async event thread (net_ib/common.cc) puts the QP's
  numbers and state between its pointer and the event: "async fatal event
  on QP (0x...) qpn=N handle=N send_cq=N recv_cq=N state=N sq_psn=N
  rq_psn=N: local work queue catastrophic error" (CQ: "handle=N cqe=N");
  2.23 to 2.29 print "async fatal event on QP (0x...): ..." (already read).
  The excerpt is the 2.30.7 format rendered.
- NCCL 2.23 to 2.30 fail the next send, receive or test on a communicator
  whose QP, CQ or device had a fatal async event: "communicator encountered
  a fatal error (detected in ncclIbTest|ncclIbIsend|ncclIbIrecv)". It is
  NCCL's last error, so without NCCL_DEBUG the one line PyTorch prints. The
  excerpt with NCCL_DEBUG is NVIDIA/nccl#1905 as posted (net_ib.cc, the
  poster names 2.21.5); the "Last error:" one is rendered.
- NCCL 2.27 onwards check cuMulticastBindMem apart: "Failed to bind NVLink
  SHARP (NVLS) Multicast memory of size N : CUDA error E '<string>'." then
  "This is usually caused by a system or configuration error in the Fabric
  Manager or NVSwitches." (transport/nvls.cc). 2.27 and 2.28 fail so only
  under NCCL_NVLS_ENABLE=1, otherwise going on after an INFO that ends in
  "Proceeding without NVLS support." (no failure); 2.29 onwards always
  fail. Excerpts: NVIDIA/DCGM#304 (NCCL 2.30's WARN) and
  pytorch/pytorch#177472 (NCCL 2.29.3 under "Last error:"), as posted.
- NCCL 2.30's WARN header names the function after file:line
  ("transport/nvls.cc:344 (nvlsAllocateMem) NCCL WARN Cuda failure 401
  '...'"), which the NVLS CUDA failure signal, anchored on "nvls.cc:<line>
  NCCL WARN", did not read. The excerpt is the 2.30.7 CUCHECK rendered.

Already read in every version (rule examples, the earlier passes): NCCL's
"<fn>: connect to <addr> returned <strerror>, exceeded error retry count
after N attempts" in 2.27 to 2.30, "socketProgress: Connection closed by
remote peer" (unchanged to 2.30), "ncclOsSocketProgressOpt: Call to recv
from <addr> failed : <strerror>" (2.29 onwards, read by its "Call to ..."
part), NET/IB's completion errors in their 2.28 to 2.30 forms; Slurm 25.11
and 26.05 slurmstepd's CANCELLED AT ... DUE TO banners and oom_kill lines
(unchanged); the driver's GSP RPC timeout up to 595 (read by its Xid 119);
vLLM's KV cache sizing errors, "Worker proc ... died unexpectedly" and
"RayWorkerProc rank=[N] died unexpectedly"; SGLang's "Not enough memory.
Please try to increase --mem-fraction-static."; DeepSpeed 0.15.3 onwards no
longer raise "still have inflight params" (the rule says so). vLLM V1's
start-up check "Free memory on device [cuda:N ](F/T GiB) on startup is less
than desired GPU memory utilization" (0.9.1 onwards) stays with the
fallback: the corpus case vllm-25837 is labelled a configuration check that
no catalog reference names.
"""
import pytest

from conftest import diagnose_text, leading_incident


TRY_ACCEPT_2_29 = """\
gpu-c04:9102:9160 [2] os/linux.cc:136 NCCL WARN ncclOsSocketTryAccept: exceeded error retry count after 35 attempts, Network is down
gpu-c04:9102:9160 [2] NCCL INFO misc/socket.cc:693 -> 2
gpu-c04:9102:9160 [2] NCCL INFO bootstrap.cc:452 -> 2
"""

ACCEPT_FAILED_LAST_ERROR = """\
[rank3]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3690, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.29.3
[rank3]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. 
[rank3]: Last error:
[rank3]: ncclOsSocketTryAccept: Accept failed: Too many open files
"""

START_CONNECT_LAST_ERROR = """\
[rank1]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3690, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.29.3
[rank1]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. 
[rank1]: Last error:
[rank1]: ncclOsSocketStartConnect: connect to 10.20.0.14<39271> failed : Network is unreachable
"""

ASYNC_QP_2_30 = """\
node7:2345:2390 [3] transport/net_ib/common.cc:140 (ncclIbAsyncThreadMain) NCCL WARN NET/IB : mlx5_2:1 async fatal event on QP (0x7f3a2c00b1c0) qpn=4711 handle=12 send_cq=3 recv_cq=4 state=6 sq_psn=8153 rq_psn=2204: local work queue catastrophic error
node7:2345:2412 [3] NCCL INFO Channel 02/1 : 3[3] -> 11[3] [send] via NET/IB/2/GDRDMA
"""

FATAL_COUNT_1905 = """\
2025-11-09 15:39:31.043 +08:00 [2025-11-09 07:39:30] h100-28:238:1313 [0] transport/net_ib.cc:139 NCCL WARN communicator encountered a fatal error (detected in ncclIbTest)
"""

FATAL_COUNT_LAST_ERROR = """\
[rank5]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3690, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.27.5
[rank5]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. 
[rank5]: Last error:
[rank5]: communicator encountered a fatal error (detected in ncclIbTest)
"""

NVLS_BIND_DCGM_304 = """\
[2026-06-23 15:45:07] gpu-stress-dgc86-xfpt6:420:437 [5] transport/nvls.cc:379 (nvlsAllocateMem) NCCL WARN Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 401 'the operation cannot be performed in the present state'.
"""

NVLS_BIND_LAST_ERROR = """\
torch.distributed.DistBackendError: NCCL error in: /var/lib/jenkins/workspace/torch/csrc/distributed/c10d/NCCLUtils.cpp:93, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.29.3 
ncclUnhandledCudaError: Call to CUDA function failed. 
Last error: 
Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 401 'the operation cannot be performed in the present state'. 
This is usually caused by a system or configuration error in the Fabric Manager or NVSwitches. 
Disable NVLS (NCCL_NVLS_ENABLE=0) if you wish to avoid this error in the future. 
"""

NVLS_CUDA_FAILURE_2_30 = """\
gpu-node-3:4410:4462 [1] transport/nvls.cc:344 (nvlsAllocateMem) NCCL WARN Cuda failure 401 'the operation cannot be performed in the present state'
gpu-node-3:4410:4462 [1] NCCL INFO transport/nvls.cc:469 -> 1
"""

NVLS_BIND_SKIPPED_2_28 = """\
node2:242431:242479 [5] NCCL INFO Failed to bind NVLink SHARP (NVLS) Multicast memory of size 1207959552 : CUDA error 1 'invalid argument'. Proceeding without NVLS support.
node2:242431:242479 [5] NCCL INFO Connected all trees
"""


@pytest.mark.parametrize("text,rule,line", [
    (TRY_ACCEPT_2_29, "nccl-socket-error", "ncclOsSocketTryAccept: exceeded error retry count"),
    (ACCEPT_FAILED_LAST_ERROR, "nccl-socket-error", "ncclOsSocketTryAccept: Accept failed"),
    (START_CONNECT_LAST_ERROR, "nccl-socket-error", "ncclOsSocketStartConnect: connect to 10.20.0.14<39271> failed"),
    (ASYNC_QP_2_30, "nccl-remote-error", "qpn=4711"),
    (FATAL_COUNT_1905, "nccl-remote-error", "communicator encountered a fatal error"),
    (FATAL_COUNT_LAST_ERROR, "nccl-remote-error", "communicator encountered a fatal error"),
    (NVLS_BIND_DCGM_304, "nvswitch-fabric-error", "Failed to bind NVLink SHARP"),
    (NVLS_BIND_LAST_ERROR, "nvswitch-fabric-error", "Failed to bind NVLink SHARP"),
    (NVLS_CUDA_FAILURE_2_30, "nvswitch-fabric-error", "(nvlsAllocateMem) NCCL WARN Cuda failure 401"),
], ids=["try-accept-2-29", "accept-failed-last-error", "start-connect-last-error", "async-qp-2-30",
        "fatal-count-1905", "fatal-count-last-error", "nvls-bind-dcgm-304", "nvls-bind-last-error",
        "nvls-cuda-failure-2-30"])
def test_version_wording_gives_its_rule(faultline_bin, validate, tmp_path, text, rule, line):
    leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, any_line=line)


def test_nvls_bind_that_nccl_went_past_is_no_failure(faultline_bin, validate, tmp_path):
    # 2.27 and 2.28 log the same failed bind as INFO and carry on without
    # NVLS: the signal wants the error's text to end the line
    found = diagnose_text(faultline_bin, validate, tmp_path, NVLS_BIND_SKIPPED_2_28)
    assert found == [], [inc["rule"] for inc in found]
