"""Fix and verify text name the incident's own machine facts: the bus, host,
rank and device the evidence printed, never a bus id or host copied from a
rule's examples, and a placeholder plus a missing fact when the logs do not
say."""
import json
import pathlib
import re

import pytest

from conftest import REPO, run

RULE_FILES = sorted(p for p in (REPO / "rulesets").glob("*/*.json") if not p.name.startswith("_"))
ADVICE = ("fix", "verify", "missing_fact")
# A PCI address ("0000:3b:00.0", "3b:00.0"), an InfiniBand device ("mlx5_3").
LITERAL_DEVICE = re.compile(r"\b(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]\b|\bmlx[45]_[0-9]+\b")
# Host names as the examples print them: NCCL "host:pid:tid [dev]", syslog
# "Mon DD HH:MM:SS host", Slurm "ON host CANCELLED" and "srun: error: host:".
EXAMPLE_HOST = re.compile(r"^(?:\S+ )?([A-Za-z][A-Za-z0-9.-]*[0-9][A-Za-z0-9.-]*):[0-9]+:[0-9]+ \[|"
                          r"^[A-Z][a-z]{2} +[0-9]+ [0-9:]+ ([A-Za-z][A-Za-z0-9.-]+) |"
                          r" ON ([A-Za-z0-9.-]+) CANCELLED|srun: error: ([A-Za-z0-9.-]+): ")


def rules():
    for path in RULE_FILES:
        rule = json.loads(path.read_text())
        if "signals" in rule:
            yield path, rule


def example_hosts(rule):
    hosts = set()
    for sig in rule["signals"]:
        for ex in sig.get("examples", []):
            for m in EXAMPLE_HOST.finditer(ex):
                hosts.update(g for g in m.groups() if g)
    return hosts


@pytest.mark.parametrize("path,rule", list(rules()), ids=lambda v: v.stem if isinstance(v, pathlib.Path) else "")
def test_advice_names_no_literal_device_or_example_host(path, rule):
    hosts = example_hosts(rule)
    for field in ADVICE:
        text = rule.get(field) or ""
        assert not LITERAL_DEVICE.search(text), f"{path.name} {field}: literal device in {text!r}"
        leaked = [h for h in hosts if re.search(rf"(?<![\w.-]){re.escape(h)}(?![\w-])", text)]
        assert not leaked, f"{path.name} {field}: example host {leaked} in {text!r}"


def diagnose(faultline_bin, tmp_path, text, name="kern.log"):
    log = tmp_path / "node006" / name
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(text)
    doc = json.loads(run(faultline_bin, "diagnose", "--json", str(log)).stdout)
    assert doc["incidents"], doc
    return doc["incidents"][0]


def test_xid79_verify_names_the_failing_gpu_and_host(faultline_bin, tmp_path):
    inc = diagnose(faultline_bin, tmp_path,
                   "2026-10-27T06:13:20+00:00 node006 kernel: NVRM: Xid (PCI:0000:9a:00): 79, "
                   "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n")
    assert inc["rule"] == "xid-79-fallen-off-bus"
    assert "0000:9a:00.0" in inc["verify"] and "node006" in inc["verify"]
    assert "3b:00" not in inc["verify"] + inc["fix"]


def test_hca_verify_names_the_adapter_the_kernel_printed(faultline_bin, tmp_path):
    inc = diagnose(faultline_bin, tmp_path,
                   "2026-10-27T06:13:20+00:00 node006 kernel: mlx5_core 0000:c4:00.0: poll_health:852:"
                   "(pid 0): device's health compromised - reached miss count\n")
    assert inc["rule"] == "ib-device-fatal"
    assert "pci/0000:c4:00.0" in inc["verify"]
    assert "0000:41:00.0" not in inc["verify"]
    # The kernel line names the PCI function, not the verbs device: a
    # placeholder and a missing fact, never an example's mlx5_N.
    assert "<hca>" in inc["verify"]
    assert any("hca" in f for f in inc["missing_facts"])
