"""Endings the thirty-sixth endings audit (tests/cli/endings, e36-*.log, a
random sample of failed endings from GPU applications end users run: YOLO,
mmdetection, detectron2, diffusers, ComfyUI, stable-diffusion-webui, kohya,
whisper and faster-whisper, NeMo, TTS, notebooks, Windows) gave no incident,
read where the program that printed them writes them (issue #18):

- ComfyUI's dialog for a failed prompt (the legacy web client's and the
  frontend's formatExecutionError): 'Error occurred when executing <node
  type>:', a blank line, the exception's message, the node's frames with no
  header and no exception line. Users paste the dialog, and the message
  (a KeyError's bare key) may name nothing a rule reads. The frontend's
  later error report writes the message as '- **Exception Message:** ...'.
- cuDNN's loader failing to open one of its sub-libraries ('Could not load
  library <lib>. Error code N' on Windows, '. Error: <dlerror>' on Linux,
  'Could not locate <lib>. Please make sure it is in your library path!'),
  after which the process stops.
- IPython's traceback cut right under its first frame's heading ('Cell
  In[5], line 32' and the code lines before the arrow): ultratb writes the
  heading first, so the traceback was cut in its frames; only an arrow
  line counted before.
"""
from conftest import ending_tests

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # The legacy dialog's text, pasted: a node's exception whose message no rule reads.
    "comfyui-dialog-attribute-error": ("""\
Error occurred when executing IPAdapterAdvanced:

'NoneType' object has no attribute 'shape'

  File "/opt/ComfyUI/execution.py", line 151, in recursive_execute
    output_data, output_ui = get_output_data(obj, input_data_all)
  File "/opt/ComfyUI/execution.py", line 81, in get_output_data
    return_values = map_node_over_list(obj, input_data_all, obj.FUNCTION, allow_interrupt=True)
""", "Error occurred when executing IPAdapterAdvanced:"),
    # The frontend's error report for the same kind of failure.
    "comfyui-error-report-key-error": ("""\
# ComfyUI Error Report
## Error Details
- **Node ID:** 3
- **Node Type:** KSampler
- **Exception Type:** KeyError
- **Exception Message:** 'sigmas'
## Stack Trace
```
  File "/opt/ComfyUI/execution.py", line 327, in execute
    output_data, output_ui, has_subgraph = get_output_data(obj, input_data_all)
```
""", "- **Exception Message:** 'sigmas'"),
    # cuDNN 8 on Windows under a faster-whisper program.
    "cudnn8-windows-load-library": ("""\
Standalone Faster-Whisper r145.1 running on: CUDA

Starting transcription on: D:\\media\\talk.mkv

Could not load library cudnn_ops_infer64_8.dll. Error code 126
Please make sure cudnn_ops_infer64_8.dll is in your library path!
""", "Could not load library cudnn_ops_infer64_8.dll. Error code 126"),
    # cuDNN 8 on Linux (WSL without libcuda.so on the path), the shell's abort under it.
    "cudnn8-linux-load-library-aborted": ("""\
Epoch 1/10
Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open shared object file: No such file or directory
Please make sure libcudnn_cnn_infer.so.8 is in your library path!
Aborted (core dumped)
""", "Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so"),
    # cuDNN 9 on Windows.
    "cudnn9-windows-locate": ("""\
INFO:faster_whisper:Processing audio with duration 00:02.368
Could not locate cudnn_ops64_9.dll. Please make sure it is in your library path!
Invalid handle. Cannot load symbol cudnnCreateTensorDescriptor
""", "Could not locate cudnn_ops64_9.dll."),
    # IPython 8's traceback cut under its first frame's heading.
    "ipython-cut-under-cell-heading": ("""\
---------------------------------------------------------------------------
OutOfMemoryError                          Traceback (most recent call last)
Cell In[5], line 32
     29 display(input_image.size)
     30 display((render_width, render_height))
""", "OutOfMemoryError"),
    # IPython 7's, its heading naming the cell's input.
    "ipython7-cut-under-input-heading": ("""\
RuntimeError                              Traceback (most recent call last)
<ipython-input-7-2f1c0e3a9b1d> in <module>
      1 import torch
      2 model = build_model().cuda()
""", "RuntimeError"),
}

HEALTHY = {
    # A ComfyUI console where the prompt ran to its end.
    "comfyui-prompt-executed": """\
got prompt
model_type EPS
Requested to load SDXLClipModel
100%|██████████| 20/20 [00:05<00:00,  3.71it/s]
Requested to load AutoencoderKL
Prompt executed in 12.43 seconds
""",
    # faster-whisper finding cuDNN and transcribing.
    "faster-whisper-transcribes": """\
INFO:faster_whisper:Processing audio with duration 00:02.368
[0.00s -> 2.00s]  Hello and welcome.
Transcription finished in 1.2 s
""",
    # A notebook whose output goes on after the traceback's heading and code
    # lines (the cell was run again): no traceback cut at the source's end.
    "ipython-heading-then-output-goes-on": """\
OutOfMemoryError                          Traceback (most recent call last)
Cell In[5], line 32
     29 display(input_image.size)
     30 display((render_width, render_height))

epoch 1 step 100 loss 0.412
epoch 1 step 200 loss 0.388
""",
}


test_failed_ending_leads, test_healthy_ending_has_no_incident = ending_tests(FAILURES, HEALTHY, FALLBACK)
