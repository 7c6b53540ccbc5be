"""vLLM 0.7 to 0.8.4 report an EngineCore failure at start-up under the same
header as one while serving (core.py run_engine_core: `EngineCore hit an
exception: Traceback ...`, then the client's `Got fatal signal from worker
processes`); 0.8.5 onwards say `EngineCore failed to start.`, which no rule
reads, so the exception inside leads. A traceback holding the frame that
constructs the engine (`engine_core = EngineCoreProc(...)`, signal
vllm-engine-dead/engine-startup-frame, field `startup_frame`) failed before
the engine served: the header and the signal line are its wrapper, and the
exception inside leads as it does from 0.8.5 on. A traceback through
run_busy_loop is a failure while serving: vllm-engine-dead still leads.
The lines follow the 0.7/0.8 format of vllm-project/vllm#14574 (0.8's
KV-cache refusal under `EngineCore hit an exception`)."""

from conftest import leading_incident

# 0.7.x: a model-load error inside EngineCoreProc.__init__ (no catalog rule).
STARTUP_LOAD = """\
INFO 02-21 06:30:20 core.py:50] Initializing a V1 LLM engine (v0.7.3) with config: model='Qwen/Qwen2-VL-7B'
INFO 02-21 06:30:24 gpu_model_runner.py:872] Starting to load model Qwen/Qwen2-VL-7B...
ERROR 02-21 06:30:25 core.py:291] EngineCore hit an exception: Traceback (most recent call last):
ERROR 02-21 06:30:25 core.py:291]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 283, in run_engine_core
ERROR 02-21 06:30:25 core.py:291]     engine_core = EngineCoreProc(*args, **kwargs)
ERROR 02-21 06:30:25 core.py:291]                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
ERROR 02-21 06:30:25 core.py:291]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 238, in __init__
ERROR 02-21 06:30:25 core.py:291]     super().__init__(vllm_config, executor_class, log_stats)
ERROR 02-21 06:30:25 core.py:291]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 51, in __init__
ERROR 02-21 06:30:25 core.py:291]     self.model_executor = executor_class(vllm_config)
ERROR 02-21 06:30:25 core.py:291]                           ^^^^^^^^^^^^^^^^^^^^^^^^^^^
ERROR 02-21 06:30:25 core.py:291]   File "/usr/local/lib/python3.12/dist-packages/vllm/executor/executor_base.py", line 52, in __init__
ERROR 02-21 06:30:25 core.py:291]     self._init_executor()
ERROR 02-21 06:30:25 core.py:291]   File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/model_loader/loader.py", line 389, in load_model
ERROR 02-21 06:30:25 core.py:291]     loaded_weights = model.load_weights(
ERROR 02-21 06:30:25 core.py:291]   File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/models/qwen2.py", line 404, in load_weights
ERROR 02-21 06:30:25 core.py:291]     param = params_dict[name]
ERROR 02-21 06:30:25 core.py:291] KeyError: 'visual.blocks.0.attn.qkv.weight'
ERROR 02-21 06:30:25 core.py:291] 
CRITICAL 02-21 06:30:25 core_client.py:191] Got fatal signal from worker processes, shutting down. See stack trace above for root cause issue.
"""

# The same engine failing in run_busy_loop while serving.
SERVING = """\
INFO 02-21 06:30:20 core.py:50] Initializing a V1 LLM engine (v0.7.3) with config: model='Qwen/Qwen2-VL-7B'
INFO 02-21 06:31:02 engine.py:280] Added request chatcmpl-1.
ERROR 02-21 06:31:05 core.py:291] EngineCore hit an exception: Traceback (most recent call last):
ERROR 02-21 06:31:05 core.py:291]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 284, in run_engine_core
ERROR 02-21 06:31:05 core.py:291]     engine_core.run_busy_loop()
ERROR 02-21 06:31:05 core.py:291]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 327, in run_busy_loop
ERROR 02-21 06:31:05 core.py:291]     outputs = step_fn()
ERROR 02-21 06:31:05 core.py:291]               ^^^^^^^^^
ERROR 02-21 06:31:05 core.py:291]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 154, in step
ERROR 02-21 06:31:05 core.py:291]     output = self.model_executor.execute_model(scheduler_output)
ERROR 02-21 06:31:05 core.py:291]   File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/models/qwen2_vl.py", line 404, in forward
ERROR 02-21 06:31:05 core.py:291]     image_embeds = self._process_image_input(image_input)
ERROR 02-21 06:31:05 core.py:291] KeyError: 'pixel_values'
ERROR 02-21 06:31:05 core.py:291] 
CRITICAL 02-21 06:31:05 core_client.py:191] Got fatal signal from worker processes, shutting down. See stack trace above for root cause issue.
"""

# 0.8.x: the memory profiling guard of gpu_worker.determine_available_memory
# refusing at start-up.
STARTUP_PROFILING = """\
INFO 03-28 03:01:10 [gpu_model_runner.py:1205] Model loading took 14.2474 GB and 5.113912 seconds
ERROR 03-28 03:01:12 [core.py:340] EngineCore hit an exception: Traceback (most recent call last):
ERROR 03-28 03:01:12 [core.py:340]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 332, in run_engine_core
ERROR 03-28 03:01:12 [core.py:340]     engine_core = EngineCoreProc(*args, **kwargs)
ERROR 03-28 03:01:12 [core.py:340]                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
ERROR 03-28 03:01:12 [core.py:340]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 287, in __init__
ERROR 03-28 03:01:12 [core.py:340]     super().__init__(vllm_config, executor_class, log_stats)
ERROR 03-28 03:01:12 [core.py:340]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 62, in __init__
ERROR 03-28 03:01:12 [core.py:340]     num_gpu_blocks, num_cpu_blocks = self._initialize_kv_caches(
ERROR 03-28 03:01:12 [core.py:340]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 121, in _initialize_kv_caches
ERROR 03-28 03:01:12 [core.py:340]     available_gpu_memory = self.model_executor.determine_available_memory()
ERROR 03-28 03:01:12 [core.py:340]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_worker.py", line 179, in determine_available_memory
ERROR 03-28 03:01:12 [core.py:340]     assert self.init_snapshot.free_memory > free_gpu_memory, (
ERROR 03-28 03:01:12 [core.py:340] AssertionError: Error in memory profiling. Initial free memory 23.4 GiB, current free memory 23.9 GiB. This happens when the GPU memory was not properly cleaned up before initializing the vLLM instance.
ERROR 03-28 03:01:12 [core.py:340] 
CRITICAL 03-28 03:01:12 [core_client.py:269] Got fatal signal from worker processes, shutting down. See stack trace above for root cause issue.
"""

# 0.8.x with tensor parallelism: a worker died while serving; the executor's
# SIGUSR1 line comes first and the engine's traceback runs through step().
WORKER_DEATH_SERVING = """\
INFO 03-15 17:20:02 [loggers.py:80] Avg prompt throughput: 412.5 tokens/s, Avg generation throughput: 88.1 tokens/s, Running: 4 reqs, Waiting: 0 reqs, GPU KV cache usage: 3.1%, Prefix cache hit rate: 0.0%
CRITICAL 03-15 17:24:18 [multiproc_executor.py:48] MulitprocExecutor got fatal signal from worker processes, shutting down. See stack trace above for root cause issue.
ERROR 03-15 17:24:18 [core.py:337] EngineCore hit an exception: Traceback (most recent call last):
ERROR 03-15 17:24:18 [core.py:337]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 330, in run_engine_core
ERROR 03-15 17:24:18 [core.py:337]     engine_core.run_busy_loop()
ERROR 03-15 17:24:18 [core.py:337]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 364, in run_busy_loop
ERROR 03-15 17:24:18 [core.py:337]     outputs = step_fn()
ERROR 03-15 17:24:18 [core.py:337]               ^^^^^^^^^
ERROR 03-15 17:24:18 [core.py:337]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 192, in step
ERROR 03-15 17:24:18 [core.py:337]     output = self.model_executor.execute_model(scheduler_output)
ERROR 03-15 17:24:18 [core.py:337]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/executor/multiproc_executor.py", line 139, in collective_rpc
ERROR 03-15 17:24:18 [core.py:337]     status, result = w.worker_response_mq.dequeue(
ERROR 03-15 17:24:18 [core.py:337]   File "/usr/local/lib/python3.12/dist-packages/vllm/distributed/device_communicators/shm_broadcast.py", line 474, in dequeue
ERROR 03-15 17:24:18 [core.py:337]     raise RuntimeError("cancelled")
ERROR 03-15 17:24:18 [core.py:337] RuntimeError: cancelled
ERROR 03-15 17:24:18 [core.py:337] 
CRITICAL 03-15 17:24:18 [core_client.py:269] Got fatal signal from worker processes, shutting down. See stack trace above for root cause issue.
"""


def test_startup_load_error_leads_over_the_wrapper(faultline_bin, validate, tmp_path):
    inc = leading_incident(faultline_bin, validate, tmp_path, STARTUP_LOAD, rule="unrecognised-fatal-error",
                           line="KeyError: 'visual.blocks.0.attn.qkv.weight'")
    texts = [e["text"] for e in inc["initiating"]["evidence"]]
    assert not any("EngineCore hit an exception" in t for t in texts), texts


def test_startup_profiling_guard_leads_over_the_wrapper(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, STARTUP_PROFILING, rule="unrecognised-fatal-error",
                     line="AssertionError: Error in memory profiling.")


def test_failure_while_serving_is_still_engine_dead(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, SERVING, rule="vllm-engine-dead",
                     line="EngineCore hit an exception")


def test_worker_death_while_serving_is_still_engine_dead(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, WORKER_DEATH_SERVING, rule="vllm-engine-dead",
                     line="MulitprocExecutor got fatal signal from worker processes")
