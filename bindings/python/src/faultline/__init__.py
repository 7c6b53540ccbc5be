"""faultline: diagnose GPU training and inference failures from their logs.

>>> import faultline
>>> report = faultline.diagnose("/archive/job-1234/")
>>> report.primary.rule, report.primary.rank, report.primary.host
('xid-79-fallen-off-bus', 3, 'node017')

The binding sits on libfaultline's C ABI (``faultline.h``) through ctypes.
Set ``FAULTLINE_LIBRARY=/path/to/libfaultline.so`` to use another build of
the library than the one bundled in the package.
"""

from __future__ import annotations

from . import _ffi
from ._errors import (
    BufferTooSmallError,
    BusyError,
    CancelledError,
    EvidenceCappedWarning,
    Error,
    FaultlineIOError,
    InternalError,
    InputWarning,
    InvalidArgumentError,
    NoMemoryError,
    NotFoundError,
    PathNotFoundError,
    ParseError,
    RulesetError,
    RulesetVersionError,
)
from ._report import (
    Action,
    Attempt,
    AttemptPrimary,
    Collateral,
    Evidence,
    FlightRecorder,
    FlightRecorderDump,
    FlightRecorderFinding,
    FlightRecorderGroup,
    Ignored,
    Incident,
    Initiating,
    InputError,
    InputSummary,
    JobWindow,
    Report,
    Recurrence,
    RulesetInfo,
    Totals,
)
from ._rules import Ruleset, RuleSummaries, RuleSummary, compile_rules, rule, rule_text, rules
from ._session import Session, Stream, diagnose, report_from_bundles
from ._time import to_us as _to_us

#: The version of this Python package: that of the libfaultline it binds
#: (the wheel bundles the library built from the same tree, whose version has
#: one home, CMake's project(VERSION)).
__version__ = _ffi.LIBRARY_VERSION


def library_version() -> str:
    """The loaded libfaultline's version string ("MAJOR.MINOR.PATCH")."""
    return _ffi.LIBRARY_VERSION


def library_path() -> str:
    """Where the loaded libfaultline came from."""
    return _ffi.LIBRARY_PATH


def parse_time(text: str) -> int:
    """An RFC 3339 time or epoch seconds as microseconds UTC (the library's parser)."""
    return _to_us(text)


__all__ = [
    "Action",
    "BufferTooSmallError",
    "BusyError",
    "CancelledError",
    "EvidenceCappedWarning",
    "Collateral",
    "Error",
    "Evidence",
    "FaultlineIOError",
    "FlightRecorder",
    "FlightRecorderDump",
    "FlightRecorderFinding",
    "FlightRecorderGroup",
    "Attempt",
    "AttemptPrimary",
    "Ignored",
    "Incident",
    "Recurrence",
    "Initiating",
    "InputError",
    "InputSummary",
    "InternalError",
    "InputWarning",
    "InvalidArgumentError",
    "JobWindow",
    "NoMemoryError",
    "NotFoundError",
    "PathNotFoundError",
    "ParseError",
    "Report",
    "RuleSummaries",
    "RuleSummary",
    "Ruleset",
    "RulesetError",
    "RulesetInfo",
    "RulesetVersionError",
    "Session",
    "Stream",
    "Totals",
    "__version__",
    "compile_rules",
    "diagnose",
    "library_path",
    "library_version",
    "parse_time",
    "report_from_bundles",
    "rule",
    "rule_text",
    "rules",
]
