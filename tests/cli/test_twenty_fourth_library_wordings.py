"""
Phrasing across versions, twenty-fourth pass (issue #18): the hardware and
network families' messages in NCCL's older maintained releases (2.18 to
2.25), the open GPU kernel module's NVRM lines (535, 550, 570, 580 and 595
branches), the mlx5 driver's port messages and DCGM's health messages, read
in the source of each release, where the catalog read one form only:

- NCCL 2.18 to 2.23 give up a refused or timed-out connection in two places
  of misc/socket.cc, socketStartConnect and socketPollConnect, with the same
  words: "socketPollConnect: exceeded retries (20000)" and "...: exceeded
  timeouts (3)" (ncclRemoteError). Only the socketStartConnect form was
  read; the other, the one a non-blocking connect that the peer refuses
  reaches, gave nothing. 2.24 onwards print "<fn>: connect returned <err>,
  exceeded error retry count (N)" (already read). No post of the
  socketPollConnect form was found: the lines are 2.21.5's format strings
  rendered with its retry limits.
- The driver prints an Xid's process as "pid=<n>, name=<name>" when a
  channel names one. Without one the 535 and 550 branches print
  "pid='<unknown>', name=<unknown>" (kernel_rc.c), the 570 to 595 branches
  leave both out ("NVRM: Xid (PCI:...): <n>, <message>"), and so did the
  drivers before 460. The application-fault Xids' (13, 31, 43, 45)
  extractor wanted a numeric pid, so those lines lost their bus id and Xid
  number. Excerpts: leptonai/gpud#46 (a 535 host's Xid 13), Bumblebee#677
  and doitsujin/dxvk#1027 (Xid 31 and 13 with no process), as posted.

Already read in every version (checked, no change): NCCL 2.18 to 2.25's
"NET/IB : Got async event : <event>" (2.18, 2.19), "NET/IB : <dev>:<port>
Got async event : <event>" (2.20 to 2.22), "async fatal event[ on QP|CQ
(<ptr>)]: <event>" and "Got async error event: port error" (2.23 to 2.25), whose event names are
libibverbs' ibv_event_type_str() strings, the same in every rdma-core;
"Got completion from peer <addr> with error N, opcode N, len N, vendor err
N" (2.18, 2.19), "with status=N opcode=N len=N vendor err N" (2.20 onwards,
"NET/IB:" and "hca <dev>" from 2.22); "Call to ibv_modify_qp failed with
error <err>" (2.18, 2.19), "... with error <err> errno N" (2.20 to 2.24),
"... with N <err>, on dev ..." (2.25); the socket WARNs of 2.18 to 2.25
("Connect to <addr> failed : <err>", "returned N(<err>) errno N(<err>)",
"poll() failed|returned N, no POLLOUT events", "Call to recv|send ...
failed : <err>", "Connection closed by remote peer"); "Cuda failure
'<string>'" and "Error : ring N does not loop back to start" (unchanged,
read by the fallback); "[Proxy Service N] Failed to execute operation
Connect from rank N, retcode N". The NVRM lines "GPU <bus>: GPU has fallen
off the bus.", "GPU <bus>: RmInitAdapter failed! (0x..:0x..:N)", "fallen
off the bus and is not responding to commands" and the Xid line with the
GPU-I / GPU-CI attribution, unchanged from 535 to 595. mlx5's "Port module
event[error]: module N, Cable error, <why>" (mlx5_core_err's
"<fn>:<line>:(pid N): " prefix or none) and "<netdev>: Link down". DCGM
3.1 to 4.6's "Detected XID N for GPU N", "Detected fatal NvSwitch SXID
N", "Detected fatal errors on NvSwitch N link N", "NvSwitch physical ID
N's NvLink port N is currently down.", "NVSwitch N's NvLink N is down.",
"GPU N's NvLink link N is currently down" and 4.6's "GPU N has fallen off
the bus".
"""

import pytest

from conftest import leading_incident, scan_text


POLL_CONNECT_REFUSED_2_21 = """\
node017:12345:12399 [3] NCCL INFO Bootstrap : Using eth0:10.20.0.17<0>
node017:12345:12399 [3] misc/socket.cc:516 NCCL WARN socketPollConnect: exceeded retries (20000)
node017:12345:12399 [3] NCCL INFO misc/socket.cc:570 -> 6
node017:12345:12399 [3] NCCL INFO misc/socket.cc:621 -> 6
node017:12345:12399 [3] NCCL INFO bootstrap.cc:274 -> 6
"""


@pytest.mark.parametrize("line,signal,fields", [
    ("node017:12345:12399 [3] misc/socket.cc:516 NCCL WARN socketPollConnect: exceeded retries (20000)",
     "connect_exceeded_retries", {"pid": "12345"}),
    ("node017:12345:12399 [3] misc/socket.cc:525 NCCL WARN socketPollConnect: exceeded timeouts (3)",
     "connect_exceeded_retries", {"pid": "12345"}),
    ("[Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM "
     "Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter", "xid13",
     {"pci": "0000:cb:00", "xid": "13"}),
    ("[24128.834365] NVRM: Xid (PCI:0000:01:00): 31, Ch 00000003, engmask 00000101, intr 10000000", "xid31",
     {"pci": "0000:01:00", "xid": "31"}),
    ("[31609.615230] NVRM: Xid (PCI:0000:01:00): 13, Graphics Exception: Class 0x0 Subchannel 0x0 Mismatch", "xid13",
     {"pci": "0000:01:00", "xid": "13"}),
], ids=["nccl-2-21-poll-connect-retries", "nccl-2-21-poll-connect-timeouts", "xid13-pid-unknown-535",
        "xid31-no-process", "xid13-no-process"])
def test_version_wording_is_read_by_its_signal(faultline_bin, tmp_path, line, signal, fields):
    records = [r for r in scan_text(faultline_bin, tmp_path, line + "\n") if r["signal"] == signal]
    assert records, scan_text(faultline_bin, tmp_path, line + "\n")
    assert all(records[0]["fields"].get(k) == v for k, v in fields.items()), records[0]["fields"]


def test_refused_bootstrap_connect_on_nccl_2_21_is_a_socket_error(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, POLL_CONNECT_REFUSED_2_21, rule="nccl-socket-error",
                     any_line="socketPollConnect: exceeded retries")
