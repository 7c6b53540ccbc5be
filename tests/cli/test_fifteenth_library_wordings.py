"""Library wordings read where the library prints them:

- TensorRT reports a failed CUDA runtime call as its ErrorCode
  kCUDA_RUNTIME (1), "Error Code 1: Cuda Runtime (<cudaGetErrorString>)";
  with "out of memory" (cudaErrorMemoryAllocation) it is a CUDA out of
  memory, whichever allocator call failed.
- ONNX Runtime's BFC arena throws "Failed to allocate memory for requested
  buffer of size N" from BFCArena::AllocateRawInternal when its device
  allocator cannot grow the arena: the CUDA provider's out of memory, in
  the Python binding's and Triton's ONNX Runtime backend's framings.
- systemd logs "A process of this unit has been killed by the OOM
  killer." and ends the unit "Failed with result 'oom-kill'." when the
  kernel OOM killer took a process of a service (a model server run as a
  unit): a host OOM kill.
- The CUDA driver API names its "driver shutting down" error (4)
  CUDA_ERROR_DEINITIALIZED, and TensorFlow's and XLA's driver wrappers print
  the enum's name: a CUDA call made while the process exits, teardown like
  the runtime's cudaErrorCudartUnloading, and the abort it sets off is no
  failure of a run that finished its steps.
"""
from conftest import diagnose_text, first_incident, initiating_texts


TRT_CUDA_RUNTIME_OOM = """\
[03/02/2025-10:11:02] [I] [TRT] Local timing cache in use. Profiling results in this builder pass will not be stored.
[03/02/2025-10:11:40] [E] Error[1]: [defaultAllocator.cpp::allocate::31] Error Code 1: Cuda Runtime (out of memory)
[03/02/2025-10:11:40] [E] Engine could not be created from network
"""
TRT_CUDA_RUNTIME_OTHER = """\
[03/02/2025-10:11:40] [E] [TRT] 1: [defaultAllocator.cpp::deallocate::42] Error Code 1: Cuda Runtime (invalid argument)
"""

ORT_ARENA_OOM = """\
onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while running Conv node. Name:'/stem/conv/Conv' Status Message: /onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) Failed to allocate memory for requested buffer of size 4294967296
"""
ORT_ARENA_EXTEND = """\
2024-05-01 10:00:00.100000000 [I:onnxruntime:log, bfc_arena.cc:306 AllocateRawInternal] Extending BFCArena for Cuda. bin_num:9 (requested) num_bytes: 160000 (actual) rounded_bytes:160000
2024-05-01 10:00:00.101000000 [I:onnxruntime:log, bfc_arena.cc:186 Extend] Extended allocation by 1048576 bytes.
"""

SYSTEMD_OOM = """\
May 03 11:20:41 gpu01 llama-server[2211]: srv  update_slots: all slots are idle
May 03 11:24:02 gpu01 systemd[1]: llama.service: A process of this unit has been killed by the OOM killer.
May 03 11:24:02 gpu01 systemd[1]: llama.service: Main process exited, code=killed, status=9/KILL
May 03 11:24:02 gpu01 systemd[1]: llama.service: Failed with result 'oom-kill'.
"""
SYSTEMD_EXIT_CODE = """\
May 03 11:24:02 gpu01 systemd[1]: llama.service: Main process exited, code=exited, status=1/FAILURE
May 03 11:24:02 gpu01 systemd[1]: llama.service: Failed with result 'exit-code'.
"""


def test_tensorrt_cuda_runtime_out_of_memory_is_a_cuda_oom(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, TRT_CUDA_RUNTIME_OOM)
    assert inc["rule"] == "cuda-oom", inc["explanation"]
    assert "Cuda Runtime (out of memory)" in initiating_texts(inc)[0]


def test_tensorrt_cuda_runtime_other_error_is_not_an_oom(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, TRT_CUDA_RUNTIME_OTHER)
    assert not [i for i in found if i["rule"] == "cuda-oom"]


def test_onnxruntime_arena_allocation_failure_is_a_cuda_oom(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, ORT_ARENA_OOM)
    assert inc["rule"] == "cuda-oom", inc["explanation"]
    assert "Failed to allocate memory for requested buffer" in initiating_texts(inc)[0]


def test_onnxruntime_arena_extension_is_not_a_failure(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, ORT_ARENA_EXTEND)
    assert not [i for i in found if i["rule"] == "cuda-oom"]


def test_systemd_unit_oom_kill_is_a_host_oom_kill(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, SYSTEMD_OOM)
    assert inc["rule"] == "host-oom-kill", inc["explanation"]
    assert "OOM killer" in initiating_texts(inc)[0]


def test_systemd_unit_exit_code_is_not_an_oom_kill(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, SYSTEMD_EXIT_CODE)
    assert not [i for i in found if i["rule"] == "host-oom-kill"]


ORT_ARENA_OVERFLOWED_SIZE = """\
onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while running Conv node. Name:'/stem/conv/Conv' Status Message: /onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) Failed to allocate memory for requested buffer of size 4585490524328388608
"""


def test_onnxruntime_arena_request_of_an_overflowed_size_is_not_an_oom(faultline_bin, validate, tmp_path):
    # A request of 10^15 bytes or more is larger than any GPU: the size
    # overflowed upstream (SafeInt, a negative shape), memory did not run out.
    found = diagnose_text(faultline_bin, validate, tmp_path, ORT_ARENA_OVERFLOWED_SIZE)
    assert not [i for i in found if i["rule"] == "cuda-oom"]


TF_EXIT_DEINITIALIZED = """\
2019-06-02 11:40:12.118804: step 4980, loss = 0.41 (1211.0 examples/sec; 0.106 sec/batch)
2019-06-02 11:40:13.203377: step 4990, loss = 0.44 (1180.6 examples/sec; 0.108 sec/batch)
E tensorflow/stream_executor/cuda/cuda_event.cc:49] Error polling for event status: failed to query event: CUDA_ERROR_DEINITIALIZED
F tensorflow/core/common_runtime/gpu/gpu_event_mgr.cc:208] Unexpected Event status: 1
Aborted (core dumped)
"""


def test_driver_deinitialized_at_exit_is_teardown(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, TF_EXIT_DEINITIALIZED)
    assert not [i for i in found if not i["reference"].startswith("Benign")], \
        [(i["rule"], i["explanation"]) for i in found]
