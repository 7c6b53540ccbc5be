"""Endings gaps closed by a mechanism, not a wording (issue #18; the gaps
index.json marked in tests/cli/endings).

A traceback cut in its frames (the process died printing it, or the
excerpt stops there) has no exception line; its evidence was its header,
which says nothing of what failed. When the line right above the header is
the record that printed the traceback as its exc_info, that record says
what failed and is the evidence. CPython's logging.Formatter.format writes a
record's message and then, from the next line, its formatted exc_info
(Logger.exception, Logger.error(..., exc_info=True)); loguru's
logger.exception writes its record line, then the traceback. Such a record
is at ERROR or CRITICAL level, or (a format with no level) a message that
ends in ':' introducing the traceback (Ray Train's worker record
'Error in training function:', e27; loguru's 'Failed: Train Model', e28).
A formatter that writes its prefix on every line of a record (vLLM's
NewLineFormatter, e32) names the record's level in that prefix.

Not taken: a record of another stream (another rank's line), an INFO
record (as often the last progress line before an uncaught exception),
CPython's own lines between chained tracebacks, and a thread's or child
process's header (whose cut traceback does not lead at all). A traceback
with its exception line keeps that line as its evidence.
"""
import pytest

from conftest import diagnose_text, initiating_texts, leading_incident

FRAMES = """\
{p}Traceback (most recent call last):
{p}  File "/opt/app/train.py", line 212, in <module>
{p}    main()
{p}  File "/opt/app/train.py", line 180, in main
{p}    trainer.fit(model, datamodule)
{p}  File "/opt/venv/lib/python3.11/site-packages/lightning/pytorch/trainer/trainer.py", line 543, in fit
"""

# (lines above the traceback, the record line right above its header, the
# prefix every line of the stream carries, the text the evidence must hold)
LOGGED = {
    # logging.basicConfig's default format, "%(levelname)s:%(name)s:%(message)s".
    "basicconfig-error": ("", "ERROR:trainer:Training step failed on shard 3", "", "Training step failed on shard 3"),
    # A handler's "%(asctime)s - %(name)s - %(levelname)s - %(message)s".
    "asctime-error": ("2024-05-02 10:11:09,101 - trainer - INFO - epoch 2 started\n",
                      "2024-05-02 10:11:12,345 - trainer - ERROR - Could not run the validation loop", "",
                      "Could not run the validation loop"),
    # CRITICAL (Logger.critical(..., exc_info=True)).
    "asctime-critical": ("", "2024-05-02 10:11:12,345 - loader - CRITICAL - Dataset worker crashed", "",
                         "Dataset worker crashed"),
    # loguru's default format: time | level padded to 8 | name:function:line - message.
    "loguru-error": ("2025-01-03 11:22:30.001 | INFO     | __main__:main:40 - Starting fit\n",
                     "2025-01-03 11:22:33.456 | ERROR    | __main__:main:42 - An error has been caught in function 'main'",
                     "", "An error has been caught in function 'main'"),
    # A bare "%(message)s" format: the message introduces its traceback.
    "bare-message-colon": ("step 120 loss 2.31\n", "Unhandled error in the dataloader loop:", "",
                           "Unhandled error in the dataloader loop:"),
    # The same record under torchrun's per-rank prefix (--tee / local_ranks_filter).
    "torchrun-rank-prefix": ("[rank1]: step 120 loss 2.31\n", "[rank1]: ERROR:worker:Rank 1 failed in forward",
                             "[rank1]: ", "Rank 1 failed in forward"),
    # docker compose's service prefix, which the line format does not split off.
    "compose-prefix-loguru": ("", "tune-1  | 2026-02-11 08:37:43.141 | ERROR    | app.jobs:run:74 - Failed: Fine-tune job",
                              "tune-1  | ", "Failed: Fine-tune job"),
    # A formatter that writes its prefix, level included, on every line of a
    # record (vLLM's NewLineFormatter: logger.exception("EngineCore failed to
    # start.") and its traceback under "ERROR <time> [file:line] ").
    "every-line-prefix-error": ("INFO 05-23 09:31:43 [backends.py:430] Dynamo bytecode transform time: 19.00 s\n",
                                "ERROR 05-23 09:31:47 [core.py:396] EngineCore failed to start.",
                                "ERROR 05-23 09:31:47 [core.py:396] ", "EngineCore failed to start."),
}


@pytest.mark.parametrize("name", sorted(LOGGED))
def test_cut_traceback_reads_the_record_that_printed_it(faultline_bin, validate, tmp_path, name):
    before, record, prefix, want = LOGGED[name]
    text = before + record + "\n" + FRAMES.format(p=prefix)
    leading_incident(faultline_bin, validate, tmp_path, text, line=want)


# The header stays the evidence: the line above is no record printing it.
NOT_TAKEN = {
    # An INFO record: the last progress line before an uncaught exception.
    "info-record": ("2024-05-02 10:11:12,345 - trainer - INFO - Validation loop:", ""),
    # Another rank's record right above rank 0's header.
    "other-rank-record": ("[rank3]: ERROR:worker:Rank 3 failed in forward", "[rank0]: "),
    # CPython's line between chained tracebacks (the blank line stripped).
    "chained-context": ("During handling of the above exception, another exception occurred:", ""),
    # A progress line, no level, no colon.
    "plain-progress": ("epoch 3 step 40 loss 1.92", ""),
    # An INFO record of a formatter that prefixes every line, right above
    # another record's header: its level is INFO.
    "every-line-prefix-info": ("INFO 05-23 09:31:47 [backends.py:430] Dynamo bytecode transform time: 19.00 s",
                               "ERROR 05-23 09:31:47 [core.py:396] "),
}


@pytest.mark.parametrize("name", sorted(NOT_TAKEN))
def test_cut_traceback_keeps_its_header_below_other_lines(faultline_bin, validate, tmp_path, name):
    above, prefix = NOT_TAKEN[name]
    found = diagnose_text(faultline_bin, validate, tmp_path, above + "\n" + FRAMES.format(p=prefix))
    assert found, "no incident"
    texts = initiating_texts(found[0])
    assert texts and "Traceback (most recent call last)" in texts[0], texts


def test_whole_traceback_keeps_its_exception_line(faultline_bin, validate, tmp_path):
    """An ERROR record over a traceback that reaches its exception line:
    the exception line says what failed and stays the evidence."""
    text = ("2024-05-02 10:11:12,345 - trainer - ERROR - Could not run the validation loop\n"
            + FRAMES.format(p="")
            + "    self._run(model)\n"
            + "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    leading_incident(faultline_bin, validate, tmp_path, text, line="RuntimeError: CUDA error: an illegal memory access")


def test_record_with_its_own_fatal_signal_keeps_leading(faultline_bin, validate, tmp_path):
    """The record above a cut traceback that a fatal signal of its own
    reads (Ray Serve's controller stopping a replica, deployment_state.py's
    'Exception in Replica(...), the replica will be stopped.'): the cut
    traceback's evidence, now on that record's line, does not take the line
    from that signal (it would then count as a cut traceback alone beside a
    fatal line, and the job would show no incident)."""
    p = "(ServeController pid=51210) "
    text = (p + "INFO 2025-03-04 09:12:40,101 controller 51210 -- Adding 1 replica to Deployment(name='Embedder', app='default').\n"
            + p + "ERROR 2025-03-04 09:12:55,930 controller 51210 -- Exception in Replica(id='k2x9fq1m', "
            "deployment='Embedder', app='default'), the replica will be stopped.\n"
            + FRAMES.format(p=p))
    leading_incident(faultline_bin, validate, tmp_path, text, line="Exception in Replica(id='k2x9fq1m'")
