#!/usr/bin/env python3
"""CPU time per thread of one command, next to its wall time, for machines
that are loaded: a thread's CPU seconds do not depend on the neighbours, its
run-queue wait (runnable, no core free) is the time they took from it.

Polls /proc/PID/task/*/schedstat (run ns, run-queue wait ns) every
--interval seconds until the command exits, keeping each thread's last
sample, so a thread loses at most one interval at its end; the process's
total CPU comes exact from wait4.

  bench/stage_cpu.py -- build/src/cli/faultline bench --threads 2 sparse.log.gz
  bench/stage_cpu.py --json -- ...

Prints wall s, total CPU s, and per thread (busiest first): name ("(main)":
the thread that started the command; `main` in --json), CPU s,
run-queue wait s. "critical s" is the busiest thread's CPU: what the wall
time tends to on an idle machine when the other threads keep up.
"""
import argparse
import json
import os
import subprocess
import sys
import time


def sample(pid, threads):
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                run_ns, wait_ns, _ = f.read().split()
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue  # the thread ended between listdir and open
        threads[tid] = (name, int(run_ns) / 1e9, int(wait_ns) / 1e9, tid == str(pid))


def measure(cmd, interval):
    threads = {}
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    while True:
        sample(proc.pid, threads)
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            break
        time.sleep(interval)
    wall = time.monotonic() - t0
    per = sorted(threads.values(), key=lambda t: -t[1])
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
            "returncode": os.waitstatus_to_exitcode(status),
            "threads": [{"name": n, "cpu_s": c, "runq_wait_s": w, "main": m} for n, c, w, m in per if c > 0.005]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--interval", type=float, default=0.003)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        ap.error("no command")
    r = measure(cmd, a.interval)
    r["cmd"] = cmd
    r["thread_cpu_s"] = sum(t["cpu_s"] for t in r["threads"])
    r["critical_s"] = max((t["cpu_s"] for t in r["threads"]), default=0.0)
    if a.json:
        print(json.dumps(r))
    else:
        print(f"wall {r['wall_s']:.3f} s, CPU {r['cpu_s']:.3f} s ({r['thread_cpu_s']:.3f} s sampled), "
              f"critical {r['critical_s']:.3f} s, exit {r['returncode']}")
        for t in r["threads"]:
            main = " (main)" if t["main"] else ""
            print(f"  {t['name'] + main:<16} cpu {t['cpu_s']:.3f} s  run-queue wait {t['runq_wait_s']:.3f} s")
    return 0 if r["returncode"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
