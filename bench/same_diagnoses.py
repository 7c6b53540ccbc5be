#!/usr/bin/env python3
"""Whether two faultline builds diagnose the same inputs the same way.

Runs `diagnose --json` of both builds on each input and compares the JSON
with the timing fields (any key named "seconds") left out. The inputs:
tests/fixtures and examples/incidents (the golden cases), the realworld
corpus's first batch, work split only (never the held third or the blind
batches), and generated archives: a sample of tests/sim2 jobs and of
tests/progress scenarios, written under --tmp and deleted afterwards.

    python3 bench/same_diagnoses.py --old OLD/faultline --new build/src/cli/faultline --tmp /dev/shm/cmp

A build is run as given; put `env LD_LIBRARY_PATH=DIR FL` in --old for a
copy of a build whose library lives elsewhere. Exit status 1 when any
diagnosis differs (each difference is printed, first lines of a diff).
"""
import argparse
import difflib
import hashlib
import json
import pathlib
import shlex
import shutil
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent
SIM2 = [("xid79", "torchrun", "dmesg", 16, 1), ("straggler", "k8s", "rfc5424", 64, 2),
        ("hang", "srun", "journal_json", 64, 1), ("host_oom", "deepspeed", "dmesg_t", 16, 3),
        ("preempt", "mpirun", "journal_iso", 32, 1), ("nfs", "journald", "rfc3164", 16, 2),
        ("healthy", "torchrun", "dmesg", 32, 1), ("ecc", "srun", "dmesg", 16, 2)]
PROGRESS = [("megatron", "straggler", 64, ["--skew"]), ("kv", "straggler", 64, ["--skew"]),
            ("megatron", "hang", 32, []), ("kv", "periodic", 32, []), ("megatron", "moving", 32, []),
            ("kv", "healthy", 16, [])]


def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k != "seconds"}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o


def diagnose(cmd, paths):
    p = subprocess.run(shlex.split(cmd) + ["diagnose", "--json", "--threads", "1"] + paths,
                       capture_output=True, text=True)
    try:
        return json.dumps(strip(json.loads(p.stdout)), indent=1, sort_keys=True).splitlines()
    except json.JSONDecodeError:
        return [f"exit {p.returncode}", *p.stdout.splitlines(), *p.stderr.splitlines()]


def golden_inputs():
    for exp in sorted((REPO / "tests" / "fixtures").glob("**/expect.json")):
        yield exp.parent.name, [str(p) for p in sorted(exp.parent.iterdir())
                                if p.name != "expect.json" and not p.name.endswith(".md")]
    for exp in sorted((REPO / "examples" / "incidents").glob("*.expect.json")):
        yield exp.name, [str(exp.parent / exp.name[:-len(".expect.json")])]


def realworld_inputs():
    for d in sorted((REPO / "tests" / "realworld" / "cases").iterdir()):
        case = json.loads((d / "case.json").read_text())
        if case.get("batch") or int(hashlib.sha256(d.name.encode()).hexdigest(), 16) % 3 == 0:
            continue  # later batches and the held third: not looked at
        logs = [str(p) for p in sorted(d.iterdir()) if p.name not in ("case.json",) and not p.name.endswith(".md")]
        yield "realworld/" + d.name, logs


def generated_inputs(tmp):
    for kind, layout, kf, n, seed in SIM2:
        out = tmp / f"sim2-{kind}-{layout}-{kf}-{n}-{seed}"
        subprocess.run([sys.executable, str(REPO / "tests/sim2/sim2gen.py"), str(out), kind, layout, kf,
                        str(n), str(seed)], check=True, capture_output=True)
        yield out.name, [str(out)]
    for fmt, scen, n, extra in PROGRESS:
        out = tmp / f"progress-{fmt}-{scen}-{n}"
        subprocess.run([sys.executable, str(REPO / "tests/progress/gen.py"), str(out), fmt, scen, str(n), *extra],
                       check=True, capture_output=True)
        yield out.name, [str(out)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--tmp", required=True, help="where generated archives go (deleted afterwards)")
    args = ap.parse_args()
    tmp = pathlib.Path(args.tmp)
    tmp.mkdir(parents=True, exist_ok=False)
    same = differ = 0
    try:
        for name, paths in [*golden_inputs(), *realworld_inputs(), *generated_inputs(tmp)]:
            a, b = diagnose(args.old, paths), diagnose(args.new, paths)
            if a == b:
                same += 1
                continue
            differ += 1
            print(f"DIFFERS: {name}")
            print("\n".join(list(difflib.unified_diff(a, b, "old", "new", lineterm="", n=1))[:40]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{same} same, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
