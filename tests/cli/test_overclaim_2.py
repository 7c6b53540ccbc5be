"""A matching message alone does not confirm a cause (issue #18).

srun's "task N: Killed" is the strsignal of a SIGKILL (Slurm's
src/srun/launch.c, _task_finish). srun says "Out Of Memory" instead where
slurmstepd tied the task's end to an OOM kill (SIG_OOM), so "Killed" is a
kill srun could not tie to the OOM killer: the scheduler's kill after its
grace period (time limit, scancel, a failed node), an OOM kill slurmstepd
had not counted yet, anyone's kill -9. Its sender is the missing fact; a
line of the OOM killer still leads to the OOM reference."""
import json
import subprocess

OOM = "OOM Killed Mid-Step"


def diagnose(binary, tmp_path, text, name="job.log"):
    log = tmp_path / name
    log.write_text(text)
    p = subprocess.run([binary, "diagnose", "--json", str(log)], capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    return json.loads(p.stdout)


def primary(report):
    incidents = report.get("incidents") or []
    assert incidents, "no incident"
    return incidents[0]


# tonyyxliu/CUHKSZ-CSC4005#51: the maintainer's answer is that the run took
# too long and was killed at its time limit, not that it ran out of memory.
SRUN_KILLED_TIME_LIMIT = """\
srun: error: node25: task 11: Killed
srun: error: node25: task 19: Killed
srun: error: node25: task 9: Killed
srun: error: node25: task 17: Killed
srun: error: node25: task 5: Killed
srun: error: node25: task 23: Killed
"""

# ArjunaCluster/ArjunaUsers#48 (tests/cli/endings): srun's report and its
# step's end, nothing else.
SRUN_KILLED_FORCE_TERMINATED = """\
srun: error: c002: task 0: Killed
srun: Force Terminated StepId=120.0
"""


def test_srun_killed_alone_is_a_kill_of_unknown_sender(faultline_bin, tmp_path, validate):
    for text in (SRUN_KILLED_TIME_LIMIT, SRUN_KILLED_FORCE_TERMINATED):
        report = diagnose(faultline_bin, tmp_path, text)
        validate(report)
        inc = primary(report)
        assert inc["reference"] != OOM, inc["reference"]
        assert inc["action"]["kind"] == "unknown"
        assert "SIGKILL" in inc["explanation"]
        # Who sent the SIGKILL is what would settle it: the OOM killer's line
        # in dmesg, or the scheduler's record of the job's end.
        facts = " ".join(inc["missing_facts"])
        assert "who sent the SIGKILL" in facts and "sacct" in facts
        assert "who sent the SIGKILL" in inc["action"]["missing_fact"]
        texts = [e["text"] for e in inc["initiating"]["evidence"]]
        assert any(": Killed" in t for t in texts), texts


def test_srun_killed_with_the_oom_killers_line_is_oom(faultline_bin, tmp_path):
    """The same report with slurmstepd's OOM count of the step (worded as
    Slurm prints it, e.g. in OSC's and NeSI's pages on OOM kills), or the
    kernel's OOM kill, names the OOM reference."""
    stepd = ("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=120.0 cgroup. Some of your "
             "processes may have been killed by the cgroup out-of-memory handler.\n")
    inc = primary(diagnose(faultline_bin, tmp_path, SRUN_KILLED_FORCE_TERMINATED + stepd))
    assert inc["reference"] == OOM and inc["rule"] == "slurm-oom-kill-event"
    kernel = ("[Mon Nov  2 13:46:41 2026] Out of memory: Killed process 31337 (python3) "
              "total-vm:98234112kB, anon-rss:90112004kB, file-rss:0kB, shmem-rss:0kB, UID:0 "
              "pgtables:180324kB oom_score_adj:0\n")
    inc = primary(diagnose(faultline_bin, tmp_path, kernel + SRUN_KILLED_FORCE_TERMINATED))
    assert inc["reference"] == OOM and inc["rule"] == "host-oom-kill"


def test_srun_out_of_memory_is_still_oom(faultline_bin, tmp_path):
    """srun's own 'Out Of Memory' (slurmstepd flagged the task: SIG_OOM)."""
    inc = primary(diagnose(faultline_bin, tmp_path,
                           "srun: error: nid001277: tasks 1-3: Out Of Memory\n"
                           "srun: Terminating StepId=440575.0\n"))
    assert inc["reference"] == OOM


def test_srun_killed_after_a_task_exit_keeps_the_exit(faultline_bin, tmp_path):
    """The kills srun reports after another task's error exit are srun ending
    the step (facebookresearch/deit#102, tests/cli/endings)."""
    text = ("srun: error: learnfair0824: task 5: Exited with exit code 1\n"
            "srun: launch/slurm: _step_signal: Terminating StepId=43575862.0\n"
            "srun: error: learnfair0824: tasks 3,7: Killed\n"
            "srun: error: learnfair0833: task 8: Killed\n")
    inc = primary(diagnose(faultline_bin, tmp_path, text))
    texts = [e["text"] for e in inc["initiating"]["evidence"]]
    assert any("task 5: Exited with exit code 1" in t for t in texts), texts
