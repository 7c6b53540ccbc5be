"""Endings the forty-first endings audit (tests/cli/endings, e41-*.log, LLM
inference servers: vLLM's V1 engine, SGLang, TensorRT-LLM, Triton,
llama-server, Ollama) got wrong, read where the program that printed them
writes them (issue #18). A server is judged as a whole: an error it logged
for one request and went on from is not its failure.

- SGLang's /health_generate check: its HTTP server sends a one-token request
  through the scheduler and, when the detokenizer sends nothing back within
  20 s, logs 'Health check failed. Server couldn't get a response from
  detokenizer for last N seconds. ...' and answers 503 (http_server.py). The
  server is up but no longer generates; a liveness probe then has it killed.
  No line of it was read, so such an ending had no incident. Generation
  requests answered after the line (role:served) say the server got over it.
- A request the server refused: vLLM's OpenAI server catches what rendering a
  request raises (ValueError, TypeError, jinja2's TemplateError), logs it with
  its traceback under the handler's record prefix and answers 400; uvicorn's
  access log then shows the POST with its 4xx status. The traceback's
  exception was read as the server's fatal line. A 4xx answer to a POST is a
  role:carried-on line (http-request-rejected): the error before it was
  handled, unless a failure follows it. 5xx answers are not handled errors.
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # The probe fails twice and the orchestrator stops the pod: draining.
    "sglang-health-check-failed-then-drained": ("""\
[2026-02-11 09:41:02] INFO:     10.8.3.14:50120 - "POST /v1/chat/completions HTTP/1.1" 200 OK
[2026-02-11 09:44:31] INFO:     10.8.0.2:33410 - "GET /health_generate HTTP/1.1" 503 Service Unavailable
[2026-02-11 09:44:31] Health check failed. Server couldn't get a response from detokenizer for last 20 seconds. tic start time: 09:44:11. last_heartbeat time: 09:42:57
[2026-02-11 09:45:01] INFO:     10.8.0.2:33418 - "GET /health_generate HTTP/1.1" 503 Service Unavailable
[2026-02-11 09:45:01] Health check failed. Server couldn't get a response from detokenizer for last 20 seconds. tic start time: 09:44:41. last_heartbeat time: 09:42:57
[2026-02-11 09:45:03] SIGTERM received. signum=None frame=None. Draining requests and shutting down...
""", "Health check failed. Server couldn't get a response from detokenizer"),
    # The log ends on the failed probe, the server logging nothing else.
    "sglang-health-check-failed-log-ends": ("""\
[2025-11-30 22:10:05 TP0] Prefill batch. #new-seq: 1, #new-token: 31744, #cached-token: 0, token usage: 0.62, #running-req: 7, #queue-req: 0
[2025-11-30 22:10:41] Health check failed. Server couldn't get a response from detokenizer for last 20 seconds. tic start time: 22:10:21. last_heartbeat time: 22:10:05
""", "Health check failed. Server couldn't get a response from detokenizer"),
}

HEALTHY = {
    # One probe starved by a long prefill; generation requests go on after it.
    "sglang-health-check-failed-then-served": """\
[2026-02-11 09:44:31] INFO:     10.8.0.2:33410 - "GET /health_generate HTTP/1.1" 503 Service Unavailable
[2026-02-11 09:44:31] Health check failed. Server couldn't get a response from detokenizer for last 20 seconds. tic start time: 09:44:11. last_heartbeat time: 09:44:02
[2026-02-11 09:44:38] INFO:     10.8.3.14:50188 - "POST /v1/chat/completions HTTP/1.1" 200 OK
[2026-02-11 09:44:39] INFO:     10.8.3.14:50190 - "POST /v1/chat/completions HTTP/1.1" 200 OK
""",
    # A chat template that rejects the conversation: vLLM logs the request's
    # traceback and answers 400.
    "vllm-template-error-answered-400": """\
INFO:     10.2.0.9:41218 - "POST /v1/chat/completions HTTP/1.1" 200 OK
ERROR 03-14 16:20:07 [serving_chat.py:222] Error in preprocessing prompt inputs
ERROR 03-14 16:20:07 [serving_chat.py:222] Traceback (most recent call last):
ERROR 03-14 16:20:07 [serving_chat.py:222]   File "/opt/venv/lib/python3.12/site-packages/vllm/entrypoints/openai/serving_chat.py", line 205, in create_chat_completion
ERROR 03-14 16:20:07 [serving_chat.py:222]     ) = await self._preprocess_chat(
ERROR 03-14 16:20:07 [serving_chat.py:222]   File "/opt/venv/lib/python3.12/site-packages/jinja2/environment.py", line 939, in handle_exception
ERROR 03-14 16:20:07 [serving_chat.py:222]     raise rewrite_traceback_stack(source=source)
ERROR 03-14 16:20:07 [serving_chat.py:222] jinja2.exceptions.TemplateError: Conversation roles must alternate user/assistant/user/assistant/...
INFO:     10.2.0.9:41220 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request
""",
    # A completion request over the context length, under the API server's
    # process prefix, answered 400 at the end of the log.
    "vllm-completion-too-long-answered-400": """\
(APIServer pid=7) ERROR 05-02 08:12:44 [serving_completion.py:151] Error in preprocessing prompt inputs
(APIServer pid=7) ERROR 05-02 08:12:44 [serving_completion.py:151] Traceback (most recent call last):
(APIServer pid=7) ERROR 05-02 08:12:44 [serving_completion.py:151]   File "/opt/venv/lib/python3.12/site-packages/vllm/entrypoints/openai/serving_completion.py", line 140, in create_completion
(APIServer pid=7) ERROR 05-02 08:12:44 [serving_completion.py:151]     engine_prompts = await self._preprocess_completion(
(APIServer pid=7) ERROR 05-02 08:12:44 [serving_completion.py:151] ValueError: This model's maximum context length is 4096 tokens. However, your request has 5120 input tokens.
(APIServer pid=7) INFO:     172.17.0.1:60344 - "POST /v1/completions HTTP/1.1" 400 Bad Request
""",
}

# Guards (right before the change too): what the carried-on reading must not
# take for a handled error.
GUARDS = {
    # A request refused with 400, then the engine dies: the refusal does not
    # make the later failure a handled one.
    "vllm-rejected-request-then-engine-died": ("""\
ERROR 03-14 16:20:07 [serving_chat.py:222] Error in preprocessing prompt inputs
ERROR 03-14 16:20:07 [serving_chat.py:222] Traceback (most recent call last):
ERROR 03-14 16:20:07 [serving_chat.py:222]   File "/opt/venv/lib/python3.12/site-packages/vllm/entrypoints/openai/serving_chat.py", line 205, in create_chat_completion
ERROR 03-14 16:20:07 [serving_chat.py:222]     ) = await self._preprocess_chat(
ERROR 03-14 16:20:07 [serving_chat.py:222] ValueError: This model's maximum context length is 8192 tokens. However, you requested 9001 tokens.
INFO:     10.2.0.9:41220 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request
ERROR 03-14 16:21:40 [core.py:586] EngineCore encountered a fatal error.
ERROR 03-14 16:21:40 [core.py:586] Traceback (most recent call last):
ERROR 03-14 16:21:40 [core.py:586]   File "/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/core.py", line 577, in run_engine_core
ERROR 03-14 16:21:40 [core.py:586]     engine_core.run_busy_loop()
ERROR 03-14 16:21:40 [core.py:586] RuntimeError: CUDA error: an illegal memory access was encountered
""", "an illegal memory access was encountered"),
    # vLLM answers 500 to requests after its engine died: not handled.
    "vllm-engine-dead-answered-500": ("""\
(APIServer pid=1) ERROR 05-12 01:48:42 [api_router.py:72]     raise self.engine_client.dead_error
(APIServer pid=1) ERROR 05-12 01:48:42 [api_router.py:72] vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.
(APIServer pid=1) INFO:     10.1.6.81:16983 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error
""", "EngineDeadError"),
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_failed_ending_leads(faultline_bin, validate, tmp_path, name):
    text, initiating = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, line=initiating)


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_healthy_ending_has_no_incident(faultline_bin, validate, tmp_path, name):
    assert not diagnose_text(faultline_bin, validate, tmp_path, HEALTHY[name])


@pytest.mark.parametrize("name", sorted(GUARDS))
def test_server_error_answer_is_no_handled_error(faultline_bin, validate, tmp_path, name):
    text, initiating = GUARDS[name]
    leading_incident(faultline_bin, validate, tmp_path, text, any_line=initiating)
