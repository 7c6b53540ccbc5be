#!/usr/bin/env python3
"""Runs a command under /usr/bin/time -v and samples the memory of its
process tree every 10 ms, so the peak *anonymous* memory is known apart from
the file pages a memory-mapped scan touches (they count in RSS but are page
cache, not memory the process allocated).

  memwatch.py [--label L] [--json OUT] -- CMD ARGS...

Prints one line: label, wall s, user s, sys s, max RSS (/usr/bin/time -v),
peak RssAnon and peak RssFile (summed over the tree, sampled), exit status.
The command's stdout goes to OUT.stdout when --json is given (else
/dev/null); its stderr, minus time's report, to OUT.stderr.
"""

import argparse
import json
import os
import subprocess
import sys
import time


def tree(pid):
    out = [pid]
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                for c in f.read().split():
                    out += tree(int(c))
    except OSError:
        pass
    return out


def status(pid):
    vals = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("RssAnon", "RssFile", "RssShmem", "VmHWM"):
                    vals[k] = int(v.split()[0])
    except OSError:
        pass
    return vals


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", default="")
    ap.add_argument("--json")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        ap.error("no command")
    stdout = open(a.json + ".stdout", "w") if a.json else subprocess.DEVNULL
    timef = (a.json or "/tmp/memwatch.%d" % os.getpid()) + ".time"
    errf = open((a.json or "/tmp/memwatch.%d" % os.getpid()) + ".stderr", "w")
    t0 = time.monotonic()
    p = subprocess.Popen(["/usr/bin/time", "-v", "-o", timef] + cmd, stdout=stdout, stderr=errf)
    peak_anon = peak_file = 0
    while p.poll() is None:
        anon = file_ = 0
        for pid in tree(p.pid)[1:]:  # not time itself
            s = status(pid)
            anon += s.get("RssAnon", 0)
            file_ += s.get("RssFile", 0) + s.get("RssShmem", 0)
        peak_anon = max(peak_anon, anon)
        peak_file = max(peak_file, file_)
        time.sleep(0.01)
    wall = time.monotonic() - t0
    rep = {"label": a.label, "cmd": cmd, "exit": p.returncode, "wall_s": round(wall, 3),
           "peak_rss_anon_kb": peak_anon, "peak_rss_file_kb": peak_file}
    with open(timef) as f:
        for line in f:
            k, _, v = line.strip().rpartition(": ")
            if k == "User time (seconds)":
                rep["user_s"] = float(v)
            elif k == "System time (seconds)":
                rep["sys_s"] = float(v)
            elif k == "Maximum resident set size (kbytes)":
                rep["max_rss_kb"] = int(v)
            elif k == "Elapsed (wall clock) time (h:mm:ss or m:ss)":
                parts = [float(x) for x in v.split(":")]
                rep["time_wall_s"] = sum(x * 60 ** i for i, x in enumerate(reversed(parts)))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rep, f)
    print("%-28s wall %7.2f s  user %7.2f s  sys %6.2f s  maxRSS %8.1f MB  peak anon %7.1f MB  "
          "peak file %8.1f MB  exit %d"
          % (a.label, rep.get("time_wall_s", wall), rep.get("user_s", 0), rep.get("sys_s", 0),
             rep.get("max_rss_kb", 0) / 1024, peak_anon / 1024, peak_file / 1024, p.returncode))
    sys.exit(0)


if __name__ == "__main__":
    main()
