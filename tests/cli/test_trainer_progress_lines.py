"""Step lines of trainers outside the distributed-LLM stack (torchvision's
MetricLogger, MMEngine and MMCV, detectron2, fairseq, Keras, nanoGPT,
llm.c) are progress: an error their rank logged and then stepped past was
survived, and the line's step (and, where printed, its step time) reaches
the hang and straggler detectors. Each line below is in the form the
trainer's own logger writes it.
"""

import pytest

from conftest import diagnose_text, scan_path

OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
       "capacity of 79.15 GiB of which 1.20 GiB is free. Of the allocated memory 75.31 GiB is "
       "allocated by PyTorch, and 1.02 GiB is reserved by PyTorch but unallocated.\n")

# trainer -> (step lines after the error, the signal, the step the last line states)
TRAINERS = {
    "torchvision": (
        "Epoch: [3]  [ 100/5005]  eta: 0:41:02  lr: 0.1  loss: 4.1021 (4.2203)  acc1: 12.5000 (10.9375)  "
        "time: 0.4921  data: 0.0003  max mem: 10215\n"
        "Epoch: [3]  [ 110/5005]  eta: 0:40:55  lr: 0.1  loss: 4.0877 (4.2010)  acc1: 14.0625 (11.0511)  "
        "time: 0.4918  data: 0.0003  max mem: 10215\n",
        "metric_logger_epoch", "110"),
    "mmengine": (
        "12/01 10:02:11 - mmengine - INFO - Epoch(train)  [2][ 150/1509]  base_lr: 2.0000e-04 lr: 2.0000e-04  "
        "eta: 8:01:12  time: 0.2511  data_time: 0.0301  memory: 9182  grad_norm: 3.1  loss: 41.2\n"
        "12/01 10:02:24 - mmengine - INFO - Epoch(train)  [2][ 200/1509]  base_lr: 2.0000e-04 lr: 2.0000e-04  "
        "eta: 8:00:59  time: 0.2498  data_time: 0.0297  memory: 9182  grad_norm: 2.9  loss: 40.8\n",
        "mmengine_train_iter", "200"),
    "mmcv": (
        "2021-06-10 11:23:45,123 - mmdet - INFO - Epoch [1][100/7330]\tlr: 1.988e-03, eta: 21:04:33, "
        "time: 0.863, data_time: 0.051, memory: 3712, loss: 1.7421\n"
        "2021-06-10 11:24:28,501 - mmdet - INFO - Epoch [1][150/7330]\tlr: 2.987e-03, eta: 21:01:10, "
        "time: 0.861, data_time: 0.049, memory: 3712, loss: 1.6210\n",
        "mmengine_train_iter", "150"),
    "detectron2": (
        "[11/24 17:17:54 d2.utils.events]:  eta: 0:03:32  iter: 39  total_loss: 2.457  loss_cls: 1.2  "
        "time: 0.8200  data_time: 0.0461  lr: 7.9962e-05  max_mem: 1966M\n"
        "[11/24 17:18:10 d2.utils.events]:  eta: 0:03:16  iter: 59  total_loss: 2.101  loss_cls: 0.9  "
        "time: 0.8190  data_time: 0.0402  lr: 1.1996e-04  max_mem: 1966M\n",
        "detectron2_iter", "59"),
    "fairseq": (
        "2020-02-28 16:17:37 | INFO | train_inner | epoch 002:    100 / 3373 loss=9.704, nll_loss=9.68, "
        "ppl=820.1, wps=33168.8, ups=2.2, wpb=15074.5, bsz=512, num_updates=3473, lr=3.1e-04, wall=1600\n"
        "2020-02-28 16:18:22 | INFO | train_inner | epoch 002:    200 / 3373 loss=9.511, nll_loss=9.49, "
        "ppl=719.3, wps=33170.2, ups=2.2, wpb=15074.5, bsz=512, num_updates=3573, lr=3.2e-04, wall=1645\n",
        "fairseq_train_inner", "200"),
    "keras2": (
        " 300/1875 [===>..........................] - ETA: 1:02 - loss: 0.6012 - accuracy: 0.7990\n"
        " 400/1875 [=====>........................] - ETA: 58s - loss: 0.5530 - accuracy: 0.8152\n",
        "keras_progbar", "400"),
    "keras3": (
        "1688/1688 \u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501"
        "\u2501\u2501\u2501\u2501\u2501\u2501 2s 822us/step - accuracy: 0.8730 - loss: 0.4401\n"
        "Epoch 2/3\n"
        "1688/1688 \u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501"
        "\u2501\u2501\u2501\u2501\u2501\u2501 1s 790us/step - accuracy: 0.9011 - loss: 0.3300\n",
        "keras_progbar", "1688"),
    "nanogpt": (
        "iter 2010: loss 1.2043, time 150.31ms, mfu 31.02%\n"
        "iter 2020: loss 1.1987, time 149.88ms, mfu 31.05%\n",
        "nanogpt_iter", "2020"),
    "llm.c": (
        "step  101/19560 | train loss 6.120511 | norm 1.2231 | lr 1.01e-04 | (3240.12 ms | 161803 tok/s)\n"
        "step  102/19560 | train loss 6.101870 | norm 1.1982 | lr 1.02e-04 | (3239.80 ms | 161818 tok/s)\n",
        "llmc_step", "102"),
}


@pytest.mark.parametrize("trainer", sorted(TRAINERS))
def test_the_trainers_step_line_is_progress_with_its_step(faultline_bin, tmp_path, trainer):
    steps, signal, last_step = TRAINERS[trainer]
    log = tmp_path / "train.log"
    log.write_text(steps)
    kept = [r for r in scan_path(faultline_bin, log) if r["signal"] == signal]
    assert kept, f"no {signal} record"
    assert kept[-1]["fields"]["step"] == last_step


@pytest.mark.parametrize("trainer", sorted(TRAINERS))
def test_an_error_the_trainer_stepped_past_was_survived(faultline_bin, validate, tmp_path, trainer):
    steps = TRAINERS[trainer][0]
    incs = diagnose_text(faultline_bin, validate, tmp_path, OOM + steps)
    oom = [i for i in incs if "Out of Memory" in i["reference"]]
    assert oom, [i["reference"] for i in incs]
    assert oom[0]["initiating"].get("survived") is True


@pytest.mark.parametrize("trainer", sorted(TRAINERS))
def test_an_error_after_the_last_step_ended_the_run(faultline_bin, validate, tmp_path, trainer):
    steps = TRAINERS[trainer][0]
    incs = diagnose_text(faultline_bin, validate, tmp_path, steps + OOM)
    assert incs and "Out of Memory" in incs[0]["reference"]
    assert not incs[0]["initiating"].get("survived")


@pytest.mark.parametrize("line", [
    # Validation and test loops count other batches; the summaries of an
    # epoch are no step.
    "Epoch(val) [1][ 10/116]    eta: 0:00:20  time: 0.1919  data_time: 0.1330  memory: 12",
    "Test:  [ 0/50]  eta: 0:01:19  loss: 0.6035 (0.6035)  acc1: 85.9375 (85.9375)  time: 1.5850  data: 1.3922",
    "2020-02-28 16:40:02 | INFO | valid | epoch 001 | valid on 'valid' subset | loss 9.867 | nll_loss 9.64",
    "[09/02 02:45:11 d2.engine.hooks]: Overall training speed: 1497 iterations in 0:05:21 (0.2147 s / it)",
    "Epoch 2/3",
])
def test_lines_that_are_no_training_step(faultline_bin, tmp_path, line):
    log = tmp_path / "train.log"
    log.write_text(line + "\n")
    signals = {r["signal"] for r in scan_path(faultline_bin, log)}
    assert not signals & {t[1] for t in TRAINERS.values()}, signals
