"""Job-level failures from the twenty-sixth corpus batch's work part:

- torch.multiprocessing shares a tensor through a POSIX shared-memory
  object /torch_<pid>_<n> (a file under /dev/shm): PyTorch 1.x's
  THAllocator sizes it with ftruncate, writes its last byte and on a
  failed write raises THError("unable to write to file <%s>") with no
  errno, bare or with ' at .../THAllocator.c:<line>'. On tmpfs that write
  is where a full /dev/shm fails; ATen's MapAllocator later adds
  ': <strerror> (<errno>)', and only 'No space left on device' there names
  /dev/shm.
- The SysV-family kernels' NFS client (illumos and Solaris, HP-UX, SunOS:
  nfs_subr.c) prints 'NFS server %s not responding still trying' ('NFS%d
  server ...' in debug builds) and 'NFS server %s ok' once it answers,
  where Linux prints 'nfs: server %s not responding, still trying'.
- The Kubeflow training operator's job-failed condition and event ('TFJob
  %s has failed because %d %s replica(s) failed.', 'PyTorchJob %s is
  failed because ...') is the job's failure when the log holds nothing
  else, and a symptom a replica's own error leads; 'is restarting because
  ...' is no failure.
- Ray's GCS marks a node that stopped answering its health checks dead
  ('The node with node id: <id> and address: <ip> and node name: <name>
  has been marked dead because the detector has missed too many heartbeats
  from it', 'and ip: <ip>' before Ray 2, '... the monitor ...' before
  0.8): the actors on it die after it, so it leads them, on the node's own
  address.
"""
from conftest import diagnose_text, leading_incident

SHM = "Shared Memory (/dev/shm) Exhaustion in Containers"

TH_SHARE_FD = """\
Traceback (most recent call last):
  File "/opt/conda/lib/python3.6/multiprocessing/queues.py", line 234, in _feed
    obj = _ForkingPickler.dumps(obj)
  File "/opt/conda/lib/python3.6/multiprocessing/reduction.py", line 51, in dumps
    cls(buf, protocol).dump(obj)
  File "/opt/conda/lib/python3.6/site-packages/torch/multiprocessing/reductions.py", line 190, in reduce_storage
    fd, size = storage._share_fd_()
RuntimeError: unable to write to file </torch_2217_1958392311>
"""

HPUX_NFS = """\
Mar  5 12:39:58 hpux01 vmunix: NFS server fileserv2 not responding still trying
Mar  5 12:52:31 hpux01 vmunix: NFS server fileserv2 ok
"""

TFJOB_STATUS = """\
Status:
  Completion Time:  2024-03-11T09:14:55Z
  Conditions:
    Last Transition Time:  2024-03-11T09:14:55Z
    Message:               TFJob kubeflow/mnist-dist has failed because 1 Chief replica(s) failed.
    Reason:                TFJobFailed
    Status:                True
    Type:                  Failed
"""

RAY_NODE_LOST = """\
(RayTrainWorker pid=2231, ip=10.0.3.17) epoch 3 step 1200 loss 0.8831
(RayTrainWorker pid=2240, ip=10.0.3.18) epoch 3 step 1200 loss 0.8790
2024-05-02 11:02:10,441\tWARNING worker.py:2058 -- The node with node id: 3f2a9c0d51e4b7a86c1d0e2f9b3a4c5d6e7f8091a2b3c4d5e6f70812 and address: 10.0.3.18 and node name: 10.0.3.18 has been marked dead because the detector has missed too many heartbeats from it. This can happen when a \t(1) raylet crashes unexpectedly (OOM, preempted node, etc.) 
\t(2) raylet has lagging heartbeats due to slow network or busy workload.
(TrainController pid=2190, ip=10.0.3.17) 2024-05-02 11:02:10,512\tERROR worker_group.py:301 -- The actor died unexpectedly before finishing this task.
(TrainController pid=2190, ip=10.0.3.17) The actor died because its node has died. Node Id: 3f2a9c0d51e4b7a86c1d0e2f9b3a4c5d6e7f8091a2b3c4d5e6f70812
"""


def test_a_th_shm_write_with_no_errno_is_dev_shm(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, TH_SHARE_FD, reference=SHM,
                     line="unable to write to file </torch_2217_1958392311>")


def test_a_th_shm_write_with_its_source_line_is_dev_shm(faultline_bin, validate, tmp_path):
    text = TH_SHARE_FD.replace(
        "</torch_2217_1958392311>",
        "</torch_2217_1958392311> at /pytorch/aten/src/TH/THAllocator.c:383")
    leading_incident(faultline_bin, validate, tmp_path, text, reference=SHM, line="unable to write to file")


def test_a_shm_write_with_another_errno_is_not_dev_shm(faultline_bin, validate, tmp_path):
    text = TH_SHARE_FD.replace("</torch_2217_1958392311>", "</torch_2217_1958392311>: Bad file descriptor (9)")
    incs = diagnose_text(faultline_bin, validate, tmp_path, text)
    assert incs and incs[0]["reference"] != SHM, [i["rule"] for i in incs]


def test_the_sysv_nfs_clients_not_responding_is_an_nfs_failure(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, HPUX_NFS, reference="NFS Mount Failure",
                     line="NFS server fileserv2 not responding still trying")


def test_the_training_operators_job_failed_verdict_is_the_failure(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, TFJOB_STATUS, rule="unrecognised-fatal-error",
                     line="TFJob kubeflow/mnist-dist has failed because 1 Chief replica(s) failed.")


def test_a_replicas_own_error_leads_the_operators_verdict(faultline_bin, validate, tmp_path):
    text = ("[chief-0] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
            "GPU 0 has a total capacity of 39.39 GiB of which 1.12 GiB is free.\n" + TFJOB_STATUS)
    leading_incident(faultline_bin, validate, tmp_path, text, rule="cuda-oom", line="CUDA out of memory")


def test_the_operator_restarting_a_job_is_no_failure(faultline_bin, validate, tmp_path):
    text = ("  Warning  PyTorchJobRestarting  41s  pytorchjob-controller  "
            "PyTorchJob default/ddp-bench is restarting because 1 Worker replica(s) failed.\n")
    assert not diagnose_text(faultline_bin, validate, tmp_path, text)


def test_a_ray_node_marked_dead_leads_its_actors_on_its_own_address(faultline_bin, validate, tmp_path):
    inc = leading_incident(faultline_bin, validate, tmp_path, RAY_NODE_LOST, rule="unrecognised-fatal-error",
                           line="has been marked dead because the detector has missed too many heartbeats")
    assert inc["initiating"]["host"] == "10.0.3.18", inc["initiating"]
