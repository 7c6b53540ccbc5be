"""The third simulator (sim3gen.py) at 16 ranks: every incident kind in every
platform encoding for one seed, through `faultline diagnose --json`. The
floors are the measured level (README.md): a change that loses an archive
fails here; raise them when a fix gains one. FAULTLINE_BIN picks the binary
(tests/conftest.py).

    python3 -m pytest tests/sim3 -q
"""
import importlib.util
import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import sim3gen as gen  # noqa: E402


def _load(name, path):
    """tests/sim2 has a score.py of its own, imported as `score` when both
    suites run in one session: this one is loaded under a name of its own."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


score = _load("sim3_score", HERE / "score.py")

# Archives right of the 56 (8 kinds x 7 encodings, seed 1, 16 ranks).
FLOORS = {"top1": 56, "rank": 28, "host": 47, "none": 7}
# Archives naming a host the archive does not hold: a host that never
# started NCCL is known to a Ray log by its address only (driver_old).
MAX_FOREIGN = 1


@pytest.fixture(scope="module")
def marks(faultline_bin, tmp_path_factory):
    todo = score.cases(ranks=(16,), seeds=(1,))
    assert len(todo) == len(gen.KINDS) * len(gen.ENCODINGS)
    return score.run(faultline_bin, todo, tmp_path_factory.mktemp("sim3"), workers=2)


def _misses(marks, key):
    return "\n".join(f"{m['case']}: got {m['got']}, want {m.get('want')}" for m in marks if m.get(key) is False)


@pytest.mark.parametrize("key", ["top1", "rank", "host", "none"])
def test_floor(marks, key):
    ok, n = score.rate(marks, key)
    assert ok >= FLOORS[key], f"{key}: {ok}/{n} below the floor {FLOORS[key]}; misses:\n{_misses(marks, key)}"


def test_foreign_hosts(marks):
    bad = [(m["case"], m["foreign"]) for m in marks if m["foreign"]]
    assert len(bad) <= MAX_FOREIGN, f"hosts named that the archive does not hold: {bad}"


@pytest.mark.parametrize("enc", ["gcp_export", "fluentbit", "ray_train", "docker_json"])
def test_encoding_names_the_node(faultline_bin, tmp_path, enc):
    """A GCP LogEntry's node label, fluent-bit's kubernetes.host (an EKS
    FQDN), a Ray worker's ip= (NCCL's Bootstrap line announces it under the
    hostname) and a GKE node's folder name the host the kernel's Xid is on."""
    t = gen.simulate(str(tmp_path), "nvlink5", enc, 16, 1)
    report, err = score.diagnose(faultline_bin, tmp_path / "logs")
    assert report, err
    first = report["incidents"][0]
    assert first["reference"] in t["references"]
    assert (first["initiating"].get("rank"), first["initiating"].get("host")) == (t["rank"], t["host"])
    assert not score.hosts_named(report) - set(t["hosts"])


def test_deterministic(tmp_path):
    a = gen.simulate(str(tmp_path / "a"), "xid79_aer", "docker_json", 16, 3)
    b = gen.simulate(str(tmp_path / "b"), "xid79_aer", "docker_json", 16, 3)
    assert a == b
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert files
    for f in files:
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f


def test_truth_outside_archive(tmp_path):
    t = gen.simulate(str(tmp_path), "shm_sigbus", "mpi_dirs", 16, 1)
    assert (tmp_path / "truth.json").exists()
    assert not list((tmp_path / "logs").rglob("truth.json"))
    assert t["host"] in t["hosts"] and t["rank"] in t["ranks_ok"]
