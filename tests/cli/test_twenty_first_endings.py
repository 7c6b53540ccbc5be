"""Endings the twenty-first endings audit (tests/cli/endings, e21-*.log) read
as nothing or by a line that did not say what happened, read where the
program that printed them writes them (issue #18):

- the LightGBM command-line program catches the exception that ended the
  run and writes 'Met Exceptions:' alone, the exception's what() on the
  next line, then exits with status -1 (src/main.cpp);
- GNU timeout writes 'timeout: the monitored command dumped core' when the
  command it ran died of a core-dumping signal, then re-raises the signal
  on itself, so the shell's 'Segmentation fault' below it is the timeout
  process's (coreutils src/timeout.c);
- OpenVINO's exceptions start with where they were thrown, 'Exception from
  <file>:<line>:' (or "Check '<cond>' failed at <file>:<line>:"), over the
  message on the next line, nested once per layer that rethrew it
  (src/core/src/except.cpp, make_what);
- OpenVINO's GPU plugin, on CL_OUT_OF_RESOURCES up to 2025.0, writes
  '[GPU] force exit.' and '... so GPU plugin can't finish correctly.' and
  ends the process with _Exit(-1) (ocl_common.hpp force_exit).
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # lightgbm-org/LightGBM#1410: the CLI's GPU trainer, its last lines.
    "lightgbm-met-exceptions": ("""\
[LightGBM] [Info] This is the GPU trainer!!
[LightGBM] [Info] Total Bins 6143
[LightGBM] [Info] Number of data: 7000, number of used features: 28
Met Exceptions:
Unknown OpenCL Error (221)
""", FALLBACK, "Unknown OpenCL Error (221)", None),
    # whyour/qinglong#1975: timeout's line, then bash's report of the
    # timeout process that re-raised the signal.
    "timeout-monitored-command-dumped-core": ("""\
timeout: the monitored command dumped core
/ql/shell/otask.sh: line 90: 28427 Segmentation fault      $timeoutCmd $which_program $file_param
""", FALLBACK, "the monitored command dumped core", None),
    # intel/openvino-ai-plugins-gimp#223: the GPU plugin's error under two
    # nested locations, in a server thread.
    "openvino-nested-exception-locations": ("""\
    return OVDict(super().infer(_data_dispatch(
                  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
RuntimeError: Exception from src\\inference\\src\\cpp\\infer_request.cpp:224:
Exception from src\\plugins\\intel_gpu\\src\\runtime\\ocl\\ocl_stream.cpp:369:
[GPU] clFlush, error code: -5 CL_OUT_OF_RESOURCES

During handling of the above exception, another exception occurred:
""", FALLBACK, None, "[GPU] clFlush, error code: -5 CL_OUT_OF_RESOURCES"),
    # openvinotoolkit/openvino#25141: the force exit's message as posted.
    "openvino-gpu-force-exit-message": ("""\
"Due to the driver bug any subsequent OpenCL API call will cause application hang, so GPU plugin can't finish correctly. Please try to update the driver or reduce memory consumption (use smaller batch size, less streams, lower precision, etc)to avoid CL_OUT_OF_RESOURCES exception"
""", FALLBACK, "GPU plugin can't finish correctly", None),
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_ending_leads(faultline_bin, validate, tmp_path, name):
    text, rule, initiating, any_line = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, line=initiating, any_line=any_line)


def test_lightgbm_info_lines_alone_are_quiet(faultline_bin, validate, tmp_path):
    # LightGBM's GPU trainer starting and building its kernels (pycaret
    # issue 3273): the same program's lines, without its exception report.
    incidents = diagnose_text(faultline_bin, validate, tmp_path, """\
[LightGBM] [Info] Using GPU Device: NVIDIA GeForce RTX 3070 Ti, Vendor: NVIDIA Corporation
[LightGBM] [Info] Compiling OpenCL Kernel with 16 bins...
1 warning generated.
[LightGBM] [Info] GPU programs have been built
[LightGBM] [Warning] GPU acceleration is disabled because no non-trivial dense features can be found
""")
    assert not [i for i in incidents if not i["reference"].startswith("Benign")], \
        [i["reference"] for i in incidents]
