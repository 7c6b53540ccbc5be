"""`faultline diagnose --html FILE`: the page beside the text or JSON report,
`--html -` on standard output, the usage errors, and log lines and file names
that carry markup and control characters (they must reach the page as text).
The page in a real browser: tests/html."""
import json
import os
import pathlib
import subprocess

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "incidents" / "xid79-two-hosts"

XID = ("Nov  2 03:12:05 node017 kernel: [1000001.682554] NVRM: Xid (PCI:0000:3b:00): 79, "
       "pid='<unknown>', name={name}, GPU has fallen off the bus.\n")


def run(binary, *args, **kw):
    return subprocess.run([binary, *map(str, args)], capture_output=True, timeout=300, **kw)


def test_html_beside_the_text_report(faultline_bin, tmp_path):
    page = tmp_path / "report.html"
    p = run(faultline_bin, "diagnose", "--html", page, EXAMPLE)
    assert p.returncode == 0, p.stderr
    assert b"== PRIMARY DIAGNOSIS ==" in p.stdout
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    rep = json.loads(run(faultline_bin, "diagnose", "--json", EXAMPLE).stdout)
    inc = rep["incidents"][0]
    ini = inc["initiating"]
    assert (f'data-rule="{inc["rule"]}" data-reference="{inc["reference"]}" '
            f'data-rank="{ini["rank"]}" data-host="{ini["host"]}"') in html
    # The same bytes whatever the thread count, and with --json beside it.
    again = tmp_path / "again.html"
    p = run(faultline_bin, "diagnose", "-j", "1", "--json", "-o", tmp_path / "r.json", "--html", again, EXAMPLE)
    assert p.returncode == 0, p.stderr
    assert again.read_bytes() == page.read_bytes()


def test_html_on_standard_output(faultline_bin, tmp_path):
    p = run(faultline_bin, "diagnose", "--html", "-", EXAMPLE)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(b"<!DOCTYPE html>") and b"PRIMARY DIAGNOSIS" not in p.stdout
    p = run(faultline_bin, "diagnose", "--html=-", "-o", tmp_path / "r.txt", EXAMPLE)
    assert p.returncode == 0 and p.stdout.startswith(b"<!DOCTYPE html>")
    assert b"PRIMARY DIAGNOSIS" in (tmp_path / "r.txt").read_bytes()
    p = run(faultline_bin, "diagnose", "-q", "--exit-code", "--html", "-", EXAMPLE)
    assert p.returncode == 3 and p.stdout == b""


def test_html_usage_and_output_errors(faultline_bin, tmp_path):
    p = run(faultline_bin, "diagnose", "--json", "--html", "-", EXAMPLE)
    assert p.returncode == 1 and b"standard output" in p.stderr
    bad = tmp_path / "no" / "such" / "dir" / "r.html"
    p = run(faultline_bin, "diagnose", "--html", bad, EXAMPLE)
    assert p.returncode == 2 and str(bad).encode() in p.stderr and p.stdout == b""
    p = run(faultline_bin, "diagnose", "--help")
    assert b"--html FILE" in p.stdout


def test_hostile_line_and_file_name_reach_the_page_as_text(faultline_bin, tmp_path):
    job = tmp_path / "job" / "node017"
    job.mkdir(parents=True)
    name = "kern<img src=x onerror=alert(1)>\x1b[31m\u202e.log"
    (job / name).write_bytes(XID.format(name="<script>alert(1)</script>\x1b[2J\r\x07").encode())
    page = tmp_path / "r.html"
    p = run(faultline_bin, "diagnose", "--html", page, tmp_path / "job")
    assert p.returncode == 0, p.stderr
    html = page.read_text(encoding="utf-8")
    assert html.count("<script") == 1  # the page's own
    assert "<img" not in html
    for raw in ("\x1b", "\r", "\x07", "\u202e"):
        assert raw not in html, repr(raw)
    # The line's terminal escape is taken off it (scan/line_format.h,
    # HasEscapes); the file name's stays, as a visible picture.
    assert "name=&lt;script&gt;alert(1)&lt;/script&gt;\u240d\u2407" in html
    assert "kern&lt;img src=x onerror=alert(1)&gt;\u241b[31m[U+202E].log" in html


def test_html_without_incident_or_times(faultline_bin, tmp_path):
    (tmp_path / "job").mkdir()
    (tmp_path / "job" / "a.log").write_text("hello world\n")
    page = tmp_path / "r.html"
    p = run(faultline_bin, "diagnose", "--html", page, tmp_path / "job")
    assert p.returncode == 0, p.stderr
    html = page.read_text(encoding="utf-8")
    assert 'id="incident-none"' in html and 'id="incident-1"' not in html
    assert "No line carries a time" in html


def test_html_says_what_cannot_be_known(faultline_bin, tmp_path):
    """Rank 0's tqdm bar is a 2-rank job's only step lines: the page says a
    straggler cannot be seen, as the text and JSON reports do."""
    job = tmp_path / "job"
    job.mkdir()
    bars = "".join("\r%3d%%|#   | %d/50 [00:%02d<00:30,  1.00it/s]" % (2 * s, s, s) for s in range(1, 11))
    (job / "train.log").write_text(bars + "\n")
    for r in range(2):
        (job / ("nccl-%d.log" % r)).write_text(
            "gpu-001:4100:4100 [%d] NCCL INFO comm 0x55d0c0a1b2c0 rank %d nranks 2 cudaDev %d nvmlDev %d "
            "busId 18000 commId 0x5a1e2b3c4d5e6f70 - Init COMPLETE\n" % (r, r, r, r))
    page = tmp_path / "r.html"
    p = run(faultline_bin, "diagnose", "--html", page, job)
    assert p.returncode == 0, p.stderr
    html = page.read_text(encoding="utf-8")
    assert 'id="limit">Cannot be known: Only one process of 2 ranks logs step lines' in html, html[:2000]
