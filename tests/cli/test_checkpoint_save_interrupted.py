"""A checkpoint save that began and never ended before its rank failed or
was stopped: the checkpoint on disk is partial. Only frameworks that log
both ends of a save are judged (Megatron-LM, DeepSpeed, torchtitan): the
kill stays the primary diagnosis and a checkpoint-save-interrupted incident
names the directory and iteration with an action not to resume from it. A
save that finished before the kill, a start with nothing after it (a log cut
while the run went on) and HF Trainer's start line (it logs no end) give
none."""

from conftest import diagnose_text, initiating_texts

MEGATRON_STEP = (
    "[2026-11-02 13:38:42] iteration     1000/  100000 | consumed samples:      1024000 | "
    "elapsed time per iteration (ms): 4118.7 | learning rate: 2.999E-04 | global batch size:  1024 | "
    "lm loss: 2.509871E+00 | loss scale: 1.0 | grad norm: 0.797 | number of skipped iterations:   0 | "
    "number of nan iterations:   0 |\n")
MEGATRON_SAVING = "[2026-11-02 13:38:43] saving checkpoint at iteration    1000 to /lustre/ckpt/gpt3-175b in torch_dist format\n"
MEGATRON_SAVED = ("[2026-11-02 13:39:01]   successfully saved checkpoint from iteration    1000 to "
                  "/lustre/ckpt/gpt3-175b [ t 1/8, p 1/16 ]\n")
PREEMPTED = "slurmstepd: error: *** STEP 88412.0 ON node017 CANCELLED AT 2026-11-02T13:39:10 DUE TO PREEMPTION ***\n"

DS_SAVING = ("[2026-11-02 13:40:02,118] [INFO] [logging.py:128:log_dist] [Rank 0] Saving model checkpoint: "
             "/lustre/ckpt/llama-13b/global_step1000/mp_rank_00_model_states.pt\n")
DS_READY = ("[2026-11-02 13:40:09,887] [INFO] [torch_checkpoint_engine.py:27:commit] "
            "[Torch] Checkpoint global_step1000 is ready now!\n")
OOM_KILL = ("[2026-11-02 13:40:11,002] torch.distributed.elastic.multiprocessing.api: [WARNING] "
            "Sending process 41873 closing signal SIGTERM\n"
            "slurmstepd: error: Detected 1 oom_kill event in StepId=88412.0. "
            "Some of the step tasks have been OOM Killed.\n")

TITAN_SAVING = ("[rank0]:[titan] 2026-11-02 13:40:01,907 - root - INFO - "
                "Saving the checkpoint (or staging if async is enabled).\n")
TITAN_SAVED = ("[rank0]:[titan] 2026-11-02 13:40:05,118 - root - INFO - "
               "Finished saving the checkpoint (or staging if async is enabled)in 3.21 seconds.\n")

HF_SAVING = ("[INFO|trainer.py:3984] 2026-11-02 13:40:02,118 >> "
             "Saving model checkpoint to /lustre/out/llama3-8b-sft/checkpoint-1500\n")


def partial(incs):
    return [i for i in incs if i["rule"] == "checkpoint-save-interrupted"]


def test_megatron_preempted_during_the_save(faultline_bin, validate, tmp_path):
    incs = diagnose_text(faultline_bin, validate, tmp_path, MEGATRON_STEP + MEGATRON_SAVING + PREEMPTED)
    assert incs[0]["rule"] != "checkpoint-save-interrupted"  # the kill leads
    found = partial(incs)
    assert len(found) == 1, [i["rule"] for i in incs]
    inc = found[0]
    assert inc["reference"] == "Checkpoint Partial Save"
    assert MEGATRON_SAVING.strip() in initiating_texts(inc)
    assert "/lustre/ckpt/gpt3-175b" in inc["explanation"] and "iteration 1000" in inc["explanation"]
    assert inc["action"]["kind"] == "stop"
    assert "not resume" in inc["action"]["reason"]
    # the kill's restart says not to resume from the partial checkpoint
    assert incs[0]["action"]["kind"] == "restart"
    assert "Do not resume from the checkpoint of iteration 1000" in incs[0]["action"]["reason"]


def test_megatron_save_finished_before_the_kill(faultline_bin, validate, tmp_path):
    incs = diagnose_text(faultline_bin, validate, tmp_path,
                         MEGATRON_STEP + MEGATRON_SAVING + MEGATRON_SAVED + PREEMPTED)
    assert incs and not partial(incs)


def test_save_start_with_nothing_after_it_is_a_cut_log(faultline_bin, validate, tmp_path):
    incs = diagnose_text(faultline_bin, validate, tmp_path, MEGATRON_STEP + MEGATRON_SAVING)
    assert not partial(incs)


def test_deepspeed_killed_before_the_tag_was_committed(faultline_bin, validate, tmp_path):
    incs = diagnose_text(faultline_bin, validate, tmp_path, DS_SAVING + OOM_KILL)
    found = partial(incs)
    assert len(found) == 1 and incs[0]["rule"] != "checkpoint-save-interrupted"
    assert "global_step1000" in found[0]["explanation"]


def test_deepspeed_committed_before_the_kill(faultline_bin, validate, tmp_path):
    incs = diagnose_text(faultline_bin, validate, tmp_path, DS_SAVING + DS_READY + OOM_KILL)
    assert incs and not partial(incs)


def test_torchtitan_start_and_finish(faultline_bin, validate, tmp_path):
    cut = diagnose_text(faultline_bin, validate, tmp_path, TITAN_SAVING + OOM_KILL)
    assert len(partial(cut)) == 1
    (tmp_path / "done").mkdir()
    done = diagnose_text(faultline_bin, validate, tmp_path / "done", TITAN_SAVING + TITAN_SAVED + OOM_KILL)
    assert not partial(done)


def test_hf_trainer_logs_no_end_so_is_not_judged(faultline_bin, validate, tmp_path):
    incs = diagnose_text(faultline_bin, validate, tmp_path, HF_SAVING + OOM_KILL)
    assert incs and not partial(incs)


def test_an_error_the_rank_survived_during_an_async_save_is_not_its_end(faultline_bin, validate, tmp_path):
    # Megatron's async save: training goes on between the two ends; an error
    # the rank carried on from, and a log cut before the end line, say nothing.
    survived = ("[2026-11-02 13:38:50] [W1102 13:38:50.000000 ProcessGroupNCCL.cpp:1168] Warning: "
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
                "capacity of 79.10 GiB of which 1.02 GiB is free.\n")
    later = MEGATRON_STEP.replace("13:38:42", "13:39:30").replace("1000/", "1010/")
    incs = diagnose_text(faultline_bin, validate, tmp_path, MEGATRON_STEP + MEGATRON_SAVING + survived + later)
    assert not partial(incs)


def test_a_torchtitan_start_is_still_no_checkpoint_after_sigterm(faultline_bin, validate, tmp_path):
    # The start line is not a saved checkpoint for missing_checkpoint_after_sigterm.
    sigterm = ("[2026-11-02 13:40:00,500] torch.distributed.elastic.agent.server.api: [INFO] "
               "Received Signals.SIGTERM death signal, shutting down workers\n")
    incs = diagnose_text(faultline_bin, validate, tmp_path, sigterm + TITAN_SAVING)
    assert any(i.get("detector") == "missing_checkpoint_after_sigterm" for i in incs), \
        [(i["rule"], i.get("detector")) for i in incs]


def test_training_steps_after_a_start_close_it(faultline_bin, validate, tmp_path):
    # A version that logs no end line (or a save that went on in the
    # background): steps after the start, then a failure, say nothing of it.
    later = MEGATRON_STEP.replace("13:38:42", "13:39:30").replace("1000/", "1010/")
    incs = diagnose_text(faultline_bin, validate, tmp_path, MEGATRON_STEP + MEGATRON_SAVING + later + PREEMPTED)
    assert incs and not partial(incs)
