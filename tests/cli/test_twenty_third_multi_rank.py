"""Which rank and host failed, as multi-rank launchers and libraries print
it, from the work part of the twenty-third real-log batch:

- A line that names its rank but no host (mpirun --tag-output's
  '[1,3]<stderr>:' stream) is on the host the log gives that rank
  elsewhere. Open MPI's errmgr reports a process that died of a signal as
  '<launcher> noticed that process rank N with PID P on node H exited on
  signal S (NAME).': rank N lives on H.
- MPICH's (and Intel MPI's) hydra mpiexec reports a process that exited
  non-zero in a block (ui/mpich/mpiexec.c): 'BAD TERMINATION OF ONE OF
  YOUR APPLICATION PROCESSES', '   PID %d RUNNING AT %s' with the node's
  hostname (a hostfile's user@host: the host after the '@') and
  'EXIT CODE: %d'. The block heads the report and names the host.
- NCCL's proxy service thread (proxy.cc) logs '[Service thread] Accept
  failed %s' after ncclSocketAccept failed through its own NCCLCHECK links
  and then goes on polling; '[Proxy Service %d] Failed to execute
  operation Close ...' is a rank closing its connection as its
  communicator is destroyed. Neither is a failure: a run whose processes
  passed their work and print them at exit has no incident.
- A collective timeout is reported by every rank in the collective once
  its own timeout runs out (ProcessGroupNCCL's watchdog): a rank that
  reports it a minute or more before any other entered the collective
  first and was left waiting, and is the one named; ranks that report it
  within the minute are one event and name none.
- Horovod's stall inspector (stall_inspector.cc) lists under 'Stalled
  ranks:' one line per rank that has not submitted the tensors the others
  did, '<rank>[!]: [<tensor>, ...]': that rank is out of step, whichever
  rank's stream prints the report. Horovod up to 0.13 named the ranks
  that did submit a stalled tensor ('[ready ranks: 4, 0, 5, 1, 3]'):
  ranks are numbered from 0, so one below the highest known that no line
  counts ready never submitted it.
"""
from conftest import diagnose_text, first_incident, initiating_texts


def tag_output_oom(rank, node):
    tag = f"[1,{rank}]<stderr>:"
    return (
        f"[1,0]<stdout>:Epoch 1/1\n"
        f"{tag}2024-03-02 09:14:07.102233: E tensorflow/stream_executor/cuda/cuda_driver.cc:828] "
        "failed to allocate 3.10G (3328599040 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n"
        f"{tag}2024-03-02 09:14:07.103011: E tensorflow/stream_executor/cuda/cuda_driver.cc:828] "
        "failed to allocate 2.79G (2995739136 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n"
        f"{tag}[{node}:04417] *** End of error message ***\n"
        "--------------------------------------------------------------------------\n"
        "Primary job  terminated normally, but 1 process returned\n"
        "a non-zero exit code. Per user-direction, the job has been aborted.\n"
        "--------------------------------------------------------------------------\n"
        f"mpirun noticed that process rank {rank} with PID 0 on node {node} exited on signal 6 (Aborted).\n"
        "--------------------------------------------------------------------------\n")


def test_a_rank_only_line_is_on_the_host_mpirun_names_for_that_rank(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, tag_output_oom(3, "gpu-node-7"))
    assert inc["rule"] == "cuda-oom", inc["explanation"]
    assert inc["initiating"]["rank"] == 3
    assert inc["initiating"]["host"] == "gpu-node-7"


def hydra_block(running_at, code):
    return (
        "rank 2: step 140 loss 2.913\n"
        "\n"
        "===================================================================================\n"
        "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
        f"=   PID 433969 RUNNING AT {running_at}\n"
        f"=   EXIT CODE: {code}\n"
        "=   CLEANING UP REMAINING PROCESSES\n"
        "=   YOU CAN IGNORE THE BELOW CLEANUP MESSAGES\n"
        "===================================================================================\n")


def test_hydra_bad_termination_heads_the_report_and_names_the_host(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, hydra_block("c1u12n01", 139))
    assert inc["rule"] == "unrecognised-fatal-error", inc["explanation"]
    texts = initiating_texts(inc)
    assert texts[0] == "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES", texts
    assert any("EXIT CODE: 139" in t for t in texts), texts
    assert inc["initiating"]["host"] == "c1u12n01"


def test_hydra_user_at_host_names_the_host(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, hydra_block("ubuntu@orin-03", 134))
    assert inc["initiating"]["host"] == "orin-03"


PASSED = "".join(f"[testing] Running with BF16, with top-k (async={a}, previous=False) ... passed\n"
                 for a in ("False", "True"))

PROXY_EXIT = """\
gpu-a17:5120:5431 [0] proxy.cc:1458 NCCL WARN [Service thread] Accept failed Resource temporarily unavailable
gpu-a17:5120:5431 [0] NCCL INFO misc/socket.cc:826 -> 3

gpu-a17:5120:5431 [0] proxy.cc:1497 NCCL WARN [Service thread] Could not receive type from localRank 0, res=3, closed=0

gpu-a17:5120:5431 [0] proxy.cc:1521 NCCL WARN [Proxy Service 0] Failed to execute operation Close from rank 0, retcode 3
gpu-a17:5124:5452 [4] NCCL INFO misc/socket.cc:47 -> 3
gpu-a17:5124:5452 [4] NCCL INFO misc/socket.cc:550 -> 3
"""


def test_proxy_service_warnings_at_exit_are_no_failure(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, PASSED + PROXY_EXIT)
    assert not [i for i in found if not i["reference"].startswith("Benign")], \
        [(i["rule"], initiating_texts(i)) for i in found]


def test_a_proxy_operation_that_sets_up_a_connection_still_fails(faultline_bin, validate, tmp_path):
    text = PROXY_EXIT.replace("operation Close", "operation Connect")
    inc = first_incident(faultline_bin, validate, tmp_path, PASSED + text)
    assert inc["rule"] == "unrecognised-fatal-error", inc["explanation"]
    assert any("Failed to execute operation Connect" in t for t in initiating_texts(inc))


def watchdog(rank, stamp, seq=4411):
    return (f"[rank{rank}]:[E311 {stamp}.204417093 ProcessGroupNCCL.cpp:632] [Rank {rank}] Watchdog caught "
            f"collective operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=8388608, "
            f"NumelOut=8388608, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.\n")


def test_the_rank_that_timed_out_minutes_before_the_others_is_named(faultline_bin, validate, tmp_path):
    text = (watchdog(2, "04:31:07") + watchdog(0, "04:38:52") + watchdog(1, "04:38:52") +
            watchdog(3, "04:38:53"))
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["rule"] == "nccl-watchdog-timeout", inc["explanation"]
    assert inc["initiating"]["rank"] == 2, inc["explanation"]


def test_ranks_that_time_out_together_name_no_rank(faultline_bin, validate, tmp_path):
    text = (watchdog(2, "04:38:51") + watchdog(0, "04:38:52") + watchdog(1, "04:38:52") +
            watchdog(3, "04:38:53"))
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["rule"] == "nccl-watchdog-timeout", inc["explanation"]
    assert inc["initiating"].get("rank") is None, inc["explanation"]


HOROVOD_STALL = """\
[1,0]<stderr>:[2021-06-02 10:12:44.118207: W horovod/common/stall_inspector.cc:105] One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock.
[1,0]<stderr>:Stalled ranks:
[1,0]<stderr>:3: [HorovodAllreduce_gradients_conv1_BiasAdd_grad_BiasAddGrad_0, HorovodAllreduce_gradients_dense_MatMul_grad_MatMul_1_0]
"""


def test_horovods_stalled_ranks_list_names_the_rank_out_of_step(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, HOROVOD_STALL)
    assert inc["rule"] == "collective-desync-stuck", inc["explanation"]
    assert inc["initiating"]["rank"] == 3, inc["explanation"]


HOROVOD_READY = """\
[1,0]<stderr>:[2018-09-28 11:31:02.411872: W horovod/common/operations.cc:588] One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock.
[1,0]<stderr>:Stalled ops: HorovodBroadcast_resnet_conv1_weights_0 [ready ranks: 4, 0, 5, 1, 3], HorovodBroadcast_resnet_conv1_biases_0 [ready ranks: 4, 0, 5, 1, 3]
"""


def test_horovods_ready_ranks_leave_out_the_rank_that_never_submitted(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, HOROVOD_READY)
    assert inc["rule"] == "collective-desync-stuck", inc["explanation"]
    assert inc["initiating"]["rank"] == 2, inc["explanation"]


# A rank number far above the others (a forged or garbled report) names no
# suspect and costs nothing: the ranks not named ready are counted before
# they are listed, and a run of more than 9 digits is no rank at all.
HOROVOD_READY_HUGE = HOROVOD_READY.replace(
    "[ready ranks: 4, 0, 5, 1, 3], Horovod",
    "[ready ranks: 4, 0, 5, 1, 3, 999999999, 99999999999999999999999], Horovod")


def test_horovods_ready_ranks_far_above_the_others_name_no_rank(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, HOROVOD_READY_HUGE)
    assert inc["rule"] == "collective-desync-stuck", inc["explanation"]
    rank = inc["initiating"]["rank"]
    assert rank is None or rank < 6, inc["explanation"]
