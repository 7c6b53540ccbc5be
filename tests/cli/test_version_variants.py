"""A message is read in the wording of every version of the library that
prints it (rulesets/README.md, "Signals"). The lines below are as public
threads quote them, in versions the rules missed: NCCL 2.23 to 2.27's
"Got async error event" for an InfiniBand port error, the upload thread of
wandb clients before 0.10 (wandb/api.py, file_pusher.py, sync.py), and
nccl-tests' own check macros ("Test NCCL failure", NCCL 1.x builds' "NCCL
failure")."""
import pytest

from conftest import diagnose_text, first_incident, initiating_texts

FALLBACK = "Unrecognised fatal error"


# NCCL 2.23-2.27 (transport/net_ib.cc, ncclIbAsyncThreadMain): non-fatal
# events as "%s:%d Got async error event: %s", then the worker's error.
PORT_ERROR = ("gpu-b02:311:405 [0] transport/net_ib.cc:171 NCCL WARN NET/IB : "
              "mlx5_1:1 Got async error event: port error\n")
PORT_ACTIVE = ("gpu-b02:311:405 [0] transport/net_ib.cc:171 NCCL WARN NET/IB : "
               "mlx5_1:1 Got async error event: port active\n")
WORKER = "RuntimeError: NCCL communicator was aborted on rank 0.\n"


def test_nccl_2_23_async_error_event_port_error_is_a_port_down(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, PORT_ERROR + PORT_ACTIVE + WORKER)
    assert inc["rule"] == "ib-port-down", inc["explanation"]
    assert initiating_texts(inc)[0] == PORT_ERROR.strip()


def test_nccl_2_23_port_active_alone_is_no_port_down(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, PORT_ACTIVE + WORKER)
    assert all(i["rule"] != "ib-port-down" for i in found)


# wandb 0.4-0.6 (wandb/issues/83): the file pusher's upload thread dies on
# an API error while the run's files sync.
WANDB_0_4 = """\
wandb: Syncing files in wandb/run-r56z43:
wandb:   config.yaml
Exception in thread Thread-274:12690.000 of 245572398.000 bytes uploaded
Traceback (most recent call last):
  File "/home/shawn/anaconda2/envs/rllab/lib/python2.7/threading.py", line 810, in __bootstrap_inner
    self.run()
  File "/home/shawn/anaconda2/envs/rllab/lib/python2.7/site-packages/wandb/file_pusher.py", line 33, in run
    self._push_function(self.save_name, save_path)
  File "/home/shawn/anaconda2/envs/rllab/lib/python2.7/site-packages/wandb/sync.py", line 288, in push_function
    progress=lambda _, total: self._stats.update_progress(path, total))
  File "/home/shawn/anaconda2/envs/rllab/lib/python2.7/site-packages/wandb/api.py", line 86, in wrapper
    raise CommError(message)
CommError: The API call urlfetch.Fetch() took too long to respond and was cancelled.
"""


def test_old_wandb_upload_thread_exception_is_a_tracking_failure(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, WANDB_0_4)
    assert inc["rule"] == "wandb-tracking-failure", inc["explanation"]
    assert any(t.startswith("CommError: The API call") for t in initiating_texts(inc)), initiating_texts(inc)


# nccl-tests' NCCLCHECK / CUDACHECK (src/common.h): the test prints the
# failed call's result and returns; no catalog rule names the cause.
NCCL_TESTS_HEADER = ("# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 "
                     "iters: 20 validation: 1\n#  Rank  0 Group  0 Pid 3740409 on fengyun device  0 "
                     "[0x01] NVIDIA RTX A6000\n")
NCCL_TESTS_TAIL = " .. fengyun pid 3164639: Test failure common.cu:844\n"


@pytest.mark.parametrize("line", [
    "NCCL failure all_reduce.cu:95 'unhandled cuda error'",
    "fengyun: Test NCCL failure common.cu:959 'internal error - please report this issue to the NCCL developers / '",
    "Test CUDA failure common.cu:730 'unknown error'",
])
def test_nccl_tests_check_failure_is_a_fatal_line(faultline_bin, validate, tmp_path, line):
    inc = first_incident(faultline_bin, validate, tmp_path, NCCL_TESTS_HEADER + line + "\n" + NCCL_TESTS_TAIL)
    assert inc["reference"] == FALLBACK
    assert initiating_texts(inc) == [line]


def test_a_catalog_rule_keeps_its_own_nccl_tests_line(faultline_bin, validate, tmp_path):
    # cudaErrorSystemNotReady: Fabric Manager not running (nccl-tests#338).
    line = "gpu: Test CUDA failure common.cu:1030 'system not yet initialized'"
    inc = first_incident(faultline_bin, validate, tmp_path, NCCL_TESTS_HEADER + line + "\n")
    assert inc["reference"] != FALLBACK, inc["explanation"]


# TensorFlow 1.x up to 1.4 (santi-pdp/segan#42, davidsandberg/facenet#610):
# session.run re-raises the allocator's OOM as "ResourceExhaustedError (see
# above for traceback):" and the message ends after the tensor's shape.
@pytest.mark.parametrize("line", [
    "ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[100,4096,32]\n",
    "ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[90,17,17,32]\n",
])
def test_tensorflow_1_short_oom_is_an_oom(faultline_bin, validate, tmp_path, line):
    inc = first_incident(faultline_bin, validate, tmp_path, line)
    assert inc["rule"] == "cuda-oom", inc["explanation"]
    assert initiating_texts(inc) == [line.strip()]
