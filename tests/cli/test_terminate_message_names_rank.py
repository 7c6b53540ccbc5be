"""C++'s terminate report names the exception's type on one line and its
message on the next ("  what():  ..."); a program may end that message with
the rank it ran as ("... at line: 86 rank: 0"), which the line's
attribution reads. The message is still the one the rankless terminate
line goes on to: it leads the failure and gives it its rank.
"""
from conftest import first_incident, initiating_texts

ENDING = (
    "terminate called after throwing an instance of 'std::runtime_error'\n"
    "terminate called after throwing an instance of 'std::runtime_error'\n"
    "  what():  allreduce failed: peer closed the connection in comm.cpp at line: 120 rank: {first}\n"
    "\n"
    "[gpu-3:29969] *** Process received signal ***\n"
    "[gpu-3:29969] Signal: Aborted (6)\n"
    "  what():  allreduce failed: peer closed the connection in comm.cpp at line: 120 rank: {second}\n"
    "[gpu-2:08669] *** Process received signal ***\n"
    "[gpu-2:08669] Signal: Aborted (6)\n"
)


def test_the_message_with_a_rank_leads_the_terminate_report(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, ENDING.format(first=3, second=1))
    assert "allreduce failed: peer closed the connection" in initiating_texts(inc)[0]
    assert inc["initiating"]["rank"] == 3


def test_a_message_far_below_is_another_failure(faultline_bin, validate, tmp_path):
    text = ("terminate called after throwing an instance of 'std::runtime_error'\n"
            + "".join(f"step {k} loss 0.5\n" for k in range(6))
            + "  what():  allreduce failed in comm.cpp at line: 120 rank: 3\n")
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert "terminate called" in initiating_texts(inc)[0]
