"""A job's history from Python: an earlier attempt's bundle given to the
next attempt's session, the attempts and the recurrence in the report."""

from __future__ import annotations

import pytest

import faultline

STEP = (
    "[rank3]:[titan] 2026-11-02 {hour:02d}:{minute:02d}:00,000 - root - INFO - step: {step}  loss:  2.1000  "
    "memory: 61.20GiB(77.32%)  tps: 6,321  tflops: 366.06  mfu: 37.01%\n"
)
OOM = (
    "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total "
    "capacity of 79.15 GiB of which 1.23 GiB is free.\n"
)


def feed_attempt(s: faultline.Session, hour: int) -> None:
    """Rank 3 on node02 logs steps 1100-1200 and runs out of memory."""
    text = "".join(STEP.format(hour=hour, minute=k, step=1100 + 50 * k) for k in range(3)) + OOM
    with s.stream("node02/train.log") as st:
        st.feed(text.encode())


def test_prior_bundle_attempts_and_recurrence() -> None:
    with faultline.Session() as s:
        feed_attempt(s, 9)
        first = s.export_bundle()
    with faultline.Session() as s:
        s.add_prior_bundle(first)
        feed_attempt(s, 11)
        report = s.finish()
    assert [(a.label, a.recognised) for a in report.attempts] == [("prior bundle 1", "bundle"),
                                                                  ("this session", "session")]
    assert all(a.primary and a.primary.rule == "cuda-oom" and a.primary.step == 1200 for a in report.attempts)
    assert report.attempts[0].start < report.attempts[1].start
    primary = report.incidents[0]
    assert (primary.attempt, primary.step) == (1, 1200)
    assert primary.recurrence == faultline.Recurrence(attempts=[0], same_host=1, same_step=1)
    assert primary.recurrence.recurred and "Recurrence:" in primary.explanation
    earlier = next(i for i in report.incidents if i.attempt == 0)
    assert not earlier.recurrence.recurred


def test_single_run_has_no_attempts() -> None:
    with faultline.Session() as s:
        feed_attempt(s, 9)
        report = s.finish()
    assert report.attempts == []
    assert report.incidents[0].step == 1200 and report.incidents[0].attempt == 0
    assert not report.incidents[0].recurrence.recurred


def test_prior_bundle_refused() -> None:
    with faultline.Session() as s:
        with pytest.raises(faultline.ParseError, match="prior bundle 1"):
            s.add_prior_bundle(b"not a bundle")
    with faultline.Session() as s:
        feed_attempt(s, 9)
        bundle = s.export_bundle()
    with faultline.Session() as s:
        for _ in range(16):
            s.add_prior_bundle(bundle)
        with pytest.raises(faultline.InvalidArgumentError, match="at most 16"):
            s.add_prior_bundle(bundle)
