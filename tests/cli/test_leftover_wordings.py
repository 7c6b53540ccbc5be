"""Wordings the earlier endings audits left open (issue #18), read where the
programs that print them write them:

- The CUDA samples (deviceQuery, bandwidthTest and the programs that copy
  their check) print a failed runtime call as '<call> returned <code>' and
  cudaGetErrorString's text on the next line after '-> ': one message over
  two lines, whose first line is where it starts, for any code. The text
  names the error in every CUDA release, where the number does not (CUDA
  10.1 renumbered the runtime's errors: 4 was cudaErrorLaunchFailure up to
  10.0). Their helper_cuda.h check prints 'CUDA error at <file>:<line>
  code=<N>(<enum name>) "<call>"'. A catalog rule that reads the error names
  the failure; an error none reads (no device) is the fallback's, led by
  the samples' line.
- Triton Inference Server's 'failed to load '<model>' version <N>: <reason>'
  and the UNAVAILABLE cell of its start-up model table are a failed
  start-up whose reason is that text; READY rows are nothing.
- cuda_memtest's 'ERROR: Invalid option:<arg>' is a usage error, its
  '(<test>) N errors found in block B' a GPU memory fault.
"""
import pytest

from conftest import diagnose_text, first_incident, initiating_texts, leading_incident

FALLBACK = "unrecognised-fatal-error"


def device_query(code, text):
    """deviceQuery's output when cudaGetDeviceCount fails (the shape
    bandwidthTest and the copies of the check print too)."""
    return (f"./deviceQuery Starting...\n\n"
            f" CUDA Device Query (Runtime API) version (CUDART static linking)\n\n"
            f"cudaGetDeviceCount returned {code}\n"
            f"-> {text}\n"
            f"Result = FAIL\n")


# code, cudaGetErrorString's text, the rule that reads it
SAMPLES = {
    "46-devices-unavailable": (46, "all CUDA-capable devices are busy or unavailable",
                               "restart-leftover-gpu-process"),
    "214-ecc-uncorrectable": (214, "uncorrectable ECC error encountered", "xid-ecc-uncorrectable"),
    "719-launch-failure": (719, "unspecified launch failure", "cuda-launch-failure"),
    # CUDA 10.0 and older: the same error under its old number.
    "4-launch-failure-cuda10": (4, "unspecified launch failure", "cuda-launch-failure"),
    "700-illegal-address": (700, "an illegal memory access was encountered", "cuda-illegal-address"),
    "802-system-not-ready": (802, "system not yet initialized", "nvswitch-fabric-error"),
    "804-compat-not-supported": (804, "forward compatibility was attempted on non supported HW",
                                 "cuda-driver-mismatch"),
    "35-insufficient-driver": (35, "CUDA driver version is insufficient for CUDA runtime version",
                               "cuda-driver-mismatch"),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_samples_pair_is_one_message_led_by_its_call(faultline_bin, validate, tmp_path, name):
    code, text, rule = SAMPLES[name]
    leading_incident(faultline_bin, validate, tmp_path, device_query(code, text), rule=rule,
                     line=f"cudaGetDeviceCount returned {code}", any_line=text)


def test_samples_pair_no_rule_reads_is_the_fallbacks_led_by_its_call(faultline_bin, validate, tmp_path):
    inc = leading_incident(faultline_bin, validate, tmp_path,
                           device_query(100, "no CUDA-capable device is detected"),
                           rule=FALLBACK, line="cudaGetDeviceCount returned 100")
    head = inc["initiating"]["evidence"][0]
    assert head.get("fields", {}).get("cuda_error") == "100", head
    # What settles it is the host's view of its GPUs, not the program's log.
    assert any("returned error 100" in f and "CUDA_VISIBLE_DEVICES" in f for f in inc["missing_facts"]), \
        inc["missing_facts"]


HELPER = {
    # helper_cuda.h's check(): the enum name after the code.
    "ecc": ('CUDA error at bandwidthTest.cu:686 code=214(cudaErrorECCUncorrectable) '
            '"cudaMemcpy(h_odata, d_idata, memSize, cudaMemcpyDeviceToHost)" \n',
            "xid-ecc-uncorrectable"),
    "no-device": ('CUDA error at ../../common/helper_cuda.h:779 code=100(cudaErrorNoDevice) '
                  '"cudaGetDeviceCount(&device_count)" \n', FALLBACK),
}


@pytest.mark.parametrize("name", sorted(HELPER))
def test_helper_cuda_check_line_leads(faultline_bin, validate, tmp_path, name):
    line, rule = HELPER[name]
    text = "GPU Device 0: \"Ampere\" with compute capability 8.0\n\n" + line
    inc = leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, line="CUDA error at ")
    if rule == FALLBACK:
        assert any("(cudaErrorNoDevice)" in f for f in inc["missing_facts"]), inc["missing_facts"]


def test_device_query_pass_has_no_incident(faultline_bin, validate, tmp_path):
    text = ("./deviceQuery Starting...\n\n"
            " CUDA Device Query (Runtime API) version (CUDART static linking)\n\n"
            "Detected 1 CUDA Capable device(s)\n\n"
            "Device 0: \"NVIDIA A100-SXM4-80GB\"\n"
            "deviceQuery, CUDA Driver = CUDART, CUDA Driver Version = 12.2, CUDA Runtime Version = 12.2, "
            "NumDevs = 1\n"
            "Result = PASS\n")
    assert not diagnose_text(faultline_bin, validate, tmp_path, text)


TRITON_HEAD = """\
I1012 08:11:02.410387 1 server.cc:604]
+------------------+------+
| Repository Agent | Path |
+------------------+------+
+------------------+------+

I1012 08:11:02.482153 1 model_lifecycle.cc:461] loading: bert:1
I1012 08:11:02.482188 1 model_lifecycle.cc:461] loading: tokenizer:1
I1012 08:11:04.101113 1 model_lifecycle.cc:815] successfully loaded 'tokenizer'
"""

TRITON_BERT_ERROR = ("E1012 08:11:05.713581 1 model_lifecycle.cc:626] failed to load 'bert' version 1: "
                     "Invalid argument: model 'bert', tensor 'input_ids': the model expects 2 dimensions "
                     "(shape [-1,128]) but the model configuration specifies 2 dimensions (shape [-1,256])\n")

TRITON_TABLE = """\
I1012 08:11:05.713702 1 model_lifecycle.cc:756] failed to load 'bert'
I1012 08:11:05.713910 1 server.cc:676]
+-----------+---------+--------------------------------------------------------------------------+
| Model     | Version | Status                                                                   |
+-----------+---------+--------------------------------------------------------------------------+
| bert      | 1       | UNAVAILABLE: Invalid argument: model 'bert', tensor 'input_ids': the mod |
|           |         | el expects 2 dimensions (shape [-1,128]) but the model configuration spe |
|           |         | cifies 2 dimensions (shape [-1,256])                                     |
| tokenizer | 1       | READY                                                                    |
+-----------+---------+--------------------------------------------------------------------------+

"""


def test_triton_failed_load_leads_the_start_up_failure(faultline_bin, validate, tmp_path):
    text = (TRITON_HEAD + TRITON_BERT_ERROR + TRITON_TABLE +
            "I1012 08:11:05.780132 1 server.cc:305] Waiting for in-flight requests to complete.\n"
            "I1012 08:11:05.780141 1 server.cc:321] Timeout 30: Found 0 model versions that have in-flight inferences\n"
            "I1012 08:11:05.780233 1 server.cc:336] All models are stopped, unloading models\n"
            "error: creating server: Internal - failed to load all models\n")
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK,
                     line="failed to load 'bert' version 1: Invalid argument")


def test_triton_failed_load_without_exit_on_error_is_still_a_failure(faultline_bin, validate, tmp_path):
    text = (TRITON_HEAD + TRITON_BERT_ERROR + TRITON_TABLE +
            "I1012 08:11:05.790871 1 grpc_server.cc:2451] Started GRPCInferenceService at 0.0.0.0:8001\n"
            "I1012 08:11:05.791143 1 http_server.cc:3558] Started HTTPService at 0.0.0.0:8000\n"
            "I1012 08:11:05.832409 1 http_server.cc:187] Started Metrics Service at 0.0.0.0:8002\n")
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK,
                     line="failed to load 'bert' version 1")


def test_triton_table_cell_alone_is_the_failure(faultline_bin, validate, tmp_path):
    # An excerpt that holds the table only: its UNAVAILABLE cell is the reason.
    leading_incident(faultline_bin, validate, tmp_path, TRITON_TABLE, rule=FALLBACK,
                     line="| bert      | 1       | UNAVAILABLE: Invalid argument")


def test_triton_failed_load_naming_a_cuda_cause_is_that_cause(faultline_bin, validate, tmp_path):
    text = (TRITON_HEAD +
            "E1012 08:11:05.713581 1 model_lifecycle.cc:626] failed to load 'bert' version 1: Internal: "
            "unable to create stream: the provided PTX was compiled with an unsupported toolchain.\n" +
            "error: creating server: Internal - failed to load all models\n")
    leading_incident(faultline_bin, validate, tmp_path, text, rule="cuda-driver-mismatch",
                     line="failed to load 'bert' version 1")


def test_triton_all_ready_has_no_incident(faultline_bin, validate, tmp_path):
    text = (TRITON_HEAD +
            "I1012 08:11:05.713910 1 server.cc:676]\n"
            "+-----------+---------+--------+\n"
            "| Model     | Version | Status |\n"
            "+-----------+---------+--------+\n"
            "| bert      | 1       | READY  |\n"
            "| tokenizer | 1       | READY  |\n"
            "+-----------+---------+--------+\n\n"
            "I1012 08:11:05.790871 1 grpc_server.cc:2451] Started GRPCInferenceService at 0.0.0.0:8001\n"
            "I1012 08:11:05.791143 1 http_server.cc:3558] Started HTTPService at 0.0.0.0:8000\n")
    assert not diagnose_text(faultline_bin, validate, tmp_path, text)


MEMTEST_START = """\
[11/03/2023 14:15:16][gpu017][0]:Running cuda memtest, version 1.2.3
[11/03/2023 14:15:16][gpu017][0]:num_gpus=1
[11/03/2023 14:15:16][gpu017][0]:Device name=NVIDIA A100-SXM4-40GB, global memory size=42298834944, serial=1322021012345
[11/03/2023 14:15:16][gpu017][0]:Attached to device 0 successfully.
[11/03/2023 14:15:17][gpu017][0]:Allocated 39568 MB
[11/03/2023 14:15:17][gpu017][0]:Test0 [Walking 1 bit]
[11/03/2023 14:15:49][gpu017][0]:Test0 finished in 32.1 seconds
[11/03/2023 14:15:49][gpu017][0]:Test1 [Own address test]
"""


def test_memtest_errors_found_is_a_memory_fault(faultline_bin, validate, tmp_path):
    text = (MEMTEST_START +
            "[11/03/2023 14:16:02][gpu017][0]:ERROR: NVRM version: NVIDIA UNIX x86_64 Kernel Module  "
            "535.104.05  Sat Aug 19 01:15:15 UTC 2023\n"
            "[11/03/2023 14:16:02][gpu017][0]:ERROR: The unit serial number is 1322021012345\n"
            "[11/03/2023 14:16:02][gpu017][0]:ERROR: (test1 on reading) 2 errors found in block 37\n"
            "[11/03/2023 14:16:02][gpu017][0]:ERROR: the last 2 error addresses are:\t0x7f2a42500040\t"
            "0x7f2a42500048\t\n"
            "[11/03/2023 14:16:02][gpu017][0]:ERROR: 0th error, expected value=0x7f2a42500040, current "
            "value=0x7f2a42500050, diff=0x10 (second_read=0x7f2a42500050, expect=0x7f2a42500040, diff with "
            "expected value=0x10)\n")
    inc = leading_incident(faultline_bin, validate, tmp_path, text, rule="sdc-gpu-diagnostic-failure",
                           line="errors found in block 37")
    assert inc["initiating"]["host"] == "gpu017", inc["explanation"]


def test_memtest_invalid_option_is_a_usage_error(faultline_bin, validate, tmp_path):
    text = ("[12/06/2022 17:22:34][quasar][0]:Running cuda memtest, version 1.2.3\n"
            "ERROR: Invalid option:2\n"
            "Usage:cuda_memtest [options]\n"
            "options:\n"
            "--mappedMem                 run all checks with cuda mapped memory instead of native device memory\n"
            "--silent                    Do not print out progress message (default)\n"
            "--device <idx>              Designate one device for test\n")
    inc = leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK,
                           line="ERROR: Invalid option:2")
    assert all("errors found" not in t for t in initiating_texts(inc))
