"""Which rank failed first, by time across files and ranks (README.md, "How
it works"; rank.cc EarliestRankFirst). Of the ranks' own failures (a catalog
incident that ended a rank, above the hardware layers, not a peer's report,
a notice or a launcher's summary), the one whose fatal line came first by
aligned time (stamps shifted by the hosts' clock offsets) leads, whatever
its rule's confidence or the order the files were given in; the later one
is an incident of its own after it. Collective timeouts, closed sockets and
the launcher's SIGTERM on the other ranks are collateral of the first one.
Stamps within a second of each other, or a fatal line without a stamp,
leave the order as it was, and the lead's missing facts say which fact
would settle it.

The logs are per-rank files as torchrun writes them with its `[rankN]:`
line prefix under Python logging's stamps, PyTorch 2.x ProcessGroupNCCL
glog lines and NCCL INFO lines, and a terminal capture hard-wrapped at the
console's width whose short lines are padded with blanks to its edge."""
import json

from conftest import diagnose_path, initiating_texts, run

OOM = ("[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
       "capacity of 79.15 GiB of which 1.21 GiB is free. Including non-PyTorch memory, this process has "
       "77.93 GiB memory in use. Of the allocated memory 75.10 GiB is allocated by PyTorch, and 1.20 GiB is "
       "reserved by PyTorch but unallocated.")
ILLEGAL = "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered"


def rank_log(rank, host, steps, error_lines, stamped=True):
    """A rank's log: NCCL's init line naming its host, step lines stamped by
    Python logging at `steps` (HH:MM:SS,mmm), then its traceback."""
    out = [f"{host}:{2100 + rank}:{2100 + rank} [0] NCCL INFO NCCL version 2.21.5+cuda12.4"]
    for n, t in enumerate(steps):
        stamp = f"2024-05-01 {t} - INFO - " if stamped else ""
        out.append(f"{stamp}[rank{rank}] step {100 + n} loss 2.31")
    out += [f"[rank{rank}]: Traceback (most recent call last):",
            f'[rank{rank}]:   File "/workspace/train.py", line 210, in <module>',
            f"[rank{rank}]:     loss.backward()"]
    return "\n".join(out + error_lines) + "\n"


OOM_RANK0 = [OOM]
ILLEGAL_RANK1 = [ILLEGAL,
                 "[rank1]: CUDA kernel errors might be asynchronously reported at some other API call, so the "
                 "stacktrace below might be incorrect.",
                 "[rank1]: For debugging consider passing CUDA_LAUNCH_BLOCKING=1"]


def write(tmp_path, files):
    paths = []
    for name, text in files.items():
        p = tmp_path / name
        p.write_text(text)
        paths.append(p)
    return paths


def report(faultline_bin, validate, paths, *options):
    p = run(faultline_bin, "diagnose", "--json", *options, *map(str, paths), check=False)
    assert p.returncode == 0, p.stderr.decode()
    doc = json.loads(p.stdout)
    validate(doc)
    return doc["incidents"]


def two_ranks(tmp_path, oom_at, illegal_at, stamped=True):
    return write(tmp_path, {
        "rank0.log": rank_log(0, "gpu-a01", ["10:00:01,123", oom_at], OOM_RANK0, stamped),
        "rank1.log": rank_log(1, "gpu-a02", ["10:00:01,120", illegal_at], ILLEGAL_RANK1, stamped),
    })


def test_earlier_failure_of_another_rank_leads_a_more_confident_later_one(faultline_bin, validate, tmp_path):
    # Rank 1's illegal memory access at 10:00:03 came six seconds before rank
    # 0's out-of-memory error (a rule of higher confidence): rank 1 leads.
    incs = diagnose_path(faultline_bin, validate, *two_ranks(tmp_path, "10:00:09,456", "10:00:03,010"))
    lead = incs[0]
    assert lead["rule"] == "cuda-illegal-address", lead["explanation"]
    assert lead["initiating"]["rank"] == 1
    assert initiating_texts(lead)[0] == ILLEGAL
    assert "It came first by time: cuda-oom on rank 0 began 6.446 s later" in lead["explanation"]
    assert [i["rule"] for i in incs[:2]] == ["cuda-illegal-address", "cuda-oom"]


def test_file_order_does_not_decide(faultline_bin, validate, tmp_path):
    paths = two_ranks(tmp_path, "10:00:09,456", "10:00:03,010")
    incs = diagnose_path(faultline_bin, validate, *reversed(paths))
    assert incs[0]["initiating"]["rank"] == 1


def test_the_earlier_of_two_keeps_the_lead(faultline_bin, validate, tmp_path):
    # The other way round: the out-of-memory error came first and leads.
    incs = diagnose_path(faultline_bin, validate, *two_ranks(tmp_path, "10:00:03,010", "10:00:09,456"))
    assert incs[0]["rule"] == "cuda-oom"
    assert incs[0]["initiating"]["rank"] == 0
    assert not any("which failed first" in f for f in incs[0]["missing_facts"])


def test_aligned_time_decides_across_hosts(faultline_bin, validate, tmp_path):
    # gpu-a02's clock runs five seconds ahead: its 10:00:06 is 10:00:01 on
    # gpu-a01's, before rank 0's 10:00:03.
    paths = two_ranks(tmp_path, "10:00:03,456", "10:00:06,010")
    incs = report(faultline_bin, validate, paths)
    assert incs[0]["initiating"]["rank"] == 0
    incs = report(faultline_bin, validate, paths, "--clock-offset", "gpu-a02=-5")
    assert incs[0]["rule"] == "cuda-illegal-address", incs[0]["explanation"]
    assert incs[0]["initiating"]["rank"] == 1
    assert incs[0]["initiating"]["host"] == "gpu-a02"


def test_a_tie_keeps_the_order_and_says_so(faultline_bin, validate, tmp_path):
    incs = diagnose_path(faultline_bin, validate, *two_ranks(tmp_path, "10:00:03,456", "10:00:03,010"))
    lead = incs[0]
    assert lead["rule"] == "cuda-oom"  # the order of confidence, as before
    facts = [f for f in lead["missing_facts"] if f.startswith("which failed first")]
    assert facts and "rank 0 (cuda-oom) or rank 1 (cuda-illegal-address)" in facts[0], lead["missing_facts"]
    assert "stamped within 1 s of each other" in facts[0]


def test_untimed_files_keep_the_order_and_say_so(faultline_bin, validate, tmp_path):
    incs = diagnose_path(faultline_bin, validate,
                         *two_ranks(tmp_path, "10:00:09,456", "10:00:03,010", stamped=False))
    lead = incs[0]
    assert lead["rule"] == "cuda-oom"
    assert any(f.startswith("which failed first") and "without a timestamp" in f
               for f in lead["missing_facts"]), lead["missing_facts"]


WATCHDOG = ("[rank2]:[E501 10:30:03.913412345 ProcessGroupNCCL.cpp:616] [Rank 2] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, "
            "Timeout(ms)=1800000) ran for 1800020 milliseconds before timing out.")
GLOO_CLOSED = ("[rank3]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed "
               "by peer [10.0.0.12]:31337")
LAUNCHER = """\
W0501 10:00:08.000000 1234 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 4567 closing signal SIGTERM
W0501 10:00:08.000000 1234 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 4569 closing signal SIGTERM
"""


def test_other_ranks_consequences_are_collateral_of_the_first(faultline_bin, validate, tmp_path):
    # Rank 0's out-of-memory error (the more confident rule) came later than
    # rank 1's illegal access; rank 2's collective timeout, rank 3's closed
    # socket and the launcher's SIGTERMs are what the others saw of it.
    paths = two_ranks(tmp_path, "10:00:07,456", "10:00:03,010") + write(tmp_path, {
        "rank2.log": rank_log(2, "gpu-a03", ["10:00:01,125", "10:00:02,500"], [])[:-1].rsplit("\n", 3)[0]
        + "\n" + WATCHDOG + "\n",
        "rank3.log": rank_log(3, "gpu-a04", ["10:00:01,130", "10:00:05,100"], [GLOO_CLOSED]),
        "launcher.log": LAUNCHER,
    })
    incs = diagnose_path(faultline_bin, validate, *paths)
    lead = incs[0]
    assert lead["rule"] == "cuda-illegal-address", lead["explanation"]
    assert lead["initiating"]["rank"] == 1
    collateral = {c["rule"] for c in lead["collateral"]}
    assert "nccl-watchdog-timeout" in collateral, lead["collateral"]


HEARTBEAT = ("[rank3]:[E501 10:20:07.384372190 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank 3] "
             "ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring "
             "enqueued collectives. This typically indicates a NCCL/CUDA API (e.g., CudaEventDestroy) hang "
             "blocking the watchdog, and could be triggered by another thread holding the GIL inside a CUDA api "
             "(for example, CudaEventDestroy), or other deadlock-prone behaviors.If you suspect the watchdog is "
             "not actually stuck and a longer timeout would help, you can either increase the timeout "
             "(TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC) to a larger value or disable the heartbeat monitor "
             "(TORCH_NCCL_ENABLE_MONITORING=0).If either of aforementioned helps, feel free to file an issue to "
             "PyTorch about the short timeout or false positive abort; otherwise, please attempt to debug the "
             "hang.")
DUMP = ("[rank3]:[E501 10:20:07.384620373 ProcessGroupNCCL.cpp:1533] [PG ID 0 PG GUID 0(default_pg) Rank 3] "
        "ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1")


def hard_wrap(records, width):
    """A terminal capture: each record cut every `width` columns, its last
    piece padded with blanks to the console's edge."""
    out = []
    for r in records:
        pieces = [r[k:k + width] for k in range(0, len(r), width)]
        out += pieces[:-1] + [pieces[-1].ljust(width)]
    return "\n".join(out) + "\n"


def test_a_padded_hard_wrapped_capture_keeps_its_rank_prefix(faultline_bin, validate, tmp_path):
    # The message's text runs on from the `[rank3]:` line into lines of no
    # prefix; the padded last line of one record is followed by the next
    # record's prefix. Joined, the record's rank is the prefix's.
    text = hard_wrap([HEARTBEAT, DUMP], 110)
    assert "watchdog got stuck" not in text.splitlines()[0]
    incs = diagnose_path(faultline_bin, validate, *write(tmp_path, {"capture.txt": text}))
    lead = incs[0]
    assert any("watchdog got stuck for 480 seconds" in t for t in initiating_texts(lead)), initiating_texts(lead)
    assert lead["initiating"]["rank"] == 3, lead["explanation"]


def test_two_ranks_of_one_rule_within_a_second_say_so(faultline_bin, validate, tmp_path):
    # Both ranks ran out of memory in the same second: rank 1's line is
    # stamped first and leads, and which rank went first stays open.
    oom1 = OOM.replace("[rank0]", "[rank1]").replace("GPU 0 has", "GPU 1 has")
    paths = write(tmp_path, {
        "rank0.log": rank_log(0, "gpu-a01", ["10:00:01,123", "10:00:03,456"], [OOM]),
        "rank1.log": rank_log(1, "gpu-a02", ["10:00:01,120", "10:00:03,010"], [oom1]),
    })
    lead = diagnose_path(faultline_bin, validate, *paths)[0]
    assert lead["rule"] == "cuda-oom"
    assert lead["initiating"]["rank"] == 1
    assert any(f.startswith("which failed first, rank 1 or rank 0 (both cuda-oom)") and "within 1 s" in f
               for f in lead["missing_facts"]), lead["missing_facts"]


def test_two_ranks_of_one_rule_far_apart_leave_no_question(faultline_bin, validate, tmp_path):
    oom1 = OOM.replace("[rank0]", "[rank1]").replace("GPU 0 has", "GPU 1 has")
    paths = write(tmp_path, {
        "rank0.log": rank_log(0, "gpu-a01", ["10:00:01,123", "10:00:08,456"], [OOM]),
        "rank1.log": rank_log(1, "gpu-a02", ["10:00:01,120", "10:00:03,010"], [oom1]),
    })
    lead = diagnose_path(faultline_bin, validate, *reversed(paths))[0]
    assert lead["initiating"]["rank"] == 1
    assert not any(f.startswith("which failed first") for f in lead["missing_facts"]), lead["missing_facts"]
