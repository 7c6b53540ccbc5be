"""Phrasing across versions, third pass (issue #18): the c10d store, NCCL's
sockets, vLLM V1's executor, SGLang's watchdog and DCGM, read in the source of each maintained
version, that the catalog's signals did not read:

- c10d's TCPStore client reads a connection its server closed: PyTorch 2.4
  and before call it "Connection reset by peer" (already read); 2.5 to 2.7
  (pytorch#130056) "[c10d] recvValue failed on SocketImpl(..., remote=[H]:P):
  failed to recv, got 0 bytes"; later releases "Failed to recv, got 0 bytes.
  Connection was likely closed. Did the remote server shutdown or crash?"
  (already read; the recvValue line now also names the store's host) and log
  timed reads as "recvValueWithTimeout failed".
- A get or wait on the store outlives its timeout because no peer set the
  key: 2.0 and 2.1 raise "RuntimeError: Socket Timeout" from recvBytes, the
  releases up to 2.4 "DistStoreError: Socket Timeout", 2.5 onwards
  "DistStoreError: wait timeout after <ms>ms, keys: <keys>" from
  TCPStore::doWait. The old catalog left all three to the fallback.
- NCCL 2.27 and later name the peer on a socket of the wrong type:
  "socketFinalizeAccept from <addr>: wrong type T != T" (2.26 and before:
  "socketFinalizeAccept: wrong type", already read). The excerpt is
  nccl-tests#188's log with the line in the 2.27 source's format: no post of
  the new form was found.
- vLLM V1's executor watches its worker processes: "Worker proc <name> died
  unexpectedly, shutting down executor." (MultiprocExecutor, 0.8 onwards;
  later releases add "(exit code: N)"; the Ray V2 executor "RayWorkerProc
  rank=[N] died unexpectedly"), the engine's own failure after it. A worker
  line after an offline run completed stays quiet (the rule's conditions).
  0.7 and 0.8 signalled the same with SIGUSR1: "MulitprocExecutor got fatal
  signal from worker processes, shutting down." (vLLM's typo) and the
  client's "Got fatal signal from worker processes, shutting down.".
- SGLang's scheduler watchdog ends a hung forward batch by killing the
  server: "Watchdog timeout (self.watchdog_timeout=N)" (0.4 to the first 0.5
  releases), "Scheduler watchdog timeout (self.watchdog_timeout=N,
  self.soft=False)" since, and in the newest releases "(Detokenizer|Tokenizer)
  Manager watchdog timeout, crashing server to prevent hanging"; the old
  catalog gave no incident. No rule covers a serving engine's own hang
  watchdog, so the fallback names the line.
- DCGM's health messages (dcgm_errors.h): a pending row remap reads "GPU N
  has uncorrectable memory errors and row remappings are pending" up to 3.2
  ("had memory errors and row remappings are pending" from 3.3, already
  read); 4.4 onwards reports "GPU N has fallen off the bus"; every release
  "Detected N volatile double-bit ECC error(s) in GPU M.". The lines are in
  the source's format behind dcgmi's "Error: " (no post found).

Already read in every version (rule examples, the earlier passes): the libuv
store's "The server socket has failed to listen on any local network address.
... name: EADDRINUSE" (2.4+) and the socket store's "(errno: 98 - Address
already in use)"; "The client socket has timed out after <N>s|<N>ms while
trying to connect to (H, P)"; "Timed out after N seconds waiting for clients.
N/M clients joined."; RendezvousConnectionError, RendezvousClosedError and
RendezvousTimeoutError; ProcessGroupNCCL's "Watchdog caught collective
operation timeout: WorkNCCL(...)" under "NCCL watchdog thread terminated with
exception" (2.0, 2.1) and "Process group watchdog thread terminated with
exception" (2.2 on), "Some NCCL operations have failed or timed out",
"watchdog got stuck for N seconds", the heartbeat monitor's dump and terminate
lines; ncclGetErrorString's texts, the same from NCCL 2.18 to 2.29; NET/IB's
completion errors ("with error 12," to 2.22, "with status=12 " since,
"status=IBV_WC_RETRY_EXC_ERR(12)" in 2.28) and async events ("Got async event
:", "Got async error event:", "Got non-fatal async event:", "async fatal event
on QP|CQ"); NCCL's socket connect and retry WARNs in their 2.26 and 2.28
forms; the driver's "GPU recovery action changed from ... to ..." (Xid 154);
vLLM's "Engine core proc EngineCore_N|EngineCore_DPN died unexpectedly" and
"EngineCore encountered a fatal error"; SGLang's "Rank N scheduler is dead"
through its "Exit code: -9".
"""
import pytest

from conftest import diagnose_text, first_incident, leading_incident, scan_text


RECV_ZERO_BYTES = """\
[rank2]:[W625 23:35:35.303797152 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=6, addr=[::ffff:127.0.0.1]:37468, remote=[::ffff:127.0.0.1]:6006): failed to recv, got 0 bytes
Exception raised from recvBytes at /pytorch/torch/csrc/distributed/c10d/Utils.hpp:678 (most recent call first):
"""

STORE_WAIT_TIMEOUT = """\
torch.distributed.DistStoreError: wait timeout after 900000ms, keys: /none/torchelastic/role_info/0, /none/torchelastic/role_info/1
"""

STORE_SOCKET_TIMEOUT = """\
torch.distributed.DistStoreError: Socket Timeout
"""

STORE_SOCKET_TIMEOUT_2_0 = """\
  File "/mnt/cache/share_data/home_origin/env/.grouplib/lib/python3.8/site-packages/torch/distributed/elastic/utils/store.py", line 34, in get_all
    data = store.get(f"{prefix}{idx}")
RuntimeError: Socket Timeout
Exception raised from recvBytes at ../torch/csrc/distributed/c10d/Utils.hpp:604 (most recent call first):
"""

NCCL_WRONG_TYPE_FROM = """\
user:16899:16949 [0] NCCL INFO Channel 01/0 : 9[1] -> 0[0] [receive] via NET/Socket/0
user:16899:16961 [0] misc/socket.cc:538 NCCL WARN socketFinalizeAccept from 10.20.0.14<39271>: wrong type 4 != 3
user:16899:16961 [0] NCCL INFO misc/socket.cc:561 -> 3
"""

VLLM_WORKER_DIED = """\
eap-llm-server-on-arc  | INFO:     127.0.0.1:48802 - "GET /health HTTP/1.1" 200 OK
eap-llm-server-on-arc  | ERROR 11-08 11:01:29 [multiproc_executor.py:135] Worker proc VllmWorker-3 died unexpectedly, shutting down executor.
eap-llm-server-on-arc  | ERROR 11-08 11:01:30 [core.py:502] EngineCore encountered a fatal error.
eap-llm-server-on-arc  | ERROR 11-08 11:01:30 [core.py:502] Traceback (most recent call last):
eap-llm-server-on-arc  | ERROR 11-08 11:01:30 [core.py:502]   File "/usr/local/lib/python3.10/dist-packages/vllm/v1/engine/core.py", line 493, in run_engine_core
eap-llm-server-on-arc  | ERROR 11-08 11:01:30 [core.py:502]     engine_core.run_busy_loop()
"""


VLLM_WORKER_DIED_ALONE = """\
DEBUG 07-04 17:35:10 [shm_broadcast.py:456] No available shared memory broadcast block found in 60 second.
ERROR 07-04 17:35:16 [multiproc_executor.py:140] Worker proc VllmWorker-1 died unexpectedly, shutting down executor.
DEBUG 07-04 17:36:10 [shm_broadcast.py:456] No available shared memory broadcast block found in 60 second.
DEBUG 07-04 17:37:10 [shm_broadcast.py:456] No available shared memory broadcast block found in 60 second.
"""

VLLM_FATAL_SIGNAL = """\
(VllmWorker rank=1 pid=788) INFO 03-15 17:24:17 [pynccl.py:69] vLLM is using nccl==2.25.1
(VllmWorker rank=7 pid=1030) Process SpawnProcess-1:8:
(VllmWorker rank=6 pid=989) Process SpawnProcess-1:7:
CRITICAL 03-15 17:24:18 [multiproc_executor.py:48] MulitprocExecutor got fatal signal from worker processes, shutting down. See stack trace above for root cause issue.
(VllmWorker rank=2 pid=825) Process SpawnProcess-1:3:
(VllmWorker rank=7 pid=1030) Traceback (most recent call last):
"""

DCGM_REMAP_PENDING_3_2 = """\
Error: GPU 0 has uncorrectable memory errors and row remappings are pending
"""

DCGM_FALLEN_OFF_BUS = """\
Error: GPU 3 has fallen off the bus
"""

DCGM_VOLATILE_DBE = """\
Detected 1 volatile double-bit ECC error(s) in GPU 3.
"""

VLLM_OFFLINE_THEN_WORKER = """\
INFO 11-12 20:00:00 [__init__.py:216] Automatically detected platform cuda.
(EngineCore_DP0 pid=912) INFO 11-12 20:00:09 [core.py:74] Initializing a V1 LLM engine (v0.11.0) with config: model='Qwen/Qwen3-8B'
Processed prompts: 100%|##########| 2000/2000 [04:01<00:00,  8.29it/s, est. speed input: 2122.10 toks/s, output: 1061.00 toks/s]
ERROR 11-12 20:05:03 [multiproc_executor.py:140] Worker proc VllmWorker-1 died unexpectedly, shutting down executor.
"""

SGLANG_WATCHDOG = """\
INFO - flashinfer.  jit: Loading JIT ops: cascade
[2025-06-22 16:13:55 TP0] Watchdog timeout (self.watchdog_timeout=300)
[2025-06-22 16:13:55 TP0] Pyspy failed to dump PID 63217.   Error: /bin/sh: py-spy: command not found
[2025-06-22 16:14:00] Received sigquit from a child process.   It usually means the child failed.
"""

@pytest.mark.parametrize("text,rule,line", [
    (STORE_WAIT_TIMEOUT, "rendezvous-connection-error", "wait timeout after 900000ms"),
    (STORE_SOCKET_TIMEOUT, "rendezvous-connection-error", "DistStoreError: Socket Timeout"),
    (STORE_SOCKET_TIMEOUT_2_0, "rendezvous-connection-error", "RuntimeError: Socket Timeout"),
    (NCCL_WRONG_TYPE_FROM, "nccl-socket-error", "socketFinalizeAccept from 10.20.0.14<39271>: wrong type"),
    (VLLM_WORKER_DIED, "vllm-engine-dead", "Worker proc VllmWorker-3 died unexpectedly"),
    (VLLM_WORKER_DIED_ALONE, "vllm-engine-dead", "Worker proc VllmWorker-1 died unexpectedly"),
    (VLLM_FATAL_SIGNAL, "vllm-engine-dead", "MulitprocExecutor got fatal signal from worker processes"),
    (SGLANG_WATCHDOG, "unrecognised-fatal-error", "Watchdog timeout (self.watchdog_timeout=300)"),
    (DCGM_REMAP_PENDING_3_2, "xid-row-remap", "has uncorrectable memory errors and row remappings are pending"),
    (DCGM_FALLEN_OFF_BUS, "xid-79-fallen-off-bus", "GPU 3 has fallen off the bus"),
    (DCGM_VOLATILE_DBE, "xid-ecc-uncorrectable", "volatile double-bit ECC error(s) in GPU 3"),
], ids=["store-wait-timeout", "store-socket-timeout", "store-socket-timeout-2-0",
        "nccl-wrong-type-from", "vllm-worker-died", "vllm-worker-died-alone", "vllm-fatal-signal", "sglang-watchdog",
        "dcgm-remap-pending-3-2", "dcgm-fallen-off-bus", "dcgm-volatile-dbe"])
def test_version_wording_gives_its_rule(faultline_bin, validate, tmp_path, text, rule, line):
    leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, any_line=line)


def test_worker_death_after_an_offline_run_is_its_shutdown(faultline_bin, validate, tmp_path):
    # the worker line is no failure once the offline generation completed:
    # the rule's before_rule condition keeps it quiet (it is not unconditional)
    found = diagnose_text(faultline_bin, validate, tmp_path, VLLM_OFFLINE_THEN_WORKER)
    assert all(inc["rule"] != "vllm-engine-dead" for inc in found), [inc["rule"] for inc in found]


def test_store_client_wording_2_5_is_the_rendezvous_rules(faultline_bin, tmp_path):
    # The excerpt's two ends are loopback, so the verdict it leads is the
    # fallback's (test_hardware_negatives_3.py); the line is still the store
    # rule's evidence.
    records = scan_text(faultline_bin, tmp_path, RECV_ZERO_BYTES)
    assert any(r["rule"] == "rendezvous-connection-error" and "failed to recv, got 0 bytes" in r["text"]
               for r in records), [(r["rule"], r["signal"]) for r in records]


def test_store_client_names_the_store_host(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, RECV_ZERO_BYTES)
    fields = inc["initiating"]["evidence"][0]["fields"]
    assert fields["peer"] == "::ffff:127.0.0.1", fields
