"""Endings the third endings audit (tests/cli/endings, e3-*.log) found read
as nothing, read where the program prints them (issue #18):

- IPython's traceback header names the class it raised ("OutOfMemoryError
  Traceback (most recent call last)", ultratb); a notebook's output cut
  after its frames (an arrow line "----> 1 f()" seen, no exception line)
  ends in that traceback, like CPython's cut in its frames.
- A traceback joined onto its header's line as posted ("Traceback (most
  recent call last): File "x.py", line 3, in <module> ...") with no more
  line of its stream: the source ends in it.
- Ascend: CANN's error messages start with their code ("EI0009: ",
  "EH9999: Inner Error!": E for error, a module character, four digits;
  W... codes are warnings), torch_npu's error-code line "(PID:N, Device:N,
  RankID:N) ERR00100 PTA call acl api failed", MindSpore's "Task fail infos
  task_id: ..." and "Launch kernel failed: <op>", torch_npu's allocator's
  "NPU out of memory. Tried to allocate ...".
- Open MPI's signal handler's "[host:pid] Failing at address: 0x..." line.
- PBS/Torque kills for memory ("=>> PBS: job killed: mem N exceeded limit
  M", Torque's mail "Job exceeded a memory resource limit (vmem, pvmem,
  etc.). Job was aborted") are the memory-limit kill; Torque's mail "Job
  exceeded its walltime limit. Job was aborted" is the scheduler time limit.
- tqdm's line as a notebook renders it (percentage, counts, no bar) with
  the shell's "Killed" after its last redraw.
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    "ipython-header-cut": ("""\
GPU available: True (cuda), used: True
---------------------------------------------------------------------------
OutOfMemoryError                          Traceback (most recent call last)
Cell In[7], line 2
      1 model = build()
----> 2 trainer.fit(model)
      3 trainer.save_checkpoint("last.ckpt")
""", "OutOfMemoryError"),
    "ipython-old-header-cut": ("""\
KeyError                                  Traceback (most recent call last)
<ipython-input-4-0f9a8b1c2d3e> in <module>
----> 1 batch = next(it)

~/venv/lib/python3.8/site-packages/torch/utils/data/dataloader.py in __next__(self)
    519             self._reset()
--> 520         data = self._next_data()
""", "KeyError"),
    "flattened-traceback": ("""\
Traceback (most recent call last): File "run.py", line 40, in <module> main() File "run.py", line 31, in main loss.backward()
""", "Traceback (most recent call last)"),
    "cann-code": ("""\
[rank0]: EI0006: [PID: 4242] 2025-01-02-03:04:05.678.901 Getting socket times out. Reason: 1. The remote does not initiate a connect request.
[rank0]:         Solution: 1. Check the rank service processes with other errors or no errors in the cluster.
""", "EI0006: "),
    "torch-npu-code": ("""\
[ERROR] 2025-01-02-03:04:05 (PID:4242, Device:0, RankID:0) ERR00100 PTA call acl api failed
[Error]: The execution of the internal task times out.
""", "ERR00100 PTA call acl api failed"),
    "mindspore-task-fail": ("""\
[ERROR] DEVICE(4242,ffff8a7c1e0,python):2024-02-03-04:05:06.789.012 [mindspore/ccsrc/plugin/device/ascend/hal/device/ascend_kernel_runtime.cc:745] DumpTaskExceptionInfo] Task fail infos task_id: 7, stream_id: 3, tid: 4242, device_id: 1, retcode: 507011 ( model execute failed)
[WARNING] DEVICE(4242,ffff8a7c1e0,python):2024-02-03-04:05:06.790.000 [mindspore/ccsrc/plugin/device/ascend/hal/device/ascend_kernel_runtime.cc:780] DumpTaskExceptionInfo] Suggestion:
""", "Task fail infos task_id: 7"),
    "mindspore-launch-kernel": ("""\
----------------------------------------------------
Launch kernel failed: Default/MatMul-op12

----------------------------------------------------
""", "Launch kernel failed: Default/MatMul-op12"),
    "npu-oom-bare": ("""\
step 120 loss 2.31
NPU out of memory. Tried to allocate 2.00 GiB (NPU 1; 29.50 GiB total capacity; 27.10 GiB already allocated)
""", "NPU out of memory"),
    "ompi-failing-address": ("""\
[gpu07:31337] Failing at address: 0x7f00dead0000
[gpu07:31337] [ 0] /lib64/libpthread.so.0(+0xf630)[0x7f1a2b3c4630]
[gpu07:31337] [ 1] /opt/venv/lib/libtorch_cuda.so(+0x1a2b3c)[0x7f1a2c000000]
""", "Failing at address: 0x7f00dead0000"),
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_ending_is_a_fatal_line(faultline_bin, validate, tmp_path, name):
    text, initiating = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text,
                     rule=FALLBACK, line=initiating)


CATALOG = {
    "pbs-mem-kill": ("""\
Running job 1 based on PBS_ARRAY_INDEX=1 and offset=0.
=>> PBS: job killed: mem 9437184kb exceeded limit 8388608kb
""", "cgroup-oom", "job killed: mem 9437184kb"),
    "torque-mail-memory": ("""\
PBS Job Id: 4242.headnode
Job Name:   train
Exec host:  gpu3/0-7
Aborted by PBS Server
Job exceeded a memory resource limit (vmem, pvmem, etc.). Job was aborted
See Administrator for help
Exit_status=-10
""", "cgroup-oom", "Job exceeded a memory resource limit"),
    "torque-mail-walltime": ("""\
PBS Job Id: 4243.headnode
Job Name:   train
Exec host:  gpu3/0-7
Aborted by PBS Server
Job exceeded its walltime limit. Job was aborted
See Administrator for help
Exit_status=-11
""", "slurm-time-limit", "Job exceeded its walltime limit"),
    "notebook-bar-killed": ("""\
Map: 100% 1000/1000 [00:01<00:00, 812.50 examples/s]
tokenize:  41% 41000/100000 [01:02<01:30, 651.20 examples/s]Killed
""", "process-sigkilled", "Killed"),
}


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_ending_is_its_catalog_failure(faultline_bin, validate, tmp_path, name):
    text, rule, initiating = CATALOG[name]
    leading_incident(faultline_bin, validate, tmp_path, text,
                     rule=rule, any_line=initiating)


HEALTHY = {
    # CANN's warning codes start with W.
    "cann-warning-code": """\
W11001: Op [Cast] does not hit the high-priority operator information library, which might result in compromised performance.
epoch 1 step 100 loss 1.92
""",
    # A flattened traceback a logger printed, then the run goes on.
    "flattened-then-training": """\
Traceback (most recent call last): File "hooks.py", line 12, in on_step send(metrics) File "net.py", line 4, in send sock.sendall(b)
epoch 3 step 200 loss 1.41
epoch 3 step 300 loss 1.38
""",
    # Moab warns of a soft limit; the job goes on.
    "moab-soft-limit": """\
job 4242 exceeded MEM usage soft limit
""",
    # IPython's header with no frame marked: not a traceback's frames.
    "ipython-header-no-arrow": """\
Notes on errors: a KeyError                                  Traceback (most recent call last)
""",
}


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_healthy_ending_is_no_incident(faultline_bin, validate, tmp_path, name):
    assert diagnose_text(faultline_bin, validate, tmp_path, HEALTHY[name]) == []
