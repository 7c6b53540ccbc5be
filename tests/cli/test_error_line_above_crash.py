"""The error line a program printed right above its crash or abort (issue
#18, initiating line right): a C or C++ program writes its error to stderr
and then calls abort(), MPI_Abort or dies of the fault, and what reports
the end -- the shell (`Segmentation fault (core dumped)`, `line N: PID
Aborted`, zsh's `[1] PID segmentation fault`), MPICH's `application called
MPI_Abort` -- names no cause. The line right above such a report, of the
same stream, that reads as an error message (an error, a failure, fatal,
cannot, unable to; no warning, no line ending in ':' that introduces the
report, no second crash report) is the evidence (signal flag
`detail_line_above`), whatever program printed it.
"""
import pytest

from conftest import leading_incident

FALLBACK = "unrecognised-fatal-error"

LEADS = {
    "zsh-segfault": ("import solver\nerr: failed to load cuda func: cuMemcpy2D_v2_ptds\n"
                     "[1]    491 segmentation fault  python\n", "failed to load cuda func"),
    "bash-abort": ("step 10 done\nsolver: cannot open mesh file 'grid.h5'\n"
                   "./run.sh: line 12:  4242 Aborted                 (core dumped) ./solver grid.h5\n",
                   "cannot open mesh file"),
    "bare-segfault": ("loading weights\nsolver: unable to allocate 4096 MB on device 0\nSegmentation fault (core dumped)\n",
                      "unable to allocate 4096 MB"),
    "mpi-abort": ("iteration 4\nCUDA call failed with error code 700 in kernel update_fields\n"
                  "Abort(1) on node 0 (rank 0 in comm 0): application called MPI_Abort(MPI_COMM_WORLD, 1) - process 0\n",
                  "CUDA call failed with error code 700"),
}


@pytest.mark.parametrize("name", sorted(LEADS))
def test_the_error_line_above_the_crash_leads(faultline_bin, validate, tmp_path, name):
    text, initiating = LEADS[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=initiating)


STAYS = {
    # A warning above it is not what failed.
    "warning-above": ("WARNING: could not find libcudnn_ops, falling back\nSegmentation fault (core dumped)\n",
                      "Segmentation fault"),
    # A line that introduces the report names no cause.
    "introduction-above": ("The program failed with the following signal:\nSegmentation fault (core dumped)\n",
                           "Segmentation fault"),
    # A progress line says nothing of a failure.
    "progress-above": ("epoch 3 step 120 loss 2.31\nSegmentation fault (core dumped)\n", "Segmentation fault"),
    # Another crash report above it: the first report leads.
    "crash-above": ("./a.sh: line 3:  11 Segmentation fault      (core dumped) ./a\n"
                    "./b.sh: line 3:  12 Segmentation fault      (core dumped) ./b\n", "./a.sh: line 3"),
}


@pytest.mark.parametrize("name", sorted(STAYS))
def test_the_report_stays_without_an_error_line_above(faultline_bin, validate, tmp_path, name):
    text, initiating = STAYS[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=initiating)
