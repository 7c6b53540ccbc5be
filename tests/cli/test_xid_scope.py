"""GPU kernel lines of a boot that ended before the job started (issue #18:
no hardware verdict on a negative).

`journalctl -k` over more than one boot prints a separator where the boot
changes: "-- Boot <boot id> --" since systemd v247 (systemd pull request
#17475), "-- Reboot --" before it. A job's log bundle often carries the
node's whole kernel journal, and with it an Xid that took a GPU off the bus
before the node was rebooted and the job scheduled on it. Such a line is
over before the run, however close to its start it was logged, so it is
ignored ("earlier boot"); a job that was already running before the reboot
keeps the line as its cause.

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
