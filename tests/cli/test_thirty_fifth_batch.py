"""Misses from the thirty-fifth corpus batch's work part:

- PyTorch's CUDA check message has two lines before its advice: 'CUDA
  error: ' + cudaGetErrorString(err), then the help text of
  c10::cuda::get_cuda_error_help, "Search for `" + cudaGetErrorName(err) +
  "' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html
  for more information." (ROCm builds: hipGetErrorName and the HIP
  documentation's address). A log that lost the first line, cut by the
  poster's excerpt or written in a form the fallback does not read as an
  exception line, still names the error on the second, by its enum name.
  The fallback now reads that line as a fatal line; when the first line is
  there it comes first and stays the evidence.
"""
from conftest import leading_incident

# A YOLO training run's watchdog record of the exception that ended an
# attempt, as a public repository committed it: the message follows
# 'error=' on the record's own line, so nothing before the help line is an
# exception line the fallback knows.
WATCHDOG_RECORD = """\
- error=CUDA error: unknown error
Search for `cudaErrorUnknown' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1
Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.
"""

# The same attempt's traceback, further down the same record: the exception
# line carries the message's first line.
TRACEBACK_TAIL = """\
    self._scale.double().reciprocal().float()
    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
torch.AcceleratorError: CUDA error: unknown error
Search for `cudaErrorUnknown' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1
Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.
"""


def test_cuda_error_help_line_names_the_error_when_the_first_line_is_not_read(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, WATCHDOG_RECORD, rule="unrecognised-fatal-error",
                     line="Search for `cudaErrorUnknown'")


def test_cuda_error_exception_line_stays_the_evidence_above_its_help_line(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, TRACEBACK_TAIL, rule="unrecognised-fatal-error",
                     line="torch.AcceleratorError: CUDA error: unknown error")
