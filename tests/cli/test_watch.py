"""`faultline watch` (docs/cli.md, "watch"): follow mode on a directory being
written, on standard input, and on signals.

Deterministic by construction: every wait is for a line of output (with a
timeout generous enough for a loaded machine), never for time to pass, and
nothing asserts how long anything took."""
import gzip
import json
import os
import pathlib
import queue
import shutil
import signal
import subprocess
import sys
import threading

import pytest

from conftest import REPO, run

EXAMPLE = REPO / "examples" / "incidents" / "xid79-two-hosts"
TIMEOUT = 60  # seconds, per wait: a loaded 2-core machine


class Watch:
    """A running `faultline watch` whose stdout and stderr lines are read on
    threads into queues, so a test can wait for a line with a timeout."""

    def __init__(self, faultline_bin, *args, stdin=subprocess.DEVNULL):
        self.p = subprocess.Popen([faultline_bin, "watch", *args], stdin=stdin,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.out, self.err = queue.Queue(), queue.Queue()
        self.out_lines, self.err_lines = [], []
        for stream, q in ((self.p.stdout, self.out), (self.p.stderr, self.err)):
            threading.Thread(target=self._pump, args=(stream, q), daemon=True).start()

    @staticmethod
    def _pump(stream, q):
        for line in iter(stream.readline, b""):
            q.put(line.decode())
        q.put(None)

    def wait_for(self, which, pred, what):
        q, seen = (self.out, self.out_lines) if which == "out" else (self.err, self.err_lines)
        for line in seen:
            if pred(line):
                return line
        while True:
            try:
                line = q.get(timeout=TIMEOUT)
            except queue.Empty:
                self.kill()
                pytest.fail(f"no {what} within {TIMEOUT}s; stdout {self.out_lines!r} stderr {self.err_lines!r}")
            if line is None:
                pytest.fail(f"watch ended before {what}; stdout {self.out_lines!r} stderr {self.err_lines!r}")
            seen.append(line)
            if pred(line):
                return line

    def finish(self):
        """Waits for the process to end and returns its status, every stdout
        line and every stderr line."""
        try:
            rc = self.p.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail("watch did not exit")
        for q, seen in ((self.out, self.out_lines), (self.err, self.err_lines)):
            while True:
                line = q.get(timeout=TIMEOUT)
                if line is None:
                    break
                seen.append(line)
        return rc, self.out_lines, self.err_lines

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def events(lines):
    return [json.loads(line) for line in lines if line.startswith("{")]


def diagnose(faultline_bin, path):
    return json.loads(run(faultline_bin, "diagnose", "--json", str(path)).stdout)


def split(path, parts):
    """The lines of a file in `parts` consecutive pieces."""
    lines = path.read_bytes().splitlines(keepends=True)
    n = len(lines)
    return [b"".join(lines[n * k // parts:n * (k + 1) // parts]) for k in range(parts)]


def write_gz(path, data):
    """Writes a .gz file outside the watched directory and renames it into
    place, so that the watch never sees it half written (the tests assert
    no read error)."""
    tmp = path.parents[2] / (path.name + ".tmp")  # outside the watched job/
    with gzip.open(tmp, "wb") as f:
        f.write(data)
    os.rename(tmp, path)


def append(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as f:
        f.write(data)


@pytest.mark.parametrize("mode", ["inotify", "polling"])
def test_directory_written_over_time(faultline_bin, tmp_path, mode):
    """A generator writes the xid79 incident into a directory in steps: files
    there at the start, appends, a rotation, a truncation, a new directory
    of files, a compressed file appearing. watch --json prints each incident
    once as it forms, and its primary is diagnose's on the finished files."""
    job = tmp_path / "job"
    src17, src18 = EXAMPLE / "node017", EXAMPLE / "node018"
    ranks17 = sorted(src17.glob("rank-*.log"))
    pieces = {p.name: split(p, 3) for p in ranks17}
    kern17 = split(src17 / "kern.log", 2)
    noise = b"".join(b"housekeeping: checkpoint shard %d written\n" % i for i in range(200))
    # Step 1, before the watch: a third of each rank log, half the kernel
    # log, a noise file and an old compressed log (read once).
    for p in ranks17:
        append(job / "node017" / p.name, pieces[p.name][0])
    append(job / "node017" / "kern.log", kern17[0])
    append(job / "node017" / "noise.log", noise)
    with gzip.open(job / "node017" / "previous.log.gz", "wb") as f:
        f.write(b"housekeeping: previous run ended normally\n")

    args = ["--json", "--interval", "100ms", "--poll", "50ms", str(job)]
    if mode == "polling":
        args.insert(0, "--no-inotify")
    w = Watch(faultline_bin, *args)
    w.wait_for("err", lambda l: "read; watching with " + mode in l, "the start-up line")

    # Step 2: appends, then rank-3.log rotated (renamed, a new file goes on).
    for p in ranks17:
        append(job / "node017" / p.name, pieces[p.name][1])
    os.rename(job / "node017" / "rank-3.log", job / "node017" / "rank-3.log.1")
    append(job / "node017" / "rank-3.log", pieces["rank-3.log"][2])
    w.wait_for("err", lambda l: "rank-3.log: rotated" in l, "the rotation notice")
    # Step 3: noise.log truncated in place and written again, shorter.
    with open(job / "node017" / "noise.log", "r+b") as f:
        f.truncate(0)
    append(job / "node017" / "noise.log", b"housekeeping: log truncated by the collector\n")
    w.wait_for("err", lambda l: "noise.log: truncated" in l, "the truncation notice")
    # Step 4: the second host's logs appear, in two appends.
    for p in sorted(src18.iterdir()):
        for piece in split(p, 2):
            append(job / "node018" / p.name, piece)
    # Step 5: the rest, and a compressed file appearing (read once).
    for p in ranks17:
        if p.name != "rank-3.log":
            append(job / "node017" / p.name, pieces[p.name][2])
    append(job / "node017" / "kern.log", kern17[1])
    write_gz(job / "node017" / "dmesg-old.log.gz", b"housekeeping: nothing to report\n")

    want = diagnose(faultline_bin, job)
    primary = want["incidents"][0]
    w.wait_for("out", lambda l: json.loads(l).get("rule") == primary["rule"], "the primary incident")
    w.wait_for("err", lambda l: "dmesg-old.log.gz: new file, compressed" in l, "the compressed file")
    w.p.send_signal(signal.SIGINT)
    rc, out, err = w.finish()
    assert rc == 0, err

    evs = events(out)
    assert evs[-1]["event"] == "report"
    final = evs[-1]
    incident_events = [e for e in evs[:-1]]
    assert {e["event"] for e in incident_events} <= {"formed", "changed"}
    formed = [e["id"] for e in incident_events if e["event"] == "formed"]
    assert len(formed) == len(set(formed)), "an incident formed twice"
    # Every change is of an incident that formed before it.
    for k, e in enumerate(incident_events):
        if e["event"] == "changed":
            assert e["id"] in [x["id"] for x in incident_events[:k] if x["event"] == "formed"]
            assert e["changes"]
    # The primary: diagnose's reference and initiating rank and host, formed
    # once, with the id the final report gives it.
    report = final["report"]
    got = report["incidents"][0]
    assert got["reference"] == primary["reference"]
    assert got["rule"] == primary["rule"]
    assert got["initiating"]["rank"] == primary["initiating"]["rank"]
    assert got["initiating"]["host"] == primary["initiating"]["host"]
    pid = final["incident_ids"][0]
    assert formed.count(pid) == 1
    first = next(e for e in incident_events if e["id"] == pid)
    assert first["reference"] == primary["reference"]
    assert first["rank"] == primary["initiating"]["rank"]
    assert first["host"] == primary["initiating"]["host"]
    # The same initiating line: the kernel log was never rotated, so its
    # line numbers in the watch's stream are the file's.
    assert first["initiating"][0]["source"] == primary["initiating"]["evidence"][0]["source"]
    assert first["initiating"][0]["line"] == primary["initiating"]["evidence"][0]["line"]
    # Rotation and truncation were seen as such; rank-3.log.1 (the rotated
    # file) was not read a second time, and each .gz file was read once.
    assert final["watch"]["rotations"] == 1 and final["watch"]["truncations"] == 1
    assert report["input"]["sources"] == want["input"]["sources"] - 1
    assert report["input"]["errors"] == []


def test_stdin(faultline_bin):
    """`... | faultline watch -`: the incident forms from standard input, and
    the end of input ends the watch with the final report."""
    r, wfd = os.pipe()
    w = Watch(faultline_bin, "--json", "--interval", "100ms", "--poll", "50ms", "-", stdin=r)
    os.close(r)
    logs = sorted(EXAMPLE.rglob("*.log"))
    with os.fdopen(wfd, "wb") as f:
        for p in logs:
            f.write(p.read_bytes())
            f.flush()
        want = diagnose(faultline_bin, EXAMPLE)["incidents"][0]
        # The pipe holds 64 KiB: a tick may form the incident before the
        # lines naming its rank arrive (rank -1); the watch says when they
        # have (a `changed` event naming "rank").
        rank = want["initiating"]["rank"]
        line = w.wait_for("out", lambda l: json.loads(l).get("rule") == want["rule"] and json.loads(l).get("rank") == rank,
                          "the incident with its rank")
    rc, out, err = w.finish()
    assert rc == 0, err
    ev = json.loads(line)
    assert ev["event"] in ("formed", "changed") and ev["initiating"][0]["source"] == "-"
    final = events(out)[-1]
    assert final["event"] == "report" and final["incident_ids"][0] == ev["id"]
    got = final["report"]["incidents"][0]
    assert got["reference"] == want["reference"]
    assert got["initiating"]["rank"] == want["initiating"]["rank"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_prints_final_report(faultline_bin, tmp_path, sig):
    """Ctrl-C (and SIGTERM) print the final report and exit 0; with
    --exit-code, 3 once an incident formed. Text by default."""
    job = tmp_path / "job"
    shutil.copytree(EXAMPLE, job)
    w = Watch(faultline_bin, "--interval", "100ms", "--poll", "50ms", str(job))
    w.wait_for("out", lambda l: " formed inc-" in l, "the incident block")
    w.p.send_signal(sig)
    rc, out, err = w.finish()
    assert rc == 0, err
    text = "".join(out)
    assert "==== faultline watch: final report (watch) ====" in text
    assert "PRIMARY DIAGNOSIS" in text.split("final report")[1]

    w = Watch(faultline_bin, "--exit-code", "--json", "--interval", "100ms", str(job))
    w.wait_for("out", lambda l: '"event":"formed"' in l, "the incident")
    w.p.send_signal(sig)
    rc, out, _ = w.finish()
    assert rc == 3
    assert events(out)[-1]["event"] == "report"


def test_kept_evidence_stays_bounded(faultline_bin):
    """Days of input through one job: the sessions are recycled every
    window, so the evidence the reported session keeps is bounded by what a
    window holds, however much input went through (count-based)."""
    line = (b"[rank3]:[E1102 03:42:05.065000 52307 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught "
            b"collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=5, "
            b"NumelOut=5, Timeout(ms)=1800000) ran for 1800085 milliseconds before timing out.\n")
    data = b"".join(line % i for i in range(60000))  # ~15 MB, every line evidence
    window = 256 << 10
    p = subprocess.run([faultline_bin, "watch", "--json", "--window", "256K", "--interval", "1h", "-"],
                       input=data, capture_output=True, timeout=600)
    assert p.returncode == 0, p.stderr
    final = events(p.stdout.decode().splitlines())[-1]
    assert final["watch"]["bytes"] == len(data)
    assert final["watch"]["sessions"] >= len(data) // window
    got = final["report"]["input"]
    # The line matches two rules (every match kept while under the caps).
    per_line = got["matches"] // got["lines"]
    assert per_line * got["lines"] == got["matches"]
    # At most a window of lines (a read may overshoot it by a chunk,
    # window/8): far below the 60000 lines fed, and below the 2 x 2500 that
    # the per-rule caps of one source alone would keep.
    most = per_line * ((window + window // 4) // (len(line) - 4))
    assert 0 < got["evidence"] <= most < 2 * 2500
    assert got["bytes"] <= window + window // 4


def test_usage_and_missing_path(faultline_bin, tmp_path):
    assert run(faultline_bin, "watch", check=False).returncode == 1
    assert run(faultline_bin, "watch", "--window", "1K", str(tmp_path), check=False).returncode == 1
    assert run(faultline_bin, "watch", "--interval", "soon", str(tmp_path), check=False).returncode == 1
    assert run(faultline_bin, "watch", "--tz", "Mars/Olympus", str(tmp_path), check=False).returncode == 1
    p = run(faultline_bin, "watch", str(tmp_path / "nope"), check=False)
    assert p.returncode == 2 and b"nope" in p.stderr
    p = run(faultline_bin, "watch", "/dev/null", check=False)
    assert p.returncode == 2 and b"/dev/null: not a regular file or a directory" in p.stderr
    assert b"--window SIZE" in run(faultline_bin, "watch", "--help").stdout


def test_compressed_copy_of_a_followed_file_is_not_read_again(faultline_bin, tmp_path):
    """logrotate's copytruncate + compress: kern.log's lines go to
    kern.log.1.gz and kern.log starts over. The watch read those lines from
    kern.log already; reading the copy would add its evidence a second time
    under another source."""
    job = tmp_path / "job"
    shutil.copytree(EXAMPLE, job)
    nfiles = sum(1 for p in job.rglob("*") if p.is_file())
    w = Watch(faultline_bin, "--json", "--interval", "100ms", "--poll", "50ms", str(job))
    w.wait_for("out", lambda l: '"event":"formed"' in l, "the incident")
    kern = job / "node017" / "kern.log"
    write_gz(job / "node017" / "kern.log.1.gz", kern.read_bytes())
    with open(kern, "r+b") as f:
        f.truncate(0)
    w.wait_for("err", lambda l: "kern.log.1.gz: a compressed copy of " + str(kern) in l, "the skip notice")
    w.p.send_signal(signal.SIGINT)
    rc, out, err = w.finish()
    assert rc == 0, err
    final = events(out)[-1]
    assert final["report"]["input"]["sources"] == nfiles
    formed = [e for e in events(out)[:-1] if e["event"] == "formed"]
    assert len({e["id"] for e in formed}) == len(formed)


def test_job_per_path(faultline_bin, tmp_path):
    """--job-per-path: each PATH is its own job, with its own session,
    incidents and final report."""
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(EXAMPLE, a)
    shutil.copytree(EXAMPLE / "node018", b)  # collateral only, no Xid line
    w = Watch(faultline_bin, "--json", "--job-per-path", "--interval", "100ms", "--poll", "50ms",
              str(a), str(b))
    w.wait_for("err", lambda l: "2 jobs, " in l, "the start-up line")
    w.p.send_signal(signal.SIGTERM)
    rc, out, err = w.finish()
    assert rc == 0, err
    reports = {e["job"]: e for e in events(out) if e["event"] == "report"}
    assert set(reports) == {str(a), str(b)}
    assert reports[str(a)]["report"]["incidents"][0]["rule"] == "xid-79-fallen-off-bus"
    assert reports[str(a)]["report"]["input"]["sources"] == 18
    assert reports[str(b)]["report"]["input"]["sources"] == 9
    assert all(i["rule"] != "xid-79-fallen-off-bus" for i in reports[str(b)]["report"]["incidents"])
    formed_jobs = {e["job"] for e in events(out) if e["event"] == "formed"}
    assert str(a) in formed_jobs


def test_window_and_durations_accept_units(faultline_bin):
    for args in (["--window", "64K"], ["--window", "1G"], ["--interval", "250ms"], ["--poll", "0.5"],
                 ["--interval", "1m"]):
        p = subprocess.run([faultline_bin, "watch", *args, "-"], input=b"", capture_output=True, timeout=TIMEOUT)
        assert p.returncode == 0, (args, p.stderr)
    for args in (["--window", "63K"], ["--window", "65G"], ["--window", "-1"], ["--window", "1T"],
                 ["--interval", "5ms"], ["--poll", "2h"], ["--interval", "nan"]):
        p = subprocess.run([faultline_bin, "watch", *args, "-"], input=b"", capture_output=True, timeout=TIMEOUT)
        assert p.returncode == 1, (args, p.stderr)


def test_deleted_file_is_let_go(faultline_bin, tmp_path):
    """A followed file that is deleted is read to its end and closed (an
    open descriptor would keep its disk space for as long as the watch
    runs); its lines stay in the diagnosis."""
    import time

    job = tmp_path / "job"
    shutil.copytree(EXAMPLE, job)
    w = Watch(faultline_bin, "--json", "--interval", "100ms", "--poll", "50ms", str(job))
    w.wait_for("err", lambda l: "inputs read" in l, "the start-up line")
    victim = job / "node017" / "kern.log"
    fds = pathlib.Path(f"/proc/{w.p.pid}/fd")

    def open_on_victim():
        found = []
        for f in fds.iterdir():
            try:
                if os.readlink(f).startswith(str(victim)):
                    found.append(f)
            except FileNotFoundError:  # closed meanwhile
                pass
        return found

    assert open_on_victim()
    victim.unlink()
    for _ in range(TIMEOUT * 20):  # waits for a state, asserts no duration
        if not open_on_victim():
            break
        time.sleep(0.05)
    assert not open_on_victim()
    w.p.send_signal(signal.SIGINT)
    rc, out, err = w.finish()
    assert rc == 0, err
    assert events(out)[-1]["report"]["incidents"][0]["rule"] == "xid-79-fallen-off-bus"


def test_incident_keeps_its_id_across_the_session_switch(faultline_bin):
    """The incident forms in the older session, the older session is
    dropped, and the final report comes from the younger one, which began
    reading standard input later (its line numbers are shifted): the
    incident keeps its id, because ids count lines in the whole stream."""
    filler = b"".join(b"housekeeping: shard %06d verified\n" % i for i in range(20000))  # ~660 KB
    incident = b"".join(p.read_bytes() for p in sorted(EXAMPLE.rglob("*.log")))
    r, wfd = os.pipe()
    w = Watch(faultline_bin, "--json", "--window", "1M", "--interval", "100ms", "--poll", "50ms", "-",
              stdin=r)
    os.close(r)
    with os.fdopen(wfd, "wb") as f:
        f.write(filler)
        f.write(incident)
        f.flush()
        line = w.wait_for("out", lambda l: json.loads(l).get("rule") == "xid-79-fallen-off-bus", "the incident")
        f.write(filler)
    rc, out, err = w.finish()
    assert rc == 0, err
    formed = json.loads(line)
    final = events(out)[-1]
    assert final["watch"]["sessions"] == 3  # started at 0, 512K and 1M; the first dropped at 1M
    report = final["report"]
    assert report["input"]["bytes"] < final["watch"]["bytes"]  # the younger session's share
    assert report["incidents"][0]["rule"] == "xid-79-fallen-off-bus"
    assert final["incident_ids"][0] == formed["id"]
    # The same line, numbered from the younger session's start in the
    # report and from the stream's start in the event.
    shift = report["incidents"][0]["initiating"]["evidence"][0]["line"] - formed["initiating"][0]["line"]
    assert shift < 0
    assert [e["id"] for e in events(out) if e["event"] == "formed"].count(formed["id"]) == 1


MAKE_DUMPS = REPO / "tests" / "flightrec" / "make_dumps.py"


@pytest.fixture(scope="module")
def watchdog_job(tmp_path_factory):
    """tests/flightrec/make_dumps.py's watchdog-timeout job: per-rank logs and
    one Flight Recorder dump per rank (pickle and JSON, some gzipped)."""
    out = tmp_path_factory.mktemp("fr")
    subprocess.run([sys.executable, str(MAKE_DUMPS), str(out), "--only", "job"], check=True,
                   timeout=300)
    return out / "job"


@pytest.mark.parametrize("mode", ["inotify", "polling"])
def test_uncompressed_dumps_appearing_are_read_as_dumps(faultline_bin, tmp_path, watchdog_job, mode):
    """Flight Recorder dumps written into a watched directory after the start,
    uncompressed and without an extension (TORCH_NCCL_DEBUG_INFO_TEMP_FILE +
    rank), are recognised by content and read once as dumps, not followed as
    logs: the final report has the flight_recorder section diagnose gives for
    the same files, and the logs' incident gains the dumps' evidence."""
    job = tmp_path / "job"
    shutil.copytree(watchdog_job / "logs", job / "logs")
    args = ["--json", "--interval", "100ms", "--poll", "50ms"] + (["--no-inotify"] if mode == "polling" else [])
    w = Watch(faultline_bin, *args, str(job))
    formed = json.loads(w.wait_for("out", lambda l: '"event":"formed"' in l, "the logs' incident"))
    assert formed["rank"] == 5
    dumps = sorted((watchdog_job / "dumps").iterdir())
    for k, src in enumerate(dumps):
        data = src.read_bytes()
        if src.name.endswith(".gz"):
            data = gzip.decompress(data)
        append(job / "dumps" / ("nccl_trace_rank_%d" % k), data)
    for k in range(len(dumps)):
        w.wait_for("err", lambda l, k=k: "nccl_trace_rank_%d: a Flight Recorder dump" % k in l,
                   "dump %d recognised" % k)
    w.wait_for("out", lambda l: '"event":"changed"' in l and json.loads(l)["id"] == formed["id"],
               "the incident strengthened by the dumps")
    w.p.send_signal(signal.SIGTERM)
    rc, out, err = w.finish()
    assert rc == 0, err
    report = events(out)[-1]["report"]
    want = diagnose(faultline_bin, job)
    assert report["input"]["errors"] == []
    assert report["flight_recorder"] == want["flight_recorder"]
    assert sorted(d["rank"] for d in report["flight_recorder"]["dumps"]) == list(range(8))
    assert report["flight_recorder"]["suspects"] == [5]
    primary = report["incidents"][0]
    assert primary["rule"] == want["incidents"][0]["rule"] == "nccl-watchdog-timeout"
    assert primary["initiating"]["suspects"] == [5]
    assert [f["rank"] for f in primary["flight_recorder"]] == [5]
    assert primary["confidence"] == want["incidents"][0]["confidence"]
    # Read as dumps, never as log lines.
    assert not any("nccl_trace_rank" in e["source"] for e in primary["initiating"]["evidence"])


def test_dumps_stay_across_the_session_switch(faultline_bin, tmp_path, watchdog_job):
    """A dump describes the job's state, not a stretch of its logs: the
    younger session is given the dumps already read, so the report still
    has them after the older session is dropped."""
    job = tmp_path / "job"
    dump = next(p for p in sorted((watchdog_job / "dumps").iterdir()) if not p.name.endswith(".gz"))
    append(job / "nccl_trace_rank_3", dump.read_bytes())
    filler = b"".join(b"housekeeping: shard %06d verified\n" % i for i in range(20000))  # ~660 KB
    w = Watch(faultline_bin, "--json", "--window", "1M", "--interval", "100ms", "--poll", "50ms", str(job))
    w.wait_for("err", lambda l: "1 input read" in l, "the start-up line")
    append(job / "app.log", filler)
    append(job / "app.log", filler)
    w.wait_for("err", lambda l: "app.log: new file" in l, "the log")
    w.p.send_signal(signal.SIGTERM)
    rc, out, err = w.finish()
    assert rc == 0, err
    final = events(out)[-1]
    assert final["watch"]["sessions"] >= 3  # the first session was dropped
    fr = final["report"]["flight_recorder"]
    assert [d["source"] for d in fr["dumps"]] == [str(job / "nccl_trace_rank_3")]


def test_a_rank_learned_later_is_a_change(faultline_bin):
    """The kernel's Xid line alone forms the incident on its host with no
    rank; the rank's own lines name it later. The event that carries the
    rank says so (`changes` holds "rank"), whatever else grew with it, so a
    consumer acting on the rank knows to act again."""
    r, wfd = os.pipe()
    w = Watch(faultline_bin, "--json", "--interval", "100ms", "--poll", "50ms", "-", stdin=r)
    os.close(r)
    kern = EXAMPLE / "node017" / "kern.log"
    want = diagnose(faultline_bin, EXAMPLE)["incidents"][0]
    with os.fdopen(wfd, "wb") as f:
        f.write(kern.read_bytes())
        f.flush()
        first = json.loads(w.wait_for("out", lambda l: json.loads(l).get("rule") == want["rule"], "the incident"))
        assert first["event"] == "formed" and first["rank"] == -1
        for p in sorted(EXAMPLE.rglob("*.log")):
            if p != kern:
                f.write(p.read_bytes())
                f.flush()
    rc, out, err = w.finish()
    assert rc == 0, err
    mine = [e for e in events(out) if e.get("id") == first["id"] and e["event"] != "report"]
    assert mine[-1]["rank"] == want["initiating"]["rank"]
    for before, after in zip(mine, mine[1:]):
        assert after["event"] == "changed"
        if after["rank"] != before["rank"]:
            assert "rank" in after["changes"], after["changes"]
        if after["host"] != before["host"]:
            assert "host" in after["changes"], after["changes"]
