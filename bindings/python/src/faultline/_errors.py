"""Exceptions: one subclass of :class:`Error` per fl_status code."""

from __future__ import annotations

import ctypes
import errno
from typing import Dict, NoReturn, Optional, Type

from . import _ffi


class Error(Exception):
    """A faultline call failed.

    ``code`` is the negative ``fl_status`` (pinned forever), ``status`` its
    constant name ("FL_ERR_IO") and ``message`` the detail the library left
    on the handle.
    """

    code: int = 0

    def __init__(self, message: str, code: Optional[int] = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message

    @property
    def status(self) -> str:
        return str(_ffi.lib.fl_status_str(self.code).decode())

    def __str__(self) -> str:
        return self.message or self.status


class InvalidArgumentError(Error, ValueError):
    """FL_ERR_INVALID_ARG: a bad argument, or a call in the wrong state."""

    code = _ffi.FL_ERR_INVALID_ARG


class NoMemoryError(Error, MemoryError):
    """FL_ERR_NOMEM."""

    code = _ffi.FL_ERR_NOMEM


class FaultlineIOError(Error, OSError):
    """FL_ERR_IO: a source or file could not be read or written."""

    code = _ffi.FL_ERR_IO


class ParseError(Error, ValueError):
    """FL_ERR_PARSE: text (a time, a JSON document) could not be parsed."""

    code = _ffi.FL_ERR_PARSE


class RulesetError(Error):
    """FL_ERR_RULESET: a ruleset or rule source is invalid."""

    code = _ffi.FL_ERR_RULESET


class RulesetVersionError(RulesetError):
    """FL_ERR_RULESET_VERSION: a compiled ruleset from an incompatible version."""

    code = _ffi.FL_ERR_RULESET_VERSION


class BusyError(Error):
    """FL_ERR_BUSY: the handle is in use by another call."""

    code = _ffi.FL_ERR_BUSY


class BufferTooSmallError(Error):
    """FL_ERR_BUFFER_TOO_SMALL."""

    code = _ffi.FL_ERR_BUFFER_TOO_SMALL


class CancelledError(Error):
    """FL_ERR_CANCELLED: the scan was cancelled (cancel() or a progress callback)."""

    code = _ffi.FL_ERR_CANCELLED


class InternalError(Error):
    """FL_ERR_INTERNAL: a bug in the library."""

    code = _ffi.FL_ERR_INTERNAL


class NotFoundError(Error, LookupError):
    """FL_ERR_NOT_FOUND: no such rule (or other named thing)."""

    code = _ffi.FL_ERR_NOT_FOUND


class PathNotFoundError(NotFoundError, FileNotFoundError):
    """FL_ERR_NOT_FOUND for a path: a file or directory given to
    :meth:`Session.add_path` (or :func:`diagnose`) does not exist. A
    ``FileNotFoundError``, with ``filename`` set."""

    code = _ffi.FL_ERR_NOT_FOUND

    def __init__(self, message: str, code: Optional[int] = None, filename: Optional[str] = None) -> None:
        super().__init__(message, code)
        self.errno = errno.ENOENT
        self.strerror = message
        self.filename = filename


class InputWarning(UserWarning):
    """Some inputs could not be read: the report covers the others. Issued
    (``warnings.warn``) by :meth:`Session.finish` and :func:`diagnose`; the
    report's ``input.errors`` lists the sources."""


class EvidenceCappedWarning(UserWarning):
    """The evidence kept is a sample of the matches: the library keeps a
    sample of each rule's matches (the first and the last ones: the caps)
    and counts the rest. Issued by :meth:`Report.evidence_frame`; the frame's ``.attrs``
    say how many matches there were (``report.signal_hits`` counts them per
    signal)."""


_BY_CODE: Dict[int, Type[Error]] = {
    cls.code: cls
    for cls in (
        InvalidArgumentError,
        NoMemoryError,
        FaultlineIOError,
        ParseError,
        RulesetError,
        RulesetVersionError,
        BusyError,
        BufferTooSmallError,
        CancelledError,
        InternalError,
        NotFoundError,
    )
}


def error_class(code: int) -> Type[Error]:
    return _BY_CODE.get(code, Error)


def make_error(code: int, message: str = "") -> Error:
    cls = error_class(code)
    if not message:
        message = _ffi.lib.fl_status_str(code).decode()
    return cls(message, code)


def raise_status(code: int, message: str = "") -> NoReturn:
    raise make_error(code, message)


def check_err(rc: int, err: ctypes.c_void_p, what: str = "") -> None:
    """Raises for a failed constructor call, with its fl_error detail, and
    frees the fl_error in every case."""
    try:
        if rc >= 0:
            return
        message = ""
        code = rc
        if err.value:
            m = _ffi.lib.fl_error_message(err)
            message = m.decode("utf-8", "replace") if m else ""
            code = _ffi.lib.fl_error_code(err) or rc
        if not message:
            message = what
        raise_status(code, message)
    finally:
        if err.value:
            _ffi.lib.fl_error_free(err)
            err.value = None
