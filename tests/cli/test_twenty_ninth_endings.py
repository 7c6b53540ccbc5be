"""Endings the twenty-ninth endings audit (tests/cli/endings, e29-*.log, a
random sample of GPU jobs' failed endings) read wrong, read where the
program that printed them writes them (issue #18):

- TensorRT 7 names the ErrorCode its error carries (nvinfer1::ErrorCode in
  NvInferRuntimeCommon.h, without the 'k': INVALID_ARGUMENT, INVALID_CONFIG,
  INVALID_STATE, FAILED_ALLOCATION, ...) after the logger's error mark
  ('[TensorRT] ERROR: ' in the Python API, '[E] [TRT] ' in the samples' and
  trtexec's logger). A failed deserialization ('INVALID_CONFIG: Deserialize
  the cuda engine failed.') returns no engine, and the program then dies on
  the null engine (Python's AttributeError on None, a segmentation fault):
  the incident was led by that consequence, not by TensorRT's error.
- The CUDA samples (deviceQuery, bandwidthTest, and the many programs that
  copy their check) print a failed runtime call as '<call> returned <code>'
  and cudaGetErrorString's text on the next line after '-> ': one message
  over two lines. With code 35 (cudaErrorInsufficientDriver) only its
  second line was read, so the incident started one line late.
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # The Python API's logger, then the script using the None engine.
    "trt7-python-deserialize-then-attributeerror": ("""\
loading engine from models/detector_fp16.trt
[TensorRT] ERROR: INVALID_ARGUMENT: Cannot deserialize with an empty memory buffer.
[TensorRT] ERROR: INVALID_CONFIG: Deserialize the cuda engine failed.
Traceback (most recent call last):
  File "infer.py", line 21, in <module>
    ctx = engine.create_execution_context()
AttributeError: 'NoneType' object has no attribute 'create_execution_context'
""", "INVALID_ARGUMENT: Cannot deserialize with an empty memory buffer"),
    # The samples' logger in a C++ program that goes on with a null engine.
    "trt7-samples-logger-then-segfault": ("""\
[03/14/2022-08:11:40] [I] [TRT] Loading engine: tracker.engine
[03/14/2022-08:11:40] [E] [TRT] INVALID_STATE: std::exception
[03/14/2022-08:11:40] [E] [TRT] INVALID_CONFIG: Deserialize the cuda engine failed.
Segmentation fault (core dumped)
""", "INVALID_STATE: std::exception"),
}

DRIVER = {
    # deviceQuery's check, the shape bandwidthTest prints too.
    "samples-device-count-returned-35": ("""\
./deviceQuery Starting...

 CUDA Device Query (Runtime API) version (CUDART static linking)

cudaGetDeviceCount returned 35
-> CUDA driver version is insufficient for CUDA runtime version
Result = FAIL
""", "cudaGetDeviceCount returned 35"),
}

HEALTHY = {
    # A warning that names an ErrorCode is not an error: the build goes on.
    "trt7-warning-with-code-name": """\
[TensorRT] WARNING: INVALID_ARGUMENT: some tactics do not have sufficient workspace memory to run
[TensorRT] INFO: Detected 1 inputs and 2 output network tensors.
engine built in 41.2 s, saved to model.trt
""",
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_tensorrt_error_leads(faultline_bin, validate, tmp_path, name):
    text, initiating = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=initiating)


@pytest.mark.parametrize("name", sorted(DRIVER))
def test_samples_check_leads_with_its_call(faultline_bin, validate, tmp_path, name):
    text, initiating = DRIVER[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule="cuda-driver-mismatch", line=initiating)


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_healthy_ending_has_no_incident(faultline_bin, validate, tmp_path, name):
    assert not diagnose_text(faultline_bin, validate, tmp_path, HEALTHY[name])
