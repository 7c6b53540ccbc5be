"""DeepSpeed in torchelastic's per-rank log tree (`--log-dir`:
<run>/attempt_N/<local_rank>/stdout.log beside its stderr.log): the
ThroughputTimer line names no rank, only the folder's local rank, which the
sibling stderr.log's NCCL init ties to a rank; a `log_dist(...,
ranks=[-1])` step line beside it names the rank (`[Rank N] step=`). Both
kinds of line are that rank's steps, so the slow rank's throughput counts
for it, not for "rank unknown"."""

from conftest import diagnose_path, torchelastic_worker

HOSTS = ["gpu-a01", "gpu-a02"]
LOCAL = 4
STEPS = 30


def stdout(rank, rate):
    out = []
    for s in range(1, STEPS + 1):
        t = f"[2024-05-10 18:{39 + s // 60:02d}:{s % 60:02d},460]"
        out.append(f"{t} [INFO] [logging.py:96:log_dist] [Rank {rank}] step={s}, skipped=0, lr=[0.00015], "
                   "mom=[(0.9, 0.95)]")
        r = rate * (1 + 0.01 * (s % 3))
        out.append(f"{t} [INFO] [timer.py:264:stop] epoch=0/micro_step={s}/global_step={s}, "
                   f"RunningAvgSamplesPerSec={r:.4f}, CurrSamplesPerSec={r:.4f}, MemAllocated=14.2GB, "
                   "MaxMemAllocated=31.8GB")
    return "\n".join(out) + "\n"


def archive(root, slow):
    for h, host in enumerate(HOSTS):
        for lr in range(LOCAL):
            rank = h * LOCAL + lr
            d = torchelastic_worker(root / "nodes" / host, host, lr, rank, len(HOSTS) * LOCAL)
            (d / "stdout.log").write_text(stdout(rank, 37.9 if rank == slow else 45.6))


def test_rank_naming_and_rankless_step_lines_are_one_ranks(faultline_bin, validate, tmp_path):
    archive(tmp_path, slow=5)
    inc = diagnose_path(faultline_bin, validate, tmp_path)
    assert inc and inc[0]["rule"] == "straggler-slow-rank", [i["rule"] for i in inc]
    assert inc[0]["initiating"]["rank"] == 5
    assert inc[0]["initiating"]["host"] == "gpu-a02"
