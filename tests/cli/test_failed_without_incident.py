"""Failed jobs whose logs gave no incident at all, because the one line that
says so is no exception, crash or exit status (issue #18, "when no rule
fits"). Each is the message the tool itself prints as it gives up, read from
its source:

- slurmctld drains a node whose slurmd registered fewer GPUs than configured
  (gres.c: '<gres/type> count reported lower than configured (N < M)',
  older 'count too low'); sinfo -R cuts it to 20 characters;
- vLLM v0's start-up check that the KV cache holds one max-length sequence
  ('The model's max seq len (N) is larger than the maximum number of tokens
  that can be stored in KV cache (M)'), shown without its ValueError by
  launchers (the check's other messages are cuda-oom's);
- JAX's 'CUDA backend failed to initialize: ...' (xla_bridge.py): it falls
  back to the CPU;
- a package manager that cannot find a package (dnf's 'Error: Unable to find
  a match: ...', apt's 'E: Unable to locate package ...') and the GPU
  Operator driver container's 'Could not resolve Linux kernel version';
- Fabric Manager's 'fabric manager config file item: X has an invalid value',
  after which it exits (an NVSwitch fabric that never comes up);
- TensorFlow's allocator OOM hard-wrapped before its device path.
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"

SCONTROL_GRES = """\
NodeName=gpu-node-7 Arch=x86_64 CoresPerSocket=16
   Gres=gpu:a100:8
   State=IDLE+DRAIN+INVALID_REG ThreadsPerCore=2 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A
   Partitions=gpu
   Reason=gres/gpu count reported lower than configured (0 < 8) [slurm@2026-09-15T08:12:40]
"""

SINFO_R_GRES = """\
REASON               USER      TIMESTAMP           NODELIST
gres/gpu count repor slurm     2026-09-15T08:12:40 gpu-node-7
"""

VLLM_V0_KV = """\
INFO 12-02 10:11:12 worker.py:232] Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB
INFO 12-02 10:11:12 executor_base.py:111] # GPU blocks: 1227, # CPU blocks: 2048
The model's max seq len (30000) is larger than the maximum number of tokens that can be stored in KV cache (19632). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.
"""

JAX_BACKEND = """\
CUDA backend failed to initialize: Found cuDNN version 8700, but JAX was built against version 8904, which is newer. The copy of cuDNN that is installed must be at least as new as the version against which JAX was built. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)
[CpuDevice(id=0)]
"""

DNF_NO_MATCH = """\
Installing Linux kernel headers...
No match for argument: kernel-headers-4.18.0-305.el8.x86_64
Error: Unable to find a match: kernel-headers-4.18.0-305.el8.x86_64 kernel-devel-4.18.0-305.el8.x86_64
"""

DNF_NO_MATCH_ONLY_ARGUMENT = """\
No match for argument: kernel-headers-4.18.0-305.el8.x86_64
"""

APT_NO_PACKAGE = """\
Reading package lists...
Building dependency tree...
E: Unable to locate package linux-headers-6.5.0-1020-aws
"""

DRIVER_KERNEL = """\
Resolving Linux kernel version...
W: Failed to fetch http://archive.ubuntu.com/ubuntu/dists/jammy-security/InRelease  Temporary failure resolving 'archive.ubuntu.com'
Could not resolve Linux kernel version
Stopping NVIDIA persistence daemon...
"""

FM_CONFIG = """\
fabric manager config file item: FABRIC_NODE_CONFIG_FILE has an invalid value
"""

TF_OOM_WRAPPED = """\
OOM when allocating tensor with shape[64,256,56,56] and type float on
/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc
"""


# Each tool's give-up message leads: (case, log, rule, initiating line).
GIVE_UPS = [
    ("scontrol_gres_count_reason_is_a_fatal_line", SCONTROL_GRES,
     FALLBACK, "gres/gpu count reported lower than configured (0 < 8)"),
    ("sinfo_cut_gres_count_reason_is_a_fatal_line", SINFO_R_GRES, FALLBACK, "gres/gpu count repor"),
    ("vllm_kv_cache_check_v0_without_its_exception", VLLM_V0_KV,
     FALLBACK, "that can be stored in KV cache (19632)"),
    ("jax_cuda_backend_failure_is_a_fatal_line", JAX_BACKEND, FALLBACK, "CUDA backend failed to initialize"),
    ("dnf_no_match_is_a_fatal_line", DNF_NO_MATCH, FALLBACK, "Error: Unable to find a match"),
    ("apt_unlocatable_package_is_a_fatal_line", APT_NO_PACKAGE, FALLBACK, "E: Unable to locate package"),
    ("driver_container_kernel_version_is_a_fatal_line", DRIVER_KERNEL,
     FALLBACK, "Could not resolve Linux kernel version"),
    ("fabric_manager_config_refusal_names_the_fabric", FM_CONFIG,
     "nvswitch-fabric-error", "FABRIC_NODE_CONFIG_FILE has an invalid value"),
    ("tf_oom_wrapped_before_its_device", TF_OOM_WRAPPED,
     "cuda-oom", "OOM when allocating tensor with shape[64,256,56,56]"),
]


@pytest.mark.parametrize("text,rule,line", [g[1:] for g in GIVE_UPS], ids=[g[0] for g in GIVE_UPS])
def test_give_up_message_leads(faultline_bin, validate, tmp_path, text, rule, line):
    leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, line=line)


def test_dnf_argument_notice_alone_is_no_failure(faultline_bin, validate, tmp_path):
    assert diagnose_text(faultline_bin, validate, tmp_path, DNF_NO_MATCH_ONLY_ARGUMENT) == []


DS_SCALE_AT_FLOOR = """\
[2021-01-26 22:04:09,191] [INFO] [logging.py:60:log_dist] [Rank 0] Overflow detected. Skipping step. Attempted loss scale: 8.0, reducing to 4.0
[2021-01-26 22:04:21,402] [INFO] [logging.py:60:log_dist] [Rank 0] Overflow detected. Skipping step. Attempted loss scale: 2.0, reducing to 1.0
[2021-01-26 22:04:25,777] [INFO] [logging.py:60:log_dist] [Rank 0] Overflow detected. Skipping step. Attempted loss scale: 1, reducing to 1
"""

DS_SCALE_HALVED = """\
[2023-04-28 06:51:30,648] [INFO] [loss_scaler.py:181:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768
[2023-04-28 06:51:31,392] [INFO] [loss_scaler.py:181:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 32768, reducing to 16384
"""


def test_loss_scale_overflowing_at_its_floor_is_a_fatal_line(faultline_bin, validate, tmp_path):
    """DeepSpeed's scaler at its floor cannot go lower: every step overflows
    (DeepSpeed ends the run there itself when raise_error_at_min_scale is set)."""
    leading_incident(faultline_bin, validate, tmp_path, DS_SCALE_AT_FLOOR, rule=FALLBACK,
                     line="Attempted loss scale: 1, reducing to 1")


def test_loss_scale_halving_is_no_failure(faultline_bin, validate, tmp_path):
    assert diagnose_text(faultline_bin, validate, tmp_path, DS_SCALE_HALVED) == []


MOAB_MAIL = """\
PBS Job Id: 52237.stallo.uit.no
Job Name:   relax_step2
job deleted
Job deleted at request of maui@stallo.uit.no
MOAB_INFO:  job exceeded wallclock limit
"""


def test_moab_wallclock_cancel_is_the_time_limit(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, MOAB_MAIL, rule="slurm-time-limit",
                     line="job exceeded wallclock limit")


TERMINATED_AFTER_BAR = """\
Clustering...
Elapsed time 1528.390 s
getting output of UniformTimeClustering:  20% (117/558) [#      ] eta 28:34:54 \\Terminated
"""

TERMINATED_AFTER_WALLTIME = """\
=>> PBS: job killed: walltime 1206 exceeded limit 1200
Terminated
"""


def test_shell_terminated_after_a_progress_bar_is_a_sigterm(faultline_bin, validate, tmp_path):
    """bash's 'Terminated' (SIGTERM's text) glued to a bar drawn with carriage
    returns: the job died of SIGTERM, whose sender left no line."""
    inc = leading_incident(faultline_bin, validate, tmp_path, TERMINATED_AFTER_BAR, rule=FALLBACK,
                           line="Terminated")
    fields = inc["initiating"]["evidence"][0].get("fields", {})
    assert fields.get("exit_signal") == "SIGTERM", inc["initiating"]["evidence"][0]


def test_shell_terminated_after_a_walltime_kill_is_that_kill(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, TERMINATED_AFTER_WALLTIME, rule="slurm-time-limit",
                     line="walltime 1206 exceeded limit 1200")
