"""
Phrasing across versions, thirtieth pass (issue #18): DeepSpeed, Hugging Face
Accelerate / Transformers' Trainer and PyTorch Lightning, read in the source
of each release, where the catalog's signals missed a wording:

- Lightning's launcher for strategy='ddp' (lightning.fabric's
  _ChildProcessObserver, 2.1 to 2.6, under Fabric and the Trainer alike)
  polls the workers it started; when one exits non-zero it logs "[rank: N]
  Child process with PID <pid> terminated with code <returncode>. Forcefully
  terminating all other processes to avoid zombies" and SIGKILLs the other
  workers and the main process. The return code is Popen's, negative for a
  signal. No rule read the line: a worker the OOM killer took (-9) was left
  to the main process's own "Killed" (the observer's kill, not the cause),
  and a worker that crashed in native code (-11) with nothing else in the
  log made no incident at all. The fallback's exit-status wording now takes
  "terminated with code N" beside "terminated with exit code N", the
  SIGKILL and SIGTERM readings of a stated -9 / -15 take it too, and
  torch-child-failed reads the line as the launcher's report of its child
  (as it reads torchrun's "failed (exitcode: N) local_rank: ..."), its
  "Forcefully terminating" a launcher stopping its workers (stops_workers).

Already read in every version (checked, no change): DeepSpeed's launcher
"[launch.py:N:sigkill_handler] [...] exits with return code = N" (0.9 to
0.16, the same f-string and logger format; -9 and -15 by their signal
rules), "Killing subprocess N", its hostfile ValueErrors ("Hostfile is empty
or not formatted correctly, unable to proceed with launching.", "... contains
multiple entries for H ...", "... contains a bad entry ...") by the
fallback's exception reading, the elastic agent's "[role] Worker group
FAILED. N/M attempts left; will restart worker group"; ZeRO-3's "still have
inflight params" (0.9 to 0.15; 0.16 cleans the registry instead of raising)
and " {param} Cannot partition a param in flight" (every release), the NVMe
offload's "Copying NVMe offload files from ... to .../offloaded_tensors"
(0.13 onwards). Accelerate's simple launcher's "subprocess.CalledProcessError:
Command '[...]' returned non-zero exit status N." / "died with
<Signals.SIGKILL: 9>." (0.20 to 1.x), find_executable_batch_size's
"No executable batch size found, reached zero." (the Trainer's
auto_find_batch_size; the OOMs it retries print nothing, the Trainer's
"Currently training with a batch size of" being logger.debug). Lightning's
"[rank: N] Received SIGTERM: 15" (2.0 onwards), "`Trainer.fit` stopped:
`max_epochs=N` reached." / "`max_steps=N`" (1.9 to 2.6).

Left alone: Accelerate's "Detected kernel version X, which is below the
recommended minimum of 5.5.0" (0.26 onwards) is a warning with no catalog
reference (a hang's hint, not a failure) and stays unread. DeepSpeed's comm
layer prints no timeout of its own (torch's watchdog lines are read).
Lightning's SLURM auto-requeue lines ("Handling auto-requeue signal: 10",
"requeing job N...", "Requeued SLURM job: N", 1.9's "requeued exp N") are
not read: they close an attempt rather than start one, so job-restarted's
attempt-start role would misplace them. SIGTERMException is a SystemExit and
prints nothing. EarlyStopping's "... Signaling Trainer to stop." is not a
completion line: min_epochs/min_steps can keep the run going after it.
"""
import pytest

from conftest import leading_incident, scan_text

LIGHTNING_HEAD = """\
GPU available: True (cuda), used: True
TPU available: False, using: 0 TPU cores
Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4
----------------------------------------------------------------------------------------------------
distributed_backend=nccl
All distributed processes registered. Starting with 4 processes
----------------------------------------------------------------------------------------------------

LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1,2,3]
Epoch 3:  41%|████      | 410/1000 [05:12<07:29,  1.31it/s, v_num=0, train_loss=0.412]
"""

# A worker the OOM killer took: the observer's report, then the main
# process's own end by the observer's SIGKILL.
LIGHTNING_CHILD_KILLED = LIGHTNING_HEAD + """\
[rank: 2] Child process with PID 2842 terminated with code -9. Forcefully terminating all other processes to avoid zombies 🧟
Killed
"""

# A worker that crashed in native code and printed nothing.
LIGHTNING_CHILD_SEGV = LIGHTNING_HEAD + """\
[rank: 3] Child process with PID 2843 terminated with code -11. Forcefully terminating all other processes to avoid zombies 🧟
"""

# A worker's own error above the observer's report: the error leads.
LIGHTNING_CHILD_OOM = LIGHTNING_HEAD + """\
[rank2]: Traceback (most recent call last):
[rank2]:   File "train.py", line 88, in <module>
[rank2]:     trainer.fit(model, dm)
[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 2 has a total capacity of 79.15 GiB of which 1.02 GiB is free.
[rank: 2] Child process with PID 2842 terminated with code 1. Forcefully terminating all other processes to avoid zombies 🧟
Killed
"""

# DeepSpeed's launcher (0.9 to 0.16), a worker the OOM killer took.
DEEPSPEED_LAUNCHER_SIGKILL = """\
[2024-05-01 10:00:00,001] [INFO] [launch.py:256:main] process 40473 spawned with command: ['/usr/bin/python3', '-u', 'train.py', '--local_rank=0', '--deepspeed', 'ds_config.json']
[2024-05-01 10:12:13,100] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 40473
[2024-05-01 10:12:13,200] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py', '--local_rank=0', '--deepspeed', 'ds_config.json'] exits with return code = -9
"""

# Trainer(auto_find_batch_size=True) once no batch size fits.
ACCELERATE_BATCH_SIZE_EXHAUSTED = """\
Traceback (most recent call last):
  File "train.py", line 61, in <module>
    trainer.train()
  File "/usr/local/lib/python3.10/dist-packages/accelerate/utils/memory.py", line 178, in decorator
    raise RuntimeError("No executable batch size found, reached zero.")
RuntimeError: No executable batch size found, reached zero.
"""


@pytest.mark.parametrize("line,signal", [
    ("[rank: 1] Child process with PID 2841 terminated with code 1. Forcefully terminating all other processes to "
     "avoid zombies 🧟", "exit_status"),
    ("[rank: 1] Child process with PID 2841 terminated with code 1. Forcefully terminating all other processes to "
     "avoid zombies 🧟", "lightning_child_process_exit"),
    ("[rank: 3] Child process with PID 2843 terminated with code -11. Forcefully terminating all other processes to "
     "avoid zombies 🧟", "lightning_child_process_exit"),
    ("[rank: 2] Child process with PID 2842 terminated with code -9. Forcefully terminating all other processes to "
     "avoid zombies 🧟", "exit-status-minus-9"),
    ("[rank: 2] Child process with PID 2842 terminated with code -15. Forcefully terminating all other processes to "
     "avoid zombies 🧟", "exit-status-sigterm"),
], ids=["lightning-child-exit-1", "lightning-child-exit-summary", "lightning-child-segv", "lightning-child-sigkill",
        "lightning-child-sigterm"])
def test_each_version_is_read_by_its_signal(faultline_bin, tmp_path, line, signal):
    records = scan_text(faultline_bin, tmp_path, line + "\n")
    assert signal in {r["signal"] for r in records}, records


@pytest.mark.parametrize("line,signal", [
    ("Child process with PID 2841 terminated with code 0. Forcefully terminating all other processes to avoid "
     "zombies", "exit_status"),
    ("Child process with PID 2841 terminated with code 0. Forcefully terminating all other processes to avoid "
     "zombies", "lightning_child_process_exit"),
    ("[rank: 2] Child process with PID 2842 terminated with code -90. Forcefully terminating all other processes to "
     "avoid zombies", "exit-status-minus-9"),
    ("12/07/2026 10:00:00 - WARNING - accelerate.utils.other - Detected kernel version 4.18.0, which is below the "
     "recommended minimum of 5.5.0; this can cause the process to hang. It is recommended to upgrade the kernel to "
     "the minimum version or higher.", "exit_status"),
], ids=["exit-zero", "exit-zero-summary", "minus-90-is-not-sigkill", "accelerate-kernel-warning"])
def test_what_is_no_failure_of_theirs_is_not_read(faultline_bin, tmp_path, line, signal):
    records = scan_text(faultline_bin, tmp_path, line + "\n")
    assert signal not in {r["signal"] for r in records}, records


@pytest.mark.parametrize("text,rule,line", [
    (LIGHTNING_CHILD_KILLED, "process-sigkilled", "Child process with PID 2842 terminated with code -9"),
    (LIGHTNING_CHILD_SEGV, "torch-child-failed", "Child process with PID 2843 terminated with code -11"),
], ids=["lightning-child-sigkill-leads", "lightning-child-segv"])
def test_the_failure_leads(faultline_bin, validate, tmp_path, text, rule, line):
    leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, line=line)


def test_the_child_segv_is_named(faultline_bin, validate, tmp_path):
    inc = leading_incident(faultline_bin, validate, tmp_path, LIGHTNING_CHILD_SEGV)
    assert "SIGSEGV" in inc["explanation"], inc["explanation"]


@pytest.mark.parametrize("text,rule,line", [
    (LIGHTNING_CHILD_OOM, "cuda-oom", "torch.OutOfMemoryError: CUDA out of memory."),
    (DEEPSPEED_LAUNCHER_SIGKILL, "process-sigkilled", "exits with return code = -9"),
    (ACCELERATE_BATCH_SIZE_EXHAUSTED, "cuda-oom", "No executable batch size found, reached zero."),
], ids=["lightning-child-own-error-leads", "deepspeed-launcher-sigkill", "accelerate-batch-size-exhausted"])
def test_guards_already_right(faultline_bin, validate, tmp_path, text, rule, line):
    # Verdicts right before this pass (see the docstring): the new readings
    # must not take them over.
    leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, line=line)
