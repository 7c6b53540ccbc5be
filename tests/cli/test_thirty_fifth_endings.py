"""Endings the thirty-fifth endings audit (tests/cli/endings, e35-*.log, a
random sample of endings from large-scale training stacks: DeepSpeed,
Megatron-LM, NeMo, torchtitan, Accelerate, Lightning, FSDP, ColossalAI,
OpenRLHF, verl, TRL, LLaMA-Factory, ms-swift) gave no incident, read where
the program that printed them writes them (issue #18):

- CPython's traceback.py (StackSummary.format_frame_summary) shows, since
  3.13, an instruction that spans several source lines over several lines:
  its first and last line and the lines around its anchors (a call's
  brackets, a binary operator), each with its caret line under it where
  carets are shown, and '...<N lines>...' for the lines it leaves out. A
  frame's body then runs past the three lines a traceback reader allowed
  between two frames (a code line, its carets, a note), and the reader
  gave up on the traceback: torchtitan's torchrun traceback on Python 3.13
  (`elastic_launch(` ... `)(*cmd_args)`) got no incident. Caret lines,
  the elision line and a code line right under a caret line are the
  frame's code display and no longer count as lines after it.
- Ray logs an error no caller got (ray/_private/worker.py
  _unhandled_error_handler) as 'Unhandled error (suppress with
  'RAY_IGNORE_UNHANDLED_ERRORS=1'): ' and the error's text (the name
  unquoted in 2021's releases); a RayTaskError's text is its task's
  header, frames and exception. Only a task header at the start of a line
  headed frames, so verl's rollout worker's error record cut in its frames
  got no incident. The header after that lead now heads them; an unhandled
  error the run goes on after is survived, as any traceback is.
"""
from conftest import ending_tests

FALLBACK = "unrecognised-fatal-error"

# torchrun's own traceback on Python 3.13, its launcher call over four
# lines with carets under each (the shape torch/distributed/run.py prints).
TORCHRUN_313_FRAMES = """\
Traceback (most recent call last):
  File "/opt/venv/bin/torchrun", line 8, in <module>
    sys.exit(main())
             ~~~~^^
  File "/opt/venv/lib/python3.13/site-packages/torch/distributed/run.py", line 892, in run
    elastic_launch(
    ~~~~~~~~~~~~~~~
        config=config,
        ~~~~~~~~~~~~~~
        entrypoint=cmd,
        ~~~~~~~~~~~~~~~
    )(*cmd_args)
    ~^^^^^^^^^^^
"""

FAILURES = {
    # The traceback ends on its exception line: that line leads.
    "py313-multiline-call-exception-line": (TORCHRUN_313_FRAMES + """\
  File "/opt/venv/lib/python3.13/site-packages/torch/distributed/launcher/api.py", line 143, in __call__
    return launch_agent(self._config, self._entrypoint, list(args))
  File "/opt/venv/lib/python3.13/site-packages/torch/distributed/launcher/api.py", line 250, in launch_agent
    result = agent.run()
AttributeError: 'NoneType' object has no attribute 'run'
""", "AttributeError: 'NoneType' object has no attribute 'run'"),
    # A rank's traceback with a multi-line call whose middle lines CPython
    # left out ('...<2 lines>...'), under torchrun's rank prefix, cut in its
    # frames.
    "py313-elided-lines-rank-prefix": ("""\
[rank1]: Traceback (most recent call last):
[rank1]:   File "/opt/torchtitan/torchtitan/train.py", line 370, in train_step
[rank1]:     pred = self.model_parts[0](
[rank1]:            ~~~~~~~~~~~~~~~~~~~^
[rank1]:         inputs,
[rank1]:         ^^^^^^^
[rank1]:     ...<2 lines>...
[rank1]:         freqs_cis=freqs,
[rank1]:         ^^^^^^^^^^^^^^^^
[rank1]:     )
[rank1]:     ^
[rank1]:   File "/opt/venv/lib/python3.13/site-packages/torch/nn/modules/module.py", line 1773, in _wrapped_call_impl
[rank1]:     return self._call_impl(*args, **kwargs)
[rank1]:            ~~~~~~~~~~~~~~~^^^^^^^^^^^^^^^^^
""", "[rank1]: Traceback (most recent call last)"),
    # The same traceback cut in its frames (the excerpt stops there): its
    # header leads, as for any traceback cut in its frames.
    "py313-multiline-call-cut-in-frames": (TORCHRUN_313_FRAMES + """\
  File "/opt/venv/lib/python3.13/site-packages/torch/distributed/launcher/api.py", line 143, in __call__
    return launch_agent(self._config, self._entrypoint, list(args))
""", "Traceback (most recent call last)"),
    # verl's driver logging a rollout worker's error no caller got, its
    # frames cut (the excerpt stops inside them): the record leads.
    "ray-unhandled-error-task-frames-cut": ("""\
(TaskRunner pid=30064) Unhandled error (suppress with 'RAY_IGNORE_UNHANDLED_ERRORS=1'): ray::WorkerDict.actor_rollout_generate_sequences() (pid=34550, ip=172.17.0.2, actor_id=610fa1209bba22c30b047d9c01000000)
(TaskRunner pid=30064)   File "/opt/verl/verl/single_controller/ray/base.py", line 399, in func
(TaskRunner pid=30064)     return getattr(self.worker_dict[key], name)(*args, **kwargs)
(TaskRunner pid=30064)   File "/opt/verl/verl/workers/fsdp_workers.py", line 463, in generate_sequences
(TaskRunner pid=30064)     with self.rollout_sharding_manager:
""", "Unhandled error (suppress with"),
    # A 2021 Ray release (the name unquoted) through its logger, frames cut.
    "ray-unhandled-error-unquoted-logger-record": ("""\
2021-06-11 01:14:28,123 ERROR worker.py:77 -- Unhandled error (suppress with RAY_IGNORE_UNHANDLED_ERRORS=1): ray::PS.send_params() (pid=41878, ip=172.18.167.27)
  File "python/ray/_raylet.pyx", line 503, in ray._raylet.execute_task
  File "python/ray/_raylet.pyx", line 447, in ray._raylet.execute_task.function_executor
""", "Unhandled error (suppress with RAY_IGNORE_UNHANDLED_ERRORS=1)"),
}

HEALTHY = {
    # A run that went on: a rank's progress lines with a caret-like rule.
    "progress-with-rules": """\
step:  10  loss:  7.9113  memory: 41.22GiB(52.11%)  tps: 3,412  mfu: 38.20%
    ~~~~~~~~~~~~~~~~~~~~
step:  20  loss:  6.8127  memory: 41.22GiB(52.11%)  tps: 3,409  mfu: 38.17%
[rank0]: Training completed
""",
    # A worker's error nobody got, and the PPO steps go on after it.
    "ray-unhandled-error-run-goes-on": """\
(TaskRunner pid=30064) Unhandled error (suppress with 'RAY_IGNORE_UNHANDLED_ERRORS=1'): ray::WorkerDict.compute_log_prob() (pid=34550, ip=172.17.0.2, actor_id=610fa1209bba22c30b047d9c01000000)
(TaskRunner pid=30064)   File "/opt/verl/verl/single_controller/ray/base.py", line 399, in func
(TaskRunner pid=30064)     return getattr(self.worker_dict[key], name)(*args, **kwargs)
(TaskRunner pid=30064) ValueError: batch size 7 is not divisible by 2
(TaskRunner pid=30064) step:41 - actor/pg_loss:0.012 - critic/score/mean:0.41 - timing_s/step:52.1
(TaskRunner pid=30064) step:42 - actor/pg_loss:0.010 - critic/score/mean:0.43 - timing_s/step:51.8
(TaskRunner pid=30064) step:43 - actor/pg_loss:0.011 - critic/score/mean:0.44 - timing_s/step:52.3
""",
}


test_failed_ending_leads, test_healthy_ending_has_no_incident = ending_tests(FAILURES, HEALTHY, FALLBACK)
