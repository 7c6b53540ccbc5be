"""Endings the nineteenth endings audit (tests/cli/endings, e19-*.log) read
as nothing or by a line that did not say what happened, read where the
program that printed them writes them (issue #18):

- GitHub Actions' runner (actions/runner): a run step whose script exited
  non-zero ends with 'Process completed with exit code N.' (ScriptHandler),
  a job container that would not start with 'Docker start fail with exit
  code N' (ContainerOperationProvider), and the docker CLI's output the
  step printed, the daemon's refusal among it, is shown indented;
- Go's exec.ExitError (os.ProcessState.String): a Windows child's status of
  1<<16 or more is written in hex, 'exit status 0xc0000135', an NTSTATUS the
  decimal exit statuses did not cover;
- kubectl describe pod: the Message of a container the runtime could not
  start holds runc's own error ('starting container process caused',
  'unable to start container process'); the Exit Code under it is only its
  status;
- sacct and reportseff tables: a TIMEOUT row whose job id is redacted, or
  right-aligned as reportseff prints it;
- image builds: a RUN step that failed, in the classic builder's words
  ('returned a non-zero code: N', moby builder/dockerfile) and BuildKit's
  ('did not complete successfully: exit code: N').
"""
import pytest

from conftest import leading_incident

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # recommenders-team/recommenders#1876: the end of an AzureML test step,
    # the service's error record cut above, then the runner's verdict.
    "gha-process-completed-exit-code": ("""\
    "environment": "eastus",
    "location": "eastus",
    "time": ***,
    "component_name": "run-history"
***
Error: Process completed with exit code 1.
""", FALLBACK, "Process completed with exit code 1"),
    # opencv/ci-gha-workflow#308: the job container's start, indented as the
    # runner shows it.
    "gha-docker-start-indented-daemon-error": ("""\
  /usr/bin/docker start 4d15a1238263612c813e4b1e77095b544819f296154e73fcecb8975a05fcac56
  Error response from daemon: could not select device driver "" with capabilities: [[gpu]]
  failed to start containers: 4d15a1238263612c813e4b1e77095b544819f296154e73fcecb8975a05fcac56
  Error: Docker start fail with exit code 1
""", FALLBACK, "could not select device driver"),
    # docker/model-runner#608: the runner's llama.cpp could not load a DLL.
    "go-windows-exit-status-dll-not-found": ("""\
Failed to generate a response: error response: status=500 body=unable to load runner: error waiting for runner to be ready: llama.cpp terminated unexpectedly: llama.cpp exit status: exit status 0xc0000135.
""", FALLBACK, "exit status 0xc0000135"),
    # Azure/acs-engine#3902: a GPU job's pod whose image had no nvidia-smi.
    "k8s-describe-container-cannot-run-message": ("""\
Status:         Failed
IP:             10.240.0.93
Controlled By:  Job/nvidia-smi
Containers:
  nvidia-smi:
    Container ID:  docker://3c4aa6179b7f1c602cf88874dbd59a0bfd1b8735eb2cbf1d0c6edf104c3ff61e
    Image:         nvidia/cuda
    Image ID:      docker-pullable://nvidia/cuda@sha256:ccd45db16ba6c3236cedde93120d16cd12163e95f337450414ecd022b489ac84
    Port:          <none>
    Command:
      nvidia-smi
    State:      Terminated
      Reason:   ContainerCannotRun
      Message:  oci runtime error: container_linux.go:247: starting container process caused "exec: \\"nvidia-smi\\": executable file not found in $PATH"

      Exit Code:    127
      Started:      Tue, 25 Sep 2018 17:24:55 +0000
      Finished:     Tue, 25 Sep 2018 17:24:55 +0000
    Ready:          False
    Restart Count:  0
""", FALLBACK, "executable file not found"),
    # NVIDIA/nvidia-docker#1747: a Dockerfile that runs nvidia-smi, built
    # with BuildKit where no GPU is given to build steps.
    "buildkit-run-exit-code": ("""\
ERROR: failed to solve: process "/bin/sh -c nvidia-smi" did not complete successfully: exit code: 127
""", FALLBACK, "did not complete successfully: exit code: 127"),
    # NVIDIA/nvidia-docker#841: the classic builder's report of a RUN step.
    "docker-build-returned-non-zero-code": ("""\
Step 20/21 : RUN sed -i "s;@VERSION@;${REVISION#*+};" debian/changelog &&    if [ "$REVISION" != "$(dpkg-parsechangelog --show-field=Version)" ]; then exit 1; fi
 ---> Running in 36273a0d550d
The command '/bin/sh -c sed -i "s;@VERSION@;${REVISION#*+};" debian/changelog &&    if [ "$REVISION" != "$(dpkg-parsechangelog --show-field=Version)" ]; then exit 1; fi' returned a non-zero code: 1
""", FALLBACK, "returned a non-zero code: 1"),
    # troycomi/reportseff#58: reportseff's rows, the ids redacted.
    "reportseff-timeout-rows": ("""\
    JobID    State       Elapsed  TimeEff   CPUEff   MemEff 
  xxxxxxx   TIMEOUT     17:00:06  100.0%     5.0%    72.2%  
  xxxxxxx   TIMEOUT     15:00:18  100.0%    16.0%    74.5%  
""", "slurm-time-limit", "TIMEOUT     17:00:06"),
    # olcf/olcf-test-harness#254: sacct of a job that lost a node, then ran
    # out of time, its id redacted.
    "sacct-redacted-id-timeout": ("""\
JobID           JobName  Partition    Account  AllocCPUS      State ExitCode
------------ ---------- ---------- ---------- ---------- ---------- --------
x      oblex_nod+      batch     str     112000   RESIZING      0:0
x.bat+      batch                stf         56   RESIZING      0:0
x.ext+     extern                stf     112000   RESIZING      0:0
x.0          bash                stf      56000  COMPLETED      0:0
x.1    oblex-wra+                stf      56000  CANCELLED      0:9
x      oblex_nod+      batch     stf     111872    TIMEOUT      0:0
""", "slurm-time-limit", "TIMEOUT      0:0"),
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_ending_leads(faultline_bin, validate, tmp_path, name):
    text, rule, initiating = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, line=initiating)
