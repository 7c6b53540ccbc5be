"""torchelastic's agent logs "The node '...' has failed to send a keep-alive
heartbeat to the rendezvous '...' due to an error of type ..."
(dynamic_rendezvous.py) when it can no longer reach the rendezvous store: a
lost rendezvous, which the launcher's ChildFailedError summary only points at."""

import pytest

from conftest import diagnose_path


@pytest.mark.parametrize("heartbeat", [
    ["W0813 22:23:32.979031 140204091807488 torch/distributed/elastic/rendezvous/"
     "dynamic_rendezvous.py:1267] The node 'gpu7_2210_0' has failed to send a keep-alive "
     "heartbeat to the rendezvous 'job-42' due to an error of type RendezvousTimeoutError."],
    # Hard-wrapped as posted in a thread.
    ["WARNING:torch.distributed.elastic.rendezvous.dynamic_rendezvous:The node 'gpu7_2210_0' "
     "has failed to send a keep-alive heartbeat to the rendezvous 'job-42' due to an",
     "error of type RendezvousConnectionError."],
])
def test_keep_alive_failure_beats_child_failed_summary(faultline_bin, validate, tmp_path,
                                                       heartbeat):
    log = tmp_path / "agent.log"
    log.write_text("\n".join([
        "gpu7:2231:2260 [1] NCCL INFO comm 0x7f2c4c000fa0 rank 1 nranks 4 cudaDev 1 busId 3b000 "
        "- Init COMPLETE",
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 "
        "(pid: 2231) of binary: /usr/bin/python3",
    ] + heartbeat) + "\n")
    incs = diagnose_path(faultline_bin, validate, log)
    assert incs, "no incident"
    inc = incs[0]
    assert inc["rule"] == "rendezvous-connection-error", inc["explanation"]
