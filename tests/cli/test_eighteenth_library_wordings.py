"""GPU memory exhausted, read where the allocator's message is cut short or
given in another shape than the usual "CUDA out of memory. Tried to
allocate":

- PyTorch's torch.OutOfMemoryError (torch.cuda.OutOfMemoryError before
  2.5) is raised only when a device allocation fails, so the class names
  the failure whatever the message says. The cudaMallocAsync backend
  (ComfyUI's default) builds "Allocation on device " << device << " would
  exceed allowed memory"; where DeviceIndex is an int8_t, device 0 streams
  as a NUL and Python keeps only "Allocation on device ". ComfyUI's error
  report gives the class on a line of its own ("- **Exception Type:**
  torch.OutOfMemoryError"). An except clause naming the class, shown as
  source context, is no failure.
- TensorFlow 1's failing op logs its status before session.run re-raises
  it: OpKernelContext::CtxFailureWithWarning does LOG(WARNING) << status,
  which prints the code's name ("Resource exhausted: ") before TF <= 1.4's
  short "OOM when allocating tensor with shape[...]". The BFC allocator's
  "The caller indicates that this is not a failure" warning stays none.
"""
from conftest import diagnose_text, first_incident, initiating_texts


COMFY_TRACEBACK = """\
got prompt
Requested to load Flux
loaded partially 7342.4 7342.1 0
  0%|          | 0/20 [00:00<?, ?it/s]
!!! Exception during processing !!! Allocation on device 
Traceback (most recent call last):
  File "/opt/ComfyUI/execution.py", line 327, in execute
    output_data, output_ui, has_subgraph = get_output_data(obj, input_data_all, execution_block_cb=execution_block_cb, pre_execute_cb=pre_execute_cb)
  File "/opt/ComfyUI/comfy/ldm/flux/layers.py", line 184, in forward
    attn = attention(q, k, v, pe=pe, mask=attn_mask)
torch.OutOfMemoryError: Allocation on device 

Got an OOM, unloading all loaded models.
Prompt executed in 14.03 seconds
"""

COMFY_REPORT = """\
# ComfyUI Error Report
## Error Details
- **Node ID:** 13
- **Node Type:** VAEDecode
- **Exception Type:** torch.OutOfMemoryError
- **Exception Message:** Allocation on device 
## Stack Trace
"""

EXCEPT_CLAUSE_CONTEXT = """\
Traceback (most recent call last):
  File "/opt/app/train.py", line 88, in <module>
    main()
  File "/opt/app/train.py", line 61, in main
    except torch.cuda.OutOfMemoryError:
ValueError: batch_size must be a positive integer, got 0
"""

TF1_OP_KERNEL = """\
2018-03-02 11:20:41.512331: W tensorflow/core/common_runtime/bfc_allocator.cc:277] ****************************************************************************************xxxxxxxxxxxx
2018-03-02 11:20:41.512388: W tensorflow/core/framework/op_kernel.cc:1198] Resource exhausted: OOM when allocating tensor with shape[64,512,28,28]
\t [[Node: conv4_3/Conv2D = Conv2D[T=DT_FLOAT, data_format="NHWC", padding="SAME", strides=[1, 1, 1, 1], use_cudnn_on_gpu=true, _device="/job:localhost/replica:0/task:0/device:GPU:0"](conv4_2/Relu, conv4_3/weights/read)]]
"""

BFC_NOT_A_FAILURE = """\
2020-09-24 21:35:23.363348: W tensorflow/core/common_runtime/bfc_allocator.cc:246] Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.02GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.
Epoch 1/10
1563/1563 [==============================] - 41s 26ms/step - loss: 1.4411 - accuracy: 0.4803
Epoch 2/10
1563/1563 [==============================] - 39s 25ms/step - loss: 1.0712 - accuracy: 0.6215
"""


def test_truncated_malloc_async_oom_is_cuda_oom(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, COMFY_TRACEBACK)
    assert inc["rule"] == "cuda-oom", inc["explanation"]
    assert any("Allocation on device" in t for t in initiating_texts(inc))


def test_error_report_exception_type_is_cuda_oom(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, COMFY_REPORT)
    assert inc["rule"] == "cuda-oom", inc["explanation"]
    assert "**Exception Type:** torch.OutOfMemoryError" in initiating_texts(inc)[0]


def test_except_clause_naming_the_class_is_no_oom(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, EXCEPT_CLAUSE_CONTEXT)
    assert found, "the ValueError is a failure"
    assert all(inc["rule"] != "cuda-oom" for inc in found)


def test_tf1_op_kernel_resource_exhausted_is_cuda_oom(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, TF1_OP_KERNEL)
    assert inc["rule"] == "cuda-oom", inc["explanation"]
    assert "Resource exhausted: OOM when allocating tensor" in initiating_texts(inc)[0]


def test_bfc_allocator_not_a_failure_warning_is_none(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, BFC_NOT_A_FAILURE)
    assert all(inc["rule"] != "cuda-oom" for inc in found)
