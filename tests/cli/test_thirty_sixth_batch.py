"""Misses from the thirty-sixth corpus batch's work part:

- Marian's GPU call checks (src/tensors/gpu/cuda_helpers.h) write the
  status code, the error string in quotes, ' - ' and the file, line and
  call: 'NCCL error %d '%s' - %s:%d: %s' for NCCL, 'CUDA error %d '%s' -
  ...' for the CUDA runtime, and cuBLAS, cuRAND and cuSPARSE the same way
  without a string. They abort through ABORT, whose lines carry the
  '[date time] Error: ' prefix and end with 'Error: Aborted from ...' and
  the call stack, so nothing in the log is an exception line the fallback
  knows. The message line is now a fatal line; Marian's 'CUDA error 2 'out
  of memory'' is cudaErrorMemoryAllocation and cuda-oom reads it.
- NCCL's own examples and contrib tools (and PaddlePaddle's NCCL tools)
  check a call with 'Failed, NCCL error %s:%d '%s'' or 'NCCL error %s:%d
  '%s'' and exit: the file and line come first, then ncclGetErrorString in
  quotes. A check that goes on says so after the quote, '(continuing)',
  and stays out.
"""
from conftest import leading_incident

# A Marian training task on a V100 that failed in its 51,000th update, as
# the mozilla/translations issue about it quotes the task's log (#1002).
MARIAN_CUDA_ERROR = """\
[2025-01-21 16:25:07] [valid] Ep. 1 : Up. 50000 : bleu-detok : 26.4729 : new best
[2025-01-21 16:30:34] Ep. 1 : Up. 51000 : Sen. 77,303,338 : Cost 1.41794586 : Time 370.55s : 97447.45 words/s : gNorm 0.5275
[2025-01-21 16:30:37] Error: CUDA error 999 'unknown error' - /builds/worker/fetches/marian-source/src/tensors/gpu/algorithm.cu:54: cudaStreamSynchronize(0)
"""

# Marian's own CI running its attention tests on a GPU another job held
# (marian-nmt/marian-dev#427): the workspace could not be reserved.
MARIAN_OOM = """\
    Start 4: attention_tests
4/4 Test #4: attention_tests ..................***Exception: Other  0.98 sec
[2019-02-12 05:10:54] Error: CUDA error 2 'out of memory' - /var/lib/jenkins/workspace/marian-dev/src/tensors/gpu/device.cu:38: cudaMalloc(&data_, size)
[2019-02-12 05:10:54] Error: Aborted from virtual void marian::gpu::Device::reserve(size_t) in /var/lib/jenkins/workspace/marian-dev/src/tensors/gpu/device.cu:38
"""

# NCCL's single-process example run under cuda-gdb (NVIDIA/nccl#1622): the
# example's own check of the collective call.
NCCL_EXAMPLE_CHECK = """\
Failed, NCCL error nccl-Example1.c:128 'unhandled cuda error (run with NCCL_DEBUG=INFO for details)'
"""


def test_marian_cuda_check_is_a_fatal_line(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, MARIAN_CUDA_ERROR, rule="unrecognised-fatal-error",
                     line="Error: CUDA error 999 'unknown error'")


def test_marian_cuda_out_of_memory_is_a_cuda_oom(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, MARIAN_OOM, rule="cuda-oom",
                     line="Error: CUDA error 2 'out of memory'")


def test_nccl_example_check_is_a_fatal_line(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, NCCL_EXAMPLE_CHECK, rule="unrecognised-fatal-error",
                     line="Failed, NCCL error nccl-Example1.c:128")

