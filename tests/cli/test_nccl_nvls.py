"""A CUDA failure of NCCL's NVLink SHARP transport (transport/nvls.cc, with
or without the CUDA error code, NCCL 2.18 to 2.26) is the fabric the
multicast objects live on: Fabric Manager restarted without a GPU reset.
The WARN and its return chain read as nvswitch-fabric-error, not as the
fallback's unexplained NCCL failure; a CUDA failure elsewhere in NCCL
stays what it was."""

from conftest import leading_incident

NVLS = """\
node23:12098:12098 [2] NCCL INFO NVLS multicast support is available on dev 2
node23:12098:12141 [2] transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'
node23:12098:12141 [2] NCCL INFO transport/nvls.cc:394 -> 1
node23:12098:12141 [2] NCCL INFO init.cc:1196 -> 1
node23:12098:12141 [2] NCCL INFO init.cc:1462 -> 1
node23:12098:12141 [2] NCCL INFO group.cc:75 -> 1 [Async thread]
"""

NVLS_218 = """\
NCCL version 2.18.5+cuda12.2
transport/nvls.cc:165 NCCL WARN Cuda failure 'invalid argument'
NCCL INFO transport/nvls.cc:324 -> 1
NCCL INFO init.cc:1093 -> 1
"""

STRONGSTREAM = """\
cn13:2619531:2620804 [1] misc/strongstream.cc:424 (ncclStrongStreamSynchronize) NCCL WARN Cuda failure 'unspecified launch failure'
cn13:2619531:2620804 [1] NCCL INFO enqueue.cc:1540 -> 1
"""


def test_nvls_cuda_failure_is_the_fabric(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, NVLS, rule="nvswitch-fabric-error",
                     line="transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'")


def test_nvls_cuda_failure_without_its_code(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, NVLS_218, rule="nvswitch-fabric-error",
                     line="transport/nvls.cc:165 NCCL WARN Cuda failure 'invalid argument'")


def test_other_nccl_cuda_failure_is_not_the_fabric(faultline_bin, validate, tmp_path):
    inc = leading_incident(faultline_bin, validate, tmp_path, STRONGSTREAM,
                           line="misc/strongstream.cc:424")
    assert inc["rule"] != "nvswitch-fabric-error"
