"""A GPU whose driver cannot boot its GSP firmware at load time failed to
initialise: the RM's boot-path errors (open-gpu-kernel-modules,
kernel_gsp.c's 'cannot bootstrap riscv/gsp', kernel_gsp_gh100.c / _tu102.c's
target-mask and lockdown timeouts and the GSP-FMC boot error) name that,
not nvidia-smi's 'No devices were found' that follows, which alone reads as
a GPU lost mid-run."""
import pytest

from conftest import first_incident

INIT = "GPU fails to initialize after a reset or reboot (RmInitAdapter failed, Xid 143, SPI/PMU Xid 122-124)"

# NVIDIA/nvtrust#52 shows the first line in a confidential VM's dmesg; the
# others are the same boot path's messages as the driver prints them.
BOOT_ERRORS = [
    "[   36.077473] NVRM kgspBootstrapRiscvOSEarly_GH100: Timeout waiting for GSP target mask release. "
    "This error may be caused by several reasons: Bootrom may have failed, GSP init code may have "
    "failed or ACR failed to release target mask. RM does not have access to information on which "
    "of those conditions happened.",
    "[   12.502211] NVRM: kgspBootstrap_GH100: GSP-FMC reported an error while attempting to boot GSP: 0xb",
    "[   12.502301] NVRM: kgspInitRm_IMPL: cannot bootstrap riscv/gsp: 0x65",
]


@pytest.mark.parametrize("line", BOOT_ERRORS)
def test_a_gsp_boot_failure_is_a_gpu_init_failure(faultline_bin, validate, tmp_path, line):
    text = "$ nvidia-smi\nNo devices were found\n" + line + "\n"
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["reference"] == INIT, inc["reference"]
    assert line in [e["text"] for e in inc["initiating"]["evidence"]]
