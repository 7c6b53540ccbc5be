"""Step lines with no time stamp, in torchelastic's per-rank log tree
(`--log-dir`: <run>/attempt_N/<local_rank>/stdout.log beside its
stderr.log): a tqdm bar's carriage-return updates name no rank, only the
folder's local rank, and the sibling stderr.log's NCCL init line gives
that device's rank. The rank left a step behind the others is the hang's;
when its bar stopped cannot be known from the logs."""

from conftest import diagnose_path, torchelastic_worker

HOSTS = ["gpu-a01", "gpu-a02"]
LOCAL = 4


def bar(last):
    # tqdm's default bar, one carriage-return update per step, no stamp.
    return "".join(f"\r {i * 100 // 500:2d}%|\u258b         | {i}/500 [{i // 60:02d}:{i % 60:02d}<09:05,  1.17s/it]"
                   for i in range(1, last + 1)) + "\n"


def archive(root, behind):
    for h, host in enumerate(HOSTS):
        node = root / "nodes" / host
        node.mkdir(parents=True)
        (node / "torchrun.log").write_text(
            "I1120 09:00:01.000000 4100 torch/distributed/elastic/agent/server/api.py:879] [default] starting "
            "workers for entrypoint: python3\n"
            "W1120 09:40:00.000000 4100 torch/distributed/elastic/agent/server/api.py:704] Received "
            "Signals.SIGINT death signal, shutting down workers\n")
        for lr in range(LOCAL):
            rank = h * LOCAL + lr
            d = torchelastic_worker(node, host, lr, rank, len(HOSTS) * LOCAL)
            (d / "stdout.log").write_text(bar(35 if rank == behind else 36))


def test_untimed_bar_left_behind_names_its_rank(faultline_bin, validate, tmp_path):
    archive(tmp_path, behind=6)
    inc = diagnose_path(faultline_bin, validate, tmp_path)
    assert inc and inc[0]["rule"] == "training-silent-hang", [i["rule"] for i in inc]
    assert inc[0]["initiating"]["rank"] == 6
    assert inc[0]["initiating"]["host"] == "gpu-a02"
    assert any("no time stamps" in f for f in inc[0]["missing_facts"]), inc[0]["missing_facts"]
