"""Scores `faultline diagnose --json` on archives from sim2gen.py.

Per archive: is the first incident's reference one the truth accepts (a
healthy job: no incident at all), its initiating rank and host the truth's,
is a straggler or a silent hang named at all, and does any incident name a
host the archive does not hold.

    python3 tests/sim2/score.py --bin build/src/cli/faultline               # full matrix, 3 seeds
    python3 tests/sim2/score.py --bin build/src/cli/faultline --ranks 16 --seeds 1 -v
    python3 tests/sim2/score.py --bin build/src/cli/faultline --no-skew     # every host's clock right

The matrix: every kind x layout at 16 and 256 ranks, and at 1,024 ranks
every kind in two layouts; the kernel-log format turns with kind, layout
and seed, so each seed covers every format with every layout.
"""
import argparse
import os
import pathlib
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]
import sim2gen as gen  # noqa: E402
from simscore import diagnose, hosts_named, rate, run_all, table as _table  # noqa: E402,F401

HANG_REFS = gen.REFS["hang"]


def cases(ranks=(16, 256, 1024), seeds=(1, 2, 3), kinds=None, layouts=None):
    """(kind, layout, kformat, ranks, seed) of the matrix."""
    out = []
    for seed in seeds:
        for n in ranks:
            for ki, kind in enumerate(gen.KINDS):
                if kinds and kind not in kinds:
                    continue
                for li, layout in enumerate(gen.LAYOUTS):
                    if layouts and layout not in layouts:
                        continue
                    if n >= 1024 and (li - ki - seed) % 3:
                        continue
                    kf = gen.KFORMATS[(ki + li + seed) % len(gen.KFORMATS)]
                    out.append((kind, layout, kf, n, seed))
    return out


def score(truth, report, error=None):
    """One archive's marks: None where the truth asks nothing."""
    m = {"case": f"{truth['kind']}/{truth['layout']}/{truth['kformat']}/{truth['ranks']}/s{truth['seed']}",
         "kind": truth["kind"], "layout": truth["layout"], "kformat": truth["kformat"], "ranks": truth["ranks"]}
    if report is None:
        m.update(top1=False, rank=False if truth["rank"] is not None else None,
                 host=False if truth["host"] is not None else None, foreign=[], got=f"error: {error}")
        return m
    incs = report.get("incidents", [])
    first = incs[0] if incs else None
    refs = truth["references"]
    if truth["kind"] == "healthy":
        m["top1"] = not incs
    else:
        m["top1"] = bool(first) and first["reference"] in refs
    init = first["initiating"] if first else {}
    m["rank"] = None if truth["rank"] is None else init.get("rank") == truth["rank"]
    m["host"] = None if truth["host"] is None else init.get("host") == truth["host"]
    m["foreign"] = sorted(hosts_named(report) - set(truth["hosts"]))
    all_refs = [i["reference"] for i in incs]
    if truth["kind"] == "straggler":
        m["found"] = any(r in gen.STRAGGLER_REFS for r in all_refs)
    if truth["kind"] == "hang":
        m["found"] = any(r in HANG_REFS for r in all_refs)
    m["got"] = (f"{first['reference']} | rank {init.get('rank')} | host {init.get('host')}" if first else "no incident")
    m["want"] = f"{refs[:1]} | rank {truth['rank']} | host {truth['host']}"
    return m


def run(binary, todo, root, workers=2, rules=None, skew=True):
    def one(c):
        kind, layout, kf, n, seed = c
        d = pathlib.Path(root) / f"{kind}-{layout}-{kf}-{n}-s{seed}"
        truth = gen.simulate(str(d), kind, layout, kf, n, seed, skew)
        report, err = diagnose(binary, d / "logs", rules)
        return score(truth, report, err)

    return run_all(one, todo, workers)


def totals(marks):
    out = {}
    for key in ("top1", "rank", "host"):
        ok, n = rate(marks, key)
        out[key] = ok / n if n else 1.0
    for kind in ("straggler", "hang"):
        ok, n = rate([m for m in marks if m["kind"] == kind], "found")
        out[f"{kind}_found"] = ok / n if n else 1.0
    out["foreign"] = sum(1 for m in marks if m["foreign"])
    return out


def table(marks, by):
    return _table(marks, by, 'found', 'found')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.environ.get("FAULTLINE_BIN", "build/src/cli/faultline"))
    ap.add_argument("--rules", help="a rule source dir or compiled .flrules (default: the built-in ruleset)")
    ap.add_argument("--ranks", default="16,256,1024")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--kinds", default="")
    ap.add_argument("--layouts", default="")
    ap.add_argument("--no-skew", action="store_true", help="every host's clock right (skew 0)")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("-v", "--verbose", action="store_true", help="list every miss")
    ap.add_argument("--keep", help="write the archives here (default: a temporary directory)")
    a = ap.parse_args()
    todo = cases([int(x) for x in a.ranks.split(",")], [int(x) for x in a.seeds.split(",")],
                 [k for k in a.kinds.split(",") if k], [x for x in a.layouts.split(",") if x])
    with tempfile.TemporaryDirectory() as tmp:
        marks = run(a.bin, todo, a.keep or tmp, a.jobs, a.rules, not a.no_skew)
    for by in ("kind", "layout", "kformat", "ranks"):
        print(table(marks, by), end="\n\n")
    t = totals(marks)
    print(f"archives {len(marks)}: top-1 {t['top1']:.1%}, rank {t['rank']:.1%}, host {t['host']:.1%}, "
          f"stragglers found {t['straggler_found']:.1%}, hangs found {t['hang_found']:.1%}, "
          f"archives naming a foreign host {t['foreign']}")
    if a.verbose:
        for m in marks:
            bad = [k for k in ("top1", "rank", "host", "found") if m.get(k) is False]
            if bad or m["foreign"]:
                print(f"MISS {m['case']} {','.join(bad)} got: {m['got']} want: {m.get('want')} foreign: {m['foreign']}")


if __name__ == "__main__":
    main()
