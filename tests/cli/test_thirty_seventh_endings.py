"""Endings the thirty-seventh endings audit (tests/cli/endings, e37-*.log, a
random sample of failed endings from frameworks other than PyTorch and
their GPU runtimes: JAX/XLA, TensorFlow/Keras, PaddlePaddle, MindSpore,
MXNet, ONNX Runtime, TensorRT, Triton, CuPy, ROCm) gave no incident or the
wrong first line, read where the program that printed them writes them
(issue #18):

- TensorFlow's status group summary (StatusGroup::as_summary_status): an
  exception or a coordinator's INFO record whose message is only 'N root
  error(s) found.', then one '  (i) <code>: <message>' line per root
  error. The count led, or, under an INFO record, nothing did; the entry
  says what failed and now leads (field `root_error`).
- TensorRT's logger error records ('[E] [TRT] ', '[TRT] [E] ', the
  samples' '[time] [E] ', '[TensorRT] ERROR: ') where the log ends in one:
  the builder goes on from many of them, so only a record the log ends in
  is a failure (field `ending`).
- MSVC's error diagnostics ('<file>(<line>): error C<nnnn>: ...') where
  the log ends in them: a run-time build (a Triton launcher, a JIT
  extension) stopped there (field `ending`).
- PaddlePaddle's C++ traceback header ('C++ Call Stacks (More useful to
  developers):' through 1.8, 'C++ Traceback (most recent call last):'
  since) over frames the log is cut in: Paddle raised, not what (field
  `cut`).
- An IPython traceback whose source ends in a frame's head cut before its
  end ('File <path>:<line>, in <function>(...' truncated mid-line): the
  header's class is what the program raised, as for one that ends between
  frames.
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # Keras' fit under TensorFlow 2.x before 2.9: the exception counts the
    # root errors, the first entry says what failed.
    "tf-status-group-under-exception": ("""\
Epoch 1/20
UnknownError: 2 root error(s) found.
  (0) Unknown:  Failed to get convolution algorithm. This is probably because cuDNN failed to initialize, so try looking to see if a warning log message was printed above.
	 [[node sequential/conv2d/Conv2D (defined at train.py:41) ]]
	 [[Identity/_18]]
  (1) Unknown:  Failed to get convolution algorithm. This is probably because cuDNN failed to initialize, so try looking to see if a warning log message was printed above.
	 [[node sequential/conv2d/Conv2D (defined at train.py:41) ]]
0 successful operations.
0 derived errors ignored. [Op:__inference_train_function_1187]
""", "(0) Unknown:  Failed to get convolution algorithm"),
    # TensorFlow 2.12 and later name the code by its enum, here under a
    # coordinator's INFO record, which is no fatal line of its own.
    "tf-status-group-under-coordinator-record": ("""\
I1203 10:01:02.123456 140231 coordinator.py:219] Error reported to Coordinator: <class 'tensorflow.python.framework.errors_impl.InvalidArgumentError'>, 2 root error(s) found.
  (0) INVALID_ARGUMENT:  indices[12] = 50000 is not in [0, 50000)
	 [[{{node embedding/embedding_lookup}}]]
  (1) INVALID_ARGUMENT:  indices[12] = 50000 is not in [0, 50000)
0 successful operations.
0 derived errors ignored.
""", "(0) INVALID_ARGUMENT:  indices[12] = 50000"),
    # trtexec's logger: the build stopped on an error record.
    "tensorrt-sample-logger-error-ends-log": ("""\
[03/14/2021-09:12:01] [I] [TRT] Detected 1 inputs and 1 output network tensors.
[03/14/2021-09:12:40] [E] [TRT] Network validation failed.
""", "[E] [TRT] Network validation failed."),
    # The Python API's logger since TensorRT 8.
    "tensorrt-python-logger-error-ends-log": ("""\
[01/05/2023-11:02:01] [TRT] [I] [MemUsageChange] Init CUDA: CPU +328, GPU +0, now: CPU 341, GPU 1200 (MiB)
[01/05/2023-11:02:03] [TRT] [E] ModelImporter.cpp:726: While parsing node number 12 [Resize -> "onnx::Resize_123"]:
""", "[TRT] [E] ModelImporter.cpp:726"),
    # A run-time build of a C launcher with MSVC that stopped on a missing header.
    "msvc-fatal-error-ends-log": ("""\
main.c
C:\\Users\\opt\\AppData\\Local\\Temp\\tmpab12cd\\cuda_utils.c(14): fatal error C1083: Cannot open include file: 'cuda.h': No such file or directory
""", "fatal error C1083"),
    # Two MSVC errors and the build's own message after them.
    "msvc-errors-then-one-line": ("""\
__triton_launcher.c
C:\\Users\\opt\\AppData\\Local\\Temp\\tmp9x\\__triton_launcher.c(88): error C2065: 'CUstream': undeclared identifier
C:\\Users\\opt\\AppData\\Local\\Temp\\tmp9x\\__triton_launcher.c(91): error C2146: syntax error: missing ';' before identifier 'stream'
Failed to compile the launcher.
""", "error C2065: 'CUstream'"),
    # PaddlePaddle 1.x: its error's C++ call stacks, the log cut in them.
    "paddle-cpp-call-stacks-cut": ("""\
--------------------------------------------
C++ Call Stacks (More useful to developers):
--------------------------------------------
0   std::string paddle::platform::GetTraceBackString<std::string const&>(std::string const&, char const*, int)
1   paddle::platform::EnforceNotMet::EnforceNotMet(std::string const&, char const*, int)
2   paddle::operators::CUDNNConvOpKernel<float>::Compute(paddle::framework::ExecutionContext const&) const
""", "C++ Call Stacks (More useful to developers)"),
    # PaddlePaddle 2.x's header, cut the same way.
    "paddle-cpp-traceback-cut": ("""\
--------------------------------------
C++ Traceback (most recent call last):
--------------------------------------
0   paddle::imperative::Tracer::TraceOp(std::string const&, paddle::imperative::NameVarBaseMap const&)
1   paddle::imperative::PreparedOp::Run(paddle::imperative::NameVarBaseMap const&)
""", "C++ Traceback (most recent call last)"),
    # An IPython 8 traceback whose log was truncated inside a frame's head.
    "ipython-frame-head-cut": ("""\
---------------------------------------------------------------------------
RuntimeError                              Traceback (most recent call last)
Cell In[4], line 2
      1 x = torch.ones(4, device="cuda")
----> 2 y = model(x)

File /opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py:1518, in Module._wrapped_call_impl(self, *args, **kwargs)
   1516     return self._compiled_call_impl(*args, **kwargs)
   1517 else:
-> 1518     return self._call_impl(*args, **kwargs)

File /opt/conda/lib/python3.10/site-packages/torch/nn/modu
""", "RuntimeError"),
}

HEALTHY = {
    # The builder logs an error for a tactic it could not run, skips it and
    # builds the engine.
    "tensorrt-error-record-then-engine-built": """\
[03/14/2021-09:12:40] [E] [TRT] Tactic Device request: 4242MB Available: 3000MB. Device memory is insufficient to use tactic.
[03/14/2021-09:12:40] [W] [TRT] Skipping tactic 3 due to insufficient memory on requested size of 4242 device memory
[03/14/2021-09:13:02] [I] Engine built in 62.1 sec.
[03/14/2021-09:13:05] [I] Throughput: 812.3 qps
""",
    # An optional C extension that did not build, and the run that went on
    # without it.
    "msvc-error-then-fallback-and-training": """\
C:\\opt\\pkg\\speedups.c(12): error C2065: 'uint128_t': undeclared identifier
Could not build the optional speedups; using the pure-Python implementation.
Epoch 1/3: loss 0.7123
Epoch 2/3: loss 0.5521
Epoch 3/3: loss 0.4410
Training finished.
""",
    # TensorFlow 1.x's queue runners end the input with OutOfRange, which the
    # coordinator records; an evaluation list numbered like status entries.
    "tf-coordinator-end-of-input": """\
I0426 23:04:32.326952 139678773683968 coordinator.py:224] Error reported to Coordinator: <class 'tensorflow.python.framework.errors_impl.OutOfRangeError'>, FIFOQueue '_1_batch/fifo_queue' is closed and has insufficient elements (requested 32, current size 0)
Evaluation:
  (0) Internal validation set accuracy 0.912
  (1) External test set accuracy 0.887
Done training for 10 epochs, 31250 steps.
""",
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_failed_ending_leads(faultline_bin, validate, tmp_path, name):
    text, initiating = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=initiating)


def test_paddle_error_summary_leads_its_traceback(faultline_bin, validate, tmp_path):
    """Where the log has Paddle's whole error, the summary's error leads,
    not the header of its C++ traceback."""
    text = """\
--------------------------------------
C++ Traceback (most recent call last):
--------------------------------------
0   paddle::imperative::Tracer::TraceOp(std::string const&, paddle::imperative::NameVarBaseMap const&)
1   paddle::memory::allocation::CUDAAllocator::AllocateImpl(unsigned long)

----------------------
Error Message Summary:
----------------------
InvalidArgumentError: The shape of Input(X) should be [N, C, H, W], but received [8, 3, 224]. (at /paddle/paddle/phi/kernels/gpu/conv_kernel.cu:118)
"""
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK,
                     line="InvalidArgumentError: The shape of Input(X)")


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_healthy_ending_has_no_incident(faultline_bin, validate, tmp_path, name):
    assert not diagnose_text(faultline_bin, validate, tmp_path, HEALTHY[name])
