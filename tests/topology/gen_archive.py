#!/usr/bin/env python3
"""Writes multi-host job archives in the layouts clusters leave behind, with
one incident each, for the topology and attribution tests: who logged a line
(a pod is not a host, a folder above the input is not a host, the NFS server
is not the client), which rank a killed pid was, and whether a termination
notice outranks the network errors it causes.

    gen_archive.py OUT_DIR --layout k8s --kind spot --ranks 256 --skew 1 --seed 3

Layouts (8 ranks per host):
  perhost   OUT/<host>/rank-<R>.log: torchrun "[rankR]:" lines whose PyTorch
            log stamps carry the worker pid ("W1102 13:46:41.830000 4015788
            file.py:12] ..."); OUT/<host>/kern.log (syslog headers)
  k8s       OUT/pods/<pod>/pytorch.log in CRI format, the pod's hostname (its
            name) in NCCL prefixes; OUT/kubectl/get-pods-wide.txt and/or
            OUT/kubectl/events.txt place each pod on its node;
            OUT/nodes/<node>/kern.log
  slurm     OUT/slurm-<job>.out: srun -l task labels over every rank, NCCL
            init lines naming host and device; OUT/<host>/torchrun.log: the
            elastic agent's "failed (exitcode: -9) local_rank: L (pid: P)";
            OUT/scontrol-show-job.txt with a compressed NodeList;
            OUT/<host>/kern.log

  torchrun  OUT/<host>/torchrun.log: the elastic agent's own lines (the
            "Rendezvous complete for workers. Result:" block pairing local
            ranks with global ranks) and its workers' lines under
            "[defaultL]:" (local rank only); on a failure the
            ChildFailedError summary (host, rank, exitcode and pid per entry)
            or the "failed (exitcode: -9) local_rank: L (pid: P)" line, and
            half the archives OUT/pyspy/<host>.txt ("Process P: ...
            --local_rank=L"); OUT/<host>/kern.log
  slurm_env OUT/slurm-<job>.out: srun -l labels padded to the widest task
            id, each task's SLURM_* environment (SLURM_PROCID, SLURM_LOCALID,
            SLURM_TASK_PID, SLURMD_NODENAME) and no NCCL init lines, so ranks
            find their hosts and pids only there; OUT/<host>/kern.log,
            scontrol and sacct output
  vllm      several vLLM replicas behind one service, one per node:
            OUT/pods/<replica>/vllm.log with the API server, EngineCore and
            TP worker prefixes (v1 "(VllmWorker rank=R pid=P)" or the newer
            "(Worker_TPR pid=P)"); OUT/kubectl/get-pods-wide.txt
  deepspeed OUT/launcher.log: the DeepSpeed launcher's output on every node
            gathered by pdsh ("gpu-001: ..."): global_rank_mapping (each
            host's global ranks, local rank = position) and "process P
            spawned with command: [... '--local_rank=L' ...]", so a worker's
            rank follows from its pid only through both; the workers' own
            lines under the same pdsh label; OUT/<host>/kern.log
  vllm_v0   vLLM v0 replicas, OUT/<host>/vllm-server.log: the driver (TP rank
            0) unprefixed, the other TP workers under a coloured
            "(VllmWorkerProcess pid=P)" that names no rank; each worker's
            rank is said once, by parallel_state's "rank R in world size W
            is assigned as ... TP rank R" (odd seeds) or by its NCCL init
            line (even seeds), and the engine's "Worker VllmWorkerProcess
            pid P died" names only the pid

Kinds: host_oom (the kernel kills one worker by pid), nfs (the client's
kernel loses its NFS server), spot (a cloud's notice that the machine is
being taken: AWS instance-action, EventBridge or node-termination-handler,
Azure Preempt, GCE preemption or host maintenance; a checkpoint saved after
it or not; then the other hosts' NCCL errors), preempt (k8s: the pod is preempted; slurm: the job
is cancelled due to preemption, half the archives with scontrol and sacct PREEMPTED), timelimit (Slurm ends the job at its time
limit: slurmstepd's notice, scontrol and sacct TIMEOUT), pod_oomkilled and
pod_evicted, pod_nodeshutdown (`kubectl describe pods` output whose status
reason lines name no pod: the section's "Name:" does), worker_crash (a vLLM TP worker of one
replica hits a CUDA error; its EngineCore and API server die after it), segv
(the kernel reports one worker's segfault by pid; the job stops there),
task_exit (one task exits non-zero, srun reports it, "srun: error: host:
task N: Exited with exit code 1", and terminates the step: the task is the
rank when srun launched the ranks (slurm_env), the node index under torchrun
(slurm: then no rank is named)), node_fail (Slurm loses a node: srun's
"Node failure on <host>", the step cancelled due to node failure, scontrol
and sacct NODE_FAIL; the other hosts' NCCL errors).
LAYOUT_KINDS lists the kinds each layout is tested with.

OUT.truth.json (beside the archive): kind, layout, hosts (the archive's own hosts), initiating
{rules, rank (null when the logs name only a host), host, and for spot
checkpoint_after_notice}, pods.

Every message is the text of a rule example under rulesets/ (the test checks
attribution and ranking, not the signals). Deterministic for (args, seed).
Standard library only.
"""
import argparse
import datetime as dt
import json
import os
import random

GPUS = 8
BUSES = ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"]
LAYOUTS = ["perhost", "k8s", "slurm", "torchrun", "slurm_env", "vllm", "vllm_v0", "deepspeed"]
KINDS = ["host_oom", "nfs", "spot", "preempt", "timelimit", "pod_oomkilled", "pod_evicted", "pod_nodeshutdown",
         "worker_crash", "segv", "task_exit", "node_fail"]
LAYOUT_KINDS = {
    "perhost": ["host_oom", "nfs", "spot", "preempt", "segv"],
    "k8s": ["host_oom", "nfs", "spot", "preempt", "pod_oomkilled", "pod_evicted", "pod_nodeshutdown"],
    "slurm": ["host_oom", "nfs", "spot", "preempt", "timelimit", "task_exit", "node_fail"],
    "torchrun": ["host_oom", "nfs", "spot", "segv"],
    "slurm_env": ["host_oom", "preempt", "segv", "timelimit", "task_exit", "node_fail"],
    "vllm": ["worker_crash"],
    "vllm_v0": ["worker_crash"],
    "deepspeed": ["host_oom", "nfs", "spot", "segv"],
}
RULES = {
    "host_oom": ["host-oom-kill"],
    "nfs": ["nfs-server-not-responding"],
    "spot": ["spot-instance-interruption"],
    "preempt": ["preemption"],
    "timelimit": ["slurm-time-limit"],
    "pod_oomkilled": ["cgroup-oom"],
    # the pod is evicted with "The node was low on resource: memory.": the node ran
    # out of host memory, so the memory rule leads, not preemption
    "pod_evicted": ["k8s-node-memory-eviction"],
    "pod_nodeshutdown": ["preemption"],
    "worker_crash": ["cuda-illegal-address"],
    "segv": ["unrecognised-fatal-error"],
    "task_exit": ["unrecognised-fatal-error"],
    "node_fail": ["job-interrupted-node-failure"],
}
K8S_LAYOUTS = ("k8s", "vllm")
SLURM_LAYOUTS = ("slurm", "slurm_env")


def compress_nodelist(prefix, numbers, width):
    """gpu-[001-004,017]: Slurm's hostlist form."""
    runs, start, prev = [], None, None
    for n in sorted(numbers):
        if start is None:
            start = prev = n
        elif n == prev + 1:
            prev = n
        else:
            runs.append((start, prev))
            start = prev = n
    runs.append((start, prev))
    parts = [("%0*d" % (width, a)) if a == b else ("%0*d-%0*d" % (width, a, width, b)) for a, b in runs]
    return "%s[%s]" % (prefix, ",".join(parts))


class Job:
    def __init__(self, out, layout, kind, ranks, skew, seed):
        self.out, self.layout, self.kind, self.seed = out, layout, kind, seed
        self.rng = random.Random("%s/%s/%d/%d/%d" % (layout, kind, ranks, skew, seed))
        self.nhosts = max(1, ranks // GPUS)
        self.ranks = self.nhosts * GPUS
        # Node numbers with gaps, so nodelists compress into several runs.
        nums = sorted(self.rng.sample(range(1, self.nhosts * 3 + 10), self.nhosts))
        if layout in K8S_LAYOUTS:
            self.hosts = ["gpu-node-%d" % n for n in nums]
        else:
            self.hosts = ["gpu-%03d" % n for n in nums]
        self.host_nums = nums
        self.pods = [("vllm-%d-%05x" % (i, self.rng.randrange(1 << 20)) if layout == "vllm" else "trainer-worker-%d" % i)
                     for i in range(self.nhosts)]
        self.agent_pid = {h: 3000 + self.rng.randrange(0, 60000) for h in self.hosts}
        self.skew = {h: (self.rng.uniform(-60, 60) if skew else 0.0) for h in self.hosts}
        self.t0 = dt.datetime(2026, 11, 2, 12, 0, 0, tzinfo=dt.timezone.utc).timestamp()
        self.pid = {r: 40000 + self.rng.randrange(0, 20000) * 8 + r % GPUS for r in range(self.ranks)}
        self.files = {}
        self.steps = 30
        self.step_s = 2.0

    # ---- time formats (each host's clock is off by its skew)
    def ts(self, h, t):
        return t + self.skew[h]

    def glog(self, h, t, level, pid, where):
        d = dt.datetime.fromtimestamp(self.ts(h, t), dt.timezone.utc)
        return "%s%s %s %d %s]" % (level, d.strftime("%m%d"), d.strftime("%H:%M:%S.%f"), pid, where)

    def syslog(self, h, t):
        d = dt.datetime.fromtimestamp(self.ts(h, t), dt.timezone.utc)
        return "%s %2d %s %s" % (d.strftime("%b"), d.day, d.strftime("%H:%M:%S"), h)

    def iso(self, h, t):
        d = dt.datetime.fromtimestamp(self.ts(h, t), dt.timezone.utc)
        return d.strftime("%Y-%m-%dT%H:%M:%S.%f") + "000Z"

    def host_of(self, r):
        return self.hosts[r // GPUS]

    def name_in_logs(self, r):
        """The hostname a rank's own lines print (a pod's is its name)."""
        return self.pods[r // GPUS] if self.layout in K8S_LAYOUTS else self.host_of(r)

    def add(self, path, t, line):
        self.files.setdefault(path, []).append((t, line))

    # ---- one rank's line, in the layout's file and prefix
    def rank_line(self, r, t, text):
        h = self.host_of(r)
        if self.layout == "perhost":
            self.add("%s/rank-%d.log" % (h, r), t, "[rank%d]:%s" % (r, text(h, t)))
        elif self.layout == "k8s":
            self.add("pods/%s/pytorch.log" % self.pods[r // GPUS], t,
                     "%s stdout F [rank%d]:%s" % (self.iso(h, t), r, text(h, t)))
        elif self.layout == "torchrun":
            self.add("%s/torchrun.log" % h, t, "[default%d]:%s" % (r % GPUS, text(h, t)))
        elif self.layout == "deepspeed":
            self.add("launcher.log", t, "%s: %s" % (h, text(h, t)))
        elif self.layout == "slurm_env":
            self.add("slurm-88231.out", t, "%*d: %s" % (len(str(self.ranks - 1)), r, text(h, t)))
        else:
            self.add("slurm-88231.out", t, "%d: [rank%d]:%s" % (r, r, text(h, t)))

    def kern(self, h, t, msg):
        path = ("nodes/%s/kern.log" if self.layout in K8S_LAYOUTS else "%s/kern.log") % h
        self.add(path, t, "%s kernel: [%12.6f] %s" % (self.syslog(h, t), 1000000.0 + (t - self.t0), msg))

    # ---- the healthy part of a job
    def startup(self):
        for r in range(self.ranks):
            h, dev = self.host_of(r), r % GPUS
            t = self.t0 + 0.01 * dev
            name = self.name_in_logs(r)
            if self.layout in ("k8s", "slurm"):
                # NCCL init: host, pid, device and bus of every rank.
                self.rank_line(r, t, lambda hh, tt, r=r, dev=dev, name=name: (
                    "%s:%d:%d [%d] NCCL INFO comm 0x55d0c0a0%02x rank %d nranks %d cudaDev %d nvmlDev %d "
                    "busId %s000 commId 0x1a2b3c4d5e6f7081 - Init COMPLETE" % (
                        name, self.pid[r], self.pid[r] + 60, dev, dev, r, self.ranks, dev, dev, BUSES[dev])))
        if self.layout == "torchrun":
            self.rendezvous()
        if self.layout == "deepspeed":
            self.deepspeed_launch()
        if self.layout == "slurm_env":
            self.slurm_env()
        if self.layout in K8S_LAYOUTS:
            rows = ["NAME               READY   STATUS    RESTARTS   AGE     IP            NODE         "
                    "NOMINATED NODE   READINESS GATES"]
            events = ["LAST SEEN   TYPE     REASON      OBJECT                 MESSAGE"]
            for i, (pod, h) in enumerate(zip(self.pods, self.hosts)):
                status = "Running"
                rows.append("%-18s 1/1     %-9s 0          3h12m   10.244.%d.%d   %s   <none>           <none>"
                            % (pod, status, i // 200, i % 200 + 2, h))
                events.append("3h12m       Normal   Scheduled   pod/%s   Successfully assigned training/%s to %s"
                              % (pod, pod, h))
            # Half the archives carry the listing, and half of those no
            # events: then only the listing's rows place the pods.
            if self.seed % 2 or self.layout == "vllm":
                self.files["kubectl/get-pods-wide.txt"] = [(0, x) for x in rows]
            if self.seed % 4 != 1:
                self.files["kubectl/events.txt"] = [(0, x) for x in events]
        if self.layout in SLURM_LAYOUTS:
            nodelist = compress_nodelist("gpu-", self.host_nums, 3)
            self.files["scontrol-show-job.txt"] = [(0, x) for x in [
                "JobId=88231 JobName=pretrain",
                "   JobState=RUNNING Reason=None Dependency=(null)",
                "   NodeList=%s" % nodelist,
                "   BatchHost=%s" % self.hosts[0],
                "   NumNodes=%d NumCPUs=%d NumTasks=%d" % (self.nhosts, self.nhosts * 64, self.ranks),
            ]]

    def progress(self, r, t, step):
        if self.layout == "deepspeed":
            # DeepSpeed's log_dist prints the step on rank 0 only.
            if r == 0:
                self.rank_line(r, t, lambda h, tt, step=step: "[%s] [INFO] [logging.py:96:log_dist] [Rank 0] step=%d, "
                               "skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]" % (
                                   dt.datetime.fromtimestamp(self.ts(h, tt), dt.timezone.utc).strftime(
                                       "%Y-%m-%d %H:%M:%S,%f")[:-3], step))
            return
        self.rank_line(r, t, lambda h, tt, r=r, step=step: "%s iteration %8d/  500000 | consumed samples: %12d | "
                       "elapsed time per iteration (ms): %.1f | learning rate: 1.500E-04 | global batch size:   512 | "
                       "lm loss: 7.892345E+00 | loss scale: 1.0 |" % (
                           self.glog(h, tt, "I", self.pid[r], "training.py:112"), step, step * 512,
                           self.step_s * 1000))

    def train(self, until):
        for s in range(1, self.steps + 1):
            t = self.t0 + 30 + s * self.step_s
            if t >= until:
                break
            for r in range(self.ranks):
                if r % GPUS == 0 or self.ranks <= 16 or s % 10 == 0:
                    self.progress(r, t + 0.001 * (r % GPUS), s)

    def watchdog(self, r, t, seq=808):
        self.rank_line(r, t, lambda h, tt, r=r: "[E%s ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught "
                       "collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=9801523, "
                       "NumelOut=9801523, Timeout(ms)=600000) ran for 600020 milliseconds before timing out." % (
                           dt.datetime.fromtimestamp(self.ts(h, tt), dt.timezone.utc).strftime("%m%d %H:%M:%S.%f"),
                           r, seq))

    def remote_error(self, r, t, peer_r):
        peer = self.name_in_logs(peer_r)
        self.rank_line(r, t, lambda h, tt, r=r: "%s:%d:%d [%d] misc/socket.cc:538 NCCL WARN Net : Connection "
                       "closed by remote peer %s<47861>" % (self.name_in_logs(r), self.pid[r], self.pid[r] + 61,
                                                            r % GPUS, peer))

    def ib_retry(self, r, t, peer_r):
        """A retry-exceeded completion blaming the lost machine: what reads
        as a network partition when the machine was taken away."""
        peer_ip = "10.%d.%d.%d" % (peer_r // GPUS // 250, peer_r // GPUS % 250, 10 + peer_r % GPUS)
        self.rank_line(r, t, lambda h, tt, r=r: "%s:%d:%d [%d] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got "
                       "completion from peer %s<48211> with status=12 opcode=0 len=0 vendor err 129 (Send) "
                       "localGid ::ffff:10.0.0.11 remoteGids::ffff:%s hca mlx5_3" % (
                           self.name_in_logs(r), self.pid[r], self.pid[r] + 62, r % GPUS, peer_ip, peer_ip))


    # ---- the elastic agent (torchrun layout)
    def route(self):
        """Which of the agent's words link a worker pid to its rank: 0 the
        ChildFailedError summary alone, 1 the rendezvous ranks and the
        "failed ... local_rank: L (pid: P)" line, 2 the rendezvous ranks and
        py-spy dumps naming each worker's --local_rank."""
        return (self.seed + self.ranks.bit_length()) % 3

    def agent(self, h, t, level, where, msg):
        self.add("%s/torchrun.log" % h, t, "%s %s" % (
            self.glog(h, t, level, self.agent_pid[h], "torch/distributed/elastic/" + where), msg))

    def rendezvous(self):
        if self.route() == 0:
            return
        for i, h in enumerate(self.hosts):
            t = self.t0 - 5
            self.agent(h, t, "I", "agent/server/api.py:525", "[default] Rendezvous complete for workers. Result:")
            block = ["restart_count=0", "master_addr=%s" % self.hosts[0], "master_port=29500",
                     "group_rank=%d" % i, "group_world_size=%d" % self.nhosts,
                     "local_ranks=%s" % list(range(GPUS)), "role_ranks=%s" % list(range(i * GPUS, (i + 1) * GPUS)),
                     "global_ranks=%s" % list(range(i * GPUS, (i + 1) * GPUS)),
                     "role_world_sizes=%s" % ([self.ranks] * GPUS), "global_world_sizes=%s" % ([self.ranks] * GPUS)]
            for k, line in enumerate(block):
                self.add("%s/torchrun.log" % h, t + 1e-6 * (k + 1), "  " + line)
            if self.route() == 2:
                for r in range(i * GPUS, (i + 1) * GPUS):
                    self.add("%s/pyspy.txt" % h, t + r, "Process %d: /usr/bin/python3 -u train.py --local_rank=%d "
                             "--deepspeed_config ds.json" % (self.pid[r], r % GPUS))
                    self.add("%s/pyspy.txt" % h, t + r + 1e-3, "Python v3.10.12 (/usr/bin/python3.10)")
                    self.add("%s/pyspy.txt" % h, t + r + 2e-3, "")
                    self.add("%s/pyspy.txt" % h, t + r + 3e-3, "Thread %d (idle): \"MainThread\"" % self.pid[r])
                    self.add("%s/pyspy.txt" % h, t + r + 4e-3, "    wait (threading.py:320)")

    def agent_failure(self, victim, t, exitcode=-9):
        """What the victim's agent prints after its worker was SIGKILLed."""
        h = self.host_of(victim)
        siblings = [r for r in range(victim - victim % GPUS, victim - victim % GPUS + GPUS) if r != victim]
        for k, r in enumerate(siblings):
            self.agent(h, t + 0.01 * k, "W", "multiprocessing/api.py:897",
                       "Sending process %d closing signal SIGTERM" % self.pid[r])
        if self.route() == 1:
            self.agent(h, t + 0.5, "E", "multiprocessing/api.py:869", "failed (exitcode: %d) local_rank: %d (pid: %d) "
                       "of binary: /usr/bin/python3" % (exitcode, victim % GPUS, self.pid[victim]))
        if self.route() != 0:
            return
        stamp = dt.datetime.fromtimestamp(self.ts(h, t), dt.timezone.utc).strftime("%Y-%m-%d_%H:%M:%S")
        fqdn = h + ".cluster.internal"
        lines = ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ", "=" * 60,
                 "train.py FAILED", "-" * 60, "Failures:"]
        for k, r in enumerate(siblings[:2]):
            lines += ["[%d]:" % (k + 1), "  time      : %s" % stamp, "  host      : %s" % fqdn,
                      "  rank      : %d (local_rank: %d)" % (r, r % GPUS),
                      "  exitcode  : -15 (pid: %d)" % self.pid[r], "  error_file: <N/A>",
                      "  traceback : Signal 15 (SIGTERM) received by PID %d" % self.pid[r]]
        lines += ["-" * 60, "Root Cause (first observed failure):", "[0]:", "  time      : %s" % stamp,
                  "  host      : %s" % fqdn, "  rank      : %d (local_rank: %d)" % (victim, victim % GPUS),
                  "  exitcode  : %d (pid: %d)" % (exitcode, self.pid[victim]), "  error_file: <N/A>",
                  "  traceback : Signal %d (%s) received by PID %d" % (
                      -exitcode, {-9: "SIGKILL", -11: "SIGSEGV"}[exitcode], self.pid[victim]), "=" * 60]
        for k, line in enumerate(lines):
            self.add("%s/torchrun.log" % h, t + 1 + 1e-6 * k, line)

    # ---- the DeepSpeed launcher under pdsh (deepspeed layout)
    def deepspeed_launch(self):
        world = "{%s}" % ", ".join("'%s': %s" % (h, list(range(GPUS))) for h in self.hosts)
        mapping = "{%s}" % ", ".join("'%s': %s" % (h, list(range(i * GPUS, (i + 1) * GPUS)))
                                     for i, h in enumerate(self.hosts))
        for i, h in enumerate(self.hosts):
            t = self.t0 - 8
            stamp = lambda tt, h=h: dt.datetime.fromtimestamp(self.ts(h, tt), dt.timezone.utc).strftime(
                "%Y-%m-%d %H:%M:%S,%f")[:-3]
            lines = ["[INFO] [launch.py:145:main] WORLD INFO DICT: %s" % world,
                     "[INFO] [launch.py:151:main] nnodes=%d, num_local_procs=%d, node_rank=%d" % (self.nhosts, GPUS, i),
                     "[INFO] [launch.py:162:main] global_rank_mapping=defaultdict(<class 'list'>, %s)" % mapping,
                     "[INFO] [launch.py:163:main] dist_world_size=%d" % self.ranks,
                     "[INFO] [launch.py:165:main] Setting CUDA_VISIBLE_DEVICES=%s" % ",".join(map(str, range(GPUS))),
                     ] + ["[INFO] [launch.py:256:main] process %d spawned with command: ['/usr/bin/python3', '-u', "
                          "'train.py', '--local_rank=%d', '--deepspeed', '--deepspeed_config', 'ds_config.json']"
                          % (self.pid[r], r % GPUS) for r in range(i * GPUS, (i + 1) * GPUS)]
            for k, line in enumerate(lines):
                self.add("launcher.log", t + 1e-3 * k, "%s: [%s] %s" % (h, stamp(t + 1e-3 * k), line))

    # ---- Slurm task environment (slurm_env layout)
    def slurm_env(self):
        for r in range(self.ranks):
            env = [("SLURM_PROCID", r), ("SLURM_LOCALID", r % GPUS), ("SLURM_TASK_PID", self.pid[r]),
                   ("SLURMD_NODENAME", self.host_of(r)), ("SLURM_NODEID", r // GPUS)]
            self.rng.shuffle(env)
            env.append(("SLURM_RESTART_COUNT", 0))
            for k, (name, value) in enumerate(env):
                self.rank_line(r, self.t0 - 10 + 1e-4 * k, lambda h, t, name=name, value=value: "%s=%s" % (name, value))

    # ---- vLLM replicas behind one service (vllm layout)
    def vllm_stamp(self, h, t, level, where):
        d = dt.datetime.fromtimestamp(self.ts(h, t), dt.timezone.utc)
        return "%s %s [%s]" % (level, d.strftime("%m-%d %H:%M:%S"), where)

    def vllm_line(self, i, t, who, level, where, msg):
        h = self.hosts[i]
        self.add("pods/%s/vllm.log" % self.pods[i], t, "(%s) %s %s" % (who, self.vllm_stamp(h, t, level, where), msg))

    def worker_name(self, i, local):
        r = i * GPUS + local
        if self.seed % 2:
            return "Worker_TP%d pid=%d" % (local, self.pid[r])
        return "VllmWorker rank=%d pid=%d" % (local, self.pid[r])

    def vllm_serve(self, until):
        for i, h in enumerate(self.hosts):
            api, core = "APIServer pid=%d" % self.agent_pid[h], "EngineCore_0 pid=%d" % (self.agent_pid[h] + 7)
            t = self.t0
            self.vllm_line(i, t, api, "INFO", "api_server.py:1277", "vLLM API server version 0.10.1")
            self.vllm_line(i, t + 4, core, "INFO", "core.py:74", "Initializing a V1 LLM engine (v0.10.1) with config: "
                           "model='meta-llama/Llama-3.1-70B-Instruct', tensor_parallel_size=%d" % GPUS)
            for local in range(GPUS):
                self.vllm_line(i, t + 20 + 0.01 * local, self.worker_name(i, local), "INFO", "gpu_model_runner.py:1843",
                               "Model loading took 17.6 GiB and 12.3 seconds")
            for k in range(1, 40):
                tt = t + 30 + 2 * k
                if tt >= until:
                    break
                self.vllm_line(i, tt, api, "INFO", "loggers.py:123", "Engine 000: Avg prompt throughput: 812.4 tokens/s, "
                               "Avg generation throughput: 1460.2 tokens/s, Running: 31 reqs, Waiting: 0 reqs")

    def vllm_crash(self, victim, t):
        i, local = victim // GPUS, victim % GPUS
        h = self.hosts[i]
        api, core = "APIServer pid=%d" % self.agent_pid[h], "EngineCore_0 pid=%d" % (self.agent_pid[h] + 7)
        self.vllm_line(i, t, self.worker_name(i, local), "ERROR", "multiproc_executor.py:546",
                       "RuntimeError: CUDA error: an illegal memory access was encountered")
        self.vllm_line(i, t + 0.4, core, "ERROR", "core.py:710", "EngineCore encountered a fatal error.")
        self.vllm_line(i, t + 0.5, api, "ERROR", "async_llm.py:704", "vllm.v1.engine.exceptions.EngineDeadError: "
                       "EngineCore encountered an issue. See stack trace (above) for the root cause.")
        for k in range(3):
            self.add("pods/%s/vllm.log" % self.pods[i], t + 0.6 + k, "(%s) INFO:     10.0.4.17:%d - \"POST "
                     "/v1/chat/completions HTTP/1.1\" 500 Internal Server Error" % (api, 51234 + k))

    # ---- vLLM v0 replicas (vllm_v0 layout)
    def v0_line(self, i, t, local, level, where, msg):
        """A line of replica i's server log: the driver's own (TP rank 0) or
        a worker's under its coloured process prefix."""
        h = self.hosts[i]
        d = dt.datetime.fromtimestamp(self.ts(h, t), dt.timezone.utc)
        line = "%s %s [%s] %s" % (level, d.strftime("%m-%d %H:%M:%S"), where, msg)
        if local:
            line = "\x1b[1;36m(VllmWorkerProcess pid=%d)\x1b[0;0m %s" % (self.pid[i * GPUS + local], line)
        self.add("%s/vllm-server.log" % h, t, line)

    def v0_serve(self, until):
        for i, h in enumerate(self.hosts):
            t = self.t0
            self.v0_line(i, t, 0, "INFO", "api_server.py:1043", "vLLM API server version 0.8.5")
            self.v0_line(i, t + 1, 0, "INFO", "llm_engine.py:240", "Initializing a V0 LLM engine (v0.8.5) with config: "
                         "model='meta-llama/Llama-3.1-70B-Instruct', tensor_parallel_size=%d" % GPUS)
            for local in range(GPUS):
                r = i * GPUS + local
                tt = t + 5 + 0.01 * local
                self.v0_line(i, tt, local, "INFO", "multiproc_worker_utils.py:225", "Worker ready; awaiting tasks")
                if self.seed % 2:
                    self.v0_line(i, tt + 1, local, "INFO", "parallel_state.py:1004", "rank %d in world size %d is "
                                 "assigned as DP rank 0, PP rank 0, TP rank %d" % (local, GPUS, local))
                else:
                    self.add("%s/vllm-server.log" % h, tt + 1, "%s:%d:%d [%d] NCCL INFO comm 0x55d0c0a0%02x rank %d "
                             "nranks %d cudaDev %d nvmlDev %d busId %s000 commId 0x1a2b3c4d5e6f70%02x - Init COMPLETE"
                             % (h, self.pid[r], self.pid[r] + 60, local, local, local, GPUS, local, local,
                                BUSES[local], i))
                self.v0_line(i, tt + 20, local, "INFO", "model_runner.py:1146", "Loading model weights took 16.4 GB")
            for k in range(1, 40):
                tt = t + 30 + 2 * k
                if tt >= until:
                    break
                self.v0_line(i, tt, 0, "INFO", "metrics.py:489", "Avg prompt throughput: 812.4 tokens/s, Avg generation "
                             "throughput: 1460.2 tokens/s, Running: 31 reqs, Swapped: 0 reqs, Pending: 0 reqs")

    def v0_crash(self, victim, t):
        i, local = victim // GPUS, victim % GPUS
        self.v0_line(i, t, local, "ERROR", "multiproc_worker_utils.py:238", "Exception in worker VllmWorkerProcess "
                     "while processing method execute_model.")
        self.v0_line(i, t + 0.01, local, "ERROR", "multiproc_worker_utils.py:238",
                     "RuntimeError: CUDA error: an illegal memory access was encountered")
        self.v0_line(i, t + 0.5, 0, "ERROR", "multiproc_worker_utils.py:124", "Worker VllmWorkerProcess pid %d died, "
                     "exit code: -6" % self.pid[victim])
        self.add("%s/vllm-server.log" % self.hosts[i], t + 1, "CRITICAL %s launcher.py:99] MQLLMEngine is already "
                 "dead, terminating server process" % dt.datetime.fromtimestamp(
                     self.ts(self.hosts[i], t + 1), dt.timezone.utc).strftime("%m-%d %H:%M:%S"))

    # ---- srun's word on its tasks (task_exit kind)
    def srun_task_exit(self, victim, t):
        """What srun prints when one task exits non-zero and it terminates
        the step (--kill-on-bad-exit): the tasks it kills then are reported
        only at verbose level. Under torchrun a task is one node's agent, so
        its number is the node index."""
        vt = victim // GPUS if self.layout == "slurm" else victim
        stamp = dt.datetime.fromtimestamp(self.ts(self.hosts[0], t + 0.2), dt.timezone.utc)
        self.add("slurm-88231.out", t, "srun: error: %s: task %d: Exited with exit code 1" % (self.host_of(victim), vt))
        self.add("slurm-88231.out", t + 0.1, "srun: Terminating StepId=88231.0")
        self.add("slurm-88231.out", t + 0.2, "slurmstepd: error: *** STEP 88231.0 ON %s CANCELLED AT %s ***" % (
            self.hosts[0], stamp.strftime("%Y-%m-%dT%H:%M:%S")))

    # ---- kubectl describe pods (k8s pod_* kinds)
    def describe(self, victim_pod, reason):
        out = []
        for i, (pod, h) in enumerate(zip(self.pods, self.hosts)):
            failed = pod == victim_pod and reason in ("Evicted", "Terminated")
            out += ["Name:             %s" % pod, "Namespace:        training", "Priority:         0",
                    "Node:             %s/10.0.%d.%d" % (h, i // 200, i % 200 + 10),
                    "Start Time:       Mon, 02 Nov 2026 09:00:00 +0000",
                    "Status:           %s" % ("Failed" if failed else "Running")]
            if failed and reason == "Terminated":
                out += ["Reason:           Terminated",
                        "Message:          Pod was terminated in response to imminent node shutdown."]
            elif failed:
                out += ["Reason:           Evicted",
                        "Message:          The node was low on resource: memory. Threshold quantity: 100Mi, "
                        "available: 85228Ki. Container pytorch was using 61234567Ki, request is 0, has larger "
                        "consumption of memory."]
            out += ["IP:               10.244.%d.%d" % (i // 200, i % 200 + 2), "Containers:", "  pytorch:",
                    "    Image:          nvcr.io/nvidia/pytorch:24.05-py3"]
            if pod == victim_pod and reason == "OOMKilled":
                out += ["    State:          Waiting", "      Reason:       CrashLoopBackOff",
                        "    Last State:     Terminated", "      Reason:       OOMKilled", "      Exit Code:    137"]
            else:
                out += ["    State:          Running", "    Ready:          True"]
            out += ["Conditions:", "  Type               Status"]
            out += ["  DisruptionTarget   True"] if failed else []
            out += ["  Ready              %s" % ("False" if failed else "True"), "Events:           <none>", ""]
        self.files["kubectl/describe-pods.txt"] = [(0, x) for x in out]

    # ---- termination notices (spot kind)
    def pick(self, what, n):
        """A choice of its own for each aspect of a case, so adding one does
        not move the others' random draws."""
        return random.Random("%s/%s/%d/%d" % (what, self.layout, self.ranks, self.seed)).randrange(n)

    def notice(self, h, t):
        """One cloud's word that the machine is being taken, as its watcher
        logs it, and how long before the machine goes: AWS (the
        instance-action document, EventBridge's warning, the node
        termination handler), Azure (a Preempt scheduled event), GCE
        (preemption, host maintenance)."""
        stamp = dt.datetime.fromtimestamp(self.ts(h, t), dt.timezone.utc)
        at = lambda lead, fmt: dt.datetime.fromtimestamp(t + lead, dt.timezone.utc).strftime(fmt)
        iso = stamp.strftime("%Y-%m-%dT%H:%M:%SZ")
        which = self.pick("notice", 6)
        if which == 0:
            return 120, "%s - spot - WARNING - spot/instance-action: {\"action\": \"terminate\", \"time\": \"%s\"}" % (
                stamp.strftime("%Y-%m-%d %H:%M:%S,%f")[:-3], at(120, "%Y-%m-%dT%H:%M:%SZ"))
        if which == 1:
            return 30, "%s scheduled-events: {\"EventType\": \"Preempt\", \"NotBefore\": \"%s\"}" % (
                stamp.strftime("%Y-%m-%d %H:%M:%S"), at(30, "%a, %d %b %Y %H:%M:%S GMT"))
        if which == 2:
            return 120, "%s spot-watcher: received EC2 Spot Instance Interruption Warning for i-0abc123def4567890" % iso
        if which == 3:
            return 120, ("%s INF Adding new event to the event store event={\"Description\":\"Spot ITN received. "
                         "Instance will be interrupted at %s \\n\",\"EventID\":\"spot-itn-c375f2bb4fa7984f\","
                         "\"Kind\":\"SPOT_ITN\",\"NodeName\":\"%s\"}" % (
                             stamp.strftime("%Y/%m/%d %H:%M:%S"), at(120, "%Y-%m-%dT%H:%M:%SZ"), h))
        if which == 4:
            return 30, ("%s compute.instances.preempted principal=system@google.com message=\"Instance was "
                        "preempted.\" instance=%s" % (stamp.strftime("%Y-%m-%dT%H:%M:%S.") +
                                                         "%03dZ" % (stamp.microsecond // 1000), h))
        return 60, "%s maint-watcher: metadata instance/maintenance-event changed: NONE -> " \
            "TERMINATE_ON_HOST_MAINTENANCE" % iso

    # ---- the job's final state as scontrol and sacct show it
    def job_state(self, state, reason, batch_host):
        self.files["scontrol-show-job.txt"] = [(0, x.replace("JobState=RUNNING Reason=None", "JobState=%s Reason=%s"
                                                             % (state, reason)).replace(
            "BatchHost=%s" % self.hosts[0], "BatchHost=%s" % batch_host)) for _, x in self.files["scontrol-show-job.txt"]]
        self.files["sacct.txt"] = [(0, "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode "),
                                   (0, "------------ ---------- ---------- ---------- ---------- ---------- -------- "),
                                   (0, "88231             pretrain        gpu       acct %10d %10s      0:0 "
                                    % (self.nhosts * 64, state))]

    # ---- incidents
    def incident(self):
        t_fail = self.t0 + 30 + self.steps * self.step_s * 0.6
        victim = self.rng.randrange(self.ranks)
        vh = self.host_of(victim)
        if self.kind in ("spot", "preempt") and any(self.skew.values()):
            # The worst skew for a notice: its host's clock ahead, the
            # others' behind, so the errors it causes are stamped before it.
            for h in self.hosts:
                self.skew[h] = 45.0 if h == vh else self.rng.uniform(-45, -30)
        truth = {"rules": RULES[self.kind], "rank": None, "host": vh}
        if self.layout == "vllm":
            self.vllm_serve(t_fail)
            self.vllm_crash(victim, t_fail)
            truth["rank"] = victim % GPUS
            return truth
        if self.layout == "vllm_v0":
            # The driver (TP rank 0) runs in the engine's own process; a
            # worker of ranks 1.. is the one whose pid must name its rank.
            victim += 1 if victim % GPUS == 0 else 0
            truth["host"] = self.host_of(victim)
            self.v0_serve(t_fail)
            self.v0_crash(victim, t_fail)
            truth["rank"] = victim % GPUS
            return truth
        self.train(t_fail)
        if self.kind in ("pod_oomkilled", "pod_evicted", "pod_nodeshutdown"):
            reason = {"pod_oomkilled": "OOMKilled", "pod_evicted": "Evicted", "pod_nodeshutdown": "Terminated"}
            self.describe(self.pods[victim // GPUS], reason[self.kind])
            for r in range(self.ranks):
                if r // GPUS != victim // GPUS and (r % GPUS == 0 or self.ranks <= 64):
                    self.remote_error(r, t_fail + 21 + 0.01 * r, victim)
            return truth
        if self.kind == "timelimit":
            self.job_state("TIMEOUT", "TimeLimit", vh)
            self.add("slurm-88231.out", t_fail, "slurmstepd: error: *** JOB 88231 ON %s CANCELLED AT %s DUE TO TIME LIMIT "
                     "***" % (vh, dt.datetime.fromtimestamp(self.ts(vh, t_fail), dt.timezone.utc)
                              .strftime("%Y-%m-%dT%H:%M:%S")))
            for r in range(self.ranks):
                if r % GPUS == 0 or self.ranks <= 64:
                    self.rank_line(r, t_fail + 0.5 + 0.001 * r, lambda h, tt, r=r: "[rank: %d] Received SIGTERM: 15" % r)
                    if r // GPUS != victim // GPUS:
                        self.remote_error(r, t_fail + 3 + 0.01 * r, victim)
            return truth
        if self.kind == "node_fail":
            self.job_state("NODE_FAIL", "NodeDown", vh)
            self.add("slurm-88231.out", t_fail, "srun: error: Node failure on %s" % vh)
            self.add("slurm-88231.out", t_fail + 1, "slurmstepd: error: *** STEP 88231.0 ON %s CANCELLED AT %s DUE TO "
                     "NODE FAILURE ***" % (self.hosts[0], dt.datetime.fromtimestamp(
                         self.ts(self.hosts[0], t_fail + 1), dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")))
            for r in range(self.ranks):
                if r // GPUS != victim // GPUS and (r % GPUS == 0 or self.ranks <= 64):
                    self.remote_error(r, t_fail + 20 + 0.01 * r, victim)
                    self.watchdog(r, t_fail + 620 + 0.01 * r)
            return truth
        if self.kind == "task_exit":
            self.srun_task_exit(victim, t_fail)
            truth["rank"] = victim if self.layout == "slurm_env" else None
            return truth
        if self.kind == "segv":
            self.kern(vh, t_fail, "python3[%d]: segfault at 18 ip 00007f0c8a5d2b1e sp 00007f0c6dffe9c0 error 4 in "
                      "libtorch_cuda.so[7f0c88a00000+4c5a000] likely on CPU 17 (core 1, socket 0)" % self.pid[victim])
            truth["rank"] = victim
            if self.layout == "torchrun":
                self.agent_failure(victim, t_fail + 1, exitcode=-11)
            return truth
        if self.kind == "host_oom":
            self.kern(vh, t_fail - 0.1, "python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|"
                      "__GFP_COMP), order=0, oom_score_adj=0")
            self.kern(vh, t_fail, "Out of memory: Killed process %d (python3) total-vm:183245616kB, "
                      "anon-rss:142338612kB, file-rss:81296kB, shmem-rss:12288kB, UID:1000 pgtables:289112kB "
                      "oom_score_adj:0" % self.pid[victim])
            truth["rank"] = victim
            if self.layout == "torchrun":
                self.agent_failure(victim, t_fail + 1)
            if self.layout == "slurm":
                self.add("%s/torchrun.log" % vh, t_fail + 1, "%s failed (exitcode: -9) local_rank: %d (pid: %d) "
                         "of binary: /usr/bin/python3" % (
                             self.glog(vh, t_fail + 1, "E", 7000 + victim // GPUS,
                                       "torch/distributed/elastic/multiprocessing/api.py:869"),
                             victim % GPUS, self.pid[victim]))
            for r in range(self.ranks):
                if r // GPUS != victim // GPUS and (r % GPUS == 0 or self.ranks <= 64):
                    self.watchdog(r, t_fail + 600 + 0.01 * r)
        elif self.kind == "nfs":
            self.kern(vh, t_fail, "nfs: server nfs-store-01 not responding, still trying")
            for r in range(self.ranks):
                if r % GPUS == 0 or self.ranks <= 64:
                    self.watchdog(r, t_fail + 610 + 0.01 * r)
        elif self.kind == "spot":
            path = ("nodes/%s/spot-watcher.log" if self.layout in K8S_LAYOUTS else "%s/spot-watcher.log") % vh
            lead, line = self.notice(vh, t_fail)
            self.add(path, t_fail, line)
            # A checkpoint a handler saved after the notice, or only the
            # periodic one long before it: the report says which.
            saved = self.pick("checkpoint", 2) == 1
            truth["checkpoint_after_notice"] = saved
            ckpts = [(self.t0 + 31, "INFO - saved checkpoint to /lustre/ckpt/run88231/step10")]
            if saved:
                ckpts.append((t_fail + lead / 2, "WARNING - Caught SIGTERM: saving checkpoint to "
                              "/lustre/ckpt/run88231/preempt before exit"))
            for t_ckpt, msg in ckpts:
                self.rank_line(0, t_ckpt, lambda h, tt, msg=msg: "%s - train - %s" % (
                    dt.datetime.fromtimestamp(self.ts(h, tt), dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S,%f")[:-3],
                    msg))
            # Then the machine is gone: every other host's ranks lose their
            # peers on it (a retry-exceeded completion reads as a network
            # failure), then time out.
            for r in range(self.ranks):
                if r // GPUS != victim // GPUS and (r % GPUS == 0 or self.ranks <= 64):
                    self.ib_retry(r, t_fail + lead + 10 + 0.01 * r, victim)
                    self.remote_error(r, t_fail + lead + 11 + 0.01 * r, victim)
                    self.watchdog(r, t_fail + 700 + 0.01 * r)
        elif self.kind == "preempt":
            if self.layout == "k8s":
                pod = self.pods[victim // GPUS]
                ev = self.files.setdefault("kubectl/events.txt", [])
                ev.append((0, "%-11s Normal   Preempted   pod/%s   Preempted by pod "
                           "d9d25b95-4a7d-4214-8a30-8ce1fd616f67 on node %s" % ("2m", pod, vh)))
            else:
                self.add("slurm-88231.out", t_fail, "slurmstepd: error: *** JOB 88231 ON %s CANCELLED AT %s DUE TO "
                         "PREEMPTION ***" % (vh, dt.datetime.fromtimestamp(self.ts(vh, t_fail), dt.timezone.utc)
                                               .strftime("%Y-%m-%dT%H:%M:%S")))
                if self.layout in SLURM_LAYOUTS and self.pick("job_state", 2):
                    self.job_state("PREEMPTED", "None", vh)
            for r in range(self.ranks):
                if r // GPUS != victim // GPUS and (r % GPUS == 0 or self.ranks <= 64):
                    self.ib_retry(r, t_fail + 20.5 + 0.01 * r, victim)
                    self.remote_error(r, t_fail + 21 + 0.01 * r, victim)
        return truth

    def write(self):
        self.startup()
        truth = self.incident()
        for path, lines in self.files.items():
            full = os.path.join(self.out, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            lines.sort(key=lambda x: x[0])
            with open(full, "w") as f:
                f.write("".join(l + "\n" for _, l in lines))
        doc = {"kind": self.kind, "layout": self.layout, "ranks": self.ranks, "hosts": self.hosts,
               "pods": self.pods if self.layout in K8S_LAYOUTS else [], "initiating": truth}
        # Beside the archive, not in it: the truth is no log of the job.
        with open(self.out.rstrip("/") + ".truth.json", "w") as f:
            json.dump(doc, f, indent=1)
        return doc


def named_hosts(node, out):
    """Every host the report names: "host" values, "hosts" lists, clock offsets."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "host" and isinstance(v, str) and v:
                out.add(v)
            elif k == "hosts" and isinstance(v, list):
                out.update(h for h in v if isinstance(h, str))
            elif k == "clock_offsets" and isinstance(v, dict):
                out.update(v.keys())
            else:
                named_hosts(v, out)
    elif isinstance(node, list):
        for v in node:
            named_hosts(v, out)
    return out


def generate(out, layout, kind, ranks, skew, seed):
    return Job(out, layout, kind, ranks, skew, seed).write()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--layout", choices=LAYOUTS, default="perhost")
    ap.add_argument("--kind", choices=KINDS, default="host_oom")
    ap.add_argument("--ranks", type=int, default=16)
    ap.add_argument("--skew", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    print(json.dumps(generate(a.out, a.layout, a.kind, a.ranks, a.skew, a.seed)["initiating"]))


if __name__ == "__main__":
    main()
