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
            name) in NCCL prefixes; OUT/kubectl/get-pods-wide.txt and
            OUT/kubectl/events.txt place each pod on its node;
            OUT/nodes/<node>/kern.log
  slurm     OUT/slurm-<job>.out: srun -l task labels over every rank, NCCL
            init lines naming host and device; OUT/<host>/torchrun.log: the
            elastic agent's "failed (exitcode: -9) local_rank: L (pid: P)";
            OUT/scontrol-show-job.txt with a compressed NodeList;
            OUT/<host>/kern.log

Kinds: host_oom (the kernel kills one worker by pid), nfs (the client's
kernel loses its NFS server), spot (an AWS instance-action notice, then the
other hosts' NCCL errors), preempt (k8s: the pod is preempted; slurm: the job
is cancelled due to preemption).

OUT.truth.json (beside the archive): kind, layout, hosts (the archive's own hosts), initiating
{rules, rank (null when the logs name only a host), host}, pods.

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
LAYOUTS = ["perhost", "k8s", "slurm"]
KINDS = ["host_oom", "nfs", "spot", "preempt"]
RULES = {
    "host_oom": ["host-oom-kill"],
    "nfs": ["nfs-server-not-responding"],
    "spot": ["spot-instance-interruption"],
    "preempt": ["preemption"],
}


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
        if layout == "k8s":
            self.hosts = ["gpu-node-%d" % n for n in nums]
        else:
            self.hosts = ["gpu-%03d" % n for n in nums]
        self.host_nums = nums
        self.pods = ["trainer-worker-%d" % i for i in range(self.nhosts)]
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
        return self.pods[r // GPUS] if self.layout == "k8s" else self.host_of(r)

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
        else:
            self.add("slurm-88231.out", t, "%d: [rank%d]:%s" % (r, r, text(h, t)))

    def kern(self, h, t, msg):
        path = ("nodes/%s/kern.log" if self.layout == "k8s" else "%s/kern.log") % h
        self.add(path, t, "%s kernel: [%12.6f] %s" % (self.syslog(h, t), 1000000.0 + (t - self.t0), msg))

    # ---- the healthy part of a job
    def startup(self):
        for r in range(self.ranks):
            h, dev = self.host_of(r), r % GPUS
            t = self.t0 + 0.01 * dev
            name = self.name_in_logs(r)
            if self.layout != "perhost":
                # NCCL init: host, pid, device and bus of every rank.
                self.rank_line(r, t, lambda hh, tt, r=r, dev=dev, name=name: (
                    "%s:%d:%d [%d] NCCL INFO comm 0x55d0c0a0%02x rank %d nranks %d cudaDev %d nvmlDev %d "
                    "busId %s000 commId 0x1a2b3c4d5e6f7081 - Init COMPLETE" % (
                        name, self.pid[r], self.pid[r] + 60, dev, dev, r, self.ranks, dev, dev, BUSES[dev])))
        if self.layout == "k8s":
            rows = ["NAME               READY   STATUS    RESTARTS   AGE     IP            NODE         "
                    "NOMINATED NODE   READINESS GATES"]
            events = ["LAST SEEN   TYPE     REASON      OBJECT                 MESSAGE"]
            for i, (pod, h) in enumerate(zip(self.pods, self.hosts)):
                status = "Running"
                rows.append("%-18s 1/1     %-9s 0          3h12m   10.244.%d.%d   %s   <none>           <none>"
                            % (pod, status, i // 200, i % 200 + 2, h))
                events.append("3h12m       Normal   Scheduled   pod/%s   Successfully assigned training/%s to %s"
                              % (pod, pod, h))
            # Half the archives carry the listing, the other half only events.
            if self.seed % 2:
                self.files["kubectl/get-pods-wide.txt"] = [(0, x) for x in rows]
            self.files["kubectl/events.txt"] = [(0, x) for x in events]
        if self.layout == "slurm":
            nodelist = compress_nodelist("gpu-", self.host_nums, 3)
            self.files["scontrol-show-job.txt"] = [(0, x) for x in [
                "JobId=88231 JobName=pretrain",
                "   JobState=RUNNING Reason=None Dependency=(null)",
                "   NodeList=%s" % nodelist,
                "   BatchHost=%s" % self.hosts[0],
                "   NumNodes=%d NumCPUs=%d NumTasks=%d" % (self.nhosts, self.nhosts * 64, self.ranks),
            ]]

    def progress(self, r, t, step):
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
        self.train(t_fail)
        if self.kind == "host_oom":
            self.kern(vh, t_fail - 0.1, "python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|"
                      "__GFP_COMP), order=0, oom_score_adj=0")
            self.kern(vh, t_fail, "Out of memory: Killed process %d (python3) total-vm:183245616kB, "
                      "anon-rss:142338612kB, file-rss:81296kB, shmem-rss:12288kB, UID:1000 pgtables:289112kB "
                      "oom_score_adj:0" % self.pid[victim])
            truth["rank"] = victim
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
            path = ("nodes/%s/spot-watcher.log" if self.layout == "k8s" else "%s/spot-watcher.log") % vh
            stamp = dt.datetime.fromtimestamp(self.ts(vh, t_fail), dt.timezone.utc)
            if self.seed % 2:
                # Azure: a Preempt scheduled event, 30 s ahead.
                lead = 30
                self.add(path, t_fail, "%s scheduled-events: {\"EventType\": \"Preempt\", \"NotBefore\": "
                         "\"%s\"}" % (stamp.strftime("%Y-%m-%d %H:%M:%S"),
                                        dt.datetime.fromtimestamp(t_fail + lead, dt.timezone.utc).strftime(
                                            "%a, %d %b %Y %H:%M:%S GMT")))
            else:
                # AWS: the instance-action document, two minutes ahead.
                lead = 120
                self.add(path, t_fail, "%s - spot - WARNING - spot/instance-action: {\"action\": \"terminate\", "
                         "\"time\": \"%s\"}" % (
                             stamp.strftime("%Y-%m-%d %H:%M:%S,%f")[:-3],
                             dt.datetime.fromtimestamp(t_fail + lead, dt.timezone.utc).strftime(
                                 "%Y-%m-%dT%H:%M:%SZ")))
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
               "pods": self.pods if self.layout == "k8s" else [], "initiating": truth}
        # Beside the archive, not in it: the truth is no log of the job.
        with open(self.out.rstrip("/") + ".truth.json", "w") as f:
            json.dump(doc, f, indent=1)
        return doc


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
