"""Misses from the thirty-third corpus batch's work part:

- A HIP error check prints the runtime's string for the error it got:
  PyTorch's ROCm build 'HIP error: invalid device function' (its CUDA
  build's 'CUDA error: ...', hipified), a HIP library's own check the same
  way (rocALUTION's CHECK_HIP_ERROR: 'HIP error: ' then hipGetErrorString,
  then exit(1)). hipErrorInvalidDeviceFunction is what a kernel launch
  returns when the loaded code has no image for the GPU's gfx target, as
  cudaErrorInvalidDeviceFunction is on CUDA, so it names the same reference.
- An NGC container's entrypoint checks the host's driver before it starts
  the command: 'ERROR: This container was built for NVIDIA Driver Release R
  or later, but' over 'version V was detected and compatibility mode is
  UNAVAILABLE.' is a driver too old for the container's CUDA, and CUDA
  cannot initialise in it. When the compatibility libraries stand in, the
  check prints a compatibility-mode NOTE or WARNING instead and nothing is
  wrong.
"""
from conftest import diagnose_text, leading_incident

# PyTorch for ROCm on a Radeon RX 7600 XT (pytorch/pytorch#147626, as posted).
TORCH_HIP_INVALID_DEVICE_FUNCTION = """\
PyTorch detects GPU: True
Allocating tensors on GPU...
RuntimeError: HIP error: invalid device function
HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing AMD_SERIALIZE_KERNEL=3
Compile with `TORCH_USE_HIP_DSA` to enable device-side assertions.
"""

# rocALUTION's HIP backend on a gfx1031 card (ROCm/rocALUTION#197, as posted).
ROCALUTION_INVALID_DEVICE_FUNCTION = """\
Number of HIP devices in the system: 1
Matrix+Vectors loading:5.7e-05 sec
HIP error: invalid device function
File: /long_pathname_so_that_rpms_can_package_the_debug_info/src/extlibs/rocALUTION/src/base/hip/hip_vector.cpp; line: 845
"""

# The TensorRT 20.08 container on a host with driver 410.78
# (isarsoft/yolov4-triton-tensorrt#5, as posted).
NGC_DRIVER_TOO_OLD = """\
NVIDIA Release 20.08 (build 15268644)

ERROR: This container was built for NVIDIA Driver Release 450.51 or later, but
       version 410.78 was detected and compatibility mode is UNAVAILABLE.

       [[CUDA Driver UNAVAILABLE (cuInit(0) returned 803)]]
"""

# Triton 22.04 on driver 495.29.05, run in minor version compatibility mode
# (triton-inference-server/server#4406, as posted).
NGC_MINOR_VERSION_COMPAT = """\
NVIDIA Release 22.04 (build 36821869)
Triton Server Version 2.21.0

WARNING: CUDA Minor Version Compatibility mode ENABLED.
  Using driver version 495.29.05 which has support for CUDA 11.5.  This container
  was built with CUDA 11.6 and will be run in Minor Version Compatibility mode.
  CUDA Forward Compatibility is preferred over Minor Version Compatibility for use
  with this container but was unavailable:
"""


def test_pytorch_rocm_invalid_device_function_is_a_missing_gpu_target(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, TORCH_HIP_INVALID_DEVICE_FUNCTION,
                     rule="cuda-no-kernel-image", line="HIP error: invalid device function")


def test_a_hip_library_check_reports_the_same_missing_target(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, ROCALUTION_INVALID_DEVICE_FUNCTION,
                     rule="cuda-no-kernel-image", line="HIP error: invalid device function")


def test_ngc_container_driver_check_names_a_driver_too_old(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, NGC_DRIVER_TOO_OLD,
                     rule="cuda-driver-mismatch", line="This container was built for NVIDIA Driver Release 450.51")


def test_ngc_minor_version_compatibility_is_no_failure(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, NGC_MINOR_VERSION_COMPAT)
    assert not [inc for inc in found if inc["rule"] == "cuda-driver-mismatch"], found
