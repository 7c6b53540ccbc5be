from __future__ import annotations

from pathlib import Path

import pytest

import faultline
from faultline._frames import EVIDENCE_COLUMNS, INCIDENT_COLUMNS

from conftest import XID_LINE, write_incident


def test_evidence_frame(report: faultline.Report, incident: dict) -> None:
    pd = pytest.importorskip("pandas")
    df = report.evidence_frame()
    assert list(df.columns) == EVIDENCE_COLUMNS
    assert list(df.columns) == [
        "source", "line", "offset", "time", "time_source", "rank", "host",
        "rule", "signal", "text", "fields", "role",
    ]
    assert len(df) == report.evidence_count
    assert isinstance(df["time"].dtype, pd.DatetimeTZDtype)
    assert str(df["rank"].dtype) == "Int64"
    init = df[df["role"] == "initiating"]
    assert list(init["rule"]) == [incident["rule"]]
    assert int(init["rank"].iloc[0]) == incident["rank"]
    coll = df[df["role"] == "collateral"]
    assert sorted(coll["rank"].astype(int)) == incident["collateral_ranks"]
    # The same rows as the dataclasses.
    ev = report.evidence
    assert list(df["offset"]) == [e.offset for e in ev]
    assert [t.to_pydatetime() if not pd.isna(t) else None for t in df["time"]] == [e.time for e in ev]
    assert list(df["fields"]) == [e.fields for e in ev]


def test_evidence_frame_of_a_json_report(report: faultline.Report) -> None:
    pytest.importorskip("pandas")
    again = faultline.Report.from_json(report.to_json(evidence=True))
    a, b = again.evidence_frame(), report.evidence_frame()
    assert a.drop(columns=["fields"]).astype(str).equals(b.drop(columns=["fields"]).astype(str))


def test_incidents_frame(report: faultline.Report, incident: dict) -> None:
    pytest.importorskip("pandas")
    df = report.incidents_frame()
    assert list(df.columns) == INCIDENT_COLUMNS
    assert len(df) == len(report.incidents) >= 1
    row = df.iloc[0]
    assert bool(row["primary"]) and row["rule"] == incident["rule"]
    assert int(row["rank"]) == incident["rank"] and row["host"] == incident["host"]
    assert row["collateral_ranks"] == incident["collateral_ranks"]
    assert row["collateral_lines"] == len(incident["collateral_ranks"])


def test_empty_report_frames(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    (tmp_path / "quiet.log").write_text("nothing to see here\n")
    r = faultline.diagnose(tmp_path)
    assert r.primary is None
    assert list(r.evidence_frame().columns) == EVIDENCE_COLUMNS and len(r.evidence_frame()) == 0
    assert list(r.incidents_frame().columns) == INCIDENT_COLUMNS and len(r.incidents_frame()) == 0
    assert "no failure signature" in r._repr_html_()
    assert "primary" not in repr(r)


def test_repr_html(report: faultline.Report, incident: dict) -> None:
    html = report._repr_html_()
    p = report.primary
    assert p is not None
    assert html.startswith("<style>") and "<table>" in html
    assert "primary diagnosis" in html
    assert p.rule in html and "confidence" in html
    assert "rank 3 on node017" in html
    assert "dmesg.log:4" in html  # initiating evidence, file:line
    assert "7 x nccl-watchdog-timeout on ranks 0-2, 4-7 (2 hosts)" in html  # collateral summary
    # Evidence text is escaped: the Xid line carries name=<unknown>.
    assert "name=&lt;unknown&gt;" in html and "name=<unknown>" not in html


def test_repr_html_escapes_script(tmp_path: Path) -> None:
    evil = XID_LINE.replace("name=<unknown>", "name=<script>alert('x')</script>")
    write_incident(tmp_path, xid_line=evil)
    r = faultline.diagnose(tmp_path)
    assert r.primary is not None and r.primary.rule == "xid-79-fallen-off-bus"
    assert "<script>" in r.primary.initiating.evidence[0].text
    html = r._repr_html_()
    assert "<script" not in html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html


def test_plot_timeline(report: faultline.Report) -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.axes import Axes

    ax = report.plot_timeline()
    assert isinstance(ax, Axes)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(l.startswith("initiating: xid-79-fallen-off-bus") for l in labels)
    assert any(l.startswith("collateral: nccl-watchdog-timeout") for l in labels)
    notes = [c for c in ax.texts if "fallen off the bus" in c.get_text()]
    assert notes and "rank 3" in notes[0].get_text()
    assert ax.get_ylabel() == "rank"
    fig, ax2 = plt.subplots()
    assert report.plot_timeline(ax=ax2) is ax2
    fig.canvas.draw()
    plt.close("all")


def test_plot_timeline_empty(tmp_path: Path) -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    (tmp_path / "quiet.log").write_text("nothing\n")
    ax = faultline.diagnose(tmp_path).plot_timeline()
    ax.figure.canvas.draw()
    plt.close("all")
