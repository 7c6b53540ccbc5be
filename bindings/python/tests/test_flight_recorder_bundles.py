"""Evidence bundles carry Flight Recorder dumps (bundle format 2): a bundle
of an attempt with dumps keeps them, bundles merge their dumps as one scan
of all the files would, a prior bundle's dumps stay with its attempt, and a
format 1 bundle (tests/fixtures/bundles/format1-xid79) still loads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import faultline

from conftest import REPO_ROOT

MAKE_DUMPS = REPO_ROOT / "tests" / "flightrec" / "make_dumps.py"
GEN_ATTEMPTS = REPO_ROOT / "tests" / "attempts" / "gen_attempts.py"
FORMAT1 = REPO_ROOT / "tests" / "fixtures" / "bundles" / "format1-xid79"


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> Path:
    """make_dumps.py's watchdog-timeout job: logs/ and dumps/ (pickle, JSON,
    gzipped, renamed), rank 5 missing at the wavefront."""
    out = tmp_path_factory.mktemp("fr")
    subprocess.run([sys.executable, str(MAKE_DUMPS), str(out), "--only", "job"], check=True, timeout=300)
    return out / "job"


def bundle_of(*paths: Path) -> bytes:
    with faultline.Session() as s:
        s.add_path([str(p) for p in paths])
        return s.export_bundle()


def doc(report: faultline.Report) -> dict:
    return json.loads(report.to_json())


def same_diagnosis(got: dict, want: dict) -> None:
    assert got["flight_recorder"] == want["flight_recorder"]
    assert len(got["incidents"]) == len(want["incidents"])
    for g, w in zip(got["incidents"], want["incidents"]):
        for key in ("rule", "confidence", "action", "flight_recorder", "explanation"):
            assert g.get(key) == w.get(key), key
        assert g["initiating"]["rank"] == w["initiating"]["rank"]
        assert g["initiating"].get("suspects") == w["initiating"].get("suspects")


def test_bundle_keeps_the_dumps(job: Path) -> None:
    want = doc(faultline.diagnose(str(job)))
    assert want["flight_recorder"]["suspects"] == [5]
    got = doc(faultline.report_from_bundles([bundle_of(job)]))
    same_diagnosis(got, want)


def test_bundles_of_logs_and_of_dumps_merge_as_the_files(job: Path) -> None:
    """The logs' bundle and the dumps' bundle together: the dumps name rank
    5 at the wavefront and the logs its silence, one suspect from both."""
    want = doc(faultline.diagnose(str(job)))
    got = doc(faultline.report_from_bundles([bundle_of(job / "logs"), bundle_of(job / "dumps")]))
    same_diagnosis(got, want)
    primary = got["incidents"][0]
    assert primary["initiating"]["suspects"] == [5]
    assert [f["rank"] for f in primary["flight_recorder"]] == [5]
    logs_only = doc(faultline.report_from_bundles([bundle_of(job / "logs")]))
    assert "flight_recorder" not in logs_only
    assert primary["confidence"] > logs_only["incidents"][0]["confidence"]


def test_prior_bundle_keeps_its_dumps_with_its_attempt(job: Path) -> None:
    with faultline.Session() as s:
        s.add_prior_bundle(bundle_of(job))
        s.add_path(str(job / "logs"))
        got = doc(s.finish())
    assert {d["source"].split("/")[0] for d in got["flight_recorder"]["dumps"]} == {"<prior bundle 1>"}
    assert got["flight_recorder"]["suspects"] == [5]
    by_attempt = {i["attempt"]: i for i in got["incidents"] if i["rule"] == "nccl-watchdog-timeout"}
    assert [f["rank"] for f in by_attempt[0]["flight_recorder"]] == [5]
    assert by_attempt[0]["flight_recorder"][0]["source"].startswith("<prior bundle 1>/")
    # This session's logs had no dumps of their own.
    assert "flight_recorder" not in by_attempt[1]


def test_format1_bundle_still_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    old = (FORMAT1 / "format1.flb").read_bytes()
    monkeypatch.chdir(FORMAT1)  # the bundle names its sources node017/...
    want = doc(faultline.diagnose("node017"))
    got = doc(faultline.report_from_bundles([old]))
    assert got["incidents"][0]["rule"] == want["incidents"][0]["rule"] == "xid-79-fallen-off-bus"
    assert "flight_recorder" not in got
    same = ("rule", "confidence", "action", "explanation")
    assert [{k: i[k] for k in same} for i in got["incidents"]] == [{k: i[k] for k in same}
                                                                   for i in want["incidents"]]
    with faultline.Session() as s:
        s.add_prior_bundle(old)
        s.add_path("node017")
        report = s.finish()
    assert [a.label for a in report.attempts] == ["prior bundle 1", "this session"]


def test_untimed_attempts_keep_their_steps_through_a_bundle(tmp_path: Path) -> None:
    """An untimed torchrun log with two restarts: the bundle keeps each
    run's last progress line, so the merged report still stops the job for
    an OOM recurring at step 300, as a diagnosis of the file does."""
    out = tmp_path / "elastic_untimed"
    subprocess.run([sys.executable, str(GEN_ATTEMPTS), str(out), "--case", "elastic_untimed"], check=True)
    want = doc(faultline.diagnose(str(out)))
    got = doc(faultline.report_from_bundles([bundle_of(out)]))
    assert [a["primary"]["step"] for a in got["attempts"]] == [300, 300, 300]
    assert got["incidents"][0]["action"] == want["incidents"][0]["action"]
    assert got["incidents"][0]["action"]["kind"] == "stop"
