"""An optimizer refusing its saved state (torch.optim.Optimizer's
load_state_dict, and the optimizers that copy its check) fails a resume:
the resumed run built its parameter groups differently from the run that
saved. checkpoint-resume-failure, with or without a rank prefix, and the
optimizer's traceback line is the initiating one."""

from conftest import leading_incident

BNB = """\
Traceback (most recent call last):
  File "/opt/sd-scripts/train_network.py", line 699, in train
    accelerator.load_state(args.resume)
  File "/opt/venv/lib/python3.10/site-packages/torch/optim/optimizer.py", line 201, in load_state_dict
    raise ValueError("loaded state dict contains a parameter group "
ValueError: loaded state dict contains a parameter group that doesn't match the size of optimizer's group
"""

TORCHRUN = """\
[rank0]: Traceback (most recent call last):
[rank0]:   File "/opt/train.py", line 412, in <module>
[rank0]:     optimizer.load_state_dict(state["optim"])
[rank0]:   File "/opt/venv/lib/python3.11/site-packages/torch/optim/optimizer.py", line 854, in load_state_dict
[rank0]:     raise ValueError(
[rank0]: ValueError: loaded state dict has a different number of parameter groups
"""


def test_optimizer_groups_mismatch_is_a_resume_failure(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, BNB, rule="checkpoint-resume-failure",
                     any_line="ValueError: loaded state dict contains a parameter group")


def test_optimizer_group_count_mismatch_on_a_rank(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, TORCHRUN, rule="checkpoint-resume-failure",
                     any_line="ValueError: loaded state dict has a different number of parameter groups")
