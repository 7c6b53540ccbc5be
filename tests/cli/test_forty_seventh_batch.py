"""From the forty-seventh corpus batch's work part:

- A DeepSpeed fp16 run whose loss scaler raises "Exception: Current loss
  scale already at minimum - cannot decrease scale anymore. Exiting run."
  (hiyouga/LlamaFactory#251, the batch's llamafactory-251). tqdm's close()
  redraws the rank's bar at the count it had reached after the traceback,
  and DeepSpeed's launcher then stops the other workers (its
  sigkill_handler logs "Killing subprocess N" for each). The redraw ends
  what the run printed, but the launcher's lines after it kept it from
  ending the log, so it read as progress after the exception: the job got
  no incident. Lines of a launcher stopping its workers (field
  `stops_workers`: DeepSpeed's "Killing subprocess N", torchrun's "Sending
  process N closing signal SIGTERM") no longer count against a closing
  redraw ending its log.
"""
from conftest import diagnose_text, initiating_texts, leading_incident

# hiyouga/LlamaFactory#251 (two ranks' tracebacks interleaved, as posted).
LOSS_SCALE_FLOOR_THEN_LAUNCHER = """\
    self.loss_scaler.update_scale(has_overflow)
  File "/usr/local/lib/python3.8/dist-packages/deepspeed/runtime/fp16/loss_scaler.py", line 175, in update_scale
    raise Exception(
    Exceptionself.loss_scaler.update_scale(has_overflow):
Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.  File "/usr/local/lib/python3.8/dist-packages/deepspeed/runtime/fp16/loss_scaler.py", line 175, in update_scale
    raise Exception(
Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.
  4%|\u258d         | 17/387 [05:25<1:57:56, 19.13s/it]
[2023-07-26 15:19:24,960] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 45098
[2023-07-26 15:19:27,802] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 45099
[2023-07-26 15:19:27,803] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 45100
[2023-07-26 15:19:27,804] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 45101
[2023-07-26 15:19:27,805] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 45102
[2023-07-26 15:19:30,245] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 45104
"""

EXCEPTION = "Exception: Current loss scale already at minimum"

# A traceback, tqdm's closing redraw, then torchrun's agent stopping the
# other workers (torch/distributed/elastic/multiprocessing/api.py's wording).
TRACEBACK_THEN_TORCHRUN_STOPS = """\
Traceback (most recent call last):
  File "train.py", line 212, in <module>
    main()
  File "train.py", line 188, in main
    loss = compute_loss(batch)
ValueError: Expected input batch_size (16) to match target batch_size (12).
 31%|\u2588\u2588\u2588       | 310/1000 [12:01<26:45,  2.33s/it]
WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 59460 closing signal SIGTERM
WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 59461 closing signal SIGTERM
WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 59462 closing signal SIGTERM
"""


def _failing(incidents):
    return [i for i in incidents if not i.get("survived") and not (i.get("initiating") or {}).get("survived")]


def test_closing_redraw_before_deepspeed_stopping_workers_is_not_progress(faultline_bin, validate, tmp_path):
    inc = leading_incident(faultline_bin, validate, tmp_path, LOSS_SCALE_FLOOR_THEN_LAUNCHER,
                           rule="unrecognised-fatal-error", line=EXCEPTION)
    assert not inc.get("survived"), inc["explanation"]


def test_closing_redraw_before_torchrun_stopping_workers_is_not_progress(faultline_bin, validate, tmp_path):
    inc = leading_incident(faultline_bin, validate, tmp_path, TRACEBACK_THEN_TORCHRUN_STOPS,
                           line="ValueError: Expected input batch_size")
    assert not inc.get("survived"), inc["explanation"]


def test_bar_that_moves_on_after_the_exception_is_still_progress(faultline_bin, validate, tmp_path):
    # The bar went on to another step after the exception: the run carried on.
    text = LOSS_SCALE_FLOOR_THEN_LAUNCHER.replace(
        "  4%|\u258d         | 17/387 [05:25<1:57:56, 19.13s/it]\n",
        "  4%|\u258d         | 17/387 [05:25<1:57:56, 19.13s/it]\n"
        "  5%|\u258d         | 18/387 [05:44<1:57:30, 19.10s/it]\n")
    found = diagnose_text(faultline_bin, validate, tmp_path, text)
    assert not [t for i in _failing(found) for t in initiating_texts(i) if EXCEPTION in t], \
        [(i["rule"], i["explanation"]) for i in _failing(found)]


def test_bar_followed_by_other_lines_is_still_progress(faultline_bin, validate, tmp_path):
    # Lines that are not a launcher stopping workers after the redraw: the
    # program went on printing, as before this change.
    text = LOSS_SCALE_FLOOR_THEN_LAUNCHER.replace("Killing subprocess", "Saving eval predictions for sample")
    found = diagnose_text(faultline_bin, validate, tmp_path, text)
    assert not [t for i in _failing(found) for t in initiating_texts(i) if EXCEPTION in t], \
        [(i["rule"], i["explanation"]) for i in _failing(found)]
