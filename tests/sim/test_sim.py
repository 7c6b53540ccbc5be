"""Simulated incidents through `faultline diagnose --json`: per scenario kind,
is the initiating rank (and host) named, is stale evidence kept out, are host
clocks aligned, and do benign jobs stay quiet.

The scenarios come from simulate.py (fixed seeds, so every run diagnoses the
same files). Kinds whose rules are missing from the ruleset in use are
skipped and listed. FAULTLINE_BIN picks the binary (tests/conftest.py);
FAULTLINE_RULES, when set, is passed as --rules (a rule source dir or a
compiled .flrules), e.g. to include the memory family.

    python3 -m pytest tests/sim -q
    python3 tests/sim/test_sim.py [N_PER_KIND]     # prints the table only
"""
import collections
import concurrent.futures
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import simulate  # noqa: E402

# Scenarios per kind (8 kinds -> 64 jobs); seeds are 1..N.
PER_KIND = int(os.environ.get("FL_SIM_PER_KIND", "8"))
RANK_ACCURACY = 0.95
HOST_ACCURACY = 0.95


def _rules_args():
    r = os.environ.get("FAULTLINE_RULES")
    return ["--rules", r] if r else []


def rule_ids(binary):
    p = subprocess.run([binary, "rules", "list", "--json", *_rules_args()], capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    return {r["id"] for r in json.loads(p.stdout)}


def plan(available, per_kind=PER_KIND):
    """(kind, seed) pairs to run, and the kinds skipped with the rules they lack."""
    jobs, skipped = [], {}
    for kind in simulate.KINDS:
        missing = [r for r in simulate.REQUIRED_RULES[kind] if r not in available]
        if missing:
            skipped[kind] = missing
            continue
        jobs += [(kind, seed) for seed in range(1, per_kind + 1)]
    return jobs, skipped


def diagnose(binary, directory):
    p = subprocess.run([binary, "diagnose", "--json", *_rules_args(), str(directory)],
                       capture_output=True, timeout=300)
    assert p.returncode == 0, f"{directory}: exit {p.returncode}: {p.stderr.decode(errors='replace')}"
    return json.loads(p.stdout)


def run_all(binary, root, jobs, workers=2):
    """Simulates and diagnoses every job; returns [(truth, report, dir)]."""
    def one(job):
        kind, seed = job
        d = pathlib.Path(root) / f"{kind}-{seed}"
        truth = simulate.simulate(str(d), kind, seed)
        return truth, diagnose(binary, d), d

    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as ex:
        return list(ex.map(one, jobs))


def _rel(source, directory):
    """Report sources are paths as given; truth sources are relative."""
    s = str(source)
    prefix = str(directory).rstrip("/") + "/"
    return s[len(prefix):] if s.startswith(prefix) else s


def judge(truth, report, directory):
    """What one diagnosis got right; a dict of booleans (None = not applicable)."""
    init = truth["initiating"]
    inc = report["incidents"]
    out = {"kind": truth["kind"], "seed": truth["seed"], "hosts": len(truth["hosts"])}
    primary = inc[0] if inc else None
    if init is None:
        out["quiet"] = not inc
        out["got"] = [i["rule"] for i in inc]
    else:
        got = primary["initiating"] if primary else {}
        out["got"] = (primary["rule"], got.get("rank"), got.get("host")) if primary else None
        out["want"] = (init["rules"], init["rank"], init["host"])
        out["rule_ok"] = bool(primary) and primary["rule"] in init["rules"]
        out["host_ok"] = bool(primary) and got.get("host") == init["host"]
        out["rank_ok"] = None if init["rank"] is None else bool(primary) and got.get("rank") == init["rank"]
        out["inferred_ok"] = bool(primary) and bool(got.get("inferred", False)) == init["inferred"]
    # Stale evidence: never an incident's initiating line, always in ignored.
    stale_lines = {(s["source"], n) for s in truth["stale"] for n in s["lines"]}
    used = [(i["rule"], _rel(e["source"], directory), e["line"]) for i in inc
            for e in i["initiating"]["evidence"] if (_rel(e["source"], directory), e["line"]) in stale_lines]
    out["stale_used"] = used
    out["stale_ignored"] = all(
        any(g["rule"] == s["rule"] and _rel(g["sample"]["source"], directory) == s["source"]
            and g["sample"]["line"] in s["lines"] for g in report["ignored"])
        for s in truth["stale"])
    # Clocks: true time + skew + estimated offset is one clock for all hosts.
    offs = report.get("clock_offsets", {})
    aligned = [truth["clock_skew_s"][h] + offs.get(h, {}).get("seconds", 0.0) for h in truth["hosts"]]
    out["clock_spread_s"] = round(max(aligned) - min(aligned), 3)
    return out


def table(results, skipped):
    rows = collections.OrderedDict()
    for r in results:
        k = rows.setdefault(r["kind"], collections.Counter())
        k["n"] += 1
        for key in ("rank_ok", "host_ok", "rule_ok", "quiet"):
            if r.get(key) is not None:
                k[key + "_n"] += 1
                k[key] += bool(r[key])
        k["stale_bad"] += bool(r["stale_used"]) or not r["stale_ignored"]
        k["clock_max"] = max(k["clock_max"], r["clock_spread_s"])
    lines = ["%-10s %4s %9s %9s %9s %7s %6s %9s" % ("kind", "n", "rank", "host", "rule", "quiet", "stale!",
                                                   "clock<=s")]

    def frac(c, key):
        return "%d/%d" % (c[key], c[key + "_n"]) if c[key + "_n"] else "-"

    for kind, c in rows.items():
        lines.append("%-10s %4d %9s %9s %9s %7s %6d %9.3f" % (kind, c["n"], frac(c, "rank_ok"), frac(c, "host_ok"),
                                                              frac(c, "rule_ok"), frac(c, "quiet"), c["stale_bad"],
                                                              c["clock_max"]))
    for kind, missing in skipped.items():
        lines.append("%-10s skipped: ruleset lacks %s" % (kind, ", ".join(missing)))
    return "\n".join(lines)


def failures(results, key):
    return [r for r in results if r.get(key) is False]


# ---------------------------------------------------------------- pytest

@pytest.fixture(scope="module")
def sim(faultline_bin, tmp_path_factory):
    jobs, skipped = plan(rule_ids(faultline_bin))
    root = tmp_path_factory.mktemp("sim")
    runs = run_all(faultline_bin, root, jobs)
    results = [judge(t, r, d) for t, r, d in runs]
    print("\n" + table(results, skipped))
    return runs, results, skipped


def test_reports_validate(sim, validate):
    runs, _, _ = sim
    for truth, report, d in runs:
        validate(report)


def test_initiating_rank(sim):
    _, results, skipped = sim
    ranked = [r for r in results if r.get("rank_ok") is not None]
    assert ranked, "no scenario with an initiating rank ran"
    ok = sum(r["rank_ok"] for r in ranked) / len(ranked)
    bad = "\n".join("  %s-%d (%d hosts): want %s got %s" % (r["kind"], r["seed"], r["hosts"], r["want"], r["got"])
                    for r in failures(ranked, "rank_ok"))
    assert ok >= RANK_ACCURACY, "rank accuracy %.3f < %.2f\n%s\n%s" % (ok, RANK_ACCURACY, table(results, skipped), bad)


def test_initiating_host_and_rule(sim):
    _, results, skipped = sim
    faults = [r for r in results if r.get("host_ok") is not None]
    host = sum(r["host_ok"] for r in faults) / len(faults)
    rule = sum(r["rule_ok"] for r in faults) / len(faults)
    bad = "\n".join("  %s-%d: want %s got %s" % (r["kind"], r["seed"], r["want"], r["got"])
                    for r in faults if not (r["host_ok"] and r["rule_ok"]))
    assert host >= HOST_ACCURACY and rule >= HOST_ACCURACY, \
        "host %.3f rule %.3f\n%s\n%s" % (host, rule, table(results, skipped), bad)


def test_no_diagnosis_from_stale_evidence(sim):
    _, results, _ = sim
    used = [(r["kind"], r["seed"], r["stale_used"]) for r in results if r["stale_used"]]
    assert not used, f"incidents built on replayed stale lines: {used}"
    missing = [(r["kind"], r["seed"]) for r in results if not r["stale_ignored"]]
    assert not missing, f"stale block not reported under ignored: {missing}"


def test_benign_jobs_are_quiet(sim):
    _, results, skipped = sim
    if "benign" in skipped:
        pytest.skip("benign kind skipped: " + ", ".join(skipped["benign"]))
    noisy = [(r["kind"], r["seed"], r["got"]) for r in results if r.get("quiet") is False]
    assert not noisy, f"benign jobs diagnosed: {noisy}"


def test_clock_offsets_estimated(sim):
    # NCCL's own time stamps (a third of the jobs) have whole seconds: the
    # truncation alone leaves up to 1 s between two hosts.
    runs, results, _ = sim
    bad = []
    for (truth, report, d), r in zip(runs, results):
        limit = 1.5 if truth["nccl_timestamps"] else 1.0
        if r["clock_spread_s"] > limit:
            bad.append((r["kind"], r["seed"], r["clock_spread_s"], limit))
    assert not bad, f"aligned host clocks disagree by more than the limit: {bad}"


def test_simulator_is_deterministic(tmp_path):
    a = simulate.simulate(str(tmp_path / "a"), "ecc", 3, hosts=3)
    b = simulate.simulate(str(tmp_path / "b"), "ecc", 3, hosts=3)
    assert a == b
    for f in sorted((tmp_path / "a").rglob("*")):
        if f.is_file():
            assert f.read_bytes() == (tmp_path / "b" / f.relative_to(tmp_path / "a")).read_bytes(), f


def test_subcommunicator_init_lines_keep_global_ranks(faultline_bin, tmp_path):
    wrong = []
    for seed in (1, 2, 3, 4):
        d = tmp_path / f"xid79-sub-{seed}"
        truth = simulate.simulate(str(d), "xid79", seed, hosts=4, subcomms=True)
        rep = diagnose(faultline_bin, d)
        got = rep["incidents"][0]["initiating"]["rank"] if rep["incidents"] else None
        if got != truth["initiating"]["rank"]:
            wrong.append((seed, truth["initiating"]["rank"], got))
    assert not wrong, f"(seed, want, got): {wrong}"


# Sizes of the c10d desync and Flight Recorder jobs, in hosts of 8 ranks (a
# 1,024-rank job: about 4 s to write, 2 s to diagnose).
SIZES = [pytest.param(2, id="16"), pytest.param(32, id="256"), pytest.param(128, id="1024")]


def desync_job(faultline_bin, directory, hosts, form, skew=True):
    truth = simulate.simulate(str(directory), "silent", 1, hosts=hosts, desync=form, skew=skew)
    assert any(truth["clock_skew_s"].values()) == skew
    return truth, diagnose(faultline_bin, directory)


def assert_names_the_rank(truth, rep):
    init = truth["initiating"]
    assert any(i["rule"] == "collective-desync-stuck" for i in rep["incidents"]), [i["rule"] for i in rep["incidents"]]
    primary = rep["incidents"][0]
    got = (primary["rule"], primary["initiating"].get("rank"), primary["initiating"].get("host"))
    assert got[0] in init["rules"] and got[1:] == (init["rank"], init["host"]), (got, init)


@pytest.mark.parametrize("skew", [True, False], ids=["skew", "no_skew"])
@pytest.mark.parametrize("form", ["never_joined", "joined_not_finished"])
@pytest.mark.parametrize("hosts", SIZES)
def test_desync_report_names_the_rank(faultline_bin, tmp_path, hosts, form, skew):
    """A silent hang whose c10d desync report names the one rank out of
    step: the report's first incident names it, and a collective-desync-stuck
    incident exists."""
    assert_names_the_rank(*desync_job(faultline_bin, tmp_path, hosts, form, skew))


@pytest.mark.parametrize("hosts", SIZES)
def test_collective_mismatch_names_the_rank(faultline_bin, tmp_path, hosts):
    """Every rank's fingerprint error names the rank it differs from: the
    ranks in step name the odd one out, which names one of them; the first
    incident names the rank most lines name, and its host."""
    assert_names_the_rank(*desync_job(faultline_bin, tmp_path, hosts, "mismatch"))


@pytest.mark.parametrize("hosts", SIZES)
def test_collective_mismatch_is_a_desync(faultline_bin, tmp_path, hosts):
    """Every rank's ProcessGroupWrapper fingerprint error (one rank ran
    all_gather where the others ran all_reduce): the first incident is the
    desync, not the ranks' exits."""
    truth = simulate.simulate(str(tmp_path), "silent", 1, hosts=hosts, desync="mismatch")
    rep = diagnose(faultline_bin, tmp_path)
    assert rep["incidents"][0]["rule"] in truth["initiating"]["rules"], [i["rule"] for i in rep["incidents"]]


@pytest.mark.parametrize("skew", [True, False], ids=["skew", "no_skew"])
@pytest.mark.parametrize("hosts", SIZES)
def test_flight_recorder_dumps_name_the_rank(faultline_bin, tmp_path, hosts, skew):
    """Every rank's Flight Recorder dump beside the logs of a silent hang:
    one rank never entered the world all_reduce the others started; the
    dumps' suspect is that rank and the first incident names it, with the
    dumps' missing-rank finding."""
    truth = simulate.simulate(str(tmp_path), "silent", 3, hosts=hosts, flight_recorder=True, skew=skew)
    assert any(truth["clock_skew_s"].values()) == skew
    victim = truth["initiating"]["rank"]
    rep = diagnose(faultline_bin, tmp_path)
    fr = rep["flight_recorder"]
    assert len(fr["dumps"]) == truth["ranks"]
    assert fr["suspects"] == [victim]
    primary = rep["incidents"][0]
    assert primary["rule"] in truth["initiating"]["rules"]
    assert primary["initiating"]["rank"] == victim and primary["initiating"]["host"] == truth["initiating"]["host"]
    assert [(f["kind"], f["rank"]) for f in primary["flight_recorder"]] == [("missing-rank", victim)]


@pytest.mark.parametrize("skew", [True, False], ids=["skew", "no_skew"])
@pytest.mark.parametrize("hosts", SIZES)
def test_flight_recorder_mismatch_names_the_rank(faultline_bin, tmp_path, hosts, skew):
    """Every rank's Flight Recorder dump of a hang in which one rank started
    all_gather where the others started all_reduce, and every rank's
    watchdog timed out: the first incident is the dumps' mismatch, on that
    rank and its host."""
    truth = simulate.simulate(str(tmp_path), "silent", 3, hosts=hosts, flight_recorder="mismatch", skew=skew)
    victim = truth["initiating"]["rank"]
    rep = diagnose(faultline_bin, tmp_path)
    world = [g for g in rep["flight_recorder"]["groups"] if g["mismatches"]]
    assert [m["ranks"] for g in world for m in g["mismatches"]] == [[{"rank": victim, "got": "all_gather"}]]
    primary = rep["incidents"][0]
    got = (primary["rule"], primary["initiating"].get("rank"), primary["initiating"].get("host"))
    assert got == ("flight-recorder-collective-mismatch", victim, truth["initiating"]["host"]), got
    assert [(f["kind"], f["rank"]) for f in primary["flight_recorder"]] == [("mismatch", victim)]


if __name__ == "__main__":
    binary = os.environ.get("FAULTLINE_BIN", str(pathlib.Path(__file__).resolve().parents[2] / "build" / "src" /
                                                 "cli" / "faultline"))
    per = int(sys.argv[1]) if len(sys.argv) > 1 else PER_KIND
    jobs, skipped = plan(rule_ids(binary), per)
    with tempfile.TemporaryDirectory() as root:
        res = [judge(t, r, d) for t, r, d in run_all(binary, root, jobs)]
    print(table(res, skipped))
    for r in res:
        if r.get("rank_ok") is False or r.get("host_ok") is False or r.get("rule_ok") is False \
                or r.get("quiet") is False or r["stale_used"] or not r["stale_ignored"]:
            print("FAIL", r)
