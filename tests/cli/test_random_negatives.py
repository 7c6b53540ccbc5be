"""Runs that did not fail, taken at random rather than for a theme, from the
random-sample negatives audit (tests/cli/endings/ng5-*.log; issue #18: no
incident on a healthy run): vLLM and SGLang servers answering requests or
starting with warnings, benchmark results, DeepSpeed's import warnings and
config print, Megatron iterations, nccl-tests headers and NCCL INFO lines,
warnings a thread calls harmless, and teardown noise after a completed run.

- No ng5 negative gets an incident the run did not survive.
- TensorBoard's signal handler (tensorboard/program.py,
  _install_signal_handler) prints 'TensorBoard caught <signal>; exiting...',
  runs its atexit handlers and exits 0. Training scripts that start TensorBoard
  as a child stop it that way at their own end, so the line says a viewer was
  stopped, not that the job was asked to stop: it is no termination notice.
  A script's own 'Caught SIGTERM' and a scheduler's cancel next to
  TensorBoard's line keep their verdict.
"""
import json
import pathlib

import pytest

from conftest import diagnose_path, diagnose_text

ENDINGS = pathlib.Path(__file__).resolve().parent / "endings"
INDEX = json.loads((ENDINGS / "index.json").read_text())
NG5 = sorted(n for n in INDEX if n.startswith("ng5-"))
SIGTERM = "Graceful Shutdown Missing"


def live(found):
    """The incidents the run did not survive, Benign ones left out."""
    return [i for i in found
            if not i.get("reference", "").startswith("Benign")
            and not (i.get("initiating") or {}).get("survived", False)]


@pytest.mark.parametrize("name", NG5)
def test_ng5_negative_has_no_incident(faultline_bin, validate, name):
    assert not INDEX[name]["failed"]
    found = diagnose_path(faultline_bin, validate, ENDINGS / f"{name}.log")
    assert live(found) == [], [(i["rule"], i["layer"]) for i in live(found)]


# zhou13/lcnn#29: the last line of a training run that finished; the
# script's TensorBoard child was stopped as it exited.
def test_tensorboard_stopped_at_the_end_is_no_termination(faultline_bin, validate):
    found = diagnose_path(faultline_bin, validate, ENDINGS / "neg-tensorboard-caught-sigterm-at-end.log")
    assert live(found) == [], [(i["rule"], i.get("reference")) for i in found]


# sigterm-received's examples: a script's own handler line, and Slurm's cancel
# banner with TensorBoard's line after it (the viewer stopped with the job).
@pytest.mark.parametrize("text", [
    "2026-11-02 13:46:41,201 - train - WARNING - Caught SIGTERM, saving checkpoint before exit\n",
    "slurmstepd: error: *** JOB 88231 ON node017 CANCELLED AT 2026-11-02T13:46:41 ***\n"
    "TensorBoard caught SIGTERM; exiting...\n",
])
def test_the_jobs_own_stop_keeps_its_verdict(faultline_bin, validate, tmp_path, text):
    found = diagnose_text(faultline_bin, validate, tmp_path, text)
    assert found and found[0]["reference"] == SIGTERM, [(i["rule"], i.get("reference")) for i in found]
