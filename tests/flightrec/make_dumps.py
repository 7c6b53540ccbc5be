#!/usr/bin/env python3
"""Writes PyTorch NCCL Flight Recorder dumps for the flightrec tests.

The structure follows PyTorch's writers, per dump format version:
  2.0  torch/csrc/distributed/c10d/TraceUtils.h (NCCLTraceBuffer::dump):
       top level entries, version, pg_config (+ nccl_comm_state); entries
       carry frames last; dtypes are TypeMeta names ("float"). Pickle only.
  2.3  torch/csrc/distributed/c10d/NCCLUtils.hpp: + pg_status, timeout_ms;
       the JSON dump appears.
  2.4  torch/csrc/distributed/c10d/FlightRecorder.hpp: dtypes are ScalarType
       names ("Float").
  2.7  + nccl_version.
  2.10 FlightRecorder.hpp / FlightRecorderDetail.hpp (dump_dict, dump_json):
       version, pg_config, comm_lib_version, pg_status, entries; entries
       start with frames and add thread_name / thread_id.
pg_config ranks are a string "[0, 1, 2]" (ranks_str); process_group is a
(name, desc) tuple; JSON is nlohmann's compact dump with sorted keys, pg_status
numbers as strings and 0 for undiscovered times.

torch::jit::Pickler writes protocol 2 with memoized strings, which is what
Python's pickle.dumps(obj, protocol=2) writes for these plain containers;
other protocols are written too, to cover what tools re-pickle. Python's
pickle is used here only to WRITE test data.

Scenarios (each a directory of per-rank files):
  v<version>-<format>[-p<protocol>]: 8 ranks, world group "0", TP groups of
      2 ("1".."4"), DP groups of 4 ("5", "6"; no collectives). Six steps of
      world all_reduce + TP all_gather; rank 5 never enters world all_reduce
      #6 (the others have it "started"); rank 2 records input [1024] instead
      of [2048] for world all_reduce #3. Files are named nccl_trace_rank_<r>
      but the rank comes from the groups.
  p2p: 2 ranks, world group only, pipeline send/recv: files named stage-a /
      stage-b; the rank comes from the send/recv names.
  filename: 4 ranks, world group only, no p2p: the rank comes from the name.
  scale1024: 1,024 ranks, TP groups of 8, DP groups of 128, renamed files
      (letters only). Rank 777 never enters world all_reduce #6, rank 300 runs
      all_gather at world #4 (a desync), rank 1000 left no dump.
  hostile: a 2.10 dump whose frames hold an object that would call
      os.system when unpickled (protocols 2 and 4: GLOBAL, STACK_GLOBAL).
  job: a watchdog-timeout job as an archive: logs/rank<r>.log (torchtitan
      steps, then ProcessGroupNCCL's watchdog timeout on every rank but 5)
      and dumps/ (renamed, pickle and JSON, some gzipped); rank 5 never
      entered world all_reduce #6.
  broken: the job archive plus a dump cut in half and the hostile dumps.

usage: make_dumps.py OUTDIR [--only NAME]...
"""

import argparse
import json
import os
import pickle
import shutil
import sys

T0 = 1_764_700_000_000_000_000  # ns


def ranks_str(ranks):
    return "[" + ", ".join(str(r) for r in ranks) + "]"


class Job:
    """One job: its groups and, per rank, the collectives it recorded."""

    def __init__(self, world, tp, dp):
        self.world = world
        self.groups = {"0": ("default_pg", list(range(world)))}
        n = 1
        for start in range(0, world, tp):
            self.groups[str(n)] = ("tp", list(range(start, start + tp)))
            n += 1
        for off in range(tp):
            self.groups[str(n)] = ("dp", list(range(off, world, tp)))
            n += 1
        self.pg_ids = {name: i for i, name in enumerate(self.groups)}

    def groups_of(self, rank):
        return [name for name, (_, ranks) in self.groups.items() if rank in ranks]

    def tp_of(self, rank):
        return next(n for n in self.groups_of(rank) if self.groups[n][0] == "tp")


def entry(version, rid, pg_name, pg_desc, pg_id, seq, p2p_seq, op, state, in_sizes, out_sizes,
          dtype, p2p=False, t=0, t0=T0):
    """One ring-buffer entry, keys in the writer's insertion order; times
    are t0 + t ns."""
    # c10::toString(ScalarType) from 2.4; caffe2::TypeMeta::name() before.
    if version >= (2, 4):
        dt = {"float": "Float", "bfloat16": "BFloat16"}[dtype]
    else:
        dt = {"float": "float", "bfloat16": "c10::BFloat16"}[dtype]
    started = state in ("started", "completed")
    completed = state == "completed"
    e = {}
    frames = [{"name": "all_reduce", "filename": "torch/distributed/distributed_c10d.py",
               "line": 2501},
              {"name": "train_step", "filename": "train.py", "line": 88}]
    if version >= (2, 3):
        e["frames"] = frames
    e["record_id"] = rid
    e["pg_id"] = pg_id
    e["process_group"] = (pg_name, pg_desc)
    if version >= (2, 10):
        e["thread_name"] = "pt_main_thread"
        e["thread_id"] = "140230517503808"
    e["collective_seq_id"] = seq
    e["p2p_seq_id"] = p2p_seq
    e["op_id"] = rid + 1
    e["profiling_name"] = "nccl:" + op
    e["time_created_ns"] = t0 + t
    if completed:
        e["duration_ms"] = 0.75
    e["input_sizes"] = [list(s) for s in in_sizes]
    e["input_dtypes"] = [dt] * len(in_sizes)
    e["output_sizes"] = [list(s) for s in out_sizes]
    e["output_dtypes"] = [dt] * len(out_sizes)
    e["state"] = state
    e["time_discovered_started_ns"] = t0 + t + 1000 if started else None
    e["time_discovered_completed_ns"] = t0 + t + 2000 if completed else None
    e["retired"] = completed
    if version >= (2, 3):
        e["timeout_ms"] = 600000
    e["is_p2p"] = p2p
    if version < (2, 3):
        e["frames"] = frames
    return e


def dump_dict(version, job, rank, entries, pg_status):
    vstr = "%d.%d" % version
    pg_config = {}
    for name in job.groups_of(rank):
        desc, ranks = job.groups[name]
        pg_config[name] = {"name": name, "desc": desc, "ranks": ranks_str(ranks)}
    if version < (2, 3):
        return {"entries": entries, "version": vstr, "pg_config": pg_config}
    d = {"version": vstr, "pg_config": pg_config}
    if version >= (2, 10):
        d["comm_lib_version"] = "2.21.5"
    elif version >= (2, 7):
        d["nccl_version"] = "2.21.5"
    d["pg_status"] = pg_status
    d["entries"] = entries
    return d


def to_json(d):
    """FlightRecorder::dump_json: nlohmann objects sort keys; no frames."""
    j = dict(d)
    entries = []
    for e in d.get("entries", []):
        e = {k: v for k, v in e.items() if k != "frames"}
        for k in ("time_discovered_started_ns", "time_discovered_completed_ns"):
            if e[k] is None:
                e[k] = 0
        e["process_group"] = list(e["process_group"])
        entries.append(e)
    if entries:
        j["entries"] = entries
    else:
        j.pop("entries", None)
    j["pg_status"] = {k: {kk: str(vv) for kk, vv in v.items()}
                      for k, v in d.get("pg_status", {}).items()}
    return json.dumps(j, sort_keys=True, separators=(",", ":")).encode()


def steps_for(job, rank, version, steps, missing, hang_started, size_odd, op_odd, seq0=1, t0=T0):
    """World all_reduce + TP all_gather per step; the last step hangs.
    Step k's collectives are #seq0 + k - 1 of their groups, at t0 + k s."""
    entries = []
    status = {}
    rid = 0
    tp = job.tp_of(rank)
    tp_size = len(job.groups[tp][1])
    last = {}
    for step in range(1, steps + 1):
        if rank == missing and step == steps:
            break  # never enters the world collective of the last step
        hang = step == steps
        size = 1024 if (rank, step) == size_odd else 2048
        op = "all_gather" if (rank, step) == op_odd else "all_reduce"
        out_sizes = [[size * job.world]] if op == "all_gather" else [[size]]
        state = ("started" if hang_started else "scheduled") if hang else "completed"
        seq = seq0 + step - 1
        entries.append(entry(version, rid, "0", "default_pg", job.pg_ids["0"], seq, 0, op,
                             state, [[size]], out_sizes, "float", t=step * 10**9, t0=t0))
        last["0"] = (seq, state)
        rid += 1
        if hang:
            break
        entries.append(entry(version, rid, tp, "tp", job.pg_ids[tp], seq, 0, "all_gather",
                             "completed", [[512]], [[512 * tp_size]], "bfloat16",
                             t=step * 10**9 + 5000, t0=t0))
        last[tp] = (seq, "completed")
        rid += 1
    for name, (seq, state) in last.items():
        done = seq if state == "completed" else seq - 1
        status[str(job.pg_ids[name])] = {
            "last_enqueued_collective": seq,
            "last_started_collective": seq if state != "scheduled" else seq - 1,
            "last_completed_collective": done,
        }
    return entries, status


def hang_dump(job, rank, missing, seq, t_ns, fmt="pickle", op_odd=None):
    """Rank `rank`'s 2.10 dump of a job whose world all_reduce #seq, at
    t_ns, the rank `missing` never entered (the others started it), or
    the rank `op_odd` started as an all_gather: for generators of whole
    job archives (tests/sim)."""
    entries, status = steps_for(job, rank, (2, 10), 6, missing=missing, hang_started=True, size_odd=None,
                                op_odd=None if op_odd is None else (op_odd, 6), seq0=seq - 5, t0=t_ns - 6 * 10**9)
    return encode(dump_dict((2, 10), job, rank, entries, status), fmt, 2)


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def encode(d, fmt, protocol):
    if fmt == "json":
        return to_json(d)
    return pickle.dumps(d, protocol=protocol)


def versions_case(out, version, fmt, protocol):
    job = Job(8, 2, 4)
    name = "v%d.%d-%s" % (version + (fmt,))
    if protocol != 2:
        name += "-p%d" % protocol
    for rank in range(job.world):
        entries, status = steps_for(job, rank, version, 6, missing=5, hang_started=True,
                                    size_odd=(2, 3), op_odd=None)
        d = dump_dict(version, job, rank, entries, status)
        write(os.path.join(out, name, "nccl_trace_rank_%d" % rank), encode(d, fmt, protocol))


def p2p_case(out):
    job = Job(2, 2, 2)
    job.groups = {"0": ("default_pg", [0, 1])}
    job.pg_ids = {"0": 0}
    for rank, fname in ((0, "stage-a.pkl"), (1, "stage-b.pkl")):
        entries = []
        for i in range(3):
            op = "send 0->1" if rank == 0 else "recv 1<-0"
            entries.append(entry((2, 10), 2 * i, "0", "default_pg", 0, i, i + 1, op, "completed",
                                 [[64]], [[64]], "float", p2p=True, t=i))
            entries.append(entry((2, 10), 2 * i + 1, "0", "default_pg", 0, i + 1, i + 1,
                                 "all_reduce", "completed", [[8]], [[8]], "float", t=i + 1))
        d = dump_dict((2, 10), job, rank, entries, {})
        write(os.path.join(out, "p2p", fname), pickle.dumps(d, protocol=2))


def filename_case(out):
    job = Job(4, 4, 4)
    job.groups = {"0": ("default_pg", [0, 1, 2, 3])}
    job.pg_ids = {"0": 0}
    for rank in range(4):
        entries = [entry((2, 4), i, "0", "default_pg", 0, i + 1, 0, "all_reduce",
                         "completed" if i < 2 or rank != 3 else "started", [[4]], [[4]], "float")
                   for i in range(3)]
        d = dump_dict((2, 4), job, rank, entries, {})
        write(os.path.join(out, "filename", "nccl_trace_rank_%d" % rank),
              pickle.dumps(d, protocol=2))


def letters(n):
    s = ""
    n += 1
    while n:
        n, r = divmod(n - 1, 26)
        s = chr(ord("a") + r) + s
    return s


def scale_case(out):
    job = Job(1024, 8, 128)
    for rank in range(job.world):
        if rank == 1000:
            continue  # crashed before it could dump
        entries, status = steps_for(job, rank, (2, 10), 6, missing=777, hang_started=True,
                                    size_odd=None, op_odd=(300, 4))
        d = dump_dict((2, 10), job, rank, entries, status)
        fmt = "json" if rank % 3 == 0 else "pickle"
        fname = "fr-%s.%s" % (letters(rank * 7919 % 100003), "json" if fmt == "json" else "bin")
        write(os.path.join(out, "scale1024", fname), encode(d, fmt, 2))


class Hostile:
    """An object whose unpickling would run a command (never unpickled here)."""

    def __reduce__(self):
        return (os.system, ("echo pwned",))


def hostile_case(out):
    """Dumps carrying a code-bearing object where a frame should be."""
    job = Job(2, 2, 2)
    for protocol in (2, 4):
        entries, status = steps_for(job, 0, (2, 10), 2, missing=None, hang_started=True,
                                    size_odd=None, op_odd=None)
        entries[0]["frames"] = [Hostile()]
        d = dump_dict((2, 10), job, 0, entries, status)
        write(os.path.join(out, "hostile", "nccl_trace_rank_0.p%d" % protocol),
              pickle.dumps(d, protocol=protocol))


def log_time(t_s, fmt):
    """A wall time T0 + t_s in the formats the log lines use."""
    import datetime
    t = datetime.datetime.fromtimestamp(T0 // 10**9 + t_s, tz=datetime.timezone.utc)
    if fmt == "titan":
        return t.strftime("%Y-%m-%d %H:%M:%S") + ",000"
    return t.strftime("%m%d %H:%M:%S") + ".903881913"  # glog: E<mmdd hh:mm:ss.ns>


def job_case(out, world=8, silent=5, name="job"):
    """A watchdog-timeout job: per-rank logs plus the dumps, as an archive.

    Every rank logs torchtitan steps 1-5; at step 6 every rank but `silent`
    enters world all_reduce #6 and, ten minutes later, logs the watchdog
    timeout (ProcessGroupNCCL.cpp's text); `silent` logs nothing more. The
    dumps sit in dumps/ under renamed files, a third JSON, a third gzipped
    (rank 0's as nccl_trace_rank_0.json.gz)."""
    import gzip
    job = Job(world, 2, world // 2)
    for rank in range(world):
        lines = []
        for step in range(1, 6):
            lines.append("[rank%d]:[titan] %s - root - INFO - step: %d  loss:  %.4f  memory: 30.89GiB"
                         "(32.51%%)  tps: 6,321  tflops: 366.06  mfu: 37.01%%"
                         % (rank, log_time(step, "titan"), step, 9.0 - step * 0.1))
        if rank != silent:
            t = log_time(6 + 600, "glog")
            lines.append("[rank%d]:[E%s ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught collective "
                         "operation timeout: WorkNCCL(SeqNum=6, OpType=ALLREDUCE, NumelIn=2048, "
                         "NumelOut=2048, Timeout(ms)=600000) ran for 600020 milliseconds before timing "
                         "out." % (rank, t, rank))
            lines.append("[rank%d]:[E%s ProcessGroupNCCL.cpp:1709] [PG 0 (default_pg) Rank %d] Timeout at "
                         "NCCL work: 6, last enqueued NCCL work: 6, last completed NCCL work: 5."
                         % (rank, t, rank))
        write(os.path.join(out, name, "logs", "rank%d.log" % rank), ("\n".join(lines) + "\n").encode())
        entries, status = steps_for(job, rank, (2, 10), 6, missing=silent, hang_started=True,
                                    size_odd=None, op_odd=None)
        d = dump_dict((2, 10), job, rank, entries, status)
        fmt = "json" if rank % 3 == 1 else "pickle"
        data = encode(d, fmt, 2)
        fname = "trace-%s.%s" % (letters(rank * 31 % 997), "json" if fmt == "json" else "bin")
        if rank % 3 == 0:
            data, fname = gzip.compress(data), fname + ".gz"
        if rank == 0:
            fname = "nccl_trace_rank_0.pkl.gz"
        write(os.path.join(out, name, "dumps", fname), data)


def broken_case(out):
    """The job archive plus a truncated dump and a hostile one."""
    job_case(out, name="broken")
    dumps = os.path.join(out, "broken", "dumps")
    first_json = sorted(n for n in os.listdir(dumps) if n.endswith(".json"))[0]
    with open(os.path.join(dumps, first_json), "rb") as f:
        whole = f.read()
    os.remove(os.path.join(dumps, first_json))  # its rank's dump is the broken one
    write(os.path.join(out, "broken", "dumps", "cut-short.json"), whole[: len(whole) // 2])
    hostile_case(os.path.join(out, "broken"))


CASES = {
    "versions": lambda out: [
        versions_case(out, v, f, p)
        for v, f, p in [((2, 0), "pickle", 2), ((2, 3), "pickle", 2), ((2, 3), "json", 2),
                        ((2, 4), "pickle", 2), ((2, 7), "pickle", 2), ((2, 10), "pickle", 2),
                        ((2, 10), "json", 2), ((2, 10), "pickle", 0), ((2, 10), "pickle", 1),
                        ((2, 10), "pickle", 4), ((2, 10), "pickle", 5)]],
    "p2p": p2p_case,
    "filename": filename_case,
    "scale1024": scale_case,
    "hostile": hostile_case,
    "job": job_case,
    "broken": broken_case,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--only", choices=sorted(CASES), action="append",
                    help="write only these scenarios (repeatable)")
    args = ap.parse_args()
    if os.path.exists(os.path.join(args.outdir, "DONE")):
        shutil.rmtree(args.outdir)  # an earlier run's output: start clean
    for name, fn in CASES.items():
        if args.only is None or name in args.only:
            fn(args.outdir)
    with open(os.path.join(args.outdir, "DONE"), "w") as f:
        f.write("ok\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
