#!/usr/bin/env python3
"""Deterministic generator of realistic multi-rank GPU training job logs.

Writes what a 64-rank (8 hosts x 8 GPUs by default) Megatron-style job leaves
behind, at a requested total size:

  OUT/node000/rank-0.log ... OUT/node007/rank-63.log   torchrun worker output,
      every line carrying the `[rankK]:` prefix: NCCL INFO chatter (init burst,
      channels, collectives), Python logging INFO/WARNING lines, HF-style
      `[INFO|trainer.py:...]` lines, c10d glog lines; the last rank prints the
      Megatron iteration lines, rank 0 the HF-style metric dicts.
  OUT/nodeNNN/kern.log    kernel log in syslog form with monotonic stamps
      (benign driver, network and systemd chatter).
  OUT/nodeNNN/launcher.log  the torchrun elastic agent of the host.
  OUT.manifest.json       (next to OUT, so scanning OUT sees logs only) every
      file (bytes, lines) and every injected failure line (file, 1-based line,
      byte offset of the line start, text).

Failures are RARE and injected at known places (unless --no-failures):
  * a CUDA OOM traceback on one rank mid-run (caught by the training loop,
    which skips the batch and goes on);
  * at the end of the run an Xid 79 ("GPU has fallen off the bus") in the
    kernel log of one host; the rank on that GPU goes silent, every other
    rank prints the NCCL watchdog timeout `Timeout(ms)=600000` ten minutes
    later and the launchers report the ChildFailedError.

--single FILE writes one big file instead: the interleaved stdout of all ranks
(what `srun`/torchrun leave in one job log) with the same OOM and watchdog
lines; kernel and launcher logs are not part of it, so it has no Xid line.

Same --seed and arguments give byte-identical output. Speed: text comes from
a per-rank vocabulary of pre-rendered line bodies; only the time stamps are
formatted per second, and files are written in large blocks (about 60-100 MB/s
per process; --jobs spreads files over processes).

  gen_logs.py --out bench-data/job-2g --size 2G --seed 1
  gen_logs.py --single /dev/shm/job.log --size 512M --seed 1
  gen_logs.py --out /tmp/clean --size 20M --no-failures
  gen_logs.py --single /dev/shm/dense.log --size 256M --dense 0.17   # 1 line in 6 a context signal
  gen_logs.py --out /dev/shm/arch --size 400M --hosts 128 --files-per-rank 20   # 1,024 ranks, 20,736 files
"""

import argparse
import calendar
import json
import os
import random
import sys
import time

MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
# PCI bus numbers of the 8 GPUs of an HGX H100 board.
BUSES = ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"]
MS = ["%03d" % i for i in range(1000)]
START = calendar.timegm((2026, 11, 2, 13, 0, 0, 0, 0, 0))
LINES_PER_SEC = 6.0       # per rank, steady state
ITER_S = 0.8123           # Megatron iteration time
BLOCK = 1 << 22           # write granularity


def parse_size(s):
    s = s.strip().upper()
    mult = 1
    for suf, m in (("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30), ("T", 1 << 40)):
        if s.endswith(suf) or s.endswith(suf + "B") or s.endswith(suf + "IB"):
            s = s[: s.index(suf)]
            mult = m
            break
    return int(float(s) * mult)


class Clock:
    """Per-second stamp strings, computed once per second."""

    __slots__ = ("sec", "iso", "glog", "syslog")

    def __init__(self):
        self.sec = None

    def set(self, sec):
        if sec == self.sec:
            return
        self.sec = sec
        tm = time.gmtime(sec)
        self.iso = "%04d-%02d-%02d %02d:%02d:%02d" % (tm.tm_year, tm.tm_mon, tm.tm_mday,
                                                      tm.tm_hour, tm.tm_min, tm.tm_sec)
        self.glog = "%02d%02d %02d:%02d:%02d" % (tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min,
                                                 tm.tm_sec)
        self.syslog = "%s %2d %02d:%02d:%02d" % (MONTHS[tm.tm_mon - 1], tm.tm_mday, tm.tm_hour,
                                                 tm.tm_min, tm.tm_sec)


class Rank:
    """Pre-rendered line bodies of one rank. Kinds:
    N: no stamp (NCCL INFO, print()); line = prefix + body
    P: Python logging; line = prefix + iso + ',' + ms + body
    H: HF logging; line = prefix + head + iso + ',' + ms + body
    G: c10d glog; line = prefix + '[' + sev + glog + '.' + ms + us3 + body
    """

    def __init__(self, rng, rank, world, gph, nch):
        self.rank = rank
        host = rank // gph
        local = rank % gph
        self.host = "node%03d" % host
        self.local = local
        self.bus = BUSES[local % len(BUSES)]
        self.pid = 41000 + 97 * local + 13 * host
        self.prefix = "[rank%d]:" % rank
        h = self.host
        pid, tid = self.pid, self.pid + 211
        ns = "%s:%d:%d [%d] NCCL INFO " % (h, pid, tid, local)
        comm = "0x%x" % (0x55d3a0000000 + rank * 0x1040 + rng.randrange(1 << 16))
        nxt = (rank + 1) % world
        prv = (rank - 1) % world
        nbus = BUSES[nxt % gph % len(BUSES)]
        # Init burst (start of the run and when a new communicator is made).
        init = [
            ns + "cudaDriverVersion 12040",
            ns + "Bootstrap : Using ib0:10.0.%d.%d<0>" % (host, 10 + local),
            ns + "NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.",
            ns + "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/IB [2]mlx5_4:1/IB [3]mlx5_5:1/IB "
                 "[4]mlx5_6:1/IB [5]mlx5_9:1/IB [6]mlx5_10:1/IB [7]mlx5_11:1/IB [RO]; OOB ib0:10.0.%d.%d<0>"
                 % (host, 10 + local),
            ns + "Using non-device net plugin version 0",
            ns + "Using network IB",
            ns + "ncclCommInitRank comm %s rank %d nranks %d cudaDev %d nvmlDev %d busId %s000 "
                 "commId 0x5f2a91c3e4b7d806 - Init START" % (comm, rank, world, local, local, self.bus),
            ns + "Setting affinity for GPU %d to ffffffff,00000000,ffffffff" % local,
            ns + "NVLS multicast support is not available on dev %d" % local,
            ns + "comm %s rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL 0"
                 % (comm, rank, world, world // gph, gph, local),
            ns + "Trees [0] %d/-1/-1->%d->%d [1] %d/-1/-1->%d->%d [2] -1/-1/-1->%d->%d"
                 % (nxt, rank, prv, nxt, rank, prv, rank, prv),
            ns + "P2P Chunksize set to 524288",
        ]
        for c in range(nch):
            init.append(ns + "Channel %02d/%d : %d[%s000] -> %d[%s000] via P2P/IPC"
                        % (c, nch, rank, self.bus, nxt, nbus))
        init += [
            ns + "Connected all rings",
            ns + "Connected all trees",
            ns + "threadThresholds 8/8/64 | 512/8/64 | 512 | 512",
            ns + "%d coll channels, %d collnet channels, 0 nvls channels, %d p2p channels, 2 p2p "
                 "channels per peer" % (nch, nch, nch),
            ns + "CC Off, workFifoBytes 1048576",
            ns + "TUNER/Plugin: Could not find: libnccl-tuner.so. Using internal tuner plugin.",
            ns + "ncclCommInitRank comm %s rank %d nranks %d cudaDev %d nvmlDev %d busId %s000 "
                 "commId 0x5f2a91c3e4b7d806 - Init COMPLETE" % (comm, rank, world, local, local, self.bus),
            ns + "Init timings: rank %d nranks %d total 1.%02d (kernels 0.18, alloc 0.02, bootstrap "
                 "0.31, allgathers 0.01, topo 0.42, graphs 0.01, connections 0.29, rest 0.02)"
                 % (rank, world, rng.randrange(100)),
        ]
        self.init = init
        # Steady-state NCCL chatter.
        nccl = []
        for _ in range(256):
            c = rng.randrange(nch)
            peer = rng.randrange(world)
            kind = rng.randrange(6)
            if kind == 0:
                nccl.append(ns + "Channel %02d/%d : %d[%s000] -> %d[%s000] via P2P/IPC"
                            % (c, nch, rank, self.bus, nxt, nbus))
            elif kind == 1:
                nccl.append(ns + "Channel %02d/1 : %d[%d] -> %d[%d] [send] via NET/IB/%d/GDRDMA"
                            % (c, rank, local, peer, peer % gph, local))
            elif kind == 2:
                nccl.append(ns + "Channel %02d/1 : %d[%d] -> %d[%d] [receive] via NET/IB/%d/GDRDMA"
                            % (c, peer, peer % gph, rank, local, local))
            elif kind == 3:
                nccl.append(ns + "AllReduce: opCount %x sendbuff 0x7f%08x recvbuff 0x7f%08x count %d "
                            "datatype 7 op 0 root 0 comm %s [nranks=%d] stream 0x%x"
                            % (rng.randrange(1 << 20), rng.randrange(1 << 32), rng.randrange(1 << 32),
                               262144 << rng.randrange(6), comm, world, 0x55d3b000 + local))
            elif kind == 4:
                nccl.append(ns + "AllGather: opCount %x sendbuff 0x7f%08x recvbuff 0x7f%08x count %d "
                            "datatype 0 op 0 root 0 comm %s [nranks=%d] stream 0x%x"
                            % (rng.randrange(1 << 20), rng.randrange(1 << 32), rng.randrange(1 << 32),
                               4096 << rng.randrange(8), comm, world, 0x55d3b000 + local))
            else:
                nccl.append(ns + "Connected to proxy localRank %d -> connection 0x7f%08x"
                            % (rng.randrange(gph), rng.randrange(1 << 32)))
        self.nccl = nccl
        # Python logging bodies: " - LEVEL - where - text".
        shard = lambda: "%05d-of-01024" % rng.randrange(1024)
        py = []
        for _ in range(256):
            k = rng.randrange(10)
            if k == 0:
                py.append(" - INFO - data_loader.py:211 - worker %d prefetched %d samples from shard %s"
                          % (rng.randrange(8), 256 << rng.randrange(3), shard()))
            elif k == 1:
                py.append(" - INFO - throughput.py:58 - tokens/s/gpu %d.%d | TFLOPs/s/gpu %d.%d | MFU %d.%d%%"
                          % (3400 + rng.randrange(300), rng.randrange(10), 395 + rng.randrange(30),
                             rng.randrange(10), 40 + rng.randrange(4), rng.randrange(10)))
            elif k == 2:
                py.append(" - INFO - memory.py:77 - allocated %d.%02d GiB | reserved %d.%02d GiB | max "
                          "allocated %d.%02d GiB" % (60 + rng.randrange(4), rng.randrange(100),
                                                     72, rng.randrange(100), 66, rng.randrange(100)))
            elif k == 3:
                py.append(" - INFO - checkpointing.py:412 - async save of shard %d finished in %d.%02d s"
                          % (rank, 1 + rng.randrange(4), rng.randrange(100)))
            elif k == 4:
                py.append(" - INFO - torch.distributed.distributed_c10d - Rank %d: Completed "
                          "store-based barrier for key:store_based_barrier_key:%d with %d nodes."
                          % (rank, 1 + rng.randrange(8), world))
            elif k == 5:
                py.append(" - WARNING - py.warnings - /usr/lib/python3/dist-packages/torch/utils/"
                          "checkpoint.py:91: UserWarning: None of the inputs have requires_grad=True. "
                          "Gradients will be None")
            elif k == 6:
                py.append(" - INFO - dataset.py:144 - blended dataset: %d documents, %d.%d%% from "
                          "shard %s" % (rng.randrange(10 ** 7), rng.randrange(100), rng.randrange(10), shard()))
            elif k == 7:
                py.append(" - INFO - timers.py:310 - (min, max) time across ranks (ms): forward-backward "
                          "...: (%d.%02d, %d.%02d)" % (700 + rng.randrange(50), rng.randrange(100),
                                                       760 + rng.randrange(50), rng.randrange(100)))
            elif k == 8:
                py.append(" - DEBUG - prefetch.py:96 - pinned buffer %d recycled (%d KiB)"
                          % (rng.randrange(64), 4 << rng.randrange(10)))
            else:
                py.append(" - INFO - profiler.py:33 - step window %d: optimizer %d.%02d ms, "
                          "allreduce %d.%02d ms, h2d %d.%02d ms" % (rng.randrange(1000), 20 + rng.randrange(9),
                                                                    rng.randrange(100), 40 + rng.randrange(30),
                                                                    rng.randrange(100), rng.randrange(9),
                                                                    rng.randrange(100)))
        self.py = py
        self.hf_init = [
            ("[INFO|configuration_utils.py:731] ", " >> loading configuration file /models/llama-3-70b/config.json"),
            ("[INFO|modeling_utils.py:3474] ", " >> loading weights file /models/llama-3-70b/model.safetensors.index.json"),
            ("[INFO|tokenization_utils_base.py:2269] ", " >> loading file tokenizer.json"),
            ("[WARNING|logging.py:328] ", " >> `use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`."),
            ("[INFO|trainer.py:2134] ", " >> ***** Running training *****"),
            ("[INFO|trainer.py:2135] ", " >>   Num examples = 12,800,000"),
            ("[INFO|trainer.py:2137] ", " >>   Instantaneous batch size per device = 2"),
        ]
        self.glog = [
            ("I", " %d ProcessGroupNCCL.cpp:931] [PG 0 Rank %d] ProcessGroupNCCL initialization "
                  "options: size: %d, global rank: %d, TIMEOUT(ms): 600000, USE_HIGH_PRIORITY_STREAM: 0, "
                  "SPLIT_FROM: 0, SPLIT_COLOR: 0, PG Name: 0" % (pid, rank, world, rank)),
            ("I", " %d ProcessGroupNCCL.cpp:940] [PG 0 Rank %d] ProcessGroupNCCL environments: "
                  "NCCL version: 2.21.5, TORCH_NCCL_ASYNC_ERROR_HANDLING: 3, TORCH_NCCL_DUMP_ON_TIMEOUT: 0, "
                  "TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC: 60000, TORCH_NCCL_DESYNC_DEBUG: 0" % (pid, rank)),
            ("I", " %d TCPStore.cpp:290] [c10d - debug] The server has started on port = 29500." % pid),
        ]
        # --dense: the c10d line a DEBUG-level run prints for every process
        # group it makes (a context signal) and NCCL INFO COLL lines.
        self.dense_glog = self.glog[0]
        self.glog_steady = [
            ("W", " %d CUDAAllocatorConfig.h:28] Warning: expandable_segments not supported on this "
                  "platform (function operator())" % pid),
            ("W", " %d ProcessGroupNCCL.cpp:4136] [PG 1 Rank %d] Using GPU %d to perform barrier as "
                  "devices used by this process are currently unknown." % (pid, rank, local)),
            ("I", " %d reducer.cpp:1401] Reducer buckets have been rebuilt in this iteration." % pid),
        ]


class Stream:
    """Buffered writer that tracks lines and offsets."""

    def __init__(self, path, fname=None):
        self.path = path
        self.fname = fname
        self.f = open(path, "w", encoding="utf-8", newline="\n", buffering=1 << 20)
        self.parts = []
        self.pending = 0
        self.bytes = 0
        self.lines = 0
        self.closed_files = []  # manifest entries of the segments written before
        self.rotate_every = 0.0  # --files-per-rank: seconds of the run per segment
        self.segment = 0

    def rotate(self):
        """Closes this segment and goes on in the next (DIR/part-NNN.log)."""
        self.close()
        self.closed_files.append({"file": self.fname, "bytes": self.bytes, "lines": self.lines})
        self.segment += 1
        base = os.path.dirname(self.path)
        self.path = os.path.join(base, "part-%03d.log" % self.segment)
        self.fname = os.path.join(os.path.dirname(self.fname), "part-%03d.log" % self.segment)
        self.f = open(self.path, "w", encoding="utf-8", newline="\n", buffering=1 << 20)
        self.bytes = self.lines = 0

    def add(self, lines):
        # lines: list of str without "\n"
        s = "\n".join(lines)
        s += "\n"
        self.parts.append(s)
        self.pending += len(s)
        self.lines += len(lines)
        if self.pending >= BLOCK:
            self.flush()

    def flush(self):
        if self.parts:
            data = "".join(self.parts)
            self.f.write(data)
            self.bytes += len(data.encode("utf-8")) if not data.isascii() else len(data)
            self.parts = []
            self.pending = 0

    def position(self):
        """(next 1-based line, byte offset of the next line)."""
        self.flush()
        return self.lines + 1, self.bytes

    def close(self):
        self.flush()
        self.f.close()


def megatron_line(clock, it, total_iters, loss, gnorm, jitter):
    return ("[%s] iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration (ms): "
            "%.1f | throughput per GPU (TFLOP/s/GPU): %.1f | learning rate: %.6E | global batch size: "
            "  128 | lm loss: %.6E | loss scale: 1.0 | grad norm: %.3f | number of skipped iterations: "
            "  0 | number of nan iterations:   0 |"
            % (clock.iso, it, total_iters, it * 128, ITER_S * 1000 + jitter,
               405.0 + (it % 17) / 10.0, 3e-4 * (1 - it / (4.0 * total_iters)), loss, gnorm))


class Job:
    def __init__(self, args):
        self.args = args
        self.world = args.hosts * args.gpus_per_host
        self.gph = args.gpus_per_host
        # Which rank loses its GPU and which one hits an OOM.
        rng = random.Random(args.seed * 7919 + 1)
        self.bad_rank = rng.randrange(self.world)
        self.oom_rank = (self.bad_rank + self.gph + 3) % self.world
        self.step_rank = self.world - 1  # Megatron logs from the last rank
        self.hf_rank = 0
        self.failures = not args.no_failures

    def estimate_duration(self, per_rank_bytes):
        # Average line length from a sample vocabulary, to turn a size into
        # a run length.
        r = Rank(random.Random(1), 1, self.world, self.gph, self.args.channels)
        sample = ([len(r.prefix) + len(x) for x in r.nccl] * 5 +
                  [len(r.prefix) + 23 + len(x) for x in r.py] * 4)
        avg = sum(sample) / len(sample) + 1
        return max(120.0, per_rank_bytes / (avg * LINES_PER_SEC))


def rank_lines_for_second(rng, r, clock, n, kinds):
    """n ordinary lines of rank r within clock's second (ms ascending)."""
    out = []
    ms = sorted(rng.choices(MS, k=n))
    pre = r.prefix
    iso = clock.iso
    for i, k in enumerate(kinds):
        if k >= 100:
            sev, body = r.dense_glog
            out.append(pre + "[" + sev + clock.glog + "." + ms[i] + MS[rng.getrandbits(9) % 1000] + body)
        elif k < 50:
            out.append(pre + r.nccl[rng.getrandbits(8)])
        elif k < 95:
            out.append(pre + iso + "," + ms[i] + r.py[rng.getrandbits(8)])
        else:
            sev, body = r.glog_steady[k % 3]
            out.append(pre + "[" + sev + clock.glog + "." + ms[i] + MS[rng.getrandbits(9) % 1000] + body)
    return out


def init_lines(rng, r, clock, with_hf, world):
    out = []
    for sev, body in r.glog:
        out.append(r.prefix + "[" + sev + clock.glog + ".%03d%03d" % (rng.randrange(1000), rng.randrange(1000)) + body)
    out += [r.prefix + x for x in r.init]
    if with_hf:
        for head, body in r.hf_init:
            out.append(r.prefix + head + clock.iso + ",%03d" % rng.randrange(1000) + body)
    out.append(r.prefix + clock.iso + ",%03d" % rng.randrange(1000) +
               " - INFO - train.py:88 - rank %d on %s cuda:%d ready, world size %d" % (r.rank, r.host, r.local, world))
    return out


def watchdog_lines(r, clock, seq, us):
    p = r.prefix + "[E" + clock.glog + ".%06d " % us + "%d " % r.pid
    return [
        p + "ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, Timeout(ms)=600000) "
            "ran for 600%03d milliseconds before timing out." % (r.rank, seq, us % 1000),
        p + "ProcessGroupNCCL.cpp:1785] [PG 0 Rank %d] Exception (either an error or timeout) detected "
            "by watchdog at work: %d, last enqueued NCCL work: %d, last completed NCCL work: %d."
            % (r.rank, seq, seq, seq - 1),
        p + "ProcessGroupNCCL.cpp:630] [Rank %d] Some NCCL operations have failed or timed out. Due to "
            "the asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
            "corrupted/incomplete data." % r.rank,
        p + "ProcessGroupNCCL.cpp:636] [Rank %d] To avoid data inconsistency, we are taking the entire "
            "process down." % r.rank,
    ]


def oom_lines(r, clock, ms, step):
    p = r.prefix
    t = clock.iso + "," + ms
    return [
        p + t + " - ERROR - train.py:391 - evaluation step %d failed, skipping batch" % step,
        p + "Traceback (most recent call last):",
        p + '  File "/workspace/megatron/training/training.py", line 1243, in evaluate',
        p + "    loss_dicts = forward_backward_func(",
        p + '  File "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", line 1553, in _call_impl',
        p + "    return forward_call(*args, **kwargs)",
        p + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU %d has a total "
            "capacity of 79.15 GiB of which 1.06 GiB is free. Including non-PyTorch memory, this process "
            "has 78.08 GiB memory in use. Of the allocated memory 74.11 GiB is allocated by PyTorch, and "
            "2.47 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large "
            "try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
            "documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html"
            "#environment-variables)" % r.local,
    ]


def gen_rank_stream(job, ranks, stream, duration, seed, events, fname):
    """Writes ordinary lines of `ranks` (one rank: a per-rank file; all: the
    interleaved job output) from START to START+duration, then the end of
    the run (watchdogs when failures are on)."""
    args = job.args
    rng = random.Random(seed)
    clock = Clock()
    single = len(ranks) > 1
    t_end = START + int(duration)
    # Init burst in the first seconds.
    clock.set(START)
    for r in ranks:
        stream.add(init_lines(rng, r, clock, r.rank == job.hf_rank, job.world))
    step_r = next((r for r in ranks if r.rank == job.step_rank), None)
    hf_r = next((r for r in ranks if r.rank == job.hf_rank), None)
    oom_r = next((r for r in ranks if r.rank == job.oom_rank), None)
    total_iters = 100000
    it = 0
    next_iter_t = START + 5.0
    loss = 11.0
    oom_at = START + int(duration * 0.45)
    per_sec = LINES_PER_SEC * len(ranks)
    # Integer line counts per second drawn around the mean.
    lo = max(1, int(per_sec * 0.5))
    hi = max(lo + 1, int(per_sec * 1.5))
    seq = 0
    silent = set()
    for sec in range(START + 1, t_end):
        clock.set(sec)
        if stream.rotate_every and sec - START >= stream.rotate_every * (stream.segment + 1):
            stream.rotate()
            fname = stream.fname
        n = rng.randint(lo, hi)
        kinds = [rng.getrandbits(7) % 100 for _ in range(n)]
        if args.dense:
            # Kind 100: the dense context line, a fraction `dense` of lines.
            kinds = [100 if rng.random() < args.dense else k for k in kinds]
        if single:
            ms = sorted(rng.choices(MS, k=n))
            lines = []
            iso = clock.iso
            for i in range(n):
                r = ranks[rng.randrange(len(ranks))]
                k = kinds[i]
                if k >= 100:
                    sev, body = r.dense_glog
                    lines.append(r.prefix + "[" + sev + clock.glog + "." + ms[i] + "%03d" % (i * 7 % 1000) + body)
                elif k < 50:
                    lines.append(r.prefix + r.nccl[rng.getrandbits(8)])
                elif k < 95:
                    lines.append(r.prefix + iso + "," + ms[i] + r.py[rng.getrandbits(8)])
                else:
                    sev, body = r.glog_steady[k % 3]
                    lines.append(r.prefix + "[" + sev + clock.glog + "." + ms[i] + "%03d" % (k * 7 % 1000) + body)
        else:
            lines = rank_lines_for_second(rng, ranks[0], clock, n, kinds)
        # Progress lines.
        while step_r is not None and next_iter_t < sec + 1:
            it += 1
            loss = loss * 0.99993 + (rng.random() - 0.5) * 0.004
            if loss < 1.6:
                loss = 1.6 + rng.random() * 0.01
            lines.append(step_r.prefix + megatron_line(clock, it, total_iters, loss,
                                                       0.6 + rng.random() * 0.3,
                                                       rng.randrange(40) / 10.0))
            if hf_r is not None and it % 10 == 0:
                lines.append(hf_r.prefix + "{'loss': %.4f, 'grad_norm': %.4f, 'learning_rate': %.2e, "
                             "'epoch': %.2f}" % (loss, 0.6 + rng.random() * 0.3,
                                                 3e-4 * (1 - it / 400000.0), it / 25000.0))
            next_iter_t += ITER_S
        stream.add(lines)
        if job.failures and oom_r is not None and sec == oom_at:
            line_no, off = stream.position()
            block = oom_lines(oom_r, clock, "517", it)
            stream.add(block)
            events.append({"kind": "cuda-oom", "file": fname, "rank": oom_r.rank, "host": oom_r.host,
                           "line": line_no + len(block) - 1,
                           "offset": off + sum(len(x) + 1 for x in block[:-1]),
                           "time": clock.iso, "text": block[-1]})
    seq = 180000 + it * 3
    if not job.failures:
        stream.close()
        return
    # The failing GPU: its rank goes silent at t_end; the others time out 600 s
    # later.
    clock.set(t_end + 600)
    for r in ranks:
        if r.rank == job.bad_rank:
            continue
        us = rng.randrange(1000000)
        line_no, off = stream.position()
        block = watchdog_lines(r, clock, seq, us)
        stream.add(block)
        events.append({"kind": "nccl-watchdog-timeout", "file": fname, "rank": r.rank, "host": r.host,
                       "line": line_no, "offset": off, "time": clock.iso, "text": block[0]})
    stream.close()


def kern_benign(host, local_count, rng):
    out = []
    for l in range(local_count):
        b = BUSES[l % len(BUSES)]
        out.append("NVRM: GPU at PCI:0000:%s:00: GPU-%08x-%04x-%04x-%04x-%012x"
                   % (b, rng.randrange(1 << 32), rng.randrange(1 << 16), rng.randrange(1 << 16),
                      rng.randrange(1 << 16), rng.randrange(1 << 48)))
        out.append("NVRM: GPU Board Serial Number: 16524230%05d" % rng.randrange(100000))
        out.append("nvidia 0000:%s:00.0: enabling device (0000 -> 0002)" % b)
    out += [
        "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024",
        "nvidia-nvlink: Nvlink Core is being initialized, major device number 511",
        "nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms  550.90.07",
        "nvidia-nvswitch0: open (major=510)",
        "nvidia_uvm: module uses symbols nvUvmInterfaceDisableAccessCntr from proprietary module nvidia, inheriting taint.",
        "mlx5_core 0000:0c:00.0: firmware version: 28.39.1002",
        "mlx5_core 0000:0c:00.0: Rate limit: 127 rates are supported, range: 0Mbps to 97656Mbps",
        "mlx5_core 0000:0c:00.0: E-Switch: Total vports 2, per vport: max uc(128) max mc(2048)",
        "mlx5_core 0000:0c:00.0: Port module event: module 0, Cable plugged",
        "mlx5_core 0000:0c:00.0 ib0: Link up",
        "IPv6: ADDRCONF(NETDEV_CHANGE): ib0: link becomes ready",
        "EXT4-fs (nvme0n1p2): mounted filesystem with ordered data mode. Quota mode: none.",
        "systemd[1]: Started nvidia-persistenced.service - NVIDIA Persistence Daemon.",
        "systemd[1]: Started nvidia-fabricmanager.service - NVIDIA fabric manager service.",
        "nvidia-peermem: nv_mem_client_init: peer memory client registered",
    ]
    steady = [
        "audit: type=1400 audit(17621%05d.123:%d): apparmor=\"STATUS\" operation=\"profile_replace\" "
        "profile=\"unconfined\" name=\"docker-default\" pid=%d comm=\"apparmor_parser\""
        % (rng.randrange(100000), rng.randrange(10000), rng.randrange(90000)),
        "perf: interrupt took too long (2503 > 2500), lowering kernel.perf_event_max_sample_rate to 79750",
        "docker0: port 1(veth3a1b2c4) entered forwarding state",
        "IPv6: ADDRCONF(NETDEV_CHANGE): veth3a1b2c4: link becomes ready",
        "xfs filesystem being remounted at /tmp supports timestamps until 2038 (0x7fffffff)",
        "nvme nvme0: I/O 512 QID 12 timeout, completion polled",
        "TCP: request_sock_TCP: Possible SYN flooding on port 29500. Sending cookies.  Check SNMP counters.",
        "NFS: state manager: check lease failed on NFSv4 server 10.0.0.2 with error 13",
        "Lustre: lustre-OST0004-osc-ffff8f2a: Connection restored to 10.0.0.14@o2ib (at 10.0.0.14@o2ib)",
        "mlx5_core 0000:0c:00.0: mlx5_fw_tracer_handle_traces:740:(pid 412): FWTracer: Events were lost",
    ]
    return out, steady


def gen_kern(job, host, stream, duration, seed, events, fname):
    rng = random.Random(seed)
    clock = Clock()
    hostname = "node%03d" % host
    uptime0 = 250000 + 3600 * host + rng.randrange(3600)  # seconds since boot at START
    boot, steady = kern_benign(hostname, job.gph, rng)

    def line(sec, frac_us, msg):
        clock.set(sec)
        mono = sec - START + uptime0
        return "%s %s kernel: [%d.%06d] %s" % (clock.syslog, hostname, mono, frac_us, msg)

    stream.add([line(START - 30, rng.randrange(1000000), m) for m in boot])
    t = START
    t_end = START + int(duration)
    while True:
        t += 30 + rng.randrange(600)
        if t >= t_end:
            break
        stream.add([line(t, rng.randrange(1000000), steady[rng.randrange(len(steady))])])
    if job.failures and job.bad_rank // job.gph == host:
        local = job.bad_rank % job.gph
        b = BUSES[local % len(BUSES)]
        line_no, off = stream.position()
        block = [
            line(t_end, 118214, "NVRM: Xid (PCI:0000:%s:00): 79, pid='<unknown>', name=<unknown>, GPU has "
                                "fallen off the bus." % b),
            line(t_end, 118219, "NVRM: GPU 0000:%s:00.0: GPU has fallen off the bus." % b),
            line(t_end, 118232, "NVRM: A GPU crash dump has been created. If possible, please run"),
            line(t_end, 118233, "NVRM: nvidia-bug-report.sh as root to collect this data before"),
            line(t_end, 118234, "NVRM: the NVIDIA kernel module is unloaded."),
        ]
        stream.add(block)
        clock.set(t_end)
        events.append({"kind": "xid-79", "file": fname, "rank": job.bad_rank, "host": hostname,
                       "gpu": "0000:%s:00.0" % b, "line": line_no, "offset": off, "time": clock.iso,
                       "text": block[0]})
        events.append({"kind": "xid-79-fallen-off-bus", "file": fname, "rank": job.bad_rank,
                       "host": hostname, "line": line_no + 1, "offset": off + len(block[0]) + 1,
                       "time": clock.iso, "text": block[1]})
    stream.close()


def gen_launcher(job, host, stream, duration, seed, events, fname):
    rng = random.Random(seed)
    clock = Clock()
    clock.set(START - 5)
    p = " - INFO - torch.distributed.elastic.agent.server.api - "
    lines = [
        clock.iso + ",%03d" % rng.randrange(1000) + p + "[default] starting workers for entrypoint: python3",
        clock.iso + ",%03d" % rng.randrange(1000) + p + "[default] Rendezvous complete for workers. Result:",
        "  restart_count=0",
        "  master_addr=node000",
        "  master_port=29500",
        "  group_rank=%d" % host,
        "  group_world_size=%d" % job.args.hosts,
        "  local_ranks=%s" % list(range(job.gph)),
        "  role_ranks=%s" % list(range(host * job.gph, (host + 1) * job.gph)),
        clock.iso + ",%03d" % rng.randrange(1000) + p + "[default] Starting worker group",
    ]
    stream.add(lines)
    if job.failures:
        clock.set(START + int(duration) + 610)
        t = clock.iso + ",%03d" % rng.randrange(1000)
        bad_local = job.bad_rank % job.gph if job.bad_rank // job.gph == host else 0
        line_no, off = stream.position()
        block = [
            t + " - WARNING - torch.distributed.elastic.multiprocessing.api - Sending process %d closing "
                "signal SIGTERM" % (41000 + 97 * ((bad_local + 1) % job.gph) + 13 * host),
            t + " - ERROR - torch.distributed.elastic.multiprocessing.api - failed (exitcode: -6) "
                "local_rank: %d (pid: %d) of binary: /usr/bin/python3" % (bad_local, 41000 + 97 * bad_local + 13 * host),
            "Traceback (most recent call last):",
            '  File "/usr/local/bin/torchrun", line 8, in <module>',
            "    sys.exit(main())",
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        ]
        stream.add(block)
        events.append({"kind": "torch-child-failed", "file": fname, "host": "node%03d" % host,
                       "line": line_no + len(block) - 1,
                       "offset": off + sum(len(x) + 1 for x in block[:-1]), "time": clock.iso,
                       "text": block[-1]})
    stream.close()


def run_file(spec):
    """One output file; runs in a worker process."""
    args, kind, idx, path, duration, fname = spec
    job = Job(args)
    events = []
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    st = Stream(path, fname)
    seed = args.seed * 1000003 + idx * 7 + {"rank": 0, "kern": 1, "launcher": 2, "single": 3}[kind]
    if kind == "rank" and args.files_per_rank > 1:
        # A rank's output rotated into segments of equal run time.
        st.rotate_every = duration / args.files_per_rank
    if kind == "rank":
        r = Rank(random.Random(seed ^ 0x5EED), idx, job.world, job.gph, args.channels)
        gen_rank_stream(job, [r], st, duration, seed, events, fname)
    elif kind == "single":
        ranks = [Rank(random.Random(seed ^ (0x5EED + k)), k, job.world, job.gph, args.channels)
                 for k in range(job.world)]
        gen_rank_stream(job, ranks, st, duration, seed, events, fname)
    elif kind == "kern":
        gen_kern(job, idx, st, duration, seed, events, fname)
    else:
        gen_launcher(job, idx, st, duration, seed, events, fname)
    return st.closed_files + [{"file": st.fname, "bytes": st.bytes, "lines": st.lines}], events


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="output directory (per-host dirs, per-rank files)")
    ap.add_argument("--single", help="write one big file (interleaved job output) instead")
    ap.add_argument("--size", default="64M", help="total size, e.g. 20M, 2G (approximate, +-3%%)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hosts", type=int, default=8)
    ap.add_argument("--gpus-per-host", type=int, default=8)
    ap.add_argument("--channels", type=int, default=32, help="NCCL channels in the init burst")
    ap.add_argument("--no-failures", action="store_true", help="ordinary lines only")
    ap.add_argument("--dense", type=float, default=0.0,
                    help="fraction of ordinary lines that are the c10d `ProcessGroupNCCL initialization "
                         "options` line (a context signal): a dense log, e.g. 0.17 for 1 line in 6")
    ap.add_argument("--files-per-rank", type=int, default=1,
                    help="rotate each rank's output into N files NODE/rank-K/part-NNN.log (a many-file "
                         "archive: --hosts 128 --files-per-rank 20 gives 1,024 ranks in 20,736 files)")
    ap.add_argument("--manifest", help="manifest path (default OUT.manifest.json / FILE.manifest.json)")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    args = ap.parse_args(argv)
    if not args.out and not args.single:
        ap.error("give --out DIR or --single FILE")
    total = parse_size(args.size)
    job = Job(args)
    specs = []
    if args.single:
        # ~99.9% of a single file is rank output.
        duration = job.estimate_duration(total / job.world)
        specs.append((args, "single", 0, args.single, duration, os.path.basename(args.single)))
        manifest_path = args.single + ".manifest.json"
    else:
        kern_share = 0.0  # kernel and launcher logs are tiny
        duration = job.estimate_duration(total * (1 - kern_share) / job.world)
        for r in range(job.world):
            h = r // job.gph
            fname = "node%03d/rank-%d.log" % (h, r)
            if args.files_per_rank > 1:
                fname = "node%03d/rank-%d/part-000.log" % (h, r)
            specs.append((args, "rank", r, os.path.join(args.out, fname), duration, fname))
        for h in range(args.hosts):
            for kind, base in (("kern", "kern.log"), ("launcher", "launcher.log")):
                fname = "node%03d/%s" % (h, base)
                specs.append((args, kind, h, os.path.join(args.out, fname), duration, fname))
        # Next to the directory, not in it: a scan of OUT must see only logs.
        manifest_path = os.path.normpath(args.out) + ".manifest.json"
    t0 = time.time()
    if args.jobs > 1 and len(specs) > 1:
        import multiprocessing as mp
        with mp.get_context("fork").Pool(args.jobs) as pool:
            results = pool.map(run_file, specs, chunksize=1)
    else:
        results = [run_file(s) for s in specs]
    files = [f for r in results for f in r[0]]
    events = [e for r in results for e in r[1]]
    events.sort(key=lambda e: (e["time"], e["file"], e["line"]))
    nbytes = sum(f["bytes"] for f in files)
    manifest = {
        "generator": "bench/gen_logs.py",
        "args": {k: v for k, v in vars(args).items() if k not in ("jobs", "manifest")},
        "world_size": job.world,
        "failing_rank": job.bad_rank if job.failures else None,
        "oom_rank": job.oom_rank if job.failures else None,
        "start": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(START)),
        "bytes": nbytes,
        "lines": sum(f["lines"] for f in files),
        "files": files,
        "events": events,
    }
    if args.manifest:
        manifest_path = args.manifest
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)
    dt = time.time() - t0
    print("wrote %d files, %d bytes, %d lines in %.1f s (%.0f MB/s); manifest %s"
          % (len(files), nbytes, manifest["lines"], dt, nbytes / 1e6 / max(dt, 1e-9), manifest_path),
          file=sys.stderr)


if __name__ == "__main__":
    main()
