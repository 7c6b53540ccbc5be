"""Hangs the hang endings audit (tests/cli/endings, hg-*.log) and the
corpus's work cases showed with no incident, read where the printing
programs write them (issue #18: a job that failed never gets No incident):

- The thread-dump recipe over sys._current_frames() and
  traceback.extract_stack() (python-manhole's dump_stacktraces, and the
  signal handlers copied from it) writes '######### ProcessID=N,
  ThreadID=N #########' or '# ThreadID: N', then each frame as 'File:
  "x.py", line N, in f', outermost first. With no error and no progress
  after it, it is a stack dump of a stuck process like faulthandler's and
  py-spy's, and its last frames are where the process was.
- nccl-tests (src/common.cu) prints its column header once every
  communicator is up, then one row per size, and waits with no timeout: a
  log that ends in the header stopped in the first collective. A header
  followed by any line of the run went on, and a log cut in NCCL's init
  lines reads the same whether the run hung or the poster trimmed it, so
  neither is a hang.
- A stack dump followed by a completion line was of a live process:
  pytest's faulthandler_timeout dumps a slow test's threads and lets it
  finish ('1 passed in 4.00s').
"""
from conftest import diagnose_text, initiating_texts

HANG = "training-silent-hang"

# python-manhole's dump_stacktraces: a blank line, the thread's header, the
# frames outermost first with each frame's source line under it.
MANHOLE = """\

######### ProcessID=4121, ThreadID=140234120345344 #########
File: "/opt/conda/lib/python3.10/threading.py", line 973, in _bootstrap
  self._bootstrap_inner()
File: "/opt/train/train.py", line 88, in main
  trainer.fit()
File: "/opt/train/trainer.py", line 240, in fit
  self.sync()
File: "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 2050, in barrier
  work.wait()
#############################################

"""

# The signal-handler form of the same recipe: '# ThreadID: N' over the frames.
THREAD_ID = """\
# ThreadID: 139912304170816
File: "/opt/train/train.py", line 12, in <module>
  main()
File: "/opt/train/train.py", line 9, in main
  batch = next(loader)
File: "/opt/conda/lib/python3.10/multiprocessing/queues.py", line 113, in get
  if not self._poll(timeout):
"""

# nccl-tests' banner, device list and column header, as all_reduce_perf
# prints them before its first result row.
NCCL_TESTS = """\
# nThread 1 nGpus 2 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  40211 on     node07 device  0 [0x17] NVIDIA A100-SXM4-80GB
#  Rank  1 Group  0 Pid  40211 on     node07 device  1 [0x31] NVIDIA A100-SXM4-80GB
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
"""
ROW = ("           8             2     float     sum      -1    19.90    0.00    0.00      0    18.96    0.00    "
       "0.00      0\n")
INIT = """\
node07:40211:40211 [0] NCCL INFO Bootstrap : Using eth0:10.1.4.7<0>
NCCL version 2.21.5+cuda12.4
node07:40211:40225 [1] NCCL INFO NET/IB : No device found.
"""

FAULTHANDLER_TIMEOUT = """\
Timeout (0:05:00)!
Thread 0x00007f2c3b5f4740 (most recent call first):
  File "/opt/tests/test_loader.py", line 31 in test_epoch
  File "/opt/conda/lib/python3.10/site-packages/_pytest/python.py", line 194 in pytest_pyfunc_call
"""


def rules(found):
    return [i["rule"] for i in found]


def test_manhole_dump_is_a_hang_led_by_its_innermost_frame(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, MANHOLE)
    assert found and found[0]["rule"] == HANG, rules(found)
    assert "in barrier" in initiating_texts(found[0])[0], initiating_texts(found[0])


def test_thread_id_recipe_dump_is_a_hang(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, THREAD_ID)
    assert found and found[0]["rule"] == HANG, rules(found)
    assert "in get" in initiating_texts(found[0])[0], initiating_texts(found[0])


def test_nccl_tests_ending_in_its_column_header_is_a_hang(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, "```\n" + NCCL_TESTS + "```\n")
    assert found and found[0]["rule"] == HANG, rules(found)
    assert "(elements)" in initiating_texts(found[0])[0], initiating_texts(found[0])


def test_nccl_tests_with_a_result_row_is_no_hang(faultline_bin, validate, tmp_path):
    assert HANG not in rules(diagnose_text(faultline_bin, validate, tmp_path, NCCL_TESTS + ROW))


def test_nccl_tests_header_with_a_line_after_it_is_no_hang(faultline_bin, validate, tmp_path):
    text = NCCL_TESTS + "node07:40211:40211 [0] NCCL INFO Launch mode Parallel\n"
    assert HANG not in rules(diagnose_text(faultline_bin, validate, tmp_path, text))


def test_nccl_tests_cut_in_init_is_no_hang(faultline_bin, validate, tmp_path):
    text = NCCL_TESTS.split("#\n#  ")[0] + INIT
    assert HANG not in rules(diagnose_text(faultline_bin, validate, tmp_path, text))


def test_dump_before_a_passing_test_session_is_no_hang(faultline_bin, validate, tmp_path):
    text = FAULTHANDLER_TIMEOUT + "1 passed in 301.20s (0:05:01)\n"
    assert HANG not in rules(diagnose_text(faultline_bin, validate, tmp_path, text))


def test_dump_with_no_end_after_it_is_still_a_hang(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, FAULTHANDLER_TIMEOUT)
    assert found and found[0]["rule"] == HANG, rules(found)
