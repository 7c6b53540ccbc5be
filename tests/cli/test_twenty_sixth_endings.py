"""Endings the twenty-sixth endings audit (tests/cli/endings, e26-*.log, a
random sample of threads) read wrong, read where the program that printed
them writes them (issue #18):

- Ray's raylet reports a worker that died under a task as one long line,
  'A worker died or was killed while executing a task by an unexpected
  system error. To troubleshoot the problem, check the logs for the dead
  worker. RayTask ID: ... Worker PID: ...' (node_manager.cc), which the
  driver's worker.py logs as a WARNING. A post that word-wraps it can break
  it right after 'killed', the rest on the lines below and each field on a
  line of its own; the signal read the report only with its first sentence
  whole on one line, so such a job's ending gave no incident.
- The report Ray's 0.x releases printed, 'A worker died or was killed while
  executing task <id>.', came at a program's normal exit too (ray#8000: a
  RaySGD run that then printed 'success!'), so it is still not read.
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # stevietrouble/EfficientZero#2: the GPU worker crashed as training
    # began; the report as posted, word-wrapped after 'killed'.
    "ray-worker-died-report-word-wrapped": ("""\
2022-07-07 19:05:41,609 WARNING worker.py:1404 -- A worker died or was killed
while executing a task by an unexpected system error. To troubleshoot the
problem, check the logs for the dead worker. 
RayTask ID: ffffffffffffffff2aeefb9774b8f9463ffdfd8101000000
Worker ID: 21602417afb8b58af6db10cb511242afac87db0eb5b09f5606320616 
Node ID: 51e55bca411e9e811bf5c67089cbf9867f5f8374c2fce4a8370c987c 
Worker IP address: *
Worker port: *
Worker PID: 6218
""", "A worker died or was killed"),
}

HEALTHY = {
    # ray-project/ray#8000: Ray 0.8's report for a worker stopped as a RaySGD
    # sample finished, and the sample's own success line after it.
    "ray-0.8-worker-died-at-normal-exit": """\
{'num_samples': 50028, 'batch_count': 18, 'val_loss': 2.35442571170307, 'last_val_loss': 2.343980312347412, 'val_accuracy': 0.11257695690413369, 'last_val_accuracy': 0.10204081632653061}
2020-04-13 15:35:00,032 WARNING worker.py:1072 -- A worker died or was killed while executing task ffffffffffffffff45b95b1c0100.
success!
""",
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_ending_leads(faultline_bin, validate, tmp_path, name):
    text, initiating = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=initiating)


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_healthy_ending_has_no_incident(faultline_bin, validate, tmp_path, name):
    assert not diagnose_text(faultline_bin, validate, tmp_path, HEALTHY[name])
