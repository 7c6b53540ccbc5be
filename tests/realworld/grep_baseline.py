#!/usr/bin/env python3
"""A naive baseline for the real-log corpus: a fixed table of regexes, the
first matching line wins.

The table is written from the catalog's reference titles and the messages
they are known by (library and driver source text), not from the corpus'
cases. Lines are read in file order; the first line that matches any entry
names the reference (the first entry that matches it, in table order). No
rank, host, layering, time order or survived-error logic: what a grep over
the log would answer.

    python3 tests/realworld/grep_baseline.py LOG     # prints the JSON report

eval.py --grep-baseline scores it beside faultline, the same way.
"""
import json
import re
import sys

# (reference title, layer, regex). Titles are verbatim catalog titles.
TABLE = [
    ("Uncorrectable GPU memory error (Xid 48/94/95/140) kills the rank that owns the GPU",
     "hardware", r"Xid \([^)]*\): (48|94|95|140)\b|uncorrectable ECC error|DBE \(double bit error\)"),
    ("A worker loses its GPU mid-run and the job hangs until a collective times out",
     "hardware", r"Xid \([^)]*\): 79\b|fallen off the bus|Unable to determine the device handle"),
    ("GPU memory wear: row remapping pending or failed and high single-bit ECC rate (Xid 63/64/92)",
     "hardware", r"Xid \([^)]*\): (63|64|92)\b|row remap(ping)? (pending|failure)"),
    ("NVLink error takes down a GPU's links (Xid 74, NVLink5 Xid 144-150)",
     "hardware", r"Xid \([^)]*\): 74\b|NVLink: fatal error"),
    ("GSP firmware RPC timeout or crash wedges the GPU (Xid 119/120)",
     "hardware", r"Xid \([^)]*\): (119|120)\b|Timeout waiting for RPC from GSP"),
    ("GB200 NVL72 driver hang with Xid 150 and 154 after long uptime is a firmware bug, not a dead GPU",
     "hardware", r"Xid \([^)]*\): (150|154)\b"),
    ("GPU engine exception, hang or microcontroller halt (Xid 32/38/46/61/62/68/69/109/158)",
     "hardware", r"Xid \([^)]*\): (32|38|46|61|62|68|69|109|158)\b"),
    ("Application-caused GPU fault reported as an Xid (13/31/43/45): check the application first",
     "framework", r"Xid \([^)]*\): (13|31|43|45)\b"),
    ("GPU fails to initialize after a reset or reboot (RmInitAdapter failed, Xid 143, SPI/PMU Xid 122-124)",
     "hardware", r"RmInitAdapter failed|Xid \([^)]*\): (122|123|124|143)\b"),
    ("NVSwitch fatal error or Fabric Manager failure breaks GPU peer traffic",
     "hardware", r"NVSwitch|[Ff]abric [Mm]anager|system not yet initialized"),
    ("CUDA Out of Memory on One Rank",
     "framework", r"CUDA out of memory|OutOfMemoryError"),
    ("OOM Killed Mid-Step",
     "system", r"Out of memory: Kill(ed)? process|oom-kill|exitcode: -9\b|Killed$"),
    ("Cgroup Memory Limit",
     "system", r"memory cgroup out of memory|OOMKilled"),
    ("Shared Memory (/dev/shm) Exhaustion in Containers",
     "system", r"/dev/shm|shared memory|posix_fallocate failed|Bus error"),
    ("CUDA Device-Side Assert Inside One Rank",
     "framework", r"device-side assert triggered|Assertion `.*` failed"),
    ("CUDA Binary Built for the Wrong GPU Architecture",
     "framework", r"no kernel image is available for execution on the device"),
    ("CUDA Driver Too Old for the CUDA Runtime",
     "framework", r"CUDA driver version is insufficient|driver on your system is too old"),
    ("CUDA Kernel Fault Inside One Rank",
     "framework", r"illegal memory access|CUDA error: unspecified launch failure|"
                  r"CUBLAS_STATUS_|CUDNN_STATUS_|misaligned address"),
    ("Training Stuck No Progress",
     "network", r"Watchdog caught collective operation timeout|collective operation timeout|"
                r"watchdog got stuck"),
    ("Network Partition",
     "network", r"ncclRemoteError|NCCL WARN NET/IB|Connection reset by peer|"
                r"remote process exited or there was a network error|unhandled system error"),
    ("torchrun Worker Failure Summary (ChildFailedError) Names the First Local Failure, Not the Cause",
     "framework", r"ChildFailedError|failed \(exitcode: -?[0-9]+\) local_rank"),
    ("vLLM returns 500 on every request after the EngineCore process dies",
     "framework", r"EngineDeadError|EngineCore encountered|Engine loop has died"),
    ("DeepSpeed ZeRO-3: still have inflight params (backward)",
     "framework", r"still have inflight params"),
    ("DeepSpeed ZeRO-3: Cannot partition a param in flight (save)",
     "framework", r"[Cc]annot partition a param in flight"),
    ("DeepSpeed ZeRO-3: 'weight' must be 2-D at F.embedding",
     "framework", r"'weight' must be 2-D"),
    ("DeepSpeed ZeRO-3 NVMe Offload Checkpoint Race (FileExistsError)",
     "framework", r"FileExistsError"),
    ("DataLoader Failure",
     "framework", r"DataLoader worker \(pid"),
    ("HDF5 Corruption",
     "storage", r"HDF5|h5py|\.h5\b"),
    ("Training Checkpoint Corruption on Write",
     "storage", r"PytorchStreamReader failed|failed finding central directory|"
                r"unexpected EOF.*checkpoint"),
    ("Training Resume Failure",
     "storage", r"Error\(s\) in loading state_dict|resume_from_checkpoint"),
    ("NFS Mount Failure",
     "storage", r"nfs: server .* not responding|Stale file handle"),
    ("Job Preemption / Spot Instance Termination",
     "system", r"[Pp]reempt|spot instance|DUE TO TIME LIMIT"),
    ("Zombie GPU Process / Orphaned Job",
     "system", r"Address already in use|EADDRINUSE|all CUDA-capable devices are busy"),
    ("Wandb/TensorBoard Failure",
     "system", r"wandb: (ERROR|Network error)|tensorboard.*[Ee]rror"),
    ("Silent Hang / Unresponsive Training",
     "framework", r"\bhang(s|ing)?\b|stuck"),
    ("Unrecognised fatal error",
     "framework", r"^Traceback \(most recent call last\)|Segmentation fault|core dumped|"
                  r"[A-Za-z]+Error: "),
]
COMPILED = [(title, layer, re.compile(rx)) for title, layer, rx in TABLE]


def first_match(lines):
    for line in lines:
        for title, layer, rx in COMPILED:
            if rx.search(line):
                return title, layer, line
    return None


def diagnose(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    hit = first_match(lines)
    if hit is None:
        return {"incidents": []}
    title, layer, line = hit
    return {"incidents": [{
        "reference": title, "rule": None, "layer": layer,
        "initiating": {"rank": None, "host": None, "evidence": [{"text": line}]},
    }]}


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: grep_baseline.py LOG")
    print(json.dumps(diagnose(sys.argv[1]), indent=1))
