"""Incident.id and Incident.action: the recommendation every incident
carries, and the retry policy's keyword arguments."""
from __future__ import annotations

import ctypes
from datetime import timedelta

import pytest

import faultline
from faultline import _ffi


def test_primary_action_drains_the_host(report: faultline.Report, incident: dict) -> None:
    p = report.primary
    assert p is not None and p.action is not None
    assert p.action.kind == "restart_excluding"
    assert p.action.exclude_hosts == [incident["host"]]
    assert p.action.exclude_gpus == [incident["gpu"]]
    assert p.action.set_by == p.rule
    assert incident["host"] in p.action.reason
    assert p.action.missing_fact is None


def test_incident_id_is_the_librarys(report: faultline.Report) -> None:
    p = report.primary
    assert p is not None and p.id is not None and p.id.startswith("inc-") and len(p.id) == 16
    # The same id from the C ABI: the accessor and the function watch uses.
    ev = p.initiating.evidence[0]
    buf = ctypes.create_string_buffer(32)
    rc = _ffi.lib.fl_incident_id(p.reference.encode(), ev.source.encode(), ev.line, None, -1, buf)
    assert rc == _ffi.FL_OK and buf.value.decode() == p.id


def test_every_incident_has_an_action(report: faultline.Report) -> None:
    for inc in report.incidents:
        assert inc.action is not None
        assert inc.action.kind in ("restart", "restart_excluding", "stop", "unknown")
        assert inc.action.reason and inc.action.set_by


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_restarts_per_rule": 0},
        {"max_restarts_per_host": -1},
        {"max_restarts_per_rule": True},
        {"restart_window": 0},
        {"restart_window": float("nan")},
        {"restart_window": timedelta(seconds=-5)},
    ],
)
def test_retry_policy_refuses_bad_values(incident: dict, kwargs: dict) -> None:
    with pytest.raises(ValueError):
        faultline.diagnose(incident["path"], **kwargs)


def test_retry_policy_accepted(incident: dict) -> None:
    r = faultline.diagnose(
        incident["path"], max_restarts_per_rule=1, max_restarts_per_host=2, restart_window=timedelta(hours=6)
    )
    # One attempt: nothing counts against the limits, the rule's default stands.
    assert r.primary is not None and r.primary.action is not None
    assert r.primary.action.kind == "restart_excluding"
