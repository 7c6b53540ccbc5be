"""A matching message alone does not confirm a cause (issue #18).

srun's "task N: Killed" is the strsignal of a SIGKILL (Slurm's
src/srun/launch.c, _task_finish). srun says "Out Of Memory" instead where
slurmstepd tied the task's end to an OOM kill (SIG_OOM), so "Killed" is a
kill srun could not tie to the OOM killer: the scheduler's kill after its
grace period (time limit, scancel, a failed node), an OOM kill slurmstepd
had not counted yet, anyone's kill -9. Its sender is the missing fact; a
line of the OOM killer still leads to the OOM reference.

cuDNN's BAD_PARAM, NOT_SUPPORTED and ARCH_MISMATCH are cuDNN refusing a
call before any kernel ran: the arguments, the configuration or the GPU's
generation, not a kernel fault; EXECUTION_FAILED stays one."""
import json
import pathlib
import subprocess

OOM = "OOM Killed Mid-Step"


def diagnose(binary, tmp_path, text, name="job.log"):
    log = tmp_path / name
    log.write_text(text)
    p = subprocess.run([binary, "diagnose", "--json", str(log)], capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    return json.loads(p.stdout)


def primary(report):
    incidents = report.get("incidents") or []
    assert incidents, "no incident"
    return incidents[0]


# tonyyxliu/CUHKSZ-CSC4005#51: the maintainer's answer is that the run took
# too long and was killed at its time limit, not that it ran out of memory.
SRUN_KILLED_TIME_LIMIT = """\
srun: error: node25: task 11: Killed
srun: error: node25: task 19: Killed
srun: error: node25: task 9: Killed
srun: error: node25: task 17: Killed
srun: error: node25: task 5: Killed
srun: error: node25: task 23: Killed
"""

# ArjunaCluster/ArjunaUsers#48 (tests/cli/endings): srun's report and its
# step's end, nothing else.
SRUN_KILLED_FORCE_TERMINATED = """\
srun: error: c002: task 0: Killed
srun: Force Terminated StepId=120.0
"""


def test_srun_killed_alone_is_a_kill_of_unknown_sender(faultline_bin, tmp_path, validate):
    for text in (SRUN_KILLED_TIME_LIMIT, SRUN_KILLED_FORCE_TERMINATED):
        report = diagnose(faultline_bin, tmp_path, text)
        validate(report)
        inc = primary(report)
        assert inc["reference"] != OOM, inc["reference"]
        assert inc["action"]["kind"] == "unknown"
        assert "SIGKILL" in inc["explanation"]
        # Who sent the SIGKILL is what would settle it: the OOM killer's line
        # in dmesg, or the scheduler's record of the job's end.
        facts = " ".join(inc["missing_facts"])
        assert "who sent the SIGKILL" in facts and "sacct" in facts
        assert "who sent the SIGKILL" in inc["action"]["missing_fact"]
        texts = [e["text"] for e in inc["initiating"]["evidence"]]
        assert any(": Killed" in t for t in texts), texts


def test_srun_killed_with_the_oom_killers_line_is_oom(faultline_bin, tmp_path):
    """The same report with slurmstepd's OOM count of the step (worded as
    Slurm prints it, e.g. in OSC's and NeSI's pages on OOM kills), or the
    kernel's OOM kill, names the OOM reference."""
    stepd = ("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=120.0 cgroup. Some of your "
             "processes may have been killed by the cgroup out-of-memory handler.\n")
    inc = primary(diagnose(faultline_bin, tmp_path, SRUN_KILLED_FORCE_TERMINATED + stepd))
    assert inc["reference"] == OOM and inc["rule"] == "slurm-oom-kill-event"
    kernel = ("[Mon Nov  2 13:46:41 2026] Out of memory: Killed process 31337 (python3) "
              "total-vm:98234112kB, anon-rss:90112004kB, file-rss:0kB, shmem-rss:0kB, UID:0 "
              "pgtables:180324kB oom_score_adj:0\n")
    inc = primary(diagnose(faultline_bin, tmp_path, kernel + SRUN_KILLED_FORCE_TERMINATED))
    assert inc["reference"] == OOM and inc["rule"] == "host-oom-kill"


def test_srun_out_of_memory_is_still_oom(faultline_bin, tmp_path):
    """srun's own 'Out Of Memory' (slurmstepd flagged the task: SIG_OOM)."""
    inc = primary(diagnose(faultline_bin, tmp_path,
                           "srun: error: nid001277: tasks 1-3: Out Of Memory\n"
                           "srun: Terminating StepId=440575.0\n"))
    assert inc["reference"] == OOM


def test_srun_killed_after_a_task_exit_keeps_the_exit(faultline_bin, tmp_path):
    """The kills srun reports after another task's error exit are srun ending
    the step (facebookresearch/deit#102, tests/cli/endings)."""
    text = ("srun: error: learnfair0824: task 5: Exited with exit code 1\n"
            "srun: launch/slurm: _step_signal: Terminating StepId=43575862.0\n"
            "srun: error: learnfair0824: tasks 3,7: Killed\n"
            "srun: error: learnfair0833: task 8: Killed\n")
    inc = primary(diagnose(faultline_bin, tmp_path, text))
    texts = [e["text"] for e in inc["initiating"]["evidence"]]
    assert any("task 5: Exited with exit code 1" in t for t in texts), texts


# cuDNN's status names (cudnnStatus_t; PyTorch's AT_CUDNN_CHECK prints
# "cuDNN error: " and cudnnGetErrorString, with a hint for NOT_SUPPORTED):
# BAD_PARAM, NOT_SUPPORTED and ARCH_MISMATCH are cuDNN refusing a call
# before any kernel ran (the arguments, the configuration, the GPU's
# generation), deterministic and no device fault; EXECUTION_FAILED is a
# kernel that failed on the device.
REFUSED = "cuDNN Refuses the Call (BAD_PARAM / NOT_SUPPORTED / ARCH_MISMATCH): the Inputs or the Setup, Not a GPU Fault"
KERNEL_FAULT = "CUDA Kernel Fault Inside One Rank"
ENDINGS = pathlib.Path(__file__).resolve().parent / "endings"

# pytorch/pytorch#11065: a plain conv2d on a 1024x3x224x224 batch.
NOT_SUPPORTED_CONV2D = """\
~/miniconda3/lib/python3.7/site-packages/torch/nn/modules/conv.py in forward(self, input)
    306     def forward(self, input):
    307         return F.conv2d(input, self.weight, self.bias, self.stride,
--> 308                         self.padding, self.dilation, self.groups)
    309
    310

RuntimeError: CuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous input.
"""

# rbgirshick/fast-rcnn#44: a Tesla M2090 (compute capability 2.0), which the
# cuDNN release does not support.
ARCH_MISMATCH_CAFFE = """\
F0817 22:53:22.694056 24820 cudnn_conv_layer.cpp:32] Check failed: status == CUDNN_STATUS_SUCCESS (6 vs. 0)  CUDNN_STATUS_ARCH_MISMATCH
*** Check failure stack trace: ***
Aborted (core dumped)
"""


def check_refused(inc):
    assert inc["reference"] == REFUSED, inc["reference"]
    assert inc["rule"] == "cudnn-call-refused"
    # Deterministic: a restart fails again; nothing of the device to drain.
    assert inc["action"]["kind"] == "stop"
    assert not inc["action"]["exclude_hosts"] and not inc["action"]["exclude_gpus"]


def test_cudnn_refusals_are_not_kernel_faults(faultline_bin, tmp_path, validate):
    for name in ("e9-onnxruntime-fusedconv-cudnn-bad-param", "e26-darknet-cudnn-bad-param-at-map",
                 "e26-paddleocr-cudnn-bad-param-batch-norm", "e9-tf-cudnn-descriptor-go-signal-aborted"):
        report = diagnose(faultline_bin, tmp_path, (ENDINGS / f"{name}.log").read_text(), f"{name}.log")
        validate(report)
        inc = primary(report)
        check_refused(inc)
        assert any("BAD_PARAM" in e["text"] for e in inc["initiating"]["evidence"]), name
    for text in (NOT_SUPPORTED_CONV2D, ARCH_MISMATCH_CAFFE):
        check_refused(primary(diagnose(faultline_bin, tmp_path, text)))


def test_cudnn9_sub_codes_are_refusals_too(faultline_bin, tmp_path):
    """cuDNN 9 extends a category's name with its sub-code
    (CUDNN_STATUS_BAD_PARAM_NULL_POINTER, CUDNN_STATUS_NOT_SUPPORTED_SHAPE)."""
    for status in ("BAD_PARAM_NULL_POINTER", "NOT_SUPPORTED_SHAPE", "NOT_SUPPORTED_ARCH_MISMATCH"):
        inc = primary(diagnose(faultline_bin, tmp_path, f"RuntimeError: cuDNN error: CUDNN_STATUS_{status}\n"))
        check_refused(inc)


def test_cudnn_execution_failed_stays_a_kernel_fault(faultline_bin, tmp_path):
    name = "e9-cudnn-execution-failed-then-thread-exception"
    inc = primary(diagnose(faultline_bin, tmp_path, (ENDINGS / f"{name}.log").read_text(), f"{name}.log"))
    assert inc["reference"] == KERNEL_FAULT and inc["rule"] == "cuda-library-failure"
