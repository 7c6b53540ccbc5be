"""Messages of the newest library releases that the catalog's signals did not
read (issue #18, "Phrasing across versions"), each as the library prints it:

- SGLang's memory pool sizing at start-up: "Not enough memory. Please try to
  increase --mem-fraction-static." (with " Current value:
  mem_fraction_static=F" since 2025), vLLM's "No available memory for the
  cache blocks" in SGLang's words.
- vLLM v1's GPU model runner wraps an out-of-memory of its start-up dummy
  runs: "CUDA out of memory occurred when warming up sampler with N dummy
  requests." (and "... warming up pooler (task=...)").
- NCCL 2.21-2.28's ncclCudaMalloc: "Failed to CUDA malloc N bytes", beside
  the calloc variants.
- PyTorch 2.4-2.9 ProcessGroupNCCL heartbeat monitor: "Received a dump signal
  due to a collective timeout from this local rank" / "from  rank N" and the
  fatal "Terminating the process after attempting to dump debug info, due to
  collective timeout or exception." / "... due to ProcessGroupNCCL watchdog
  hang.": the only lines of a collective timeout on the ranks whose own
  watchdog did not fire. The rank named in "from  rank N" is the suspect,
  not the rank that logged it.
- torch.cuda's capability check in later 2.x releases: "Minimum and Maximum cuda
  capability supported by this version of PyTorch is" / "(7.0) - (12.0)"
  (e.g. a Pascal card under the CUDA 12.8 wheels), and before it "PyTorch no
  longer supports this GPU because it is too old.".
- torch.load's weights-only refusal (default since 2.6), when the excerpt
  keeps only its "WeightsUnpickler error: Unsupported global: GLOBAL ..." line.
- pyzmq's bind failure as vLLM v1 and SGLang raise it: "zmq.error.ZMQError:
  Address already in use (addr='tcp://...')" (Windows: "Address in use").
- NCCL 2.23-2.28 IB async events name the QP or CQ: "async fatal event on QP
  (0x...): local work queue catastrophic error".
- PyTorch 2.x MapAllocator's posix_fallocate of a shared tensor: "unable to
  allocate shared memory(shm) for file </torch_...>: No space left on device
  (28)" (or "Success (0)").
- Triton's bundled ptxas older than the GPU: "ptxas fatal   : Value 'sm_120'
  is not defined for option 'gpu-name'" (Blackwell under CUDA 12.x ptxas).
- The caching allocator's expandable segments map memory through the driver
  API, whose failure reads "CUDA driver error: out of memory"; SGLang's
  "multimem all-gather disabled (CUDA driver error: out of memory)" is a
  fallback it takes, no failure.
- torch.distributed.elastic's etcd rendezvous backend: "RendezvousConnectionError:
  The connection to etcd has failed.", the C10d store backend's sentence for etcd.
- PyTorch's MPS allocator: "MPS backend out of memory (MPS allocated: ...). Tried
  to allocate ... on private pool."
- NCCL keeps its last WARN's text without the "host:pid:tid [dev] file:line
  NCCL WARN" header, NCCL_DEBUG set or not, and PyTorch 2.x's DistBackendError
  prints it under "Last error:": without NCCL_DEBUG the bare line
  ("socketStartConnect: Connect to ... failed : ...", "socketProgress:
  Connection closed by remote peer ...", "Error: failed to extend
  /dev/shm/nccl-... to N bytes, ...") is all a log holds.
- PyTorch Lightning's resume from a path that is not there: "Checkpoint at
  <path> not found. Aborting training."
- c10d's bind failure on Windows: "(system error: 10048 - Only one usage of
  each socket address ... is normally permitted.)".
- wandb's service start: "ServiceStartTimeoutError: Timed out waiting for
  wandb service to start after N seconds." (its module moved between
  releases).
"""
import pytest

from conftest import diagnose_text, first_incident, leading_incident


SGLANG_KV_POOL = """\
[2025-03-29 18:18:33 TP0] Load weight end. type=Gemma3ForConditionalGeneration, dtype=torch.bfloat16, avail mem=2.41 GB, mem usage=19.63 GB.
[2025-03-29 18:18:34 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", line 924, in init_memory_pool
    raise RuntimeError(
RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.
"""

VLLM_WARMUP_OOM = """\
(EngineCore_DP0 pid=312) INFO 10-25 13:12:40 [gpu_worker.py:298] Available KV cache memory: 3.10 GiB
(EngineCore_DP0 pid=312) ERROR 10-25 13:12:42 [core.py:708] EngineCore failed to start.
(EngineCore_DP0 pid=312) ERROR 10-25 13:12:42 [core.py:708] RuntimeError: CUDA out of memory occurred when warming up sampler with 1024 dummy requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.
"""

NCCL_CUDA_MALLOC = """\
node3:41201:41288 [2] NCCL INFO Channel 00/0 : 2[2] -> 3[3] via P2P/CUMEM
node3:41201:41288 [2] include/alloc.h:297 NCCL WARN Failed to CUDA malloc 2097152 bytes
node3:41201:41288 [2] NCCL INFO transport/p2p.cc:204 -> 1
"""

DUMP_LOCAL_RANK = """\
[rank3]:[E606 09:09:08.170276834 ProcessGroupNCCL.cpp:2732] [PG ID 0 PG GUID 0(default_pg) Rank 3] First PG on this rank to signal dumping.
[rank3]:[E606 09:09:08.172519935 ProcessGroupNCCL.cpp:1987] [PG ID 0 PG GUID 0(default_pg) Rank 3] Received a dump signal due to a collective timeout from this local rank and we will try our best to dump the debug info. Last enqueued NCCL work: 1, last completed NCCL work: -1.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc.
[rank3]:[E606 09:09:08.172612001 ProcessGroupNCCL.cpp:1700] [PG ID 0 PG GUID 0(default_pg) Rank 3] ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1, only active collectives: 0
"""

DUMP_FROM_RANK = """\
[rank0]:[E804 23:05:54.817424543 ProcessGroupNCCL.cpp:1914] [PG ID 0 PG GUID 0(default_pg) Rank 0] Received a dump signal due to a collective timeout from  rank 13 and we will try our best to dump the debug info. Last enqueued NCCL work: 1261, last completed NCCL work: 1261.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. 
[rank0]:[E804 23:05:54.817610114 ProcessGroupNCCL.cpp:1628] [PG ID 0 PG GUID 0(default_pg) Rank 0] ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1, only active collectives: 0
"""

WATCHDOG_HANG_EXIT = """\
[rank2]:[E1229 20:29:13.084104922 ProcessGroupNCCL.cpp:1628] [PG ID 0 PG GUID 0(default_pg) Rank 2] ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1, only active collectives: 0
[rank2]:[F1229 20:37:13.091528310 ProcessGroupNCCL.cpp:1306] [PG ID 0 PG GUID 0(default_pg) Rank 2] [PG ID 0 PG GUID 0(default_pg) Rank 2] Terminating the process after attempting to dump debug info, due to ProcessGroupNCCL watchdog hang.
"""

CAPABILITY_RANGE = """\
/opt/venv/lib/python3.12/site-packages/torch/cuda/__init__.py:287: UserWarning: 
    Found GPU0 NVIDIA GeForce GTX 1080 Ti which is of cuda capability 6.1.
    Minimum and Maximum cuda capability supported by this version of PyTorch is
    (7.0) - (12.0)
    
  warnings.warn(
"""

CAPABILITY_TOO_OLD = """\
/opt/conda/lib/python3.8/site-packages/torch/cuda/__init__.py:104: UserWarning: 
    Found GPU0 Tesla K80 which is of cuda capability 3.7.
    PyTorch no longer supports this GPU because it is too old.
    The minimum cuda capability supported by this library is 5.0.
    
  warnings.warn(old_gpu_warn % (d, name, major, minor, min_arch // 10, min_arch % 10))
"""

WEIGHTS_UNPICKLER = """\
	(1) In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can result in arbitrary code execution. Do it only if you got the file from a trusted source.
	(2) Alternatively, to load with `weights_only=True` please check the recommended steps in the following error message.
	WeightsUnpickler error: Unsupported global: GLOBAL numpy.core.multiarray._reconstruct was not an allowed global by default. Please use `torch.serialization.add_safe_globals([_reconstruct])` or the `torch.serialization.safe_globals([_reconstruct])` context manager to allowlist this global if you trust this class/function.
"""

ZMQ_IN_USE = """\
  File "/usr/local/lib/python3.12/dist-packages/vllm/utils/__init__.py", line 2711, in make_zmq_socket
    socket.bind(path)
  File "/usr/local/lib/python3.12/dist-packages/zmq/sugar/socket.py", line 311, in bind
    super().bind(addr)
  File "zmq/backend/cython/_zmq.py", line 917, in zmq.backend.cython._zmq.Socket.bind
  File "zmq/backend/cython/_zmq.py", line 179, in zmq.backend.cython._zmq._check_rc
zmq.error.ZMQError: Address already in use (addr='tcp://localhost:5557')
"""

IB_QP_FATAL = """\
node7:2345:2390 [3] transport/net_ib.cc:190 NCCL WARN NET/IB : mlx5_2:1 async fatal event on QP (0x7f3a2c00b1c0): local work queue catastrophic error
node7:2345:2390 [3] transport/net_ib.cc:149 NCCL WARN communicator encountered a fatal error (detected in ncclIbTest)
"""

TORCH_SHM_FALLOCATE = """\
  File "/opt/venv/lib/python3.11/site-packages/torch/multiprocessing/reductions.py", line 618, in reduce_storage
    metadata = storage._share_filename_cpu_()
RuntimeError: unable to allocate shared memory(shm) for file </torch_43012_2214598790_0>: No space left on device (28)
"""

TRITON_PTXAS_ARCH = """\
triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error
`ptxas` stderr:
ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'
"""

DRIVER_API_OOM = """\
  File "/opt/venv/lib/python3.12/site-packages/unsloth_zoo/gradient_checkpointing.py", line 502, in initialize_unsloth_gradient_checkpointing
    x = torch.empty(n_bytes, dtype=torch.uint8, device=f"cuda:{i}")
RuntimeError: CUDA driver error: out of memory
"""

MULTIMEM_FALLBACK = """\
[2026-03-02 10:14:07 TP1] multimem all-gather disabled (CUDA driver error: out of memory)
[2026-03-02 10:14:09 TP1] Capture cuda graph end. Time elapsed: 8.21 s. mem usage=1.12 GB. avail mem=6.40 GB.
[2026-03-02 10:14:10] The server is fired up and ready to roll!
"""

ETCD_RDZV = """\
[2026-02-11 09:14:03,118] torch.distributed.run: [WARNING] master_addr is only used for static rdzv_backend and when rdzv_endpoint is not specified.
torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to etcd has failed. See inner exception for details.
"""

MPS_OOM = """\
  File "/opt/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py", line 125, in forward
    return F.linear(input, self.weight, self.bias)
RuntimeError: MPS backend out of memory (MPS allocated: 17.99 GB, other allocations: 1.47 GB, max allowed: 18.13 GB). Tried to allocate 256 bytes on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).
"""

NCCL_ERR_HEAD = """\
[rank1]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:77, {kind}, NCCL version 2.21.5
[rank1]: {result}
[rank1]: Last error:
[rank1]: {last}
"""

LAST_ERROR_CONNECT = NCCL_ERR_HEAD.format(
    kind="unhandled system error (run with NCCL_DEBUG=INFO for details)",
    result="ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
    last="socketStartConnect: Connect to 10.0.0.2<45763> failed : Software caused connection abort")

LAST_ERROR_PEER_CLOSED = NCCL_ERR_HEAD.format(
    kind="remote process exited or there was a network error",
    result="ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
    last="socketProgress: Connection closed by remote peer ip-172-31-36-217.eu-north-1.compute.internal<59116>")

LAST_ERROR_SHM = NCCL_ERR_HEAD.format(
    kind="unhandled system error (run with NCCL_DEBUG=INFO for details)",
    result="ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
    last="Error: failed to extend /dev/shm/nccl-WU88OE to 9637892 bytes, error: No space left on device (28)")

WANDB_SERVICE = """\
  File "/opt/venv/lib/python3.10/site-packages/wandb/sdk/wandb_init.py", line 1195, in init
    raise e
wandb.sdk.service.service.ServiceStartTimeoutError: Timed out waiting for wandb service to start after 30.0 seconds. Try increasing the timeout with the `_service_wait` setting.
"""

LIGHTNING_CKPT_MISSING = """\
Restoring states from the checkpoint path at /opt/runs/exp3/checkpoints/last.ckpt
FileNotFoundError: Checkpoint at /opt/runs/exp3/checkpoints/last.ckpt not found. Aborting training.
"""

WINDOWS_BIND = """\
[W1205 10:00:00.000000000 socket.cpp:752] [c10d] The server socket has failed to bind to [AIEDX-AsusTUF]:29400 (system error: 10048 - Only one usage of each socket address (protocol/network address/port) is normally permitted.).
"""


@pytest.mark.parametrize("text,rule,line", [
    (SGLANG_KV_POOL, "cuda-oom", "Not enough memory. Please try to increase --mem-fraction-static."),
    (VLLM_WARMUP_OOM, "cuda-oom", "CUDA out of memory occurred when warming up sampler"),
    (NCCL_CUDA_MALLOC, "cuda-oom", "Failed to CUDA malloc 2097152 bytes"),
    (DUMP_LOCAL_RANK, "nccl-watchdog-timeout", "from this local rank"),
    (WATCHDOG_HANG_EXIT, "nccl-watchdog-timeout", "due to ProcessGroupNCCL watchdog hang."),
    (CAPABILITY_RANGE, "cuda-no-kernel-image", "Minimum and Maximum cuda capability supported"),
    (CAPABILITY_TOO_OLD, "cuda-no-kernel-image", "PyTorch no longer supports this GPU because it is too old."),
    (WEIGHTS_UNPICKLER, "checkpoint-resume-failure", "WeightsUnpickler error: Unsupported global: GLOBAL"),
    (ZMQ_IN_USE, "restart-port-in-use", "ZMQError: Address already in use"),
    (IB_QP_FATAL, "nccl-remote-error", "async fatal event on QP"),
    (TORCH_SHM_FALLOCATE, "shm-exhaustion", "unable to allocate shared memory(shm) for file"),
    (TRITON_PTXAS_ARCH, "cuda-no-kernel-image", "Value 'sm_121a' is not defined for option 'gpu-name'"),
    (DRIVER_API_OOM, "cuda-oom", "CUDA driver error: out of memory"),
    (ETCD_RDZV, "rendezvous-connection-error", "The connection to etcd has failed."),
    (MPS_OOM, "cuda-oom", "MPS backend out of memory"),
    (LAST_ERROR_CONNECT, "nccl-socket-error", "socketStartConnect: Connect to 10.0.0.2<45763> failed"),
    (LAST_ERROR_PEER_CLOSED, "nccl-remote-error", "Connection closed by remote peer"),
    (LAST_ERROR_SHM, "shm-exhaustion", "failed to extend /dev/shm/nccl-WU88OE"),
    (WANDB_SERVICE, "wandb-tracking-failure", "Timed out waiting for wandb service to start"),
    (LIGHTNING_CKPT_MISSING, "checkpoint-resume-failure", "not found. Aborting training."),
    (WINDOWS_BIND, "restart-port-in-use", "system error: 10048"),
], ids=["sglang-kv-pool", "vllm-warmup-oom", "nccl-cuda-malloc", "dump-local-rank", "watchdog-hang-exit",
        "capability-range", "capability-too-old", "weights-unpickler", "zmq-in-use", "ib-qp-fatal",
        "torch-shm-fallocate", "triton-ptxas-arch", "driver-api-oom", "etcd-rdzv", "mps-oom",
        "last-error-connect", "last-error-peer-closed", "last-error-shm", "wandb-service",
        "lightning-ckpt-missing", "windows-bind"])
def test_newest_wording_gives_its_rule(faultline_bin, validate, tmp_path, text, rule, line):
    leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, any_line=line)


def test_dump_signal_from_another_rank_suspects_that_rank(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, DUMP_FROM_RANK)
    assert inc["rule"] == "nccl-watchdog-timeout", inc["explanation"]
    # rank 0 logged it; rank 13's collective timed out
    assert inc["initiating"]["suspects"] == [13], inc["initiating"]


def test_multimem_fallback_is_no_oom(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, MULTIMEM_FALLBACK)
    assert all(inc["rule"] != "cuda-oom" for inc in found), [inc["rule"] for inc in found]
