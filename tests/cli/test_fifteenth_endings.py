"""Endings the fifteenth endings audit (tests/cli/endings, e15-*.log) read as
nothing or by the wrong line, read where the program that printed them
writes them (issue #18):

- ggml's assert (llama.cpp, whisper.cpp and what embeds them): GGML_ASSERT
  calls ggml_abort, which writes "<file>:<line>: GGML_ASSERT(<x>) failed"
  (before mid-2024 "GGML_ASSERT: <file>:<line>: <x>") and aborts, often
  with nothing after it; a host's abort callback may prefix the line
  (LM Studio's "llama.cpp abort:<line>: ").
- ComfyUI's executor logs "!!! Exception during processing !!! <str(ex)>"
  (execution.py) above the traceback: when the traceback is cut before
  its exception line, that line says why.
- CTranslate2's CUDA_CHECK (src/cuda/utils.h) throws "CUDA failed with
  error " + cudaGetErrorString: with "out of memory" it is a CUDA OOM, not
  an unexplained RuntimeError.
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"
CUDA_OOM = "cuda-oom"

FAILURES = {
    "ggml-assert-after-loader": ("""\
llama_new_context_with_model: n_ctx      = 8192
llama_new_context_with_model: n_batch    = 2048
/opt/src/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:1320: GGML_ASSERT(ne00 % 2 == 0) failed
""", FALLBACK, "GGML_ASSERT(ne00 % 2 == 0) failed"),
    "ggml-assert-host-prefix": ("""\
[2025-03-02 10:14:07][DEBUG] PromptProcessing: 42.1
[2025-03-02 10:14:09][DEBUG] llama.cpp abort:6399: GGML_ASSERT(c->ne[0] >= n_dims / 2) failed
[2025-03-02 10:14:10][ERROR] 
""", FALLBACK, "GGML_ASSERT(c->ne[0] >= n_dims / 2) failed"),
    "ggml-assert-old-format-aborted": ("""\
main: seed = 1693216543
GGML_ASSERT: ggml.c:4796: view_src == NULL || data_size + view_offs <= ggml_nbytes(view_src)
Aborted (core dumped)
""", FALLBACK, "GGML_ASSERT: ggml.c:4796"),
    "comfyui-exception-line-leads-cut-traceback": ("""\
got prompt
!!! Exception during processing !!! out of resource: shared memory, Required: 131072, Hardware limit: 101376. Reducing block sizes or `num_stages` may help.
Traceback (most recent call last):
  File "/opt/ComfyUI/execution.py", line 327, in execute
    output_data, output_ui, has_subgraph = get_output_data(obj, input_data_all)
""", FALLBACK, "out of resource: shared memory"),
    "ctranslate2-cuda-failed-oom": ("""\
Traceback (most recent call last):
  File "transcribe.py", line 12, in <module>
    segments, info = model.transcribe("talk.wav", beam_size=5)
  File "/opt/venv/lib/python3.10/site-packages/faster_whisper/transcribe.py", line 584, in generate_with_fallback
    result = self.model.generate(
RuntimeError: CUDA failed with error out of memory
""", CUDA_OOM, "CUDA failed with error out of memory"),
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_ending_leads(faultline_bin, validate, tmp_path, name):
    text, rule, initiating = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, line=initiating)


HEALTHY = {
    # The assert's own source line, as a debugger lists it, is no failure.
    "ggml-assert-source-listing": """\
Breakpoint 1, ggml_mul_mat (ctx=0x5555, a=0x7fff, b=0x7ffe) at ggml/src/ggml.c:2738
2738	    GGML_ASSERT(ggml_can_mul_mat(a, b));
(gdb) next
2739	    GGML_ASSERT(!ggml_is_transposed(a));
""",
    "comfyui-prompt-executed": """\
got prompt
100%|██████████| 20/20 [00:05<00:00,  3.61it/s]
Prompt executed in 7.42 seconds
""",
}


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_healthy_ending_is_no_incident(faultline_bin, validate, tmp_path, name):
    found = diagnose_text(faultline_bin, validate, tmp_path, HEALTHY[name])
    assert not [i for i in found if not (i["initiating"] or {}).get("survived")], \
        [(i["rule"], i["explanation"]) for i in found]
