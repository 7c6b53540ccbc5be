from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import faultline
from faultline import _ffi

from conftest import REPO_ROOT

RULES_SRC = REPO_ROOT / "rulesets"


def test_rules_list() -> None:
    rs = faultline.rules()
    assert len(rs) == len(faultline.Ruleset())
    assert all(isinstance(r, faultline.RuleSummary) for r in rs)
    ids = {r.id for r in rs}
    assert "xid-79-fallen-off-bus" in ids and "nccl-watchdog-timeout" in ids
    xid = next(r for r in rs if r.id == "xid-79-fallen-off-bus")
    assert xid.title and xid.reference and xid.category and "xid" in xid.tags
    assert xid.layer == "hardware"


def test_rule_entry() -> None:
    d = faultline.rule("xid-79-fallen-off-bus")
    assert d["id"] == "xid-79-fallen-off-bus"
    assert d["signals"] and "fix" in d
    text = faultline.rule_text("xid-79-fallen-off-bus")
    assert "xid-79-fallen-off-bus" in text


def test_unknown_rule_is_not_found() -> None:
    with pytest.raises(faultline.NotFoundError) as ei:
        faultline.rule("no-such-rule")
    e = ei.value
    assert e.code == _ffi.FL_ERR_NOT_FOUND == -11
    assert e.status == "FL_ERR_NOT_FOUND"
    assert "no-such-rule" in str(e)
    assert isinstance(e, faultline.Error) and isinstance(e, LookupError)
    with pytest.raises(faultline.NotFoundError):
        faultline.rule_text("no-such-rule")


def test_bad_ruleset_file_is_a_ruleset_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.flrules"
    bad.write_bytes(b"this is not a compiled ruleset\n" * 10)
    with pytest.raises(faultline.RulesetError) as ei:
        faultline.Ruleset(bad)
    assert ei.value.code == _ffi.FL_ERR_RULESET
    assert str(bad) in str(ei.value)
    with pytest.raises(faultline.RulesetError):
        faultline.diagnose(tmp_path, rules=bad)
    with pytest.raises(faultline.RulesetError):
        faultline.Ruleset(b"garbage")


def test_missing_ruleset_file_is_an_io_error(tmp_path: Path) -> None:
    with pytest.raises(faultline.FaultlineIOError) as ei:
        faultline.Ruleset(tmp_path / "nope.flrules")
    assert isinstance(ei.value, OSError) and ei.value.code == _ffi.FL_ERR_IO


@pytest.mark.skipif(not RULES_SRC.is_dir(), reason="no rulesets/ in this checkout")
def test_compile_and_load(tmp_path: Path) -> None:
    out = faultline.compile_rules(RULES_SRC, tmp_path / "default.flrules")
    assert out.exists() and out.stat().st_size > 0
    with faultline.Ruleset(out) as rs:
        n = len(rs)
        assert n > 0 and rs.name and rs.version
        assert "rules=" in repr(rs)
    assert rs.closed and repr(rs) == "<faultline.Ruleset closed>"
    rs.close()  # twice is fine
    with pytest.raises(faultline.InvalidArgumentError):
        rs.rules()
    # compile_rules signs the file with this installation's key (conftest
    # keeps it in a temporary directory): loading it uses its database.
    assert faultline.Ruleset(out).load_info.startswith("authenticated:")
    mem = faultline.Ruleset(out.read_bytes())
    assert len(mem) == n
    assert len(faultline.Ruleset(RULES_SRC)) == n  # a source dir compiles on the fly
    assert len(faultline.rules(out)) == n


@pytest.mark.skipif(not RULES_SRC.is_dir(), reason="no rulesets/ in this checkout")
def test_bad_rule_source_names_file_and_rule(tmp_path: Path) -> None:
    src = tmp_path / "rules"
    shutil.copytree(RULES_SRC, src)
    target = next(p for p in src.rglob("xid-79*.json"))
    d = json.loads(target.read_text())
    d["signals"][0]["pattern"] = "(unclosed"
    target.write_text(json.dumps(d))
    with pytest.raises(faultline.RulesetError) as ei:
        faultline.compile_rules(src, tmp_path / "out.flrules")
    msg = str(ei.value)
    assert target.name in msg and d["id"] in msg and "pattern" in msg
    assert not (tmp_path / "out.flrules").exists()


def test_custom_ruleset_in_diagnose(incident: dict, tmp_path: Path) -> None:
    rs = faultline.Ruleset()
    r = faultline.diagnose(incident["path"], rules=rs)
    assert r.primary is not None and r.primary.rule == incident["rule"]
    assert r.ruleset.name == rs.name


@pytest.mark.parametrize(
    "code,cls",
    [
        (-1, faultline.InvalidArgumentError),
        (-2, faultline.NoMemoryError),
        (-3, faultline.FaultlineIOError),
        (-4, faultline.ParseError),
        (-5, faultline.RulesetError),
        (-6, faultline.RulesetVersionError),
        (-7, faultline.BusyError),
        (-8, faultline.BufferTooSmallError),
        (-9, faultline.CancelledError),
        (-10, faultline.InternalError),
        (-11, faultline.NotFoundError),
    ],
)
def test_one_exception_class_per_status(code: int, cls: type) -> None:
    from faultline._errors import make_error

    e = make_error(code, "detail")
    assert type(e) is cls and e.code == code == cls.code
    assert str(e) == "detail" and e.message == "detail"
    assert e.status == _ffi.lib.fl_status_str(code).decode()
    assert isinstance(e, faultline.Error)
    assert str(make_error(code)) == e.status


def test_unknown_status_is_plain_error() -> None:
    from faultline._errors import make_error

    e = make_error(-99, "odd")
    assert type(e) is faultline.Error and e.code == -99


def test_ruleset_version_error_is_a_ruleset_error() -> None:
    assert issubclass(faultline.RulesetVersionError, faultline.RulesetError)


def test_signal_costs(incident: dict, tmp_path: Path) -> None:
    rs = faultline.Ruleset()
    costs = rs.signal_costs([incident["path"], tmp_path / "missing.log"], sample_mb=1)
    assert costs["sample_bytes"] > 0 and costs["full_s_per_gb"] > 0
    assert any("missing.log" in s for s in costs["skipped"])
    by_name = {c["signal"]: c for c in costs["signals"]}
    assert len(by_name) == sum(r.signals for r in rs.rules())
    alone = [c["alone_s_per_gb"] for c in costs["signals"]]
    assert alone == sorted(alone, reverse=True)
    primary = faultline.diagnose(incident["path"], rules=rs).primary
    assert primary is not None
    assert any(name.startswith(primary.rule + "/") and c["lines"] > 0 for name, c in by_name.items())
    with pytest.raises(faultline.InvalidArgumentError, match="no input"):
        rs.signal_costs(tmp_path / "missing.log")
