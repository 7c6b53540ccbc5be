"""A line that says the operation it reports failing will be tried again
is an attempt, not the end of the job (issue #18, fatal vs survived): Ray's
task manager writes `Task <name> failed. There are N retries remaining, so
the task will be retried. Error: ...` (task_manager.cc) and goes on; a
client's `..., retrying` or `Retrying in 5s` the same. Where a fatal line
of the same log comes after it, that line (or a traceback the program
raised after the attempt, even one cut in its frames) leads; where nothing
comes after it, the attempt stays the evidence (retries that never
succeeded before the log stopped), and a line that says the retries are
over is fatal as any other.
"""
import pytest

from conftest import leading_incident

FALLBACK = "unrecognised-fatal-error"

RAY_RETRY = ("(raylet) Task Worker.get_location failed. There are infinite retries remaining, "
             "so the task will be retried. Error: The actor is temporarily unavailable: "
             "RpcError: RPC error: Cancelling all calls rpc_code: 14\n")
CLIENT_RETRY = "2025-06-01 10:00:00,101 ERROR client.py:88 -- Error: connection reset by peer, retrying\n"

LATER_EXCEPTION = """\
Traceback (most recent call last):
  File "/opt/app/run.py", line 40, in <module>
    main()
  File "/opt/app/run.py", line 31, in main
    ds.write_parquet(out)
ValueError: schema mismatch for column 'tokens'
"""

CUT_TRACEBACK = """\
2025-06-01 10:00:02,515 ERROR exceptions.py:81 -- Exception in the pipeline's executor:
Traceback (most recent call last):
  File "/opt/app/pipeline.py", line 49, in handle_trace
    return fn(*args, **kwargs)
  File "/opt/app/pipeline.py", line 474, in execute
"""

LEADS_AFTER = {
    "ray-retry-then-exception": (RAY_RETRY + LATER_EXCEPTION, "ValueError: schema mismatch"),
    "client-retry-then-exception": (CLIENT_RETRY + LATER_EXCEPTION, "ValueError: schema mismatch"),
    "ray-retry-then-cut-traceback": (RAY_RETRY + CUT_TRACEBACK, "Exception in the pipeline's executor:"),
}


@pytest.mark.parametrize("name", sorted(LEADS_AFTER))
def test_the_failure_after_a_retried_attempt_leads(faultline_bin, validate, tmp_path, name):
    text, initiating = LEADS_AFTER[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=initiating)


STAYS = {
    # The log stops in the retries: the attempt is all there is.
    "retry-alone": (RAY_RETRY, "There are infinite retries remaining"),
    # Retries over: fatal as any other line, ahead of what follows.
    "retries-over": ("(raylet) Task Worker.get_location failed after retrying 3 times, giving up. "
                     "Error: The actor is temporarily unavailable: RpcError: RPC error: Cancelling all "
                     "calls rpc_code: 14\n" + LATER_EXCEPTION, "giving up"),
}


@pytest.mark.parametrize("name", sorted(STAYS))
def test_an_attempt_with_nothing_after_or_retries_over_stays(faultline_bin, validate, tmp_path, name):
    text, initiating = STAYS[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=initiating)
