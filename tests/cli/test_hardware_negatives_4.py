"""Hardware-looking lines of machines and runs that did not fail, and the same
kinds of line where they did, from the fourth hardware-negatives audit
(tests/cli/endings/hw4-*.log; issue #18: no hardware verdict on a negative):

- Every hw4 negative (machine-check and EDAC corrected-memory reports,
  rasdaemon's summaries, EDAC counters at 0, lspci's link status and AER
  capability registers, nvidia-smi tables and -q sections pasted in reports
  about other things) gets no hardware- or network-layer incident the run
  did not survive; both hw4 failures (an Xid 79 that took a desktop's GPU
  off the bus, Xid 31 then Xid 154's "OS Reboot" on inference cards) keep a
  hardware incident.
- A kernel's hardware line names a GPU, and through NCCL's bus ids a rank,
  whose own lines often state no progress: the trainer logs its steps from
  one rank, or with no rank prefix (Megatron's "iteration N/ M" lines). When
  that rank logged none, the job's progress clearly after the line says the
  job went on after it: no rank of a collective job steps past a collective
  whose member's GPU is gone. A rank that logs its own progress is judged by
  it alone, and progress that stops before the line vouches for nothing.
  The job's completion line (the HF Trainer's "Training completed."),
  stamped clearly after a hardware line of another file, says the same.
- A kernel line of a host none of the ranks ran on, when NCCL's init lines
  give every rank's host and the bundle's kernel logs name a job host too
  (so both spell hosts alike), is another job's ("another host"): a
  cluster's syslog holds every node's. With no kernel log of a job host the
  line is kept: a pod's hostname in NCCL's lines and its node's in the
  kernel's name one machine two ways.
"""
import json
import pathlib

import pytest

from conftest import diagnose_path, run as run_cli

ENDINGS = pathlib.Path(__file__).resolve().parent / "endings"
INDEX = json.loads((ENDINGS / "index.json").read_text())
HW4 = sorted(n for n in INDEX if n.startswith("hw4-"))


def live(found, layers=("hardware", "network")):
    """The incidents at those layers that the run did not survive."""
    return [i for i in found
            if i.get("layer") in layers and not (i.get("initiating") or {}).get("survived", False)]


@pytest.mark.parametrize("name", [n for n in HW4 if not INDEX[n]["failed"] and not INDEX[n].get("gap")])
def test_hw4_negative_has_no_hardware_or_network_incident(faultline_bin, validate, name):
    found = diagnose_path(faultline_bin, validate, ENDINGS / f"{name}.log")
    assert live(found) == [], [(i["rule"], i["layer"]) for i in live(found)]


@pytest.mark.parametrize("name", [n for n in HW4 if INDEX[n]["failed"]])
def test_hw4_failure_keeps_a_hardware_incident(faultline_bin, validate, name):
    found = diagnose_path(faultline_bin, validate, ENDINGS / f"{name}.log")
    assert live(found, ("hardware",)), [(i["rule"], i["layer"]) for i in found[:2]]


# NCCL's init lines give each rank's GPU (busId 44000 is 0000:44:00.0, rank
# 1's); the kernel line is the driver's Xid 79 as posted in public threads
# (NVIDIA/NVSentinel#155, the pid= form of open-gpu-kernel-modules#1150).
INIT = """\
gpu-node-7:2211:2211 [0] NCCL INFO comm 0x55d0c0a0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 18000 commId 0x5a1e1f2b3c4d5e6f - Init COMPLETE
gpu-node-7:2212:2212 [1] NCCL INFO comm 0x55d0c0b0 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 44000 commId 0x5a1e1f2b3c4d5e6f - Init COMPLETE
"""
XID = ("Nov 02 10:20:11 gpu-node-7 kernel: NVRM: Xid (PCI:0000:44:00): 79, pid=1818990, name=python3, "
       "GPU has fallen off the bus.\n")


# training-progress's words: Megatron's iteration line (no rank prefix) and
# torchtitan's step line (rank 0's, or another rank's).
def megatron(clock, it):
    return (f" [2026-11-02 {clock}] iteration      {it}/  500000 | consumed samples:        51200 | "
            "elapsed time per iteration (ms): 812.3 | learning rate: 1.500E-04 | global batch size:   512 | "
            "lm loss: 7.892345E+00 | loss scale: 1.0 | grad norm: 1.234 | number of skipped iterations:   0 | "
            "number of nan iterations:   0 |\n")


def titan(rank, clock, step):
    return (f"[rank{rank}]:[titan] 2026-11-02 {clock},988 - root - INFO - step: {step}  loss:  8.9482  "
            "memory: 30.89GiB(32.51%)  tps: 6,321  tflops: 366.06  mfu: 37.01%\n")


def bundle(faultline_bin, validate, tmp_path, train):
    (tmp_path / "train.log").write_text(INIT + train)
    (tmp_path / "journal-k.txt").write_text(XID)
    return diagnose_path(faultline_bin, validate, tmp_path)


CLOCKS = ["10:00:05", "10:10:05", "10:30:05", "10:50:05"]


def test_job_progress_after_the_line_of_a_rank_without_its_own(faultline_bin, validate, tmp_path):
    for n, write in enumerate([lambda c, s: megatron(c, 100 * s), lambda c, s: titan(0, c, 10 * s)]):
        d = tmp_path / str(n)
        d.mkdir()
        found = bundle(faultline_bin, validate, d, "".join(write(c, s + 1) for s, c in enumerate(CLOCKS)))
        assert live(found) == [], [(i["rule"], i["layer"]) for i in found[:2]]


def test_progress_that_stops_before_the_line_keeps_it(faultline_bin, validate, tmp_path):
    train = "".join(megatron(c, 100 * (s + 1)) for s, c in enumerate(CLOCKS[:2]))
    found = bundle(faultline_bin, validate, tmp_path, train)
    assert found and found[0]["rule"] == "xid-79-fallen-off-bus", [i["rule"] for i in found[:2]]
    assert not found[0]["initiating"].get("survived", False)


def test_the_ranks_own_progress_stopping_keeps_the_line(faultline_bin, validate, tmp_path):
    # Rank 1 logs its steps and stops before the Xid; rank 0 goes on.
    train = "".join(titan(1, c, 10 * (s + 1)) for s, c in enumerate(CLOCKS[:2]))
    train += "".join(titan(0, c, 10 * (s + 1)) for s, c in enumerate(CLOCKS))
    found = bundle(faultline_bin, validate, tmp_path, train)
    assert live(found, ("hardware",)), [(i["rule"], i["layer"]) for i in found[:2]]


# The HF Trainer's start and end, as it logs them (training-completed's
# example for the end).
HF_RUN = """\
[INFO|trainer.py:1812] 2026-11-02 10:00:01,000 >> ***** Running training *****
[INFO|trainer.py:2383] 2026-11-02 11:00:06,120 >> Training completed. Do not forget to share your model on huggingface.co/models =)
"""


def test_the_jobs_completion_after_a_kernel_line_was_survived(faultline_bin, validate, tmp_path):
    (tmp_path / "train.log").write_text(INIT + HF_RUN)
    (tmp_path / "journal-k.txt").write_text(XID)
    found = diagnose_path(faultline_bin, validate, tmp_path)
    assert live(found) == [], [(i["rule"], i["layer"]) for i in found[:2]]


def test_a_kernel_line_after_the_completion_still_counts(faultline_bin, validate, tmp_path):
    (tmp_path / "train.log").write_text(INIT + HF_RUN)
    (tmp_path / "journal-k.txt").write_text(XID.replace("10:20:11", "11:00:40"))
    found = diagnose_path(faultline_bin, validate, tmp_path)
    assert live(found, ("hardware",)), [(i["rule"], i["layer"]) for i in found[:2]]


# A job that failed at application level on gpu-node-7 while gpu-node-9, in
# the same bundle of the nodes' kernel logs, lost a GPU.
FAILED_AT_APP_LEVEL = "".join(megatron(c, 100 * (s + 1)) for s, c in enumerate(CLOCKS[:2])) + """\
Traceback (most recent call last):
  File "pretrain_gpt.py", line 214, in <module>
    pretrain(train_valid_test_datasets_provider, model_provider)
ValueError: Unexpected key(s) in state_dict: "decoder.final_layernorm.bias".
"""
JOB_HOST_KERNEL = ("Nov 02 09:41:02 gpu-node-7 kernel: nvidia-nvlink: Nvlink Core is being initialized, "
                   "major device number 508\n")
OTHER_HOST_XID = ("Nov 02 10:12:11 gpu-node-9 kernel: NVRM: Xid (PCI:0000:44:00): 79, pid=1818990, name=python3, "
                  "GPU has fallen off the bus.\n")


def report(faultline_bin, validate, path):
    doc = json.loads(run_cli(faultline_bin, "diagnose", "--json", str(path)).stdout)
    validate(doc)
    return doc


def test_xid_of_a_host_outside_the_job_is_not_its(faultline_bin, validate, tmp_path):
    (tmp_path / "train.log").write_text(INIT + FAILED_AT_APP_LEVEL)
    for host, text in [("gpu-node-7", JOB_HOST_KERNEL), ("gpu-node-9", OTHER_HOST_XID)]:
        (tmp_path / host).mkdir()
        (tmp_path / host / "dmesg.log").write_text(text)
    doc = report(faultline_bin, validate, tmp_path)
    assert [i["rule"] for i in doc["incidents"] if i.get("layer") == "hardware"] == []
    assert [g["reason"] for g in doc["ignored"] if g["rule"] == "xid-79-fallen-off-bus"] == \
        ["another host: none of the job's ranks ran on it"]


def test_xid_of_an_unknown_host_kept_without_a_job_hosts_kernel_log(faultline_bin, validate, tmp_path):
    (tmp_path / "train.log").write_text(INIT + FAILED_AT_APP_LEVEL)
    (tmp_path / "gpu-node-9").mkdir()
    (tmp_path / "gpu-node-9" / "dmesg.log").write_text(OTHER_HOST_XID)
    found = diagnose_path(faultline_bin, validate, tmp_path)
    assert live(found, ("hardware",)), [(i["rule"], i["layer"]) for i in found[:2]]
