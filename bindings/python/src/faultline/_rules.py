"""Rulesets: loading, listing and compiling the catalog of failure signatures."""

from __future__ import annotations

import ctypes
import json
import os
import threading
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from . import _errors, _ffi

PathLike = Union[str, "os.PathLike[str]"]
#: What ``rules=`` accepts: None (the embedded default), a path to a compiled
#: ``.flrules`` file or a rule source directory, the bytes of a compiled
#: ruleset, or a :class:`Ruleset`.
RulesLike = Union[None, PathLike, bytes, bytearray, memoryview, "Ruleset"]


@dataclass
class RuleSummary:
    """One rule of a ruleset, as ``faultline rules list --json`` prints it."""

    id: str
    title: str
    reference: str
    category: str
    tags: List[str] = field(default_factory=list)
    layer: Optional[str] = None
    signals: Any = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "RuleSummary":
        return cls(
            id=d.get("id", ""),
            title=d.get("title", ""),
            reference=d.get("reference", ""),
            category=d.get("category", ""),
            tags=list(d.get("tags") or []),
            layer=d.get("layer"),
            signals=d.get("signals"),
            raw=d,
        )

    def _repr_html_(self) -> str:
        from ._display import rule_summary_html

        return rule_summary_html(self)


class RuleSummaries(List[RuleSummary]):
    """What :func:`rules` and :meth:`Ruleset.rules` return: a list of
    :class:`RuleSummary` that Jupyter shows as a table."""

    def __getitem__(self, i: Any) -> Any:
        got = super().__getitem__(i)
        return RuleSummaries(got) if isinstance(i, slice) else got

    def _repr_html_(self) -> str:
        from ._display import rules_html

        return rules_html(self)


class _RulesetHandle:
    """Owns one fl_ruleset*. Sessions hold a strong reference to it, so it is
    freed only after every session using it (header: the ruleset must outlive
    its sessions), however the Ruleset object itself is closed."""

    def __init__(self, ptr: int) -> None:
        self.ptr = ptr
        self._finalizer = weakref.finalize(self, _ffi.lib.fl_ruleset_free, ptr)


class Ruleset:
    """A loaded, immutable ruleset; share it between sessions and threads.

    ``Ruleset()`` loads the embedded default; ``Ruleset(path)`` a compiled
    ``.flrules`` file or a rule source directory (compiled on the fly);
    ``Ruleset(data)`` compiled bytes. ``close()`` releases it (the native
    ruleset goes once no open session uses it).
    """

    def __init__(self, source: Union[None, PathLike, bytes, bytearray, memoryview] = None) -> None:
        out, err = ctypes.c_void_p(), ctypes.c_void_p()
        if source is None:
            rc = _ffi.lib.fl_ruleset_load_default(ctypes.byref(out), ctypes.byref(err))
            what = "the default ruleset"
        elif isinstance(source, (bytes, bytearray, memoryview)):
            buf = bytes(source)
            rc = _ffi.lib.fl_ruleset_load_memory(ctypes.byref(out), buf, len(buf), ctypes.byref(err))
            what = "ruleset from memory"
        else:
            path = os.fspath(source)
            rc = _ffi.lib.fl_ruleset_load_file(ctypes.byref(out), os.fsencode(path), ctypes.byref(err))
            what = f"ruleset {path}"
        _errors.check_err(rc, err, f"cannot load {what}")
        self._h: Optional[_RulesetHandle] = _RulesetHandle(out.value)  # type: ignore[arg-type]

    @classmethod
    def default(cls) -> "Ruleset":
        return cls(None)

    @classmethod
    def from_file(cls, path: PathLike) -> "Ruleset":
        return cls(path)

    @classmethod
    def from_bytes(cls, data: Union[bytes, bytearray, memoryview]) -> "Ruleset":
        return cls(data)

    # -- lifetime --------------------------------------------------------------

    def close(self) -> None:
        """Releases the ruleset. Safe to call more than once."""
        self._h = None

    @property
    def closed(self) -> bool:
        return self._h is None

    def __enter__(self) -> "Ruleset":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _handle(self) -> _RulesetHandle:
        if self._h is None:
            raise _errors.InvalidArgumentError("the ruleset is closed", _ffi.FL_ERR_INVALID_ARG)
        return self._h

    # -- contents --------------------------------------------------------------

    @property
    def name(self) -> str:
        return (_ffi.lib.fl_ruleset_name(self._handle().ptr) or b"").decode()

    @property
    def version(self) -> str:
        return (_ffi.lib.fl_ruleset_version(self._handle().ptr) or b"").decode()

    @property
    def load_info(self) -> str:
        """How the pattern database was obtained: "built-in: ...",
        "authenticated: ..." (a file compiled and signed on this installation)
        or "untrusted: ... recompiled ..." with the reason."""
        return (_ffi.lib.fl_ruleset_load_info(self._handle().ptr) or b"").decode()

    def __len__(self) -> int:
        return int(_ffi.lib.fl_ruleset_rule_count(self._handle().ptr))

    def rules(self) -> RuleSummaries:
        """Every rule's summary (a list; a table in Jupyter)."""
        js, n = ctypes.c_void_p(), ctypes.c_size_t()
        rc = _ffi.lib.fl_ruleset_rules_json(self._handle().ptr, ctypes.byref(js), ctypes.byref(n))
        if rc != _ffi.FL_OK:
            _errors.raise_status(rc, "cannot list the rules")
        return RuleSummaries(RuleSummary.from_dict(d) for d in json.loads(_ffi.take_string(js, n) or "[]"))

    def rule(self, rule_id: str) -> Dict[str, Any]:
        """The full entry of one rule; NotFoundError if no rule has that id."""
        js, n = ctypes.c_void_p(), ctypes.c_size_t()
        rc = _ffi.lib.fl_ruleset_rule_json(self._handle().ptr, rule_id.encode(), ctypes.byref(js), ctypes.byref(n))
        if rc != _ffi.FL_OK:
            _errors.raise_status(rc, f"no rule {rule_id!r} in ruleset {self.name!r}")
        entry: Dict[str, Any] = json.loads(_ffi.take_string(js, n))
        return entry

    def rule_text(self, rule_id: str) -> str:
        """The full entry of one rule as text (root cause, fix, verify, ...)."""
        t, n = ctypes.c_void_p(), ctypes.c_size_t()
        rc = _ffi.lib.fl_ruleset_rule_text(self._handle().ptr, rule_id.encode(), ctypes.byref(t), ctypes.byref(n))
        if rc != _ffi.FL_OK:
            _errors.raise_status(rc, f"no rule {rule_id!r} in ruleset {self.name!r}")
        return _ffi.take_string(t, n)

    def signal_costs(self, paths: Union[PathLike, List[PathLike]], sample_mb: float = 32) -> Dict[str, Any]:
        """What each signal adds to a scan, on a sample of ``paths``: its
        pattern alone in Hyperscan (``alone_s_per_gb``), the sample lines it
        matches and phase B's confirm + extract time per line, costliest first
        (see ``fl_x_ruleset_signal_costs_json``). Takes seconds."""
        items = [paths] if isinstance(paths, (str, bytes, os.PathLike)) else list(paths)
        encoded = [os.fsencode(p) for p in items]
        arr = (ctypes.c_char_p * len(encoded))(*encoded)
        js, n, err = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_void_p()
        rc = _ffi.lib.fl_x_ruleset_signal_costs_json(
            self._handle().ptr, ctypes.cast(arr, ctypes.POINTER(ctypes.c_void_p)), len(encoded),
            int(sample_mb * (1 << 20)), ctypes.byref(js), ctypes.byref(n), ctypes.byref(err))
        _errors.check_err(rc, err, "cannot measure signal costs")
        costs: Dict[str, Any] = json.loads(_ffi.take_string(js, n))
        return costs

    def __repr__(self) -> str:
        if self._h is None:
            return "<faultline.Ruleset closed>"
        return f"<faultline.Ruleset {self.name!r} {self.version} rules={len(self)}>"


_default: Optional[Ruleset] = None
_default_lock = threading.Lock()


def default_ruleset() -> Ruleset:
    """The embedded default ruleset, loaded once per process and shared."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Ruleset(None)
        return _default


def resolve(rules: RulesLike) -> Ruleset:
    if rules is None:
        return default_ruleset()
    if isinstance(rules, Ruleset):
        return rules
    return Ruleset(rules)


def rules(rules: RulesLike = None) -> RuleSummaries:
    """The summaries of every rule in a ruleset (default: the embedded one)."""
    return resolve(rules).rules()


def rule(rule_id: str, rules: RulesLike = None) -> Dict[str, Any]:
    """The full entry of one rule as a dict; NotFoundError if unknown."""
    return resolve(rules).rule(rule_id)


def rule_text(rule_id: str, rules: RulesLike = None) -> str:
    """The full entry of one rule as text."""
    return resolve(rules).rule_text(rule_id)


def compile_rules(src_dir: PathLike, out_path: PathLike) -> Path:
    """Compiles a rule source directory into a ``.flrules`` file (atomically).
    Raises RulesetError naming the file, rule id and field on a bad rule."""
    err = ctypes.c_void_p()
    src, out = os.fspath(src_dir), os.fspath(out_path)
    rc = _ffi.lib.fl_ruleset_compile(os.fsencode(src), os.fsencode(out), ctypes.byref(err))
    _errors.check_err(rc, err, f"cannot compile {src}")
    return Path(out)
