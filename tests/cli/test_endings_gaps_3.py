"""Endings gaps closed by a mechanism, not a wording: the third pass over
the failed endings that gave no incident (issue #18; tests/cli/endings,
"Gaps by cause, third pass").

Stacks whose header the excerpt lacks, read from what the printer writes
only when the process is dying, or from where they sit in the log:

- A Python traceback's frames (CPython's traceback module:
  '  File "<file>", line <n>, in <name>', its code line, since 3.11 a caret
  line) that a log both begins and ends in, with nothing else between them:
  the excerpt starts and stops inside one traceback, whose header and
  exception are not in it (signal python_frames_headless, fields `ending`,
  `headless`, `cut`). Not read: the same frames under a logger's
  'Stack (most recent call last):' (stack_info=True) or below the program's
  own lines, frames a log goes on after, faulthandler's frames ('line <n>
  in <name>', no comma), frames with another line in their midst.
- A Go frame with its frame, stack and program counters (runtime/
  traceback.go prints ' fp=0x.. sp=0x.. pc=0x..' only on a throwing
  goroutine or at GOTRACEBACK level 2, which only a crash dump runs at:
  runtime.Stack and pprof force level 1) and the Go runtime's register dump
  (dumpregs, printed by the fatal-signal handler before exit(2)): the
  process was dying though the crash's header is not in the excerpt
  (signals go_dying_frame, go_register_dump, field `cut`). Not read: a live
  server's goroutine dump (runtime.Stack, pprof's debug=2) and gdb's
  'info registers'.
"""
import pytest

from conftest import diagnose_text, initiating_texts, leading_incident

FRAME_BLOCK = """\
{p}  File "/opt/venv/lib/python3.10/site-packages/vllm/executor/executor_base.py", line 53, in __init__
{p}    self._init_executor()
{p}  File "/opt/venv/lib/python3.10/site-packages/vllm/executor/ray_distributed_executor.py", line 396, in _init_workers_ray
{p}    self._run_workers("init_device")
{p}  File "/opt/venv/lib/python3.10/site-packages/ray/_private/worker.py", line 2858, in get
{p}    values, debugger_breakpoint = worker.get_objects(object_refs, timeout=timeout)
"""

# Python 3.11+: a caret line under a frame's code line.
CARET_BLOCK = """\
{p}           ^^^^^^^^^^^^^^
{p}  File "/opt/python3.12/lib/python3.12/asyncio/runners.py", line 118, in run
{p}    return self._loop.run_until_complete(task)
{p}           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
{p}  File "uvloop/loop.pyx", line 1518, in uvloop.loop.Loop.run_until_complete
{p}  File "/opt/venv/lib/python3.12/site-packages/uvloop/__init__.py", line 48, in wrapper
{p}    return await main
{p}           ^^^^^^^^^^
"""

HEADLESS = {
    "plain": FRAME_BLOCK.format(p=""),
    "journald-carets": CARET_BLOCK.format(p="Aug 17 18:42:18 vllm vllm[8052]: (APIServer pid=8052) "),
    "pdsh-host-prefix": FRAME_BLOCK.format(p="gpu-node-2: "),
}


@pytest.mark.parametrize("name", sorted(HEADLESS))
def test_log_of_frames_only_is_a_cut_traceback(faultline_bin, validate, tmp_path, name):
    inc = leading_incident(faultline_bin, validate, tmp_path, HEADLESS[name], line='File "')
    assert not inc.get("reference", "").startswith("Benign"), inc["reference"]
    assert not (inc.get("initiating") or {}).get("survived", False)


PY_HEALTHY = {
    # logging's stack_info=True: the record, "Stack (most recent call
    # last):", then traceback.print_stack's frames; the process goes on.
    "logger-stack-info": ("2024-05-02 10:11:12,345 - trainer - WARNING - slow data loader\n"
                          "Stack (most recent call last):\n" + FRAME_BLOCK.format(p="")),
    # The same with the log cut right below the record: the stack's header
    # is its first line.
    "stack-header-first": "Stack (most recent call last):\n" + FRAME_BLOCK.format(p=""),
    # The program's own lines above the frames (traceback.print_stack).
    "print-stack-below-progress": ("step 120 loss 2.31\nstep 130 loss 2.29\n" + FRAME_BLOCK.format(p="")),
    # A log that goes on after the frames it begins in.
    "goes-on-after": FRAME_BLOCK.format(p="") + "".join(f"step {s} loss 2.{s % 7}\n" for s in range(10, 16)),
    # Another line in the midst of the frames: two stacks, not one cut traceback.
    "other-line-between": (FRAME_BLOCK.format(p="") + "epoch 3 done\nstep 140 loss 2.20\nstep 150 loss 2.19\n"
                           + FRAME_BLOCK.format(p="")),
}


@pytest.mark.parametrize("name", sorted(PY_HEALTHY))
def test_frames_that_are_no_cut_traceback_stay_silent(faultline_bin, validate, tmp_path, name):
    found = diagnose_text(faultline_bin, validate, tmp_path, PY_HEALTHY[name])
    assert not found, [(i["reference"], initiating_texts(i)) for i in found]


def test_faulthandler_dump_is_not_read_as_a_cut_traceback(faultline_bin, validate, tmp_path):
    """faulthandler's frames ('line N in f', no comma), as a dump taken on
    request of a live server prints them: no fatal line of the fallback
    (the hang rule reads such a dump as a stack dump on its own, a known
    gap of the endings, hg-neg-faulthandler-sigusr1-live-server)."""
    text = ('Stack (most recent call first):\n'
            '  File "/opt/app/server.py", line 88 in serve_forever\n'
            '  File "/opt/app/server.py", line 12 in main\n'
            '  File "/opt/app/server.py", line 140 in <module>\n')
    found = diagnose_text(faultline_bin, validate, tmp_path, text)
    assert not any(i["rule"] == "unrecognised-fatal-error" for i in found), [i["rule"] for i in found]


GO_FRAMES = """\
{p}net.(*netFD).Read(0xc000619900, {{0xc00035f000?, 0xc00029fad0?, 0x64c8249923c5?}})
{p}        net/fd_posix.go:55 +0x25 fp=0xc00029faa8 sp=0xc00029fa60 pc=0x64c824a077a5
{p}net/http.(*connReader).Read(0xc00064aff0, {{0xc00035f000, 0x1000, 0x1000}})
{p}        net/http/server.go:798 +0x159 fp=0xc00029fb40 sp=0xc00029faf0 pc=0x64c824c015d9
{p}bufio.(*Reader).fill(0xc000210600)
{p}        bufio/bufio.go:113 +0x103 fp=0xc00029fb78 sp=0xc00029fb40 pc=0x64c824a2d303
"""

AMD64_REGS = "".join(f"{{p}}{r:<7}0x{v:x}\n" for r, v in [
    ("rax", 0), ("rbx", 0x1b834e), ("rcx", 0x77f67e49eb1c), ("rdx", 6), ("rdi", 0x1b833f), ("rsi", 0x1b834e),
    ("rbp", 0x77f6365de330), ("rsp", 0x77f6365de2f0), ("r8", 0), ("r9", 0), ("r10", 8), ("r11", 0x246),
    ("r12", 6), ("r13", 0x60), ("r14", 0x16), ("r15", 0x77f61c000c60), ("rip", 0x77f67e49eb1c),
    ("rflags", 0x246), ("cs", 0x33), ("fs", 0), ("gs", 0)])

ARM64_REGS = "".join(f"{r:<8}0x{v:x}\n" for r, v in [
    ("r27", 0x1e2c0), ("r28", 0x4000002380), ("r29", 0xffffd2f3e4a8), ("lr", 0x7d8fc), ("sp", 0xffffd2f3e4a0),
    ("pc", 0x7d900), ("fault", 0)])

GO_DYING = {
    "frames-journald": GO_FRAMES.format(p="mar 15 11:39:07 acquario3 ollama[87551]: "),
    "frames-no-pc": ("main.main()\n\t/app/main.go:12 +0x1d fp=0xc000047f80 sp=0xc000047f60\n"
                     "runtime.main()\n\t/usr/local/go/src/runtime/proc.go:255 +0x1d fp=0xc000047fe0 sp=0xc000047f80\n"),
    "amd64-register-dump": AMD64_REGS.format(p="Dec 31 01:55:57 FORGE ollama[555324]: "),
    "arm64-register-dump": ARM64_REGS,
}


@pytest.mark.parametrize("name", sorted(GO_DYING))
def test_go_crash_dump_without_its_header_is_a_failure(faultline_bin, validate, tmp_path, name):
    inc = leading_incident(faultline_bin, validate, tmp_path, GO_DYING[name])
    assert not inc.get("reference", "").startswith("Benign"), inc["reference"]
    assert not (inc.get("initiating") or {}).get("survived", False)


GO_HEALTHY = {
    # runtime.Stack(buf, true) in a SIGQUIT handler (signal.Notify) or
    # pprof's goroutine?debug=2 on a live server: level 1, no fp=/sp=.
    "live-goroutine-dump": ("goroutine 1 [running]:\nmain.main()\n\t/app/main.go:12 +0x1d\n\n"
                            "goroutine 18 [IO wait]:\ninternal/poll.runtime_pollWait(0x7f3c1c2e0f08, 0x72)\n"
                            "\t/usr/local/go/src/runtime/netpoll.go:343 +0x85\n"
                            "net/http.(*Server).Serve(0xc0001b4000, {0x9d2b40, 0xc0000a4020})\n"
                            "\t/usr/local/go/src/net/http/server.go:3071 +0x4db\n"),
    # gdb's info registers (padded names, a decoded column).
    "gdb-info-registers": ("rax            0x0                 0\nrip            0x7ffff7a42e97      0x7ffff7a42e97\n"
                           "eflags         0x246               [ IF PF ZF ]\ncs             0x33                51\n"),
}


@pytest.mark.parametrize("name", sorted(GO_HEALTHY))
def test_live_go_stacks_and_debugger_registers_stay_silent(faultline_bin, validate, tmp_path, name):
    found = diagnose_text(faultline_bin, validate, tmp_path, GO_HEALTHY[name])
    assert not found, [(i["reference"], initiating_texts(i)) for i in found]
