"""One naming convention for Report: properties hold, methods make. The
README's "Conventions" table is checked against the class."""

from __future__ import annotations

import inspect
import re
import warnings
from typing import Dict

import pytest

import faultline

from conftest import PKG_ROOT


def _documented() -> Dict[str, str]:
    """name -> kind, from bindings/python/README.md's Conventions table."""
    text = (PKG_ROOT / "README.md").read_text()
    m = re.search(r"^## Conventions\n(.*?)^## ", text, re.S | re.M)
    assert m, "README.md has no Conventions section"
    out: Dict[str, str] = {}
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0].startswith("`"):
            continue
        for name in re.findall(r"`([a-z_]+)(?:\(\))?`", cells[0]):
            out[name] = cells[1]
    return out


def _actual(report: faultline.Report) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for name in dir(type(report)):
        if name.startswith("_"):
            continue
        attr = inspect.getattr_static(type(report), name)
        if isinstance(attr, property):
            out[name] = "property"
        elif isinstance(attr, classmethod):
            out[name] = "constructor"
        else:
            out[name] = "method"
    for name in vars(report):
        if not name.startswith("_"):
            out[name] = "attribute"
    return out


def test_readme_table_matches_the_class(report: faultline.Report) -> None:
    doc, actual = _documented(), _actual(report)
    deprecated = {n for n, k in doc.items() if k == "deprecated"}
    assert deprecated == {"text"}
    for n in deprecated:
        actual[n] = "deprecated"
    assert doc == actual


def test_renderings_are_to_methods(report: faultline.Report) -> None:
    for name, kind in _actual(report).items():
        if name.startswith("to_"):
            assert kind == "method", name
    assert report.to_text() == str(report)
    assert "xid-79-fallen-off-bus" in report.to_text()


def test_text_still_works_with_a_deprecation_warning(report: faultline.Report) -> None:
    with pytest.warns(DeprecationWarning, match=r"to_text\(\)"):
        t = report.text
    assert t == report.to_text()


def test_properties_are_kept_once_read(incident: dict) -> None:
    r = faultline.diagnose(incident["path"])
    totals, hits, text = r.totals, r.signal_hits, r.to_text()
    r.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert r.totals == totals and r.signal_hits == hits and r.to_text() == text
    r.signal_hits.clear()  # a copy: the report's own stays whole
    assert r.signal_hits == hits and sum(hits.values()) == totals.matches


def test_totals_of_a_report_loaded_from_json(report: faultline.Report) -> None:
    again = faultline.Report.from_json(report.to_json())
    t, want = again.totals, report.totals
    assert (t.sources, t.bytes, t.lines, t.evidence, t.matches, t.incidents, t.errors) == (
        want.sources, want.bytes, want.lines, want.evidence, want.matches, want.incidents, want.errors)
