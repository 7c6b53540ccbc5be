"""vLLM v0's multiprocessing executor prefixes a worker's Python output
with "(VllmWorkerProcess pid=N)" and names no rank nor host; NCCL's own
lines (written below Python, without that prefix) name host and pid
("gpu-node1:241:241 [2] NCCL INFO comm ... rank 2"). A worker's line is on
the host its file's NCCL lines name its pid on, so its error names its
rank."""

from conftest import diagnose_path

LOG = """\
INFO 02-14 08:23:10 config.py:1005] Defaulting to use mp for distributed inference
(VllmWorkerProcess pid=240) INFO 02-14 08:23:15 multiproc_worker_utils.py:215] Worker ready; awaiting tasks
(VllmWorkerProcess pid=241) INFO 02-14 08:23:15 multiproc_worker_utils.py:215] Worker ready; awaiting tasks
gpu-node1:239:239 [0] NCCL INFO comm 0x55d4c8a0 rank 0 nranks 3 cudaDev 0 nvmlDev 0 busId 18000 commId 0x5d80767af00d - Init COMPLETE
gpu-node1:240:240 [1] NCCL INFO comm 0x55d4c8a0 rank 1 nranks 3 cudaDev 1 nvmlDev 1 busId 2a000 commId 0x5d80767af00d - Init COMPLETE
gpu-node1:241:241 [2] NCCL INFO comm 0x55d4c8a0 rank 2 nranks 3 cudaDev 2 nvmlDev 2 busId 3a000 commId 0x5d80767af00d - Init COMPLETE
(VllmWorkerProcess pid=241) ERROR 02-14 08:25:01 multiproc_worker_utils.py:233] Exception in worker VllmWorkerProcess while processing method determine_num_available_blocks.
(VllmWorkerProcess pid=241) ERROR 02-14 08:25:01 multiproc_worker_utils.py:233] Traceback (most recent call last):
(VllmWorkerProcess pid=241) ERROR 02-14 08:25:01 multiproc_worker_utils.py:233]   File "/usr/local/lib/python3.10/dist-packages/vllm/executor/multiproc_worker_utils.py", line 226, in _run_worker_process
(VllmWorkerProcess pid=241) ERROR 02-14 08:25:01 multiproc_worker_utils.py:233] RuntimeError: CUDA error: an illegal memory access was encountered
"""


def test_worker_error_names_the_rank_of_its_pid(faultline_bin, validate, tmp_path):
    (tmp_path / "vllm.log").write_text(LOG)
    inc = diagnose_path(faultline_bin, validate, tmp_path)
    assert inc and inc[0]["rule"] == "cuda-illegal-address", [i["rule"] for i in inc]
    assert inc[0]["initiating"]["rank"] == 2
    assert inc[0]["initiating"]["host"] == "gpu-node1"
