"""Stop lines that end a job on their own (issue #18: a job that failed
never gets "No incident"):

- srun and salloc when the controller takes the allocation away
  (src/srun/allocate.c, src/salloc/salloc.c): "Job allocation N has been
  revoked", "Job step aborted before step completely launched."; a
  scancel, the scheduler's kill or a preemption: the termination rules'.
  srun's "Force Terminated StepId=N.M" is not read: srun prints it after a
  step cancelled DUE TO TASK FAILURE too, where it is no outside stop. salloc's "Job N has exceeded its time limit and its
  allocation has been revoked." is the time limit.
- Megatron-LM's train loop after its exit signal handler saw SIGTERM
  ("[exiting program after receiving SIGTERM.] datetime: ..."): a stop
  requested from outside.
- Ray's dashboard agent when the raylet died without SIGTERM ("Raylet is
  terminated. Termination is unexpected. ..."): an unexpected death, a
  fatal line of the fallback. "Termination is graceful." is no failure.
"""
import pytest

from conftest import diagnose_text, first_incident, initiating_texts

TERMINATION = {"sigterm-received", "graceful-shutdown-missing"}


STOPS = {
    "srun-allocation-revoked": "srun: error: Job allocation 4423911 has been revoked\n",
    "salloc-allocation-revoked": "salloc: Job allocation 88231 has been revoked.\n",
    "srun-aborted-before-launch": "srun: Job step aborted before step completely launched.\n",
    "megatron-sigterm-exit": (
        "[before the start of training step] datetime: 2024-06-11 01:02:03 \n"
        "[exiting program after receiving SIGTERM.] datetime: 2024-06-11 03:12:45 \n"),
}


@pytest.mark.parametrize("name", sorted(STOPS))
def test_stop_line_is_a_termination(faultline_bin, validate, tmp_path, name):
    inc = first_incident(faultline_bin, validate, tmp_path, STOPS[name])
    assert inc["rule"] in TERMINATION, inc["explanation"]


def test_salloc_time_limit_revoked_is_the_time_limit(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path,
                         "salloc: Job 6012 has exceeded its time limit and its allocation has been revoked.\n")
    assert inc["rule"] == "slurm-time-limit", inc["explanation"]
    assert "exceeded its time limit" in initiating_texts(inc)[0]


RAYLET_UNEXPECTED = {
    "driver": ("(raylet) Raylet is terminated. Termination is unexpected. Possible reasons include: "
               "(1) SIGKILL by the user or system OOM killer, (2) Invalid memory access from Raylet "
               "causing SIGSEGV or SIGBUS, (3) Other termination signals. Last 20 lines of the Raylet logs:\n"
               "    [2025-03-02 11:04:59,001 I 811 811] (raylet) node_manager.cc:1020: Sending Python GC request\n"),
    "unreadable-log": ("2025-03-02 11:05:00,120\tERROR agent.py:190 -- Raylet is terminated. Failed to read "
                       "Raylet logs at /opt/ray/logs/raylet.out: [Errno 2] No such file or directory!\n"),
}


@pytest.mark.parametrize("name", sorted(RAYLET_UNEXPECTED))
def test_unexpected_raylet_death_is_a_fatal_line(faultline_bin, validate, tmp_path, name):
    inc = first_incident(faultline_bin, validate, tmp_path, RAYLET_UNEXPECTED[name])
    assert inc["rule"] == "unrecognised-fatal-error", inc["explanation"]
    assert "Raylet is terminated." in initiating_texts(inc)[0]


HEALTHY = {
    "raylet-graceful": "2025-03-02 11:05:00,120\tINFO agent.py:187 -- Raylet is terminated. Termination is graceful.\n",
    "salloc-granted": ("salloc: Granted job allocation 88231\n"
                       "salloc: Relinquishing job allocation 88231\n"),
    "megatron-duration-exit": "[exiting program after 690.0159624854724 minutes] datetime: 2025-02-17 19:54:10 \n",
}


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_ordinary_end_is_no_incident(faultline_bin, validate, tmp_path, name):
    assert diagnose_text(faultline_bin, validate, tmp_path, HEALTHY[name]) == []
