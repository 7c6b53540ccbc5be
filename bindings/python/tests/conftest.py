"""Test setup.

With FAULTLINE_LIBRARY set (development) the package is imported from this
source tree (bindings/python/src) and uses that library; without it the
tests exercise the installed package and its bundled library.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

HERE = Path(__file__).resolve().parent
PKG_ROOT = HERE.parent  # bindings/python
REPO_ROOT = HERE.parents[2]  # the project root
SRC = PKG_ROOT / "src"

if os.environ.get("FAULTLINE_LIBRARY"):
    sys.path.insert(0, str(SRC))

import faultline  # noqa: E402


@pytest.fixture(autouse=True, scope="session")
def _ruleset_key_in_tmp(tmp_path_factory):
    """Compiling a ruleset signs it with a per-installation key, created on
    first use; the tests keep that key in a temporary directory, never under
    the real home directory."""
    os.environ["FAULTLINE_RULESET_KEY_FILE"] = str(tmp_path_factory.mktemp("config") / "ruleset.key")

# A syslog-wrapped kernel Xid 79 on node017 (rank 3, busId 3b000), then the
# NCCL watchdogs of every other rank 30 minutes later.
XID_LINE = (
    "Nov  2 03:12:05 node017 kernel: [1000001.682554] NVRM: Xid (PCI:0000:3b:00): 79, "
    "pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
)
BUS_IDS = ["18000", "2a000", "3a000", "3b000", "9a000", "ab000", "ba000", "db000"]
HOSTS = {"node017": [0, 1, 2, 3], "node018": [4, 5, 6, 7]}
NRANKS = 8
FAILED_RANK = 3


def watchdog_line(rank: int) -> str:
    return (
        f"[rank{rank}]:[E1102 03:42:10.{123456 + rank:06d} 1234 ProcessGroupNCCL.cpp:616] [Rank {rank}] "
        "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4711, OpType=ALLREDUCE, "
        "Timeout(ms)=1800000) ran for 1800085 milliseconds before timing out."
    )


def write_incident(root: Path, xid_line: str = XID_LINE) -> Dict[str, Any]:
    """Lays out a 2-host, 8-rank job's logs under root; returns what to expect."""
    for host, ranks in HOSTS.items():
        d = root / host
        d.mkdir(parents=True, exist_ok=True)
        kern = [
            f"Nov  2 02:59:{50 + i:02d} {host} kernel: [1000000.{i:06d}] usb 1-1: new device" for i in range(3)
        ]
        if host == "node017":
            kern.append(xid_line)
        (d / "dmesg.log").write_text("\n".join(kern) + "\n")
        for local, rank in enumerate(ranks):
            lines = [
                f"2026-11-02T03:00:00.{rank:03d}Z [rank{rank}]:{host}:{12345 + local}:{12345 + local} [{local}] "
                f"NCCL INFO comm 0x55d0c0a0 rank {rank} nranks {NRANKS} cudaDev {local} nvmlDev {local} "
                f"busId {BUS_IDS[local]} commId 0x1a2b3c4d5e6f7081 - Init COMPLETE",
            ]
            for step in range(1, 11):
                lines.append(f"2026-11-02T03:{step:02d}:00.000Z [rank{rank}]: step {step * 10} loss {2.5 - step * 0.01:.2f}")
            if rank != FAILED_RANK:
                lines.append(watchdog_line(rank))
            (d / f"rank-{rank}.log").write_text("\n".join(lines) + "\n")
    return {
        "rule": "xid-79-fallen-off-bus",
        "rank": FAILED_RANK,
        "host": "node017",
        "gpu": "0000:3b:00.0",
        "collateral_rule": "nccl-watchdog-timeout",
        "collateral_ranks": [r for r in range(NRANKS) if r != FAILED_RANK],
    }


@pytest.fixture(scope="session")
def incident(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    root = tmp_path_factory.mktemp("incident")
    expect = write_incident(root)
    expect["path"] = root
    return expect


@pytest.fixture(scope="session")
def report(incident: Dict[str, Any]) -> "faultline.Report":
    return faultline.diagnose(incident["path"])


@pytest.fixture(scope="session")
def schema() -> Dict[str, Any]:
    path = (REPO_ROOT / "schema" / "report.schema.json").resolve()
    if not path.exists():
        pytest.fail(f"no report schema at {path}")
    return json.loads(path.read_text())


@pytest.fixture(scope="session")
def generated_include(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory holding faultline/faultline_version.h, which CMake
    generates from project(VERSION) into the build tree: next to the library
    under test, in ./build, or, for an installed wheel with no build tree, a
    stand-in written from the loaded library's own version."""
    cands = []
    if os.environ.get("FAULTLINE_INCLUDE"):
        cands.append(Path(os.environ["FAULTLINE_INCLUDE"]))
    if os.environ.get("FAULTLINE_LIBRARY"):
        lib = Path(os.environ["FAULTLINE_LIBRARY"]).resolve()
        cands += [d / "include" for d in lib.parents]
    cands.append(REPO_ROOT / "build" / "include")
    for c in cands:
        if (c / "faultline" / "faultline_version.h").exists():
            return c
    from faultline import _ffi

    n = _ffi.LIBRARY_VERSION_NUMBER
    d = tmp_path_factory.mktemp("include")
    (d / "faultline").mkdir()
    (d / "faultline" / "faultline_version.h").write_text(
        f"#define FL_VERSION_MAJOR {n // 10000}\n#define FL_VERSION_MINOR {n // 100 % 100}\n"
        f"#define FL_VERSION_PATCH {n % 100}\n"
    )
    return d


@pytest.fixture(scope="session")
def header_path() -> Path:
    p = REPO_ROOT / "include" / "faultline" / "faultline.h"
    if not p.exists():
        pytest.skip(f"no header at {p}")
    return p
