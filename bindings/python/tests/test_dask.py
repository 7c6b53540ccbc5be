"""faultline.dask on a real dask.distributed LocalCluster with 2 workers: the
report equals faultline.diagnose's on the same inputs."""
import json
import os
import pathlib
import random

import pytest

distributed = pytest.importorskip("dask.distributed")

import faultline  # noqa: E402
import faultline.dask as fdask  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples" / "incidents" / "xid79-two-hosts"


def comparable(report):
    d = report.to_dict()
    d["input"].pop("seconds", None)
    return d


@pytest.fixture(scope="module")
def client():
    env = {k: v for k, v in os.environ.items() if k.startswith("FAULTLINE")}
    # Workers import the package from the same place the tests do.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(pathlib.Path(faultline.__file__).parents[1]),
                                                    os.environ.get("PYTHONPATH", "")) if p)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, env=env)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_same_report_as_one_process(client):
    want = faultline.diagnose(str(EXAMPLE))
    got = fdask.diagnose(str(EXAMPLE), client=client, partition_bytes=4096)
    assert len(fdask.plan(str(EXAMPLE), 4096)) > 40  # many partitions
    assert comparable(got) == comparable(want)
    assert got.primary.rule == "xid-79-fallen-off-bus"
    assert [e.text for e in got.evidence] == [e.text for e in want.evidence]


def test_partition_boundary_inside_a_run_of_matching_lines(client, tmp_path):
    log = tmp_path / "node004" / "rank-9.log"
    log.parent.mkdir()
    lines = ["2026-11-02T03:00:00.000Z [rank9]: started"]
    for i in range(300):
        lines.append(f"[rank9]:[E1102 03:42:{i % 60:02d}.000000 99 ProcessGroupNCCL.cpp:616] [Rank 9] Watchdog caught "
                     f"collective operation timeout: WorkNCCL(SeqNum={4711 + i}, OpType=ALLREDUCE, NumelIn=8, "
                     f"NumelOut=8, Timeout(ms)=600000) ran for 600005 milliseconds before timing out.")
    log.write_text("\n".join(lines) + "\n")
    want = faultline.diagnose(str(tmp_path))
    for part in (1000, 4096, 7777):
        got = fdask.diagnose(str(tmp_path), client=client, partition_bytes=part)
        assert comparable(got) == comparable(want), part
    counts = {c.rule: c.count for c in want.incidents[0].collateral} if want.incidents else {}
    assert want.incidents and sum(1 for e in want.evidence if e.rule == "nccl-watchdog-timeout") == 300 or counts


def test_compressed_and_unreadable_inputs(client, tmp_path):
    import gzip
    body = (EXAMPLE / "node017" / "kern.log").read_bytes()
    (tmp_path / "node017").mkdir()
    (tmp_path / "node017" / "kern.log.gz").write_bytes(gzip.compress(body))
    bad = tmp_path / "node018" / "rank-4.log.gz"
    bad.parent.mkdir()
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage-not-gzip")
    with pytest.warns(faultline.InputWarning, match="rank-4.log.gz"):
        want = faultline.diagnose([str(tmp_path)])
    with pytest.warns(faultline.InputWarning, match="rank-4.log.gz"):
        got = fdask.diagnose([str(tmp_path)], client=client, partition_bytes=1024)
    assert comparable(got) == comparable(want)
    assert any(e.source == str(bad) for e in got.input.errors)


def test_missing_or_empty_input_raises_like_diagnose(client, tmp_path):
    missing = str(tmp_path / "nope.log")
    with pytest.raises(FileNotFoundError):
        faultline.diagnose([str(EXAMPLE), missing])
    with pytest.raises(FileNotFoundError):
        fdask.diagnose([str(EXAMPLE), missing], client=client)
    (tmp_path / "empty").mkdir()
    with pytest.raises(faultline.FaultlineIOError):
        faultline.diagnose(tmp_path / "empty")
    with pytest.raises(faultline.FaultlineIOError):
        fdask.diagnose(str(tmp_path / "empty"), client=client)


def test_plan_splits_only_plain_big_files(tmp_path):
    (tmp_path / "a.log").write_bytes(b"x\n" * 5000)
    (tmp_path / "b.log.gz").write_bytes(b"\x1f\x8b" + b"0" * 20000)
    tasks = fdask.plan(str(tmp_path), 4096)
    assert [t for t in tasks if t[0].endswith(".gz")] == [(str(tmp_path / "b.log.gz"), 0, -1)]
    ranges = [t for t in tasks if t[0].endswith("a.log")]
    assert len(ranges) == 3 and ranges[0][1] == 0 and ranges[-1][2] == 10000
    with pytest.raises(ValueError):
        fdask.plan(str(tmp_path), 0)
