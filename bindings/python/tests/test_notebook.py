"""examples/python/diagnose.ipynb runs end to end in a python3 kernel."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import faultline

from conftest import REPO_ROOT

NOTEBOOK = REPO_ROOT / "examples" / "python" / "diagnose.ipynb"


@pytest.mark.skipif(not NOTEBOOK.exists(), reason="no examples/python/diagnose.ipynb")
@pytest.mark.skipif(
    not (REPO_ROOT / "examples" / "incidents").is_dir()
    or not any(p.is_dir() for p in (REPO_ROOT / "examples" / "incidents").iterdir()),
    reason="no incident under examples/incidents/",
)
def test_notebook_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")

    # The kernel imports the same faultline as this test (the source tree in
    # development mode, else the installed package) and the same library.
    pkg_parent = str(Path(faultline.__file__).resolve().parent.parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([pkg_parent, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    monkeypatch.delenv("MPLBACKEND", raising=False)

    nb = nbformat.read(str(NOTEBOOK), as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(REPO_ROOT)}}
    )
    client.execute()

    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors, errors
    for c in nb.cells:
        if c.cell_type == "code":
            assert c.get("outputs"), f"cell without output: {c.source[:60]!r}"
    data = [o.get("data", {}) for o in outputs]
    assert any("image/png" in d for d in data), "no chart"
    assert any("faultline-report" in d.get("text/html", "") for d in data), "no HTML report"
    assert any("<table" in d.get("text/html", "") and "rule" in d.get("text/html", "") for d in data)
    text = "".join(o.get("text", "") for o in outputs)
    assert "initiating: rank" in text
    html = "".join(d.get("text/html", "") for d in data)
    # The notebook's reprs: the incident, an evidence line, the catalog.
    assert "faultline &middot; incident" in html and "faultline &middot; evidence" in html
    assert "rule(s)</th>" in html and "<table class='fl-rules'>" in html
    assert "color:#000" not in html
    # The progress bar (tqdm's text bar, or a widget with ipywidgets) and the
    # capped frame's attrs.
    stderr = "".join(o.get("text", "") for o in outputs if o.get("name") == "stderr")
    widgets = [d for d in data if "application/vnd.jupyter.widget-view+json" in d]
    assert "faultline" in stderr or widgets, stderr
    assert "Exception ignored" not in stderr and "Warning" not in stderr, stderr
    assert "'capped': True" in text and "PRIMARY DIAGNOSIS" in text
