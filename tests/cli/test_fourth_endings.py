"""Endings the fourth endings audit (tests/cli/endings, e4-*.log, and gaps
the earlier audits left) read as nothing, read where the program prints
them (issue #18):

- Signals that are a failure only where the log ends in them (field
  `ending`): a JVM stack's frames with no exception line above them (its
  header cut off), kube-scheduler's "0/N nodes are available: ..." refusal,
  a Kubernetes device plugin's register-and-retry loop. Each is printed
  for survived conditions too (a logged exception, a refusal the scheduler
  retries, a plugin that registers on its next try), so it is a fatal line
  only when nothing comes after its last line; the first line of the run
  then initiates.
- A Python traceback cut right below its header (no frame after it): the
  process died printing it, or the excerpt stops there.
- Exit statuses in more words: Open MPI's rank report with the pid and node
  redacted ("PID xxxxxx on node xxxxxxxx"), Nextflow's "Process `X`
  terminated with an error exit status (137)" (not its NOTE of a task it
  retries), "exited with error code N"; tritonserver's "error: creating
  server: Internal - ...".
- Ray's job status "Job entrypoint command failed with exit code N, last
  available logs ...:" quotes the driver's log after it: a progress bar in
  that tail was printed before the exit, not after it.
- zsh's process line with the pid first and no job number ("14957
  segmentation fault (core dumped)  python train.py").
- A Go daemon's structured error record (slog's "level=ERROR msg=...",
  logrus' "level=error") is an `ending` signal too: the daemon's last words.
- A CI step's "Exited with code 137" (capital E) is the kill itself, not
  the hint under it that explains what 137 means.
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    "jvm-frames-end-the-log": ("""\
25/01/02 10:00:01 INFO DAGScheduler: Job 3 started
\tat org.example.jobs.Loader.read(Loader.scala:41)
\tat org.example.jobs.Loader.run(Loader.scala:12)
\tat java.base/java.lang.Thread.run(Thread.java:829)
""", "at org.example.jobs.Loader.read(Loader.scala:41)"),
    "failed-scheduling-ends-the-log": ("""\
Events:
  Type     Reason            Age                From               Message
  ----     ------            ----               ----               -------
  Warning  FailedScheduling  2m (x3 over 5m)    default-scheduler  0/4 nodes are available: 4 Insufficient nvidia.com/gpu.
  Warning  FailedScheduling  10s (x9 over 2m)   default-scheduler  0/4 nodes are available: 4 Insufficient nvidia.com/gpu.
""", "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."),
    "device-plugin-retries-to-the-end": ("""\
2021/03/04 05:06:07 Starting to serve on /var/lib/kubelet/device-plugins/nvidia-gpu.sock
2021/03/04 05:06:08 Could not register device plugin: rpc error: code = Unavailable desc = connection error
2021/03/04 05:06:08 Could not contact Kubelet, retrying. Did you enable the device plugin feature gate?
2021/03/04 05:06:08 You can check the prerequisites at: https://github.com/NVIDIA/k8s-device-plugin#prerequisites
2021/03/04 05:06:08 You can learn how to set the runtime at: https://github.com/NVIDIA/k8s-device-plugin#quick-start
""", "Could not register device plugin: rpc error"),
    "traceback-cut-below-header": ("""\
| epoch 004 | loss 7.120 | num_updates 1200
Traceback (most recent call last):
""", "Traceback (most recent call last)"),
    "mpirun-redacted-pid": ("""\
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
mpirun noticed that process rank 2 with PID xxxx on node yyyy exited on signal 9 (Killed).
""", "exited on signal 9 (Killed)"),
    "nextflow-task-failed": ("""\
ERROR ~ Error executing process > 'TRAIN (1)'

Caused by:
  Process `TRAIN (1)` terminated with an error exit status (137)

Command executed:

  python train.py
""", "terminated with an error exit status (137)"),
    "exited-with-error-code": ("""\
Running training job
Training exited with error code 2
""", "exited with error code 2"),
    "tritonserver-not-created": ("""\
I0102 03:04:05.678901 1 server.cc:592] Waiting for in-flight requests to complete.
error: creating server: Internal - failed to load all models
""", "error: creating server: Internal - failed to load all models"),
    "ray-status-over-its-tail": ("""\
Job entrypoint command failed with exit code 1, last available logs (truncated to 20,000 chars):
Epoch 3: 100%|██████████| 10/10 [00:01<00:00,  9.50it/s]
Epoch 4:  40%|████      | 4/10 [00:00<00:00,  9.80it/s]
""", "failed with exit code 1, last available logs"),
    "zsh-pid-first": ("""\
epoch 1 loss 0.91
14957 segmentation fault (core dumped)  python train.py --data_root ../data
""", "14957 segmentation fault (core dumped)"),
    "slog-errors-end-the-log": ("""\
time=2026-01-02T03:04:05.000Z level=INFO msg="Starting dcgm-exporter"
time=2026-01-02T03:04:05.100Z level=ERROR msg="Cannot init NVML library; err: ERROR_LIBRARY_NOT_FOUND"
time=2026-01-02T03:04:05.101Z level=INFO msg="Attempting to terminate DCGM."
time=2026-01-02T03:04:05.120Z level=ERROR msg=ERROR_LIBRARY_NOT_FOUND
""", "Cannot init NVML library"),
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_ending_is_a_fatal_line(faultline_bin, validate, tmp_path, name):
    text, initiating = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=initiating)


def test_exit_137_leads_its_hint(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, """\
+ python train.py --epochs 10
Exited with code 137

Hint: Exit code 137 typically means the process is killed because it was running out of memory
""", rule="process-sigkilled", line="Exited with code 137")


HEALTHY = {
    # A stack under a logged warning, and the job went on.
    "jvm-frames-then-more-log": """\
25/01/02 10:00:01 WARN TaskSetManager: Lost task 0.0 in stage 3.0, retrying
\tat org.example.jobs.Loader.read(Loader.scala:41)
\tat java.base/java.lang.Thread.run(Thread.java:829)
25/01/02 10:00:09 INFO DAGScheduler: Job 3 finished: count at Loader.scala:60, took 8.1 s
25/01/02 10:00:10 INFO SparkContext: Invoking stop() from shutdown hook
25/01/02 10:00:10 INFO SparkContext: Successfully stopped SparkContext
""",
    # The scheduler retried and placed the pod once a node was free.
    "failed-scheduling-then-scheduled": """\
  Warning  FailedScheduling  2m    default-scheduler  0/4 nodes are available: 4 Insufficient nvidia.com/gpu.
  Normal   Scheduled         30s   default-scheduler  Successfully assigned default/train-0 to gpu-node-3
  Normal   Pulled            29s   kubelet            Container image "trainer:1.0" already present on machine
  Normal   Started           28s   kubelet            Started container trainer
""",
    # The plugin registered on its next try.
    "device-plugin-registered-later": """\
2021/03/04 05:06:08 Could not register device plugin: context deadline exceeded
2021/03/04 05:06:08 Could not contact Kubelet, retrying. Did you enable the device plugin feature gate?
2021/03/04 05:06:13 Starting to serve on /var/lib/kubelet/device-plugins/nvidia-gpu.sock
2021/03/04 05:06:13 Registered device plugin with Kubelet
2021/03/04 05:06:13 Starting GRPC server for 'nvidia.com/gpu'
""",
    # An exporter that logged an error and went on serving.
    "slog-error-then-serving": """\
time=2026-01-02T03:04:05.100Z level=ERROR msg="Failed to collect a metric" err="field not supported"
time=2026-01-02T03:04:05.200Z level=INFO msg="Starting webserver"
time=2026-01-02T03:04:05.300Z level=INFO msg="Listening on" address=[::]:9400
""",
    # Nextflow retries the task: a note, and the run goes on.
    "nextflow-task-retried": """\
[62/149eb0] NOTE: Process `TRAIN (1)` terminated with an error exit status (137) -- Execution is retried (1)
[7a/0c11de] Submitted process > TRAIN (1)
""",
}


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_healthy_ending_is_no_incident(faultline_bin, validate, tmp_path, name):
    assert diagnose_text(faultline_bin, validate, tmp_path, HEALTHY[name]) == []
