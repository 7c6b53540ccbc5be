#!/usr/bin/env python3
"""Scores faultline on the labelled real-log corpus (tests/realworld/cases).

Each case is a directory with log.txt (text as posted in a public thread) and
case.json (labels; format in tests/realworld/README.md). The command runs
`faultline diagnose --json` on every case's log.txt and compares the primary
incident with the labels.

    python3 tests/realworld/eval.py                  # text summary, both parts
    python3 tests/realworld/eval.py --split held     # only the held-back third
    python3 tests/realworld/eval.py --json out.json  # figures as JSON too
    python3 tests/realworld/eval.py --misses         # every miss, one line each
    python3 tests/realworld/eval.py --grep-baseline  # grep_baseline.py scored beside it
    python3 tests/realworld/eval.py --batch blind-1  # only the cases labelled batch "blind-1"
    python3 tests/realworld/eval.py --batch first    # only the cases with no batch label

The split is fixed by the case id, never chosen: a case belongs to the
held-back third when int(sha256(id), 16) % 3 == 0. Rules are tuned on the
"work" part only; the held-back part is scored at the end of a piece of work
and both figures are reported, a large gap meaning rules fit cases instead of
failures.

Figures (each over the cases where the label exists):
  top1             primary incident names an expected reference (or an accepted
                   rule); a failed job labelled with no catalog reference wants
                   the fallback reference FALLBACK_REFERENCE; a negative wants no
                   incident, a benign one, or one the report marks survived
                   (progress on its rank after it: the job carried on)
  initiating_line  the primary's initiating evidence holds the labelled line
  rank, host       the primary's initiating rank/host equal the label (a host
                   by its short name: the engine reports node017 for
                   node017.cluster.example.com)
  no_incident      failed jobs for which the report has no incident at all
  hardware_on_negative  negatives whose primary incident is on the hardware layer
  traps            primary names a reference the case rules out (on a negative,
                   not when it is benign or marked survived: it names no failure)
"""
import argparse
import collections
import hashlib
import json
import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
FALLBACK_REFERENCE = "Unrecognised fatal error"
# The batch of a case whose case.json names none: the corpus as first split
# and tuned on. Later batches were labelled blind and are scored apart.
FIRST_BATCH = "first"


def held_back(case_id):
    return int(hashlib.sha256(case_id.encode()).hexdigest(), 16) % 3 == 0


def load_cases(root):
    cases = []
    for d in sorted(p for p in root.iterdir() if p.is_dir()):
        label = json.loads((d / "case.json").read_text())
        if label.get("id") != d.name:
            raise SystemExit(f"{d / 'case.json'}: id {label.get('id')!r} differs from its directory")
        label["dir"] = d
        label["split"] = "held" if held_back(d.name) else "work"
        cases.append(label)
    return cases


def diagnose(binary, case):
    # Run inside the case's directory: its name is the corpus's id, not a
    # machine, and a folder shaped like a host ("hafs-101") would be read
    # as the host of every line.
    p = subprocess.run([os.path.abspath(binary), "diagnose", "--json", "log.txt"],
                       cwd=case["dir"], capture_output=True, timeout=120)
    if p.returncode not in (0, 2) or not p.stdout:
        raise SystemExit(f"{case['dir']}: faultline exited {p.returncode}: "
                         f"{p.stderr.decode(errors='replace')[:300]}")
    return json.loads(p.stdout)


def short_host(host):
    """A host as the engine names it: a fully qualified name by its first
    label (node017.cluster.example.com -> node017; the engine shortens
    names so that one host's lines agree whichever form they print), an
    address as it is."""
    if not host:
        return host
    if host.replace(".", "").isdigit() or ":" in host:
        return host
    return host.split(".", 1)[0]


def is_benign(incident):
    return incident.get("reference", "").startswith("Benign")


def score_case(case, report):
    """Returns the outcome of one case: a dict of metric -> bool (absent when
    the case has no label for it) plus what the primary was."""
    incidents = report.get("incidents") or []
    primary = incidents[0] if incidents else None
    got_ref = primary["reference"] if primary else None
    got_rule = primary["rule"] if primary else None
    expected = case.get("expected") or []
    accept = set(case.get("accept_rules") or [])
    out = {"got": got_ref, "got_rule": got_rule}
    if case["failed"]:
        if expected:
            out["top1"] = primary is not None and (got_ref in expected or got_rule in accept)
        else:
            out["top1"] = got_ref == FALLBACK_REFERENCE
        out["no_incident"] = primary is None
    else:
        out["top1"] = (primary is None or is_benign(primary) or got_ref in expected or
                       (primary.get("initiating") or {}).get("survived", False))
        out["hardware_on_negative"] = primary is not None and primary.get("layer") == "hardware"
    initiating = primary["initiating"] if primary else {}
    if case.get("initiating"):
        texts = [e.get("text", "") for e in initiating.get("evidence", [])]
        out["initiating_line"] = any(case["initiating"] in t for t in texts)
    if case.get("rank") is not None:
        out["rank"] = initiating.get("rank") == case["rank"]
    if case.get("host"):
        out["host"] = short_host(initiating.get("host")) == short_host(case["host"])
    # On a negative, a benign or survived primary says that nothing failed
    # (top1 accepts it): naming the trap's reference that way is not taking it.
    names_failure = primary is not None and (case["failed"] or not (
        is_benign(primary) or (primary.get("initiating") or {}).get("survived", False)))
    out["trap"] = names_failure and got_ref in (case.get("traps") or [])
    return out


def summarise(cases, outcomes):
    metrics = ("top1", "initiating_line", "rank", "host", "no_incident", "hardware_on_negative",
               "trap")
    fig = {"cases": len(cases), "failed": sum(c["failed"] for c in cases),
           "negatives": sum(not c["failed"] for c in cases)}
    for m in metrics:
        vals = [o[m] for o in outcomes if m in o]
        fig[m] = {"n": len(vals), "hits": sum(vals),
                  "rate": round(sum(vals) / len(vals), 4) if vals else None}
    per_ref = collections.defaultdict(lambda: {"expected": 0, "recalled": 0, "named": 0,
                                               "named_right": 0})
    confusion = collections.Counter()
    for c, o in zip(cases, outcomes):
        want = (c.get("expected") or [None])[0] if c["failed"] else "(no incident)"
        want = want or FALLBACK_REFERENCE
        per_ref[want]["expected"] += 1
        per_ref[want]["recalled"] += bool(o["top1"])
        got = o["got"] or "(no incident)"
        per_ref[got]["named"] += 1
        per_ref[got]["named_right"] += bool(o["top1"])
        if not o["top1"]:
            confusion[(want, got)] += 1
    fig["per_reference"] = {
        ref: {**v, "recall": round(v["recalled"] / v["expected"], 4) if v["expected"] else None,
              "precision": round(v["named_right"] / v["named"], 4) if v["named"] else None}
        for ref, v in sorted(per_ref.items())}
    fig["confusion"] = [{"expected": w, "got": g, "count": n}
                        for (w, g), n in confusion.most_common()]
    return fig


def print_figures(name, fig, out):
    def rate(m):
        f = fig[m]
        return f"{f['hits']}/{f['n']} ({100 * f['rate']:.0f}%)" if f["n"] else "-"
    out.write(f"== {name}: {fig['cases']} cases ({fig['failed']} failed, "
              f"{fig['negatives']} negatives)\n")
    for m, label in (("top1", "top-1 reference right"), ("initiating_line", "initiating line right"),
                     ("rank", "initiating rank right"), ("host", "initiating host right"),
                     ("no_incident", "failed jobs with no incident"),
                     ("hardware_on_negative", "hardware verdict on a negative"),
                     ("trap", "trap taken")):
        out.write(f"  {label:32s} {rate(m)}\n")
    if fig.get("confusion"):
        out.write("  misses (expected -> got):\n")
        for row in fig["confusion"][:15]:
            out.write(f"    {row['count']:3d}  {row['expected'][:60]} -> {row['got'][:60]}\n")


def by_part(cases, outcomes):
    """Figures of the work part, the held part and both. Which references a
    held case expected or got is never given out (per_reference and the
    misses table are kept for the work part only): held figures are totals."""
    result = {}
    for part in ("work", "held"):
        idx = [i for i, c in enumerate(cases) if c["split"] == part]
        if idx:
            result[part] = summarise([cases[i] for i in idx], [outcomes[i] for i in idx])
    result["all"] = summarise(cases, outcomes)
    for part in ("held", "all"):
        if part in result and (part == "held" or any(c["split"] == "held" for c in cases)):
            result[part].pop("per_reference")
            result[part].pop("confusion")
    return result


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.environ.get(
        "FAULTLINE_BIN", str(REPO / "build" / "src" / "cli" / "faultline")))
    ap.add_argument("--cases", default=str(HERE / "cases"))
    ap.add_argument("--split", choices=("work", "held", "all"), default="all")
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON ('-': stdout)")
    ap.add_argument("--misses", action="store_true", help="list every miss")
    ap.add_argument("--batch", metavar="NAME",
                    help="score only the cases whose case.json has \"batch\": NAME "
                         f"(cases without one are batch {FIRST_BATCH!r})")
    ap.add_argument("--grep-baseline", action="store_true",
                    help="also score grep_baseline.py (a fixed regex table, first match wins)")
    args = ap.parse_args(argv)
    cases = load_cases(pathlib.Path(args.cases))
    if args.batch:
        cases = [c for c in cases if c.get("batch", FIRST_BATCH) == args.batch]
        if not cases:
            sys.stderr.write(f"eval.py: no case in {args.cases} has batch {args.batch!r}\n")
            raise SystemExit(2)
    if args.split != "all":
        cases = [c for c in cases if c["split"] == args.split]
    outcomes = [score_case(c, diagnose(args.bin, c)) for c in cases]
    result = by_part(cases, outcomes)
    text = sys.stderr if args.json == "-" else sys.stdout
    for part in ("work", "held", "all"):
        if part in result:
            print_figures(part, result[part], text)
    if args.grep_baseline:
        sys.path.insert(0, str(HERE))
        import grep_baseline
        grep = [score_case(c, grep_baseline.diagnose(c["dir"] / "log.txt")) for c in cases]
        result["grep_baseline"] = by_part(cases, grep)
        for part in ("work", "held", "all"):
            if part in result["grep_baseline"]:
                print_figures(f"{part} (grep-first baseline)", result["grep_baseline"][part], text)
    if args.misses:
        held_misses = 0
        for c, o in zip(cases, outcomes):
            bad = [m for m in ("top1", "initiating_line", "rank", "host") if m in o and not o[m]]
            if bad and c["split"] == "held":
                held_misses += 1
            elif bad:
                text.write(f"MISS {c['id']} [{c['split']}] {','.join(bad)}: want "
                           f"{(c.get('expected') or ['-'])[0][:50]!r} got {o['got']!r}\n")
        if held_misses:
            text.write(f"{held_misses} held case(s) missed something; held cases are not listed\n")
    if args.json:
        doc = json.dumps(result, indent=1)
        if args.json == "-":
            print(doc)
        else:
            pathlib.Path(args.json).write_text(doc + "\n")
    return result


if __name__ == "__main__":
    main()
