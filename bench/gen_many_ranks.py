#!/usr/bin/env python3
"""A log naming very many distinct ranks and hosts, for the memory bound.

Each line is a PyTorch NCCL watchdog timeout of its own rank (the
`[rankK]:` prefix torchrun adds, the `[Rank K]` c10d prints), on one of
--hosts hosts (as a `hostname:` prefix would give), with a progress line
every --progress-every lines: a hostile, not a realistic, job. What the
scan keeps per rank and per host must stay bounded whatever --ranks is;
`/usr/bin/time -v faultline diagnose --json OUT` measures it
(bench/README.md, "Memory bound").

  gen_many_ranks.py --ranks 2000000 --out /dev/shm/many-ranks.log
"""

import argparse


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", type=int, default=2_000_000)
    ap.add_argument("--hosts", type=int, default=250_000)
    ap.add_argument("--progress-every", type=int, default=4)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    with open(a.out, "w", buffering=1 << 22) as f:
        for r in range(a.ranks):
            host = f"node{r % a.hosts:06d}"
            sec = 27 + (r // 100_000) % 30
            f.write(
                f"{host}: [rank{r}]:[E1116 13:50:{sec:02d}.831000090 ProcessGroupNCCL.cpp:632] [Rank {r}] "
                f"Watchdog caught collective operation timeout: WorkNCCL(SeqNum={7331 + r % 7}, "
                f"OpType=ALLREDUCE, NumelIn=6553600, NumelOut=6553600, Timeout(ms)=600000) ran for "
                f"600052 milliseconds before timing out.\n"
            )
            if r % a.progress_every == 0:
                f.write(
                    f"{host}: [rank{r}]:[I1116 13:40:{sec:02d}.000000 train.py:812] iteration {r % 1000}/ "
                    f"100000 | consumed samples: 12800 | elapsed time per iteration (ms): 812.3 | "
                    f"lm loss: 2.345E+00 |\n"
                )


if __name__ == "__main__":
    main()
