"""From the forty-sixth corpus batch's work part (cuDNN refusing a call):

- PyTorch 2.3 prints cuDNN's refusal of one execution plan as a Python
  warning ("UserWarning: Plan failed with a cudnnException: ...
  CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at ...Conv_v8.cpp:919.)")
  and runs the convolution with another plan: the run goes on. The line was
  read as a cuDNN refusal that ended the job (the batch's pytorch-121834, a
  training run, and openedai-speech-9, a server that kept answering).
  A line Python's warnings module printed ("<file>:<lineno>: <Category>:
  <message>", CPython's warnings formatter) now counts as survived, whatever
  rule reads it, unless the log shows a failure after it.
"""
from conftest import diagnose_text, leading_incident

# pytorch/pytorch#126605: YOLOv8 training, "The training seems to be progressing though".
PLAN_FAILED_IN_BACKWARD = """\
site-packages/torch/autograd/graph.py:744: UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at ../aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)
  return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass
"""

# mseitzer/pytorch-fid#111: the FID is computed and printed after the warning.
PLAN_FAILED_THEN_RESULT = """\
(fid) 1104:~/wav/pytorch-fid-master/src$ python -m pytorch_fid pytorch-fid-master/real pytorch-fid-master/fake --device cuda:0
anaconda3/envs/fid/lib/python3.8/site-packages/torch/nn/modules/conv.py:456: UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at /opt/conda/conda-bld/pytorch_1712608843393/work/aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)
  return F.conv2d(input, weight, bias, self.stride,
FID:  206.58618781110312
"""

# The same refusal raised as the error (pytorch/pytorch#11065's wording):
# no warning, the call failed.
REFUSAL_RAISED = """\
  File "~/miniconda3/lib/python3.7/site-packages/torch/nn/modules/conv.py", line 308, in forward
    self.padding, self.dilation, self.groups)
RuntimeError: CuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous input.
"""


def _failing(incidents):
    return [i for i in incidents if not i.get("survived") and not (i.get("initiating") or {}).get("survived")]


def test_cudnn_plan_warning_alone_is_survived(faultline_bin, validate, tmp_path):
    for text in (PLAN_FAILED_IN_BACKWARD, PLAN_FAILED_THEN_RESULT):
        found = diagnose_text(faultline_bin, validate, tmp_path, text)
        assert _failing(found) == [], [(i["rule"], i["explanation"]) for i in found]


def test_warning_followed_by_a_failure_is_not_survived(faultline_bin, validate, tmp_path):
    # The warning's line may be the cause of a failure the log shows after it.
    inc = leading_incident(faultline_bin, validate, tmp_path, PLAN_FAILED_IN_BACKWARD + REFUSAL_RAISED,
                           rule="cudnn-call-refused")
    assert not inc.get("survived"), inc["explanation"]


def test_raised_refusal_is_still_the_failure(faultline_bin, validate, tmp_path):
    inc = leading_incident(faultline_bin, validate, tmp_path, REFUSAL_RAISED, rule="cudnn-call-refused",
                           line="CUDNN_STATUS_NOT_SUPPORTED")
    assert not inc.get("survived"), inc["explanation"]
