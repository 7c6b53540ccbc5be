#!/usr/bin/env python3
"""Issue #20's compressed-archive figures: one log plain, as .gz and as .zst
(optionally a multi-frame .zst too), `faultline bench` on 1 and 2 threads,
and each compressed copy decoded alone through faultline's own decoders
(fl_decode_file), every command once per round in turn, medians over the
rounds. Each run is measured by bench/stage_cpu.py: wall seconds, CPU
seconds, and the busiest thread's CPU seconds ("critical"), which on a
loaded machine stands in for the wall time of an idle one (what the
neighbours take shows as run-queue wait, not as CPU).

  bench/compressed.py --fl build/src/cli/faultline --decode build/bench/fl_decode_file \\
      --plain sparse.log --gz sparse.log.gz --zst sparse.log.zst --frames sparse.pzstd.log.zst \\
      --rounds 3 --out compressed-out [--fl-base BASE/fl] \\
      [--also zst-long=sparse.long.zst --also zst-nosize=sparse.nosize.zst] [--decode-buffer 2097152]

--also LABEL=PATH: another compressed copy of the same log (zstd --long,
--no-content-size, -19, ...), measured and set against the plain file as the
others are. --decode-buffer: the buffer fl_decode_file decodes into (its
default 16 MiB; the scan's stream pieces are 2 MiB).

--fl-base: another faultline (the tree before a change), run alongside in
every round, its rows and ratios marked "(base)". Writes OUT/runs.json and OUT/results.md (the tables for bench/README.md).
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stage_cpu import measure  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fl", required=True)
    ap.add_argument("--fl-base", help="another faultline (the tree before a change), run alongside")
    ap.add_argument("--decode", required=True, help="fl_decode_file")
    ap.add_argument("--plain", required=True)
    ap.add_argument("--gz")
    ap.add_argument("--zst")
    ap.add_argument("--frames", help="a multi-frame .zst (pzstd)")
    ap.add_argument("--also", action="append", default=[], metavar="LABEL=PATH",
                    help="another compressed copy of the plain log")
    ap.add_argument("--decode-buffer", type=int, help="fl_decode_file --buffer BYTES")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default="compressed-out")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    size = os.path.getsize(a.plain)

    builds = [("faultline", a.fl)] + ([("faultline (base)", a.fl_base)] if a.fl_base else [])
    runs = [("plain", f"{name} -j{j}", [fl, "bench", "--threads", str(j), a.plain])
            for name, fl in builds for j in (1, 2)]
    variants = [("gz", a.gz), ("zst", a.zst), ("zst frames", a.frames)]
    variants += [tuple(v.split("=", 1)) for v in a.also]
    decode = [a.decode] + (["--buffer", str(a.decode_buffer)] if a.decode_buffer else [])
    for label, path in variants:
        if not path:
            continue
        runs += [(label, f"{name} -j{j}", [fl, "bench", "--threads", str(j), path])
                 for name, fl in builds for j in (1, 2)]
        runs += [(label, "decode alone", decode + [path])]
    got = {(i, k): [] for i, k, _ in runs}
    for r in range(a.rounds):
        for inp, kind, cmd in runs:
            m = measure(cmd, 0.003)
            if m["returncode"] != 0:
                sys.exit(f"failed: {' '.join(cmd)}")
            m["critical_s"] = max((t["cpu_s"] for t in m["threads"]), default=m["cpu_s"])
            got[(inp, kind)].append(m)
            print(f"round {r + 1}: {inp:<10} {kind:<14} wall {m['wall_s']:.3f} cpu {m['cpu_s']:.3f} "
                  f"critical {m['critical_s']:.3f}", file=sys.stderr)
    with open(os.path.join(a.out, "runs.json"), "w") as f:
        json.dump({f"{i} / {k}": v for (i, k), v in got.items()}, f, indent=1)

    med = {key: {f: statistics.median(m[f] for m in ms) for f in ("wall_s", "cpu_s", "critical_s")}
           for key, ms in got.items()}

    def busy(ms, k=3):  # the median CPU s of the busiest, second, third thread
        ranked = [sorted((t["cpu_s"] for t in m["threads"]), reverse=True) + [0.0] * k for m in ms]
        return " / ".join(f"{statistics.median(r[i] for r in ranked):.3f}" for i in range(k))
    gb = size / 1e9
    lines = [f"{gb * 1000:.0f} MB decompressed, {a.rounds} rounds, medians; load at end "
             f"{open('/proc/loadavg').read().split()[0]}", "",
             "| input | run | wall s | CPU s | busiest thread CPU s | threads' CPU s, busiest first | "
             "GB/s wall | GB/s by busiest thread |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for (inp, kind), m in med.items():
        lines.append(f"| {inp} | {kind} | {m['wall_s']:.3f} | {m['cpu_s']:.3f} | {m['critical_s']:.3f} | "
                     f"{busy(got[(inp, kind)])} | {gb / m['wall_s']:.3f} | {gb / m['critical_s']:.3f} |")
    lines += ["", "| ratio | by wall | by busiest thread | by CPU |", "| --- | ---: | ---: | ---: |"]

    def ratio(name, num, den):
        a_, b_ = med.get(num), med.get(den)
        if a_ and b_:  # speed ratio: den's time over num's
            lines.append(f"| {name} | {b_['wall_s'] / a_['wall_s']:.2f} | "
                         f"{b_['critical_s'] / a_['critical_s']:.2f} | {b_['cpu_s'] / a_['cpu_s']:.2f} |")

    for name, _ in builds:
        mark = " (base)" if name != "faultline" else ""
        ratio(f"plain: 2 threads / 1{mark}", ("plain", f"{name} -j2"), ("plain", f"{name} -j1"))
        for label, path in variants:
            if not path:
                continue
            ratio(f"{label} -j2 / plain -j2{mark}", (label, f"{name} -j2"), ("plain", f"{name} -j2"))
            ratio(f"{label} -j2 / {label} -j1{mark}", (label, f"{name} -j2"), (label, f"{name} -j1"))
            ratio(f"{label} -j2 / decode alone{mark}", (label, f"{name} -j2"), (label, "decode alone"))
            ratio(f"{label} -j2 / plain -j1 (scan alone){mark}", (label, f"{name} -j2"),
                  ("plain", f"{name} -j1"))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
