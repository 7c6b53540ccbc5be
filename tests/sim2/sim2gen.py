"""A second, independent simulator of whole multi-host GPU job archives.

Written from public message formats (NVIDIA driver Xid lines, the kernel's
OOM killer of several kernel versions, NCCL WARN/INFO, PyTorch's
ProcessGroupNCCL watchdog of several versions, torchrun's elastic agent, the
DeepSpeed launcher, Slurm srun/slurmstepd, Kubernetes CRI pod logs and
kubectl output, cloud termination notices, NFS client and mlx5 messages),
not from faultline's own rules. Each archive is one job: ranks on hosts of 8
GPUs, each host with its own clock skew, one incident kind, one launcher
layout and one kernel-log format, and a truth.json naming what happened.

    python3 tests/sim2/sim2gen.py OUT_DIR KIND LAYOUT KFORMAT RANKS SEED [--no-skew]

Standard library only; the same arguments always write the same bytes.
"""
import datetime
import hashlib
import json
import os
import random
import sys

KINDS = ["xid79", "ecc", "nvlink", "host_oom", "cuda_oom", "ib_down", "nfs",
         "preempt", "hang", "straggler", "segfault", "healthy"]
LAYOUTS = ["torchrun", "srun", "k8s", "deepspeed", "mpirun", "journald", "k8s_pods"]
KFORMATS = ["dmesg", "dmesg_t", "rfc3164", "rfc5424", "journal_iso", "journal_json"]

# Acceptable catalog references per kind: titles as the catalog spells them
# (rulesets/references.json and the references the ruleset's rules name).
STRAGGLER_REFS = ["Straggler / Slow-Rank Detection",
                  "Python Garbage Collection Triggering Periodic Training Stragglers in Distributed LLM Training",
                  "Sequence Length Imbalance Causing Distributed Training Stragglers",
                  "PyTorch Caching Allocator Memory Fragmentation Causing False Straggler Slowdown"]
REFS = {
    "xid79": ["A worker loses its GPU mid-run and the job hangs until a collective times out"],
    "ecc": ["Uncorrectable GPU memory error (Xid 48/94/95/140) kills the rank that owns the GPU"],
    "nvlink": ["NVLink error takes down a GPU's links (Xid 74, NVLink5 Xid 144-150)"],
    "host_oom": ["OOM Killed Mid-Step", "Cgroup Memory Limit"],
    "cuda_oom": ["CUDA Out of Memory on One Rank"],
    "ib_down": ["Network Partition"],
    "nfs": ["NFS Mount Failure"],
    "preempt": ["Job Preemption / Spot Instance Termination", "Spot Instance Preemption"],
    "hang": ["Silent Hang / Unresponsive Training", "Training Stuck No Progress"],
    "straggler": STRAGGLER_REFS,
    "segfault": ["Unrecognised fatal error"],
    "healthy": [],
}

GPUS_PER_HOST = 8
PCI_BUSES = ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"]
# One HCA per two GPUs: local rank L sends through NET/IB/(L // 2), the
# HCA named HCAS[L // 2] on bus HCA_BUSES[L // 2].
HCAS = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5"]
HCA_BUSES = ["1b", "3c", "9c", "bc"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


# ---------------------------------------------------------------- the job

class Job:
    """Hosts, ranks, pids, clocks and the incident's place and time."""

    def __init__(self, kind, layout, kformat, ranks, seed, skew=True):
        self.kind, self.layout, self.kformat, self.nranks, self.seed = kind, layout, kformat, ranks, seed
        self.rng = random.Random(f"{kind}/{layout}/{kformat}/{ranks}/{seed}")
        r = self.rng
        nhosts = max(1, ranks // GPUS_PER_HOST)
        style = r.randrange(4)
        if style == 0:
            self.hosts = [f"gpu-{r.choice('abcd')}{i // 16 + 1:02d}-{i % 16 + 1:03d}" for i in range(nhosts)]
        elif style == 1:
            self.hosts = [f"node{i + 17:04d}" for i in range(nhosts)]
        elif style == 2:
            self.hosts = [f"ip-10-{r.randrange(1, 200)}-{i // 200}-{i % 200 + 10}" for i in range(nhosts)]
        else:
            self.hosts = [f"h100-{r.choice(['sjc', 'iad', 'ams'])}-{i + 1:04d}" for i in range(nhosts)]
        self.hosts = list(dict.fromkeys(self.hosts))
        while len(self.hosts) < nhosts:  # a random letter may repeat a name
            self.hosts.append(f"spare{len(self.hosts):04d}")
        self.ip = {h: f"10.{20 + i // 250}.{i % 250}.{r.randrange(2, 250)}" for i, h in enumerate(self.hosts)}
        self.skew = {h: r.uniform(-75.0, 75.0) for h in self.hosts}
        if not skew:  # drawn all the same: the other draws stay as they were
            self.skew = {h: 0.0 for h in self.hosts}
        self.boot = {h: r.uniform(3600.0, 86400.0 * 20) for h in self.hosts}  # uptime at job start
        self.t0 = 1.70e9 + r.randrange(0, 5 * 10 ** 7)
        self.base_pid = {h: r.randrange(3000, 400000) for h in self.hosts}
        self.step_time = r.uniform(1.2, 4.5)
        self.steps = r.randrange(30, 46)
        self.torch = r.choice(["1.13", "2.1", "2.4", "2.6"])
        self.nccl = {"1.13": "2.14.3", "2.1": "2.18.1", "2.4": "2.20.5", "2.6": "2.21.5"}[self.torch]
        # A pdsh stream says the host, not the rank: its trainers must print the rank.
        self.progress = r.choice(["torchtitan", "deepspeed", "keyvalue", "jsonl"] if layout == "deepspeed" else
                                 ["megatron", "hf_tqdm", "torchtitan", "deepspeed", "keyvalue", "jsonl", "lightning"])
        self.kernel_gen = r.choice(["4.15", "5.15", "6.8"])
        self.run_id = f"{r.randrange(16 ** 8):08x}"
        self.jobid = r.randrange(100000, 9999999)
        self.victim = r.randrange(ranks)
        self.fail_step = r.randrange(self.steps // 2, self.steps - 4)
        self.slow = r.uniform(1.15, 1.40)
        # Draws added later come from their own stream, so that the archives
        # written before them stay as they were.
        r2 = random.Random(f"hca/{kind}/{layout}/{kformat}/{ranks}/{seed}")
        # A newer NCCL than the torch wheel pins (an NGC container, a pip
        # nvidia-nccl-cu12): 2.27 prints each HCA's pciPath at INFO.
        if self.torch in ("2.4", "2.6") and r2.random() < 0.5:
            self.nccl = "2.27.3"
        if kind == "ib_down":
            # The HCA's first rank: the one the report names among its two.
            self.victim -= self.local(self.victim) % 2
        # NCCL_IB_TIMEOUT=25: the HCA's ranks retry for longer than the
        # watchdog waits, and print no completion error of their own.
        self.quiet_ib = kind == "ib_down" and self.nccl == "2.27.3" and r2.random() < 0.5
        # k8s_pods: several pods per node, each its own torchrun of rpp
        # workers, its own pid namespace and its GPUs seen as 0..rpp-1.
        self.rpp, self.victim2, self.report_delay = GPUS_PER_HOST, None, {}
        if layout == "k8s_pods":
            r3 = random.Random(f"pods/{kind}/{kformat}/{ranks}/{seed}")
            self.rpp = r3.choice([2, 4])
            self.kernel_gen = r3.choice(["5.15", "6.8"])  # task_memcg names the pod
            if kind == "host_oom" and ranks >= GPUS_PER_HOST:
                # The node stays short of memory: the kernel kills again, a
                # worker of another pod; whose agent reports first is chance.
                self.victim2 = self.victim - self.local(self.victim) + (self.local(self.victim) + self.rpp) % GPUS_PER_HOST
            self.report_delay = {g: r3.uniform(0.3, 5.0) for g in range(ranks // self.rpp + 1)}

    def host_of(self, rank):
        return self.hosts[rank // GPUS_PER_HOST]

    def pid_of(self, rank):
        if self.layout == "k8s_pods":  # the container's own pid namespace
            return 64 + self.lr(rank)
        return self.base_pid[self.host_of(rank)] + 7 + rank % GPUS_PER_HOST

    def host_pid_of(self, rank):
        """The pid the host's kernel knows the rank by: a container has its
        own pid namespace, so under Kubernetes it is not the pid the rank
        prints (NCCL, torchrun)."""
        base = self.base_pid[self.host_of(rank)] + 7 + rank % GPUS_PER_HOST
        return base + (1_300_000 if self.layout in ("k8s", "k8s_pods") else 0)

    def agent_pid(self, host):
        return self.base_pid[host]

    def local(self, rank):
        return rank % GPUS_PER_HOST

    def lr(self, rank):
        """The rank's local rank under its launcher (torchrun's local_rank,
        its CUDA device index): a pod's, else its host's."""
        return rank % self.rpp

    def group_of(self, rank):
        """The launcher group (a torchrun agent: a host, or a pod) of rank."""
        return rank // self.rpp

    def ranks_of_group(self, g):
        return list(range(g * self.rpp, min(self.nranks, (g + 1) * self.rpp)))

    def ranks_on(self, host):
        i = self.hosts.index(host)
        return list(range(i * GPUS_PER_HOST, min(self.nranks, (i + 1) * GPUS_PER_HOST)))

    def pci(self, rank):
        return f"0000:{PCI_BUSES[self.local(rank)]}:00"

    def clock(self, host, t):
        """What the host's clock reads at true time t."""
        return t + self.skew[host]


# ------------------------------------------------------------- timestamps

def _dt(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc)


def iso(t, frac=6):
    d = _dt(t)
    s = d.strftime("%Y-%m-%dT%H:%M:%S")
    return s + (f".{d.microsecond:06d}"[: frac + 1] if frac else "")


def glog_stamp(t):  # I0321 02:07:08.408271 (glog / c10 logging)
    d = _dt(t)
    return f"{d.month:02d}{d.day:02d} {d.strftime('%H:%M:%S')}.{d.microsecond:06d}"


def py_stamp(t):  # 2024-05-08 08:47:31,261 (Python logging)
    d = _dt(t)
    return d.strftime("%Y-%m-%d %H:%M:%S") + f",{d.microsecond // 1000:03d}"


def bsd_stamp(t):  # Aug 30 11:43:09 (RFC 3164)
    d = _dt(t)
    return f"{MONTHS[d.month - 1]} {d.day:2d} {d.strftime('%H:%M:%S')}"


def ctime_stamp(t):  # Fri Aug 30 11:43:09 2024 (dmesg -T)
    d = _dt(t)
    return f"{DAYS[d.weekday()]} {MONTHS[d.month - 1]} {d.day:2d} {d.strftime('%H:%M:%S')} {d.year}"


# ------------------------------------------------------------ kernel logs

def kernel_line(job, host, t, msg, fmt=None, ident="kernel", pid=None):
    """One kernel (or daemon, with ident) line of host in the job's format."""
    fmt = fmt or job.kformat
    local = job.clock(host, t)
    up = job.boot[host] + (t - job.t0)
    tag = ident if pid is None else f"{ident}[{pid}]"
    if ident != "kernel" and fmt in ("dmesg", "dmesg_t"):
        fmt = "rfc3164"  # daemons are not in the kernel ring buffer
    if fmt == "dmesg":
        return f"[{up:12.6f}] {msg}"
    if fmt == "dmesg_t":
        return f"[{ctime_stamp(local)}] {msg}"
    if fmt == "rfc3164":
        body = f"[{up:12.6f}] {msg}" if ident == "kernel" else msg
        return f"{bsd_stamp(local)} {host} {tag}: {body}"
    if fmt == "rfc5424":
        return f"<{3 if ident == 'kernel' else 14}>1 {iso(local)}+00:00 {host} {ident} {pid or '-'} - - {msg}"
    if fmt == "journal_iso":
        d = _dt(local)
        return f"{d.strftime('%Y-%m-%dT%H:%M:%S')}+0000 {host} {tag}: {msg}"
    rec = {"__REALTIME_TIMESTAMP": str(int(local * 1e6)), "_HOSTNAME": host,
           "SYSLOG_IDENTIFIER": ident, "_TRANSPORT": "kernel" if ident == "kernel" else "syslog",
           "PRIORITY": "3" if ident == "kernel" else "6", "MESSAGE": msg}
    if ident == "kernel":
        rec["_SOURCE_MONOTONIC_TIMESTAMP"] = str(int(up * 1e6))
    if pid is not None:
        rec["_PID"] = str(pid)
    return json.dumps(rec, sort_keys=True)


KERNEL_FILES = {"dmesg": "dmesg.txt", "dmesg_t": "dmesg-T.txt", "rfc3164": "kern.log",
                "rfc5424": "syslog-5424.log", "journal_iso": "journal-k.txt", "journal_json": "journal-k.json"}


def benign_kernel(job, host):
    """Boot-time and routine lines every host carries."""
    t = job.t0 - 300
    lines = [(t, f"mlx5_core 0000:{PCI_BUSES[3]}:00.0 mlx5_3: Port: 1 Link ACTIVE"),
             (t + 1, "nvidia-nvswitch: Probing device 0000:05:00.0, Vendor Id = 0x10de, Device Id = 0x22a3, Class = 0x68000"),
             (t + 2, "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023"),
             (t + 40, "EXT4-fs (nvme0n1p2): re-mounted. Quota mode: none."),
             (job.t0 + 5, "nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping further processing"),
             (job.t0 + 9, "IPv6: ADDRCONF(NETDEV_CHANGE): ib0: link becomes ready")]
    return lines


# ------------------------------------------------- what each rank prints

def nccl_prefix(job, rank, tid_off=0):
    h = job.host_of(rank)
    return f"{h}:{job.pid_of(rank)}:{job.pid_of(rank) + tid_off} [{job.lr(rank)}]"


def startup_lines(job, rank):
    p = nccl_prefix(job, rank)
    out = []
    if rank == 0:
        out.append(f"{p} NCCL INFO NCCL version {job.nccl}+cuda12.2")
    out.append(f"{p} NCCL INFO Bootstrap : Using eth0:{job.ip[job.host_of(rank)]}<0>")
    if job.nccl == "2.27.3":  # net_ib/init.cc's per-device line
        for d, (name, bus) in enumerate(zip(HCAS, HCA_BUSES)):
            out.append(f"{p} NCCL INFO NET/IB: [{d}] {name}:uverbs{name[5:]}:1/IB provider=Mlx5 speed=400000 context=0x55d4c{d}a1b2c0 "
                       f"pciPath=/sys/devices/pci0000:{bus[0]}0/0000:{bus[0]}0:01.0/0000:{bus}:00.0 ar=1 oooRqSize=0")
    out.append(f"{p} NCCL INFO NET/IB : Using " + " ".join(f"[{d}]{n}:1/IB" for d, n in enumerate(HCAS)) + f" ; OOB eth0:{job.ip[job.host_of(rank)]}<0>")
    out.append(f"{p} NCCL INFO comm 0x55d4c8a0 rank {rank} nranks {job.nranks} cudaDev {job.lr(rank)} nvmlDev {job.lr(rank)} busId {PCI_BUSES[job.local(rank)]}000 commId 0x{job.run_id}f00d - Init COMPLETE")
    if job.nranks > GPUS_PER_HOST:  # the ring's hops between hosts
        nxt, prv = (rank + GPUS_PER_HOST) % job.nranks, (rank - GPUS_PER_HOST) % job.nranks
        net, l = job.local(rank) // 2, job.lr(rank)
        gdr = "/GDRDMA" if job.nccl != "2.14.3" else ""
        for c in range(2):
            out.append(f"{nccl_prefix(job, rank, 2)} NCCL INFO Channel {c:02d}/0 : {rank}[{l}] -> {nxt}[{l}] [send] via NET/IB/{net}{gdr}")
            out.append(f"{nccl_prefix(job, rank, 2)} NCCL INFO Channel {c:02d}/0 : {prv}[{l}] -> {rank}[{l}] [receive] via NET/IB/{net}{gdr}")
    return out


def progress_line(job, rank, step, t, dt_step):
    """One step line in the job's trainer format (host clock t)."""
    loss = 9.5 * (0.985 ** step) + 0.01 * ((rank * 7 + step) % 5)
    f = job.progress
    if f == "megatron":
        return (f" [{py_stamp(t)[:19]}] iteration {step:8d}/  500000 | consumed samples: {step * 1024:12d} | "
                f"elapsed time per iteration (ms): {dt_step * 1000:.1f} | learning rate: 1.500000E-04 | "
                f"global batch size:  1024 | lm loss: {loss:.6E} | loss scale: 1.0 | grad norm: 0.812 | "
                f"number of skipped iterations:   0 | number of nan iterations:   0 |")
    if f == "hf_tqdm":
        its = 1.0 / dt_step
        return f"{step * 100 // 500:3d}%|{'#' * (step // 50)}          | {step}/500 [{int(step * dt_step) // 60:02d}:{int(step * dt_step) % 60:02d}<10:00, {its:.2f}it/s]"
    if f == "torchtitan":
        tps = int(8192 / dt_step)
        return f"[titan] {py_stamp(t)} - root - INFO - [rank{rank}] step: {step:2d}  loss: {loss:7.4f}  memory: 61.20GiB(77.31%)  tps: {tps:,}  tflops: {tps * 0.0061:.2f}  mfu: {tps * 0.0006:.2f}%"
    if f == "deepspeed":  # the engine's log_dist step line, then its throughput timer
        sps = 64.0 / dt_step
        return (f"[{py_stamp(t)}] [INFO] [logging.py:96:log_dist] [Rank {rank}] step={step}, skipped=0, lr=[0.00015], mom=[(0.9, 0.95)]\n"
                f"[{py_stamp(t)}] [INFO] [timer.py:264:stop] epoch=0/micro_step={step}/global_step={step}, "
                f"RunningAvgSamplesPerSec={sps:.4f}, CurrSamplesPerSec={sps:.4f}, MemAllocated=14.2GB, MaxMemAllocated=31.8GB")
    if f == "keyvalue":
        return f"{iso(t, 3)} [train] rank={rank} step={step} loss={loss:.4f} step_time_ms={dt_step * 1000:.1f} tokens_per_s={int(4096 * 80 / dt_step)}"
    if f == "jsonl":
        return json.dumps({"ts": round(t, 3), "rank": rank, "step": step, "loss": round(loss, 4),
                           "step_time": round(dt_step, 4), "samples_per_sec": round(32 / dt_step, 2)})
    return f"Epoch 0:  {step * 100 // 500:2d}%|#         | {step}/500 [00:{int(step * dt_step) % 60:02d}<11:00, {1.0 / dt_step:.2f}it/s, v_num=0, train_loss={loss:.3f}]"


def watchdog_lines(job, rank, t, seq, timeout_ms=600000):
    """ProcessGroupNCCL's watchdog timeout in the job's torch version."""
    ran = timeout_ms + job.rng.randrange(5, 120)
    v = job.torch
    if v == "1.13":
        return [f"[E ProcessGroupNCCL.cpp:821] [Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, Timeout(ms)={timeout_ms}) ran for {ran} milliseconds before timing out.",
                "[E ProcessGroupNCCL.cpp:456] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
                "[E ProcessGroupNCCL.cpp:461] To avoid data inconsistency, we are taking the entire process down."]
    line = 607 if v == "2.1" else 632 if v == "2.4" else 616
    s = glog_stamp(t)
    return [f"[rank{rank}]:[E{s} ProcessGroupNCCL.cpp:{line}] [Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=131072000, NumelOut=131072000, Timeout(ms)={timeout_ms}) ran for {ran} milliseconds before timing out.",
            f"[rank{rank}]:[E{s} ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank {rank}] Exception (either an error or timeout) detected by watchdog at work: {seq}, last enqueued NCCL work: {seq + 2}, last completed NCCL work: {seq - 1}.",
            f"[rank{rank}]:[E{s} ProcessGroupNCCL.cpp:{line + 14}] [Rank {rank}] To avoid data inconsistency, we are taking the entire process down."]


def remote_error_lines(job, rank, peer_host):
    """What a healthy rank prints when a peer's process or link went away."""
    p = nccl_prefix(job, rank, 41)
    ver = job.nccl
    return [f"{p} transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer {job.ip[peer_host]}<{40000 + rank}> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:{job.ip[job.host_of(rank)]} remoteGids::ffff:{job.ip[peer_host]}",
            f"{p} NCCL INFO transport/net.cc:1302 -> 6",
            "Traceback (most recent call last):",
            '  File "/workspace/train.py", line 211, in <module>',
            "    loss.backward()",
            f"torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error, NCCL version {ver}",
            "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
            "Last error:",
            f"NET/IB : Got completion from peer {job.ip[peer_host]}<{40000 + rank}> with status=12 opcode=0 len=0 vendor err 129 (Recv)"]


def cuda_oom_lines(job, rank):
    r = job.rng
    tried = r.choice(["1.95 GiB", "768.00 MiB", "3.12 GiB"])
    d = job.lr(rank)
    tb = ["Traceback (most recent call last):", '  File "/workspace/train.py", line 198, in <module>',
          "    outputs = model(**batch)"]
    if job.torch == "1.13":
        return tb + [f"RuntimeError: CUDA out of memory. Tried to allocate {tried} (GPU {d}; 79.35 GiB total capacity; 75.02 GiB already allocated; 1.12 GiB free; 76.90 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF"]
    name = "torch.cuda.OutOfMemoryError" if job.torch == "2.1" else "torch.OutOfMemoryError"
    return tb + [f"{name}: CUDA out of memory. Tried to allocate {tried}. GPU {d} has a total capacity of 79.15 GiB of which 1.07 GiB is free. Including non-PyTorch memory, this process has 78.07 GiB memory in use. Of the allocated memory 74.61 GiB is allocated by PyTorch, and 2.01 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"]


# ------------------------------------------------------------ the incident

def kernel_incident(job, t):
    """(host, [(t, msg, ident, pid)]) the incident writes into a host's logs."""
    v, k, r = job.victim, job.kind, job.rng
    h, pid, bus = job.host_of(v), job.host_pid_of(v), job.pci(v)
    if k == "xid79":
        return h, [(t, f"NVRM: Xid (PCI:{bus}): 79, pid={pid}, name=python3, GPU has fallen off the bus.", "kernel", None),
                   (t, f"NVRM: GPU {bus}.0: GPU has fallen off the bus.", "kernel", None),
                   (t + 0.2, f"NVRM: GPU at PCI:{bus}: GPU-{r.randrange(16 ** 8):08x}-7c1e-88a3-1f2b-6de0a1b2c3d4", "kernel", None)]
    if k == "ecc":
        xid = r.choice([48, 94, 95])
        text = {48: "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 2, subpartition 0.",
                94: "Contained ECC error.", 95: "Uncontained ECC error."}[xid]
        lines = [(t, f"NVRM: Xid (PCI:{bus}): {xid}, pid={pid}, name=python3, {text}", "kernel", None)]
        if xid != 48:
            lines.append((t + 0.5, f"NVRM: Xid (PCI:{bus}): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row (0x00000000deadbe00) marked for remapping, reset gpu to activate.", "kernel", None))
        return h, lines
    if k == "nvlink":
        link = r.randrange(18)
        return h, [(t, f"NVRM: Xid (PCI:{bus}): 74, pid={pid}, name=python3, NVLink: fatal error detected on link {link}(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)", "kernel", None)]
    if k == "host_oom":
        lines = oom_kill_lines(job, v, t)
        if job.victim2 is not None:
            lines += oom_kill_lines(job, job.victim2, t + 0.4)
        return h, lines
    if k == "ib_down":
        dev, bus = HCAS[job.local(v) // 2], HCA_BUSES[job.local(v) // 2]
        return h, [(t, f"mlx5_core 0000:{bus}:00.0 {dev}: Port: 1 Link DOWN", "kernel", None),
                   (t + 0.001, f"mlx5_core 0000:{bus}:00.0: mlx5_port_module_event:1160:(pid 0): Port module event: module 1, Cable unplugged", "kernel", None),
                   (t + 0.2, f"ib{job.local(v)}: lost carrier", "kernel", None)]
    if k == "nfs":
        srv = r.choice(["fs01", "nfs-home.cluster.local", "10.9.0.4", "vast-vip-2"])
        return h, [(t, f"nfs: server {srv} not responding, still trying", "kernel", None),
                   (t + 120, f"nfs: server {srv} not responding, still trying", "kernel", None),
                   (t + 240, f"nfs: server {srv} not responding, timed out", "kernel", None)]
    if k == "segfault":
        ip = r.randrange(16 ** 12)
        return h, [(t, f"pt_main_thread[{pid}]: segfault at 10 ip {ip:016x} sp 00007ffd5c3e1a90 error 4 in libtorch_cuda.so[7f1c2a000000+4e2c1000] likely on CPU 17 (core 9, socket 0)", "kernel", None),
                   (t, "Code: 48 8b 47 08 48 85 c0 74 0b 48 8b 40 10 c3 0f 1f 44 00 00 <48> 8b 07 ff 60 40", "kernel", None)]
    if k == "preempt":
        return h, preempt_notice(job, h, t)
    return None, []


def oom_kill_lines(job, v, t):
    """The kernel OOM killer's lines for killing rank v at t, and under
    Kubernetes the kubelet's PLEG line for its pod."""
    r, h, pid = job.rng, job.host_of(v), job.host_pid_of(v)
    rss = r.randrange(180, 260) * 1024 * 1024
    lines = [(t, "python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0", "kernel", None),
             (t, "Mem-Info:", "kernel", None)]
    if job.kernel_gen == "4.15":
        return lines + [(t + 0.01, f"Out of memory: Kill process {pid} (python3) score 934 or sacrifice child", "kernel", None),
                        (t + 0.01, f"Killed process {pid} (python3) total-vm:{rss + 9 * 10 ** 7}kB, anon-rss:{rss}kB, file-rss:81236kB, shmem-rss:16384kB", "kernel", None)]
    memcg = f"/system.slice/slurmstepd.scope/job_{job.jobid}"
    if job.layout in ("k8s", "k8s_pods"):  # cgroupfs on 5.15, the systemd driver's slices on 6.8
        pod = pod_of_rank(job, v)
        uid, cid = pod_uid(job, h if job.layout == "k8s" else pod)
        memcg = (f"/kubepods/burstable/pod{uid}/{cid}" if job.kernel_gen == "5.15" else
                 f"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{uid.replace('-', '_')}.slice/cri-containerd-{cid}.scope")
        kpid = job.agent_pid(h) - 1700  # the node's kubelet
        lines.append((t + 1.2, f'I{glog_stamp(job.clock(h, t + 1.2))}    {kpid} kubelet.go:2439] "SyncLoop (PLEG): event for pod" '
                               f'pod="training/{pod}" event={{"ID":"{uid}","Type":"ContainerDied","Data":"{cid}"}}', "kubelet", kpid))
    lines += [(t + 0.01, f"oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,global_oom,task_memcg={memcg},task=python3,pid={pid},uid=1000", "kernel", None),
              (t + 0.01, f"Out of memory: Killed process {pid} (python3) total-vm:{rss + 9 * 10 ** 7}kB, anon-rss:{rss}kB, file-rss:81236kB, shmem-rss:16384kB, UID:1000 pgtables:{rss // 1900}kB oom_score_adj:0", "kernel", None)]
    if job.kernel_gen == "6.8":
        lines.append((t + 0.3, f"oom_reaper: reaped process {pid} (python3), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB", "kernel", None))
    return lines


def preempt_notice(job, h, t):
    """A cloud or scheduler notice in the host's daemon logs."""
    cloud = cloud_of(job)
    if cloud == "aws":
        when = iso(job.clock(h, t + 120), 0) + "Z"
        return [(t, f'spot-termination-watch: instance-action: {{"action": "terminate", "time": "{when}"}}', "spot-watch", 1312),
                (t + 0.1, "EC2 Spot Instance Interruption Warning received; instance will be terminated at " + when, "spot-watch", 1312)]
    if cloud == "gce":  # ACPI soft-off, then the guest's shutdown scripts
        return [(t, "Power key pressed.", "systemd-logind", 904),
                (t + 0.2, "Powering Off...", "systemd-logind", 904),
                (t + 0.5, "Starting shutdown scripts (version 20241011.01-0ubuntu1~22.04.0).", "google_metadata_script_runner", 2370),
                (t + 0.7, "shutdown-script: curl -s -H 'Metadata-Flavor: Google' http://metadata.google.internal/computeMetadata/v1/instance/preempted: TRUE", "google_metadata_script_runner", 2370)]
    evt = f'{{"DocumentIncarnation":7,"Events":[{{"EventId":"C7061BAC-AFDC-4513-B24B-AA5F13A16123","EventStatus":"Scheduled","EventType":"Preempt","ResourceType":"VirtualMachine","Resources":["{h}"],"NotBefore":"{_dt(job.clock(h, t + 30)).strftime("%a, %d %b %Y %H:%M:%S GMT")}","Description":"","EventSource":"Platform","DurationInSeconds":-1}}]}}'
    return [(t, "scheduled-events: " + evt, "azure-events", 2210)]


def cloud_of(job):
    """The cloud a preempt archive runs on (drawn once per job)."""
    if not hasattr(job, "_cloud"):
        job._cloud = job.rng.choice(["aws", "gce", "azure"]) if job.layout != "k8s" else "aws"
    return job._cloud


def rank_timeline(job, rank):
    """[(true time, text, stream)] of one rank: startup, steps, incident."""
    k, v = job.kind, job.victim
    h = job.host_of(rank)
    out = [(job.t0 + 0.01 * job.local(rank), line, "err") for line in startup_lines(job, rank)]
    # True time of the incident: mid-step, after the last step line it let through.
    tf = job.t0 + 20 + (job.fail_step + 0.4) * job.step_time
    last = job.steps
    ended = None  # (time, [lines]) the rank prints when it ends
    victim_host = job.host_of(v)
    if k in ("xid79", "ecc", "nvlink", "host_oom", "cuda_oom", "segfault", "ib_down", "hang"):
        last = job.fail_step + (0 if rank in (v, job.victim2) else 1)
    if k in ("nfs", "preempt"):
        last = job.fail_step + (0 if h == victim_host else 1)
    if k == "healthy" or k == "straggler":
        last = job.steps
    t = job.t0 + 20
    for step in range(1, last + 1):
        dt_step = job.step_time * (job.slow if (k == "straggler" and rank == v) else 1.0)
        dt_step *= 1.0 + 0.02 * ((rank * 13 + step * 7) % 5 - 2) / 2
        t += job.step_time if k != "straggler" else job.step_time * job.slow
        for line in progress_line(job, rank, step, job.clock(h, t), dt_step).split("\n"):
            out.append((t, line, "out"))
    seq = 3 * job.fail_step + 1
    if k == "cuda_oom" and rank == v:
        ended = (tf + 1, cuda_oom_lines(job, rank))
    elif k == "ecc" and rank == v:
        ended = (tf + 0.3, ["Traceback (most recent call last):", '  File "/workspace/train.py", line 207, in <module>',
                            "    optimizer.step()", "RuntimeError: CUDA error: uncorrectable ECC error encountered",
                            "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect."])
    elif k == "nvlink" and rank == v:
        ended = (tf + 0.3, [f"{nccl_prefix(job, rank, 3)} enqueue.cc:1556 NCCL WARN Cuda failure 'uncorrectable NVLink error detected during the execution'",
                            f"{nccl_prefix(job, rank, 3)} NCCL INFO group.cc:356 -> 1",
                            "RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution"])
    elif k == "segfault" and rank == v:
        ended = (tf + 0.1, ["Fatal Python error: Segmentation fault", "",
                            "Thread 0x00007f2a3bfff640 (most recent call first):",
                            '  File "/usr/lib/python3.10/threading.py", line 324 in wait',
                            "Current thread 0x00007f2c9e7f4740 (most recent call first):",
                            '  File "/workspace/model/attention.py", line 88 in forward'])
    elif k == "ib_down" and rank == v and not job.quiet_ib:
        peer = job.hosts[(job.hosts.index(h) + 1) % len(job.hosts)]
        ended = (tf + 2, remote_error_lines(job, rank, peer))
    elif k in ("xid79", "nvlink", "ecc", "host_oom", "cuda_oom", "segfault", "ib_down") and (rank != v or job.quiet_ib):
        # A worker its own launcher tore down prints nothing more.
        torn = job.group_of(rank) in (job.group_of(v), job.group_of(job.victim2 if job.victim2 is not None else v))
        if k in ("cuda_oom", "segfault", "host_oom") and job.rng.random() < 0.5 and h != victim_host:
            ended = (tf + 8 + job.rng.random() * 3, remote_error_lines(job, rank, victim_host))
        elif not torn or k in ("xid79", "nvlink", "ecc", "ib_down"):
            ended = (tf + 600 + job.rng.random() * 2, watchdog_lines(job, rank, job.clock(h, tf + 600), seq))
    elif k == "nfs" and h != victim_host:
        ended = (tf + 1800 + job.rng.random() * 2, watchdog_lines(job, rank, job.clock(h, tf + 1800), seq, 1800000))
    elif k == "preempt" and h != victim_host:
        ended = (tf + 125 + job.rng.random() * 3, remote_error_lines(job, rank, victim_host))
    if ended:
        out += [(ended[0] + 0.001 * i, line, "err") for i, line in enumerate(ended[1])]
    return out, tf


# ------------------------------------------------------------ launchers

def agent_lines(job, host, tf, group=None):
    """torchrun's elastic agent of one launcher group (a host, or a pod on
    it): the worker start and its end."""
    out = []
    group = job.group_of(job.ranks_on(host)[0]) if group is None else group
    pid = 1 if job.layout == "k8s_pods" else job.agent_pid(host)  # a pod's torchrun is its pid 1
    new = job.torch in ("2.4", "2.6")
    local = job.ranks_of_group(group)
    mine = job.group_of(job.victim) == group
    killed = [r for r in (job.victim, job.victim2) if r is not None and job.group_of(r) == group]

    def log(t, level, where, msg):
        if new:
            return (t, f"{level[0]}{glog_stamp(job.clock(host, t))} {pid} torch/distributed/elastic/{where}] {msg}")
        return (t, f"[{py_stamp(job.clock(host, t))}] torch.distributed.elastic.{where.split('.py')[0].replace('/', '.')}: [{level}] {msg}")

    out.append(log(job.t0 - 2, "INFO", "agent/server/api.py:879", f"[default] starting workers for entrypoint: python3"))
    out.append(log(job.t0 - 1, "INFO", "agent/server/local_elastic_agent.py:227",
                   "Environment variable 'TORCHELASTIC_ENABLE_FILE_TIMER' not found. Do not start FileTimerServer."))
    k, v = job.kind, job.victim
    failed = None
    if k in ("cuda_oom", "ecc", "nvlink") and mine:
        failed = (tf + 2, v, 1)
    elif k == "segfault" and mine:
        failed = (tf + 0.5, v, -11)
    elif k == "host_oom" and killed:
        failed = (tf + job.report_delay.get(group, 0.5), killed[0], -9)
    elif k in ("xid79", "ecc", "nvlink", "ib_down", "cuda_oom", "segfault", "host_oom") and not mine:
        first = local[0]
        failed = (tf + 601 + (1 if k in ("cuda_oom", "segfault", "host_oom") else 0), first, -6)
    elif k == "nfs" and job.host_of(v) != host:
        failed = (tf + 1801, local[0], -6)
    elif k == "preempt":
        if job.host_of(v) == host:
            out.append(log(tf + 1, "WARNING", "agent/server/api.py:704", "Received Signals.SIGTERM death signal, shutting down workers"))
            for r in local:
                out.append(log(tf + 1.1, "WARNING", "multiprocessing/api.py:897", f"Sending process {job.pid_of(r)} closing signal SIGTERM"))
            return out
        failed = (tf + 127, local[0], 1)
    if failed:
        t, r, code = failed
        for o in local:
            if o != r:
                out.append(log(t, "WARNING", "multiprocessing/api.py:897", f"Sending process {job.pid_of(o)} closing signal SIGTERM"))
        out.append(log(t + 0.6, "ERROR", "multiprocessing/api.py:869",
                       f"failed (exitcode: {code}) local_rank: {job.lr(r)} (pid: {job.pid_of(r)}) of binary: /usr/bin/python3"))
    elif k == "hang":  # someone saw the job stuck and stopped it half an hour later
        t = hang_cancel_time(job, tf)
        out.append(log(t, "WARNING", "agent/server/api.py:704", "Received Signals.SIGINT death signal, shutting down workers"))
        for r in local:
            out.append(log(t + 0.1, "WARNING", "multiprocessing/api.py:897", f"Sending process {job.pid_of(r)} closing signal SIGINT"))
    elif k in ("healthy", "straggler"):
        end = job.t0 + 25 + job.steps * job.step_time * (job.slow if k == "straggler" else 1)
        out.append(log(end, "INFO", "agent/server/api.py:718", "[default] worker group successfully finished. Waiting 300 seconds for other agents to finish."))
    return out


def hang_cancel_time(job, tf):
    return tf + 1800 + job.rng.random() * 60


def write_host_logs(job, base, h, kern):
    """A host's kernel log in the job's format; daemons' lines (a cloud
    notice) go to its syslog when the kernel log is a dmesg dump."""
    dmesg = job.kformat in ("dmesg", "dmesg_t")
    k = [kernel_line(job, h, t, m, ident=i, pid=p) for t, m, i, p in kern[h] if i == "kernel" or not dmesg]
    write(f"{base}/{KERNEL_FILES[job.kformat]}", k)
    daemons = [kernel_line(job, h, t, m, ident=i, pid=p) for t, m, i, p in kern[h] if i != "kernel" and dmesg]
    if daemons:
        write(f"{base}/syslog", daemons)


def write(path, lines):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(line + "\n")


def host_kernel_lines(job, tf):
    """{host: [(t, text, ident, pid)]} for every host. Every host's log runs
    on to when the archive was collected, well after the job's last step,
    with routine lines (a hung job is seen to stop, not cut off)."""
    per = {h: benign_kernel(job, h) for h in job.hosts}
    end = job.t0 + 20 + job.steps * job.step_time * 1.4 + 2400
    for h in job.hosts:
        per[h].append((end - job.rng.uniform(60, 600), f"perf: interrupt took too long ({job.rng.randrange(2501, 4000)} > 2500), lowering kernel.perf_event_max_sample_rate to 79750"))
        per[h].append((end, f"mlx5_core 0000:{PCI_BUSES[0]}:00.0: mlx5_pcie_event:301:(pid 0): PCIe slot advertised sufficient power (75W)."))
        per[h] = [(t, m, "kernel", None) for t, m in sorted(per[h])]
    h, lines = kernel_incident(job, tf)
    if h:  # the incident's lines carry their own ident (a daemon's notice)
        per[h] += lines
    for host in per:
        per[host].sort(key=lambda x: x[0])
    return per


def layout_torchrun(job, root, timelines, tf, kern):
    for h in job.hosts:
        base = f"{root}/nodes/{h}"
        write(f"{base}/torchrun.log", [x for _, x in sorted(agent_lines(job, h, tf))])
        for r in job.ranks_on(h):
            d = f"{base}/torchelastic/{job.run_id}/attempt_0/{job.local(r)}"
            write(f"{d}/stdout.log", [x for _, x, s in timelines[r] if s == "out"])
            write(f"{d}/stderr.log", [x for _, x, s in timelines[r] if s == "err"])
        write_host_logs(job, base, h, kern)


def merged(job, timelines, label):
    """All ranks' lines in true-time order, each with label(rank, stream)."""
    allv = [(t, r, i, x, s) for r, tl in timelines.items() for i, (t, x, s) in enumerate(tl)]
    allv.sort(key=lambda e: (e[0], e[1], e[2]))
    return [label(r, s) + x for t, r, i, x, s in allv]


def slurm_nodelist(job):
    hs = job.hosts
    if all(h.startswith("node") for h in hs):
        return f"node[{hs[0][4:]}-{hs[-1][4:]}]" if len(hs) > 1 else hs[0]
    return ",".join(hs)


def layout_srun(job, root, timelines, tf, kern):
    width = len(str(job.nranks - 1))
    lines = merged(job, timelines, lambda r, s: f"{r:>{width}}: ")
    k, v = job.kind, job.victim
    tail = []
    if k == "segfault":
        tail.append(f"srun: error: {job.host_of(v)}: task {v}: Segmentation fault (core dumped)")
    elif k == "host_oom":
        tail.append(f"slurmstepd: error: Detected 1 oom_kill event in StepId={job.jobid}.0. Some of the step tasks have been OOM Killed.")
        tail.append(f"srun: error: {job.host_of(v)}: task {v}: Out Of Memory")
    elif k == "preempt":
        tail.append(f"slurmstepd: error: *** STEP {job.jobid}.0 ON {job.host_of(v)} CANCELLED AT {iso(job.clock(job.host_of(v), tf + 1), 0)} DUE TO PREEMPTION ***")
    elif k == "hang":
        h0 = job.hosts[0]
        tail.append(f"slurmstepd: error: *** STEP {job.jobid}.0 ON {h0} CANCELLED AT {iso(job.clock(h0, hang_cancel_time(job, tf)), 0)} ***")
    if k not in ("healthy", "straggler", "hang"):
        tail.append("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
        bad = [r for r in range(job.nranks) if r != v][:3]
        tail.append(f"srun: error: {job.host_of(bad[-1])}: tasks {bad[0]}-{bad[-1]}: Exited with exit code 1")
    write(f"{root}/slurm-{job.jobid}.out", lines + tail)
    state = {"preempt": "PREEMPTED", "healthy": "COMPLETED", "straggler": "COMPLETED", "hang": "TIMEOUT"}.get(k, "FAILED")
    write(f"{root}/scontrol_show_job.txt",
          [f"JobId={job.jobid} JobName=pretrain", f"   JobState={state} Reason=None Dependency=(null)",
           f"   NumNodes={len(job.hosts)} NumCPUs={len(job.hosts) * 96} NumTasks={job.nranks} CPUs/Task=12",
           f"   NodeList={slurm_nodelist(job)}", f"   TRES=cpu={len(job.hosts) * 96},gres/gpu={job.nranks}"])
    for h in job.hosts:
        write_host_logs(job, f"{root}/nodes/{h}", h, kern)


def cri(job, host, t, stream, text):
    return f"{iso(job.clock(host, t), 6)}000Z {'stdout' if stream == 'out' else 'stderr'} F {text}"


def pod_name(job, h):
    return f"pretrain-{job.run_id[:5]}-worker-{job.hosts.index(h)}"


def pod_of_rank(job, rank):
    """The pod a rank runs in: one per host (k8s), or one per launcher
    group, several on a node (k8s_pods)."""
    if job.layout == "k8s_pods":
        return f"pretrain-{job.run_id[:5]}-worker-{job.group_of(rank)}"
    return pod_name(job, job.host_of(rank))


def pod_uid(job, h):
    """The pod's metadata.uid and its container's id (derived, not drawn)."""
    x = hashlib.sha256(f"{job.run_id}/{h}".encode()).hexdigest()
    return f"{x[:8]}-{x[8:12]}-4{x[13:16]}-a{x[17:20]}-{x[20:32]}", hashlib.sha256(x.encode()).hexdigest()


def layout_k8s(job, root, timelines, tf, kern):
    pods = {h: pod_name(job, h) for h in job.hosts}
    k, v = job.kind, job.victim
    for h in job.hosts:
        # Inside a pod, gethostname() is the pod's name: NCCL prints that.
        rows = [(t, s, f"[default{job.local(r)}]:{x.replace(h + ':', pods[h] + ':')}")
                for r in job.ranks_on(h) for t, x, s in timelines[r]]
        rows += [(t, "err", x) for t, x in agent_lines(job, h, tf)]
        rows.sort(key=lambda e: e[0])
        write(f"{root}/pods/{pods[h]}/pytorch.log", [cri(job, h, t, s, x) for t, s, x in rows])
        write_host_logs(job, f"{root}/nodes/{h}", h, kern)
    vh = job.host_of(v)
    status = {h: "Running" if k in ("healthy", "straggler", "hang") else "Error" for h in job.hosts}
    if k == "host_oom":
        status[vh] = "OOMKilled"
    if k == "preempt":
        status[vh] = "Terminated"
    rows = ["NAME                               READY   STATUS       RESTARTS   AGE   IP             NODE                NOMINATED NODE   READINESS GATES"]
    for i, h in enumerate(job.hosts):
        rows.append(f"{pods[h]:<34} {'0/1':<7} {status[h]:<12} {0:<10} {'47m':<5} {'10.244.%d.%d' % (i // 200, i % 200 + 2):<14} {h:<19} <none>           <none>")
    write(f"{root}/kubectl/get-pods-wide.txt", rows)
    desc = []
    for h in job.hosts:
        desc += [f"Name:             {pods[h]}", "Namespace:        training", "Priority:         0",
                 f"Node:             {h}/{job.ip[h]}", f"Status:           {'Failed' if status[h] != 'Running' else 'Running'}"]
        if h == vh and k == "preempt":
            desc += ["Reason:           Terminated", "Message:          Pod was terminated in response to imminent node shutdown.",
                     "Conditions:", "  Type               Status", "  DisruptionTarget   True"]
        if h == vh and k == "host_oom":
            desc += ["Containers:", "  pytorch:", "    State:          Terminated", "      Reason:       OOMKilled", "      Exit Code:    137"]
        desc.append("")
    write(f"{root}/kubectl/describe-pods.txt", desc)
    ev = ["LAST SEEN   TYPE      REASON             OBJECT                         MESSAGE"]
    if k == "preempt":
        ev.append(f"3m          Warning   NodeShutdown       node/{vh}                   Node {vh} event: Shutdown manager detected shutdown event")
        ev.append(f"3m          Normal    PreemptingNode     node/{vh}                   Spot instance interruption notice received, draining node")
    ev.append(f"47m         Normal    Scheduled          pod/{pods[job.hosts[0]]}   Successfully assigned training/{pods[job.hosts[0]]} to {job.hosts[0]}")
    write(f"{root}/kubectl/get-events.txt", ev)


def layout_k8s_pods(job, root, timelines, tf, kern):
    """Several pods per node (a PyTorchJob of small workers): each pod runs
    its own torchrun over rpp GPUs, prints the pod's name as its hostname
    and its container's pids; the node's kernel knows the workers by other
    pids, and its cgroups by the pod's UID."""
    groups = sorted({job.group_of(r) for r in range(job.nranks)})
    pods = {g: pod_of_rank(job, job.ranks_of_group(g)[0]) for g in groups}
    host = {g: job.host_of(job.ranks_of_group(g)[0]) for g in groups}
    for g in groups:
        h = host[g]
        rows = [(t, s, f"[default{job.lr(r)}]:{x.replace(h + ':', pods[g] + ':')}")
                for r in job.ranks_of_group(g) for t, x, s in timelines[r]]
        rows += [(t, "err", x) for t, x in agent_lines(job, h, tf, g)]
        rows.sort(key=lambda e: e[0])
        write(f"{root}/pods/{pods[g]}/pytorch.log", [cri(job, h, t, s, x) for t, s, x in rows])
    for h in job.hosts:
        write_host_logs(job, f"{root}/nodes/{h}", h, kern)
    k = job.kind
    killed = {job.group_of(r) for r in (job.victim, job.victim2) if r is not None}
    ended = k not in ("healthy", "straggler", "hang")
    # containerd reads the cgroup's oom_kill count: a pod one of whose
    # processes the kernel killed is OOMKilled, though the kill was global.
    status = {g: "OOMKilled" if k == "host_oom" and g in killed else "Error" if ended else "Running" for g in groups}
    rows = ["NAME                               READY   STATUS       RESTARTS   AGE   IP             NODE                NOMINATED NODE   READINESS GATES"]
    for g in groups:
        rows.append(f"{pods[g]:<34} {'0/1':<7} {status[g]:<12} {0:<10} {'47m':<5} {'10.244.%d.%d' % (g // 200, g % 200 + 2):<14} {host[g]:<19} <none>           <none>")
    write(f"{root}/kubectl/get-pods-wide.txt", rows)
    desc = []
    for g in groups:
        desc += [f"Name:             {pods[g]}", "Namespace:        training", "Priority:         0",
                 f"Node:             {host[g]}/{job.ip[host[g]]}", f"Status:           {'Failed' if status[g] != 'Running' else 'Running'}", ""]
    write(f"{root}/kubectl/describe-pods.txt", desc)


def layout_deepspeed(job, root, timelines, tf, kern):
    lines = merged(job, timelines, lambda r, s: f"{job.host_of(r)}: ")
    k, v = job.kind, job.victim
    vh = job.host_of(v)
    tail = []
    code = {"segfault": -11, "host_oom": -9, "preempt": -15}.get(k, 1)
    if k not in ("healthy", "straggler", "hang"):
        t = tf + (2 if k in ("cuda_oom", "segfault", "host_oom", "ecc", "nvlink") else 602)
        for r in job.ranks_on(vh):
            tail.append(f"{vh}: [{py_stamp(job.clock(vh, t))}] [INFO] [launch.py:319:sigkill_handler] Killing subprocess {job.pid_of(r)}")
        tail.append(f"{vh}: [{py_stamp(job.clock(vh, t + 0.2))}] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py', '--local_rank={job.local(v)}', '--deepspeed', 'ds_config.json'] exits with return code = {code}")
        tail.append(f"pdsh@{job.hosts[0]}: {vh}: ssh exited with exit code {abs(code) if code > 0 else 128 - code}")
    if k == "hang":
        t = hang_cancel_time(job, tf)
        for h in job.hosts:
            tail += [f"{h}: [{py_stamp(job.clock(h, t))}] [INFO] [launch.py:319:sigkill_handler] Killing subprocess {job.pid_of(r)}" for r in job.ranks_on(h)]
    head = [f"[{py_stamp(job.t0 - 5)}] [INFO] [runner.py:568:main] cmd = pdsh -S -f 1024 -w {','.join(job.hosts[:4])}{',...' if len(job.hosts) > 4 else ''} export NCCL_IB_HCA=mlx5; cd /workspace; /usr/bin/python3 -u -m deepspeed.launcher.launch --world_info=eyJ... --node_rank=%n --master_addr={job.ip[job.hosts[0]]} --master_port=29500 train.py"]
    for i, h in enumerate(job.hosts):
        head.append(f"{h}: [{py_stamp(job.clock(h, job.t0 - 3))}] [INFO] [launch.py:163:main] nnodes={len(job.hosts)}, num_local_procs={GPUS_PER_HOST}, node_rank={i}")
        mapping = ", ".join(f"'{x}': {job.ranks_on(x)}" for x in job.hosts)
        head.append(f"{h}: [{py_stamp(job.clock(h, job.t0 - 3))}] [INFO] [launch.py:164:main] global_rank_mapping=defaultdict(<class 'list'>, {{{mapping}}})")
    write(f"{root}/deepspeed-launch.log", head + lines + tail)
    for h in job.hosts:
        write_host_logs(job, f"{root}/nodes/{h}", h, kern)


def layout_mpirun(job, root, timelines, tf, kern):
    lines = merged(job, timelines, lambda r, s: f"[1,{r}]<{'stdout' if s == 'out' else 'stderr'}>:")
    k, v = job.kind, job.victim
    tail = []
    if k not in ("healthy", "straggler", "hang"):
        sig = {"segfault": "11 (Segmentation fault)", "host_oom": "9 (Killed)", "preempt": "15 (Terminated)"}.get(k)
        tail.append("--------------------------------------------------------------------------")
        if sig:
            tail.append(f"mpirun noticed that process rank {v} with PID {job.pid_of(v)} on node {job.host_of(v)} exited on signal {sig}.")
        else:
            tail.append("Primary job  terminated normally, but 1 process returned")
            tail.append("a non-zero exit code. Per user-direction, the job has been aborted.")
        tail.append("--------------------------------------------------------------------------")
    if k == "hang":
        tail.append("mpirun: abort is already in progress...hit ctrl-c again to forcibly terminate")
    write(f"{root}/mpirun.out", [f"Data for JOB [{job.jobid % 65536},1] offset 0 Total slots allocated {job.nranks}"] + lines + tail)
    for h in job.hosts:
        write_host_logs(job, f"{root}/nodes/{h}", h, kern)


def layout_journald(job, root, timelines, tf, kern):
    fmt = job.kformat if job.kformat in ("journal_iso", "journal_json", "rfc3164", "rfc5424") else "journal_iso"
    rows = []
    for h in job.hosts:
        rows += [(t, kernel_line(job, h, t, m, fmt=fmt, ident=i, pid=p)) for t, m, i, p in kern[h]]
        rows += [(t, kernel_line(job, h, t, x, fmt=fmt, ident="torchrun", pid=job.agent_pid(h))) for t, x in agent_lines(job, h, tf)]
        for r in job.ranks_on(h):
            rows += [(t, kernel_line(job, h, t, x, fmt=fmt, ident="python3", pid=job.pid_of(r))) for t, x, s in timelines[r] if x]
    rows.sort(key=lambda e: e[0])
    write(f"{root}/journal-all-hosts.{'json' if fmt == 'journal_json' else 'txt'}", [x for _, x in rows])


LAYOUT_WRITERS = {"torchrun": layout_torchrun, "srun": layout_srun, "k8s": layout_k8s,
                  "deepspeed": layout_deepspeed, "mpirun": layout_mpirun, "journald": layout_journald,
                  "k8s_pods": layout_k8s_pods}


def simulate(out, kind, layout, kformat, ranks, seed, skew=True):
    """Writes one archive under out/logs and its truth to out/truth.json
    (outside the archive); returns the truth. skew=False: every host's
    clock is right (skew 0), the archive otherwise the same."""
    job = Job(kind, layout, kformat, ranks, seed, skew)
    timelines, tf = {}, None
    for r in range(ranks):
        timelines[r], tf = rank_timeline(job, r)
    kern = host_kernel_lines(job, tf)
    LAYOUT_WRITERS[layout](job, os.path.join(out, "logs"), timelines, tf, kern)
    if kind == "preempt" and cloud_of(job) == "gce":  # what the operator pulled from the API
        vh = job.host_of(job.victim)
        write(os.path.join(out, "logs", "gcloud-operations.txt"),
              ["NAME                                            TYPE                         TARGET                              HTTP_STATUS  STATUS  TIMESTAMP",
               f"systemevent-{int(tf)}000-{job.run_id}  compute.instances.preempted  us-central1-a/instances/{vh:<20}  200          DONE    {iso(tf - 7 * 3600, 3)}-07:00"])
    v = job.victim
    rank = None if kind in ("healthy", "nfs", "preempt") else v
    host = None if kind == "healthy" else job.host_of(v)
    truth = {"kind": kind, "layout": layout, "kformat": kformat, "ranks": ranks, "seed": seed,
             "references": REFS[kind], "rank": rank, "host": host, "hosts": job.hosts,
             "skew_s": {h: round(s, 3) for h, s in job.skew.items()}, "progress_format": job.progress,
             "torch": job.torch, "kernel": job.kernel_gen}
    with open(os.path.join(out, "truth.json"), "w", encoding="utf-8") as f:
        json.dump(truth, f, indent=1, sort_keys=True)
        f.write("\n")
    return truth


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--no-skew"]
    if len(args) != 6:
        sys.exit(__doc__)
    o, k, lay, kf, n, s = args
    print(json.dumps(simulate(o, k, lay, kf, int(n), int(s), "--no-skew" not in sys.argv), sort_keys=True))
