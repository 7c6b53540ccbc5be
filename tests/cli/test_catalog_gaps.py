"""Failure families the audits of issue #18 found answered by no incident,
or by the fallback on the wrong line, checked on excerpts of real threads
(paths of posters' machines under a neutral /opt prefix):

- the dynamic linker failing to bind a symbol after the program started
  (glibc's '<program>: symbol lookup error: <object>: undefined symbol:
  <name>', or 'relocation error: ... symbol S, version V not defined in
  file F with link time reference' at its start, then exit status 127):
  an extension or library built against
  another torch, CUDA runtime or Python. The process dies without a Python
  traceback, so nothing read it. No catalog reference covers this ABI
  mismatch (the real-world corpus labels it so), so it is the fallback's
  fatal line; a library that catches the ImportError of the same mismatch
  and falls back (vLLM's 'Failed to import from vllm._C with
  ImportError(...)') was not a failure;
- nvcc refusing a target architecture its toolkit does not know ('nvcc
  fatal   : Unsupported gpu architecture 'compute_120a''), beside ptxas's
  'Value 'sm_120' is not defined for option 'gpu-name'' that the catalog
  already read: the wrong-architecture reference, where the build's own
  'command ... nvcc failed' report led before;
- SGLang's scheduler running out of KV-cache token slots for a batch it
  had admitted ('Decode out of memory. Try to lower your batch size.' as a
  logged line, then 'Scheduler hit an exception'): the pool was sized at
  start-up, so this is the scheduler admitting more than it holds, not a
  CUDA allocation that failed, and the corpus labels a KV cache too small
  for the model the same way (no reference: the fallback). Its own line
  now leads, not the scheduler's traceback header; the decode retraction
  that frees memory and goes on ('Decode out of memory happened.
  #retracted_reqs: ...') is no failure.

The other families of the audit were already read and stay pinned here:
NCCL's and aws-ofi-nccl's memory registration failures (no catalog
reference covers GPUDirect RDMA registration: the fallback, on the WARN
whose return chain follows), and the NVIDIA kernel module that does not
load (the fallback on nvidia-installer's line).
"""
from conftest import diagnose_text, leading_incident


# https://github.com/layumi/Person_reID_baseline_pytorch/issues/139
SYMBOL_LOOKUP_AFTER_START = """\
This is not an error. If you want to use low precision, i.e., fp16, please install the apex with cuda support (https://github.com/NVIDIA/apex) and update pytorch to 1.0
[Resize(size=(256, 128), interpolation=PIL.Image.BICUBIC), Pad(padding=10, fill=0, padding_mode=constant), RandomCrop(size=(256, 128), padding=None), RandomHorizontalFlip(p=0.5), ToTensor(), Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])]
python: symbol lookup error: /opt/miniconda3/envs/reID/lib/python3.6/site-packages/torch/lib/libtorch_python.so: undefined symbol: PySlice_Unpack
"""

# https://github.com/pytorch/pytorch/issues/15048
SYMBOL_LOOKUP_AT_FIRST_CUDA_CALL = """\
$ python test_jit.py
cpu: tensor([[0.3313, 0.2135, 0.0000, 0.0000, 0.0000, 0.0000, 0.0486, 0.0308, 0.6912,
         0.5355, 0.4852, 0.0000, 0.1473, 0.5116, 0.8522, 0.2075, 0.6240, 0.0820]],
       grad_fn=<DifferentiableGraphBackward>)
python3: symbol lookup error: /opt/anaconda3/lib/python3.7/site-packages/torch/lib/libtorch.so.1: undefined symbol: cuCtxGetCurrent
"""

# https://github.com/dusty-nv/jetson-inference/issues/746: a versioned
# symbol the cuDNN found at start lacks.
RELOCATION_ERROR_AT_START = """\
python: relocation error: /opt/.local/lib/python2.7/site-packages/torch/lib/libtorch.so: symbol cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize version libcudnn.so.7 not defined in file libcudnn.so.7 with link time reference
"""

# https://github.com/vllm-project/vllm/issues/5501: vLLM catches the
# ImportError of its own extension and logs it as a warning.
VLLM_EXTENSION_WARNING = """\
WARNING 06-13 11:42:20 _custom_ops.py:11] Failed to import from vllm._C with ImportError('/usr/local/lib/python3.8/dist-packages/vllm/_C.abi3.so: undefined symbol: _ZN5torch7LibraryC1ENS0_4KindESsSt8optionalIN3c1011DispatchKeyEEPKcj')
"""

# https://github.com/EleutherAI/gpt-neox/issues/1079
FLASH_ATTN_IMPORT = """\
Traceback (most recent call last):
  File "train.py", line 27, in <module>
    pretrain(neox_args=neox_args)
  File "/opt/venv/lib/python3.8/site-packages/flash_attn/__init__.py", line 3, in <module>
    from flash_attn.flash_attn_interface import (
  File "/opt/venv/lib/python3.8/site-packages/flash_attn/flash_attn_interface.py", line 8, in <module>
    import flash_attn_2_cuda as flash_attn_cuda
ImportError: /opt/venv/lib/python3.8/site-packages/flash_attn_2_cuda.cpython-38-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda20CUDACachingAllocator9allocatorE
"""

# https://github.com/mit-han-lab/Block-Sparse-Attention/issues/15 (the
# line) under the indentation pip gives a build's output
# (https://github.com/thu-ml/TurboDiffusion/issues/80).
NVCC_BLACKWELL = """\
      nvcc fatal   : Unsupported gpu architecture 'compute_120'
"""

# https://github.com/ucbdrive/few-shot-object-detection/issues/11
NVCC_THEN_BUILD_FAILED = """\
nvcc fatal   : Unsupported gpu architecture 'compute_61'
error: command '/usr/bin/nvcc' failed with exit status 1
"""

# https://github.com/sgl-project/sglang-jax/issues/622
SGLANG_DECODE_OOM = """\
[2026-01-05 06:12:41] Prefill batch. #new-seq: 1, #new-token: 1024, #cached-token: 0, token usage: 0.98, #running-req: 167, #queue-req: 88, 
[2026-01-05 06:12:41] Decode out of memory. Try to lower your batch size.
Try to allocate 168 tokens.
Available tokens: 3200 (available_size=3200 + evictable_size=0)

[2026-01-05 06:12:41] Scheduler hit an exception: Traceback (most recent call last):
  File "/opt/sglang-jax/python/sgl_jax/srt/managers/scheduler.py", line 1414, in run_scheduler_process
    scheduler.event_loop_overlap()
"""

# https://github.com/sgl-project/sglang/issues/34676
SGLANG_PREFILL_OOM = """\
RuntimeError: Prefill out of memory. Try to lower your batch size.
Try to allocate 8192 tokens.
Available full tokens: 8070656 (full_available_size=7936 + full_evictable_size_=8062720)
Available mamba: 760 (available_size=57 + component_evictable_size_=703)
"""

# https://github.com/sgl-project/sglang/issues/4184: the scheduler
# retracts requests and goes on.
SGLANG_DECODE_RETRACT = """\
[2025-03-07 21:49:33 TP13] Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.1474 -> 0.1845
[2025-03-07 21:49:33 TP12] Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.1474 -> 0.1845
[2025-03-07 21:49:33 TP10] Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.1474 -> 0.1845
[2025-03-07 21:49:45 TP9] Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.0980 -> 0.1919
"""

# https://github.com/NVIDIA/nccl/issues/563 (aws-ofi-nccl's WARN and
# NCCL's return chain)
OFI_REGISTRATION = """\
ip-10-0-87-143:149:298 [5] register_mr_buffers:465 NCCL WARN NET/OFI Unable to register memory (type = 1) for device 0. RC: 12, Error: Cannot allocate memory
ip-10-0-87-143:149:298 [5] NCCL INFO include/net.h:23 -> 2
ip-10-0-87-143:149:298 [5] NCCL INFO transport/net.cc:223 -> 2
ip-10-0-87-143:149:298 [5] NCCL INFO transport.cc:111 -> 2
ip-10-0-87-143:149:298 [5] NCCL INFO group.cc:137 -> 2 [Async thread]
ip-10-0-87-143:149:149 [5] NCCL INFO group.cc:210 -> 2
"""

# https://github.com/Bumblebee-Project/Bumblebee/issues/932 (nvidia-installer
# could not load the module it built)
INSTALLER_MODULE_LOAD = """\
ERROR: Unable to load the kernel module 'nvidia.ko'.  This happens most frequently when this kernel module was built against the wrong or improperly configured kernel sources, with a version of gcc that differs from the one used to build the target kernel, or if a driver such as rivafb, nvidiafb, or nouveau is present and prevents the NVIDIA kernel module from obtaining ownership of the NVIDIA graphics device(s), or no NVIDIA GPU installed in this system is supported by this NVIDIA Linux graphics driver release.

Please see the log entries 'Kernel module load error' and 'Kernel messages' at the end of the file '/var/log/nvidia-installer.log' for more information.
-> Kernel module load error: No such device
"""

FALLBACK = "Unrecognised fatal error"
WRONG_ARCH = "CUDA Binary Built for the Wrong GPU Architecture"


def test_symbol_lookup_error_after_start_is_a_fatal_line(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, SYMBOL_LOOKUP_AFTER_START,
                     reference=FALLBACK, line="symbol lookup error: ")


def test_symbol_lookup_error_at_first_cuda_call_is_a_fatal_line(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, SYMBOL_LOOKUP_AT_FIRST_CUDA_CALL,
                     reference=FALLBACK, line="undefined symbol: cuCtxGetCurrent")


def test_relocation_error_at_start_is_a_fatal_line(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, RELOCATION_ERROR_AT_START,
                     reference=FALLBACK, line="relocation error: ")


def test_extension_import_warning_is_not_a_failure(faultline_bin, validate, tmp_path):
    assert diagnose_text(faultline_bin, validate, tmp_path, VLLM_EXTENSION_WARNING) == []


def test_extension_import_error_stays_the_fallbacks(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, FLASH_ATTN_IMPORT,
                     reference=FALLBACK, line="flash_attn_2_cuda.cpython-38-x86_64-linux-gnu.so: undefined symbol")


def test_nvcc_unknown_architecture_is_the_wrong_architecture(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, NVCC_BLACKWELL,
                     rule="cuda-no-kernel-image", reference=WRONG_ARCH, line="'compute_120'")


def test_nvcc_unknown_architecture_leads_the_build_failure(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, NVCC_THEN_BUILD_FAILED,
                     rule="cuda-no-kernel-image", line="nvcc fatal   : Unsupported gpu architecture 'compute_61'")


def test_sglang_token_pool_exhausted_leads_the_schedulers_exception(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, SGLANG_DECODE_OOM,
                     reference=FALLBACK, line="Decode out of memory. Try to lower your batch size.")


def test_sglang_token_pool_exhausted_raised_is_the_fallbacks(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, SGLANG_PREFILL_OOM,
                     reference=FALLBACK, line="RuntimeError: Prefill out of memory.")


def test_sglang_decode_retraction_is_not_a_failure(faultline_bin, validate, tmp_path):
    assert diagnose_text(faultline_bin, validate, tmp_path, SGLANG_DECODE_RETRACT) == []


def test_ofi_registration_failure_stays_the_fallbacks(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, OFI_REGISTRATION,
                     reference=FALLBACK, line="NET/OFI Unable to register memory")


def test_nvidia_module_not_loaded_stays_the_fallbacks(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, INSTALLER_MODULE_LOAD,
                     reference=FALLBACK, line="Unable to load the kernel module 'nvidia.ko'")
