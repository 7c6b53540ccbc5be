"""Report.to_html(): the page of ``faultline diagnose --html``, byte for byte,
from the same library call (fl_report_html)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import faultline

from conftest import REPO_ROOT

EXAMPLE = REPO_ROOT / "examples" / "incidents" / "xid79-two-hosts"


def _cli() -> Path:
    b = os.environ.get("FAULTLINE_BIN")
    p = Path(b) if b else REPO_ROOT / "build" / "src" / "cli" / "faultline"
    if not p.exists():
        pytest.skip("no faultline CLI to compare with (set FAULTLINE_BIN)")
    return p


def test_to_html_is_the_cli_page(tmp_path: Path) -> None:
    out = tmp_path / "cli.html"
    # The sanitizer suite preloads an ASan runtime for the Python process
    # (libfaultline is built with ASan); the CLI links its own and refuses a
    # second one.
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    subprocess.run([str(_cli()), "diagnose", "-q", "--html", str(out), str(EXAMPLE)], check=True, env=env)
    with faultline.diagnose(str(EXAMPLE)) as report:
        page = report.to_html()
        assert page == out.read_text(encoding="utf-8")
        p = report.primary
        assert p is not None
        assert f'data-rank="{p.rank}" data-host="{p.host}"' in page
        assert p.reference in page


def test_to_html_escapes_log_text(tmp_path: Path, incident: dict) -> None:
    d = tmp_path / "job" / "node017"
    d.mkdir(parents=True)
    (d / "kern.log").write_text(
        "Nov  2 03:12:05 node017 kernel: [1000001.682554] NVRM: Xid (PCI:0000:3b:00): 79, "
        "pid='<unknown>', name=<script>alert(1)</script>\x1b[31m\x07, GPU has fallen off the bus.\n"
    )
    with faultline.diagnose(str(tmp_path / "job")) as report:
        page = report.to_html()
    assert page.count("<script") == 1
    # The colour code is stripped before matching; a bare control byte shows.
    assert "name=&lt;script&gt;alert(1)&lt;/script&gt;\u2407" in page


def test_to_html_needs_the_native_report(report: faultline.Report) -> None:
    loaded = faultline.Report.from_json(report.to_json())
    with pytest.raises(faultline.InvalidArgumentError):
        loaded.to_html()
