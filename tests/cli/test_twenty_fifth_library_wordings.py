"""
Phrasing across versions, twenty-fifth pass (issue #18): the newest
releases of NCCL (2.23 to 2.30), ProcessGroupNCCL in PyTorch 2.6 to 2.9
and the driver's Xid lines of the R560 to R595 branches, read in the source
of each release, where the catalog's signals missed a wording:

- NCCL 2.25 onwards check multi-node NVLink at communicator init
  (mnnvl.cc): on a GPU that NVML puts in an NVLink clique of several nodes
  they allocate, export and import one FABRIC memory handle, which needs
  the IMEX service, and stop with ncclSystemError when that fails. 2.25 and
  2.26 print "MNNVL (cliqueSize N) is available but not supported on this
  system. Check the IMEX configuration."; 2.27 to 2.30 "... is available
  but not working on this system." then "Check the IMEX channel
  configuration (/dev/nvidia-caps-imex-channels)." (the allocation) or
  "Check the IMEX configuration (nvidia-imex-ctl -N)." (export or import)
  and "Set NCCL_MNNVL_ENABLE=0 to ignore this issue.". No catalog rule read
  it: the fallback named the return chain. It is now nvswitch-fabric-error's
  (the NVLink fabric of the node is not usable). No issue thread posts it;
  the "Last error:" excerpt is a public cluster runbook's, as posted, the
  WARN form 2.28's format rendered.
- NCCL's socket transport (transport/net_socket.cc, every release to
  2.30) stops with "NET/Socket : peer <addr> message truncated : receiving
  N bytes instead of M" (up to 2.9 without the peer) when a peer sends more
  than the rank posted; 2.12.10 onwards add "If you believe your socket
  network is in healthy state, there may be a mismatch in collective sizes
  or environment settings (e.g. NCCL_PROTO, NCCL_ALGO) between ranks"
  (2.27 onwards "in a healthy state"). NCCL's maintainers answer it with
  ranks whose collectives differ, which is collective-desync-stuck's. The
  old catalog gave no incident. Excerpt: NVIDIA/nccl#626 as posted (2.10.3,
  the line wrapped by the poster).
- The bootstrap's "NET/Socket : No usable listening interface found" (2.18
  to 2.30, NCCL_COMM_ID in no local subnet) is bootstrap.cc's wording of
  "Bootstrap : no socket interface found": nccl-socket-error's. No post was
  found; the line is the format rendered.

Already read in every version (checked, no change): NCCL 2.23 to 2.30's
NVLS WARNs and IB async events and completion errors, the socket connect
and retry WARNs, "communicator encountered a fatal error (detected in
ncclIb...)", "Cuda failure N '<string>'" (2.30's header with the function
too), "Mismatched collective detected" and "Mismatched NCCL version
detected", and the Init START/COMPLETE lines ("[Rank N] " ahead in 2.30).
ProcessGroupNCCL in 2.6 to 2.9 (the Watchdog and HeartbeatMonitor classes
of 2.8 onwards print what ProcessGroupNCCL::watchdogHandler and
heartbeatMonitor did): "Watchdog caught collective operation timeout:
WorkNCCL(SeqNum=N, OpType=..., NumelIn=N, NumelOut=N, Timeout(ms)=N)",
"failure detected by watchdog at work sequence id: N PG status",
"Process group watchdog thread terminated with exception", "Some NCCL
operations have failed or timed out", "ProcessGroupNCCL's watchdog got
stuck for N seconds", "Received a dump signal due to a collective timeout
from this local rank|from  rank N" and "Terminating the process after
attempting to dump debug info"; FlightRecorder's "Stack trace of the failed
collective not found" and "Observed flight recorder dump signal from
another rank via TCPStore." say nothing the lines around them do not. The
driver's Xid line (kernel_rc.c: "NVRM: Xid (PCI:<bus>[ GPU-I:N[ GPU-CI:N]]):
N, pid=P, name=C, <text>", R560 and R565 with "pid='<unknown>',
name=<unknown>" and R570 to R595 with neither when no process is known),
whose number the catalog reads: 119/120 and 175 (GSP), 140 (unrecovered
ECC), 143, 144 to 149 and 155 (NVLink5), 150 and 154 (recovery action),
156/157 and 158.

Left alone: NCCL 2.28's "<op>: communicator was revoked" (ncclCommRevoke
by the application, after whatever failure made it revoke), the RAS
thread's INFO lines (its subsystem is not logged by default), 2.27's
"Failed to initialize any NET plugin" (no post, several causes); PyTorch
2.7 onwards' " remote error detected from rank: N" (opt-in
TORCH_NCCL_PROPAGATE_ERROR, no post); Xids 159 to 166, 168 and 170 (NVIDIA's
catalog: sympathetic, informational or confidential-computing NVLink
events; no post).
"""

import pytest

from conftest import diagnose_text, leading_incident, scan_text


MNNVL_WARN_2_28 = """\
gb-node-07:5123:5170 [0] NCCL INFO MNNVL busId 0x1b000 fabric UUID 6a1e2b3c.4d5e6f70 cliqueId 0x7fff state 3 healthMask 0x0
gb-node-07:5123:5170 [0] mnnvl.cc:67 NCCL WARN MNNVL (cliqueSize 72) is available but not working on this system. Check the IMEX channel configuration (/dev/nvidia-caps-imex-channels). Set NCCL_MNNVL_ENABLE=0 to ignore this issue.
gb-node-07:5123:5170 [0] NCCL INFO init.cc:1420 -> 2
gb-node-07:5123:5170 [0] NCCL INFO init.cc:1779 -> 2
gb-node-07:5123:5170 [0] NCCL INFO group.cc:75 -> 2 [Async thread]
"""

# A cluster's public runbook, as posted: the same failure under PyTorch
# without NCCL_DEBUG, NCCL's last warning wrapped after each sentence.
MNNVL_LAST_ERROR = """\
torch.distributed.DistBackendError: NCCL error ... unhandled system error
Last error:
MNNVL (cliqueSize 64) is available but not working on this system.
Check the IMEX channel configuration (/dev/nvidia-caps-imex-channels).
Set NCCL_MNNVL_ENABLE=0 to ignore this issue.
"""

# NVIDIA/nccl#626, as posted.
SOCKET_MESSAGE_TRUNCATED = """\
transport/net_socket.cc:424 NCCL WARN NET/Socket : peer 192.168.161.30<59210> message truncated :
receiving 1048576 bytes instead of 65536
"""

@pytest.mark.parametrize("line,signal", [
    ("gb-node-07:5123:5170 [0] mnnvl.cc:78 NCCL WARN MNNVL (cliqueSize 8) is available but not working on this "
     "system. Check the IMEX configuration (nvidia-imex-ctl -N). Set NCCL_MNNVL_ENABLE=0 to ignore this issue.",
     "nccl-mnnvl-imex-failed"),
    ("gb-node-07:5123:5170 [0] mnnvl.cc:69 NCCL WARN MNNVL (cliqueSize 4) is available but not supported on this "
     "system. Check the IMEX configuration.", "nccl-mnnvl-imex-failed"),
    ("node2:4410:4471 [1] transport/net_socket.cc:565 NCCL WARN NET/Socket : peer 10.0.0.12<43817> message "
     "truncated : receiving 1048576 bytes instead of 65536. If you believe your socket network is in a healthy "
     "state, there may be a mismatch in collective sizes or environment settings (e.g. NCCL_PROTO, NCCL_ALGO) "
     "between ranks", "nccl_socket_message_truncated"),
    ("node3:7711:7711 [0] bootstrap.cc:108 NCCL WARN NET/Socket : No usable listening interface found",
     "no_socket_interface"),
], ids=["mnnvl-imex-ctl-2-27", "mnnvl-2-25", "socket-truncated-2-27", "bootstrap-comm-id-subnet"])
def test_newest_wording_is_read_by_its_signal(faultline_bin, tmp_path, line, signal):
    records = scan_text(faultline_bin, tmp_path, line + "\n")
    assert signal in {r["signal"] for r in records}, records


@pytest.mark.parametrize("text,rule,any_line", [
    (MNNVL_WARN_2_28, "nvswitch-fabric-error", "is available but not working on this system"),
    (MNNVL_LAST_ERROR, "nvswitch-fabric-error", "MNNVL (cliqueSize 64)"),
], ids=["mnnvl-warn-chain", "mnnvl-last-error"])
def test_newest_wording_leads_its_rule(faultline_bin, validate, tmp_path, text, rule, any_line):
    leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, any_line=any_line)


def test_truncated_socket_message_is_a_collective_mismatch(faultline_bin, validate, tmp_path):
    rules = [inc["rule"] for inc in diagnose_text(faultline_bin, validate, tmp_path, SOCKET_MESSAGE_TRUNCATED)]
    assert rules[:1] == ["collective-desync-stuck"], rules
