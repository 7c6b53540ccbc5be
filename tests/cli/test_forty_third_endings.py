"""Endings of the forty-third endings audit (tests/cli/endings, e43-*.log:
multi-node jobs that failed at or around launch, issue #18) and the
mechanism the audit added:

- Ray's GCS client (gcs_rpc_client.h, GcsRpcClient's constructor) logs
  'Failed to connect to GCS at address <host>:<port> within <N> seconds.'
  when the channel to the head's GCS is not up within
  gcs_rpc_server_connect_timeout_s (at ERROR in some releases, WARNING in
  others), and goes on reconnecting. A worker node started before its head
  prints it and then joins, so it is a failure only where the log ends in
  it (the fallback rule's signal ray_gcs_connect_failed_ending, field
  `ending`); where "Ray runtime started." follows, the worker joined.
- A launcher's summary of a worker's exit (role:summary: DeepSpeed's
  launch.py "exits with return code = N", torchrun's ChildFailedError)
  explains a lost rendezvous store (the edge torch-child-failed ->
  rendezvous-connection-error: the agents of the other nodes lose the store
  when node 0's worker failed). With no time on the lines, a store error the
  same file shows above the summary is the worker's own error, printed
  before the exit the summary reports: the summary no longer explains it
  (correlate/graph.cc SummaryAfterItsLine), and the store error leads.

The audit's endings carry the initiating host and rank their thread shows
(index.json fields `host` and `rank`); test_ending_host_and_rank checks
faultline names them.
"""
import json
import pathlib
import subprocess

import pytest

from conftest import ending_tests, leading_incident

FALLBACK = "unrecognised-fatal-error"
ENDINGS = pathlib.Path(__file__).resolve().parent / "endings"

FAILURES = {
    # A worker node's `ray start --address` pointed at a head that is not
    # there: the Docker container's log ends in the GCS client's error.
    "ray-worker-gcs-error-ends-log": ("""\
$ docker logs ray-worker-3
Local node IP: 10.0.3.21
[2025-03-02 11:20:14,102 E 4411 4411] gcs_rpc_client.h:179: Failed to connect to GCS at address 10.0.3.17:6379 within 5 seconds.
""", "Failed to connect to GCS at address 10.0.3.17:6379 within 5 seconds"),
    # Releases that log it at WARNING, with the empty head address of an
    # unset variable, then the cluster-ID lookup that timed out after it.
    "ray-worker-gcs-warning-then-cluster-id-timeout": ("""\
+ ray start --address=:6379 --num-gpus 8 --block
Local node IP: 127.0.0.1
[2025-02-11 08:01:55,300 W 72 72] gcs_rpc_client.h:151: Failed to connect to GCS at address :6379 within 5 seconds.
[2025-02-11 08:02:25,302 W 72 72] gcs_client.cc:183: Failed to get cluster ID from GCS server: TimedOut: Timed out while waiting for GCS to become available.
""", "Failed to connect to GCS at address :6379 within 5 seconds"),
}

HEALTHY = {
    # The worker started before its head: the client reconnected and the
    # node joined.
    "ray-worker-gcs-warning-then-started": """\
+ ray start --address=head-0:6379 --block
Local node IP: 10.0.3.22
[2025-02-11 08:01:55,300 W 72 72] gcs_rpc_client.h:151: Failed to connect to GCS at address head-0:6379 within 5 seconds.
2025-02-11 08:02:03,910\tSUCC scripts.py:1168 -- --------------------
2025-02-11 08:02:03,910\tSUCC scripts.py:1169 -- Ray runtime started.
2025-02-11 08:02:03,910\tSUCC scripts.py:1170 -- --------------------
2025-02-11 08:02:03,911\tINFO scripts.py:1172 -- To terminate the Ray runtime, run
2025-02-11 08:02:03,911\tINFO scripts.py:1173 --   ray stop
""",
    # A driver that reached its cluster after one slow connect and trained.
    "ray-driver-gcs-warning-then-training": """\
[2025-02-11 08:01:55,300 E 9 9] gcs_rpc_client.h:179: Failed to connect to GCS at address 10.0.3.17:6379 within 5 seconds.
2025-02-11 08:02:04,010\tINFO worker.py:1786 -- Connected to Ray cluster.
(TrainWorker pid=311) step 10 loss 2.913
(TrainWorker pid=311) step 20 loss 2.701
(TrainWorker pid=311) step 30 loss 2.588
""",
}


FAILURES_STORE = {
    # DeepSpeed's pdsh launcher: the worker on one node could not reach the
    # store on the master, then launch.py reports its exit.
    "deepspeed-pdsh-store-unreachable-then-exit": ("""\
worker-1:     return TCPStore(
worker-1: torch.distributed.DistNetworkError: The client socket has failed to connect to any network address of (10.1.0.4, 29500). The client socket has failed to connect to 10.1.0.4:29500 (errno: 110 - Connection timed out).
worker-1: [2025-05-06 10:01:02,117] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 7311
worker-1: [2025-05-06 10:01:02,118] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python3', '-u', 'pretrain.py', '--local_rank=0'] exits with return code = 1
pdsh@node-0: worker-1: ssh exited with exit code 1
""", "The client socket has failed to connect to any network address of (10.1.0.4, 29500)"),
}

# The exit reported first, another node's agent losing the store seven
# seconds after it: the exit explains the lost store (main's behaviour, kept).
SUMMARY_FIRST = """\
worker-1: [2025-05-06 10:01:02,118] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python3', '-u', 'pretrain.py', '--local_rank=0'] exits with return code = 1
worker-2: [2025-05-06 10:01:09,402] [ERROR] [api.py:951] torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details.
"""


@pytest.mark.parametrize("name", sorted(FAILURES_STORE))
def test_store_error_above_the_summary_leads(faultline_bin, validate, tmp_path, name):
    text, initiating = FAILURES_STORE[name]
    inc = leading_incident(faultline_bin, validate, tmp_path, text, rule="rendezvous-connection-error")
    assert any(initiating in e["text"] for e in inc["initiating"]["evidence"]), inc["initiating"]["evidence"]


def test_summary_above_the_store_error_still_leads(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, SUMMARY_FIRST, rule="torch-child-failed")


test_failed_ending_leads, test_healthy_ending_has_no_incident = ending_tests(FAILURES, HEALTHY, FALLBACK)


def _labelled():
    index = json.loads((ENDINGS / "index.json").read_text())
    for name, case in sorted(index.items()):
        if name.startswith("e43-") and ("host" in case or "rank" in case):
            marks = [pytest.mark.xfail(strict=True, reason=case["gap"])] if case.get("gap") else []
            yield pytest.param(name, case.get("host"), case.get("rank"), marks=marks, id=name)


@pytest.mark.parametrize("name,host,rank", list(_labelled()))
def test_ending_host_and_rank(faultline_bin, name, host, rank):
    p = subprocess.run([faultline_bin, "diagnose", "--json", str(ENDINGS / f"{name}.log")],
                       capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    incidents = json.loads(p.stdout).get("incidents") or []
    assert incidents, "no incident"
    ini = incidents[0]["initiating"]
    if host is not None:
        assert (ini.get("host") or "").split(".", 1)[0].lower() == host.lower(), ini.get("host")
    if rank is not None:
        assert ini.get("rank") == rank, ini.get("rank")
