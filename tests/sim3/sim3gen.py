"""A third, independent simulator of multi-host GPU job archives.

sim2 covers launcher layouts and kernel-log formats; this one covers the
ENCODINGS real platforms export a job's logs in, and incident kinds sim2
has not: Docker's json-file driver, GCP Cloud Logging exports (LogEntry
JSON lines with textPayload, resource and labels), fluent-bit records as
CloudWatch Container Insights ships them, structured JSON-lines app logs
with rank fields, Slurm per-task files (`--output=%x-%j-%t.out`), Open MPI
`--output-filename` directories (`1/rank.N/stdout`), Ray Train's driver log
(`(RayTrainWorker pid=P, ip=A)` prefixes), and gzip-compressed files among
plain ones. Written from the public formats of those platforms and of the
messages (NVIDIA driver Xid and PCIe AER lines, PyTorch DataLoader and
torch.save errors, NCCL init WARN lines, torch's driver check, Slurm's
preemption line), not from faultline's rules.

    python3 tests/sim3/sim3gen.py OUT_DIR KIND ENCODING RANKS SEED

Standard library only; the same arguments always write the same bytes
(gzip with mtime 0).
"""
import datetime
import gzip
import io
import json
import os
import random
import sys

KINDS = ["nvlink5", "xid79_aer", "shm_sigbus", "disk_full", "nccl_mismatch",
         "driver_old", "preempt_resumed", "healthy_scary"]
ENCODINGS = ["docker_json", "gcp_export", "fluentbit", "jsonl_app", "slurm_tasks", "mpi_dirs", "ray_train"]

PREEMPT_REFS = ["Job Preemption / Spot Instance Termination", "Spot Instance Preemption"]
# Acceptable catalog references (titles as `faultline rules list` rules name
# them in their reference). `none_ok`: no incident at all is right too.
REFS = {
    "nvlink5": ["NVLink error takes down a GPU's links (Xid 74, NVLink5 Xid 144-150)"],
    "xid79_aer": ["A worker loses its GPU mid-run and the job hangs until a collective times out"],
    "shm_sigbus": ["Shared Memory (/dev/shm) Exhaustion in Containers", "DataLoader Failure"],
    "disk_full": ["Training Checkpoint Corruption on Write", "Checkpoint Partial Save"],
    # No catalog entry names an NCCL version mismatch; an init failure
    # with no better rule is an unrecognised fatal error.
    "nccl_mismatch": ["Unrecognised fatal error"],
    "driver_old": ["CUDA Driver Too Old for the CUDA Runtime"],
    "preempt_resumed": PREEMPT_REFS,
    "healthy_scary": [],
}
NONE_OK = {"preempt_resumed", "healthy_scary"}

GPUS = 8
BUSES = ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"]
BRIDGES = ["17", "29", "39", "5c", "99", "aa", "b9", "da"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def _dt(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc)


def rfc3339(t, digits=6):
    d = _dt(t)
    frac = f"{d.microsecond:06d}"
    if digits > 6:
        frac += "0" * (digits - 6)
    return d.strftime("%Y-%m-%dT%H:%M:%S") + "." + frac[:digits] + "Z"


def py_stamp(t):
    d = _dt(t)
    return d.strftime("%Y-%m-%d %H:%M:%S") + f",{d.microsecond // 1000:03d}"


def glog(t, level="E"):
    d = _dt(t)
    return f"{level}{d.month:02d}{d.day:02d} {d.strftime('%H:%M:%S')}.{d.microsecond:06d}"


def bsd(t):
    d = _dt(t)
    return f"{MONTHS[d.month - 1]} {d.day:2d} {d.strftime('%H:%M:%S')}"


class Job:
    def __init__(self, kind, enc, nranks, seed):
        self.kind, self.enc, self.n, self.seed = kind, enc, nranks, seed
        r = self.rng = random.Random(f"sim3/{kind}/{enc}/{nranks}/{seed}")
        nh = max(1, nranks // GPUS)
        style = r.randrange(3)
        if style == 0:
            self.hosts = [f"gke-train-a3-pool-{r.randrange(16 ** 8):08x}-{''.join(r.choice('abcdefghjkmnpqrstvwxz') for _ in range(4))}" for _ in range(nh)]
        elif style == 1:
            self.hosts = [f"dgx{i + 3:03d}" for i in range(nh)]
        else:
            self.hosts = [f"ip-172-31-{r.randrange(1, 250)}-{i + 11}" for i in range(nh)]
        self.ip = {h: f"10.{r.randrange(0, 60)}.{i}.{r.randrange(2, 250)}" for i, h in enumerate(self.hosts)}
        self.skew = {h: r.uniform(-20.0, 20.0) for h in self.hosts}
        self.pid0 = {h: r.randrange(2000, 90000) for h in self.hosts}
        self.t0 = 1.78e9 + r.randrange(0, 3 * 10 ** 7)
        self.steps = r.randrange(40, 80)
        self.step_time = r.uniform(1.5, 4.0)
        self.fail_step = r.randrange(self.steps // 3, self.steps - 8)
        self.victim = r.randrange(nranks)
        self.vhost = self.hosts[self.victim // GPUS]
        if kind in ("driver_old", "nccl_mismatch") and nh > 1:  # not rank 0's host: the store lives there
            self.vhost = self.hosts[r.randrange(1, nh)]
            self.victim = self.hosts.index(self.vhost) * GPUS
        self.nccl = r.choice(["2.20.5", "2.21.5", "2.23.4"])
        self.odd_nccl = r.choice(["2.18.1", "2.19.3"])
        self.jobid = r.randrange(100000, 999999)
        self.gzip_share = r.choice([0.0, 0.3, 0.6])
        self.events = {i: [] for i in range(nranks)}  # rank -> [(t, stream, text)]
        self.kernel = {h: [] for h in self.hosts}      # host -> [(t, text)]
        self.daemon = {h: [] for h in self.hosts}      # host -> [(t, text)] (slurmd, launcher)

    def host(self, rank):
        return self.hosts[rank // GPUS]

    def pid(self, rank):
        return self.pid0[self.host(rank)] + 11 + rank % GPUS

    def local(self, rank):
        return rank % GPUS

    def bus(self, rank):
        return f"0000:{BUSES[self.local(rank)]}:00"

    def ranks_on(self, h):
        i = self.hosts.index(h)
        return list(range(i * GPUS, min(self.n, (i + 1) * GPUS)))

    def clock(self, h, t):
        return t + self.skew[h]

    def nccl_prefix(self, rank):
        return f"{self.host(rank)}:{self.pid(rank)}:{self.pid(rank) + 93} [{self.local(rank)}]"

    def emit(self, rank, t, text, stream="stderr"):
        self.events[rank].append((t, stream, text))

    def tb(self, rank, t, lines, prefix=True):
        """A traceback: torch 2.x prefixes a failing rank's lines `[rankN]:`."""
        for i, line in enumerate(lines):
            self.emit(rank, t + i * 1e-4, (f"[rank{rank}]:" if prefix else "") + line)


# ------------------------------------------------------------ the story

def common_start(j, version_of=lambda r: None):
    r = j.rng
    for rank in range(j.n):
        t = j.t0 + r.uniform(0.0, 4.0)
        v = version_of(rank) or j.nccl
        if j.local(rank) == 0:
            j.emit(rank, t, f"{j.nccl_prefix(rank)} NCCL INFO NCCL version {v}+cuda12.4")
        j.emit(rank, t + 0.4, f"{j.nccl_prefix(rank)} NCCL INFO Bootstrap : Using eth0:{j.ip[j.host(rank)]}<0>")
        j.emit(rank, t + 0.5, f"{j.nccl_prefix(rank)} NCCL INFO cudaDriverVersion 12040")
        j.emit(rank, t + 1.2, f"{j.nccl_prefix(rank)} NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1/IB ; OOB eth0:{j.ip[j.host(rank)]}<0>")


def init_complete(j, t):
    for rank in range(j.n):
        j.emit(rank, t + rank * 0.002,
               f"{j.nccl_prefix(rank)} NCCL INFO comm 0x{0x55d0a000 + rank * 0x40:x} rank {rank} nranks {j.n} "
               f"cudaDev {j.local(rank)} nvmlDev {j.local(rank)} busId {BUSES[j.local(rank)]}000 commId 0x5ac1f00d1e2d3c4b - Init COMPLETE")


def steps(j, upto, start=0, t_start=None):
    """Rank 0's training log (Python logging, its own stamp)."""
    t = t_start if t_start is not None else j.t0 + 25.0
    for s in range(start, upto):
        t += j.step_time
        loss = 3.2 * (0.985 ** s) + 0.01 * (s % 7)
        j.emit(0, t, f"{py_stamp(j.clock(j.host(0), t))} - train - INFO - step {s + 1}/{j.steps} | loss {loss:.4f} | "
                     f"lr 3.00e-04 | {j.step_time:.2f} s/it", stream="stdout")
    return t


def watchdog(j, ranks, t_fail, seq):
    for rank in ranks:
        t = t_fail + 600.0 + j.rng.uniform(0.05, 2.0)
        j.emit(rank, t, f"[rank{rank}]:[{glog(j.clock(j.host(rank), t))} {j.pid(rank)} ProcessGroupNCCL.cpp:632] "
                        f"[Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, "
                        f"NumelIn=26214400, NumelOut=26214400, Timeout(ms)=600000) ran for 600{j.rng.randrange(10, 999):03d} "
                        f"milliseconds before timing out.")
        j.emit(rank, t + 0.01, f"[rank{rank}]:[{glog(j.clock(j.host(rank), t + 0.01))} {j.pid(rank)} ProcessGroupNCCL.cpp:1664] "
                               f"[PG ID 0 PG GUID 0(default_pg) Rank {rank}] Process group watchdog thread terminated with exception: "
                               f"[Rank {rank}] Watchdog caught collective operation timeout")


def launcher_exit(j, t, bad_hosts, code=1):
    for h in bad_hosts:
        ranks = j.ranks_on(h)
        j.daemon[h].append((t, f"srun: error: {h}: tasks {ranks[0]}-{ranks[-1]}: Exited with exit code {code}"))


def story(j):
    r, k = j.rng, j.kind
    if k == "nccl_mismatch":
        odd = set(j.ranks_on(j.vhost))
        common_start(j, lambda rank: j.odd_nccl if rank in odd else None)
        vcode = lambda v: int(v.split(".")[0]) * 10000 + int(v.split(".")[1]) * 100 + int(v.split(".")[2])  # noqa: E731
        good, bad = vcode(j.nccl), vcode(j.odd_nccl)
        t = j.t0 + 9.0
        other = sorted(odd)[0]
        for rank in range(j.n):
            tt = t + r.uniform(0, 0.5)
            if rank in odd:
                msg = f"Mismatched NCCL version detected : rank {rank} version {bad} rank 0 version {good}"
                ver = j.odd_nccl
            else:
                msg = f"Mismatched NCCL version detected : rank {rank} version {good} rank {other} version {bad}"
                ver = j.nccl
            j.emit(rank, tt, f"{j.nccl_prefix(rank)} NCCL WARN {msg}")
            j.tb(rank, tt + 0.1, [
                "Traceback (most recent call last):",
                '  File "/opt/app/train.py", line 211, in <module>',
                "    dist.barrier(device_ids=[local_rank])",
                "torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
                f"invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version {ver}",
                "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.",
                "Last error:",
                msg])
        launcher_exit(j, t + 3.0, j.hosts)
        return
    common_start(j)
    if k == "driver_old":
        bad = j.ranks_on(j.vhost)
        for rank in bad:
            t = j.t0 + 6.0 + r.uniform(0, 0.4)
            j.events[rank] = [e for e in j.events[rank] if "NCCL" not in e[2]]  # dies before NCCL loads
            j.tb(rank, t, [
                "Traceback (most recent call last):",
                '  File "/opt/app/train.py", line 187, in <module>',
                "    torch.cuda.set_device(local_rank)",
                '  File "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py", line 399, in set_device',
                "    torch._C._cuda_setDevice(device)",
                '  File "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py", line 293, in _lazy_init',
                "    torch._C._cuda_init()",
                "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU "
                "driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx "
                "Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your "
                "version of the CUDA driver."], prefix=False)
        launcher_exit(j, j.t0 + 8.0, [j.vhost])
        t = j.t0 + 1801.0
        j.tb(0, t, ["Traceback (most recent call last):",
                    '  File "/opt/app/train.py", line 190, in <module>',
                    '    dist.init_process_group("nccl")',
                    f"torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. "
                    f"{j.n - len(bad)}/{j.n} clients joined."])
        launcher_exit(j, t + 2.0, [h for h in j.hosts if h != j.vhost])
        return
    init_complete(j, j.t0 + 12.0)
    v, h = j.victim, j.vhost
    if k == "healthy_scary":
        tend = steps(j, j.steps)
        for rank in range(j.n):
            j.emit(rank, j.t0 + 2.0, f"{j.nccl_prefix(rank)} NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.")
        j.emit(0, j.t0 + 3.0, "[W1206 socket.cpp:697] [c10d] The client socket has failed to connect to [localhost]:29500 "
                              "(errno: 99 - Cannot assign requested address).")
        j.emit(3 % j.n, j.t0 + 30.0, "/usr/local/lib/python3.10/dist-packages/torch/_utils.py:831: UserWarning: TypedStorage is "
                                     "deprecated. It will be removed in the future and UntypedStorage will be the only storage class.")
        j.emit(0, tend + 1.0, f"{py_stamp(j.clock(j.host(0), tend + 1.0))} - train - INFO - saved checkpoint to /ckpt/final "
                              f"(step {j.steps})", stream="stdout")
        for rank in range(j.n):
            j.emit(rank, tend + 3.0, f"[rank{rank}]:[W{glog(j.clock(j.host(rank), tend + 3.0))[1:]} {j.pid(rank)} "
                                     "ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been destroyed before we "
                                     "destruct ProcessGroupNCCL. On normal program exit, the application should call "
                                     "destroy_process_group to ensure that any pending NCCL operations have finished in this "
                                     "process. In rare cases this process can exit before this point and block the progress of "
                                     "another member of this process group. This constraint has always been present,  but this "
                                     "warning has only been added since PyTorch 2.4 (function operator())")
        for hh in j.hosts:
            j.kernel[hh].append((j.t0 - 50.0, "nvidia-nvlink: Nvlink Core is being initialized, major device number 511"))
            j.kernel[hh].append((j.t0 - 49.0, "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024"))
            j.kernel[hh].append((j.t0 + 40.0, "EXT4-fs (nvme0n1p1): mounted filesystem with ordered data mode. Quota mode: none."))
        return
    tf = steps(j, j.fail_step) + j.step_time * 0.6
    seq = j.fail_step * 3 + 7
    if k == "nvlink5":
        xid = r.choice([145, 149])
        text = ("149, NETIR_LINK_EVT Fatal XC0 i0 Link 04 (0x025001c6 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)"
                if xid == 149 else
                "145, RLW_RXPIPE Fatal XC0 i0 Link 13 (0x0409a0c2 0x00000008 0x00000001 0x00000000 0x00100000 0x00000004)")
        j.kernel[h].append((tf, f"NVRM: Xid (PCI:{j.bus(v)}): {text}"))
        j.kernel[h].append((tf + 0.2, f"NVRM: Xid (PCI:{j.bus(v)}): 45, pid={j.pid(v)}, name=python3, Ch 00000003 caused by previous Xid {xid}"))
        j.tb(v, tf + 0.4, ["Traceback (most recent call last):",
                           '  File "/opt/app/train.py", line 402, in <module>',
                           "    loss.backward()",
                           "RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution",
                           "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
                           "For debugging consider passing CUDA_LAUNCH_BLOCKING=1"])
        watchdog(j, [x for x in range(j.n) if x != v], tf, seq)
        launcher_exit(j, tf + 605.0, j.hosts)
    elif k == "xid79_aer":
        root = f"0000:{BRIDGES[j.local(v)]}:00.0"
        dev = f"{j.bus(v)}.0"
        kl = j.kernel[h]
        kl.append((tf - 0.3, f"pcieport {root}: AER: Uncorrected (Fatal) error received: {dev}"))
        kl.append((tf - 0.29, f"nvidia {dev}: AER: PCIe Bus Error: severity=Uncorrected (Fatal), type=Inaccessible, (Unregistered Agent ID)"))
        kl.append((tf - 0.28, f"pcieport {root}: AER: Root Port link has been reset (0)"))
        kl.append((tf, f"NVRM: GPU at PCI:{j.bus(v)}: GPU-{r.randrange(16 ** 8):08x}-{r.randrange(16 ** 4):04x}-{r.randrange(16 ** 4):04x}-{r.randrange(16 ** 4):04x}-{r.randrange(16 ** 12):012x}"))
        kl.append((tf + 0.001, f"NVRM: GPU Board Serial Number: 1652{r.randrange(10 ** 9):09d}"))
        kl.append((tf + 0.002, f"NVRM: Xid (PCI:{j.bus(v)}): 79, pid={j.pid(v)}, name=python3, GPU has fallen off the bus."))
        kl.append((tf + 0.003, "NVRM: GPU %s: GPU has fallen off the bus." % j.bus(v)))
        if r.random() < 0.5:
            j.tb(v, tf + 1.0, ["Traceback (most recent call last):",
                               '  File "/opt/app/train.py", line 398, in <module>',
                               "    optimizer.step()",
                               "RuntimeError: CUDA error: unspecified launch failure",
                               "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect."])
        watchdog(j, [x for x in range(j.n) if x != v], tf, seq)
        launcher_exit(j, tf + 605.0, j.hosts)
    elif k == "shm_sigbus":
        wpid = j.pid(v) + 400 + r.randrange(50)
        j.emit(v, tf, "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).")
        j.tb(v, tf + 0.3, [
            "Traceback (most recent call last):",
            '  File "/usr/local/lib/python3.10/dist-packages/torch/utils/data/dataloader.py", line 1133, in _try_get_data',
            "    data = self._data_queue.get(timeout=timeout)",
            '  File "/usr/local/lib/python3.10/dist-packages/torch/utils/data/_utils/signal_handling.py", line 66, in handler',
            "    _error_if_any_worker_fails()",
            f"RuntimeError: DataLoader worker (pid {wpid}) is killed by signal: Bus error. It is possible that dataloader's "
            "workers are out of shared memory. Please try to raise your shared memory limit."])
        watchdog(j, [x for x in range(j.n) if x != v], tf, seq)
        launcher_exit(j, tf + 2.0, [h])
        launcher_exit(j, tf + 605.0, [x for x in j.hosts if x != h])
    elif k == "disk_full":
        # Each rank writes its own shard to its host's local NVMe; v's host is full.
        step = j.fail_step
        for rank in range(j.n):
            j.emit(rank, tf - 0.5, f"[rank{rank}]: saving shard to /local_nvme/ckpt/step_{step}/__{rank}_0.distcp")
        bad = j.ranks_on(h)
        for i, rank in enumerate([v] + [x for x in bad if x != v]):
            t = tf + 3.0 + i * 1.5
            j.tb(rank, t, [
                "Traceback (most recent call last):",
                '  File "/opt/app/train.py", line 455, in save_checkpoint',
                "    torch.save(state, path)",
                '  File "/usr/local/lib/python3.10/dist-packages/torch/serialization.py", line 651, in save',
                "    with _open_zipfile_writer(f) as opened_zipfile:",
                "RuntimeError: [enforce fail at inline_container.cc:603] . unexpected pos 1941637312 vs 1941637200",
                "",
                "During handling of the above exception, another exception occurred:",
                "",
                f"OSError: [Errno 28] No space left on device: '/local_nvme/ckpt/step_{step}/__{rank}_0.distcp'"])
        watchdog(j, [x for x in range(j.n) if x not in bad], tf + 3.0, seq)
        launcher_exit(j, tf + 20.0, [h])
        launcher_exit(j, tf + 610.0, [x for x in j.hosts if x != h])
    elif k == "preempt_resumed":
        d = _dt(j.clock(h, tf))
        stamp = d.strftime("%Y-%m-%dT%H:%M:%S")
        j.daemon[h].append((tf, f"[{stamp}.{d.microsecond // 1000:03d}] [{j.jobid}.0] error: *** STEP {j.jobid}.0 ON {h} "
                                f"CANCELLED AT {stamp} DUE TO PREEMPTION ***"))
        for rank in range(j.n):
            t = tf + 0.2 + r.uniform(0, 0.3)
            j.emit(rank, t, f"[rank{rank}]: received SIGTERM, saving checkpoint at step {j.fail_step}")
        j.emit(0, tf + 9.0, f"{py_stamp(j.clock(j.host(0), tf + 9.0))} - train - INFO - saved checkpoint to "
                            f"/ckpt/step_{j.fail_step} (step {j.fail_step})", stream="stdout")
        for hh in j.hosts:
            rs = j.ranks_on(hh)
            j.daemon[hh].append((tf + 12.0, f"srun: error: {hh}: tasks {rs[0]}-{rs[-1]}: Terminated"))
        # The requeued job, two minutes later, resumes and finishes.
        t2 = tf + 150.0
        for rank in range(j.n):
            j.emit(rank, t2 + rank * 0.002, f"{j.nccl_prefix(rank)} NCCL INFO comm 0x{0x7f31b000 + rank * 0x40:x} rank {rank} "
                                             f"nranks {j.n} cudaDev {j.local(rank)} nvmlDev {j.local(rank)} busId "
                                             f"{BUSES[j.local(rank)]}000 commId 0x9e1d2c3b4a596877 - Init COMPLETE")
        j.emit(0, t2 + 3.0, f"{py_stamp(j.clock(j.host(0), t2 + 3.0))} - train - INFO - resuming from checkpoint "
                            f"/ckpt/step_{j.fail_step} (step {j.fail_step})", stream="stdout")
        tend = steps(j, j.steps, j.fail_step, t2 + 5.0)
        j.emit(0, tend + 1.0, f"{py_stamp(j.clock(j.host(0), tend + 1.0))} - train - INFO - training finished: "
                              f"{j.steps} steps", stream="stdout")


# ------------------------------------------------------------ encodings

def kernel_text(j, h, t, text, fmt):
    c = j.clock(h, t)
    if fmt == "kern":
        return f"{bsd(c)} {h} kernel: {text}"
    d = _dt(c)
    return f"[{d.strftime('%a %b %d %H:%M:%S %Y')}] {text}"


class Writer:
    def __init__(self, j, out):
        self.j, self.logs = j, os.path.join(out, "logs")
        self.gz = random.Random(f"gz/{j.kind}/{j.enc}/{j.n}/{j.seed}")

    def write(self, rel, lines, may_gzip=True):
        path = os.path.join(self.logs, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        data = "".join(x + "\n" for x in lines).encode()
        if may_gzip and self.gz.random() < self.j.gzip_share:
            buf = io.BytesIO()
            with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0) as f:
                f.write(data)
            with open(path + ".gz", "wb") as f:
                f.write(buf.getvalue())
        else:
            with open(path, "wb") as f:
                f.write(data)


def rank_lines(j, rank):
    return sorted(j.events[rank], key=lambda e: e[0])


def write_archive(j, out):
    w, enc = Writer(j, out), j.enc
    kfmt = j.rng.choice(["kern", "dmesg_T"])
    cluster = f"train-{j.rng.randrange(16 ** 4):04x}"
    pods = {h: f"trainer-{j.jobid}-worker-{i}" for i, h in enumerate(j.hosts)}
    if enc in ("gcp_export", "fluentbit"):
        # Everything, kernel too, goes through the platform's agent.
        recs = []
        for rank in range(j.n):
            h = j.host(rank)
            for t, stream, text in rank_lines(j, rank):
                recs.append((t, h, stream, text, "app"))
        for h in j.hosts:
            for t, text in j.kernel[h]:
                recs.append((t, h, "kernel", text, "kernel"))
            for t, text in j.daemon[h]:
                recs.append((t, h, "stderr", text, "daemon"))
        recs.sort(key=lambda x: (x[0], x[1]))
        if enc == "gcp_export":
            by_log = {}
            for i, (t, h, stream, text, src) in enumerate(recs):
                tc = j.clock(h, t)  # the node's agent stamps with the node's clock
                if src == "kernel":
                    entry = {"insertId": f"{i:08x}{j.seed:04x}", "logName": f"projects/ml-train-prod/logs/kernel",
                             "receiveTimestamp": rfc3339(t + 1.3, 9),
                             "resource": {"labels": {"cluster_name": cluster, "location": "us-central1",
                                                     "node_name": h, "project_id": "ml-train-prod"}, "type": "k8s_node"},
                             "severity": "DEFAULT", "textPayload": text, "timestamp": rfc3339(tc, 9)}
                    log = "kernel"
                else:
                    log = "stderr" if stream == "stderr" else "stdout"
                    entry = {"insertId": f"{i:08x}{j.seed:04x}",
                             "labels": {"compute.googleapis.com/resource_name": h,
                                        "k8s-pod/batch_kubernetes_io/job-name": f"trainer-{j.jobid}"},
                             "logName": f"projects/ml-train-prod/logs/{log}",
                             "receiveTimestamp": rfc3339(t + 1.1, 9),
                             "resource": {"labels": {"cluster_name": cluster, "container_name": "pytorch",
                                                     "location": "us-central1", "namespace_name": "training",
                                                     "pod_name": pods[h], "project_id": "ml-train-prod"},
                                          "type": "k8s_container"},
                             "severity": "ERROR" if stream == "stderr" else "INFO",
                             "textPayload": text, "timestamp": rfc3339(tc, 9)}
                by_log.setdefault(log, []).append(json.dumps(entry, sort_keys=True))
            d = _dt(j.t0)
            for log, lines in by_log.items():
                w.write(f"{log}/{d.strftime('%Y/%m/%d')}/{d.strftime('%H')}:00:00_{d.strftime('%H')}:59:59_S0.json", lines)
        else:
            by_stream = {}
            for t, h, stream, text, src in recs:
                tc = j.clock(h, t)
                if src == "kernel":
                    rec = {"host": h, "ident": "kernel", "message": text, "time": rfc3339(tc, 6)}
                    key = f"host/{h}.dmesg"
                else:
                    rec = {"kubernetes": {"container_image": "nvcr.io/nvidia/pytorch:24.05-py3", "container_name": "pytorch",
                                          "host": f"{h}.ec2.internal", "namespace_name": "training", "pod_name": pods[h]},
                           "log": text + "\n", "stream": stream if stream != "kernel" else "stderr", "time": rfc3339(tc, 9)}
                    key = f"application/{h}-application.var.log.containers.{pods[h]}_training_pytorch"
                by_stream.setdefault(key, []).append(json.dumps(rec, sort_keys=True))
            for key, lines in by_stream.items():
                w.write(f"cloudwatch/{key}.jsonl", lines)
        return
    # The others: app logs in the encoding, kernel logs per host as files.
    for h in j.hosts:
        name = "kern.log" if kfmt == "kern" else "dmesg-T.txt"
        lines = [kernel_text(j, h, t, text, kfmt) for t, text in sorted(j.kernel[h])]
        if lines:
            w.write(f"nodes/{h}/{name}", lines)
    if enc == "docker_json":
        for h in j.hosts:
            cid = f"{j.rng.randrange(16 ** 16):016x}" * 4
            evs = []
            for rank in j.ranks_on(h):
                evs += rank_lines(j, rank)
            evs += [(t, "stderr", text) for t, text in j.daemon[h]]
            evs.sort(key=lambda e: e[0])
            lines = [json.dumps({"log": text + "\n", "stream": stream, "time": rfc3339(j.clock(h, t), 9)})
                     for t, stream, text in evs]
            w.write(f"{h}/containers/{cid}/{cid}-json.log", lines)
    elif enc == "jsonl_app":
        for h in j.hosts:
            evs = []
            for rank in j.ranks_on(h):
                evs += [(t, rank, text) for t, _s, text in rank_lines(j, rank)]
            evs.sort(key=lambda e: e[0])
            lines = [json.dumps({"ts": rfc3339(j.clock(h, t), 3), "level": "ERROR" if "Error" in text or "WARN" in text else "INFO",
                                 "host": h, "rank": rank, "local_rank": rank % GPUS, "world_size": j.n,
                                 "logger": "trainer", "msg": text})
                     for t, rank, text in evs]
            w.write(f"app/{h}/trainer.jsonl", lines)
            if j.daemon[h]:
                w.write(f"app/{h}/launcher.log", [text for _t, text in sorted(j.daemon[h])])
    elif enc == "slurm_tasks":
        for rank in range(j.n):
            w.write(f"train-{j.jobid}-{rank}.out", [text for _t, _s, text in rank_lines(j, rank)])
        main = []
        for h in j.hosts:
            main += j.daemon[h]
        w.write(f"slurm-{j.jobid}.out", [text for _t, text in sorted(main)], may_gzip=False)
    elif enc == "mpi_dirs":
        for rank in range(j.n):
            evs = rank_lines(j, rank)
            w.write(f"mpi_out/1/rank.{rank}/stdout", [text for _t, s, text in evs if s == "stdout"])
            w.write(f"mpi_out/1/rank.{rank}/stderr", [text for _t, s, text in evs if s != "stdout"])
        # mpirun --display-map (Open MPI 4's job map), then its abort report.
        lines = ["", " ========================   JOB MAP   ========================", ""]
        for h in j.hosts:
            lines.append(f" Data for node: {h}\tNum slots: {GPUS}\tMax slots: 0\tNum procs: {len(j.ranks_on(h))}")
            lines += [f" \tProcess OMPI jobid: [{j.jobid % 65536},1] App: 0 Process rank: {rank} Bound: N/A"
                      for rank in j.ranks_on(h)]
            lines.append("")
        lines += [" =============================================================", ""]
        bad = sorted((t, text) for h in j.hosts for t, text in j.daemon[h] if "Exited" in text)
        if bad:
            first = int(bad[0][1].split("tasks ")[1].split("-")[0])
            lines += ["-" * 74,
                      "mpirun detected that one or more processes exited with non-zero status, thus causing",
                      "the job to be terminated. The first process to do so was:", "",
                      f"  Process name: [[{j.jobid % 65536},1],{first}]",
                      f"  Exit code:    1", "-" * 74]
        w.write("mpirun.log", lines, may_gzip=False)
    elif enc == "ray_train":
        evs = []
        for rank in range(j.n):
            h = j.host(rank)
            evs.append((j.t0 + 1.0 + rank * 0.001, rank, f"Setting up process group for: env:// [rank={rank}, world_size={j.n}]"))
            evs += [(t, rank, text) for t, _s, text in rank_lines(j, rank)]
        evs.sort(key=lambda e: e[0])
        lines = [f"(RayTrainWorker pid={j.pid(rank)}, ip={j.ip[j.host(rank)]}) {text}" for _t, rank, text in evs]
        for h in j.hosts:
            lines += [f"(raylet, ip={j.ip[h]}) {text}" for _t, text in j.daemon[h]]
        w.write("ray/job-driver-raysubmit_{:x}.log".format(j.jobid), lines, may_gzip=False)


def simulate(out, kind, enc, nranks, seed):
    j = Job(kind, enc, nranks, seed)
    story(j)
    write_archive(j, out)
    hostful = kind not in ("healthy_scary",)
    rankful = kind in ("nvlink5", "xid79_aer", "shm_sigbus", "disk_full")
    # A full local disk fails every rank writing to it; the logs need not say
    # which of them failed first (tracebacks carry no stamp): any is right.
    ranks_ok = j.ranks_on(j.vhost) if kind == "disk_full" else ([j.victim] if rankful else [])
    truth = {"kind": kind, "encoding": enc, "ranks": nranks, "seed": seed,
             "references": REFS[kind], "none_ok": kind in NONE_OK,
             "rank": j.victim if rankful else None, "ranks_ok": ranks_ok, "host": j.vhost if hostful else None,
             "hosts": j.hosts, "skew": j.skew, "gzip_share": j.gzip_share}
    with open(os.path.join(out, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1, sort_keys=True)
    return truth


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    o, k, e, n, s = sys.argv[1:]
    print(json.dumps(simulate(o, k, e, int(n), int(s)), indent=1))
