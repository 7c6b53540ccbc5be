"""Endings the twenty-seventh endings audit (tests/cli/endings, e27-*.log, a
random sample of threads) read wrong, read where the program that printed
them writes them (issue #18):

- rich's traceback (rich/traceback.py, every release) is a Panel titled
  'Traceback (most recent call last)': the header is the panel's top edge
  with the title centred in it ('╭──── Traceback (most recent call last)
  ────╮'; '┌' in the SQUARE box rich substitutes on a legacy Windows
  console, '+' in ASCII), the frames are the panel's lines ('│ ... │'), and
  the exception line comes under its bottom edge. A text that ends inside
  the panel was cut in the frames (the process died printing it, or the
  post stops there): it leads a job that shows nothing else, as CPython's
  header does when cut in its frames. It gave no incident.
- A Slurm client command (srun, sbatch, squeue ...) that finds no
  slurm.conf tries configless mode's DNS SRV lookup; when that fails it logs
  'resolve_ctls_from_dns_srv: res_nsearch error: ...', 'fetch_config: DNS
  SRV lookup failed' and '_establish_config_source: failed to fetch config'
  (Slurm 20.02 and later) and then stops with 'fatal: Could not establish a
  configuration source': the errors say why and lead the fatal line, which
  led alone. slurmd retries its configless fetch, so its lines are not read.
- A client command that cannot get a MUNGE credential logs, after its
  retries, 'Munge encode failed: <reason>' at error level (auth_munge.c,
  20.02 to the newest) and its request fails; it gave no incident. A
  daemon's line, or the retried attempt's debug line, is not that.
- Lightning prints 'initializing ddp: GLOBAL_RANK: r, MEMBER: r+1/W' in
  every rank before init_process_group, and rank 0 'All DDP processes
  registered. Starting ddp with W processes' once all have joined (every
  release). Rank 0's line ending the log was read as a rank left waiting,
  but where the ranks share one console the other ranks' lines come after
  it: a log that ends in them gave no incident. They no longer hide the end
  (field `ending_tail`); a rank's own log ending in its own line, or the
  lines followed by rank 0's registration, still give none.
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # hollowstrawberry/kohya-colab#106: accelerate's launcher died with
    # SIGKILL; the post's rich traceback as the excerpt ends it, in its panel.
    "rich-traceback-cut-in-its-panel": ("""\
╭─────────────────────────────── Traceback (most recent call last) ────────────────────────────────╮
│ /usr/local/bin/accelerate:8 in <module>                                                          │
│                                                                                                  │
│   5 from accelerate.commands.accelerate_cli import main                                          │
│   6 if __name__ == '__main__':                                                                   │
│ ❱ 8 │   sys.exit(main())                                                                         │
│   9                                                                                              │
│                                                                                                  │
│ /usr/local/lib/python3.10/dist-packages/accelerate/commands/accelerate_cli.py:45 in main         │
""", "Traceback (most recent call last)"),
    # The same panel in the SQUARE box rich draws on a legacy Windows console.
    "rich-traceback-square-box-cut": ("""\
Epoch 0: loading shards
┌──────────────── Traceback (most recent call last) ────────────────┐
│ C:\\opt\\train.py:12 in <module>                                    │
│                                                                   │
""", "Traceback (most recent call last)"),
    # nico-bohlinger/one_policy_to_run_them_all#5: sbatch on a host with no
    # slurm.conf and no DNS SRV record for configless mode.
    "sbatch-configless-dns-srv-lookup-failed": ("""\
sbatch: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host
sbatch: error: fetch_config: DNS SRV lookup failed
sbatch: error: _establish_config_source: failed to fetch config
sbatch: fatal: Could not establish a configuration source
""", "resolve_ctls_from_dns_srv: res_nsearch error"),
    # LilyDaytoy/OpenPVSG#17: srun with munged not running on the host.
    "srun-munge-encode-failed": ("""\
+ srun -p super_priority --job-name=psg --gres=gpu:1 --ntasks-per-node=1 python -u tools/train.py --launcher=slurm
srun: error: If munged is up, restart with --num-threads=10
srun: error: Munge encode failed: Failed to access "/var/run/munge/munge.socket.2": No such file or directory
srun: error: slurm_send_node_msg: auth_g_create: REQUEST_RESOURCE_ALLOCATION has authentication error
srun: error: Srun communication socket apparently being written to by something other than Slurm
""", "Munge encode failed"),
    # Lightning-AI/pytorch-lightning#4612: four GPUs, every rank's line,
    # then nothing.
    "lightning-ranks-initializing-then-nothing": ("""\
GPU available: True, used: True
TPU available: False, using: 0 TPU cores
LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1,2,3]
initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/4
initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/4
initializing ddp: GLOBAL_RANK: 2, MEMBER: 3/4
initializing ddp: GLOBAL_RANK: 3, MEMBER: 4/4
""", "GLOBAL_RANK: 0, MEMBER: 1/4"),
}

HEALTHY = {
    # The same lines with rank 0's registration after them: every rank joined.
    "lightning-ranks-initializing-then-registered": """\
initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/2
initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/2
----------------------------------------------------------------------------------------------------
distributed_backend=nccl
All DDP processes registered. Starting ddp with 2 processes
----------------------------------------------------------------------------------------------------
""",
    # A rank's own log: it prints nothing more of its own after its line.
    "lightning-rank-3-own-log": """\
initializing ddp: GLOBAL_RANK: 3, MEMBER: 4/4
""",
    # A rich traceback a callback logged and the run went on from: the panel
    # is closed and steps follow, so the header is no cut traceback.
    "rich-traceback-closed-then-steps": """\
[INFO] step 10 loss=2.31
╭─────────────────────────────── Traceback (most recent call last) ────────────────────────────────╮
│ /opt/app/callbacks.py:41 in on_step_end                                                          │
│                                                                                                  │
│ ❱ 41 │   │   self.upload(metrics)                                                                │
╰──────────────────────────────────────────────────────────────────────────────────────────────────╯
[INFO] step 11 loss=2.29
[INFO] step 12 loss=2.27
""",
    # slurmd retries its configless fetch (_establish_configuration).
    "slurmd-configless-fetch-retried": """\
slurmd: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host
slurmd: error: fetch_config: DNS SRV lookup failed
slurmd: error: _establish_configuration: failed to load configs. Retrying in 10 seconds.
""",
    # srun -vv's retried encode (debug level) before a credential was had.
    "srun-munge-encode-retried-at-debug": """\
srun: debug:  Munge encode failed: Failed to access "/var/run/munge/munge.socket.2": No such file or directory (retrying ...)
srun: jobid 52011: nodes(1):`gpu07', cpu counts: 8(x1)
""",
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_ending_leads(faultline_bin, validate, tmp_path, name):
    text, initiating = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=initiating)


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_healthy_ending_has_no_incident(faultline_bin, validate, tmp_path, name):
    assert not diagnose_text(faultline_bin, validate, tmp_path, HEALTHY[name])
