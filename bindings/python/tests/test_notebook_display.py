"""What a notebook shows: HTML reprs of incidents, evidence and rules
(readable on a dark theme, long lists capped), capped evidence frames, Arrow
export, and the timeline at 64+ ranks."""

from __future__ import annotations

import copy
import dataclasses
import re
from pathlib import Path
from typing import List

import pytest

import faultline

from conftest import XID_LINE, write_incident


def _colours(html: str) -> List[str]:
    """Every colour an HTML fragment sets (CSS declarations and attributes)."""
    return [m.strip() for m in re.findall(r"(?<![-\w])(?:color|background(?:-color)?|fill|stroke)\s*:\s*([^;}'\"]+)", html)]


def _theme_safe(html: str) -> None:
    # Text inherits the notebook theme's colour; the only explicit colour is
    # a theme variable (with a fallback readable on light and dark).
    for c in _colours(html):
        assert c in ("inherit", "currentColor") or c.startswith("var(--jp-"), (c, html[:300])
    assert not re.search(r"#000\b|#000000\b|\bblack\b|#555\b", html)


def test_report_html_reads_on_a_dark_theme(report: faultline.Report) -> None:
    html = report._repr_html_()
    assert "primary diagnosis" in html
    _theme_safe(html)


def test_incident_repr_html(report: faultline.Report, incident: dict) -> None:
    p = report.primary
    assert p is not None
    html = p._repr_html_()
    assert p.title in html and p.rule in html and "confidence" in html
    assert "rank 3 on node017" in html and "dmesg.log:4" in html
    assert "name=&lt;unknown&gt;" in html and "name=<unknown>" not in html
    assert "7 x nccl-watchdog-timeout" in html
    _theme_safe(html)


def test_incident_reprs_are_capped(report: faultline.Report) -> None:
    p = copy.deepcopy(report.primary)
    assert p is not None
    line = p.initiating.evidence[0]
    p.initiating.evidence = [dataclasses.replace(line, line=i) for i in range(500)]
    p.timeline = [line] * 300
    p.collateral = p.collateral * 40
    text = repr(p)
    assert len(text) < 400 and line.text not in text, text
    assert "evidence=500" in text and "timeline=300" in text
    assert line.text not in repr(p.initiating) and "500 line(s)" in repr(p.initiating)
    html = p._repr_html_()
    assert html.count("fl-line") <= 5 + 10 + 1  # initiating lines + timeline lines (+ the CSS rule)
    assert "+495 more line(s)" in html and "+290 more line(s)" in html
    assert f"+{40 * len(report.primary.collateral) - 8} more cluster(s)" in html  # type: ignore[union-attr]
    assert len(html) < 20_000


def test_evidence_repr_html(tmp_path: Path) -> None:
    evil = XID_LINE.replace("name=<unknown>", "name=<script>alert(1)</script>" + "x" * 5000)
    write_incident(tmp_path, xid_line=evil)
    r = faultline.diagnose(tmp_path)
    e = r.primary.initiating.evidence[0]  # type: ignore[union-attr]
    html = e._repr_html_()
    assert "<script" not in html and "&lt;script&gt;" in html
    assert e.location in html and e.rule in html and e.signal in html
    assert "rank 3 on node017" in html
    assert len(html) < 6000  # the 5,000-character line is cut
    assert "\u2026" in html
    _theme_safe(html)


def test_rules_repr_html() -> None:
    rules = faultline.rules()
    assert isinstance(rules, list) and len(rules) > 10
    html = rules._repr_html_()
    assert html.count("<tr><td><code>") == len(rules)
    assert all(f"<code>{r.id}</code>" in html for r in rules)
    one = rules[0]._repr_html_()
    assert rules[0].id in one and rules[0].title.split()[0] in one
    _theme_safe(html)
    _theme_safe(one)


# ---- evidence frames: capped, Arrow -------------------------------------------


@pytest.fixture(scope="module")
def storm(tmp_path_factory: pytest.TempPathFactory) -> faultline.Report:
    """The incident plus a watchdog storm: far more matches than the library
    keeps as evidence."""
    from conftest import watchdog_line

    root = tmp_path_factory.mktemp("storm")
    write_incident(root)
    with open(root / "node018" / "rank-5.log", "a") as f:
        for _ in range(6000):
            f.write(watchdog_line(5) + "\n")
    return faultline.diagnose(root)


def test_evidence_frame_says_it_is_capped(storm: faultline.Report) -> None:
    pytest.importorskip("pandas")
    with pytest.warns(faultline.EvidenceCappedWarning, match=r"rows of [0-9,]+ matches") as w:
        df = storm.evidence_frame()
    assert storm.totals.matches > len(df) == storm.evidence_count
    assert df.attrs == {"evidence": len(df), "matches": storm.totals.matches, "capped": True}
    assert f"{len(df):,} rows of {storm.totals.matches:,} matches" in str(w[0].message)
    # The same from the report's JSON form.
    again = faultline.Report.from_json(storm.to_json(evidence=True))
    assert again.evidence_frame(warn=False).attrs["matches"] == storm.totals.matches


def test_evidence_frame_not_capped(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    import warnings

    (tmp_path / "one.log").write_text(XID_LINE + "\n")
    r = faultline.diagnose(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = r.evidence_frame()
    assert df.attrs["capped"] is False and df.attrs["matches"] == len(df) == 1


def test_to_arrow(storm: faultline.Report) -> None:
    pa = pytest.importorskip("pyarrow")
    pd = pytest.importorskip("pandas")
    from faultline._frames import EVIDENCE_COLUMNS

    t = storm.to_arrow()
    assert isinstance(t, pa.Table)
    assert t.column_names == EVIDENCE_COLUMNS
    assert t.num_rows == storm.evidence_count
    assert t.schema.field("time").type == pa.timestamp("us", tz="UTC")
    meta = {k.decode(): v.decode() for k, v in t.schema.metadata.items()}
    assert meta == {"faultline.evidence": str(t.num_rows), "faultline.matches": str(storm.totals.matches),
                    "faultline.capped": "true"}
    df = storm.evidence_frame(warn=False)
    assert t.column("offset").to_pylist() == list(df["offset"])
    assert t.column("rank").to_pylist() == [None if pd.isna(x) else int(x) for x in df["rank"]]
    assert t.column("role").to_pylist() == list(df["role"].astype(str))
    assert t.column("fields").to_pylist()[0] == list(df["fields"].iloc[0].items())
    # The PyCapsule stream interface: Arrow consumers take the report itself.
    assert pa.table(storm).equals(t)
    reader = pa.RecordBatchReader.from_stream(storm)
    assert reader.read_all().num_rows == t.num_rows


def test_to_arrow_without_pyarrow(report: faultline.Report, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ImportError, match="pyarrow"):
        report.to_arrow()


# ---- the timeline at 64+ ranks ------------------------------------------------


def write_big_job(root: Path, nranks: int, failed: int, per_host: int = 8) -> None:
    """A job of `nranks` ranks, `per_host` to a host: NCCL init lines (rank ->
    host and GPU bus id), training steps, an Xid 79 on the failed rank's GPU
    and the other ranks' watchdog timeouts half an hour later."""
    from conftest import BUS_IDS, XID_LINE, watchdog_line

    for h in range(nranks // per_host):
        host = f"node{h:04d}"
        d = root / host
        d.mkdir(parents=True, exist_ok=True)
        kern = [f"Nov  2 02:59:5{i} {host} kernel: [1000000.{i:06d}] usb 1-1: new device" for i in range(2)]
        if h == failed // per_host:
            kern.append(XID_LINE.replace("node017", host).replace("3b:00", BUS_IDS[failed % per_host][:2] + ":00"))
        (d / "dmesg.log").write_text("\n".join(kern) + "\n")
        for local in range(per_host):
            rank = h * per_host + local
            lines = [
                f"2026-11-02T03:00:00.{rank % 1000:03d}Z [rank{rank}]:{host}:{12345 + local}:{12345 + local} [{local}] "
                f"NCCL INFO comm 0x55d0c0a0 rank {rank} nranks {nranks} cudaDev {local} nvmlDev {local} "
                f"busId {BUS_IDS[local]} commId 0x1a2b3c4d5e6f7081 - Init COMPLETE",
            ]
            for step in range(1, 6):
                lines.append(f"2026-11-02T03:{step * 2:02d}:00.000Z [rank{rank}]: step {step * 10} loss 2.4")
            if rank != failed:
                lines.append(watchdog_line(rank))
            (d / f"rank-{rank}.log").write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("nranks,failed", [(64, 37), (1024, 1021)])
def test_plot_timeline_at_scale(tmp_path: Path, nranks: int, failed: int) -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.collections import PathCollection

    write_big_job(tmp_path, nranks, failed)
    r = faultline.diagnose(tmp_path)
    p = r.primary
    assert p is not None and p.rule == "xid-79-fallen-off-bus" and p.rank == failed, r
    ax = r.plot_timeline()
    fig = ax.figure
    fig.canvas.draw()
    # Ticks name hosts, a bounded number of them, none overlapping.
    labels = [t for t in ax.get_yticklabels() if t.get_text()]
    assert 2 <= len(labels) <= 32
    assert all(t.get_text().startswith("node") for t in labels)
    boxes = sorted((t.get_window_extent() for t in labels), key=lambda b: b.y0)
    assert all(a.y1 <= b.y0 + 0.5 for a, b in zip(boxes, boxes[1:])), "y tick labels overlap"
    assert "host" in ax.get_ylabel()
    # The legend is outside the axes, and the initiating star is drawn, at
    # the failed rank, where no legend covers it.
    legend = ax.get_legend()
    assert legend is not None
    lb, axb = legend.get_window_extent(), ax.get_window_extent()
    assert lb.x0 >= axb.x1 - 1, (lb, axb)
    stars = [c for c in ax.collections if isinstance(c, PathCollection) and c.get_label().startswith("initiating")]
    assert len(stars) == 1
    (sx, sy), = stars[0].get_offsets().tolist()
    assert sy == failed
    px, py = ax.transData.transform((sx, sy))
    assert axb.x0 <= px <= axb.x1 and axb.y0 <= py <= axb.y1
    assert not lb.contains(px, py)
    texts = [t.get_text() for t in legend.get_texts()]
    assert any(t.startswith("initiating: xid-79") for t in texts)
    if nranks > 256:  # a heat strip, not a million dots
        assert any(type(c).__name__ == "QuadMesh" for c in ax.collections)
        assert any("density" in t for t in texts)
    plt.close("all")


def test_plot_timeline_small_job_keeps_rank_ticks(report: faultline.Report) -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ax = report.plot_timeline()
    ax.figure.canvas.draw()
    assert ax.get_ylabel() == "rank"
    assert [t.get_text() for t in ax.get_yticklabels() if t.get_text()] == [str(i) for i in range(8)]
    lb, axb = ax.get_legend().get_window_extent(), ax.get_window_extent()
    assert lb.x0 >= axb.x1 - 1
    with pytest.raises(ValueError, match="style"):
        report.plot_timeline(style="pie")
    plt.close("all")
