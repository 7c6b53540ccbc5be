"""Misses from the thirty-fourth corpus batch's work part:

- NCCL's CUDACHECK prints a failed CUDA runtime call as "WARN Cuda failure
  '%s'" with cudaGetErrorString's text ("Cuda failure %d '%s'" in its newer
  checks). 'invalid device function' is cudaErrorInvalidDeviceFunction: the
  kernel NCCL launches has no code for this GPU's architecture, the same
  mismatch PyTorch prints as "CUDA error: invalid device function".
- The AWS OFI network plugin warns "NET/OFI Unable to register memory (type
  = %d) for device %d. RC: %d, Error: %s" after fi_mr_regattr fails, and in
  every plugin version the registration then returns an error to NCCL. The
  line is fatal even when the poster's log stops there, unlike the plugin's
  warnings on the way to falling back to NCCL's socket transport.
"""
from conftest import diagnose_text, leading_incident

# Horovod's TensorFlow MNIST example on two Tesla K40c (compute capability
# 3.5) with NCCL 2.4 (horovod/horovod#1171, as posted).
NCCL_INVALID_DEVICE_FUNCTION = """\
[1,1]<stdout>:g2-nasp:5224:5292 [1] INFO 1[5224] -> 0[5223] via direct shared memory
[1,0]<stdout>:g2-nasp:5223:5289 [0] INFO 0[5223] -> 1[5224] via direct shared memory
[1,1]<stdout>:
[1,1]<stdout>:g2-nasp:5224:5292 [1] misc/enqueue.cu:150 WARN Cuda failure 'invalid device function'
[1,1]<stdout>:g2-nasp:5224:5292 [1] INFO misc/enqueue.cu:205 -> 1
[1,0]<stdout>:g2-nasp:5223:5289 [0] INFO Launch mode Parallel
"""

# The plugin's warning, the whole log of the post
# (awslabs/awsome-distributed-ai#203, as posted).
OFI_REGISTER_MEMORY = """\
register_rail_mr_buffer:617 NCCL WARN NET/OFI Unable to register memory (type = 2) for device 4. RC: -22, Error: Invalid argument
"""

# An EFA-less pod: the plugin gives up and NCCL goes on over sockets
# (aws/aws-k8s-tester#454, as posted).
OFI_FALLS_BACK_TO_SOCKETS = """\
[1,9]<stdout>:bert-mpi-training-worker-1:22:572 [1] nccl_net_ofi_create_plugin:204 NCCL WARN NET/OFI Failed to initialize sendrecv protocol
[1,9]<stdout>:
[1,9]<stdout>:bert-mpi-training-worker-1:22:572 [1] nccl_net_ofi_create_plugin:257 NCCL WARN NET/OFI aws-ofi-nccl initialization failed
[1,8]<stdout>:bert-mpi-training-worker-1:21:568 [0] NCCL INFO NET/IB : No device found.
[1,10]<stdout>:
[1,10]<stdout>:bert-mpi-training-worker-1:23:574 [2] nccl_net_ofi_create_plugin:204 NCCL WARN NET/OFI Failed to initialize sendrecv protocol
[1,10]<stdout>:
[1,10]<stdout>:bert-mpi-training-worker-1:23:574 [2] nccl_net_ofi_create_plugin:257 NCCL WARN NET/OFI aws-ofi-nccl initialization failed
[1,9]<stdout>:bert-mpi-training-worker-1:22:572 [1] NCCL INFO NET/IB : No device found.
[1,8]<stdout>:bert-mpi-training-worker-1:21:568 [0] NCCL INFO NET/Socket : Using [0]eth0:192.168.60.235<0>
[1,8]<stdout>:bert-mpi-training-worker-1:21:568 [0] NCCL INFO Using non-device net plugin version 0
[1,8]<stdout>:bert-mpi-training-worker-1:21:568 [0] NCCL INFO Using network Socket
"""


def test_nccl_cuda_failure_invalid_device_function_is_the_wrong_architecture(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, NCCL_INVALID_DEVICE_FUNCTION, rule="cuda-no-kernel-image",
                     line="WARN Cuda failure 'invalid device function'")


def test_ofi_plugin_memory_registration_failure_is_fatal(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, OFI_REGISTER_MEMORY, rule="unrecognised-fatal-error",
                     line="NET/OFI Unable to register memory")


def test_ofi_plugin_falling_back_to_sockets_is_no_incident(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, OFI_FALLS_BACK_TO_SOCKETS)
    assert not found, found
