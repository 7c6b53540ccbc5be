"""Four messages read in the wording of the library that prints them
(rulesets/README.md, "Signals"):

- ggml's CUDA backend (llama.cpp, Ollama) reports a failed device
  allocation as "allocating N MiB on device D: cudaMalloc failed: out of
  memory", and its first CUDA_CHECK as "CUDA error 2 at FILE:LINE: out of
  memory": the GPU's memory is exhausted.
- thrust's system_error, and the CUDA checks of XLA and of tools like
  gpu-burn, print the runtime's error string after the call that failed
  ("<call>: unspecified launch failure"): a kernel aborted.
- Open MPI's "mpirun noticed that process rank R with PID P on node N
  exited on signal S" is an exit status of the rank even when the node
  name is blank, as a post with the host name removed shows it.
- ONNX Runtime states its errors as "[ONNXRuntimeError] : CODE : NAME :
  message" (its Python binding, raised as classes named Fail,
  InvalidArgument, ...) and Triton's ONNX Runtime backend as "onnx runtime
  error CODE: message": both are fatal lines of the program that got them.
"""
from conftest import first_incident, initiating_texts


GGML_ALLOC = """\
llama_new_context_with_model: pipeline parallelism enabled (n_copies=4)
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 279356.51 MiB on device 0: cudaMalloc failed: out of memory
ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 292926534144
llama_new_context_with_model: failed to allocate compute buffers
"""
GGML_CHECK = """\
main: build = 1233 (98311c4)
main: seed  = 1694805687

CUDA error 2 at /data/llama.cpp/ggml-cuda.cu:5509: out of memory
current device: 0
"""


def test_ggml_cuda_malloc_failure_is_gpu_memory(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, GGML_ALLOC)
    assert inc["rule"] == "cuda-oom", inc["explanation"]
    assert "cudaMalloc failed: out of memory" in initiating_texts(inc)[0]


def test_ggml_first_cuda_check_out_of_memory_is_gpu_memory(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, GGML_CHECK)
    assert inc["rule"] == "cuda-oom", inc["explanation"]


XLA_LAUNCH = ("JaxRuntimeError: INTERNAL: cudaMemcpyAsync(read num_recv_tokens): "
              "unspecified launch failure\n")
GPU_BURN_LAUNCH = ("gpu-burn Couldn't init a GPU test: Error (gpu_burn-drv.cpp:113): "
                   "unspecified launch failure\n")


def test_runtime_error_string_after_the_call_is_a_launch_failure(faultline_bin, validate, tmp_path):
    for text in (XLA_LAUNCH, GPU_BURN_LAUNCH):
        inc = first_incident(faultline_bin, validate, tmp_path, text)
        assert inc["rule"] == "cuda-launch-failure", inc["explanation"]


MPI_BLANK_NODE = ("mpirun noticed that process rank 3 with PID 0 on node  exited on signal 4 "
                  "(Illegal instruction).\n")
MPI_NAMED_NODE = ("mpirun noticed that process rank 3 with PID 4242 on node gpu07 exited on "
                  "signal 4 (Illegal instruction).\n")


def test_mpirun_rank_signal_with_a_blank_node_is_a_failure(faultline_bin, validate, tmp_path):
    for text in (MPI_BLANK_NODE, MPI_NAMED_NODE):
        inc = first_incident(faultline_bin, validate, tmp_path, text)
        assert inc["rule"] == "unrecognised-fatal-error", inc["explanation"]
        assert initiating_texts(inc)[0] == text.strip()


ORT_PYTHON = """\
  File "/usr/lib/python3/site-packages/onnxruntime/capi/onnxruntime_inference_collection.py", line 226, in _create_inference_session
    sess = C.InferenceSession(session_options, self._model_path, True, self._read_config_from_model)
onnxruntime.capi.onnxruntime_pybind11_state.Fail: [ONNXRuntimeError] : 1 : FAIL : Load model from test_output.onnx failed:Type Error: Type parameter (T) bound to different types (tensor(float16) and tensor(float) in node (Mul_7).
"""
ORT_TRITON = ("| dolly_v1_6b_onnx | 1       | UNAVAILABLE: Internal: onnx runtime error 6: Exception "
              "during initialization: /workspace/onnxruntime/onnxruntime/core/framework/bfc_arena.cc:368 "
              "void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, "
              "onnxruntime::WaitNotificationFn) \n")


def test_onnxruntime_error_status_is_a_fatal_line(faultline_bin, validate, tmp_path):
    for text, line in ((ORT_PYTHON, "[ONNXRuntimeError] : 1 : FAIL"), (ORT_TRITON, "onnx runtime error 6")):
        inc = first_incident(faultline_bin, validate, tmp_path, text)
        assert inc["rule"] == "unrecognised-fatal-error", inc["explanation"]
        assert line in initiating_texts(inc)[0]
