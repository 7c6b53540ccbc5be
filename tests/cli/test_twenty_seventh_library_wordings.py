"""
Phrasing across versions, twenty-seventh pass (issue #18): the layers
around the job in their newest versions -- the kernel's OOM killer and hung
task lines (5.15 to 6.12), systemd-oomd, the container runtimes, the
kubelet and pod status texts of Kubernetes 1.27 to 1.34, NVIDIA's device
plugin (0.14 to 0.20, GPU operator 24 and 25) and DCGM 3.x and 4.x -- read
in the source of each release, where the catalog's signals missed a
wording:

- The kubelet's own deadline of a pod (pkg/kubelet/active_deadline.go,
  unchanged in every release): a pod that outlives
  spec.activeDeadlineSeconds gets the event DeadlineExceeded "Pod was active
  on the node longer than the specified deadline" and is stopped with that
  reason and message. Only the Job controller's "Job was active longer than
  specified deadline" was read; a bare pod's or a Job template's deadline
  gave no incident. It is slurm-time-limit's now (the time limit of the
  pod). Excerpt: argoproj/argo-workflows#6620, the workflow controller's
  log as posted, where the pod's message is quoted.
- DCGM 4.5 onwards read NVML's GPU recovery action (what Xid 154
  announces) in the health watch's driver system and the diagnostic's
  software checks (dcgm_errors.h, DcgmHealthWatch.cpp): "GPU N requires a
  reset to recover from a fault. Recovery action: 1 (GPU_RESET).", "GPU N
  fault may have left the OS in an inconsistent state. Recovery action: 2
  (NODE_REBOOT)." and "GPU N operating at reduced capacity due to a fault.
  Recovery action: 4 (DRAIN_AND_RESET).", each followed by its next step.
  A symptom of xid-150-154-gpu-recovery-required, as the driver's Xid 154
  is; DRAIN_P2P (a warning) and "Detected NCCL error: ... Recovery action:
  4 (DRAIN_AND_RESET)." stay out. No post; the lines are the formats
  rendered, the host engine's "Detected a FAILURE in health system Driver:
  '<message>'" log line as DcgmHealthWatch::SetResponse writes it.
- DCGM 4.6's "GPU N exceeded uncorrectable row remap limit with M remapped
  rows" (health watch and diagnostic, at 512 remaps) is xid-row-remap's,
  beside the pending and failed remaps it read.
- The diagnostic's memory test reports a CUDA call that failed with the
  ECC error as "CUDA APIs have indicated that a double-bit ECC error has
  occured on GPU N." (every 3.x and 4.x release, the source's spelling):
  xid-ecc-uncorrectable's, beside the volatile DBE count.
- The diagnostic's "Found N NaN-value memory elements on GPU M" (Diagnostic
  plugin, 3.3 onwards: NaNs in its GEMM results) and the L1 cache test's
  "Detected a miscompare failure in the L1 cache." (3.x and 4.x) are
  sdc-gpu-diagnostic-failure's, beside "Found N faulty memory elements".
  No post for any of the three; the lines are the formats rendered.

Already read in every version (checked, no change): mm/oom_kill.c's
"Out of memory: Killed process N (comm) total-vm:...", "Memory cgroup out
of memory: Killed process", "oom-kill:constraint=CONSTRAINT_NONE|MEMCG,...",
"<comm> invoked oom-killer: gfp_mask=..." and "oom_reaper: reaped process
N (comm), now anon-rss:..."; memory.events' "oom_kill N" (a group kill counts
there too); systemd-oomd's "Killed <cgroup> due to memory pressure for
<cgroup> being N% > M% for > T with reclaim activity" and the unit's "A
process of this unit has been killed by the OOM killer."; runc's "container
init was OOM-killed (memory limit too low?)", OOMKilled and exit code 137 as
containerd, CRI-O and Docker report them; the kubelet's "The node was low
on resource: memory." (with its threshold and container details after it),
"The node had condition: [MemoryPressure]", "Preempted in order to admit
critical pod", the scheduler's "Preempted by pod <uid> on node <n>", the
Evicted reason and the disruption conditions; the device plugin's
"XidCriticalError: Xid=N on Device=<uuid>; marking device as unhealthy."
(0.14 to 0.20; up to 0.6 "..., the device will go unhealthy."); DCGM's
volatile DBE, pending and failed row remap, Xid, NvLink down, NVSwitch
fatal, fallen off the bus, thermal and faulty memory messages.

Left alone: the hung task line "INFO: task <comm>:<pid> blocked for more
than N seconds." (kernel/hung_task.c, unchanged; its cause is whatever the
task waits for: NFS, a disk, a driver; nfs-server-not-responding names it
as a symptom only); the kubelet's SystemOOM node event "System OOM
encountered, victim process: <comm>, pid: N" (it reads the victim's cgroup
as cAdvisor parses it from the kernel's lines, and posters see it where the
host had memory to spare, k3s-io/k3s#12028, or where pods were evicted,
kubernetes/kubernetes#74706: it does not tell the host's OOM from a
container's or an eviction's); the kernel's "Tasks in <cgroup> are going to be
killed due to memory.oom.group set" (the kill lines follow it; no post);
the device plugin's "'nvidia.com/gpu' device marked unhealthy: <uuid>" and
"Error waiting for event: <ret>; Marking all devices as unhealthy" (the Xid
line above it says why); DCGM's "A pending retired page has been detected
in GPU N." (its next step is "Monitor - this GPU can still perform
workload"), the PCIe replay, NvLink error-count and BER thresholds and 4.x's
IMEX and fabric probe states (no post, and no failure of the job's own
named by them alone); containerd's "TaskOOM event ..." and Docker's
"container oom <id>" (a cgroup that reached its limit, as memory.events'
"oom" counts, not a kill: cgroup-oom reads the kill counter only).
"""

import pytest

from conftest import leading_incident, scan_text


# argoproj/argo-workflows#6620, the workflow controller's log as posted.
ARGO_POD_DEADLINE = """\
time="2021-08-30T06:59:33.748Z" level=info msg="Workflow update successful" namespace=dbjeedy-ns phase=Running resourceVersion=3118709 workflow=test-vars-1630306740
time="2021-08-30T06:59:43.748Z" level=info msg="Processing workflow" namespace=dbjeedy-ns workflow=test-vars-1630306740
time="2021-08-30T07:16:14.812Z" level=info msg="Processing workflow" namespace=dbjeedy-ns workflow=test-vars-1630306740
time="2021-08-30T07:16:14.814Z" level=info msg="Pod failed: Pod was active on the node longer than the specified deadline" displayName=test-vars-1630306740 namespace=dbjeedy-ns pod=test-vars-1630306740 templateName=job workflow=test-vars-1630306740
time="2021-08-30T07:16:14.814Z" level=info msg="Updating node test-vars-1630306740 status Running -> Failed" namespace=dbjeedy-ns workflow=test-vars-1630306740
time="2021-08-30T07:16:14.814Z" level=info msg="Updating node test-vars-1630306740 message: Pod was active on the node longer than the specified deadline" namespace=dbjeedy-ns workflow=test-vars-1630306740
time="2021-08-30T07:16:14.815Z" level=info msg="Updated phase Running -> Failed" namespace=dbjeedy-ns workflow=test-vars-1630306740
"""

# The host engine's log of a 4.x health check, its format rendered.
DCGM_RECOVERY_REBOOT = (
    "2026-11-02 13:46:44.207 ERROR [4127:4133] [[Health]] Detected a FAILURE in health system Driver: "
    "'GPU 5 fault may have left the OS in an inconsistent state. Recovery action: 2 (NODE_REBOOT). "
    "Reboot the operating system to restore a consistent state.'\n"
)


@pytest.mark.parametrize("line,signal", [
    ("  Normal  DeadlineExceeded  12s  kubelet  Pod was active on the node longer than the specified deadline",
     "k8s-pod-deadline-exceeded"),
    ("GPU 1 requires a reset to recover from a fault. Recovery action: 1 (GPU_RESET). Terminate all GPU "
     "processes and reset the GPU.", "dcgm-recovery-action"),
    ("GPU 0 operating at reduced capacity due to a fault. Recovery action: 4 (DRAIN_AND_RESET). Do not schedule "
     "new work on this GPU. Reset the GPU after existing work has drained.", "dcgm-recovery-action"),
    ("GPU 6 exceeded uncorrectable row remap limit with 512 remapped rows Run a field diagnostic on the GPU.",
     "dcgm-remap"),
    ("CUDA APIs have indicated that a double-bit ECC error has occured on GPU 3. Run a field diagnostic on the "
     "GPU.", "dcgm-volatile-dbe"),
    ("Found 37 NaN-value memory elements on GPU 5", "dcgm-faulty-memory"),
    ("Detected a miscompare failure in the L1 cache. Run a field diagnostic on the GPU.", "dcgm-faulty-memory"),
], ids=["kubelet-pod-deadline", "dcgm-4-5-gpu-reset", "dcgm-4-5-drain-and-reset", "dcgm-4-6-remap-limit",
        "dcgm-cuda-dbe", "dcgm-3-3-nan-values", "dcgm-l1-miscompare"])
def test_newest_wording_is_read_by_its_signal(faultline_bin, tmp_path, line, signal):
    records = scan_text(faultline_bin, tmp_path, line + "\n")
    assert signal in {r["signal"] for r in records}, records


@pytest.mark.parametrize("line", [
    "GPU 2 requires peer-to-peer traffic to be quiesced. Recovery action: 3 (DRAIN_P2P). Terminate GPU processes "
    "conducting peer-to-peer traffic and disable UVM persistence mode. Check GPU health status again after "
    "draining.",
    "Detected NCCL error: NCCL_ERROR_SYSTEM Recovery action: 4 (DRAIN_AND_RESET). Attempt to reset the GPUs and "
    "reboot the machines if that fails.",
    "A pending retired page has been detected in GPU 2. Monitor - this GPU can still perform workload",
], ids=["dcgm-drain-p2p", "dcgm-nccl-error", "dcgm-pending-retired-page"])
def test_what_the_gpu_survives_is_not_read(faultline_bin, tmp_path, line):
    records = scan_text(faultline_bin, tmp_path, line + "\n")
    assert not {r["signal"] for r in records} & {"dcgm-recovery-action", "dcgm-remap"}, records


@pytest.mark.parametrize("text,rule,any_line", [
    (ARGO_POD_DEADLINE, "slurm-time-limit", "Pod was active on the node longer than the specified deadline"),
    (DCGM_RECOVERY_REBOOT, "xid-150-154-gpu-recovery-required", "Recovery action: 2 (NODE_REBOOT)"),
], ids=["argo-pod-deadline", "dcgm-recovery-reboot"])
def test_newest_wording_leads_its_rule(faultline_bin, validate, tmp_path, text, rule, any_line):
    leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, any_line=any_line)
