"""A message wrapped where the line ends, as terminals, log viewers and posts
wrap it, is read on its fixed words.

PyTorch's watchdog prints "Watchdog caught collective operation timeout: "
followed by the work it timed out on (WorkNCCL(SeqNum=..., OpType=...,
...)). Wrapped after the colon or inside WorkNCCL(...), the line still holds
the fixed words; the work's fields are on the next line. The whole message
on one line is read as before (its fields extracted), and the words quoted
mid-sentence are not a wrapped message.
"""
from conftest import diagnose_text, leading_incident


WRAPPED_AFTER_COLON = """\
[rank2]:[E1206 18:44:13.275158817 ProcessGroupNCCL.cpp:607] [PG 0 Rank 2] Watchdog caught collective operation timeout:
WorkNCCL(SeqNum=4711, OpType=ALLREDUCE, NumelIn=6553600, NumelOut=6553600, Timeout(ms)=600000)
ran for 600005 milliseconds before timing out.
"""

WRAPPED_INSIDE_WORK = """\
Epoch 3:  41%|####      | 812/1980 [22:03<31:42,  1.63s/it]
[E ProcessGroupNCCL.cpp:737] [Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=90210, OpType=ALLREDUCE,
Timeout(ms)=1800000) ran for 1800437 milliseconds before timing out.
"""

QUOTED = """\
Note: if you see 'Watchdog caught collective operation timeout: ...' raise the timeout.
step 10 loss 2.31
"""


def test_watchdog_wrapped_after_the_colon_is_the_watchdog(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, WRAPPED_AFTER_COLON,
                     rule="nccl-watchdog-timeout", line="Watchdog caught collective operation timeout:")


def test_watchdog_wrapped_inside_the_work_is_the_watchdog(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, WRAPPED_INSIDE_WORK,
                     rule="nccl-watchdog-timeout", line="OpType=ALLREDUCE,")


def test_watchdog_words_quoted_mid_line_are_no_incident(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, QUOTED)
    assert all(inc["rule"] != "nccl-watchdog-timeout" for inc in found)
