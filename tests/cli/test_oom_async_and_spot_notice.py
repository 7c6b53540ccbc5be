"""Two messages printed by real code that no signal read: PyTorch's
cudaMallocAsync allocator words a device-memory exhaustion as 'Allocation on
device N would exceed allowed memory. (out of memory)' (c10/cuda/
CUDAMallocAsyncAllocator.cpp, the backend ComfyUI uses by default), and
Taskcluster's worker-runner logs a cloud's spot termination notice as
'GCP|EC2 Metadata Service says termination is imminent'."""
import pytest

from conftest import first_incident


@pytest.mark.parametrize("exc", ["torch.cuda.OutOfMemoryError", "torch.OutOfMemoryError"])
def test_malloc_async_oom_is_cuda_oom(faultline_bin, validate, tmp_path, exc):
    inc = first_incident(faultline_bin, validate, tmp_path, "\n".join([
        "Traceback (most recent call last):",
        '  File "/app/execution.py", line 151, in recursive_execute',
        "    output_data = get_output_data(obj, input_data_all)",
        exc + ": Allocation on device 1 would exceed allowed memory. (out of memory)",
        "Currently allocated     : 10.12 GiB",
        "Requested               : 1.50 GiB",
        "Device limit            : 11.76 GiB",
        "Free (according to CUDA): 3.06 MiB",
        "PyTorch limit (set by user-supplied memory fraction)",
        "                        : 17179869184.00 GiB",
    ]) + "\n")
    assert inc["rule"] == "cuda-oom", inc["explanation"]


@pytest.mark.parametrize("cloud", ["GCP", "EC2"])
def test_worker_runner_termination_notice_is_spot_preemption(faultline_bin, validate, tmp_path,
                                                             cloud):
    inc = first_incident(faultline_bin, validate, tmp_path, "\n".join([
        "2025/03/04 09:12:40 polling for termination-time",
        "2025/03/04 09:14:02 " + cloud + " Metadata Service says termination is imminent",
        "2025/03/04 09:14:02 Sending graceful-termination request",
    ]) + "\n")
    assert inc["rule"] == "spot-instance-interruption", inc["explanation"]
