"""A matching message alone does not confirm a cause (issue #18): lines
that name a failure's word but say the program went on.

- "Bypassing SIGTERM: 15" (Lightning's _sigterm_handler_fn and its SLURM
  auto-requeue handler) and "Bypassing signal SIGTERM" (submitit's
  SignalHandler.bypass) are handlers that log the signal and do nothing
  else. They are installed so that the SIGTERM Slurm sends every process
  on preemption or at the time limit does not stop the run while the
  requeue signal is handled; the process goes on. Neither line is the
  job's termination, so no "Graceful Shutdown Missing" comes of it alone.
  Slurm's own CANCELLED banner beside it still is one.
"""
import pytest

from conftest import diagnose_text, first_incident

# Lightning-AI/pytorch-lightning#20542: the bypass, then the progress bar
# goes on.
LIGHTNING_BYPASS = (
    "Bypassing SIGTERM: 15\n"
    "\n"
    "Epoch 10:  93%|█████████▎| 18626/20000 [5:43:21<25:19,  0.90it/s, v_num=0txx, "
    "train_loss=3.970, denoise_60%_expr=1.570, denoise_60%_emb_independence=0.068, "
    "denoise_60%_cls=0.386, denoise_60%_ecs=0.867, gen_expr=1...\n")

# facebookincubator/submitit#1701: a preempted job bypasses the SIGTERM,
# requeues itself on SIGHUP and exits gracefully.
SUBMITIT_PREEMPTED = """\
submitit INFO (2022-07-12 04:17:53,762) - Starting with JobEnvironment(job_id=60601445, hostname=learnfair0293, local_rank=0(2), node=0(1), global_rank=0(2))
submitit WARNING (2022-07-12 04:18:45,706) - Bypassing signal SIGTERM
submitit INFO (2022-07-12 04:18:45,881) - Job has not timed out. Ran 1 minutes out of requested 20 minutes.
submitit WARNING (2022-07-12 04:18:45,881) - Caught signal SIGHUP on learnfair0293: this job is preempted.
submitit INFO (2022-07-12 04:18:45,912) - Requeued job 60601445 (3 remaining timeouts)
submitit WARNING (2022-07-12 04:18:45,912) - Bypassing signal SIGCONT
submitit INFO (2022-07-12 04:18:45,913) - Exiting gracefully after preemption/timeout.
"""


@pytest.mark.parametrize("text", [LIGHTNING_BYPASS, SUBMITIT_PREEMPTED], ids=["lightning", "submitit"])
def test_a_bypassed_sigterm_is_no_termination(faultline_bin, validate, tmp_path, text):
    found = diagnose_text(faultline_bin, validate, tmp_path, text)
    refs = [i["reference"] for i in found]
    assert "Graceful Shutdown Missing" not in refs, refs


def test_slurms_banner_beside_a_bypass_still_ends_the_job(faultline_bin, validate, tmp_path):
    # Lightning-AI/pytorch-lightning#20542: the time limit's banner, then
    # Lightning's two handler lines.
    text = ("slurmstepd: error: *** STEP 55595933.0 ON maestro-3017 CANCELLED AT 2025-01-10T15:27:25 "
            "DUE TO TIME LIMIT ***\n"
            "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
            "[rank: 0] Received SIGTERM: 15\n"
            "Bypassing SIGTERM: 15\n")
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["reference"] in ("A job reaches its scheduler time limit", "Graceful Shutdown Missing"), \
        inc["reference"]
