"""PyTorch <= 1.4 printed 'THCudaCheck FAIL file=F line=L error=E : S' right
before raising 'cuda runtime error (E) : S' (THCGeneral.cpp __THCudaCheck;
the warning-only variant prints 'THCudaCheckWarn FAIL'): that first line is
the failure's initiating line."""
from conftest import first_incident


def test_thc_cuda_check_line_initiates(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, "\n".join([
        "THCudaCheck FAIL file=/pytorch/torch/csrc/cuda/Module.cpp line=33 error=101 : invalid device ordinal",
        "Traceback (most recent call last):",
        '  File "train.py", line 41, in <module>',
        "    torch.cuda.set_device(args.gpu_idx)",
        '  File "/usr/lib/python3.6/site-packages/torch/cuda/__init__.py", line 281, in set_device',
        "    torch._C._cuda_setDevice(device)",
        "RuntimeError: cuda runtime error (101) : invalid device ordinal at /pytorch/torch/csrc/cuda/Module.cpp:33",
    ]) + "\n")
    assert inc["initiating"]["evidence"][0]["text"].startswith("THCudaCheck FAIL"), inc["explanation"]
