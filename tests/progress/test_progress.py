"""Step-line archives of gen.py through `faultline diagnose --json`: for each
trainer format, the straggler patterns and silent hangs are named with the
right rule and initiating rank, healthy runs (ordinary step-time noise) stay
quiet, and jobs whose step lines come from one rank only say what cannot be
known. 16, 256 and 1,024 ranks, with and without per-host clock skew (the
1,024-rank cases take about half a minute on two cores).

    FAULTLINE_BIN=build/src/cli/faultline python3 -m pytest -q tests/progress
"""
import json
import pathlib
import re
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gen  # noqa: E402

SIZES = [16, 256, 1024]


def diagnose(binary, directory):
    p = subprocess.run([binary, "diagnose", "--json", str(directory)], capture_output=True, timeout=600)
    assert p.returncode == 0, f"{directory}: exit {p.returncode}: {p.stderr.decode(errors='replace')}"
    return json.loads(p.stdout)


def check(report, truth, directory):
    incs = report.get("incidents") or []
    want = truth["primary_rule"]
    if want is None:
        assert not incs, f"{directory}: expected no incident, got {incs[0]['rule']}: {incs[0].get('explanation')}"
        return None
    assert incs, f"{directory}: expected {want}, got no incident"
    top = incs[0]
    assert top["rule"] == want, f"{directory}: expected {want}, got {top['rule']}: {top.get('explanation')}"
    ini = top.get("initiating") or {}
    if truth.get("initiating_rank") is not None:
        assert ini.get("rank") == truth["initiating_rank"], f"{directory}: rank {ini.get('rank')}: {top.get('explanation')}"
    if truth.get("initiating_host"):
        assert ini.get("host") == truth["initiating_host"], f"{directory}: host {ini.get('host')}"
    hosts = set(truth["hosts"])
    assert not ini.get("host") or ini["host"] in hosts, f"{directory}: host {ini.get('host')} is not the archive's"
    return top


CASES = [(fmt, sc, n, skew) for n in SIZES for skew in (False, True) for fmt in gen.FORMATS for sc in gen.SCENARIOS
         # 256 ranks: every format once per scenario, skewed or not.
         if n == 16 or (n == 256 and skew == (gen.FORMATS.index(fmt) % 2 == 1)) or
         (n == 1024 and skew and (fmt in ("kv", "jsonl") or sc != "moving")) or
         # 1,024 ranks without skew: one format of each layout (per-rank
         # files, one file per host, rank 0's only).
         (n == 1024 and not skew and fmt in ("megatron", "accelerate", "hf"))]


@pytest.mark.parametrize("fmt,scenario,ranks,skew", CASES,
                         ids=[f"{f}-{s}-{n}{'-skew' if k else ''}" for f, s, n, k in CASES])
def test_archive(faultline_bin, tmp_path, fmt, scenario, ranks, skew):
    seed = 1 + (ranks + len(fmt) + gen.SCENARIOS.index(scenario)) % 5
    truth = gen.write_archive(str(tmp_path), fmt, scenario, ranks, skew, seed)
    report = diagnose(faultline_bin, tmp_path)
    # One process's step lines cannot show a straggler: the report says so,
    # whatever it found.
    limits = report.get("limits") or []
    if fmt in gen.RANK0_ONLY:
        assert any("cannot be known" in m and "of %d ranks" % ranks in m for m in limits), limits
    else:
        assert not limits, limits
    top = check(report, truth, tmp_path)
    if top is None:
        return
    if scenario == "hang" and fmt in gen.PER_RANK:
        # The first rank to stop, its last step line, and what it was doing.
        assert "stopped" in top["explanation"]
        assert any("data.py" in (e.get("text") or "") for e in top["initiating"]["evidence"]), top["initiating"]
    if scenario == "hang" and fmt in gen.RANK0_ONLY:
        assert any("cannot be known" in m for m in top.get("missing_facts", [])), top.get("missing_facts")
    if scenario == "hang" and fmt == "accelerate":
        # Every host's local main process draws a bar naming no rank: the
        # bars stop together, and no one host is the hang's.
        assert not top["initiating"].get("host"), top["initiating"]
        assert any("one process per host" in m for m in top.get("missing_facts", [])), top.get("missing_facts")
    if scenario == "straggler":
        # The figures: its median against the others', over which steps.
        assert "for the other %d ranks" % (ranks - 1) in top["explanation"]
        assert "slower" in top["explanation"] and "steps" in top["explanation"]


@pytest.mark.parametrize("seed", range(1, 9))
def test_no_false_straggler_with_noise(faultline_bin, tmp_path, seed):
    """Healthy runs with step-time noise across seeds and formats stay quiet."""
    fmt = gen.PER_RANK[seed % len(gen.PER_RANK)]
    truth = gen.write_archive(str(tmp_path), fmt, "healthy", 64 if seed % 2 else 16, seed % 3 == 0, seed)
    check(diagnose(faultline_bin, tmp_path), truth, tmp_path)


def test_tqdm_carriage_returns_give_the_newest_update(faultline_bin, tmp_path):
    """One line of many tqdm redraws: the rank's last step is the newest one."""
    truth = gen.write_archive(str(tmp_path), "lightning", "hang", 16, False, 2)
    report = diagnose(faultline_bin, tmp_path)
    top = report["incidents"][0]
    assert top["rule"] == "training-silent-hang"
    want = "(last step %d)" % gen.Job("lightning", "hang", 16, False, 2).last_step(0)
    assert want in top["explanation"], top["explanation"]
    assert truth["primary_rule"] == "training-silent-hang"


@pytest.mark.parametrize("seed", [2, 3])
def test_composer_epoch_batch_restarts_are_one_run(faultline_bin, tmp_path, seed):
    """Composer's `[epoch=E][batch=B/N]:` (even seeds) and `[epoch=E][batch=B]:`
    (odd: no total) on every rank, unstamped: the first rank to stop stopped
    on the last batch of an epoch, the others on the next epoch's first.
    Read as the batch alone, it would be the furthest rank and the others'
    lines a resumed run; the step is the pair (epoch, batch). When it
    stopped cannot be known without stamps: the report says so."""
    job = gen.Job("composer_epoch", "hang", 16, False, seed)
    truth = gen.write_archive(str(tmp_path), "composer_epoch", "hang", 16, False, seed, epoch_len=job.hang_step - 1)
    report = diagnose(faultline_bin, tmp_path)
    top = check(report, truth, tmp_path)
    assert "carry no time" in top["explanation"], top["explanation"]
    assert any("cannot be known" in m or "no time stamps" in m for m in top.get("missing_facts", [])), top
    assert len(report.get("attempts") or []) <= 1, report.get("attempts")


def test_rich_bar_step_counts_the_epochs_before(faultline_bin, tmp_path):
    """Lightning's RichProgressBar restarts its batch count every epoch
    (`Epoch 2/4 ... 7/20`): the hang's last step is the run's, epochs before
    included."""
    job = gen.Job("lightning_rich", "hang", 16, False, 2)
    assert job.hang_step > 2 * job.epoch_len
    gen.write_archive(str(tmp_path), "lightning_rich", "hang", 16, False, 2)
    top = diagnose(faultline_bin, tmp_path)["incidents"][0]
    assert top["rule"] == "training-silent-hang"
    assert "(last step %d)" % job.last_step(0) in top["explanation"], top["explanation"]


@pytest.mark.parametrize("seed", [2, 3])
def test_rich_bar_in_a_file_gives_the_last_finished_epoch(faultline_bin, tmp_path, seed):
    """RichProgressBar(leave=True) with stdout a file prints one bar per
    finished epoch, when the next one starts: a process that hangs inside
    an epoch leaves the bar of the epoch before, so the hang's last step is
    that epoch's end (the epochs before counted in), not the batch it
    stopped at, which cannot be known."""
    job = gen.Job("lightning_rich_file", "hang", 16, False, seed)
    n = job.epoch_len
    assert job.last_step(0) % n and job.last_step(0) > 2 * n
    gen.write_archive(str(tmp_path), "lightning_rich_file", "hang", 16, False, seed)
    bars = [ln for ln in (tmp_path / job.hosts[0] / "train.log").read_text().splitlines() if ln.startswith("Epoch ")]
    assert len(bars) == job.last_step(0) // n, bars
    top = diagnose(faultline_bin, tmp_path)["incidents"][0]
    assert top["rule"] == "training-silent-hang"
    assert "(last step %d)" % (job.last_step(0) // n * n) in top["explanation"], top["explanation"]
    assert any("cannot be known" in m for m in top.get("missing_facts", [])), top.get("missing_facts")


def test_unstamped_last_step_bounds_the_silence(faultline_bin, tmp_path):
    """The bars carry no stamp: the last one has the time of the stamped
    line before it (`Trainer.fit` starting), so the silence counted from it
    is only its longest; a later line of the file with a later time bounds
    it from below. The true silence lies between the two figures given."""
    job = gen.Job("lightning_rich_file", "hang", 16, False, 2)
    times = job.step_times()
    wall = [gen.T0 + 60.0]
    for s in range(job.steps):
        wall.append(wall[-1] + max(times[r][s] for r in range(16)) * 1.02)
    gen.write_archive(str(tmp_path), "lightning_rich_file", "hang", 16, False, 2)
    top = diagnose(faultline_bin, tmp_path)["incidents"][0]
    m = re.search(r"no time of its own, .* it stopped between (\d+) and (\d+) s before the logs end", top["explanation"])
    assert m, top["explanation"]
    true_silence = wall[job.hang_step] + 1500.0 - wall[job.last_step(0) // job.epoch_len * job.epoch_len]
    assert int(m.group(1)) <= true_silence <= int(m.group(2)) + 1, (true_silence, top["explanation"])
