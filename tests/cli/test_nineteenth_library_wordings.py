"""A Gloo process group that cannot connect its TCP pairs, as PyTorch and
Gloo print it:

- ProcessGroupGloo's constructor wraps the failure of
  context->connectFullMesh() as "Gloo connectFullMesh failed with " +
  e.what(), logged as an [E ProcessGroupGloo.cpp] line and raised as a
  RuntimeError; the wrapped text is Gloo's own (a connect timeout, a
  reset, "no error" when the pair bound to loopback).
- Gloo's tcp pair raises "[<file>:<line>] Connect timeout <peer>" when the
  peer never accepted within the context's timeout; Caffe2 and older
  PyTorch surface it unwrapped.

Both are a connection between ranks that could not be made at process
group set-up. A Gloo collective that times out once connected (unbound
buffer send/recv) is not one of them.
"""
from conftest import diagnose_text, first_incident, initiating_texts


TORCH_FULL_MESH = """\
  File "/opt/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 1744, in _new_process_group_helper
    backend_class = ProcessGroupGloo(
RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error
[E512 09:14:51.208114311 ProcessGroupGloo.cpp:143] Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error
"""

CAFFE2_PAIR_TIMEOUT = """\
INFO:data_parallel_model:Creating barrier net
Traceback (most recent call last):
  File "train.py", line 301, in <module>
    workspace.RunNetOnce(model.param_init_net)
RuntimeError: [/opt/caffe2/third_party/gloo/gloo/transport/tcp/pair.cc:611] Connect timeout [10.1.4.22]:41877
"""

GLOO_SEND_TIMEOUT = """\
  File "/opt/venv/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py", line 2010, in all_gather
RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:136] Timed out waiting 1800000ms for send operation to complete
"""


def test_gloo_full_mesh_failure_is_a_network_partition(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, TORCH_FULL_MESH)
    assert inc["reference"] == "Network Partition", inc["explanation"]
    assert any("Gloo connectFullMesh failed with" in t for t in initiating_texts(inc))


def test_gloo_pair_connect_timeout_is_a_network_partition(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, CAFFE2_PAIR_TIMEOUT)
    assert inc["reference"] == "Network Partition", inc["explanation"]
    assert any("Connect timeout [10.1.4.22]:41877" in t for t in initiating_texts(inc))


def test_gloo_collective_timeout_is_not_a_connect_failure(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, GLOO_SEND_TIMEOUT)
    assert all(inc["rule"] != "rendezvous-connection-error" for inc in found)
