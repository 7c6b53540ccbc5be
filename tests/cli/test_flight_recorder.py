"""PyTorch NCCL Flight Recorder dumps as an input of `faultline diagnose`:
recognised by content whatever their name, pickle and JSON of every dump
version, compressed too; the wavefront, the missing ranks and the
mismatches in the report (JSON and text); dumps plus logs of a
watchdog-timeout job name the initiating rank; bad and hostile dumps are
input errors naming the file while the rest is still diagnosed.

The dumps are written by tests/flightrec/make_dumps.py (its docstring says
which structure each scenario has)."""
import json
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, run

MAKE_DUMPS = REPO / "tests" / "flightrec" / "make_dumps.py"


@pytest.fixture(scope="module")
def dumps(tmp_path_factory):
    out = tmp_path_factory.mktemp("fr") / "dumps"
    subprocess.run([sys.executable, str(MAKE_DUMPS), str(out)], check=True, timeout=300)
    return out


def diagnose_json(faultline_bin, validate, *paths, status=0):
    p = run(faultline_bin, "diagnose", "--json", *map(str, paths), check=False)
    assert p.returncode == status, p.stderr.decode(errors="replace")
    doc = json.loads(p.stdout)
    validate(doc)
    return doc, p.stderr.decode(errors="replace")


def group(doc, name):
    return next(g for g in doc["flight_recorder"]["groups"] if g["name"] == name)


VERSIONS = ["v2.0-pickle", "v2.3-pickle", "v2.3-json", "v2.4-pickle", "v2.7-pickle",
            "v2.10-pickle", "v2.10-json", "v2.10-pickle-p0", "v2.10-pickle-p1",
            "v2.10-pickle-p4", "v2.10-pickle-p5"]


@pytest.mark.parametrize("case", VERSIONS)
def test_every_dump_version_gives_the_wavefront_and_the_mismatch(faultline_bin, validate, dumps,
                                                                  case):
    doc, _ = diagnose_json(faultline_bin, validate, dumps / case)
    fr = doc["flight_recorder"]
    version = case.split("-")[0][1:]
    fmt = case.split("-")[1]
    assert sorted(d["rank"] for d in fr["dumps"]) == list(range(8))
    assert {(d["version"], d["format"]) for d in fr["dumps"]} == {(version, fmt)}
    assert {d["rank_source"] for d in fr["dumps"]} == {"group-membership"}
    world = group(doc, "0")
    assert world["wavefront"] == {"seq": 6, "op": "all_reduce", "missing": [5]}
    assert world["mismatches"] == [{"seq": 3, "field": "input_sizes", "expected": "[[2048]]",
                                   "ranks": [{"rank": 2, "got": "[[1024]]"}]}]
    assert fr["suspects"] == [5]
    # Without logs the dumps make the incidents: the missing rank's, and the
    # desync the job carried on past (ranked below it).
    rules = [i["rule"] for i in doc["incidents"]]
    assert rules == ["flight-recorder-missing-rank", "flight-recorder-collective-mismatch"]
    hang, desync = doc["incidents"]
    assert hang["initiating"]["rank"] == 5 and hang["initiating"]["suspects"] == [5]
    assert hang["flight_recorder"][0]["kind"] == "missing-rank"
    assert hang["flight_recorder"][0]["seq"] == 6
    assert desync["initiating"]["suspects"] == [2] and desync["initiating"]["survived"] is True


def test_watchdog_job_logs_and_dumps_name_the_initiating_rank(faultline_bin, validate, dumps):
    job = dumps / "job"
    both, _ = diagnose_json(faultline_bin, validate, job)
    logs_only, _ = diagnose_json(faultline_bin, validate, job / "logs")
    assert "flight_recorder" not in logs_only
    primary = both["incidents"][0]
    assert primary["rule"] == "nccl-watchdog-timeout"
    assert primary["initiating"]["rank"] == 5
    assert primary["initiating"]["suspects"] == [5]
    assert [f["rank"] for f in primary["flight_recorder"]] == [5]
    assert primary["flight_recorder"][0]["source"].startswith(str(job / "dumps"))
    assert "agree" in primary["explanation"] and "rank 5" in primary["explanation"]
    # One suspect from two witnesses: more confident than the logs alone.
    assert logs_only["incidents"][0]["initiating"]["rank"] == 5
    assert primary["confidence"] > logs_only["incidents"][0]["confidence"]
    fr = both["flight_recorder"]
    # Renamed, gzipped and JSON dumps are all read; the ranks come from them.
    assert sorted(d["rank"] for d in fr["dumps"]) == list(range(8))
    assert {d["format"] for d in fr["dumps"]} == {"pickle", "json"}
    assert any(d["source"].endswith(".gz") for d in fr["dumps"])
    assert group(both, "0")["wavefront"] == {"seq": 6, "op": "all_reduce", "missing": [5]}
    assert both["input"]["errors"] == []


def test_watchdog_job_text_report(faultline_bin, dumps):
    out = run(faultline_bin, "diagnose", str(dumps / "job")).stdout.decode()
    primary = out.split("== PRIMARY DIAGNOSIS ==")[1].split("\n== ")[0]
    assert "[nccl-watchdog-timeout" in primary
    assert "suspect: rank 5" in primary
    assert "Logs and dumps name one suspect: rank 5" in primary
    assert "flight recorder:\n" in primary and "never entered collective #6" in primary
    assert "wavefront: #6 (all_reduce), never entered by rank 5\n" in out
    assert "flight recorder: 8 dump(s)" in out


def test_1024_ranks_desync_and_missing_rank(faultline_bin, validate, dumps):
    doc, _ = diagnose_json(faultline_bin, validate, dumps / "scale1024")
    fr = doc["flight_recorder"]
    assert len(fr["dumps"]) == 1023
    assert 1000 not in {d["rank"] for d in fr["dumps"]}
    world = group(doc, "0")
    assert world["size"] == 1024 and world["dumped"] == 1023
    assert world["wavefront"] == {"seq": 6, "op": "all_reduce", "missing": [777]}
    assert world["no_dump"] == [1000]
    assert world["mismatches"] == [{"seq": 4, "field": "op", "expected": "all_reduce",
                                   "ranks": [{"rank": 300, "got": "all_gather"}]}]
    assert fr["suspects"] == [777, 1000]
    by_rule = {i["rule"]: i for i in doc["incidents"]}
    assert doc["incidents"][0]["initiating"]["rank"] == 777
    assert by_rule["flight-recorder-collective-mismatch"]["initiating"]["suspects"] == [300]

    out = run(faultline_bin, "diagnose", str(dumps / "scale1024")).stdout.decode()
    assert "wavefront: #6 (all_reduce), never entered by rank 777\n" in out
    assert "mismatch at #4: op all_reduce expected; rank 300 all_gather\n" in out
    assert "no dump: rank 1000\n" in out


def test_bad_and_hostile_dumps_are_input_errors_the_rest_diagnosed(faultline_bin, validate, dumps):
    broken = dumps / "broken"
    doc, stderr = diagnose_json(faultline_bin, validate, broken, status=2)
    errors = {e["source"]: e["message"] for e in doc["input"]["errors"]}
    cut = str(broken / "dumps" / "cut-short.json")
    assert cut in errors and "Flight Recorder dump" in errors[cut]
    p2 = str(broken / "hostile" / "nccl_trace_rank_0.p2")
    p4 = str(broken / "hostile" / "nccl_trace_rank_0.p4")
    assert "GLOBAL" in errors[p2] and "refused" in errors[p2]
    assert "STACK_GLOBAL" in errors[p4]
    for path in (cut, p2, p4):
        assert path in stderr
    # The other dumps and the logs still name rank 5.
    assert doc["incidents"][0]["initiating"]["rank"] == 5
    assert group(doc, "0")["wavefront"]["missing"] == [5]
    # The dump that failed to parse is rank 1's: that member left no dump.
    assert group(doc, "0")["no_dump"] == [1]


def test_a_json_log_that_mentions_the_keys_is_still_a_log(faultline_bin, validate, dumps, tmp_path):
    log = tmp_path / "events.json"
    log.write_text(
        '{"ts": "2025-12-02T18:36:46Z", "rank": 1, "msg": "collective_seq_id=6 pg_config ok"}\n'
        '{"ts": "2025-12-02T18:36:47Z", "rank": 1, "msg": "[Rank 1] Watchdog caught collective '
        'operation timeout: WorkNCCL(SeqNum=6, OpType=ALLREDUCE, NumelIn=2048, NumelOut=2048, '
        'Timeout(ms)=600000) ran for 600020 milliseconds before timing out."}\n')
    doc, _ = diagnose_json(faultline_bin, validate, log)
    assert "flight_recorder" not in doc
    assert doc["input"]["errors"] == []
    assert doc["incidents"][0]["rule"] == "nccl-watchdog-timeout"


def job_copy(dumps, tmp_path, silent_in_logs):
    """The job archive with the watchdog lines moved so that the logs'
    silent ranks are `silent_in_logs` (rank 5 stays missing in the dumps)."""
    job = tmp_path / "job"
    shutil.copytree(dumps / "job", job)
    lines = (job / "logs" / "rank0.log").read_text().splitlines()[-2:]
    for rank in range(8):
        log = job / "logs" / f"rank{rank}.log"
        steps = [ln for ln in log.read_text().splitlines() if "Watchdog" not in ln and "Timeout at" not in ln]
        if rank not in silent_in_logs:
            steps += [ln.replace("rank0", f"rank{rank}").replace("Rank 0", f"Rank {rank}") for ln in lines]
        log.write_text("\n".join(steps) + "\n")
    return job


def test_logs_without_a_suspect_take_the_dumps(faultline_bin, validate, dumps, tmp_path):
    job = job_copy(dumps, tmp_path, silent_in_logs=[])
    logs_only, _ = diagnose_json(faultline_bin, validate, job / "logs")
    assert logs_only["incidents"][0]["initiating"]["suspects"] == []
    doc, _ = diagnose_json(faultline_bin, validate, job)
    primary = doc["incidents"][0]
    assert primary["rule"] == "nccl-watchdog-timeout"
    assert primary["initiating"]["rank"] == 5 and primary["initiating"]["suspects"] == [5]
    assert "name the suspect: rank 5 never entered" in primary["explanation"]


def test_logs_and_dumps_disagree_the_dumps_lead(faultline_bin, validate, dumps, tmp_path):
    job = job_copy(dumps, tmp_path, silent_in_logs=[3])
    logs_only, _ = diagnose_json(faultline_bin, validate, job / "logs")
    assert logs_only["incidents"][0]["initiating"]["suspects"] == [3]
    doc, _ = diagnose_json(faultline_bin, validate, job)
    primary = doc["incidents"][0]
    assert primary["initiating"]["rank"] == 5
    assert primary["initiating"]["suspects"] == [5, 3]
    assert "name the suspect instead" in primary["explanation"]
    # Two witnesses that disagree do not make it more certain.
    assert primary["confidence"] <= logs_only["incidents"][0]["confidence"]


def test_a_dump_past_max_source_bytes_is_an_input_error(faultline_bin, validate, dumps):
    v = dumps / "v2.10-json"
    logs = dumps / "job" / "logs"
    doc, stderr = diagnose_json(faultline_bin, validate, "--max-source-bytes", "4K", v, logs,
                                status=2)
    assert "flight_recorder" not in doc
    assert doc["incidents"][0]["rule"] == "nccl-watchdog-timeout"  # the logs still diagnosed
    assert len(doc["input"]["errors"]) == 8
    assert all("--max-source-bytes" in e["message"] and "Flight Recorder dump" in e["message"]
               for e in doc["input"]["errors"])
    assert str(v / "nccl_trace_rank_3") in stderr


@pytest.mark.parametrize("case,source,ranks", [("p2p", "p2p-name", [0, 1]),
                                               ("filename", "file-name", [0, 1, 2, 3])])
def test_rank_from_p2p_names_then_file_names(faultline_bin, validate, dumps, case, source, ranks):
    doc, _ = diagnose_json(faultline_bin, validate, dumps / case)
    fr = doc["flight_recorder"]
    assert sorted(d["rank"] for d in fr["dumps"]) == ranks
    assert {d["rank_source"] for d in fr["dumps"]} == {source}
