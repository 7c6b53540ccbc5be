"""The real-log corpus: labels are well formed, and faultline's scores on it
never fall below the floors in floors.json (measured figures; they only go
up). Scores come from eval.py, the same code a person runs by hand."""
import json
import pathlib

import pytest

import eval as corpus_eval  # tests/realworld/eval.py

HERE = pathlib.Path(__file__).resolve().parent
CASES = sorted(p for p in (HERE / "cases").iterdir() if p.is_dir()) if (HERE / "cases").is_dir() else []
FLOORS = json.loads((HERE / "floors.json").read_text())
REQUIRED = ("id", "source", "date", "versions", "failed", "expected", "accept_rules",
            "initiating", "rank", "host", "traps", "why")


@pytest.fixture(scope="module")
def catalog(faultline_bin):
    from conftest import run
    rules = json.loads(run(faultline_bin, "rules", "list", "--json").stdout)
    refs = {r["reference"] for r in rules} | {corpus_eval.FALLBACK_REFERENCE}
    return refs, {r["id"]: r["reference"] for r in rules}


def test_corpus_is_there():
    assert len(CASES) >= FLOORS["min_cases"]


@pytest.mark.parametrize("case_dir", CASES, ids=[c.name for c in CASES])
def test_labels_are_well_formed(case_dir, catalog):
    refs, rule_ref = catalog
    label = json.loads((case_dir / "case.json").read_text())
    assert not [k for k in REQUIRED if k not in label], "missing label fields"
    assert label["id"] == case_dir.name
    assert label["source"].startswith("https://")
    for ref in label["expected"] + label["traps"]:
        assert ref in refs, f"unknown reference {ref!r}"
    for rule in label["accept_rules"]:
        assert rule in rule_ref, f"unknown rule {rule!r}"
        assert rule_ref[rule] in label["expected"], f"{rule} names a reference not expected"
    assert not set(label["expected"]) & set(label["traps"])
    # The engine reports a rank as a number: a quoted "3" never scores.
    assert label["rank"] is None or type(label["rank"]) is int, "rank is a number or null"
    log = (case_dir / "log.txt").read_text(errors="replace")
    if label["initiating"] is not None:
        assert any(label["initiating"] in line for line in log.splitlines()), \
            "initiating is not a substring of one line of log.txt"
    if not label["failed"]:
        assert label["initiating"] is None


def below_floors(result, floors_by_part, name):
    low = []
    for part, floors in floors_by_part.items():
        fig = result[part]
        for metric, floor in floors.items():
            rate = fig[metric]["rate"]
            ceiling = metric in ("no_incident", "hardware_on_negative", "trap")
            if rate is not None and (rate > floor if ceiling else rate < floor):
                low.append(f"{name}.{part}.{metric} = {rate} ({'max' if ceiling else 'min'} {floor})")
    return low


# Each batch holds its own floors: a batch labelled blind later measures
# how the engine generalises, and adding one never lowers the floors of
# the cases before it.
@pytest.mark.parametrize("batch", [corpus_eval.FIRST_BATCH] + sorted(FLOORS.get("batches", {})))
def test_scores_hold_their_floors(faultline_bin, batch):
    floors = FLOORS["floors"] if batch == corpus_eval.FIRST_BATCH else FLOORS["batches"][batch]
    result = corpus_eval.main(["--bin", faultline_bin, "--batch", batch])
    low = below_floors(result, floors, batch)
    assert not low, "; ".join(low)


def test_batch_scores_only_its_own_cases(tmp_path, faultline_bin):
    for name, batch in (("a-1", "blind-x"), ("b-2", None)):
        d = tmp_path / name
        d.mkdir()
        (d / "log.txt").write_text("step 10 loss 2.1\n")
        label = {"id": name, "failed": False, "expected": [], "initiating": None}
        if batch:
            label["batch"] = batch
        (d / "case.json").write_text(json.dumps(label))
    result = corpus_eval.main(["--bin", faultline_bin, "--cases", str(tmp_path),
                               "--batch", "blind-x"])
    assert result["all"]["cases"] == 1
    with pytest.raises(SystemExit):
        corpus_eval.main(["--bin", faultline_bin, "--cases", str(tmp_path), "--batch", "none"])
    result = corpus_eval.main(["--bin", faultline_bin, "--cases", str(tmp_path),
                               "--batch", corpus_eval.FIRST_BATCH])
    assert result["all"]["cases"] == 1  # b-2: no batch label


# Held cases are scored as totals: nothing eval.py prints or returns says
# which references a held case expected or got, or which held case missed.
def test_held_cases_are_totals_only(tmp_path, faultline_bin, capsys):
    assert corpus_eval.held_back("x-1") and not corpus_eval.held_back("x-0")
    for name, ref in (("x-0", "Work Reference Of Nobody"), ("x-1", "Held Reference Of Nobody")):
        d = tmp_path / name
        d.mkdir()
        (d / "log.txt").write_text("step 10 loss 2.1\n")
        (d / "case.json").write_text(json.dumps(
            {"id": name, "failed": True, "expected": [ref], "initiating": "step 10"}))
    for split in ("all", "held"):
        result = corpus_eval.main(["--bin", faultline_bin, "--cases", str(tmp_path),
                                   "--split", split, "--misses", "--json", "-"])
        out = capsys.readouterr()
        assert result["held"]["top1"]["n"] == 1
        assert "Held Reference" not in out.out + out.err
        assert "x-1" not in out.out + out.err
        assert "held case(s) missed" in out.err
    result = corpus_eval.main(["--bin", faultline_bin, "--cases", str(tmp_path), "--split", "work",
                               "--misses"])
    assert "Work Reference" in capsys.readouterr().out
    assert "per_reference" in result["work"] and "per_reference" in result["all"]


# A negative is right with no incident, a benign one, or one the report marks
# survived (the job carried on); a failure's survived primary is scored by
# its reference like any other, and no negative's hardware verdict is let go.
def test_survived_primary_is_right_only_for_a_negative():
    def report(survived, layer="framework"):
        initiating = {"evidence": [], "rank": None, "host": None}
        if survived:
            initiating["survived"] = True
        return {"incidents": [{"reference": "CUDA Out of Memory on One Rank", "rule": "cuda-oom",
                               "layer": layer, "initiating": initiating}]}
    negative = {"failed": False, "expected": [], "initiating": None}
    assert corpus_eval.score_case(negative, report(True))["top1"]
    assert not corpus_eval.score_case(negative, report(False))["top1"]
    assert corpus_eval.score_case(negative, report(True, "hardware"))["hardware_on_negative"]
    failed = {"failed": True, "expected": ["Unrecognised fatal error"], "initiating": None}
    assert not corpus_eval.score_case(failed, report(True))["top1"]



# A trap is a reference the thread rules out as the failure: a negative's
# survived primary of that reference says the job carried on past it (top1
# accepts it), so it takes no trap; a failure's primary of it takes it,
# survived or not.
def test_survived_primary_of_a_negative_takes_no_trap():
    def report(survived):
        initiating = {"evidence": [], "rank": None, "host": None}
        if survived:
            initiating["survived"] = True
        return {"incidents": [{"reference": "CUDA Out of Memory on One Rank", "rule": "cuda-oom",
                               "layer": "framework", "initiating": initiating}]}
    traps = ["CUDA Out of Memory on One Rank"]
    negative = {"failed": False, "expected": [], "initiating": None, "traps": traps}
    assert not corpus_eval.score_case(negative, report(True))["trap"]
    assert corpus_eval.score_case(negative, report(False))["trap"]
    failed = {"failed": True, "expected": ["Unrecognised fatal error"], "initiating": None, "traps": traps}
    assert corpus_eval.score_case(failed, report(True))["trap"]

def test_host_is_compared_by_its_short_name():
    def report(host):
        return {"incidents": [{"reference": "R", "rule": "r", "layer": "framework",
                               "initiating": {"evidence": [], "rank": None, "host": host}}]}
    case = {"failed": True, "expected": ["R"], "initiating": None, "host": "x1000c0s0b0n0.hsn.cm.example.org"}
    assert corpus_eval.score_case(case, report("x1000c0s0b0n0"))["host"]
    assert not corpus_eval.score_case(case, report("x1000c0s0b0n1"))["host"]
    assert corpus_eval.score_case(dict(case, host="10.0.3.7"), report("10.0.3.7"))["host"]
    assert not corpus_eval.score_case(dict(case, host="10.0.3.7"), report("10.0.3.8"))["host"]


def test_grep_baseline_names_only_catalog_references(catalog):
    import grep_baseline
    refs, _ = catalog
    assert [t for t, _, _ in grep_baseline.TABLE if t not in refs] == []


def test_grep_baseline_takes_the_first_matching_line(tmp_path):
    import grep_baseline
    log = tmp_path / "log.txt"
    log.write_text("step 10 loss 2.1\n"
                   "RuntimeError: CUDA error: an illegal memory access was encountered\n"
                   "NVRM: Xid (PCI:0000:9a:00): 79, pid=1, GPU has fallen off the bus.\n")
    inc = grep_baseline.diagnose(log)["incidents"][0]
    assert inc["reference"] == "CUDA Kernel Fault Inside One Rank"
    assert "illegal memory access" in inc["initiating"]["evidence"][0]["text"]
    log.write_text("step 10 loss 2.1\n")
    assert grep_baseline.diagnose(log)["incidents"] == []
