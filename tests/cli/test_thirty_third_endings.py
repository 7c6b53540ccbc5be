"""Endings the thirty-third endings audit (tests/cli/endings, e33-*.log, a
random sample of cluster-side and HPC failed endings: Slurm and pyxis, MPI
launchers, RDMA transports, container runtimes, Kubernetes operators) gave
no incident, read where the program that printed them writes them (issue
#18):

- srun when its step's tasks could not be started (Slurm's
  src/api/step_launch.c, src/srun/launch.c): 'task N launch failed: <error>',
  'Task launch for <step> failed on node <node>: <error>', 'Application launch
  failed: <error>'; srun aborts the step and exits non-zero.
- Open MPI's [normal-termination-but] block ('... job  terminated normally,
  but N process returned' / 'a non-zero exit code. Per user-direction, the job
  has been aborted.') where the log ends in it, the details never printed:
  field `ending`, and `cut` so the detail line leads where it follows.
- Open MPI's TCP transport's [peer hung up] help text ('An MPI communication
  peer process has unexpectedly disconnected.').
- MPICH hydra's (and Intel MPI's) error trace, HYDU_error_printf's
  '[mpiexec@<host>] <function> (<file>:<line>): <message>'.
- MPICH2's MPD mpiexec: 'exit status of rank R: killed by signal S' /
  'return code C' under 'caused collective abort of all ranks'.
- zap's console encoding of a controller's ERROR record
  ('<time>\\tERROR\\t<message>\\t{...}', controller-runtime operators) where
  the log ends in it (field `ending`).
- dash's report of a command it could not run ('<script>: <line>: <cmd>: not
  found', 'exec: <cmd>: not found'; exit 127) where the log ends in it
  (field `ending`).
- UCX's fatal error (ucs_fatal_error_message: '[host:pid:thread:tid]
  <file>:<line> <message>', no level word, then the backtrace and abort()).
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # A required SPANK plugin failed on the node: srun's per-task report.
    "srun-task-launch-failed": ("""\
srun: job 4417 queued and waiting for resources
srun: job 4417 has been allocated resources
srun: error: task 3 launch failed: Plugin initialization failed
""", "task 3 launch failed"),
    # The launch RPC to the nodes failed (the step named the 20.11+ way).
    "srun-task-launch-for-step-failed": ("""\
pyxis: imported docker image: nvcr.io#nvidia/pytorch:24.01-py3
srun: error: Task launch for StepId=5120.0 failed on node gpu-b-07: Communication connection failure
srun: error: Application launch failed: Communication connection failure
srun: Job step aborted
""", "Task launch for StepId=5120.0 failed on node gpu-b-07"),
    # Open MPI's abort block, and nothing after it: mpirun never printed
    # which process, the run hung.
    "mpirun-abort-block-alone": ("""\
epoch 3 step 1200 loss 2.113
-------------------------------------------------------
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
-------------------------------------------------------
""", "a non-zero exit code. Per user-direction"),
    # The TCP transport's peer-hung-up help text.
    "ompi-tcp-peer-hung-up": ("""\
[1,3]<stdout>:step 880 loss 0.731
--------------------------------------------------------------------------
An MPI communication peer process has unexpectedly disconnected.  This
usually indicates a failure in the peer process (e.g., a crash or
otherwise exiting without calling MPI_FINALIZE first).

  Local host: node-a12
  Local PID:  30411
  Peer host:  node-a15
--------------------------------------------------------------------------
""", "unexpectedly disconnected"),
    # hydra's error trace when the proxies could not be started.
    "hydra-error-trace": ("""\
[mpiexec@login01] HYD_sock_connect (utils/sock/sock.c:145): unable to connect from "login01" to "gpu12" (No route to host)
[mpiexec@login01] HYD_bstrap_setup (lib/tools/bootstrap/src/bsci_launch.c:17): launcher returned error
[mpiexec@login01] main (mpiexec/mpiexec.c:360): error setting up the bootstrap proxies
""", "unable to connect from"),
    # MPD's report of a rank a signal ended.
    "mpd-exit-status-signal": ("""\
rank 3 in job 7  head_50021   caused collective abort of all ranks
  exit status of rank 3: killed by signal 9 
""", "exit status of rank 3: killed by signal 9"),
    # A JobSet controller's last record, in zap's console encoding.
    "zap-console-error-ending": ("""\
2025-03-02T08:14:55Z\tINFO\tReconciling JobSet\t{"controller": "jobset", "JobSet": {"name":"llm-pretrain","namespace":"team-a"}}
2025-03-02T08:14:55Z\tERROR\tcreating jobs\t{"controller": "jobset", "error": "admission webhook denied the request"}
""", "creating jobs"),
    # A container's entrypoint under dash, its launcher missing.
    "dash-not-found-ending": ("""\
+ export NCCL_DEBUG=WARN
/workspace/entrypoint.sh: 12: deepspeed: not found
""", "deepspeed: not found"),
    # An RDMA completion error no endpoint handled: UCX's fatal record,
    # its backtrace cut.
    "ucx-fatal-error-message": ("""\
[gpu-n3:81920:0:81920] ib_mlx5_log.c:177  Remote access on mlx5_2:1/IB (synd 0x13 vend 0x88 hw_synd 0/0)
[gpu-n3:81920:0:81920] ib_mlx5_log.c:177  RC QP 0x1a2 wqe[7]: RDMA_READ s-- [rva 0x7f1 rkey 0x2d] [va 0x7f2 len 4096 lkey 0x1e]
==== backtrace (tid:  81920) ====
 0 0x0000000000025183 uct_ib_mlx5_completion_with_err()  ???:0
""", "Remote access on mlx5_2:1/IB"),
}

HEALTHY = {
    # A step that launched and ran: srun printed nothing of the launch.
    "srun-ran": """\
srun: job 4418 queued and waiting for resources
srun: job 4418 has been allocated resources
epoch 1 step 100 loss 3.02
""",
    # hydra's debug output (-verbose): the prefix without function and file.
    "hydra-verbose": """\
[proxy:0@node1] Sending upstream hdr.cmd = CMD_EXIT_STATUS
[mpiexec@node1] Exit codes: [node1] 0,0
""",
    # MPD's status of a rank that returned 0.
    "mpd-return-code-zero": """\
  exit status of rank 0: return code 0 
""",
    # A controller's ERROR record it retried past: the log goes on.
    "zap-console-error-retried": """\
2025-03-02T08:14:55Z\tERROR\tReconciler error\t{"controller": "jobset", "error": "the object has been modified"}
2025-03-02T08:14:56Z\tINFO\tReconciling JobSet\t{"controller": "jobset"}
2025-03-02T08:14:56Z\tINFO\tsuccessfully created job\t{"controller": "jobset"}
""",
    # A probe the script survives: the run goes on after dash's report.
    "dash-not-found-then-ran": """\
/workspace/entrypoint.sh: 5: nvidia-smi: not found
epoch 1 step 100 loss 3.02
epoch 1 step 200 loss 2.87
""",
    # UCX's ordinary ERROR records (time stamp, level word): the run goes on.
    "ucx-error-records-then-ran": """\
[1700000000.100000] [gpu-n3:81920:0]          ib_log.c:246  UCX  ERROR mlx5_0: ibv_create_cq() failed: Cannot allocate memory
[1700000000.100300] [gpu-n3:81920:0]     ucp_context.c:1014 UCX  WARN  transport 'ib' is not available
# Size       Avg Latency(us)
1                       0.23
""",
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_failed_ending_leads(faultline_bin, validate, tmp_path, name):
    text, initiating = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=initiating)


def test_mpirun_abort_block_yields_to_its_detail(faultline_bin, validate, tmp_path):
    """Where the detail line follows the block (a poster removed the dashed
    rules), the detail leads, not the block (field `cut`)."""
    text = """\
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
mpirun noticed that process rank 2 with PID 8812 on node n7 exited on signal 9 (Killed).
"""
    leading_incident(faultline_bin, validate, tmp_path, text, line="exited on signal 9")


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_healthy_ending_has_no_incident(faultline_bin, validate, tmp_path, name):
    assert not diagnose_text(faultline_bin, validate, tmp_path, HEALTHY[name])
