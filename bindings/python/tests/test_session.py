from __future__ import annotations

import ctypes
import faulthandler
import gc
import os
import random
import threading
import time
import traceback
import weakref
from pathlib import Path
from typing import List

import pytest

import faultline

from conftest import XID_LINE, write_incident


def _key(e: faultline.Evidence) -> tuple:
    return (e.source, e.offset)


def _strip_source(e: faultline.Evidence) -> dict:
    d = e.to_dict()
    d.pop("source")
    return d


def _chunks(data: bytes, rng: random.Random, max_chunk: int = 97) -> List[bytes]:
    out, i = [], 0
    while i < len(data):
        n = rng.randint(1, max_chunk)
        out.append(data[i : i + n])
        i += n
    return out


def test_feed_random_chunks_matches_file(incident: dict) -> None:
    rng = random.Random(1234)
    files = sorted(p for p in Path(incident["path"]).rglob("*.log"))
    by_file = faultline.diagnose([str(p) for p in files])
    with faultline.Session() as s:
        for p in files:
            with s.open_stream(str(p)) as st:
                for c in _chunks(p.read_bytes(), rng):
                    st.feed(c)
        fed = s.finish()
    assert sorted(by_file.evidence, key=_key) == sorted(fed.evidence, key=_key)
    assert fed.primary is not None and by_file.primary is not None
    assert fed.primary.rule == by_file.primary.rule
    assert fed.primary.rank == by_file.primary.rank
    assert fed.primary.host == by_file.primary.host


def test_snapshot_of_a_live_session(incident: dict) -> None:
    """snapshot() reports what was fed so far and the session goes on: the
    final report equals one over the same files, and an earlier snapshot
    does not see what came after it."""
    files = sorted(p for p in Path(incident["path"]).rglob("*.log"))
    by_file = faultline.diagnose([str(p) for p in files])
    with faultline.Session() as s:
        streams = {p: s.open_stream(str(p)) for p in files}
        half = {p: p.read_bytes()[: len(p.read_bytes()) // 2] for p in files}
        for p in files:
            streams[p].feed(half[p])
        early = s.snapshot()
        for p in files:
            streams[p].feed(p.read_bytes()[len(half[p]) :])
        late = s.snapshot()
        final = s.finish()
    assert len(early.evidence) < len(late.evidence)
    assert sorted(late.evidence, key=_key) == sorted(final.evidence, key=_key)
    assert sorted(final.evidence, key=_key) == sorted(by_file.evidence, key=_key)
    assert late.primary is not None and late.primary.rule == by_file.primary.rule
    assert final.primary.rank == by_file.primary.rank


def test_default_stream_feed_matches_file(tmp_path: Path) -> None:
    rng = random.Random(99)
    write_incident(tmp_path)
    log = tmp_path / "node018" / "rank-5.log"
    data = log.read_bytes()
    file_ev = faultline.diagnose(log).evidence
    with faultline.Session() as s:
        for i, c in enumerate(_chunks(data, rng, 13)):
            # str, bytes, bytearray and memoryview all go.
            s.feed([c, bytearray(c), memoryview(c), c.decode("utf-8")][i % 4])
        r = s.finish()
    assert {e.source for e in r.evidence} == {"<feed>"}
    assert [_strip_source(e) for e in r.evidence] == [_strip_source(e) for e in file_ev]
    assert len(file_ev) >= 1


def test_stream_by_name_and_last_line_without_newline(incident: dict) -> None:
    line = (Path(incident["path"]) / "node017" / "dmesg.log").read_text().splitlines()[-1]
    with faultline.Session() as s:
        s.feed(line[:20], stream="node017/dmesg.log")
        s.feed(line[20:], stream="node017/dmesg.log")  # no final newline
        r = s.finish()
    [ev] = [e for e in r.evidence if e.rule == "xid-79-fallen-off-bus"]
    assert ev.source == "node017/dmesg.log" and ev.text == line


def _scan_key(e: faultline.Evidence) -> tuple:
    # What the scan knows when it calls back; rank attribution from the
    # learnt PCI bus map happens later, at correlation.
    return (e.source, e.offset, e.line, e.rule, e.signal, e.text, e.time)


def test_on_evidence_receives_records(incident: dict) -> None:
    seen: List[faultline.Evidence] = []
    r = faultline.diagnose(incident["path"], on_evidence=seen.append)
    assert len(seen) == r.evidence_count
    assert sorted(map(_scan_key, seen)) == sorted(map(_scan_key, r.evidence))
    assert all(isinstance(e, faultline.Evidence) for e in seen)


def test_on_evidence_with_streams(incident: dict) -> None:
    seen: List[faultline.Evidence] = []
    data = (Path(incident["path"]) / "node017" / "dmesg.log").read_bytes()
    with faultline.Session(on_evidence=seen.append) as s:
        s.feed(data)
        s.finish()
    assert [e.rule for e in seen] == ["xid-79-fallen-off-bus"]
    assert seen[0].source == "<feed>"


def test_flush_scans_buffered_lines_now() -> None:
    seen: List[faultline.Evidence] = []
    with faultline.Session(on_evidence=seen.append) as s:
        st = s.open_stream("node017/dmesg.log")
        st.feed(XID_LINE.encode() + b"\n" + XID_LINE.encode()[:30])  # + a partial line
        assert seen == []  # batched
        st.flush()
        assert [e.rule for e in seen] == ["xid-79-fallen-off-bus"]
        st.feed(XID_LINE.encode()[30:] + b"\n")
        s.flush()  # every open stream
        assert len(seen) == 2 and seen[1].text == XID_LINE
        r = s.finish()
    assert r.evidence_count == 2
    with pytest.raises(faultline.InvalidArgumentError):
        st.flush()


def test_on_evidence_during_feed() -> None:
    # The library scans a pushed stream once about 1 MiB is buffered (or at
    # close/finish): callbacks fire from within feed() for big inputs.
    seen: List[faultline.Evidence] = []
    line = XID_LINE.encode() + b"\n"
    with faultline.Session(on_evidence=seen.append) as s:
        for _ in range(40):
            s.feed(line * 1000)
            if seen:
                break
        assert seen, "no callback from within feed()"
        s.finish()


class Boom(Exception):
    pass


def _explode_on_third(counter: List[int]):
    def cb(ev: faultline.Evidence) -> None:
        counter.append(1)
        if len(counter) == 3:
            raise Boom(f"boom at {ev.source}:{ev.line}")

    return cb


def test_exception_in_on_evidence_is_reraised_after_c_returns(incident: dict) -> None:
    calls: List[int] = []
    with faultline.Session(on_evidence=_explode_on_third(calls)) as s:
        s.add_path(incident["path"])
        with pytest.raises(Boom) as ei:
            s.finish()
        # No more callbacks after the failing one; the scan was cancelled.
        assert len(calls) == 3
        assert "cb" in "".join(traceback.format_tb(ei.value.__traceback__))
        with pytest.raises(faultline.CancelledError):
            s.finish()
    with pytest.raises(Boom):
        faultline.diagnose(incident["path"], on_evidence=_explode_on_third([]))


def test_exception_in_on_evidence_during_feed(incident: dict) -> None:
    data = b"".join(p.read_bytes() for p in sorted(Path(incident["path"]).rglob("rank-*.log")))

    def cb(ev: faultline.Evidence) -> None:
        raise KeyError(ev.rule)

    with faultline.Session(on_evidence=cb) as s:
        with pytest.raises(KeyError):
            s.feed(data)
            s.finish()
        with pytest.raises(faultline.CancelledError):
            s.feed(b"more\n")
    line = XID_LINE.encode() + b"\n"
    with faultline.Session(on_evidence=cb) as s:
        with pytest.raises(KeyError):
            for _ in range(40):  # raised from within feed() itself
                s.feed(line * 1000)


def test_progress_callback_can_cancel(tmp_path: Path) -> None:
    from test_diagnose import write_many

    write_many(tmp_path / "big.log", 500)
    calls: List[tuple] = []

    def progress(done: int, total: int) -> bool:
        calls.append((done, total))
        return True

    with pytest.raises(faultline.CancelledError):
        faultline.diagnose(tmp_path / "big.log", on_progress=progress)
    assert calls


def test_exception_in_progress_callback(tmp_path: Path) -> None:
    from test_diagnose import write_many

    write_many(tmp_path / "big.log", 500)

    def progress(done: int, total: int) -> None:
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"):
        faultline.diagnose(tmp_path / "big.log", on_progress=progress)


def test_cancel_before_scan(incident: dict) -> None:
    with faultline.Session() as s:
        s.add_path(incident["path"])
        s.cancel()
        with pytest.raises(faultline.CancelledError):
            s.finish()


def test_close_twice_and_use_after_close(incident: dict) -> None:
    s = faultline.Session()
    st = s.open_stream("x")
    s.close()
    s.close()
    assert s.closed and st.closed
    st.close()
    st.close()
    s.cancel()  # a no-op once closed
    with pytest.raises(faultline.InvalidArgumentError):
        s.add_path(incident["path"])
    with pytest.raises(faultline.InvalidArgumentError):
        s.finish()
    with pytest.raises(faultline.InvalidArgumentError):
        st.feed(b"x")


def test_finish_twice_and_feed_after_finish() -> None:
    with faultline.Session() as s:
        st = s.open_stream("a")
        st.feed(b"hello\n")
        r = s.finish()
        assert r.input.sources == 1
        assert st.closed
        with pytest.raises(faultline.InvalidArgumentError, match="finished"):
            s.finish()
        with pytest.raises(faultline.InvalidArgumentError, match="finished"):
            s.feed(b"x")
        with pytest.raises(faultline.InvalidArgumentError):
            s.add_path("/tmp")
        assert s.error_count == 0


def test_session_scan_and_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.log.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage-not-gzip")
    (tmp_path / "ok.log").write_text("hello\n")
    with faultline.Session(threads=1) as s:
        with pytest.raises(FileNotFoundError, match="missing.log"):
            s.add_path(tmp_path / "missing.log")
        with pytest.raises(FileNotFoundError, match="missing.log"):
            s.add_range(tmp_path / "missing.log", 0, 10)
        s.add_path(bad)
        s.scan()  # unreadable sources do not raise
        assert s.error_count == 2  # the missing path is listed too
        assert "missing.log" in s.last_error
        s.add_path(tmp_path / "ok.log")
        with pytest.warns(faultline.InputWarning, match="bad.log.gz"):
            r = s.finish()
    assert [e.source for e in r.input.errors] == [str(tmp_path / "missing.log"), str(bad)]


def test_gc_finalizer_frees_the_session() -> None:
    s = faultline.Session(on_evidence=lambda e: None)
    s.feed(b"hello\n")
    fin = s._finalizer
    ws = weakref.ref(s)
    del s
    # No reference cycle through the callbacks: freed without a GC pass.
    assert ws() is None
    assert fin is not None and not fin.alive
    gc.collect()


def test_ruleset_outlives_its_sessions() -> None:
    rs = faultline.Ruleset()
    s = faultline.Session(rules=rs)
    rs.close()  # the native ruleset stays until the session goes
    s.feed(b"hello\n")
    assert s.finish().input.sources == 1
    s.close()


def _big_file(path: Path, mb: int) -> Path:
    block = (
        "2026-11-02T03:00:00.000Z [rank0]: step 100 loss 2.3 tokens/s 123456 lr 3e-4 some filler text here\n" * 1000
    ).encode()
    with path.open("wb") as f:
        for _ in range(mb * 1024 * 1024 // len(block) + 1):
            f.write(block)
    return path


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a FIFO")
def test_scans_release_the_gil(tmp_path: Path) -> None:
    # The scan reads a FIFO: it blocks inside the C call until this thread
    # writes. Were the GIL held through the call, this thread could never
    # write: a deadlock, ended by faulthandler.
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    result: dict = {}

    def work() -> None:
        result["report"] = faultline.diagnose(fifo, threads=1)

    faulthandler.dump_traceback_later(120, exit=True)
    try:
        t = threading.Thread(target=work, daemon=True)
        t.start()
        with open(fifo, "wb") as f:
            f.write(XID_LINE.encode() + b"\n")
        t.join(60)
        assert not t.is_alive()
    finally:
        faulthandler.cancel_dump_traceback_later()
    r = result["report"]
    assert r.input.errors == [] and [e.rule for e in r.evidence] == ["xid-79-fallen-off-bus"]


def test_callbacks_from_worker_threads(incident: dict) -> None:
    results: dict = {}

    def work(i: int) -> None:
        seen: List[faultline.Evidence] = []
        r = faultline.diagnose(incident["path"], on_evidence=seen.append)
        results[i] = (len(seen), r.evidence_count, r.primary.rule if r.primary else None)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4
    assert len({v for v in results.values()}) == 1
    n, count, rule = results[0]
    assert n == count > 0 and rule == incident["rule"]


def test_cancel_from_another_thread(tmp_path: Path) -> None:
    big = _big_file(tmp_path / "big.log", 48)
    with faultline.Session(threads=1) as s:
        s.add_path(big)
        timer = threading.Timer(0.01, s.cancel)
        timer.start()
        try:
            s.finish()
        except faultline.CancelledError:
            pass  # the usual outcome
        finally:
            timer.join()


def test_ranges_and_bundles_match_one_session(incident: dict, tmp_path: Path) -> None:
    from test_diagnose import write_many

    big = tmp_path / "big.log"
    write_many(big, 300)
    root = Path(incident["path"])
    whole = faultline.diagnose([big, root])
    size = big.stat().st_size
    cuts = [0, size // 3 + 7, 2 * size // 3 - 5, size]  # not on line boundaries
    bundles = []
    for a, b in zip(cuts, cuts[1:]):
        with faultline.Session(threads=1) as s:
            s.add_range(big, a, b)
            bundles.append(s.export_bundle())
            with pytest.raises(faultline.InvalidArgumentError):
                s.add_path(root)
    with faultline.Session() as s:
        s.add_path(root)
        bundles.append(s.export_bundle())
    assert all(isinstance(b, bytes) and b for b in bundles)
    merged = faultline.report_from_bundles(bundles)
    assert merged.evidence == whole.evidence
    assert merged.to_dict()["incidents"] == whole.to_dict()["incidents"]
    with pytest.raises(faultline.ParseError):
        faultline.report_from_bundles([b"not a bundle"])
    with pytest.raises(faultline.InvalidArgumentError):
        faultline.Session().add_range(big, 10, 5)


def test_limits_are_options(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    big.write_text(("filler line that matches nothing\n" * 99 + XID_LINE + "\n") * 40)
    small = tmp_path / "small.log"
    small.write_text(XID_LINE + "\n")
    with pytest.warns(faultline.InputWarning):
        report = faultline.diagnose([big, small], max_source_bytes=16 * 1024)
    (err,) = report.input.errors
    assert err.source == str(big) and "16384" in err.message and "--max-source-bytes" in err.message
    assert report.incidents and report.incidents[0].rule == "xid-79-fallen-off-bus"
    # Under the limits nothing changes.
    clean = faultline.diagnose(small, max_source_bytes=1 << 20, max_decompressed_bytes=1 << 20, time_budget=600)
    assert clean.input.errors == []
    for bad in ({"max_source_bytes": 0}, {"max_decompressed_bytes": -1}, {"time_budget": 0},
                {"time_budget": float("nan")}):
        with pytest.raises(ValueError):
            faultline.Session(**bad)  # type: ignore[arg-type]


def test_caps_and_warnings_in_the_report(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "kern.log").write_text(XID_LINE + "\n")
    os.mkfifo(logs / "pipe.log")
    report = faultline.diagnose(logs)
    assert [w.source for w in report.input.warnings] == [str(logs / "pipe.log")]
    assert "FIFO" in report.input.warnings[0].message
    caps = report.input.caps
    assert caps.truncated is False and caps.ranks.truncated is False
    assert caps.matches == report.totals.matches
    t = report.totals
    assert t.capped == 0 and t.ranks_seen == caps.ranks.seen == t.ranks_kept
