"""A stack dump (py-spy dump, faulthandler's dump_traceback_later) taken of
a process that had stopped, with no error line and no progress after it,
names a hang even when the hang detector has no progress lines to time:
the dump's innermost frames (where the process is stuck) are the
evidence. A dump that progress followed was a look at a running job."""

from conftest import diagnose_text

# py-spy dump of a trainer's main thread waiting for a batch (the format of
# py-spy's `dump` command: thread header, then innermost frame first).
PYSPY = """\
Process 3121: python fairseq_cli/train.py --task translation
Python v3.8.13 (/opt/conda/bin/python3.8)

Thread 0x7FA6E7C01740 (idle): "MainThread"
    wait (threading.py:302)
    get (queue.py:170)
    __next__ (fairseq/data/iterators.py:648)
    train (fairseq_cli/train.py:274)
"""
# faulthandler.dump_traceback_later(timeout) firing: "Timeout (h:mm:ss)!"
# and every thread, most recent call first.
FAULTHANDLER = """\
Timeout (0:30:00)!
Thread 0x00007f2c3b5f4740 (most recent call first):
  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 2050 in all_reduce
  File "/workspace/train.py", line 211 in train_step
  File "/workspace/train.py", line 240 in main
"""


def steps(first, last):
    return "".join(f"[2026-11-20 09:{i % 60:02d}:00] step: {i}  loss:  2.{i:04d}  memory: 44.10GiB(55.13%)  "
                   f"tps: 3,101\n" for i in range(first, last))


def incidents(faultline_bin, validate, tmp_path, text):
    return diagnose_text(faultline_bin, validate, tmp_path, text)


def lines(inc):
    return [e["text"] for e in inc["initiating"]["evidence"]]


def test_pyspy_dump_alone_is_a_hang_with_the_stuck_frame(faultline_bin, validate, tmp_path):
    inc = incidents(faultline_bin, validate, tmp_path, PYSPY)
    assert inc and inc[0]["rule"] == "training-silent-hang", [i["rule"] for i in inc]
    assert any("wait (threading.py:302)" in t for t in lines(inc[0])), lines(inc[0])


def test_faulthandler_dump_after_the_last_step_is_a_hang(faultline_bin, validate, tmp_path):
    inc = incidents(faultline_bin, validate, tmp_path, steps(1, 6) + FAULTHANDLER)
    assert inc and inc[0]["rule"] == "training-silent-hang", [i["rule"] for i in inc]
    assert any("in all_reduce" in t for t in lines(inc[0])), lines(inc[0])


def test_dump_that_progress_followed_is_no_hang(faultline_bin, validate, tmp_path):
    inc = incidents(faultline_bin, validate, tmp_path, steps(1, 6) + PYSPY + steps(6, 12))
    assert "training-silent-hang" not in [i["rule"] for i in inc]


# dusty-nv/jetson-inference#854: training stopped at an epoch's last batch
# and the poster pressed Ctrl-C; the terminal's "^C" echo runs into the
# traceback of the KeyboardInterrupt, whose frames show the wait for data.
INTERRUPTED = """\
^CTraceback (most recent call last):
  File "train_ssd.py", line 346, in <module>
    val_loss, val_regression_loss, val_classification_loss = test(val_loader, net, criterion, DEVICE)
  File "train_ssd.py", line 150, in test
    for _, data in enumerate(loader):
  File "/home/hkuit155/.local/lib/python3.6/site-packages/torch/utils/data/dataloader.py", line 363, in __next__
    data = self._next_data()
"""


def test_an_interrupt_by_hand_with_no_error_names_the_hang(faultline_bin, validate, tmp_path):
    found = incidents(faultline_bin, validate, tmp_path, INTERRUPTED)
    assert found and found[0]["rule"] == "training-silent-hang", [i["rule"] for i in found]
    assert "interrupted by hand" in found[0]["explanation"]


def test_an_interrupt_after_an_error_is_not_the_hang(faultline_bin, validate, tmp_path):
    error = "RuntimeError: DataLoader worker (pid(s) 213446, 213447) exited unexpectedly\n"
    found = incidents(faultline_bin, validate, tmp_path, error + INTERRUPTED)
    assert found and found[0]["rule"] != "training-silent-hang", [i["rule"] for i in found]



# torchrun stopped by Ctrl-C (a Megablocks thread's log): the agent reports
# the SIGINT with its glog stamp, and raises SignalException for signal 2.
# The step lines are DeepSpeed's (logging.py log_dist), a minute apart.
SIGINT = """\
^CW1016 06:21:18.872000 140016382740288 torch/distributed/elastic/agent/server/api.py:688] Received Signals.SIGINT death signal, shutting down workers
Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/elastic/multiprocessing/api.py", line 63, in _terminate_process_handler
    raise SignalException(f"Process {os.getpid()} got signal: {sigval}", sigval=sigval)
torch.distributed.elastic.multiprocessing.api.SignalException: Process 5836 got signal: 2
"""


def ds_steps(minutes):
    return "".join(f"[2024-10-16 06:{m:02d}:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] step={10 * m}, "
                   "skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]\n" for m in minutes)


def test_a_ctrl_c_of_a_run_still_making_progress_is_no_failure(faultline_bin, validate, tmp_path):
    # Steps a minute apart right up to the interrupt: a person stopped a
    # healthy run; the SignalException after it is that stop's doing.
    found = incidents(faultline_bin, validate, tmp_path, ds_steps(range(10, 22)) + SIGINT)
    assert found == [], [(i["rule"], i["explanation"]) for i in found]


def test_a_ctrl_c_long_after_the_last_step_is_the_hang(faultline_bin, validate, tmp_path):
    found = incidents(faultline_bin, validate, tmp_path, ds_steps(range(0, 12)) + SIGINT)
    assert found and found[0]["rule"] == "training-silent-hang", [i["rule"] for i in found]
