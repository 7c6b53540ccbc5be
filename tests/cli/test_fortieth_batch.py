"""Misses from the fortieth corpus batch's work part and the work cases it
was aimed at:

- TensorFlow's and XLA's ROCm stream executor report a failed hipMalloc as
  'failed to allocate <size> (<n> bytes) from device: ' and the error as
  their ToString(hipError_t) gives it (rocm_driver.cc, DeviceAllocate):
  'HIP_ERROR_OutOfMemory' for hipErrorOutOfMemory, and 'hipError_t(<code>)'
  for a code ToString has no case for, which is how HIP before 3.x's
  hipErrorMemoryAllocation (1002) comes out. The CUDA build's
  CUDA_ERROR_OUT_OF_MEMORY was read already; the ROCm build's two forms made
  no incident. They are now cuda-oom's initiating lines (another HIP error
  in the same message stays out: the rule's counter-examples).
- Ray's GCS says why an actor died with its node, from the node's death
  info (gcs_actor_manager.cc): '\tthe actor's node was preempted: <reason>'
  when the autoscaler drained the node for preemption (a spot or
  preemptible node reclaimed), 'terminated expectedly' or 'terminated
  unexpectedly' otherwise. The preempted form was no catalog line, so the
  ActorDiedError above it led an unrecognised fatal error; it is now a
  termination notice of the preemption rule. An actor dead because its owner
  died names no preemption and stays as it was.
"""
from conftest import diagnose_text, leading_incident

# keras-team/keras#13889: tensorflow-rocm 2.12 on ROCm 5.6, the XLA stream
# executor's copy of the driver wrapper, which prints the size in TiB.
XLA_ROCM_ALLOCATION_FAILED = """\
2023-11-01 16:19:17.812101: E tensorflow/compiler/xla/stream_executor/rocm/rocm_driver.cc:606] failed to allocate 127.99TiB (140729850295296 bytes) from device: HIP_ERROR_OutOfMemory
2023-11-01 16:19:17.812133: E tensorflow/compiler/xla/stream_executor/rocm/rocm_driver.cc:606] failed to allocate 115.19TiB (126656857505792 bytes) from device: HIP_ERROR_OutOfMemory
2023-11-01 16:19:17.812142: E tensorflow/compiler/xla/stream_executor/rocm/rocm_driver.cc:606] failed to allocate 103.67TiB (113991166722048 bytes) from device: HIP_ERROR_OutOfMemory
"""

def test_rocm_stream_executor_out_of_memory_is_cuda_oom(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, XLA_ROCM_ALLOCATION_FAILED, rule="cuda-oom",
                     line="failed to allocate 127.99TiB (140729850295296 bytes) from device: HIP_ERROR_OutOfMemory")



# ray-project/ray#63807: a Ray Train worker on a node drained for
# preemption (the pull request's demo drain); no other public thread
# quoted the line.
RAY_ACTOR_NODE_PREEMPTED = """\
(TrainController pid=79312) The actor died unexpectedly before finishing this task.
(TrainController pid=79312) \tclass_name: RayTrainWorker
(TrainController pid=79312) \tactor_id: c221047dc0a4e2b3ea0bbcc501000000
(TrainController pid=79312) \tpid: 79326
(TrainController pid=79312) \tnamespace: b37ae402-a08c-4afd-abc6-dd97b4c09dca
(TrainController pid=79312) \tip: 127.0.0.1
(TrainController pid=79312) The actor died because its node has died. Node Id: b157c93de9603b1458ae4bd22668b46a4f0ae249bf9467072ba6fd45
(TrainController pid=79312) \tthe actor's node was preempted: preemption_integration_demo: simulating node drain
(TrainController pid=79312) Graceful shutdown of backend failed. This is expected if one of the workers has crashed.
"""

# hiyouga/EasyR1#324: an actor dead because its owner's node crashed.
RAY_ACTOR_OWNER_DIED = """\
ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.
        class_name: Runner
        actor_id: 28507c63735529c3265367b501000000
        pid: 159258
        namespace: b9b0f765-f39a-441b-95d6-fe12e866f264
        ip: 172.21.160.9
The actor is dead because its owner has died. Owner Id: 01000000ffffffffffffffffffffffffffffffffffffffffffffffff Owner Ip address: 172.21.160.9 Owner worker exit type: SYSTEM_ERROR Worker exit detail: Owner's node has crashed.
"""


def test_ray_actor_on_a_preempted_node_is_a_preemption(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, RAY_ACTOR_NODE_PREEMPTED, rule="preemption",
                     line="the actor's node was preempted: preemption_integration_demo")


def test_ray_actor_whose_owner_died_is_no_preemption(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, RAY_ACTOR_OWNER_DIED)
    assert all(inc["rule"] != "preemption" for inc in found), found
