"""A Slurm time limit is a termination notice (rules tagged role:termination
and role:deadline, rulesets/README.md): the collective errors after it are
its collateral; a hang that ran into it is the cause; and when the job met
it without a SIGTERM handler, the limit still says who ended the job and the
missing handler is an incident of its own after it."""

from conftest import diagnose_path

LIMIT = "2026-11-20T09:40:00"
NOTICE = f"slurmstepd: error: *** STEP 91422.0 ON gpu-b07 CANCELLED AT {LIMIT} DUE TO TIME LIMIT ***\n"


def megatron_steps(first, last, minute0=0):
    """Megatron-style iteration lines, one every 30 s from 09:<minute0>."""
    out = []
    for i in range(first, last):
        s = minute0 * 60 + 30 * (i - first)
        out.append(f"[2026-11-20 09:{s // 60:02d}:{s % 60:02d}] iteration {i:>8}/  500000 | consumed samples: "
                   f"{i * 256:>10} | elapsed time per iteration (ms): 30012.7 | learning rate: 2.400E-04 | "
                   f"lm loss: 2.{i % 89:02d}1E+00 | loss scale: 1.0 | grad norm: 0.412 |\n")
    return out


def diagnose(faultline_bin, validate, *paths):
    incs = diagnose_path(faultline_bin, validate, *paths)
    assert incs, "no incident"
    return incs


def two_hosts(tmp_path, steps_until_minute):
    """gpu-b07 and gpu-b08, four ranks each, progress until 09:<minute>."""
    for h, host in enumerate(("gpu-b07", "gpu-b08")):
        d = tmp_path / host
        d.mkdir()
        for r in range(4 * h, 4 * h + 4):
            (d / f"rank{r}.log").write_text("".join(megatron_steps(1000, 1000 + 2 * steps_until_minute)))
    return tmp_path / "gpu-b07", tmp_path / "gpu-b08"


def nccl_errors(host_dir, first_rank, second):
    lines = [f"gpu-b08:{52310 + r}:{52371 + r} [{r - 4}] misc/socket.cc:538 NCCL WARN Net : Connection closed "
             f"by remote peer gpu-b07<45122>\n" for r in range(first_rank, first_rank + 4)]
    stamped = [f"[2026-11-20 09:40:{second:02d}] {line}" for line in lines]
    (host_dir / "nccl.log").write_text("".join(stamped))


def test_time_limit_then_collective_errors_is_the_time_limit(faultline_bin, validate, tmp_path):
    """Progress up to the limit, the notice on gpu-b07, then gpu-b08's ranks
    lose their peers: the time limit ended the job."""
    b07, b08 = two_hosts(tmp_path, 40)
    (b07 / "slurm-91422.out").write_text(
        f"[2026-11-20 09:40:00] {NOTICE}[2026-11-20 09:40:00] [rank0] Received SIGTERM: 15\n")
    nccl_errors(b08, 4, 6)
    inc = diagnose(faultline_bin, validate, b07, b08)
    assert inc[0]["rule"] == "slurm-time-limit", [(i["rule"], i["explanation"]) for i in inc]
    assert inc[0]["initiating"]["host"] == "gpu-b07"
    assert "nccl-remote-error" in {c["rule"] for c in inc[0]["collateral"]}


def test_hang_that_ran_into_the_time_limit_is_the_hang(faultline_bin, validate, tmp_path):
    """Progress stops at 09:05, the limit comes at 09:40: the hang is the
    cause; the notice and the errors after it are its collateral."""
    b07, b08 = two_hosts(tmp_path, 5)
    (b07 / "slurm-91422.out").write_text(f"[2026-11-20 09:40:00] {NOTICE}")
    nccl_errors(b08, 4, 6)
    inc = diagnose(faultline_bin, validate, b07, b08)
    assert inc[0]["rule"] == "training-silent-hang", [(i["rule"], i["explanation"]) for i in inc]
    assert {"slurm-time-limit", "nccl-remote-error"} <= {c["rule"] for c in inc[0]["collateral"]}
    assert "slurm-time-limit" not in [i["rule"] for i in inc]
    assert "the hang ran into it" in inc[0]["explanation"]


def test_time_limit_without_a_handler_is_the_primary_and_the_handler_secondary(faultline_bin, validate,
                                                                                tmp_path):
    """Progress up to the limit and SIGTERM's default action (srun's and the
    batch shell's 'Terminated'): the limit ended the job (who ended it comes
    first); the missing handler, how the job met a limit it knew of, is the
    next incident with its own fix."""
    b07, _ = two_hosts(tmp_path, 40)
    (b07 / "slurm-91422.out").write_text(
        "".join(megatron_steps(1080, 1081, 40)) + NOTICE +
        "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
        "srun: error: gpu-b07: tasks 0-3: Terminated\n"
        "/var/spool/slurmd/job91422/slurm_script: line 31: 88120 Terminated              "
        "srun python pretrain_gpt.py\n")
    inc = diagnose(faultline_bin, validate, b07)
    rules = [i["rule"] for i in inc]
    assert rules[0] == "slurm-time-limit", [(i["rule"], i["explanation"]) for i in inc]
    assert "missing-signal-handler" in rules[1:], rules
    handler = inc[rules.index("missing-signal-handler")]
    assert "signal.signal(signal.SIGTERM" in handler["fix"]
    assert "missing-signal-handler" not in {c["rule"] for c in inc[0]["collateral"]}
