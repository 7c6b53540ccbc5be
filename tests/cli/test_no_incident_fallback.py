"""Failed jobs that got no incident at all because the line that says how
the process ended is in words no signal read (issue #18, "a job that failed
never gets No incident"), each read where the program that prints it writes
it:

- A signal whose default action ends the process without a crash of its
  own (SIGHUP, SIGUSR1/2, SIGXCPU, SIGXFSZ, SIGALRM, SIGQUIT, SIGTRAP, ...)
  in the C library's words (strsignal: "User defined signal 2", "CPU time
  limit exceeded", macOS's "Cputime limit exceeded: 24"), as bash's job
  report ("run.sh: line 3: 15330 CPU time limit exceeded python3 ...", the
  status padded to a column), dash's bare status line and srun's report of
  a task ("srun: error: node: task 0: User defined signal 2") print it.
  The job got such a signal from outside (a closed session, a scheduler's
  warning signal with no handler installed, a CPU-time limit) and ended.
- GNU time's report of the command it ran (time.c, summarize): "Command
  exited with non-zero status N", "Command terminated by signal N".
- TensorFlow's TPU ShutdownHook (session_support.py) logs "ShutdownHook:
  lame workers found: ..." when a worker stops answering its heartbeat and
  then shuts the workers down or resets the computation: a job whose log
  ends there never came back; one whose steps go on after it survived it.
- CPython's interpreter that could not start the program: the script it
  cannot open (Modules/main.c: "<python>: can't open file '<path>': [Errno
  N] ...", exit status 2) and runpy's "<python>: No module named <module>"
  for python -m; torchrun's summary after it only reports exit code 2.
- glibc's own fatal report before it aborts ("Fatal glibc error: ...": its
  internal assertions since 2.37, the CPU's x86-64 level at start-up).
- assert()'s report in the other C libraries' words: the Microsoft C
  runtime's "Assertion failed: <expr>, file <file>, line <N>" (then abort,
  exit status 3, and no shell on Windows to report it) and Apple's and the
  BSDs' "Assertion failed: (<expr>), function <f>, file <file>, line <N>.".
- The dynamic loader that cannot load a program's shared library (glibc's
  ld.so: "<prog>: error while loading shared libraries: <lib>: ...", exit
  status 127): the program never ran.
- CPython's faulthandler on Windows ("Windows fatal exception: access
  violation", "code 0xc..."): a native crash, where no shell reports one.
- CPython's fatal error since 3.9 names the failing function first, in
  lower case ("Fatal Python error: init_import_site: ...").
- ROCm's runtime reporting a hardware exception ("HW Exception by GPU
  node-N (Agent handle: ...) reason :GPU Hang") before it aborts.
- glibc's malloc_printerr on a corrupted bin list ("malloc(): unsorted
  double linked list corrupted", "corrupted double-linked list"), and its
  frame before 2.26: "*** Error in `<prog>': <message>: 0x<addr> ***".
- Open MPI's default error handler, MPI_ERRORS_ARE_FATAL: "*** An error
  occurred in MPI_<call>" over the error and "*** MPI_ERRORS_ARE_FATAL
  (processes in this communicator will now abort,", then the abort.
- bash's job table for a background job: "[1]   Exit 3   <command>" for a
  non-zero exit (a clean one is "Done"), the signal's words for a kill.
- A catalog line whose rule names a failure only beside another rule's line
  (conditions' requires_rule) that the logs lack is no claim of that rule:
  "EOFError: Ran out of input" is an empty checkpoint only where a resume
  is in the logs, and elsewhere the uncaught exception it is.
"""
import pytest

from conftest import diagnose_text, first_incident, leading_incident

FALLBACK = "unrecognised-fatal-error"

# facebookincubator/submitit#1793: srun's report of a task SIGUSR2 ended
# (seff's and sacct's lines under it as posted: the batch step FAILED 12:0).
SUBMITIT_SIGUSR2 = """\
srun: error: arc-c309: task 0: User defined signal 2
Job ID: 10126536
Cluster: arc
State: FAILED (exit code 140)
Cores: 1
CPU Utilized: 00:00:01
"""

# online-judge-tools/oj#452: GNU time under a command that died (perl's die).
GNU_TIME_EXIT = """\
hoge at -e line 1.
Command exited with non-zero status 255
4840
"""

# The real-world corpus's t5-japanese-1 (its work part): a preemptible TPU's
# worker went lame and the training froze there.
TPU_LAME = """\
I0902 03:33:36.516501 140070334211904 basic_session_run_hooks.py:260] loss = 1.109375, step = 488600 (45.410 sec)
INFO:tensorflow:global_step/sec: 2.20221
I0902 03:33:36.518121 140070334211904 tpu_estimator.py:2402] global_step/sec: 2.20221
INFO:tensorflow:Outfeed finished for iteration (1862, 53)
I0902 03:34:01.018308 140066416998144 tpu_estimator.py:289] Outfeed finished for iteration (1862, 53)
INFO:tensorflow:ShutdownHook: lame workers found: HeartbeatManager(/job:worker/replica:0/task:0/device:CPU:0)
"""


# fdbtrs/IDiff-Face#6: torchrun started a script path that does not exist.
TORCHRUN_NO_SCRIPT = """\
/usr/bin/python3: can't open file 'train_jonas.py': [Errno 2] No such file or directory
/usr/bin/python3: can't open file 'train_jonas.py': [Errno 2] No such file or directory
ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 2) local_rank: 0 (pid: 1218) of binary: /usr/bin/python3
Traceback (most recent call last):
  File "/opt/conda/lib/python3.7/runpy.py", line 193, in _run_module_as_main
    "__main__", mod_spec)
  File "/opt/conda/lib/python3.7/site-packages/torch/distributed/launcher/api.py", line 247, in launch_agent
    failures=result.failures,
torch.distributed.elastic.multiprocessing.errors.ChildFailedError: 
"""

# martiansideofthemoon/squash-generation#27: a job script's python -m under
# sudo found another interpreter, without torch.
RUNPY_NO_MODULE = """\
$ sudo bash schedule_gpt.sh
/usr/bin/python: No module named torch.distributed
"""

# A glibc internal assertion as glibc 2.37+ prints it (malloc's check of the
# heap's top chunk).
GLIBC_FATAL = """\
Fatal glibc error: malloc.c:2371 (sysmalloc): assertion failed: (old_top == initial_top (av) && old_size == 0) || ((unsigned long) (old_size) >= MINSIZE && prev_inuse (old_top) && ((unsigned long) old_end & (pagesize - 1)) == 0)
"""


# ggml-org/llama.cpp#3832: a Debug build of llama.cpp's finetune on Windows
# (RTX 3090) ends in the C runtime's assert.
MSVC_ASSERT = """\
Assertion failed: ggml_allocr_is_measure(alloc) || !view->buffer || view->buffer->backend == alloc->buffer->backend, file C:\\folder\\folder\\folder\\folder\\folder\\folder\\llama.cpp\\ggml-alloc.c, line 389
"""

# macOS: the assert, then zsh's report of the abort it raised; the assert
# says what failed.
BSD_ASSERT = """\
Assertion failed: (ctx), function digest_update, file /BuildRoot/Library/Caches/com.apple.xbs/Sources/boringssl/boringssl-109.1.6/apple/crypto/digests.c, line 49.
[1]    1204 abort      mix archive.install
"""


# AlexeyAB/darknet#4823: training on Colab, after some iterations.
LOADER_CUDART = """\
./darknet: error while loading shared libraries: libcudart.so.10.0: cannot open shared object file: No such file or directory
"""

# pytorch/pytorch#162333: the CUDA 13.0 nightly's torch.cuda.is_available()
# on Windows.
WINDOWS_FAULTHANDLER = """\
>>> torch.cuda.is_available()
Windows fatal exception: access violation

Current thread 0x00001980 (most recent call first):
  File "C:\\Jenkins\\Miniconda3\\envs\\py310\\lib\\site-packages\\torch\\cuda\\__init__.py", line 182 in is_available
  File "<stdin>", line 1 in <module>
"""

# RVC-Boss/GPT-SoVITS#142: the interpreter could not import site.py.
PY_FATAL_LOWER = """\
Fatal Python error: init_import_site: Failed to import the site module
Python runtime state: initialized
"""

# ROCm/ROCm#4021: axolotl on MI300X, the queue hung mid-epoch.
ROCR_HW_EXCEPTION = """\
{'loss': 0.4589, 'grad_norm': 1.0493940198290594, 'learning_rate': 5.284132841328413e-06, 'epoch': 1.22}
 41%|####      | 366/903 [5:15:39<6:53:09, 46.16s/it]HW Exception by GPU node-9 (Agent handle: 0x631351bb5a20) reason :GPU Hang
HW Exception by GPU node-9 (Agent handle: 0x64ff272d8ab0) reason :GPU Hang
Aborted (core dumped)
"""

# datalab-to/marker#824, weiliu89/caffe#438 (glibc before 2.26).
MALLOC_BINS = """\
malloc(): unsorted double linked list corrupted
Aborted (core dumped)
"""
MALLOC_OLD_FRAME = """\
I0211 06:21:48.376581 26001 sgd_solver.cpp:138] Iteration 33520, lr = 0.0005
*** Error in `./build/tools/caffe': malloc(): smallbin double linked list corrupted: 0x00007fce87574000 ***
======= Backtrace: =========
/lib/x86_64-linux-gnu/libc.so.6(+0x777e5)[0x7fdbedc927e5]
"""


# horovod/horovod#465: mpirun's ranks could not start the MPI runtime.
OMPI_INIT = """\
*** An error occurred in MPI_Init_thread
*** on a NULL communicator
*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,
***    and potentially your MPI job)
[host1:71142] Local abort before MPI_INIT completed completed successfully,
 but am not able to aggregate error messages, and not able to guarantee that all other processes
 were killed!
"""


# tensorpack/tensorpack#17: a spawned worker on Windows whose parent never
# sent it its pickle (no checkpoint resume anywhere in the log).
SPAWN_EOF = """\
Traceback (most recent call last):
  File "<string>", line 1, in <module>
  File "D:\\Software\\Anaconda\\envs\\py35\\lib\\multiprocessing\\spawn.py", line 106, in spawn_main
    exitcode = _main(fd)
  File "D:\\Software\\Anaconda\\envs\\py35\\lib\\multiprocessing\\spawn.py", line 116, in _main
    self = pickle.load(from_parent)
EOFError: Ran out of input
"""


@pytest.mark.parametrize("text, line", [
    (SPAWN_EOF, "EOFError: Ran out of input"),
    (OMPI_INIT, "*** An error occurred in MPI_Init_thread"),
    (LOADER_CUDART, "error while loading shared libraries: libcudart.so.10.0"),
    (WINDOWS_FAULTHANDLER, "Windows fatal exception: access violation"),
    (PY_FATAL_LOWER, "Fatal Python error: init_import_site"),
    (ROCR_HW_EXCEPTION, "HW Exception by GPU node-9"),
    (MALLOC_BINS, "malloc(): unsorted double linked list corrupted"),
    (MALLOC_OLD_FRAME, "malloc(): smallbin double linked list corrupted"),
    (MSVC_ASSERT, "Assertion failed: ggml_allocr_is_measure(alloc)"),
    (BSD_ASSERT, "Assertion failed: (ctx), function digest_update"),
    (TORCHRUN_NO_SCRIPT, "can't open file 'train_jonas.py'"),
    (RUNPY_NO_MODULE, "No module named torch.distributed"),
    (GLIBC_FATAL, "Fatal glibc error: malloc.c:2371 (sysmalloc)"),
    (SUBMITIT_SIGUSR2, "task 0: User defined signal 2"),
    (GNU_TIME_EXIT, "Command exited with non-zero status 255"),
    (TPU_LAME, "ShutdownHook: lame workers found"),
], ids=["required_rule_absent", "ompi_errors_are_fatal", "loader_cudart", "windows_faulthandler", "python_fatal_error_function_first", "rocr_hw_exception",
       "malloc_bin_list", "malloc_report_before_glibc_2_26", "msvc_assert", "bsd_assert_before_the_abort", "torchrun_script_not_found", "runpy_no_module", "glibc_fatal_assertion", "srun_task_sigusr2", "gnu_time_exit_status", "tpu_lame_workers_at_the_end"])
def test_how_the_process_ended_leads(faultline_bin, validate, tmp_path, text, line):
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=line)


@pytest.mark.parametrize("ending, line", [
    # bash's job report of a script's command (jobs.c pads the status to a
    # column; a status as long as the column leaves one space).
    ("run.sh: line 3: 15330 CPU time limit exceeded python3 train.py", "CPU time limit exceeded"),
    ("train.sh: line 12:  4242 User defined signal 1   python train.py", "User defined signal 1"),
    # dash's bare status; macOS's strsignal (EpistasisLab/tpot#300's title).
    ("Hangup", "Hangup"),
    ("Cputime limit exceeded: 24", "Cputime limit exceeded: 24"),
    ("Trace/breakpoint trap (core dumped)", "Trace/breakpoint trap"),
    ("Command terminated by signal 11", "Command terminated by signal 11"),
    # bash's job table (bash 5.2): a background job's non-zero exit, a kill.
    ("[1]   Exit 3                  python train.py", "Exit 3"),
    ("[2]-  User defined signal 1   python train.py", "User defined signal 1"),
])
def test_shell_signal_words_end_the_job(faultline_bin, validate, tmp_path, ending, line):
    text = "Epoch 3:  41%|####      | 410/1000 [02:10<03:07, 3.14it/s]\n" + ending + "\n"
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=line)


def test_sigusr2_is_named(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, SUBMITIT_SIGUSR2)
    assert "SIGUSR2: a signal the program has no handler for" in inc["explanation"], inc["explanation"]


def test_tpu_lame_workers_then_steps_is_survived(faultline_bin, validate, tmp_path):
    """The ShutdownHook reset the computation and training went on: the
    lame worker did not end the job."""
    text = TPU_LAME + (
        "I0902 03:36:40.112203 140070334211904 basic_session_run_hooks.py:260] "
        "loss = 1.101562, step = 488700 (184.010 sec)\n"
        "I0902 03:39:05.410151 140070334211904 basic_session_run_hooks.py:260] "
        "loss = 1.097656, step = 488800 (145.298 sec)\n")
    incidents = diagnose_text(faultline_bin, validate, tmp_path, text)
    assert all(i["initiating"].get("survived") for i in incidents), incidents


@pytest.mark.parametrize("line", [
    # A C++ exception an older faulthandler reported though the program
    # caught it (bpo-31701 stopped that): no crash.
    "Windows fatal exception: code 0xe06d7363",
    "Hangup detected on controlling terminal",
    "Received SIGUSR1 (User defined signal 1), saving a checkpoint",
    "Command stopped by signal 19",
    "[1]+  Done                    python train.py",
])
def test_signal_words_in_a_sentence_are_no_failure(faultline_bin, validate, tmp_path, line):
    assert diagnose_text(faultline_bin, validate, tmp_path, line + "\n") == []
