"""Cluster-operations wordings read where the program prints them:

- Slurm's fatal() (src/common/log.c) logs at LOG_LEVEL_FATAL with the
  prefix "fatal: " (after the program name on stderr, after the syslog tag
  in the journal) and exits: a Slurm daemon stopped. git prints "fatal: "
  too, about a repository; that names no Slurm daemon and is no failure of
  the job.
- slurmctld refuses a node's registration with "Setting node N state to
  INVAL with reason:R" (src/slurmctld/node_mgr.c) and drains it: a failure,
  but the reason (fewer GPUs, less memory than configured) does not say
  whether hardware or configuration is at fault, so no hardware verdict.
- The NVIDIA container runtime hook's CLI reports a failed stage as
  "nvidia-container-cli: <stage> error: <message>" (libnvidia-container
  src/cli/configure.c) and exits: the GPU container never started. An
  unmet CUDA requirement stays a driver too old (cuda-driver-mismatch).
- The NVIDIA HPC SDK offload runtime stops on a failed CUDA driver call with
  "Accelerator Fatal Error: call to <cuCall> returned error <N>" and the
  error's name and text, posted wrapped onto the next line: the wrapped
  CUDA error names the failure and the Accelerator line heads it.
"""
from conftest import diagnose_text, first_incident, initiating_texts


SLURMD_FATAL = """\
Jun 01 10:00:00 gpu07 systemd[1]: Starting Slurm node daemon...
Jun 01 10:00:00 gpu07 slurmd[4011]: fatal: gres.conf duplicate records for gpu
Jun 01 10:00:00 gpu07 systemd[1]: slurmd.service: Main process exited, code=exited, status=1/FAILURE
"""
GIT_FATAL = """\
step 10 loss 2.1
fatal: not a git repository (or any of the parent directories): .git
step 20 loss 1.9
"""

SLURMCTLD_INVAL = """\
slurmctld: debug:  Node cn1 has low real_memory size (32082 / 32768) < 100.00%
slurmctld: error: Setting node cn1 state to INVAL with reason:Low RealMemory (reported:32082 < 100.00% of configured:32768)
slurmctld: drain_nodes: node cn1 state set to DRAIN
"""

CONTAINER_HOOK = """\
$ nvidia-container-cli info
nvidia-container-cli: initialization error: nvml error: driver not loaded
"""
CONTAINER_REQUIREMENT = """\
docker: Error response from daemon: OCI runtime create failed: container_linux.go:380: starting container process caused: process_linux.go:545: container init caused: Running hook #0:: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver to a newer version, or use an earlier cuda container: unknown.
"""

NVHPC_WRAPPED = """\
Accelerator Fatal Error: call to cuStreamSynchronize returned error 700
(CUDA_ERROR_ILLEGAL_ADDRESS): Illegal address during kernel execution
File: mpi.f90  Function: m_sumb_d:755  Line: 1864
"""


def test_slurm_daemon_fatal_is_a_fatal_line(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, SLURMD_FATAL)
    assert inc["rule"] == "unrecognised-fatal-error", inc["explanation"]
    assert "fatal: gres.conf duplicate records" in initiating_texts(inc)[0]


def test_git_fatal_line_is_no_failure(faultline_bin, validate, tmp_path):
    assert not diagnose_text(faultline_bin, validate, tmp_path, GIT_FATAL)


def test_slurmctld_invalid_registration_is_a_failure_without_hardware_verdict(
        faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, SLURMCTLD_INVAL)
    assert inc["rule"] == "unrecognised-fatal-error", inc["explanation"]
    assert "state to INVAL with reason:Low RealMemory" in initiating_texts(inc)[0]


def test_container_hook_stage_error_is_a_fatal_line(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, CONTAINER_HOOK)
    assert inc["rule"] == "unrecognised-fatal-error", inc["explanation"]
    assert "nvidia-container-cli: initialization error" in initiating_texts(inc)[0]


def test_container_hook_cuda_requirement_stays_a_driver_too_old(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, CONTAINER_REQUIREMENT)
    assert inc["rule"] == "cuda-driver-mismatch", inc["explanation"]


def test_nvhpc_accelerator_fatal_error_heads_its_wrapped_cuda_error(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, NVHPC_WRAPPED)
    assert inc["rule"] == "cuda-illegal-address", inc["explanation"]
    assert initiating_texts(inc)[0].startswith("Accelerator Fatal Error: call to cuStreamSynchronize")
