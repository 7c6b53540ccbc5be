"""
Phrasing across versions, twenty-sixth pass (issue #18): the newest
releases of the Python frameworks (vLLM 0.8 to 0.11's V1 engine, DeepSpeed
0.16, transformers 4.4x to 4.5x with accelerate 1.x, PyTorch Lightning 2.4
to 2.6), read in the source of each release, where the catalog's signals
missed a wording:

- vLLM V1's MultiprocExecutor (v1/executor/multiproc_executor.py, 0.8.5
  onwards) waits VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS (300 s) for its workers'
  answer to a step and re-raises the wait's timeout as "TimeoutError: RPC
  call to execute_model timed out." (0.11 onwards also "... sample_tokens
  ...", the step split for async scheduling). A worker that does not
  answer is hung; this is V1's "Engine iteration timed out", which
  vllm-engine-dead already leads with for V0. The old catalog gave the
  EngineCore's fatal error or, where the excerpt starts at the timeout,
  only the dead-engine symptom. Excerpt: intel/llm-scaler#77 (0.10.1), as
  posted.
- accelerate's find_executable_batch_size (utils/memory.py, 0.7 to 1.14;
  transformers' auto_find_batch_size and lighteval call it) swallows each
  out-of-memory error, halves the batch size and retries, and raises
  "RuntimeError: No executable batch size found, reached zero." when
  nothing fits: the OOMs are never printed. Now cuda-oom's. Excerpt:
  the title of huggingface/accelerate#1934 (accelerate 0.22), as posted.
- transformers' Trainer.train(resume_from_checkpoint=True) (4.5 to 4.5x)
  raises "ValueError: No valid checkpoint found in output directory
  (<dir>)" when output_dir holds no checkpoint-<step> folder; the catalog
  read only "Can't find a valid checkpoint at <path>", the same refusal for
  a named path. Now checkpoint-resume-failure's. Excerpt:
  haotian-liu/LLaVA#901, as posted.
- PyTorch Lightning (trainer/call.py) catches a Ctrl-C's KeyboardInterrupt
  itself and prints no traceback: "Detected KeyboardInterrupt, attempting
  graceful shutdown..." (a UserWarning up to 2.3), "... graceful shutdown
  ..." from 2.4 on (an info line, after which it kills the processes it
  launched and exits with status 1). training-silent-hang's user_interrupt
  read only Python's and torchelastic's wordings of the interrupt, so the
  teardown's errors after Lightning's could be taken for the failure.
  Excerpt: Lightning-AI/pytorch-lightning#2035, as posted (0.8).

Already read in every version (checked, no change): vLLM's "No available
memory for the cache blocks" (0.8 to 0.11, V0 and V1), "EngineCore
encountered a fatal error", "Worker proc <name> died unexpectedly" (with
"(exit code: N)" later), "Engine core proc EngineCore_DP0 died
unexpectedly", EngineDeadError and "CUDA out of memory occurred when
warming up sampler"; DeepSpeed 0.16's launcher ("exits with return code =
N", "Killing subprocess") and ZeRO-3's "pytorch allocator cache flushes
since last step" (0.10 to 0.16.5, unchanged); transformers' "Can't find a
valid checkpoint at"; Lightning 2.4 to 2.6's "[rank: N] Received SIGTERM: 15"
and "Bypassing SIGTERM: 15". DeepSpeed 0.17 and 0.18's source was not read
(the stored snapshot ends at 0.16.5); a ZeRO-3 log of December 2025 posted
from stage3.py:2236 (0.16.5 has it at line 2140) prints the allocator-flush
warning unchanged.

Left alone: vLLM's "Free memory on device[ cuda:N] (F/T GiB) on startup is
less than desired GPU memory utilization" (0.9 onwards) names no failure
the catalog covers: corpus case vllm-25837 carries that wording and is
labelled a configuration check with no catalog reference. vLLM's "Error in
memory profiling. Initial free memory ..." assertion (vllm#56830: it also
fires with no co-tenant), the shared-memory broadcast notice "No available
shared memory broadcast block found in 60 seconds" (an idle worker logs it,
corpus vllm-25720), DeepSpeed's "Unable to proceed, no GPU resources
available" (no post naming a cause), and Lightning's requeue lines
("Handling auto-requeue signal: N", "Requeued SLURM job: N", 2.4 onwards;
"requeued exp N" before): the signal SLURM sends ahead of a time limit or a
preemption, context rather than a failure.
"""

import pytest

from conftest import leading_incident, scan_text


# intel/llm-scaler#77, as posted: vLLM 0.10.1 on XPU, the end of the
# EngineCore's traceback and the API server's output handler after it.
RPC_TIMEOUT_0_10 = """\
ERROR 09-06 04:14:11 [core.py:640]   File "/usr/local/lib/python3.12/dist-packages/vllm-0.10.1.dev0+g6d8d0a24c.d20250902.xpu-py3.12-linux-x86_64.egg/vllm/v1/executor/multiproc_executor.py", line 243, in collective_rpc
ERROR 09-06 04:14:11 [core.py:640]     raise TimeoutError(f"RPC call to {method} timed out.") from e
ERROR 09-06 04:14:11 [core.py:640] TimeoutError: RPC call to execute_model timed out.
ERROR 09-06 04:14:11 [async_llm.py:416] AsyncLLM output_handler failed.
ERROR 09-06 04:14:11 [async_llm.py:416] Traceback (most recent call last):
"""

# huggingface/accelerate#1934's title, as posted.
BATCH_SIZE_EXHAUSTED = """\
RuntimeError: No executable batch size found, reached zero.
"""

# haotian-liu/LLaVA#901, as posted.
NO_CHECKPOINT_IN_OUTPUT_DIR = """\
when i resume from the save checkpoint i got this error:
"ValueError: No valid checkpoint found in output directory"
"""


@pytest.mark.parametrize("line,signal", [
    ("(EngineCore pid=171) ERROR 07-16 08:23:49 [core.py:1242] TimeoutError: RPC call to sample_tokens timed out.",
     "executor-rpc-timeout"),
    ("ERROR 08-28 06:06:54 [core.py:502] TimeoutError: RPC call to execute_model timed out.",
     "executor-rpc-timeout"),
    ("[rank0]: RuntimeError: No executable batch size found, reached zero.", "accelerate-batch-size-exhausted"),
    ("ValueError: No valid checkpoint found in output directory (./outputs/)", "hf-no-checkpoint-in-output-dir"),
    ("Detected KeyboardInterrupt, attempting graceful shutdown ...", "user_interrupt"),
    ("Detected KeyboardInterrupt, attempting graceful shutdown...", "user_interrupt"),
], ids=["vllm-rpc-timeout-sample-tokens", "vllm-rpc-timeout-0-9", "accelerate-batch-size-zero",
        "transformers-no-checkpoint-in-output-dir", "lightning-interrupt-2-4", "lightning-interrupt-2035"])
def test_newest_wording_is_read_by_its_signal(faultline_bin, tmp_path, line, signal):
    records = scan_text(faultline_bin, tmp_path, line + "\n")
    assert signal in {r["signal"] for r in records}, records


@pytest.mark.parametrize("text,rule,any_line", [
    (RPC_TIMEOUT_0_10, "vllm-engine-dead", "RPC call to execute_model timed out"),
    (BATCH_SIZE_EXHAUSTED, "cuda-oom", "No executable batch size found"),
    (NO_CHECKPOINT_IN_OUTPUT_DIR, "checkpoint-resume-failure", "No valid checkpoint found in output directory"),
], ids=["vllm-rpc-timeout", "accelerate-batch-size-zero", "transformers-no-checkpoint-in-output-dir"])
def test_newest_wording_leads_its_rule(faultline_bin, validate, tmp_path, text, rule, any_line):
    leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, any_line=any_line)
