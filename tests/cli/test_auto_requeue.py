"""PyTorch Lightning's SLURM auto-requeue, read as what it is.

On the requeue signal (sbatch --signal=USR1@90) Lightning's signal connector
logs that it handles it, saves its HPC checkpoint (hpc_ckpt_N.ckpt), then on
global rank 0 logs 'requeing job N...' and runs `scontrol requeue N`, logging
the result ('Requeued SLURM job: N', or 'Requeuing SLURM job N failed with
error code R'; before 2.2 'requeued exp N' / 'requeue failed...'). Slurm then
stops the attempt ('*** JOB N ON host CANCELLED AT ... DUE TO JOB REQUEUE ***',
SIGTERM, which Lightning bypasses) and runs the job again.

- A handled requeue is no failure: the SIGTERM after the job's own requeue,
  its checkpoint saved, is not graceful-shutdown-missing.
- A failed requeue is scontrol's return code, not the job's exit status.
- A requeued job that then fails keeps that failure, with no
  graceful-shutdown-missing finding beside it.
The logs are in each version's own wording (Lightning 1.9 and 2.x)."""

from conftest import diagnose_text

PROGRESS = "Epoch 3:  41%|████      | 410/1000 [12:01<17:17,  1.76s/it, v_num=0, train_loss=2.31]\n"
REQUEUE_CANCEL = ("slurmstepd: error: *** JOB 4411872 ON gpu-a017 CANCELLED AT 2026-11-02T13:46:41 "
                  "DUE TO JOB REQUEUE ***\n")

# Lightning 2.2 and later.
HANDLED_2X = ("GPU available: True (cuda), used: True\n"
              "SLURM auto-requeueing enabled. Setting signal handlers.\n" + PROGRESS +
              "Handling auto-requeue signal: 10\n"
              "requeing job 4411872...\n"
              "Requeued SLURM job: 4411872\n" + REQUEUE_CANCEL +
              "[rank: 0] Received SIGTERM: 15\n"
              "Bypassing SIGTERM: 15\n")

# Lightning 1.8 and 1.9.
HANDLED_19 = ("SLURM auto-requeueing enabled. Setting signal handlers.\n"
              "Epoch 3:  41%|████      | 410/1000 [12:01<17:17,  1.76s/it, loss=2.31, v_num=0]\n"
              "handling auto-requeue signal\n"
              "requeing job 4411872...\n"
              "requeued exp 4411872\n" + REQUEUE_CANCEL +
              "bypassing sigterm\n")

FAILED_2X = ("SLURM auto-requeueing enabled. Setting signal handlers.\n" + PROGRESS +
             "Handling auto-requeue signal: 10\n"
             "requeing job 4411872...\n"
             "Requeuing SLURM job 4411872 failed with error code 1\n")

NEXT_ATTEMPT_OOM = (
    "GPU available: True (cuda), used: True\n"
    "SLURM auto-requeueing enabled. Setting signal handlers.\n"
    "Restoring states from the checkpoint path at /scratch/run1/hpc_ckpt_1.ckpt\n"
    "Epoch 3:  42%|████▏     | 420/1000 [00:19<17:17,  1.76s/it, v_num=0, train_loss=2.30]\n"
    "2026-11-02 13:49:30,118 - __main__ - ERROR - training failed at step 3420\n"
    "Traceback (most recent call last):\n"
    '  File "/home/u/train.py", line 88, in <module>\n'
    "    trainer.fit(model, dm)\n"
    '  File "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/linear.py", line 125, in forward\n'
    "    return F.linear(input, self.weight, self.bias)\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
    "79.15 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.11 GiB memory in use.\n"
    "srun: error: gpu-b003: task 0: Exited with exit code 1\n")


def rules(inc):
    return [i["rule"] for i in inc]


def test_handled_requeue_2x_is_no_failure(faultline_bin, validate, tmp_path):
    inc = diagnose_text(faultline_bin, validate, tmp_path, HANDLED_2X, "slurm-4411872.out")
    assert inc == [], [(i["rule"], i["explanation"]) for i in inc]


def test_handled_requeue_19_is_no_failure(faultline_bin, validate, tmp_path):
    inc = diagnose_text(faultline_bin, validate, tmp_path, HANDLED_19, "slurm-4411872.out")
    assert inc == [], [(i["rule"], i["explanation"]) for i in inc]


def test_handled_requeue_hydra_stamped_is_no_failure(faultline_bin, validate, tmp_path):
    # Lightning under Hydra's job logging: every record stamped, the
    # checkpoint line dated before the stop.
    def rec(t, logger, msg):
        return f"[2026-11-02 13:{t}][lightning.pytorch.{logger}][INFO] - {msg}\n"
    text = (rec("34:40,001", "trainer.connectors.signal_connector",
                "SLURM auto-requeueing enabled. Setting signal handlers.") +
            rec("46:11,120", "utilities.rank_zero", "Handling auto-requeue signal: 10") +
            rec("46:38,902", "trainer.connectors.signal_connector", "requeing job 4411872...") +
            rec("46:39,310", "trainer.connectors.signal_connector", "Requeued SLURM job: 4411872") +
            REQUEUE_CANCEL +
            rec("46:41,077", "trainer.connectors.signal_connector", "[rank: 0] Received SIGTERM: 15") +
            rec("46:41,078", "trainer.connectors.signal_connector", "Bypassing SIGTERM: 15"))
    inc = diagnose_text(faultline_bin, validate, tmp_path, text, "slurm-4411872.out")
    assert inc == [], [(i["rule"], i["explanation"]) for i in inc]


def test_handler_without_save_is_still_graceful_shutdown_missing(faultline_bin, validate, tmp_path):
    # Counterpart: the handler began but no 'requeing job' line says the save
    # finished and the requeue was asked for.
    text = HANDLED_2X.replace("requeing job 4411872...\n", "").replace("Requeued SLURM job: 4411872\n", "")
    assert "requeing" not in text and "Handling auto-requeue signal" in text
    inc = diagnose_text(faultline_bin, validate, tmp_path, text, "slurm-4411872.out")
    assert "graceful-shutdown-missing" in rules(inc), rules(inc)


def test_requeue_save_after_the_stop_is_a_checkpoint_after_it(faultline_bin, validate, tmp_path):
    # The requeue signal handled after Slurm's SIGTERM (Lightning bypasses
    # it): the save finished after the stop, so the stop lost nothing.
    text = ("SLURM auto-requeueing enabled. Setting signal handlers.\n" + PROGRESS +
            "slurmstepd: error: *** JOB 4411872 ON gpu-a017 CANCELLED AT 2026-11-02T13:46:41 ***\n"
            "[rank: 0] Received SIGTERM: 15\n"
            "Bypassing SIGTERM: 15\n"
            "Handling auto-requeue signal: 10\n"
            "requeing job 4411872...\n")
    inc = diagnose_text(faultline_bin, validate, tmp_path, text, "slurm-4411872.out")
    assert "graceful-shutdown-missing" not in rules(inc), rules(inc)


def test_failed_requeue_is_not_the_jobs_exit_status(faultline_bin, validate, tmp_path):
    inc = diagnose_text(faultline_bin, validate, tmp_path, FAILED_2X, "slurm-4411872.out")
    assert inc and inc[0]["rule"] == "slurm-auto-requeue-failed", [(i["rule"], i["explanation"]) for i in inc]
    assert "unrecognised-fatal-error" not in rules(inc)


def test_failed_requeue_then_training_goes_on_did_not_end_the_job(faultline_bin, validate, tmp_path):
    # Lightning's handler returns after a failed requeue and training goes on.
    text = (FAILED_2X +
            "Epoch 9: 100%|██████████| 1000/1000 [29:01<00:00,  1.76s/it, v_num=0, train_loss=1.91]\n"
            "`Trainer.fit` stopped: `max_epochs=10` reached.\n")
    inc = diagnose_text(faultline_bin, validate, tmp_path, text, "slurm-4411872.out")
    assert "unrecognised-fatal-error" not in rules(inc), rules(inc)
    assert all(i["action"]["set_by"] == "survived" for i in inc), [(i["rule"], i["action"]) for i in inc]


def test_failed_requeue_19(faultline_bin, validate, tmp_path):
    text = FAILED_2X.replace("Handling auto-requeue signal: 10", "handling auto-requeue signal").replace(
        "Requeuing SLURM job 4411872 failed with error code 1", "requeue failed...")
    inc = diagnose_text(faultline_bin, validate, tmp_path, text, "slurm-4411872.out")
    assert inc and inc[0]["rule"] == "slurm-auto-requeue-failed", rules(inc)


def test_exit_status_elsewhere_is_still_read(faultline_bin, validate, tmp_path):
    # Counterpart: a non-zero exit status reported of the job is still one.
    text = FAILED_2X.replace("Requeuing SLURM job 4411872 failed with error code 1",
                             "srun: error: gpu-a017: task 0: Exited with exit code 1")
    inc = diagnose_text(faultline_bin, validate, tmp_path, text, "slurm-4411872.out")
    assert "slurm-auto-requeue-failed" not in rules(inc)
    assert inc, "a non-zero exit status with no requeue failure is a failure"


def test_failed_requeue_then_time_limit_keeps_the_time_limit_and_the_saved_checkpoint(
        faultline_bin, validate, tmp_path):
    text = (FAILED_2X + "slurmstepd: error: *** JOB 4411872 ON gpu-a017 CANCELLED AT 2026-11-02T13:48:11 "
            "DUE TO TIME LIMIT ***\n[rank: 0] Received SIGTERM: 15\nBypassing SIGTERM: 15\n")
    inc = diagnose_text(faultline_bin, validate, tmp_path, text, "slurm-4411872.out")
    assert inc and inc[0]["rule"] == "slurm-time-limit", rules(inc)
    # The checkpoint Lightning saved before its requeue is in the log: the
    # verdict does not say there is none, nor that the shutdown saved nothing.
    assert "No checkpoint line was found" not in inc[0]["explanation"], inc[0]["explanation"]
    assert "graceful-shutdown-missing" not in rules(inc), rules(inc)


def test_requeue_then_a_crash_keeps_the_crash(faultline_bin, validate, tmp_path):
    inc = diagnose_text(faultline_bin, validate, tmp_path, HANDLED_2X + NEXT_ATTEMPT_OOM, "slurm-4411872.out")
    assert inc and inc[0]["rule"] == "cuda-oom", rules(inc)
    assert "graceful-shutdown-missing" not in rules(inc), rules(inc)


def test_crash_without_requeue_counterpart(faultline_bin, validate, tmp_path):
    # Counterpart: a stop with no checkpoint before a crash in the next run
    # is still reported as such beside the crash.
    text = HANDLED_2X.replace("requeing job 4411872...\n", "").replace("Requeued SLURM job: 4411872\n", "")
    inc = diagnose_text(faultline_bin, validate, tmp_path, text + NEXT_ATTEMPT_OOM, "slurm-4411872.out")
    assert inc and inc[0]["rule"] == "cuda-oom", rules(inc)
    assert "graceful-shutdown-missing" in rules(inc), rules(inc)


STOP = "slurmstepd: error: *** JOB 4411872 ON gpu-a017 CANCELLED AT 2026-11-02T13:46:41 ***\n"
HF_SAVE = "Saving model checkpoint to out/checkpoint-500\n"


def test_undated_checkpoint_after_the_stop_is_a_checkpoint_after_it(faultline_bin, validate, tmp_path):
    # The checkpoint line carries no timestamp: its place after the stop in
    # the same file says it came after the stop.
    inc = diagnose_text(faultline_bin, validate, tmp_path, PROGRESS + STOP + HF_SAVE, "slurm-4411872.out")
    assert "graceful-shutdown-missing" not in rules(inc), rules(inc)


def test_undated_checkpoint_before_the_stop_counterpart(faultline_bin, validate, tmp_path):
    inc = diagnose_text(faultline_bin, validate, tmp_path, PROGRESS + HF_SAVE + STOP, "slurm-4411872.out")
    assert "graceful-shutdown-missing" in rules(inc), rules(inc)
