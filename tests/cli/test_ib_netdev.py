"""A port that went down is often logged only by its netdev ("ibp26s0:
Lost carrier"). The host's ibdev2netdev or `rdma link show` output ties
that netdev to its HCA, and NCCL's device and channel lines tie the HCA
to the rank sending through it: the incident is that rank's, on that HCA.
Without such output the netdev names no HCA."""
import pytest

from conftest import diagnose_path

HOSTS = ["gpu-c01", "gpu-c02"]
COMM = "0x5be02f7719ac4d63"


def rank_log(rank):
    host, local = HOSTS[rank // 2], rank % 2
    pid = 52100 + rank
    p = f"[rank{rank}]:{host}:{pid}:{pid + 40} [{local}]"
    lines = [
        f"{p} NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.2.0.{rank // 2 + 11}<0>",
        f"{p} NCCL INFO ncclCommInitRankConfig comm 0x61a0e{rank}00 rank {rank} nranks 4 cudaDev {local} "
        f"nvmlDev {local} busId {local + 1}8000 commId {COMM} - Init COMPLETE",
        f"{p} NCCL INFO Channel 00/0 : {rank}[{local}] -> {(rank + 2) % 4}[{local}] [send] via NET/IB/{local}",
        f"[rank{rank}]:[2025-03-14 02:10:00,120] [INFO] [logging.py:128:log_dist] [Rank {rank}] step=50, skipped=0",
    ]
    # Rank 0 (the other HCA of the host) sees its peer's connection close
    # first; the ranks of the port that went down fail after it.
    if rank == 0:
        lines.append(f"[rank0]:[2025-03-14 02:12:07] {p} misc/socket.cc:49 NCCL WARN socketProgress: "
                     "Connection closed by remote peer 10.2.0.12<55590>")
    elif rank in (1, 3):
        peer = HOSTS[1 - rank // 2]
        lines.append(f"[rank{rank}]:[2025-03-14 02:12:10] {p} transport/net_ib.cc:1696 NCCL WARN NET/IB : "
                     f"Got completion from peer 10.2.0.{11 if peer == HOSTS[0] else 12}<59030> with status=12 "
                     "opcode=0 len=0 vendor err 129 (Send)")
    lines.append(f"[rank{rank}]:[E314 02:12:12.376968011 ProcessGroupNCCL.cpp:2271] [PG ID 0 PG GUID 0(default_pg) "
                 f"Rank {rank}]  failure detected by watchdog at work sequence id: 9731 PG status: "
                 "last enqueued work: 9733, last completed work: 9730")
    return "\n".join(lines) + "\n"


# ibdev2netdev (mlnx-tools ofed_scripts/ibdev2netdev), its -v form with the
# PCI function first, and iproute2's `rdma link show`.
MAPS = {
    "ibdev2netdev": "mlx5_0 port 1 ==> ibp12s0 (Up)\nmlx5_1 port 1 ==> ibp26s0 (Down)\n",
    "ibdev2netdev-v": (
        "0000:0c:00.0 mlx5_0 (MT4123 - MCX653105A-HDAT) ConnectX-6 VPI adapter card fw 20.31.1014 "
        "port 1 (ACTIVE) ==> ibp12s0 (Up)\n"
        "0000:1a:00.0 mlx5_1 (MT4123 - MCX653105A-HDAT) ConnectX-6 VPI adapter card fw 20.31.1014 "
        "port 1 (DOWN  ) ==> ibp26s0 (Down)\n"),
    "rdma-link": (
        "link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid 17 sm_lid 1 lmc 0 state ACTIVE "
        "physical_state LINK_UP netdev ibp12s0\n"
        "link mlx5_1/1 subnet_prefix fe80:0000:0000:0000 lid 18 sm_lid 1 lmc 0 state DOWN "
        "physical_state DISABLED netdev ibp26s0\n"),
}


def archive(tmp_path, mapping):
    for rank in range(4):
        d = tmp_path / HOSTS[rank // 2]
        d.mkdir(exist_ok=True)
        (d / f"rank-{rank}.log").write_text(rank_log(rank))
    (tmp_path / HOSTS[0] / "syslog").write_text(
        "Mar 14 02:12:05 gpu-c01 systemd-networkd[1298]: ibp26s0: Lost carrier\n")
    if mapping:
        (tmp_path / HOSTS[0] / f"{mapping}.txt").write_text(MAPS[mapping])
    return tmp_path


@pytest.mark.parametrize("mapping", sorted(MAPS))
def test_lost_carrier_names_the_rank_of_the_netdevs_hca(faultline_bin, validate, tmp_path, mapping):
    incs = diagnose_path(faultline_bin, validate, archive(tmp_path, mapping))
    assert incs and incs[0]["rule"] == "ib-port-down", [i["rule"] for i in incs]
    ini = incs[0]["initiating"]
    assert ini["host"] == "gpu-c01"
    assert ini.get("hca") == "mlx5_1", ini
    assert ini["rank"] == 1, ini


def test_without_a_netdev_map_no_hca_is_claimed(faultline_bin, validate, tmp_path):
    incs = diagnose_path(faultline_bin, validate, archive(tmp_path, None))
    assert incs and incs[0]["rule"] == "ib-port-down", [i["rule"] for i in incs]
    ini = incs[0]["initiating"]
    assert ini["host"] == "gpu-c01"
    assert not ini.get("hca"), ini
