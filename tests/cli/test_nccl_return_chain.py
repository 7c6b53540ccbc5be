"""NCCL reports a failed call as a WARN line naming what failed and then,
from the same thread (the `host:pid:tid [dev]` prefix), one INFO line per
frame the error returns through: NCCLCHECK logs `<file>:<line> -> <result>`
only for a result other than ncclSuccess and ncclInProgress, and from 2.19
some links name their thread (` [Proxy Thread]`, ` [Progress Thread]`,
` [Async thread]`). A WARN that starts such a chain is the failure's line
when no catalog rule knows it (issue #18: a failed job with no incident);
a WARN alone (an IB port event, a sysfs path NCCL could not resolve) was
survived, and a chain of another thread says nothing about it."""
from conftest import diagnose_text, first_incident, initiating_texts

# NCCL 2.18's ncclPollProxyResponse (src/proxy.cc) when the receive on its
# rank's socket to the local proxy thread failed, returned up through the
# transport's set-up. (A socket between ranks that could not be set up,
# "socketFinalizeAccept: wrong type", is nccl-socket-error's:
# test_nccl_socket_setup.py.)
RECV_POLL = """\
ubuntu:39964:40049 [5] NCCL INFO Channel 21 : 5[5] -> 4[4] via SHM/direct/direct
ubuntu:39964:40044 [0] proxy.cc:1143 NCCL WARN Socket recv failed while polling for opId=0x7f6f18cb7f40
ubuntu:39964:40044 [0] NCCL INFO transport/net.cc:288 -> 3
ubuntu:39964:40044 [0] NCCL INFO transport.cc:148 -> 3
ubuntu:39964:40044 [0] NCCL INFO init.cc:1089 -> 3
"""

# The proxy's progress thread (tid 41288) fails a send (the IB transport's
# check of the receive its peer posted returns ncclInternalError) while the
# other threads of the process, and another process, go on logging; between
# the WARN and its chain, the main thread logs a survived warning of its
# own. (The socket transport's "message truncated" would not do here: it is
# collective-desync-stuck's line, not the fallback's.)
INTERLEAVED = """\
node017:41003:41288 [3] transport/net_ib.cc:2223 NCCL WARN NET/IB : req 0/1 tag 7 peer 10.0.0.18<51159> posted incorrect receive info: size 65536 addr 0 rkeys[0]=0
node017:41003:41003 [3] NCCL INFO Channel 02/0 : 3[3] -> 4[0] [send] via NET/IB/1
node017:41004:41004 [4] NCCL INFO Channel 02/0 : 4[4] -> 5[5] via P2P/IPC/read
node017:41003:41003 [3] graph/xml.cc:332 NCCL WARN Could not find real path of /sys/class/pci_bus/0000:01/../../0000:01:00.0
node017:41004:41004 [4] NCCL INFO Connected all rings
node017:41003:41288 [3] NCCL INFO transport/net_ib.cc:2340 -> 3
node017:41003:41288 [3] NCCL INFO transport/net.cc:1057 -> 3
node017:41003:41288 [3] NCCL INFO proxy.cc:819 -> 3 [Progress Thread]
"""

# Warnings NCCL goes on after: no chain follows them.
SURVIVED = """\
node017:41003:41290 [3] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port active
node017:41003:41003 [3] graph/xml.cc:332 NCCL WARN Could not find real path of /sys/class/pci_bus/0000:01/../../0000:01:00.0
node017:41003:41003 [3] NCCL INFO Connected all rings
node017:41003:41003 [3] NCCL INFO comm 0x55d3c0 rank 3 nranks 8 cudaDev 3 busId 41000 - Init COMPLETE
"""

# A chain of another thread (a failure whose WARN this excerpt does not hold).
OTHER_THREAD_CHAIN = """\
node017:41003:41290 [3] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port active
node017:41003:41288 [3] NCCL INFO proxy.cc:819 -> 6 [Progress Thread]
"""

# "-> 0" is no chain: NCCLCHECK logs failed calls only.
ZERO_RESULT = """\
node017:41003:41003 [3] graph/xml.cc:332 NCCL WARN Could not find real path of /sys/class/pci_bus/0000:01/../../0000:01:00.0
node017:41003:41003 [3] NCCL INFO init.cc:1234 -> 0
"""

# A WARN a catalog rule knows (an IB completion with error 12: the retry
# count exceeded) keeps its rule.
IB_RETRY = """\
gpu5:35917:35994 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0
gpu5:35917:35994 [0] transport/net_ib.cu:788 NCCL WARN NET/IB : Got completion with error 12, opcode 1, len 0, vendor err 129
gpu5:35917:35994 [0] NCCL INFO transport/net_ib.cu:801 -> 2
gpu5:35917:35994 [0] NCCL INFO transport/net.cu:480 -> 2
"""


def test_warning_that_starts_a_return_chain_is_the_fatal_line(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, RECV_POLL)
    assert inc["rule"] == "unrecognised-fatal-error"
    assert initiating_texts(inc) == [
        "ubuntu:39964:40044 [0] proxy.cc:1143 NCCL WARN Socket recv failed while polling for opId=0x7f6f18cb7f40"]


def test_chain_belongs_to_the_warning_of_its_thread(faultline_bin, validate, tmp_path):
    # The nearest WARN above the chain is the main thread's survived one;
    # the chain is the progress thread's.
    inc = first_incident(faultline_bin, validate, tmp_path, INTERLEAVED)
    assert inc["rule"] == "unrecognised-fatal-error"
    texts = initiating_texts(inc)
    assert len(texts) == 1 and "posted incorrect receive info" in texts[0], texts


def test_warning_without_its_chain_was_survived(faultline_bin, validate, tmp_path):
    for text in (SURVIVED, OTHER_THREAD_CHAIN, ZERO_RESULT):
        assert diagnose_text(faultline_bin, validate, tmp_path, text) == [], text
    # The same survived lines before a chained warning leave it the lead.
    inc = first_incident(faultline_bin, validate, tmp_path, SURVIVED + ZERO_RESULT + RECV_POLL)
    assert initiating_texts(inc) == [
        "ubuntu:39964:40044 [0] proxy.cc:1143 NCCL WARN Socket recv failed while polling for opId=0x7f6f18cb7f40"]


def test_catalog_rule_of_the_warning_keeps_it(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, IB_RETRY)
    assert [i["rule"] for i in found] == ["ib-retry-exceeded"]
    assert "Got completion with error 12" in initiating_texts(found[0])[0]
