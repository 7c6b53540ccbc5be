"""Time conversions between Python and the library (microseconds UTC)."""

from __future__ import annotations

import ctypes
import re
from datetime import datetime, timedelta, timezone
from typing import Optional, Union

from . import _errors, _ffi

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_US = timedelta(microseconds=1)

TimeLike = Union[datetime, str, int, float]

_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?"
    r"(Z|z|[+-]\d{2}:?\d{2})?$"
)


def from_us(us: int) -> Optional[datetime]:
    """A library time (microseconds UTC, or FL_TIME_UNSET) as an aware datetime."""
    if us == _ffi.FL_TIME_UNSET:
        return None
    try:
        return EPOCH + timedelta(microseconds=us)
    except OverflowError:  # outside datetime's years 1..9999
        return None


def to_us(value: Optional[TimeLike]) -> int:
    """Microseconds UTC of a datetime (naive means UTC), an RFC 3339 string or
    epoch seconds (the library parses strings), or FL_TIME_UNSET for None."""
    if value is None:
        return _ffi.FL_TIME_UNSET
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return (value - EPOCH) // _US
    if isinstance(value, bool):
        raise TypeError("a time must be a datetime, an RFC 3339 string or epoch seconds")
    if isinstance(value, (int, float)):
        return int(round(value * 1_000_000))
    if isinstance(value, str):
        out = ctypes.c_int64()
        rc = _ffi.lib.fl_time_parse(value.encode(), ctypes.byref(out))
        if rc != _ffi.FL_OK:
            _errors.raise_status(rc, f"cannot parse time {value!r} (RFC 3339 or epoch seconds)")
        return out.value
    raise TypeError(f"a time must be a datetime, an RFC 3339 string or epoch seconds, not {type(value).__name__}")


def parse_rfc3339(text: Optional[str]) -> Optional[datetime]:
    """Parses the report's RFC 3339 times ("2026-11-02T03:12:05.000000Z")."""
    if text is None:
        return None
    m = _RFC3339.match(text)
    if not m:
        return None
    y, mo, d, h, mi, s, frac, tz = m.groups()
    us = int((frac or "0")[:6].ljust(6, "0"))
    tzinfo = timezone.utc
    if tz and tz not in ("Z", "z"):
        sign = -1 if tz[0] == "-" else 1
        digits = tz[1:].replace(":", "")
        tzinfo = timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))
    try:
        return datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), us, tzinfo=tzinfo)
    except ValueError:
        return None


def format_rfc3339(dt: Optional[datetime]) -> Optional[str]:
    """The report's format: UTC, microseconds, 'Z'."""
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
