"""How the job ended, as the caller knows it: ``job_state`` and
``job_exit_status`` (fl_session_options.job_state/job_exit_status; the CLI's
--job-state/--job-exit-status). Two ranks' logs that just stop give no
incident; a stated failure or a running job does."""
from __future__ import annotations

from pathlib import Path

import pytest

import faultline


def _rank_log(rank: int, host: str, minutes: list) -> str:
    out = [f"{host}:{2100 + rank}:{2100 + rank} [0] NCCL INFO NCCL version 2.21.5+cuda12.4"]
    for n, m in enumerate(minutes):
        out.append(
            f"[rank{rank}]:[titan] 2026-11-20 09:{m:02d}:00,000 - root - INFO - step: {100 + n}  "
            f"loss:  2.{n:04d}  memory: 44.10GiB(55.13%)  tps: 3,101  mfu: 40.10%"
        )
    return "\n".join(out) + "\n"


@pytest.fixture
def cut_logs(tmp_path: Path) -> Path:
    (tmp_path / "rank0.log").write_text(_rank_log(0, "gpu-a01", [0, 1, 2, 3]))
    (tmp_path / "rank1.log").write_text(_rank_log(1, "gpu-a02", [0, 1]))
    return tmp_path


def test_unstated_gives_no_incident(cut_logs: Path) -> None:
    r = faultline.diagnose(cut_logs)
    assert r.primary is None
    assert r.input.job is None


@pytest.mark.parametrize(
    "state, rule",
    [("OUT_OF_MEMORY", "slurm-oom-kill-event"), ("timeout", "slurm-time-limit"), ("running", "training-silent-hang")],
)
def test_a_stated_end_leads_with_the_rank_that_stopped_first(cut_logs: Path, state: str, rule: str) -> None:
    r = faultline.diagnose(cut_logs, job_state=state, job_exit_status=-9)
    assert r.primary is not None and r.primary.rule == rule
    assert r.primary.initiating.rank == 1
    assert r.input.job == {"state": state.lower().replace("out_of_memory", "oom"), "exit_status": -9}


def test_completed_gives_no_incident(cut_logs: Path) -> None:
    r = faultline.diagnose(cut_logs, job_state="completed", job_exit_status=0)
    assert r.primary is None
    assert r.input.job == {"state": "completed", "exit_status": 0}


@pytest.mark.parametrize(
    "kwargs", [{"job_state": "bogus"}, {"job_state": "Failed"}, {"job_exit_status": 256}, {"job_exit_status": -65}]
)
def test_bad_values_are_refused(cut_logs: Path, kwargs: dict) -> None:
    with pytest.raises(ValueError):
        faultline.diagnose(cut_logs, **kwargs)
