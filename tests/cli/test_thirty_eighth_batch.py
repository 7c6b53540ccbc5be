"""Misses from the thirty-eighth corpus batch's work part:

- The open NVIDIA kernel module needs the GPU System Processor (GSP) of
  Turing and later GPUs. On an older GPU, a data center one too (a V100),
  it refuses the probe with 'NVRM: The NVIDIA GPU ... installed in this
  system is not supported by open nvidia.ko because it does not include the
  required GPU System Processor (GSP).', wrapped over several NVRM lines.
  From driver 560 on, packages install the open flavour by default, so a
  GTX 10xx that worked before comes up with no driver. The GPU is healthy
  and the module flavour is the fix, as for the data center check of the
  earlier open modules: the same rule now reads this refusal too.
- Some node log collectors (Talos' kernel log) print the NVRM lines without
  their 'NVRM: ' prefix: the data center check's message is read without
  it.
- Horovod's background thread logs an exception that escaped its loop as
  'Horovod background loop uncaught exception: <what>' (operations.cc, every
  release) and Horovod shuts down after it: that line is a fatal line now,
  unless the exception is Gloo's transport error from a peer that left,
  which elastic Horovod recovers from.
- asyncio logs an exception nobody retrieved from a future or task when the
  object is collected ('<Class> exception was never retrieved', 'future:
  <...>', then the exception): it was dropped, not raised, as CPython's
  'Exception ignored in:' says of its traceback, so it is no fatal line.
"""
from conftest import diagnose_text, leading_incident

# A V100 under the open modules of 515.48 (open-gpu-kernel-modules#322): a
# data center GPU, but one without GSP, so the open module refuses it.
V100_WITHOUT_GSP = """\
[ 1157.036170] PKCS#7 signature not signed with a trusted key
[ 1157.043851] nvidia-nvlink: Nvlink Core is being initialized, major device number 237
[ 1157.046099] NVRM: The NVIDIA GPU 0000:af:00.0 (PCI ID: 10de:1db5)
               NVRM: installed in this system is not supported by open
               NVRM: nvidia.ko because it does not include the required GPU
               NVRM: System Processor (GSP).
               NVRM: Please see the 'Open Linux Kernel Modules' and 'GSP
               NVRM: Firmware' sections in the driver README, available on
"""

# The proprietary module's refusal of a GPU its release does not support
# (open-gpu-kernel-modules#393) is another message: 'not supported by the
# NVIDIA <version> driver release', which the GSP signal leaves alone.
UNSUPPORTED_BY_RELEASE = """\
[  +0.000421] nvidia: probe of 0000:01:00.0 failed with error -1
[  +0.000012] NVRM: The NVIDIA probe routine failed for 1 device(s).
[  +0.000001] NVRM: None of the NVIDIA devices were initialized.
[  +0.000005] NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:25a0)
              NVRM: installed in this system is not supported by the
              NVRM: NVIDIA 520.56.06 driver release.
"""

# Talos' node log of the open module declining an RTX 2080 SUPER
# (siderolabs/extensions#114), the NVRM prefix gone; no other thread found
# shows the message in that form.
DATA_CENTER_CHECK_NO_PREFIX = """\
Open nvidia.ko is only ready for use on Data Center GPUs. 
To force use of Open nvidia.ko on other GPUs, see the 
'OpenRmEnableUnsupportedGpus' kernel module parameter described
in the README 
GPU 0000:07:00.0: RmInitAdapter failed!
"""

# NVTabular's multi-GPU PyTorch example under horovodrun, the ranks' data
# loaders giving different numbers of batches (NVIDIA-Merlin/NVTabular#1320,
# the corpus case: no other thread found shows either message with its
# context). Dask's client loses its scheduler first and asyncio logs the
# cancelled gather nobody awaited; then rank 1's Horovod loop dies on a
# CUDA error.
HOROVOD_LOOP_AFTER_DROPPED_FUTURE = """\
[1,0]<stdout>:Training epoch 0
[1,1]<stdout>:Training epoch 0
distributed.client - ERROR - Failed to reconnect to scheduler after 30.00 seconds, closing client
_GatheringFuture exception was never retrieved
future: <_GatheringFuture finished exception=CancelledError()>
asyncio.exceptions.CancelledError
[1,1]<stdout>:Total batches: 488
[1,1]<stderr>:[2021-12-14 10:18:27.983077: E /tmp/pip-install-mwp6l21a/horovod_1f03263b83654efeb4c82a546f8aadfa/horovod/common/operations.cc:649] [1]: Horovod background loop uncaught exception: CUDA error: invalid configuration argument
[1,1]<stderr>:CUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below might be incorrect.
[1,1]<stderr>:For debugging consider passing CUDA_LAUNCH_BLOCKING=1.
[1,1]<stderr>:Exception raised from launch_vectorized_kernel at /opt/pytorch/pytorch/aten/src/ATen/native/cuda/CUDALoops.cuh:103 (most recent call first):
"""

# Elastic Horovod on Kubeflow's MPI-Operator (a write-up of its elastic
# support): two workers are removed, the survivor's Gloo pair sees its peer
# close the connection, and training goes on with the workers left.
ELASTIC_PEER_REMOVED = """\
Thu Mar 11 01:54:57 2021[1]<stderr>:[2021-03-11 01:54:57.532928: E /tmp/pip-install-2jy0u7mn/horovod/horovod/common/operations.cc:525] Horovod background loop uncaught exception: [/tmp/pip-install-2jy0u7mn/horovod/third_party/compatible_gloo/gloo/transport/tcp/pair.cc:575] Connection closed by peer [10.244.2.27]:54432
WARNING:root:blacklist failing host: tensorflow-mnist-elastic-worker-2
WARNING:root:blacklist failing host: tensorflow-mnist-elastic-worker-1
Thu Mar 11 01:54:58 2021[1]<stdout>:Step #50    Loss: 0.207741
Thu Mar 11 01:55:00 2021[1]<stdout>:Step #60    Loss: 0.119361
Thu Mar 11 01:55:02 2021[1]<stdout>:Step #70    Loss: 0.131966
"""


def test_open_module_refusing_a_gpu_without_gsp(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, V100_WITHOUT_GSP, rule="open-rm-unsupported-gpu",
                     line="installed in this system is not supported by open")


def test_release_that_does_not_support_the_gpu_is_not_the_open_module(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, UNSUPPORTED_BY_RELEASE)
    assert all(inc["rule"] != "open-rm-unsupported-gpu" for inc in found), found


def test_open_module_data_center_check_without_the_nvrm_prefix(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, DATA_CENTER_CHECK_NO_PREFIX, rule="open-rm-unsupported-gpu",
                     line="Open nvidia.ko is only ready for use on Data Center GPUs")


def test_horovod_background_loop_exception_is_a_fatal_line(faultline_bin, validate, tmp_path):
    # Rank 1's lines alone: the loop's exception, and the CUDA advice and
    # frame header under it, which are no fatal lines.
    text = "".join(HOROVOD_LOOP_AFTER_DROPPED_FUTURE.splitlines(keepends=True)[6:])
    leading_incident(faultline_bin, validate, tmp_path, text, rule="unrecognised-fatal-error",
                     line="Horovod background loop uncaught exception: CUDA error")


def test_horovod_background_loop_exception_leads_past_a_dropped_future(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, HOROVOD_LOOP_AFTER_DROPPED_FUTURE,
                     rule="unrecognised-fatal-error",
                     line="Horovod background loop uncaught exception: CUDA error: invalid configuration argument")


def test_elastic_horovod_peer_leaving_is_no_fatal_line(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, ELASTIC_PEER_REMOVED)
    assert not any(inc["rule"] == "unrecognised-fatal-error" for inc in found), found
