#!/usr/bin/env python3
"""Reference, rank and host accuracy of `faultline diagnose` over the
archives of gen_archive.py: every layout and the kinds it is tested with, at
16, 256 and 1,024 ranks, with and without per-host clock skew, over several
seeds. Prints one row per layout and the totals; exits 1 when a total is
under --floor or any report names a host outside its archive's own hosts.

    python3 tests/topology/accuracy.py --bin build/src/cli/faultline --seeds 3

A case counts as right for the reference when the primary incident's rule is
one the truth allows, for the rank when the truth names none or the primary
incident's initiating rank equals it, and for the host when the initiating
host equals the truth's. For spot cases it also counts whether the incident
says rightly if a checkpoint was saved after the notice (printed apart, per
skew; not under the floor).
"""
import argparse
import collections
import json
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gen_archive  # noqa: E402

SIZES = [(16, 0), (16, 1), (256, 0), (256, 1), (1024, 0), (1024, 1)]


def run_case(binary, root, layout, kind, ranks, skew, seed):
    d = pathlib.Path(root) / ("case_%s_%s_%d_%d_%d" % (layout, kind, ranks, skew, seed))
    truth = gen_archive.generate(str(d), layout, kind, ranks, skew, seed)
    p = subprocess.run([binary, "diagnose", "--json", str(d)], capture_output=True, timeout=600)
    if p.returncode != 0:
        return truth, None
    return truth, json.loads(p.stdout)


def score(truth, report):
    want = truth["initiating"]
    if not report or not report.get("incidents"):
        return False, False, False, set()
    got = report["incidents"][0]
    init = got.get("initiating") or {}
    ref = got["rule"] in want["rules"]
    rank = want["rank"] is None or init.get("rank") == want["rank"]
    host = init.get("host") == want["host"]
    stray = gen_archive.named_hosts(report, set()) - set(truth["hosts"])
    return ref, rank, host, stray


def checkpoint_told(truth, report):
    """None when the case has no notice; else whether the primary incident
    says rightly if a checkpoint was saved after the notice."""
    want = truth["initiating"].get("checkpoint_after_notice")
    if want is None:
        return None
    got = ((report or {}).get("incidents") or [{}])[0].get("explanation", "")
    return ("A checkpoint was saved after the notice" in got) == want


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/src/cli/faultline")
    ap.add_argument("--seeds", type=int, default=3, help="seeds per layout, kind and size")
    ap.add_argument("--floor", type=float, default=0.97)
    ap.add_argument("--verbose", action="store_true", help="print every wrong case")
    a = ap.parse_args()
    rows = collections.OrderedDict()
    strays = []
    ckpt = {0: [0, 0], 1: [0, 0]}  # per skew: right, cases
    with tempfile.TemporaryDirectory(prefix="fl_topology_acc_") as root:
        for layout in gen_archive.LAYOUTS:
            for kind in gen_archive.LAYOUT_KINDS[layout]:
                for ranks, skew in SIZES:
                    for seed in range(a.seeds):
                        truth, report = run_case(a.bin, root, layout, kind, ranks, skew, 1000 + seed)
                        ref, rank, host, stray = score(truth, report)
                        row = rows.setdefault(layout, [0, 0, 0, 0])
                        row[0] += 1
                        row[1] += ref
                        row[2] += rank
                        row[3] += host
                        told = checkpoint_told(truth, report)
                        if told is not None:
                            ckpt[skew][0] += told
                            ckpt[skew][1] += 1
                        if stray:
                            strays.append((layout, kind, ranks, skew, seed, sorted(stray)))
                        if a.verbose and not (ref and rank and host):
                            got = (report or {}).get("incidents") or [{}]
                            print("wrong: %s %s %d skew=%d seed=%d want %s got %s %s" % (
                                layout, kind, ranks, skew, seed, truth["initiating"], got[0].get("rule"),
                                {k: (got[0].get("initiating") or {}).get(k) for k in ("rank", "host")}))
    total = [0, 0, 0, 0]
    print("%-10s %6s %10s %10s %10s" % ("layout", "cases", "reference", "rank", "host"))
    for layout, row in rows.items():
        n = row[0]
        print("%-10s %6d %9.1f%% %9.1f%% %9.1f%%" % (layout, n, 100.0 * row[1] / n, 100.0 * row[2] / n,
                                                   100.0 * row[3] / n))
        total = [t + v for t, v in zip(total, row)]
    n = total[0]
    print("%-10s %6d %9.1f%% %9.1f%% %9.1f%%" % ("all", n, 100.0 * total[1] / n, 100.0 * total[2] / n,
                                               100.0 * total[3] / n))
    print("checkpoint after the notice told right: %d/%d without skew, %d/%d with skew (not in the floor)" % (
        ckpt[0][0], ckpt[0][1], ckpt[1][0], ckpt[1][1]))
    print("hosts outside the archive: %d case(s)%s" % (len(strays), "" if not strays else " " + repr(strays[:5])))
    low = any(v < a.floor * n for v in total[1:])
    return 1 if low or strays else 0


if __name__ == "__main__":
    sys.exit(main())
