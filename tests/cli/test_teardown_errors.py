"""An error a process prints after its first fatal error, while it tears
down (an NCCL abort or communicator destroy), is collateral of that first
error: the process had already failed. A different process's error keeps
its own incident. The lines are in NCCL's "host:pid:tid [dev]" format, as
its WARN and INFO lines print them (net_ib, init.cc)."""
from conftest import diagnose_text

IB = ("node07:4411:4490 [2] NCCL WARN NET/IB : Got completion from peer 10.1.0.8<43190> "
      "with error 12, opcode 0, len 0, vendor err 129 (Send) localGid ::ffff:10.1.0.7 "
      "remoteGid ::ffff:10.1.0.8\n"
      "node07:4411:4490 [2] NCCL INFO transport/net.cc:1130 -> 6\n")
DESTROY = "node07:4411:4411 [2] NCCL INFO comm 0x55d0c1e0 rank 2 nRanks 8 - Abort COMPLETE\n"


def cuda_failure(pid):
    return (f"node07:{pid}:{pid} [3] init.cc:1623 NCCL WARN Cuda failure "
            "'an illegal memory access was encountered'\n")


def rules(found):
    return [i["rule"] for i in found]


def collateral(inc):
    return [c["rule"] for c in inc.get("collateral", [])]


def test_an_error_of_the_failed_process_during_teardown_is_collateral(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, IB + DESTROY + cuda_failure(4411))
    assert found and found[0]["rule"] == "ib-retry-exceeded", rules(found)
    assert "cuda-illegal-address" in collateral(found[0]), found[0].get("collateral")
    assert "cuda-illegal-address" not in rules(found)


def test_another_process_error_keeps_its_incident(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, IB + DESTROY + cuda_failure(5123))
    assert "cuda-illegal-address" in rules(found), rules(found)
    assert "ib-retry-exceeded" in rules(found), rules(found)
