"""Endings of the forty-fifth endings audit (tests/cli/endings, e45-*.log:
GPU jobs run by Kubernetes batch systems, KubeRay, Kueue, Volcano, issue
#18) and the mechanism the audit added:

- KubeRay's verdict on a RayJob whose submitter Kubernetes Job failed
  (ray-operator rayjob_controller.go, KubeRay 1.1 and later): the RayJob's
  status.message 'Job submission has failed. Reason: <the Job's condition
  reason>. Message: <its message>', kubectl -o yaml folding it at a space
  (signal kuberay_job_submission_failed, an initiating line of the
  fallback rule).
- A RayJob's terminal status, one field a line (jobDeploymentStatus
  'Failed' or 'ValidationFailed', jobStatus 'FAILED'), or the row kubectl
  get rayjob prints from the CRD's printer columns (JOB STATUS, DEPLOYMENT
  STATUS, RAY CLUSTER NAME, START TIME, END TIME, AGE)
  (kuberay_rayjob_status_failed, a symptom). 'Running', 'Complete',
  'SUCCEEDED' and 'STOPPED' are not failures.
"""
from conftest import ending_tests

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # A RayJob's status as kubectl -o yaml prints it, the submitter Job
    # failed by its pod failure policy; yaml folds the long message.
    "rayjob-status-yaml-pod-failure-policy": ("""\
$ kubectl get rayjob llm-sft -o yaml | yq .status
endTime: "2025-09-14T03:02:11Z"
failed: 1
jobDeploymentStatus: Failed
jobId: llm-sft-8kq2w
message: 'Job submission has failed. Reason: PodFailurePolicy. Message: Container
  ray-job-submitter for pod ml/llm-sft-8kq2w-5xk7d failed with exit code 1 matching
  FailJob rule at index 0'
reason: SubmissionFailed
""", "Job submission has failed. Reason: PodFailurePolicy"),
    # The same status as -o json prints it.
    "rayjob-status-json-backoff": ("""\
  "status": {
    "failed": 3,
    "jobDeploymentStatus": "Failed",
    "jobStatus": "PENDING",
    "message": "Job submission has failed. Reason: BackoffLimitExceeded. Message: Job has reached the specified backoff limit",
    "reason": "SubmissionFailed"
  }
""", "Job submission has failed. Reason: BackoffLimitExceeded"),
    # kubectl get rayjob: the Ray job itself failed, the row ends the log.
    "get-rayjob-row-failed": ("""\
$ kubectl get rayjobs -n ml
NAME        JOB STATUS   DEPLOYMENT STATUS   RAY CLUSTER NAME             START TIME             END TIME               AGE
pretrain    FAILED       Failed              pretrain-raycluster-zt8mc    2025-10-01T02:00:14Z   2025-10-01T05:47:51Z   4h
""", "pretrain    FAILED       Failed"),
    # A RayJob whose spec was rejected: only the deployment status.
    "rayjob-status-validation-failed": ("""\
status:
  jobDeploymentStatus: ValidationFailed
  reason: ValidationFailed
""", "jobDeploymentStatus: ValidationFailed"),
}

HEALTHY = {
    # A RayJob that finished: the Ray job SUCCEEDED, the deployment Complete.
    "get-rayjob-row-succeeded": """\
$ kubectl get rayjobs -n ml
NAME        JOB STATUS   DEPLOYMENT STATUS   RAY CLUSTER NAME             START TIME             END TIME               AGE
pretrain    RUNNING      Running             pretrain-raycluster-zt8mc    2025-10-01T02:00:14Z                          3h
pretrain    SUCCEEDED    Complete            pretrain-raycluster-zt8mc    2025-10-01T02:00:14Z   2025-10-01T05:47:51Z   4h
""",
    # A RayJob's status while it runs: submitted, nothing failed.
    "rayjob-status-yaml-running": """\
status:
  jobDeploymentStatus: Running
  jobId: llm-sft-8kq2w
  jobStatus: RUNNING
  message: Job is currently running
  rayClusterName: llm-sft-raycluster-x2v9d
""",
    # A user stopped the Ray job: STOPPED is no failure.
    "rayjob-status-yaml-stopped": """\
status:
  jobDeploymentStatus: Complete
  jobStatus: STOPPED
""",
}


test_failed_ending_leads, test_healthy_ending_has_no_incident = ending_tests(FAILURES, HEALTHY, FALLBACK)
