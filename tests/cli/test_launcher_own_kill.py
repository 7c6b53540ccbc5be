"""A launcher that kills its own main process once a worker failed (issue
#18, fatal vs collateral): Lightning's child-process observer (2.1
onwards) logs `[rank: N] Child process with PID P terminated with code R.
Forcefully terminating all other processes to avoid zombies`, sends
SIGKILL to the workers left and to the main process, and the shell that
ran it reports that process `Killed`. That kill is the observer's own: the
worker's exit status on the observer's line is the failure, not a SIGKILL
from outside. Other launchers that stop their workers (torchrun's agent
sending SIGTERM, DeepSpeed's sigkill_handler) do not kill the process the
shell ran, so a `Killed` after their lines stays a kill from outside.
"""
from conftest import leading_incident

OBSERVER = ("[rank: 1] Child process with PID 2841 terminated with code {code}. "
            "Forcefully terminating all other processes to avoid zombies \U0001f9df\n")
EPOCH = "Epoch 3:  41%|████      | 410/1000 [02:11<03:09,  3.11it/s, v_num=0, train_loss=2.31]\n"


def test_a_worker_crash_leads_over_the_observers_own_kill(faultline_bin, validate, tmp_path):
    text = EPOCH + OBSERVER.format(code=-11) + "Killed\n"
    inc = leading_incident(faultline_bin, validate, tmp_path, text, rule="torch-child-failed",
                           line="terminated with code -11")
    assert "SIGSEGV" in inc["explanation"], inc["explanation"]


def test_a_scripts_kill_report_after_the_observer_is_its_kill(faultline_bin, validate, tmp_path):
    text = (EPOCH + OBSERVER.format(code=1) +
            "/opt/job/run.sh: line 12: 77120 Killed                  python train.py --devices 4\n")
    leading_incident(faultline_bin, validate, tmp_path, text, rule="torch-child-failed",
                     line="terminated with code 1")


def test_a_worker_killed_by_sigkill_stays_a_kill(faultline_bin, validate, tmp_path):
    text = EPOCH + OBSERVER.format(code=-9) + "Killed\n"
    leading_incident(faultline_bin, validate, tmp_path, text, rule="process-sigkilled",
                     line="terminated with code -9")


def test_a_kill_after_torchruns_closing_signals_stays_a_kill(faultline_bin, validate, tmp_path):
    text = ("[2024-05-01 10:00:00,000] torch.distributed.elastic.multiprocessing.api: [WARNING] "
            "Sending process 4243 closing signal SIGTERM\n"
            "Killed\n")
    leading_incident(faultline_bin, validate, tmp_path, text, rule="process-sigkilled", line="Killed")


def test_a_kill_before_the_observers_line_stays_a_kill(faultline_bin, validate, tmp_path):
    text = EPOCH + "Killed\n" + OBSERVER.format(code=-11)
    leading_incident(faultline_bin, validate, tmp_path, text, rule="process-sigkilled", line="Killed")
