"""The HTML report in a real browser (headless Chromium): for every example
incident (examples/incidents/*/) the page renders (the screenshot is not
blank, in the light and the dark scheme), its DOM after the page's script
ran holds the primary incident's reference, rank and host, and the script
ran (the Content-Security-Policy admits it by hash). A page built from a log
line and file name full of markup and control characters has no element the
page did not write. A simulated 1,024-rank job (tests/sim) gives a page under
2 MB with one timeline row per host, that renders too.

Outside CI a machine without Chromium skips these; in CI (CI set) they fail.

    python3 -m pytest -q tests/html
    python3 tests/html/test_browser.py --update-docs   # rewrite docs/screenshots/*.png
"""
import html.parser
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (REPO / "examples" / "incidents").iterdir() if p.is_dir())
DOCS = REPO / "docs" / "screenshots"
WINDOW = (1280, 1700)


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI"):
        pytest.fail("Chromium is not installed (.ci/bootstrap installs the Debian package chromium)")
    pytest.skip("Chromium is not installed (not in CI: skipped)")


def faultline_bin():
    path = os.environ.get("FAULTLINE_BIN", str(REPO / "build" / "src" / "cli" / "faultline"))
    if not os.access(path, os.X_OK):
        pytest.fail(f"faultline binary not found at {path}: build first or set FAULTLINE_BIN")
    return path


def browse(browser, page, *args, tmp, fragment=""):
    """Runs headless Chromium on the page with a profile of its own."""
    profile = tempfile.mkdtemp(dir=tmp, prefix="profile-")
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--no-first-run", "--disable-extensions", f"--user-data-dir={profile}",
           f"--window-size={WINDOW[0]},{WINDOW[1]}", *args, pathlib.Path(page).resolve().as_uri() + fragment]
    p = subprocess.run(cmd, capture_output=True, timeout=180, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-2000:]
    return p.stdout.decode("utf-8", "replace")


def screenshot(browser, page, png, tmp, dark=False):
    browse(browser, page, f"--screenshot={png}", *(["--force-dark-mode"] if dark else []), tmp=tmp)
    from PIL import Image, ImageStat

    with Image.open(png) as im:
        rgb = im.convert("RGB")
    stat = ImageStat.Stat(rgb.convert("L"))
    # Pixels of the initiating colour (light #cf222e, dark #ff7b72): the
    # primary card's border, the marker, the initiating row.
    px = rgb.tobytes()
    reds = sum(1 for i in range(0, len(px), 3)
               if px[i] > 180 and px[i + 1] < 140 and px[i + 2] < 130 and px[i] - px[i + 1] > 90)
    return {"mean": stat.mean[0], "var": stat.var[0], "colours": len(rgb.getcolors(1 << 20) or []),
            "reds": reds}


class Dom(html.parser.HTMLParser):
    """What the tests look for in a dumped DOM."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = {}
        self.incident = None
        self.zoom_hidden = None
        self.plot_style = None
        self.ticks = []
        self._tick = False
        self.text = []
        self.host_rows = 0
        self.mode = None
        self._dd = None
        self.dd = {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags[tag] = self.tags.get(tag, 0) + 1
        cls = (a.get("class") or "").split()
        if a.get("id") == "incident-1":
            self.incident = a
        if "tl-plot" in cls:
            self.plot_style = a.get("style")
        self._tick = tag == "span" and self.lasttag_div_tk
        self.lasttag_div_tk = "tk" in cls
        if "tl-zoom" in cls:
            self.zoom_hidden = "hidden" in a
        if "tl" in cls:
            self.mode = next((c for c in cls if c.endswith("-mode")), None)
        if "rl" in cls and "k-host" in cls:
            self.host_rows += 1
        self._dd = cls[0] if tag == "dd" and cls else None

    lasttag_div_tk = False

    def handle_data(self, data):
        self.text.append(data)
        if self._tick:
            self.ticks.append(data)
            self._tick = False
        if self._dd:
            self.dd.setdefault(self._dd, data)

    def handle_endtag(self, tag):
        self._dd = None


def dump_dom(browser, page, tmp, fragment=""):
    d = Dom()
    d.feed(browse(browser, page, "--dump-dom", tmp=tmp, fragment=fragment))
    return d


def diagnose(path, out_html, *extra):
    fl = faultline_bin()
    p = subprocess.run([fl, "diagnose", "-q", "--html", str(out_html), *extra, str(path)], capture_output=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    p = subprocess.run([fl, "diagnose", "--json", *extra, str(path)], capture_output=True, timeout=600)
    assert p.returncode == 0
    return json.loads(p.stdout)


def check_dom(dom, rep):
    inc = rep["incidents"][0]
    ini = inc["initiating"]
    assert dom.incident is not None, "no #incident-1 in the DOM"
    assert dom.incident["data-reference"] == inc["reference"]
    assert dom.incident["data-rule"] == inc["rule"]
    rank = "" if ini["rank"] is None else str(ini["rank"])
    assert dom.incident["data-rank"] == rank
    assert dom.incident["data-host"] == ini["host"]
    assert dom.dd.get("rank") == (rank or "unknown") and dom.dd.get("host") == ini["host"]
    text = "".join(dom.text)
    assert inc["reference"] in text and inc["title"] in text
    assert dom.tags.get("script") == 1
    # The zoom bar is unhidden by the page's script: it ran under the CSP.
    assert dom.zoom_hidden is False, "the page's script did not run (CSP hash?)"


def check_rendered(shot):
    assert shot["var"] > 200 and shot["colours"] > 50, f"blank screenshot: {shot}"
    assert shot["reds"] > 500, f"no initiating colour on the screenshot: {shot}"


@pytest.fixture(scope="module")
def browser():
    return chromium()


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_incident_renders(browser, example, tmp_path):
    page = tmp_path / f"{example.name}.html"
    rep = diagnose(example, page)
    light = screenshot(browser, page, tmp_path / "light.png", tmp_path)
    check_rendered(light)
    assert light["mean"] > 170, light
    dark = screenshot(browser, page, tmp_path / "dark.png", tmp_path, dark=True)
    check_rendered(dark)
    assert dark["mean"] < 90, dark
    dom = dump_dom(browser, page, tmp_path)
    check_dom(dom, rep)
    assert dom.mode == "rank-mode"
    assert not dom.plot_style and dom.ticks and all(len(t) == 5 for t in dom.ticks), dom.ticks  # HH:MM
    # Opened zoomed on the initiating event, the script widens the plot and
    # redraws finer ticks (seconds).
    zoomed = dump_dom(browser, page, tmp_path, fragment="#zoom=init")
    assert zoomed.plot_style and "3200%" in zoomed.plot_style, zoomed.plot_style
    assert len(zoomed.ticks) > len(dom.ticks) and all(len(t) == 8 for t in zoomed.ticks), zoomed.ticks
    # Its screenshot is kept for the docs.
    png = DOCS / f"{example.name}.png"
    assert png.exists(), f"{png} missing: python3 tests/html/test_browser.py --update-docs"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size < 400_000


def test_hostile_input_adds_no_element(browser, tmp_path):
    job = tmp_path / "job" / "node017"
    job.mkdir(parents=True)
    name = "kern<img src=x onerror=alert(1)>\x1b[31m.log"
    (job / name).write_bytes(
        b"Nov  2 03:12:05 node017 kernel: [1000001.682554] NVRM: Xid (PCI:0000:3b:00): 79, "
        b"pid='<unknown>', name=<script>alert(1)</script><iframe src=x>\x1b[2J\x07, "
        b"GPU has fallen off the bus.\n")
    page = tmp_path / "hostile.html"
    rep = diagnose(tmp_path / "job", page)
    dom = dump_dom(browser, page, tmp_path)
    check_dom(dom, rep)
    assert "img" not in dom.tags and "iframe" not in dom.tags
    text = "".join(dom.text)
    # The erase code is stripped before matching; the bare control byte shows.
    assert "name=<script>alert(1)</script><iframe src=x>\u2407" in text
    assert "kern<img src=x onerror=alert(1)>\u241b[31m.log" in text
    check_rendered(screenshot(browser, page, tmp_path / "hostile.png", tmp_path))


def test_thousand_ranks_group_by_host(browser, tmp_path):
    sys.path.insert(0, str(REPO / "tests" / "sim"))
    import simulate

    truth = simulate.simulate(str(tmp_path / "job"), "xid79", 3, hosts=128)
    assert truth["ranks"] == 1024
    page = tmp_path / "1024.html"
    rep = diagnose(tmp_path / "job", page, "-j", "2")
    size = page.stat().st_size
    assert size < 2 << 20, f"{size} bytes"
    dom = dump_dom(browser, page, tmp_path)
    check_dom(dom, rep)
    assert dom.mode == "host-mode" and dom.host_rows >= 128
    check_rendered(screenshot(browser, page, tmp_path / "1024.png", tmp_path))


def test_attempts_listed_beside_the_action(browser, tmp_path):
    """A job that ran twice (tests/attempts/gen_attempts.py): the page lists
    both attempts with their primary rule and host after the primary's
    action, and renders."""
    gen = REPO / "tests" / "attempts" / "gen_attempts.py"
    subprocess.run([sys.executable, str(gen), str(tmp_path / "job"), "--case", "xid_same_host"], check=True)
    page = tmp_path / "attempts.html"
    rep = diagnose(tmp_path / "job", page)
    dom = dump_dom(browser, page, tmp_path)
    check_dom(dom, rep)
    text = "".join(dom.text)
    assert "Attempts (%d, oldest first)" % len(rep["attempts"]) in text
    action = text.index("Action:")
    for a in rep["attempts"]:
        row = "%d%s%s" % (a["index"] + 1, a["label"], a["recognised"])
        assert text.find(row) > action, row
        assert a["primary"]["rule"] in text and a["primary"]["host"] in text
    check_rendered(screenshot(browser, page, tmp_path / "attempts.png", tmp_path))


def update_docs():
    """Writes docs/screenshots/NAME.png for every example incident: a light
    screenshot, palette-quantised to stay small."""
    from PIL import Image, ImageChops

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        sys.exit("no chromium")
    DOCS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for ex in EXAMPLES:
            page = pathlib.Path(tmp) / f"{ex.name}.html"
            p = subprocess.run([faultline_bin(), "diagnose", "-q", "--html", str(page),
                                str(ex.relative_to(REPO))], cwd=REPO, capture_output=True)
            if p.returncode != 0:
                sys.exit(p.stderr.decode(errors="replace"))
            png = pathlib.Path(tmp) / "shot.png"
            browse(browser, page, f"--screenshot={png}", tmp=tmp)
            with Image.open(png) as im:
                rgb = im.convert("RGB")
                # Cut the empty page below the footer (the window is tall).
                bg = Image.new("RGB", rgb.size, rgb.getpixel((0, 0)))
                box = ImageChops.difference(rgb, bg).getbbox()
                if box:
                    rgb = rgb.crop((0, 0, rgb.width, min(rgb.height, box[3] + 24)))
                rgb.quantize(colors=256, method=Image.Quantize.FASTOCTREE).save(
                    DOCS / f"{ex.name}.png", optimize=True)
            print(DOCS / f"{ex.name}.png")


if __name__ == "__main__":
    if sys.argv[1:] == ["--update-docs"]:
        update_docs()
    else:
        sys.exit(__doc__)
