"""A failure line that names no host, in a file whose other lines name one
host of their own, is on that host: a node's log as a poster or a
collector keeps it, where NCCL's INFO lines print `<host>:<pid>:<tid>`
and the Python traceback that ended the rank prints no host at all. Two
hosts in one file (a launcher's merged stream) leave the host open.
"""
from conftest import diagnose_path, first_incident

NCCL_INIT = (
    "{h}:970:1023 [{g}] NCCL INFO Channel 01 : 1[8a000] -> 0[89000] [send] via NET/Socket/0\n"
    "{h}:970:1023 [{g}] NCCL INFO Connected all rings\n"
    "{h}:970:1023 [{g}] NCCL INFO comm 0x55d0c0 rank {g} nranks 2 cudaDev {g} busId 8a000 - Init COMPLETE\n"
)

FAILURE = (
    "Traceback (most recent call last):\n"
    '  File "/opt/train/train.py", line 212, in <module>\n'
    "    loss.backward()\n"
    "RuntimeError: CUDA error: an illegal memory access was encountered\n"
)


def test_a_hostless_failure_line_takes_the_one_host_of_its_file(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, NCCL_INIT.format(h="cn136", g=1) + FAILURE)
    assert inc["rule"] == "cuda-illegal-address"
    assert inc["initiating"]["host"] == "cn136"


def test_two_hosts_in_one_file_leave_the_host_open(faultline_bin, validate, tmp_path):
    text = NCCL_INIT.format(h="cn136", g=1) + NCCL_INIT.format(h="cn137", g=0) + FAILURE
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["rule"] == "cuda-illegal-address"
    assert not inc["initiating"].get("host")


def test_the_file_of_another_host_says_nothing_of_this_one(faultline_bin, validate, tmp_path):
    (tmp_path / "other.log").write_text(NCCL_INIT.format(h="cn137", g=0))
    (tmp_path / "train.log").write_text(FAILURE)
    found = diagnose_path(faultline_bin, validate, tmp_path / "other.log", tmp_path / "train.log")
    assert found and found[0]["rule"] == "cuda-illegal-address"
    assert not found[0]["initiating"].get("host")


def test_torque_mail_names_its_jobs_host(faultline_bin, validate, tmp_path):
    # Torque's job mail (svr_mail.c): 'Exec host:  ' lists host/slot pairs,
    # mother superior first; the abort lines below it name no host.
    text = (
        "PBS Job Id: 1400749.mgt2.local\n"
        "Job Name:   train_gpt\n"
        "Exec host:  gpu-2-7.local/0+gpu-2-7.local/1+gpu-2-8.local/0\n"
        "job deleted\n"
        "Job deleted at request of root@mgt2.local\n"
        "job 1400749 exceeded MEM usage hard limit (90112 > 65536)\n"
    )
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["rule"] == "cgroup-oom"
    assert inc["initiating"]["host"].split(".")[0] == "gpu-2-7"
