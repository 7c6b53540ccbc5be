"""An inference server's request error that the same server's log shows it
carried on from (later 2xx answers to POST /v1/... in uvicorn's access log,
non-zero generation throughput from vLLM's stat logger: rules tagged
role:served) was survived: the incident says so and ranks below an error
that stopped the server. A run of 500s with nothing served after them is
not survived."""

from conftest import diagnose_text

START = "INFO 07-15 10:00:00 api_server.py:1000] Starting vLLM API server on http://0.0.0.0:8000\n"
ERROR_500 = 'INFO:     127.0.0.1:52180 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error\n'
THROUGHPUT = ("INFO 07-15 10:01:05 metrics.py:341] Avg prompt throughput: 10.0 tokens/s, Avg generation "
              "throughput: 31.0 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache "
              "usage: 0.1%, CPU KV cache usage: 0.0%.\n")
# The server process's own end: an exception no catalog rule names (the
# fallback incident, below every catalog incident that ended a rank).
FATAL = """\
Traceback (most recent call last):
  File "/app/router.py", line 88, in <module>
    main()
  File "/app/router.py", line 80, in main
    raise RuntimeError(f"shard {i} lost its lease")
RuntimeError: shard 3 lost its lease
"""


def served(n):
    return "".join(f'INFO:     127.0.0.1:5219{i % 10} - "POST /v1/chat/completions HTTP/1.1" 200 OK\n'
                   for i in range(n))


def incidents(faultline_bin, validate, tmp_path, text):
    return diagnose_text(faultline_bin, validate, tmp_path, text, name="server.log")


def by_rule(found, rule):
    return [i for i in found if i["rule"] == rule]


def test_500_then_served_requests_is_survived(faultline_bin, validate, tmp_path):
    found = incidents(faultline_bin, validate, tmp_path, START + served(3) + ERROR_500 + served(20) + THROUGHPUT)
    err = by_rule(found, "vllm-http-500")
    assert err and err[0]["initiating"].get("survived") is True, [(i["rule"], i["initiating"]) for i in found]


def test_500_then_only_throughput_is_survived(faultline_bin, validate, tmp_path):
    found = incidents(faultline_bin, validate, tmp_path, START + ERROR_500 + THROUGHPUT)
    err = by_rule(found, "vllm-http-500")
    assert err and err[0]["initiating"].get("survived") is True


def test_500s_with_nothing_served_after_are_not_survived(faultline_bin, validate, tmp_path):
    found = incidents(faultline_bin, validate, tmp_path, START + served(3) + THROUGHPUT + ERROR_500 * 4)
    err = by_rule(found, "vllm-http-500")
    assert err and not err[0]["initiating"].get("survived"), err[0]["initiating"]


def test_survived_500_ranks_below_a_fatal_error(faultline_bin, validate, tmp_path):
    found = incidents(faultline_bin, validate, tmp_path, START + ERROR_500 + served(5) + FATAL)
    assert found[0]["rule"] == "unrecognised-fatal-error", [i["rule"] for i in found]
    assert "shard 3 lost its lease" in found[0]["initiating"]["evidence"][0]["text"]
    assert by_rule(found, "vllm-http-500")[0]["initiating"].get("survived") is True
