"""Errors the hardware corrected are no fault of a job that did not fail (the
sixth hardware-negatives audit, tests/cli/endings/hw6-*.log; issue #18: no
hardware verdict on a negative).

The driver's Xid 92 ("High single-bit ECC error rate") reports single-bit ECC
errors the GPU corrected; NVIDIA's Xid catalog marks it non-critical for that
reason. DCGM's DCGM_FR_VOLATILE_SBE_DETECTED ("More than N single-bit ECC
error(s) detected in GPU N Volatile SBEs: M", dcgm_errors.h) counts the same
corrected errors against a threshold. xid-92-high-sbe-rate read either line
alone as a hardware incident, so a healthy run's kernel log or health check
holding one got a hardware verdict. Those signals now carry the field
`corrected`, and such a line is left out of the evidence ("corrected by the
hardware, and nothing in the logs failed") when no line of the logs is a
failure (an initiating line, a fallback rule's line). When something did fail
it stays: corrected errors may lead up to an uncorrectable one, and an
uncorrectable error, a GPU off the bus or the application's own ECC error keeps
its hardware verdict (the counterparts below held before and hold after). The
k8s device plugin's "XidCriticalError: Xid=92 ... marking device as unhealthy"
keeps its verdict: the plugin took the GPU out of service on it.

A PCIe error the kernel recovered from is no fault either. The kernel's AER
driver reports how its recovery of the error it last reported ended
(drivers/pci/pcie/err.c since 5.x: "AER: device recovery successful" or
"... failed"; aerdrv_core.c before it: "AER: Device recovery successful"); it
reports a device whose driver has no error_detected callback (the NVIDIA
driver on 5.x and later) as failed. pcie-aer-uncorrectable-gpu's new context
signal reads that outcome (field `recovery`), and an uncorrectable line of
the rule whose next outcome in its file is "successful" leaves the evidence
("recovered: ..."); one followed by "failed", by the driver's "can't
recover", or by no outcome keeps its verdict.

The lines are the tools' formats: the Xid 92 lines as the rule's examples give
them (open-gpu-kernel-modules prints "NVRM: Xid (PCI:...): 92, pid=..., name=...,
<message>"), DCGM's health message as dcgm_errors.h writes it, the Xid 48/79/94
lines in NVRM's form and PyTorch's CUDA error as the runtime words it; the
sequences are assembled for the purpose.
"""
import json
import pathlib

import pytest

from conftest import run as run_cli

ENDINGS = pathlib.Path(__file__).resolve().parent / "endings"
INDEX = json.loads((ENDINGS / "index.json").read_text())

XID92 = ("[Tue Aug  4 14:21:52 2026] NVRM: Xid (PCI:0000:0a:00): 92, pid=48213, name=python, "
         "High single-bit ECC error rate\n")
XID92_STORM = ("[Tue Aug  4 14:21:53 2026] NVRM: Xid (PCI:0000:0a:00): 92, pid='<unknown>', name=<unknown>, "
               "Disabling ECC single-bit error interrupts in framebuffer at logical partition 5, due to high "
               "error rate\n")
DCGM_SBE = "Warning: GPU 3 More than 10 single-bit ECC error(s) detected in GPU 3 Volatile SBEs: 88\n"
K8S_XID92 = "XidCriticalError: Xid=92 on Device=GPU-d23d91a3; marking device as unhealthy.\n"

XID48 = ("[Tue Aug  4 14:25:10 2026] NVRM: Xid (PCI:0000:0a:00): 48, pid=48213, name=python, "
         "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, "
         "subpartition 0.\n")
XID79 = ("[Tue Aug  4 14:25:10 2026] NVRM: Xid (PCI:0000:0a:00): 79, pid='<unknown>', name=<unknown>, "
         "GPU has fallen off the bus.\n")
XID94 = ("[Tue Aug  4 14:25:10 2026] NVRM: Xid (PCI:0000:0a:00): 94, pid=48213, name=python, "
         "Contained: SM (0x1). RST: No, D-RST: No\n")
APP_ECC = """\
Traceback (most recent call last):
  File "train.py", line 88, in <module>
    loss.backward()
RuntimeError: CUDA error: uncorrectable ECC error encountered
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
"""


AER_NONFATAL = """\
[ 5012.331220] pcieport 0000:00:03.1: AER: Uncorrected (Non-Fatal) error received: 0000:0a:00.0
[ 5012.331241] nvidia 0000:0a:00.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer, (Requester ID)
[ 5012.331244] nvidia 0000:0a:00.0:   device [10de:2204] error status/mask=00004000/00000000
[ 5012.331247] nvidia 0000:0a:00.0:    [14] CmpltTO                (First)
[ 5012.331311] pcieport 0000:00:03.1: AER: broadcast error_detected message
[ 5012.331316] pcieport 0000:00:03.1: AER: broadcast mmio_enabled message
[ 5012.331320] pcieport 0000:00:03.1: AER: broadcast resume message
"""
RECOVERED = "[ 5012.331325] pcieport 0000:00:03.1: AER: device recovery successful\n"
RECOVERED_OLD = "[ 5012.331325] pcieport 0000:00:03.1: AER: Device recovery successful\n"
NOT_RECOVERED = "[ 5012.331325] pcieport 0000:00:03.1: AER: device recovery failed\n"
CANT_RECOVER = "[ 5012.331250] nvidia 0000:0a:00.0: AER: can't recover (no error_detected callback)\n"


def diagnose(faultline_bin, validate, tmp_path, text, name="kern.log"):
    log = tmp_path / name
    log.write_text(text)
    p = run_cli(faultline_bin, "diagnose", "--json", str(log), check=False)
    assert p.returncode == 0, p.stderr.decode()
    doc = json.loads(p.stdout)
    validate(doc)
    return doc


def hardware(doc):
    return [i["rule"] for i in doc["incidents"] if i.get("layer") == "hardware"]


def gated(doc, rule="xid-92-high-sbe-rate"):
    return [g["reason"] for g in doc["ignored"] if g["rule"] == rule]


# --- corrected errors, nothing failed: no hardware verdict ---------------------

def test_xid92_alone_is_no_hardware_verdict(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, XID92 + XID92_STORM)
    assert hardware(doc) == [], hardware(doc)
    assert doc["incidents"] == [], [i["rule"] for i in doc["incidents"]]
    assert gated(doc) and all("corrected" in r for r in gated(doc)), gated(doc)


def test_dcgm_single_bit_threshold_alone_is_no_hardware_verdict(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, DCGM_SBE, name="dcgm.log")
    assert hardware(doc) == [], hardware(doc)


@pytest.mark.parametrize("outcome", [RECOVERED, RECOVERED_OLD])
def test_an_aer_error_the_kernel_recovered_is_no_hardware_verdict(faultline_bin, validate, tmp_path, outcome):
    doc = diagnose(faultline_bin, validate, tmp_path, AER_NONFATAL + outcome)
    assert hardware(doc) == [], hardware(doc)
    assert any("recovered" in r for r in gated(doc, "pcie-aer-uncorrectable-gpu")), doc["ignored"]


# --- something failed: the hardware verdict stands (counterparts) --------------

@pytest.mark.parametrize("after", [NOT_RECOVERED, CANT_RECOVER + NOT_RECOVERED, ""])
def test_an_aer_error_not_recovered_keeps_its_verdict(faultline_bin, validate, tmp_path, after):
    doc = diagnose(faultline_bin, validate, tmp_path, AER_NONFATAL + after)
    assert hardware(doc) == ["pcie-aer-uncorrectable-gpu"], hardware(doc)


def test_a_later_aer_error_with_no_outcome_keeps_its_verdict(faultline_bin, validate, tmp_path):
    later = AER_NONFATAL.replace("5012.", "5099.")
    doc = diagnose(faultline_bin, validate, tmp_path, AER_NONFATAL + RECOVERED + later)
    assert hardware(doc) == ["pcie-aer-uncorrectable-gpu"], hardware(doc)


def test_a_recovered_aer_error_does_not_hide_a_later_xid(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, XID79 + AER_NONFATAL + RECOVERED)
    assert doc["incidents"] and doc["incidents"][0]["rule"] == "xid-79-fallen-off-bus", \
        [i["rule"] for i in doc["incidents"]]



def test_xid92_then_a_double_bit_error_keeps_the_ecc_verdict(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, XID92 + XID48)
    assert doc["incidents"], doc
    assert doc["incidents"][0]["rule"] == "xid-ecc-uncorrectable", [i["rule"] for i in doc["incidents"]]
    assert not gated(doc), gated(doc)


def test_xid92_then_the_applications_ecc_error_keeps_the_ecc_verdict(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, XID92 + APP_ECC)
    assert doc["incidents"], doc
    assert doc["incidents"][0]["layer"] == "hardware", [(i["rule"], i["layer"]) for i in doc["incidents"]]
    assert not gated(doc), gated(doc)


def test_the_device_plugin_taking_the_gpu_out_keeps_its_verdict(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, K8S_XID92, name="device-plugin.log")
    assert hardware(doc), [(i["rule"], i["layer"]) for i in doc["incidents"]]


@pytest.mark.parametrize("line,rule", [(XID79, "xid-79-fallen-off-bus"), (XID48, "xid-ecc-uncorrectable"),
                                       (XID94, "xid-ecc-uncorrectable")])
def test_a_real_hardware_xid_still_leads(faultline_bin, validate, tmp_path, line, rule):
    doc = diagnose(faultline_bin, validate, tmp_path, XID92 + line)
    assert doc["incidents"] and doc["incidents"][0]["rule"] == rule, [i["rule"] for i in doc["incidents"]]
    assert doc["incidents"][0]["layer"] == "hardware"


# --- the audit's excerpts ------------------------------------------------------

HW6 = sorted(n for n in INDEX if n.startswith("hw6-"))


@pytest.mark.parametrize("name", [n for n in HW6 if not INDEX[n]["failed"]])
def test_hw6_negative_gets_no_hardware_verdict(faultline_bin, validate, tmp_path, name):
    doc = diagnose(faultline_bin, validate, tmp_path, (ENDINGS / f"{name}.log").read_text())
    assert hardware(doc) == [], hardware(doc)


@pytest.mark.parametrize("name", [n for n in HW6 if INDEX[n]["failed"]])
def test_hw6_non_hardware_failure_gets_no_hardware_verdict(faultline_bin, validate, tmp_path, name):
    doc = diagnose(faultline_bin, validate, tmp_path, (ENDINGS / f"{name}.log").read_text())
    assert hardware(doc) == [], hardware(doc)
