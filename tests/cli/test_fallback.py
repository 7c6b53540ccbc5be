"""A job that failed never gets "No incident": when no catalog rule explains
the failure, the report has an "Unrecognised fatal error" incident whose
initiating line is the first fatal line on the earliest failing rank, with a
missing fact saying what would settle it (rulesets/README.md, "Roles",
role:fallback). The log lines below are as public issue threads and
documentation print them: a traceback cut before its exception, launchers'
and schedulers' exit reports, a worker's exception before the other ranks'
collective timeouts."""
import json

import pytest

from conftest import diagnose_text, first_incident, initiating_texts, run

FALLBACK = "Unrecognised fatal error"

# flash-attention on ROCm (a thread quoting the rank's traceback); the
# excerpt is cut after the assert's code line, or goes on to its exception.
TRUNCATED = """\
[rank0]:   File "/usr/local/lib/python3.10/dist-packages/flash_attn-2.7.4.post1-py3.10.egg/flash_attn/flash_attn_triton_amd/utils.py", line 80, in need_alibi
[rank0]:     assert alibi_slopes.dim() == 2
"""
# align-anything: a template lookup that raises, then a watchdog timeout of
# another rank (a Hugging Face generation run's log).
WORKER_ERROR = """\
[rank0]:   File "/home/pku0016/hw2/align-anything/align_anything/utils/template_registry.py", line 30, in get_template_class
[rank0]:     raise ValueError(f"Template '{template_name}' not found.")
[rank0]: ValueError: Template 'None' not found.
"""
WATCHDOG = ("[rank2]:[E ProcessGroupNCCL.cpp:523] [Rank 2] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=15074, OpType=_ALLGATHER_BASE, NumelIn=8388608, NumelOut=67108864, "
            "Timeout(ms)=1800000) ran for 1800218 milliseconds before timing out.\n")


def incidents(faultline_bin, validate, tmp_path, text):
    return diagnose_text(faultline_bin, validate, tmp_path, text)


def test_traceback_cut_before_its_exception_leads_with_the_code_line(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, TRUNCATED)
    assert inc["reference"] == FALLBACK
    assert initiating_texts(inc) == ["[rank0]:     assert alibi_slopes.dim() == 2"]
    assert inc["initiating"]["rank"] == 0
    assert any("the rest of the traceback after 'assert alibi_slopes.dim() == 2'" in f
               for f in inc["missing_facts"]), inc["missing_facts"]


def test_the_exception_after_the_code_line_leads(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, TRUNCATED + "[rank0]: AssertionError\n")
    assert inc["reference"] == FALLBACK
    assert initiating_texts(inc) == ["[rank0]: AssertionError"]


def test_worker_error_before_collective_timeouts_initiates(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, WORKER_ERROR + WATCHDOG)
    assert inc["reference"] == FALLBACK
    assert initiating_texts(inc) == ["[rank0]: ValueError: Template 'None' not found."]
    assert inc["initiating"]["rank"] == 0
    assert [c["rule"] for c in inc["collateral"]] == ["nccl-watchdog-timeout"]


def test_collective_timeout_before_a_worker_error_keeps_its_verdict(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, WATCHDOG + WORKER_ERROR)
    assert inc["rule"] == "nccl-watchdog-timeout"


# Exit reports as launchers, schedulers and shells print them (DeepSpeed
# issue 3232, Open MPI issue 2661, PyTorch-Encoding
# issue 324, abseil's failure signal handler, sacct in a Slurm extension's
# issue, mpiexec's BAD TERMINATION banner, glibc's heap check before its
# abort, torch.compile's wrapped error, a Rust panic, a glog FATAL check in
# TensorFlow issue 22119): each is a failure, and the signal it names is
# explained.
# diffusion-pipe issue 226 (tdrussell/diffusion-pipe#226): the launcher reports a worker
# killed by SIGSEGV. (A worker killed by SIGKILL, "= -9", is process-sigkilled's:
# tests/cli/test_thirtieth_batch.py.)
DEEPSPEED = ("[2025-04-20 05:36:57,711] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 1829\n"
             "[2025-04-20 05:36:57,716] [ERROR] [launch.py:325:sigkill_handler] ['/root/diffusion-pipe/venv/bin/python3'"
             ", '-u', 'train.py', '--local_rank=0', '--deepspeed', '--config', 'Flora.toml'] exits with return code = -11\n")
EXITS = {
    "mpirun": ("mpirun noticed that process rank 0 with PID 21183 on node host01 exited on signal 9 (Killed).\n",
               "SIGKILL"),
    "spawn": ("Traceback (most recent call last):\n"
              "  File \"train_dist.py\", line 319, in <module>\n"
              "    main()\n"
              "Exception: process 0 terminated with signal SIGKILL\n", "SIGKILL"),
    "abseil": ("*** SIGABRT received at time=1735498785 on cpu 0 ***\n", "SIGABRT"),
    "sacct": ("JobID           JobName      State ExitCode \n"
              "------------ ---------- ---------- -------- \n"
              "2681683_420  entropy.sh     FAILED      1:0 \n", None),
    "mpich": ("=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"
              "=   EXIT CODE: 9\n", None),
    "heap": ("libva info: Found init function __vaDriverInit_1_21\n"
             "double free or corruption (!prev)\n"
             "Aborted (core dumped)\n", "SIGABRT"),
    "dynamo": ("    from triton.compiler.compiler import triton_key\n"
               "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n", None),
    "rust": ("thread '<unnamed>' panicked at 'error binding to 127.0.0.1:50312: error creating server listener:\n",
             None),
    "glog": ("2018-09-06 17:28:38.814423: F tensorflow/stream_executor/cuda/cuda_dnn.cc:211] Check failed: "
             "status == CUDNN_STATUS_SUCCESS (7 vs. 0)Failed to set cuDNN stream.\n"
             "Aborted (core dumped)\n", "SIGABRT"),
    # TensorFlow 1's session.run re-raise (Tencent/PocketFlow#255).
    "tf1": ("InternalError (see above for traceback): Blas SGEMM launch failed : m=131072, n=16, k=16\n", None),
    # IPython's report of sys.exit(-1) (a PaddleX tutorial's output).
    "sysexit": ("An exception has occurred, use %tb to see the full traceback.\n\n"
                "    SystemExit: -1\n", None),
    # Hydra's line over a job that raised (quangvnai/grit#34's excerpt, cut
    # before the traceback).
    "hydra": ("Epoch 0 - validation:   0%|          | 2/1563 [00:04<55:13,  2.12s/it, loss=3.78]\n"
              "Error executing job with overrides: []\n", None),
    # The kubelet's back-off events (kubectl describe pod).
    "k8s": ("  Normal   Started    14m (x4 over 15m)   kubelet, minikube  Started container\n"
            "  Warning  BackOff    33s (x70 over 15m)  kubelet, minikube  Back-off restarting failed container\n",
            None),
    # kubectl describe pod's waiting state alone (a flannel thread's excerpt).
    "k8s_waiting": ("    State:          Waiting\n"
                    "      Reason:       CrashLoopBackOff\n", None),
}


@pytest.mark.parametrize("name", sorted(EXITS))
def test_exit_and_fatal_reports_are_failures(faultline_bin, validate, tmp_path, name):
    text, signal = EXITS[name]
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["reference"] == FALLBACK
    assert inc["missing_facts"]
    if signal:
        assert f"Exit status: {signal}" in inc["explanation"]


def test_a_lone_launcher_summary_is_the_summary_with_its_exit_meaning(faultline_bin, validate, tmp_path):
    # DeepSpeed's launcher reports the worker's exit as torchrun's
    # ChildFailedError does: a summary of the first local failure.
    inc = first_incident(faultline_bin, validate, tmp_path, DEEPSPEED)
    assert inc["rule"] == "torch-child-failed"
    assert "Exit status: SIGSEGV" in inc["explanation"]
    assert not any("rank the suspect" in f for f in inc["missing_facts"])


def test_open_mpi_signal_report_names_its_host(faultline_bin, validate, tmp_path):
    # Open MPI's signal handler, as a user list post quotes it.
    text = ("[cstone-00613:28461] *** Process received signal ***\n"
            "[cstone-00613:28461] Signal: Segmentation fault (11)\n"
            "[cstone-00613:28461] Signal code:  (128)\n"
            "[cstone-00613:28461] Failing at address: (nil)\n")
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["reference"] == FALLBACK
    assert inc["initiating"]["host"] == "cstone-00613"
    assert "Exit status: SIGSEGV" in inc["explanation"]


def test_srun_report_of_the_task_that_crashed_names_its_rank(faultline_bin, validate, tmp_path):
    # A batch output without `srun -l`: the crash names no rank; srun's
    # report of the task that died of the same signal does, and srun's
    # cancel and its kill of the other tasks follow it on the next lines.
    text = ("Fatal Python error: Segmentation fault\n\n"
            "Thread 0x00007f1c2a000000 (most recent call first):\n"
            '  File "/opt/train.py", line 12 in step\n'
            "srun: error: gpu-b07: task 3: Segmentation fault (core dumped)\n"
            "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
            "slurmstepd: error: *** STEP 123.0 ON gpu-b07 CANCELLED AT 2026-11-20T09:00:05 ***\n"
            "srun: error: gpu-b08: tasks 4-7: Killed\n")
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["reference"] == FALLBACK
    assert inc["initiating"]["rank"] == 3
    assert inc["initiating"]["host"] == "gpu-b07"
    assert "Exit status: SIGSEGV" in inc["explanation"]


def test_error_line_a_library_prints_and_carries_on_from_is_no_failure(faultline_bin, validate, tmp_path):
    # mkl-service's warning at import (PyTorch issue 37377: "the training
    # seems to work" while it keeps printing): a tool's "Error:" line is no
    # uncaught exception.
    text = ("Error: mkl-service + Intel(R) MKL: MKL_THREADING_LAYER=INTEL is incompatible with libgomp.so.1 library.\n"
            "\tTry to import numpy first or set the threading layer accordingly. Set MKL_SERVICE_FORCE_INTEL to force it.\n")
    assert incidents(faultline_bin, validate, tmp_path, text) == []


def test_exception_ignored_at_shutdown_is_no_failure(faultline_bin, validate, tmp_path):
    # A DataLoader iterator's destructor run at exit, failing in CPython's
    # multiprocessing/process.py: CPython prints the traceback and carries on.
    text = ("Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f4972feac10>\n"
            "Traceback (most recent call last):\n"
            "  File \"/usr/lib/python3.8/multiprocessing/process.py\", line 160, in is_alive\n"
            "    assert self._parent_pid == os.getpid(), 'can only test a child process'\n"
            "AssertionError: can only test a child process\n")
    assert incidents(faultline_bin, validate, tmp_path, text) == []


# xFormers' Triton probe as a Wan2.2 run printed it: logging's WARNING record
# with the caught ModuleNotFoundError as its exc_info; the run went on. The
# same traceback under an ERROR record, or under no record, ended the job.
TRITON_PROBE_FRAMES = (
    "Traceback (most recent call last):\n"
    "  File \"C:\\Python312\\Lib\\site-packages\\xformers\\__init__.py\", line 57, in _is_triton_available\n"
    "    import triton  # noqa\n"
    "    ^^^^^^^^^^^^^\n"
    "ModuleNotFoundError: No module named 'triton'\n")


def test_traceback_logged_as_a_warning_is_no_failure(faultline_bin, validate, tmp_path):
    text = ("[2025-08-29 12:21:03,962] WARNING: A matching Triton is not available, some optimizations "
            "will not be enabled\n" + TRITON_PROBE_FRAMES)
    assert incidents(faultline_bin, validate, tmp_path, text) == []


def test_traceback_logged_as_an_error_still_fails(faultline_bin, validate, tmp_path):
    text = "[2025-08-29 12:21:03,962] ERROR: could not start the pipeline\n" + TRITON_PROBE_FRAMES
    inc = incidents(faultline_bin, validate, tmp_path, text)
    assert [i["reference"] for i in inc] == [FALLBACK]


# torch.compile's recompile limit with fullgraph=True (microsoft/dion issue
# 23): dynamo's warning, then the exception, whose class is named for no
# suffix; torch/_dynamo/exc.py holds only exceptions. A warning category of
# such a module (urllib3's) is printed and the program goes on.
RECOMPILE_LIMIT = (
    "W0110 12:27:06.332000 158 torch/_dynamo/convert_frame.py:1551] [2/8] torch._dynamo hit "
    "config.recompile_limit (8)\n"
    "torch._dynamo.exc.FailOnRecompileLimitHit: recompile_limit reached with fullgraph=True. Excessive "
    "recompilations can degrade performance due to the compilation overhead of each recompilation.\n")


def test_an_exception_of_an_exceptions_module_is_a_fatal_line(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, RECOMPILE_LIMIT)
    assert inc["reference"] == FALLBACK
    assert initiating_texts(inc) == [RECOMPILE_LIMIT.splitlines()[1]]


def test_a_warning_category_of_an_exceptions_module_is_no_failure(faultline_bin, validate, tmp_path):
    text = ("urllib3.exceptions.InsecureRequestWarning: Unverified HTTPS request is being made to host "
            "'localhost'. Adding certificate verification is strongly advised.\n")
    assert incidents(faultline_bin, validate, tmp_path, text) == []


# A CUDA call made after the CUDA runtime unloaded at process exit
# (cudaErrorCudartUnloading, "driver shutting down"), as Caffe's CHECK and
# glibc report it (FastMask issue 16), and as a C++ exception escaping a
# destructor does (PyTorch's c10 message format).
CAFFE_EXIT = ("Check failed: error == cudaSuccess (29 vs. 0) driver shutting down\n"
              "*** Check failure stack trace: ***\n"
              "Aborted (core dumped)\n")
TERMINATE_EXIT = ("terminate called after throwing an instance of 'c10::Error'\n"
                  "  what():  CUDA error: driver shutting down\n")


def test_abort_after_the_cuda_runtime_unloaded_is_no_failure(faultline_bin, validate, tmp_path):
    assert incidents(faultline_bin, validate, tmp_path, CAFFE_EXIT) == []


def test_terminate_whose_message_is_the_runtime_unloading_is_no_failure(faultline_bin, validate, tmp_path):
    assert incidents(faultline_bin, validate, tmp_path, TERMINATE_EXIT) == []


def test_an_error_before_the_exit_noise_still_initiates(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, WORKER_ERROR + TERMINATE_EXIT)
    assert inc["reference"] == FALLBACK
    assert initiating_texts(inc) == ["[rank0]: ValueError: Template 'None' not found."]


def test_terminate_with_another_message_is_still_a_failure(faultline_bin, validate, tmp_path):
    text = ("terminate called after throwing an instance of 'c10::Error'\n"
            "  what():  CUDA error: an illegal memory access was encountered\n")
    assert incidents(faultline_bin, validate, tmp_path, text) != []


# A peer's crash as the other ends of its connections see it: NCCL's IB
# completion errors naming the crashed host's address (NCCL's net_ib.cc
# format), unstamped as NCCL prints them, and the kernel's segfault line of
# the crashed worker (the kernel's show_signal_msg format).
PEER_IB = ("node01:177698:177739 [2] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer "
           "10.20.1.92<40002> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.20.0.132 "
           "remoteGids::ffff:10.20.1.92\n")
PEER_SEGV = ("Apr  7 06:49:39 node02 kernel: pt_main_thread[181682]: segfault at 10 ip 00007f1c2a5fe50b "
             "sp 00007ffd5c3e1a90 error 4 in libtorch_cuda.so[7f1c2a000000+4e2c1000]\n")


def diagnose_tree(faultline_bin, validate, root):
    p = run(faultline_bin, "diagnose", "--json", str(root), check=False)
    assert p.returncode == 0, p.stderr.decode()
    doc = json.loads(p.stdout)
    validate(doc)
    return doc["incidents"]


def test_peer_reported_network_errors_follow_the_peers_crash(faultline_bin, validate, tmp_path):
    (tmp_path / "node01").mkdir()
    (tmp_path / "node02").mkdir()
    (tmp_path / "node01" / "rank-2.log").write_text(PEER_IB * 3)
    (tmp_path / "node02" / "kern.log").write_text(PEER_SEGV)
    found = diagnose_tree(faultline_bin, validate, tmp_path)
    assert found and found[0]["reference"] == FALLBACK, [i["reference"] for i in found]
    assert "segfault at" in initiating_texts(found[0])[0]
    collateral = [c["rule"] for c in found[0].get("collateral", [])]
    assert "ib-retry-exceeded" in collateral, found[0].get("collateral")


def test_network_errors_before_a_crash_stay_the_cause(faultline_bin, validate, tmp_path):
    # The IB errors are stamped before the crash: the crash may be their doing.
    (tmp_path / "node01").mkdir()
    (tmp_path / "node02").mkdir()
    (tmp_path / "node01" / "rank-2.log").write_text(("Apr  7 06:40:00 node01 python[177698]: " + PEER_IB) * 3)
    (tmp_path / "node02" / "kern.log").write_text(PEER_SEGV)
    found = diagnose_tree(faultline_bin, validate, tmp_path)
    assert found and found[0]["reference"] != FALLBACK, [i["reference"] for i in found]


# PyTorch's DataLoader re-raises a worker's exception in the main process as
# "X: Caught X in DataLoader worker process N." followed by "Original
# Traceback (most recent call last):" and the worker's own traceback
# (torch/_utils.py, ExceptionWrapper.reraise).
DATALOADER = """\
Traceback (most recent call last):
  File "/workspace/train.py", line 88, in <module>
    for batch in loader:
  File "/usr/local/lib/python3.10/dist-packages/torch/utils/data/dataloader.py", line 1346, in _next_data
    return self._process_data(data)
  File "/usr/local/lib/python3.10/dist-packages/torch/_utils.py", line 705, in reraise
    raise exception
FileNotFoundError: Caught FileNotFoundError in DataLoader worker process 3.
Original Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/torch/utils/data/_utils/worker.py", line 308, in _worker_loop
    data = fetcher.fetch(index)
  File "/workspace/dataset.py", line 22, in __getitem__
    img = Image.open(self.paths[idx])
  File "/usr/local/lib/python3.10/dist-packages/PIL/Image.py", line 3227, in open
    fp = builtins.open(filename, "rb")
FileNotFoundError: [Errno 2] No such file or directory: '/data/train/n01440764_10026.JPEG'
"""


def test_dataloader_worker_original_exception_leads(faultline_bin, validate, tmp_path):
    """The exception of the worker's original traceback is the initiating
    line; the "Caught ... in DataLoader worker process" wrapper is the same
    failure seen from the main process, in the same incident."""
    found = incidents(faultline_bin, validate, tmp_path, DATALOADER)
    assert [i["reference"] for i in found] == ["DataLoader Failure"], [i["rule"] for i in found]
    lead = initiating_texts(found[0])
    assert lead[0].startswith("FileNotFoundError: [Errno 2] No such file or directory"), lead
    assert any("Caught FileNotFoundError in DataLoader worker process 3" in t for t in lead), lead


# NCCL's generic results (ncclSystemError, ncclInternalError,
# ncclUnhandledCudaError) name no failure: "run with NCCL_DEBUG=INFO for
# details". Alone they are an unrecognised fatal error, not a network
# verdict; the call that failed, when NCCL's "Last error:" names it, or a
# network error NCCL warned about before, says what it was.
NCCL_SYSTEM = (
    "[rank3]:[E1102 04:10:11.123456789 ProcessGroupNCCL.cpp:1896] [PG ID 0 PG GUID 0(default_pg) Rank 3] "
    "Process group watchdog thread terminated with exception: NCCL error: unhandled system error "
    "(run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
    "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
    "Last error:\n")


def test_a_bare_nccl_system_error_is_an_unrecognised_fatal_error(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, NCCL_SYSTEM)
    assert inc["reference"] == FALLBACK
    assert initiating_texts(inc)[0] == NCCL_SYSTEM.splitlines()[0]
    assert inc["initiating"]["rank"] == 3


def test_nccl_last_error_names_the_failure(faultline_bin, validate, tmp_path):
    text = (NCCL_SYSTEM.replace("unhandled system error", "unhandled cuda error")
            .replace("ncclSystemError: System call (e.g. socket, malloc) or external library call "
                     "failed or device error. ", "ncclUnhandledCudaError: Call to CUDA function failed.")
            + "Cuda failure 802 'system not yet initialized'\n")
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["rule"] == "nvswitch-fabric-error"


def test_a_network_error_before_the_nccl_result_keeps_its_verdict(faultline_bin, validate, tmp_path):
    warn = ("gpu-a07:2211:2290 [3] transport/net_socket.cc:540 NCCL WARN NET/Socket : "
            "Call to recv from 10.1.3.7<41235> failed : Connection reset by peer\n")
    inc = first_incident(faultline_bin, validate, tmp_path, warn + NCCL_SYSTEM)
    assert inc["rule"] == "nccl-remote-error"


def test_an_exception_line_of_an_nccl_result_is_one_fatal_line(faultline_bin, validate, tmp_path):
    line = ("[rank2]: RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for "
            "details), NCCL version 2.21.5\n")
    inc = first_incident(faultline_bin, validate, tmp_path, line)
    assert inc["reference"] == FALLBACK
    assert initiating_texts(inc) == [line.rstrip("\n")]


# A rule that is a failure only beside a generic fatal line
# (conditions.requires_rule naming the role:fallback rule) reports that
# line's failure: vLLM's engine monitor line after the exception the engine
# core raised. The exception leads the rule's incident.
ENGINE_ERROR = """\
Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 701, in run_engine_core
    raise ValueError(f"Unsupported image size {size}")
ValueError: Unsupported image size (0, 0)
ERROR 05-02 11:20:07 [core_client.py:564] Engine core proc EngineCore_0 died unexpectedly, shutting down client.
"""


def test_the_required_fatal_line_leads_the_rule_that_requires_it(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, ENGINE_ERROR)
    assert inc["rule"] == "vllm-engine-monitor-died"
    assert initiating_texts(inc)[0] == "ValueError: Unsupported image size (0, 0)"


def test_an_exception_after_a_ctrl_c_does_not_lead_the_rule_that_requires_one(faultline_bin, validate, tmp_path):
    # What a process prints while a person's Ctrl-C stops it is that stop's
    # doing, for the rule that requires a fatal line as for the fallback.
    inc = first_incident(faultline_bin, validate, tmp_path, "KeyboardInterrupt\n" + ENGINE_ERROR)
    assert "ValueError: Unsupported image size (0, 0)" not in initiating_texts(inc)


# torchrun's ChildFailedError summary lists the other failures first and the
# one it observed first under "Root Cause (first observed failure):".
SUMMARY = """\
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2025-01-14_10:22:31
  host      : gpu-node-3
  rank      : 5 (local_rank: 1)
  exitcode  : 1 (pid: 4402)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2025-01-14_10:22:31
  host      : gpu-node-3
  rank      : 4 (local_rank: 0)
  exitcode  : 1 (pid: 4401)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================
"""


def test_the_summary_root_cause_entry_names_the_rank(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, SUMMARY)
    assert inc["rule"] == "torch-child-failed"
    assert inc["initiating"]["rank"] == 4


# Python's returncode of a child that a signal killed is minus the signal:
# DIGITS logs "<task> task failed with error code %d" with it, other
# wrappers "exit code %d"; -9 is SIGKILL, most often the OOM killer.
@pytest.mark.parametrize("line", [
    "2017-03-01 10:12:44 [20170301-101010-5e2a] [ERROR] Train Caffe Model task failed with error code -9",
    "Command failed with exit code -9 (exit code: -9)",
])
def test_a_child_killed_by_signal_9_is_a_sigkill(faultline_bin, validate, tmp_path, line):
    text = "Iteration 0, Testing net (#0)\nTest net output #0: loss = 18.4677\n" + line + "\n"
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["rule"] == "process-sigkilled"
    assert initiating_texts(inc) == [line]


def test_another_signal_as_a_returncode_is_not_a_sigkill(faultline_bin, validate, tmp_path):
    text = "Command failed with exit code -11 (exit code: -11)\n"
    assert all(i["rule"] != "process-sigkilled" for i in incidents(faultline_bin, validate, tmp_path, text))


def test_a_bare_killed_in_markdown_emphasis_is_a_sigkill(faultline_bin, validate, tmp_path):
    # A shell's "Killed" as a forum post sets it in bold.
    text = "iter 144: total-loss 0.5882\n\n**Killed**\n"
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["rule"] == "process-sigkilled"


def test_an_nccl_error_warning_is_a_fatal_line(faultline_bin, validate, tmp_path):
    # NCCL's WARN("Error : ...") lines come right before it returns an
    # error code (graph/rings.cc); the caller's traceback is cut before its
    # exception.
    text = ("node017:1234:1234 [3] graph/rings.cc:64 NCCL WARN Error : ring 0 does not contain rank 3\n"
            "  File \"/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py\", "
            "line 3439, in barrier\n"
            "    work = default_pg.barrier(opts=opts)\n")
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["reference"] == FALLBACK
    assert "NCCL WARN Error : ring 0" in initiating_texts(inc)[0]


# A wrapper's "failed with exit code N" / "failed with error code N" with
# another status than SIGKILL's: the failure is the fallback's, with the
# signal the status means (-N as Python's returncode, 128+N as a shell's).
@pytest.mark.parametrize("line,signal", [
    ("Command failed with exit code -11 (exit code: -11)", "SIGSEGV"),
    ("2017-03-01 10:12:44 [20170301-101010-5e2a] [ERROR] Train Caffe Model task failed with error code -7", "SIGBUS"),
    ("Command failed with exit code 134", "SIGABRT"),
    ("Command failed with exit code 1", None),
])
def test_a_failed_with_exit_code_report_carries_its_signal(faultline_bin, validate, tmp_path, line, signal):
    inc = first_incident(faultline_bin, validate, tmp_path, "step 3 loss 2.1\n" + line + "\n")
    assert inc["reference"] == FALLBACK
    assert initiating_texts(inc) == [line]
    assert inc["initiating"]["evidence"][0].get("fields", {}).get("exit_signal") == signal


# A process reported dead of SIGTERM (a shell's 143, Python's and the
# launchers' -15) was told to stop from outside: the termination family,
# with who sent the signal as the missing fact, not a launcher summary or
# no incident. Lines as torchrun (elastic/multiprocessing/api.py), DeepSpeed
# (launcher/launch.py's sigkill_handler), CPython's CalledProcessError and
# vLLM's worker monitor print them.
SIGTERM_EXITS = [
    "[2024-06-25 10:11:12,345] torch.distributed.elastic.multiprocessing.api: [ERROR] failed "
    "(exitcode: -15) local_rank: 0 (pid: 5343) of binary: /opt/conda/bin/python",
    "[2023-05-20 12:09:28,634] [ERROR] [launch.py:434:sigkill_handler] ['/usr/bin/python3', '-u', "
    "'main.py', '--local_rank=0'] exits with return code = -15",
    "subprocess.CalledProcessError: Command 'sleep 5' died with <Signals.SIGTERM: 15>.",
    "ERROR 07-13 02:56:30 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 382811 died, exit code: -15",
]


@pytest.mark.parametrize("line", SIGTERM_EXITS)
def test_a_lone_sigterm_exit_is_a_termination(faultline_bin, validate, tmp_path, line):
    inc = first_incident(faultline_bin, validate, tmp_path, line + "\n")
    assert inc["reference"] == "Graceful Shutdown Missing", inc["reference"]
    assert inc["rule"] == "sigterm-received"
    assert any("who sent the SIGTERM" in f for f in inc["missing_facts"]), inc["missing_facts"]


def test_a_lone_exit_code_143_gets_an_incident(faultline_bin, validate, tmp_path):
    # kubectl exec's report of a container process that SIGTERM ended.
    inc = first_incident(faultline_bin, validate, tmp_path, "command terminated with exit code 143\n")
    assert inc["reference"] in ("Missing Signal Handler", "Graceful Shutdown Missing")


def test_a_worker_killed_after_an_exception_is_its_collateral(faultline_bin, validate, tmp_path):
    # vllm-project/vllm#6145: the engine's assertion, then its worker
    # monitor reports the workers it terminated while shutting down.
    text = ("[rank0]: AssertionError: 32768 is not divisible by 3\n\n"
            "ERROR 07-13 02:56:30 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 382811 "
            "died, exit code: -15\n")
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["reference"] == FALLBACK
    assert initiating_texts(inc) == ["[rank0]: AssertionError: 32768 is not divisible by 3"]


def test_torchruns_sibling_teardown_is_no_termination(faultline_bin, validate, tmp_path):
    # torchrun's summary lists the siblings it terminated (exitcode -15)
    # beside the root cause, a worker that exited 1.
    text = """\
torch.distributed.elastic.multiprocessing.errors.ChildFailedError: 
============================================================
/kaggle/working/OmniVoice/omnivoice/train_distill.py FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2026-04-07_10:16:50
  host      : fd13d1440021
  rank      : 0 (local_rank: 0)
  exitcode  : -15 (pid: 2909)
  error_file: <N/A>
  traceback : Signal 15 (SIGTERM) received by PID 2909
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-04-07_10:16:50
  host      : fd13d1440021
  rank      : 1 (local_rank: 1)
  exitcode  : 1 (pid: 2910)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================
"""
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["reference"] != "Graceful Shutdown Missing"


# CPython's CalledProcessError is an exception line and its exit status at
# once: the status says what the command died of (139: SIGSEGV).
@pytest.mark.parametrize("line,signal", [
    ("subprocess.CalledProcessError: Command '['/opt/conda/pkgs/cudatoolkit-dev/cuda_11.2.2_460.32.03_linux.run', '--silent', "
     "'--toolkit', '--override']' returned non-zero exit status 139.", "SIGSEGV"),
    ("subprocess.CalledProcessError: Command './runtasks -n 8 spin_between_run_calls' returned "
     "non-zero exit status 139.", "SIGSEGV"),
    ("subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.", None),
])
def test_a_called_process_errors_status_is_its_exit_signal(faultline_bin, validate, tmp_path, line, signal):
    inc = first_incident(faultline_bin, validate, tmp_path, line + "\n")
    assert inc["reference"] == FALLBACK
    assert initiating_texts(inc) == [line]
    assert inc["initiating"]["evidence"][0].get("fields", {}).get("exit_signal") == signal
    assert (f"Exit status: {signal}" in inc["explanation"]) == (signal is not None)


# PyTorch's NCCL error ends with "Last error:" and NCCL's own last warning
# (ncclGetLastError) on the next line: NVIDIA/nccl#1410 (a rank's
# traceback), NVIDIA/nccl#1247 (vLLM's Ray worker prefix). The next line
# says what failed, so it is the fallback's evidence (detail_next_line).
# The build prefix of #1247's first line is a neutral /opt/ one.
LAST_ERROR = """\
[rank7]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5
[rank7]: ncclUnhandledCudaError: Call to CUDA function failed.
[rank7]: Last error:
[rank7]: Cuda failure 1 'invalid argument'
"""
RAY_LAST_ERROR = """\
(RayWorkerVllm pid=7602) ERROR 04-07 00:57:46 ray_utils.py:45] torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1333, internal error - please report this issue to the NCCL developers, NCCL version 2.18.6
(RayWorkerVllm pid=7602) ERROR 04-07 00:57:46 ray_utils.py:45] ncclInternalError: Internal check failed.
(RayWorkerVllm pid=7602) ERROR 04-07 00:57:46 ray_utils.py:45] Last error:
(RayWorkerVllm pid=7602) ERROR 04-07 00:57:46 ray_utils.py:45] Attribute busid of node nic not found
"""


def test_the_line_after_last_error_is_the_fallbacks_evidence(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, LAST_ERROR)
    assert inc["reference"] == FALLBACK
    assert inc["initiating"]["rank"] == 7
    detail = [e for e in inc["initiating"]["evidence"] if "Cuda failure 1" in e["text"]]
    assert [e["line"] for e in detail] == [4], initiating_texts(inc)
    assert not any(t.endswith("Last error:") for t in initiating_texts(inc))


def test_the_line_after_last_error_keeps_the_prefixed_lines_time(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, RAY_LAST_ERROR)
    assert inc["reference"] == FALLBACK
    detail = [e for e in inc["initiating"]["evidence"] if e["text"].endswith("Attribute busid of node nic not found")]
    assert [e["line"] for e in detail] == [4], initiating_texts(inc)
    assert detail[0]["time"].endswith("04-07T00:57:46.000000Z")


def test_last_error_at_the_end_of_the_log_stays_on_its_own_line(faultline_bin, validate, tmp_path):
    cut = LAST_ERROR.rsplit("[rank7]: Cuda", 1)[0]
    inc = first_incident(faultline_bin, validate, tmp_path, cut)
    assert inc["reference"] == FALLBACK
    assert "[rank7]: Last error:" in initiating_texts(inc)


# A batch output's traceback names no rank; srun's report of the one task
# that exited with an error status after it does (slurm's launch.c prints
# "<node>: task <N>: Exited with exit code <S>"; ComputationalRadiationPhysics/
# picongpu#198 quotes the range form "tasks 10-11"), so the exception is that
# task's error.
BATCH_TRACEBACK = """\
Traceback (most recent call last):
  File "/home/pku0016/hw2/align-anything/align_anything/utils/template_registry.py", line 30, in get_template_class
    raise ValueError(f"Template '{template_name}' not found.")
ValueError: Template 'None' not found.
"""


def test_a_rankless_exception_takes_the_rank_of_the_task_srun_reports(faultline_bin, validate, tmp_path):
    text = BATCH_TRACEBACK + "srun: error: taurusi2031: task 10: Exited with exit code 1\n"
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["reference"] == FALLBACK
    assert initiating_texts(inc)[0] == "ValueError: Template 'None' not found."
    assert (inc["initiating"]["rank"], inc["initiating"]["host"]) == (10, "taurusi2031")


def test_a_rankless_exception_stays_rankless_when_several_tasks_failed(faultline_bin, validate, tmp_path):
    for reports in ("srun: error: taurusi2031: tasks 10-11: Exited with exit code 1\n",
                    "srun: error: taurusi2031: task 10: Exited with exit code 1\n"
                    "srun: error: taurusi2032: task 11: Exited with exit code 1\n"):
        inc = first_incident(faultline_bin, validate, tmp_path, BATCH_TRACEBACK + reports)
        assert initiating_texts(inc)[0] == "ValueError: Template 'None' not found."
        assert inc["initiating"]["rank"] is None, reports


@pytest.mark.parametrize("line", ["SystemExit: 0\n", "(SingleAgentEnvRunner pid=2218) SystemExit: 1\n"])
def test_a_clean_exit_or_a_ray_workers_shutdown_is_no_failure(faultline_bin, validate, tmp_path, line):
    # SystemExit: 0 is a clean exit; Ray prints SystemExit: 1 for each worker
    # it shuts down (raise_sys_exit_with_custom_error_message).
    assert incidents(faultline_bin, validate, tmp_path, line) == []


def test_the_exception_under_hydras_line_initiates(faultline_bin, validate, tmp_path):
    text = ("Error executing job with overrides: ['main.steps=basic_cleaning', 'modeling.random_seed=42']\n"
            "Traceback (most recent call last):\n"
            "  File \"main.py\", line 65, in go\n"
            "    _ = mlflow.run(\n"
            "mlflow.exceptions.ExecutionException: Run (ID '8e8d') failed\n")
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["reference"] == FALLBACK
    assert any("ExecutionException" in t for t in initiating_texts(inc))


# PyTorch's exception whose message names the watchdog's timeout, hard-wrapped
# where a thread quoted it (hpcaitech/ColossalAI#2967's shape): the timeout's
# rule explains the failure, and its incident shows the exception line that
# carries the message first.
WRAPPED = ("RuntimeError: NCCL communicator was aborted on rank 0.  Original reason for failure was: "
           "[Rank 0] Watchdog caught collective \n"
           "operation timeout: WorkNCCL(SeqNum=691, OpType=ALLGATHER, Timeout(ms)=1800000) ran for 1801053 "
           "milliseconds before timing out.\n")


def test_the_exception_that_carries_a_catalog_message_heads_its_evidence(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, WRAPPED)
    assert inc["rule"] == "nccl-watchdog-timeout"
    assert initiating_texts(inc) == WRAPPED.splitlines()


def test_a_terminate_line_heads_its_watchdog_message(faultline_bin, validate, tmp_path):
    text = ("terminate called after throwing an instance of 'c10::DistBackendError'\n"
            "  what():  [PG 0 Rank 6] Process group watchdog thread terminated with exception: [Rank 6] "
            "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, "
            "NumelOut=1, Timeout(ms)=600000) ran for 600010 milliseconds before timing out.\n")
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["rule"] == "nccl-watchdog-timeout"
    assert initiating_texts(inc)[0] == "terminate called after throwing an instance of 'c10::DistBackendError'"


def test_an_exception_whose_message_ends_with_a_colon_goes_on_to_the_next_line(faultline_bin, validate, tmp_path):
    # transformers' lazy import over the import error (a flash-attn build
    # against another torch, as threads quote it).
    text = ("RuntimeError: Failed to import transformers.models.llama.modeling_llama because of the following "
            "error (look up to see its traceback):\n"
            "/usr/local/lib/python3.10/dist-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: "
            "undefined symbol: _ZN3c104cuda9SetDeviceEi\n")
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["reference"] == FALLBACK
    assert initiating_texts(inc) == text.splitlines()


# An exception whose class is named for no Error/Exception suffix is read off
# its traceback's header (the python_traceback signal): the exception line
# after the frames is the fatal line. Momentum-GS issue 24: a view loader's
# queue timing out on rank 1 of a distributed 3DGS training.
QUEUE_EMPTY = """\
[rank1]: Traceback (most recent call last):
[rank1]:   File "train.py", line 224, in training
[rank1]:     viewpoint_cam = train_view_loader.get_view()
[rank1]:   File "/home/dhw/anaconda3/envs/momentum-gs/lib/python3.8/queue.py", line 178, in get
[rank1]:     raise Empty
[rank1]: _queue.Empty
"""
# ylogx/aesthetics issue 2: a process pool's worker died under tqdm.
BROKEN_POOL = """\
Traceback (most recent call last):
  File "C:\\Users\\dangz\\Anaconda3\\lib\\concurrent\\futures\\_base.py", line 405, in result
    return self.__get_result()
  File "C:\\Users\\dangz\\Anaconda3\\lib\\concurrent\\futures\\_base.py", line 357, in __get_result
    raise self._exception
concurrent.futures.process.BrokenProcessPool: A process in the process pool was terminated abruptly while the future was running or pending.
"""


@pytest.mark.parametrize("text,line,exception", [
    (QUEUE_EMPTY, "[rank1]: _queue.Empty", "_queue.Empty"),
    (BROKEN_POOL, BROKEN_POOL.splitlines()[-1], "concurrent.futures.process.BrokenProcessPool"),
])
def test_an_exception_class_without_a_suffix_is_a_fatal_line(faultline_bin, validate, tmp_path, text, line,
                                                             exception):
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["reference"] == FALLBACK
    assert initiating_texts(inc) == [line]
    ev = inc["initiating"]["evidence"][0]
    assert ev["line"] == len(text.splitlines())
    assert ev["fields"]["exception"] == exception
    assert "raised_at" in ev["fields"], ev["fields"]


def test_a_header_after_a_progress_bar_takes_its_frames_rank(faultline_bin, validate, tmp_path):
    # As the issue shows it: tqdm's last redraw had no newline, so rank 1's
    # header ends the bar's line.
    bar = ("Training progress:   0%|          | 70/60000 [00:10<2:02:41,  8.14it/s, Loss=2.6933233]"
           "[rank1]: Traceback (most recent call last):\n")
    text = bar + QUEUE_EMPTY.split("\n", 1)[1]
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert initiating_texts(inc) == ["[rank1]: _queue.Empty"]
    assert inc["initiating"]["rank"] == 1


def test_an_exception_the_header_and_its_own_signal_read_is_one_line(faultline_bin, validate, tmp_path):
    inc = incidents(faultline_bin, validate, tmp_path, TRITON_PROBE_FRAMES)
    assert [i["reference"] for i in inc] == [FALLBACK]
    assert initiating_texts(inc[0]) == ["ModuleNotFoundError: No module named 'triton'"]


# PaddleOCR issue 10557: the queue's timeout was handled, and the exception
# raised while handling it is the one the thread ended on.
CHAINED = """\
Traceback (most recent call last):
  File "/opt/conda/envs/py38/lib/python3.8/multiprocessing/queues.py", line 108, in get
    raise Empty
_queue.Empty

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/opt/conda/envs/py38/lib/python3.8/site-packages/paddle/fluid/dataloader/dataloader_iter.py", line 631, in _get_data
    raise RuntimeError("DataLoader {} workers exit unexpectedly, " \\
RuntimeError: DataLoader 1 workers exit unexpectedly, pids: 4706
"""


def test_a_chained_traceback_ends_on_its_last_exception(faultline_bin, validate, tmp_path):
    inc = incidents(faultline_bin, validate, tmp_path, CHAINED.replace("RuntimeError", "__main__.Boom"))
    assert [i["reference"] for i in inc] == [FALLBACK]
    assert initiating_texts(inc[0]) == ["__main__.Boom: DataLoader 1 workers exit unexpectedly, pids: 4706"]


@pytest.mark.parametrize("end", ["[rank1]: KeyboardInterrupt", "[rank1]: SystemExit: 0", "[rank1]: SystemExit",
                                 "[rank1]: SystemExit: None"])
def test_a_traceback_ending_in_an_interrupt_or_a_clean_exit_is_no_failure(faultline_bin, validate, tmp_path, end):
    text = QUEUE_EMPTY.replace("[rank1]: _queue.Empty", end)
    assert incidents(faultline_bin, validate, tmp_path, text) == []


@pytest.mark.parametrize("before", [
    "[rank1]: [2025-08-29 12:21:03,962] WARNING: the view loader timed out, retrying\n",
    "[rank1]: Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f4972feac10>\n",
])
def test_a_suffixless_exception_caught_or_ignored_is_no_failure(faultline_bin, validate, tmp_path, before):
    assert incidents(faultline_bin, validate, tmp_path, before + QUEUE_EMPTY) == []


def test_a_traceback_cut_before_its_exception_line_reads_no_other_line(faultline_bin, validate, tmp_path):
    # The frames end in a log record: no exception line to read.
    text = QUEUE_EMPTY.replace("[rank1]: _queue.Empty", "[rank1]: 2025-08-29 12:21:03 INFO retrying")
    assert incidents(faultline_bin, validate, tmp_path, text) == []


# libstdc++'s verbose terminate handler names the exception's type, then its
# message on the next line (a thread's report of a JSON type mismatch, as
# posted): the what() line says what failed and leads the incident.
TERMINATE_WHAT = """\
sweetjams.club
terminate called after throwing an instance of 'std::runtime_error'
  what():  "type mismatch! call is<type>() before get<type>()" && is<object>()
Aborted
"""


def test_what_line_leads_the_terminate_line_it_goes_on_from(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, TERMINATE_WHAT)
    assert inc["reference"] == FALLBACK
    assert initiating_texts(inc)[:2] == [
        '  what():  "type mismatch! call is<type>() before get<type>()" && is<object>()',
        "terminate called after throwing an instance of 'std::runtime_error'",
    ]


# slurmstepd cancels a step when one of its tasks failed, and srun reports the
# other tasks terminated on the next line: the cancel notice is a report of
# its own, not the head of a message that goes on to srun's line.
STEP_TASK_FAILURE = """\
[2026-04-29T23:36:37.809] error: *** STEP 52222788.0 ON nid002888 CANCELLED AT 2026-04-29T23:36:37 DUE TO TASK FAILURE ***
srun: error: nid002888: tasks 0-57,59-63: Terminated
srun: Force Terminated StepId=52222788.0
"""


def test_exit_report_is_no_message_head(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, STEP_TASK_FAILURE)
    assert inc["reference"] == FALLBACK
    assert "DUE TO TASK FAILURE" in initiating_texts(inc)[0]


# srun ends the rest of a step once one task fails: the kills it reports
# after a task's error exit are its doing, and that task leads. A kill it
# reports first stays the lead, and the exit after it is no explanation.
SRUN_EXIT_THEN_KILLS = """\
srun: error: gpu-a07: task 2: Exited with exit code 1
srun: launch/slurm: _step_signal: Terminating StepId=918273.0
srun: error: gpu-a07: tasks 0-1,3: Killed
srun: error: gpu-a08: tasks 4-7: Killed
"""
SRUN_KILL_THEN_EXIT = """\
srun: error: gpu-a07: task 2: Killed
srun: error: gpu-a07: task 5: Exited with exit code 1
"""


def test_srun_kills_after_a_task_exit_are_its_collateral(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, SRUN_EXIT_THEN_KILLS)
    assert inc["rule"] == "unrecognised-fatal-error", inc["explanation"]
    assert inc["initiating"]["rank"] == 2
    assert "task 2: Exited with exit code 1" in inc["initiating"]["evidence"][0]["text"]
    # srun's kills are no incident of their own (they are the fallback's
    # lines too, a SIGKILL whose sender the exit before them names).
    assert len(diagnose_text(faultline_bin, validate, tmp_path, SRUN_EXIT_THEN_KILLS)) == 1


def test_srun_kill_before_any_task_exit_stays_the_lead(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, SRUN_KILL_THEN_EXIT)
    assert "task 2: Killed" in inc["initiating"]["evidence"][0]["text"], inc["explanation"]


# A traceback cut in its frames at the end of the log (PaddleSeg, as its
# thread posted it): the program raised and the source stops there.
CUT_FRAMES = """\
Traceback (most recent call last):
  File "train.py", line 230, in <module>
    main(args)
  File "/opt/PaddleSeg/paddleseg/core/train.py", line 207, in train
    loss_list = loss_computation(
  File "/opt/PaddleSeg/paddleseg/core/train.py", line 48, in loss_computation
    mixed_loss_list = loss_i(logits, labels)
"""


def test_traceback_cut_in_its_frames_at_the_end_leads(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, CUT_FRAMES)
    assert inc["reference"] == FALLBACK
    assert initiating_texts(inc) == ["Traceback (most recent call last):"]
    assert inc["initiating"]["evidence"][0]["fields"]["cut"] == "in its frames"


@pytest.mark.parametrize("above", ["Exception in thread Thread-1:", "Process Process-2:",
                                   "2024-06-07T11:43:12.483401697Z Process SpawnProcess-3:"])
def test_a_cut_traceback_of_a_thread_or_child_is_not_the_jobs(faultline_bin, validate, tmp_path, above):
    # threading's and multiprocessing's lines above the traceback of an
    # exception that ended that thread or child process (DeepLabCut's input
    # thread at max_iter, a WebUI's training child after it finished).
    text = CUT_FRAMES
    if above.startswith("2024"):
        text = "".join("2024-06-07T11:43:12.485653172Z " + l + "\n" for l in CUT_FRAMES.splitlines())
    assert diagnose_text(faultline_bin, validate, tmp_path, above + "\n" + text) == []


def test_a_cut_traceback_from_a_finalizer_is_dropped(faultline_bin, validate, tmp_path):
    # vLLM's engine destructor at interpreter exit: an exception in __del__
    # is printed and dropped, never raised.
    text = ('Traceback (most recent call last):\n'
            '  File "/opt/vllm/vllm/engine/llm_engine.py", line 520, in __del__\n'
            '  File "/opt/vllm/vllm/executor/uniproc_executor.py", line 71, in shutdown\n')
    assert diagnose_text(faultline_bin, validate, tmp_path, text) == []


def test_a_cut_traceback_after_a_launcher_exit_report_does_not_lead(faultline_bin, validate, tmp_path):
    # accelerate's launcher raising after torchrun reported the worker's
    # exit: the report leads, the launcher's cut traceback adds nothing.
    text = ("[2024-11-26 02:04:31,514] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -11) "
            "local_rank: 1 (pid: 750662) of binary: /opt/anaconda3/envs/hallo/bin/python\n"
            'Traceback (most recent call last):\n'
            '  File "/opt/anaconda3/envs/hallo/bin/accelerate", line 8, in <module>\n'
            '    sys.exit(main())\n')
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert "failed (exitcode: -11)" in initiating_texts(inc)[0]


# Python 2's report of an exception raised in __del__ at exit
# (PyErr_WriteUnraisable), on one line (pico-python's demo).
PY2_UNRAISABLE = ("Exception TypeError: \"'NoneType' object is not callable\" in <bound method PS6000.__del__ of "
                  "<ps6000.PS6000 object at 0x07279E90>> ignored\n")


def test_python2_unraisable_exception_is_dropped(faultline_bin, validate, tmp_path):
    assert diagnose_text(faultline_bin, validate, tmp_path, PY2_UNRAISABLE) == []


def test_an_exception_after_a_python2_unraisable_one_still_leads(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, PY2_UNRAISABLE + "ValueError: bad shape (3, 4)\n")
    assert inc["reference"] == FALLBACK
    assert initiating_texts(inc) == ["ValueError: bad shape (3, 4)"]
