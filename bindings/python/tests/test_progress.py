"""Progress on long scans (progress=True / progress=callable) and Ctrl-C."""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import List, Tuple

import pytest

import faultline

from conftest import SRC, write_incident


def _compressed_job(root: Path) -> int:
    """The incident with one rank's log gzipped and a few MB of training
    chatter, gzipped too; returns the bytes on disk."""
    write_incident(root)
    rank2 = root / "node017" / "rank-2.log"
    with gzip.open(str(rank2) + ".gz", "wb") as f:
        f.write(rank2.read_bytes())
    rank2.unlink()
    chatter = "".join(f"2026-11-02T03:00:{i % 60:02d}.000Z [rank5]: step {i} loss 1.0 lr 1e-4 tokens/s 1234\n"
                      for i in range(60_000))
    with gzip.open(root / "node018" / "rank-5-extra.log.gz", "wb") as f:
        f.write(chatter.encode())
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def test_progress_callable_counts_compressed_bytes(tmp_path: Path) -> None:
    on_disk = _compressed_job(tmp_path)
    calls: List[Tuple[int, int]] = []
    r = faultline.diagnose(tmp_path, threads=2, progress=lambda done, total: calls.append((done, total)))
    assert r.primary is not None and r.primary.rule == "xid-79-fallen-off-bus"
    assert calls
    # The total is the inputs' size on disk, known from the first call, and
    # reached: compressed files count by compressed bytes read.
    assert {t for _, t in calls} == {on_disk}
    dones = [d for d, _ in calls]
    assert dones == sorted(dones) and dones[-1] == on_disk
    assert r.input.bytes > on_disk  # the decompressed bytes scanned were more


def test_progress_across_scan_passes(tmp_path: Path) -> None:
    """Ranges are scanned pass by pass, each counting from 0: the callable
    sees figures for the whole session."""
    write_incident(tmp_path)
    log = tmp_path / "node017" / "rank-0.log"
    n = log.stat().st_size
    calls: List[Tuple[int, int]] = []
    with faultline.Session(progress=lambda d, t: calls.append((d, t))) as s:
        s.add_range(log, 0, n // 2)
        s.add_range(log, n // 2, n)
        s.finish()
    dones = [d for d, _ in calls]
    assert dones == sorted(dones)
    assert calls[-1][1] == n and calls[-1][0] >= n


def test_progress_true_uses_tqdm(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tqdm = pytest.importorskip("tqdm")
    on_disk = _compressed_job(tmp_path)
    faultline.diagnose(tmp_path, progress=True)
    err = capsys.readouterr().err
    # The bar reached its total, the inputs' size on disk (tqdm's 1024-based
    # unit scale).
    size = tqdm.tqdm.format_sizeof(on_disk, divisor=1024)
    last = err.rstrip("\n").split("\r")[-1]
    assert last.startswith("faultline: 100%") and f"{size}/{size}" in last, err


def test_progress_true_without_tqdm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm -> ImportError
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    on_disk = _compressed_job(tmp_path)
    faultline.diagnose(tmp_path, progress=True)
    err = capsys.readouterr().err
    last = err.rstrip("\n").split("\r")[-1]
    assert last == f"faultline: scanned {on_disk / 2**20:,.1f} MiB of {on_disk / 2**20:,.1f} MiB (100%)", err
    assert err.endswith("\n")


def test_progress_rejects_other_values() -> None:
    with pytest.raises(TypeError, match="progress"):
        faultline.Session(progress="yes")  # type: ignore[arg-type]


# ---- Ctrl-C -------------------------------------------------------------------

CHILD = r"""
import sys
import faultline
mode = sys.argv[1]
kw = {}
if mode == "callback":
    kw["on_progress"] = lambda done, total: None
elif mode == "progress":
    kw["progress"] = lambda done, total: None
print("ready", flush=True)
try:
    faultline.diagnose("-", threads=1, **kw)
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
    sys.exit(0)
except BaseException as e:
    print("raised", type(e).__name__, e, flush=True)
    sys.exit(1)
print("finished", flush=True)
sys.exit(1)
"""


@pytest.mark.parametrize("mode", ["plain", "callback", "progress"])
def test_sigint_raises_keyboard_interrupt(mode: str, tmp_path: Path) -> None:
    """A long diagnose (an endless log on stdin) interrupted by SIGINT, as a
    terminal's Ctrl-C or a notebook's interrupt sends it: KeyboardInterrupt,
    and nothing on stderr ("Exception ignored on calling ctypes callback")."""
    env = dict(os.environ)
    if os.environ.get("FAULTLINE_LIBRARY"):
        env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    p = subprocess.Popen(
        [sys.executable, str(script), mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env=env, cwd=str(tmp_path),
    )
    assert p.stdout is not None and p.stdin is not None
    assert p.stdout.readline() == b"ready\n"
    line = b"2026-11-02T03:00:00.000Z [rank3]: step 10 loss 2.49 lr 0.0001 tokens/s 123456\n"
    block = line * (1 << 14)
    fed = [0]
    enough = threading.Event()

    def feed() -> None:
        try:
            while True:
                p.stdin.write(block)  # type: ignore[union-attr]
                fed[0] += len(block)
                if fed[0] > (48 << 20):  # the scan has taken several chunks
                    enough.set()
        except (BrokenPipeError, ValueError, OSError):
            enough.set()

    t = threading.Thread(target=feed, daemon=True)
    t.start()
    assert enough.wait(120)
    p.send_signal(signal.SIGINT)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        pytest.fail(f"the scan went on after SIGINT; stderr: {err.decode(errors='replace')}")
    finally:
        t.join(5)
    assert out.decode().strip() == "KeyboardInterrupt", (out, err)
    assert err.decode() == "", err.decode()
    assert p.returncode == 0
