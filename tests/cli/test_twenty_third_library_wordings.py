"""
Phrasing across versions, twenty-third pass (issue #18): the newest releases
and the oldest still in use of PyTorch's elastic launcher and c10d store,
Slurm's slurmstepd, vLLM's V1 engine client and DeepSpeed's inference
kernels, for messages the catalog's signals read in one form only:

- Slurm 25.05 onwards name the signal in slurmstepd's cancellation banner
  (slurmstepd/req.c, _handle_signal_container, strsignal()): '*** STEP
  <id> ON <node> CANCELLED AT <time> DUE to SIGNAL Killed ***' as well as
  '... DUE to SIGNAL Terminated ***'; up to 24.11 both read '... CANCELLED
  AT <time> ***'. Only 'Terminated' was read. The excerpt is a public task
  tracker's issue (#33), as posted: a step cancelled by hand.
- slurmctld requeues a job whose node failed with 'requeue job %pJ due to
  failure of node <node>' (job_mgr.c, kill_running_job_by_node_name, 18.08
  to 26.05), 'requeue job JobId=<id> due to ...'; the signal read only the
  front-end path's 'requeue JobId=<id> ...' (gone in 25.05) and 17.11's
  'requeue job <id> ...'. The excerpt is a cluster user's slurmctld.log
  timeline, as posted.
- torchelastic formats the signals of 'Unable to shutdown process <pid> via
  <sig>, forcefully exiting via <sig>' and 'Received <sig> death signal,
  shutting down workers' with %s, which Python 3.10 and older render
  'Signals.SIGTERM' and Python 3.11 onwards '15' (IntEnum's str() became
  int's). The forced kill was read only in its old form, a Ctrl-C's
  'Received 2 death signal' not at all. The excerpt is a nanoGPT-style run
  on Python 3.13 stopped with Ctrl-C, as posted. torch.multiprocessing's
  spawn (since pytorch#115219) kills the workers left after one failed
  with 'Unable to shutdown process <pid> via SIGTERM , forcefully exiting
  via SIGKILL', not read either; no post was found, the line is spawn.py's
  format rendered.
- torchelastic's MultiprocessContext (workers started as a Python function)
  says 'Closing process <pid> via signal SIGTERM' where SubprocessContext
  says 'Sending process <pid> closing signal SIGTERM'; only the second was
  read. The excerpt is NVIDIA/nvidia-resiliency-ext#18, as posted.
- c10d's formatSockAddr prints '[host]:port' up to PyTorch 2.8; 2.9
  (pytorch#159596) prints an IPv4 address bare, 'host:port'. The store
  client's 'recvValue failed on SocketImpl(..., remote=host:port)' and
  'The client socket has failed to connect to host:port (errno: N ...)'
  were read with brackets only, and the same lost store seen from a write
  ('[c10d] sendBytes failed on SocketImpl(...): Broken pipe', what the NCCL
  heartbeat monitor's store check logs) not at all. Excerpts: an SGLang
  0.5.9 run's TCPStore warnings and a vLLM worker's, as posted; no post of
  the bare connect line was found, so that line is the 2.9 format rendered.
- vLLM's newest releases call the engine process of a run without data
  parallelism plain 'EngineCore' ('(EngineCore pid=N)'), so the client's
  'Engine core proc EngineCore died unexpectedly' has no '_DP0' suffix; the
  signal wanted one. Excerpt: vllm-ascend's documentation of an offline
  run's shutdown, as posted (a success: still no failure).
- Ray's memory monitor, in its newer releases, reports one kill round as
  'N worker(s) were killed due to the node running low on memory. Memory on
  the node (IP: ..., ID: ...) was X / Y (r), which exceeds the memory usage
  threshold of t' (ray.exceptions.OutOfMemoryError) where earlier ones said
  'Task was killed due to the node running low on memory.' and '... where
  the task (...) was running was X / Y (r) ... Ray killed this worker'.
  Only the earlier form was read. Excerpts: Ray's own memory guide and a
  posted verl run, as posted.
- DeepSpeed's inference workspace (csrc/transformer/inference, 0.9 to
  0.19) throws a second time, 'Workspace can't be allocated, not enough
  memory', after 'Allocatable workspace available (N tokens) is less than
  minimum requested workspace (M tokens)'; only the first throw's 'no
  enough memory' was read. No post was found: the lines are the 0.19.5
  format strings rendered.

Already read in every version (checked, no change): Slurm's srun task
lines and 'Detected N oom_kill event' (23.02 to 26.05), the TIME LIMIT,
PREEMPTION, NODE FAILURE and TASK FAILURE banners; torchelastic's
'failed (exitcode: N)' summary, 'Worker group FAILED', 'Received 15 death
signal'; ProcessGroupNCCL's watchdog, heartbeat and dump-signal lines;
vLLM's 'Worker proc ... died unexpectedly (exit code: N)' and 'Worker failed
with error '<message>'' (the message is read by its own rule); DeepSpeed's
launcher 'exits with return code' (0.10 to 0.19.5).
"""

import pytest

from conftest import diagnose_text, leading_incident, scan_text


ELASTIC_CTRL_C_PY313 = """\
step 11802 | train_loss 3.62  | norm 0.31  | time 2227.09 ms | tok/sec 235.41K
^CW0817 02:40:09.307000 17860 torch/distributed/elastic/agent/server/api.py:719] Received 2 death signal, shutting down workers
W0817 02:40:09.311000 17860 torch/distributed/elastic/multiprocessing/api.py:900] Sending process 17942 closing signal SIGINT
W0817 02:40:39.314000 17860 torch/distributed/elastic/multiprocessing/api.py:919] Unable to shutdown process 17943 via 2, forcefully exiting via 9
"""

VLLM_SHUTDOWN_AFTER_SUCCESS = """\
(EngineCore pid=970) INFO 05-12 11:36:00 [core.py:1201] Shutdown initiated (timeout=0)
(EngineCore pid=970) INFO 05-12 11:36:00 [core.py:1224] Shutdown complete
ERROR 05-12 11:36:01 [core_client.py:704] Engine core proc EngineCore died unexpectedly, shutting down client.
"""

VLLM_ENGINE_DIED_OF_ERROR = """\
(EngineCore pid=1709) ERROR 06-01 17:32:04 [core.py:1108] EngineCore failed to start.
(EngineCore pid=1709) ERROR 06-01 17:32:04 [core.py:1108] Traceback (most recent call last):
(EngineCore pid=1709) ERROR 06-01 17:32:04 [core.py:1108] AssertionError: image token count mismatch
(APIServer pid=1) ERROR 06-01 17:32:05 [core_client.py:704] Engine core proc EngineCore died unexpectedly, shutting down client.
"""

DEEPSPEED_WORKSPACE_TOKENS = """\
Allocatable workspace available (12 tokens) is less than minimum requested workspace (64 tokens)
RuntimeError: Workspace can't be allocated, not enough memory
"""


@pytest.mark.parametrize("line,signal,fields", [
    ("[2026-09-25T02:29:47.645] error: *** STEP 847885.6 ON evc104 CANCELLED AT 2026-09-25T02:29:47 "
     "DUE to SIGNAL Killed ***", "slurm-cancelled", {"host": "evc104"}),
    ("W0817 02:40:39.314000 17860 torch/distributed/elastic/multiprocessing/api.py:919] "
     "Unable to shutdown process 17943 via 2, forcefully exiting via 9", "unable_to_shutdown", {"pid": "17943"}),
    ("W0312 14:02:11.532000 8812 torch/multiprocessing/spawn.py:160] Unable to shutdown process 8830 via "
     "SIGTERM , forcefully exiting via SIGKILL", "unable_to_shutdown", {"pid": "8830"}),
    ("W0227 17:39:41.936000 293814 site-packages/torch/distributed/elastic/multiprocessing/api.py:766] "
     "Closing process 293866 via signal SIGTERM", "closing_signal_sigterm", {"pid": "293866"}),
    ("^CW0817 02:40:09.307000 17860 torch/distributed/elastic/agent/server/api.py:719] "
     "Received 2 death signal, shutting down workers", "user_interrupt", {}),
    ("[W304 19:44:41.898456436 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=73, "
     "addr=localhost:46764, remote=localhost:29500): Failed to recv, got 0 bytes. Connection was likely "
     "closed. Did the remote server shutdown or crash?", "tcpstore_recv_failed", {"peer": "localhost"}),
    ("[rank15]:[W305 10:17:38.404745404 TCPStore.cpp:106] [c10d] sendBytes failed on SocketImpl(fd=102, "
     "addr=tpgds-aihub0008.delta.sbrf.ru:33978, remote=10.99.91.59:5000): Broken pipe",
     "tcpstore_recv_failed", {"peer": "10.99.91.59"}),
    ("[rank1]:[W901 07:40:20.971331164 TCPStore.cpp:106] [c10d] sendBytes failed on SocketImpl(fd=64, "
     "addr=[localhost]:35986, remote=[localhost]:45489): Broken pipe", "tcpstore_recv_failed", {"peer": "localhost"}),
    ("[W1020 09:27:35.120551122 socket.cpp:767] [c10d] The client socket has failed to connect to "
     "node000:29500 (errno: 111 - Connection refused).", "store_connect_retry", {"peer": "node000"}),
    ("ERROR 05-12 11:36:01 [core_client.py:704] Engine core proc EngineCore died unexpectedly, shutting down "
     "client.", "engine-core-proc-died", {}),
    ("RuntimeError: Workspace can't be allocated, not enough memory", "deepspeed-inference-workspace-oom", {}),
    ("requeue job JobId=12210_11(12238) due to failure of node master", "slurm-requeue-node-failure",
     {"host": "master"}),
    ("(raylet) Task _map_task failed due to oom. There are infinite oom retries remaining, so the task will be "
     "retried. Error: 1 worker(s) were killed due to the node running low on memory. Memory on the node (IP: "
     "10.0.50.112, ID: 4cb25bc084aeb5a31ca5402ad589ae042a71165a8e2dd8418fecee26) was 28.62GB / 30.00GB "
     "(0.954017), which exceeds the memory usage threshold of 0.950000; Object store memory usage: [- objects "
     "spillable: 0; - bytes spillable: 0;", "ray-memory-monitor-kill", {}),
], ids=["slurm-25-05-killed", "elastic-force-kill-py311", "spawn-force-kill", "elastic-multiprocess-close", "elastic-sigint-py311",
        "tcpstore-recv-torch-2-9", "tcpstore-send-torch-2-9", "tcpstore-send-torch-2-8",
        "store-connect-torch-2-9", "vllm-engine-core-unsuffixed", "deepspeed-workspace-tokens",
        "slurmctld-requeue-job", "ray-memory-monitor-newer"])
def test_version_wording_is_read_by_its_signal(faultline_bin, tmp_path, line, signal, fields):
    records = [r for r in scan_text(faultline_bin, tmp_path, line + "\n") if r["signal"] == signal]
    assert records, scan_text(faultline_bin, tmp_path, line + "\n")
    assert all(records[0]["fields"].get(k) == v for k, v in fields.items()), records[0]["fields"]


@pytest.mark.parametrize("newer,older", [
    # Slurm 25.05's banner for a SIGKILL against 24.11's for the same stop
    ("slurmstepd: error: *** JOB 4417 ON gpu-a01 CANCELLED AT 2026-03-02T10:14:07 DUE to SIGNAL Killed ***",
     "slurmstepd: error: *** JOB 4417 ON gpu-a01 CANCELLED AT 2026-03-02T10:14:07 ***"),
    # torchelastic on Python 3.11 against 3.10
    ("W0817 02:40:39.314000 17860 torch/distributed/elastic/multiprocessing/api.py:919] "
     "Unable to shutdown process 17943 via 15, forcefully exiting via 9",
     "W0311 09:51:38.431000 40907 torch/distributed/elastic/multiprocessing/api.py:916] "
     "Unable to shutdown process 41345 via Signals.SIGTERM, forcefully exiting via Signals.SIGKILL"),
    # slurmctld's ordinary requeue line against the front-end one
    ("[2026-03-02T04:51:47.112] requeue job JobId=12210_11(12238) due to failure of node master",
     "[2026-03-02T04:51:47.112] requeue JobId=12210_11(12238) due to failure of node master"),
    # Ray's memory monitor, newer and earlier releases
    ("ray.exceptions.OutOfMemoryError: 2 worker(s) were killed due to the node running low on memory.",
     "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory."),
], ids=["slurm-banner", "elastic-force-kill", "slurmctld-requeue", "ray-oom"])
def test_newer_wording_is_diagnosed_like_the_older(faultline_bin, validate, tmp_path, newer, older):
    rules = [[inc["rule"] for inc in diagnose_text(faultline_bin, validate, tmp_path, line + "\n")]
             for line in (newer, older)]
    assert rules[0] == rules[1] and rules[1], rules


def test_ctrl_c_on_python_3_13_reads_as_a_stop_by_hand(faultline_bin, tmp_path):
    kept = {r["signal"] for r in scan_text(faultline_bin, tmp_path, ELASTIC_CTRL_C_PY313)}
    assert {"user_interrupt", "closing_signal_sigterm", "unable_to_shutdown"} <= kept, kept


def test_unsuffixed_engine_core_is_read_like_engine_core_dp0(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, VLLM_ENGINE_DIED_OF_ERROR, rule="vllm-engine-monitor-died",
                     any_line="Engine core proc EngineCore died unexpectedly")
    # The same line at the shutdown of a run that succeeded stays no failure.
    assert diagnose_text(faultline_bin, validate, tmp_path, VLLM_SHUTDOWN_AFTER_SUCCESS,
                         name="shutdown.log") == []


def test_deepspeed_workspace_short_of_tokens_is_an_oom(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, DEEPSPEED_WORKSPACE_TOKENS, rule="cuda-oom",
                     any_line="Workspace can't be allocated, not enough memory")
