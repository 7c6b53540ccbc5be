"""The eighth hardware-negatives audit (tests/cli/endings/hw8-*.log; issue #18:
no hardware verdict on any negative, and a failure of the application's own
making gets none either).

One mechanism the audit led to. A test kernel of the application wrote to a
bad address: the driver reported the process's MMU fault (Xid 31, pid P),
then a context-switch timeout on that process's channel (Xid 109, pid P,
`errorString CTX SWITCH TIMEOUT`), and xid-gpu-stopped-reset-required's Xid
109 led as a GPU hang asking for a reset. The channel that stopped switching
is the faulting process's: NVIDIA's k8s device plugin and DRA driver list
109 with 13, 31, 43, 45 and 68 as application errors that leave the GPU
healthy. The Xid 109 signal now reads the pid and marks a 109 (field
`ctxsw_timeout`); xid-app-fault's Xid 13, 31 and 43 mark the process's own
fault (field `app_fault`); a 109 whose pid an earlier Xid 13/31/43 of the same
file and GPU names leaves the evidence (src/correlate/window.cc), and the
application's fault leads. A 109 of another process, of no earlier fault, of
an unknown pid, on another GPU, or before the fault stays; so does any other
Xid after the fault (an Xid 79).

The Xid lines are the driver's formats as the rules' examples give them; the
sequences are assembled for the purpose.
"""
import json
import pathlib

import pytest

from conftest import diagnose_report, run as run_cli

ENDINGS = pathlib.Path(__file__).resolve().parent / "endings"
INDEX = json.loads((ENDINGS / "index.json").read_text())
HW8 = sorted(n for n in INDEX if n.startswith("hw8-"))

TIMEOUT_REASON = "the context-switch timeout of a process whose own fault an earlier Xid 13/31/43 reported"


def diagnose(faultline_bin, validate, tmp_path, text, name="kern.log"):
    log = tmp_path / name
    log.write_text(text)
    return diagnose_report(faultline_bin, validate, log)


def rules(doc):
    return [i["rule"] for i in doc["incidents"]]


def gated(doc, rule="xid-gpu-stopped-reset-required"):
    return [g["reason"] for g in doc["ignored"] if g["rule"] == rule]


def xid13(pid, bus="0000:3b:00"):
    return (f"[ 1720.331002] NVRM: Xid (PCI:{bus}): 13, pid={pid}, name=python, Graphics SM Warp Exception "
            "on (GPC 1, TPC 1, SM 1): Out Of Range Address\n")


def xid31(pid, bus="0000:3b:00"):
    return (f"[ 1720.331002] NVRM: Xid (PCI:{bus}): 31, pid={pid}, name=python, channel 0x00000201, "
            "intr 00000000. MMU Fault: ENGINE GRAPHICS GPC0 GPCCLIENT_T1_0 faulted @ 0x70a2_c8000000. "
            "Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE\n")


def xid43(pid, bus="0000:3b:00"):
    return f"[ 1720.334100] NVRM: Xid (PCI:{bus}): 43, pid={pid}, name=python, Ch 00000010\n"


def xid109(pid, bus="0000:3b:00"):
    return (f"[ 1720.336960] NVRM: Xid (PCI:{bus}): 109, pid={pid}, name=python, Ch 00000010, "
            "errorString CTX SWITCH TIMEOUT, Info 0x2c010\n")


XID79 = "[ 1721.002114] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"

FAULTS = [xid13, xid31, xid43]
FAULT_IDS = ["xid13", "xid31", "xid43"]


# --- a context-switch timeout of the faulting process --------------------------

def test_the_audits_kernel_fault_leads_its_timeout(faultline_bin, validate):
    doc = diagnose_report(faultline_bin, validate, ENDINGS / "hw8-quadrants-t4-illegal-address-xid31-xid109.log")
    assert rules(doc)[:1] == ["xid-app-fault"], rules(doc)
    assert gated(doc) == [TIMEOUT_REASON], doc["ignored"]


@pytest.mark.parametrize("fault", FAULTS, ids=FAULT_IDS)
def test_a_timeout_of_the_faulting_process_is_no_gpu_hang(faultline_bin, validate, tmp_path, fault):
    doc = diagnose(faultline_bin, validate, tmp_path, fault(2075) + xid109(2075))
    assert "xid-gpu-stopped-reset-required" not in rules(doc), rules(doc)
    assert gated(doc) == [TIMEOUT_REASON], doc["ignored"]


def test_the_faulting_process_leads_after_its_timeout_is_gated(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, xid31(2075) + xid109(2075))
    assert rules(doc)[:1] == ["xid-app-fault"], rules(doc)


# --- counterparts: the 109 stays ------------------------------------------------

def test_a_timeout_alone_keeps_its_verdict(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, xid109(2075))
    assert rules(doc)[:1] == ["xid-gpu-stopped-reset-required"], rules(doc)
    assert gated(doc) == []


def test_a_timeout_of_another_process_stays(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, xid31(2075) + xid109(4410))
    assert rules(doc)[:1] == ["xid-gpu-stopped-reset-required"], rules(doc)
    assert gated(doc) == []


def test_a_timeout_before_the_fault_stays(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, xid109(2075) + xid31(2075))
    assert rules(doc)[:1] == ["xid-gpu-stopped-reset-required"], rules(doc)
    assert gated(doc) == []


def test_a_timeout_on_another_gpu_stays(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, xid31(2075) + xid109(2075, bus="0000:5e:00"))
    assert "xid-gpu-stopped-reset-required" in rules(doc), rules(doc)
    assert gated(doc) == []


def test_a_fault_of_an_unknown_process_explains_no_timeout(faultline_bin, validate, tmp_path):
    unknown = ("[ 1720.331002] NVRM: Xid (PCI:0000:3b:00): 13, pid='<unknown>', name=<unknown>, "
               "Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter\n")
    doc = diagnose(faultline_bin, validate, tmp_path, unknown + xid109(2075))
    assert rules(doc)[:1] == ["xid-gpu-stopped-reset-required"], rules(doc)
    assert gated(doc) == []


def test_a_fault_in_another_file_explains_no_timeout(faultline_bin, validate, tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "kern.log").write_text(xid31(2075))
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "kern.log").write_text(xid109(2075))
    p = run_cli(faultline_bin, "diagnose", "--json", str(tmp_path / "a" / "kern.log"),
                str(tmp_path / "b" / "kern.log"), check=False)
    assert p.returncode == 0, p.stderr.decode()
    doc = json.loads(p.stdout)
    validate(doc)
    assert "xid-gpu-stopped-reset-required" in rules(doc), rules(doc)
    assert gated(doc) == []


def test_a_gpu_off_the_bus_after_an_app_fault_keeps_its_hardware_verdict(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, xid31(2075) + xid109(2075) + XID79)
    assert rules(doc)[:1] == ["xid-79-fallen-off-bus"], rules(doc)
    assert doc["incidents"][0]["layer"] == "hardware"


# --- the audit's endings ---------------------------------------------------------

@pytest.mark.parametrize("name", [n for n in HW8 if not INDEX[n]["failed"]])
def test_hw8_negative_gets_no_incident(faultline_bin, validate, name):
    doc = diagnose_report(faultline_bin, validate, ENDINGS / f"{name}.log")
    assert doc["incidents"] == [], rules(doc)


HW8_HARDWARE = ["hw8-vllm-runtimeerror-uncorrectable-ecc", "hw8-verl-uncorrectable-ecc-h800-after-steps"]


@pytest.mark.parametrize("name", [n for n in HW8 if INDEX[n]["failed"] and n not in HW8_HARDWARE
                                  and "ipmi" not in n])
def test_hw8_application_failure_gets_no_hardware_verdict(faultline_bin, validate, name):
    doc = diagnose_report(faultline_bin, validate, ENDINGS / f"{name}.log")
    assert doc["incidents"], name
    assert doc["incidents"][0]["rule"] == "xid-app-fault", rules(doc)
    assert all(i.get("layer") != "hardware" for i in doc["incidents"]), rules(doc)


@pytest.mark.parametrize("name", HW8_HARDWARE)
def test_hw8_uncorrectable_ecc_keeps_its_hardware_verdict(faultline_bin, validate, name):
    doc = diagnose_report(faultline_bin, validate, ENDINGS / f"{name}.log")
    assert rules(doc)[:1] == ["xid-ecc-uncorrectable"], rules(doc)
    assert doc["incidents"][0]["layer"] == "hardware"
