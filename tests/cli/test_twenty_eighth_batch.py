"""A launcher report from the twenty-eighth corpus batch's work part:

- Open MPI reports a process that exited with a non-zero status in a block
  of its own ('[orterun:non-zero-exit]' in help-orterun.txt, PRRTE's
  '[prun:non-zero-exit]'): the header says that some process did, two lines
  on '  Process name: %s' names the first one and '  Exit code:    %d' its
  status. The name is ORTE's '[[<job family>,<job>],<vpid>]' (Open MPI up
  to 4.x) or PRRTE's '[prterun-<host>-<pid>@<job>,<rank>]' (Open MPI 5);
  for the launched job (job 1) the vpid is the process's rank in
  MPI_COMM_WORLD, so the report, header included, is that rank's. A job
  spawned later (job 2 on) numbers its processes in a world of its own: its
  process names no rank of the job's.
"""
from conftest import leading_incident

# nccl-tests on one node with 10 GPUs (NVIDIA/nccl#241): rank 8 exited with
# status 3 and mpirun aborted the job.
ORTE_REPORT = """\
node05-ccncluster:44741:44741 [0] NCCL INFO Launch mode Parallel
-------------------------------------------------------
Primary job  terminated normally, but 1 process returned
a non-zero exit code.. Per user-direction, the job has been aborted.
-------------------------------------------------------
--------------------------------------------------------------------------
mpirun detected that one or more processes exited with non-zero status, thus causing
the job to be terminated. The first process to do so was:

  Process name: [[11192,1],8]
  Exit code:    3
--------------------------------------------------------------------------
"""

# Open MPI 5's prterun after an MPI_Send to a rank the one-process job does
# not have (a public thread's output, as posted).
PRRTE_REPORT = """\
--------------------------------------------------------------------------
prterun detected that one or more processes exited with non-zero status,
thus causing the job to be terminated. The first process to do so was:

   Process name: [prterun-ranma-147515@1,0]
   Exit code:    6
--------------------------------------------------------------------------
"""

# A process of a job MPI_Comm_spawn started (job 2): rank 0 of its own world.
SPAWNED_REPORT = """\
mpiexec detected that one or more processes exited with non-zero status, thus causing
the job to be terminated. The first process to do so was:

   Process name: [[55509,2],0]
   Exit code:    1
"""


def test_open_mpi_names_the_rank_that_exited_first(faultline_bin, validate, tmp_path):
    inc = leading_incident(faultline_bin, validate, tmp_path, ORTE_REPORT, rule="unrecognised-fatal-error",
                           any_line="Process name: [[11192,1],8]")
    assert inc["initiating"]["rank"] == 8, inc["initiating"]
    assert any("Exit code:    3" in e["text"] for e in inc["initiating"]["evidence"]), inc["initiating"]


def test_prrte_names_the_rank_in_its_namespace(faultline_bin, validate, tmp_path):
    inc = leading_incident(faultline_bin, validate, tmp_path, PRRTE_REPORT, rule="unrecognised-fatal-error",
                           any_line="Process name: [prterun-ranma-147515@1,0]")
    assert inc["initiating"]["rank"] == 0, inc["initiating"]


def test_a_spawned_jobs_process_names_no_rank_of_the_job(faultline_bin, validate, tmp_path):
    inc = leading_incident(faultline_bin, validate, tmp_path, SPAWNED_REPORT, rule="unrecognised-fatal-error")
    assert inc["initiating"].get("rank") is None, inc["initiating"]
