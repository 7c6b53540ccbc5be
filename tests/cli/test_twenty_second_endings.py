"""Endings the twenty-second endings audit (tests/cli/endings, e22-*.log)
read as nothing, read where the program that printed them writes them
(issue #18):

- the HIP runtime (ROCm CLR, rocclr/device/rocm/rocdevice.cpp) logs a
  kernel queue's HSA error as 'Device::callbackQueue aborting with error :
  HSA_STATUS_ERROR_...' (before ROCm 6.0) or 'Callback: Queue 0x...
  aborting with error : HSA_STATUS_ERROR_...' (later), then calls abort();
- rocBLAS (library/src/tensile_host.cpp) writes 'rocBLAS error: Cannot
  read .../TensileLibrary.dat: <strerror>' or 'rocBLAS error: Could not
  initialize Tensile host' when it cannot load its GEMM kernel library,
  then calls rocblas_abort();
- wrappers of the CUDA driver API that print an error's documented
  description (cuda.h: 'While executing a kernel, the device encountered a
  load or store instruction on an invalid memory address.') name
  CUDA_ERROR_ILLEGAL_ADDRESS by that sentence alone.
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # ROCm/legacy-rocm-build#2153: a Fortran code with embedded HIP on a
    # Radeon VII Pro, the runtime's line and gfortran's abort report.
    "rocdevice-callbackqueue-aperture-violation": ("""\
:0:rocdevice.cpp :2672: 0696142325 us: 5999 : [tid:0x7f676e4c7640] Device::callbackQueue aborting with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest legal address. code: 0x29
forrtl: error (76): Abort trap signal
""", FALLBACK, "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION", None),
    # ggml-org/whisper.cpp#3576: ROCm 7's wording, the queue named by its
    # address.
    "rocdevice-callback-queue-rocm7": ("""\
rocdevice.cpp Callback: Queue 0x7fc220400000 aborting with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest legal address. code: 0x29
""", FALLBACK, "aborting with error", None),
    # ROCm/rocBLAS#1267: rocblas-test's last passing rows, then the abort
    # as strace reports it.
    "rocblas-cannot-read-tensile-library": ("""\
   s  scalpk    task  auto  col     conj     conj      25      50      75   3.1+1.4i   2.7+1.7i     8    1    1   1   9.10e-08    0.00398        0.0472            NA            NA  pass    

rocBLAS error: Cannot read /opt/rocm/rocblas/library/TensileLibrary.dat: Illegal seek
+++ killed by SIGABRT (core dumped) +++
FAILED : exit code -6
""", FALLBACK, "rocBLAS error: Cannot read", None),
    # ROCm/rocBLAS#1300: a TensorFlow model's run, the only line it left.
    "rocblas-cannot-read-alone": ("""\
rocBLAS error: Cannot read /opt/rocm/rocblas/lib/rocblas/library/TensileLibrary.dat: No such file or directory
""", FALLBACK, "rocBLAS error: Cannot read", None),
    # mozkomor/GrinGoldMiner#68: a C# miner printing the driver API's
    # documented description of error 700.
    "cuda-illegal-address-documented-description": ("""\
ERROR [hit Enter to hide]: GPU GeForce GTX 1070 ID 4: Critical error in main cuda loop ErrorIllegalAddress: While executing a kernel, the device encountered a load or store instruction on an invalid memory address.
This leaves the process in an inconsistent state and any further CUDA work will return the same error.
To continue using CUDA, the process must be terminated and relaunched.
""", "cuda-illegal-address", "invalid memory address", None),
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_ending_leads(faultline_bin, validate, tmp_path, name):
    text, rule, initiating, any_line = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, line=initiating, any_line=any_line)


def test_miopen_missing_database_warning_is_quiet(faultline_bin, validate, tmp_path):
    # ROCm/MIOpen#1606: the kernels package is missing, MIOpen warns that
    # performance may degrade and the run goes on; a maintainer's answer
    # there: it is a warning, not an error.
    incidents = diagnose_text(faultline_bin, validate, tmp_path, """\
MIOpen(HIP): Warning [SQLiteBase] Missing system database file: gfx1030_40.kdb Performance may degrade. Please follow instructions to install: https://github.com/ROCmSoftwarePlatform/MIOpen#installing-miopen-kernels-package
""")
    assert not [i for i in incidents if not i["reference"].startswith("Benign")], \
        [i["reference"] for i in incidents]
