"""Golden diagnoses: every fixture folder under tests/fixtures/ and every
bundled incident under examples/incidents/ with an expect.json is diagnosed,
its report validated against the schema, and each expected key checked."""
import json
import pathlib

import pytest

from conftest import REPO, run

# Fixtures keep expect.json inside the case folder; bundled examples keep
# <name>.expect.json beside it, so the folder diagnoses cleanly on its own.
CASES = sorted([(p.parent, p) for p in (REPO / "tests" / "fixtures").glob("**/expect.json")] +
               [(p.with_name(p.name[:-len(".expect.json")]), p)
                for p in (REPO / "examples" / "incidents").glob("*.expect.json")])


def check_actions(incidents):
    """Every incident carries an action and an id; only the fallback rule,
    which no catalog rule explains, and an incident its rank carried on from
    (survived: it did not end the job) may leave the action unknown."""
    for inc in incidents:
        action = inc["action"]
        assert inc["id"].startswith("inc-")
        assert action["reason"] and action["set_by"], inc["rule"]
        if action["set_by"] == "survived":
            assert inc["initiating"].get("survived") and action["kind"] == "unknown", f"{inc['rule']}: {action}"
            assert action["missing_fact"]
        elif inc["rule"] != "unrecognised-fatal-error":
            assert action["kind"] != "unknown", f"{inc['rule']}: {action}"
        else:
            assert action["kind"] == "unknown" and action["missing_fact"]
        if action["kind"] == "restart_excluding":
            assert action["exclude_hosts"] or action["exclude_gpus"], inc["rule"]


@pytest.mark.parametrize("case,expect_file", CASES, ids=[str(c.relative_to(REPO)) for c, _ in CASES])
def test_golden(case, expect_file, faultline_bin, validate):
    expect = json.loads(expect_file.read_text())
    args = ["diagnose", "--json"]
    for flag in ("job_start", "job_end"):
        if flag in expect:
            args += ["--" + flag.replace("_", "-"), expect[flag]]
    logs = [str(p) for p in sorted(case.iterdir()) if p.name != "expect.json" and not p.name.endswith(".md")]
    p = run(faultline_bin, *args, *logs, check=False)
    assert p.returncode in (0, 2), p.stderr.decode()
    doc = json.loads(p.stdout)
    validate(doc)
    incidents = doc["incidents"]
    check_actions(incidents)
    if "primary_rule" in expect:
        if expect["primary_rule"] is None:
            assert not incidents, f"benign log diagnosed as {[i['rule'] for i in incidents]}"
            return
        assert incidents, "no incident"
        assert incidents[0]["rule"] == expect["primary_rule"], \
            f"primary {incidents[0]['rule']} ({incidents[0]['explanation']})"
    primary = incidents[0] if incidents else {}
    if "reference" in expect:
        assert primary["reference"] == expect["reference"]
    if "initiating_rank" in expect:
        assert primary["initiating"]["rank"] == expect["initiating_rank"]
    if "initiating_host" in expect:
        assert primary["initiating"]["host"] == expect["initiating_host"]
    if "inferred" in expect:
        assert primary["initiating"].get("inferred", False) == expect["inferred"]
    if "collateral_rules" in expect:
        got = {c["rule"] for c in primary["collateral"]}
        missing = set(expect["collateral_rules"]) - got
        assert not missing, f"collateral lacks {missing}; has {got}"
    if "incident_rules" in expect:
        got = {i["rule"] for i in incidents}
        missing = set(expect["incident_rules"]) - got
        assert not missing, f"incidents lack {missing}; have {got}"
    if "action" in expect:
        assert primary["action"]["kind"] == expect["action"], primary["action"]["reason"]
    if "ignored_rules" in expect:
        got = {i["rule"] for i in doc["ignored"]}
        assert set(expect["ignored_rules"]) <= got
