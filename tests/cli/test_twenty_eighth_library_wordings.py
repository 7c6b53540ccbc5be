"""
Phrasing across versions, twenty-eighth pass (issue #18): the inference
servers' fatal messages -- vLLM's v0 engine (0.4 to 0.6) and v1 engine (0.7
onwards), SGLang, TensorRT-LLM, Triton Inference Server and
text-generation-inference -- read in the source of each release, where the
catalog's signals missed a wording:

- vLLM v1's start-up guard on the GPU's free memory (v1/worker/gpu_worker.py
  init_device, seen on 0.9.1 in #20305; v1/worker/utils.py request_memory in
  the newest):
  "Free memory on device (F/T GiB) on startup is less than desired GPU
  memory utilization (U, R GiB). Decrease GPU memory utilization or reduce
  GPU memory used by other processes.", with the device named in the newer
  releases ("cuda:0", "xpu:0"). No signal of its own read it: the
  fallback's generic reading of an exception line ("ValueError: ...", with a
  logger's prefix, under a cut traceback, in a poster's backticks) made it
  the fatal line, so the verdicts were already right. A configuration check,
  no allocation failed (the corpus's vllm-25837 labels it so): the
  fallback's own signal now, beside vLLM's KV-cache sizing refusal, so the
  line keeps its lead over the EngineCore's wrappers ("EngineCore failed to
  start.", "Engine core initialization failed") whatever the excerpt keeps
  of its exception class.
  Excerpts: vllm-project/vllm#23192, #20305, #33297.
- vLLM 0.7's v1 engine (kv_cache_utils check_enough_memory) wrote the
  KV-cache sizing refusal as two f-string pieces with no space between them
  and a capital C: "(X GB KV cache isneeded, which is larger than the
  available KV Cache memory (Y GB)"; 0.8 onwards reads "KV cache is needed
  ... available KV cache memory". The fallback's signal read only the later
  wording. No post shows the 0.7 line; it is the format rendered.

Already read in every version (checked, no change): vLLM v0's "The model's
max seq len (N) is larger than the maximum number of tokens that can be
stored in KV cache (M)", v0 and v1's "No available memory for the cache
blocks", "EngineCore encountered a fatal error" / "EngineCore hit an
exception", "Engine core proc EngineCore_N died unexpectedly", "Worker proc
... died unexpectedly", "Got fatal signal from worker processes", the
EngineDeadError family, "Engine core initialization failed. See root cause
above." (under the cause when the excerpt holds one); SGLang's "Scheduler
hit an exception", "Received sigquit from a child process", "Not enough
memory. Please try to increase --mem-fraction-static", the token pool's
"Prefill out of memory"; TensorRT-LLM's "[TensorRT-LLM][ERROR] Assertion
failed", "Executor worker returned error", "Executor creation failed due to
insufficient GPU memory"; Triton's "error: creating server: <code> -
<message>" (the cause in the "failed to load '<model>' version N: ..." line
is read by its own catalog rule); TGI's "Shard process was signaled to
shutdown with signal N", "Error: ShardCannotStart".

Left alone: vLLM's memory profiler assertion "Error in memory profiling.
Initial free memory X, current free memory Y. ..." (free memory that grew
while it profiled: a co-tenant released memory, vllm#56830; no shortfall,
so no catalog reference: the fallback reads the AssertionError). And
vLLM 0.7 and 0.8 logged a start-up failure of the EngineCore under the same
"EngineCore hit an exception: Traceback ..." header as a failure while
serving (0.9 split it into "EngineCore failed to start." and "EngineCore
encountered a fatal error."): vllm-engine-dead's enginecore-fatal signal
reads that header, so a start-up refusal the fallback reads (the KV-cache
sizing refusal, in either wording) is led by vllm-engine-dead's header line
on those releases; a catalog cause under it (a CUDA OOM) still leads. Telling
start-up from serving needs the traceback's frames (run_engine_core's
EngineCoreProc(...) call), a correlator change left for its own issue.
"""
import pytest

from conftest import leading_incident, scan_text

# vllm-project/vllm#23192 (v0.10, EngineCore_0), the excerpt as posted.
VLLM_FREE_MEMORY_ENGINECORE = """\
(EngineCore_0 pid=1810465) ERROR 09-03 11:03:37 [core.py:712]   File "/home/kaiwu/.conda/envs/vllm/lib/python3.12/site-packages/vllm/worker/worker_base.py", line 603, in init_device
(EngineCore_0 pid=1810465) ERROR 09-03 11:03:37 [core.py:712]     self.worker.init_device()  # type: ignore
(EngineCore_0 pid=1810465) ERROR 09-03 11:03:37 [core.py:712]     ^^^^^^^^^^^^^^^^^^^^^^^^^
(EngineCore_0 pid=1810465) ERROR 09-03 11:03:37 [core.py:712]   File "/home/kaiwu/.conda/envs/vllm/lib/python3.12/site-packages/vllm/v1/worker/gpu_worker.py", line 180, in init_device
(EngineCore_0 pid=1810465) ERROR 09-03 11:03:37 [core.py:712]     raise ValueError(
(EngineCore_0 pid=1810465) ERROR 09-03 11:03:37 [core.py:712] ValueError: Free memory on device (7.34/139.72 GiB) on startup is less than desired GPU memory utilization (0.9, 125.75 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.
(EngineCore_0 pid=1810465) Process EngineCore_0:
(EngineCore_0 pid=1810465) Traceback (most recent call last):
(EngineCore_0 pid=1810465)   File "/home/kaiwu/.conda/envs/vllm/lib/python3.12/multiprocessing/process.py", line 314, in _bootstrap
(EngineCore_0 pid=1810465)     self.run()
"""

# vllm-project/vllm#20305 (v0.9.1): the worker's line, its prefix cut by
# the poster, over the EngineCore's "EngineCore failed to start." wrapper.
VLLM_FREE_MEMORY_UNDER_WRAPPER = """\
[multiproc_executor.py:492] ValueError: Free memory on device (31.44/47.38 GiB) on startup is less than desired GPU memory utilization (0.95, 45.01 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.
ERROR 06-30 13:53:19 [core.py:515] EngineCore failed to start.
ERROR 06-30 13:53:19 [core.py:515] Traceback (most recent call last):
ERROR 06-30 13:53:19 [core.py:515]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 506, in run_engine_core
ERROR 06-30 13:53:19 [core.py:515]     engine_core = EngineCoreProc(*args, **kwargs)
ERROR 06-30 13:53:19 [core.py:515]                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
ERROR 06-30 13:53:19 [core.py:515]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 390, in __init__
ERROR 06-30 13:53:19 [core.py:515]     super().__init__(vllm_config, executor_class, log_stats,
ERROR 06-30 13:53:19 [core.py:515]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 76, in __init__
ERROR 06-30 13:53:19 [core.py:515]     self.model_executor = executor_class(vllm_config)
ERROR 06-30 13:53:19 [core.py:515]                           ^^^^^^^^^^^^^^^^^^^^^^^^^^^
"""

# vllm-project/vllm#33297 (a CI run of the newest releases), the line as
# quoted: the device is named.
VLLM_FREE_MEMORY_DEVICE_NAMED = (
    "[2026-01-28T23:59:42Z] (EngineCore_DP0 pid=972) ERROR 01-28 15:59:42 [core.py:935] ValueError: Free memory "
    "on device cuda:0 (1.53/22.05 GiB) on startup is less than desired GPU memory utilization (0.9, 19.84 GiB). "
    "Decrease GPU memory utilization or reduce GPU memory used by other processes.\n"
)

# vllm-project/vllm-omni#276, the poster's line in backticks.
VLLM_FREE_MEMORY_BACKTICKS = """\
However, vLLM immediately throws the following error:
`ValueError: Free memory on device (0.49/79.32 GiB) on startup is less than desired GPU memory utilization (0.6, 47.59 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.`
"""


@pytest.mark.parametrize("line,signal", [
    ("ValueError: Free memory on device (0.49/79.32 GiB) on startup is less than desired GPU memory utilization "
     "(0.6, 47.59 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
     "vllm_startup_free_memory"),
    ("(EngineCore pid=79) ValueError: Free memory on device cuda:0 (22.76/24.0 GiB) on startup is less than "
     "desired GPU memory utilization (0.97, 23.28 GiB). Decrease GPU memory utilization or reduce GPU memory used",
     "vllm_startup_free_memory"),
    ("ValueError: Free memory on device xpu:0 (0.22/30.3 GiB) on startup is less than desired GPU memory "
     "utilization (0.7, 21.21 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
     "vllm_startup_free_memory"),
    ("ValueError: To serve at least one request with the models's max seq len (32768), (2.0 GB KV cache isneeded, "
     "which is larger than the available KV Cache memory (0.78 GB). Try increasing `gpu_memory_utilization` or "
     "decreasing `max_model_len` when initializing the engine.", "vllm_kv_cache_below_max_model_len"),
], ids=["vllm-0-9-free-memory", "vllm-newest-free-memory-cuda", "vllm-free-memory-xpu", "vllm-0-7-kv-isneeded"])
def test_each_version_is_read_by_its_signal(faultline_bin, tmp_path, line, signal):
    # vllm-project/vllm-omni#276, noonghunna/club-3090#4 (cut by the poster),
    # vllm-project/vllm#50135 (its title); the last is vLLM 0.7's format.
    records = scan_text(faultline_bin, tmp_path, line + "\n")
    assert signal in {r["signal"] for r in records}, records


@pytest.mark.parametrize("line", [
    # vllm-project/vllm#33358: the profiler's guard, no shortfall.
    "AssertionError: Error in memory profiling. Initial free memory 30.3 GiB, current free memory 30.3 GiB. This "
    "happens when other processes sharing the same container release GPU memory while vLLM is profiling during "
    "initialization. To fix this, ensure consistent GPU memory allocation or isolate vLLM in its own container.",
    "(EngineCore_DP0 pid=131) INFO 11-10 12:29:41 [gpu_worker.py:276] Available KV cache memory: 21.43 GiB",
], ids=["vllm-memory-profiling-assertion", "vllm-available-kv-cache-info"])
def test_what_is_no_shortfall_is_not_read(faultline_bin, tmp_path, line):
    records = scan_text(faultline_bin, tmp_path, line + "\n")
    assert "vllm_startup_free_memory" not in {r["signal"] for r in records}, records


@pytest.mark.parametrize("text,rule,line", [
    (VLLM_FREE_MEMORY_ENGINECORE, "unrecognised-fatal-error", "Free memory on device (7.34/139.72 GiB)"),
    (VLLM_FREE_MEMORY_UNDER_WRAPPER, "unrecognised-fatal-error", "Free memory on device (31.44/47.38 GiB)"),
    (VLLM_FREE_MEMORY_DEVICE_NAMED, "unrecognised-fatal-error", "Free memory on device cuda:0"),
    (VLLM_FREE_MEMORY_BACKTICKS, "unrecognised-fatal-error", "Free memory on device (0.49/79.32 GiB)"),
], ids=["vllm-23192-enginecore", "vllm-20305-under-wrapper", "vllm-33297-device-named", "vllm-omni-276-backticks"])
def test_the_refusal_leads_ahead_of_the_wrapper(faultline_bin, validate, tmp_path, text, rule, line):
    # Guards: the verdicts were right before the signal (see the docstring).
    leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, line=line)
