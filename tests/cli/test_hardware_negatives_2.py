"""Hardware and network lines in runs and machines that did not fail, and the
same kinds of line where they did, from the second hardware-negatives audit
(tests/cli/endings/hw2-*.log; issue #18: no hardware verdict on a negative):

- Every hw2 negative (nvidia-smi -q sections, corrected AER repeats, EFA and
  libfabric start-up, NCCL over sockets or Libfabric reaching Init or
  Destroy COMPLETE, DCGM profiling errors after an Xid 31 while the GPU
  stays busy, mlxlink and show_gids) gets no hardware- or network-layer
  incident the run did not survive; both hw2 failures (cuCtxCreate's
  CUDA_ERROR_ECC_UNCORRECTABLE, Xid 79) keep their hardware verdict.
- A trainer's own line that it finished (a role:completion rule: the HF
  Trainer's "Training completed. Do not forget to share your model on
  huggingface.co/models =)", torchtitan's "Training completed", the elastic
  agent's "worker group successfully finished") later in the same log means
  the run went on to its normal end after whatever the kernel, the driver or
  NCCL printed before it: that line was survived, as progress after it
  already made it. A line after the completion is not: the run's end does
  not vouch for what came after it.
"""
import json
import pathlib

import pytest

from conftest import diagnose_path, diagnose_text

ENDINGS = pathlib.Path(__file__).resolve().parent / "endings"
INDEX = json.loads((ENDINGS / "index.json").read_text())
HW2 = sorted(n for n in INDEX if n.startswith("hw2-"))


def live(found, layers=("hardware", "network")):
    """The incidents at those layers that the run did not survive."""
    return [i for i in found
            if i.get("layer") in layers and not (i.get("initiating") or {}).get("survived", False)]


@pytest.mark.parametrize("name", [n for n in HW2 if not INDEX[n]["failed"] and not INDEX[n].get("gap")])
def test_hw2_negative_has_no_hardware_or_network_incident(faultline_bin, validate, name):
    found = diagnose_path(faultline_bin, validate, ENDINGS / f"{name}.log")
    assert live(found) == [], [(i["rule"], i["layer"]) for i in live(found)]


@pytest.mark.parametrize("name", [n for n in HW2 if INDEX[n]["failed"]])
def test_hw2_failure_keeps_its_hardware_verdict(faultline_bin, validate, name):
    found = diagnose_path(faultline_bin, validate, ENDINGS / f"{name}.log")
    assert found and found[0]["layer"] == "hardware", [(i["rule"], i["layer"]) for i in found[:2]]
    assert not (found[0].get("initiating") or {}).get("survived", False)


# Lines as their programs print them: the kernel's AER driver at a root port
# (drivers/pci/pcie/aer.c, 5.x words), NCCL's IB async event thread
# (net_ib.cc), and the NVIDIA driver's Xid 79 (open-gpu-kernel-modules#1010).
HARDWARE_LINES = [
    "[ 5210.004113] pcieport 0000:40:01.1: AER: Uncorrectable (Fatal) error message received from 0000:41:00.0",
    "node48:34050:34121 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port error",
    "april 24 16:22:15 robin-linux-x3d kernel: NVRM: Xid (PCI:0000:01:00): 79, pid=6755, name=vivaldi-bin, "
    "GPU has fallen off the bus.",
]

# The completion lines of training-completed's examples.
COMPLETIONS = [
    "[INFO|trainer.py:2383] 2024-06-28 18:35:58,120 >> Training completed. Do not forget to share your model "
    "on huggingface.co/models =)",
    "[rank0]:[titan] 2025-06-04 13:40:11,402 - root - INFO - Training completed",
    "INFO:torch.distributed.elastic.agent.server.api:[default] worker group successfully finished. "
    "Waiting 300 seconds for other agents to finish.",
]


@pytest.mark.parametrize("line,done", list(zip(HARDWARE_LINES, COMPLETIONS)))
def test_a_line_the_run_completed_after_was_survived(faultline_bin, validate, tmp_path, line, done):
    found = diagnose_text(faultline_bin, validate, tmp_path, line + "\n" + done + "\n")
    assert live(found, ("hardware", "network", "driver")) == [], \
        [(i["rule"], i["layer"]) for i in live(found, ("hardware", "network", "driver"))]


@pytest.mark.parametrize("line", HARDWARE_LINES)
def test_a_line_after_the_completion_still_counts(faultline_bin, validate, tmp_path, line):
    found = diagnose_text(faultline_bin, validate, tmp_path, COMPLETIONS[0] + "\n" + line + "\n")
    assert live(found), [(i["rule"], i["layer"]) for i in found[:2]]
