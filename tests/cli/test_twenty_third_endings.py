"""Endings the twenty-third endings audit (tests/cli/endings, e23-*.log)
read as nothing, read where the program that printed them writes them
(issue #18):

- Flyte's Kubernetes plugin (flyteplugins pod_helper.go) puts a failed
  container into the task's error as '[<container>] terminated with exit
  code (N). Reason [<reason>]. Message: ...', the status in parentheses;
- programs that report a child's failure as '<what> exited with status
  code: N' (FloydHub's job status among them) print it only for a non-zero
  status;
- GNU tar's FATAL_ERROR ends with 'tar: Error is not recoverable: exiting
  now' and exit status 2;
- 'python -m <module>' with a module that cannot be found exits 1 with
  runpy's '<python>: Error while finding module specification for ...';
- the ClearML SDK logs '### TASK STOPPED - USER ABORTED - <REASON> ###'
  and kills the process tree it runs in.
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # flyteorg/flyte#2980: the task's error as flytectl shows it, the
    # container killed with 137 and no message from Kubernetes.
    "flyte-terminated-exit-code-in-parentheses": ("""\
[1/1] currentAttempt done. Last Error: USER::Pod failed. No message received from kubernetes.
[fb5562eecbc2f40f9b0d-n0-0] terminated with exit code (137). Reason [Error]. Message: 

.
""", None, "terminated with exit code (137)", None),
    # floydhub/floyd-docs#74: the job's only line.
    "floydhub-exited-with-status-code": ("""\
Job exited with status code: 2
""", None, "exited with status code: 2", None),
    # Netflix/metaflow#1389: a Batch task's entrypoint, its code package
    # never downloaded, as CloudWatch shows it. tar's fatal line leads with
    # the error it printed right above it (FATAL_ERROR's own message) as its
    # evidence (detail_line_above, tests/cli/test_endings_gaps_4.py).
    "tar-not-recoverable-then-runpy": ("""\
  | 2023-05-03T13:58:24.321-07:00 | bash: line 1: [: -gt: unary operator expected
  | 2023-05-03T13:58:24.322-07:00 | tar: job.tar: Cannot open: No such file or directory
  | 2023-05-03T13:58:24.323-07:00 | tar: Error is not recoverable: exiting now
  | 2023-05-03T13:58:24.336-07:00 | /usr/local/bin/python: Error while finding module specification for 'metaflow.mflog.save_logs' (ModuleNotFoundError
""", FALLBACK, "tar: job.tar: Cannot open", None),
    # The runpy line alone ends a job as well, here cut before the
    # exception's message that would otherwise name it.
    "runpy-module-spec-alone": ("""\
  | 2023-05-03T13:58:24.336-07:00 | /usr/local/bin/python: Error while finding module specification for 'metaflow.mflog.save_logs' (ModuleNotFoundError
""", FALLBACK, "Error while finding module specification", None),
    # clearml/clearml#406: SLURM jobs of a task the main script closed.
    "clearml-task-stopped-user-aborted": ("""\
- clearml.Task - WARNING - ### TASK STOPPED - USER ABORTED - STATUS CHANGED ###
""", FALLBACK, "TASK STOPPED - USER ABORTED", None),
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_ending_leads(faultline_bin, validate, tmp_path, name):
    text, rule, initiating, any_line = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, line=initiating, any_line=any_line)


@pytest.mark.parametrize("text", [
    # flyteplugins' wording for a container that exited 0.
    "[primary] terminated with ExitCode 0.\n",
    # tar's end of a run where only some members failed goes on to its
    # exit status; it is no fatal line of its own.
    "tar: Exiting with failure status due to previous errors\n",
    "Server exited with status code: 0\n",
])
def test_quiet(faultline_bin, validate, tmp_path, text):
    incidents = diagnose_text(faultline_bin, validate, tmp_path, text)
    assert not [i for i in incidents if not i["reference"].startswith("Benign")], \
        [i["reference"] for i in incidents]
