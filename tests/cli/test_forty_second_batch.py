"""From the forty-second corpus batch's work part (multi-GPU inference
serving):

- text-generation-inference's launcher runs each shard under the tracing
  span "shard-manager" with the field rank, and tracing_subscriber's compact
  format prints the span's fields after the message: "<stamp> ERROR
  shard-manager: text_generation_launcher: Shard process was signaled to
  shutdown with signal 4 rank=0". The shard's rank was not read from it, so
  the initiating rank of a shard that died was unknown. A message of
  several lines ("Shard complete standard error output:" and the shard's
  stderr) carries the field after its last line, on a line of its own
  (" rank=0") below the error; that form is not read (attribution gives a
  line only what it and the lines before it state), which is why the
  batch's tgi-866 still misses its rank.
"""
from conftest import leading_incident

# huggingface/text-generation-inference#1627: the shard dies on signal 4
# (an illegal instruction) before it prints anything.
SHARD_SIGNALLED = """\
2024-03-06T17:53:22.335714Z  INFO download: text_generation_launcher: Successfully downloaded weights.
2024-03-06T17:53:22.336246Z  INFO shard-manager: text_generation_launcher: Starting shard rank=0
2024-03-06T17:53:31.052367Z ERROR shard-manager: text_generation_launcher: Shard complete standard error output:
 rank=0
2024-03-06T17:53:31.052444Z ERROR shard-manager: text_generation_launcher: Shard process was signaled to shutdown with signal 4 rank=0
Error: ShardCannotStart
2024-03-06T17:53:31.149443Z ERROR text_generation_launcher: Shard 0 failed to start
2024-03-06T17:53:31.149481Z  INFO text_generation_launcher: Shutting down shards
"""


def test_shard_manager_span_field_names_the_rank(faultline_bin, validate, tmp_path):
    inc = leading_incident(faultline_bin, validate, tmp_path, SHARD_SIGNALLED,
                           line="Shard process was signaled to shutdown with signal 4")
    assert inc["initiating"]["rank"] == 0, inc["initiating"]

