"""Misses from the thirty-ninth corpus batch's work part:

- slurmstepd's task/cgroup plugin reads the step's and the job's cgroup
  memory.failcnt (and memory.memsw.failcnt) when a step ends and, if it is
  not zero, says so: 'Exceeded step memory limit at some point.' (and 'job'),
  from 17.11 on '<step> hit memory limit at least once during execution.
  This may or may not result in some failure.' (task_cgroup_memory.c). The
  counter grows each time usage reaches the limit, which page cache reclaim
  alone does, so the line is a fact about the step, not a kill: jobs that
  completed print it. It was an initiating line of slurm-oom-kill-event and
  made an out-of-memory incident of healthy jobs; it is a context line now.
  A step that did die of its memory shows its own line (srun's 'task N: Out
  Of Memory', 'Detected N oom_kill event', the jobacct plugin's 'exceeded
  memory limit (X > Y), being killed', the shell's 'Killed'), which stay
  initiating.
"""
from conftest import diagnose_text, leading_incident

# A GEOS-Chem run on Harvard's Odyssey cluster that finished normally, as
# quoted in the GEOS-Chem wiki's Slurm page with the support team's answer
# ('If you are getting that message and your job is fine, I wouldn't worry').
FINISHED_WITH_FAILCNT_LINES = (
    "> real 9355.80\n"
    "> \n"
    "> user 62167.67\n"
    "> \n"
    "> sys 386.40\n"
    "> \n"
    "> slurmstepd: error: Exceeded step memory limit at some point.\n"
    "> \n"
    "> slurmstepd: error: Exceeded job memory limit at some point.\n"
)

# pepkit/geofetch#13: srun reports the task as out of memory between
# slurmstepd's failcnt lines; the OOM report is the failure's line.
FAILCNT_AROUND_SRUN_OOM = """\
Pypiper terminating spawned child process 107099...(tee)
slurmstepd: error: Exceeded job memory limit at some point.
srun: error: udc-ba26-19: task 0: Out Of Memory
srun: Terminating job step 2750598.0
slurmstepd: error: Exceeded job memory limit at some point.
"""


def test_failcnt_lines_of_a_finished_job_make_no_incident(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, FINISHED_WITH_FAILCNT_LINES)
    assert not found, found


def test_srun_out_of_memory_leads_past_the_failcnt_line(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, FAILCNT_AROUND_SRUN_OOM, rule="slurm-oom-kill-event",
                     line="srun: error: udc-ba26-19: task 0: Out Of Memory")
