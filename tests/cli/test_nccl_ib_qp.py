"""NCCL's IB transport failing to bring a queue pair up because the remote
end cannot be reached over the RDMA fabric.

ibv_modify_qp to RTR/RTS resolves the path to the remote GID; ETIMEDOUT,
ENETUNREACH or EHOSTUNREACH there means the NICs cannot talk (a rail-only
fabric crossed between rails, a wrong GID index, no route): the network
path to the peer, a Network Partition. NCCL before 2.19 prints "failed with
error <strerror>", later versions "failed with <errno> <strerror>, on dev
...". A local device or argument error (No such device, Invalid argument)
names no peer's path and stays the fallback's fatal line.
"""
import pytest

from conftest import diagnose_text, leading_incident

PATH_FAILURES = {
    "legacy": "gpu-a03:5771:5790 [0] misc/ibvwrap.cc:160 NCCL WARN Call to ibv_modify_qp failed with error "
              "Connection timed out\n"
              "gpu-a03:5771:5790 [0] NCCL INFO transport/net_ib.cc:1011 -> 2\n",
    "errno": "[2025-11-02 08:14:51] gpu-b17:40213:40377 [3] ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp failed "
             "with 101 Network is unreachable, on dev mlx5_3:1, curr state INIT, next state RTR, local GID index 3, "
             "local GID ::ffff:10.4.3.17, remote GID ::ffff:10.4.9.21\n",
}

LOCAL_FAILURE = ("gpu-a03:5771:5790 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error "
                 "No such device\n")


@pytest.mark.parametrize("name", sorted(PATH_FAILURES))
def test_qp_peer_unreachable_is_a_network_partition(faultline_bin, validate, tmp_path, name):
    leading_incident(faultline_bin, validate, tmp_path, PATH_FAILURES[name],
                     reference="Network Partition", line="Call to ibv_modify_qp failed")


def test_qp_local_device_error_is_not_a_network_partition(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, LOCAL_FAILURE)
    assert found, "the failed call is a fatal line"
    assert all(inc["reference"] != "Network Partition" for inc in found)
