"""The independent simulator (sim2gen.py) at 16 ranks: every incident kind in
every launcher layout for one seed, the kernel-log format turning with them,
through `faultline diagnose --json`. The floors are the measured level (see
README.md): a change that loses an archive fails here; raise them when a fix
gains one. FAULTLINE_BIN picks the binary (tests/conftest.py).

    python3 -m pytest tests/sim2 -q
"""
import pathlib
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import sim2gen as gen  # noqa: E402
import score  # noqa: E402

# Archives right of the 84 (12 kinds x 7 layouts, seed 1, 16 ranks), with
# and without clock skew.
FLOORS = {"top1": 84, "rank": 63, "host": 77, "straggler_found": 7, "hang_found": 7}


@pytest.fixture(scope="module", params=["skew", "no_skew"])
def marks(request, faultline_bin, tmp_path_factory):
    """The slice with every host's clock skewed, then with none (skew 0)."""
    todo = score.cases(ranks=(16,), seeds=(1,))
    assert len(todo) == len(gen.KINDS) * len(gen.LAYOUTS)
    skew = request.param == "skew"
    return score.run(faultline_bin, todo, tmp_path_factory.mktemp("sim2"), workers=2, skew=skew)


def _misses(marks, key):
    return "\n".join(f"{m['case']}: got {m['got']}, want {m.get('want')}" for m in marks if m.get(key) is False)


@pytest.mark.parametrize("key", ["top1", "rank", "host"])
def test_floor(marks, key):
    ok, n = score.rate(marks, key)
    assert ok >= FLOORS[key], f"{key}: {ok}/{n} below the floor {FLOORS[key]}; misses:\n{_misses(marks, key)}"


@pytest.mark.parametrize("kind", ["straggler", "hang"])
def test_found(marks, kind):
    ok, n = score.rate([m for m in marks if m["kind"] == kind], "found")
    assert ok >= FLOORS[f"{kind}_found"], f"{kind} found in {ok}/{n}"


def test_no_foreign_host(marks):
    bad = [(m["case"], m["foreign"]) for m in marks if m["foreign"]]
    assert not bad, f"hosts named that the archive does not hold: {bad}"


def test_deterministic(tmp_path):
    a = gen.simulate(str(tmp_path / "a"), "host_oom", "k8s", "journal_json", 16, 7)
    b = gen.simulate(str(tmp_path / "b"), "host_oom", "k8s", "journal_json", 16, 7)
    assert a == b
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert files
    for f in files:
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f


def test_no_skew_changes_only_the_clocks(tmp_path):
    """--no-skew: every host's skew is 0 and the job is the same one (hosts,
    victim, formats); the generator stays deterministic."""
    a = gen.simulate(str(tmp_path / "a"), "hang", "srun", "rfc3164", 16, 2)
    b = gen.simulate(str(tmp_path / "b"), "hang", "srun", "rfc3164", 16, 2, skew=False)
    c = gen.simulate(str(tmp_path / "c"), "hang", "srun", "rfc3164", 16, 2, skew=False)
    assert any(a["skew_s"].values()) and not any(b["skew_s"].values())
    assert {k: v for k, v in a.items() if k != "skew_s"} == {k: v for k, v in b.items() if k != "skew_s"}
    files = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert files
    for f in files:
        assert (tmp_path / "b" / f).read_bytes() == (tmp_path / "c" / f).read_bytes(), f


def test_truth_outside_archive(tmp_path):
    t = gen.simulate(str(tmp_path), "segfault", "srun", "dmesg", 16, 1)
    assert (tmp_path / "truth.json").exists()
    assert not list((tmp_path / "logs").rglob("truth.json"))
    assert t["host"] in t["hosts"] and t["rank"] is not None


def test_gce_preemption_names_the_instance(faultline_bin, tmp_path):
    """`gcloud compute operations list` names the preempted instance in its
    TARGET column: that instance is the host, though the row sits in a file
    of no host (seed 1 of mpirun/dmesg draws GCE)."""
    t = gen.simulate(str(tmp_path), "preempt", "mpirun", "dmesg", 16, 1)
    assert (tmp_path / "logs" / "gcloud-operations.txt").exists()
    report, err = score.diagnose(faultline_bin, tmp_path / "logs")
    assert report, err
    first = report["incidents"][0]
    assert first["reference"] in t["references"]
    assert first["initiating"]["host"] == t["host"]


@pytest.mark.parametrize("layout,kformat,seed", [("journald", "journal_iso", 2), ("k8s", "dmesg", 1)])
def test_straggler_whose_lines_name_only_pid_or_local_rank(faultline_bin, tmp_path, layout, kformat, seed):
    """Step lines that name no rank, only the pid journald stamps them with
    or torchrun's "[default3]:" local rank, count for the rank the same
    source's NCCL init lines tie to that pid or device."""
    t = gen.simulate(str(tmp_path), "straggler", layout, kformat, 16, seed)
    report, err = score.diagnose(faultline_bin, tmp_path / "logs")
    assert report, err
    assert report["incidents"], "no incident"
    first = report["incidents"][0]
    assert first["reference"] in t["references"]
    assert (first["initiating"]["rank"], first["initiating"]["host"]) == (t["rank"], t["host"])


@pytest.mark.parametrize("layout,kformat,seed,dirname", [
    # Megatron step lines under srun -l; the dmesg dump has boot seconds
    # only: nothing but the cancel's "CANCELLED AT <t>" says time passed.
    ("srun", "dmesg", 3, "logs"),
    # An archive folder named after the kernel-log format: the rank logs in
    # it are still the job's, not kernel logs.
    ("k8s", "dmesg", 2, "dmesg-case"),
    # mpirun's unstamped "abort is already in progress" (signalled again
    # while it aborts): the job was ended from outside, so the kernel logs
    # of its hosts say how long it sat without progress.
    ("mpirun", "dmesg_t", 1, "logs"),
])
def test_hang_the_operator_cancelled(faultline_bin, tmp_path, layout, kformat, seed, dirname):
    """One rank stops, the rest wait, nothing errs; half an hour later the
    operator cancels. The hang is the cause and names the first to stop;
    the cancel is its collateral."""
    t = gen.simulate(str(tmp_path / dirname), "hang", layout, kformat, 16, seed)
    report, err = score.diagnose(faultline_bin, tmp_path / dirname / "logs")
    assert report, err
    assert report["incidents"], "no incident"
    first = report["incidents"][0]
    assert first["reference"] in t["references"], first["reference"]
    assert first["initiating"]["rank"] == t["rank"]


@pytest.mark.parametrize("layout,kformat,seed", [("torchrun", "dmesg", 1), ("k8s", "rfc5424", 2), ("torchrun", "rfc3164", 3)])  # NCCL 2.27
def test_port_down_names_its_hca(faultline_bin, tmp_path, layout, kformat, seed):
    """The kernel's port-down line names the HCA's PCI function; NCCL's
    device lines tie it to mlx5_N, which the report's initiating.hca names
    (and the text report's initiating line)."""
    t = gen.simulate(str(tmp_path), "ib_down", layout, kformat, 16, seed)
    report, err = score.diagnose(faultline_bin, tmp_path / "logs")
    assert report, err
    first = report["incidents"][0]
    assert first["reference"] in t["references"]
    assert first["initiating"].get("hca") == gen.HCAS[t["rank"] % gen.GPUS_PER_HOST // 2]
    text = subprocess.run([faultline_bin, "diagnose", str(tmp_path / "logs")], capture_output=True, text=True).stdout
    assert f"HCA {first['initiating']['hca']}" in text


@pytest.mark.parametrize("kformat,seed", [("rfc3164", 3), ("rfc5424", 2), ("dmesg_t", 2), ("journal_json", 2)])  # the other pod reports first
def test_oom_kill_of_one_pod_among_several_on_its_node(faultline_bin, tmp_path, kformat, seed):
    """Several pods per node, each its own torchrun: the kernel kills a
    worker of one pod and then one of another pod on that node, and whose
    agent reports first is chance. Only the first kill's task_memcg (the
    pod's UID, which the kubelet's PLEG line names) says which pod's
    worker, and that pod's agent which of its ranks."""
    t = gen.simulate(str(tmp_path), "host_oom", "k8s_pods", kformat, 16, seed)
    report, err = score.diagnose(faultline_bin, tmp_path / "logs")
    assert report, err
    first = report["incidents"][0]
    assert first["reference"] in t["references"]
    assert (first["initiating"]["rank"], first["initiating"]["host"]) == (t["rank"], t["host"])
