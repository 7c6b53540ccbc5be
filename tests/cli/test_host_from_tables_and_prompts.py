"""Hosts that only a table row or a shell prompt names (issue #18).

- A shell session pasted into a report: the prompt (bash's default PS1
  `\\u@\\h:\\w\\$ ` as Debian sets it, Red Hat's `[\\u@\\h \\W]\\$ `, zsh's
  `%n@%m %~ %# `) above a command's output names the host the output came
  from; the output's lines name none. The host holds for the lines under the
  prompt up to the next one, unless the command runs elsewhere (ssh, srun,
  kubectl, ...). What only looks like a prompt (an e-mail address,
  `git@github.com:`, a prompt quoted inside a log line, a prompt without a
  command) names nothing.
- Slurm's `sinfo -R` row (REASON USER TIMESTAMP NODELIST, sinfo's default
  format "%50E %9u %19H %N" for --list-reasons): the row's one node is the
  host of its reason; a row of several nodes names none.

The output lines are nvidia-smi's and the driver's own messages
(nvml's "Unable to determine the device handle for GPU%s: %s", the NVRM Xid
report), as the issue threads behind tests/realworld and tests/cli/hosts
show them; the hosts are made up.
"""
import pytest

from conftest import first_incident, scan_text

NVML = "Unable to determine the device handle for GPU0000:03:00.0: Unknown Error\n"
XID = ("[Wed Jul 31 23:14:18 2024] NVRM: Xid (PCI:0000:00:05): 79, pid=1045242, name=python3, "
       "GPU has fallen off the bus.\n")


def hosts_of(faultline_bin, tmp_path, text, needle):
    """The hosts scan gives the records of the lines holding `needle`."""
    recs = [r for r in scan_text(faultline_bin, tmp_path, text) if needle in r.get("text", "")]
    assert recs, f"no record of a line holding {needle!r}"
    return {r.get("host") or None for r in recs}


@pytest.mark.parametrize("prompt,host", [
    ("ubuntu@gpu-node-7:~$ nvidia-smi\n", "gpu-node-7"),
    ("zeyer@cn-234 ~ % nvidia-smi\n", "cn-234"),
    ("[root@node17 ~]# nvidia-smi -q\n", "node17"),
    ("(base) alice@a100-03:~/work$ nvidia-smi\n", "a100-03"),
])
def test_a_prompts_host_is_the_host_of_the_output_below_it(faultline_bin, validate, tmp_path, prompt, host):
    assert hosts_of(faultline_bin, tmp_path, prompt + NVML, "device handle") == {host}
    inc = first_incident(faultline_bin, validate, tmp_path, prompt + NVML)
    assert inc["initiating"]["host"] == host


def test_the_next_prompt_takes_over(faultline_bin, tmp_path):
    text = ("[root@node17 ~]# uptime\n 10:01:02 up 3 days\n"
            "root@node4:~# dmesg -T | grep NVRM\n" + XID)
    assert hosts_of(faultline_bin, tmp_path, text, "NVRM: Xid") == {"node4"}


@pytest.mark.parametrize("prompt", [
    # No host in the prompt; a command run on another machine.
    "$ nvidia-smi\n",
    "ubuntu@login1:~$ ssh gpu-node-7 nvidia-smi\n",
    "ubuntu@login1:~$ srun -N1 nvidia-smi\n",
    # Not prompts: an address, a remote's answer, a prompt inside a log
    # line, a prompt with no command typed after it.
    "mail alice@example.com: $ nvidia-smi\n",
    "git@github.com: Permission denied (publickey).\n",
    "[rank0]: ubuntu@gpu-node-7:~$ nvidia-smi\n",
    "ubuntu@gpu-node-7:~$ \n",
])
def test_no_host_without_a_real_prompt_of_this_machine(faultline_bin, tmp_path, prompt):
    assert hosts_of(faultline_bin, tmp_path, prompt + NVML, "device handle") == {None}


SINFO_HEADER = "REASON                                             USER      TIMESTAMP           NODELIST\n"


def test_a_sinfo_reason_rows_node_is_its_host(faultline_bin, validate, tmp_path):
    text = SINFO_HEADER + "Kill task failed                                   root      2024-01-25T15:12:23 gpu-node-7\n"
    assert hosts_of(faultline_bin, tmp_path, text, "Kill task failed") == {"gpu-node-7"}
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["initiating"]["host"] == "gpu-node-7"


@pytest.mark.parametrize("row", [
    # Several nodes: the reason is every one's, no single host.
    "Kill task failed                                   root      2024-01-25T15:12:23 gpu-node-[7-8]\n",
    # scontrol's Reason= field: its node is on another line.
    "   Reason=Kill task failed [root@2024-01-25T15:12:23]\n",
])
def test_no_host_from_a_row_of_several_nodes_or_another_shape(faultline_bin, tmp_path, row):
    assert hosts_of(faultline_bin, tmp_path, SINFO_HEADER + row, "Kill task failed") == {None}
