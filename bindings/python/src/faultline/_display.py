"""Jupyter HTML view and the matplotlib timeline of a report."""

from __future__ import annotations

import html
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

from ._report import Collateral, Evidence, format_ranks
from ._time import from_us

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

    from ._report import Incident, Report
    from ._rules import RuleSummary

_E = html.escape

# Colours come from the notebook's theme: text inherits (headings and labels
# are told apart by weight and opacity, never by a fixed grey or black that
# vanishes on a dark theme), and the one accent, the diagnosis title, is the
# theme's error colour (JupyterLab, then VS Code) with a red that reads on
# light and dark backgrounds as the fallback.
_ACCENT = "var(--jp-error-color1,var(--vscode-errorForeground,#e0474c))"
_CSS = (
    "<style>"
    ".faultline-report table{border-collapse:collapse;font-size:0.92em;text-align:left;color:inherit}"
    ".faultline-report th{vertical-align:top;padding:2px 10px 2px 0;white-space:nowrap;color:inherit;"
    "opacity:0.75;font-weight:600}"
    ".faultline-report thead th{opacity:1;font-size:1.05em}"
    ".faultline-report td{vertical-align:top;padding:2px 0;text-align:left;color:inherit}"
    ".faultline-report code.fl-line{white-space:pre-wrap;word-break:break-all;font-size:0.9em}"
    f".faultline-report .fl-title{{font-weight:bold;color:{_ACCENT}}}"
    ".faultline-report ul{margin:0;padding-left:1.2em}"
    ".faultline-report table.fl-rules th,.faultline-report table.fl-rules td{padding:2px 10px 2px 0}"
    "</style>"
)


def _t(dt: Optional[datetime]) -> str:
    if dt is None:
        return "unknown time"
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")


def _ev_html(e: Evidence, width: int = 400) -> str:
    text = e.text if len(e.text) <= width else e.text[: width - 1] + "\u2026"
    return f"<div><small>{_E(e.location)}</small><br><code class='fl-line'>{_E(text)}</code></div>"


def _where(rank: Optional[int], host: Optional[str], gpu: Optional[str]) -> str:
    parts = []
    if rank is not None:
        parts.append(f"rank {rank}")
    if host:
        parts.append(f"on {host}")
    if gpu:
        parts.append(f"GPU {gpu}")
    return " ".join(parts) or "unknown rank and host"


def _coll_html(c: Collateral) -> str:
    when = f", first at {_t(c.first_time)}" if c.first_time else ""
    return f"<li>{_E(c.summary())}{_E(when)}</li>"


def report_html(report: "Report", max_evidence: int = 3, max_collateral: int = 5) -> str:
    rows: List[str] = []

    def row(k: str, v_html: str) -> None:
        rows.append(f"<tr><th>{_E(k)}</th><td>{v_html}</td></tr>")

    p = report.primary
    if p is None:
        row("diagnosis", "<i>no failure signature in the catalog applies</i>")
    else:
        row(
            "diagnosis",
            f"<span class='fl-title'>{_E(p.title)}</span> <code>{_E(p.rule)}</code>"
            f" &middot; confidence {p.confidence:.0%}",
        )
        row("reference", _E(p.reference))
        where = _where(p.rank, p.host, p.gpu) + f", at {_t(p.time)}"
        if p.inferred:
            where += " (inferred: no initiating line seen)"
        row("initiating", _E(where))
        evs = p.initiating.evidence
        if evs:
            more = len(evs) - max_evidence
            body = "".join(_ev_html(e) for e in evs[:max_evidence])
            if more > 0:
                body += f"<div><small>+{more} more</small></div>"
            row("evidence", body)
        if p.collateral:
            items = "".join(_coll_html(c) for c in p.collateral[:max_collateral])
            more = len(p.collateral) - max_collateral
            if more > 0:
                items += f"<li>+{more} more cluster(s)</li>"
            row(f"collateral ({p.collateral_count} lines)", f"<ul style='margin:0;padding-left:1.2em'>{items}</ul>")
        if p.fix:
            row("fix", _E(p.fix))
        if p.verify:
            row("verify", f"<code>{_E(p.verify)}</code>")
        if p.missing_facts:
            row(
                "missing facts",
                "<ul style='margin:0;padding-left:1.2em'>"
                + "".join(f"<li>{_E(m)}</li>" for m in p.missing_facts)
                + "</ul>",
            )
        others = report.incidents[1:]
        if others:
            row(
                "other incidents",
                "<ul style='margin:0;padding-left:1.2em'>"
                + "".join(
                    f"<li>{_E(i.title)} <code>{_E(i.rule)}</code> ({i.confidence:.0%}, "
                    f"{_E(_where(i.rank, i.host, i.gpu))})</li>"
                    for i in others
                )
                + "</ul>",
            )
    inp = report.input
    summary = f"{inp.sources} source(s), {inp.lines:,} lines, {inp.bytes:,} bytes"
    if inp.ranks is not None:
        summary += f", {inp.ranks} rank(s)"
    if inp.hosts is not None:
        summary += f", {inp.hosts} host(s)"
    if inp.seconds:
        summary += f", scanned in {inp.seconds:.3f} s"
    row("input", _E(summary))
    if inp.errors:
        row(
            "input errors",
            "<ul style='margin:0;padding-left:1.2em'>"
            + "".join(f"<li>{_E(e.message or e.source)}</li>" for e in inp.errors)
            + "</ul>",
        )
    if report.ignored:
        row(
            "ignored",
            _E("; ".join(f"{g.count} x {g.rule} ({g.reason})" for g in report.ignored)),
        )
    jw = report.job_window
    if jw.start or jw.end:
        row("job window", _E(f"{_t(jw.start)} .. {_t(jw.end)}"))
    head = "faultline &middot; primary diagnosis" if p is not None else "faultline"
    return (
        f"{_CSS}<div class='faultline-report'><table>"
        f"<thead><tr><th colspan='2'>{head}</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _table(head: str, rows: List[str], cls: str = "") -> str:
    klass = f" class='{cls}'" if cls else ""
    return (
        f"{_CSS}<div class='faultline-report'><table{klass}>"
        f"<thead><tr><th colspan='2'>{head}</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _row(k: str, v_html: str) -> str:
    return f"<tr><th>{_E(k)}</th><td>{v_html}</td></tr>"


def _more(n: int, what: str) -> str:
    return f"<small>+{n:,} more {_E(what)}</small>" if n > 0 else ""


def evidence_html(e: Evidence, width: int = 2000, max_fields: int = 12) -> str:
    """One evidence record: where, when, which rule, the line (capped at
    ``width`` characters) and its fields."""
    rows = [
        _row("rule", f"<code>{_E(e.rule)}</code> / <code>{_E(e.signal)}</code>"),
        _row("where", _E(_where(e.rank, e.host, None))),
        _row("time", _E(_t(e.time) + (f" ({e.time_source})" if e.time is not None else ""))),
        _row("line", _ev_html(e, width)),
    ]
    if e.fields:
        items = list(e.fields.items())
        body = "".join(
            f"<li><code>{_E(k)}</code> = {_E(v if len(v) <= 200 else v[:199] + chr(0x2026))}</li>"
            for k, v in items[:max_fields]
        )
        more = len(items) - max_fields
        if more > 0:
            body += f"<li>{_more(more, 'field(s)')}</li>"
        rows.append(_row("fields", f"<ul>{body}</ul>"))
    return _table("faultline &middot; evidence", rows)


def incident_html(
    inc: "Incident", max_evidence: int = 5, max_collateral: int = 8, max_timeline: int = 10
) -> str:
    """One incident; long lists (initiating evidence, collateral clusters,
    timeline) are capped with a "+N more" line."""
    rows = [
        _row(
            "diagnosis",
            f"<span class='fl-title'>{_E(inc.title)}</span> <code>{_E(inc.rule)}</code>"
            f" &middot; confidence {inc.confidence:.0%}",
        ),
        _row("category", _E(inc.category + (f" / {inc.layer}" if inc.layer else ""))),
        _row("reference", _E(inc.reference)),
    ]
    where = _where(inc.rank, inc.host, inc.gpu) + f", at {_t(inc.time)}"
    if inc.inferred:
        where += " (inferred: no initiating line seen)"
    rows.append(_row("initiating", _E(where)))
    evs = inc.initiating.evidence
    if evs:
        body = "".join(_ev_html(e) for e in evs[:max_evidence]) + _more(len(evs) - max_evidence, "line(s)")
        rows.append(_row(f"evidence ({len(evs)})", body))
    if inc.collateral:
        items = "".join(_coll_html(c) for c in inc.collateral[:max_collateral])
        more = len(inc.collateral) - max_collateral
        if more > 0:
            items += f"<li>{_more(more, 'cluster(s)')}</li>"
        rows.append(_row(f"collateral ({inc.collateral_count:,} lines)", f"<ul>{items}</ul>"))
    if inc.explanation:
        rows.append(_row("why", _E(inc.explanation)))
    if inc.fix:
        rows.append(_row("fix", _E(inc.fix)))
    if inc.verify:
        rows.append(_row("verify", f"<code>{_E(inc.verify)}</code>"))
    if inc.missing_facts:
        rows.append(_row("missing facts", "<ul>" + "".join(f"<li>{_E(m)}</li>" for m in inc.missing_facts) + "</ul>"))
    if inc.timeline:
        body = "".join(_ev_html(e, 300) for e in inc.timeline[:max_timeline])
        body += _more(len(inc.timeline) - max_timeline, "line(s)")
        rows.append(_row(f"timeline ({len(inc.timeline)})", body))
    return _table("faultline &middot; incident", rows)


def rule_summary_html(r: "RuleSummary") -> str:
    rows = [
        _row("rule", f"<code>{_E(r.id)}</code>"),
        _row("title", _E(r.title)),
        _row("category", _E(r.category + (f" / {r.layer}" if r.layer else ""))),
        _row("reference", _E(r.reference)),
    ]
    if r.tags:
        rows.append(_row("tags", _E(", ".join(r.tags))))
    return _table("faultline &middot; rule", rows)


def rules_html(rules: Sequence["RuleSummary"], max_rows: int = 500) -> str:
    """A table of rule summaries, one row per rule."""
    head = "<tr><th>id</th><th>title</th><th>category</th><th>layer</th><th>tags</th></tr>"
    body = "".join(
        f"<tr><td><code>{_E(r.id)}</code></td><td>{_E(r.title)}</td><td>{_E(r.category)}</td>"
        f"<td>{_E(r.layer or '')}</td><td>{_E(', '.join(r.tags))}</td></tr>"
        for r in rules[:max_rows]
    )
    more = len(rules) - max_rows
    if more > 0:
        body += f"<tr><td colspan='5'>{_more(more, 'rule(s)')}</td></tr>"
    return (
        f"{_CSS}<div class='faultline-report'><table class='fl-rules'>"
        f"<thead><tr><th colspan='5'>faultline &middot; {len(rules)} rule(s)</th></tr>{head}</thead>"
        f"<tbody>{body}</tbody></table></div>"
    )


#: Up to this many distinct ranks the timeline has one row and tick per
#: rank; beyond it (and always with style="hosts"/"heat") ticks name hosts.
RANK_TICKS_MAX = 32
#: At most this many y tick labels, whatever the job's size.
MAX_YTICKS = 32


def _host_spans(ranks: List[Optional[int]], hosts: List[Optional[str]]) -> List[Any]:
    """[(host, first rank, last rank)] in rank order: the ranks each host
    holds, from the evidence (a host's ranks are usually contiguous)."""
    by_host: Dict[str, List[int]] = {}
    for r, h in zip(ranks, hosts):
        if r is not None and h:
            by_host.setdefault(h, []).append(r)
    spans = [(h, min(rs), max(rs)) for h, rs in by_host.items()]
    spans.sort(key=lambda x: (x[1], x[2], x[0]))
    return spans


def plot_timeline(
    report: "Report",
    ax: Optional["Axes"] = None,
    annotate: bool = True,
    max_points: int = 200_000,
    style: str = "auto",
) -> "Axes":
    """Rank x time. ``style``: "ranks" (a row and a tick per rank),
    "hosts" (ticks name the hosts, lines between them), "heat" (hosts, and
    the background evidence as a density strip instead of points), or
    "auto": "ranks" up to 32 ranks, "hosts" up to 256, "heat" beyond. The
    legend sits outside the axes, so it never hides the initiating star."""
    try:
        import matplotlib.dates as mdates
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("faultline: plot_timeline needs matplotlib: pip install 'faultline-diag[plot]'") from e
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    from ._frames import evidence_columns

    if style not in ("auto", "ranks", "hosts", "heat"):
        raise ValueError(f"style must be 'auto', 'ranks', 'hosts' or 'heat', not {style!r}")
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(11, 4.8), constrained_layout=True)
    cols = evidence_columns(report)
    known_ranks = sorted({r for r in cols["rank"] if r is not None})
    if style == "auto":
        n = len(known_ranks)
        style = "ranks" if n <= RANK_TICKS_MAX else ("hosts" if n <= 256 else "heat")
    groups: Dict[str, Dict[str, List[Any]]] = {}
    unknown_rank = -1 if not known_ranks else min(-1, known_ranks[0] - max(1, len(known_ranks) // 50))
    for us, rank, rule, role in zip(cols["time"], cols["rank"], cols["rule"], cols["role"]):
        t = from_us(us)
        if t is None:
            continue
        key = role if role != "other" else rule
        g = groups.setdefault(key, {"x": [], "y": [], "role": [role]})
        g["x"].append(t)
        g["y"].append(unknown_rank if rank is None else rank)
    # Subsample the background only; never the initiating or collateral lines.
    total = sum(len(g["x"]) for g in groups.values())
    step = max(1, total // max_points) if total > max_points else 1

    p = report.primary
    if p is not None:
        for c in p.collateral:
            if c.first_time is not None:
                end = c.last_time or c.first_time
                ax.axvspan(c.first_time, end, color="tab:orange", alpha=0.12, lw=0)  # type: ignore[arg-type]
    palette = ["tab:blue", "tab:green", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan", "tab:gray"]
    handles: List[Any] = []
    background = [k for k in groups if groups[k]["role"][0] not in ("initiating", "collateral")]
    if style == "heat" and background:
        import numpy as np

        xs = mdates.date2num([x for k in background for x in groups[k]["x"]])
        ys = np.asarray([y for k in background for y in groups[k]["y"]], dtype=float)
        lo, hi = min(ys.min(), known_ranks[0] if known_ranks else 0), max(ys.max(), known_ranks[-1] if known_ranks else 0)
        ybins = int(min(max(hi - lo + 1, 1), 256))
        xbins = 200
        if xs.max() == xs.min():
            xs_range = (xs.min() - 1e-5, xs.max() + 1e-5)
        else:
            xs_range = (xs.min(), xs.max())
        counts, xe, ye = np.histogram2d(xs, ys, bins=[xbins, ybins], range=[xs_range, (lo - 0.5, hi + 0.5)])
        masked = np.ma.masked_equal(counts.T, 0)
        ax.pcolormesh(xe, ye, masked, cmap="Blues", shading="flat", zorder=2, alpha=0.9)
        handles.append(Patch(color="tab:blue", alpha=0.6, label=f"other evidence ({len(xs):,} lines, density)"))
        ax.xaxis_date()
        background = []
    k = 0
    for key in sorted(groups, key=lambda s: (s in ("initiating", "collateral"), s)):
        g = groups[key]
        role = g["role"][0]
        if role == "initiating":
            h = ax.scatter(g["x"], g["y"], marker="*", s=300, color="tab:red", edgecolor="black",
                           linewidths=0.6, zorder=6, label=f"initiating: {p.rule if p else key}")
        elif role == "collateral":
            h = ax.scatter(g["x"], g["y"], marker="X", s=40 if len(known_ranks) <= 64 else 14, color="tab:orange",
                           alpha=0.85, zorder=4,
                           label=("collateral: " + ", ".join(sorted({c.rule for c in p.collateral}))) if p else key)
        elif key in background:
            xs_, ys_ = g["x"][::step], g["y"][::step]
            h = ax.scatter(xs_, ys_, marker=".", s=14 if len(known_ranks) <= 64 else 4,
                           color=palette[k % len(palette)], alpha=0.6, zorder=3, label=key)
            k += 1
        else:
            continue
        handles.append(h)
    if annotate and p is not None:
        x: Optional[datetime] = p.time
        y: Optional[int] = p.rank
        ev = p.initiating.evidence
        if ev:
            x = ev[0].time or x
            y = ev[0].rank if ev[0].rank is not None else y
        if x is not None:
            where = _where(p.rank, p.host, p.gpu)
            label = f"{p.title}\n{where}\n{x.astimezone(timezone.utc):%H:%M:%S} UTC"
            if p.inferred:
                label += " (inferred)"
            yy = unknown_rank if y is None else y
            # The note goes towards the middle of the plot, never off its top.
            upper = bool(known_ranks) and yy > (known_ranks[0] + known_ranks[-1]) / 2
            ax.annotate(label, xy=(x, yy), xytext=(14, -34 if upper else 18), textcoords="offset points",
                        fontsize=8, color="black",
                        bbox={"boxstyle": "round", "fc": "white", "ec": "tab:red", "alpha": 0.9},
                        arrowprops={"arrowstyle": "->", "color": "tab:red"}, zorder=7)
    ax.set_xlabel("time (UTC)")
    has_unknown = None in cols["rank"]
    if style == "ranks":
        ax.set_ylabel("rank")
        if known_ranks:
            ax.yaxis.set_major_locator(FixedLocator(known_ranks + ([unknown_rank] if has_unknown else [])))

            def _rank_label(v: float, _pos: Any) -> str:
                if v == unknown_rank and has_unknown:
                    return "?"
                return str(int(v)) if float(v).is_integer() and v >= 0 else ""

            ax.yaxis.set_major_formatter(FuncFormatter(_rank_label))
    else:
        spans = _host_spans(cols["rank"], cols["host"])
        ax.set_ylabel(f"rank, by host ({len(spans)} hosts, {len(known_ranks)} ranks)")
        if spans:
            every = max(1, -(-len(spans) // MAX_YTICKS))
            shown = spans[::every]
            ticks = [(a + b) / 2 for _, a, b in shown]
            names = [h if a == b else f"{h} ({a}-{b})" if len(spans) <= 16 else h for h, a, b in shown]
            ax.set_yticks(ticks)
            ax.set_yticklabels(names)
            ax.yaxis.set_minor_locator(NullLocator())
            if len(spans) <= 128:
                for _, a, _b in spans[1:]:
                    ax.axhline(a - 0.5, color="gray", lw=0.4, alpha=0.35, zorder=1)
            ax.tick_params(axis="y", labelsize=7 if len(shown) > 16 else 8)
        elif known_ranks:
            ax.yaxis.set_major_locator(FixedLocator(known_ranks[:: max(1, -(-len(known_ranks) // MAX_YTICKS))]))
    if style == "heat" and known_ranks:
        # The mesh pins the limits to its edges: give the markers at the
        # first and last ranks and times some room.
        lo_y = min(known_ranks[0], unknown_rank if has_unknown else known_ranks[0])
        pad = max(1.0, 0.03 * (known_ranks[-1] - lo_y))
        ax.set_ylim(lo_y - pad, known_ranks[-1] + pad)
        x0, x1 = ax.get_xlim()
        xpad = 0.02 * (x1 - x0) if x1 > x0 else 1e-4
        ax.set_xlim(x0 - xpad, x1 + xpad)
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M:%S", tz=timezone.utc))  # type: ignore[no-untyped-call]
    title = "faultline timeline"
    if p is not None:
        title += f": {p.rule}"
    ax.set_title(title)
    ax.grid(True, axis="x", alpha=0.3)
    if handles:
        if style != "ranks" and p is not None and p.rank is not None:
            handles.append(Line2D([], [], ls="none", label=f"rank {p.rank} on {p.host or '?'}"))
        # Outside the axes, right of them: never over the data.
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                  fontsize=7, framealpha=0.8)
    return ax
