"""The same CUDA failure as other libraries word it (issue #18: each signal
from the message text of every maintained library version that prints it):

- Triton's launcher raises "Triton Error [CUDA]: " + cuGetErrorString(code),
  which gives the bare description ("out of memory", "device-side assert
  triggered") where newer releases put the CUDA_ERROR_ name first.
- PyTorch built for ROCm prints its CUDA checks hipified: "HIP error: out of
  memory", "HIP error: device-side assert triggered".
- jaxlib before the absl status names printed XLA's allocator failure under
  TensorFlow's code name: "Resource exhausted: Out of memory while trying to
  allocate N bytes." (now "RESOURCE_EXHAUSTED: ...").
- CuPy's memory pool (Chainer's trainer prints it as "Exception in main
  training loop: ...") words its OOM "out of memory to allocate N bytes
  (total N bytes)" (CuPy 2 to 5), then "Out of memory allocating N,NNN
  bytes (allocated so far: N,NNN bytes)".
- cudaErrorCallRequiresNewerDriver's description, "API call is not supported
  in the installed CUDA driver", is the runtime asking for a newer driver.
- NCCL >= 2.27 words a socket connect that fails outright "<func>: connect
  to <addr> failed : <strerror>" (lower case, where older releases wrote
  "Connect to"); NCCL 2.4 to 2.11 printed an IB completion error without
  the peer ("NET/IB : Got completion with error 5, opcode 1, ...").
- cuDNN's own allocation failure, CUDNN_STATUS_ALLOC_FAILED, as TensorFlow's
  cuda_dnn.cc logs it ("Could not create cudnn handle: ") when its
  preallocation left cuDNN no device memory.
"""
from conftest import first_incident, initiating_texts


TRITON_OOM = """\
Traceback (most recent call last):
  File "/opt/app/train.py", line 212, in <module>
    loss = model(batch).loss
  File "/opt/venv/lib/python3.10/site-packages/triton/compiler/compiler.py", line 380, in _init_handles
    self.module, self.function, self.n_regs, self.n_spills = driver.active.utils.load_binary(
RuntimeError: Triton Error [CUDA]: out of memory
"""

TRITON_ASSERT = """\
[rank0]: Traceback (most recent call last):
[rank0]:   File "/opt/app/train.py", line 97, in <module>
[rank0]:     out = fused_cross_entropy(logits, labels)
[rank0]:   File "/opt/venv/lib/python3.10/site-packages/triton/backends/nvidia/driver.py", line 444, in __call__
[rank0]:     self.launch(*args, **kwargs)
[rank0]: RuntimeError: Triton Error [CUDA]: device-side assert triggered
"""

HIP_OOM = """\
Traceback (most recent call last):
  File "/opt/app/infer.py", line 40, in <module>
    model = model.to("cuda")
RuntimeError: HIP error: out of memory
HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing AMD_SERIALIZE_KERNEL=3
Compile with `TORCH_USE_HIP_DSA` to enable device-side assertions.
"""

JAXLIB_OLD_OOM = """\
2019-06-13 01:17:08.886805: E external/org_tensorflow/tensorflow/compiler/xla/python/local_client.cc:672] Execution of replica 0 failed: Resource exhausted: Out of memory while trying to allocate 5520758552 bytes.
Traceback (most recent call last):
  File "/opt/app/train.py", line 58, in <module>
    params, opt_state = update(params, opt_state, batch)
RuntimeError: Resource exhausted: Out of memory while trying to allocate 5520758552 bytes.
"""

CHAINER_CUPY_OOM = """\
epoch       main/loss   validation/main/loss  elapsed_time
Exception in main training loop: Out of memory allocating 25,600,000 bytes (allocated so far: 3,635,267,072 bytes).
Traceback (most recent call last):
  File "/opt/venv/lib/python3.6/site-packages/chainer/training/trainer.py", line 343, in run
    update()
Will finalize trainer extensions and updater before reraising the exception.
"""

DRIVER_TOO_OLD_FOR_CALL = """\
Traceback (most recent call last):
  File "/opt/Fooocus/modules/core.py", line 92, in load_model
    return t.to(device, dtype if t.is_floating_point() or t.is_complex() else None, non_blocking)
RuntimeError: CUDA error: API call is not supported in the installed CUDA driver
Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.
"""

NCCL_CONNECT_LOWERCASE = """\
gpu-c04:9102:9102 [2] NCCL INFO Bootstrap : Using eth0:10.20.0.13<0>
gpu-c04:9102:9102 [2] NCCL INFO NCCL version 2.27.3+cuda12.9
gpu-c04:9102:9160 [2] misc/socket.cc:596 NCCL WARN socketStartConnect: connect to 10.20.0.14<39271> failed : Network is unreachable
gpu-c04:9102:9160 [2] NCCL INFO misc/socket.cc:732 -> 2
gpu-c04:9102:9160 [2] NCCL INFO bootstrap.cc:390 -> 2
[rank2]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3353, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.27.3
"""

NCCL_IB_COMPLETION_NO_PEER = """\
dgx1:8765:8765 [2] NCCL INFO NCCL version 2.7.8+cuda11.0
dgx1:8765:8812 [2] transport/net_ib.cc:809 NCCL WARN NET/IB : Got completion with error 5, opcode 1, len 32753, vendor err 249
dgx1:8765:8812 [2] NCCL INFO include/net.h:28 -> 2
dgx1:8765:8812 [2] NCCL INFO transport/net.cc:357 -> 2
dgx1:8765:8812 [2] NCCL INFO proxy.cc:198 -> 2 [Proxy Thread]
RuntimeError: NCCL communicator was aborted.
"""

TF_CUDNN_HANDLE_ALLOC_FAILED = """\
2019-07-09 10:56:45.328872: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1433] Found device 0 with properties: 
2019-07-09 10:57:02.114281: E tensorflow/stream_executor/cuda/cuda_dnn.cc:334] Could not create cudnn handle: CUDNN_STATUS_ALLOC_FAILED
2019-07-09 10:57:02.114511: E tensorflow/stream_executor/cuda/cuda_dnn.cc:334] Could not create cudnn handle: CUDNN_STATUS_ALLOC_FAILED
tensorflow.python.framework.errors_impl.UnknownError: Failed to get convolution algorithm. This is probably because cuDNN failed to initialize, so try looking to see if a warning log message was printed above.
"""


def _check(faultline_bin, validate, tmp_path, text, rule, needle):
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["rule"] == rule, inc["explanation"]
    assert any(needle in t for t in initiating_texts(inc)), initiating_texts(inc)


def test_triton_bare_out_of_memory_is_cuda_oom(faultline_bin, validate, tmp_path):
    _check(faultline_bin, validate, tmp_path, TRITON_OOM, "cuda-oom",
           "Triton Error [CUDA]: out of memory")


def test_triton_bare_device_assert(faultline_bin, validate, tmp_path):
    _check(faultline_bin, validate, tmp_path, TRITON_ASSERT, "cuda-device-assert",
           "device-side assert triggered")


def test_rocm_hip_error_out_of_memory_is_cuda_oom(faultline_bin, validate, tmp_path):
    _check(faultline_bin, validate, tmp_path, HIP_OOM, "cuda-oom", "HIP error: out of memory")


def test_old_jaxlib_resource_exhausted_is_cuda_oom(faultline_bin, validate, tmp_path):
    _check(faultline_bin, validate, tmp_path, JAXLIB_OLD_OOM, "cuda-oom",
           "Resource exhausted: Out of memory while trying to allocate")


def test_cupy_pool_oom_under_chainer_is_cuda_oom(faultline_bin, validate, tmp_path):
    _check(faultline_bin, validate, tmp_path, CHAINER_CUPY_OOM, "cuda-oom",
           "Out of memory allocating 25,600,000 bytes")


def test_call_requires_newer_driver_is_driver_too_old(faultline_bin, validate, tmp_path):
    _check(faultline_bin, validate, tmp_path, DRIVER_TOO_OLD_FOR_CALL, "cuda-driver-mismatch",
           "API call is not supported in the installed CUDA driver")


def test_nccl_lowercase_connect_failure_is_network(faultline_bin, validate, tmp_path):
    _check(faultline_bin, validate, tmp_path, NCCL_CONNECT_LOWERCASE, "nccl-socket-error",
           "connect to 10.20.0.14<39271> failed : Network is unreachable")


def test_nccl_ib_completion_error_without_peer_is_network(faultline_bin, validate, tmp_path):
    _check(faultline_bin, validate, tmp_path, NCCL_IB_COMPLETION_NO_PEER, "nccl-remote-error",
           "Got completion with error 5")



def test_cudnn_handle_alloc_failed_is_cuda_oom(faultline_bin, validate, tmp_path):
    _check(faultline_bin, validate, tmp_path, TF_CUDNN_HANDLE_ALLOC_FAILED, "cuda-oom",
           "CUDNN_STATUS_ALLOC_FAILED")
