#!/usr/bin/env python3
"""Turns the ruleset's signal patterns (fl_hs_raw --dump-patterns TSV) into
pattern files for the peer tools of bench/peers.sh, and checks every
converted pattern with the tool that will run it.

  export_patterns.py patterns.tsv OUTDIR
    OUTDIR/patterns.rg.txt    ripgrep (Rust regex), one per line
    OUTDIR/patterns.ere.txt   GNU grep -E (POSIX ERE + GNU extensions)
    OUTDIR/patterns.py.txt    Python re, one per line
    OUTDIR/patterns.notes.txt what was rewritten or dropped, and why

The patterns are Hyperscan/PCRE syntax restricted by the rule compiler (no
lookaround, no back-references, nothing that matches a newline). What needs
rewriting:
  * caseless signals: (?i) for rg and Python (as a scoped (?i:...) group in
    Python, whose global flags must lead the whole pattern); GNU grep has only
    a global -i, so letters outside brackets become [xX] pairs.
  * GNU ERE has no (?:...) (becomes (...)), no \\xHH, \\t, \\d, \\w escapes
    (literal bytes or classes), no escapes inside brackets: [^)\\n] becomes [^)]
    (grep works line by line, so excluding \\n is implicit), [^\\n]* becomes .*,
    \\] moves to the front of its class, \\- to the end.
  * Rust regex (ripgrep 13) rejects escapes of characters that are not
    metacharacters (\\" \\' \\/ \\<): they become the bare character.
A pattern a tool still rejects is dropped for that tool and listed in the
notes (none with the default ruleset at the time of writing).
"""

import os
import re
import subprocess
import sys

RUST_META = set("\\.+*?()|[]{}^$#&-~")


def read_tsv(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        next(f)
        for line in f:
            idx, name, role, caseless, pat = line.rstrip("\n").split("\t", 4)
            rows.append({"id": int(idx), "name": name, "role": role, "caseless": caseless == "1",
                         "pattern": pat})
    return rows


def tokens(p):
    """Splits a pattern into ('esc', c), ('class', body, negated), ('lit', c)."""
    out = []
    i = 0
    while i < len(p):
        c = p[i]
        if c == "\\" and i + 1 < len(p):
            if p[i + 1] == "x" and i + 3 < len(p):
                out.append(("hex", p[i + 2:i + 4]))
                i += 4
            else:
                out.append(("esc", p[i + 1]))
                i += 2
        elif c == "[":
            j = i + 1
            neg = j < len(p) and p[j] == "^"
            if neg:
                j += 1
            items = []
            first = True
            while j < len(p) and (p[j] != "]" or first):
                if p[j] == "\\" and j + 1 < len(p):
                    items.append(("esc", p[j + 1]))
                    j += 2
                else:
                    items.append(("lit", p[j]))
                    j += 1
                first = False
            out.append(("class", items, neg))
            i = j + 1
        else:
            out.append(("lit", c))
            i += 1
    return out


def ere_class(items, neg, caseless):
    chars = []
    has_rbracket = has_dash = False
    for kind, c in items:
        if kind == "esc":
            if c == "n" or c == "r":
                continue
            if c == "t":
                chars.append("\t")
                continue
            if c == "]":
                has_rbracket = True
                continue
            if c == "-":
                has_dash = True
                continue
            if c == "d":
                chars.append("0-9")
                continue
            if c == "w":
                chars.append("[:alnum:]_")
                continue
            chars.append(c)
        else:
            chars.append(c)
    body = "".join(chars)
    if caseless:
        extra = "".join(ch.swapcase() for ch in body if ch.isalpha() and len(ch) == 1)
        body += extra
    if neg and not body and not has_rbracket and not has_dash:
        return "."  # [^\n] on a line
    if has_rbracket:
        body = "]" + body
    if has_dash:
        body = body + "-"
    return "[" + ("^" if neg else "") + body + "]"


def to_ere(p, caseless):
    out = []
    i = 0
    toks = tokens(p)
    while i < len(toks):
        t = toks[i]
        if t[0] == "class":
            out.append(ere_class(t[1], t[2], caseless))
        elif t[0] == "hex":
            out.append(chr(int(t[1], 16)))
        elif t[0] == "esc":
            c = t[1]
            if c == "t":
                out.append("\t")
            elif c == "d":
                out.append("[0-9]")
            elif c == "w":
                out.append("[[:alnum:]_]")
            elif c in ".()[]{}*+?|^$\\":
                out.append("\\" + c)
            else:
                out.append(c if not (caseless and c.isalpha()) else "[%s%s]" % (c.lower(), c.upper()))
        else:
            c = t[1]
            if c == "(" and i + 2 < len(toks) and toks[i + 1] == ("lit", "?") and toks[i + 2] == ("lit", ":"):
                out.append("(")
                i += 3
                continue
            if caseless and c.isalpha():
                out.append("[%s%s]" % (c.lower(), c.upper()))
            else:
                out.append(c)
        i += 1
    return "".join(out)


def to_rust(p, caseless):
    out = []
    i = 0
    while i < len(p):
        c = p[i]
        if c == "\\" and i + 1 < len(p):
            n = p[i + 1]
            if not n.isalnum() and n not in RUST_META:
                out.append(n)
            else:
                out.append(p[i:i + 2])
            i += 2
        else:
            out.append(c)
            i += 1
    s = "".join(out)
    return "(?i)" + s if caseless else s


def to_python(p, caseless):
    return "(?i:%s)" % p if caseless else p


def tool_accepts(cmd):
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    return r.returncode in (0, 1), r.stderr.strip()


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(1)
    rows = read_tsv(sys.argv[1])
    outdir = sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    notes = []
    rg, ere, py = [], [], []
    for r in rows:
        p, ci = r["pattern"], r["caseless"]
        rp = to_rust(p, ci)
        ok, err = tool_accepts(["rg", "--no-config", "-e", rp, "/dev/null"])
        if ok:
            rg.append(rp)
            if rp != p:
                notes.append("rg   %-60s rewritten: %s" % (r["name"], rp))
        else:
            notes.append("rg   %-60s DROPPED: %s" % (r["name"], err.splitlines()[-1] if err else "?"))
        ep = to_ere(p, ci)
        ok, err = tool_accepts(["grep", "-E", "-e", ep, "/dev/null"])
        if ok:
            ere.append(ep)
            if ep != p:
                notes.append("grep %-60s rewritten: %s" % (r["name"], ep.replace("\t", "<TAB>").replace("\x1b", "<ESC>")))
        else:
            notes.append("grep %-60s DROPPED: %s" % (r["name"], err))
        pp = to_python(p, ci)
        try:
            re.compile(pp)
            py.append(pp)
        except re.error as e:
            notes.append("py   %-60s DROPPED: %s" % (r["name"], e))
    for name, pats in (("patterns.rg.txt", rg), ("patterns.ere.txt", ere), ("patterns.py.txt", py)):
        with open(os.path.join(outdir, name), "w", encoding="utf-8", newline="\n") as f:
            f.write("".join(x + "\n" for x in pats))
    with open(os.path.join(outdir, "patterns.notes.txt"), "w", encoding="utf-8") as f:
        f.write("%d signals: rg %d, grep -E %d, python %d patterns\n" % (len(rows), len(rg), len(ere), len(py)))
        f.write("".join(n + "\n" for n in notes))
    print("%d signals -> rg %d, grep -E %d, python re %d (notes: %s)"
          % (len(rows), len(rg), len(ere), len(py), os.path.join(outdir, "patterns.notes.txt")),
          file=sys.stderr)


if __name__ == "__main__":
    main()
