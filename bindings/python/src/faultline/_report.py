"""The report: dataclasses mirroring schema/report.schema.json, and
:class:`Report`, which owns an ``fl_report`` handle."""

from __future__ import annotations

import copy
import ctypes
import json
import warnings
import weakref
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Tuple

from . import _errors, _ffi
from ._time import format_rfc3339, from_us, parse_rfc3339

if TYPE_CHECKING:  # pragma: no cover
    import pandas
    from matplotlib.axes import Axes

#: How many evidence views one fl_report_evidence() call copies.
EVIDENCE_BATCH = 4096


# ---- Dataclasses -------------------------------------------------------------


@dataclass
class Evidence:
    """One matched line (the schema's ``evidence`` object)."""

    source: str
    line: int
    offset: int
    time: Optional[datetime]
    rank: Optional[int]
    host: Optional[str]
    rule: str
    signal: str
    text: str
    time_source: str = "none"
    fields: Dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Evidence":
        return cls(
            source=d["source"],
            line=d["line"],
            offset=d["offset"],
            time=parse_rfc3339(d.get("time")),
            rank=d.get("rank"),
            host=d.get("host"),
            rule=d["rule"],
            signal=d["signal"],
            text=d["text"],
            time_source=d.get("time_source", "none"),
            fields=dict(d.get("fields") or {}),
        )

    def to_dict(self) -> Dict[str, Any]:
        return {
            "source": self.source,
            "line": self.line,
            "offset": self.offset,
            "time": format_rfc3339(self.time),
            "time_source": self.time_source,
            "rank": self.rank,
            "host": self.host,
            "rule": self.rule,
            "signal": self.signal,
            "text": self.text,
            "fields": dict(self.fields),
        }

    @property
    def location(self) -> str:
        """``source:line``."""
        return f"{self.source}:{self.line}"

    def _repr_html_(self) -> str:
        from ._display import evidence_html

        return evidence_html(self)


def _repr_time(t: Optional[datetime]) -> str:
    return "None" if t is None else format_rfc3339(t) or "None"


def _evs(items: Optional[List[Dict[str, Any]]]) -> List[Evidence]:
    return [Evidence.from_dict(e) for e in (items or [])]


@dataclass
class Initiating:
    """Where the initiating failure happened, and the lines that show it."""

    rank: Optional[int]
    host: Optional[str]
    time: Optional[datetime]
    evidence: List[Evidence] = field(default_factory=list)
    gpu: Optional[str] = None
    inferred: bool = False
    suspects: List[Any] = field(default_factory=list)
    #: The InfiniBand HCA (``mlx5_N``) the initiating line names; None when unknown.
    hca: Optional[str] = None

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Initiating":
        return cls(
            rank=d.get("rank"),
            host=d.get("host"),
            time=parse_rfc3339(d.get("time")),
            evidence=_evs(d.get("evidence")),
            gpu=d.get("gpu"),
            inferred=bool(d.get("inferred", False)),
            suspects=list(d.get("suspects") or []),
            hca=d.get("hca"),
        )

    def __repr__(self) -> str:
        # Compact: an initiating failure can carry many lines.
        return (
            f"Initiating(rank={self.rank!r}, host={self.host!r}, gpu={self.gpu!r}, "
            f"time={_repr_time(self.time)}, inferred={self.inferred}, evidence=<{len(self.evidence)} line(s)>)"
        )


@dataclass
class Collateral:
    """A cluster of symptoms the initiating failure explains."""

    rule: str
    count: int
    ranks: List[int]
    first_time: Optional[datetime]
    sample: Evidence
    reference: Optional[str] = None
    hosts: List[str] = field(default_factory=list)
    last_time: Optional[datetime] = None

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Collateral":
        return cls(
            rule=d["rule"],
            count=d["count"],
            ranks=list(d.get("ranks") or []),
            first_time=parse_rfc3339(d.get("first_time")),
            sample=Evidence.from_dict(d["sample"]),
            reference=d.get("reference"),
            hosts=list(d.get("hosts") or []),
            last_time=parse_rfc3339(d.get("last_time")),
        )

    def summary(self) -> str:
        """"15 x nccl-watchdog-timeout on ranks 0-1, 3-15 (2 hosts)"."""
        s = f"{self.count} x {self.rule}"
        if self.ranks:
            s += f" on ranks {format_ranks(self.ranks)}"
        if self.hosts:
            s += f" ({len(self.hosts)} host{'s' if len(self.hosts) != 1 else ''})"
        return s


@dataclass
class FlightRecorderFinding:
    """What the NCCL Flight Recorder dumps say about one rank (schema
    ``fr_finding``): ``kind`` is ``missing-rank`` (never entered the group's
    wavefront collective ``seq``), ``no-dump``, ``mismatch`` or ``stalled``."""

    kind: str
    rank: int
    group: str
    seq: int
    op: str
    detail: str
    source: Optional[str] = None  #: the rank's dump file (None for no-dump)
    group_desc: str = ""

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "FlightRecorderFinding":
        return cls(d["kind"], d["rank"], d["group"], d["seq"], d["op"], d["detail"],
                   d.get("source"), d.get("group_desc", ""))


@dataclass
class FlightRecorderDump:
    """One dump read: its rank (from its content), format and version."""

    source: str
    rank: Optional[int]
    rank_source: str
    format: str  #: "pickle" | "json"
    version: str
    entries: int = 0
    comm_lib_version: Optional[str] = None
    wrapped: bool = False

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "FlightRecorderDump":
        return cls(d["source"], d.get("rank"), d.get("rank_source", "unknown"), d["format"],
                   d["version"], d.get("entries", 0), d.get("comm_lib_version"),
                   bool(d.get("wrapped", False)))


@dataclass
class FlightRecorderGroup:
    """One process group across the dumps. ``wavefront`` is the lowest
    collective sequence id some ranks never entered (None when all reached
    the same one), ``missing`` the ranks that did not; ``mismatches`` as the
    schema writes them (``seq``, ``field``, ``expected``, ``ranks``)."""

    name: str
    desc: str
    size: int
    dumped: int
    no_dump: List[int]
    lowest_last_seq: int
    highest_last_seq: int
    wavefront: Optional[int] = None
    wavefront_op: Optional[str] = None
    missing: List[int] = field(default_factory=list)
    mismatches: List[Dict[str, Any]] = field(default_factory=list)
    stalled: Optional[Dict[str, Any]] = None

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "FlightRecorderGroup":
        w = d.get("wavefront") or {}
        return cls(d["name"], d.get("desc", ""), d.get("size", 0), d.get("dumped", 0),
                   list(d.get("no_dump") or []), d.get("lowest_last_seq", 0),
                   d.get("highest_last_seq", 0), w.get("seq"), w.get("op"),
                   list(w.get("missing") or []), list(d.get("mismatches") or []), d.get("stalled"))


@dataclass
class FlightRecorder:
    """The report's ``flight_recorder`` section: the dumps read, the groups,
    and the ranks the dumps suspect (missing at a wavefront first)."""

    dumps: List[FlightRecorderDump]
    groups: List[FlightRecorderGroup]
    suspects: List[int]
    notes: List[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "FlightRecorder":
        return cls([FlightRecorderDump.from_dict(x) for x in d.get("dumps") or []],
                   [FlightRecorderGroup.from_dict(g) for g in d.get("groups") or []],
                   list(d.get("suspects") or []), list(d.get("notes") or []))


@dataclass
class Action:
    """What a platform should do about an incident: ``kind`` is
    ``"restart"``, ``"restart_excluding"`` (without ``exclude_hosts`` and
    ``exclude_gpus``), ``"stop"`` or ``"unknown"`` (see ``missing_fact``);
    ``reason`` says why with the facts, ``set_by`` who made the call (the
    rule id, ``"survived"``, ``"recurrence"`` or ``"retry-policy"``)."""

    kind: str
    exclude_hosts: List[str] = field(default_factory=list)
    exclude_gpus: List[str] = field(default_factory=list)
    reason: str = ""
    set_by: str = ""
    missing_fact: Optional[str] = None

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Action":
        return cls(
            kind=d.get("kind", "unknown"),
            exclude_hosts=list(d.get("exclude_hosts") or []),
            exclude_gpus=list(d.get("exclude_gpus") or []),
            reason=d.get("reason", ""),
            set_by=d.get("set_by", ""),
            missing_fact=d.get("missing_fact"),
        )


@dataclass
class Recurrence:
    """How an incident repeats earlier attempts of its job (schema 1.3):
    the earlier ``attempts`` (indices into ``Report.attempts``) that failed
    with the same rule, of those how many on its host and at its step, and
    whether it fails on the checkpoint the previous attempt saved."""

    attempts: List[int] = field(default_factory=list)
    same_host: int = 0
    same_step: int = 0
    resume_failed_on_previous_checkpoint: bool = False

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Recurrence":
        return cls(
            attempts=list(d.get("attempts") or []),
            same_host=int(d.get("same_host", 0)),
            same_step=int(d.get("same_step", 0)),
            resume_failed_on_previous_checkpoint=bool(d.get("resume_failed_on_previous_checkpoint", False)),
        )

    @property
    def recurred(self) -> bool:
        return bool(self.attempts) or self.resume_failed_on_previous_checkpoint


@dataclass
class AttemptPrimary:
    """An attempt's primary incident, in brief."""

    rule: str
    host: Optional[str] = None
    rank: Optional[int] = None
    step: Optional[int] = None


@dataclass
class Attempt:
    """One run of the job (the report's ``attempts[i]``, oldest first)."""

    index: int
    label: str
    recognised: str
    start: Optional[datetime]
    end: Optional[datetime]
    primary: Optional[AttemptPrimary]

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Attempt":
        p = d.get("primary")
        return cls(
            index=d["index"],
            label=d["label"],
            recognised=d["recognised"],
            start=parse_rfc3339(d.get("start")),
            end=parse_rfc3339(d.get("end")),
            primary=AttemptPrimary(p["rule"], p.get("host"), p.get("rank"), p.get("step")) if p else None,
        )


@dataclass
class Incident:
    """One diagnosis. ``Report.incidents[0]`` is the primary one."""

    rule: str
    reference: str
    title: str
    category: str
    confidence: float
    initiating: Initiating
    collateral: List[Collateral]
    fix: str
    verify: str
    missing_facts: List[str]
    explanation: str
    layer: Optional[str] = None
    timeline: List[Evidence] = field(default_factory=list)
    #: The Flight Recorder findings the incident rests on or that agree with it.
    flight_recorder: List[FlightRecorderFinding] = field(default_factory=list)
    #: stable across re-diagnoses of the same growing logs ("inc-" + 12 hex)
    id: Optional[str] = None
    action: Optional[Action] = None
    #: The training step the failing rank had reached, when a line says.
    step: Optional[int] = None
    #: Index into ``Report.attempts``; 0 when the job ran once.
    attempt: int = 0
    recurrence: Recurrence = field(default_factory=Recurrence)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Incident":
        return cls(
            rule=d["rule"],
            reference=d["reference"],
            title=d["title"],
            category=d["category"],
            confidence=float(d["confidence"]),
            initiating=Initiating.from_dict(d.get("initiating") or {}),
            collateral=[Collateral.from_dict(c) for c in d.get("collateral") or []],
            fix=d.get("fix", ""),
            verify=d.get("verify", ""),
            missing_facts=list(d.get("missing_facts") or []),
            explanation=d.get("explanation", ""),
            layer=d.get("layer"),
            timeline=_evs(d.get("timeline")),
            flight_recorder=[FlightRecorderFinding.from_dict(f) for f in d.get("flight_recorder") or []],
            id=d.get("id"),
            action=Action.from_dict(d["action"]) if d.get("action") else None,
            step=d.get("step"),
            attempt=int(d.get("attempt", 0)),
            recurrence=Recurrence.from_dict(d.get("recurrence") or {}),
        )

    # Shortcuts to the initiating side.
    @property
    def rank(self) -> Optional[int]:
        return self.initiating.rank

    @property
    def host(self) -> Optional[str]:
        return self.initiating.host

    @property
    def gpu(self) -> Optional[str]:
        return self.initiating.gpu

    @property
    def time(self) -> Optional[datetime]:
        return self.initiating.time

    @property
    def inferred(self) -> bool:
        return self.initiating.inferred

    @property
    def collateral_count(self) -> int:
        return sum(c.count for c in self.collateral)

    def __repr__(self) -> str:
        # One line, whatever the evidence, collateral and timeline hold (the
        # dataclass repr printed all of it); _repr_html_ shows the rest.
        return (
            f"<faultline.Incident {self.rule!r} rank={self.rank!r} host={self.host!r} "
            f"time={_repr_time(self.time)} confidence={self.confidence:.2f} "
            f"evidence={len(self.initiating.evidence)} collateral={self.collateral_count} "
            f"({len(self.collateral)} cluster(s)) timeline={len(self.timeline)}>"
        )

    def _repr_html_(self) -> str:
        from ._display import incident_html

        return incident_html(self)


@dataclass
class Ignored:
    """Evidence that matched but was not used, with why."""

    rule: str
    reason: str
    count: int
    sample: Evidence

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Ignored":
        return cls(d["rule"], d["reason"], d["count"], Evidence.from_dict(d["sample"]))


@dataclass
class JobWindow:
    start: Optional[datetime]
    end: Optional[datetime]

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "JobWindow":
        return cls(parse_rfc3339(d.get("start")), parse_rfc3339(d.get("end")))


@dataclass
class InputError:
    """A source that could not be read."""

    source: str
    message: str
    status: Optional[str] = None


@dataclass
class CapCount:
    """Distinct ranks or hosts: ``seen`` (an estimate when ``truncated``) and
    ``kept``, those with per-rank (per-host) breakdowns."""

    seen: int = 0
    kept: int = 0
    truncated: bool = False
    limit: Optional[int] = None

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "CapCount":
        return cls(d.get("seen", 0), d.get("kept", 0), bool(d.get("truncated", False)), d.get("limit"))


@dataclass
class Caps:
    """What the report's counts cover (``input.caps``): evidence kept of the
    matches (exact), ranks and hosts seen against kept, and whether topology
    records or metric series were capped. ``truncated``: anything was."""

    truncated: bool = False
    evidence_kept: int = 0
    matches: int = 0
    evidence_truncated: bool = False
    ranks: CapCount = field(default_factory=CapCount)
    hosts: CapCount = field(default_factory=CapCount)
    topology_truncated: bool = False
    metric_series_truncated: bool = False
    #: metric lines (loss, grad norm) kept as points of their series, not as
    #: evidence records (a record is made for a point a detector reports)
    metric_points: int = 0

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Caps":
        ev = d.get("evidence") or {}
        return cls(
            truncated=bool(d.get("truncated", False)),
            evidence_kept=ev.get("kept", 0),
            matches=ev.get("matches", 0),
            evidence_truncated=bool(ev.get("truncated", False)),
            ranks=CapCount.from_dict(d.get("ranks") or {}),
            hosts=CapCount.from_dict(d.get("hosts") or {}),
            topology_truncated=bool(d.get("topology_truncated", False)),
            metric_series_truncated=bool(d.get("metric_series_truncated", False)),
            metric_points=ev.get("metric_points", 0),
        )


def _capped_bits(c: "Caps") -> int:
    """fl_report_totals.capped (FL_CAPPED_*) from a report's input.caps."""
    return (
        (1 if c.evidence_truncated else 0)
        | (2 if c.ranks.truncated else 0)
        | (4 if c.hosts.truncated else 0)
        | (8 if c.topology_truncated else 0)
        | (16 if c.metric_series_truncated else 0)
    )


@dataclass
class InputSummary:
    sources: int
    bytes: int
    lines: int
    seconds: float
    ranks: Optional[int] = None
    hosts: Optional[int] = None
    matches: Optional[int] = None
    evidence: Optional[int] = None
    errors: List[InputError] = field(default_factory=list)
    #: Files passed over on purpose (devices, FIFOs, sockets found in a
    #: directory; symlink loops): not errors, status ``None``.
    warnings: List[InputError] = field(default_factory=list)
    caps: Caps = field(default_factory=Caps)
    #: How the job ended as the caller stated it (``job_state``,
    #: ``job_exit_status``): ``{"state": ..., "exit_status": ...}``, None
    #: when nothing was stated.
    job: Optional[Dict[str, Any]] = None

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "InputSummary":
        return cls(
            sources=d.get("sources", 0),
            bytes=d.get("bytes", 0),
            lines=d.get("lines", 0),
            seconds=float(d.get("seconds", 0.0)),
            ranks=d.get("ranks"),
            hosts=d.get("hosts"),
            matches=d.get("matches"),
            evidence=d.get("evidence"),
            errors=[
                InputError(e.get("source", ""), e.get("message", ""), e.get("status"))
                for e in d.get("errors") or []
            ],
            warnings=[InputError(w.get("source", ""), w.get("message", "")) for w in d.get("warnings") or []],
            caps=Caps.from_dict(d.get("caps") or {}),
            job=dict(d["job"]) if d.get("job") else None,
        )


@dataclass
class RulesetInfo:
    name: str
    version: str
    rules: int


@dataclass
class Totals:
    """fl_report_totals."""

    sources: int
    bytes: int
    lines: int
    seconds: float
    evidence: int
    matches: int
    incidents: int
    errors: int
    ranks_seen: int = 0
    ranks_kept: int = 0
    hosts_seen: int = 0
    hosts_kept: int = 0
    capped: int = 0  #: FL_CAPPED_* bits


def format_ranks(ranks: List[int]) -> str:
    """[0, 1, 3, 4, 5, 9] -> "0-1, 3-5, 9"."""
    rs = sorted(set(ranks))
    out: List[str] = []
    i = 0
    while i < len(rs):
        j = i
        while j + 1 < len(rs) and rs[j + 1] == rs[j] + 1:
            j += 1
        out.append(str(rs[i]) if i == j else f"{rs[i]}-{rs[j]}")
        i = j + 1
    return ", ".join(out)


# ---- Views -> Python ----------------------------------------------------------


def evidence_from_view(v: _ffi.EvidenceView, strs: Optional[Dict[int, str]] = None) -> Evidence:
    """Copies one borrowed view. ``strs`` caches the low-cardinality strings by
    address; only pass it when every view comes from one living report."""

    def s(addr: Optional[int]) -> Optional[str]:
        if not addr:
            return None
        if strs is None:
            return ctypes.string_at(addr).decode("utf-8", "replace")
        r = strs.get(addr)
        if r is None:
            r = strs[addr] = ctypes.string_at(addr).decode("utf-8", "replace")
        return r

    fj = v.fields_json
    return Evidence(
        source=s(v.source) or "",
        line=v.line,
        offset=v.offset,
        time=from_us(v.time_us),
        rank=None if v.rank < 0 else v.rank,
        host=s(v.host),
        rule=s(v.rule) or "",
        signal=s(v.signal) or "",
        text=(v.text or b"").decode("utf-8", "replace"),
        time_source=s(v.time_source) or "none",
        fields={} if not fj or fj == b"{}" else json.loads(fj),
    )


class _ReportHandle:
    """Owns one fl_report*; freed by close() or, failing that, by the GC."""

    def __init__(self, ptr: int) -> None:
        self.ptr: Optional[int] = ptr
        self._finalizer = weakref.finalize(self, _ffi.lib.fl_report_free, ptr)

    def get(self) -> int:
        if self.ptr is None:
            raise _errors.InvalidArgumentError("the report is closed", _ffi.FL_ERR_INVALID_ARG)
        return self.ptr

    def close(self) -> None:
        self.ptr = None
        self._finalizer()


# ---- Report -------------------------------------------------------------------


class Report:
    """A diagnosis: what :func:`faultline.diagnose` and :meth:`Session.finish`
    return.

    The schema's parts are dataclasses (``incidents``, ``ignored``,
    ``job_window``, ``input``); every evidence record kept is in
    ``evidence``, pulled from the library in batches the first time it is
    read. ``close()`` (or ``with``) frees the native report early; what was
    already read stays usable.

    Properties are what the report holds (read once, then kept); methods
    make something: renderings are ``to_*()`` (``to_text``, ``to_json``,
    ``to_dict``, ``to_arrow``), then frames, charts and iterators. The
    README's "Conventions" table maps each name to the Go binding's.
    """

    def __init__(
        self,
        data: Dict[str, Any],
        *,
        _handle: Optional[_ReportHandle] = None,
        evidence: Optional[List[Evidence]] = None,
    ) -> None:
        self._data = data
        self._handle = _handle
        self._evidence: Optional[List[Evidence]] = evidence
        self._text: Optional[str] = None
        self._totals: Optional[Totals] = None
        self._signal_hits: Optional[Dict[str, int]] = None
        self.faultline_version: str = data.get("faultline_version", "")
        rs = data.get("ruleset") or {}
        self.ruleset = RulesetInfo(rs.get("name", ""), rs.get("version", ""), rs.get("rules", 0))
        self.input = InputSummary.from_dict(data.get("input") or {})
        self.job_window = JobWindow.from_dict(data.get("job_window") or {})
        self.incidents: List[Incident] = [Incident.from_dict(i) for i in data.get("incidents") or []]
        self.ignored: List[Ignored] = [Ignored.from_dict(i) for i in data.get("ignored") or []]
        #: The job's attempts, oldest first; empty when it ran once.
        self.attempts: List[Attempt] = [Attempt.from_dict(a) for a in data.get("attempts") or []]
        #: host -> {"seconds": ..., "source": "user" | "derived"...} as the report has it.
        self.clock_offsets: Dict[str, Any] = dict(data.get("clock_offsets") or {})
        fr = data.get("flight_recorder")
        #: What the NCCL Flight Recorder dumps among the inputs say; None without dumps.
        self.flight_recorder: Optional[FlightRecorder] = None if fr is None else FlightRecorder.from_dict(fr)

    # -- construction ----------------------------------------------------------

    @classmethod
    def _from_handle(cls, ptr: int) -> "Report":
        h = _ReportHandle(ptr)
        js, n = ctypes.c_void_p(), ctypes.c_size_t()
        rc = _ffi.lib.fl_report_json(ptr, ctypes.byref(js), ctypes.byref(n))
        if rc != _ffi.FL_OK:
            h.close()
            _errors.raise_status(rc, "fl_report_json failed")
        data = json.loads(_ffi.borrowed_string(js, n))
        return cls(data, _handle=h)

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Report":
        """A report from its JSON form (``to_dict()``, or ``faultline diagnose
        --json``). An ``evidence`` array, as ``to_dict(evidence=True)`` writes,
        becomes ``.evidence``."""
        data = copy.deepcopy(data)
        ev = data.pop("evidence", None)
        return cls(data, evidence=None if ev is None else _evs(ev))

    @classmethod
    def from_json(cls, text: str) -> "Report":
        return cls.from_dict(json.loads(text))

    # -- lifetime --------------------------------------------------------------

    def close(self) -> None:
        """Frees the native report. Safe to call more than once."""
        if self._handle is not None:
            self._handle.close()

    def __enter__(self) -> "Report":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        return self._handle is None or self._handle.ptr is None

    def _ptr(self) -> int:
        if self._handle is None:
            raise _errors.InvalidArgumentError(
                "this report was loaded from JSON; it has no native report", _ffi.FL_ERR_INVALID_ARG
            )
        return self._handle.get()

    # -- contents --------------------------------------------------------------

    @property
    def primary(self) -> Optional[Incident]:
        """The primary diagnosis (``incidents[0]``), or None."""
        return self.incidents[0] if self.incidents else None

    def to_text(self) -> str:
        """The human-readable report, as ``faultline diagnose`` prints it
        (Go: ``Report.Text()``)."""
        if self._text is None:
            t, n = ctypes.c_void_p(), ctypes.c_size_t()
            rc = _ffi.lib.fl_report_text(self._ptr(), ctypes.byref(t), ctypes.byref(n))
            if rc != _ffi.FL_OK:
                _errors.raise_status(rc)
            self._text = _ffi.borrowed_string(t, n)
        return self._text

    @property
    def text(self) -> str:
        """Deprecated: use :meth:`to_text` (renderings are ``to_*()``
        methods, like :meth:`to_json`)."""
        warnings.warn(
            "Report.text is deprecated: use Report.to_text() (renderings are to_*() methods)",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.to_text()

    @property
    def evidence_count(self) -> int:
        """Number of evidence records kept (``fl_report_evidence_count``)."""
        if self._evidence is not None:
            return len(self._evidence)
        return int(_ffi.lib.fl_report_evidence_count(self._ptr()))

    def _view_batches(self, batch: int = EVIDENCE_BATCH) -> Iterator[Tuple[Any, int]]:
        """Yields (array of views, n) from fl_report_evidence, ``batch`` views
        per call. The views are valid while the report is open."""
        ptr = self._ptr()
        arr = (_ffi.EvidenceView * batch)()
        n = ctypes.c_size_t()
        first = 0
        while True:
            rc = _ffi.lib.fl_report_evidence(ptr, first, arr, batch, ctypes.byref(n))
            if rc == _ffi.FL_DONE or (rc == _ffi.FL_OK and n.value == 0):
                return
            if rc < 0:
                _errors.raise_status(rc, "fl_report_evidence failed")
            yield arr, n.value
            first += n.value

    def iter_evidence(self, batch: int = EVIDENCE_BATCH) -> Iterator[Evidence]:
        """Every evidence record kept, in source then offset order, converted
        as it goes (``batch`` records per library call)."""
        if self._evidence is not None:
            yield from self._evidence
            return
        strs: Dict[int, str] = {}
        for arr, n in self._view_batches(batch):
            for i in range(n):
                yield evidence_from_view(arr[i], strs)

    @property
    def evidence(self) -> List[Evidence]:
        """Every evidence record kept (cached after the first read)."""
        if self._evidence is None:
            self._evidence = list(self.iter_evidence())
        return self._evidence

    def evidence_jsonl(self) -> str:
        """The evidence as JSON lines, as ``faultline scan --json`` prints it."""
        if self._handle is None:
            return "".join(json.dumps(e.to_dict()) + "\n" for e in self.evidence)
        t, n = ctypes.c_void_p(), ctypes.c_size_t()
        rc = _ffi.lib.fl_report_evidence_jsonl(self._ptr(), ctypes.byref(t), ctypes.byref(n))
        if rc != _ffi.FL_OK:
            _errors.raise_status(rc)
        return _ffi.borrowed_string(t, n)

    @property
    def signal_hits(self) -> Dict[str, int]:
        """Matches per signal, ``{"rule/signal": count}`` (Go:
        ``Report.SignalHits()``); read once, then kept (a copy each time)."""
        if self._signal_hits is None:
            t, n = ctypes.c_void_p(), ctypes.c_size_t()
            rc = _ffi.lib.fl_report_signal_hits_json(self._ptr(), ctypes.byref(t), ctypes.byref(n))
            if rc != _ffi.FL_OK:
                _errors.raise_status(rc)
            self._signal_hits = json.loads(_ffi.borrowed_string(t, n) or "{}")
        return dict(self._signal_hits)

    @property
    def totals(self) -> Totals:
        """Input totals (``fl_report_totals_get``; for a report loaded from
        JSON, from its ``input`` and ``incidents``); read once, then kept."""
        if self._totals is None:
            if self._handle is None:
                inp = self.input
                ev = self._evidence
                self._totals = Totals(
                    inp.sources, inp.bytes, inp.lines, inp.seconds,
                    inp.evidence if inp.evidence is not None else (len(ev) if ev is not None else 0),
                    inp.matches or 0, len(self.incidents), len(inp.errors),
                    inp.caps.ranks.seen, inp.caps.ranks.kept, inp.caps.hosts.seen, inp.caps.hosts.kept,
                    _capped_bits(inp.caps),
                )
            else:
                t = _ffi.ReportTotals()
                t.size = ctypes.sizeof(t)
                rc = _ffi.lib.fl_report_totals_get(self._ptr(), ctypes.byref(t))
                if rc != _ffi.FL_OK:
                    _errors.raise_status(rc)
                self._totals = Totals(
                    t.sources, t.bytes, t.lines, t.seconds, t.evidence, t.matches, t.incidents, t.errors,
                    t.ranks_seen, t.ranks_kept, t.hosts_seen, t.hosts_kept, t.capped,
                )
        return copy.copy(self._totals)

    # -- export ----------------------------------------------------------------

    def to_dict(self, evidence: bool = False) -> Dict[str, Any]:
        """The report as the JSON object of schema/report.schema.json (a
        copy). ``evidence=True`` adds an ``evidence`` array of every record."""
        d = copy.deepcopy(self._data)
        if evidence:
            d["evidence"] = [e.to_dict() for e in self.evidence]
        return d

    def to_json(self, indent: Optional[int] = None, evidence: bool = False) -> str:
        """The report as JSON; without arguments, the library's own text."""
        if indent is None and not evidence and not self.closed:
            js, n = ctypes.c_void_p(), ctypes.c_size_t()
            if _ffi.lib.fl_report_json(self._ptr(), ctypes.byref(js), ctypes.byref(n)) == _ffi.FL_OK:
                return _ffi.borrowed_string(js, n)
        return json.dumps(self.to_dict(evidence=evidence), indent=indent)

    def to_html(self) -> str:
        """The report as one self-contained HTML page: the same bytes as
        ``faultline diagnose --html FILE`` on the same input (primary
        incident, evidence, fix, verify, collateral, ignored lines, missing
        facts, a timeline of ranks by time; inline CSS and SVG, nothing
        fetched). Needs the native report: a report loaded from JSON has none
        (InvalidArgumentError)."""
        t, n = ctypes.c_void_p(), ctypes.c_size_t()
        rc = _ffi.lib.fl_report_html(self._ptr(), ctypes.byref(t), ctypes.byref(n))
        if rc != _ffi.FL_OK:
            _errors.raise_status(rc, "fl_report_html failed")
        return _ffi.borrowed_string(t, n)

    def evidence_frame(self, warn: bool = True) -> "pandas.DataFrame":
        """Every evidence record kept as a pandas DataFrame (needs
        ``faultline-diag[pandas]``). Columns: source, line, offset, time
        (UTC), time_source, rank (nullable Int64), host, rule, signal, text,
        fields, role ("initiating" / "collateral" / "other" w.r.t. the
        primary).

        The library keeps a sample of each rule's matches (the first and the
        last ones) and counts the rest, so the rows can be fewer than the
        matches:
        ``df.attrs`` holds ``evidence`` (rows), ``matches`` (every match) and
        ``capped`` (rows < matches), and a capped frame issues an
        :class:`EvidenceCappedWarning` (``warn=False`` to skip it)."""
        from ._frames import evidence_frame

        return evidence_frame(self, warn=warn)

    def to_arrow(self) -> Any:
        """The evidence as a ``pyarrow.Table`` with the columns of
        :meth:`evidence_frame` (needs pyarrow: ``faultline-diag[arrow]``);
        the schema metadata carries ``faultline.evidence``,
        ``faultline.matches`` and ``faultline.capped``."""
        from ._frames import to_arrow

        return to_arrow(self)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The Arrow PyCapsule stream interface over :meth:`to_arrow`:
        ``pyarrow.table(report)``, ``polars.DataFrame(report)`` and other
        Arrow consumers read the evidence directly (needs pyarrow)."""
        return self.to_arrow().__arrow_c_stream__(requested_schema)

    def incidents_frame(self) -> "pandas.DataFrame":
        """One row per incident (needs ``faultline[pandas]``); row 0 is the primary."""
        from ._frames import incidents_frame

        return incidents_frame(self)

    def plot_timeline(self, ax: Optional["Axes"] = None, **kwargs: Any) -> "Axes":
        """A rank x time chart of the evidence with the initiating event
        marked (a star) and annotated, and the collateral wave coloured
        (needs matplotlib). Returns the Axes.

        ``style="auto"`` (default) picks by job size: a tick per rank up to
        32 ranks, ticks naming hosts up to 256, and beyond that a heat
        strip (evidence density per rank and time) under the initiating and
        collateral markers; "ranks", "hosts" and "heat" force one. The
        legend is outside the axes, right of them."""
        from ._display import plot_timeline

        return plot_timeline(self, ax=ax, **kwargs)

    def _repr_html_(self) -> str:
        from ._display import report_html

        return report_html(self)

    def __repr__(self) -> str:
        p = self.primary
        parts = [f"incidents={len(self.incidents)}"]
        if p is not None:
            parts.insert(0, f"primary={p.rule!r}")
            if p.rank is not None:
                parts.insert(1, f"rank={p.rank}")
            if p.host is not None:
                parts.insert(2 if p.rank is not None else 1, f"host={p.host!r}")
        parts.append(f"sources={self.input.sources}")
        if self.input.errors:
            parts.append(f"input_errors={len(self.input.errors)}")
        return f"<faultline.Report {' '.join(parts)}>"

    def __str__(self) -> str:
        if not self.closed or self._text is not None:
            return self.to_text()
        return repr(self)
