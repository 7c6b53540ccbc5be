"""Misses from the thirty-seventh corpus batch's work part:

- TensorRT-LLM's checks (TLLM_CHECK, TLLM_CHECK_WITH_INFO) throw
  TllmException, whose message is '[TensorRT-LLM][ERROR] Assertion failed:
  <condition or message> (<file>:<line>)' over the native call stack. The
  catch that reports it adds its own prefix (the runtime's logger repeats
  the tag, terminate prints 'what():', Python a RuntimeError), and the check
  ends the build, load or step that made it. Only TensorRT-LLM's CUDA check
  was a fatal line; its assertion now is one too.
- Its kernel runners refuse a GPU they carry no kernels for with
  TLLM_CHECK_WITH_INFO(..., "Unsupported architecture") (the context FMHA
  runner below sm80) or "Unsupported Arch" (the weight-only quantization
  preprocessor's layouts): the reference of a binary without code for the
  GPU's architecture, which now knows that assertion.
"""
from conftest import leading_incident

# gptSessionBenchmark launched on eight ranks over engines built elsewhere:
# the runtime cannot open the rank's engine file, and each rank reports the
# exception through its logger, the tag twice, with the frames under it.
ENGINE_FILE_MISSING = """\
[TensorRT-LLM][ERROR] [TensorRT-LLM][ERROR] Assertion failed: Error opening engine file: ../../examples/gpt/gpt_175b/gpt_175b_float16_tp8_rank6.engine (/code/tensorrt_llm/cpp/tensorrt_llm/runtime/utils/sessionUtils.cpp:42)
1       0x55af5ac89de2 tensorrt_llm::common::throwRuntimeError(char const*, int, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&) + 100
2       0x7fb9b85da8b1 /code/tensorrt_llm/cpp/build/tensorrt_llm/libtensorrt_llm.so(+0x46c8b1) [0x7fb9b85da8b1]
3       0x55af5ac8e50d ./benchmarks/gptSessionBenchmark(+0x1950d) [0x55af5ac8e50d]
4       0x7fb9a3125d90 /usr/lib/x86_64-linux-gnu/libc.so.6(+0x29d90) [0x7fb9a3125d90]
5       0x7fb9a3125e40 __libc_start_main + 128
6       0x55af5ac90f75 ./benchmarks/gptSessionBenchmark(+0x1bf75) [0x55af5ac90f75]
"""

# Triton's TensorRT-LLM backend loading an engine whose attention plugin
# cannot be deserialized: the backend's logger reports the exception by its
# class name before the message. The fallback read that form already, by the
# qualified exception class; the assertion's signal keeps the same line.
PLUGIN_DESERIALIZE = """\
[TensorRT-LLM][INFO] Loaded engine size: 15448 MiB
[TensorRT-LLM][ERROR] tensorrt_llm::common::TllmException: [TensorRT-LLM][ERROR] Assertion failed: d == a + length (/app/tensorrt_llm/cpp/tensorrt_llm/plugins/gptAttentionCommon/gptAttentionCommon.cpp:320)
1       0x7f6ce803be0b /opt/tritonserver/backends/tensorrtllm/libnvinfer_plugin_tensorrt_llm.so.9(+0x35e0b) [0x7f6ce803be0b]
2       0x7f6ce809746c tensorrt_llm::plugins::GPTAttentionPluginCommon::GPTAttentionPluginCommon(void const*, unsigned long) + 908
3       0x7f6ce80a9b2d tensorrt_llm::plugins::GPTAttentionPlugin::GPTAttentionPlugin(void const*, unsigned long) + 13
4       0x7f6ce80a9b72 tensorrt_llm::plugins::GPTAttentionPluginCreator::deserializePlugin(char const*, void const*, unsigned long) + 50
"""

# A Llama build on a T4 with the context FMHA enabled: nothing catches the
# exception, so terminate prints it.
FMHA_ON_T4 = """\
terminate called after throwing an instance of 'tensorrt_llm::common::TllmException'
  what():  [TensorRT-LLM][ERROR] Assertion failed: Unsupported architecture (/src/tensorrt_llm/cpp/tensorrt_llm/kernels/contextFusedMultiHeadAttention/fmhaRunner.cpp:87)
"""

# Int8 weight-only quantization of Qwen on a P40, the exception line as the
# poster quoted it: the preprocessor has no layout for sm61, and the Python
# build script gets the exception.
WEIGHT_ONLY_ON_P40 = """\
RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: Unsupported Arch (/opt/tritonserver/TensorRT-LLM/cpp/tensorrt_llm/kernels/cutlass_kernels/cutlass_preprocessors.cpp:147)
"""


def test_trtllm_assertion_logged_by_the_runtime_is_the_fatal_line(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, ENGINE_FILE_MISSING, rule="unrecognised-fatal-error",
                     line="Assertion failed: Error opening engine file")


def test_trtllm_assertion_after_the_exception_class_is_the_fatal_line(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, PLUGIN_DESERIALIZE, rule="unrecognised-fatal-error",
                     line="Assertion failed: d == a + length")


def test_trtllm_unsupported_architecture_names_the_missing_kernels(faultline_bin, validate, tmp_path):
    # The terminate line heads the exception it reports, as for any
    # uncaught C++ exception; the message under it is the evidence.
    leading_incident(faultline_bin, validate, tmp_path, FMHA_ON_T4, rule="cuda-no-kernel-image",
                     any_line="Assertion failed: Unsupported architecture")


def test_trtllm_unsupported_arch_of_the_quantization_layouts(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, WEIGHT_ONLY_ON_P40, rule="cuda-no-kernel-image",
                     line="Assertion failed: Unsupported Arch")
