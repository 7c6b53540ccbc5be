"""Throughput of faultline.dask.diagnose against the number of workers on a
LocalCluster, next to faultline.diagnose in-process, on the same files.

    FAULTLINE_LIBRARY=build/src/capi/libfaultline.so PYTHONPATH=bindings/python/src \\
      python3 bench/bench_dask.py DATA_DIR [--partition-mb 64] [--workers 1,2]
"""
import argparse
import os
import pathlib
import time

import faultline
import faultline.dask as fdask
from dask.distributed import Client, LocalCluster


def size_of(path):
    p = pathlib.Path(path)
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.is_dir() else p.stat().st_size


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--partition-mb", type=int, default=64)
    ap.add_argument("--workers", default="1,2")
    args = ap.parse_args()
    total = size_of(args.data)
    t0 = time.perf_counter()
    want = faultline.diagnose(args.data, threads=1)
    t_local = time.perf_counter() - t0
    print(f"input {total / 1e9:.2f} GB; faultline.diagnose (1 thread): {t_local:.2f} s, "
          f"{total / t_local / 1e9:.2f} GB/s")
    env = {"PYTHONPATH": str(pathlib.Path(faultline.__file__).parents[1])}
    env.update({k: v for k, v in os.environ.items() if k.startswith("FAULTLINE")})
    for n in (int(x) for x in args.workers.split(",")):
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                          env=env) as cluster, Client(cluster) as client:
            fdask.diagnose(args.data, client=client, partition_bytes=args.partition_mb << 20)  # warm
            t0 = time.perf_counter()
            got = fdask.diagnose(args.data, client=client, partition_bytes=args.partition_mb << 20)
            dt = time.perf_counter() - t0
            same = [i.rule for i in got.incidents] == [i.rule for i in want.incidents]
            print(f"dask {n} worker(s), {args.partition_mb} MB partitions: {dt:.2f} s, "
                  f"{total / dt / 1e9:.2f} GB/s, same incidents: {same}")


if __name__ == "__main__":
    main()
