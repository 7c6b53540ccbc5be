"""
Phrasing across versions, twenty-ninth pass (issue #18): JAX/XLA, TensorFlow
and Ray Train, read in the source of each release, where the catalog's
signals missed a wording:

- XLA's distributed runtime client (xla/pjrt/distributed/client.h, the
  missed_heartbeat_callback behind jax.distributed) ends the process with
  LOG(QFATAL): "Terminating process because the JAX distributed service
  detected fatal errors. This most likely indicates that another task died;
  ... absl::Status: <status>" in the current releases, "Terminating process
  because the coordinator detected missing heartbeats. ... Status: <status>"
  and "Terminating process because of missing heartbeat response from the
  coordinator. ..." before the coordination service. The status after it
  varies; when it was the unhealthy-tasks list, coordination_heartbeat_timeout
  read the line, but under any other status ("UNAVAILABLE: failed to connect
  to all addresses") the F line, its glog prefix not a "Check failed:", made
  no incident at all. The fallback's signal now (a peer or the coordinator
  died first; its own log says why).
- TensorFlow's GPU device (gpu_device.cc, the device-side tensor of a
  host-to-device copy; the pluggable device alike) fails with "OOM when
  allocating tensor of shape [S] and type T" -- "of shape", no device or
  allocator -- in TF 1.x and 2.x; the catalog read only the kernels' "with
  shape" wording, so the fallback read it.
- TensorFlow's host-to-GPU copy (gpu_util.cc CopyCPUTensorToGPU) fails with
  "Dst tensor is not initialized." when the GPU allocator gave the
  destination no buffer: bare in TF 1.x, under TF 2.x eager's "Failed copying
  input tensor from <host> to <.../device:GPU:N> in order to run <op>: " -- a
  GPU memory shortfall the fallback read. Both now cuda-oom's.
- Ray's RayTaskError(X) line (the driver's re-raise of a worker's exception,
  "ray::f() (pid=..., ip=...)") over its worker's traceback: when the inner
  exception, a catalog cause, came three lines or fewer below it, the
  correlator took the wrapper for the head of the inner line's message and
  led the incident with it (the verdict was right, the first line the
  wrapper's). A fallback line inside the traceback that ends on the catalog
  line (the scanner's in_traceback_of) is now that exception's wrapper, not
  its message's head: the inner exception leads.

Already read in every version (checked, no change): XLA's "RESOURCE_EXHAUSTED:
Out of memory while trying to allocate N bytes." / "... 16.00GiB." under
XlaRuntimeError and JaxRuntimeError, jaxlib's older "RuntimeError: Resource
exhausted: Out of memory while trying to allocate", "RESOURCE_EXHAUSTED:
Failed to allocate request for ..."; the coordination service's "Task ...
heartbeat timeout", "The following tasks are unhealthy (stopped sending
heartbeats)", "DEADLINE_EXCEEDED: Barrier timed out. Barrier_id:/Id:"; the GPU
plugin's "INTERNAL: ... CUDA_ERROR_ILLEGAL_ADDRESS" and
"CUDA_ERROR_OUT_OF_MEMORY"; TensorFlow's "OOM when allocating tensor with
shape[...] and type T on .../device:GPU:N by allocator GPU_0_bfc", glog and
absl "F... Check failed:" lines; Ray's "The actor died unexpectedly before
finishing this task." (ActorDiedError and the older RayActorError), the
memory monitor's "Task was killed due to the node running low on memory.",
"(raylet) A worker died or was killed while executing a task by an unexpected
system error." (RayTask ID and Lease ID releases).

Left alone: TensorFlow's collective aborts ("Collective ops is aborted by:
...", "Collective has timed out during execution.", "... waiting for other
workers.") stay the fallback's (no catalog rule for a TF collective; its
cause is an earlier op's). XLA:TPU's "Ran out of memory in memory space hbm"
stays the fallback's (no TPU memory reference). Ray 1.x's "A worker died or
was killed while executing task <id>." (no release maintained) is not read.
"""
import pytest

from conftest import leading_incident, scan_text

# The JAX multi-process guide's excerpt of a peer's end (docs/multi_process.md):
# the status is the unhealthy-tasks list.
JAX_TERMINATING_UNHEALTHY = """\
E0926 17:26:32.075402  157988 coordination_service_agent.cc:332] Polled an error from coordination service (this can be an error from this or another task).
F0926 17:26:32.075587  157988 client.h:77] Terminating process because the JAX distributed service detected fatal errors. This most likely indicates that another task died; see the other task logs for more details. Disable Python buffering, i.e. `python -u`, to be sure to see all the previous output. absl::Status: UNAVAILABLE: The following tasks are unhealthy (stopped sending heartbeats):
/job:jax_worker/replica:0/task:3
The tasks have crashed. Check the task logs for an earlier error, or scheduler events (e.g. preemption, eviction) to debug further.
"""

# The same line when the coordinator itself went away: the format rendered
# with gRPC's status for a lost channel.
JAX_TERMINATING_UNAVAILABLE = """\
I0412 10:00:01.000000  1234 distributed.py:110] Connecting to JAX distributed service on 10.0.0.2:1234
E0412 10:01:02.000000  1240 coordination_service_agent.cc:332] Polled an error from coordination service (this can be an error from this or another task).
F0412 10:01:02.000100  1240 client.h:77] Terminating process because the JAX distributed service detected fatal errors. This most likely indicates that another task died; see the other task logs for more details. Disable Python buffering, i.e. `python -u`, to be sure to see all the previous output. absl::Status: UNAVAILABLE: failed to connect to all addresses
*** Check failure stack trace: ***
"""

# jaxlib before the coordination service (client.h's second branch).
JAX_TERMINATING_OLD_COORDINATOR = """\
F1103 09:12:44.000123  4411 client.h:69] Terminating process because of missing heartbeat response from the coordinator. This most likely indicates that the coordinator task died; see the coordinator's task logs for more details. Status: DEADLINE_EXCEEDED: Deadline Exceeded
"""

# A 2018 post (TF 1.x): the executor's line over the session's re-raise.
TF_OOM_OF_SHAPE = """\
2018-08-06 05:47:33.110207: W tensorflow/core/framework/op_kernel.cc:1295] OP_REQUIRES failed at constant_op.cc:75 : Resource exhausted: OOM when allocating tensor of shape [32256512,512] and type float
2018-08-06 05:47:57.037241: E tensorflow/core/common_runtime/executor.cc:696] Executor failed to create kernel. Resource exhausted: OOM when allocating tensor of shape [32256512,512] and type float
Traceback (most recent call last):
  File "train.py", line 88, in <module>
    sess.run(init)
tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor of shape [32256512,512] and type float
"""

# TF 2.x eager, as posted (Keras fit on a small GPU).
TF_DST_TENSOR_EAGER = """\
Traceback (most recent call last):
  File "train.py", line 41, in <module>
    model.fit(x_train, y_cat_train, epochs=15, batch_size=1)
  File "/usr/local/lib/python3.10/dist-packages/tensorflow/python/framework/constant_op.py", line 102, in convert_to_eager_tensor
    return ops.EagerTensor(value, ctx.device_name, dtype)
tensorflow.python.framework.errors_impl.InternalError: Failed copying input tensor from /job:localhost/replica:0/task:0/device:CPU:0 to /job:localhost/replica:0/task:0/device:GPU:0 in order to run _EagerConst: Dst tensor is not initialized.
"""

# TF 1.x: bare, from the _Recv node (stackoverflow 37313818's excerpt).
TF_DST_TENSOR_TF1 = """\
Traceback (most recent call last):
  File "train.py", line 120, in <module>
    feed_dict={x: batch_x, y: batch_y})
tensorflow.python.framework.errors_impl.InternalError: Dst tensor is not initialized.
\t [[Node: _recv_Placeholder_3_0/_1007 = _Recv[client_terminated=true, recv_device="/job:localhost/replica:0/task:0/gpu:0", send_device="/job:localhost/replica:0/task:0/cpu:0", tensor_name="Placeholder_3:0", tensor_type=DT_FLOAT, _device="/job:localhost/replica:0/task:0/gpu:0"]()]]
"""

# The same wrapper over a CUDA error: the cause is the error's own.
TF_COPY_DEVICE_ASSERT = """\
InternalError: Failed copying input tensor from /job:localhost/replica:0/task:0/device:CPU:0 to /job:localhost/replica:0/task:0/device:GPU:0 in order to run _EagerConst: CUDA error: Error recording CUDA event: CUDA_ERROR_ASSERT: device-side assert triggered
"""

# Ray Train's driver: RayTaskError over the worker's traceback.
RAY_TASK_ERROR_OOM = """\
Traceback (most recent call last):
  File "train.py", line 40, in <module>
    result = trainer.fit()
ray.exceptions.RayTaskError(OutOfMemoryError): ray::_RayTrainWorker__execute.get_next() (pid=2841, ip=10.0.1.5, actor_id=5c3d, repr=<ray.train._internal.worker_group.RayTrainWorker object at 0x7f>)
  File "/usr/local/lib/python3.10/site-packages/ray/train/_internal/worker_group.py", line 33, in __execute
    raise skipped from exception_cause(skipped)
  File "train.py", line 22, in train_func
    loss.backward()
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free.
"""

# The worker's frames right under the wrapper: the inner exception is three
# lines below it.
RAY_TASK_ERROR_ILLEGAL_ADDRESS = """\
ray.exceptions.RayTaskError(RuntimeError): ray::_RayTrainWorker__execute.get_next() (pid=2841, ip=10.0.1.5, actor_id=5c3d, repr=<ray.train._internal.worker_group.RayTrainWorker object at 0x7f>)
  File "train.py", line 22, in train_func
    out = model(batch)
RuntimeError: CUDA error: an illegal memory access was encountered
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
"""

# The same under the driver's own traceback header.
RAY_TASK_ERROR_ILLEGAL_ADDRESS_DRIVER = """\
Traceback (most recent call last):
  File "train.py", line 40, in <module>
    result = trainer.fit()
""" + RAY_TASK_ERROR_ILLEGAL_ADDRESS


@pytest.mark.parametrize("line,signal", [
    ("F0926 17:26:32.075587  157988 client.h:77] Terminating process because the JAX distributed service detected "
     "fatal errors. This most likely indicates that another task died; see the other task logs for more details. "
     "Disable Python buffering, i.e. `python -u`, to be sure to see all the previous output. absl::Status: "
     "UNAVAILABLE: failed to connect to all addresses", "jax_distributed_terminating"),
    ("F1103 09:12:44.000123  4411 client.h:62] Terminating process because the coordinator detected missing "
     "heartbeats. This most likely indicates that another task died; see the other task logs for more details. "
     "Status: UNAVAILABLE: Task 3 heartbeat timeout.", "jax_distributed_terminating"),
    ("F1103 09:12:44.000123  4411 client.h:69] Terminating process because of missing heartbeat response from the "
     "coordinator. This most likely indicates that the coordinator task died; see the coordinator's task logs for "
     "more details. Status: DEADLINE_EXCEEDED: Deadline Exceeded", "jax_distributed_terminating"),
    ("2018-08-06 05:47:57.037241: E tensorflow/core/common_runtime/executor.cc:696] Executor failed to create "
     "kernel. Resource exhausted: OOM when allocating tensor of shape [32256512,512] and type float",
     "tf-oom-device-copy"),
    ("tensorflow.python.framework.errors_impl.InternalError: Failed copying input tensor from "
     "/job:localhost/replica:0/task:0/device:CPU:0 to /job:localhost/replica:0/task:0/device:GPU:0 in order to run "
     "Equal: Dst tensor is not initialized. [Op:Equal]", "tf-dst-tensor-uninitialized"),
    ("tensorflow.python.framework.errors_impl.InternalError: Dst tensor is not initialized.",
     "tf-dst-tensor-uninitialized"),
], ids=["jax-service-fatal", "jaxlib-coordinator-missing-heartbeats", "jaxlib-coordinator-lost",
        "tf-oom-of-shape", "tf2-dst-tensor-under-copy", "tf1-dst-tensor-bare"])
def test_each_version_is_read_by_its_signal(faultline_bin, tmp_path, line, signal):
    records = scan_text(faultline_bin, tmp_path, line + "\n")
    assert signal in {r["signal"] for r in records}, records


@pytest.mark.parametrize("line,signal", [
    ("I0926 17:26:02.075402  157988 distributed.py:110] Connecting to JAX distributed service on 10.0.0.2:1234",
     "jax_distributed_terminating"),
    ("W tensorflow/core/common_runtime/bfc_allocator.cc:246] Allocator (GPU_0_bfc) ran out of memory trying to "
     "allocate 2.20GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that "
     "there could be performance gains if more memory were available.", "tf-oom-device-copy"),
    # A copy between two hosts' CPUs: no GPU allocation failed.
    ("tensorflow.python.framework.errors_impl.InternalError: Failed copying input tensor from "
     "/job:localhost/replica:0/task:0/device:CPU:0 to /job:worker/replica:0/task:0/device:CPU:0 in order to run "
     "RebatchDataset: Unable to parse tensor proto", "tf-dst-tensor-uninitialized"),
], ids=["jax-connecting-info", "tf-bfc-warning", "tf-copy-between-cpus"])
def test_what_is_no_failure_of_theirs_is_not_read(faultline_bin, tmp_path, line, signal):
    records = scan_text(faultline_bin, tmp_path, line + "\n")
    assert signal not in {r["signal"] for r in records}, records


@pytest.mark.parametrize("text,rule,line", [
    (JAX_TERMINATING_UNAVAILABLE, "unrecognised-fatal-error", "detected fatal errors"),
    (JAX_TERMINATING_OLD_COORDINATOR, "unrecognised-fatal-error", "missing heartbeat response from the coordinator"),
    (TF_OOM_OF_SHAPE, "cuda-oom", "OOM when allocating tensor of shape [32256512,512]"),
    (TF_DST_TENSOR_EAGER, "cuda-oom", "Dst tensor is not initialized."),
    (TF_DST_TENSOR_TF1, "cuda-oom", "Dst tensor is not initialized."),
    (RAY_TASK_ERROR_ILLEGAL_ADDRESS, "cuda-illegal-address", "RuntimeError: CUDA error: an illegal memory access"),
    (RAY_TASK_ERROR_ILLEGAL_ADDRESS_DRIVER, "cuda-illegal-address",
     "RuntimeError: CUDA error: an illegal memory access"),
], ids=["jax-service-fatal-unavailable", "jaxlib-coordinator-lost", "tf1-oom-of-shape", "tf2-dst-tensor",
        "tf1-dst-tensor", "ray-task-error-inner-leads", "ray-task-error-inner-leads-under-driver-header"])
def test_the_failure_leads(faultline_bin, validate, tmp_path, text, rule, line):
    leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, line=line)


@pytest.mark.parametrize("text,rule,line", [
    (JAX_TERMINATING_UNHEALTHY, "unrecognised-fatal-error", "detected fatal errors"),
    (TF_COPY_DEVICE_ASSERT, "cuda-device-assert", "CUDA_ERROR_ASSERT"),
    (RAY_TASK_ERROR_OOM, "cuda-oom", "torch.OutOfMemoryError: CUDA out of memory."),
], ids=["jax-service-fatal-unhealthy", "tf-copy-over-device-assert", "ray-task-error-inner-oom"])
def test_guards_already_right(faultline_bin, validate, tmp_path, text, rule, line):
    # Verdicts right before this pass (see the docstring): the new signals
    # must not take them over.
    leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, line=line)
