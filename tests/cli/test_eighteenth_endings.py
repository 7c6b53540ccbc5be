"""Endings the eighteenth endings audit (tests/cli/endings, e18-*.log) read
as nothing or by a line that did not say what happened, read where the
program that printed them writes them (issue #18):

- exception classes whose names do not end in Error, printed after their
  module as CPython's traceback prints every class that is not a builtin:
  concurrent.futures' BrokenProcessPool (Lib/concurrent/futures/process.py)
  and Dask's KilledWorker (distributed/scheduler.py, raised to the client
  when every worker a task ran on died). A traceback's header reads that
  line, but a posted traceback often starts at its frames;
- systemctl status (src/systemctl): the state line of a unit that ended in
  failure ('Active: failed (Result: exit-code)') and the exit report of a
  process systemd could not start, whose statuses from 200 up are systemd's
  own ('status=217/USER': the command never ran, so the status is the why);
- docker events (docker/cli cli/command/system/events.go): a container's
  'die' event with a non-zero exitCode attribute.
"""
import pytest

from conftest import leading_incident

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # PacktPublishing/Python-Programming-Blueprints#16, the traceback as
    # posted from its frames on.
    "broken-process-pool-qualified-cut-traceback": ("""\
  File "/opt/twittervotes/lib/python3.7/site-packages/rx/linq/observable/fromfuture.py", line 22, in done
    value = future.result()
  File "/Library/Frameworks/Python.framework/Versions/3.7/lib/python3.7/concurrent/futures/_base.py", line 425, in result
    return self.__get_result()
  File "/Library/Frameworks/Python.framework/Versions/3.7/lib/python3.7/concurrent/futures/_base.py", line 384, in __get_result
    raise self._exception
concurrent.futures.process.BrokenProcessPool: A process in the process pool was terminated abruptly while the future was running or pending.
""", FALLBACK, "concurrent.futures.process.BrokenProcessPool: A process in the process pool"),
    # dask/distributed#7043: the client's exception line as Dask printed it
    # before the message was reworded, wrapped as posted.
    "dask-killed-worker-tuple": ("""\
distributed.scheduler.KilledWorker: ('lambda-cb8ded4d38da167aa54baad8748eeb0e', <WorkerState
'tcp://192.168.1.163:52441', status: closed, memory: 0, processing: 1>)
""", FALLBACK, "distributed.scheduler.KilledWorker: ('lambda-cb8ded4d38da167aa54baad8748eeb0e'"),
    # coiled/benchmarks#1308: pytest's short summary line.
    "dask-killed-worker-pytest-summary": ("""\
FAILED tests/tpch/test_dask.py::test_query_9 - distributed.scheduler.KilledWorker: Attempted to run task ('readparquet-bec6f578be4fe0e15801f53f9dbeb108', 5) on 4 different workers, but all those workers died while running it. The last worker that attempt to run the task was tls://10.0.32.47:45841. Inspecting worker logs is often a good next step to diagnose what went wrong. For more information see https://distributed.dask.org/en/stable/killed.html.
""", FALLBACK, "KilledWorker: Attempted to run task"),
    # utkuozdemir/nvidia_gpu_exporter#249: the unit runs as a user that does
    # not exist, so systemd's exec step fails before the exporter starts.
    "systemctl-status-exec-user": ("""\
$ sudo systemctl status nvidia_gpu_expoter.service
● nvidia_gpu_expoter.service - Nvidia GPU Exporter
     Loaded: loaded (/etc/systemd/system/nvidia_gpu_expoter.service; enabled; vendor preset: enabled)
     Active: failed (Result: exit-code) since Mon 2024-11-04 18:32:35 PST; 4min 11s ago
    Process: 3741675 ExecStart=/usr/bin/nvidia_gpu_exporter (code=exited, status=217/USER)
   Main PID: 3741675 (code=exited, status=217/USER)

Nov 04 18:32:35 u116594 systemd[1]: nvidia_gpu_expoter.service: Scheduled restart job, restart counter is at 5.
Nov 04 18:32:35 u116594 systemd[1]: Stopped Nvidia GPU Exporter.
Nov 04 18:32:35 u116594 systemd[1]: nvidia_gpu_expoter.service: Start request repeated too quickly.
Nov 04 18:32:35 u116594 systemd[1]: nvidia_gpu_expoter.service: Failed with result 'exit-code'.
Nov 04 18:32:35 u116594 systemd[1]: Failed to start Nvidia GPU Exporter.
""", FALLBACK, "status=217/USER"),
    # dusty-nv/jetson-containers#44: exit 132 is SIGILL.
    "docker-events-die-exit-code": ("""\
container die 2846517886ea47c56e93c36ddf61a57f7728ea4e93a88b2f349f140e0b280c44 (exitCode=132, image=sskorol/ws, name=bold_gagarin)
""", FALLBACK, "exitCode=132"),
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_ending_leads(faultline_bin, validate, tmp_path, name):
    text, rule, initiating = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, line=initiating)
