"""Checkpoint loads that fail, read where the loader prints them:

- torch.load's weights-only unpickler (torch/serialization.py, the default
  since PyTorch 2.6) refuses a checkpoint with "Weights only load failed."
  (2.4 and later: "This file can still be loaded, to do so you have two
  options, ..."; 1.13: "Re-running `torch.load` with `weights_only` set to
  `False` will likely succeed, ..."): the checkpoint did not load, with or
  without the torch.load frames above it. The FutureWarning that torch 2.4
  prints about the coming default, and the explanation lines of the error,
  are not that refusal.
- A traceback through a checkpoint loader's frame (DeepSpeed's and
  Megatron's load_checkpoint, mmcv's load_checkpoint and _load_checkpoint,
  transformers Trainer's _load_from_checkpoint, a load_from_ckpt) or ending
  at a load_state_dict call fed with an entry of the loaded checkpoint
  (`optimizer.load_state_dict(checkpoint["optimizer"])`) is the checkpoint
  failing to load, whatever the exception: a KeyError for state the file
  does not hold, an unreadable file. A save's frames are not a load.
"""
from conftest import diagnose_text, first_incident, initiating_texts


WEIGHTS_ONLY_REFUSED = """\
Resuming from checkpoint runs/exp3/ckpt_000120.pt
_pickle.UnpicklingError: Weights only load failed. This file can still be loaded, to do so you have two options, do those steps only if you trust the source of the checkpoint.
\t(1) In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can result in arbitrary code execution. Do it only if you got the file from a trusted source.
\t(2) Alternatively, to load with `weights_only=True` please check the recommended steps in the following error message.
\tWeightsUnpickler error: Unsupported global: GLOBAL argparse.Namespace was not an allowed global by default. Please use `torch.serialization.add_safe_globals([Namespace])` or the `torch.serialization.safe_globals([Namespace])` context manager to allowlist this global if you trust this class/function.
"""
WEIGHTS_ONLY_WARNING = """\
/opt/conda/lib/python3.11/site-packages/timm/models/_helpers.py:40: FutureWarning: You are using `torch.load` with `weights_only=False` (the current default value), which uses the default pickle module implicitly. It is possible to construct malicious pickle data which will execute arbitrary code during unpickling (See https://github.com/pytorch/pytorch/blob/main/SECURITY.md#untrusted-models for more details).
  checkpoint = torch.load(checkpoint_path, map_location=device)
Train: 3 [ 100/1251 (  8%)]  Loss: 3.412 (3.49)  Time: 0.412s,  621.40/s  LR: 1.000e-03  Data: 0.012 (0.015)
"""

OPTIMIZER_ENTRY_MISSING = """\
=> loading checkpoint 'checkpoints/model_best.pth.tar'
Traceback (most recent call last):
  File "main.py", line 402, in <module>
    main()
  File "main.py", line 151, in main
    scheduler.load_state_dict(checkpoint["lr_scheduler"])
KeyError: 'lr_scheduler'
"""

LOADER_FRAME = """\
2024-03-04 10:12:40,004 - mmdet - INFO - load checkpoint from local path: work_dirs/faster_rcnn/latest.pth
Traceback (most recent call last):
  File "tools/train.py", line 242, in <module>
    main()
  File "tools/train.py", line 238, in main
    runner.resume(cfg.resume_from)
  File "/opt/conda/lib/python3.8/site-packages/mmcv/runner/base_runner.py", line 346, in resume
    checkpoint = self.load_checkpoint(
  File "/opt/conda/lib/python3.8/site-packages/mmcv/runner/base_runner.py", line 349, in load_checkpoint
    return load_checkpoint(
  File "/opt/conda/lib/python3.8/site-packages/mmcv/runner/checkpoint.py", line 561, in _load_checkpoint
    return CheckpointLoader.load_checkpoint(filename, map_location, logger)
PermissionError: [Errno 13] Permission denied: 'work_dirs/faster_rcnn/latest.pth'
"""
SAVER_FRAME = """\
2024-03-04 10:12:40,004 - mmdet - INFO - Saving checkpoint at 12 epochs
Traceback (most recent call last):
  File "tools/train.py", line 242, in <module>
    main()
  File "/opt/conda/lib/python3.8/site-packages/mmcv/runner/hooks/checkpoint.py", line 25, in after_train_epoch
    runner.save_checkpoint(
  File "/opt/conda/lib/python3.8/site-packages/mmcv/runner/epoch_based_runner.py", line 172, in save_checkpoint
    shutil.copy(filename, dst_file)
PermissionError: [Errno 13] Permission denied: 'work_dirs/faster_rcnn/latest.pth'
"""


def test_weights_only_refusal_is_a_resume_failure(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, WEIGHTS_ONLY_REFUSED)
    assert inc["rule"] == "checkpoint-resume-failure", inc["explanation"]
    assert "Weights only load failed." in initiating_texts(inc)[0]


def test_weights_only_future_warning_is_no_failure(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, WEIGHTS_ONLY_WARNING)
    assert not [i for i in found if i["rule"] == "checkpoint-resume-failure"]


def test_missing_checkpoint_entry_under_load_state_dict_is_a_resume_failure(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, OPTIMIZER_ENTRY_MISSING)
    assert inc["rule"] == "checkpoint-resume-failure", inc["explanation"]
    assert "KeyError: 'lr_scheduler'" in initiating_texts(inc)


def test_exception_under_a_checkpoint_loader_frame_is_a_resume_failure(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, LOADER_FRAME)
    assert inc["rule"] == "checkpoint-resume-failure", inc["explanation"]
    assert [t for t in initiating_texts(inc) if t.startswith("PermissionError: [Errno 13]")]


def test_exception_under_a_checkpoint_saver_frame_is_not_a_resume_failure(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, SAVER_FRAME)
    assert not [i for i in found if i["rule"] == "checkpoint-resume-failure"]
