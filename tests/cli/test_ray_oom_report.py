"""Ray's memory monitor report of a killed worker ('Memory on the node (IP:
...) where the task ... was running was X / Y (f), which exceeds the memory
usage threshold of t. Ray killed this worker (ID: ...)') is also printed
without its 'ray.exceptions.OutOfMemoryError: Task was killed due to the node
running low on memory.' header (a worker's exit detail, a vLLM engine's log):
the body alone names the OOM kill."""
from conftest import first_incident


def test_ray_kill_report_without_header_is_host_oom(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, "\n".join([
        "INFO 01-30 10:02:11 async_llm_engine.py:379 Received request cmpl-5c1f.",
        "Memory on the node (IP: 10.0.62.231, ID: e5d953ef03e55e26f13973ea1b5a0fd0ecc729cd820bc89e4aa50451) where "
        "the task (actor ID: 0dab4ab45f6c947201afac6d01000000, name=RayWorkerVllm.__init__, pid=308, memory "
        "used=11.15GB) was running was 27.71GB / 28.80GB (0.962273), which exceeds the memory usage threshold of "
        "0.95. Ray killed this worker (ID: 6f2ec5c8b0d5f5a66572859faf192d36743536c2e9702ea58084b037) because it "
        "was the most recently scheduled task; to see more information about memory usage on this node, use "
        "`ray logs raylet.out -ip 10.0.62.231`. Top 10 memory users:",
        "PID\tMEM(GB)\tCOMMAND",
        "308\t11.15\tray::RayWorkerVllm",
    ]) + "\n")
    assert inc["rule"] == "host-oom-kill", inc["explanation"]
    assert "Ray killed this worker" in inc["initiating"]["evidence"][0]["text"]
