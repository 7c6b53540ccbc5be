#!/usr/bin/env python3
"""Writes the reference sample of the compiler's cost check
(src/ruleset/cost_sample.log): every EVERY-th line of each file of a healthy
job that bench/gen_logs.py generates (rank logs, kernel and launcher logs, in
file order), so that the sample holds ordinary lines in the proportions of
the bench generator's logs. Deterministic: same arguments, same bytes.

    python3 bench/cost_sample.py --out src/ruleset/cost_sample.log

The defaults (a 256M job, seed 7, one line in 2048) give about 1,000 lines,
140 KB.
"""
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--size", default="256M")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--every", type=int, default=2048)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        job = os.path.join(tmp, "job")
        subprocess.run([sys.executable, os.path.join(HERE, "gen_logs.py"), "--out", job, "--size", a.size,
                        "--seed", str(a.seed), "--no-failures", "--jobs", "1",
                        "--manifest", os.path.join(tmp, "manifest.json")],
                       check=True, stdout=subprocess.DEVNULL)
        files = sorted(os.path.join(d, f) for d, _, fs in os.walk(job) for f in fs)
        with open(a.out, "wb") as out:
            for path in files:
                with open(path, "rb") as f:
                    for i, line in enumerate(f):
                        if i % a.every == a.every // 2:
                            out.write(line if line.endswith(b"\n") else line + b"\n")


if __name__ == "__main__":
    main()
