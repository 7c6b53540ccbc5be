from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

import faultline
from conftest import REPO_ROOT


def test_primary_incident(report: faultline.Report, incident: dict) -> None:
    p = report.primary
    assert p is not None and p is report.incidents[0]
    assert p.rule == incident["rule"]
    assert p.rank == incident["rank"]
    assert p.host == incident["host"]
    assert p.gpu == incident["gpu"]
    assert p.time == datetime(2026, 11, 2, 3, 12, 5, tzinfo=timezone.utc)
    assert not p.inferred
    assert 0.5 < p.confidence <= 1.0
    assert p.category and p.reference and p.title and p.fix and p.verify and p.explanation
    [ev] = p.initiating.evidence
    assert ev.source.endswith(os.path.join("node017", "dmesg.log"))
    assert ev.line == 4
    assert "GPU has fallen off the bus" in ev.text
    assert ev.fields["xid"] == "79"
    [coll] = p.collateral
    assert coll.rule == incident["collateral_rule"]
    assert coll.count == len(incident["collateral_ranks"])
    assert coll.ranks == incident["collateral_ranks"]
    assert sorted(coll.hosts) == ["node017", "node018"]
    assert coll.first_time is not None and p.time is not None
    assert (coll.first_time - p.time).total_seconds() == pytest.approx(30 * 60 + 5, abs=1)
    assert "0-2, 4-7" in coll.summary()


def test_report_parts(report: faultline.Report) -> None:
    assert report.input.sources == 10
    assert report.input.ranks == 8 and report.input.hosts == 2
    assert report.input.errors == []
    assert report.job_window.start == datetime(2026, 11, 2, 3, 0, tzinfo=timezone.utc)
    assert report.job_window.end is not None and report.job_window.end.hour == 3
    assert report.ignored == []
    assert report.ruleset.name and report.ruleset.rules > 0
    assert report.faultline_version == faultline.library_version()
    r = repr(report)
    assert "xid-79-fallen-off-bus" in r and "rank=3" in r and "node017" in r
    assert "PRIMARY DIAGNOSIS" in report.to_text() and str(report) == report.to_text()


def test_report_validates_against_schema(report: faultline.Report, schema: dict) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(report.to_dict(), schema)
    jsonschema.validate(json.loads(report.to_json()), schema)
    # The evidence array is an addition the schema allows.
    jsonschema.validate(report.to_dict(evidence=True), schema)


def test_to_json_round_trip(report: faultline.Report) -> None:
    text = report.to_json()
    assert json.loads(text) == report.to_dict()
    again = faultline.Report.from_json(text)
    assert again.incidents == report.incidents
    assert again.ignored == report.ignored
    assert again.job_window == report.job_window
    assert again.input == report.input
    assert again.to_dict() == report.to_dict()
    assert json.loads(report.to_json(indent=2)) == report.to_dict()
    full = faultline.Report.from_json(report.to_json(evidence=True))
    assert full.evidence == report.evidence
    assert full.evidence_count == report.evidence_count
    assert full.to_dict(evidence=True) == report.to_dict(evidence=True)
    assert full.closed


def test_evidence_batches_match_count(report: faultline.Report) -> None:
    n = faultline._ffi.lib.fl_report_evidence_count(report._ptr())
    assert report.evidence_count == n == report.totals.evidence > 0
    assert len(report.evidence) == n
    # Small batches walk the same records as the default ones.
    assert list(report.iter_evidence(batch=3)) == report.evidence


def test_evidence_matches_jsonl(report: faultline.Report) -> None:
    # The batched views, converted in Python, say what the library's own
    # JSON lines say, fields included (captures plus gpu/monotonic_s/pid).
    lines = [json.loads(x) for x in report.evidence_jsonl().splitlines()]
    assert [e.to_dict() for e in report.evidence] == lines
    assert any("gpu" in e.fields for e in report.evidence)


MANY_TEMPLATES = [
    "2026-11-02T03:00:{s:02d}.{i:06d}Z [rank{r}]: {{'loss': 2.3456, 'grad_norm': 1.2345, 'learning_rate': 4.9e-05, 'epoch': 0.01}}",
    "2026-11-02T03:00:{s:02d}.{i:06d}Z Detected clock throttling due to thermal violation in GPU {r}.",
    "2026-11-02T03:00:{s:02d}.{i:06d}Z GPU {r}'s NvLink link 12 is currently down",
    "2026-11-02 03:00:{s:02d},118 INFO sdc_monitor: step={i} param_l2_distance=0.004127 ref=run-417",
    # Metric lines above are kept as series points, not evidence records:
    # two more rules' lines keep the evidence list past two batches.
    "2026-11-02T03:00:{s:02d}.{i:06d}Z node01 kernel: NVRM: Xid (PCI:0000:2d:00): 94, pid=5107, Contained: SM (0x1). RST: No, D-RST: No",
    "2026-11-02T03:00:{s:02d}.{i:06d}Z [rank{r}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
]


def write_many(path: Path, per_template: int = 2200) -> int:
    out = []
    for i in range(per_template):
        for t in MANY_TEMPLATES:
            out.append(t.format(s=i % 60, i=i, r=i % 8))
    path.write_text("\n".join(out) + "\n")
    return len(out)


def test_many_batches(tmp_path: Path) -> None:
    # More than two batches of 4096 views (the per-rule cap keeps 2,500).
    write_many(tmp_path / "big.log")
    r = faultline.diagnose(tmp_path / "big.log")
    count = faultline._ffi.lib.fl_report_evidence_count(r._ptr())
    assert count > 2 * 4096
    ev = r.evidence
    assert len(ev) == count
    assert sum(1 for _ in r.iter_evidence(batch=1000)) == count
    assert [e.offset for e in ev] == sorted(e.offset for e in ev)
    # The loss lines are points of their series, counted, not records.
    caps = r.input.caps
    assert caps.metric_points >= 2200
    assert caps.evidence_kept + caps.metric_points <= caps.matches
    try:
        import pandas  # noqa: F401
    except ImportError:
        return
    assert len(r.evidence_frame(warn=False)) == count


def test_paths_forms(incident: dict) -> None:
    root: Path = incident["path"]
    a = faultline.diagnose(str(root / "node017"))
    b = faultline.diagnose([root / "node017" / "dmesg.log", str(root / "node018")])
    assert a.input.sources == 5
    assert b.input.sources == 6
    assert b.primary is not None


def test_missing_path_raises_file_not_found(tmp_path: Path, incident: dict) -> None:
    missing = tmp_path / "nope" / "rank-0.log"
    with pytest.raises(FileNotFoundError) as ei:
        faultline.diagnose([missing, incident["path"] / "node018"])
    assert isinstance(ei.value, faultline.PathNotFoundError)
    assert isinstance(ei.value, faultline.Error) and ei.value.status == "FL_ERR_NOT_FOUND"
    assert ei.value.filename == str(missing)
    assert str(missing) in str(ei.value)
    with pytest.raises(FileNotFoundError):
        faultline.diagnose("/does/not/exist")


def test_input_with_no_log_raises(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(faultline.FaultlineIOError, match="empty"):
        faultline.diagnose(tmp_path / "empty")
    bad = tmp_path / "only" / "rank-0.log.gz"
    bad.parent.mkdir()
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage-not-gzip")
    with pytest.raises(OSError, match="rank-0.log.gz"):
        faultline.diagnose(bad.parent)


def test_unreadable_input_among_others_warns(tmp_path: Path, incident: dict) -> None:
    bad = tmp_path / "node099" / "rank-9.log.gz"
    bad.parent.mkdir()
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage-not-gzip")
    with pytest.warns(faultline.InputWarning, match="rank-9.log.gz") as rec:
        r = faultline.diagnose([bad, incident["path"] / "node018"])
    assert rec[0].filename == __file__  # points at the caller
    assert len(r.input.errors) == 1
    err = r.input.errors[0]
    assert err.source == str(bad)
    assert err.status == "FL_ERR_IO"
    assert r.totals.errors == 1
    assert "input errors" in r._repr_html_()


def test_options(incident: dict) -> None:
    start = "2026-11-02T02:00:00Z"
    end = datetime(2026, 11, 2, 5, 0, tzinfo=timezone.utc)
    r = faultline.diagnose(
        incident["path"], threads=1, job_start=start, job_end=end, clock_offsets={"node018": 0.5}, tz="UTC"
    )
    assert r.job_window.start == datetime(2026, 11, 2, 2, 0, tzinfo=timezone.utc)
    assert r.job_window.end == end
    assert r.clock_offsets["node018"]["seconds"] == pytest.approx(0.5)
    assert r.primary is not None and r.primary.rule == incident["rule"]


def test_bad_options(incident: dict) -> None:
    with pytest.raises(faultline.InvalidArgumentError):
        faultline.diagnose(incident["path"], tz="Not/AZone")
    with pytest.raises(faultline.ParseError):
        faultline.diagnose(incident["path"], job_start="yesterday-ish")
    with pytest.raises(TypeError):
        faultline.diagnose(incident["path"], job_start=[1])  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        faultline.diagnose(incident["path"], threads=-1)


def test_report_close(incident: dict) -> None:
    r = faultline.diagnose(incident["path"])
    ev = r.evidence
    r.close()
    r.close()
    assert r.closed
    assert r.evidence == ev  # read before closing: still there
    assert r.primary is not None
    with pytest.raises(faultline.InvalidArgumentError):
        r.to_text()
    with faultline.diagnose(incident["path"]) as r2:
        assert r2.evidence_count > 0
    assert r2.closed
    assert json.loads(r2.to_json()) == r2.to_dict()


def test_time_parse() -> None:
    assert faultline.parse_time("1970-01-01T00:00:01.5Z") == 1_500_000
    assert faultline.parse_time("1762091201.5") == 1762091201_500_000
    with pytest.raises(faultline.ParseError):
        faultline.parse_time("not a time")


def test_c_accessors_agree_with_the_json(tmp_path: Path, incident: dict) -> None:
    """fl_report_input_error, fl_report_incident_collateral, fl_report_ignored
    and fl_report_job_window give what the JSON holds, without parsing it."""
    import ctypes

    from faultline import _ffi

    bad = tmp_path / "node099" / "rank-9.log.gz"
    bad.parent.mkdir()
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage-not-gzip")
    with pytest.warns(faultline.InputWarning):
        r = faultline.diagnose([incident["path"], bad], job_start="2026-11-02T03:00:00Z")
    h = r._handle.get()
    lib = _ffi.lib
    assert lib.fl_report_input_error_count(h) == len(r.input.errors) == 1
    ie = _ffi.InputErrorView(size=ctypes.sizeof(_ffi.InputErrorView))
    assert lib.fl_report_input_error(h, 0, ctypes.byref(ie)) == _ffi.FL_OK
    assert ie.source.decode() == r.input.errors[0].source and ie.message.decode() == r.input.errors[0].message
    assert lib.fl_status_str(ie.status).decode() == r.input.errors[0].status
    start, end = ctypes.c_int64(), ctypes.c_int64()
    assert lib.fl_report_job_window(h, ctypes.byref(start), ctypes.byref(end)) == _ffi.FL_OK
    assert faultline._to_us(r.job_window.start) == start.value
    inc = r.incidents[0]
    for k, c in enumerate(inc.collateral):
        cv = _ffi.CollateralView(size=ctypes.sizeof(_ffi.CollateralView))
        assert lib.fl_report_incident_collateral(h, 0, k, ctypes.byref(cv)) == _ffi.FL_OK
        assert cv.rule.decode() == c.rule and cv.count == c.count
        assert [cv.ranks[j] for j in range(cv.rank_count)] == c.ranks
        assert [cv.hosts[j].decode() for j in range(cv.host_count)] == c.hosts
        assert cv.sample.text.decode() == c.sample.text
    assert lib.fl_report_ignored_count(h) == len(r.ignored)
    for i, ig in enumerate(r.ignored):
        v = _ffi.IgnoredView(size=ctypes.sizeof(_ffi.IgnoredView))
        assert lib.fl_report_ignored(h, i, ctypes.byref(v)) == _ffi.FL_OK
        assert (v.rule.decode(), v.reason.decode(), v.count) == (ig.rule, ig.reason, ig.count)


def test_flight_recorder_dumps(tmp_path: Path) -> None:
    """A watchdog-timeout job's logs plus its Flight Recorder dumps (written
    by tests/flightrec/make_dumps.py): the report's flight_recorder section
    and the primary incident's findings name rank 5."""
    make = REPO_ROOT / "tests" / "flightrec" / "make_dumps.py"
    subprocess.run([sys.executable, str(make), str(tmp_path / "d"), "--only", "job"], check=True)
    r = faultline.diagnose(tmp_path / "d" / "job")
    fr = r.flight_recorder
    assert fr is not None and fr.suspects == [5]
    assert sorted(d.rank for d in fr.dumps) == list(range(8))
    world = next(g for g in fr.groups if g.name == "0")
    assert (world.wavefront, world.wavefront_op, world.missing) == (6, "all_reduce", [5])
    assert r.primary is not None and r.primary.rank == 5
    assert [(f.kind, f.rank, f.seq) for f in r.primary.flight_recorder] == [("missing-rank", 5, 6)]
    assert faultline.diagnose(tmp_path / "d" / "job" / "logs").flight_recorder is None


def test_initiating_hca() -> None:
    """The report's optional initiating.hca (the InfiniBand HCA the
    initiating line names) reaches Initiating.hca; absent, it is None."""
    from faultline._report import Initiating

    d = {"rank": 2, "host": "node1", "time": None, "evidence": []}
    assert Initiating.from_dict(d).hca is None
    assert Initiating.from_dict({**d, "hca": "mlx5_3"}).hca == "mlx5_3"
