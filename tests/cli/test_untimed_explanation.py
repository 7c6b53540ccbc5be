"""An incident whose first line has no time says why: a kernel line stamped
only with seconds since boot (`[ 12.5]`) is "not anchored to wall time"; a
line with no stamp at all (a command's output pasted into a log) carries no
timestamp, and the explanation must not blame a kernel stamp it never had."""
from conftest import first_incident

# nvidia-smi's own wording after a driver upgrade without a reboot.
NVML = "Failed to initialize NVML: Driver/library version mismatch"
# The kernel's wording for the same mismatch (open-gpu-kernel-modules, nv.c).
NVRM = ("[   58.220431] NVRM: API mismatch: the client has the version 535.161.07, "
        "but this kernel module has the version 535.129.03.  Please make sure that this "
        "kernel module and all NVIDIA driver components have the same version.")


def test_a_line_without_a_stamp_is_not_called_an_unanchored_kernel_stamp(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, "$ nvidia-smi\n" + NVML + "\n")
    assert "carries no timestamp" in inc["explanation"], inc["explanation"]
    assert "kernel stamp" not in inc["explanation"], inc["explanation"]


def test_a_kernel_line_stamped_since_boot_is_unanchored(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, NVRM + "\n", name="dmesg.log")
    assert "kernel stamp not anchored to wall time" in inc["explanation"], inc["explanation"]
