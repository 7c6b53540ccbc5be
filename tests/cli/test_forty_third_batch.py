"""From the forty-third corpus batch's work part (multi-GPU training around
storage and data):

- torchelastic names the signal that ended a worker in the ProcessFailure
  message ("Signal 7 (SIGBUS) received by PID 3111"), which torchrun's
  ChildFailedError summary prints as the entry's "traceback :" field. A
  training worker dies of SIGBUS when a page of a mapping cannot be backed:
  /dev/shm too small or full in a container. The line was read only as the
  summary's symptom, so the verdict was the summary itself (the batch's
  alpaca-lora-338, four ranks in docker).
- When every rank died of the same signal, the summary holds one such line
  per rank and nothing orders them in time; the file order made the first
  entry listed under "Failures:" the initiating line, although torchrun
  marks the entry it observed first ("Root Cause (first observed
  failure):"). That mark now orders the lines of one summary.
"""
from conftest import leading_incident

# Topdu/OpenOCR#71: two ranks of torch.distributed.launch die of SIGBUS.
SIGBUS_SUMMARY = """\
torch.distributed.elastic.multiprocessing.errors.ChildFailedError: 
======================================================
tools/train_rec.py FAILED
------------------------------------------------------
Failures:
[1]:
  time      : 2024-12-31_16:45:52
  host      : server
  rank      : 1 (local_rank: 1)
  exitcode  : -7 (pid: 467398)
  error_file: <N/A>
  traceback : Signal 7 (SIGBUS) received by PID 467398
------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2024-12-31_16:45:52
  host      : server
  rank      : 0 (local_rank: 0)
  exitcode  : -7 (pid: 467397)
  error_file: <N/A>
  traceback : Signal 7 (SIGBUS) received by PID 467397
==============================================
"""


def test_worker_sigbus_in_the_summary_is_shm_exhaustion(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, SIGBUS_SUMMARY, rule="shm-exhaustion")


def test_summary_root_cause_entry_is_the_initiating_line(faultline_bin, validate, tmp_path):
    inc = leading_incident(faultline_bin, validate, tmp_path, SIGBUS_SUMMARY,
                           line="Signal 7 (SIGBUS) received by PID 467397")
    assert inc["initiating"]["rank"] == 0, inc["initiating"]
