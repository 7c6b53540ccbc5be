#!/usr/bin/env python3
"""Writes archives of one training job that ran several times, for the
attempts tests: how faultline tells the attempts apart, orders them, names
each one's failure, and what recurs from one to the next.

    gen_attempts.py OUT_DIR --case xid_same_host [--seed 1]

Cases (4 ranks on 2 hosts unless said; steps logged in torchtitan's format):
  xid_same_host      OUT/attempt_1/, OUT/attempt_2/: node02's GPU falls off
                     the bus (Xid 79 in its kern.log) in both attempts; the
                     other ranks' NCCL errors follow
  oom_same_step      OUT/restart-0/, OUT/restart-1/: rank 3 runs out of GPU
                     memory at the same step again after resuming from an
                     earlier checkpoint
  resume_checkpoint  OUT/retry_1/, OUT/retry_2/: the first attempt saves a
                     checkpoint and is preempted; the second cannot load
                     the checkpoint the first saved
  transient_nccl     OUT/run_attempt1/, OUT/run_attempt2/: an InfiniBand
                     completion error ends the first attempt; the second
                     runs to the end
  elastic            OUT/node01/torchrun.log, one log: torchelastic restarts
                     the worker group twice after rank 1 runs out of memory
                     at the same step each time (three attempts)
  elastic_untimed    OUT/torchrun.out, one log without a timestamp (an older
                     torchrun's default logging format): two restarts, rank 1
                     out of memory each time at step 300
  slurm_requeue      OUT/slurm-88231.out (appended across the requeue),
                     OUT/slurmctld.log (the requeue lines, and another job's),
                     OUT/node02/kern.log, OUT/node03/kern.log: node02's GPU
                     falls off the bus, slurmctld requeues the job, the
                     second run fails the same way on node03
  sacct_requeue      as slurm_requeue, with `sacct --duplicates` output
                     (OUT/sacct.txt: the first run REQUEUED, the second
                     RUNNING) in place of slurmctld's log

OUT.truth.json (beside the archive): the attempts in order with each one's
primary rule and host, and per attempt what recurs.

The messages are the wording of the public sources the rules cite (PyTorch,
torchelastic, NCCL, the NVIDIA driver, slurmctld), written here for these
runs. Deterministic for (case, seed). Standard library only.
"""
import argparse
import datetime as dt
import json
import os
import random

BASE = dt.datetime(2026, 11, 2, 9, 0, 0, tzinfo=dt.timezone.utc)
HOSTS = {0: "node01", 1: "node01", 2: "node02", 3: "node02"}
BUS = {0: "18", 1: "2a", 2: "3b", 3: "5d"}
CASES = ["xid_same_host", "oom_same_step", "resume_checkpoint", "transient_nccl", "elastic", "elastic_untimed",
         "slurm_requeue", "sacct_requeue"]


def ts_titan(t):
    return t.strftime("%Y-%m-%d %H:%M:%S,") + "%03d" % (t.microsecond // 1000)


def ts_syslog(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.%f") + "+00:00"


def ts_slurm(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03d" % (t.microsecond // 1000)


class Archive:
    """Lines per file, sorted by time when written."""

    def __init__(self, out, seed):
        self.out = out
        self.files = {}
        self.rng = random.Random(seed)

    def add(self, rel, t, line):
        self.files.setdefault(rel, []).append((t, len(self.files.get(rel, [])), line))

    def write(self):
        for rel, lines in self.files.items():
            path = os.path.join(self.out, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                for _, _, line in sorted(lines):
                    f.write(line + "\n")

    # What each rank logs.
    def step(self, rel, r, t, step):
        loss = 8.0 / (1 + step / 400.0) + self.rng.random() * 0.05
        self.add(rel, t, "[rank%d]:[titan] %s - root - INFO - step: %d  loss: %7.4f  memory: 61.20GiB(77.32%%)  "
                 "tps: %s  tflops: 366.06  mfu: 37.01%%" % (r, ts_titan(t), step, loss,
                                                          "{:,}".format(6300 + self.rng.randrange(40))))

    def run_steps(self, rel_of, ranks, t0, first, last, every=10, step_s=2.0):
        """Every rank logs steps first..last; returns the time after the last."""
        t = t0
        for s in range(first, last + 1, every):
            for r in ranks:
                self.step(rel_of(r), r, t + dt.timedelta(milliseconds=7 * r), s)
            t += dt.timedelta(seconds=step_s * every)
        return t

    def xid79(self, rel, host, bus, t):
        self.add(rel, t, "%s %s kernel: NVRM: Xid (PCI:0000:%s:00): 79, pid='<unknown>', name=<unknown>, "
                 "GPU has fallen off the bus." % (ts_syslog(t), host, bus))
        self.add(rel, t + dt.timedelta(microseconds=40), "%s %s kernel: NVRM: GPU 0000:%s:00.0: GPU has fallen "
                 "off the bus." % (ts_syslog(t + dt.timedelta(microseconds=40)), host, bus))

    def nccl_peer_errors(self, rel_of, ranks, t):
        for r in ranks:
            self.add(rel_of(r), t, "[rank%d]:[E%s ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID 0(default_pg) Rank %d] "
                     "Process group watchdog thread terminated with exception: NCCL error: remote process exited or "
                     "there was a network error, NCCL version 2.21.5" % (r, t.strftime("%m%d %H:%M:%S.%f"), r))

    def oom(self, rel, r, t):
        self.add(rel, t, "[rank%d]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU %d "
                 "has a total capacity of 79.15 GiB of which 1.23 GiB is free. Including non-PyTorch memory, this "
                 "process has 77.90 GiB memory in use." % (r, r % 8))


def rank_file(prefix):
    return lambda r: "%s/%s/train.log" % (prefix, HOSTS[r])


def case_xid_same_host(a):
    attempts = []
    t = BASE
    for n in (1, 2):
        d = "attempt_%d" % n
        end = a.run_steps(rank_file(d), range(4), t, 0 if n == 1 else 1000, 1290 if n == 1 else 1180)
        a.xid79("%s/node02/kern.log" % d, "node02", BUS[2], end + dt.timedelta(seconds=3))
        a.nccl_peer_errors(rank_file(d), [0, 1, 3], end + dt.timedelta(seconds=95))
        attempts.append({"label": d, "rule": "xid-79-fallen-off-bus", "host": "node02"})
        t = end + dt.timedelta(hours=2)
    recur = [{}, {"attempts": [0], "same_host": 1}]
    return attempts, recur


def case_oom_same_step(a):
    attempts = []
    t = BASE
    for n, first in ((0, 0), (1, 1000)):
        d = "restart-%d" % n
        end = a.run_steps(rank_file(d), range(4), t, first, 1200)
        a.oom(rank_file(d)(3), 3, end)
        attempts.append({"label": d, "rule": "cuda-oom", "host": "node02", "rank": 3, "step": 1200})
        t = end + dt.timedelta(minutes=20)
    return attempts, [{}, {"attempts": [0], "same_host": 1, "same_step": 1}]


def case_resume_checkpoint(a):
    d1, d2 = "retry_1", "retry_2"
    end = a.run_steps(rank_file(d1), range(4), BASE, 0, 1500)
    ckpt = "/lustre/out/run7/checkpoint-1500"
    a.add(rank_file(d1)(0), end, "[INFO|trainer.py:3984] %s >> Saving model checkpoint to %s" % (ts_titan(end), ckpt))
    stop = end + dt.timedelta(minutes=3)
    a.add("%s/slurm-88231.out" % d1, stop, "slurmstepd: error: *** JOB 88231 ON node01 CANCELLED AT %s DUE TO "
          "PREEMPTION ***" % stop.strftime("%Y-%m-%dT%H:%M:%S"))
    t2 = stop + dt.timedelta(minutes=30)
    a.add(rank_file(d2)(0), t2, "[INFO|trainer.py:2377] %s >> Loading model from %s." % (ts_titan(t2), ckpt))
    a.add(rank_file(d2)(0), t2 + dt.timedelta(seconds=1),
          "[rank0]: ValueError: Can't find a valid checkpoint at %s" % ckpt)
    attempts = [{"label": d1, "rule": "preemption"}, {"label": d2, "rule": "checkpoint-resume-failure"}]
    return attempts, [{}, {"resume_failed_on_previous_checkpoint": True}]


def case_transient_nccl(a):
    d1, d2 = "run_attempt1", "run_attempt2"
    end = a.run_steps(rank_file(d1), range(4), BASE, 0, 800)
    e = end + dt.timedelta(seconds=1)
    a.add(rank_file(d1)(2), e, "node02:41822:41901 [2] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion "
          "from peer 10.0.0.11<48211> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid "
          "::ffff:10.0.0.12 remoteGids::ffff:10.0.0.11")
    a.nccl_peer_errors(rank_file(d1), [0, 1, 3], e + dt.timedelta(seconds=40))
    end2 = a.run_steps(rank_file(d2), range(4), end + dt.timedelta(hours=1), 800, 2000)
    a.add(rank_file(d2)(0), end2, "[rank0]:[titan] %s - root - INFO - Training completed" % ts_titan(end2))
    attempts = [{"label": d1, "rule": "ib-retry-exceeded", "host": "node02"}, {"label": d2, "rule": None}]
    return attempts, [{}, {}]


def elastic_line(t, text):
    return "[%s] torch.distributed.elastic.agent.server.api: [INFO] %s" % (ts_titan(t), text)


def case_elastic(a):
    log = "node01/torchrun.log"
    t = BASE
    attempts = []
    for n in range(3):
        end = a.run_steps(lambda r: log, [0, 1], t, 0 if n == 0 else 200, 300)
        a.oom(log, 1, end)
        attempts.append({"label": "first run" if n == 0 else "restart %d" % n, "rule": "cuda-oom", "rank": 1,
                         "step": 300})
        failed = end + dt.timedelta(seconds=4)
        a.add(log, failed, "[%s] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) "
              "local_rank: 1 (pid: %d) of binary: /usr/bin/python3" % (ts_titan(failed), 4100 + n))
        if n < 2:
            r = failed + dt.timedelta(seconds=1)
            a.add(log, r, elastic_line(r, "[default] Worker group FAILED. %d/3 attempts left; will restart worker "
                                          "group" % (3 - n)))
        t = failed + dt.timedelta(seconds=30)
    recur = [{}, {"attempts": [0], "same_host": 1, "same_step": 1},
             {"attempts": [0, 1], "same_host": 2, "same_step": 2}]
    return attempts, recur


def case_elastic_untimed(a):
    log = "torchrun.out"
    t = BASE
    attempts = []
    for n in range(3):
        for step in range(200 if n else 0, 310, 10):
            for r in (0, 1):
                a.add(log, t, "[rank%d]: [train] rank=%d step=%d loss=%.4f step_time_ms=812.3" % (r, r, step, 2.1))
                t += dt.timedelta(seconds=1)
        a.oom(log, 1, t)
        attempts.append({"label": "first run" if n == 0 else "restart %d" % n, "rule": "cuda-oom", "rank": 1})
        t += dt.timedelta(seconds=1)
        a.add(log, t, "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process %d closing signal "
              "SIGTERM" % (4100 + n))
        if n < 2:
            t += dt.timedelta(seconds=1)
            a.add(log, t, "INFO:torch.distributed.elastic.agent.server.api:[default] Worker group FAILED. %d/3 "
                          "attempts left; will restart worker group" % (3 - n))
        t += dt.timedelta(seconds=1)
    # No times, but line order: each run's last progress line gives its
    # step (300), so the OOM recurs at the same step.
    recur = [{}, {"attempts": [0], "same_step": 1}, {"attempts": [0, 1], "same_step": 2}]
    return attempts, recur


def case_slurm_requeue(a, sacct=False):
    out = "slurm-88231.out"
    rel = lambda r: out
    hosts = {0: "node01", 1: "node02"}
    t = BASE
    attempts = []
    for n, bad in enumerate(("node02", "node03")):
        end = a.run_steps(rel, [0, 1], t, 0 if n == 0 else 500, 600 if n == 0 else 700)
        a.xid79("%s/kern.log" % bad, bad, "3b", end + dt.timedelta(seconds=2))
        a.nccl_peer_errors(rel, [0], end + dt.timedelta(seconds=80))
        attempts.append({"label": "first run" if n == 0 else "requeue 1", "rule": "xid-79-fallen-off-bus",
                         "host": bad})
        q = end + dt.timedelta(seconds=120)
        if n == 0 and not sacct:
            a.add("slurmctld.log", q, "[%s] _job_requeue_op: requeue JobId=88231 due to node failure" % ts_slurm(q))
            q2 = q + dt.timedelta(milliseconds=4)
            a.add("slurmctld.log", q2, "[%s] Requeuing JobId=88231" % ts_slurm(q2))
        if sacct:
            iso = lambda x: x.strftime("%Y-%m-%dT%H:%M:%S")
            state, stop = ("REQUEUED", iso(q)) if n == 0 else ("RUNNING", "Unknown")
            a.add("sacct.txt", t, "%-12s %10s %6s %10s %8s %19s %19s %s" % (
                "88231", "pretrain", "h100", state, "0:0", iso(t), stop, "node[01-02]" if n == 0 else "node[01,03]"))
        hosts[1] = "node03"
        t = end + dt.timedelta(minutes=15)
    if not sacct:
        other = BASE + dt.timedelta(minutes=5)
        a.add("slurmctld.log", other, "[%s] Requeuing JobId=90417" % ts_slurm(other))
    return attempts, [{}, {"attempts": [0], "same_host": 0}]


def case_sacct_requeue(a):
    return case_slurm_requeue(a, sacct=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--case", choices=CASES, required=True)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    a = Archive(args.out, args.seed)
    attempts, recur = globals()["case_" + args.case](a)
    a.write()
    with open(args.out.rstrip("/") + ".truth.json", "w") as f:
        json.dump({"case": args.case, "attempts": attempts, "recurrence": recur}, f, indent=1)


if __name__ == "__main__":
    main()
