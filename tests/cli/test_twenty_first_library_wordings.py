"""Two ways a Python failure reaches a log without the exception line
carrying its message, as community training and image-generation tools
show them:

- CPython writes '<type>: <str(exc)>' only when the message is not empty
  (a type alone has no colon), so an exception line that ends at its
  colon has a message starting with a newline: it goes on below.
  bitsandbytes' cextension raises RuntimeError('''\\n        CUDA Setup
  failed despite GPU being available. ...'''); the line below says what
  failed and is the evidence.
- PyTorch's CUDA check raises 'CUDA error: ' + cudaGetErrorString(err);
  tools that report str(exc) alone (ComfyUI's error dialog, 'Error
  occurred when executing <node>:', a blank line, then the message; its
  error report's '- **Exception Message:**' field) put that message at
  the start of a line with no exception type before it. It is a fatal
  line; a catalog rule that knows the error string still reads it first.
"""
from conftest import first_incident, initiating_texts, leading_incident


BNB_SETUP = """\
  File "/opt/venv/lib/python3.10/site-packages/bitsandbytes/cextension.py", line 20, in <module>
    raise RuntimeError('''
RuntimeError:
        CUDA Setup failed despite GPU being available. Please run the following command to get more information:

        python -m bitsandbytes
"""

COMFY_DIALOG = """\
Error occurred when executing KSampler:

CUDA error: operation not supported
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1.
Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.


  File "/opt/ComfyUI/execution.py", line 151, in recursive_execute
    output_data, output_ui = get_output_data(obj, input_data_all)
"""

COMFY_DIALOG_NO_KERNEL = COMFY_DIALOG.replace(
    "operation not supported", "no kernel image is available for execution on the device")


def test_message_below_a_bare_exception_line_is_the_evidence(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, BNB_SETUP,
                     rule="unrecognised-fatal-error", any_line="CUDA Setup failed despite GPU being available")


def test_cuda_check_message_without_its_exception_is_fatal(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, COMFY_DIALOG)
    assert inc["rule"] == "unrecognised-fatal-error", inc["explanation"]
    assert any(t.startswith("CUDA error: operation not supported") for t in initiating_texts(inc))


def test_a_catalog_rule_still_reads_the_cuda_error_it_knows(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, COMFY_DIALOG_NO_KERNEL)
    assert inc["reference"] == "CUDA Binary Built for the Wrong GPU Architecture", inc["explanation"]
