"""Hardware- and network-looking lines in runs that did not fail, or failed for
another reason, from the third hardware-negatives audit
(tests/cli/endings/hw3-*.log; issue #18: no hardware verdict on a negative,
and a survived or teardown line is not the cause):

- No hw3 negative (wandb's network retries, NCCL skipping HCAs it could not
  open, aws-ofi-nccl's teardown WARN before "Abort COMPLETE", UCX's GID table
  event, TCPStore clients whose store closed over one host) gets a hardware-
  or network-layer incident the run did not survive, nor a network partition
  verdict; the NCCL failure after a RoCE GID table change keeps its network
  verdict.
- c10d's SocketImpl names both ends of a store connection, this side's
  first ('addr=', from getsockname) and then the remote's. When they are one
  host (the same name or address, or both loopback) no network carried the
  connection: the store's process there closed it. A verdict standing on
  such lines alone is then the fallback's (no catalog rule says why that
  process ended), never a network partition; a connection between two hosts
  keeps the rendezvous rule's verdict.
"""
import json
import pathlib

import pytest

from conftest import diagnose_path, diagnose_text

ENDINGS = pathlib.Path(__file__).resolve().parent / "endings"
INDEX = json.loads((ENDINGS / "index.json").read_text())
HW3 = sorted(n for n in INDEX if n.startswith("hw3-"))
PARTITION = "Network Partition"


def live(found, layers=("hardware", "network")):
    """The incidents at those layers that the run did not survive."""
    return [i for i in found
            if i.get("layer") in layers and not (i.get("initiating") or {}).get("survived", False)]


def partitions(found):
    return [i["rule"] for i in found if i.get("reference") == PARTITION]


# Every negative, its gap or not: the gaps are incidents some negatives still
# get (the fallback's, a wandb symptom), none of them hardware or network.
@pytest.mark.parametrize("name", [n for n in HW3 if not INDEX[n]["failed"]])
def test_hw3_negative_has_no_hardware_or_network_verdict(faultline_bin, validate, name):
    found = diagnose_path(faultline_bin, validate, ENDINGS / f"{name}.log")
    assert live(found) == [], [(i["rule"], i["layer"]) for i in live(found)]
    assert partitions(found) == []


def test_hw3_gid_change_failure_keeps_its_network_verdict(faultline_bin, validate):
    found = diagnose_path(faultline_bin, validate,
                          ENDINGS / "hw3-nccl-gid-table-change-then-completion-error-12.log")
    assert found and found[0]["layer"] == "network", [(i["rule"], i["layer"]) for i in found[:2]]


# Store clients' lines as PyTorch prints them (rendezvous-connection-error's
# examples, from public threads): both ends on one host, by loopback name,
# by IPv6-mapped loopback address, by host name.
ONE_HOST = [
    "[W304 19:44:41.898456436 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=73, "
    "addr=localhost:46764, remote=localhost:29500): Failed to recv, got 0 bytes. Connection was likely "
    "closed. Did the remote server shutdown or crash?",
    "[rank2]:[W625 23:35:35.303797152 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=6, "
    "addr=[::ffff:127.0.0.1]:37468, remote=[::ffff:127.0.0.1]:6006): failed to recv, got 0 bytes",
    "(EmbodiedFSDPActor pid=194723) [rank1]:[W504 16:19:23.815092992 TCPStore.cpp:138] [c10d] "
    "recvValueWithTimeout failed on SocketImpl(fd=103, addr=[xukele]:38272, remote=[xukele]:39067): "
    "Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?",
]

# Both ends on two hosts: a store on another node that went away.
TWO_HOSTS = [
    "[rank12]:[W318 10:00:41.915284135 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=135, "
    "addr=[sglang-0-1.sglang.default.svc.transwarp.local]:48750, "
    "remote=[sglang-0.default.pod.transwarp.local]:20000): Connection reset by peer",
    "[rank15]:[W305 10:17:38.404745404 TCPStore.cpp:106] [c10d] sendBytes failed on SocketImpl(fd=102, "
    "addr=tpgds-aihub0008.delta.sbrf.ru:33978, remote=10.99.91.59:5000): Broken pipe",
]


@pytest.mark.parametrize("line", ONE_HOST)
def test_a_store_connection_within_one_host_is_no_network_partition(faultline_bin, validate, tmp_path, line):
    found = diagnose_text(faultline_bin, validate, tmp_path, line + "\n")
    assert found and partitions(found) == [], [(i["rule"], i.get("reference")) for i in found]
    assert found[0]["reference"] == "Unrecognised fatal error"
    assert "both ends on one host" in found[0]["explanation"]


@pytest.mark.parametrize("line", TWO_HOSTS)
def test_a_store_connection_between_two_hosts_keeps_its_verdict(faultline_bin, validate, tmp_path, line):
    found = diagnose_text(faultline_bin, validate, tmp_path, line + "\n")
    assert found and found[0]["reference"] == PARTITION, [(i["rule"], i.get("reference")) for i in found]
