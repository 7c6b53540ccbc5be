"""The driver's Xid numbers that no rule named (issue #18): a lone kernel line
"NVRM: Xid (PCI:dddd:bb:dd): N, pid=P, name=NAME, <msg>" (krcReportXid's
format in the open kernel modules' kernel_rc.c) whose number the catalog did
not read gave "No incident". The numbers are nverror.h's in the 595 driver;
the mnemonic, description and resolution bucket (immediate action) are
NVIDIA's Xid catalog's (docs.nvidia.com/deploy/xid-errors), for the numbers
it marks as printed on A100, H100, B100 or GB200.

Read as the failure of an existing rule, with the same role as that rule's
numbers:

- Copy engines CE0-CE19: 39, 40, 41, 70, 71, 72, 75, 76, 77, 85, 126-135
  (ROBUST_CHANNEL_CEn_ERROR, "Copy Engine Exception" / "CEn: Unknown
  Error", RESTART_APP). An exception on an engine's channel, like the
  decoder's Xid 68 (RESTART_APP): xid-engine-exception.
- Video and JPEG decoders, optical flow: 83, 84, 88, 89, 96, 97, 98
  (ROBUST_CHANNEL_NVDECn_ERROR), 82, 99-105 (ROBUST_CHANNEL_NVJPGn_ERROR),
  86, 139 (ROBUST_CHANNEL_OFAn_ERROR), all RESTART_APP: the same engine
  exceptions as NVDEC0's Xid 68.
- 60 (ROBUST_CHANNEL_SEC2_ERROR, "Video processor exception", RESTART_APP):
  the SEC2 engine's channel error, an engine exception.
- 80 (PBDMA_PUSHBUFFER_CRC_MISMATCH, "Corrupted data sent to GPU",
  RESTART_APP, investigatory CHECK_APP/CUDA): a corrupted push buffer, the
  same failure and the same buckets as Xid 32.
- 169 (SEC2_HALT_ERROR, "Internal micro-controller halt", no bucket given):
  the description NVIDIA gives the PMU's halt, Xid 62 (RESET_GPU):
  xid-gpu-stopped-reset-required.
- 110 (SEC_FAULT_ERROR, "Security Fault Error", RESET_GPU): the driver logs
  it on a security fault lockdown and shuts the GPU down ("SEC_FAULT lockdown
  detected. This is fatal."): a GPU that needs a reset,
  xid-gpu-stopped-reset-required.
- 155 (NVLINK_SW_DEFINED_ERROR, "NVLINK: SW Defined Error", RESET_GPU): a
  link down the driver flags as software-defined on NVLink5, reset like the
  fatal 144-149 reports: xid-nvlink-error.
- 167 (PCIE_FATAL_TIMEOUT, H100 and later, no bucket given) and 173
  (C2C_FATAL_LINK_FAILURE, not yet in the catalog): the GPU's PCIe or
  chip-to-chip link to its host fails fatally, so the host loses the GPU as
  with Xid 79 (RESTART_BM): xid-79-fallen-off-bus.
- 175 (MEMORY_SUBSYSTEM_ERROR, not yet in the catalog): kernel_gsp.c's
  classification of a GSP RPC timeout when its probe finds the memory
  subsystem stuck; the line is Xid 119's "Timeout after Ns of waiting for RPC
  response" and the GPU is marked for reset: xid-gsp-rpc-timeout.
- 156 (RESOURCE_RETIREMENT_EVENT, RESET_GPU) and 157
  (RESOURCE_RETIREMENT_FAILURE, IGNORE: "You may still run workloads"):
  memory wear, read as context like the row remapper's Xid 63 (IGNORE) in
  xid-row-remap: no incident on their own.

Quiet, as their bucket is IGNORE or they are informational: 160, 161
(CHANNEL_RETIREMENT_EVENT / _FAILURE, IGNORE), 162-165 (PSHC_*, the power
smoothing circuit's state and lifetime), 174
(ROBUST_CHANNEL_RESETCHANNEL_KILL_PROCESS_SILENT, a silent channel kill),
93 (INFOROM_ERASE_LIMIT_EXCEEDED, IGNORE), 141 (ROBUST_CHANNEL_FAST_PATH_ERROR,
IGNORE).

Left unmapped, the fit being unclear: 142 (NVENC3, CONTACT_SUPPORT), 151
(key rotation, confidential computing, RESTART_VM), 159 (CHI non-data error,
CHECK_UVM), 166 and 170 (NVLink secure errors seen only in confidential
computing mode, no bucket), 168 (REDUCED_GPU_MEMORY_CAPACITY, errors in the
write-protected region with ECC off), 176 (PCIE_CORRECTABLE_ERROR_FAULT, not
yet in the catalog).

No posted line of these numbers was found in public threads; the excerpts
are the driver's format with realistic values (the message text the
catalog's description or, for 110 and 175, the driver source's).
"""
import pytest

from conftest import diagnose_text, leading_incident


def xid_line(number, message, pid="pid=48213, name=python3"):
    return f"[Fri Dec  5 03:12:00 2026] NVRM: Xid (PCI:0000:3b:00): {number}, {pid}, {message}\n"


NO_PROCESS = "pid='<unknown>', name=<unknown>"

ENGINE = [
    (39, "CE0: Copy Engine Exception"), (40, "CE1: Copy Engine Exception"), (41, "CE2: Copy Engine Exception"),
    (70, "CE3: Unknown Error"), (71, "CE4: Unknown Error"), (72, "CE5: Unknown Error"),
    (75, "CE6: Unknown Error"), (76, "CE7: Unknown Error"), (77, "CE8: Unknown Error"), (85, "CE9: Unknown Error"),
    (126, "CE10: Unknown Error"), (132, "CE16: Unknown Error"), (135, "CE19: Unknown Error"),
    (83, "NVDEC1 Error"), (89, "NVDEC4 Error"), (98, "NVDEC7 Error"),
    (82, "NVJPG0 Error"), (101, "NVJPG3 Error"), (105, "NVJPG7 Error"),
    (86, "OFA Exception"), (139, "OFA1 Error"),
    (60, "Video processor exception"), (80, "Corrupted data sent to GPU"),
]


@pytest.mark.parametrize("number,message", ENGINE, ids=[str(n) for n, _ in ENGINE])
def test_engine_channel_errors_are_engine_exceptions(faultline_bin, validate, tmp_path, number, message):
    leading_incident(faultline_bin, validate, tmp_path, xid_line(number, message),
                     rule="xid-engine-exception", any_line=f"): {number}, ")


NEWER = [
    (169, "SEC2 halted", "xid-gpu-stopped-reset-required"),
    (110, "SEC_FAULT: _FSP_SCPM", "xid-gpu-stopped-reset-required"),
    (155, "NVLINK: SW Defined Error on link 3", "xid-nvlink-error"),
    (167, "PCIE_FATAL_TIMEOUT", "xid-79-fallen-off-bus"),
    (173, "C2C fatal link failure", "xid-79-fallen-off-bus"),
    (175, "Timeout after 6s of waiting for RPC response from GPU0 GSP! Expected function 76 (GSP_RM_CONTROL) "
          "sequence 1423 (0x20801348 0x4).", "xid-gsp-rpc-timeout"),
]


@pytest.mark.parametrize("number,message,rule", NEWER, ids=[str(n) for n, _, _ in NEWER])
def test_newer_numbers_give_their_failure(faultline_bin, validate, tmp_path, number, message, rule):
    leading_incident(faultline_bin, validate, tmp_path, xid_line(number, message, NO_PROCESS),
                     rule=rule, any_line=f"): {number}, ")


def test_channel_teardown_naming_a_copy_engine_error(faultline_bin, validate, tmp_path):
    # driver 575 and later name the earlier Xid on the Xid 45 that follows it
    text = ("[Fri Dec  5 03:12:00 2026] NVRM: Xid (PCI:0000:3b:00): 45, pid=48213, name=python3, "
            "channel 0x00000008 caused by previous Xid 132\n")
    leading_incident(faultline_bin, validate, tmp_path, text, rule="xid-engine-exception",
                     any_line="caused by previous Xid 132")


QUIET = [
    (156, "Resource Retirement Event"), (157, "Resource Retirement Failure"),
    (160, "Channel Retirement Event"), (161, "Channel Retirement Failure"),
    (162, "PSHC reengaged"), (163, "PSHC disengaged"), (164, "PSHC low lifetime"), (165, "PSHC zero lifetime"),
    (174, "channel 0x00000010"), (93, "InfoROM erase limit exceeded"), (141, "CUDA Fast Path Error"),
]


@pytest.mark.parametrize("number,message", QUIET, ids=[str(n) for n, _ in QUIET])
def test_informational_numbers_stay_quiet(faultline_bin, validate, tmp_path, number, message):
    found = diagnose_text(faultline_bin, validate, tmp_path, xid_line(number, message, NO_PROCESS))
    assert found == [], [inc["rule"] for inc in found]


def test_retirement_event_is_context_of_a_remap_failure(faultline_bin, validate, tmp_path):
    # read like the row remapper's Xid 63: evidence beside a failure, not one
    text = (xid_line(156, "Resource Retirement Event", NO_PROCESS)
            + "[Fri Dec  5 03:12:01 2026] NVRM: Xid (PCI:0000:3b:00): 64, pid='<unknown>', name=<unknown>, "
              "Row Remapper Error: (0x00000002eebc4100) - All reserved rows for bank are remapped\n")
    inc = leading_incident(faultline_bin, validate, tmp_path, text, rule="xid-row-remap", any_line="): 64, ")
    assert "): 156, " not in inc["initiating"]["evidence"][0]["text"]
