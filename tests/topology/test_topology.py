"""Archives in the layouts of gen_archive.py (per-host folders, Kubernetes
pods, Slurm srun output) through `faultline diagnose --json`: the rule, the
initiating rank and host, and that no host outside the archive's own hosts
is named (not a pod, not a folder above the input, not the NFS server).

The archives are written under "<tmp>/simS2/cases/<case>" so that a folder
above the input root looks like a host. FAULTLINE_BIN picks the binary
(tests/conftest.py).

    python3 -m pytest tests/topology -q
"""
import json
import pathlib
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gen_archive  # noqa: E402

# Every layout and kind at 16, 256 and 1,024 ranks, with and without clock
# skew.
CASES = [(layout, kind, ranks, skew)
         for layout in gen_archive.LAYOUTS
         for kind in gen_archive.LAYOUT_KINDS[layout]
         for ranks, skew in [(16, 0), (16, 1), (256, 0), (256, 1), (1024, 0), (1024, 1)]]


def diagnose(binary, directory):
    p = subprocess.run([binary, "diagnose", "--json", str(directory)], capture_output=True, timeout=300)
    assert p.returncode == 0, f"{directory}: exit {p.returncode}: {p.stderr.decode(errors='replace')}"
    return json.loads(p.stdout)


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("topology") / "simS2" / "cases"


@pytest.mark.parametrize("layout,kind,ranks,skew", CASES,
                         ids=["%s-%s-%d%s" % (l, k, r, "-skew" if s else "") for l, k, r, s in CASES])
def test_archive(faultline_bin, root, layout, kind, ranks, skew):
    # The input folder's own name counts as a host when shaped like one
    # (`diagnose gpu-b02/`), so the case folder is named unlike a host;
    # "simS2" above it is host-shaped and must never be named.
    d = root / ("case_%s_%s_%d_%d" % (layout, kind, ranks, skew))
    truth = gen_archive.generate(str(d), layout, kind, ranks, skew, seed=ranks + skew)
    report = diagnose(faultline_bin, d)
    want = truth["initiating"]
    assert report["incidents"], "no incident"
    primary = report["incidents"][0]
    got = primary["initiating"]
    assert primary["rule"] in want["rules"], [i["rule"] for i in report["incidents"]]
    assert got.get("host") == want["host"]
    if want["rank"] is not None:
        assert got.get("rank") == want["rank"]
    stray = gen_archive.named_hosts(report, set()) - set(truth["hosts"])
    assert not stray, "hosts outside the archive: %s" % sorted(stray)
    assert report["input"]["hosts"] == len(truth["hosts"])
    if "checkpoint_after_notice" in want:
        # Who ended the job, and whether a checkpoint was taken after the
        # notice. With the generator's skew (the notice's host 75-90 s ahead
        # of the host logging the checkpoint) the report may say the order
        # cannot be known, never the wrong one.
        e = primary["explanation"]
        after = "A checkpoint was saved after the notice" in e
        before = "No checkpoint was saved after the notice" in e
        unknown = "whether the checkpoint came after the notice cannot be known" in e
        assert after + before + unknown == 1, e
        if skew:
            assert unknown or after == want["checkpoint_after_notice"], e
        else:
            assert after == want["checkpoint_after_notice"], e
        assert "The job was ended from outside" in e


def test_nodelist_compression():
    assert gen_archive.compress_nodelist("gpu-", [1, 2, 3, 4, 17], 3) == "gpu-[001-004,017]"


def test_anchored_signals_match_on_any_line(faultline_bin, tmp_path):
    """A rule's ^ and $ are a line's start and end, not the file's: the
    status reason of the second pod in `kubectl describe pods` output and a
    sacct row under its header are found (Hyperscan compiled MULTILINE)."""
    f = tmp_path / "describe_pods.txt"
    f.write_text("Name:             trainer-worker-0\nStatus:           Running\n\n"
                 "Name:             trainer-worker-1\nStatus:           Failed\n"
                 "Reason:           Evicted\nMessage:          evicted\n")
    p = subprocess.run([faultline_bin, "scan", "--json", str(f)], capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr
    records = [json.loads(l) for l in p.stdout.decode().splitlines() if l.strip()]
    found = {(r["line"], r["signal"]) for r in records}
    assert {(4, "k8s-describe-name"), (6, "k8s-pod-evicted")} <= found, sorted(found)


def _pod_archive(base, describe_ids, killed_id):
    """Two one-rank pods on two nodes; the OOM killer on the second node
    names its victim by a host pid no pod line knows and by the container in
    its memory cgroup (systemd driver, containerd)."""
    logs = base / "logs"
    for r in (0, 1):
        d = logs / "pods" / f"trainer-{r}"
        d.mkdir(parents=True)
        (d / "pytorch.log").write_text(
            f"2025-01-13T03:37:52.438890000Z stderr F trainer-{r}:100:100 [0] NCCL INFO comm 0x55d4c8a0 "
            f"rank {r} nranks 2 cudaDev 0 nvmlDev 0 busId 18000 commId 0xabcdef - Init COMPLETE\n"
            f"2025-01-13T03:38:00.000000000Z stdout F [train] rank={r} step=1 loss=9.1 step_time_ms=1000.0\n")
    k = logs / "kubectl"
    k.mkdir()
    (k / "get-pods-wide.txt").write_text(
        "NAME        READY   STATUS      RESTARTS   AGE   IP           NODE         NOMINATED NODE   READINESS GATES\n"
        "trainer-0   0/1     Error       0          47m   10.244.0.2   gpu-node-0   <none>           <none>\n"
        "trainer-1   0/1     OOMKilled   0          47m   10.244.0.3   gpu-node-1   <none>           <none>\n")
    (k / "describe-pods.txt").write_text("".join(
        f"Name:             trainer-{r}\nNamespace:        default\nNode:             gpu-node-{r}/10.20.0.{r + 10}\n"
        f"Containers:\n  pytorch:\n    Container ID:   containerd://{cid}\n    Image:          nvcr.io/nvidia/pytorch:24.05-py3\n"
        for r, cid in enumerate(describe_ids)))
    n = logs / "nodes" / "gpu-node-1"
    n.mkdir(parents=True)
    memcg = f"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod51c2.slice/cri-containerd-{killed_id}.scope"
    (n / "dmesg-T.txt").write_text(
        "[Mon Jan 13 03:38:30 2025] python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n"
        f"[Mon Jan 13 03:38:30 2025] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=cri-containerd-{killed_id}.scope,"
        f"mems_allowed=0-1,oom_memcg={memcg.rsplit('/', 1)[0]},task_memcg={memcg},task=python,pid=88123,uid=0\n"
        "[Mon Jan 13 03:38:30 2025] Memory cgroup out of memory: Killed process 88123 (python) total-vm:1000kB, "
        "anon-rss:900kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:100kB oom_score_adj:0\n")
    return logs


def test_oom_kill_container_names_the_pods_rank(faultline_bin, tmp_path):
    """The memory cgroup's container id, matched with `kubectl describe
    pods`, names the pod and so its one rank; an id no pod has names none."""
    ids = ["1" * 64, "27a2e7ef6d3d55b99196e7d58756ae79d2e29288909ba84360d9b06f9165c99a"]
    for name, killed, want in [("known", ids[1], 1), ("unknown", "2" * 64, None)]:
        d = diagnose(faultline_bin, _pod_archive(tmp_path / name, ids, killed))
        first = d["incidents"][0]["initiating"]
        assert first["host"] == "gpu-node-1", first
        assert first["rank"] == want, first
