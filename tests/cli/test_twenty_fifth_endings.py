"""Endings the twenty-fifth endings audit (tests/cli/endings, e25-*.log, a
random sample of threads) read wrong, read where the program that printed
them writes them (issue #18):

- PyTorch's NCCL watchdog writes 'Watchdog caught collective operation
  timeout: ' and the work as WorkNCCL(SeqNum=, OpType=, NumelIn=,
  NumelOut=, Timeout(ms)=) (operator<< in ProcessGroupNCCL.cpp), whose only
  parentheses inside are those of '(ms)'. A post or a terminal that wraps
  lines at a fixed width can cut the work anywhere, even in the middle of a
  field's name ('NumelIn=' as 'Num' and 'elIn='); the wrapped-line signal
  read a cut only after 'timeout:' or between fields, so such a message
  alone gave no incident and, under the watchdog's other lines, was left
  out of the evidence.
"""
import pytest

from conftest import leading_incident

WATCHDOG = "nccl-watchdog-timeout"

FAILURES = {
    # fudan-generative-vision/hallo#224: the watchdog's message as posted,
    # wrapped at a fixed width inside 'NumelIn='.
    "watchdog-message-wrapped-inside-a-field-name": ("""\
[rank2]:[E ProcessGroupNCCL.cpp:1182] [Rank 2] NCCL watchdog thread terminated with exception: [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLGATHER, Num
elIn=1, NumelOut=4, Timeout(ms)=1800000) ran for 1800650 milliseconds before timing out.
""", "Watchdog caught collective operation timeout", None),
    # The same thread: the lines above it, the process taken down, and the
    # watchdog's backtrace; the watchdog's message is among the evidence.
    "watchdog-message-wrapped-under-taking-process-down": ("""\
ProcessGroupNCCL.cpp:537] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplet
e data.
[rank2]:[E ProcessGroupNCCL.cpp:543] To avoid data inconsistency, we are taking the entire process down.
[rank2]:[E ProcessGroupNCCL.cpp:1182] [Rank 2] NCCL watchdog thread terminated with exception: [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLGATHER, Num
elIn=1, NumelOut=4, Timeout(ms)=1800000) ran for 1800650 milliseconds before timing out.
Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:525 (most recent call first):
""", None, "Watchdog caught collective operation timeout"),
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_ending_leads(faultline_bin, validate, tmp_path, name):
    text, initiating, any_line = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=WATCHDOG, line=initiating, any_line=any_line)
