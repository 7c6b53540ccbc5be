"""Calls of the correlator that named a collateral line or a requested stop
as the failure, read from the programs that print them (issue #18):

- Horovod's SHUT_DOWN_ERROR (horovod/common/common.h: "Horovod has been
  shut down. This was caused by an exception on one of the ranks ...",
  "This has been caused by an exception on one of the rank" before #350)
  fails every collective once a rank's exception or early exit stopped the
  background loop; the wrappers raise it as the rank's own exception. Its
  text says another rank's failure caused it: it is a summary
  (role:summary), and mpirun's report of the first process to exit names
  the rank that went first, since that status is another rank's.
- docker events logs `docker stop` as a kill event with the signal sent
  (moby daemon/kill.go, attribute `signal`) and then the die event with
  the exit status (daemon/monitor.go, `exitCode`): a die whose status is
  128 plus the signal an earlier kill event of the same container sent is
  that requested stop, not a failure.
- A W&B sweep agent's "Run <id> errored: <repr(exc)>" (wandb/agents/
  pyagent.py up to 0.16.2, logger.error and termerror) reports the run's
  own exception: that exception is the failure, and its "wandb: ERROR"
  copy is no W&B failure.
- LSF's TERM_THREADLIMIT, TERM_PROCESSLIMIT and TERM_CPULIMIT above the
  SIGTERM's exit status 143 are a kill at a limit: their own rule leads
  (lsf-limit-kill), not a missing SIGTERM handler.
- glibc's strsignal word "Aborted" is also a state's name in YAML and
  Kubernetes objects (a Volcano job's `phase: Aborted`): as a field's
  value it is no crash report.
"""
from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"

# https://github.com/horovod/horovod/issues/3412, as posted (its end).
HOROVOD_SHUT_DOWN_TF = """\
[1,0]<stderr>:    File "/usr/local/lib/python3.8/dist-packages/horovod/tensorflow/mpi_ops.py", line 123, in _allreduce
[1,0]<stderr>:      return MPI_LIB.horovod_allreduce(tensor, name=name, reduce_op=op,
[1,0]<stderr>:    File "<string>", line 107, in horovod_allreduce
[1,0]<stderr>:Node: 'DistributedAdam_Allreduce/cond/HorovodAllreduce_grads_0'
[1,0]<stderr>:Horovod has been shut down. This was caused by an exception on one of the ranks or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished execution. If the shutdown was caused by an exception, you should see the exception in the log before the first shutdown message.
[1,0]<stderr>:\t [[{{node DistributedAdam_Allreduce/cond/HorovodAllreduce_grads_0}}]] [Op:__inference_train_function_3470]
-------------------------------------------------------
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
-------------------------------------------------------
"""

# https://github.com/ChenRocks/UNITER/issues/31 (tests/cli/hosts): rank 1's
# shutdown error, then mpirun names [[50371,1],0] the first to exit.
HOROVOD_SHUT_DOWN_TORCH = """\
[1,1]<stderr>:  File "/opt/conda/lib/python3.6/site-packages/horovod/torch/mpi_ops.py", line 436, in synchronize
[1,1]<stderr>:    mpi_lib.horovod_torch_wait_and_clear(handle)
[1,1]<stderr>:RuntimeError: Horovod has been shut down. This was caused by an exception on one of the ranks or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished execution. If the shutdown was caused by an exception, you should see the exception in the log before the first shutdown message.
--------------------------------------------------------------------------
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
--------------------------------------------------------------------------
--------------------------------------------------------------------------
mpirun detected that one or more processes exited with non-zero status, thus causing
the job to be terminated. The first process to do so was:

  Process name: [[50371,1],0]
  Exit code:    1
--------------------------------------------------------------------------
"""


def test_mpirun_first_process_leads_over_horovod_shut_down(faultline_bin, validate, tmp_path):
    inc = leading_incident(faultline_bin, validate, tmp_path, HOROVOD_SHUT_DOWN_TORCH, rule=FALLBACK,
                           any_line="Process name: [[50371,1],0]")
    assert inc["initiating"]["rank"] == 0
    assert "horovod-shut-down" in [c["rule"] for c in inc["collateral"]]


def test_another_rank_exception_before_the_shut_down_leads(faultline_bin, validate, tmp_path):
    # rank 1's exception put before the posted excerpt
    text = ("[1,1]<stderr>:Traceback (most recent call last):\n"
            "[1,1]<stderr>:  File \"train.py\", line 88, in <module>\n"
            "[1,1]<stderr>:    batch = next(loader)\n"
            "[1,1]<stderr>:KeyError: 'input_ids'\n" + HOROVOD_SHUT_DOWN_TF)
    inc = leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line="KeyError: 'input_ids'")
    assert inc["initiating"]["rank"] == 1


def test_horovod_shut_down_alone_says_another_rank_failed(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, HOROVOD_SHUT_DOWN_TF, rule="horovod-shut-down",
                     line="Horovod has been shut down.")


# The event lines as docker/cli prints moby's events (no posted stream of a
# docker stop was found: type, action, ID, then the attributes sorted by key).
CONTAINER = "4f2b1c0d9e8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c"
DOCKER_STOP = f"""\
2024-05-02T10:11:12.000000000Z container kill {CONTAINER} (image=trainer:latest, name=train-1, signal=15)
2024-05-02T10:11:12.400000000Z container die {CONTAINER} (execDuration=3600, exitCode=143, image=trainer:latest, name=train-1)
2024-05-02T10:11:12.500000000Z container stop {CONTAINER} (image=trainer:latest, name=train-1)
"""


def failures(incidents):
    """The incidents that say something failed: not the stop itself
    (sigterm-received) nor the practice finding of a stop without a
    checkpoint after it, as for any requested stop."""
    return [i["rule"] for i in incidents if i["rule"] not in ("sigterm-received", "graceful-shutdown-missing")]


def test_docker_stop_is_no_failure(faultline_bin, validate, tmp_path):
    assert failures(diagnose_text(faultline_bin, validate, tmp_path, DOCKER_STOP)) == []


def test_docker_die_by_another_status_than_the_kill_is_a_failure(faultline_bin, validate, tmp_path):
    text = DOCKER_STOP.replace("exitCode=143", "exitCode=139")
    leading_incident(faultline_bin, validate, tmp_path, text, line="exitCode=139")


def test_docker_kill_of_another_container_explains_no_die(faultline_bin, validate, tmp_path):
    text = DOCKER_STOP.replace(f"kill {CONTAINER}", "kill 9a8b7c6d5e4f")
    assert failures(diagnose_text(faultline_bin, validate, tmp_path, text)) != []


# https://github.com/wandb/wandb/issues/4628 and #3401, as posted.
WANDB_RUN_ERRORED = """\
wandb: Find logs at: ./wandb/run-20221214_011259-0jbbwa4t/logs
Run 0jbbwa4t errored: IndexError('list index out of range')
wandb: ERROR Run 0jbbwa4t errored: IndexError('list index out of range')
wandb: Agent Starting Run: mu8l3q87 with config:
"""


def test_wandb_agent_run_errored_is_the_run_exception(faultline_bin, validate, tmp_path):
    inc = leading_incident(faultline_bin, validate, tmp_path, WANDB_RUN_ERRORED, rule=FALLBACK,
                           line="errored: IndexError('list index out of range')")
    assert "wandb-tracking-failure" not in [c["rule"] for c in inc["collateral"]]


def test_wandb_termerror_copy_alone_is_the_run_exception(faultline_bin, validate, tmp_path):
    text = "wandb: ERROR Run 9uvr1lj3 errored: FileNotFoundError(2, 'No such file or directory')\n"
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line="FileNotFoundError(2,")


# https://github.com/cdanielmachado/carveme/issues/34 (tests/cli/endings/
# e13-lsf-term-threadlimit-143.log), its job report's end.
LSF_THREADLIMIT = """\
TERM_THREADLIMIT: job killed after reaching LSF thread limit.
Exited with exit code 143.

Resource usage summary:

    CPU time   :      8.07 sec.
    Max Memory :      5719 MB
"""


def test_lsf_limit_kill_leads_with_its_own_rule(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, LSF_THREADLIMIT, rule="lsf-limit-kill",
                     line="TERM_THREADLIMIT")


# A Volcano job's state as kubectl get vcjob -o yaml prints it (volcano's
# JobPhase "Aborted"; no posted excerpt with a crash-free log was found).
VOLCANO_ABORTED = """\
status:
  minAvailable: 2
  state:
    lastTransitionTime: "2024-07-17T06:55:31Z"
    phase: Aborted
    reason: Aborted
"""


def test_aborted_as_a_field_value_is_no_crash(faultline_bin, validate, tmp_path):
    assert diagnose_text(faultline_bin, validate, tmp_path, VOLCANO_ABORTED) == []


def test_glibc_aborted_reports_stay_crashes(faultline_bin, validate, tmp_path):
    for ending in ("Aborted (core dumped)", "Aborted", "./run.sh: line 4: 31337 Aborted"
                   "                 (core dumped) python train.py"):
        leading_incident(faultline_bin, validate, tmp_path, "step 10: loss 2.31\n" + ending + "\n",
                         rule=FALLBACK, line="Aborted")
