"""Phrasing across versions, second pass (issue #18): the messages of the
schedulers, the kernel and the launchers around a training job, read in the
source of each maintained version, that the catalog's signals did not read:

- The kernel's OOM killer before 5.0 names the victim "Kill process N (comm)
  score S or sacrifice child" also under vm.oom_kill_allocating_task, whose
  header is "Out of memory (oom_kill_allocating_task)" (5.x and later:
  "... : Killed process", already read).
- The kernel panics instead of killing: with vm.panic_on_oom, "Kernel panic -
  not syncing: Out of memory: system-wide|compulsory panic_on_oom is enabled"
  (3.x to 6.x); with no process it may kill, "Out of memory and no killable
  processes..." (the panic's text up to 4.x, a warning before "Kernel panic -
  not syncing: System is deadlocked on memory" since).
- Ray 1.x's memory monitor raised "RayOutOfMemoryError: More than 95% of the
  memory on node H is used (U / T GB)." where Ray 2.x kills the worker ("Task
  was killed due to the node running low on memory", already read).
- DeepSpeed's inference kernels (0.6 onwards) size their workspace from the
  free GPU memory and throw "Workspace can't be allocated, no enough memory."
- Kubernetes' Job controller ends a Job past activeDeadlineSeconds: reason
  DeadlineExceeded, "Job was active longer than specified deadline" (the time
  limit of a Kubernetes Job).
- The kubelet evicts a pod over its own local storage limits, the node not
  short of disk: "Pod ephemeral local storage usage exceeds the total limit of
  containers Q.", "Container C exceeded its local ephemeral storage limit
  "Q".", "Usage of EmptyDir volume "V" exceeds the limit "Q"." (a
  memory-backed /dev/shm emptyDir too): the pod's own disk use, no scheduler
  preemption.
- kube-scheduler's event on a preempted pod named the preemptor by
  namespace/name before 1.27 ("Preempted by <ns>/<name> on node <n>"), by UID
  since ("Preempted by pod <uid> on node <n>", already read).
- The NVIDIA driver from 575 on names the earlier Xid on the Xid 45 that
  tears a process's channels down after it: "NVRM: Xid (PCI:...): 45,
  pid=P, name=N, channel 0x... caused by previous Xid X" (kernel_rc.c); 570
  and before print the bare Xid 45, an application teardown. A log that keeps
  only the 45 line (grepped by pid) names the fault through it.
- Megatron Core's distributed checkpoint loader (core 0.4 onwards, under
  Megatron-LM and NeMo): "CheckpointingException: <dir> is not a distributed
  checkpoint" / "Checkpoint directory <dir> does not exist" (Megatron-LM's
  legacy "could not find the metadata file" was already read).

- slurmstepd's "*** STEP <id> ON <node> CANCELLED AT <t> DUE TO TIME LIMIT
  ***" names the step "%u.%u" up to 20.02 and by its step id string since
  20.11, which ends in "+<component>" for a step of a heterogeneous job.

Slurm's other wordings from 20.02 to 25.11 (slurmstepd's "Detected N
oom-kill event(s) in step|StepId=..." and, since 23.02, "Detected N oom_kill
event(s) in StepId=... Some of the step tasks have been OOM Killed.", srun's
"task N: Out Of Memory", "exceeded memory limit (X > Y), being killed", the
PREEMPTION and NODE FAILURE banners), the NVIDIA driver's Xid line
(with and without pid=/name=, quoted '<unknown>', Ch fields) and DeepSpeed's
launcher ("exits with return code = N") were already read in every version.
"""
import pytest

from conftest import first_incident, leading_incident


OOM_ALLOCATING_TASK_4X = """\
[3309411.200904] python invoked oom-killer: gfp_mask=0x24201ca, order=0, oom_score_adj=0
[3309411.201177] Out of memory (oom_kill_allocating_task): Kill process 51870 (python) score 0 or sacrifice child
[3309411.201190] Killed process 51870 (python) total-vm:98233436kB, anon-rss:61234520kB, file-rss:102400kB, shmem-rss:0kB
"""

PANIC_ON_OOM = """\
[  905.503301] [ 4411]     0  4411 24554321 15771234  126976        0             0 python
[  905.503378] Kernel panic - not syncing: Out of memory: system-wide panic_on_oom is enabled
[  905.503402] CPU: 12 PID: 4411 Comm: python Tainted: P           OE     5.15.0-91-generic #101-Ubuntu
[  905.512110] ---[ end Kernel panic - not syncing: Out of memory: system-wide panic_on_oom is enabled ]---
"""

NO_KILLABLE = """\
[ 7712.401977] Out of memory and no killable processes...
[ 7712.402190] Kernel panic - not syncing: System is deadlocked on memory
[ 7712.402215] CPU: 3 PID: 1 Comm: systemd Not tainted 6.8.0-45-generic #45-Ubuntu
"""

RAY_1X_OOM = """\
(pid=21077) 2021-06-14 10:22:31,004\tINFO trainer.py:612 -- Current log_level is WARN.
Traceback (most recent call last):
  File "/opt/conda/lib/python3.8/site-packages/ray/worker.py", line 1481, in get
    raise value.as_instanceof_cause()
ray.exceptions.RayTaskError(RayOutOfMemoryError): ray::ImplicitFunc.train() (pid=21077, ip=10.0.12.34)
ray.memory_monitor.RayOutOfMemoryError: More than 95% of the memory on node ip-10-0-12-34 is used (58.9 / 62.0 GB). The top 10 memory consumers are:
"""

DEEPSPEED_WORKSPACE = """\
[2023-06-01 10:00:04,812] [INFO] [logging.py:96:log_dist] [Rank 0] DeepSpeed-Inference config: {'layer_id': 0, 'hidden_size': 8192, 'dtype': torch.float16}
Requested:\t1610612736
Free:\t1073741824
Total:\t85899345920
RuntimeError: Workspace can't be allocated, no enough memory.
"""

K8S_DEADLINE = """\
Events:
  Type     Reason            Age    From            Message
  ----     ------            ----   ----            -------
  Normal   SuccessfulCreate  6h2m   job-controller  Created pod: train-llama-7b-x2k9p
  Normal   SuccessfulDelete  2m30s  job-controller  Deleted pod: train-llama-7b-x2k9p
  Warning  DeadlineExceeded  2m30s  job-controller  Job was active longer than specified deadline
"""

MEGATRON_DIST_CKPT = """\
 loading distributed checkpoint from /lustre/ckpt/gpt3-8b at iteration 5000
[rank0]: Traceback (most recent call last):
[rank0]:   File "/opt/megatron-lm/megatron/core/dist_checkpointing/serialization.py", line 98, in load
[rank0]:     raise CheckpointingException(f'{checkpoint_dir} is not a distributed checkpoint')
[rank0]: megatron.core.dist_checkpointing.core.CheckpointingException: /lustre/ckpt/gpt3-8b/iter_0005000 is not a distributed checkpoint
"""

K8S_PREEMPTED_BY_NAME = """\
Events:
  Type    Reason     Age   From               Message
  ----    ------     ----  ----               -------
  Normal  Scheduled  3h    default-scheduler  Successfully assigned ml-team/llm-pretrain-worker-2 to gpu-node-3
  Normal  Preempted  31s   default-scheduler  Preempted by ml-team/llm-finetune-high-7d9c on node gpu-node-3
  Normal  Killing    31s   kubelet            Stopping container pytorch
"""

SLURM_HET_STEP_TIME_LIMIT = """\
slurmstepd: error: *** STEP 88231.0+1 ON node021 CANCELLED AT 2026-11-02T13:46:41 DUE TO TIME LIMIT ***
srun: Job step aborted: Waiting up to 32 seconds for job step to finish.
"""

XID45_AFTER_79 = """\
[ 8810.112901] NVRM: GPU at PCI:0000:1b:00: GPU-6f1c2a9e-5b3d-8e47-a1c0-3d2f9b7e4a51
[ 8812.331402] NVRM: Xid (PCI:0000:1b:00): 45, pid=223311, name=python3, channel 0x00000008 caused by previous Xid 79
"""

XID45_AFTER_149 = """\
Mar  3 04:12:55 gpu-node-12 kernel: NVRM: Xid (PCI:0009:01:00): 45, pid=51234, name=pt_main_thread, channel 0x00000002 caused by previous Xid 149
"""

XID45_BARE = """\
[ 8812.331402] NVRM: Xid (PCI:0000:1b:00): 45, pid=223311, name=python3, channel 0x00000008
"""

K8S_EVICTED = """\
Status:           Failed
Reason:           Evicted
Message:          {message}
IP:               10.244.3.17
"""


@pytest.mark.parametrize("text,rule,line", [
    (OOM_ALLOCATING_TASK_4X, "host-oom-kill", "Out of memory (oom_kill_allocating_task): Kill process 51870"),
    (PANIC_ON_OOM, "host-oom-kill", "system-wide panic_on_oom is enabled"),
    (NO_KILLABLE, "host-oom-kill", "Out of memory and no killable processes..."),
    (RAY_1X_OOM, "host-oom-kill", "More than 95% of the memory on node ip-10-0-12-34 is used"),
    (DEEPSPEED_WORKSPACE, "cuda-oom", "Workspace can't be allocated, no enough memory."),
    (K8S_DEADLINE, "slurm-time-limit", "Job was active longer than specified deadline"),
    (K8S_EVICTED.format(message="Pod ephemeral local storage usage exceeds the total limit of containers 10Gi."),
     "disk-full-enospc", "exceeds the total limit of containers 10Gi"),
    (K8S_EVICTED.format(message='Container trainer exceeded its local ephemeral storage limit "20Gi". '),
     "disk-full-enospc", "exceeded its local ephemeral storage limit"),
    (K8S_EVICTED.format(message='Usage of EmptyDir volume "dshm" exceeds the limit "8Gi". '),
     "disk-full-enospc", 'Usage of EmptyDir volume "dshm"'),
    (K8S_PREEMPTED_BY_NAME, "preemption", "Preempted by ml-team/llm-finetune-high-7d9c on node gpu-node-3"),
    (SLURM_HET_STEP_TIME_LIMIT, "slurm-time-limit", "STEP 88231.0+1 ON node021"),
    (XID45_AFTER_79, "xid-79-fallen-off-bus", "caused by previous Xid 79"),
    (XID45_AFTER_149, "xid-nvlink-error", "caused by previous Xid 149"),
    (MEGATRON_DIST_CKPT, "checkpoint-resume-failure", "iter_0005000 is not a distributed checkpoint"),
], ids=["oom-allocating-task-4x", "panic-on-oom", "no-killable-processes", "ray-1x-oom", "deepspeed-workspace",
        "k8s-job-deadline", "k8s-pod-ephemeral-limit", "k8s-container-ephemeral-limit", "k8s-emptydir-limit",
        "k8s-preempted-by-name", "slurm-het-step-time-limit", "xid45-after-79",
        "xid45-after-149", "megatron-dist-ckpt"])
def test_version_wording_gives_its_rule(faultline_bin, validate, tmp_path, text, rule, line):
    leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, any_line=line)


def test_bare_xid45_stays_an_application_teardown(faultline_bin, validate, tmp_path):
    # without "caused by previous Xid" (drivers up to 570, or no earlier
    # fault) the Xid 45 names no hardware fault
    inc = first_incident(faultline_bin, validate, tmp_path, XID45_BARE)
    assert inc["rule"] == "xid-app-fault", inc["explanation"]


def test_xid45_names_the_earlier_xid(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, XID45_AFTER_79)
    fields = inc["initiating"]["evidence"][0]["fields"]
    assert fields["xid"] == "79" and fields["pci"] == "0000:1b:00", fields
