"""A preemption notice is dated by its dated line: Slurm's step cancel
states when (`CANCELLED AT ... DUE TO PREEMPTION`), `scontrol show job`'s
`JobState=PREEMPTED` row beside it states no time. The notice is not taken
to come at the logs' end (a preempted host's kernel log goes on after it
boots again), so progress that stopped with the notice is no hang that ran
into it."""

from conftest import diagnose_path
from test_time_limit import megatron_steps

CANCEL = "slurmstepd: error: *** STEP 91422.0 ON gpu-b07 CANCELLED AT 2026-11-20T09:40:00 DUE TO PREEMPTION ***\n"


def test_preemption_with_an_undated_state_row_is_the_preemption(faultline_bin, validate, tmp_path):
    for h, host in enumerate(("gpu-b07", "gpu-b08")):
        d = tmp_path / host
        d.mkdir()
        for r in range(4 * h, 4 * h + 4):
            (d / f"rank{r}.log").write_text("".join(megatron_steps(1000, 1080)))
    (tmp_path / "gpu-b07" / "slurm-91422.out").write_text(CANCEL)
    (tmp_path / "scontrol_show_job.txt").write_text(
        "JobId=91422 JobName=pretrain\n   JobState=PREEMPTED Reason=None Dependency=(null)\n"
        "   NodeList=gpu-b[07-08]\n")
    # The host booted again 50 minutes later and its kernel logged on.
    (tmp_path / "gpu-b07" / "kern.log").write_text(
        "Nov 20 10:30:05 gpu-b07 kernel: [   31.402113] perf: interrupt took too long (3391 > 2500), "
        "lowering kernel.perf_event_max_sample_rate to 79750\n")
    inc = diagnose_path(faultline_bin, validate, tmp_path)
    assert inc and inc[0]["rule"] == "preemption", [(i["rule"], i["explanation"]) for i in inc]
    assert inc[0]["initiating"]["host"] == "gpu-b07"
