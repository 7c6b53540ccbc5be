"""Hardware- and network-looking lines in runs and machines that did not fail,
and failed runs whose cause is not the hardware though such lines appear,
from the sixteenth endings audit (tests/cli/endings, e16-*.log; issue #18:
no hardware verdict on a negative):

- The open NVIDIA kernel module of drivers 515 to 555 initialises only GPUs
  of data center branding unless NVreg_OpenRmEnableUnsupportedGpus is set.
  On any other GPU RmInitAdapter prints "NVRM: Open nvidia.ko is only ready
  for use on Data Center GPUs." with a hint at the parameter and gives the
  GPU up (RM_INIT_FIRMWARE_INIT_FAILED, so "RmInitAdapter failed! (0x63:...)"
  follows; src/nvidia/arch/nvalloc/unix/src/osinit.c). The GPU is healthy:
  the module flavour or its parameter is the cause, so that line leads and
  the RmInitAdapter failure is its collateral, not a GPU that fails to
  initialise.
- NCCL prints every InfiniBand async event but the connection's own as a
  WARN (net_ib.cc's ncclIbAsyncThreadMain: "Got async event : %s" in old
  versions, "Got non-fatal async event: %s(%d)" and "GID table changed" in
  new ones); of those only a port error says a link went down. The subnet
  manager's client re-registration, an SM change, a port coming back
  active and a GID table change are informational, and so is UCX's same
  report (it prints them as diagnostics since openucx/ucx#7349).
"""
import json
import pathlib

import pytest

from conftest import diagnose_path, diagnose_text, leading_incident

ENDINGS = pathlib.Path(__file__).resolve().parent / "endings"
INDEX = json.loads((ENDINGS / "index.json").read_text())

# RmInitAdapter's own lines, 525.60.11's open module on a GeForce GPU.
OPEN_RM_DECLINED = (
    "[    7.039628] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  525.60.11  Release Build  "
    "(dvs-builder@U16-T01-9-2)  Wed Nov 23 23:04:11 UTC 2022\n"
    "[    9.062105] NVRM: Open nvidia.ko is only ready for use on Data Center GPUs.\n"
    "[    9.062106] NVRM: To force use of Open nvidia.ko on other GPUs, see the\n"
    "[    9.062107] NVRM: 'OpenRmEnableUnsupportedGpus' kernel module parameter described\n"
    "[    9.062107] NVRM: in the README.\n"
    "[    9.371220] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x63:0x0:1905)\n"
    "[    9.374112] NVRM: GPU 0000:01:00.0: rm_init_adapter failed, device minor number 0\n"
)


def live(found):
    """The incidents a report says the job did not survive."""
    return [i for i in found if not (i.get("initiating") or {}).get("survived", False)
            and not i.get("reference", "").startswith("Benign")]


def test_open_module_declining_the_gpu_leads_its_rminitadapter_failure(faultline_bin, validate, tmp_path):
    inc = leading_incident(faultline_bin, validate, tmp_path, OPEN_RM_DECLINED, rule="open-rm-unsupported-gpu",
                           line="Open nvidia.ko is only ready for use on Data Center GPUs")
    assert inc["layer"] == "driver" and inc["action"]["kind"] == "stop", inc["action"]
    found = diagnose_text(faultline_bin, validate, tmp_path, OPEN_RM_DECLINED, name="dmesg.log")
    assert [i["rule"] for i in found] == ["open-rm-unsupported-gpu"], [(i["rule"], i["initiating"]) for i in found]


def test_rminitadapter_failing_on_its_own_is_still_a_gpu_that_fails_to_initialise(faultline_bin, validate,
                                                                                    tmp_path):
    text = "\n".join(line for line in OPEN_RM_DECLINED.splitlines() if "Open nvidia.ko" not in line
                     and "OpenRmEnableUnsupportedGpus" not in line and "README" not in line) + "\n"
    leading_incident(faultline_bin, validate, tmp_path, text, rule="gpu-init-failure", line="RmInitAdapter failed!")


@pytest.mark.parametrize("line", [
    "gpu1:5021:5386 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : client reregistration",
    "gpu-b02:77120:77141 [3] transport/net_ib.cc:160 NCCL WARN NET/IB : mlx5_3:1 Got non-fatal async event: "
    "port active(9)",
    "node017:12345:12360 [0] NCCL WARN NET/IB : mlx5_3:1 Got non-fatal async event: SM change(15)",
    "node017:12345:12360 [0] transport/net_ib.cc:150 NCCL WARN NET/IB : mlx5_0:1 GID table changed",
    "[1630842634.549719] [node01:33913:1]      ib_device.c:482  UCX  WARN  IB Async event on mlx5_0: client "
    "reregistration on port 1",
], ids=["nccl-client-reregistration", "nccl-port-active", "nccl-sm-change", "nccl-gid-change",
        "ucx-client-reregistration"])
def test_informational_infiniband_async_events_after_init_are_no_incident(faultline_bin, validate, tmp_path,
                                                                          line):
    text = ("gpu1:5028:5378 [7] NCCL INFO comm 0x443814b0 rank 7 nranks 8 cudaDev 7 busId d6000 - Init COMPLETE\n"
            "\n" + line + "\n")
    found = diagnose_text(faultline_bin, validate, tmp_path, text)
    assert live(found) == [], [(i["rule"], i["initiating"]) for i in found]


@pytest.mark.parametrize("name", sorted(n for n in INDEX if n.startswith("e16-") and not INDEX[n]["failed"]))
def test_no_incident_on_a_sixteenth_audit_negative(faultline_bin, validate, name):
    found = diagnose_path(faultline_bin, validate, ENDINGS / f"{name}.log")
    assert live(found) == [], [(i["rule"], i["layer"], i["initiating"]) for i in found]


@pytest.mark.parametrize("name", sorted(n for n in INDEX if n.startswith("e16-") and INDEX[n]["failed"]))
def test_no_hardware_verdict_on_a_sixteenth_audit_failure_the_thread_puts_elsewhere(faultline_bin, validate, name):
    found = diagnose_path(faultline_bin, validate, ENDINGS / f"{name}.log")
    assert live(found), "no incident"
    hardware = [i for i in found if i.get("layer") in ("hardware", "network")]
    assert hardware == [], [(i["rule"], i["initiating"]) for i in hardware]
