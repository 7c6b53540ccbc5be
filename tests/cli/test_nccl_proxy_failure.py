"""NCCL's proxy service thread (src/proxy.cc, 2.12 onwards) reports an
operation it could not carry out for a rank -- "[Proxy Service N] Failed to
execute operation Connect from rank R, retcode C" and, from 2.18, "[Service
thread] Error encountered progressing operation=Connect, res=C, closing
connection" -- unless the communicator is aborting. A log whose transport
error went unprinted (NCCL_DEBUG=WARN with a plugin that logs elsewhere, or
an excerpt) shows only that line: it is the failure's line, not nothing
(issue #18: a failed job with no incident). The service thread's INFO
chatter about operations it did carry out stays nothing."""
from conftest import diagnose_text, first_incident, initiating_texts

PROXY_FAILED = """\
ubuntu:39964:40075 [0] NCCL INFO Channel 20/0 : 0[0] -> 1[1] via P2P/CUMEM
ubuntu:39964:40075 [0] NCCL INFO proxy.cc:1306 -> 2
ubuntu:39964:40075 [0] proxy.cc:1519 NCCL WARN [Proxy Service 0] Failed to execute operation Connect from rank 0, retcode 2
"""

SERVICE_THREAD = """\
nid001264:1291155:1293014 [1] NCCL INFO Using network AWS Libfabric
nid001264:1291155:1293014 [1] proxy.cc:1541 NCCL WARN [Service thread] Error encountered progressing operation=Connect, res=3, closing connection
"""

HEALTHY = """\
axon:5021:5095 [2] NCCL INFO Received and initiated operation=Init res=0
axon:5021:5095 [2] NCCL INFO [Service thread] Connection closed by localRank 0
axon:5021:5090 [2] NCCL INFO comm 0x55d3c0 rank 2 nranks 4 cudaDev 2 busId 41000 - Destroy COMPLETE
"""


def test_proxy_service_failure_is_the_failures_line(faultline_bin, validate, tmp_path):
    for text, needle in ((PROXY_FAILED, "Failed to execute operation Connect"),
                         (SERVICE_THREAD, "Error encountered progressing operation=Connect")):
        inc = first_incident(faultline_bin, validate, tmp_path, text)
        assert any(needle in t for t in initiating_texts(inc)), initiating_texts(inc)


def test_service_thread_chatter_is_nothing(faultline_bin, validate, tmp_path):
    assert diagnose_text(faultline_bin, validate, tmp_path, HEALTHY) == []
