"""Attempts of one job (gen_attempts.py): the report lists them in time
order with each one's primary, the last attempt's failure is the report's
primary, and what recurs from one attempt to the next is filled and raises
the confidence."""
import json
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
GEN = HERE / "gen_attempts.py"
CASES = ["xid_same_host", "oom_same_step", "resume_checkpoint", "transient_nccl", "elastic", "elastic_untimed",
         "slurm_requeue", "sacct_requeue"]


def generate(tmp_path, case, seed=1):
    out = tmp_path / case
    subprocess.run([sys.executable, str(GEN), str(out), "--case", case, "--seed", str(seed)], check=True)
    return out, json.loads((tmp_path / (case + ".truth.json")).read_text())


def diagnose(faultline_bin, path, *extra):
    p = subprocess.run([faultline_bin, "diagnose", *extra, str(path)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p.stdout


@pytest.mark.parametrize("case", CASES)
def test_attempts_in_order_with_their_primaries(faultline_bin, validate, tmp_path, case):
    archive, truth = generate(tmp_path, case)
    report = json.loads(diagnose(faultline_bin, archive, "--json"))
    validate(report)
    got = report["attempts"]
    want = truth["attempts"]
    assert [a["index"] for a in got] == list(range(len(want)))
    assert [a["label"] for a in got] == [w["label"] for w in want]
    starts = [a["start"] for a in got if a["start"] is not None]
    assert starts == sorted(starts), starts
    for a, w in zip(got, want):
        if w["rule"] is None:
            assert a["primary"] is None, a
            continue
        assert a["primary"]["rule"] == w["rule"], a
        for key in ("host", "rank", "step"):
            if key in w:
                assert a["primary"][key] == w[key], (key, a)
    # The report's primary is the last attempt that failed; every incident
    # says which attempt it belongs to, the newest attempts' first.
    failed = [k for k, w in enumerate(want) if w["rule"] is not None]
    assert report["incidents"][0]["attempt"] == failed[-1]
    assert report["incidents"][0]["rule"] == want[failed[-1]]["rule"]
    order = [i["attempt"] for i in report["incidents"]]
    assert order == sorted(order, reverse=True), order


@pytest.mark.parametrize("case", CASES)
def test_recurrence(faultline_bin, tmp_path, case):
    archive, truth = generate(tmp_path, case)
    report = json.loads(diagnose(faultline_bin, archive, "--json"))
    for k, (w, expect) in enumerate(zip(truth["attempts"], truth["recurrence"])):
        if w["rule"] is None:
            continue
        primary = next(i for i in report["incidents"] if i["attempt"] == k and i["rule"] == w["rule"])
        rec = primary["recurrence"]
        assert rec["attempts"] == expect.get("attempts", []), (k, rec)
        assert rec["same_host"] == expect.get("same_host", 0), (k, rec)
        assert rec["same_step"] == expect.get("same_step", 0), (k, rec)
        assert rec["resume_failed_on_previous_checkpoint"] == expect.get(
            "resume_failed_on_previous_checkpoint", False), (k, rec)
        recurred = bool(rec["attempts"]) or rec["resume_failed_on_previous_checkpoint"]
        assert ("Recurrence:" in primary["explanation"]) == recurred, primary["explanation"]


def test_recurrence_raises_confidence(faultline_bin, tmp_path):
    """The same Xid on the same host in the second attempt: more confident
    than the first attempt's, and the explanation gives both figures."""
    archive, _ = generate(tmp_path, "xid_same_host")
    report = json.loads(diagnose(faultline_bin, archive, "--json"))
    xid = [i for i in report["incidents"] if i["rule"] == "xid-79-fallen-off-bus"]
    first = next(i for i in xid if i["attempt"] == 0)
    second = next(i for i in xid if i["attempt"] == 1)
    assert second["confidence"] >= first["confidence"]
    assert "confidence rises from" in second["explanation"]
    assert "on this host (node02)" in second["explanation"]


def test_one_attempt_is_not_listed(faultline_bin, tmp_path):
    """One attempt's directory alone is one run: no attempts, no attempt or
    recurrence fields."""
    archive, _ = generate(tmp_path, "oom_same_step")
    report = json.loads(diagnose(faultline_bin, archive / "restart-1", "--json"))
    assert "attempts" not in report
    assert report["incidents"][0]["rule"] == "cuda-oom"
    assert "attempt" not in report["incidents"][0]
    assert "recurrence" not in report["incidents"][0]
    assert report["incidents"][0]["step"] == 1200


def test_earlier_failure_is_not_collateral_of_the_later(faultline_bin, tmp_path):
    """The first attempt's Xid stays the first attempt's incident: the
    second attempt's incident has no line of the first among its evidence."""
    archive, _ = generate(tmp_path, "xid_same_host")
    report = json.loads(diagnose(faultline_bin, archive, "--json"))
    for inc in report["incidents"]:
        label = "attempt_%d/" % (inc["attempt"] + 1)
        lines = inc["initiating"]["evidence"] + [c["sample"] for c in inc["collateral"]]
        for ev in lines:
            assert ev["source"].startswith(str(archive / label)), (inc["attempt"], ev["source"])


def test_text_lists_attempts(faultline_bin, tmp_path):
    archive, truth = generate(tmp_path, "elastic")
    text = diagnose(faultline_bin, archive)
    assert "attempts (3, oldest first" in text
    for k, w in enumerate(truth["attempts"]):
        assert "  %d (%s) [elastic-restart]" % (k + 1, w["label"]) in text
    assert "recurrence: same failure in attempts 1 (first run), 2 (restart 1)" in text


def test_other_jobs_requeues_do_not_split(faultline_bin, tmp_path):
    """slurmctld logs every job's requeues: only the job most of them name
    makes attempts (the generator adds one requeue of another job early on)."""
    archive, truth = generate(tmp_path, "slurm_requeue")
    report = json.loads(diagnose(faultline_bin, archive, "--json"))
    assert len(report["attempts"]) == len(truth["attempts"]) == 2
    assert all(a["recognised"] == "slurm-requeue" for a in report["attempts"])


# ---- Prior attempts' bundles (scan --bundle, diagnose --prior-bundle)


def scan_bundle(faultline_bin, path, out):
    p = subprocess.run([faultline_bin, "scan", "--bundle", str(out), str(path)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return out


def test_prior_bundle_is_an_earlier_attempt(faultline_bin, validate, tmp_path):
    """The first attempt kept as a bundle, the second read as logs: the same
    attempts and recurrence as both read as logs."""
    archive, _ = generate(tmp_path, "xid_same_host")
    bundle = scan_bundle(faultline_bin, archive / "attempt_1", tmp_path / "attempt_1.flb")
    report = json.loads(diagnose(faultline_bin, archive / "attempt_2", "--json", "--prior-bundle", str(bundle)))
    validate(report)
    attempts = report["attempts"]
    assert [(a["label"], a["recognised"]) for a in attempts] == [("prior bundle 1", "bundle"),
                                                                  ("attempt_2", "directory")]
    assert all(a["primary"]["rule"] == "xid-79-fallen-off-bus" and a["primary"]["host"] == "node02"
               for a in attempts)
    primary = report["incidents"][0]
    assert primary["attempt"] == 1
    assert primary["recurrence"]["attempts"] == [0] and primary["recurrence"]["same_host"] == 1
    # The prior attempt's lines are named as its bundle's.
    earlier = next(i for i in report["incidents"] if i["attempt"] == 0)
    assert earlier["initiating"]["evidence"][0]["source"].startswith("<prior bundle 1>/")


def test_prior_bundles_in_order(faultline_bin, tmp_path):
    archive, truth = generate(tmp_path, "oom_same_step")
    first = scan_bundle(faultline_bin, archive / "restart-0", tmp_path / "r0.flb")
    second = scan_bundle(faultline_bin, archive / "restart-1", tmp_path / "r1.flb")
    out = tmp_path / "empty"
    out.mkdir()
    (out / "note.log").write_text("2026-11-02 12:00:00,000 - train - INFO - starting\n")
    report = json.loads(diagnose(faultline_bin, out, "--json", "--prior-bundle", str(first),
                                 "--prior-bundle", str(second)))
    labels = [a["label"] for a in report["attempts"]]
    assert labels == ["prior bundle 1", "prior bundle 2", "this session"]
    assert report["attempts"][1]["primary"]["step"] == 1200
    oom = next(i for i in report["incidents"] if i["attempt"] == 1)
    assert oom["recurrence"]["same_step"] == 1


def test_prior_bundle_errors_exit_2(faultline_bin, tmp_path):
    archive, _ = generate(tmp_path, "oom_same_step")
    junk = tmp_path / "junk.flb"
    junk.write_bytes(b"not a bundle at all")
    big = tmp_path / "big.flb"
    with open(big, "wb") as f:
        f.truncate((64 << 20) + 1)
    for bad, says in ((junk, "not a valid evidence bundle"), (big, "64 MiB"),
                      (tmp_path / "missing.flb", "No such file")):
        p = subprocess.run([faultline_bin, "diagnose", "--prior-bundle", str(bad), str(archive / "restart-1")],
                           capture_output=True, text=True)
        assert p.returncode == 2, (bad, p.stderr)
        assert str(bad) in p.stderr and says in p.stderr, p.stderr
        assert p.stdout == ""


def test_too_many_prior_bundles_exit_2(faultline_bin, tmp_path):
    archive, _ = generate(tmp_path, "oom_same_step")
    bundle = scan_bundle(faultline_bin, archive / "restart-0", tmp_path / "r0.flb")
    args = []
    for _ in range(17):
        args += ["--prior-bundle", str(bundle)]
    p = subprocess.run([faultline_bin, "diagnose", *args, str(archive / "restart-1")], capture_output=True, text=True)
    assert p.returncode == 2 and "at most 16" in p.stderr, p.stderr


def test_scan_needs_json_or_bundle(faultline_bin, tmp_path):
    archive, _ = generate(tmp_path, "oom_same_step")
    p = subprocess.run([faultline_bin, "scan", str(archive)], capture_output=True, text=True)
    assert p.returncode == 1 and "--bundle" in p.stderr
    p = subprocess.run([faultline_bin, "scan", "--json", "--bundle", str(tmp_path / "x.flb"), str(archive)],
                       capture_output=True, text=True)
    assert p.returncode == 1


def test_restart_count_without_the_runs_is_a_missing_fact(faultline_bin, tmp_path):
    """scontrol counts two restarts; the input holds one run, then two: the
    primary says the earlier runs are missing, until all three are there."""
    archive, _ = generate(tmp_path, "oom_same_step")
    (archive / "restart-1" / "scontrol-show-job.txt").write_text(
        "JobId=88231 JobName=pretrain\n   JobState=RUNNING Reason=None Dependency=(null)\n"
        "   Requeue=1 Restarts=2 BatchFlag=1 Reboot=0 ExitCode=0:0\n")
    for path, runs in ((archive / "restart-1", 1), (archive, 2)):
        report = json.loads(diagnose(faultline_bin, path, "--json"))
        facts = report["incidents"][0]["missing_facts"]
        assert any("Restarts=2" in f and "holds %d run(s)" % runs in f for f in facts), facts
        assert len(report.get("attempts", [])) == (runs if runs > 1 else 0)
    (archive / "restart-1" / "scontrol-show-job.txt").write_text("   Requeue=1 Restarts=1 BatchFlag=1 Reboot=0\n")
    report = json.loads(diagnose(faultline_bin, archive, "--json"))
    assert not any("Restarts=" in f for f in report["incidents"][0]["missing_facts"])


def test_crash_loop_keeps_the_newest_attempts_apart(faultline_bin, tmp_path):
    """40 torchelastic restarts: the newest 31 attempts stay apart, the 10
    earliest runs read as one; the newest failure recurs in all 31 before it."""
    lines = []
    for n in range(41):
        stamp = "2026-11-02 10:%02d:%02d" % (n // 60, n % 60)
        lines.append("[rank1]:[titan] %s,000 - root - INFO - step: 20  loss:  2.1000  memory: 61.20GiB(77.32%%)  "
                     "tps: 6,321  tflops: 366.06  mfu: 37.01%%" % stamp)
        lines.append("[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a "
                     "total capacity of 79.15 GiB of which 1.23 GiB is free.")
        if n < 40:
            lines.append("[%s,500] torch.distributed.elastic.agent.server.api: [INFO] [default] Worker group FAILED. "
                         "%d/40 attempts left; will restart worker group" % (stamp, 40 - n))
    log = tmp_path / "loop" / "torchrun.log"
    log.parent.mkdir()
    log.write_text("\n".join(lines) + "\n")
    report = json.loads(diagnose(faultline_bin, log.parent, "--json"))
    attempts = report["attempts"]
    assert len(attempts) == 32
    assert attempts[0]["label"] == "attempts 1-10"
    assert [a["label"] for a in attempts[1:3]] == ["restart 10", "restart 11"]
    assert all(a["primary"]["rule"] == "cuda-oom" for a in attempts)
    primary = report["incidents"][0]
    assert primary["attempt"] == 31
    assert primary["recurrence"]["attempts"] == list(range(31))
    assert primary["recurrence"]["same_step"] == 31


# ---- The decision on a multi-attempt archive, end to end: the action of the
# report's primary (the newest failed attempt's) after recurrence and the
# retry policy; the same read from earlier attempts' bundles.

# Per case: the action of the newest failed attempt's primary, what set it
# (the rule's id when the rule's default stands), and the hosts it drains.
DECISIONS = {
    "xid_same_host": ("restart_excluding", {"recurrence", "xid-79-fallen-off-bus"}, ["node02"]),
    "slurm_requeue": ("restart_excluding", {"xid-79-fallen-off-bus"}, ["node03"]),
    "sacct_requeue": ("restart_excluding", {"xid-79-fallen-off-bus"}, ["node03"]),
    "oom_same_step": ("stop", {"recurrence"}, []),
    "elastic": ("stop", {"recurrence"}, []),
    "elastic_untimed": ("stop", {"recurrence"}, []),
    "resume_checkpoint": ("stop", {"recurrence", "checkpoint-resume-failure"}, []),
    "transient_nccl": ("restart", {"ib-retry-exceeded"}, []),
}


def primary_of(report, truth):
    failed = [k for k, w in enumerate(truth["attempts"]) if w["rule"] is not None]
    inc = report["incidents"][0]
    assert (inc["attempt"], inc["rule"]) == (failed[-1], truth["attempts"][failed[-1]]["rule"]), inc
    return inc


def check_decision(inc, case):
    kind, set_by, hosts = DECISIONS[case]
    act = inc["action"]
    assert act["kind"] == kind, act
    assert act["set_by"] in set_by, act
    assert act.get("exclude_hosts", []) == hosts, act
    assert act["reason"], act


@pytest.mark.parametrize("case", sorted(DECISIONS))
def test_decision_on_attempts(faultline_bin, tmp_path, case):
    archive, truth = generate(tmp_path, case)
    report = json.loads(diagnose(faultline_bin, archive, "--json"))
    check_decision(primary_of(report, truth), case)


def test_oom_once_restarts_and_recurring_stops(faultline_bin, tmp_path):
    """The first attempt's OOM alone is a restart; the second, at the same
    step, stops and its reason names the earlier attempt and the step."""
    archive, _ = generate(tmp_path, "oom_same_step")
    report = json.loads(diagnose(faultline_bin, archive, "--json"))
    by_attempt = {i["attempt"]: i for i in report["incidents"] if i["rule"] == "cuda-oom"}
    assert by_attempt[0]["action"]["kind"] == "restart"
    assert by_attempt[0]["action"]["set_by"] == "cuda-oom"
    reason = by_attempt[1]["action"]["reason"]
    assert "restart-0" in reason and "1200" in reason, reason


@pytest.mark.parametrize("case,prior", [("xid_same_host", 1), ("oom_same_step", 1), ("elastic", 2),
                                        ("slurm_requeue", 1)])
def test_retry_policy_turns_restart_into_stop(faultline_bin, tmp_path, case, prior):
    """At most N restarts per root cause with N earlier attempts ended by
    the same rule: stop, and the reason says the policy did it. One more
    allowed restart leaves the decision to the rule and the recurrence."""
    archive, truth = generate(tmp_path, case)
    report = json.loads(diagnose(faultline_bin, archive, "--json", "--max-restarts-per-rule", str(prior)))
    act = primary_of(report, truth)["action"]
    if DECISIONS[case][0] == "stop":
        # Recurrence stopped it first: the policy has nothing left to turn.
        assert act["kind"] == "stop" and act["set_by"] == "recurrence", act
        return
    assert act["kind"] == "stop" and act["set_by"] == "retry-policy", act
    assert act["reason"].startswith("Retry policy: "), act
    assert "limit of %d restarts per root cause" % prior in act["reason"], act
    assert "instead of %s" % DECISIONS[case][0] in act["reason"], act
    report = json.loads(diagnose(faultline_bin, archive, "--json", "--max-restarts-per-rule", str(prior + 1)))
    check_decision(primary_of(report, truth), case)


def test_retry_policy_per_host(faultline_bin, tmp_path):
    """A restart on a host that already failed the allowed number of times
    stops; a restart that drains the host is not counted against it."""
    archive, truth = generate(tmp_path, "xid_same_host")
    report = json.loads(diagnose(faultline_bin, archive, "--json", "--max-restarts-per-host", "1"))
    check_decision(primary_of(report, truth), "xid_same_host")


# Per case: the earlier attempts' directories kept as bundles, the newest
# read as logs.
BUNDLED = {
    "xid_same_host": (["attempt_1"], "attempt_2"),
    "oom_same_step": (["restart-0"], "restart-1"),
    "resume_checkpoint": (["retry_1"], "retry_2"),
    "transient_nccl": (["run_attempt1"], "run_attempt2"),
}


@pytest.mark.parametrize("case", sorted(BUNDLED))
def test_decision_through_prior_bundles(faultline_bin, tmp_path, case):
    archive, truth = generate(tmp_path, case)
    earlier, newest = BUNDLED[case]
    args = []
    for k, d in enumerate(earlier):
        args += ["--prior-bundle", str(scan_bundle(faultline_bin, archive / d, tmp_path / ("%d.flb" % k)))]
    report = json.loads(diagnose(faultline_bin, archive / newest, "--json", *args))
    assert len(report["attempts"]) == len(truth["attempts"])
    check_decision(primary_of(report, truth), case)
    if DECISIONS[case][0] in ("restart", "restart_excluding") and len(earlier) > 0 and \
            truth["attempts"][-1]["rule"] is not None:
        report = json.loads(diagnose(faultline_bin, archive / newest, "--json", "--max-restarts-per-rule", "1", *args))
        act = primary_of(report, truth)["action"]
        assert act["kind"] == "stop" and act["set_by"] == "retry-policy", act


@pytest.mark.parametrize("through_bundle", [False, True])
def test_retry_policy_counts_only_the_window(faultline_bin, tmp_path, through_bundle):
    """xid_same_host's attempts end about two hours apart: a one-hour window
    leaves the earlier one out and the drain stands, three hours count it.
    The same with the earlier attempt read from its bundle."""
    archive, truth = generate(tmp_path, "xid_same_host")
    inputs = [str(archive)]
    if through_bundle:
        bundle = scan_bundle(faultline_bin, archive / "attempt_1", tmp_path / "a1.flb")
        inputs = ["--prior-bundle", str(bundle), str(archive / "attempt_2")]
    for window, kind in (("1h", "restart_excluding"), ("3h", "stop")):
        report = json.loads(diagnose(faultline_bin, inputs[-1], "--json", "--max-restarts-per-rule", "1",
                                     "--restart-window", window, *inputs[:-1]))
        act = primary_of(report, truth)["action"]
        assert act["kind"] == kind, (window, act)
    assert "within 3 h" in act["reason"], act


def test_untimed_attempts_take_their_step_from_line_order(faultline_bin, tmp_path):
    """Without timestamps each run's last progress line (the one before the
    step goes back at the restart) is that attempt's step: every attempt's
    OOM is at step 300, so the last one recurs at the same step and stops."""
    archive, _ = generate(tmp_path, "elastic_untimed")
    report = json.loads(diagnose(faultline_bin, archive, "--json"))
    assert [a["primary"]["step"] for a in report["attempts"]] == [300, 300, 300]
    inc = report["incidents"][0]
    assert inc["step"] == 300 and inc["recurrence"]["same_step"] == 2
    assert "same step (300)" in inc["action"]["reason"]
