"""The last lines a job printed, whatever the library: a failed job's
ending is an incident, and a run that completed, survived an error or only
warned is not (issue #18: blind batches kept showing failed jobs with no
incident at all).

tests/cli/endings/ holds real endings from public issue threads outside the
real-world corpus, one file per excerpt (paths of posters' machines replaced
by a neutral /opt prefix); index.json gives each its thread, whether the job
failed, and, where the excerpt shows it, a text the initiating evidence of
the first incident must hold, and, for an ending no mechanism reads yet,
`gap`: why (the test expects it to fail until one does), and, where a
catalog reference clearly applies, `reference`: the title the first
incident must name. Python tracebacks of every class name,
C++ terminate reports, glog/abseil fatal logs, Rust and Go panics, Java
exceptions, crash signals in the words of shells, faulthandler and
gdb, MPI aborts, launcher summaries (torchrun, mpirun, srun, the DeepSpeed launcher),
CUDA errors printed by C code, and logger prefixes of many libraries.

Run as a script for the audit's figures:
python3 tests/cli/test_endings.py --bin build/src/cli/faultline"""
import argparse
import json
import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
ENDINGS = HERE / "endings"
INDEX = json.loads((ENDINGS / "index.json").read_text())


def report_of(binary, name, rules=None):
    extra = ["--rules", rules] if rules else []
    p = subprocess.run([binary, "diagnose", "--json", *extra, str(ENDINGS / f"{name}.log")],
                       capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    return json.loads(p.stdout)


def verdict(report, case):
    """None when the report is right for the case, else what is wrong."""
    incidents = report.get("incidents") or []
    primary = incidents[0] if incidents else None
    benign = primary is not None and primary.get("reference", "").startswith("Benign")
    # An incident the report marks survived (its rank went on after it) says
    # the job carried on: right for a negative, the wrong answer for a
    # failure (a fatal error read as one the job went on from).
    survived = primary is not None and (primary.get("initiating") or {}).get("survived", False)
    if not case["failed"]:
        return None if primary is None or benign or survived else f"incident on a negative: {primary['reference']}"
    if primary is None or benign:
        return "no incident"
    if survived:
        return "marked survived"
    want_reference = case.get("reference")
    if want_reference and primary.get("reference") != want_reference:
        return f"reference {primary.get('reference')!r}, not {want_reference!r}"
    want = case.get("initiating")
    if want:
        texts = [e.get("text", "") for e in (primary.get("initiating") or {}).get("evidence", [])]
        if not any(want in t for t in texts):
            return f"initiating {texts[:2]} lacks {want!r}"
    return None


def cases():
    """Every excerpt; a known gap (its "gap" says which) is a strict xfail, so
    that the mechanism that closes it shows up as a pass to record."""
    for name in sorted(INDEX):
        gap = INDEX[name].get("gap")
        yield pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=gap)) if gap else name


@pytest.mark.parametrize("name", list(cases()))
def test_ending(faultline_bin, validate, name):
    report = report_of(faultline_bin, name)
    validate(report)
    problem = verdict(report, INDEX[name])
    assert problem is None, f"{name} ({INDEX[name]['source']}): {problem}"


def test_every_excerpt_is_indexed():
    logs = {p.stem for p in ENDINGS.glob("*.log")}
    assert logs == set(INDEX), logs ^ set(INDEX)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.environ.get("FAULTLINE_BIN", "build/src/cli/faultline"))
    ap.add_argument("--rules", help="a rule source directory or compiled file (default: the embedded ruleset)")
    ap.add_argument("--prefix", default="", help="only the excerpts whose name starts so (ops- for the ops audit)")
    args = ap.parse_args()
    names = [n for n in sorted(INDEX) if n.startswith(args.prefix)]
    failed = [n for n in names if INDEX[n]["failed"]]
    negative = [n for n in names if not INDEX[n]["failed"]]
    problems = {n: verdict(report_of(args.bin, n, args.rules), INDEX[n]) for n in names}
    none = [n for n in failed if problems[n] == "no incident"]
    line = [n for n in failed if problems[n] and problems[n].startswith("initiating")]
    reference = [n for n in failed if problems[n] and problems[n].startswith("reference")]
    marked = [n for n in failed if problems[n] == "marked survived"]
    fired = [n for n in negative if problems[n]]
    print(f"failed endings: {len(failed)}, no incident: {len(none)}, wrong initiating line: {len(line)}, "
          f"wrong catalog reference: {len(reference)} of {sum(1 for n in failed if INDEX[n].get('reference'))} labelled, "
          f"marked survived: {len(marked)}")
    print(f"negative endings: {len(negative)}, with an incident: {len(fired)}")
    for n in none + marked + reference + line + fired:
        print(f"  {n}: {problems[n]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
