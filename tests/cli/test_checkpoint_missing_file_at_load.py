"""A checkpoint file missing when a job loads it (a DeepSpeed ZeRO shard, a
torch.distributed.checkpoint .metadata) says the resume failed; by itself
it does not say that the save was cut short: a converter that writes no
optimizer states, another layout or a wrong path misses the same files
(issue #18: work cases read as Checkpoint Partial Save, labelled Training
Resume Failure). The file names a partial save when the job's logs show a
save (a checkpoint-saved line): checkpoint-partial-save then leads and
explains the resume failure. DCP's CheckpointException gathers the
exceptions of the failing ranks from a save or a load: raised under DCP's
load path (state_dict_loader.py, the reader's read_metadata) it is the
resume's failure."""
from conftest import first_incident, initiating_texts

MISSING_SHARD = """\
[rank0]: Traceback (most recent call last):
[rank0]:   File "/workspace/train.py", line 188, in <module>
[rank0]:     engine.load_checkpoint(args.load_dir)
[rank0]:   File "/usr/local/lib/python3.10/dist-packages/deepspeed/runtime/engine.py", line 2769, in load_checkpoint
[rank0]:     success = self._load_zero_checkpoint(load_dir, tag, load_optimizer_states=load_optimizer_states)
[rank0]: FileNotFoundError: [Errno 2] No such file or directory: '/opt/ckpt/llama-13b/global_step001/zero_pp_rank_0_mp_rank_03_optim_states.pt'
"""

SAVE_THEN_MISSING_SHARD = """\
[2026-11-02 13:40:02,118] [INFO] [logging.py:128:log_dist] [Rank 0] Saving model checkpoint: /opt/ckpt/llama-13b/global_step001/mp_rank_00_model_states.pt
""" + MISSING_SHARD

DCP_LOAD = """\
Traceback (most recent call last):
  File "/opt/train/checkpoint_handler.py", line 67, in load_model_sharded
    dist_cp.load_state_dict(
  File "/opt/conda/lib/python3.9/site-packages/torch/distributed/_shard/checkpoint/state_dict_loader.py", line 99, in load_state_dict
    central_plan = distW.reduce_scatter("plan", local_step, global_step)
  File "/opt/conda/lib/python3.9/site-packages/torch/distributed/_shard/checkpoint/utils.py", line 162, in reduce_scatter
    raise result
torch.distributed._shard.checkpoint.api.CheckpointException: CheckpointException ranks:dict_keys([0, 1, 2, 3])
"""


def test_missing_shard_at_load_is_a_resume_failure(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, MISSING_SHARD)
    assert inc["rule"] == "checkpoint-resume-failure", inc["rule"]
    assert inc["reference"] == "Training Resume Failure"
    assert any("zero_pp_rank_0_mp_rank_03_optim_states.pt" in t for t in initiating_texts(inc)), initiating_texts(inc)


def test_missing_shard_after_a_save_in_the_logs_is_a_partial_save(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, SAVE_THEN_MISSING_SHARD)
    assert inc["rule"] == "checkpoint-partial-save", inc["rule"]
    assert inc["reference"] == "Checkpoint Partial Save"


def test_dcp_exception_under_its_load_path_is_a_resume_failure(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, DCP_LOAD)
    assert inc["rule"] == "checkpoint-resume-failure", inc["rule"]
    assert any("CheckpointException ranks:dict_keys([0, 1, 2, 3])" in t for t in initiating_texts(inc)), \
        initiating_texts(inc)
