"""GPU-cluster failures from the twenty-fifth corpus batch's work part:

- NCCL retries a failed call before it gives up: socketConnectCheck logs
  '<function>: connect returned <error>, retrying (N/M) after sleep for K
  msec' (misc/socket.cc from 2.24; 'connect to <peer> returned ...' in
  os/linux.cc since) and wrap_ibv_modify_qp 'Call to ibv_modify_qp failed
  with N <error>, ..., retrying N/M after K msec of sleep' (misc/ibvwrap.cc).
  A connect error before such a line was retried, not fatal
  (role:carried-on); NCCL's own 'exceeded error retry count' and the
  caller's error after it still make the failure.
- nvidia-installer reports a failed step ('ERROR: An error occurred while
  performing the step: "..."') over the step's command output: an error of
  that output (kbuild's 'ERROR: modpost: ...', scripts/mod/modpost.c) leads
  the report, which leads only when the output shows no error.
"""
from conftest import diagnose_text, leading_incident


POLL_RETRIED = """\
[03/16][2025-02-25 15:46:48,389] [misc/socket.cc:602] [s11gn1268:pid=3987720] NCCL WARN socketPollConnect poll() failed, ret 1, error Connection timed out, revents 8, connect to 172.16.30.229:39953
[03/16][2025-02-25 15:46:48,390] [misc/socket.cc:551] [s11gn1268:pid=3987720] NCCL INFO socketPollConnect: connect returned Connection timed out, retrying (1/34) after sleep for 100 msec
"""

POLL_GAVE_UP = POLL_RETRIED + """\
[03/16][2025-02-25 15:47:49,012] [misc/socket.cc:544] [s11gn1268:pid=3987720] NCCL WARN socketPollConnect: connect returned Connection timed out, exceeded error retry count (35)
[03/16][2025-02-25 15:47:49,020] torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, remote process exited or there was a network error, NCCL version 2.21.5
"""

INSTALLER_MODPOST = """\
-> Error.
ERROR: An error occurred while performing the step: "Checking to see whether the nvidia kernel module was successfully built". See /var/log/nvidia-installer.log for details.
-> The command `cd ./kernel; /usr/bin/make -k -j8 NV_KERNEL_MODULES="nvidia" NV_EXCLUDE_KERNEL_MODULES="" SYSSRC="/lib/modules/5.15.0-1070-aws/build" SYSOUT="/lib/modules/5.15.0-1070-aws/build"` failed with the following output:

make[1]: Entering directory '/usr/src/linux-headers-5.15.0-1070-aws'
MODPOST /opt/dkp/nvidia/NVIDIA-Linux-x86_64-470.199.02/kernel/Module.symvers
ERROR: modpost: GPL-incompatible module nvidia.ko uses GPL-only symbol 'rcu_read_unlock_strict'
make[2]: *** [scripts/Makefile.modpost:133: /opt/dkp/nvidia/NVIDIA-Linux-x86_64-470.199.02/kernel/Module.symvers] Error 1
"""


def primary_survived(incs):
    return bool(incs) and bool((incs[0].get("initiating") or {}).get("survived"))


def test_a_connect_nccl_retried_was_survived(faultline_bin, validate, tmp_path):
    incs = diagnose_text(faultline_bin, validate, tmp_path, POLL_RETRIED)
    assert not incs or primary_survived(incs), [i["rule"] for i in incs]


def test_a_connect_nccl_gave_up_on_is_still_the_failure(faultline_bin, validate, tmp_path):
    inc = leading_incident(faultline_bin, validate, tmp_path, POLL_GAVE_UP, reference="Network Partition",
                           line="socketPollConnect poll() failed")
    assert not inc["initiating"].get("survived")


def test_the_modpost_error_leads_the_installers_step_report(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, INSTALLER_MODPOST, rule="unrecognised-fatal-error",
                     line="ERROR: modpost: GPL-incompatible module nvidia.ko")


def test_the_installers_step_report_leads_an_output_with_no_error(faultline_bin, validate, tmp_path):
    bare = INSTALLER_MODPOST.replace(
        "ERROR: modpost: GPL-incompatible module nvidia.ko uses GPL-only symbol 'rcu_read_unlock_strict'\n", "")
    bare = bare[:bare.index("make[2]")]
    leading_incident(faultline_bin, validate, tmp_path, bare, rule="unrecognised-fatal-error",
                     line="An error occurred while performing the step")
