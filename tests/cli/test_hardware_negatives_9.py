"""The ninth hardware-negatives audit (tests/cli/endings/hw9-*.log; issue #18:
no hardware verdict, and no node drained, for a failure that is no GPU's).

One mechanism the audit led to. A container started without the driver:
the NVIDIA container runtime hook reported that it could not set the
container up (libnvidia-container's `nvidia-container-cli: initialization
error: load library failed: libnvidia-ml.so.1: ...`, which docker quotes in
its `OCI runtime create failed` line), and nvidia-smi inside the container
said `NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA
driver`. gpu-init-failure read nvidia-smi's line as a GPU that failed to
initialise (category GPU Hardware, drain the host). The driver was never
made reachable in that container: gpu-init-failure's nvidia-smi signal now
marks the line (field `no_driver`), unrecognised-fatal-error's container
runtime signal marks the runtime's failure (field `container_setup`), and a
`no_driver` line in logs that hold such a failure leaves the evidence
(src/correlate/window.cc); the runtime's error leads. nvidia-smi's line with
no runtime failure in the logs, and the kernel's own report of a failed
bring-up (RmInitAdapter failed), keep their verdict.

A counterpart the audit found unread: GPUd's health reason for an Xid
(`XID 79(GPU has fallen off the bus) detected on PCI:...`, its xid
component's format, shared with its sxid component's `SXID <n>(<name>)
detected on <device>`) is now one of xid-79-fallen-off-bus's monitor
signals, beside the k8s device plugin's and DCGM's: the GPU that fell off
the bus keeps its hardware verdict whichever monitor reported it.

The lines are the printers' formats as the rules' examples give them; the
sequences are assembled for the purpose.
"""
import json
import pathlib

import pytest

from conftest import diagnose_report

ENDINGS = pathlib.Path(__file__).resolve().parent / "endings"
INDEX = json.loads((ENDINGS / "index.json").read_text())
HW9 = sorted(n for n in INDEX if n.startswith("hw9-"))

REASON = "nvidia-smi inside a container the NVIDIA container runtime reported it could not set up"

SMI = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
       "Make sure that the latest NVIDIA driver is installed and running.\n")
CLI_NVML = ("nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown.\n")
DOCKER_OCI = ("docker: Error response from daemon: failed to create shim task: OCI runtime create failed: "
              "runc create failed: unable to start container process: error during container init: "
              "error running hook #0: error running hook: exit status 1, stdout: , stderr: "
              "nvidia-container-cli: mount error: file creation failed: /var/lib/docker/overlay2/merged/usr/bin/"
              "nvidia-smi: file exists: unknown.\n")
NVC_INIT = ("I0418 18:12:58.648174 217303 nvc.c:376] initializing library context "
            "(version=1.17.4, build=5e135c17d6dbae861ec343e9a8d3a0d2af758a4f)\n")
RMINIT = "[  113.674376] NVRM: GPU 0000:00:06.0: RmInitAdapter failed! (0x11:0x45:2540)\n"


def diagnose(faultline_bin, validate, tmp_path, text, name="job.log"):
    log = tmp_path / name
    log.write_text(text)
    return diagnose_report(faultline_bin, validate, log)


def rules(doc):
    return [i["rule"] for i in doc["incidents"]]


def gated(doc, rule="gpu-init-failure"):
    return [g["reason"] for g in doc["ignored"] if g["rule"] == rule]


def first_line(doc):
    """The initiating evidence of the first incident, its lines joined."""
    return "\n".join(e["text"] for e in doc["incidents"][0]["initiating"]["evidence"])


# --- nvidia-smi in a container the runtime could not set up --------------------

@pytest.mark.parametrize("runtime", [CLI_NVML, DOCKER_OCI], ids=["cli-nvml", "docker-oci-mount"])
@pytest.mark.parametrize("order", ["smi-first", "runtime-first"])
def test_no_driver_in_a_container_that_was_not_set_up_is_no_gpu_init_failure(
        faultline_bin, validate, tmp_path, runtime, order):
    text = SMI + runtime if order == "smi-first" else runtime + SMI
    doc = diagnose(faultline_bin, validate, tmp_path, "[root@3f2a91c07d5e /]# nvidia-smi\n" + text)
    assert "gpu-init-failure" not in rules(doc), rules(doc)
    assert gated(doc) == [REASON], doc["ignored"]
    assert doc["incidents"], "the runtime's own failure leads"
    assert "nvidia-container-cli:" in first_line(doc), first_line(doc)
    assert all(i.get("category") != "GPU Hardware" for i in doc["incidents"]), rules(doc)


def test_the_runtime_failure_in_another_file_still_explains_nvidia_smi(faultline_bin, validate, tmp_path):
    (tmp_path / "daemon.log").write_text(CLI_NVML)
    (tmp_path / "job.log").write_text(SMI)
    doc = diagnose_report(faultline_bin, validate, tmp_path / "daemon.log", tmp_path / "job.log")
    assert "gpu-init-failure" not in rules(doc), rules(doc)
    assert gated(doc) == [REASON], doc["ignored"]


# --- counterparts: the verdict stays -------------------------------------------

def test_nvidia_smi_alone_keeps_its_verdict(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, SMI)
    assert rules(doc)[:1] == ["gpu-init-failure"], rules(doc)
    assert gated(doc) == []


def test_the_runtime_initialising_is_no_runtime_failure(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, NVC_INIT + SMI)
    assert rules(doc)[:1] == ["gpu-init-failure"], rules(doc)
    assert gated(doc) == []


def test_the_kernels_failed_bring_up_keeps_its_verdict_beside_a_runtime_failure(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, RMINIT + CLI_NVML + SMI)
    assert rules(doc)[:1] == ["gpu-init-failure"], rules(doc)
    assert "RmInitAdapter failed" in first_line(doc), first_line(doc)


# --- the audit's endings ---------------------------------------------------------

def test_the_audits_container_ending_leads_with_the_runtime(faultline_bin, validate):
    doc = diagnose_report(faultline_bin, validate, ENDINGS / "hw9-manylinux-container-nvidia-smi-nvml-missing.log")
    assert "gpu-init-failure" not in rules(doc), rules(doc)
    assert "nvidia-container-cli: initialization error: load library failed" in first_line(doc)


@pytest.mark.parametrize("name", [n for n in HW9 if not INDEX[n]["failed"]])
def test_hw9_negative_gets_no_incident(faultline_bin, validate, name):
    doc = diagnose_report(faultline_bin, validate, ENDINGS / f"{name}.log")
    assert doc["incidents"] == [], rules(doc)


HW9_HARDWARE = ["hw9-gpud-xid79-gpu-is-lost-remapped-rows", "hw9-dcgm-exporter-nvidia-smi-device-handle-unknown-error"]


@pytest.mark.parametrize("name", [n for n in HW9 if INDEX[n]["failed"] and n not in HW9_HARDWARE])
def test_hw9_failure_of_no_gpu_gets_no_hardware_verdict(faultline_bin, validate, name):
    doc = diagnose_report(faultline_bin, validate, ENDINGS / f"{name}.log")
    assert all(i.get("layer") != "hardware" and i.get("category") != "GPU Hardware"
               for i in doc["incidents"]), rules(doc)


# --- GPUd's word for an Xid 79 ----------------------------------------------------

GPUD_79 = "XID 79(GPU has fallen off the bus) detected on PCI:0000:3b:00\n"


def test_gpuds_xid_79_is_a_gpu_off_the_bus(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, GPUD_79)
    assert rules(doc)[:1] == ["xid-79-fallen-off-bus"], rules(doc)
    assert doc["incidents"][0]["layer"] == "hardware"


@pytest.mark.parametrize("line", ["SXID 79(Unknown) detected on 0x3c7a0a2b1f\n",
                                  "XID 13(Graphics Engine Exception) detected on PCI:0000:3b:00\n"],
                         ids=["sxid", "xid13"])
def test_gpuds_other_reasons_are_no_gpu_off_the_bus(faultline_bin, validate, tmp_path, line):
    doc = diagnose(faultline_bin, validate, tmp_path, line)
    assert "xid-79-fallen-off-bus" not in rules(doc), rules(doc)


def test_hw9_gpud_ending_keeps_its_hardware_verdict(faultline_bin, validate):
    doc = diagnose_report(faultline_bin, validate, ENDINGS / "hw9-gpud-xid79-gpu-is-lost-remapped-rows.log")
    assert rules(doc)[:1] == ["xid-79-fallen-off-bus"], rules(doc)
    assert doc["incidents"][0]["layer"] == "hardware"


def test_hw9_lost_gpu_keeps_its_hardware_verdict(faultline_bin, validate):
    doc = diagnose_report(faultline_bin, validate, ENDINGS / "hw9-dcgm-exporter-nvidia-smi-device-handle-unknown-error.log")
    assert rules(doc)[:1] == ["nvidia-smi-gpu-lost"], rules(doc)
    assert doc["incidents"][0]["category"] == "GPU Hardware"
