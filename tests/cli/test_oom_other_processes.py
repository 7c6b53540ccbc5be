"""PyTorch's OOM message lists the other processes holding memory on the
GPU. Another process is the reason for the exhaustion only when it holds
GiBs (zombie-gpu-process); a few hundred MiB each is a CUDA context that
sibling ranks left on this GPU, and the OOM is this process's own
(cuda-oom)."""

from conftest import leading_incident

SIBLING_CONTEXTS = (
    "2024-05-08 16:16:10,360 - lmdeploy - ERROR - Engine loop failed with error: CUDA out of memory. Tried to "
    "allocate 488.00 MiB. GPU 0 has a total capacty of 79.21 GiB of which 425.56 MiB is free. Process 37200 has "
    "413.00 MiB memory in use. Process 37198 has 413.00 MiB memory in use. Process 37199 has 413.00 MiB memory in "
    "use. Including non-PyTorch memory, this process has 77.95 GiB memory in use. Of the allocated memory 74.10 GiB "
    "is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated.\n")

ANOTHER_HOLDS_IT = (
    "[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 2 has a total capacity of "
    "79.15 GiB of which 310.00 MiB is free. Process 412 has 396.00 MiB memory in use. Process 118322 has 40.02 GiB "
    "memory in use. Including non-PyTorch memory, this process has 38.40 GiB memory in use.\n")


def test_sibling_cuda_contexts_leave_the_oom_its_own(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, SIBLING_CONTEXTS, rule="cuda-oom",
                     line="Engine loop failed with error: CUDA out of memory")


def test_another_process_holding_gibs_is_the_reason(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, ANOTHER_HOLDS_IT, rule="zombie-gpu-process",
                     line="Process 118322 has 40.02 GiB memory in use")
