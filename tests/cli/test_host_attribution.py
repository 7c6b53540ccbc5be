"""The initiating line's rank and host on multi-rank, multi-node logs
(issue #18): the corpus's "initiating rank/host right" figures trailed
top-1, so each mechanism here reads a rank or a host from a format a tool
prints, never from one log.

- cuda_memtest (cuda_memtest.h's PRINTF and FPRINTF, every release) puts
  "[<time_string()>][<gethostname()>][<gpu index>]:" in front of each line,
  "[...][<temp> C]:" more with --monitor_temp: the host is the line's own,
  the index a GPU of that host (not a rank).
- torchelastic's "failed (exitcode: N) local_rank: L (pid: P)" on a one-node
  archive is global rank L (torchrun's rank is group_rank *
  local_world_size + local_rank, a single node being group 0); a tqdm bar
  that names no rank is no global rank that could contradict it.
- tracing-subscriber's compact format prints a span's fields after the
  event's message (text-generation-inference's launcher: its
  "shard-manager" span carries `rank`); a message ending in a newline (the
  shard's relayed standard error) leaves them alone on the next line,
  " rank=0": the lines above it, back to the event's stamped header, are
  that rank's.

The mh- endings (tests/cli/endings, index.json) are real excerpts from
public threads; EXPECT below holds the host and rank their thread
establishes for the first failure (index.json carries no rank or host).

Run as a script for the endings' figures:
python3 tests/cli/test_host_attribution.py --bin build/src/cli/faultline"""
import argparse
import json
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from conftest import diagnose_text, first_incident  # noqa: E402
ENDINGS = HERE / "endings"

# ending -> (host, rank, gap): None where the thread does not establish it;
# gap says why the current mechanisms do not read it (a strict xfail).
EXPECT = {
    "mh-nccl-prefix-shm-invalid-horovod": ("heinzel135", None, None),
    "mh-torchelastic-root-cause-fqdn": ("as01r1b03", 0, None),
    "mh-torchrun-local-rank-sigkill-deepspeed-ranks": (None, 1, None),
    "mh-cuda-memtest-invalid-option-mpiexec": (
        "quasar", None, "the usage error under the prefixed banner has no prefix of its own and no rule reads it"),
    "mh-cuda-memtest-invalid-option-quasar": (
        "quasar", None, "cuda_memtest's usage error is read by no rule: no incident"),
}


def initiating(binary, name):
    p = subprocess.run([binary, "diagnose", "--json", str(ENDINGS / f"{name}.log")], capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    incidents = json.loads(p.stdout).get("incidents") or []
    return incidents[0]["initiating"] if incidents else None


def wrong(ini, host, rank):
    """What is wrong with the first incident's rank and host, or None."""
    if ini is None:
        return "no incident"
    got_host = (ini.get("host") or "").split(".", 1)[0].lower()
    if host is not None and got_host != host.lower():
        return f"host {ini.get('host')!r}, not {host!r}"
    if rank is not None and ini.get("rank") != rank:
        return f"rank {ini.get('rank')!r}, not {rank}"
    return None


def cases():
    for name, (host, rank, gap) in sorted(EXPECT.items()):
        marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
        yield pytest.param(name, host, rank, marks=marks, id=name)


@pytest.mark.parametrize("name,host,rank", list(cases()))
def test_ending_rank_and_host(faultline_bin, name, host, rank):
    assert wrong(initiating(faultline_bin, name), host, rank) is None


def test_every_expectation_is_an_ending():
    index = json.loads((ENDINGS / "index.json").read_text())
    assert set(EXPECT) <= set(index)
    assert all((ENDINGS / f"{n}.log").is_file() for n in EXPECT)


CUDA_MEMTEST_ERROR = ("[11/21/2021 13:15:17][gpu-n07][1]:ERROR: CUDA error: an illegal memory access was "
                      "encountered, line 590, file tests.cu\n")


def test_cuda_memtest_prefix_names_the_host(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, CUDA_MEMTEST_ERROR)
    assert inc["initiating"]["host"] == "gpu-n07"
    # The index is a GPU of the host, not a rank.
    assert inc["initiating"].get("rank") is None


def test_cuda_memtest_prefix_with_temperature(faultline_bin, validate, tmp_path):
    text = CUDA_MEMTEST_ERROR.replace("[gpu-n07][1]:", "[node12.cluster][3][52 C]:")
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["initiating"]["host"] == "node12"


def test_a_bracketed_stamp_and_level_is_no_host(faultline_bin, validate, tmp_path):
    # Two brackets after a stamp, the second not followed by a GPU index:
    # a logger's level, not cuda_memtest's host.
    text = CUDA_MEMTEST_ERROR.replace("[gpu-n07][1]:", "[error-1]:")
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert not inc["initiating"].get("host")


ONE_NODE_SIGKILL = (
    "  5%|5         | 200/4443 [11:11:27<255:23:04, 216.68s/it]\n"
    "W0613 07:54:19.895000 180275 site-packages/torch/distributed/elastic/multiprocessing/api.py:897] "
    "Sending process 180495 closing signal SIGTERM\n"
    "E0613 07:54:22.195000 180275 site-packages/torch/distributed/elastic/multiprocessing/api.py:869] "
    "failed (exitcode: -9) local_rank: 3 (pid: 180497) of binary: /opt/env/bin/python3.11\n")


def test_a_progress_bar_without_a_rank_leaves_one_node_local_rank_global(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, ONE_NODE_SIGKILL)
    assert inc["initiating"]["rank"] == 3


def test_a_named_global_rank_still_stops_it(faultline_bin, validate, tmp_path):
    # A progress line under global rank 9 says the node is not group 0:
    # local rank 3 is then not global rank 3.
    text = "[rank9]:" + ONE_NODE_SIGKILL
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["initiating"].get("rank") != 3


TGI_SHARD_ERROR = (
    "2023-08-17T10:23:27.032000Z ERROR shard-manager: text_generation_launcher: Shard complete standard "
    "error output:\n"
    "\n"
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/bin/text-generation-server", line 8, in <module>\n'
    "    sys.exit(app())\n"
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 128.00 MiB (GPU 0; 15.77 GiB total "
    "capacity; 15.37 GiB already allocated; 13.62 MiB free)\n"
    " rank=1\n"
    "Error: ShardCannotStart\n"
    "2023-08-17T10:23:27.032737Z ERROR text_generation_launcher: Shard 1 failed to start\n")


def test_a_span_field_tail_names_the_rank_of_the_message_above(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, TGI_SHARD_ERROR)
    assert inc["initiating"]["rank"] == 1


def test_a_span_field_tail_reaches_no_further_than_its_header(faultline_bin, validate, tmp_path):
    # The error above the header is another event's: the tail names not it.
    text = ("2023-08-17T10:23:20.000000Z ERROR text_generation_launcher: Webserver Crashed\n"
            "RuntimeError: CUDA error: an illegal memory access was encountered\n" + TGI_SHARD_ERROR)
    found = diagnose_text(faultline_bin, validate, tmp_path, text)
    other = [i for i in found if any("illegal memory access" in e.get("text", "")
                                     for e in i["initiating"].get("evidence", []))]
    assert other, "no incident of the error above the header"
    assert other[0]["initiating"].get("rank") != 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    a = ap.parse_args()
    host_n = host_ok = rank_n = rank_ok = 0
    for name, (host, rank, _gap) in sorted(EXPECT.items()):
        ini = initiating(a.bin, name)
        if host is not None:
            host_n += 1
            host_ok += wrong(ini, host, None) is None
        if rank is not None:
            rank_n += 1
            rank_ok += wrong(ini, None, rank) is None
        print(f"{name}: {wrong(ini, host, rank) or 'right'}")
    print(f"host right {host_ok}/{host_n}, rank right {rank_ok}/{rank_n}")


if __name__ == "__main__":
    sys.exit(main())
