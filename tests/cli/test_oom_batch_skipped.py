"""A caught CUDA OOM the trainer says it skipped (rules tagged
role:carried-on: fairseq's "Skipping batch" and "skipping update", ParlAI's
"ran out of memory, skipping batch") was survived: the incident says so and
ranks below an error that ended a process. A handler that says it skips
the batch and then fails (a traceback right after the skip, with no
progress between: the OOM raised again, or torch's spawn reporting the
worker dead) did not carry on: the OOM leads."""

from conftest import diagnose_path, diagnose_text

OOM_SKIPPED = """\
| WARNING: ran out of memory with exception: CUDA out of memory. Tried to allocate 1.50 GiB (GPU 0; 15.75 GiB total capacity; 11.71 GiB already allocated; 584.94 MiB free; 2.38 GiB cached);
 Skipping batch
"""

OOM_ONE_LINE = "| WARNING: ran out of memory on GPU #1, skipping batch\n"

# Another rank's error that ended its process (no catalog rule names it).
FATAL = """\
Traceback (most recent call last):
  File "/opt/fairseq/train.py", line 310, in <module>
    cli_main()
  File "/opt/fairseq/train.py", line 120, in validate
    raise ValueError("valid subset has no batches")
ValueError: valid subset has no batches
"""

# The handler printed the skip, then raised the OOM again.
RAISED_AFTER_SKIP = """\
Traceback (most recent call last):
  File "/opt/fairseq/fairseq/trainer.py", line 281, in train_step
    raise e
RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.93 GiB total capacity; 7.20 GiB already allocated; 17.56 MiB free; 46.25 MiB cached)
"""


def oom(found):
    return [i for i in found if i["rule"] == "cuda-oom"]


def test_oom_then_skipping_batch_is_survived(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, OOM_SKIPPED * 3)
    assert oom(found) and oom(found)[0]["initiating"].get("survived") is True, found


def test_oom_and_skip_on_one_line_is_survived(faultline_bin, validate, tmp_path):
    text = "| epoch 001:   0%| 315/72115 [01:24<5:21:16,  3.72it/s] THCudaCheck FAIL file=/opt/THC/THCCachingAllocator.cpp line=510 error=2 : out of memory\n"
    found = diagnose_text(faultline_bin, validate, tmp_path, text + OOM_ONE_LINE)
    assert oom(found) and oom(found)[0]["initiating"].get("survived") is True, found


def test_survived_oom_ranks_below_another_ranks_fatal_error(faultline_bin, validate, tmp_path):
    (tmp_path / "rank0.log").write_text(OOM_SKIPPED * 2)
    (tmp_path / "rank1.log").write_text(FATAL)
    found = diagnose_path(faultline_bin, validate, tmp_path / "rank0.log", tmp_path / "rank1.log")
    assert found[0]["rule"] == "unrecognised-fatal-error", [i["rule"] for i in found]
    assert oom(found)[0]["initiating"].get("survived") is True


def test_skip_then_raised_oom_is_not_survived(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, OOM_SKIPPED + RAISED_AFTER_SKIP)
    assert found[0]["rule"] == "cuda-oom", [i["rule"] for i in found]
    assert not found[0]["initiating"].get("survived"), found[0]["initiating"]
