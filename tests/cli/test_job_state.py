"""What the caller states about how the job ended (issue #18: "a job that
failed never gets No incident", "exit statuses carry meaning"):
`diagnose --job-state STATE` and `--job-exit-status N` (docs/cli.md, "How
the job ended"). The logs alone cannot tell a hang from a healthy log posted
cut; the scheduler (sacct's State and ExitCode), a pod's phase or the
launcher's exit status can.

- With no incident in the logs, a stated failure gives the catalog reference
  the state names (an OOM kill, the time limit, a node failure, a
  preemption), else the fallback's, led by the rank whose log stopped first,
  with the statement in its explanation and a missing fact;
- `running` (alive when the logs were taken) gives the silent hang on the
  rank whose last line is earliest;
- `completed` with exit status 0 marks what the logs show as survived;
- a cause the evidence backs is never overridden: the statement only adds
  to its explanation.

The logs are per-rank files as torchrun writes them (`[rankN]` prefixes under
Python logging's stamps, NCCL's init line naming the host)."""
import json

import pytest

from conftest import run

OOM = ("[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
       "capacity of 79.15 GiB of which 1.21 GiB is free. Including non-PyTorch memory, this process has "
       "77.93 GiB memory in use. Of the allocated memory 75.10 GiB is allocated by PyTorch, and 1.20 GiB is "
       "reserved by PyTorch but unallocated.")


def rank_log(rank, host, minutes, tail=()):
    """A rank's log: NCCL's init line naming its host, torchtitan's step
    lines under torchrun's `[rankN]:` prefix, one a minute, then `tail`."""
    out = [f"{host}:{2100 + rank}:{2100 + rank} [0] NCCL INFO NCCL version 2.21.5+cuda12.4"]
    for n, m in enumerate(minutes):
        out.append(f"[rank{rank}]:[titan] 2026-11-20 09:{m:02d}:00,000 - root - INFO - step: {100 + n}  "
                   f"loss:  2.{n:04d}  memory: 44.10GiB(55.13%)  tps: 3,101  mfu: 40.10%")
    return "\n".join(out + list(tail)) + "\n"


@pytest.fixture
def cut_logs(tmp_path):
    """Two ranks whose logs just stop, rank 1 two minutes before rank 0: no
    incident of their own."""
    (tmp_path / "rank0.log").write_text(
        rank_log(0, "gpu-a01", [0, 1, 2, 3]))
    (tmp_path / "rank1.log").write_text(rank_log(1, "gpu-a02", [0, 1]))
    return [tmp_path / "rank0.log", tmp_path / "rank1.log"]


@pytest.fixture
def oom_logs(tmp_path):
    (tmp_path / "rank0.log").write_text(
        rank_log(0, "gpu-a01", [0, 1],
                 ["[rank0]: Traceback (most recent call last):",
                  '[rank0]:   File "/workspace/train.py", line 210, in <module>',
                  "[rank0]:     loss.backward()", OOM]))
    return [tmp_path / "rank0.log"]


def diagnose(binary, validate, paths, *options):
    p = run(binary, "diagnose", "--json", *options, *map(str, paths), check=False)
    assert p.returncode == 0, p.stderr.decode()
    doc = json.loads(p.stdout)
    validate(doc)
    return doc


def failing(doc):
    return [i for i in doc["incidents"] if not i["initiating"].get("survived")]


def test_without_a_statement_the_cut_logs_have_no_incident(faultline_bin, validate, cut_logs):
    doc = diagnose(faultline_bin, validate, cut_logs)
    assert failing(doc) == []
    assert "job" not in doc["input"]


@pytest.mark.parametrize("state, rule", [
    ("failed", "unrecognised-fatal-error"),
    ("FAILED", "unrecognised-fatal-error"),
    ("oom", "slurm-oom-kill-event"),
    ("OUT_OF_MEMORY", "slurm-oom-kill-event"),
    ("timeout", "slurm-time-limit"),
    ("TIMEOUT", "slurm-time-limit"),
    ("node_fail", "job-interrupted-node-failure"),
    ("NODE_FAIL", "job-interrupted-node-failure"),
    ("preempted", "preemption"),
    ("PREEMPTED", "preemption"),
])
def test_a_stated_failure_gives_an_incident_on_the_rank_that_stopped_first(faultline_bin, validate, cut_logs,
                                                                            state, rule):
    doc = diagnose(faultline_bin, validate, cut_logs, "--job-state", state)
    lead = doc["incidents"][0]
    assert lead["rule"] == rule, lead["explanation"]
    assert not lead["initiating"].get("survived")
    assert lead["initiating"]["rank"] == 1 and lead["initiating"]["host"] == "gpu-a02", lead["explanation"]
    assert lead["initiating"]["evidence"][-1]["text"].endswith("mfu: 40.10%")
    assert "The caller states the job" in lead["explanation"]
    assert "rank1.log (rank 1)" in lead["explanation"] and "step: 101" in lead["explanation"]
    assert any("sacct" in f for f in lead["missing_facts"])
    assert doc["input"]["job"] == {"state": state.lower().replace("out_of_memory", "oom"), "exit_status": None}


@pytest.mark.parametrize("status, meaning", [("1", "exit status 1"), ("137", "128 + SIGKILL"),
                                             ("-9", "ended, killed by SIGKILL")])
def test_a_non_zero_exit_status_alone_gives_the_fallback(faultline_bin, validate, cut_logs, status, meaning):
    doc = diagnose(faultline_bin, validate, cut_logs, "--job-exit-status", status)
    lead = doc["incidents"][0]
    assert lead["rule"] == "unrecognised-fatal-error"
    assert meaning in lead["explanation"]
    assert doc["input"]["job"] == {"state": None, "exit_status": int(status)}


def test_running_gives_the_silent_hang_on_the_earliest_stopped_rank(faultline_bin, validate, cut_logs):
    doc = diagnose(faultline_bin, validate, cut_logs, "--job-state", "RUNNING")
    lead = doc["incidents"][0]
    assert lead["rule"] == "training-silent-hang", lead["explanation"]
    assert lead["initiating"]["rank"] == 1 and lead["initiating"]["suspects"] == [1]
    assert "still running" in lead["explanation"]
    assert doc["input"]["job"]["state"] == "running"


@pytest.mark.parametrize("options", [("--job-state", "completed"), ("--job-state", "COMPLETED"),
                                     ("--job-exit-status", "0"), ("--job-state", "cancelled"),
                                     ("--job-state", "CANCELLED by 1000")])
def test_a_clean_or_cancelled_end_gives_no_incident(faultline_bin, validate, cut_logs, options):
    doc = diagnose(faultline_bin, validate, cut_logs, *options)
    assert failing(doc) == []


def test_cancelled_is_a_limit_of_the_logs(faultline_bin, validate, cut_logs):
    doc = diagnose(faultline_bin, validate, cut_logs, "--job-state", "cancelled")
    assert any("cancelled" in limit for limit in doc.get("limits", []))


def test_completed_with_exit_zero_marks_what_the_logs_show_survived(faultline_bin, validate, oom_logs):
    assert failing(diagnose(faultline_bin, validate, oom_logs))[0]["rule"] == "cuda-oom"
    doc = diagnose(faultline_bin, validate, oom_logs, "--job-state", "completed", "--job-exit-status", "0")
    assert failing(doc) == []
    inc = doc["incidents"][0]
    assert inc["rule"] == "cuda-oom" and inc["initiating"]["survived"]
    assert "completed" in inc["explanation"]
    assert doc["input"]["job"] == {"state": "completed", "exit_status": 0}


@pytest.mark.parametrize("options", [("--job-state", "running"), ("--job-state", "timeout"),
                                     ("--job-state", "oom"), ("--job-exit-status", "1"),
                                     ("--job-state", "completed", "--job-exit-status", "1")])
def test_an_evidence_backed_cause_is_not_overridden(faultline_bin, validate, oom_logs, options):
    doc = diagnose(faultline_bin, validate, oom_logs, *options)
    lead = failing(doc)[0]
    assert lead["rule"] == "cuda-oom", lead["explanation"]
    assert "The caller states the job" in lead["explanation"]
    assert [i["rule"] for i in failing(doc)] == ["cuda-oom"]


def test_text_report_echoes_the_statement(faultline_bin, cut_logs):
    p = run(faultline_bin, "diagnose", "--job-state", "timeout", "--job-exit-status", "-15", *map(str, cut_logs))
    assert "job end as stated: timeout, exit status -15" in p.stdout.decode()


@pytest.mark.parametrize("option, value", [("--job-state", "bogus"), ("--job-state", "Failed"),
                                           ("--job-state", ""), ("--job-exit-status", "256"),
                                           ("--job-exit-status", "-65"), ("--job-exit-status", "1x")])
def test_bad_values_are_usage_errors_naming_the_value(faultline_bin, cut_logs, option, value):
    p = run(faultline_bin, "diagnose", option, value, *map(str, cut_logs), check=False)
    assert p.returncode == 1
    err = p.stderr.decode()
    assert f"'{value}'" in err and option in err


def test_help_lists_the_options(faultline_bin):
    for cmd in ("diagnose", "watch"):
        out = run(faultline_bin, cmd, "--help").stdout.decode()
        assert "--job-state" in out and "--job-exit-status" in out
