#!/usr/bin/env python3
"""Summarises a bench/peers.sh results directory into OUT/results.md: the
fastest of each configuration's runs, GB/s by wall clock and per CPU-second,
peak memory, and the ratios the targets are stated in.

  peers_summary.py OUT BYTES
"""
import glob, json, os, re, sys
out, nbytes = sys.argv[1], int(sys.argv[2])
runs = {}
for p in glob.glob(os.path.join(out, "runs", "*.json")):
    r = json.load(open(p))
    label = os.path.basename(p).rsplit(".", 2)[0]
    r["stdout"] = open(p + ".stdout").read() if os.path.exists(p + ".stdout") else ""
    runs.setdefault(label, []).append(r)

def best(label):
    rs = runs.get(label, [])
    return min(rs, key=lambda r: r["time_wall_s"]) if rs else None

def matched_lines(label, r):
    s = r["stdout"]
    if label.startswith(("rg", "grep")):
        # "path:count" per file; a single file's count stands alone
        return sum(int(l.rsplit(":", 1)[-1]) for l in s.split("\n") if l.strip())
    if label.startswith("python"):
        return int(re.search(r"lines_matched (\d+)", s).group(1))
    return None

rows = []
gbps = {}
gbcpu = {}  # GB per CPU-second: what a loaded machine still measures
for label in ["faultline-t1", "faultline-t2", "faultline-diagnose-t1", "hs-raw-t1", "hs-raw-t2", "rg-j1", "rg-j2", "grep-E",
              "python-re", "faultline-x4-t1", "faultline-x4-t2"]:
    r = best(label)
    if not r:
        continue
    b = nbytes * (4 if "-x4-" in label else 1)
    wall = r["time_wall_s"]
    cpu = r.get("user_s", 0) + r.get("sys_s", 0)
    note = ""
    if label == "python-re":
        m = re.search(r"bytes (\d+) lines_matched (\d+) seconds ([\d.]+)", r["stdout"])
        pb, ps = int(m.group(1)), float(m.group(3))
        g = pb / ps / 1e9
        note = "%d MB slice, %.1f s; %.0f s extrapolated to the job" % (pb >> 20, ps, nbytes / pb * ps)
        wall_equiv = nbytes / pb * ps
        gbps[label] = g
        rows.append((label, g, wall_equiv, pb / cpu / 1e9 if cpu else 0, r, note))
        continue
    g = b / wall / 1e9
    gbps[label] = g
    if cpu:
        gbcpu[label] = b / cpu / 1e9
    ml = matched_lines(label, r)
    if ml is not None:
        note = "%d matching lines" % ml
    rows.append((label, g, wall, b / cpu / 1e9 if cpu else 0, r, note))

lines = []
lines.append("| run | GB/s (wall) | wall s | GB per CPU-s | max RSS MB | peak anon MB | notes |")
lines.append("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
for label, g, wall, gcpu, r, note in rows:
    lines.append("| %s | %.3f | %.2f | %.3f | %.0f | %.0f | %s |" % (
        label, g, wall, gcpu, r.get("max_rss_kb", 0) / 1024, r.get("peak_rss_anon_kb", 0) / 1024, note))
def ratio(a, b, speeds=gbps):
    return "%.2fx" % (speeds[a] / speeds[b]) if a in speeds and b in speeds and speeds[b] > 0 else "n/a"
lines.append("")
lines.append("| ratio | by wall clock | by CPU time |")
lines.append("| --- | ---: | ---: |")
for a, b, what in [("faultline-t1", "rg-j1", "faultline 1 thread / rg 1 thread"),
                   ("faultline-t2", "rg-j2", "faultline 2 threads / rg 2 threads"),
                   ("faultline-t1", "grep-E", "faultline 1 thread / GNU grep -E"),
                   ("faultline-t1", "python-re", "faultline 1 thread / Python re (extrapolated)"),
                   ("faultline-t1", "hs-raw-t1", "faultline 1 thread / raw Hyperscan 1 thread"),
                   ("faultline-t2", "hs-raw-t2", "faultline 2 threads / raw Hyperscan 2 threads"),
                   ("faultline-t2", "faultline-t1", "faultline 2-thread speedup"),
                   ("hs-raw-t2", "hs-raw-t1", "raw Hyperscan 2-thread speedup"),
                   ("faultline-diagnose-t1", "faultline-t1", "faultline diagnose / bench, 1 thread")]:
    lines.append("| %s | %s | %s |" % (what, ratio(a, b), ratio(a, b, gbcpu)))
text = "\n".join(lines) + "\n"
open(os.path.join(out, "results.md"), "w").write(text)
print(text)
