"""Shared pytest fixtures for the CLI and golden suites: the built faultline
binary and the report schema (schema/report.schema.json in the repo)."""
import json
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
SCHEMA = REPO / "schema" / "report.schema.json"


@pytest.fixture(autouse=True, scope="session")
def _ruleset_key_in_tmp(tmp_path_factory):
    """Compiling a ruleset signs it with a per-installation key, created on
    first use; the tests keep that key in a temporary directory, never under
    the real home directory."""
    os.environ["FAULTLINE_RULESET_KEY_FILE"] = str(tmp_path_factory.mktemp("config") / "ruleset.key")


@pytest.fixture(scope="session")
def faultline_bin():
    path = os.environ.get("FAULTLINE_BIN", str(REPO / "build" / "src" / "cli" / "faultline"))
    if not os.access(path, os.X_OK):
        pytest.fail(f"faultline binary not found at {path}: build first or set FAULTLINE_BIN")
    return path


@pytest.fixture(scope="session")
def report_schema():
    if not SCHEMA.exists():
        pytest.fail(f"report schema not found at {SCHEMA}")
    return json.loads(SCHEMA.read_text())


@pytest.fixture(scope="session")
def validate(report_schema):
    import jsonschema

    validator = jsonschema.Draft202012Validator(report_schema)

    def check(doc, defn=None):
        if defn is None:
            errors = sorted(validator.iter_errors(doc), key=lambda e: e.path)
        else:
            sub = {"$schema": report_schema["$schema"], "$defs": report_schema["$defs"],
                   "$ref": f"#/$defs/{defn}"}
            errors = list(jsonschema.Draft202012Validator(sub).iter_errors(doc))
        assert not errors, "; ".join(f"{list(e.path)}: {e.message}" for e in errors[:5])

    return check


def run(binary, *args, stdin=None, check=True):
    p = subprocess.run([binary, *args], input=stdin, capture_output=True, timeout=300)
    if check and p.returncode != 0:
        raise AssertionError(f"{args} exited {p.returncode}: {p.stderr.decode(errors='replace')}")
    return p


def diagnose_report(binary, validate, *paths):
    """Diagnoses files or directories with --json (it must exit 0), checks
    the report against the schema and returns the whole report."""
    p = run(binary, "diagnose", "--json", *map(str, paths), check=False)
    assert p.returncode == 0, p.stderr.decode()
    doc = json.loads(p.stdout)
    validate(doc)
    return doc


def diagnose_path(binary, validate, *paths):
    """diagnose_report's incidents."""
    return diagnose_report(binary, validate, *paths)["incidents"]


def diagnose_text(binary, validate, directory, text, name="train.log"):
    """Writes one log file into `directory` and returns diagnose_path's
    incidents of it."""
    log = directory / name
    log.write_text(text)
    return diagnose_path(binary, validate, log)


def scan_path(binary, *paths):
    """The records `scan --json` prints for files or directories (it must
    exit 0)."""
    p = run(binary, "scan", "--json", *map(str, paths))
    return [json.loads(line) for line in p.stdout.decode().splitlines()]


def scan_text(binary, directory, text, name="train.log"):
    """Writes one log file into `directory` and returns scan_path's records
    of it."""
    log = directory / name
    log.write_text(text)
    return scan_path(binary, log)


def initiating_texts(inc):
    """The texts of an incident's initiating evidence lines."""
    return [e["text"] for e in inc["initiating"]["evidence"]]


def first_incident(binary, validate, directory, text, name="train.log"):
    """diagnose_text's first incident; fails when there is none."""
    found = diagnose_text(binary, validate, directory, text, name)
    assert found, "no incident"
    return found[0]


def leading_incident(binary, validate, directory, text, rule=None, reference=None, line=None, any_line=None,
                     name="train.log"):
    """first_incident, checked: it is of `rule` (or names `reference`), its
    first initiating line holds `line`, one of its initiating lines holds
    `any_line`; returns it for further checks."""
    inc = first_incident(binary, validate, directory, text, name)
    if rule is not None:
        assert inc["rule"] == rule, inc["explanation"]
    if reference is not None:
        assert inc["reference"] == reference, inc["explanation"]
    texts = initiating_texts(inc)
    if line is not None:
        assert texts and line in texts[0], texts
    if any_line is not None:
        assert any(any_line in t for t in texts), texts
    return inc


def ending_tests(failures, healthy, rule):
    """The two tests of an endings audit's file (tests/cli/test_*_endings.py),
    bound in its module as `test_failed_ending_leads,
    test_healthy_ending_has_no_incident = ending_tests(...)`: each of
    `failures` ({name: (text, initiating line)}) leads with `rule` on its
    initiating line; each of `healthy` ({name: text}) gives no incident."""

    @pytest.mark.parametrize("name", sorted(failures))
    def test_failed_ending_leads(faultline_bin, validate, tmp_path, name):
        text, initiating = failures[name]
        leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, line=initiating)

    @pytest.mark.parametrize("name", sorted(healthy))
    def test_healthy_ending_has_no_incident(faultline_bin, validate, tmp_path, name):
        assert not diagnose_text(faultline_bin, validate, tmp_path, healthy[name])

    return test_failed_ending_leads, test_healthy_ending_has_no_incident


def torchelastic_worker(node, host, local_rank, rank, world):
    """A worker's folder of torchelastic's per-rank log tree under `node`
    (`--log-dir`: torchelastic/<run>/attempt_0/<local_rank>/) whose
    stderr.log holds the NCCL init line that ties the local rank to `rank`;
    returns the folder, for its stdout.log."""
    d = node / "torchelastic" / "0d679e0f" / "attempt_0" / str(local_rank)
    d.mkdir(parents=True)
    pid = 4101 + local_rank
    (d / "stderr.log").write_text(
        f"{host}:{pid}:{pid} [{local_rank}] NCCL INFO comm 0x55d4c8a0 rank {rank} nranks {world} "
        f"cudaDev {local_rank} nvmlDev {local_rank} busId {18 + local_rank}000 commId 0x0d679e0ff00d - "
        "Init COMPLETE\n")
    return d
