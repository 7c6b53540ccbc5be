"""Horovod's stall report read on its per-tensor lines.

Horovod's coordinator lists, after "Stalled ops:", each tensor that some
ranks submitted and others did not. Up to 0.13 the list names the ranks
that were ready ("[ready ranks: 2, 0, 1]"); since mid-2018 it names the
ranks that are missing ("[missing ranks: 1]"), which is the rank out of
step. The warning's opening words ("One or more tensors were submitted
...") may be on another line, interleaved with other ranks' output, or cut
from the excerpt: the tensor lines alone say the job is stalled in a
collective. Other lines naming a Horovod tensor are not a stall.
"""
from conftest import diagnose_text, first_incident, initiating_texts, leading_incident

MISSING = """\
[1,0]<stderr>:[2019-04-13 13:54:31.858119: I horovod/common/operations.cc:500] step 120 loss 0.31
[1,0]<stderr>:[2019-04-13 13:55:31.858119: W horovod/common/operations.cc:588] HorovodBroadcast_dense_kernel_Momentum_0 [missing ranks: 3]
[1,0]<stderr>:[2019-04-13 13:55:31.858146: W horovod/common/operations.cc:588] HorovodBroadcast_conv2d_1_kernel_0 [missing ranks: 3]
"""

READY = """\
Fri Sep 28 11:12:00 2018[1,4]<stderr>:INFO:tensorflow:Restoring parameters from /opt/ckpt/model.ckpt-12000
Stalled ops: HorovodBroadcast_resnet_conv1_weights_0 [ready ranks: 4, 0, 2, 1, 3],
HorovodBroadcast_resnet_conv1_BatchNorm_beta_0 [ready ranks: 4, 0, 2, 1, 3],
"""

NOT_A_STALL = """\
INFO:tensorflow:HorovodBroadcast_conv1_kernel_0 done
step 10 loss 2.31
"""


def test_missing_ranks_lines_are_a_stall_naming_the_rank(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, MISSING)
    assert inc["reference"] == "Training Stuck No Progress", inc["explanation"]
    assert inc["initiating"]["rank"] == 3, inc["initiating"]
    assert "[missing ranks: 3]" in initiating_texts(inc)[0]


def test_ready_ranks_lines_are_a_stall(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, READY,
                     reference="Training Stuck No Progress", line="Stalled ops: HorovodBroadcast_resnet_conv1_weights_0")


def test_a_tensor_name_alone_is_no_stall(faultline_bin, validate, tmp_path):
    assert diagnose_text(faultline_bin, validate, tmp_path, NOT_A_STALL) == []
