"""Library wordings read where the library prints them:

- MXNet's pooled GPU storage manager ends a failed allocation with
  dmlc-core's LOG(FATAL) "cudaMalloc failed: <cudaGetErrorString>" (or
  "cudaMalloc retry failed: ..." after releasing its pool) and a "[bt]"
  stack: with "out of memory" it is a CUDA out of memory.
- TensorRT-LLM's PyTorch executor rewrites an out of memory raised while
  creating its components into "Executor creation failed due to
  insufficient GPU memory." and a table of free memory per component.
- Ollama's server reports its runner's exit as "llama runner process has
  terminated: " and Go's os/exec exit text ("signal: aborted (core
  dumped)", "exit status 2"): the runner is dead, a fatal line.
- XLA's coordination service marks a task whose heartbeats stopped with
  "Task /job:... heartbeat timeout. This indicates that the remote task has
  failed, ...": a fatal line.
- Horovod's stall inspector warning is read by its opening words, so a
  copy that a terminal wrapped mid-word still counts as a stall.
"""
from conftest import diagnose_text, first_incident, initiating_texts


MXNET_OOM = """\
[12] Train-accuracy=0.913
[14:02:11] /opt/mxnet/dmlc-core/include/dmlc/./logging.h:308: [14:02:11] src/storage/./pooled_storage_manager.h:107: cudaMalloc failed: out of memory

Stack trace returned 10 entries:
[bt] (0) /opt/mxnet/lib/libmxnet.so(dmlc::StackTrace[abi:cxx11]()+0x5b) [0x7f2c1e4a1c0b]
[bt] (1) /opt/mxnet/lib/libmxnet.so(mxnet::storage::GPUPooledStorageManager::Alloc(mxnet::Storage::Handle*)+0x2e1) [0x7f2c1f8d2a41]
"""
MXNET_RETRY_OOM = """\
Traceback (most recent call last):
  File "train.py", line 88, in <module>
    loss.backward()
mxnet.base.MXNetError: [09:41:07] src/storage/./pooled_storage_manager.h:161: cudaMalloc retry failed: out of memory
"""
MXNET_OTHER = """\
[14:02:11] src/storage/./pooled_storage_manager.h:107: cudaMalloc failed: initialization error
"""

TRTLLM_EXECUTOR = """\
[11/02/2025-10:14:07] [TRT-LLM] [RANK 0] [I] Memory used after loading model weights (inside torch) in memory usage profiling: 61.20 GiB
[11/02/2025-10:14:09] [TRT-LLM] [RANK 0] [E] Failed to initialize executor on rank 0: Executor creation failed due to insufficient GPU memory.

The following component could not be created: Sampler
Total GPU memory (GiB): 79.11
Free GPU memory before component creation attempt (GiB): 1.02
"""

OLLAMA_ABORTED = """\
$ ollama run mistral:7b-instruct
Error: llama runner process has terminated: signal: segmentation fault (core dumped)
"""
OLLAMA_EXIT = """\
time=2024-08-01T12:00:03.511Z level=INFO source=server.go:617 msg="waiting for server to become available" status="llm server loading model"
time=2024-08-01T12:00:04.002Z level=ERROR source=sched.go:451 msg="error loading llama server" error="llama runner process has terminated: exit status 0xc0000409"
"""
OLLAMA_FINE = """\
time=2024-08-01T12:00:03.511Z level=INFO source=server.go:617 msg="waiting for llama runner to start responding"
time=2024-08-01T12:00:05.113Z level=INFO source=server.go:630 msg="llama runner started in 1.60 seconds"
"""

XLA_HEARTBEAT = """\
2025-03-02 08:11:40.101223: I external/xla/xla/tsl/distributed_runtime/coordination/coordination_service.cc:578] /job:jax_worker/replica:0/task:1 has connected to coordination service.
2025-03-02 08:31:52.873310: E external/xla/xla/tsl/distributed_runtime/coordination/coordination_service.cc:1170] /job:jax_worker/replica:0/task:1 has been set to ERROR in coordination service: UNAVAILABLE: Task /job:jax_worker/replica:0/task:1 heartbeat timeout. This indicates that the remote task has failed, got preempted, or crashed unexpectedly. Check the task logs for an earlier error or scheduler events (e.g. preemption, eviction) to debug further. [type.googleapis.com/tensorflow.CoordinationServiceError='']
"""

HOROVOD_WRAPPED = """\
[1,0]<stderr>:[2020-02-11 03:12:40.118201: W horovod/common/stall_inspector.cc:105] One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for rem
ainder of ranks for more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock.
[1,0]<stderr>:Stalled ranks:
[1,0]<stderr>:3: [DistributedAdamOptimizer_Allreduce/HorovodAllreduce_gradients_0, DistributedAdamOptimizer_Allreduce/HorovodAllreduce_gradients_1 ...]
"""


def test_mxnet_cudamalloc_out_of_memory_is_a_cuda_oom(faultline_bin, validate, tmp_path):
    for text in (MXNET_OOM, MXNET_RETRY_OOM):
        inc = first_incident(faultline_bin, validate, tmp_path, text)
        assert inc["rule"] == "cuda-oom", inc["explanation"]
        assert "out of memory" in initiating_texts(inc)[0]


def test_mxnet_cudamalloc_other_error_is_not_an_oom(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, MXNET_OTHER)
    assert not [i for i in found if i["rule"] == "cuda-oom"]


def test_trtllm_executor_creation_for_insufficient_memory_is_a_cuda_oom(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, TRTLLM_EXECUTOR)
    assert inc["rule"] == "cuda-oom", inc["explanation"]
    assert "insufficient GPU memory" in initiating_texts(inc)[0]


def test_ollama_runner_exit_is_a_fatal_line(faultline_bin, validate, tmp_path):
    for text, line in ((OLLAMA_ABORTED, "signal: segmentation fault"),
                       (OLLAMA_EXIT, "exit status 0xc0000409")):
        inc = first_incident(faultline_bin, validate, tmp_path, text)
        assert inc["rule"] == "unrecognised-fatal-error", inc["explanation"]
        assert line in initiating_texts(inc)[0]


def test_ollama_runner_start_is_not_a_failure(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, OLLAMA_FINE)
    assert not [i for i in found if i["rule"] == "unrecognised-fatal-error"]


def test_coordination_heartbeat_timeout_is_a_fatal_line(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, XLA_HEARTBEAT)
    assert inc["rule"] == "unrecognised-fatal-error", inc["explanation"]
    assert "heartbeat timeout" in initiating_texts(inc)[0]


def test_wrapped_horovod_stall_warning_is_a_stall(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, HOROVOD_WRAPPED)
    assert [i for i in found if i["rule"] == "collective-desync-stuck"], \
        [(i["rule"], i["explanation"]) for i in found]
