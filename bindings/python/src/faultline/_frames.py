"""pandas DataFrames of a report. pandas is imported here, lazily."""

from __future__ import annotations

import ctypes
import json
import warnings
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Set, Tuple

from . import _errors, _ffi
from ._time import to_us

if TYPE_CHECKING:  # pragma: no cover
    import pandas

    from ._report import Report

EVIDENCE_COLUMNS = [
    "source",
    "line",
    "offset",
    "time",
    "time_source",
    "rank",
    "host",
    "rule",
    "signal",
    "text",
    "fields",
    "role",
]

INCIDENT_COLUMNS = [
    "primary",
    "rule",
    "title",
    "reference",
    "category",
    "layer",
    "confidence",
    "rank",
    "host",
    "gpu",
    "time",
    "inferred",
    "initiating_evidence",
    "collateral_lines",
    "collateral_rules",
    "collateral_ranks",
    "fix",
    "verify",
    "missing_facts",
    "explanation",
]


def _pandas() -> Any:
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("faultline: DataFrames need pandas: pip install 'faultline[pandas]'") from e
    return pandas


def role_keys(report: "Report") -> Tuple[Set[Tuple[str, int]], Set[str]]:
    """(source, offset) of the primary's initiating lines, and its collateral rules."""
    p = report.primary
    if p is None:
        return set(), set()
    return {(e.source, e.offset) for e in p.initiating.evidence}, {c.rule for c in p.collateral}


def _role(key: Tuple[str, int], rule: str, init: Set[Tuple[str, int]], coll: Set[str]) -> str:
    if key in init:
        return "initiating"
    if rule in coll:
        return "collateral"
    return "other"


def evidence_columns(report: "Report") -> Dict[str, List[Any]]:
    """Column lists built straight from the batched views (no dataclasses)."""
    init, coll = role_keys(report)
    cols: Dict[str, List[Any]] = {c: [] for c in EVIDENCE_COLUMNS}
    times: List[int] = cols["time"]
    if report._evidence is not None or report.closed:
        for e in report.evidence:
            cols["source"].append(e.source)
            cols["line"].append(e.line)
            cols["offset"].append(e.offset)
            times.append(to_us(e.time))
            cols["time_source"].append(e.time_source)
            cols["rank"].append(e.rank)
            cols["host"].append(e.host)
            cols["rule"].append(e.rule)
            cols["signal"].append(e.signal)
            cols["text"].append(e.text)
            cols["fields"].append(e.fields)
            cols["role"].append(_role((e.source, e.offset), e.rule, init, coll))
        return cols
    strs: Dict[int, str] = {}

    def s(addr: Optional[int]) -> Optional[str]:
        if not addr:
            return None
        r = strs.get(addr)
        if r is None:
            r = strs[addr] = ctypes.string_at(addr).decode("utf-8", "replace")
        return r

    for arr, n in report._view_batches():
        for i in range(n):
            v = arr[i]
            src = s(v.source) or ""
            rule = s(v.rule) or ""
            cols["source"].append(src)
            cols["line"].append(v.line)
            cols["offset"].append(v.offset)
            times.append(v.time_us)
            cols["time_source"].append(s(v.time_source) or "none")
            cols["rank"].append(None if v.rank < 0 else v.rank)
            cols["host"].append(s(v.host))
            cols["rule"].append(rule)
            cols["signal"].append(s(v.signal) or "")
            cols["text"].append((v.text or b"").decode("utf-8", "replace"))
            fj = v.fields_json
            cols["fields"].append({} if not fj or fj == b"{}" else json.loads(fj))
            cols["role"].append(_role((src, v.offset), rule, init, coll))
    return cols


def evidence_frame(report: "Report", warn: bool = True) -> "pandas.DataFrame":
    pd = _pandas()
    import numpy as np

    cols = evidence_columns(report)
    us = np.asarray(cols["time"], dtype="int64")
    unset = us == _ffi.FL_TIME_UNSET
    t = pd.to_datetime(np.where(unset, 0, us), unit="us", utc=True)
    if unset.any():
        t = t.where(~unset)
    data: Dict[str, Any] = dict(cols)
    data["time"] = t
    data["line"] = np.asarray(cols["line"], dtype="int64")
    data["offset"] = np.asarray(cols["offset"], dtype="int64")
    data["rank"] = pd.array(cols["rank"], dtype="Int64")
    for c in ("source", "time_source", "rule", "signal", "role"):
        data[c] = pd.Categorical(cols[c])
    df: "pandas.DataFrame" = pd.DataFrame(data, columns=EVIDENCE_COLUMNS)
    df.attrs.update(capped_info(report, len(df)))
    if warn and df.attrs["capped"]:
        warnings.warn(
            _errors.EvidenceCappedWarning(
                f"evidence_frame: {len(df):,} rows of {df.attrs['matches']:,} matches: the library keeps a "
                "sample of each rule's matches (the first and the last ones) and counts the rest (df.attrs['matches']; "
                "report.signal_hits per signal)"
            ),
            stacklevel=3,
        )
    return df


def capped_info(report: "Report", rows: int) -> Dict[str, Any]:
    """{"evidence": rows, "matches": all matches or None, "capped": bool}."""
    matches = report.input.matches
    if matches is None and not report.closed and report._handle is not None:
        matches = report.totals.matches
    return {"evidence": rows, "matches": matches, "capped": matches is not None and matches > rows}


def to_arrow(report: "Report") -> Any:
    """The evidence as a pyarrow Table (the evidence_frame columns)."""
    try:
        import pyarrow as pa
    except ImportError as e:
        raise ImportError("faultline: to_arrow needs pyarrow: pip install 'faultline-diag[arrow]'") from e
    cols = evidence_columns(report)
    us = [None if t == _ffi.FL_TIME_UNSET else t for t in cols["time"]]
    dict_str = pa.dictionary(pa.int32(), pa.string())
    fields = [
        ("source", dict_str, cols["source"]),
        ("line", pa.int64(), cols["line"]),
        ("offset", pa.int64(), cols["offset"]),
        ("time", pa.timestamp("us", tz="UTC"), us),
        ("time_source", dict_str, cols["time_source"]),
        ("rank", pa.int64(), cols["rank"]),
        ("host", pa.string(), cols["host"]),
        ("rule", dict_str, cols["rule"]),
        ("signal", dict_str, cols["signal"]),
        ("text", pa.large_string(), cols["text"]),
        ("fields", pa.map_(pa.string(), pa.string()), [list(f.items()) for f in cols["fields"]]),
        ("role", dict_str, cols["role"]),
    ]
    arrays = []
    for _name, typ, values in fields:
        if pa.types.is_dictionary(typ):
            arrays.append(pa.array(values, pa.string()).dictionary_encode())
        else:
            arrays.append(pa.array(values, typ))
    info = capped_info(report, len(cols["line"]))
    meta = {
        "faultline.evidence": str(info["evidence"]),
        "faultline.matches": "" if info["matches"] is None else str(info["matches"]),
        "faultline.capped": "true" if info["capped"] else "false",
    }
    return pa.Table.from_arrays(arrays, names=[f[0] for f in fields], metadata=meta)


def incidents_frame(report: "Report") -> "pandas.DataFrame":
    pd = _pandas()
    rows = []
    for k, inc in enumerate(report.incidents):
        ranks: Set[int] = set()
        for c in inc.collateral:
            ranks.update(c.ranks)
        rows.append(
            {
                "primary": k == 0,
                "rule": inc.rule,
                "title": inc.title,
                "reference": inc.reference,
                "category": inc.category,
                "layer": inc.layer,
                "confidence": inc.confidence,
                "rank": inc.rank,
                "host": inc.host,
                "gpu": inc.gpu,
                "time": inc.time,
                "inferred": inc.inferred,
                "initiating_evidence": len(inc.initiating.evidence),
                "collateral_lines": inc.collateral_count,
                "collateral_rules": [c.rule for c in inc.collateral],
                "collateral_ranks": sorted(ranks),
                "fix": inc.fix,
                "verify": inc.verify,
                "missing_facts": list(inc.missing_facts),
                "explanation": inc.explanation,
            }
        )
    df: "pandas.DataFrame" = pd.DataFrame(rows, columns=INCIDENT_COLUMNS)
    df["rank"] = pd.array(list(df["rank"]), dtype="Int64")
    df["time"] = pd.to_datetime(df["time"], utc=True)
    return df
