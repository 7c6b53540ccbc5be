"""Library wordings read where the library prints them (issue #18, the
fourteenth batch's work misses):

- torchrun's TailLog prefixes each worker line with "[{role}{local_rank}]:";
  the multi-node recipe `torchrun --role $(hostname -s): --tee 3` makes the
  role the host and a colon, so "[gpu187:1]:" is host gpu187, local rank 1.
- c10d's tcputil::connect (torch/lib/c10d/Utils.cpp, PyTorch <= 1.8) throws
  std::invalid_argument("host not found: " + gai_strerror(err)) when
  getaddrinfo cannot resolve MASTER_ADDR, which Python shows as
  "ValueError: host not found: Name or service not known": the rendezvous
  store's host cannot be reached (Network Partition).
- torchelastic's SimpleElasticAgent.run logs "Received 1 death signal,
  shutting down workers" when its SIGHUP handler raised SignalException,
  forwards the hang-up to the workers and re-raises: the launcher dies, a
  fatal line. SIGTERM stays sigterm-received's and a Ctrl-C (SIGINT) is no
  failure by itself.
- DeepSpeed's runner raises "Using hostfile at <file> but host=<host> was
  not reachable via ssh" when its passwordless-ssh check fails: a fatal line
  about that host.
"""
from conftest import diagnose_text, first_incident, initiating_texts


TORCHRUN_HOST_ROLE = """\
[gpu187:1]:    attn.view(B, q_h, q_w, k_h, k_w) + rel_h[:, :, :, :, None]
[gpu187:1]:torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB (GPU 1; 79.35 GiB total capacity; 33.66 GiB already allocated; 735.69 MiB free; 34.89 GiB reserved in total by PyTorch)
[gpu187:0]:Traceback (most recent call last):
[gpu187:0]:  File "train.py", line 263, in main
"""

C10D_HOST_NOT_FOUND = """\
2019-01-11 05:43:30,310 INFO     init_distribution
Traceback (most recent call last):
  File "optimizer.py", line 413, in init_distribution
    torch.distributed.init_process_group(backend=backend)
  File "/usr/local/lib/python3.7/site-packages/torch/distributed/distributed_c10d.py", line 354, in init_process_group
    store, rank, world_size = next(rendezvous(url))
  File "/usr/local/lib/python3.7/site-packages/torch/distributed/rendezvous.py", line 143, in _env_rendezvous_handler
    store = TCPStore(master_addr, master_port, start_daemon)
ValueError: host not found: Name or service not known
"""

AGENT_HANGUP = """\
{'loss': 1.0512, 'learning_rate': 4.9e-05, 'epoch': 0.31}
WARNING:torch.distributed.elastic.agent.server.api:Received 1 death signal, shutting down workers
WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 30482 closing signal SIGHUP
WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 30483 closing signal SIGHUP
"""
AGENT_SIGTERM = """\
W0616 00:37:22.830000 4015698 torch/distributed/elastic/agent/server/api.py:719] Received Signals.SIGTERM death signal, shutting down workers
W0616 00:37:22.831000 4015698 torch/distributed/elastic/multiprocessing/api.py:900] Sending process 4015788 closing signal SIGTERM
"""

AGENT_SIGINT = """\
{'loss': 1.0512, 'learning_rate': 4.9e-05, 'epoch': 0.31}
W1016 06:21:18.872000 140016382740288 torch/distributed/elastic/agent/server/api.py:688] Received Signals.SIGINT death signal, shutting down workers
torch.distributed.elastic.multiprocessing.api.SignalException: Process 5836 got signal: 2
"""

DEEPSPEED_SSH = """\
[2023-09-02 10:01:12,001] [INFO] [runner.py:380:main] Using IP address of 10.6.0.11 for node gpu-v100-0010
Traceback (most recent call last):
  File "/opt/venv/lib/python3.8/site-packages/deepspeed/launcher/runner.py", line 407, in main
    raise RuntimeError(
RuntimeError: Using hostfile at /job/hostfile but host=gpu-v100-0011 was not reachable via ssh. If you are running with a single node please remove /job/hostfile or setup passwordless ssh.
"""


def test_torchrun_host_role_prefix_gives_host_and_local_rank(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, TORCHRUN_HOST_ROLE)
    assert inc["rule"] == "cuda-oom", inc["explanation"]
    assert inc["initiating"]["host"] == "gpu187", inc["initiating"]
    assert "OutOfMemoryError" in initiating_texts(inc)[0]


def test_c10d_host_not_found_is_a_rendezvous_failure(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, C10D_HOST_NOT_FOUND)
    assert inc["rule"] == "rendezvous-connection-error", inc["explanation"]
    assert "host not found: Name or service not known" in initiating_texts(inc)[0]


def test_agent_hangup_is_a_fatal_line(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, AGENT_HANGUP)
    assert inc["rule"] == "unrecognised-fatal-error", inc["explanation"]
    assert "Received 1 death signal" in initiating_texts(inc)[0]


def test_agent_sigterm_and_sigint_are_not_the_fallback(faultline_bin, validate, tmp_path):
    for text in (AGENT_SIGTERM, AGENT_SIGINT):
        found = diagnose_text(faultline_bin, validate, tmp_path, text)
        assert not [i for i in found if i["rule"] == "unrecognised-fatal-error"], \
            [(i["rule"], i["explanation"]) for i in found]


def test_deepspeed_unreachable_host_is_named(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, DEEPSPEED_SSH)
    assert inc["rule"] == "unrecognised-fatal-error", inc["explanation"]
    assert "was not reachable via ssh" in initiating_texts(inc)[0]
    assert inc["initiating"]["host"] == "gpu-v100-0011", inc["initiating"]
