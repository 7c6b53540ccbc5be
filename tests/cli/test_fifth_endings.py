"""Endings the fifth endings audit (tests/cli/endings, e5-*.log, and gaps
the earlier audits left) read as nothing or at the wrong line, read where the
program that gave up prints them (issue #18):

- Tools that stop a job before it ran: Apptainer's and Singularity's fatal
  level with its padded label ("FATAL:   container creation failed: ..."),
  pip's resolver ("ERROR: Could not find a version that satisfies the
  requirement ...", "ERROR: No matching distribution found for ..."), conda's
  EnvironmentNameNotFound / EnvironmentLocationNotFound, bash's "<script>:
  line N: <command>: Permission denied" (status 126), slurmstepd's
  "error: execve(): <program>: <error>", srun's, salloc's and sbatch's
  "fatal: ...", the configuration file they could not read above it
  ("s_p_parse_file: unable to read \"<file>\": <error>"), Snakemake's
  "Exiting because a job execution failed", slurmctld's "Low RealMemory" /
  "Low CPUs" / "Low TmpDisk" drain reasons.
- Torque's abort mail: "Aborted by PBS Server" is no glibc abort; the reason
  on the next line ("Job cannot be executed") is the evidence.
- A child a signal ended in a runner's words: Airflow's "Task exited with
  return code Negsignal.SIGSEGV", Celery's billiard pool "exited with
  'signal 9 (SIGKILL)'" (process-sigkilled for SIGKILL).
- nvidia-persistenced's "NUMA: Failed to ..." leads its "failed to
  initialize"; c10d's "waitForInput: socket ... timed out after Nms" leads
  the traceback the rank then printed.
- concurrent.futures' BrokenProcessPool / BrokenThreadPool / BrokenExecutor,
  whose class names do not end in Error, as IPython prints them: the class
  alone, under numbered context lines that quote raise statements.
- CNTK's and ONNX Runtime's "CUDA failure 2: out of memory ; GPU=..."
  (cuda-oom), a Windows crash handler's "Exception Code: 0xC0000005".
- tqdm's bar over an iterable of unknown length ("Epoch 2: : 17671it
  [1:05:34,  4.49it/s, ...]") is progress: an error the bar went on after
  was survived.
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    "apptainer-fatal-padded": ("""\
INFO:    Setting 'NVIDIA_VISIBLE_DEVICES=all' to emulate legacy GPU binding.
FATAL:   container creation failed: mount /proc/self/fd/3->/var/lib/apptainer/mnt/session/rootfs error: while mounting image /proc/self/fd/3: failed to find loop device
""", "FATAL:   container creation failed"),
    "pip-no-matching-distribution": ("""\
Collecting torch==1.9.0+cu102
ERROR: Could not find a version that satisfies the requirement torch==1.9.0+cu102 (from versions: 1.10.0, 1.11.0)
ERROR: No matching distribution found for torch==1.9.0+cu102
""", "Could not find a version that satisfies the requirement torch==1.9.0+cu102"),
    "conda-environment-not-found": ("""\
+ conda activate train-env

EnvironmentNameNotFound: Could not find conda environment: train-env
You can list all discoverable environments with `conda info --envs`.

""", "EnvironmentNameNotFound: Could not find conda environment: train-env"),
    "bash-permission-denied-then-exit-126": ("""\
Starting job 4411
/opt/jobs/run.sh: line 12: ./launch_training.sh: Permission denied
Training exited with error code 126
""", "line 12: ./launch_training.sh: Permission denied"),
    "slurmstepd-execve": ("""\
slurmstepd: error: execve(): train.sh: Permission denied
srun: error: gpu-07: task 0: Exited with exit code 13
""", "execve(): train.sh: Permission denied"),
    "srun-fatal": ("""\
srun: error: Unable to resolve "gpu-07": Unknown host
srun: fatal: Unable to process configuration file
""", "srun: fatal: Unable to process configuration file"),
    "slurm-config-unreadable-leads-fatal": ("""\
srun: error: s_p_parse_file: unable to read "/etc/slurm/slurm.conf": Permission denied
srun: error: ClusterName needs to be specified
srun: fatal: Unable to process configuration file
""", 'unable to read "/etc/slurm/slurm.conf": Permission denied'),
    "persistenced-numa-leads-its-failure": ("""\
Mar 02 10:11:12 gh200-01 nvidia-persistenced[2211]: Started (2211)
Mar 02 10:11:12 gh200-01 nvidia-persistenced[2211]: NUMA: Failed to open /sys/devices/system/memory/auto_online_blocks: Read-only file system
Mar 02 10:11:12 gh200-01 nvidia-persistenced[2209]: nvidia-persistenced failed to initialize. Check syslog for more details.
""", "NUMA: Failed to open /sys/devices/system/memory/auto_online_blocks"),
    "snakemake-gave-up": ("""\
Error in rule train:
    jobid: 1
    output: model.pt
Shutting down, this might take some time.
Exiting because a job execution failed. Look above for error message
Complete log: .snakemake/log/2024-01-02T030405.123456.snakemake.log
""", "Exiting because a job execution failed"),
    "slurm-low-realmemory": ("""\
$ sinfo -R
REASON               USER      TIMESTAMP           NODELIST
Low RealMemory (repo slurm     2024-01-02T03:04:05 gpu-[01-02]
""", "Low RealMemory"),
    "torque-abort-mail": ("""\
PBS Job Id: 4242.head.local
Job Name:   train
Exec host:  gpu-3/0
Aborted by PBS Server 
Job cannot be executed
See Administrator for help
Exit_status=-9
""", "Job cannot be executed"),
    "airflow-negsignal-segv": ("""\
[2024-01-02, 03:04:05 UTC] {standard_task_runner.py:57} INFO - Started process 4242 to run task
[2024-01-02, 03:09:12 UTC] {local_task_job_runner.py:228} INFO - Task exited with return code Negsignal.SIGSEGV
""", "Task exited with return code Negsignal.SIGSEGV"),
    # IPython's traceback, cut above its frames: its numbered context
    # lines quote raise statements; the exception line names the class alone.
    "ipython-broken-process-pool": ("""\
    387 if self._exception:
    388     try:
--> 389         raise self._exception
    390     finally:
    391         self = None

BrokenProcessPool: A process in the process pool was terminated abruptly while the future was running or pending
""", "BrokenProcessPool: A process in the process pool"),
    "windows-exception-code": ("""\
Loading model weights
Exception Code: 0xC0000005
  #0 0x00007fffa4650000 (C:\\opt\\venv\\Lib\\site-packages\\torch\\lib\\torch_hip.dll+0x0)
""", "Exception Code: 0xC0000005"),
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_ending_is_a_fatal_line(faultline_bin, validate, tmp_path, name):
    text, initiating = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=initiating)


@pytest.mark.parametrize("text", [
    "[2024-01-02 03:04:05,364: ERROR/MainProcess] Process 'ForkPoolWorker-3' pid:338 exited with 'signal 9 (SIGKILL)'\n",
    "[2024-01-02, 03:09:12 UTC] {local_task_job_runner.py:228} INFO - Task exited with return code Negsignal.SIGKILL\n",
])
def test_runner_reports_sigkill(faultline_bin, validate, tmp_path, text):
    leading_incident(faultline_bin, validate, tmp_path, text, rule="process-sigkilled", line="SIGKILL")


def test_store_wait_timeout_leads_the_cut_traceback(faultline_bin, validate, tmp_path):
    # c10d's socket gave up on the store's answer; the traceback the rank
    # then printed is cut in its frames.
    leading_incident(faultline_bin, validate, tmp_path, """\
[rank3]:[W102 03:04:05.100000000 socket.cpp:485] [c10d] waitForInput: socket SocketImpl(fd=41, addr=[gpu-2]:51234, remote=[gpu-1]:29500) timed out after 600000ms
Traceback (most recent call last):
  File "/opt/app/train.py", line 88, in <module>
    main()
""", line="timed out after 600000ms")


def test_cuda_call_failure_2_is_out_of_memory(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, """\
Starting minibatch loop.
CUDA failure 2: out of memory ; GPU=0 ; hostname=gpu-3 ; expr=cudaMalloc((void**) &deviceBufferPtr, sizeof(float) * numElements)
""", rule="cuda-oom", line="CUDA failure 2: out of memory")


HEALTHY = {
    # Snakemake restarted the failed job and the workflow finished.
    "snakemake-restarted-job-passed": """\
Error in rule train:
    jobid: 2
    output: model.pt

Trying to restart job 2.
Finished job 2.
2 of 3 steps (67%) done
Finished job 0.
3 of 3 steps (100%) done
""",
    # Apptainer's own information and warning levels, padded alike.
    "apptainer-info-and-warning": """\
INFO:    Converting SIF file to temporary sandbox...
WARNING: underlay of /etc/localtime required more than 50 (87) bind mounts
Epoch 1 done, loss 0.41
""",
}


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_healthy_ending_is_no_incident(faultline_bin, validate, tmp_path, name):
    assert diagnose_text(faultline_bin, validate, tmp_path, HEALTHY[name]) == []


def test_bar_without_total_carries_on_after_an_error(faultline_bin, validate, tmp_path):
    # wandb retried its upload while the bar of an iterable dataset (no
    # total) went on: the retry lines were survived.
    found = diagnose_text(faultline_bin, validate, tmp_path, """\
Epoch 0: : 1200it [04:10,  4.79it/s, loss=2.91]wandb: Network error (ConnectionError), entering retry loop.
Epoch 0: : 2400it [08:21,  4.78it/s, loss=2.64]
Epoch 0: : 3600it [12:31,  4.79it/s, loss=2.52]
""")
    assert found and all(inc["initiating"].get("survived") for inc in found), found
