#!/usr/bin/env python3
"""Job-log simulator for the correlator: writes what a multi-host GPU training
job leaves behind, with one injected fault, its collateral and the ordering
traps real incidents have, plus a ground-truth file.

    simulate.py OUT_DIR --kind xid79 --seed 7 [--hosts 4] [--no-skew]
    simulate.py OUT_DIR --kind silent --hosts 128 --desync joined_not_finished
    simulate.py OUT_DIR --kind silent --hosts 32 --flight-recorder
    simulate.py --list-kinds

Layout written (H hosts x 8 ranks):

    OUT_DIR/nodeNNN/rank-K.log     torchrun "[rankK]:" prefixed worker output
    OUT_DIR/nodeNNN/kern.log       syslog-headed kernel log, monotonic stamps
    OUT_DIR/nodeNNN/torchrun.log   the elastic agent of that host
    OUT_DIR/nodeNNN/syslog         on some hosts: the kernel lines again (duplicates)
    OUT_DIR/nodeNNN/flight_recorder/nccl_trace_rank_R   with --flight-recorder:
                                   rank R's Flight Recorder dump (tests/flightrec/make_dumps.py)
    OUT_DIR/truth.json             what happened:
        kind, seed, hosts, ranks, clock_skew_s {host: s}, torch_format,
        nccl_timestamps (NCCL lines carry whole-second stamps), timeout_ms,
        fault_time, victim_pid,
        initiating: null for a benign job, else {rules: acceptable rule ids,
            rank (null when the logs can only name a host: the IB peer),
            host, inferred (no initiating line exists)},
        stale: [{source, lines (1-based), rule, where}] the replayed block

Realism the correlator must see through, in every scenario:
  * host clock skew: each host's clock is off by up to +-90 s, applied to every
    timestamp that host writes (syslog, glog, Megatron, Python logging);
  * a stale replayed block: an old Xid/ECC block dated weeks before the job,
    pasted at the head or the middle of a kern.log, or printed into a rank log
    by a prolog health check (dmesg -T);
  * benign noise: NCCL INFO chatter, Python INFO lines, benign kernel lines,
    fp16 loss-scale overflow messages, destroy_process_group warnings;
  * lines without timestamps (old c10 watchdog format, Python exceptions,
    NCCL INFO) that inherit the previous line's time;
  * torchrun's SIGTERM lines printed before the "failed (exitcode: ...)" line.

Scenario kinds (one injected fault each): see KINDS. Every message format used
here is one the rules under rulesets/ match (their examples), since the
simulator tests the correlator, not the rules. A kind whose rules are missing
from the ruleset in use (REQUIRED_RULES vs `faultline rules list --json`) is to
be skipped by the caller.

Deterministic: the same (kind, seed, hosts) writes byte-identical files.
Standard library only.
"""
import argparse
import datetime as dt
import json
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "flightrec"))
import make_dumps  # noqa: E402  (the Flight Recorder dump writer of tests/flightrec)

GPUS_PER_HOST = 8
# DGX H100 GPU PCI buses (NCCL busId "18000" == PCI 0000:18:00.0).
BUSES = ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"]

KINDS = ["xid79", "ecc", "host_oom", "cuda_oom", "ib_error", "silent", "straggler", "benign"]

# c10d desync reports a silent hang may carry (collective-desync-stuck's
# desync_never_joined, desync_joined_not_finished, collective_mismatch).
DESYNC_FORMS = ["never_joined", "joined_not_finished", "mismatch"]

# Rules a kind needs in the ruleset; missing -> skip the kind.
REQUIRED_RULES = {
    "xid79": ["xid-79-fallen-off-bus", "nccl-watchdog-timeout", "nccl-init"],
    "ecc": ["xid-ecc-uncorrectable", "nccl-watchdog-timeout", "nccl-init"],
    "host_oom": ["host-oom-kill", "torch-child-failed", "nccl-init"],
    "cuda_oom": ["cuda-oom", "nccl-watchdog-timeout", "nccl-init"],
    "ib_error": ["ib-retry-exceeded", "nccl-init"],
    "silent": ["nccl-watchdog-timeout", "nccl-init"],
    "straggler": ["straggler-slow-rank", "training-progress", "nccl-init"],
    "benign": ["training-completed", "nccl-watchdog-after-completion", "nccl-init"],
}

# Rules the stale block's lines belong to.
STALE_RULES = {"79": "xid-79-fallen-off-bus", "48": "xid-ecc-uncorrectable",
               "94": "xid-ecc-uncorrectable", "95": "xid-ecc-uncorrectable"}


# ---------------------------------------------------------------- time formats

def _utc(t):
    return dt.datetime.fromtimestamp(t, tz=dt.timezone.utc)


def ts_megatron(t):  # [2026-11-02 03:12:05]
    return _utc(t).strftime("[%Y-%m-%d %H:%M:%S]")


def ts_py(t):  # 2026-11-02 03:12:05,123
    d = _utc(t)
    return d.strftime("%Y-%m-%d %H:%M:%S") + ",%03d" % (d.microsecond // 1000)


def ts_glog(t, sev, pid, src):  # E1102 03:42:05.125000 41203 file.cpp:616]
    d = _utc(t)
    return "%s%s %s.%06d %d %s]" % (sev, d.strftime("%m%d"), d.strftime("%H:%M:%S"), d.microsecond, pid, src)


def ts_c10(t, sev, src):  # [E1102 03:42:05.125000123 ProcessGroupNCCL.cpp:632]
    # c10's own logger prints the month unpadded ("E311"); the scanner's
    # timeparse does not read that form yet (reported), so months are padded
    # here: this is PyTorch built with glog, which pads.
    d = _utc(t)
    return "[%s%s %s.%06d%03d %s]" % (sev, d.strftime("%m%d"), d.strftime("%H:%M:%S"), d.microsecond,
                                       (d.microsecond * 7) % 1000, src)


def ts_syslog(t):  # Nov  2 03:12:05
    d = _utc(t)
    return "%s %2d %s" % (d.strftime("%b"), d.day, d.strftime("%H:%M:%S"))


def ts_dmesg_T(t):  # [Mon Nov  2 03:12:05 2026]
    d = _utc(t)
    return "[%s %s %2d %s %d]" % (d.strftime("%a"), d.strftime("%b"), d.day, d.strftime("%H:%M:%S"), d.year)


def ts_elastic(t):  # 2026-11-02_03:12:05
    return _utc(t).strftime("%Y-%m-%d_%H:%M:%S")


def iso(t):
    return _utc(t).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# ---------------------------------------------------------------- the job

class Job:
    """Topology, clocks and the shared timeline of one simulated job."""

    def __init__(self, rng, hosts, skew=True):
        self.rng = rng
        self.H = hosts
        self.N = hosts * GPUS_PER_HOST
        base = rng.randrange(0, 900 - hosts)
        self.hosts = ["node%03d" % (base + i) for i in range(hosts)]
        net = rng.randrange(1, 250)
        self.ip = {h: "10.%d.%d.%d" % (net, i // 200, 10 + i % 200) for i, h in enumerate(self.hosts)}
        self.skew = {h: round(rng.uniform(-90, 90), 3) for h in self.hosts}
        if not skew:  # drawn all the same, so that the rest of the job stays as it was
            self.skew = {h: 0.0 for h in self.hosts}
        # Jobs start between February and November so "weeks earlier" stays
        # in the same year for most, and crosses New Year for a few.
        start = dt.datetime(2026, rng.randrange(1, 12), rng.randrange(1, 28), rng.randrange(0, 24),
                            rng.randrange(0, 60), rng.randrange(0, 60), tzinfo=dt.timezone.utc)
        self.t0 = start.timestamp() + rng.random()
        self.uptime_days = {h: rng.uniform(1.5, 40) for h in self.hosts}
        self.boot = {h: self.t0 - self.uptime_days[h] * 86400 for h in self.hosts}
        self.pid = {}
        for h in self.hosts:
            p = rng.randrange(12000, 90000)
            for lr in range(GPUS_PER_HOST):
                p += rng.randrange(1, 5)  # distinct, increasing, as a launcher forks them
                self.pid[self.rank(h, lr)] = p
        self.agent_pid = {h: rng.randrange(3000, 11000) for h in self.hosts}
        self.comm_ptr = {r: "0x%x" % rng.randrange(0x55d000000000, 0x55dfffffffff) for r in range(self.N)}
        self.comm_id = "0x%016x" % rng.getrandbits(64)
        self.dp_comm_id = ["0x%016x" % rng.getrandbits(64) for _ in range(GPUS_PER_HOST)]
        self.timeout_ms = rng.choice([600000, 1200000, 1800000])
        self.step_ms = rng.uniform(700, 2600)
        self.log_interval = rng.choice([5, 10, 20])
        self.period = self.step_ms * self.log_interval / 1000.0
        self.nccl_version = rng.choice(["2.18.6", "2.19.3", "2.20.5", "2.21.5"])
        # Watchdog message format by PyTorch version.
        self.torch_fmt = rng.choice(["legacy", "v2.1", "v2.3", "v2.5", "blocking"])
        self.nccl_ts = rng.random() < 0.3  # NCCL_DEBUG_TIMESTAMP-style "[date] host:pid:tid"
        self.binary = rng.choice(["/usr/bin/python3", "/opt/conda/bin/python3.10"])
        self.script = rng.choice(["pretrain_gpt.py", "pretrain_llama.py", "train.py"])

    def rank(self, host, local_rank):
        return self.hosts.index(host) * GPUS_PER_HOST + local_rank

    def host_of(self, rank):
        return self.hosts[rank // GPUS_PER_HOST]

    def local(self, rank):
        return rank % GPUS_PER_HOST

    def clock(self, host, t):
        """What the host's clock reads at true time t."""
        return t + self.skew[host]

    def mono(self, host, t):
        return t - self.boot[host]


class Log:
    """Lines of one file, each at a true time; sorted stably on write."""

    def __init__(self):
        self.lines = []  # (true_t, seq, text)

    def add(self, t, text):
        self.lines.append((t, len(self.lines), text))

    def render(self):
        return [text for _, _, text in sorted(self.lines)]


class Scenario:
    def __init__(self, kind, seed, hosts=None, subcomms=False, desync=None, flight_recorder=False, skew=True):
        self.kind = kind
        self.subcomms = subcomms
        self.desync = desync  # silent: a c10d desync report of this form (DESYNC_FORMS)
        # silent: every rank's Flight Recorder dump; "mismatch": the victim
        # ran another collective where the others hang, rather than none
        self.flight_recorder = flight_recorder
        self.dumps = {}  # relpath -> bytes
        self.seed = seed
        self.rng = random.Random("faultline-sim:%s:%d" % (kind, seed))
        rng = self.rng
        if hosts is None:
            hosts = rng.choice([2, 2, 3, 4, 4, 5, 6, 8, 8, 12, 16])
        self.job = Job(rng, hosts, skew)
        self.logs = {}  # relpath -> Log
        self.truth = {"kind": kind, "seed": seed, "hosts": self.job.hosts, "ranks": self.job.N,
                      "clock_skew_s": self.job.skew, "torch_format": self.job.torch_fmt,
                      "timeout_ms": self.job.timeout_ms, "nccl_timestamps": self.job.nccl_ts,
                      "initiating": None, "stale": []}
        self.stopped = {}  # rank -> true time its progress stops
        self.exited = {}   # rank -> true time the process ends

    # ---- files
    def log(self, rel):
        if rel not in self.logs:
            self.logs[rel] = Log()
        return self.logs[rel]

    def rank_log(self, r):
        return self.log("%s/rank-%d.log" % (self.job.host_of(r), r))

    def kern(self, h):
        return self.log("%s/kern.log" % h)

    def agent(self, h):
        return self.log("%s/torchrun.log" % h)

    # ---- line helpers (host clock applied here)
    def rk(self, r, t, body):
        self.rank_log(r).add(t, "[rank%d]:%s" % (r, body))

    def nccl_prefix(self, r, t, tid_off=0):
        j = self.job
        h = j.host_of(r)
        pid = j.pid[r]
        p = "%s:%d:%d [%d]" % (h, pid, pid + tid_off, j.local(r))
        if j.nccl_ts:
            p = ts_megatron(j.clock(h, t)) + " " + p
        return p

    def kline(self, h, t, msg):
        j = self.job
        self.kern(h).add(t, "%s %s kernel: [%12.6f] %s" % (ts_syslog(j.clock(h, t)), h, j.mono(h, t), msg))

    def glog(self, r, t, sev, src, msg, pid=True):
        j = self.job
        h = j.host_of(r)
        if pid:
            stamp = "[" + ts_glog(j.clock(h, t), sev, j.pid[r], src)
        else:
            stamp = ts_c10(j.clock(h, t), sev, src)
        self.rk(r, t, "%s %s" % (stamp, msg))

    def agent_glog(self, h, t, sev, src, msg):
        j = self.job
        self.agent(h).add(t, "%s %s" % (ts_glog(j.clock(h, t), sev, j.agent_pid[h], src), msg))

    # ---------------------------------------------------------------- phases
    def startup(self):
        j, rng = self.job, self.rng
        for h in j.hosts:
            a = j.t0 - rng.uniform(2, 6)
            self.agent_glog(h, a, "I", "torch/distributed/launcher/api.py:194",
                            "Starting elastic_operator with launch configs:")
            self.agent(h).add(a + 0.0001, "%s   entrypoint       : %s" % (
                ts_glog(j.clock(h, a), "I", j.agent_pid[h], "torch/distributed/launcher/api.py:194"), j.script))
            self.agent(h).add(a + 0.0002, "%s   nproc_per_node   : 8" % (
                ts_glog(j.clock(h, a), "I", j.agent_pid[h], "torch/distributed/launcher/api.py:194")))
            self.agent_glog(h, a + rng.uniform(1, 2), "I", "torch/distributed/elastic/agent/server/api.py:525",
                            "[default] Starting worker group")
        # Host kernel logs: boot-time-ish benign lines before the job.
        for h in j.hosts:
            t = j.t0 - rng.uniform(600, 3000)
            self.kline(h, t, "IPv6: ADDRCONF(NETDEV_CHANGE): ib0: link becomes ready")
            self.kline(h, t + rng.uniform(5, 60), "nvidia-uvm: Loaded the UVM driver, major device number 506.")
            self.kline(h, t + rng.uniform(70, 200),
                       "EXT4-fs (nvme0n1p1): re-mounted. Opts: errors=remount-ro. Quota mode: none.")
            for lr in range(GPUS_PER_HOST):
                self.kline(h, j.t0 - rng.uniform(0.5, 1.5) + lr * 0.01,
                           "NVRM: GPU at PCI:0000:%s:00: GPU-%08x-%04x-%04x-%04x-%012x" % (
                               BUSES[lr], rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(16),
                               rng.getrandbits(16), rng.getrandbits(48)))
        # Worker start and NCCL init. All ranks receive the unique id through
        # the store at the same moment (the sync point), then log Init.
        t_bcast = j.t0 + rng.uniform(8, 20)
        t_split = t_bcast + rng.uniform(5, 12)
        for r in range(j.N):
            h = j.host_of(r)
            lr = j.local(r)
            ts = j.t0 + rng.uniform(0.1, 1.5)
            self.rk(r, ts, "%s [INFO] [train.py:88:main] Starting %s: world_size=%d rank=%d local_rank=%d" % (
                "[" + ts_py(j.clock(h, ts)) + "]", j.script, j.N, r, lr))
            self.rk(r, ts + 0.01, "using world size: %d, data-parallel size: %d, tensor-model-parallel size: 8, "
                    "pipeline-model-parallel size: 1" % (j.N, j.H))
            tp = ts + rng.uniform(2, 4)
            self.glog(r, tp, "I", "ProcessGroupNCCL.cpp:913",
                      "[PG ID 0 PG GUID 0(default_pg) Rank %d] ProcessGroupNCCL initialization options: size: %d, "
                      "global rank: %d, TIMEOUT(ms): %d, USE_HIGH_PRIORITY_STREAM: 0, SPLIT_FROM: 0, SPLIT_COLOR: 0, "
                      "PG Name: 0" % (r, j.N, r, j.timeout_ms))
            self.rk(r, tp + 0.001, "%s NCCL INFO Bootstrap : Using ib0:%s<0>" % (self.nccl_prefix(r, tp), j.ip[h]))
            self.rk(r, tp + 0.002, "%s NCCL INFO NCCL version %s+cuda12.4" % (self.nccl_prefix(r, tp), j.nccl_version))
            tb = t_bcast + rng.uniform(0, 0.05)
            self.glog(r, tb, "I", "ProcessGroupNCCL.cpp:2012",
                      "[PG ID 0 PG GUID 0(default_pg) Rank %d] ProcessGroupNCCL broadcast unique ID through store "
                      "took %.2f ms" % (r, rng.uniform(0.02, 0.4)))
            self.rk(r, tb + 0.001, "%s NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/IB [2]mlx5_4:1/IB "
                    "[3]mlx5_5:1/IB [RO]; OOB ib0:%s<0>" % (self.nccl_prefix(r, tb), j.ip[h]))
            self.rk(r, tb + 0.002, "%s NCCL INFO comm %s rank %d nranks %d cudaDev %d nvmlDev %d busId %s000 "
                    "commId %s - Init START" % (self.nccl_prefix(r, tb), j.comm_ptr[r], r, j.N, lr, lr, BUSES[lr],
                                                 j.comm_id))
            for c in range(rng.randrange(2, 5)):
                self.rk(r, tb + 0.003 + c * 1e-4, "%s NCCL INFO Channel %02d/32 :    %d   %d" % (
                    self.nccl_prefix(r, tb, 40), c, r, (r + 1) % j.N))
            self.rk(r, tb + 0.004, "%s NCCL INFO Connected all rings" % self.nccl_prefix(r, tb, 40))
            # NCCL 2.21+ form. (2.19-2.20 print "commId 0x.. localSize 8 used N
            # bytes on core C - Init COMPLETE", which nccl-init does not match.)
            self.rk(r, tb + 0.005, "%s NCCL INFO ncclCommInitRank comm %s rank %d nranks %d cudaDev %d nvmlDev %d "
                    "busId %s000 commId %s - Init COMPLETE" % (
                        self.nccl_prefix(r, tb), j.comm_ptr[r], r, j.N, lr, lr, BUSES[lr], j.comm_id))
            self.rk(r, tb + 0.006, "%s NCCL INFO Init timings - ncclCommInitRank: rank %d nranks %d total %.2f "
                    "(kernels %.2f, alloc 0.01, bootstrap %.2f, allgathers 0.01, topo 0.08, graphs 0.01, "
                    "connections 0.05, rest 0.00)" % (self.nccl_prefix(r, tb), r, j.N, rng.uniform(0.4, 2),
                                                     rng.uniform(0.1, 0.3), rng.uniform(0.05, 0.5)))
            if not self.subcomms:
                continue
            # The data-parallel group of this local rank spans every host. Its
            # init lines give the rank in that communicator, not the global
            # rank: nccl-init captures it as `rank` (a rule problem), so the
            # accuracy suite leaves these out; --subcomms writes them.
            tsb = t_split + rng.uniform(0, 0.05)
            self.glog(r, tsb, "I", "ProcessGroupNCCL.cpp:2012",
                      "[PG ID 2 PG GUID 5(DATA_PARALLEL_GROUP) Rank %d] ProcessGroupNCCL broadcast unique ID through "
                      "store took %.2f ms" % (r // GPUS_PER_HOST, rng.uniform(0.02, 0.4)))
            self.rk(r, tsb + 0.002, "%s NCCL INFO ncclCommSplit comm 0x%x rank %d nranks %d cudaDev %d nvmlDev %d "
                    "busId %s000 commId %s - Init COMPLETE" % (
                        self.nccl_prefix(r, tsb), rng.randrange(0x55e000000000, 0x55efffffffff), r // GPUS_PER_HOST,
                        j.H, lr, lr, BUSES[lr], j.dp_comm_id[lr]))
        self.t_train = t_split + rng.uniform(20, 60)

    def training(self, until, slow=None, end_of_training=False):
        """Iteration lines of every rank until its stop time (self.stopped) or
        `until`. slow: {rank: factor} on the elapsed time the rank reports."""
        j, rng = self.job, self.rng
        slow = slow or {}
        k = 0
        loss = rng.uniform(3.2, 6.0)
        overflow_until = self.t_train + rng.uniform(60, 200)
        scale = 65536.0
        fp16 = rng.random() < 0.5
        self.last_iter = {}
        while True:
            t = self.t_train + (k + 1) * j.period
            if t > until:
                break
            k += 1
            it = k * j.log_interval
            loss = loss * 0.9993 + rng.uniform(-0.004, 0.004)
            gn = rng.uniform(0.6, 0.9)
            for r in range(j.N):
                stop = self.stopped.get(r)
                if stop is not None and t > stop:
                    continue
                h = j.host_of(r)
                tr = t + rng.uniform(0, 0.25)
                el = j.step_ms * rng.uniform(0.97, 1.03) * slow.get(r, 1.0)
                self.rk(r, tr, "%s iteration %8d/  500000 | consumed samples: %12d | elapsed time per iteration "
                        "(ms): %.1f | learning rate: 2.998E-04 | global batch size:  1024 | lm loss: %.6E | "
                        "loss scale: %.1f | grad norm: %.3f | number of skipped iterations:   0 | number of nan "
                        "iterations:   0 |" % (ts_megatron(j.clock(h, tr)), it, it * 1024, el, loss,
                                               scale if fp16 else 1.0, gn))
                self.last_iter[r] = (tr, it)
                if fp16 and t < overflow_until and rng.random() < 0.15:
                    to = tr + rng.uniform(0.05, 0.5)
                    self.rk(r, to, "[%s] [INFO] [loss_scaler.py:190:update_scale] [deepspeed] OVERFLOW! Rank %d "
                            "Skipping step. Attempted loss scale: %d, reducing to %d" % (
                                ts_py(j.clock(h, to)), r, int(scale), int(scale // 2)))
                if rng.random() < 0.01:
                    to = tr + rng.uniform(0.05, 0.5)
                    self.rk(r, to, "[%s] [INFO] [data_samplers.py:112:__iter__] rank %d consumed %d samples from "
                            "shard %d" % (ts_py(j.clock(h, to)), r, it * 1024, rng.randrange(0, 4096)))
            if fp16 and t < overflow_until and rng.random() < 0.2:
                scale = max(1024.0, scale / 2)
        self.iterations = k * j.log_interval
        # Benign kernel noise during the run.
        for h in j.hosts:
            for _ in range(rng.randrange(1, 4)):
                t = rng.uniform(self.t_train, max(self.t_train + 1, until))
                self.kline(h, t, rng.choice([
                    "perf: interrupt took too long (2503 > 2500), lowering kernel.perf_event_max_sample_rate to 79800",
                    "audit: type=1400 audit(%d.118:412): apparmor=\"DENIED\" operation=\"open\" profile=\"snap.lxd\" "
                    "name=\"/proc/%d/mounts\"" % (int(t), rng.randrange(1000, 9000)),
                    "TCP: request_sock_TCP: Possible SYN flooding on port 29500. Sending cookies.",
                    "nvidia-nvswitch: Probing device 0000:%02x:00.0" % rng.randrange(5, 8),
                ]))
        return k

    # ---------------------------------------------------------------- collateral
    def watchdog(self, r, t, seq, numel):
        """Rank r's NCCL watchdog fires at true time t, in this job's format."""
        j, rng = self.job, self.rng
        T = j.timeout_ms
        ran = T + rng.randrange(5, 900)
        fmt = j.torch_fmt
        if fmt == "legacy":
            # PyTorch 1.13-2.1: c10 logging without a time stamp; the line
            # inherits the previous line's time (the last iteration).
            self.rk(r, t, "[E ProcessGroupNCCL.cpp:475] [Rank %d] Watchdog caught collective operation timeout: "
                    "WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, Timeout(ms)=%d) ran for %d milliseconds before timing "
                    "out." % (r, seq, T, ran))
            self.rk(r, t + 0.001, "[E ProcessGroupNCCL.cpp:489] Some NCCL operations have failed or timed out. Due "
                    "to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
                    "corrupted/incomplete data.")
            self.rk(r, t + 0.002, "[E ProcessGroupNCCL.cpp:495] To avoid data inconsistency, we are taking the "
                    "entire process down.")
            self.rk(r, t + 0.003, "terminate called after throwing an instance of 'std::runtime_error'  what():  "
                    "[Rank %d] NCCL watchdog thread terminated with exception: [Rank %d] Watchdog caught collective "
                    "operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, Timeout(ms)=%d) ran for %d "
                    "milliseconds before timing out." % (r, r, seq, T, ran + 3))
        elif fmt == "v2.1":
            self.glog(r, t, "E", "ProcessGroupNCCL.cpp:475",
                      "[Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, "
                      "NumelIn=%d, NumelOut=%d, Timeout(ms)=%d) ran for %d milliseconds before timing out." % (
                          r, seq, numel, numel, T, ran))
            self.glog(r, t + 0.001, "E", "ProcessGroupNCCL.cpp:489",
                      "Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, "
                      "subsequent GPU operations might run on corrupted/incomplete data.")
            self.glog(r, t + 0.002, "E", "ProcessGroupNCCL.cpp:495",
                      "To avoid data inconsistency, we are taking the entire process down.")
        elif fmt == "v2.3":
            self.glog(r, t, "E", "ProcessGroupNCCL.cpp:616",
                      "[Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, "
                      "NumelIn=%d, NumelOut=%d, Timeout(ms)=%d) ran for %d milliseconds before timing out." % (
                          r, seq, numel, numel, T, ran))
            self.glog(r, t + 0.0001, "E", "ProcessGroupNCCL.cpp:1534",
                      "[PG 0 Rank %d] Timeout at NCCL work: %d, last enqueued NCCL work: %d, last completed NCCL "
                      "work: %d." % (r, seq, seq, seq - 1))
            self.glog(r, t + 0.0002, "E", "ProcessGroupNCCL.cpp:577",
                      "[Rank %d] Some NCCL operations have failed or timed out. Due to the asynchronous nature of "
                      "CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data." % r)
            self.glog(r, t + 0.0003, "E", "ProcessGroupNCCL.cpp:583",
                      "[Rank %d] To avoid data inconsistency, we are taking the entire process down." % r)
        elif fmt == "v2.5":
            self.glog(r, t, "E", "ProcessGroupNCCL.cpp:632",
                      "[Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, "
                      "NumelIn=%d, NumelOut=%d, Timeout(ms)=%d) ran for %d milliseconds before timing out." % (
                          r, seq, numel, numel, T, ran), pid=False)
            self.glog(r, t + 0.0001, "E", "ProcessGroupNCCL.cpp:2271",
                      "[PG ID 0 PG GUID 0(default_pg) Rank %d]  failure detected by watchdog at work sequence id: %d "
                      "PG status: last enqueued work: %d, last completed work: %d" % (r, seq, seq, seq - 1), pid=False)
            self.glog(r, t + 0.0002, "E", "ProcessGroupNCCL.cpp:670",
                      "Stack trace of the failed collective not found, potentially because FlightRecorder is "
                      "disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.",
                      pid=False)
            self.glog(r, t + 0.0003, "E", "ProcessGroupNCCL.cpp:684",
                      "[Rank %d] To avoid data inconsistency, we are taking the entire process down." % r, pid=False)
        else:  # blocking wait (TORCH_NCCL_BLOCKING_WAIT=1)
            self.glog(r, t, "E", "ProcessGroupNCCL.cpp:756",
                      "[Rank %d] Work WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=%d, NumelOut=%d, Timeout(ms)=%d) "
                      "timed out in blocking wait." % (r, seq, numel, numel, T), pid=False)
        self.exited[r] = t + rng.uniform(1, 5)

    def desync_report(self, victim, t, seq):
        """TORCH_NCCL_DESYNC_DEBUG=1: rank 0 (1 if the victim is 0) names the
        lagging rank, as never joining any collective, or, with desync
        "joined_not_finished", as having joined #seq and not finished it."""
        reporter = 0 if victim != 0 else 1
        self.glog(reporter, t, "E", "ProcessGroupNCCL.cpp:1180",
                  "[Rank %d] Observed flight recorder dump signal from another rank via TCPStore." % reporter)
        if self.desync == "joined_not_finished":
            self.rk(reporter, t + 1e-4, "\t - To our best knowledge, the lagging/dead/mismatched ranks that caused "
                    "the desync are:")
            self.rk(reporter, t + 2e-4, "\t   - [%d] joined but didn't finish collective #%d (count from 1)"
                    % (victim, seq))
        else:
            self.rk(reporter, t + 1e-4, "\t - To our best knowledge, ranks [%d] are the lagging ranks that caused "
                    "this timeout. They never joined any collectives" % victim)

    def mismatch(self, victim, t, seq, numel, exitcodes):
        """TORCH_DISTRIBUTED_DEBUG=DETAIL: the victim calls all_gather where
        the others call all_reduce #seq; ProcessGroupWrapper's fingerprint
        check raises on every rank, naming the first rank that differs."""
        j, rng = self.job, self.rng
        fp = {"ALLREDUCE": "CollectiveFingerPrint(SequenceNumber=%d, OpType=ALLREDUCE, TensorShape=[%d], "
                           "TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, "
                           "layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), "
                           "memory_format=(nullopt)))" % (seq, numel),
              "ALLGATHER": "CollectiveFingerPrint(SequenceNumber=%d, OpType=ALLGATHER)" % seq}
        first_other = 0 if victim != 0 else 1
        for r in range(j.N):
            te = t + rng.uniform(0.01, 0.5)
            mine, other = ("ALLGATHER", first_other) if r == victim else ("ALLREDUCE", victim)
            self.rk(r, te, " RuntimeError: Detected mismatch between collectives on ranks. Rank %d is running "
                    "collective: %s, but Rank %d is running collective: %s." % (
                        r, fp[mine], other, fp["ALLREDUCE" if mine == "ALLGATHER" else "ALLGATHER"]))
            self.exited[r] = te + rng.uniform(0.5, 2)
            exitcodes[r] = 1

    def fr_dumps(self, victim, t, seq):
        """Every rank's Flight Recorder dump (TORCH_NCCL_DUMP_ON_TIMEOUT):
        the victim never entered world all_reduce #seq, which the others
        started at t, or, with flight_recorder "mismatch", started
        all_gather #seq in its place (each dump stamped by its host's
        clock)."""
        j = self.job
        fr = make_dumps.Job(j.N, GPUS_PER_HOST, j.N // GPUS_PER_HOST)
        odd = self.flight_recorder == "mismatch"
        for r in range(j.N):
            h = j.host_of(r)
            data = make_dumps.hang_dump(fr, r, None if odd else victim, seq, int(round(j.clock(h, t), 3) * 10**9),
                                        op_odd=victim if odd else None)
            self.dumps["%s/flight_recorder/nccl_trace_rank_%d" % (h, r)] = data

    def remote_error(self, r, t):
        j = self.job
        self.rk(r, t, " torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
                "ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error, NCCL version %s"
                % j.nccl_version)
        self.rk(r, t + 0.001, " ncclRemoteError: A call failed possibly due to a network error or a remote process "
                "exiting prematurely.")
        self.exited[r] = t + self.rng.uniform(0.5, 3)

    def agents_fail(self, first_on_host=None, exitcodes=None, root_rank_on_host=None):
        """Each host's elastic agent: SIGTERM to the other local workers
        (printed first), then the failed worker, then ChildFailedError naming
        that host's first failure."""
        j, rng = self.job, self.rng
        exitcodes = exitcodes or {}
        for h in j.hosts:
            ranks = [j.rank(h, lr) for lr in range(GPUS_PER_HOST)]
            dead = [(self.exited[r], r) for r in ranks if r in self.exited]
            if root_rank_on_host and h in root_rank_on_host:
                first = root_rank_on_host[h]
                tf = self.exited[first]
            elif dead:
                tf, first = min(dead)
            else:
                continue
            ta = tf + rng.uniform(0.2, 1.5)
            for r in ranks:
                if r == first:
                    continue
                self.agent_glog(h, ta, "W", "torch/distributed/elastic/multiprocessing/api.py:897",
                                "Sending process %d closing signal SIGTERM" % j.pid[r])
                # Peers still alive die now.
                if r not in self.exited or self.exited[r] > ta:
                    self.exited[r] = ta + 0.5
            code = exitcodes.get(first, -6)
            tx = ta + rng.uniform(0.3, 1.2)
            self.agent_glog(h, tx, "E", "torch/distributed/elastic/multiprocessing/api.py:869",
                            "failed (exitcode: %d) local_rank: %d (pid: %d) of binary: %s" % (
                                code, j.local(first), j.pid[first], j.binary))
            sig = {-9: "Signal 9 (SIGKILL)", -6: "Signal 6 (SIGABRT)", -15: "Signal 15 (SIGTERM)"}.get(code)
            body = [
                "Traceback (most recent call last):",
                "  File \"/usr/local/bin/torchrun\", line 8, in <module>",
                "    sys.exit(main())",
                "  File \"/usr/local/lib/python3.10/dist-packages/torch/distributed/launcher/api.py\", line 263, "
                "in launch_agent",
                "    raise ChildFailedError(",
                "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
                "============================================================",
                "%s FAILED" % j.script,
                "------------------------------------------------------------",
                "Failures:",
                "  <NO_OTHER_FAILURES>",
                "------------------------------------------------------------",
                "Root Cause (first observed failure):",
                "[0]:",
                "  time      : %s" % ts_elastic(j.clock(h, tf)),
                "  host      : %s" % h,
                "  rank      : %d (local_rank: %d)" % (first, j.local(first)),
                "  exitcode  : %d (pid: %d)" % (code, j.pid[first]),
                "  error_file: <N/A>",
                "  traceback : %s" % ("%s received by PID %d" % (sig, j.pid[first]) if sig else
                                      "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"),
                "============================================================",
            ]
            for i, line in enumerate(body):
                self.agent(h).add(tx + 0.01 + i * 1e-5, line)

    def kernel_tail(self, until):
        j, rng = self.job, self.rng
        for h in j.hosts:
            if rng.random() < 0.5:
                t = until + rng.uniform(1, 60)
                self.kline(h, t, "nvidia-persistenced: device 0000:%s:00.0 - persistence mode enabled." %
                           rng.choice(BUSES))

    def exit_noise(self, ranks, t_of):
        """destroy_process_group warnings at interpreter exit."""
        j = self.job
        for r in ranks:
            t = t_of(r)
            self.glog(r, t, "W", "ProcessGroupNCCL.cpp:1479",
                      "Warning: WARNING: destroy_process_group() was not called before program exit, which can leak "
                      "resources. For more info, please see https://pytorch.org/docs/stable/distributed.html#shutdown "
                      "(function operator())", pid=False)
            self.rk(r, t + 0.01, "%s NCCL INFO comm %s rank %d nranks %d cudaDev %d busId %s000 - Destroy COMPLETE"
                    % (self.nccl_prefix(r, t), j.comm_ptr[r], r, j.N, j.local(r), BUSES[j.local(r)]))

    # ---------------------------------------------------------------- stale block
    def stale_block(self):
        j, rng = self.job, self.rng
        h = rng.choice(j.hosts)
        lr = rng.randrange(GPUS_PER_HOST)
        xid = rng.choice(["79", "48", "94", "95"])
        age_days = rng.uniform(10, 75)
        t = j.t0 - age_days * 86400
        old_boot_mono = rng.uniform(20000, 3_000_000)
        bus = BUSES[lr]
        msgs = []
        if xid == "79":
            msgs.append("NVRM: Xid (PCI:0000:%s:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
                        % bus)
            msgs.append("NVRM: GPU 0000:%s:00.0: GPU has fallen off the bus." % bus)
        elif xid == "48":
            msgs.append("NVRM: Xid (PCI:0000:%s:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double "
                        "bit error (DBE) has been detected on GPU in the framebuffer at partition %d, subpartition "
                        "%d." % (bus, rng.randrange(16), rng.randrange(4)))
        elif xid == "94":
            msgs.append("NVRM: Xid (PCI:0000:%s:00): 94, pid=%d, Contained: SM (0x1). RST: No, D-RST: No"
                        % (bus, rng.randrange(2000, 60000)))
        else:
            msgs.append("NVRM: Xid (PCI:0000:%s:00): 95, pid=%d, Uncontained: FBHUB. RST: Yes, D-RST: No"
                        % (bus, rng.randrange(2000, 60000)))
        where = rng.choice(["kern_head", "kern_middle", "rank_prolog"])
        if where == "rank_prolog":
            # A prolog health check prints recent Xids (dmesg -T) into the job
            # output before training starts.
            r = j.rank(h, lr)
            rel = "%s/rank-%d.log" % (h, r)
            lines = ["+ dmesg -T | grep -i xid | tail -n 5"]
            lines += ["%s %s" % (ts_dmesg_T(t + i * 0.0004), m) for i, m in enumerate(msgs)]
            pos = "head"
        else:
            rel = "%s/kern.log" % h
            lines = ["%s %s kernel: [%12.6f] %s" % (ts_syslog(t + i * 0.0004), h, old_boot_mono + i * 0.0004, m)
                     for i, m in enumerate(msgs)]
            pos = "head" if where == "kern_head" else "middle"
        return rel, lines, pos, STALE_RULES[xid], where

    # ---------------------------------------------------------------- scenarios
    def build(self):
        j, rng = self.job, self.rng
        self.startup()
        kind = self.kind
        run_len = rng.uniform(20, 50) * 60
        t_fault = self.t_train + run_len
        victim = rng.randrange(j.N)
        vh = j.host_of(victim)
        vlr = j.local(victim)
        seq = rng.randrange(2000, 90000)
        numel = rng.choice([1, 50331648, 160672064, 9801523])
        T = j.timeout_ms / 1000.0
        init = None
        slow = None

        def watchdogs(ranks, t_block):
            for r in ranks:
                self.watchdog(r, t_block + T + rng.uniform(0.05, 2.5), seq, numel)

        if kind in ("benign", "straggler"):
            if kind == "straggler":
                slow = {victim: rng.uniform(1.25, 1.6)}
                init = {"rules": ["straggler-slow-rank"], "rank": victim, "host": vh, "inferred": True}
            self.training(t_fault, slow=slow)
            t_end = self.last_iter[0][0] + rng.uniform(1, 5)
            # Megatron's rank 0 (or the last rank) prints the completion line.
            pr = rng.choice([0, j.N - 1])
            self.rk(pr, t_end, "[after training is done] datetime: %s " % _utc(j.clock(j.host_of(pr), t_end))
                    .strftime("%Y-%m-%d %H:%M:%S"))
            self.exit_noise(range(j.N), lambda r: t_end + rng.uniform(1, 8))
            late = []
            if kind == "benign":
                # Some ranks leave before a last collective finishes: their
                # peers' watchdog fires at exit, after training completed.
                late = rng.sample(range(j.N), rng.randrange(1, 4))
                for r in late:
                    tw = t_end + rng.uniform(8, 12) + T
                    j_fmt = j.torch_fmt
                    if j_fmt in ("legacy", "blocking"):
                        j.torch_fmt = "v2.5"  # exit watchdog lines are of the after-completion rule's forms
                    self.watchdog(r, tw, seq, 1)
                    j.torch_fmt = j_fmt
            for h in j.hosts:
                tdone = t_end + rng.uniform(9, 14) + (T + 15 if late else 0)
                self.agent_glog(h, tdone, "I", "torch/distributed/elastic/agent/server/api.py:879",
                                "[default] worker group successfully finished. Waiting 300 seconds for other agents "
                                "to finish.")
            self.kernel_tail(t_end)
        elif kind in ("xid79", "ecc", "cuda_oom", "host_oom", "silent"):
            # The victim stops mid-iteration; everyone else completes the
            # iteration in flight and blocks in the next collective.
            self.stopped[victim] = t_fault
            # In lockstep data parallelism nobody completes the iteration
            # the victim never finishes: every rank's last line is the same.
            for r in range(j.N):
                self.stopped[r] = t_fault
            self.training(t_fault + 2 * j.period)
            t_block = t_fault + rng.uniform(0.2, 2.0)
            others = [r for r in range(j.N) if r != victim]
            exitcodes = {}
            root_on_host = {}
            if kind == "xid79":
                tk = t_fault + rng.uniform(0.05, 1.0)
                self.kline(vh, tk, "NVRM: Xid (PCI:0000:%s:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen "
                           "off the bus." % BUSES[vlr])
                self.kline(vh, tk + 0.0005, "NVRM: GPU 0000:%s:00.0: GPU has fallen off the bus." % BUSES[vlr])
                if rng.random() < 0.5:
                    self.kline(vh, tk + 0.001, "NVRM: A GPU crash dump has been created. If possible, please run")
                    self.kline(vh, tk + 0.0011, "NVRM: nvidia-bug-report.sh as root to collect this data before")
                    self.kline(vh, tk + 0.0012, "NVRM: the NVIDIA kernel module is unloaded.")
                init = {"rules": ["xid-79-fallen-off-bus"], "rank": victim, "host": vh, "inferred": False}
                if rng.random() < 0.3:
                    # The victim's next CUDA call fails; the exception has no
                    # stamp and inherits the last iteration's, before the Xid.
                    te = tk + rng.uniform(0.5, 5)
                    self.rk(victim, te, " RuntimeError: CUDA error: unspecified launch failure")
                    self.rk(victim, te + 1e-4, " CUDA kernel errors might be asynchronously reported at some other "
                            "API call, so the stacktrace below might be incorrect.")
                    self.exited[victim] = te + rng.uniform(0.5, 2)
                    exitcodes[victim] = 1
                    root_on_host[vh] = victim
                    watchdogs([r for r in others if j.host_of(r) != vh], t_block)
                else:
                    watchdogs(others, t_block)
            elif kind == "ecc":
                xid = rng.choice(["48", "94", "95"])
                tk = t_fault + rng.uniform(0.05, 1.0)
                if xid == "48":
                    msg = ("NVRM: Xid (PCI:0000:%s:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double "
                           "bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x%x partition "
                           "%d, subpartition %d." % (BUSES[vlr], rng.getrandbits(32), rng.randrange(16),
                                                     rng.randrange(4)))
                elif xid == "94":
                    msg = ("NVRM: Xid (PCI:0000:%s:00): 94, pid=%d, name=python3, Contained: SM (0x1). RST: No, "
                           "D-RST: No" % (BUSES[vlr], j.pid[victim]))
                else:
                    msg = ("NVRM: Xid (PCI:0000:%s:00): 95, pid=%d, name=python3, Uncontained: LTC TAG (0x2,0x1). "
                           "RST: Yes, D-RST: No" % (BUSES[vlr], j.pid[victim]))
                self.kline(vh, tk, msg)
                # The victim's CUDA call fails; a Python exception has no
                # time stamp of its own.
                te = tk + rng.uniform(0.01, 0.5)
                self.rk(victim, te, " Traceback (most recent call last):")
                self.rk(victim, te + 1e-4, "   File \"/workspace/megatron/training.py\", line 1153, in train_step")
                self.rk(victim, te + 2e-4, " RuntimeError: CUDA error: uncorrectable ECC error encountered")
                self.rk(victim, te + 3e-4, " CUDA kernel errors might be asynchronously reported at some other API "
                        "call, so the stacktrace below might be incorrect.")
                self.exited[victim] = te + rng.uniform(0.5, 2)
                exitcodes[victim] = 1
                init = {"rules": ["xid-ecc-uncorrectable"], "rank": victim, "host": vh, "inferred": False}
            elif kind == "cuda_oom":
                te = t_fault + rng.uniform(0.01, 0.5)
                self.rk(victim, te, " Traceback (most recent call last):")
                self.rk(victim, te + 1e-4, "   File \"/workspace/megatron/core/tensor_parallel/layers.py\", line 611, "
                        "in forward")
                self.rk(victim, te + 2e-4, " torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB. "
                        "GPU %d has a total capacity of 79.15 GiB of which %.2f GiB is free. Including non-PyTorch "
                        "memory, this process has 77.90 GiB memory in use. Of the allocated memory 74.12 GiB is "
                        "allocated by PyTorch, and 2.31 GiB is reserved by PyTorch but unallocated." % (
                            rng.choice([1.0, 2.0, 4.5]), vlr, rng.uniform(0.1, 1.5)))
                self.exited[victim] = te + rng.uniform(0.5, 2)
                exitcodes[victim] = 1
                init = {"rules": ["cuda-oom"], "rank": victim, "host": vh, "inferred": False}
            elif kind == "host_oom":
                tk = t_fault + rng.uniform(0.0, 0.3)
                self.kline(vh, tk - 0.002, "pt_data_worker invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|"
                           "__GFP_COMP), order=0, oom_score_adj=0")
                self.kline(vh, tk - 0.001, "Mem-Info:")
                self.kline(vh, tk, "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,"
                           "global_oom,task_memcg=/system.slice/slurmstepd.scope/job_%d/step_0/user/task_%d,"
                           "task=python3,pid=%d,uid=1000" % (rng.randrange(10000, 99999), vlr, j.pid[victim]))
                self.kline(vh, tk + 0.0002, "Out of memory: Killed process %d (python3) total-vm:183245616kB, "
                           "anon-rss:142338612kB, file-rss:81296kB, shmem-rss:12288kB, UID:1000 pgtables:289112kB "
                           "oom_score_adj:0" % j.pid[victim])
                self.exited[victim] = tk + 0.01
                exitcodes[victim] = -9
                init = {"rules": ["host-oom-kill"], "rank": victim, "host": vh, "inferred": False}
            elif kind == "silent":
                # No initiating line anywhere: the victim just stops.
                init = {"rules": ["nccl-watchdog-timeout", "collective-desync-stuck", "training-silent-hang"],
                        "rank": victim, "host": vh, "inferred": True}
                if self.desync == "mismatch":
                    init["rules"] = ["collective-desync-stuck"]
                    self.mismatch(victim, t_block, seq, numel, exitcodes)
                elif self.flight_recorder == "mismatch":
                    # The victim's all_gather waits like the others'
                    # all_reduce: every rank times out.
                    init["rules"] = ["flight-recorder-collective-mismatch", "nccl-watchdog-timeout"]
                    watchdogs(range(j.N), t_block)
                else:
                    watchdogs(others, t_block)
                if rng.random() < 0.3 and not self.desync or self.desync in ("never_joined", "joined_not_finished"):
                    self.desync_report(victim, t_block + T + rng.uniform(2.6, 4), seq)
                if self.flight_recorder:
                    self.fr_dumps(victim, t_block, seq)
            if kind in ("ecc", "cuda_oom", "host_oom"):
                # The victim's host agent tears its group down at once;
                # remote ranks either see the peer vanish or time out.
                root_on_host[vh] = victim
                remote = [r for r in others if j.host_of(r) != vh]
                noticed = set(rng.sample(remote, min(len(remote), rng.randrange(0, 4))))
                for r in remote:
                    if r in noticed:
                        self.remote_error(r, self.exited[victim] + rng.uniform(3, 40))
                    else:
                        self.watchdog(r, t_block + T + rng.uniform(0.05, 2.5), seq, numel)
                # Local peers are killed by the agent's SIGTERM (set in agents_fail).
            self.agents_fail(exitcodes=exitcodes, root_rank_on_host=root_on_host)
            t_last = max(self.exited.values()) if self.exited else t_fault
            self.exit_noise([r for r in range(j.N) if r in self.exited and rng.random() < 0.3],
                            lambda r: self.exited[r] + rng.uniform(0.01, 0.3))
            self.kernel_tail(t_last)
        elif kind == "ib_error":
            # The HCA (or its cable) on one host dies: peers that talk to it
            # get completion errors naming its address.
            self.stopped = {r: t_fault for r in range(j.N)}
            self.training(t_fault + 2 * j.period)
            bad = vh
            if rng.random() < 0.5:
                self.kline(bad, t_fault - rng.uniform(0.1, 2), "mlx5_core 0000:%02x:00.0 ibp%ds0: Link down" % (
                    rng.choice([0x41, 0x17, 0xc1]), rng.choice([65, 23, 193])))
                rules = ["ib-port-down", "ib-retry-exceeded"]
            else:
                rules = ["ib-retry-exceeded"]
            others_hosts = [h for h in j.hosts if h != bad]
            reporters = []
            for h in others_hosts:
                n = rng.randrange(1, 4)
                reporters += [j.rank(h, lr) for lr in rng.sample(range(GPUS_PER_HOST), n)]
            for r in reporters:
                te = t_fault + rng.uniform(0.5, 8)
                pre = self.nccl_prefix(r, te, 60)
                self.rk(r, te, "%s transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer %s<%d> with "
                        "status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:%s remoteGids::ffff:%s hca "
                        "mlx5_%d" % (pre, j.ip[bad], rng.randrange(30000, 60000), j.ip[j.host_of(r)], j.ip[bad],
                                     j.local(r) % 4))
                self.remote_error(r, te + rng.uniform(0.5, 3))
            t_block = t_fault + rng.uniform(0.2, 2.0)
            for r in range(j.N):
                if r not in self.exited:
                    self.watchdog(r, t_block + T + rng.uniform(0.05, 2.5), seq, numel)
            self.agents_fail()
            self.kernel_tail(max(self.exited.values()))
            init = {"rules": rules, "rank": None, "host": bad, "inferred": True}
        else:
            raise ValueError("unknown kind %r" % kind)

        self.truth["initiating"] = init
        self.truth["fault_time"] = iso(t_fault) if kind not in ("benign", "straggler") else None
        self.truth["victim_pid"] = j.pid[victim] if init else None
        self.syslog_copies()
        rel, lines, pos, rule, where = self.stale_block()
        self.truth["stale"] = [{"source": rel, "rule": rule, "where": where, "lines": []}]
        self._stale = (rel, lines, pos)

    def syslog_copies(self):
        """Some hosts' archives hold syslog too: every kernel line again,
        among other daemons' lines (replayed duplicates across files)."""
        j, rng = self.job, self.rng
        for h in j.hosts:
            if rng.random() >= 0.25:
                continue
            k = self.kern(h)
            sl = self.log("%s/syslog" % h)
            for t, seq, text in k.lines:
                sl.lines.append((t, seq, text))
            for _ in range(rng.randrange(3, 8)):
                t = rng.uniform(j.t0, j.t0 + 3000)
                sl.add(t, "%s %s CRON[%d]: (root) CMD (/usr/local/bin/node-exporter-textfile.sh)" % (
                    ts_syslog(j.clock(h, t)), h, rng.randrange(1000, 60000)))

    def write(self, out):
        os.makedirs(out, exist_ok=True)
        srel, slines, spos = self._stale
        if srel not in self.logs:
            self.log(srel)
        for rel, log in sorted(self.logs.items()):
            lines = log.render()
            if rel == srel:
                if spos == "head":
                    at = 0
                else:
                    at = max(1, len(lines) // 2)
                lines = lines[:at] + slines + lines[at:]
                first = at + 1 + (1 if slines[0].startswith("+ ") else 0)
                self.truth["stale"][0]["lines"] = list(range(first, at + len(slines) + 1))
            path = os.path.join(out, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", newline="\n") as f:
                f.write("\n".join(lines) + "\n")
            # Files keep the mtime of their last write: the scanner infers the
            # year of year-less stamps from it.
            t_last = max(t for t, _, _ in log.lines) if log.lines else self.job.t0
            os.utime(path, (t_last + 5, t_last + 5))
        for rel, data in sorted(self.dumps.items()):
            os.makedirs(os.path.dirname(os.path.join(out, rel)), exist_ok=True)
            with open(os.path.join(out, rel), "wb") as f:
                f.write(data)
        with open(os.path.join(out, "truth.json"), "w") as f:
            json.dump(self.truth, f, indent=1, sort_keys=True)
            f.write("\n")
        return self.truth


def simulate(out, kind, seed, hosts=None, subcomms=False, desync=None, flight_recorder=False, skew=True):
    """Writes one scenario into `out`; returns its truth dict. For kind
    silent: desync (one of DESYNC_FORMS) adds that c10d desync report,
    flight_recorder every rank's dump (True: the victim never entered the
    hung collective; "mismatch": it ran another); skew=False sets every
    clock right."""
    s = Scenario(kind, seed, hosts, subcomms, desync, flight_recorder, skew)
    s.build()
    return s.write(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?")
    ap.add_argument("--kind", choices=KINDS, default="xid79")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hosts", type=int, choices=range(2, 129), metavar="2..128")
    ap.add_argument("--desync", choices=DESYNC_FORMS, help="silent: the c10d desync report of this form")
    ap.add_argument("--flight-recorder", nargs="?", const=True, default=False, choices=[True, "mismatch"],
                    help="silent: every rank's Flight Recorder dump (mismatch: the victim ran all_gather where the "
                    "others hang in all_reduce, rather than no collective)")
    ap.add_argument("--no-skew", action="store_true", help="every host's clock right")
    ap.add_argument("--subcomms", action="store_true",
                    help="also write the data-parallel sub-communicators' NCCL init lines")
    ap.add_argument("--list-kinds", action="store_true")
    a = ap.parse_args(argv)
    if a.list_kinds:
        for k in KINDS:
            print(k, " ".join(REQUIRED_RULES[k]))
        return 0
    if not a.out:
        ap.error("OUT_DIR is required")
    truth = simulate(a.out, a.kind, a.seed, a.hosts, a.subcomms, a.desync, a.flight_recorder, not a.no_skew)
    json.dump(truth["initiating"], sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
