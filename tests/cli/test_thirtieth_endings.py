"""Endings the thirtieth endings audit (tests/cli/endings, e30-*.log, a
random sample of GPU jobs' failed endings) gave no incident, read where the
program that printed them writes them (issue #18):

- paddle.distributed.launch is a launcher whose summary is often all a
  posted log shows. Since Paddle 2.3 (launch/controllers/controller.py) a
  trainer that exits non-zero makes the LAUNCH logger write one ERROR record,
  'Container failed !!!', with the container on its next line
  (job/container.py: 'Container rank R status failed cmd [...] code C log
  FILE', C the trainer's exit status, negative for a signal); before it
  (fleet/launch_utils.py, and the legacy mode) the launcher logs 'ABORT!!!
  Out of all N trainers, the trainer process with rank=[r, ...] was aborted.
  Please check its log.' and exits 1. Neither was read, so a job whose
  output ends in them got no incident.
- kubectl get pods --all-namespaces (-A) prints a NAMESPACE column before
  NAME; a row in Error or CrashLoopBackOff was read only where the pod's
  name starts the row.
- gRPC's GPR_ASSERT before 1.63 (gpr_assertion_failed: gpr_log at ERROR,
  'assertion failed: <expression>', then abort()) was not read, so the
  abort's signal report that follows led: the assertion is what failed.
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # The launcher since 2.3: the record, the container line, the log tail's banner.
    "paddle-launch-container-failed": ("""\
LAUNCH INFO 2024-03-02 08:14:55,102 Run Pod: wzlxqe, replicas 4, status ready
LAUNCH INFO 2024-03-02 08:14:55,130 Watching Pod: wzlxqe, replicas 4, status running
LAUNCH INFO 2024-03-02 08:21:07,441 Pod failed
LAUNCH ERROR 2024-03-02 08:21:07,441 Container failed !!!
Container rank 2 status failed cmd ['/usr/bin/python', '-u', 'tools/train.py', '-c', 'configs/det.yml'] code 1 log log/workerlog.2
LAUNCH INFO 2024-03-02 08:21:07,442 ------------------------- ERROR LOG DETAIL -------------------------
""", "Container failed !!!"),
    # The container line alone (a capture that kept only the last line of the record).
    "paddle-launch-container-status-signal": ("""\
LAUNCH INFO 2023-11-20 14:02:31,906 Pod failed
Container rank 0 status failed cmd ['/opt/conda/bin/python', '-u', 'train.py'] code -11 log log/workerlog.0
""", "Container rank 0 status failed"),
    # The older launcher's summary.
    "paddle-launch-utils-abort": ("""\
INFO 2020-09-14 10:33:02,518 launch_utils.py:472] Local start 8 processes. First process distributed environment info (Only For Debug):
INFO 2020-09-14 11:05:40,067 launch_utils.py:307] terminate all the procs
ERROR 2020-09-14 11:05:40,067 launch_utils.py:545] ABORT!!! Out of all 8 trainers, the trainer process with rank=[2, 5] was aborted. Please check its log.
INFO 2020-09-14 11:05:43,071 launch_utils.py:307] terminate all the procs
""", "ABORT!!! Out of all 8 trainers"),
    # kubectl get pods -A: the namespace column before the pod's name.
    "kubectl-all-namespaces-error-row": ("""\
$ kubectl get pods -A
NAMESPACE     NAME                                 READY   STATUS      RESTARTS   AGE
kube-system   coredns-5d78c9869d-7xk2p             1/1     Running     0          3d
training      bert-finetune-worker-0               0/1     Error       0          12m
training      bert-finetune-worker-1               1/1     Running     0          12m
""", "bert-finetune-worker-0"),
}

ASSERTS = {
    # gpr_log's glog-like format, then abseil's failure signal handler.
    "grpc-gpr-assert-then-sigabrt": ("""\
I0517 09:12:03.551208903   88412 ev_epoll1_linux.cc:122]    grpc epoll fd: 41
E0517 09:12:03.561872114   88412 server.cc:1512]            assertion failed: !started_
*** SIGABRT received at time=1715937123 on cpu 3 ***
PC: @     0x7f0b8d4a9a7c  (unknown)  pthread_kill
    @     0x7f0b8d455520  (unknown)  (unknown)
""", "assertion failed: !started_"),
}

HEALTHY = {
    # The launcher's words for a pod whose trainers all exited 0.
    "paddle-launch-completed": """\
LAUNCH INFO 2024-03-02 08:14:55,130 Watching Pod: wzlxqe, replicas 4, status running
LAUNCH INFO 2024-03-02 09:40:12,207 Pod completed
LAUNCH INFO 2024-03-02 09:40:12,708 Exit code 0
""",
    # An -A table whose pods run or completed.
    "kubectl-all-namespaces-healthy": """\
NAMESPACE      NAME                                            READY   STATUS      RESTARTS        AGE
gpu-operator   gpu-operator-56c9cf6799-8qbdv                   1/1     Running     2 (7m9s ago)    14m
gpu-operator   nvidia-cuda-validator-c2llz                     0/1     Completed   0               14m
kube-system    calico-node-8nm5z                               1/1     Running     2 (7m10s ago)   79m
""",
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_launcher_summary_leads(faultline_bin, validate, tmp_path, name):
    text, initiating = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=initiating)


@pytest.mark.parametrize("name", sorted(ASSERTS))
def test_grpc_assert_leads_the_abort(faultline_bin, validate, tmp_path, name):
    text, initiating = ASSERTS[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=initiating)


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_healthy_ending_has_no_incident(faultline_bin, validate, tmp_path, name):
    assert not diagnose_text(faultline_bin, validate, tmp_path, HEALTHY[name])
