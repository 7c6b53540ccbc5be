"""GPU kernel lines of a boot that ended before the job started (issue #18:
no hardware verdict on a negative).

`journalctl -k` over more than one boot prints a separator where the boot
changes: "-- Boot <boot id> --" since systemd pull request #17475 (2020),
"-- Reboot --" before it. A job's log bundle often carries the
node's whole kernel journal, and with it an Xid that took a GPU off the bus
before the node was rebooted and the job scheduled on it. Such a line is
over before the run, however close to its start it was logged, so it is
ignored ("earlier boot"); a job that was already running before the reboot
keeps the line as its cause.

A shared node's kernel log also reports GPUs the job does not use. When
NCCL's init lines give every rank's GPU (busId), an Xid on another bus of a
job host is ignored ("another GPU"); an Xid on a rank's bus, or on a host
where some rank's GPU is unknown, is kept.

The kernel lines are the driver's wording as posted in public threads
(NVIDIA/NVSentinel#155: "NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off
the bus"; NVIDIA/open-gpu-kernel-modules#1150 for the pid= form), the
separators as journalctl prints them (systemd/systemd#24950, #17475).
"""
import json

from conftest import diagnose_path, run

TRAIN_AFTER_REBOOT = """\
2026-11-02 10:00:01,000 INFO Starting training run
2026-11-02 10:00:05,000 INFO epoch 1 step 100/1000 loss 2.31
2026-11-02 10:30:05,000 INFO epoch 1 step 500/1000 loss 1.91
2026-11-02 11:00:05,000 INFO epoch 1 step 1000/1000 loss 1.52
2026-11-02 11:00:06,000 INFO Training complete
"""

EARLIER_BOOT_XID = """\
Nov 02 09:20:11 gpu-node-7 kernel: NVRM: Xid (PCI:0000:44:00): 79, pid=1818990, name=python3, GPU has fallen off the bus.
Nov 02 09:20:11 gpu-node-7 kernel: NVRM: GPU 0000:44:00.0: GPU has fallen off the bus.
{separator}
Nov 02 09:41:02 gpu-node-7 kernel: Linux version 5.15.0-91-generic (buildd@lcy02-amd64-045)
Nov 02 09:41:30 gpu-node-7 kernel: nvidia-nvlink: Nvlink Core is being initialized, major device number 508
"""

SEPARATORS = ["-- Boot bc3fc4659c554110994ad36deade2c2c --", "-- Reboot --"]


def bundle(tmp_path, train, journal):
    (tmp_path / "train.log").write_text(train)
    (tmp_path / "journal-k.txt").write_text(journal)
    return tmp_path


def report(faultline_bin, validate, path):
    """The whole report (diagnose_path gives only its incidents)."""
    doc = json.loads(run(faultline_bin, "diagnose", "--json", str(path)).stdout)
    validate(doc)
    return doc


def test_xid_of_an_earlier_boot_is_not_the_healthy_jobs(faultline_bin, validate, tmp_path):
    for n, sep in enumerate(SEPARATORS):
        d = tmp_path / str(n)
        d.mkdir()
        doc = report(faultline_bin, validate,
                     bundle(d, TRAIN_AFTER_REBOOT, EARLIER_BOOT_XID.format(separator=sep)))
        assert [i["rule"] for i in doc["incidents"] if i.get("layer") == "hardware"] == [], sep
        reasons = [g["reason"] for g in doc["ignored"] if g["rule"] == "xid-79-fallen-off-bus"]
        assert reasons and all(r.startswith("earlier boot") for r in reasons), (sep, reasons)


def test_job_running_before_the_reboot_keeps_its_xid(faultline_bin, validate, tmp_path):
    train = """\
2026-11-02 09:00:01,000 INFO Starting training run
2026-11-02 09:10:05,000 INFO epoch 1 step 100/1000 loss 2.31
2026-11-02 09:20:05,000 INFO epoch 1 step 200/1000 loss 2.11
"""
    found = diagnose_path(faultline_bin, validate,
                          bundle(tmp_path, train, EARLIER_BOOT_XID.format(separator=SEPARATORS[0])))
    assert found and found[0]["rule"] == "xid-79-fallen-off-bus", [i["rule"] for i in found[:2]]


def test_xid_of_the_current_boot_is_kept(faultline_bin, validate, tmp_path):
    journal = """\
Nov 02 08:20:11 gpu-node-7 kernel: Linux version 5.15.0-91-generic (buildd@lcy02-amd64-045)
-- Boot bc3fc4659c554110994ad36deade2c2c --
Nov 02 09:41:02 gpu-node-7 kernel: Linux version 5.15.0-91-generic (buildd@lcy02-amd64-045)
Nov 02 10:30:11 gpu-node-7 kernel: NVRM: Xid (PCI:0000:44:00): 79, pid=1818990, name=python3, GPU has fallen off the bus.
"""
    train = TRAIN_AFTER_REBOOT.splitlines(keepends=True)
    found = diagnose_path(faultline_bin, validate, bundle(tmp_path, "".join(train[:3]), journal))
    assert found and found[0]["rule"] == "xid-79-fallen-off-bus", [i["rule"] for i in found[:2]]


# NCCL's init lines name each rank's GPU by busId ("18000" is 0000:18:00.0);
# with every rank's known, an Xid on another bus of the same host is another
# job's GPU, or an idle one, on a shared node.
TRAIN_WITH_BUSES = """\
2026-11-02 10:00:01,000 INFO Starting training run
gpu-node-7:2211:2211 [0] NCCL INFO comm 0x55d0c0a0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 18000 commId 0x5a1e1f2b3c4d5e6f - Init COMPLETE
gpu-node-7:2212:2212 [1] NCCL INFO comm 0x55d0c0b0 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 2a000 commId 0x5a1e1f2b3c4d5e6f - Init COMPLETE
2026-11-02 10:00:05,000 INFO epoch 1 step 100/1000 loss 2.31
2026-11-02 10:30:05,000 INFO epoch 1 step 500/1000 loss 1.91
"""
DONE = """\
2026-11-02 11:00:05,000 INFO epoch 1 step 1000/1000 loss 1.52
2026-11-02 11:00:06,000 INFO Training complete
"""


def xid_on(bus):
    return (f"Nov 02 10:20:11 gpu-node-7 kernel: NVRM: Xid (PCI:0000:{bus}:00): 79, pid=1818990, "
            "name=python3, GPU has fallen off the bus.\n")


def test_xid_on_a_gpu_outside_the_jobs_is_not_its(faultline_bin, validate, tmp_path):
    doc = report(faultline_bin, validate, bundle(tmp_path, TRAIN_WITH_BUSES + DONE, xid_on("dc")))
    assert [i["rule"] for i in doc["incidents"] if i.get("layer") == "hardware"] == []
    assert [g["reason"] for g in doc["ignored"]] == ["another GPU: not one of the job's GPUs on its host"]


def test_xid_on_a_jobs_gpu_is_kept(faultline_bin, validate, tmp_path):
    found = diagnose_path(faultline_bin, validate, bundle(tmp_path, TRAIN_WITH_BUSES, xid_on("2a")))
    assert found and found[0]["rule"] == "xid-79-fallen-off-bus", [i["rule"] for i in found[:2]]


def test_xid_kept_when_a_ranks_gpu_is_unknown(faultline_bin, validate, tmp_path):
    # Only rank 0's init line: rank 1's GPU may be the one at 0000:dc:00.0.
    train = "".join(line for line in TRAIN_WITH_BUSES.splitlines(keepends=True) if "rank 1 " not in line)
    found = diagnose_path(faultline_bin, validate, bundle(tmp_path, train, xid_on("dc")))
    assert found and found[0]["rule"] == "xid-79-fallen-off-bus", [i["rule"] for i in found[:2]]


def test_xid_above_the_separators_of_a_reversed_journal_is_kept(faultline_bin, validate, tmp_path):
    # journalctl -r: the current boot first, newest line on top.
    journal = """\
Nov 02 10:30:11 gpu-node-7 kernel: NVRM: Xid (PCI:0000:44:00): 79, pid=1818990, name=python3, GPU has fallen off the bus.
Nov 02 09:41:02 gpu-node-7 kernel: Linux version 5.15.0-91-generic (buildd@lcy02-amd64-045)
-- Boot bc3fc4659c554110994ad36deade2c2c --
Nov 02 08:20:11 gpu-node-7 kernel: Linux version 5.15.0-91-generic (buildd@lcy02-amd64-045)
"""
    train = TRAIN_AFTER_REBOOT.splitlines(keepends=True)
    found = diagnose_path(faultline_bin, validate, bundle(tmp_path, "".join(train[:3]), journal))
    assert found and found[0]["rule"] == "xid-79-fallen-off-bus", [i["rule"] for i in found[:2]]
