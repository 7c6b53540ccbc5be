"""What tests/sim2/score.py and tests/sim3/score.py share: running
`faultline diagnose --json` on a simulated archive, the hosts a report
names, and the per-key rates and tables of the marks each scorer gives an
archive (a mark is True, False, or None where the truth asks nothing)."""
import collections
import concurrent.futures
import json
import subprocess


def diagnose(binary, logs, rules=None):
    """The report of one archive, or None and why not."""
    extra = ["--rules", rules] if rules else []
    p = subprocess.run([binary, "diagnose", "--json", *extra, str(logs)], capture_output=True, timeout=600)
    if p.returncode not in (0, 2):
        return None, p.stderr.decode(errors="replace")
    try:
        return json.loads(p.stdout), None
    except ValueError as e:
        return None, f"bad json: {e}"


def hosts_named(report):
    """Every host an incident names, initiating or collateral."""
    named = set()
    for inc in report.get("incidents", []):
        if inc["initiating"].get("host"):
            named.add(inc["initiating"]["host"])
        for c in inc.get("collateral", []):
            named.update(c.get("hosts", []))
    return named


def run_all(one, todo, workers=2):
    """one(case) over every case, `workers` archives at a time."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as ex:
        return list(ex.map(one, todo))


def rate(marks, key):
    vals = [m[key] for m in marks if m.get(key) is not None]
    return sum(vals), len(vals)


def table(marks, by, last_title, last_key):
    """A markdown table of the marks grouped by `by`: top-1, rank, host, the
    scorer's own `last_key` column and the archives naming a foreign host."""
    groups = collections.defaultdict(list)
    for m in marks:
        groups[m[by]].append(m)
    rows = [f"| {by} | n | top-1 | rank | host | {last_title} | foreign host |",
            "| --- | --- | --- | --- | --- | --- | --- |"]

    def cell(ms, key):
        ok, n = rate(ms, key)
        return f"{ok}/{n}" if n else "-"

    for g in sorted(groups, key=lambda x: (str(type(x)), x)):
        ms = groups[g]
        rows.append(f"| {g} | {len(ms)} | {cell(ms, 'top1')} | {cell(ms, 'rank')} | {cell(ms, 'host')} | "
                    f"{cell(ms, last_key)} | {sum(1 for m in ms if m['foreign'])} |")
    return "\n".join(rows)
