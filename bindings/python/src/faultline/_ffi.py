"""ctypes declarations of the C ABI in ``include/faultline/faultline.h``.

Everything the binding calls is declared here and nowhere else. The test
``tests/test_header_drift.py`` preprocesses the real header and checks every
function (name, result, argument count and kinds) and every struct (field
names, order and types) declared below against it, so the two never drift.

The library is found, in order, at ``$FAULTLINE_LIBRARY`` (development: point
it at a build tree's ``libfaultline.so``), inside this package (what the wheel
installs), then wherever the dynamic loader finds ``libfaultline``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char_p,
    c_double,
    c_int,
    c_int32,
    c_int64,
    c_size_t,
    c_uint,
    c_uint32,
    c_uint64,
    c_void_p,
)
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

#: The ABI major version this binding speaks (FL_VERSION_MAJOR).
ABI_MAJOR = 0
#: The oldest library (FL_VERSION_NUMBER) that has every function below.
#: While the major is 0 a minor release may change the ABI, so the library
#: must also have this minor (faultline.h, "ABI and versions").
ABI_MIN_NUMBER = 300

FL_OK = 0
FL_DONE = 1
FL_ERR_INVALID_ARG = -1
FL_ERR_NOMEM = -2
FL_ERR_IO = -3
FL_ERR_PARSE = -4
FL_ERR_RULESET = -5
FL_ERR_RULESET_VERSION = -6
FL_ERR_BUSY = -7
FL_ERR_BUFFER_TOO_SMALL = -8
FL_ERR_CANCELLED = -9
FL_ERR_INTERNAL = -10
FL_ERR_NOT_FOUND = -11

#: FL_TIME_UNSET (INT64_MIN).
FL_TIME_UNSET = -(2**63)

fl_status = c_int


class EvidenceView(Structure):
    """fl_evidence_view. Strings are borrowed (see the header)."""

    # source/time_source/host/rule/signal are low-cardinality: kept as raw
    # addresses so a batch decodes each distinct string once.
    _fields_ = [
        ("source", c_void_p),
        ("line", c_uint64),
        ("offset", c_uint64),
        ("time_us", c_int64),
        ("time_source", c_void_p),
        ("rank", c_int64),
        ("host", c_void_p),
        ("rule", c_void_p),
        ("signal", c_void_p),
        ("text", c_char_p),
        ("fields_json", c_char_p),
    ]


EVIDENCE_CB = CFUNCTYPE(None, c_void_p, POINTER(EvidenceView))
PROGRESS_CB = CFUNCTYPE(c_int, c_void_p, c_uint64, c_uint64)


class ClockOffset(Structure):
    """fl_clock_offset."""

    _fields_ = [("host", c_char_p), ("seconds", c_double)]


class SessionOptions(Structure):
    """fl_session_options (size-versioned)."""

    _fields_ = [
        ("size", c_uint32),
        ("threads", c_uint32),
        ("job_start_us", c_int64),
        ("job_end_us", c_int64),
        ("clock_offsets", POINTER(ClockOffset)),
        ("clock_offset_count", c_size_t),
        ("tz", c_char_p),
        ("on_evidence", EVIDENCE_CB),
        ("evidence_user", c_void_p),
        ("on_progress", PROGRESS_CB),
        ("progress_user", c_void_p),
        ("max_source_bytes", c_uint64),
        ("max_decompressed_bytes", c_uint64),
        ("time_budget_s", c_double),
        ("max_restarts_per_rule", c_uint32),
        ("max_restarts_per_host", c_uint32),
        ("restart_window_s", c_double),
        ("job_state", c_int32),
        ("job_exit_status", c_int32),
    ]


class ReportTotals(Structure):
    """fl_report_totals (size-versioned)."""

    _fields_ = [
        ("size", c_uint32),
        ("sources", c_uint64),
        ("bytes", c_uint64),
        ("lines", c_uint64),
        ("seconds", c_double),
        ("evidence", c_uint64),
        ("matches", c_uint64),
        ("incidents", c_uint64),
        ("errors", c_uint64),
        ("ranks_seen", c_uint64),
        ("ranks_kept", c_uint64),
        ("hosts_seen", c_uint64),
        ("hosts_kept", c_uint64),
        ("capped", c_uint32),
    ]


class InputErrorView(Structure):
    """fl_input_error_view (size-versioned)."""

    _fields_ = [
        ("size", c_uint32),
        ("source", c_char_p),
        ("message", c_char_p),
        ("status", c_int),
    ]


class CollateralView(Structure):
    """fl_collateral_view (size-versioned); pointers borrowed until fl_report_free()."""

    _fields_ = [
        ("size", c_uint32),
        ("rule", c_char_p),
        ("reference", c_char_p),
        ("count", c_uint64),
        ("ranks", POINTER(c_int64)),
        ("rank_count", c_size_t),
        ("hosts", POINTER(c_char_p)),
        ("host_count", c_size_t),
        ("first_time_us", c_int64),
        ("last_time_us", c_int64),
        ("sample", EvidenceView),
    ]


class IgnoredView(Structure):
    """fl_ignored_view (size-versioned)."""

    _fields_ = [
        ("size", c_uint32),
        ("rule", c_char_p),
        ("reason", c_char_p),
        ("count", c_uint64),
        ("sample", EvidenceView),
    ]


class ActionView(Structure):
    """fl_action_view (size-versioned); pointers borrowed until fl_report_free()."""

    _fields_ = [
        ("size", c_uint32),
        ("kind", c_char_p),
        ("exclude_hosts", POINTER(c_char_p)),
        ("exclude_host_count", c_size_t),
        ("exclude_gpus", POINTER(c_char_p)),
        ("exclude_gpu_count", c_size_t),
        ("reason", c_char_p),
        ("set_by", c_char_p),
        ("missing_fact", c_char_p),
    ]


class AttemptView(Structure):
    """fl_attempt_view (size-versioned); strings borrowed until fl_report_free()."""

    _fields_ = [
        ("size", c_uint32),
        ("index", c_uint32),
        ("label", c_char_p),
        ("recognised", c_char_p),
        ("start_us", c_int64),
        ("end_us", c_int64),
        ("primary_rule", c_char_p),
        ("host", c_char_p),
        ("rank", c_int64),
        ("step", c_int64),
    ]


class IncidentHistory(Structure):
    """fl_incident_history (size-versioned); the array is borrowed until fl_report_free()."""

    _fields_ = [
        ("size", c_uint32),
        ("step", c_int64),
        ("attempt", c_uint32),
        ("recurrence_attempts", POINTER(c_uint32)),
        ("recurrence_attempt_count", c_size_t),
        ("same_host", c_uint32),
        ("same_step", c_uint32),
        ("resume_failed_on_previous_checkpoint", c_int),
    ]


class IncidentView(Structure):
    """fl_incident_view. Strings are borrowed until fl_report_free()."""

    _fields_ = [
        ("rule", c_char_p),
        ("reference", c_char_p),
        ("title", c_char_p),
        ("category", c_char_p),
        ("confidence", c_double),
        ("rank", c_int64),
        ("host", c_char_p),
        ("gpu", c_char_p),
        ("time_us", c_int64),
        ("inferred", c_int),
        ("fix", c_char_p),
        ("verify", c_char_p),
        ("explanation", c_char_p),
        ("initiating_evidence", c_size_t),
        ("collateral", c_size_t),
        ("missing_facts", c_size_t),
    ]


#: C struct name -> ctypes class; the drift test walks this.
STRUCTS: Dict[str, Any] = {
    "fl_evidence_view": EvidenceView,
    "fl_clock_offset": ClockOffset,
    "fl_session_options": SessionOptions,
    "fl_report_totals": ReportTotals,
    "fl_incident_view": IncidentView,
    "fl_input_error_view": InputErrorView,
    "fl_collateral_view": CollateralView,
    "fl_ignored_view": IgnoredView,
    "fl_action_view": ActionView,
    "fl_attempt_view": AttemptView,
    "fl_incident_history": IncidentHistory,
}
#: C callback typedef -> ctypes CFUNCTYPE; the drift test walks this too.
CALLBACKS: Dict[str, Any] = {"fl_evidence_cb": EVIDENCE_CB, "fl_progress_cb": PROGRESS_CB}
#: Opaque handle types (declared as c_void_p).
OPAQUE = ("fl_error", "fl_ruleset", "fl_session", "fl_report")

_P = POINTER
_vp = c_void_p
_pvp = POINTER(c_void_p)
_psz = POINTER(c_size_t)

#: name -> (restype, argtypes). Every fl_* function of the header.
FUNCTIONS: Dict[str, Tuple[Any, List[Any]]] = {
    # versions
    "fl_version_number": (c_uint, []),
    "fl_version_string": (c_char_p, []),
    # status codes and errors
    "fl_status_str": (c_char_p, [fl_status]),
    "fl_error_message": (c_char_p, [_vp]),
    "fl_error_code": (fl_status, [_vp]),
    "fl_error_free": (None, [_vp]),
    "fl_free": (None, [_vp]),
    "fl_time_parse": (fl_status, [c_char_p, _P(c_int64)]),
    # rulesets
    "fl_ruleset_load_default": (fl_status, [_pvp, _pvp]),
    "fl_ruleset_load_file": (fl_status, [_pvp, c_char_p, _pvp]),
    "fl_ruleset_load_memory": (fl_status, [_pvp, _vp, c_size_t, _pvp]),
    "fl_ruleset_compile": (fl_status, [c_char_p, c_char_p, _pvp]),
    "fl_ruleset_free": (None, [_vp]),
    "fl_ruleset_name": (c_char_p, [_vp]),
    "fl_ruleset_version": (c_char_p, [_vp]),
    "fl_ruleset_load_info": (c_char_p, [_vp]),
    "fl_ruleset_rule_count": (c_size_t, [_vp]),
    "fl_ruleset_rules_json": (fl_status, [_vp, _pvp, _psz]),
    "fl_ruleset_rule_json": (fl_status, [_vp, c_char_p, _pvp, _psz]),
    "fl_ruleset_rule_text": (fl_status, [_vp, c_char_p, _pvp, _psz]),
    # sessions
    "fl_session_options_init": (fl_status, [_P(SessionOptions), c_size_t]),
    "fl_session_new": (fl_status, [_pvp, _vp, _P(SessionOptions), _pvp]),
    "fl_session_free": (None, [_vp]),
    "fl_session_last_error": (c_char_p, [_vp]),
    "fl_session_add_path": (fl_status, [_vp, c_char_p]),
    "fl_session_add_range": (fl_status, [_vp, c_char_p, c_uint64, c_uint64, c_uint64]),
    "fl_session_stream_open": (fl_status, [_vp, c_char_p, _P(c_uint32)]),
    "fl_session_feed": (fl_status, [_vp, c_uint32, _vp, c_size_t]),
    "fl_session_stream_flush": (fl_status, [_vp, c_uint32]),
    "fl_session_stream_close": (fl_status, [_vp, c_uint32]),
    "fl_session_scan": (fl_status, [_vp]),
    "fl_session_cancel": (None, [_vp]),
    "fl_session_error_count": (c_size_t, [_vp]),
    "fl_session_finish": (fl_status, [_vp, _pvp]),
    "fl_session_export_bundle": (fl_status, [_vp, _pvp, _psz]),
    "fl_session_snapshot": (fl_status, [_vp, _pvp]),
    "fl_session_add_prior_bundle": (fl_status, [_vp, _vp, c_size_t]),
    "fl_report_from_bundles": (
        fl_status,
        [_pvp, _vp, _P(SessionOptions), _pvp, _psz, c_size_t, _pvp],
    ),
    # reports
    "fl_report_free": (None, [_vp]),
    "fl_report_json": (fl_status, [_vp, _pvp, _psz]),
    "fl_report_text": (fl_status, [_vp, _pvp, _psz]),
    "fl_report_evidence_jsonl": (fl_status, [_vp, _pvp, _psz]),
    "fl_report_signal_hits_json": (fl_status, [_vp, _pvp, _psz]),
    "fl_report_totals_get": (fl_status, [_vp, _P(ReportTotals)]),
    "fl_report_incident_count": (c_size_t, [_vp]),
    "fl_report_incident": (fl_status, [_vp, c_size_t, _P(IncidentView)]),
    "fl_report_incident_missing_fact": (c_char_p, [_vp, c_size_t, c_size_t]),
    "fl_report_incident_evidence": (
        fl_status,
        [_vp, c_size_t, c_size_t, _P(EvidenceView), c_size_t, _psz],
    ),
    "fl_report_evidence_count": (c_size_t, [_vp]),
    "fl_report_evidence": (fl_status, [_vp, c_size_t, _P(EvidenceView), c_size_t, _psz]),
    "fl_report_input_error_count": (c_size_t, [_vp]),
    "fl_report_input_error": (fl_status, [_vp, c_size_t, _P(InputErrorView)]),
    "fl_report_input_warning_count": (c_size_t, [_vp]),
    "fl_report_input_warning": (fl_status, [_vp, c_size_t, _P(InputErrorView)]),
    "fl_report_incident_collateral": (fl_status, [_vp, c_size_t, c_size_t, _P(CollateralView)]),
    "fl_report_ignored_count": (c_size_t, [_vp]),
    "fl_report_ignored": (fl_status, [_vp, c_size_t, _P(IgnoredView)]),
    "fl_report_incident_id": (c_char_p, [_vp, c_size_t]),
    "fl_incident_id": (fl_status, [c_char_p, c_char_p, c_uint64, c_char_p, c_int64, c_char_p]),
    "fl_report_incident_action": (fl_status, [_vp, c_size_t, _P(ActionView)]),
    "fl_report_job_window": (fl_status, [_vp, _P(c_int64), _P(c_int64)]),
    "fl_report_html": (fl_status, [_vp, _pvp, _psz]),
    "fl_report_attempt_count": (c_size_t, [_vp]),
    "fl_report_attempt": (fl_status, [_vp, c_size_t, _P(AttemptView)]),
    "fl_report_incident_history": (fl_status, [_vp, c_size_t, _P(IncidentHistory)]),
    # experimental (fl_x_*: outside the frozen ABI, may change in any release)
    "fl_x_ruleset_signal_costs_json": (fl_status, [_vp, _pvp, c_size_t, c_uint64, _pvp, _psz, _pvp]),
}

_LIB_NAMES = ("libfaultline.so.0", "libfaultline.so", "libfaultline.0.dylib", "libfaultline.dylib")


def _candidates() -> Sequence[str]:
    env = os.environ.get("FAULTLINE_LIBRARY")
    if env:
        return [env]
    here = Path(__file__).resolve().parent
    # The wheel ships the library under its soname (libfaultline.so.0.3).
    found = [str(p) for p in sorted(here.glob("libfaultline.so.*"))]
    found += [str(here / n) for n in _LIB_NAMES if (here / n).exists() and str(here / n) not in found]
    if not found:
        sys_lib = ctypes.util.find_library("faultline")
        if sys_lib:
            found.append(sys_lib)
    return found


def _load() -> Tuple[ctypes.CDLL, str]:
    cands = _candidates()
    if not cands:
        raise ImportError(
            "faultline: libfaultline not found: not bundled in the package "
            f"({Path(__file__).resolve().parent}) nor on the loader's path; "
            "set FAULTLINE_LIBRARY=/path/to/libfaultline.so"
        )
    errors = []
    for path in cands:
        try:
            # CDLL (not PyDLL): every foreign call releases the GIL.
            return ctypes.CDLL(path), path
        except OSError as e:  # pragma: no cover - depends on the machine
            errors.append(f"{path}: {e}")
    raise ImportError("faultline: cannot load libfaultline: " + "; ".join(errors))


#: Functions the loaded library lacks (an older build): calling one raises.
MISSING: List[str] = []


class _Missing:
    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, *args: Any) -> Any:
        from ._errors import InternalError

        raise InternalError(f"{LIBRARY_PATH} has no {self.name}: the library is older than this binding", FL_ERR_INTERNAL)


def _declare(dll: ctypes.CDLL) -> None:
    for name, (res, args) in FUNCTIONS.items():
        try:
            fn = getattr(dll, name)
        except AttributeError:
            MISSING.append(name)
            setattr(dll, name, _Missing(name))
            continue
        fn.restype = res
        fn.argtypes = args
    if "fl_version_number" in MISSING or "fl_session_new" in MISSING:
        raise ImportError(f"faultline: {LIBRARY_PATH} does not look like libfaultline")


lib, LIBRARY_PATH = _load()
_declare(lib)

LIBRARY_VERSION_NUMBER: int = lib.fl_version_number()
LIBRARY_VERSION: str = lib.fl_version_string().decode()
_same_minor = ABI_MAJOR > 0 or LIBRARY_VERSION_NUMBER // 100 == ABI_MIN_NUMBER // 100
if LIBRARY_VERSION_NUMBER // 10000 != ABI_MAJOR or LIBRARY_VERSION_NUMBER < ABI_MIN_NUMBER or not _same_minor:
    raise ImportError(
        f"faultline: {LIBRARY_PATH} is version {LIBRARY_VERSION} (number "
        f"{LIBRARY_VERSION_NUMBER}); this binding needs "
        f"{ABI_MIN_NUMBER // 10000}.{ABI_MIN_NUMBER // 100 % 100}"
        + (".x" if ABI_MAJOR == 0 else " or a later minor of that major")
    )


def take_string(ptr: c_void_p, length: c_size_t) -> str:
    """Copies a library-allocated buffer into a str and frees it (fl_free)."""
    try:
        if not ptr.value:
            return ""
        return ctypes.string_at(ptr.value, length.value).decode("utf-8", "replace")
    finally:
        lib.fl_free(ptr)


def borrowed_string(ptr: c_void_p, length: c_size_t) -> str:
    """Copies a borrowed buffer (valid while its owner lives) into a str."""
    if not ptr.value:
        return ""
    return ctypes.string_at(ptr.value, length.value).decode("utf-8", "replace")


def decode(b: Optional[bytes]) -> Optional[str]:
    return None if b is None else b.decode("utf-8", "replace")

