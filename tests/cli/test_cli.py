"""The faultline command as docs/cli.md specifies it: forms, output,
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
    for bad in ("node017=nan", "node017=inf", "node017=-1e300"):  # strtod reads them
        p = run(faultline_bin, "diagnose", "--clock-offset", bad, str(EXAMPLE), check=False)
        assert p.returncode == 1 and b"HOST=SECONDS" in p.stderr, bad
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


def test_compile_cost_budget(faultline_bin, tmp_path):
    # A signal whose only literal is in a quarter of ordinary lines (every
    # NCCL channel line) is over the cost budget: compile fails naming file,
    # rule and field; a reason in cost_exempt lets it through; an empty
    # reason is an error naming that field. Same source, same verdict.
    src = tmp_path / "rules"
    shutil.copytree(REPO / "rulesets", src)
    target = next((src / "gpu").glob("xid-79*.json"))
    rule = json.loads(target.read_text())
    sig = rule["signals"][0]
    sig["pattern"] = "(?:" + sig["pattern"] + "|NCCL INFO Channel [0-9]+/)"
    out = tmp_path / "x.flrules"

    def compile_with(exempt):
        if exempt is None:
            sig.pop("cost_exempt", None)
        else:
            sig["cost_exempt"] = exempt
        target.write_text(json.dumps(rule))
        return run(faultline_bin, "compile", str(src), "-o", str(out), check=False)

    over = compile_with(None)
    assert over.returncode == 2
    err = over.stderr.decode()
    assert target.name in err and f"rule '{rule['id']}'" in err and "signals[0].pattern: estimated cost" in err
    assert "cost_exempt" in err and not out.exists()
    assert compile_with(None).stderr == over.stderr
    assert compile_with("reads every NCCL channel line on purpose (test)").returncode == 0
    assert out.exists()
    out.unlink()
    empty = compile_with("")
    assert empty.returncode == 2
    assert "signals[0].cost_exempt: must not be empty" in empty.stderr.decode()
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


# ---- options, help, bench, exit status (issue #15) ---------------------------

COMMANDS = {
    "diagnose": {"json", "rules", "threads", "job-start", "job-end", "clock-offset", "tz", "output",
                 "html", "exit-code", "quiet", "help", "max-source-bytes", "max-decompressed-bytes",
                 "time-budget", "max-restarts-per-rule", "max-restarts-per-host", "restart-window",
                 "prior-bundle", "job-state", "job-exit-status"},
    "scan": {"json", "rules", "threads", "clock-offset", "tz", "output", "help", "max-source-bytes",
             "max-decompressed-bytes", "time-budget", "bundle"},
    "compile": {"output", "help"},
    "rules list": {"json", "rules", "help"},
    "rules show": {"json", "rules", "help"},
    "bench": {"rules", "threads", "runs", "warmup", "json", "peers", "costs", "sample-mb", "help"},
}


def help_options(text):
    """The long option names of a --help text, one option a line."""
    lines = text.split("options:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    names = set()
    for line in lines:
        assert line.startswith("  -") or line.startswith("      --"), line
        words = line.split()
        long = next(w for w in words if w.startswith("--"))
        names.add(long[2:])
        assert len(words) > 2, f"no help on {line!r}"
    return names


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_has_help(faultline_bin, command):
    for flag in ("--help", "-h"):
        p = run(faultline_bin, *command.split(), flag)
        text = p.stdout.decode()
        assert text.startswith(f"usage: faultline {command} "), text
        assert help_options(text) == COMMANDS[command]
    # --help wins over anything else on the line
    assert run(faultline_bin, *command.split(), "--json", "--bogus", "--help").returncode == 0
    top = run(faultline_bin, "--help").stdout.decode()
    assert command in top and "--help" in top


def test_option_forms_equal_value_and_dash_j(faultline_bin, tmp_path):
    def report(*args):
        doc = json.loads(run(faultline_bin, "diagnose", "--json", *args, str(EXAMPLE)).stdout)
        doc["input"]["seconds"] = 0
        return doc
    spaced = report("--threads", "1", "--tz", "UTC", "--clock-offset", "node018=-2.5",
                    "--job-start", "2026-11-02T03:00:00Z")
    assert report("--threads=1", "--tz=UTC", "--clock-offset=node018=-2.5",
                  "--job-start=2026-11-02T03:00:00Z") == spaced
    assert report("-j", "1", "--tz=UTC", "--clock-offset", "node018=-2.5", "--job-start",
                  "2026-11-02T03:00:00Z") == spaced
    assert report("-j1", "--tz", "UTC", "--clock-offset=node018=-2.5", "--job-start=2026-11-02T03:00:00Z") == spaced
    assert spaced["clock_offsets"]["node018"]["seconds"] == -2.5
    for bad in (["--threads=0"], ["-j"], ["--json=yes"], ["--threads=many"], ["-x"]):
        p = run(faultline_bin, "diagnose", *bad, str(EXAMPLE), check=False)
        assert p.returncode == 1, bad
        assert b"faultline diagnose --help" in p.stderr
    # "--" ends the options: a path may start with a dash
    dashed = tmp_path / "-rank0.log"
    dashed.write_bytes((EXAMPLE / "node017" / "kern.log").read_bytes())
    p = subprocess.run([faultline_bin, "scan", "--json", "--", "-rank0.log"], cwd=tmp_path, capture_output=True,
                       timeout=300)
    assert p.returncode == 0 and b"xid-79-fallen-off-bus" in p.stdout


def test_version_forms(faultline_bin):
    want = run(faultline_bin, "--version").stdout
    assert want.startswith(b"faultline 0.")
    assert run(faultline_bin, "-V").stdout == want == run(faultline_bin, "version").stdout


def test_options_that_did_nothing_now_work_or_are_rejected(faultline_bin, tmp_path):
    # diagnose -o FILE writes the report there, not on stdout
    out = tmp_path / "report.json"
    p = run(faultline_bin, "diagnose", "--json", "-o", str(out), str(EXAMPLE))
    assert p.stdout == b""
    assert json.loads(out.read_text())["incidents"][0]["rule"] == "xid-79-fallen-off-bus"
    p = run(faultline_bin, "scan", "--json", f"--output={tmp_path / 'ev.jsonl'}", str(EXAMPLE))
    assert p.stdout == b"" and (tmp_path / "ev.jsonl").read_text().count("\n") > 10
    p = run(faultline_bin, "diagnose", "-o", str(tmp_path / "no" / "such" / "dir" / "r.txt"), str(EXAMPLE),
            check=False)
    assert p.returncode == 2 and b"r.txt" in p.stderr
    # bench --json prints JSON (checked in depth below)
    json.loads(run(faultline_bin, "bench", "--json", str(EXAMPLE)).stdout)
    # options a command has no use for are usage errors, naming the command they belong to
    for args in (["compile", str(REPO / "rulesets"), "-o", str(tmp_path / "x.flrules"), "--json"],
                 ["rules", "list", "--threads", "2"],
                 ["rules", "list", "extra"],
                 ["scan", "--json", "--job-start", "2026-11-02T03:00:00Z", str(EXAMPLE)],
                 ["bench", "--tz", "UTC", str(EXAMPLE)],
                 ["bench", "-o", str(tmp_path / "b.txt"), str(EXAMPLE)],
                 ["bench", "--sample-mb", "4", str(EXAMPLE)]):
        p = run(faultline_bin, *args, check=False)
        assert p.returncode == 1, args
    p = run(faultline_bin, "diagnose", "--runs", "3", str(EXAMPLE), check=False)
    assert p.returncode == 1 and b"--runs is an option of bench" in p.stderr


def test_exit_code_tells_incident_from_none(faultline_bin, tmp_path):
    quiet = tmp_path / "quiet.log"
    quiet.write_text("2026-11-02 03:00:00,000 - train - INFO - iteration 10/100 | loss 2.5\n")
    # Without --exit-code, 0 whatever was found (the contract's meaning).
    assert run(faultline_bin, "diagnose", str(EXAMPLE)).returncode == 0
    p = run(faultline_bin, "diagnose", "--exit-code", str(EXAMPLE), check=False)
    assert p.returncode == 3 and b"PRIMARY DIAGNOSIS" in p.stdout
    p = run(faultline_bin, "diagnose", "--exit-code", "-q", str(EXAMPLE), check=False)
    assert p.returncode == 3 and p.stdout == b""
    p = run(faultline_bin, "diagnose", "--exit-code", "--quiet", str(quiet), check=False)
    assert p.returncode == 0 and p.stdout == b""
    doc = json.loads(run(faultline_bin, "diagnose", "--json", str(quiet)).stdout)
    assert doc["incidents"] == []
    # An input error wins: the diagnosis may be missing the incident.
    bad = tmp_path / "bad.log.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage")
    p = run(faultline_bin, "diagnose", "--exit-code", str(EXAMPLE), str(bad), check=False)
    assert p.returncode == 2
    assert run(faultline_bin, "diagnose", "--exit-code", "--bogus", str(EXAMPLE), check=False).returncode == 1
    # documented in the contract
    contract = (REPO / "docs" / "cli.md").read_text()
    assert "--exit-code" in contract and "3" in contract


def log_lines(n, seed):
    out = []
    for i in range(n):
        out.append(f"2026-11-02 03:{i // 60 % 60:02d}:{i % 60:02d},{seed:03d} - train - INFO - iteration {i}/100000 "
                   f"| consumed samples {i * 512} | elapsed time per iteration (ms): 812.4 | lm loss 2.{i % 97:02d}\n")
    return "".join(out).encode()


def test_bench_costs_sample_keeps_its_budget_on_compressed_inputs(faultline_bin, tmp_path):
    for i in range(3):
        (tmp_path / f"rank-{i}.log.gz").write_bytes(gzip.compress(log_lines(12000, i)))
    out = run(faultline_bin, "bench", "--costs", "--sample-mb", "1", str(tmp_path)).stdout.decode()
    mb = float(out.split("signal costs on a ", 1)[1].split(" MB")[0])
    assert mb <= 1.05
    doc = json.loads(run(faultline_bin, "bench", "--json", "--costs", "--sample-mb=1", str(tmp_path)).stdout)
    assert doc["bytes"] > 3 << 20  # each file holds more than the budget
    assert (1 << 20) - 3 * 4096 <= doc["costs"]["sample_bytes"] <= 1 << 20


def test_bench_runs_warmup_and_json(faultline_bin):
    doc = json.loads(run(faultline_bin, "bench", "--json", "--runs", "3", "--warmup=1", "-j1", str(EXAMPLE)).stdout)
    assert doc["faultline"] == run(faultline_bin, "--version").stdout.decode().split()[1]
    assert doc["runs"] == 3 and doc["warmup"] == 1 and doc["threads"] == 1
    assert doc["paths"] == [str(EXAMPLE)]
    listed = json.loads(run(faultline_bin, "rules", "list", "--json").stdout)
    assert doc["ruleset"]["rules"] == len(listed) and doc["ruleset"]["signals"] == sum(r["signals"] for r in listed)
    report = json.loads(run(faultline_bin, "diagnose", "--json", str(EXAMPLE)).stdout)
    assert doc["bytes"] == report["input"]["bytes"] and doc["lines"] > 0 and doc["matches"] > 0
    assert doc["incidents"] == len(report["incidents"]) and doc["input_errors"] == 0
    for key in ("seconds", "cpu_seconds"):
        s = doc[key]
        assert len(s["all"]) == 3
        assert s["min"] == min(s["all"]) and s["max"] == max(s["all"])
        assert s["min"] <= s["median"] <= s["max"] and s["median"] == sorted(s["all"])[1]
    g = doc["gb_per_s"]
    assert 0 < g["min"] <= g["median"] <= g["max"]
    assert abs(g["median"] - doc["bytes"] / doc["seconds"]["median"] / 1e9) <= 1e-4 + 1e-3 * g["median"]
    assert doc["signal_hits"]["xid-79-fallen-off-bus/xid79"] == 1
    assert doc["peers"] == [] and "costs" not in doc
    text = run(faultline_bin, "bench", "--runs", "2", str(EXAMPLE)).stdout.decode()
    assert "median of 2 runs" in text and "GB/s:" in text
    # standard input is read once
    p = run(faultline_bin, "bench", "--runs", "2", "-", stdin=b"x\n", check=False)
    assert p.returncode == 1
    for bad in (["--runs", "0"], ["--warmup", "-1"], ["--runs=1001"]):
        assert run(faultline_bin, "bench", *bad, str(EXAMPLE), check=False).returncode == 1


def count_lines(root, needle):
    return sum(f.read_bytes().count(needle) for f in root.rglob("*") if f.is_file())


def test_bench_peers_side_by_side(faultline_bin, tmp_path):
    pats = tmp_path / "patterns"
    pats.mkdir()
    (pats / "patterns.rg.txt").write_text("NVRM: Xid\nWatchdog caught collective operation timeout\n")
    (pats / "patterns.ere.txt").write_text("NVRM: Xid\nWatchdog caught collective operation timeout\n")
    want = count_lines(EXAMPLE, b"NVRM: Xid") + count_lines(EXAMPLE, b"Watchdog caught collective operation timeout")
    assert want > 1
    doc = json.loads(run(faultline_bin, "bench", "--json", "--runs", "2", "--peers", str(pats), str(EXAMPLE)).stdout)
    peers = {p["name"].split()[0]: p for p in doc["peers"]}
    assert set(peers) == {"rg", "grep", "fl_hs_raw"}
    for name in ("rg", "grep"):
        p = peers[name]
        if not shutil.which(name):
            assert not p["available"] and "not installed" in p["reason"]
            continue
        assert p["available"] and "error" not in p, p
        assert p["patterns"] == 2 and p["counts"] == "lines" and p["matched"] == want
        assert len(p["seconds"]["all"]) == 2 and p["gb_per_s"]["median"] > 0
    hs = peers["fl_hs_raw"]
    if hs["available"]:
        assert "error" not in hs and hs["counts"] == "callbacks" and hs["matched"] > 0
    else:
        assert "fl_hs_raw" in hs["reason"]
    text = run(faultline_bin, "bench", "--peers", str(pats), str(EXAMPLE)).stdout.decode()
    assert "side by side" in text and "faultline -j" in text and "rg -j" in text
    # A peer that is missing is named, not silently left out.
    empty = tmp_path / "bin"
    empty.mkdir()
    p = subprocess.run([faultline_bin, "bench", "--json", "--peers", str(pats), str(EXAMPLE)],
                       capture_output=True, env={**os.environ, "PATH": str(empty)}, timeout=300)
    assert p.returncode == 0
    missing = {q["name"].split()[0]: q for q in json.loads(p.stdout)["peers"]}
    assert not missing["rg"]["available"] and "not installed" in missing["rg"]["reason"]
    assert not missing["grep"]["available"] and "not installed" in missing["grep"]["reason"]
    # No pattern files: said so, with where they come from.
    doc = json.loads(run(faultline_bin, "bench", "--json", "--peers", str(empty), str(EXAMPLE)).stdout)
    rg = next(q for q in doc["peers"] if q["name"].startswith("rg"))
    if shutil.which("rg"):
        assert "patterns.rg.txt" in rg["reason"] and "export_patterns.py" in rg["reason"]
    # grep and fl_hs_raw do not read compressed inputs: named as such.
    (tmp_path / "gz").mkdir()
    (tmp_path / "gz" / "kern.log.gz").write_bytes(gzip.compress((EXAMPLE / "node017" / "kern.log").read_bytes()))
    doc = json.loads(run(faultline_bin, "bench", "--json", "--peers", str(pats), str(tmp_path / "gz")).stdout)
    by = {q["name"].split()[0]: q for q in doc["peers"]}
    if shutil.which("grep"):
        assert not by["grep"]["available"] and ".gz" in by["grep"]["reason"]
    if shutil.which("rg"):
        assert by["rg"]["matched"] == count_lines(EXAMPLE / "node017", b"NVRM: Xid")


def test_input_with_no_log_exits_2_naming_it(faultline_bin, tmp_path):
    """A path that does not exist, an empty directory, or only unreadable
    files: nothing was diagnosed, which must not read as a healthy job."""
    empty = tmp_path / "empty"
    empty.mkdir()
    bad = tmp_path / "rank-0.log.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage-not-gzip")
    for path in (str(empty), "/nonexistent/x.log", str(bad)):
        p = run(faultline_bin, "diagnose", path, check=False)
        assert p.returncode == 2, path
        assert path in p.stderr.decode()
        assert b"No incident" not in p.stdout
        p = run(faultline_bin, "scan", "--json", path, check=False)
        assert p.returncode == 2, path
        assert path in p.stderr.decode()


def _titan_step(rank, minute, step):
    return (f"[rank{rank}]:[titan] 2025-06-04 11:{minute:02d}:01,988 - root - INFO - step: {step}  "
            f"loss:  8.9482  memory: 30.89GiB(32.51%)  tps: 6,321  tflops: 366.06  mfu: 37.01%\n")


def test_caught_oom_ranks_below_the_rank_that_failed(faultline_bin, validate, tmp_path):
    """A CUDA OOM rank 0 caught and carried on from ("skipping batch", more
    steps) is survived; rank 3's uncaught exception, which no catalog rule
    knows, is the primary: the fallback incident with its own exception line,
    and torchrun's summary is its collateral."""
    node = tmp_path / "node001"
    node.mkdir()
    r0 = [_titan_step(0, m, 10 * m) for m in range(0, 20)]
    r0 += ["[rank0]:[titan] 2025-06-04 11:20:02,100 - root - WARNING - torch.OutOfMemoryError: CUDA out of "
           "memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which "
           "1.23 GiB is free. Skipping batch\n"]
    r0 += [_titan_step(0, m, 10 * m) for m in range(21, 45)]
    (node / "rank-0.log").write_text("".join(r0))
    r3 = [_titan_step(3, m, 10 * m) for m in range(0, 40)]
    r3 += ["[rank3]: Traceback (most recent call last):\n",
           '[rank3]:   File "/w/train.py", line 212, in <module>\n',
           "[rank3]:     main()\n",
           '[rank3]:   File "/w/train.py", line 180, in main\n',
           "[rank3]:     batch = collate(samples)\n",
           "[rank3]: ValueError: too many values to unpack (expected 2)\n"]
    (node / "rank-3.log").write_text("".join(r3))
    (node / "torchrun.log").write_text(
        "E0604 11:40:09.118000 40811 torch/distributed/elastic/multiprocessing/api.py:869] failed "
        "(exitcode: 1) local_rank: 3 (pid: 41231) of binary: /usr/bin/python3\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n")
    p = run(faultline_bin, "diagnose", "--json", str(node), check=False)
    assert p.returncode == 0, p.stderr.decode()
    doc = json.loads(p.stdout)
    validate(doc)
    inc = doc["incidents"]
    assert inc[0]["reference"] == "Unrecognised fatal error", [i["rule"] for i in inc]
    assert inc[0]["initiating"]["rank"] == 3
    assert "ValueError: too many values" in inc[0]["initiating"]["evidence"][0]["text"]
    assert "survived" not in inc[0]["initiating"]
    assert "torch-child-failed" in [c["rule"] for c in inc[0]["collateral"]]
    oom = [i for i in inc if i["rule"] == "cuda-oom"]
    assert oom and oom[0]["initiating"]["survived"] is True
