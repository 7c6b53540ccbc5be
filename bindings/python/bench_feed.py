#!/usr/bin/env python3
"""Throughput of the Python binding.

1. Session.feed: 100k short realistic log lines pushed through a Session,
   one feed() call per line and in 64 KiB chunks; prints lines/s.
2. faultline.diagnose vs the CLI (`faultline diagnose --json`) on the same
   generated file of SIZE MB (default 1024); prints both wall times and the
   binding's overhead.

    FAULTLINE_LIBRARY=build/src/capi/libfaultline.so \\
    PYTHONPATH=bindings/python/src python bindings/python/bench_feed.py --size-mb 200

The CLI is --cli, else $FAULTLINE_CLI, else `faultline` on PATH, else the
build tree next to $FAULTLINE_LIBRARY (src/cli/faultline).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Optional

import faultline

HOSTS = ["node017", "node018", "node019", "node020"]


def realistic_lines(n: int, ranks: int = 32) -> List[bytes]:
    """What ranks print: NCCL INFO chatter, step/loss lines, a rare warning,
    and now and then a line a rule matches (NCCL watchdog, CUDA OOM)."""
    out: List[bytes] = []
    for i in range(n):
        r = i % ranks
        host = HOSTS[r // 8 % len(HOSTS)]
        sec = i // ranks
        ts = f"2026-11-02T03:{sec // 60 % 60:02d}:{sec % 60:02d}.{i % 1000:03d}000Z"
        k = i % 1000
        if k == 999:
            line = (
                f"[rank{r}]:[E1102 03:42:10.123456 1234 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught "
                "collective operation timeout: WorkNCCL(SeqNum=4711, OpType=ALLREDUCE, Timeout(ms)=1800000) "
                "ran for 1800085 milliseconds before timing out."
            )
        elif k % 50 == 0:
            line = f"{ts} [rank{r}]: step {sec} loss {2.5 - sec * 1e-5:.4f} grad_norm 1.02 lr 3.0e-04 tokens/s 181234"
        elif k % 7 == 0:
            line = f"{ts} [rank{r}]: W1102 dataloader.py:412 worker {r % 4} slow batch fetch 212 ms"
        else:
            line = (
                f"{host}:{12345 + r % 8}:{12400 + r % 8} [{r % 8}] NCCL INFO Channel {k % 32:02d}/0 : "
                f"{r} -> {(r + 1) % ranks} via P2P/IPC/read"
            )
        out.append(line.encode() + b"\n")
    return out


def bench_feed(n: int) -> None:
    lines = realistic_lines(n)
    total = sum(len(x) for x in lines)
    print(f"feed: {n:,} lines, {total / 1e6:.1f} MB, avg {total / n:.0f} B/line")

    def run(label: str, chunks: List[bytes], cb: bool = False) -> None:
        seen = [0]

        def on_ev(_e: faultline.Evidence) -> None:
            seen[0] += 1

        t0 = time.perf_counter()
        with faultline.Session(on_evidence=on_ev if cb else None) as s:
            for c in chunks:
                s.feed(c)
            t1 = time.perf_counter()
            r = s.finish()
        t2 = time.perf_counter()
        extra = f", {seen[0]} callbacks" if cb else ""
        print(
            f"  {label:<28} {n / (t2 - t0):>12,.0f} lines/s  ({(t1 - t0):.3f} s feeding, "
            f"{(t2 - t1):.3f} s finish, {r.evidence_count} evidence{extra})"
        )

    run("one feed() per line", lines)
    blob = b"".join(lines)
    chunked = [blob[i : i + 65536] for i in range(0, len(blob), 65536)]
    run("64 KiB chunks", chunked)
    run("one feed() per line + cb", lines, cb=True)


def find_cli(arg: Optional[str]) -> Optional[str]:
    if arg:
        return arg
    if os.environ.get("FAULTLINE_CLI"):
        return os.environ["FAULTLINE_CLI"]
    w = shutil.which("faultline")
    if w:
        return w
    lib = os.environ.get("FAULTLINE_LIBRARY")
    if lib:
        p = Path(lib).resolve().parent.parent / "cli" / "faultline"
        if p.exists():
            return str(p)
    return None


def make_file(path: Path, size_mb: int) -> None:
    if path.exists() and path.stat().st_size >= size_mb * 1024 * 1024:
        return
    block = b"".join(realistic_lines(20000))  # ~2 MB, repeated
    need = size_mb * 1024 * 1024
    with path.open("wb") as f:
        written = 0
        while written < need:
            f.write(block)
            written += len(block)


def _timed(args: List[str]) -> float:
    t = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def bench_diagnose(size_mb: int, cli: Optional[str], repeat: int, workdir: Path, threads: Optional[int]) -> None:
    path = workdir / f"bench-{size_mb}mb.log"
    t0 = time.perf_counter()
    make_file(path, size_mb)
    size = path.stat().st_size
    print(f"\ndiagnose: {path} ({size / 1e6:.0f} MB, made in {time.perf_counter() - t0:.1f} s), "
          f"threads={threads or 'all'}, best of {repeat}")
    faultline.diagnose(path, threads=threads)  # warm the page cache and the ruleset

    def py_once() -> float:
        t = time.perf_counter()
        r = faultline.diagnose(path, threads=threads)
        d = time.perf_counter() - t
        r.close()
        return d

    py = min(py_once() for _ in range(repeat))
    t = time.perf_counter()
    r = faultline.diagnose(path, threads=threads)
    t_diag = time.perf_counter() - t
    t = time.perf_counter()
    nev = len(r.evidence)
    t_ev = time.perf_counter() - t
    df_rows = None
    t_df = 0.0
    try:
        import pandas  # noqa: F401  (its import is not the frame's cost)

        t = time.perf_counter()
        df_rows = len(r.evidence_frame())
        t_df = time.perf_counter() - t
    except ImportError:
        pass
    print(f"  faultline.diagnose        {py:8.3f} s  {size / py / 1e9:6.2f} GB/s")
    if cli:
        args = [cli, "diagnose", "--json"] + (["--threads", str(threads)] if threads else []) + [str(path)]

        c = min(_timed(args) for _ in range(repeat))
        empty = workdir / "empty.log"
        empty.write_bytes(b"")
        fixed_args = args[:-1] + [str(empty)]
        fixed = min(_timed(fixed_args) for _ in range(repeat))
        print(f"  CLI diagnose --json       {c:8.3f} s  {size / c / 1e9:6.2f} GB/s   ({cli})")
        print(f"  CLI on an empty file      {fixed:8.3f} s  (process start, ruleset load)")
        print(f"  binding overhead          {py - c:+8.3f} s  ({(py - c) / c * 100:+.1f} %) vs the CLI; "
              f"{py - (c - fixed):+.3f} s vs the CLI less its fixed cost")
    else:
        print("  CLI: not found (--cli, FAULTLINE_CLI, PATH)")
    print(f"  then .evidence            {t_ev:8.3f} s  ({nev:,} records, batches of 4096)")
    if df_rows is not None:
        print(f"  then .evidence_frame()    {t_df:8.3f} s  ({df_rows:,} rows)")
    print(f"  (this run of diagnose: {t_diag:.3f} s)")


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=100_000, help="lines for the feed benchmark")
    ap.add_argument("--size-mb", type=int, default=1024, help="size of the diagnose benchmark file (MB)")
    ap.add_argument("--cli", help="path of the faultline command")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--workdir", type=Path, default=None, help="where the file goes (default: a temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the generated file")
    ap.add_argument("--skip-feed", action="store_true")
    ap.add_argument("--skip-diagnose", action="store_true")
    a = ap.parse_args(argv)
    print(f"faultline {faultline.__version__}, library {faultline.library_version()} at {faultline.library_path()}")
    if not a.skip_feed:
        bench_feed(a.lines)
    if not a.skip_diagnose:
        tmp = None
        workdir = a.workdir
        if workdir is None:
            tmp = tempfile.mkdtemp(prefix="faultline-bench-")
            workdir = Path(tmp)
        try:
            bench_diagnose(a.size_mb, find_cli(a.cli), a.repeat, workdir, a.threads)
        finally:
            if tmp and not a.keep:
                shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
