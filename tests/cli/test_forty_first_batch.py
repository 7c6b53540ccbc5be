"""Misses from the forty-first corpus batch's work part:

- ProcessGroupNCCL broadcasts the NCCL unique id of a new communicator
  through the c10d store (broadcastUniqueNCCLID): rank 0 sets the key, the
  other ranks get it, and a failed get is reported as '[<r>] is setting up
  NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value
  store by key ..., but store->get(...) got error: <what>'. When <what> is
  the store's own wait timeout ('wait timeout after <N>ms, keys: ...',
  which TCPStore::doWait raises since 2.4 once the server acknowledged the
  cancelled wait, or a file:// store's 'Timeout waiting for key: ... after
  <N> ms'), the store answered and rank 0 never published the id: it had
  not reached communicator creation (still loading a large model, stuck, or
  dead before it), and the reporting rank waited on it as on a collective.
  It was read as a lost rendezvous (Network Partition); it is
  nccl-watchdog-timeout's now. A get that lost the store connection
  ('Connection reset by peer') stays rendezvous-connection-error's, and so
  does 'Socket Timeout': before 2.4 any receive on the store socket raises
  it when its timeout expires, a store that stopped answering included.
- ProcessGroupWrapper's fingerprint check (TORCH_DISTRIBUTED_DEBUG=DETAIL)
  was read only in its current one-line form, 'Detected mismatch between
  collectives on ranks. Rank <r> is running collective: ..., but Rank <s>
  ...'. Releases up to 1.11 printed 'Rank <r> is running inconsistent
  collective: <fingerprint>', and a copy broken after the first sentence
  leaves the sentence alone on its line; both fell to the unrecognised
  fatal error. The sentence is printed by that check only.
"""
from conftest import leading_incident

# NVIDIA-NeMo/Speech#14399: fine-tuning on two H100s under NeMo's launcher;
# rank 1's get of rank 0's unique id gives up after the 600 s store timeout.
STORE_WAIT_TIMEOUT = """\
B-nemo-ft3/0 [default1]:[rank1]:   File "/usr/local/lib/python3.12/dist-packages/torch/distributed/distributed_c10d.py", line 2780, in broadcast
B-nemo-ft3/0 [default1]:[rank1]:     work = group.broadcast([tensor], opts)
B-nemo-ft3/0 [default1]:[rank1]:            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
B-nemo-ft3/0 [default1]:[rank1]: torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: wait timeout after 600000ms, keys: /default_pg/0//cuda//0
B-nemo-ft3/0 [default1]:[rank1]: Exception raised from doWait at /opt/pytorch/pytorch/torch/csrc/distributed/c10d/TCPStore.cpp:578 (most recent call first):
"""

# pytorch/pytorch#82091, a comment: an older release's receive timeout on the
# store socket, which a store that stopped answering raises too.
STORE_SOCKET_TIMEOUT = """\
RuntimeError: [2] is setting up NCCL communicator and retreiving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout
Exception raised from recvBytes at ../torch/csrc/distributed/c10d/Utils.hpp:580 (most recent call first):
"""

# hiyouga/LlamaFactory#1808: the store connection itself is reset while rank
# 3 waits, between the DeepSpeed launcher's kills.
STORE_CONNECTION_RESET = """\
[2023-12-12 17:36:22,024] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 21439
    return func(*args, **kwargs)
  File "/home/wangpeiyan/anaconda3/envs/llama_factory/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 3696, in barrier
    work = default_pg.barrier(opts=opts)
RuntimeError: [3] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer. This may indicate a possible application crash on rank 0 or a network set up issue.
[2023-12-12 17:36:22,129] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 21440
"""

# pytorch/pytorch#78022: the check's message up to 1.11.
MISMATCH_INCONSISTENT = """\
RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running inconsistent collective: CollectiveFingerPrint(OpType=BROADCAST, TensorShape=[34112], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))
"""

# ZJU-REAL/SpatialLadder#1: the poster's copy, the fingerprints shortened
# below the first sentence.
MISMATCH_SENTENCE = """\
RuntimeError: Detected mismatch between collectives on ranks.
Rank 0: TensorShape=[77791232]
Rank 3: TensorShape=[2621952]
Collectives differ in the following aspects: Tensor shapes: 77791232 vs 2621952
"""


def test_store_wait_timeout_is_a_wait_on_rank_0(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, STORE_WAIT_TIMEOUT, rule="nccl-watchdog-timeout")


def test_store_socket_timeout_stays_a_lost_rendezvous(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, STORE_SOCKET_TIMEOUT, rule="rendezvous-connection-error")


def test_store_connection_reset_stays_a_lost_rendezvous(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, STORE_CONNECTION_RESET,
                     rule="rendezvous-connection-error")


def test_mismatch_up_to_1_11_is_a_collective_desync(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, MISMATCH_INCONSISTENT, rule="collective-desync-stuck",
                     line="Detected mismatch between collectives on ranks.")


def test_mismatch_sentence_alone_is_a_collective_desync(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, MISMATCH_SENTENCE, rule="collective-desync-stuck",
                     line="Detected mismatch between collectives on ranks.")
