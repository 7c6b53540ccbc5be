"""Endings the twenty-eighth endings audit (tests/cli/endings, e28-*.log, a
random sample of threads from frameworks and tools the earlier audits
rarely hit) read wrong, read where the program that printed them writes
them (issue #18):

- loguru's traceback in diagnose mode (loguru/_better_exceptions.py, every
  release since 0.2: the default of logger.add) puts a blank line before a
  frame's location, the first one included (_format_locations), shows under
  each frame's code line the values of its names, each under a cap ('└ ')
  after the pipes ('│') of the values left of it, a repr of several lines
  going on under those pipes (_format_relevant_values), and marks the frame
  the exception was caught in with '>' for the first space of its location
  ('> File ...', backtrace=True). A text that ends in such frames (cut in
  them, the process died printing it) gave no incident: the blank line
  ended the traceback before its first frame, the value lines ran past the
  gap allowed between two frames. Only a blank line with a frame right
  after it is loguru's; CPython prints none inside a traceback.
  Its evidence is the ERROR record logger.exception printed right above
  the header (tests/cli/test_endings_gaps_2.py).
- VS Code's notebooks (vscode-jupyter's NotebookTracebackFormatter) turn
  each line number of IPython's ultratb traceback into a link to the cell
  or file ('----> [1](vscode-notebook-cell:...) trainer.train()',
  '    [320](file:...) code'); an output copied from there keeps them as
  such, and a traceback cut in its frames was not read as one.
- The failure signal handler linked into libtpu (its source is not
  published) writes glog's 'received by PID' report with the fault address
  as the C library prints a null pointer, '(@(nil))', and a link after it
  ('*** SIGSEGV (@(nil)), see gl__________41#s15 received by PID ...'):
  the report of a TPU host's crash gave no incident.
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # open-edge-platform/geti#5392's shape: a loguru record, then its
    # traceback under a compose prefix, cut in a frame's values.
    "loguru-traceback-cut-in-values": ("""\
worker-1  | 2025-03-02 11:04:09.512 | ERROR    | jobs.runner:run:88 - Job crashed
worker-1  | Traceback (most recent call last):
worker-1  | 
worker-1  |   File "/srv/app/jobs/runner.py", line 84, in run
worker-1  |     result = step(config, batch)
worker-1  |              │    │       └ {'x': tensor([[0.1, 0.2]])}
worker-1  |              │    └ TrainConfig(
worker-1  |              │        lr=0.001,
worker-1  |              │        epochs=3,
worker-1  |              │        device='cuda:0',
worker-1  |              │      )
""", "Job crashed"),
    # loguru's catch point ('> File') and a blank line between two frames.
    "loguru-catch-point-then-frame-cut": ("""\
2025-03-02 11:04:09.512 | ERROR    | __main__:main:30 - An error has been caught in function 'main', process 'MainProcess' (4121), thread 'MainThread' (1401):
Traceback (most recent call last):

> File "/srv/app/train.py", line 30, in main
    fit(model, loader)
    │   │      └ <torch.utils.data.dataloader.DataLoader object at 0x7f3a1c2b5d90>
    │   └ Net(
    │       (fc): Linear(in_features=8, out_features=2, bias=True)
    │     )
    └ <function fit at 0x7f3a1c2b5e50>

  File "/srv/app/train.py", line 17, in fit
    loss = model(x).sum()
""", "An error has been caught in function 'main'"),
    # An ultratb traceback copied from a VS Code notebook, cut in a frame.
    "ipython-vscode-linked-numbers-cut": ("""\
---------------------------------------------------------------------------
RuntimeError                              Traceback (most recent call last)
Cell In[12], [line 3](vscode-notebook-cell:?execution_count=12&line=3)
      [1](vscode-notebook-cell:?execution_count=12&line=1) model.cuda()
----> [3](vscode-notebook-cell:?execution_count=12&line=3) trainer.fit(model)

File [/opt/venv/lib/python3.11/site-packages/lightning/pytorch/trainer/trainer.py:543](file:///opt/venv/lib/python3.11/site-packages/lightning/pytorch/trainer/trainer.py:543), in Trainer.fit(self, model)
    [541](file:///opt/venv/lib/python3.11/site-packages/lightning/pytorch/trainer/trainer.py:541) self.state.status = TrainerStatus.RUNNING
""", "RuntimeError"),
    # jax-ml/jax#13043's shape: libtpu's handler, the address non-null.
    "libtpu-signal-report-with-link": ("""\
$ python3 -c 'import jax; print(jax.local_devices())'
*** SIGSEGV (@0x10), see gl__________43#s15 received by PID 88120 (TID 88120) on cpu 3; stack trace: ***
PC: @     0x7f6e3c6420e9  (unknown)  (unknown)
    @     0x7f6e3ffc2e74       1120  (unknown)
""", "SIGSEGV (@0x10)"),
}

# Complete tracebacks in the same forms: the exception line leads, not the
# header and not a value line.
COMPLETE = {
    "loguru-traceback-with-exception-line": ("""\
Traceback (most recent call last):

  File "/srv/app/train.py", line 17, in fit
    loss = model(x).sum()
           │     └ tensor([[0.5, 0.1]], device='cuda:0')
           └ Net()

RuntimeError: CUDA error: device-side assert triggered
""", "RuntimeError: CUDA error: device-side assert triggered"),
}

HEALTHY = {
    # A blank line and a frame-shaped line in a run's output that follows no
    # traceback header: nothing to read.
    "blank-then-file-line-without-header": """\
epoch 3 step 120 loss=0.412

  File "/srv/app/train.py", line 17, in fit  (profiler hotspot: 31% of step time)
epoch 3 step 130 loss=0.405
""",
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_ending_leads(faultline_bin, validate, tmp_path, name):
    text, initiating = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=initiating)


@pytest.mark.parametrize("name", sorted(COMPLETE))
def test_complete_traceback_leads_with_exception_line(faultline_bin, validate, tmp_path, name):
    text, initiating = COMPLETE[name]
    leading_incident(faultline_bin, validate, tmp_path, text, line=initiating)


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_healthy_ending_has_no_incident(faultline_bin, validate, tmp_path, name):
    assert not diagnose_text(faultline_bin, validate, tmp_path, HEALTHY[name])
