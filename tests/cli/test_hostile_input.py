"""The command against hostile input (docs/cli.md, "Special files", "Limits",
"File names are bytes"): special files in a directory are warnings, endless
devices end, a FIFO without a writer ends at the time budget, the limits
are options whose hits are input errors naming the file and the limit, and
a file name cannot forge lines of the text report or of stderr."""
import gzip
import json
import os
import socket
import subprocess
import time

import pytest

from conftest import run

XID = (
    "[1000001.682554] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, "
    "GPU has fallen off the bus.\n"
)
FILLER = "2026-11-02T13:46:41.123456Z INFO train.py:812 step=1200 loss=2.3456 lr=0.000300 ok\n"


def test_special_files_in_a_directory_are_warnings(faultline_bin, tmp_path, validate):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "kern.log").write_text(XID)
    os.mkfifo(logs / "pipe.log")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(logs / "agent.sock"))
    try:
        p = run(faultline_bin, "diagnose", "--json", str(logs))
    finally:
        sock.close()
    doc = json.loads(p.stdout)
    validate(doc)
    warned = {w["source"] for w in doc["input"]["warnings"]}
    assert warned == {str(logs / "pipe.log"), str(logs / "agent.sock")}
    assert doc["input"]["errors"] == []
    assert doc["incidents"][0]["rule"] == "xid-79-fallen-off-bus"
    text = run(faultline_bin, "diagnose", str(logs)).stdout.decode()
    assert f"input warning: '{logs / 'pipe.log'}' is a FIFO" in text


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_endless_devices_end_as_binary_input(faultline_bin, tmp_path, device):
    if not os.access(device, os.R_OK):
        pytest.skip(f"{device} is not readable here")
    good = tmp_path / "kern.log"
    good.write_text(XID)
    t0 = time.monotonic()
    p = run(faultline_bin, "diagnose", "--json", device, str(good), check=False)
    assert time.monotonic() - t0 < 60
    assert p.returncode == 2
    doc = json.loads(p.stdout)
    (err,) = [e for e in doc["input"]["errors"] if e["source"] == device]
    assert "binary" in err["message"] and device in err["message"]
    assert doc["incidents"][0]["rule"] == "xid-79-fallen-off-bus"


def test_fifo_without_a_writer_ends_at_the_time_budget(faultline_bin, tmp_path):
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    p = run(faultline_bin, "diagnose", "--json", "--time-budget", "1", str(fifo), check=False)
    assert time.monotonic() - t0 < 60
    assert p.returncode == 2
    assert "time budget" in p.stderr.decode()
    assert str(fifo) in p.stderr.decode()


def test_fifo_read_when_named(faultline_bin, tmp_path):
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    proc = subprocess.Popen([faultline_bin, "scan", "--json", str(fifo)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    time.sleep(0.3)  # the command waits for the writer, without blocking in open()
    with open(fifo, "w") as f:
        f.write(FILLER * 10 + XID)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    (ev,) = [json.loads(line) for line in out.splitlines()]
    assert ev["line"] == 11


def test_limit_options_are_input_errors_naming_the_limit(faultline_bin, tmp_path, validate):
    big = tmp_path / "big.log"
    big.write_text((FILLER * 99 + XID) * 50)  # 50 matches, ~375 KB
    small = tmp_path / "small.log"
    small.write_text(XID)
    p = run(faultline_bin, "diagnose", "--json", "--max-source-bytes", "100K", str(big), str(small), check=False)
    assert p.returncode == 2
    doc = json.loads(p.stdout)
    validate(doc)
    (err,) = doc["input"]["errors"]
    assert err["source"] == str(big)
    assert "102400" in err["message"] and "--max-source-bytes" in err["message"]
    # The lines before the limit and the other file are still diagnosed.
    assert doc["incidents"][0]["rule"] == "xid-79-fallen-off-bus"
    assert doc["input"]["matches"] == 1 + 100 * 1024 // (len(FILLER) * 99 + len(XID))

    bomb = tmp_path / "bomb.log.gz"
    bomb.write_bytes(gzip.compress(b"\n" * (8 << 20)))
    p = run(faultline_bin, "diagnose", "--json", "--max-decompressed-bytes", "1M", str(bomb), str(small),
            check=False)
    assert p.returncode == 2
    (err,) = json.loads(p.stdout)["input"]["errors"]
    assert err["source"] == str(bomb) and "1048576" in err["message"]

    for bad in ("0", "-1", "1X", "1.5M", "", "99999999999T"):
        p = run(faultline_bin, "diagnose", "--max-source-bytes", bad, str(small), check=False)
        assert p.returncode == 1, bad
    for bad in ("0", "-2", "nan", "inf", "soon"):
        p = run(faultline_bin, "diagnose", "--time-budget", bad, str(small), check=False)
        assert p.returncode == 1, bad
    help_text = run(faultline_bin, "diagnose", "--help").stdout.decode()
    assert "--max-decompressed-bytes" in help_text and "default 1T" in help_text


def test_file_names_cannot_forge_lines(faultline_bin, tmp_path):
    name = "x.log\ninput error: forged\n== PRIMARY DIAGNOSIS ==\nz"
    forged = tmp_path / name
    forged.write_text(XID + FILLER * 200)
    p = run(faultline_bin, "diagnose", "--max-source-bytes", "1K", str(forged), check=False)
    assert p.returncode == 2
    for stream in (p.stdout.decode(), p.stderr.decode()):
        assert "\ninput error: forged" not in stream
        assert "\n== PRIMARY DIAGNOSIS ==\nz" not in stream
        assert "x.log\\ninput error: forged" in stream


def test_non_utf8_names_are_recoverable_in_json(faultline_bin, tmp_path, validate):
    raw = os.fsencode(str(tmp_path)) + b"/caf\xe9-\\-\xff.log"
    with open(raw, "w") as f:
        f.write(XID)
    p = run(faultline_bin, "diagnose", "--json", os.fsdecode(raw))
    doc = json.loads(p.stdout)
    validate(doc)
    ev = doc["incidents"][0]["initiating"]["evidence"][0]
    assert "\ufffd" in ev["source"]
    escaped = ev["source_escaped"]
    back = bytearray()
    i = 0
    while i < len(escaped):
        if escaped.startswith("\\\\", i):
            back += b"\\"
            i += 2
        elif escaped.startswith("\\x", i):
            back.append(int(escaped[i + 2:i + 4], 16))
            i += 4
        else:
            back += escaped[i].encode()
            i += 1
    assert bytes(back) == raw
    lines = run(faultline_bin, "scan", "--json", os.fsdecode(raw)).stdout.splitlines()
    assert json.loads(lines[0])["source_escaped"] == escaped
