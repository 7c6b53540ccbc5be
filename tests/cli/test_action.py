"""The action every incident carries, in the CLI's text, JSON and watch
NDJSON, and the retry policy's options."""
import json
import os

import pytest

from conftest import REPO, run
from test_watch import EXAMPLE, Watch, events


def test_diagnose_text_and_json_carry_the_action(faultline_bin, validate):
    doc = json.loads(run(faultline_bin, "diagnose", "--json", str(EXAMPLE)).stdout)
    validate(doc)
    inc = doc["incidents"][0]
    action = inc["action"]
    host = inc["initiating"]["host"]
    assert action["kind"] == "restart_excluding" and action["exclude_hosts"] == [host]
    assert action["set_by"] == inc["rule"] and host in action["reason"]
    assert "missing_fact" not in action
    text = run(faultline_bin, "diagnose", str(EXAMPLE)).stdout.decode()
    line = next(l for l in text.splitlines() if l.startswith("action: "))
    assert line.startswith(f"action: restart without {host}") and action["reason"] in line


@pytest.mark.parametrize("args", [["--max-restarts-per-rule", "0"], ["--max-restarts-per-host", "x"],
                                  ["--restart-window", "0s"], ["--restart-window", "5d"]])
def test_retry_policy_options_refuse_bad_values(faultline_bin, args):
    p = run(faultline_bin, "diagnose", *args, str(EXAMPLE), check=False)
    assert p.returncode == 1
    assert args[0].encode() in p.stderr


def test_retry_policy_options_accepted(faultline_bin):
    doc = json.loads(run(faultline_bin, "diagnose", "--json", "--max-restarts-per-rule", "1",
                         "--max-restarts-per-host", "1", "--restart-window", "90m", str(EXAMPLE)).stdout)
    # One attempt: nothing counts against the limits.
    assert doc["incidents"][0]["action"]["kind"] == "restart_excluding"


def test_watch_events_carry_the_action_and_the_reports_id(faultline_bin):
    r, wfd = os.pipe()
    w = Watch(faultline_bin, "--json", "--interval", "100ms", "--poll", "50ms", "--max-restarts-per-rule", "2", "-",
              stdin=r)
    os.close(r)
    with os.fdopen(wfd, "wb") as f:
        for p in sorted(EXAMPLE.rglob("*.log")):
            f.write(p.read_bytes())
        f.flush()
        # The pipe holds 64 KiB: an incident formed on a tick before all
        # lines arrived may decide another action; the watch says when it
        # changes (a `changed` event naming "action").
        line = w.wait_for("out", lambda l: json.loads(l).get("rule") == "xid-79-fallen-off-bus" and
                          json.loads(l).get("action", {}).get("kind") == "restart_excluding", "the incident")
    rc, out, err = w.finish()
    assert rc == 0, err
    ev = json.loads(line)
    final = events(out)[-1]
    report_inc = final["report"]["incidents"][0]
    assert ev["id"] == report_inc["id"] == final["incident_ids"][0]
    # What the action decides is the same; its reason's wording may grow
    # with the evidence that arrives after the event (the rank, the step),
    # and the watch does not print an event for wording alone.
    decides = ("kind", "exclude_hosts", "exclude_gpus", "set_by")
    assert {k: ev["action"].get(k) for k in decides} == {k: report_inc["action"].get(k) for k in decides}
    assert ev["action"]["kind"] == "restart_excluding"
    assert ev["action"]["reason"].split(" (")[0] == report_inc["action"]["reason"].split(" (")[0]


def test_rules_show_gives_the_declared_action(faultline_bin):
    rule = json.loads(run(faultline_bin, "rules", "show", "cuda-oom", "--json").stdout)
    assert rule["action"]["default"] == "restart" and rule["action"]["stop_on_recurrence"] == "same_step"
    assert rule["action"]["why"]
    text = run(faultline_bin, "rules", "show", "xid-79-fallen-off-bus").stdout.decode()
    assert "\nAction\n  restart_excluding (drain the host): " in text
