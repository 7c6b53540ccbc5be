"""Sessions: feed sources and streams, get a :class:`Report`."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
import warnings
import weakref
from datetime import timedelta
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _errors, _ffi
from ._report import Evidence, Report, evidence_from_view
from ._rules import PathLike, RulesLike, _RulesetHandle, resolve
from ._time import TimeLike, to_us

Paths = Union[PathLike, Iterable[PathLike]]
Data = Union[str, bytes, bytearray, memoryview]
#: on_evidence(evidence) is called for each record as it is found.
EvidenceCallback = Callable[[Evidence], Any]
#: on_progress(done_bytes, total_bytes) may return True to cancel the scan.
ProgressCallback = Callable[[int, int], Any]

DEFAULT_STREAM = "<feed>"


def _options(
    threads: Optional[int],
    job_start: Optional[TimeLike],
    job_end: Optional[TimeLike],
    clock_offsets: Optional[Mapping[str, Union[float, timedelta]]],
    tz: Optional[str],
    max_source_bytes: Optional[int] = None,
    max_decompressed_bytes: Optional[int] = None,
    time_budget: Optional[Union[float, timedelta]] = None,
    retry: Optional[Mapping[str, Any]] = None,
    job_state: Optional[str] = None,
    job_exit_status: Optional[int] = None,
) -> Tuple[_ffi.SessionOptions, List[Any]]:
    """fl_session_options from Python values, and the buffers it points to
    (keep them alive until the library has copied them)."""
    opts = _ffi.SessionOptions()
    rc = _ffi.lib.fl_session_options_init(ctypes.byref(opts), ctypes.sizeof(opts))
    if rc != _ffi.FL_OK:
        _errors.raise_status(rc, "fl_session_options_init refused this binding's fl_session_options")
    if threads is not None:
        if threads < 0:
            raise ValueError("threads must be >= 0 (0: one per core)")
        opts.threads = threads
    opts.job_start_us = to_us(job_start)
    opts.job_end_us = to_us(job_end)
    keep: List[Any] = []
    if clock_offsets:
        arr = (_ffi.ClockOffset * len(clock_offsets))()
        for i, (host, sec) in enumerate(clock_offsets.items()):
            hb = str(host).encode()
            keep.append(hb)
            arr[i].host = hb
            arr[i].seconds = sec.total_seconds() if isinstance(sec, timedelta) else float(sec)
        opts.clock_offsets = arr
        opts.clock_offset_count = len(clock_offsets)
        keep.append(arr)
    if tz is not None:
        tzb = tz.encode()
        keep.append(tzb)
        opts.tz = tzb
    for name, value in (("max_source_bytes", max_source_bytes), ("max_decompressed_bytes", max_decompressed_bytes)):
        if value is not None:
            if not isinstance(value, int) or value < 1 or value >= 1 << 64:
                raise ValueError(f"{name} must be a whole number of bytes >= 1")
            setattr(opts, name, value)
    if time_budget is not None:
        secs = time_budget.total_seconds() if isinstance(time_budget, timedelta) else float(time_budget)
        if not secs > 0 or secs == float("inf"):
            raise ValueError("time_budget must be a finite number of seconds above 0")
        opts.time_budget_s = secs
    _retry_policy(opts, **(retry or {}))
    _job_outcome(opts, job_state, job_exit_status)
    return opts, keep


# fl_session_options.job_state: our names and Slurm's State names.
_JOB_STATES = {
    name: value
    for value, (ours, slurm) in enumerate(
        [
            ("completed", "COMPLETED"),
            ("failed", "FAILED"),
            ("timeout", "TIMEOUT"),
            ("cancelled", "CANCELLED"),
            ("oom", "OUT_OF_MEMORY"),
            ("node_fail", "NODE_FAIL"),
            ("preempted", "PREEMPTED"),
            ("running", "RUNNING"),
        ],
        start=1,
    )
    for name in (ours, slurm)
}


def _job_outcome(opts: _ffi.SessionOptions, job_state: Optional[str], job_exit_status: Optional[int]) -> None:
    """How the job ended, as the caller knows it (None: unknown)."""
    if job_state is not None:
        if job_state not in _JOB_STATES:
            raise ValueError(
                f"job_state {job_state!r} is not one of " + ", ".join(sorted(_JOB_STATES, key=_JOB_STATES.__getitem__))
            )
        opts.job_state = _JOB_STATES[job_state]
    if job_exit_status is not None:
        if not isinstance(job_exit_status, int) or isinstance(job_exit_status, bool) or not -64 <= job_exit_status <= 255:
            raise ValueError("job_exit_status must be an exit status (0 to 255) or a negative signal number (-1 to -64)")
        opts.job_exit_status = job_exit_status


def _retry_policy(
    opts: _ffi.SessionOptions,
    max_restarts_per_rule: Optional[int] = None,
    max_restarts_per_host: Optional[int] = None,
    restart_window: Optional[Union[float, timedelta]] = None,
) -> None:
    """The retry policy's fields of fl_session_options (None: the default)."""
    for name, value in (("max_restarts_per_rule", max_restarts_per_rule), ("max_restarts_per_host", max_restarts_per_host)):
        if value is not None:
            if not isinstance(value, int) or isinstance(value, bool) or value < 1 or value >= 1 << 32:
                raise ValueError(f"{name} must be a whole number >= 1")
            setattr(opts, name, value)
    if restart_window is not None:
        secs = restart_window.total_seconds() if isinstance(restart_window, timedelta) else float(restart_window)
        if not 0 < secs <= 1e9:
            raise ValueError("restart_window must be a number of seconds above 0 (at most 1e9)")
        opts.restart_window_s = secs


def _free_session(ptr: int, _rs: _RulesetHandle) -> None:
    # _rs rides along so the ruleset outlives the session.
    _ffi.lib.fl_session_free(ptr)


def _as_paths(paths: Paths) -> List[str]:
    if isinstance(paths, (str, bytes)) or hasattr(paths, "__fspath__"):
        return [os.fsdecode(os.fspath(paths))]  # type: ignore[arg-type]
    out = [os.fsdecode(os.fspath(p)) for p in paths]
    return out


def _evidence_thunk(wself: "weakref.ReferenceType[Session]") -> Callable[[Any, Any], None]:
    def thunk(_user: Any, view: Any) -> None:
        self = wself()
        if self is None or self._pending is not None:
            return
        try:
            self._on_evidence(evidence_from_view(view.contents))  # type: ignore[misc]
        except BaseException as e:  # noqa: B036 - stored and re-raised
            self._callback_failed(e)

    return thunk


def _progress_thunk(wself: "weakref.ReferenceType[Session]") -> Callable[[Any, int, int], int]:
    def thunk(_user: Any, done: int, total: int) -> int:
        self = wself()
        if self is None or self._pending is not None:
            return 1
        try:
            if self._progress is not None:
                self._progress(done, total)
            if self._on_progress is not None and self._on_progress(done, total):
                return 1
            return 0
        except BaseException as e:  # noqa: B036 - stored and re-raised
            self._callback_failed(e)
            return 1

    return thunk


# ---- progress and Ctrl-C ---------------------------------------------------------

#: progress=True / progress=callable (see :class:`Session`).
ProgressLike = Union[None, bool, Callable[[int, int], Any]]


class _Progress:
    """Turns the library's per-scan (done, total) into figures for the whole
    session: each scan call (paths, then each byte range) counts from 0 with
    its own total, so finished passes are carried as a base."""

    def __init__(self, sink: Callable[[int, int], Any], close: Optional[Callable[[], None]] = None) -> None:
        self._sink = sink
        self._close = close
        self._base_done = self._base_total = 0
        self._done = self._total = 0
        self._unknown = False  # a pass without a known total: so is the whole

    def __call__(self, done: int, total: int) -> None:
        if done < self._done or total != self._total:  # a new scan pass
            self._base_done += self._done
            self._base_total += self._total
        self._done, self._total = done, total
        self._unknown = self._unknown or total == 0
        self._sink(self._base_done + done, 0 if self._unknown else self._base_total + total)

    def close(self) -> None:
        if self._close is not None:
            close, self._close = self._close, None
            close()


class _TqdmBar:
    """A tqdm bar (tqdm.auto: a widget in Jupyter, text in a terminal), made
    on the first progress report so that a session that never scans shows
    nothing."""

    def __init__(self, tqdm: Any) -> None:
        self._tqdm = tqdm
        self.bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = self._tqdm(
                total=total or None, unit="B", unit_scale=True, unit_divisor=1024, desc="faultline", leave=True
            )
        elif total and self.bar.total != total:
            self.bar.total = total
            self.bar.refresh()
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class _TextProgress:
    """Without tqdm: one self-overwriting line on stderr, at most five
    updates a second."""

    def __init__(self) -> None:
        self._last = 0.0
        self._shown = False
        self._line = ""

    def __call__(self, done: int, total: int) -> None:
        self._line = f"\rfaultline: scanned {done / 2**20:,.1f} MiB"
        if total:
            self._line += f" of {total / 2**20:,.1f} MiB ({100 * done / total:.0f}%)"
        now = time.monotonic()
        if now - self._last >= 0.2 or (total and done >= total):
            self._last = now
            self._shown = True
            sys.stderr.write(self._line)
            sys.stderr.flush()

    def close(self) -> None:
        if self._shown:
            sys.stderr.write(self._line + "\n")
            sys.stderr.flush()


def _make_progress(progress: ProgressLike) -> Optional[_Progress]:
    if progress is None or progress is False:
        return None
    if progress is True:
        try:
            with warnings.catch_warnings():
                # tqdm.auto warns, once, in a kernel without ipywidgets, and
                # then falls back to its text bar, which is what we want.
                warnings.simplefilter("ignore")
                from tqdm.auto import tqdm
        except ImportError:
            text = _TextProgress()
            return _Progress(text, text.close)
        bar = _TqdmBar(tqdm)
        return _Progress(bar, bar.close)
    if callable(progress):
        return _Progress(progress)
    raise TypeError(f"progress must be True, False, None or a callable(done, total), not {type(progress).__name__}")


class _SigintCancels:
    """While a library call runs on the main thread, Ctrl-C (SIGINT: a
    terminal's, or Jupyter's interrupt) cancels the scan instead of raising
    inside a ctypes callback, where a KeyboardInterrupt can only be printed
    and dropped ("Exception ignored on calling ctypes callback function").
    The interrupt is delivered once the call has returned: KeyboardInterrupt
    under Python's default handler, else the handler that was installed is
    called. Python runs signal handlers between bytecodes of the main
    thread, so the handler below runs inside the session's progress callback
    while the library scans (or right after the call)."""

    __slots__ = ("_session", "_prev", "_hit")

    def __init__(self, session: "Session") -> None:
        self._session = session
        self._prev: Any = None
        self._hit: Optional[Tuple[int, Any]] = None

    def __enter__(self) -> "_SigintCancels":
        if threading.current_thread() is not threading.main_thread():
            return self
        prev = signal.getsignal(signal.SIGINT)
        if not callable(prev):  # SIG_IGN, SIG_DFL, or installed outside Python
            return self
        self._prev = prev
        signal.signal(signal.SIGINT, self._handler)
        return self

    def _handler(self, signum: int, frame: Any) -> None:
        if self._hit is None:
            self._hit = (signum, frame)
        self._session._cancel_nolock()

    def __exit__(self, *exc: Any) -> None:
        if self._prev is None:
            return
        signal.signal(signal.SIGINT, self._prev)
        hit, self._hit = self._hit, None
        if hit is None:
            return
        self._session._poisoned = True
        self._session._pending = None
        if self._prev is signal.default_int_handler:
            raise KeyboardInterrupt
        self._prev(*hit)


#: Small feeds are gathered into one library call of about this many bytes
#: (the library buffers about 1 MiB per stream before scanning anyway, so
#: this changes nothing but the number of ctypes calls).
COALESCE_BYTES = 64 * 1024


class Stream:
    """A pushed stream of a session (``Session.open_stream``)."""

    def __init__(self, session: "Session", name: str, stream_id: int) -> None:
        # Weak: the session owns its streams, not the other way round.
        self._wsession = weakref.ref(session)
        self.name = name
        self.id = stream_id
        self.closed = False
        self._buf = bytearray()

    def feed(self, data: Data) -> None:
        """Pushes bytes (str is UTF-8 encoded). Chunk boundaries are arbitrary.
        Feeds smaller than 64 KiB are gathered before they reach the library."""
        if self.closed:
            raise _errors.InvalidArgumentError(f"stream {self.name!r} is closed", _ffi.FL_ERR_INVALID_ARG)
        self._session()._check_usable()
        if isinstance(data, str):
            data = data.encode("utf-8")
        n = memoryview(data).nbytes if not isinstance(data, (bytes, bytearray)) else len(data)
        if n >= COALESCE_BYTES:
            self._push()
            self._session()._feed_id(self.id, data)
            return
        self._buf += data
        if len(self._buf) >= COALESCE_BYTES:
            self._push()

    def _push(self) -> None:
        """Hands the gathered bytes to the library."""
        if self._buf:
            s = self._session()
            data, self._buf = bytes(self._buf), bytearray()
            s._feed_id(self.id, data)

    def flush(self) -> None:
        """Scans every complete line fed so far now (on_evidence fires for
        them) without closing the stream; a trailing partial line stays
        buffered. Feeding batches lines for speed: call this when a live
        stream goes quiet."""
        if self.closed:
            raise _errors.InvalidArgumentError(f"stream {self.name!r} is closed", _ffi.FL_ERR_INVALID_ARG)
        self._push()
        self._session()._call(_ffi.lib.fl_session_stream_flush, self.id)

    def _session(self) -> "Session":
        s = self._wsession()
        if s is None:
            raise _errors.InvalidArgumentError("the stream's session is gone", _ffi.FL_ERR_INVALID_ARG)
        return s

    def write(self, data: Data) -> int:
        """File-like alias of feed(); returns len(data)."""
        self.feed(data)
        return len(data)

    def close(self) -> None:
        """Ends the stream: its last line is scanned even without a newline.
        Safe to call more than once."""
        if self.closed:
            return
        s = self._wsession()
        live = s is not None and not s.closed and not s.finished
        try:
            if live:
                self._push()
        finally:
            self.closed = True
            self._buf = bytearray()
        if live:
            s._call(_ffi.lib.fl_session_stream_close, self.id)  # type: ignore[union-attr]

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<faultline.Stream {self.name!r} id={self.id}{' closed' if self.closed else ''}>"


class Session:
    """One diagnosis in the making: add paths, feed streams, then ``finish()``.

    Use it in a ``with`` block (or call ``close()``); a finaliser frees it if
    you forget. A session is used by one thread at a time, except
    ``cancel()``, which any thread may call. Library calls release the GIL.

    An exception raised by ``on_evidence`` or ``on_progress`` cancels the
    scan and is re-raised once the library call returns; the session then
    takes no more input. So does Ctrl-C (or a notebook's interrupt) on the
    main thread: the scan stops and ``KeyboardInterrupt`` is raised.

    ``progress=True`` shows the scan's progress: a tqdm bar (a widget in
    Jupyter) when tqdm is installed, else a line on stderr.
    ``progress=callable`` calls ``callable(done, total)`` instead. Both count
    input bytes: files by their size on disk, ``.gz``/``.zst`` files by the
    compressed bytes read, so the total is known up front (0 when it is not:
    standard input, pushed streams). ``on_progress(done, total)`` is the
    lower-level hook: it may return True to cancel the scan.

    Limits (``None``: the library's default): ``max_source_bytes`` bytes of
    log per source (none by default), ``max_decompressed_bytes`` per
    ``.gz``/``.zst`` source (1 TiB), ``time_budget`` seconds of wall clock
    for reading, from the session's creation (none). A source that hits one
    is listed in ``report.input.errors`` naming the limit; what was read of
    it is still diagnosed.

    Retry policy (``None``: the default): an incident's restart becomes a
    stop (``Incident.action``) once earlier attempts of the job within
    ``restart_window`` (seconds or a timedelta; 24 h) were ended by the same
    rule ``max_restarts_per_rule`` times (3) or failed on its host
    ``max_restarts_per_host`` times (3).

    How the job ended, when the caller knows (``None``: unknown):
    ``job_state`` (``"completed"``, ``"failed"``, ``"timeout"``,
    ``"cancelled"``, ``"oom"``, ``"node_fail"``, ``"preempted"``,
    ``"running"``, or Slurm's State names such as ``"OUT_OF_MEMORY"``) and
    ``job_exit_status`` (0 to 255, or a negative signal number). With no
    incident in the logs, a stated failure gives the state's catalog
    reference (else the fallback's) on the rank whose log stopped first,
    ``"running"`` the silent hang; ``"completed"`` with exit status 0 marks
    what the logs show as survived. A cause the evidence backs is never
    overridden. The report echoes it (``input.job``).
    """

    def __init__(
        self,
        rules: RulesLike = None,
        threads: Optional[int] = None,
        job_start: Optional[TimeLike] = None,
        job_end: Optional[TimeLike] = None,
        clock_offsets: Optional[Mapping[str, Union[float, timedelta]]] = None,
        tz: Optional[str] = None,
        on_evidence: Optional[EvidenceCallback] = None,
        on_progress: Optional[ProgressCallback] = None,
        progress: ProgressLike = None,
        max_source_bytes: Optional[int] = None,
        max_decompressed_bytes: Optional[int] = None,
        time_budget: Optional[Union[float, timedelta]] = None,
        max_restarts_per_rule: Optional[int] = None,
        max_restarts_per_host: Optional[int] = None,
        restart_window: Optional[Union[float, timedelta]] = None,
        job_state: Optional[str] = None,
        job_exit_status: Optional[int] = None,
    ) -> None:
        self._ptr: Optional[int] = None
        self._progress = _make_progress(progress)
        self._finalizer: "Optional[weakref.finalize[Any, Any]]" = None
        self._lock = threading.Lock()  # guards _ptr against cancel() vs close()
        self._pending: Optional[BaseException] = None
        self._poisoned = False
        self._streams: Dict[str, Stream] = {}  # by name, for feed(stream=name)
        self._all_streams: List[Stream] = []
        self.finished = False
        self.ruleset = resolve(rules)
        rs_handle = self.ruleset._handle()

        opts, self._keep = _options(
            threads,
            job_start,
            job_end,
            clock_offsets,
            tz,
            max_source_bytes,
            max_decompressed_bytes,
            time_budget,
            retry=dict(
                max_restarts_per_rule=max_restarts_per_rule,
                max_restarts_per_host=max_restarts_per_host,
                restart_window=restart_window,
            ),
            job_state=job_state,
            job_exit_status=job_exit_status,
        )
        # The ctypes thunks must live as long as the session: kept on self.
        # They reach the session through a weak reference (no cycle, so the
        # finaliser runs as soon as the last reference goes). A progress
        # thunk is always installed: running a little Python during long
        # scans lets Ctrl-C (KeyboardInterrupt) cancel them.
        wself = weakref.ref(self)
        self._on_evidence = on_evidence
        self._on_progress = on_progress
        self._ev_cb = _ffi.EVIDENCE_CB(_evidence_thunk(wself)) if on_evidence else _ffi.EVIDENCE_CB()
        self._pr_cb = _ffi.PROGRESS_CB(_progress_thunk(wself))
        opts.on_evidence = self._ev_cb
        opts.on_progress = self._pr_cb

        out, err = ctypes.c_void_p(), ctypes.c_void_p()
        rc = _ffi.lib.fl_session_new(ctypes.byref(out), rs_handle.ptr, ctypes.byref(opts), ctypes.byref(err))
        _errors.check_err(rc, err, "cannot create the session")
        ptr = out.value
        if not ptr:  # pragma: no cover - FL_OK always sets *out
            raise _errors.InternalError("fl_session_new returned no session", _ffi.FL_ERR_INTERNAL)
        self._ptr = ptr
        self._finalizer = weakref.finalize(self, _free_session, ptr, rs_handle)

    # -- callbacks (run on the calling thread; ctypes re-acquires the GIL)

    def _callback_failed(self, e: BaseException) -> None:
        # Never let an exception unwind through C: keep it, stop the scan,
        # re-raise once the library call returns.
        if self._pending is None:
            self._pending = e
        self._cancel_nolock()

    # -- plumbing --------------------------------------------------------------

    def _handle(self) -> int:
        if self._ptr is None:
            raise _errors.InvalidArgumentError("the session is closed", _ffi.FL_ERR_INVALID_ARG)
        return self._ptr

    def _reraise_pending(self) -> None:
        if self._pending is not None:
            e, self._pending = self._pending, None
            self._poisoned = True
            raise e

    def _check(self, rc: int) -> int:
        self._reraise_pending()
        if rc < 0:
            msg = _ffi.lib.fl_session_last_error(self._ptr) if self._ptr else b""
            _errors.raise_status(rc, (msg or b"").decode("utf-8", "replace"))
        return rc

    def _check_usable(self) -> None:
        if self._poisoned:
            raise _errors.CancelledError(
                "the session was cancelled by an exception in a callback", _ffi.FL_ERR_CANCELLED
            )
        self._handle()
        if self.finished:
            raise _errors.InvalidArgumentError("the session is finished", _ffi.FL_ERR_INVALID_ARG)

    def _call(self, fn: Any, *args: Any) -> int:
        if self._poisoned:
            raise _errors.CancelledError(
                "the session was cancelled by an exception in a callback", _ffi.FL_ERR_CANCELLED
            )
        ptr = self._handle()
        with _SigintCancels(self):
            rc = fn(ptr, *args)
        return self._check(rc)

    def _end_progress(self) -> None:
        if self._progress is not None:
            self._progress.close()

    def _feed_id(self, stream_id: int, data: Data) -> None:
        if isinstance(data, str):
            data = data.encode("utf-8")
        if isinstance(data, bytes):
            self._call(_ffi.lib.fl_session_feed, stream_id, data, len(data))
            return
        mv = memoryview(data)
        if not mv.contiguous:
            mv = memoryview(mv.tobytes())
        mv = mv.cast("B")
        if mv.readonly:
            buf: Any = mv.tobytes()
        else:
            buf = (ctypes.c_char * mv.nbytes).from_buffer(mv)
        self._call(_ffi.lib.fl_session_feed, stream_id, buf, mv.nbytes)

    # -- input -----------------------------------------------------------------

    def add_path(self, paths: Paths) -> "Session":
        """Adds a file, a directory (recursively), a .gz/.zst file, or "-" for
        stdin (or a list of them). A path that does not exist raises
        :class:`PathNotFoundError` (a ``FileNotFoundError``); sources that
        exist but cannot be read end up in the report's ``input.errors``,
        with an :class:`InputWarning` from :meth:`finish`."""
        for p in _as_paths(paths):
            if not p:
                raise _errors.InvalidArgumentError("empty path", _ffi.FL_ERR_INVALID_ARG)
            self._call_path(_ffi.lib.fl_session_add_path, p, os.fsencode(p))
        return self

    def _call_path(self, fn: Any, path: str, *args: Any) -> None:
        try:
            self._call(fn, *args)
        except _errors.NotFoundError as e:
            raise _errors.PathNotFoundError(e.message, e.code, path) from None

    def add_range(self, path: PathLike, begin: int, end: int, first_line: int = 0) -> "Session":
        """Adds bytes [begin, end) of a regular, uncompressed file, widened to
        whole lines, so ranges cut at any offsets partition the file's lines.
        ``first_line``: 1-based number of the line at ``begin`` if known (0:
        the library counts). For scale-out with :meth:`export_bundle`."""
        if begin < 0 or end < begin or first_line < 0:
            raise _errors.InvalidArgumentError(
                f"bad range [{begin}, {end}) first_line={first_line}", _ffi.FL_ERR_INVALID_ARG
            )
        p = os.fspath(path)
        self._call_path(_ffi.lib.fl_session_add_range, str(p), os.fsencode(p), begin, end, first_line)
        return self

    def open_stream(self, name: str) -> Stream:
        """Opens a pushed stream; ``name`` becomes the evidence's source."""
        sid = ctypes.c_uint32()
        self._call(_ffi.lib.fl_session_stream_open, name.encode(), ctypes.byref(sid))
        st = Stream(self, name, sid.value)
        self._all_streams.append(st)
        self._streams.setdefault(name, st)
        return st

    def stream(self, name: str = DEFAULT_STREAM) -> Stream:
        """The open stream called ``name``, opened on first use."""
        st = self._streams.get(name)
        if st is None or st.closed:
            st = self.open_stream(name)
            self._streams[name] = st
        return st

    def feed(self, data: Data, stream: Union[None, str, Stream] = None) -> None:
        """Pushes bytes into ``stream`` (a Stream, a stream name, or None for
        the default stream "<feed>", opened on first use)."""
        if isinstance(stream, Stream):
            stream.feed(data)
        else:
            self.stream(DEFAULT_STREAM if stream is None else stream).feed(data)

    def flush(self) -> None:
        """Scans the complete lines fed so far on every open stream now
        (see :meth:`Stream.flush`)."""
        for st in self._all_streams:
            if not st.closed:
                st.flush()

    def _flush_streams(self) -> None:
        if self._ptr is None or self._poisoned:
            return
        for st in self._all_streams:
            if not st.closed:
                st._push()

    def scan(self) -> None:
        """Scans every path added so far now (``finish()`` does it anyway)."""
        self._call(_ffi.lib.fl_session_scan)

    @property
    def error_count(self) -> int:
        """Number of sources that could not be read so far."""
        return int(_ffi.lib.fl_session_error_count(self._handle()))

    @property
    def last_error(self) -> str:
        """The library's last message on this session ("" if none)."""
        return (_ffi.lib.fl_session_last_error(self._handle()) or b"").decode("utf-8", "replace")

    def finish(self) -> Report:
        """Scans what is left, closes open streams, correlates, and returns
        the report. The session takes no more input afterwards.

        Paths that yielded no log at all (an empty directory, only unreadable
        files) raise :class:`FaultlineIOError`; when only some sources could
        not be read, the report covers the others and an
        :class:`InputWarning` names the ones that failed."""
        return self._finish(stacklevel=3)

    def _finish(self, stacklevel: int) -> Report:
        try:
            self._flush_streams()
            out = ctypes.c_void_p()
            self._call(_ffi.lib.fl_session_finish, ctypes.byref(out))
        finally:
            self._end_progress()
        self.finished = True
        for st in self._all_streams:
            st.closed = True
        report = Report._from_handle(out.value)  # type: ignore[arg-type]
        errs = report.input.errors
        if errs:
            shown = "; ".join(f"{e.source}: {e.message}" for e in errs[:5])
            more = f" and {len(errs) - 5} more" if len(errs) > 5 else ""
            warnings.warn(
                _errors.InputWarning(f"{len(errs)} input(s) could not be read, the report covers the rest: {shown}{more}"),
                stacklevel=stacklevel,
            )
        return report

    def snapshot(self) -> Report:
        """The report of what the session has found so far, without ending
        it (``fl_session_snapshot``): for following a live job. Pending
        paths are scanned and every complete line fed to an open stream is
        included; a trailing partial line waits for its newline. The session
        goes on taking input, and a later snapshot or ``finish()`` sees
        everything. Costs a copy of the evidence kept and a correlation:
        call it at a cadence, not per line."""
        self._flush_streams()
        out = ctypes.c_void_p()
        self._call(_ffi.lib.fl_session_snapshot, ctypes.byref(out))
        return Report._from_handle(out.value)  # type: ignore[arg-type]

    def add_prior_bundle(self, data: bytes) -> None:
        """Gives the session an earlier attempt of the same job, as
        :meth:`export_bundle` returned it from that attempt's session
        (``fl_session_add_prior_bundle``): call once per attempt, oldest
        first, before :meth:`finish`. The report then lists the attempts
        (``Report.attempts``) and what recurs (``Incident.recurrence``). At
        most 16 bundles of 64 MiB each; past that, or for bytes that are not
        a bundle of this ruleset, :class:`InvalidArgumentError` or
        :class:`ParseError` with the library's message."""
        buf = bytes(data)
        self._call(_ffi.lib.fl_session_add_prior_bundle, ctypes.c_char_p(buf), ctypes.c_size_t(len(buf)))

    def export_bundle(self) -> bytes:
        """Scans what is left and returns everything found as an evidence
        bundle (bytes) instead of correlating; combine bundles with
        :func:`report_from_bundles`. The session takes no more input."""
        data, n = ctypes.c_void_p(), ctypes.c_size_t()
        try:
            self._flush_streams()
            self._call(_ffi.lib.fl_session_export_bundle, ctypes.byref(data), ctypes.byref(n))
        finally:
            self._end_progress()
        self.finished = True
        for st in self._all_streams:
            st.closed = True
        try:
            return ctypes.string_at(data.value, n.value) if data.value else b""
        finally:
            _ffi.lib.fl_free(data)

    # -- lifetime --------------------------------------------------------------

    def _cancel_nolock(self) -> None:
        if self._ptr is not None:
            _ffi.lib.fl_session_cancel(self._ptr)

    def cancel(self) -> None:
        """Asks a running scan to stop soon; any thread, any time."""
        with self._lock:
            self._cancel_nolock()

    def close(self) -> None:
        """Frees the session. Safe to call more than once."""
        self._end_progress()
        with self._lock:
            self._ptr = None
            if self._finalizer is not None:
                self._finalizer()
        for st in self._all_streams:
            st.closed = True

    @property
    def closed(self) -> bool:
        return self._ptr is None

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else ("finished" if self.finished else "open")
        return f"<faultline.Session {state} ruleset={self.ruleset.name if not self.ruleset.closed else '?'!r}>"


def diagnose(
    paths: Paths,
    rules: RulesLike = None,
    threads: Optional[int] = None,
    job_start: Optional[TimeLike] = None,
    job_end: Optional[TimeLike] = None,
    clock_offsets: Optional[Mapping[str, Union[float, timedelta]]] = None,
    tz: Optional[str] = None,
    on_evidence: Optional[EvidenceCallback] = None,
    on_progress: Optional[ProgressCallback] = None,
    progress: ProgressLike = None,
    max_source_bytes: Optional[int] = None,
    max_decompressed_bytes: Optional[int] = None,
    time_budget: Optional[Union[float, timedelta]] = None,
    max_restarts_per_rule: Optional[int] = None,
    max_restarts_per_host: Optional[int] = None,
    restart_window: Optional[Union[float, timedelta]] = None,
    job_state: Optional[str] = None,
    job_exit_status: Optional[int] = None,
) -> Report:
    """Diagnoses files and directories (what ``faultline diagnose PATH...``
    does) and returns the report.

    A path that does not exist raises :class:`PathNotFoundError` (a
    ``FileNotFoundError``); input that yields no log at all (an empty
    directory, only unreadable files) raises :class:`FaultlineIOError`. When
    some sources cannot be read, the report covers the others, lists them in
    ``report.input.errors``, and an :class:`InputWarning` is issued.

    ``progress=True`` shows a progress bar (tqdm when installed), and
    ``progress=callable`` is called with ``(done, total)`` input bytes; see
    :class:`Session`. Ctrl-C (a notebook's interrupt) stops the scan with
    ``KeyboardInterrupt``."""
    with Session(
        rules=rules,
        threads=threads,
        job_start=job_start,
        job_end=job_end,
        clock_offsets=clock_offsets,
        tz=tz,
        on_evidence=on_evidence,
        on_progress=on_progress,
        progress=progress,
        max_source_bytes=max_source_bytes,
        max_decompressed_bytes=max_decompressed_bytes,
        time_budget=time_budget,
        max_restarts_per_rule=max_restarts_per_rule,
        max_restarts_per_host=max_restarts_per_host,
        restart_window=restart_window,
        job_state=job_state,
        job_exit_status=job_exit_status,
    ) as s:
        s.add_path(paths)
        return s._finish(stacklevel=3)


def report_from_bundles(
    bundles: Sequence[Union[bytes, bytearray, memoryview]],
    rules: RulesLike = None,
    job_start: Optional[TimeLike] = None,
    job_end: Optional[TimeLike] = None,
    clock_offsets: Optional[Mapping[str, Union[float, timedelta]]] = None,
    tz: Optional[str] = None,
    max_restarts_per_rule: Optional[int] = None,
    max_restarts_per_host: Optional[int] = None,
    restart_window: Optional[Union[float, timedelta]] = None,
    job_state: Optional[str] = None,
    job_exit_status: Optional[int] = None,
) -> Report:
    """Correlates evidence bundles (from :meth:`Session.export_bundle`, over
    the same ruleset, in source order: ranges of one file in file order) into
    one report, as if one session had scanned everything. The retry policy
    is :class:`Session`'s."""
    rs = resolve(rules)
    retry = dict(
        max_restarts_per_rule=max_restarts_per_rule,
        max_restarts_per_host=max_restarts_per_host,
        restart_window=restart_window,
    )
    opts, keep = _options(
        None, job_start, job_end, clock_offsets, tz, retry=retry, job_state=job_state, job_exit_status=job_exit_status
    )
    bufs = [bytes(b) for b in bundles]
    n = len(bufs)
    ptrs = (ctypes.c_void_p * max(n, 1))()
    lens = (ctypes.c_size_t * max(n, 1))()
    for i, b in enumerate(bufs):
        ptrs[i] = ctypes.cast(ctypes.c_char_p(b), ctypes.c_void_p)
        lens[i] = len(b)
    out, err = ctypes.c_void_p(), ctypes.c_void_p()
    rc = _ffi.lib.fl_report_from_bundles(
        ctypes.byref(out), rs._handle().ptr, ctypes.byref(opts), ptrs, lens, n, ctypes.byref(err)
    )
    _errors.check_err(rc, err, "cannot correlate the bundles")
    del keep, bufs
    return Report._from_handle(out.value)  # type: ignore[arg-type]
