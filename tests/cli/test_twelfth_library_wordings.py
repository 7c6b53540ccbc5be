"""A shell's kill notice read where the shell prints it (rulesets/README.md,
"Signals"):

- bash reports a foreground job killed by a signal with the signal's name
  ("Killed") on stderr, without a newline
  before it. When the job's last output was a tqdm progress bar (redrawn
  with carriage returns, never ended by a newline), the notice lands on
  the bar's line, right after tqdm's "[elapsed<remaining, rate]": the
  process was killed by SIGKILL, most often by the OOM killer.
"""
from conftest import diagnose_text, first_incident, initiating_texts


BAR_KILLED = """\
Loading checkpoint shards:  33%|███▎      | 1/3 [00:41<01:22, 41.27s/it]Killed
"""
BAR_KILLED_POSTFIX = """\
  5%|▌         | 512/10240 [03:41<1:10:05,  2.31it/s, loss=2.13]Killed
"""
BAR_DONE = """\
Loading checkpoint shards: 100%|██████████| 2/2 [00:05<00:00,  2.60s/it]
Epoch 3: 100%|█████| 512/512 [02:01<00:00,  4.21it/s] Killed workers: 0
"""


def test_kill_notice_after_a_progress_bar_is_a_sigkill(faultline_bin, validate, tmp_path):
    for text in (BAR_KILLED, BAR_KILLED_POSTFIX):
        inc = first_incident(faultline_bin, validate, tmp_path, text)
        assert inc["rule"] == "process-sigkilled", inc["explanation"]
        assert initiating_texts(inc)[0] == text.rstrip("\n")


def test_a_finished_bar_and_a_counter_named_killed_are_not_a_kill(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, BAR_DONE)
    assert not [i for i in found if i["rule"] == "process-sigkilled"]
