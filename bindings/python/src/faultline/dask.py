"""Scale-out on Dask distributed: map scans over workers, reduce once.

A 16k-GPU job leaves terabytes of logs; one machine is not enough to read
them in time. ``faultline.dask.diagnose`` splits big plain files into byte
ranges (line-aligned by the library at both ends), scans every range or
whole file as its own task on the Dask workers, gathers the evidence bundles
they export, and correlates them once on the client. The report equals the
one ``faultline.diagnose`` gives on the same inputs: same incidents, evidence,
counts and ignored entries.

>>> from dask.distributed import Client
>>> import faultline.dask
>>> report = faultline.dask.diagnose("/archive/job-1234/", client=Client("scheduler:8786"))

Every worker needs the ``faultline`` package (and so libfaultline) and must
see the input paths (a shared file system or the same mount on every node).
No cluster code lives here: any Dask deployment works (``dask scheduler`` /
``dask worker``, dask-jobqueue on Slurm, dask-kubernetes, a LocalCluster).
"""

from __future__ import annotations

import glob as _glob
import os
import warnings
from typing import Any, Iterable, List, Optional, Sequence, Tuple, Union

from ._errors import FaultlineIOError, InputWarning, PathNotFoundError
from ._ffi import FL_ERR_IO, FL_ERR_NOT_FOUND
from ._report import Report
from ._session import Session, report_from_bundles

PathLike = Union[str, "os.PathLike[str]"]

#: Compressed files are streams: they cannot be split into byte ranges.
_STREAM_SUFFIXES = (".gz", ".zst")


def _expand(paths_or_glob: Union[PathLike, Iterable[PathLike]]) -> List[str]:
    """Files in the order the library reads them: each argument in turn (a
    glob pattern expands to its sorted matches), a directory to every regular
    file below it sorted by path."""
    items = [paths_or_glob] if isinstance(paths_or_glob, (str, os.PathLike)) else list(paths_or_glob)
    out: List[str] = []
    for item in items:
        p = os.fspath(item)
        matches = sorted(_glob.glob(p, recursive=True)) if _glob.has_magic(p) else [p]
        if not _glob.has_magic(p) and not os.path.lexists(p):
            raise PathNotFoundError(f"{p}: no such file or directory", FL_ERR_NOT_FOUND, p)
        for m in matches:
            if os.path.isdir(m):
                found = []
                for root, dirs, files in os.walk(m, followlinks=False):
                    for name in files:
                        full = os.path.join(root, name)
                        if os.path.isfile(full):
                            found.append(full)
                out.extend(sorted(found))
            else:
                out.append(m)
    return out


def plan(paths_or_glob: Union[PathLike, Iterable[PathLike]],
         partition_bytes: int = 256 << 20) -> List[Tuple[str, int, int]]:
    """The scan tasks: (path, begin, end) byte ranges of plain files larger
    than ``partition_bytes``, and (path, 0, -1) for whole files (small ones,
    compressed ones, ones whose size cannot be read)."""
    if partition_bytes <= 0:
        raise ValueError("partition_bytes must be positive")
    tasks: List[Tuple[str, int, int]] = []
    for path in _expand(paths_or_glob):
        try:
            size = os.stat(path).st_size
        except OSError:
            tasks.append((path, 0, -1))  # the scan reports the error, naming the file
            continue
        if path.endswith(_STREAM_SUFFIXES) or size <= partition_bytes:
            tasks.append((path, 0, -1))
            continue
        for begin in range(0, size, partition_bytes):
            tasks.append((path, begin, min(size, begin + partition_bytes)))
    return tasks


def scan_task(path: str, begin: int, end: int, rules: Optional[str] = None, threads: int = 1,
              tz: Optional[str] = None) -> bytes:
    """Runs on a worker: scans one file or byte range, returns its bundle."""
    with Session(rules=rules, threads=threads, tz=tz) as s:
        if end < 0:
            s.add_path(path)
        else:
            # first_line=0: the library counts the newlines before `begin`
            # itself (a memchr-speed pass), so line numbers stay exact.
            s.add_range(path, begin, end, 0)
        return s.export_bundle()


def diagnose(
    paths_or_glob: Union[PathLike, Iterable[PathLike]],
    client: Any = None,
    partition_bytes: int = 256 << 20,
    rules: Optional[str] = None,
    threads_per_task: int = 1,
    job_start: Any = None,
    job_end: Any = None,
    clock_offsets: Any = None,
    tz: Optional[str] = None,
    progress: bool = False,
) -> Report:
    """Diagnoses the inputs on a Dask cluster and returns the same
    :class:`~faultline.Report` as :func:`faultline.diagnose`.

    ``client`` is a ``dask.distributed.Client`` (default: the current one).
    ``rules`` is a compiled ruleset or rule source path every worker can
    read, or None for the embedded default. ``progress`` shows Dask's own
    progress bar while the scans run.
    """
    from dask.distributed import default_client

    client = client or default_client()
    tasks = plan(paths_or_glob, partition_bytes)
    if not tasks:
        raise FaultlineIOError(f"no log to diagnose in {paths_or_glob} (no file found)", FL_ERR_IO)
    futures = client.map(
        scan_task,
        [t[0] for t in tasks],
        [t[1] for t in tasks],
        [t[2] for t in tasks],
        rules=rules,
        threads=threads_per_task,
        tz=tz,
        pure=False,
    )
    if progress:
        from dask.distributed import progress as _progress

        _progress(futures)
    bundles: Sequence[bytes] = client.gather(futures)
    report = report_from_bundles(list(bundles), rules=rules, job_start=job_start, job_end=job_end,
                                 clock_offsets=clock_offsets, tz=tz)
    # What faultline.diagnose does with bad input, for the merged report.
    errs = report.input.errors
    if errs and report.input.bytes == 0 and len({e.source for e in errs}) >= report.input.sources:
        raise FaultlineIOError(f"no log to diagnose in {paths_or_glob} ({errs[0].source}: {errs[0].message})",
                               FL_ERR_IO)
    if errs:
        shown = "; ".join(f"{e.source}: {e.message}" for e in errs[:5])
        more = f" and {len(errs) - 5} more" if len(errs) > 5 else ""
        warnings.warn(InputWarning(f"{len(errs)} input(s) could not be read, the report covers the rest: {shown}{more}"),
                      stacklevel=2)
    return report


__all__ = ["diagnose", "plan", "scan_task"]
