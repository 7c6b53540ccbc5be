"""Scores `faultline diagnose --json` on archives from sim3gen.py.

Per archive: is the first incident's reference one the truth accepts (a
healthy run: no incident at all; a handled preemption: its notice or no
incident), its initiating rank and host the truth's, and does any incident
name a host the archive does not hold.

    python3 tests/sim3/score.py --bin build/src/cli/faultline               # 16 ranks, seeds 1-3
    python3 tests/sim3/score.py --bin build/src/cli/faultline --seeds 1 -v  # list every miss
"""
import argparse
import os
import pathlib
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]
import sim3gen as gen  # noqa: E402
from simscore import diagnose, hosts_named, rate, run_all, table as _table  # noqa: E402,F401


def cases(ranks=(16,), seeds=(1, 2, 3), kinds=None, encodings=None):
    return [(k, e, n, s) for s in seeds for n in ranks for k in gen.KINDS for e in gen.ENCODINGS
            if (not kinds or k in kinds) and (not encodings or e in encodings)]


def score(truth, report, error=None):
    m = {"case": f"{truth['kind']}/{truth['encoding']}/{truth['ranks']}/s{truth['seed']}",
         "kind": truth["kind"], "encoding": truth["encoding"], "ranks": truth["ranks"]}
    if report is None:
        m.update(top1=False, rank=False if truth["rank"] is not None else None,
                 host=False if truth["host"] is not None else None, none=None, foreign=[], got=f"error: {error}")
        return m
    incs = report.get("incidents", [])
    first = incs[0] if incs else None
    refs = truth["references"]
    if not first:
        m["top1"] = truth["none_ok"]
    else:
        m["top1"] = first["reference"] in refs
    init = first["initiating"] if first else {}
    judged = first is not None and m["top1"]  # rank and host count only where an incident is expected and named
    want_inc = not (truth["none_ok"] and not first)
    m["rank"] = None if truth["rank"] is None or not want_inc else (judged and init.get("rank") in truth["ranks_ok"])
    m["host"] = None if truth["host"] is None or not want_inc else (judged and init.get("host") == truth["host"])
    m["none"] = (not incs) if truth["kind"] == "healthy_scary" else None
    m["foreign"] = sorted(hosts_named(report) - set(truth["hosts"]))
    m["got"] = f"{first['reference']} | rank {init.get('rank')} | host {init.get('host')}" if first else "no incident"
    m["want"] = f"{refs[:1]} | rank {truth['rank']} | host {truth['host']}"
    return m


def run(binary, todo, root, workers=2):
    def one(c):
        kind, enc, n, seed = c
        d = pathlib.Path(root) / f"{kind}-{enc}-{n}-s{seed}"
        truth = gen.simulate(str(d), kind, enc, n, seed)
        report, err = diagnose(binary, d / "logs")
        return score(truth, report, err)

    return run_all(one, todo, workers)


def table(marks, by):
    return _table(marks, by, 'no incident', 'none')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.environ.get("FAULTLINE_BIN", "build/src/cli/faultline"))
    ap.add_argument("--ranks", default="16")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--kinds", default="")
    ap.add_argument("--encodings", default="")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("-v", "--verbose", action="store_true", help="list every miss")
    ap.add_argument("--keep", help="write the archives here (default: a temporary directory)")
    a = ap.parse_args()
    todo = cases([int(x) for x in a.ranks.split(",")], [int(x) for x in a.seeds.split(",")],
                 [k for k in a.kinds.split(",") if k], [x for x in a.encodings.split(",") if x])
    with tempfile.TemporaryDirectory() as tmp:
        marks = run(a.bin, todo, a.keep or tmp, a.jobs)
    for by in ("kind", "encoding"):
        print(table(marks, by), end="\n\n")
    parts = []
    for key in ("top1", "rank", "host", "none"):
        ok, n = rate(marks, key)
        parts.append(f"{key} {ok}/{n}")
    print(f"archives {len(marks)}: " + ", ".join(parts) + f", foreign host {sum(1 for m in marks if m['foreign'])}")
    if a.verbose:
        for m in marks:
            bad = [k for k in ("top1", "rank", "host", "none") if m.get(k) is False]
            if bad or m["foreign"]:
                print(f"MISS {m['case']} {','.join(bad)} got: {m['got']} want: {m.get('want')} foreign: {m['foreign']}")


if __name__ == "__main__":
    main()
