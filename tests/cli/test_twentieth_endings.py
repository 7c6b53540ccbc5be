"""Endings the twentieth endings audit (tests/cli/endings, e20-*.log) read
as nothing or by a line that did not say what happened, read where the
program that printed them writes them (issue #18):

- the check torchvision's reference scripts put in their training loop
  (and DETR, MAE and many detectors copied): 'Loss is nan, stopping
  training', then sys.exit(1). A line the SDC rule's NaN symptom claimed,
  so nothing read the program's own exit;
- SGLang's launcher logging that a child sent it SIGQUIT, then killing the
  process tree (python/sglang/srt/entrypoints/engine.py);
- TensorRT's 'Cuda initialization failure with error N' as the builder or
  runtime is created, before the null it returns crashes its caller;
- Abseil's log prefix before a time zone is loaded
  (absl/log/internal/log_format.cc: 'F0000 00:00:<unix time> <tid>
  <file>:<line>] '), any message at the FATAL level, also at the end of a
  Keras progress bar;
- tqdm's bar for an iterable of unknown length ('<desc>: <n>it [<elapsed>,
  <rate>]') with bash's 'Killed' at its end;
- uvicorn's finished shutdown ('Application shutdown complete.', 'Finished
  server process [N]'): a traceback after it is the exit's.
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # WZMIAOMIAO/deep-learning-for-image-processing#244: torchvision's
    # detection engine as posted, the loop's last lines.
    "torchvision-loss-nan-exit": ("""\
Epoch: [0]  [ 100/1985]  eta: 0:08:22.285547  lr: 0.000500  loss: 0.5700 (0.8217)  loss_classifier: 0.2172 (0.3628)  loss_box_reg: 0.0152 (0.0238)  loss_objectness: 0.2737 (0.3753)  loss_rpn_box_reg: 0.0571 (0.0597)  time: 0.2487  data: 0.1067  max mem: 1792
Epoch: [0]  [ 150/1985]  eta: 0:07:57.971424  lr: 0.000500  loss: 0.5219 (0.7306)  loss_classifier: 0.1708 (0.3102)  loss_box_reg: 0.0147 (0.0212)  loss_objectness: 0.2607 (0.3394)  loss_rpn_box_reg: 0.0590 (0.0599)  time: 0.2477  data: 0.1055  max mem: 1792
Loss is nan, stopping training
""", FALLBACK, "Loss is nan, stopping training"),
    # DIUx-xView/xview3-reference#18: the same exit in a notebook, where
    # IPython shows the SystemExit it raised.
    "torchvision-loss-nan-ipython-systemexit": ("""\
Loss is nan, stopping training
{'loss_classifier': tensor(1.3285, device='cuda:0', grad_fn=<NllLossBackward0>), 'loss_box_reg': tensor(0.0082, device='cuda:0', grad_fn=<DivBackward0>), 'loss_objectness': tensor(nan, device='cuda:0', grad_fn=<BinaryCrossEntropyWithLogitsBackward0>), 'loss_rpn_box_reg': tensor(0.1605, device='cuda:0', grad_fn=<DivBackward0>)}

An exception has occurred, use %tb to see the full traceback.

SystemExit: 1
""", FALLBACK, "Loss is nan, stopping training"),
    # sgl-project/sglang#12827: the launcher's line alone, under a
    # container log's stamp.
    "sglang-sigquit-received": ("""\
[2025-11-06T02:10:00.703Z] [2025-11-06 02:10:00] Received sigquit from a child process. It usually means the child failed.
""", FALLBACK, "Received sigquit from a child process"),
    # CaoWGG/TensorRT-CenterNet#100: buildEngine's last two lines.
    "tensorrt-cuda-init-failure": ("""\
ERROR: Cuda initialization failure with error 2. Please check cuda installation:
Segmentation fault (core dumped)
""", FALLBACK, "Cuda initialization failure with error 2"),
    # tensorflow/tensorflow#103430: Keras 3's bar, then TensorFlow's fatal
    # line in Abseil's uninitialized form on the same line.
    "absl-fatal-after-keras-bar": ("""\
Epoch 333/400
23/72 ━━━━━━━━━━━━━━━━━━━━ 2s 56ms/step - accuracy: 0.4822 - loss: 1.3634F0000 00:00:1762145632.630296  135502 device_event_mgr.cc:226] Unexpected Event status: 1
[symbolize_elf.inc : 393] RAW: Unable to get high fd: rc=0, limit=1024
*** Check failure stack trace: ***
    @     0x73a2356a2fe4  absl::lts_20250127::log_internal::LogMessage::SendToLog()
    @     0x73a2356a2976  absl::lts_20250127::log_internal::LogMessage::Flush()
""", FALLBACK, "Unexpected Event status: 1"),
    # maum-ai/faceshifter#5: Lightning's sanity check bar, whose loader has
    # no length, killed.
    "tqdm-unknown-total-bar-killed": ("""\
Validation sanity check: 0it [00:00, ?it/s]Killed
""", "process-sigkilled", "0it [00:00, ?it/s]Killed"),
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_ending_leads(faultline_bin, validate, tmp_path, name):
    text, rule, initiating = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, line=initiating)


def test_traceback_after_uvicorn_shutdown_is_exit(faultline_bin, validate, tmp_path):
    # arcee-ai/fastmlx#14: the server stopped with Ctrl-C; the lifespan's
    # CancelledError came after uvicorn finished its shutdown.
    incidents = diagnose_text(faultline_bin, validate, tmp_path, """\
^CINFO:     Shutting down
INFO:     Waiting for application shutdown.
INFO:     Application shutdown complete.
INFO:     Finished server process [7603]
INFO:     127.0.0.1:61200 - "POST /v1/chat/completions HTTP/1.1" 200 OK
INFO:     Shutting down
INFO:     Finished server process [7602]
ERROR:    Traceback (most recent call last):
  File "/opt/anaconda3/lib/python3.11/site-packages/starlette/routing.py", line 741, in lifespan
    await receive()
  File "/opt/anaconda3/lib/python3.11/site-packages/uvicorn/lifespan/on.py", line 137, in receive
    return await self.receive_queue.get()
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/opt/anaconda3/lib/python3.11/asyncio/queues.py", line 158, in get
    await getter
asyncio.exceptions.CancelledError

INFO:     Stopping parent process [7600]
""")
    assert not [i for i in incidents if not i["reference"].startswith("Benign")], \
        [i["reference"] for i in incidents]
