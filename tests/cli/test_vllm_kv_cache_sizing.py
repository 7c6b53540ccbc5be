"""vLLM's start-up refusals about the KV cache, from its worker (v0) and
kv_cache_utils (v1): a cache that holds some blocks but fewer tokens than
one sequence of max_model_len is a sizing refusal (the fallback's fatal
line: no allocation failed, no catalog reference names it), in either
version's wording and with or without the ValueError prefix; a cache with
no room for one block is GPU memory exhaustion (cuda-oom)."""

from conftest import leading_incident

PROFILE = """\
INFO 11-20 08:10:41 model_runner.py:1072] Loading model weights took 14.9888 GB
INFO 11-20 08:10:43 worker.py:232] Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB peak_torch_memory=17.98GiB memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=2.89GiB gpu_memory_utilization=0.90
INFO 11-20 08:10:43 gpu_executor.py:113] # GPU blocks: 1478, # CPU blocks: 2048
"""

V0_SIZING = ("The model's max seq len (29000) is larger than the maximum number of tokens that can be stored "
             "in KV cache (23648). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
             "initializing the engine.\n")

V1_SIZING = """\
(EngineCore_DP0 pid=18799) INFO 10-08 20:33:47 [gpu_worker.py:298] Available KV cache memory: 4.50 GiB
(EngineCore_DP0 pid=18799) ERROR 10-08 20:33:48 [core.py:708] EngineCore failed to start.
(EngineCore_DP0 pid=18799) ERROR 10-08 20:33:48 [core.py:708] ValueError: To serve at least one request with the models's max seq len (40960), (5.62 GiB KV cache is needed, which is larger than the available KV cache memory (4.50 GiB). Based on the available memory, the estimated maximum model length is 32768. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.
"""

NO_BLOCKS = ("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
             "when initializing the engine.\n")


def test_v0_sizing_refusal_without_its_exception_prefix_is_the_fallback(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, PROFILE + V0_SIZING, rule="unrecognised-fatal-error",
                     line="is larger than the maximum number of tokens that can be stored in KV cache")


def test_v1_sizing_refusal_is_not_an_oom(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, V1_SIZING, rule="unrecognised-fatal-error",
                     line="KV cache is needed, which is larger than the available KV cache memory")


def test_no_room_for_one_block_is_gpu_memory_exhaustion(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, PROFILE + NO_BLOCKS, rule="cuda-oom",
                     line="No available memory for the cache blocks")
