"""Endings the seventeenth endings audit (tests/cli/endings, e17-*.log) read
as nothing or by a rule that did not say what happened, read where the
program that printed them writes them (issue #18):

- Triton's OutOfResources (triton/runtime/errors.py, earlier
  triton/runtime/autotuner.py and triton/compiler.py): its message is
  "out of resource: <name>, Required: <n>, Hardware limit: <n>" and its class
  name has no Error or Exception suffix, so the exception line Python prints
  for it, often all a user pastes, was no fatal line at all. Inductor's
  autotuning logs the message alone (no class name) as a warning and goes
  on: that stays quiet.
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    "triton-out-of-resources-one-line": ("""\
triton.runtime.autotuner.OutOfResources: out of resource: shared memory, Required: 229376, Hardware limit: 101376. Reducing block sizes or `num_stages` may help.
""", FALLBACK, "out of resource: shared memory, Required: 229376"),
    "triton-out-of-resources-rank-prefixed": ("""\
[rank0]:     kernel.run(grid_0, grid_1, grid_2, num_warps, num_ctas, cluster_dim_0, cluster_dim_1, cluster_dim_2,
[rank0]:   File "/opt/venv/lib/python3.10/site-packages/triton/compiler/compiler.py", line 684, in __getattribute__
[rank0]:     self._init_handles()
[rank0]:   File "/opt/venv/lib/python3.10/site-packages/triton/compiler/compiler.py", line 675, in _init_handles
[rank0]:     raise OutOfResources(self.shared, max_shared, "shared memory")
[rank0]: triton.runtime.autotuner.OutOfResources: out of resource: shared memory, Required: 196608, Hardware limit: 166912. Reducing block sizes or `num_stages` may help.
""", FALLBACK, "OutOfResources: out of resource: shared memory"),
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_ending_leads(faultline_bin, validate, tmp_path, name):
    text, rule, initiating = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=rule, line=initiating)


HEALTHY = {
    # Inductor's autotuning catches OutOfResources for a choice that does not
    # fit, logs its message as a warning and benchmarks the other choices.
    "inductor-autotune-out-of-resources-warning": """\
W0612 10:21:33.123000 4242 torch/_inductor/select_algorithm.py:1702] out of resource: shared memory, Required: 131072, Hardware limit: 101376. Reducing block sizes or `num_stages` may help.
SingleProcess AUTOTUNE benchmarking takes 2.4183 seconds and 5.1127 seconds precompiling for 19 choices
""",
    "dynamo-cache-size-limit-warning": """\
W1029 21:16:44.769000 20836 torch/_dynamo/convert_frame.py:844] [1/8] torch._dynamo hit config.cache_size_limit (8)
W1029 21:16:44.769000 20836 torch/_dynamo/convert_frame.py:844] [1/8]    function: 'forward' (model.py:320)
W1029 21:16:44.769000 20836 torch/_dynamo/convert_frame.py:844] [1/8] To log all recompilation reasons, use TORCH_LOGS="recompiles".
""",
}


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_healthy_ending_is_no_incident(faultline_bin, validate, tmp_path, name):
    found = diagnose_text(faultline_bin, validate, tmp_path, HEALTHY[name])
    assert not [i for i in found if not (i["initiating"] or {}).get("survived")], \
        [(i["rule"], i["explanation"]) for i in found]
