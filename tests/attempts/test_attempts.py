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
CASES = ["xid_same_host", "oom_same_step", "resume_checkpoint", "transient_nccl", "elastic", "slurm_requeue"]


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
    assert report["schema_version"] == "1.3"
    got = report["attempts"]
    want = truth["attempts"]
    assert [a["index"] for a in got] == list(range(len(want)))
    assert [a["label"] for a in got] == [w["label"] for w in want]
    starts = [a["start"] for a in got]
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
