"""The faultline command as contracts/cli.md specifies it: forms, output,
exit statuses."""
import gzip
import json
import os
import pathlib
import shutil
import subprocess

import pytest

from conftest import REPO, run

EXAMPLE = REPO / "examples" / "incidents" / "xid79-two-hosts"


def test_version(faultline_bin):
    p = run(faultline_bin, "--version")
    assert p.stdout.decode().startswith("faultline 0.")


def test_usage_errors_exit_1(faultline_bin):
    assert run(faultline_bin, check=False).returncode == 1
    assert run(faultline_bin, "frobnicate", check=False).returncode == 1
    assert run(faultline_bin, "diagnose", check=False).returncode == 1
    assert run(faultline_bin, "diagnose", "--threads", "zero", str(EXAMPLE), check=False).returncode == 1
    assert run(faultline_bin, "diagnose", "--job-start", "yesterday", str(EXAMPLE), check=False).returncode == 1
    assert run(faultline_bin, "diagnose", "--clock-offset", "node017", str(EXAMPLE), check=False).returncode == 1
    assert run(faultline_bin, "scan", str(EXAMPLE), check=False).returncode == 1


def test_diagnose_json_validates_and_names_the_initiating_failure(faultline_bin, validate,
                                                                 report_schema):
    p = run(faultline_bin, "diagnose", "--json", str(EXAMPLE))
    doc = json.loads(p.stdout)
    validate(doc)
    assert doc["schema_version"] == report_schema["x-schema-version"]
    primary = doc["incidents"][0]
    assert primary["rule"] == "xid-79-fallen-off-bus"
    assert primary["initiating"]["host"] == "node017"
    assert primary["initiating"]["rank"] == 2
    assert primary["initiating"]["gpu"] == "0000:3b:00.0"
    assert primary["initiating"]["inferred"] is False
    coll = {c["rule"]: c for c in primary["collateral"]}
    assert "nccl-watchdog-timeout" in coll
    assert coll["nccl-watchdog-timeout"]["ranks"] == [r for r in range(16) if r != 2]
    assert doc["input"]["sources"] == 18
    assert doc["input"]["ranks"] == 16
    assert not p.stderr, "progress must only go to a terminal"


def test_diagnose_text_report(faultline_bin):
    out = run(faultline_bin, "diagnose", str(EXAMPLE)).stdout.decode()
    assert "PRIMARY DIAGNOSIS" in out
    assert "node017/kern.log:5" in out  # initiating evidence as file:line
    assert "ranks 0,1,3-15" in out  # collateral summarised as rank ranges
    assert "fix:" in out and "verify:" in out


def test_bad_input_exits_2_and_still_diagnoses_the_rest(faultline_bin, validate, tmp_path):
    bad = tmp_path / "node099" / "rank-9.log.gz"
    bad.parent.mkdir()
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage-not-gzip")
    p = run(faultline_bin, "diagnose", "--json", str(EXAMPLE), str(bad), "/nonexistent/x.log", check=False)
    assert p.returncode == 2
    doc = json.loads(p.stdout)
    validate(doc)
    assert doc["incidents"][0]["rule"] == "xid-79-fallen-off-bus"
    errs = {e["source"] for e in doc["input"]["errors"]}
    assert str(bad) in errs and "/nonexistent/x.log" in errs
    stderr = p.stderr.decode()
    assert str(bad) in stderr and "/nonexistent/x.log" in stderr


def test_bad_ruleset_exits_2_naming_it(faultline_bin, tmp_path):
    junk = tmp_path / "junk.flrules"
    junk.write_bytes(b"not a ruleset at all")
    p = run(faultline_bin, "diagnose", "--rules", str(junk), str(EXAMPLE), check=False)
    assert p.returncode == 2
    assert str(junk) in p.stderr.decode()
    assert len(p.stderr.decode().strip().splitlines()) == 1


def test_scan_json_lines_identical_across_sources_and_threads(faultline_bin, validate, tmp_path):
    log = EXAMPLE / "node017" / "kern.log"
    body = log.read_bytes() + (EXAMPLE / "node018" / "rank-9.log").read_bytes()
    plain = tmp_path / "all.log"
    plain.write_bytes(body)
    (tmp_path / "all.log.gz").write_bytes(gzip.compress(body))
    outs = []
    for args in (["--threads", "1", str(plain)], ["--threads", "2", str(plain)], [str(tmp_path / "all.log.gz")]):
        p = run(faultline_bin, "scan", "--json", *args)
        outs.append([json.loads(l) for l in p.stdout.splitlines()])
    if shutil.which("zstd"):
        subprocess.run(["zstd", "-q", "-f", str(plain), "-o", str(tmp_path / "all.log.zst")], check=True)
        p = run(faultline_bin, "scan", "--json", str(tmp_path / "all.log.zst"))
        outs.append([json.loads(l) for l in p.stdout.splitlines()])
    assert outs[0], "no evidence"
    for ev in outs[0]:
        validate(ev, "evidence")
    strip = lambda evs, drop=("source",): [{k: v for k, v in e.items() if k not in drop} for e in evs]
    for o in outs[1:]:
        assert strip(o) == strip(outs[0])
    # Standard input has no path, so nothing is attributed from one.
    stdin = run(faultline_bin, "scan", "--json", "-", stdin=body)
    got = [json.loads(l) for l in stdin.stdout.splitlines()]
    assert strip(got, ("source", "host")) == strip(outs[0], ("source", "host"))
    assert {e["source"] for e in got} == {"-"}


def test_rules_list_and_show(faultline_bin):
    rules = json.loads(run(faultline_bin, "rules", "list", "--json").stdout)
    assert len(rules) >= 40
    for r in rules:
        assert {"id", "title", "reference", "category", "tags"} <= set(r)
    text = run(faultline_bin, "rules", "list").stdout.decode()
    assert "xid-79-fallen-off-bus" in text
    show = json.loads(run(faultline_bin, "rules", "show", "xid-79-fallen-off-bus", "--json").stdout)
    for key in ("root_cause", "symptoms", "confirm", "fix", "verify", "prevention", "fingerprint", "related", "sources"):
        assert show[key], key
    page = run(faultline_bin, "rules", "show", "xid-79-fallen-off-bus").stdout.decode()
    for head in ("Root cause", "Symptoms and why", "How to confirm", "Fix", "Verify", "Prevention",
                 "Fingerprint to monitor", "Sources"):
        assert head in page
    assert run(faultline_bin, "rules", "show", "no-such-rule", check=False).returncode == 2


def test_compile_then_use(faultline_bin, tmp_path):
    out = tmp_path / "default.flrules"
    run(faultline_bin, "compile", str(REPO / "rulesets"), "-o", str(out))
    assert out.stat().st_size > 0
    doc = json.loads(run(faultline_bin, "diagnose", "--json", "--rules", str(out), str(EXAMPLE)).stdout)
    assert doc["incidents"][0]["rule"] == "xid-79-fallen-off-bus"
    # A rule source directory works as --rules too (compiled on the fly).
    doc2 = json.loads(run(faultline_bin, "diagnose", "--json", "--rules", str(REPO / "rulesets"), str(EXAMPLE)).stdout)
    assert doc2["incidents"][0]["rule"] == doc["incidents"][0]["rule"]


def test_compile_error_names_file_rule_field(faultline_bin, tmp_path):
    src = tmp_path / "rules"
    shutil.copytree(REPO / "rulesets", src)
    target = next((src / "gpu").glob("xid-79*.json"))
    rule = json.loads(target.read_text())
    rule["signals"][0]["pattern"] = "NVRM: Xid[\\s]+79"
    target.write_text(json.dumps(rule))
    out = tmp_path / "x.flrules"
    p = run(faultline_bin, "compile", str(src), "-o", str(out), check=False)
    assert p.returncode == 2
    err = p.stderr.decode()
    assert target.name in err and rule["id"] in err and "signals[0].pattern" in err
    assert not out.exists()


def test_job_window_and_clock_offset_flags(faultline_bin, validate):
    doc = json.loads(run(faultline_bin, "diagnose", "--json", "--job-start", "2026-11-02T03:00:00Z",
                         "--job-end", "2026-11-02T04:00:00Z", "--clock-offset", "node018=-2.5",
                         "--tz", "UTC", str(EXAMPLE)).stdout)
    validate(doc)
    assert doc["job_window"]["start"].startswith("2026-11-02T03:00:00")
    assert doc["clock_offsets"]["node018"]["seconds"] == -2.5
    assert doc["clock_offsets"]["node018"]["source"] == "user"


def test_bench_prints_throughput_and_hits(faultline_bin):
    out = run(faultline_bin, "bench", "--threads", "1", str(EXAMPLE)).stdout.decode()
    for key in ("bytes:", "lines:", "seconds:", "GB/s:", "threads:", "signal hits"):
        assert key in out
    assert "xid-79-fallen-off-bus/" in out


def test_bench_costs_lists_every_signal_with_its_cost(faultline_bin, tmp_path):
    out = run(faultline_bin, "bench", "--costs", "--sample-mb", "1", str(EXAMPLE)).stdout.decode()
    head, _, table = out.partition("signal costs on a ")
    assert "GB/s:" in head
    rows = {}
    for line in table.splitlines()[2:]:
        alone, lines, confirm, role, signal = line.split()
        rows[signal] = (float(alone), int(lines), float(confirm), role)
    listed = json.loads(run(faultline_bin, "rules", "list", "--json").stdout)
    assert len(rows) == sum(r["signals"] for r in listed)
    per_rule = {}
    for signal in rows:
        rule = signal.split("/")[0]
        per_rule[rule] = per_rule.get(rule, 0) + 1
    assert per_rule == {r["id"]: r["signals"] for r in listed if r["signals"]}
    alone, lines, confirm, role = rows["xid-79-fallen-off-bus/xid79"]
    assert lines == 1 and role == "initiating" and alone > 0
    assert rows["nccl-watchdog-timeout/watchdog_timeout"][1] > 1
    # costliest first
    costs = [r[0] for r in rows.values()]
    assert costs == sorted(costs, reverse=True)
    # an option of bench only; a missing input is named, the others measured
    assert run(faultline_bin, "diagnose", "--costs", str(EXAMPLE), check=False).returncode == 1
    p = run(faultline_bin, "bench", "--costs", str(EXAMPLE), str(tmp_path / "missing.log"), check=False)
    assert p.returncode == 2
    assert "missing.log" in p.stderr.decode()
    assert "xid-79-fallen-off-bus/xid79" in p.stdout.decode()


def test_catalog_covers_every_seed_reference(faultline_bin):
    """Every reference of the seed catalog (rulesets/references.json, origin
    seed-catalog or seed-entry: 42 + the full entry, titles verbatim) has at
    least one rule naming its title, and every rule carries the full entry."""
    refs = json.loads((REPO / "rulesets" / "references.json").read_text())["references"]
    titles = [r["title"] for r in refs if r["origin"] in ("seed-catalog", "seed-entry")]
    assert len(titles) == 43 and len(set(titles)) == 43
    rules = json.loads(run(faultline_bin, "rules", "list", "--json").stdout)
    covered = {r["reference"] for r in rules}
    assert not [t for t in titles if t not in covered]
    for r in rules:
        full = json.loads(run(faultline_bin, "rules", "show", r["id"], "--json").stdout)
        for key in ("summary", "root_cause", "symptoms", "confirm", "fix", "verify", "prevention",
                    "fingerprint", "sources"):
            assert full[key], f"{r['id']}: empty {key}"


def test_tqdm_bar_glued_with_carriage_returns(faultline_bin, tmp_path):
    """A record after tqdm's '\\r' updates keeps its own stamp and rank."""
    log = tmp_path / "train.log"
    log.write_bytes(b" 45%|####      | 45/100 [00:10<00:12]\r 46%|####\r"
                    b"2026-11-02T03:12:05.123Z [rank3]: torch.OutOfMemoryError: CUDA out of memory. "
                    b"Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.23 GiB is free.\n")
    evs = [json.loads(l) for l in run(faultline_bin, "scan", "--json", str(log)).stdout.splitlines()]
    oom = [e for e in evs if e["rule"] == "cuda-oom"]
    assert oom and oom[0]["time"] == "2026-11-02T03:12:05.123000Z" and oom[0]["rank"] == 3
    assert oom[0]["time_source"] == "parsed"


def test_kernel_line_never_borrows_another_hosts_bus_map(faultline_bin, tmp_path):
    """An Xid on node017's 0000:3b:00 is not rank 7 just because node018's
    rank 7 sits on busId 3b000: every host has a 3b:00 bus."""
    (tmp_path / "node017").mkdir()
    (tmp_path / "node018").mkdir()
    (tmp_path / "node017" / "dmesg.log").write_text(
        "Nov  2 03:12:05 node017 kernel: [1000000.000412] NVRM: Xid (PCI:0000:3b:00): 79, "
        "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n")
    (tmp_path / "node018" / "rank-7.log").write_text(
        "node018:52307:52307 [3] NCCL INFO comm 0x55d0c0a003 rank 7 nranks 8 cudaDev 3 nvmlDev 3 "
        "busId 3b000 commId 0x1a2b3c4d5e6f7081 - Init COMPLETE\n")
    doc = json.loads(run(faultline_bin, "diagnose", "--json", str(tmp_path)).stdout)
    primary = doc["incidents"][0]
    assert primary["rule"] == "xid-79-fallen-off-bus"
    assert primary["initiating"]["host"] == "node017"
    assert primary["initiating"]["rank"] is None
