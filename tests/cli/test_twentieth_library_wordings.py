"""Inference servers' own words for the failure, as their code prints them
(issue #18, blind batch twentieth):

- text-generation-inference's warmup runs one prefill of
  --max-batch-prefill-tokens before a shard serves and re-raises the CUDA
  out-of-memory it hits as "Not enough memory to handle <n> prefill tokens.
  You need to decrease `--max-batch-prefill-tokens`" (flash_causal_lm.py);
  the launcher's router repeats it inside Error: Warmup(Generation(...)).
  It is the GPU memory running out, not an unknown error.
- Ray Serve's controller logs "Exception in Replica(id=..., deployment=...,
  app=...), the replica will be stopped." (before Ray 2.10: "Exception in
  replica '<tag>', ...") above the traceback of a replica that raised while
  it started: that line, not the traceback header, starts the failure.
- Triton Inference Server reports a backend or library it cannot dlopen as
  "Not found: unable to load shared library: <dlerror>" (the model's
  UNAVAILABLE status) or "error: creating server: Not found - unable to load
  shared library: ..." (the server exits): a fatal line, not nothing.
"""
from conftest import diagnose_text, first_incident, initiating_texts, leading_incident

TGI_WARMUP = """\
2023-08-28T12:11:04.958211Z ERROR text_generation_launcher: Method Warmup encountered an error.
Traceback (most recent call last):
  File "/opt/conda/lib/python3.9/site-packages/text_generation_server/models/flash_causal_lm.py", line 753, in warmup
    _, batch = self.generate_token(batch)
RuntimeError: Not enough memory to handle 1024 prefill tokens. You need to decrease `--max-batch-prefill-tokens`
"""

TGI_ROUTER = """\
2023-08-28T12:11:05.102944Z  INFO text_generation_router: router/src/main.rs:211: Warming up model
Error: Warmup(Generation("Not enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`"))
"""

SERVE_REPLICA = """\
(ServeReplica:default:vLLM:qwen-1_5b pid=2159) INFO 04-02 17:25:34 [config.py:1697] Chunked prefill is enabled with max_num_batched_tokens=2048.
(ServeController pid=2922) ERROR 2025-04-02 17:25:34,553 controller 2922 -- Exception in Replica(id='m37qpvvp', deployment='vLLM:qwen-1_5b', app='default'), the replica will be stopped.
(ServeController pid=2922) Traceback (most recent call last):
(ServeController pid=2922)   File "/home/ray/anaconda3/lib/python3.11/site-packages/ray/serve/_private/deployment_state.py", line 695, in check_ready
(ServeController pid=2922)     ) = ray.get(self._ready_obj_ref)
"""

SERVE_HEALTHY = """\
(ServeController pid=97521) 2022-05-03 02:02:01,531     INFO deployment_state.py:1211 -- Adding 1 replicas to deployment 'LongCall'. component=serve deployment=LongCall
"""

TRITON_SERVER = """\
I0720 03:52:16.596422 101 server.cc:301] No server context available. Exiting immediately.
error: creating server: Not found - unable to load shared library: libucs.so.0: cannot open shared object file: No such file or directory
"""

TRITON_MODEL_TABLE = """\
| Model            | Version | Status                                                                                                                                |
+------------------+---------+---------------------------------------------------------------------------------------------------------------------------------------+
| tensorrt_llm     | 1       | UNAVAILABLE: Not found: unable to load shared library: libnvinfer_plugin_tensorrt_llm.so.9: cannot open shared object file: No such f |
| tensorrt_llm_bls | 1       | READY                                                                                                                                 |
"""

TRITON_READY = """\
| Model            | Version | Status |
+------------------+---------+--------+
| tensorrt_llm     | 1       | READY  |
| tensorrt_llm_bls | 1       | READY  |
"""


def test_tgi_warmup_not_enough_memory_is_a_cuda_oom(faultline_bin, validate, tmp_path):
    for text in (TGI_WARMUP, TGI_ROUTER):
        leading_incident(faultline_bin, validate, tmp_path, text,
                         reference="CUDA Out of Memory on One Rank", any_line="Not enough memory to handle")


def test_serve_replica_exception_starts_the_failure(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, SERVE_REPLICA)
    assert any("the replica will be stopped" in t for t in initiating_texts(inc)), \
        initiating_texts(inc)


def test_serve_adding_replicas_is_nothing(faultline_bin, validate, tmp_path):
    assert diagnose_text(faultline_bin, validate, tmp_path, SERVE_HEALTHY) == []


def test_triton_library_not_loadable_is_a_fatal_line(faultline_bin, validate, tmp_path):
    for text in (TRITON_SERVER, TRITON_MODEL_TABLE):
        inc = first_incident(faultline_bin, validate, tmp_path, text)
        assert any("unable to load shared library" in t for t in initiating_texts(inc)), \
            initiating_texts(inc)


def test_triton_ready_models_are_nothing(faultline_bin, validate, tmp_path):
    assert diagnose_text(faultline_bin, validate, tmp_path, TRITON_READY) == []
