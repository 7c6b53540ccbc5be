"""A socket between ranks that NCCL could not set up is the Network
Partition failure of nccl-socket-error, not an unrecognised NCCL warning
(issue #18). misc/socket.cc (2.16 onwards) warns when the accepting side
reads another socket type than it listens for ("socketFinalizeAccept: wrong
type A != B", an internal error up the caller's chain); a wrong magic is a
stray connection NCCL closes and accepts again, so it is survived. When the
socket layer logged only its return chain (INFO links through
misc/socket.cc and transport/net_socket.cc), the proxy service thread's
report that the NET transport's Connect failed with a system error
(proxy.cc: "[Service thread] Error encountered progressing
operation=Connect, res=2" and "[Proxy Service N] Failed to execute
operation Connect from rank R, retcode 2") is that connection's failure. A
remote error (6) after the socket's "Call to recv ... failed" stays
nccl-remote-error's."""
from conftest import first_incident, initiating_texts

WRONG_TYPE = """\
node7:16899:16949 [0] NCCL INFO Channel 01/0 : 9[1] -> 0[0] [receive] via NET/Socket/0
node7:16899:16961 [0] misc/socket.cc:441 NCCL WARN socketFinalizeAccept: wrong type 4 != 3
node7:16899:16961 [0] NCCL INFO misc/socket.cc:561 -> 3
node7:16899:16961 [0] NCCL INFO misc/socket.cc:586 -> 3
node7:16899:16961 [0] NCCL INFO transport/net_socket.cc:378 -> 3
"""

CONNECT_CHAIN_ONLY = """\
node2:919:1150 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [send] via NET/Socket/0
node2:922:1158 [3] NCCL INFO misc/socket.cc:567 -> 2
node2:922:1158 [3] NCCL INFO misc/socket.cc:586 -> 2
node2:922:1158 [3] NCCL INFO transport/net_socket.cc:336 -> 2
node2:922:1158 [3] NCCL INFO transport/net.cc:592 -> 2
node2:922:1158 [3] NCCL INFO proxy.cc:1306 -> 2
node2:922:1158 [3] proxy.cc:1485 NCCL WARN [Service thread] Error encountered progressing operation=Connect, res=2, closing connection
node2:922:1158 [3] proxy.cc:1519 NCCL WARN [Proxy Service 11] Failed to execute operation Connect from rank 11, retcode 2
"""

PEER_CLOSED = """\
gpu-a:183006:183220 [1] misc/socket.cc:518 NCCL WARN Net : Call to recv from 10.200.84.247<58355> failed : Broken pipe
gpu-a:183006:183220 [1] NCCL INFO misc/socket.cc:529 -> 6
gpu-a:183006:183220 [1] NCCL INFO transport/net_socket.cc:368 -> 6
gpu-a:183006:183220 [1] proxy.cc:1119 NCCL WARN [Proxy Service 9] Failed to execute operation Connect from rank 9, retcode 6
"""


def test_socket_accept_of_wrong_type_is_a_network_partition(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, WRONG_TYPE)
    assert inc["rule"] == "nccl-socket-error", inc["rule"]
    assert inc["reference"] == "Network Partition"
    assert any("socketFinalizeAccept: wrong type" in t for t in initiating_texts(inc)), initiating_texts(inc)


def test_proxy_connect_system_error_after_a_socket_chain_is_a_network_partition(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, CONNECT_CHAIN_ONLY)
    assert inc["rule"] == "nccl-socket-error", inc["rule"]
    assert any("Error encountered progressing operation=Connect, res=2" in t for t in initiating_texts(inc)), \
        initiating_texts(inc)


def test_proxy_connect_remote_error_stays_the_peers(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, PEER_CLOSED)
    assert inc["rule"] == "nccl-remote-error", inc["rule"]
    assert any("Call to recv from" in t for t in initiating_texts(inc)), initiating_texts(inc)
