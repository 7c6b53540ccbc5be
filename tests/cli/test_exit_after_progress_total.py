"""A launcher's report of an exit (torchrun's "failed (exitcode: -6)", a
ChildFailedError summary) after every rank's progress line reached the total
it counts to (tqdm's `N/N`, Megatron's `iteration N/ N`) is the run's
teardown: the loop ended, and the abort came at interpreter exit
(rulesets/README.md, field `total`). A kill from outside (SIGKILL: a host
OOM while saving) stays a failure, and so does an exit while the bar is
short of its total. The torchrun lines are as Vision-CAIR/MiniGPT-4#237 and
huggingface/open-r1#477 quote them; the bars are tqdm's format."""
import pytest

from conftest import diagnose_text

BAR_DONE = "100%|██████████| 500/500 [41:07<00:00,  4.93s/it]\n"
BAR_SHORT = " 45%|████▌     | 225/500 [18:30<22:37,  4.93s/it]\n"
TORCHRUN_6 = ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -6) "
              "local_rank: 0 (pid: 16) of binary: /opt/conda/bin/python\n")
TORCHRUN_9 = ("E0306 03:59:23.291000 15271 site-packages/torch/distributed/elastic/multiprocessing/api.py:870] "
              "failed (exitcode: -9) local_rank: 0 (pid: 15424) of binary: /usr/bin/python3\n")


def test_an_abort_after_the_bar_reached_its_total_is_teardown(faultline_bin, validate, tmp_path):
    assert diagnose_text(faultline_bin, validate, tmp_path, BAR_DONE + TORCHRUN_6) == []


def test_a_kill_after_the_bar_reached_its_total_is_a_failure(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, BAR_DONE + TORCHRUN_9)
    assert found, "no incident"


# A bar per epoch reaches its total every epoch: only the last epoch's
# bar ends the run. The bars are as quangvnai/grit#34 (`Epoch 0 - train:`,
# no count of epochs) and tqdm descriptions `Epoch E/N:` print them.
EPOCH_BAR_NO_COUNT = "Epoch 0 - train: 100%|██████████| 500/500 [41:07<00:00,  4.93s/it, loss=3.45]\n"
EPOCH_BAR_NOT_LAST = "Epoch 3/10: 100%|██████████| 500/500 [41:07<00:00,  4.93s/it, loss=3.45]\n"
EPOCH_BAR_LAST = "Epoch 10/10: 100%|██████████| 500/500 [41:07<00:00,  4.93s/it, loss=3.45]\n"


# A bar short of its total, an epoch's bar of an unknown number of epochs,
# an epoch's bar before the last: the run had not ended.
@pytest.mark.parametrize("bar", [BAR_SHORT, EPOCH_BAR_NO_COUNT, EPOCH_BAR_NOT_LAST],
                         ids=["short", "epochs-unknown", "not-last-epoch"])
def test_an_abort_after_a_bar_that_did_not_end_the_run_is_a_failure(faultline_bin, validate, tmp_path, bar):
    found = diagnose_text(faultline_bin, validate, tmp_path, bar + TORCHRUN_6)
    assert found, "no incident"


def test_an_abort_after_the_last_epochs_bar_reached_its_total_is_teardown(faultline_bin, validate, tmp_path):
    assert diagnose_text(faultline_bin, validate, tmp_path, EPOCH_BAR_LAST + TORCHRUN_6) == []
