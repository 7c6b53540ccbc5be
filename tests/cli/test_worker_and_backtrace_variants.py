"""Two messages read in the wording of every library that prints them
(rulesets/README.md, "Signals"): Paddle's DataLoader prints its worker
deaths itself (paddle/fluid/imperative/data_loader.cc: "ERROR: Unexpected
segmentation fault encountered in DataLoader workers.", "DataLoader process
(pid N) exited is killed by signal: S.", and for SIGBUS "It may be caused
by insufficient shared storage space"), and a PyTorch NCCL watchdog
timeout can reach a log as its c10 backtrace alone, whose raising frame is
WorkNCCL::checkTimeout (ProcessGroupNCCL.cpp, torch 2.1 and later)."""
from conftest import diagnose_text, first_incident, initiating_texts


PADDLE_SEGV = "ERROR: Unexpected segmentation fault encountered in DataLoader workers.\n"
PADDLE_KILLED = ("SystemError: (Fatal) DataLoader process (pid 4411) exited is killed by "
                 "signal: Segmentation fault.\n")
PADDLE_BUS = """\
SystemError: (Fatal) DataLoader process (pid 4411) exited is killed by signal: Bus error.
  It may be caused by insufficient shared storage space. This problem usually occurs when using docker as a development environment.
  Please use command `df -h` to check the storage space of `/dev/shm`.
"""


def test_paddle_worker_segfault_is_a_dataloader_failure(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, PADDLE_SEGV)
    assert inc["rule"] == "dataloader-worker-killed", inc["explanation"]
    assert initiating_texts(inc)[0] == PADDLE_SEGV.strip()


def test_paddle_worker_killed_by_signal_is_a_dataloader_failure(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, PADDLE_KILLED)
    assert inc["rule"] == "dataloader-worker-killed", inc["explanation"]


def test_paddle_worker_bus_error_is_shared_memory(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, PADDLE_BUS)
    assert inc["rule"] == "shm-exhaustion", inc["explanation"]


# The watchdog's backtrace without its message line: the exception was
# built in checkTimeout, so the collective timed out.
TIMEOUT_FRAMES = """\
frame #0: c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >) + 0x98 (0x7fbd9cf785e8 in /usr/local/lib/python3.11/dist-packages/torch/lib/libc10.so)
frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x23d (0x7fbd47dcba6d in /usr/local/lib/python3.11/dist-packages/torch/lib/libtorch_cuda.so)
frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0xc80 (0x7fbd47dcd7f0 in /usr/local/lib/python3.11/dist-packages/torch/lib/libtorch_cuda.so)
frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x14d (0x7fbd47dceefd in /usr/local/lib/python3.11/dist-packages/torch/lib/libtorch_cuda.so)
"""
# The same watchdog rethrowing an NCCL error: no checkTimeout frame.
ERROR_FRAMES = """\
Exception raised from ncclCommWatchdog at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1521 (most recent call first):
frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x1554e8b12f86 in /opt/torch/lib/libc10.so)
frame #1: <unknown function> + 0xe5aa84 (0x1554e9aa1a84 in /opt/torch/lib/libtorch_cuda.so)
"""


def test_watchdog_backtrace_alone_is_a_collective_timeout(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, TIMEOUT_FRAMES)
    assert inc["rule"] == "nccl-watchdog-timeout", inc["explanation"]
    assert any("WorkNCCL::checkTimeout(" in t for t in initiating_texts(inc))


def test_watchdog_rethrow_without_check_timeout_is_no_timeout(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, ERROR_FRAMES)
    assert all(i["rule"] != "nccl-watchdog-timeout" for i in found)
