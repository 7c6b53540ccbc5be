"""Endings the seventh endings audit (tests/cli/endings, e7-*.log) read as
nothing or by the wrong line, read where the program that printed them
writes them (issue #18):

- A shell on macOS reports a child's death in the BSD libc's signal words,
  with strsignal's number after them: bash's "line 12:  1674 Abort trap: 6
  python main.py", "Segmentation fault: 11", "Killed: 9". SIGABRT is "Abort
  trap" and SIGTRAP "Trace/BPT trap" there, not glibc's "Aborted" and
  "Trace/breakpoint trap"; "Terminated: 15" is SIGTERM. zsh has its own
  words for SIGTRAP and SIGSYS too: "trace trap", "invalid system call".
- Hydra writes "Error executing job with overrides: [...]" and then the
  job's exception: one of its compact exceptions (InstantiationException,
  ConfigCompositionException, ...) as its message alone on the next line,
  which says what failed; any other as a traceback, whose own signal reads
  its exception line. A detail_next_line signal takes no blank line and no
  traceback header as its message.
- Snakemake's format_error writes an exception as "<Class> in line N of
  <snakefile>:" (before 7.12; "<Class> in file "<snakefile>", line N:"
  since) over its message; a RuleException's message is the rule's own
  exception in those words, over "Command ... returned non-zero exit status
  N.". That message is the evidence, and an exit status read on its line is
  that line's status, not a fatal line that replaces it.
"""
import json
import subprocess

import pytest

from conftest import diagnose_text, first_incident, initiating_texts, leading_incident

FALLBACK = "unrecognised-fatal-error"


@pytest.mark.parametrize("ending, line", [
    ("/opt/app/run.command: line 12:  5121 Abort trap: 6           python main.py --device mps",
     "Abort trap: 6"),
    ("Segmentation fault: 11", "Segmentation fault: 11"),
    ("train.sh: line 3:   771 Trace/BPT trap: 5       ./train --steps 100", "Trace/BPT trap: 5"),
    ("Abort trap (core dumped)", "Abort trap"),
])
def test_bsd_crash_words_are_a_crash(faultline_bin, validate, tmp_path, ending, line):
    text = "step 10: loss 2.31\nstep 20: loss 2.17\n" + ending + "\n"
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=line)


@pytest.mark.parametrize("ending", [
    "/opt/app/run.sh: line 4: 80211 Killed: 9               python3 train.py",
    "[1]+  Killed: 9               python3 finetune.py",
    "Killed: 9",
])
def test_bsd_killed_is_a_kill(faultline_bin, validate, tmp_path, ending):
    text = "Epoch 1: 100%|██████████| 500/500 [01:10<00:00,  7.1it/s]\n" + ending + "\n"
    leading_incident(faultline_bin, validate, tmp_path, text, rule="process-sigkilled", line="Killed: 9")


@pytest.mark.parametrize("ending, line", [
    ("zsh: trace trap  python3 generate.py --device mps", "zsh: trace trap"),
    ("zsh: invalid system call  ./sandboxed_loader", "zsh: invalid system call"),
    ("[1]    40211 trace trap  python3 generate.py", "trace trap"),
])
def test_zsh_trap_words_are_a_crash(faultline_bin, validate, tmp_path, ending, line):
    # zsh's own words for SIGTRAP and SIGSYS (Src/signames2.awk).
    text = "step 10: loss 2.31\n" + ending + "\n"
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=line)


def test_bsd_terminated_is_bash_reporting_sigterm(faultline_bin, tmp_path):
    # bash on macOS: "Terminated: 15", read like glibc's "Terminated".
    log = tmp_path / "train.log"
    log.write_text("step 10: loss 2.31\n/opt/app/run.sh: line 9: 60412 Terminated: 15          python3 train.py\n")
    p = subprocess.run([faultline_bin, "scan", "--json", str(log)], capture_output=True, check=True)
    records = [json.loads(r) for r in p.stdout.decode().splitlines()]
    assert [(r["signal"], r["fields"].get("pid")) for r in records] == [("bash-terminated", "60412")], records


def test_abort_in_a_sentence_is_no_crash(faultline_bin, validate, tmp_path):
    text = "step 10: loss nan\nAbort trap avoided: skipping the step with a NaN loss\nstep 11: loss 2.01\n"
    assert diagnose_text(faultline_bin, validate, tmp_path, text) == []


HYDRA_ENDING = "\nSet the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.\n"


def test_hydra_compact_exception_is_the_evidence(faultline_bin, validate, tmp_path):
    # InstantiationException is printed as its message alone (str(ex)).
    text = ("[2026-03-02 10:00:01,100][__main__][INFO] - Instantiating model <models.unet.UNet>\n"
            "Error executing job with overrides: ['model=unet', 'trainer.devices=8']\n"
            "Error in call to target 'models.unet.UNet':\n"
            "TypeError(\"__init__() got an unexpected keyword argument 'channels'\")\n"
            "full_key: model\n" + HYDRA_ENDING)
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK,
                     line="Error in call to target 'models.unet.UNet':")


def test_hydra_traceback_is_read_by_its_header(faultline_bin, validate, tmp_path):
    # Any other exception comes as a traceback under the line; the hydra
    # line keeps its own text (the traceback header says nothing) and the
    # exception line leads.
    text = ("Error executing job with overrides: []\n"
            "Traceback (most recent call last):\n"
            '  File "/opt/app/train.py", line 41, in main\n'
            "    model = build(cfg)\n"
            "ValueError: hidden size 1000 is not divisible by 12 heads\n" + HYDRA_ENDING)
    log = tmp_path / "train.log"
    log.write_text(text)
    p = subprocess.run([faultline_bin, "scan", "--json", str(log)], capture_output=True, check=True)
    hydra = [json.loads(r) for r in p.stdout.decode().splitlines() if json.loads(r).get("signal") == "hydra_job_error"]
    assert [r["text"] for r in hydra] == ["Error executing job with overrides: []"], hydra
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK,
                     line="ValueError: hidden size 1000 is not divisible by 12 heads")


@pytest.mark.parametrize("header", [
    "CalledProcessError in line 88 of /opt/pipeline/rules/train.smk:",
    'CalledProcessError in file "/opt/pipeline/rules/train.smk", line 88:',
])
def test_snakemake_rule_exception_message_is_the_evidence(faultline_bin, validate, tmp_path, header):
    text = ("[Tue Mar  3 09:12:44 2026]\n"
            "rule train_model:\n"
            "    input: data/shards.done\n"
            "    output: models/final.pt\n"
            "    jobid: 4\n"
            "RuleException:\n" + header + "\n"
            "Command 'set -euo pipefail;  python scripts/train.py --epochs 10' returned non-zero exit status 1.\n"
            '  File "/opt/pipeline/rules/train.smk", line 88, in __rule_train_model\n'
            '  File "/opt/conda/lib/python3.11/concurrent/futures/thread.py", line 58, in run\n'
            "Shutting down, this might take some time.\n"
            "Exiting because a job execution failed. Look above for error message\n")
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["rule"] == FALLBACK, inc["explanation"]
    assert any("returned non-zero exit status 1." in t for t in initiating_texts(inc)), initiating_texts(inc)


def test_snakemake_workflow_error_message_is_the_evidence(faultline_bin, validate, tmp_path):
    text = ("Building DAG of jobs...\n"
            'WorkflowError in file "/opt/pipeline/Snakefile", line 12:\n'
            "Config file config/cluster.yaml not found.\n")
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK,
                     line="Config file config/cluster.yaml not found.")
