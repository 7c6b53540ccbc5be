"""Hosts that run different NCCL versions.

NCCL refuses a communicator whose members run different versions
(init.cc: 'Mismatched NCCL version detected : rank R version V rank R2
version V2', ncclInvalidUsage), and it does so on every rank at once: each
rank's traceback ends in PyTorch's 'NCCL error in: ..., invalid usage ...,
NCCL version X.Y.Z', the version of that rank's own libnccl. The first
fatal line by time is then any host's. The versions the processes state
(those errors, NCCL's 'NCCL version X.Y.Z+cudaA.B' banner, ProcessGroupNCCL's
'NCCL version: X.Y.Z' start-up line) name the host that went wrong: the one
whose version fewer hosts run, or, when as many run each, the older one.
"""
from conftest import diagnose_path, initiating_texts

ERROR = ("{t} [rank{rank}]:torch.distributed.DistBackendError: NCCL error in: "
         "/opt/pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:317, invalid usage (run with "
         "NCCL_DEBUG=WARN for details), NCCL version {version}\n")
BANNER = "{t} {host}:{pid}:{pid} [{dev}] NCCL INFO NCCL version {version}+cuda12.4\n"
INIT = ("{t} {host}:{pid}:{pid} [{dev}] NCCL INFO comm 0x55d4c8a0 rank {rank} nranks {world} cudaDev {dev} "
        "nvmlDev {dev} busId {dev}8000 commId 0x7c1f00d2 - Init START\n")


def write_job(tmp_path, hosts, error_second, gpus=2):
    """One log per rank under <host>/; hosts: [(name, version)]. Rank r's
    error is stamped at error_second[host index] + r / 100."""
    world = len(hosts) * gpus
    for h, (host, version) in enumerate(hosts):
        d = tmp_path / host
        d.mkdir()
        for dev in range(gpus):
            rank = h * gpus + dev
            pid = 4100 + dev
            log = "".join([
                BANNER.format(t="2026-12-01T10:00:00.100Z", host=host, pid=pid, dev=dev, version=version),
                INIT.format(t="2026-12-01T10:00:00.200Z", host=host, pid=pid, dev=dev, rank=rank, world=world),
                ERROR.format(t=f"2026-12-01T10:00:{error_second[h] + rank / 100:06.3f}Z", rank=rank,
                             version=version),
            ])
            (d / f"rank{rank}.log").write_text(log)
    return tmp_path


def lead(faultline_bin, validate, root):
    incidents = diagnose_path(faultline_bin, validate, root)
    assert incidents, "no incident"
    return incidents[0]


def test_older_of_two_hosts_leads_though_it_failed_later(faultline_bin, validate, tmp_path):
    root = write_job(tmp_path, [("dgx01", "2.20.5"), ("dgx02", "2.19.3")], error_second=[5, 7])
    inc = lead(faultline_bin, validate, root)
    assert inc["initiating"]["host"] == "dgx02", inc["explanation"]
    assert "2.19.3 is the odd one out" in inc["explanation"], inc["explanation"]
    assert any("NCCL version 2.19.3" in t for t in initiating_texts(inc)), initiating_texts(inc)


def test_the_version_fewer_hosts_run_leads_even_when_newer(faultline_bin, validate, tmp_path):
    root = write_job(tmp_path, [("node1", "2.21.5"), ("node2", "2.21.5"), ("node3", "2.23.4")],
                     error_second=[5, 5, 8])
    inc = lead(faultline_bin, validate, root)
    assert inc["initiating"]["host"] == "node3", inc["explanation"]
    assert "fewer hosts run it" in inc["explanation"], inc["explanation"]


def test_one_version_everywhere_keeps_the_first_fatal_line(faultline_bin, validate, tmp_path):
    root = write_job(tmp_path, [("dgx01", "2.20.5"), ("dgx02", "2.20.5")], error_second=[5, 7])
    inc = lead(faultline_bin, validate, root)
    assert inc["initiating"]["host"] == "dgx01", inc["explanation"]
    assert "odd one out" not in inc["explanation"], inc["explanation"]


def test_a_host_stating_two_versions_decides_nothing(faultline_bin, validate, tmp_path):
    # Two libnccl in one host's processes (or another job's lines): no host
    # can be called the odd one out.
    root = write_job(tmp_path, [("dgx01", "2.20.5"), ("dgx02", "2.19.3")], error_second=[5, 7])
    (root / "dgx01" / "rank0.log").open("a").write(
        BANNER.format(t="2026-12-01T10:00:09.000Z", host="dgx01", pid=4100, dev=0, version="2.19.3"))
    inc = lead(faultline_bin, validate, root)
    assert inc["initiating"]["host"] == "dgx01", inc["explanation"]
    assert "odd one out" not in inc["explanation"], inc["explanation"]


def test_torch_22_start_up_line_states_the_version(faultline_bin, validate, tmp_path):
    # PyTorch 2.1-2.2 put the NCCL version first on ProcessGroupNCCL's
    # start-up line (signal pg_init_options_v21 reads its rank): with no
    # NCCL banner and a fatal line that states no version, that line alone
    # says which host runs which.
    for host, version, rank, second in [("gpu01", "2.19.3", 0, 5), ("gpu02", "2.18.6", 1, 9)]:
        d = tmp_path / host
        d.mkdir()
        (d / "train.log").write_text(
            f"I1201 10:00:00.300 ProcessGroupNCCL.cpp:686] [Rank {rank}] ProcessGroupNCCL initialization "
            f"options: NCCL version: {version}, size: 2, global rank: {rank}, TORCH_NCCL_ASYNC_ERROR_HANDLING: 1, "
            "TIMEOUT(ms): 1800000, USE_HIGH_PRIORITY_STREAM: 0\n"
            f"{host}:3001:3001 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.{rank + 1}<0>\n"
            f"2026-12-01 10:00:{second:02d},000 RuntimeError: NCCL communicator initialization failed\n")
    inc = lead(faultline_bin, validate, tmp_path)
    assert inc["initiating"]["host"] == "gpu02", inc["explanation"]
