#!/usr/bin/env python3
"""Greedy choice of caseless literal anchors that cover every signal of a rule
source, for the two-stage prototype (hs_two_stage.cc; bench/README.md,
"Literal anchors").

For each signal pattern it derives "factors": sets of literal alternatives of
which every match must contain one (a literal run, or an alternation whose
every branch has one); [Ee]-style classes count as one caseless letter. A
signal is covered when all alternatives of one of its factors contain a
chosen anchor. Anchors are substrings (MINLEN..12 bytes) of those
alternatives, picked greedily by covered-signals / (1 + PENALTY * hits per
1000 lines of SAMPLE).

  anchor_cover.py RULES_DIR SAMPLE MINLEN PENALTY > anchors.txt
"""
import collections
import glob
import json
import sys
import warnings

warnings.filterwarnings("ignore", category=DeprecationWarning)
import sre_constants as C  # noqa: E402
import sre_parse  # noqa: E402


def casefold_class(av):
    chars = set()
    for op, a in av:
        if op != C.LITERAL:
            return None
        chars.add(chr(a).lower())
    return chars.pop() if len(chars) == 1 else None


def factors(nodes):
    out, cur = [], ""
    for op, av in nodes:
        if op == C.LITERAL:
            cur += chr(av).lower()
            continue
        if op == C.IN and casefold_class(av):
            cur += casefold_class(av)
            continue
        if cur:
            out.append([cur])
            cur = ""
        if op == C.SUBPATTERN:
            b = best(av[-1])
            if b:
                out.append(b)
        elif op == C.BRANCH:
            alts = []
            for br in av[1]:
                b = best(br)
                if not b:
                    alts = None
                    break
                alts += b
            if alts:
                out.append(alts)
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT) and av[0] >= 1:
            b = best(av[2])
            if b:
                out.append(b)
    if cur:
        out.append([cur])
    return out


def best(nodes):
    f = factors(list(nodes))
    return max(f, key=lambda a: (min(len(x) for x in a), -len(a))) if f else None


def main():
    rules_dir, sample_path, minlen, pen = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    sample = open(sample_path, "rb").read().decode("utf-8", "replace").lower()
    nlines = max(1, sample.count("\n"))
    sigs = []
    for f in sorted(glob.glob(rules_dir + "/*/*.json")):
        if "/_" in f:
            continue
        r = json.load(open(f))
        for s in r["signals"]:
            fs = [a for a in factors(list(sre_parse.parse(s["pattern"]))) if min(map(len, a)) >= 3]
            sigs.append((r["id"] + "/" + s["id"], fs))
    freq = {}

    def hits(s):
        if s not in freq:
            freq[s] = sample.count(s)
        return freq[s]

    def subs(x):
        if len(x) <= minlen:
            yield x
            return
        for n in range(minlen, min(len(x), 12) + 1):
            for i in range(len(x) - n + 1):
                yield x[i:i + n]

    chosen, covered = [], set()

    def done(n, fs):
        return any(all((n, i, a) in covered for a in alts) for i, alts in enumerate(fs))

    while True:
        todo = [(n, fs) for n, fs in sigs if fs and not done(n, fs)]
        if not todo:
            break
        score = collections.Counter()
        for n, fs in todo:
            for i, alts in enumerate(fs):
                unc = [a for a in alts if (n, i, a) not in covered]
                for a in unc:
                    for s in set(subs(a)):
                        score[s] += 1.0 / len(unc)
        pick, pv = None, -1.0
        for s in sorted(score, key=lambda s: (-score[s], -len(s))):
            if score[s] < pv:
                break
            v = score[s] / (1 + pen * hits(s) / nlines * 1000)
            if v > pv:
                pick, pv = s, v
        chosen.append(pick)
        for n, fs in todo:
            for i, alts in enumerate(fs):
                for a in alts:
                    if pick in a:
                        covered.add((n, i, a))
    uncovered = [n for n, fs in sigs if not fs]
    print(f"{len(chosen)} anchors, {sum(hits(a) for a in chosen) / nlines * 1000:.1f} hits per 1000 "
          f"sample lines; signals without a usable literal: {uncovered}", file=sys.stderr)
    for a in chosen:
        print(a)


if __name__ == "__main__":
    main()
