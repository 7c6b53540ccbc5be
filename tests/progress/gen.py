"""Generates multi-rank training archives whose only story is in the step
lines: a healthy run (with ordinary step-time noise), one slow device, pauses
that hit one rank at a time (garbage collection), an imbalance that moves
between ranks, and a silent hang. Each trainer format writes its lines the
way that trainer prints them (see rulesets/nccl/training-progress.json for
the upstream sources); every archive has a truth.json.

    python3 tests/progress/gen.py OUT FORMAT SCENARIO RANKS [--skew] [--seed N]
                                  [--steps N] [--chatter K]

Layouts: per-rank files under per-host folders (<host>/rank-<r>.log) for
formats every rank prints, one file per host with torchrun "[rankN]:"
prefixes for torchtitan, and a single rank-0 file for the formats that only
the main process prints (tqdm bars, Lightning's RichProgressBar, HF Trainer
dicts, Composer, Megatron's last-rank logger); Accelerate's bar is on every
host's local main process (one train.log per host, naming no rank).
Composer's console logger under an epoch max_duration (`composer_epoch`)
prints `[epoch=E][batch=B/N]:` on every rank with no time stamp: the batch
restarts every epoch. `lightning_rich_file` is Lightning's RichProgressBar
(`leave=True`) with stdout a file: one bar per finished epoch, no redraws.
"""
import argparse
import datetime
import json
import math
import os
import random

RANKS_PER_HOST = 8
T0 = datetime.datetime(2026, 3, 1, 9, 0, 0, tzinfo=datetime.timezone.utc).timestamp()

# Formats whose lines every rank prints (per-rank comparisons possible), and
# those only one process prints.
PER_RANK = ["megatron", "nemo", "deepspeed", "torchtitan", "kv", "jsonl", "composer_epoch"]
RANK0_ONLY = ["hf", "lightning", "lightning_rich", "accelerate", "composer", "megatron_last", "lightning_rich_file"]
# Per-rank formats whose step lines carry no time (nor a step time): which
# rank is slow cannot be known from them, only which one stopped first.
UNTIMED = ["composer_epoch"]
FORMATS = PER_RANK + RANK0_ONLY
# Formats a launcher's train.log on the main process holds (bars, dicts).
BAR_FORMATS = ["hf", "lightning", "lightning_rich", "lightning_rich_file", "accelerate"]
SCENARIOS = ["healthy", "straggler", "periodic", "moving", "hang"]


def stamp_py(t):  # 2026-03-01 09:00:05,123
    d = datetime.datetime.fromtimestamp(t, datetime.timezone.utc)
    return d.strftime("%Y-%m-%d %H:%M:%S,") + "%03d" % (d.microsecond // 1000)


def stamp_bracket(t):  # [2026-03-01 09:00:05]
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("[%Y-%m-%d %H:%M:%S]")


def stamp_iso(t):
    d = datetime.datetime.fromtimestamp(t, datetime.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (d.microsecond // 1000)


class Job:
    def __init__(self, fmt, scenario, nranks, skew, seed):
        self.rng = random.Random(seed * 7919 + nranks)
        self.seed = seed
        self.fmt, self.scenario, self.nranks = fmt, scenario, nranks
        self.hosts = ["gpu-%03d" % (h + 1) for h in range((nranks + RANKS_PER_HOST - 1) // RANKS_PER_HOST)]
        self.skew = {h: (self.rng.uniform(-40, 40) if skew else 0.0) for h in self.hosts}
        self.steps = self.rng.randint(60, 90)
        self.base = self.rng.uniform(0.8, 4.5)  # seconds per step
        self.noise = self.rng.uniform(0.01, 0.04)
        self.culprit = self.rng.randrange(nranks)
        self.slow = self.rng.uniform(1.15, 1.4)
        self.period = self.rng.choice([10, 12, 15, 20])
        self.hang_step = self.steps - self.rng.randint(5, 15)
        # Batches per epoch for the epoch-counting formats (several epochs
        # per run, so the batch restarts within it).
        self.epoch_len = 12 + 5 * (seed % 4)

    def host(self, r):
        return self.hosts[r // RANKS_PER_HOST]

    def step_times(self):
        """[rank][step-1] -> seconds of compute; None past a hang."""
        n, rng = self.nranks, self.rng
        times = []
        offsets = [rng.randrange(self.period) for _ in range(n)]
        # Moving imbalance: tokens per rank per step vary (variable-length
        # samples), so the slowest rank changes every step.
        for r in range(n):
            row = []
            for s in range(1, self.steps + 1):
                t = self.base * rng.gauss(1.0, self.noise)
                if self.scenario == "straggler" and r == self.culprit:
                    t *= self.slow
                if self.scenario == "periodic" and s % self.period == offsets[r]:
                    t *= rng.uniform(1.5, 2.2)
                if self.scenario == "moving":
                    t *= math.exp(rng.gauss(0, 0.18))
                row.append(max(t, 0.05))
            times.append(row)
        return times

    def last_step(self, r):
        if self.scenario != "hang":
            return self.steps
        return self.hang_step - 1 if r == self.culprit else self.hang_step

    def truth(self):
        t = {"format": self.fmt, "scenario": self.scenario, "ranks": self.nranks,
             "hosts": self.hosts, "skewed": any(self.skew.values())}
        per_rank = self.fmt in PER_RANK
        if self.scenario == "healthy":
            t["primary_rule"] = None
        elif self.scenario == "hang":
            t["primary_rule"] = "training-silent-hang"
            t["initiating_rank"] = self.culprit if per_rank else None
        elif not per_rank or self.fmt in UNTIMED:
            t["primary_rule"] = None  # one rank's lines, or untimed ones, cannot show a straggler
        elif self.scenario == "straggler":
            t["primary_rule"] = "straggler-slow-rank"
            t["initiating_rank"] = self.culprit
            t["initiating_host"] = self.host(self.culprit)
        elif self.scenario == "periodic":
            t["primary_rule"] = "python-gc-straggler"
        else:
            t["primary_rule"] = "sequence-length-imbalance-straggler"
        return t


def write_archive(out, fmt, scenario, nranks, skew=False, seed=1, steps=None, chatter=0, epoch_len=None):
    """steps: override the run's length; chatter: ordinary log lines per
    step on every rank (data-loader and NCCL chatter that matches nothing),
    to size an archive for bench/ (bench/README.md); epoch_len: batches per
    epoch of the epoch-counting formats."""
    job = Job(fmt, scenario, nranks, skew, seed)
    if epoch_len:
        job.epoch_len = epoch_len
    if steps:
        job.steps = steps
        job.hang_step = steps - job.rng.randint(5, 15)
    times = job.step_times()
    files = {}

    def emit(rel, t, text):
        files.setdefault(rel, []).append((t, text))

    # Wall clock of each step's end: the job moves at its slowest rank
    # (synchronous collectives); each rank reports its own compute time.
    wall = [T0 + 60.0]
    for s in range(job.steps):
        wall.append(wall[-1] + max(times[r][s] for r in range(nranks)) * 1.02)
    end = wall[-1] + 5.0
    if scenario == "hang":
        end = wall[job.hang_step] + 1500.0  # the job sits until it is killed

    writers = {"megatron": w_megatron, "nemo": w_nemo, "deepspeed": w_deepspeed, "torchtitan": w_torchtitan,
               "kv": w_kv, "jsonl": w_jsonl, "hf": w_hf, "lightning": w_lightning, "accelerate": w_accelerate,
               "composer": w_composer, "megatron_last": w_megatron, "lightning_rich": w_lightning_rich,
               "composer_epoch": w_composer_epoch, "lightning_rich_file": w_lightning_rich_file}
    ranks = range(nranks) if fmt in PER_RANK else main_processes(job)
    for r in ranks:
        h = job.host(r)
        clock = lambda t, h=h: t + job.skew[h]  # noqa: E731
        writers[fmt](job, r, h, times[r], wall, clock, emit)
        for s in range(1, job.last_step(r) + 1) if chatter else ():
            for k in range(chatter):
                t = clock(wall[s - 1] + (k + 1) * (wall[s] - wall[s - 1]) / (chatter + 1))
                emit(rank_file(job, r), t, prefix(job, r) + "%s - INFO - dataloader: worker %d prefetched batch %d "
                     "(%d samples, %d tokens) in %.1f ms" % (stamp_py(t), k % 4, s * chatter + k, 8, 65536,
                                                             3.0 + (s * 7 + k) % 11))
        # Something keeps every rank's log going after a hang (a heartbeat),
        # then a stack dump: the one the watchdog asked faulthandler for,
        # or (even seeds) `py-spy dump` of the rank's pid.
        if scenario == "hang":
            rel = rank_file(job, r)
            for k in range(1, 5):
                emit(rel, clock(wall[job.hang_step] + 300 * k),
                     prefix(job, r) + "%s - INFO - heartbeat: dataloader workers alive" %
                     stamp_py(clock(wall[job.hang_step] + 300 * k)))
            dump_t = clock(end - 30)
            for line in stack_dump(job, r):
                emit(rel, dump_t, prefix(job, r) + line)
    # Every rank's NCCL init line (the world's size and where each rank
    # runs), in its own file, whoever prints the step lines.
    for r in range(nranks):
        h = job.host(r)
        t = job.skew[h] + T0 + 20 + 0.001 * r
        rel = "%s/rank-%d.log" % (h, r) if fmt not in BAR_FORMATS + ["torchtitan"] else \
            "%s/nccl-%d.log" % (h, r)
        emit(rel, t, "%s:%d:%d [%d] NCCL INFO comm 0x55d0c0a1b2c0 rank %d nranks %d cudaDev %d nvmlDev %d busId "
             "%x000 commId 0x5a1e2b3c4d5e6f70 - Init COMPLETE" % (h, 4100 + r % 8, 4100 + r % 8, r % 8, r, nranks,
                                                                  r % 8, r % 8, 0x18 + 0x10 * (r % 8)))
    # The launcher's own start line on every host, so the archive's end time
    # covers the silence even where a rank wrote nothing more.
    for h in job.hosts:
        emit("%s/launcher.log" % h, job.skew[h] + T0, "%s - INFO - Starting elastic_operator with launch configs" %
             stamp_py(job.skew[h] + T0))
        if scenario == "hang":
            emit("%s/launcher.log" % h, job.skew[h] + end, "%s - INFO - still waiting on workers" %
                 stamp_py(job.skew[h] + end))
    os.makedirs(out, exist_ok=True)
    for rel, lines in files.items():
        lines.sort(key=lambda x: x[0])  # stable: lines of one moment keep their order
        path = os.path.join(out, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", newline="\n") as f:
            if fmt in BAR_FORMATS and rel.endswith("train.log"):
                # tqdm redraws with carriage returns and no newline; what
                # else is printed lands after the bar, on its line.
                f.write("".join(t if t.startswith("\r") or t.endswith("\n") else t + "\n" for _, t in lines))
                f.write("\n")
            else:
                f.write("\n".join(text for _, text in lines) + "\n")
    truth = job.truth()
    with open(os.path.join(out, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
    return truth


def main_processes(job):
    """The ranks that print a rank-0-only format: Megatron's last rank,
    Accelerate's local main process of every host (its `tqdm` wrapper
    disables the bar where `local_process_index != 0`), else rank 0."""
    if job.fmt == "megatron_last":
        return [job.nranks - 1]
    if job.fmt == "accelerate":
        return range(0, job.nranks, RANKS_PER_HOST)
    return [0]


def stack_dump(job, r):
    """What rank r was doing when the dump was taken: the culprit in its
    data loader, the others in the collective that waits for it."""
    if job.seed % 2:
        where = ('  File "/opt/train/data.py", line 88 in __next__' if r == job.culprit else
                 '  File "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", line 2501 in all_reduce')
        return ["Timeout (0:20:00)!", "Thread 0x00007f3a9c1ff740 (most recent call first):", where,
                '  File "/opt/train/train.py", line 311 in train_step']
    where = ("    __next__ (/opt/train/data.py:88)" if r == job.culprit else
             "    all_reduce (torch/distributed/distributed_c10d.py:2501)")
    return ["Process %d: /usr/bin/python3 -u /opt/train/train.py" % (4100 + r % 8),
            "Python v3.10.12 (/usr/bin/python3.10)", "",
            'Thread 0x7F3A9C1FF740 (%s): "MainThread"' % ("active" if r == job.culprit else "idle"), where,
            "    train_step (/opt/train/train.py:311)"]


def rank_file(job, r):
    if job.fmt == "torchtitan":
        return "%s/train.log" % job.host(r)
    if job.fmt in BAR_FORMATS:
        return "%s/train.log" % job.host(r)
    return "%s/rank-%d.log" % (job.host(r), r)


def prefix(job, r):
    return "[rank%d]:" % r if job.fmt == "torchtitan" else ""


def steps_of(job, r):
    return range(1, job.last_step(r) + 1)


def w_megatron(job, r, h, times, wall, clock, emit):
    rel = rank_file(job, r)
    for s in steps_of(job, r):
        t = clock(wall[s])
        emit(rel, t, "%s iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration (ms): %.1f | "
             "learning rate: 2.987E-04 | global batch size:   512 | lm loss: %.6E | loss scale: 1.0 | grad norm: 0.412 | "
             "number of skipped iterations:   0 | number of nan iterations:   0 |" %
             (stamp_bracket(t), s, 500000, 512 * s, times[s - 1] * 1000, 7.9 - 0.01 * s))


def w_nemo(job, r, h, times, wall, clock, emit):
    rel = rank_file(job, r)
    for s in steps_of(job, r):
        t = clock(wall[s])
        emit(rel, t, "[%s] [default%d]:Training epoch 0, iteration %d/%d | lr: 1.469e-05 | global_batch_size: 128 | "
             "global_step: %d | reduced_train_loss: %.3f | train_step_timing in s: %.4g | consumed_samples: %d" %
             (stamp_iso(t), r % 8, s - 1, job.steps - 1, s - 1, 6.3 - 0.001 * s, times[s - 1], 128 * s))


def w_deepspeed(job, r, h, times, wall, clock, emit):
    rel = rank_file(job, r)
    for s in steps_of(job, r):
        t = clock(wall[s])
        emit(rel, t, "[%s] [INFO] [logging.py:128:log_dist] [Rank %d] step=%d, skipped=0, lr=[2.9e-05], "
             "mom=[(0.9, 0.95)]" % (stamp_py(t), r, s))
        emit(rel, t, "[%s] [INFO] [timer.py:264:stop] epoch=0/micro_step=%d/global_step=%d, "
             "RunningAvgSamplesPerSec=%.6f, CurrSamplesPerSec=%.6f, MemAllocated=4.32GB, MaxMemAllocated=38.49GB" %
             (stamp_py(t + 0.003), 4 * s, s, 32 / job.base, 32 / times[s - 1]))


def w_torchtitan(job, r, h, times, wall, clock, emit):
    rel = rank_file(job, r)
    for s in steps_of(job, r):
        t = clock(wall[s])
        tps = int(8192 * 2 / times[s - 1])
        emit(rel, t, "[rank%d]:[titan] %s - root - INFO - step: %d  loss: %7.4f  memory: 30.89GiB(32.51%%)  "
             "tps: %s  tflops: 366.06  mfu: 37.01%%" % (r, stamp_py(t), s, 8.9 - 0.02 * s, format(tps, ",")))


def w_kv(job, r, h, times, wall, clock, emit):
    rel = rank_file(job, r)
    for s in steps_of(job, r):
        t = clock(wall[s])
        emit(rel, t, "%s [train] rank=%d step=%d loss=%.4f step_time_ms=%.1f tokens_per_s=%d" %
             (stamp_py(t), r, s, 8.7 - 0.01 * s, times[s - 1] * 1000, int(8192 * 43 / times[s - 1])))


def w_jsonl(job, r, h, times, wall, clock, emit):
    rel = rank_file(job, r)
    for s in steps_of(job, r):
        t = clock(wall[s])
        emit(rel, t, json.dumps({"time": stamp_iso(t), "rank": r, "step": s, "loss": round(3.1 - 0.001 * s, 4),
                                 "tokens_per_sec": round(65536 / times[s - 1], 1)}))


def tqdm_bar(s, total, elapsed, rate, desc="", postfix=""):
    frac = s / total
    filled = int(frac * 10)
    bar = "\u2588" * filled + " " * (10 - filled)
    remaining = (total - s) / rate if rate > 0 else 0
    fmt = lambda x: "%02d:%02d" % (int(x) // 60, int(x) % 60)  # noqa: E731
    r = ("%.2fit/s" % rate) if rate >= 1 else ("%.2fs/it" % (1 / rate))
    return "%s%3d%%|%s| %d/%d [%s<%s, %s%s]" % (desc, int(frac * 100), bar, s, total, fmt(elapsed), fmt(remaining), r,
                                              postfix)


def w_tqdm(job, r, h, times, wall, clock, emit, desc, dicts):
    rel = rank_file(job, r)
    total = job.steps
    emit(rel, clock(T0 + 30), "%s - INFO - ***** Running training *****\n" % stamp_py(clock(T0 + 30)))
    for s in steps_of(job, r):
        rate = 1.0 / times[s - 1]
        emit(rel, clock(wall[s]), "\r" + tqdm_bar(s, total, wall[s] - wall[0], rate, desc,
                                                ", v_num=0, train_loss=%.3f" % (2.3 - 0.001 * s) if desc else ""))
        if dicts and s % 10 == 0:
            emit(rel, clock(wall[s]), "\r" + " " * 60 + "\r{'loss': %.4f, 'grad_norm': 1.45, 'learning_rate': "
                 "1.6e-04, 'epoch': %.2f}\n" % (2.3 - 0.001 * s, s / total))


def w_hf(job, r, h, times, wall, clock, emit):
    w_tqdm(job, r, h, times, wall, clock, emit, "", True)


def w_lightning(job, r, h, times, wall, clock, emit):
    w_tqdm(job, r, h, times, wall, clock, emit, "Epoch 0: ", False)


def w_accelerate(job, r, h, times, wall, clock, emit):
    w_tqdm(job, r, h, times, wall, clock, emit, "", False)


def w_composer(job, r, h, times, wall, clock, emit):
    rel = rank_file(job, r)
    # Its progress is counted in max_duration's unit: batches, or (odd
    # seeds) tokens, 2**20 a batch.
    unit, per = ("token", 1 << 20) if job.seed % 2 else ("batch", 1)
    for s in steps_of(job, r):
        t = clock(wall[s])
        emit(rel, t, "%s: composer.trainer.trainer: INFO: [%s=%d/%d]:" % (stamp_py(t), unit, s * per, job.steps * per))
        emit(rel, t, "\t Train time/batch: %d" % (s - 1))
        emit(rel, t, "\t Train loss/train/total: %.4f" % (2.9 - 0.002 * s))
        emit(rel, t, "\t Train throughput/batches_per_sec: %.4f" % (1 / times[s - 1]))


def hms(x):  # Rich's elapsed and remaining columns: 0:01:05
    return "%d:%02d:%02d" % (int(x) // 3600, int(x) // 60 % 60, int(x) % 60)


def w_lightning_rich(job, r, h, times, wall, clock, emit):
    """Lightning's RichProgressBar on rank 0: `Epoch E/M` (M is max_epochs -
    1), the bar, batch/total of the epoch, elapsed \u2022 remaining, the rate,
    then the metrics; redrawn in place, each epoch's bar left on its line."""
    rel = rank_file(job, r)
    n, epochs = job.epoch_len, (job.steps + job.epoch_len - 1) // job.epoch_len
    emit(rel, clock(T0 + 30), "%s - INFO - `Trainer.fit` starting\n" % stamp_py(clock(T0 + 30)))
    for s in steps_of(job, r):
        e, b = (s - 1) // n, (s - 1) % n + 1
        total = n  # the train dataloader's length (a max_steps run stops within its last epoch)
        start = wall[e * n]
        rate = 1.0 / times[s - 1]
        bar = "\u2501" * int(30 * b / total) + ("\u2578" if b < total else "")
        text = "Epoch %d/%d %-31s %d/%d %s \u2022 %s %.2fit/s v_num: 0 train_loss: %.3f" % (
            e, epochs - 1, bar, b, total, hms(wall[s] - start), hms((total - b) / rate), rate, 2.3 - 0.001 * s)
        emit(rel, clock(wall[s]), "\r" + text + ("\n" if b == total else ""))


def rich_bar(e, epochs, b, total, elapsed, rate, loss):
    bar = "\u2501" * int(30 * b / total) + ("\u2578" if b < total else "")
    return "Epoch %d/%d %-31s %d/%d %s \u2022 %s %.2fit/s v_num: 0 train_loss: %.3f" % (
        e, epochs - 1, bar, b, total, hms(elapsed), hms((total - b) / rate), rate, loss)


def w_lightning_rich_file(job, r, h, times, wall, clock, emit):
    """RichProgressBar(leave=True) with stdout a file: Rich's Live draws
    nothing while it runs when the console is not a terminal and prints its
    final render once, when stopped; Lightning stops it at each epoch's
    start (leave) and at the end of fit. So each finished epoch's last bar,
    and the last epoch's at a clean end: a process that hangs leaves the
    bar of the last epoch it finished, not the batch it stopped at."""
    rel = rank_file(job, r)
    n, epochs = job.epoch_len, (job.steps + job.epoch_len - 1) // job.epoch_len
    emit(rel, clock(T0 + 30), "%s - INFO - `Trainer.fit` starting\n" % stamp_py(clock(T0 + 30)))
    last = job.last_step(r)
    ends = [s for s in range(n, last + 1, n)] + ([last] if job.scenario != "hang" and last % n else [])
    for s in ends:
        e, b = (s - 1) // n, (s - 1) % n + 1
        rate = b / (wall[s] - wall[e * n])
        emit(rel, clock(wall[s]), rich_bar(e, epochs, b, n, wall[s] - wall[e * n], rate, 2.3 - 0.001 * s) + "\n")


def w_composer_epoch(job, r, h, times, wall, clock, emit):
    """Composer's console logger under an epoch max_duration, on every rank
    and with no stamp: `[epoch=E][batch=B/N]:` (E from 1, B from 1 to N), or
    `[epoch=E][batch=B]:` when the dataloader has no length (odd seeds)."""
    rel = rank_file(job, r)
    n = job.epoch_len
    for s in steps_of(job, r):
        e, b = (s - 1) // n + 1, (s - 1) % n + 1
        total = "/%d" % n if job.seed % 2 == 0 else ""
        emit(rel, clock(wall[s]), "[epoch=%d][batch=%d%s]:" % (e, b, total))
        emit(rel, clock(wall[s]), "\t Train time/batch: %d" % (s - 1))
        emit(rel, clock(wall[s]), "\t Train loss/train/total: %.4f" % (2.9 - 0.002 * s))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("format", choices=FORMATS)
    ap.add_argument("scenario", choices=SCENARIOS)
    ap.add_argument("ranks", type=int)
    ap.add_argument("--skew", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--steps", type=int, default=None, help="run length (default: 60-90 steps)")
    ap.add_argument("--chatter", type=int, default=0, help="ordinary lines per step per rank")
    a = ap.parse_args()
    print(json.dumps(write_archive(a.out, a.format, a.scenario, a.ranks, a.skew, a.seed, a.steps, a.chatter)))


if __name__ == "__main__":
    main()
