"""Phrasing across versions, third pass (issue #18): the c10d store, NCCL's
sockets and vLLM's executor, read in the source of each maintained version,
that the catalog's signals did not read:

- c10d's TCPStore client reads a connection its server closed: PyTorch 2.4
  and before call it "Connection reset by peer" (already read); 2.5 to 2.7
  (pytorch#130056) "[c10d] recvValue failed on SocketImpl(..., remote=[H]:P):
  failed to recv, got 0 bytes"; later releases "Failed to recv, got 0 bytes.
  Connection was likely closed. Did the remote server shutdown or crash?"
  (already read, now also naming the store's host) and log timed reads as
  "recvValueWithTimeout failed".
- A get or wait on the store outlives its timeout because no peer set the
  key: 2.0 and 2.1 raise "RuntimeError: Socket Timeout" from recvBytes, the
  releases up to 2.4 "DistStoreError: Socket Timeout", 2.5 onwards
  "DistStoreError: wait timeout after <ms>ms, keys: <keys>" from
  TCPStore::doWait.
- NCCL 2.27 and later name the peer on a socket of the wrong type:
  "socketFinalizeAccept from <addr>: wrong type T != T" (2.26 and before:
  "socketFinalizeAccept: wrong type", already read). The excerpt is the
  source's format on nccl-tests#188's line: no post of the new form yet.
- vLLM V1's executor watches its worker processes: "Worker proc <name> died
  unexpectedly, shutting down executor." (MultiprocExecutor, 0.8 onwards;
  later releases add "(exit code: N)") and the Ray V2 executor's
  "RayWorkerProc rank=[N] died unexpectedly, shutting down executor.". The
  engine's own failure follows it.

Already read in every version, checked here or in the earlier passes: the
libuv store's "The server socket has failed to listen on any local network
address. ... name: EADDRINUSE" (2.4+) and the socket one's "(errno: 98 -
Address already in use)"; "The client socket has timed out after <N>s|ms
while trying to connect to (H, P)"; "Timed out after N seconds waiting for
clients. N/M clients joined."; RendezvousConnectionError, RendezvousClosedError
and RendezvousTimeoutError; ProcessGroupNCCL's "Watchdog caught collective
operation timeout: WorkNCCL(...)" under "NCCL watchdog thread terminated with
exception" (2.0, 2.1) and "Process group watchdog thread terminated with
exception" (2.2 on), "Some NCCL operations have failed or timed out", "watchdog
got stuck for N seconds", the heartbeat monitor's dump and terminate lines;
ncclGetErrorString's texts, the same from NCCL 2.18 to 2.28; NET/IB's
completion errors ("with error 12," up to 2.22, "with status=12 " since,
"status=IBV_WC_RETRY_EXC_ERR(12)" in 2.28) and async events ("Got async
event :", "Got async error event:", "Got non-fatal async event:", "async
fatal event on QP|CQ"); NCCL's socket connect and retry WARNs in their 2.26
and 2.28 forms; the driver's "GPU recovery action changed from ... to ..."
(Xid 154); vLLM's "Engine core proc EngineCore_N|EngineCore_DPN died
unexpectedly" and "EngineCore encountered a fatal error"; SGLang's "Rank N
scheduler is dead" with its "Exit code: -9".
"""
import pytest

from conftest import first_incident, initiating_texts


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


@pytest.mark.parametrize("text,rule,line", [
    (RECV_ZERO_BYTES, "rendezvous-connection-error", "failed to recv, got 0 bytes"),
    (STORE_WAIT_TIMEOUT, "rendezvous-connection-error", "wait timeout after 900000ms"),
    (STORE_SOCKET_TIMEOUT, "rendezvous-connection-error", "DistStoreError: Socket Timeout"),
    (STORE_SOCKET_TIMEOUT_2_0, "rendezvous-connection-error", "RuntimeError: Socket Timeout"),
    (NCCL_WRONG_TYPE_FROM, "nccl-socket-error", "socketFinalizeAccept from 10.20.0.14<39271>: wrong type"),
    (VLLM_WORKER_DIED, "vllm-engine-dead", "Worker proc VllmWorker-3 died unexpectedly"),
], ids=["recv-zero-bytes", "store-wait-timeout", "store-socket-timeout", "store-socket-timeout-2-0",
        "nccl-wrong-type-from", "vllm-worker-died"])
def test_version_wording_gives_its_rule(faultline_bin, validate, tmp_path, text, rule, line):
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["rule"] == rule, inc["explanation"]
    assert any(line in t for t in initiating_texts(inc)), initiating_texts(inc)
