"""Endings the thirteenth endings audit (tests/cli/endings, e13-*.log) read as
nothing or by the wrong line, read where the program that printed them
writes them (issue #18):

- LSF's job history as bjobs -l and bhist -l print it (openlava's
  cmdtools/lib/job.c, which IBM Spectrum LSF kept): each event after its
  time, "<Www Mmm dd hh:mm:ss>[ yyyy]: Exited with exit code N.", an exit
  status like any other; "Done successfully." is none.
- LSF's termination reason for a job it killed at a limit, "TERM_<KEYWORD>:
  job killed after reaching LSF <limit> limit.": it leads the exit status
  under it (LSF's SIGTERM), and the memory and swap limits are a memory
  limit kill (cgroup-oom), like PBS's and YARN's.
- HTCondor's hold reason for a job its cgroup or Docker container
  OOM-killed ("Job has gone over cgroup memory limit of N megabytes",
  "Docker job has gone over memory limit of N Mb"): cgroup-oom.
- Grid Engine's accounting record as qacct -j prints it, "exit_status  N"
  with the label padded to a column (13 in SGE, 35 in Open Cluster
  Scheduler).
- CUDA.jl's device-side exception, "ERROR: a <type> was thrown during kernel
  execution.", which a log cut before the host's KernelException ends in.
- A Kubernetes object's status phase, "phase: Failed" (a Pod, an Argo node),
  "phase: Terminated" (a Volcano job that finished unexpectedly).
- ColossalAI's launcher ("colossalai run", multinode_runner.py) giving up
  on the command it ran on a host: "Error: failed to run <command> on
  <host>", since 0.2.1 with ", is localhost: <bool>, exception: <error>";
  a rank's own error above it leads.
- IPython's traceback whose text runs out on the line that heads a frame
  ("<file> in <function>(<args>)"), its code lines not printed: cut in its
  frames, as one that runs out in them.
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"
CGROUP_OOM = "cgroup-oom"

FAILURES = {
    "lsf-bjobs-event-exited": ("""\
Mon Nov 23 10:16:31: Started on <n28>, Execution Home </opt/brandl>, Execution
                      CWD </opt/brandl/test>;
Mon Nov 23 10:17:33: Exited with exit code 2. The CPU time used is 0.1 second
                     s.
Mon Nov 23 10:17:33: Completed <exit>.
""", FALLBACK, "Exited with exit code 2"),
    "lsf-bhist-event-exited-with-year": ("""\
Tue Apr 18 10:01:28 2023: Starting (Pid 658);
Tue Apr 18 10:01:38 2023: Exited with exit code 1. The CPU time used is 0.1 seconds.
""", FALLBACK, "Exited with exit code 1"),
    "lsf-thread-limit-leads-exit": ("""\
------------------------------------------------------------

TERM_THREADLIMIT: job killed after reaching LSF thread limit.
Exited with exit code 143.
""", None, "TERM_THREADLIMIT: job killed after reaching LSF thread limit"),
    "lsf-cpu-limit-in-bjobs": ("""\
Mon Nov 23 10:17:33: Completed <exit>; TERM_CPULIMIT: job killed after reaching LSF CPU usage limit.
""", "lsf-limit-kill", "TERM_CPULIMIT"),
    "lsf-memory-limit": ("""\
TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.
Exited with exit code 137.
""", CGROUP_OOM, "TERM_MEMLIMIT"),
    "lsf-swap-limit": ("""\
TERM_SWAP: job killed after reaching LSF swap usage limit.
Exited with exit code 130.
""", CGROUP_OOM, "TERM_SWAP"),
    "htcondor-cgroup-memory-hold": ("""\
 ID      OWNER          HELD_SINCE  HOLD_REASON
 215.0   scientist      6/9  17:29  Error from slot1@ep: Job has gone over cgroup memory limit of 20096 megabytes. Last measured usage: 20133 megabytes.  Consider resubmitting with a higher request_memory.
""", CGROUP_OOM, "Job has gone over cgroup memory limit of 20096 megabytes"),
    "htcondor-docker-memory-hold": ("""\
Hold reason: Error from slot1_2@gpu07: Docker job has gone over memory limit of 8192 Mb
""", CGROUP_OOM, "Docker job has gone over memory limit"),
    "sge-qacct-exit-status": ("""\
jobname      train_gpu
failed       0
exit_status  137
ru_wallclock 3600
""", None, "exit_status  137"),
    "ocs-qacct-exit-status-padded": ("""\
failed                             0
exit_status                        1
ru_wallclock                       12
""", FALLBACK, "exit_status                        1"),
    "cudajl-device-exception": ("""\
ERROR: a BoundsError was thrown during kernel execution on thread (33, 1, 1) in block (2, 1, 1).
Stacktrace not available, run Julia on debug level 2 for more details (by passing -g2 to the executable).
""", FALLBACK, "BoundsError was thrown during kernel execution"),
    "pod-status-phase-failed": ("""\
status:
  containerStatuses:
  - name: trainer
    ready: false
  phase: Failed
  startTime: "2024-03-01T10:00:00Z"
""", FALLBACK, "phase: Failed"),
    "vcjob-status-phase-terminated": ("""\
status:
  failed: 2
  state:
    phase: Terminated
  version: 3
""", FALLBACK, "phase: Terminated"),
    "colossalai-run-failed": ("""\
Error: failed to run torchrun --nproc_per_node=2 --nnodes=1 --node_rank=0 --rdzv_backend=c10d --rdzv_endpoint=127.0.0.1:29500 --rdzv_id=colossalai-default-job train.py on 127.0.0.1
""", FALLBACK, "Error: failed to run torchrun"),
    "colossalai-run-exception": ("""\
Error: failed to run torchrun --nproc_per_node=8 --nnodes=1 --node_rank=0 --master_addr=127.0.0.1 --master_port=29500 pretrain.py on 127.0.0.1, is localhost: True, exception: Encountered a bad command exit code!
""", FALLBACK, "is localhost: True, exception: Encountered a bad command exit code!"),
    "colossalai-run-after-rank-error": ("""\
RuntimeError: Stop_waiting response is expected
Error: failed to run torchrun --nproc_per_node=4 --nnodes=1 --node_rank=0 --master_addr= --master_port= vit_train_demo.py on 127.0.0.1, is localhost: True, exception: Encountered a bad command exit code!
""", FALLBACK, "RuntimeError: Stop_waiting response is expected"),
    "ipython-cut-on-frame-header": ("""\
---------------------------------------------------------------------------
OutOfMemoryError                          Traceback (most recent call last)
/opt/ipykernel_12/3390.py in <module>
----> 1 trainer.train()

/usr/lib/python3/dist-packages/transformers/trainer.py in train(self, resume_from_checkpoint, trial)
""", FALLBACK, "OutOfMemoryError                          Traceback (most recent call last)"),
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_ending_leads(faultline_bin, validate, tmp_path, name):
    text, rule, initiating = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, line=initiating)


HEALTHY = {
    "lsf-bhist-done-successfully": """\
Thu Apr 18 10:01:28: Starting (Pid 658);
Thu Apr 18 10:01:38: Done successfully. The CPU time used is 0.1 seconds;
Thu Apr 18 10:02:01: Post job process done successfully;
""",
    "lsf-report-successfully-completed": """\
Successfully completed.

Resource usage summary:

    CPU time :                                   510.08 sec.
    Max Memory :                                 49 MB
""",
    "sge-qacct-exit-status-0": """\
failed       0
exit_status  0
ru_wallclock 3600
""",
    "pod-status-phase-succeeded": """\
status:
  phase: Succeeded
  startTime: "2024-03-01T10:00:00Z"
""",
    "vcjob-status-phase-completed": """\
status:
  succeeded: 2
  state:
    phase: Completed
  version: 3
""",
    # " in " after an IPython traceback's frames is no frame's: the log goes on.
    "ipython-traceback-then-sentence": """\
OutOfMemoryError                          Traceback (most recent call last)
/opt/ipykernel_12/3390.py in <module>
----> 1 trainer.train()

Epoch 3 done in 41s
""",
}


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_healthy_ending_is_no_incident(faultline_bin, validate, tmp_path, name):
    found = diagnose_text(faultline_bin, validate, tmp_path, HEALTHY[name])
    assert not [i for i in found if not (i["initiating"] or {}).get("survived")], \
        [(i["rule"], i["explanation"]) for i in found]
