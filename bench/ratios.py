#!/usr/bin/env python3
"""Ratio tables for issue #20: faultline against raw Hyperscan (the same
database, fl_hs_raw), ripgrep and GNU grep (the same patterns,
export_patterns.py) on a sparse log, a dense log, a many-file archive and
compressed copies -- every tool run interleaved with the others in each
round, so a neighbour's load falls on all of them alike, and the medians of
the rounds reported.

  bench/ratios.py --fl build/src/cli/faultline --hs build/bench/fl_hs_raw \\
      --sparse /dev/shm/sparse.log --dense /dev/shm/dense.log \\
      --archive /dev/shm/arch --compressed --rounds 5 --out /tmp/ratios

The inputs come from bench/gen_logs.py (see bench/README.md); --compressed
writes SPARSE.gz and SPARSE.zst next to the sparse log (gzip -6, zstd -3)
once. CPU seconds are user + system of the whole command (rusage of the
child); GB/s are bytes over median wall seconds. One thread: compare CPU;
two threads: compare wall. Prints a markdown table; --out keeps every run
as JSON.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time


def input_bytes(path):
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(path) for f in fs)
    return os.path.getsize(path)


def run(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # rg and grep exit 1 when nothing matched.
    if p.returncode not in (0, 1):
        sys.exit("%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr.decode()[-400:]))
    return wall, cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fl", required=True)
    ap.add_argument("--hs", required=True)
    ap.add_argument("--fl-base", help="another faultline (the tree before a change), run alongside")
    ap.add_argument("--sparse")
    ap.add_argument("--dense")
    ap.add_argument("--archive")
    ap.add_argument("--compressed", action="store_true")
    ap.add_argument("--grep", action="store_true", help="also GNU grep -E (slow)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default="ratios-out")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    tsv = os.path.join(a.out, "patterns.tsv")
    subprocess.run([a.hs, "--dump-patterns", tsv], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([sys.executable, os.path.join(here, "export_patterns.py"), tsv, a.out], check=True,
                   stdout=subprocess.DEVNULL)
    rg_pat = os.path.join(a.out, "patterns.rg.txt")
    ere_pat = os.path.join(a.out, "patterns.ere.txt")

    cases = []  # (input label, path, tool label, cmd)

    def peers(label, path):
        for j in (1, 2):
            cases.append((label, path, "faultline -j%d" % j, [a.fl, "bench", "--threads", str(j), path]))
            if a.fl_base:
                cases.append((label, path, "faultline (base) -j%d" % j,
                              [a.fl_base, "bench", "--threads", str(j), path]))
            cases.append((label, path, "fl_hs_raw -j%d" % j, [a.hs, "--threads", str(j), path]))
            cases.append((label, path, "rg -j%d" % j,
                          ["rg", "--no-config", "-uuu", "-a", "-c", "-j%d" % j, "-f", rg_pat, path]))
        if a.grep:
            cases.append((label, path, "grep -E", ["grep", "-E", "-c", "-r", "-f", ere_pat, path]))

    if a.sparse:
        peers("sparse", a.sparse)
    if a.dense:
        peers("dense", a.dense)
    if a.archive:
        peers("archive", a.archive)
        for j in (1, 2):
            cases.append(("archive", a.archive, "faultline diagnose -j%d" % j,
                          [a.fl, "diagnose", "--threads", str(j), a.archive]))
            if a.fl_base:
                cases.append(("archive", a.archive, "faultline (base) diagnose -j%d" % j,
                              [a.fl_base, "diagnose", "--threads", str(j), a.archive]))
    if a.compressed and a.sparse:
        gz, zst = a.sparse + ".gz", a.sparse + ".zst"
        if not os.path.exists(gz):
            with open(gz, "wb") as f:
                subprocess.run(["gzip", "-6", "-c", a.sparse], stdout=f, check=True)
        if not os.path.exists(zst):
            subprocess.run(["zstd", "-q", "-3", "-f", a.sparse, "-o", zst], check=True)
        for path, label in ((gz, "sparse.gz"), (zst, "sparse.zst")):
            for j in (1, 2):
                cases.append((label, path, "faultline -j%d" % j, [a.fl, "bench", "--threads", str(j), path]))
                if a.fl_base:
                    cases.append((label, path, "faultline (base) -j%d" % j,
                                  [a.fl_base, "bench", "--threads", str(j), path]))
            cases.append((label, path, "decompress alone", ["gzip" if path.endswith(".gz") else "zstd",
                                                             "-d", "-c", path]))

    sizes = {}
    runs = {}
    for r in range(a.rounds):
        for label, path, tool, cmd in cases:
            wall, cpu = run(cmd)
            runs.setdefault((label, tool), []).append((wall, cpu))
        print("round %d/%d done (load %s)" % (r + 1, a.rounds, open("/proc/loadavg").read().split()[0]),
              file=sys.stderr)
    for label, path, _, _ in cases:
        sizes[label] = input_bytes(a.sparse if label.startswith("sparse.") else path)

    with open(os.path.join(a.out, "runs.json"), "w") as f:
        json.dump({"%s|%s" % k: v for k, v in runs.items()}, f, indent=1)
    print("| input | tool | median wall s | median CPU s | GB/s (wall) | GB per CPU-s |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    med = {}
    for (label, tool), v in runs.items():
        w = statistics.median(x[0] for x in v)
        c = statistics.median(x[1] for x in v)
        med[(label, tool)] = (w, c)
        gb = sizes[label] / 1e9
        print("| %s (%.0f MB) | %s | %.3f | %.3f | %.3f | %.3f |" % (label, sizes[label] / 1e6, tool, w, c,
                                                                 gb / w, gb / max(c, 1e-9)))
    print()
    print("Speed ratios (the other tool's median time over faultline's; > 1: faultline is faster):")
    print()
    print("| input | faultline | / raw, 1 thread (CPU) | / rg, 1 thread (CPU) | / raw, 2 threads (wall) "
          "| / rg, 2 threads (wall) |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for label in dict.fromkeys(k[0] for k in med):
        for fl in (["faultline", "faultline (base)"] if a.fl_base else ["faultline"]):
            def ratio(j, other, idx):
                tool = "%s -j%d" % (fl, j)
                if (label, tool) not in med or (label, other) not in med:
                    return "-"
                return "%.2f" % (med[(label, other)][idx] / med[(label, tool)][idx])
            print("| %s | %s | %s | %s | %s | %s |" % (label, fl, ratio(1, "fl_hs_raw -j1", 1), ratio(1, "rg -j1", 1),
                                                        ratio(2, "fl_hs_raw -j2", 0), ratio(2, "rg -j2", 0)))


if __name__ == "__main__":
    main()
