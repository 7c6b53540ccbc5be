"""A line that blames its peer (NCCL's "Got completion from peer X") is what
the other end's failure looks like from the host that printed it: that
host is a witness. When a symptom-only incident also holds lines that
report a failure of their own host (the HCA's async event: a local work
queue error), the incident is on that host, not on no host at all."""
from conftest import diagnose_text

# NCCL's net_ib.cc formats: "NET/IB : %s:%d Got async event : %s" and
# "NET/IB : Got completion from peer %s with status=%d opcode=%d len=%d
# vendor err %d (%s)...", under the usual host:pid:tid [dev] prefix.
LOCAL = ("gpu-a07:2211:2290 [3] transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_3:1 "
         "Got async event : local access violation work queue error\n")
WITNESS = ("gpu-b12:3310:3371 [1] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion "
           "from peer 10.1.3.7<41235> with status=9 opcode=0 len=0 vendor err 138 (Send)\n")


def test_a_witness_line_does_not_hide_the_failing_host(faultline_bin, validate, tmp_path):
    incs = diagnose_text(faultline_bin, validate, tmp_path, LOCAL * 2 + WITNESS)
    assert incs and incs[0]["rule"] == "nccl-remote-error", incs
    assert incs[0]["initiating"]["host"] == "gpu-a07"


def test_witness_lines_alone_keep_no_host_of_their_own(faultline_bin, validate, tmp_path):
    other = WITNESS.replace("gpu-b12", "gpu-c03").replace("10.1.3.7", "10.1.3.9")
    incs = diagnose_text(faultline_bin, validate, tmp_path, WITNESS + other)
    assert incs and incs[0]["rule"] == "nccl-remote-error", incs
    assert incs[0]["initiating"]["host"] in (None, "")
