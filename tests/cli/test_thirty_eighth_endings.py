"""Thirty-eighth endings audit (issue #18; tests/cli/endings, prefix e38-):
a cut traceback under a record written in logging's bare format.

CPython's logging writes a record's message and then, from the next line,
its exc_info traceback (Logger.error(..., exc_info=True),
Logger.exception). With no handler configured, logging's lastResort
handler writes WARNING-and-above records as the bare message
('%(message)s', basicConfig(format='%(message)s') likewise): no level, no
time. bitsandbytes' native library load failure (cextension.py, 0.44 and
0.45: 'Could not load bitsandbytes native library: <error>') is such a
record (from 0.46 its message, 'bitsandbytes library load error: ...',
ends in a newline of its own, so a blank line stands between it and the
traceback and the header stays the evidence). Where the
excerpt is cut in that traceback's frames, the record's message says what
failed and is the evidence, as a level-named ERROR record's is
(tests/cli/test_endings_gaps_2.py): a bare line right above the header
that reads as an error (the words a crash report's detail line is read
by). A bare line that reads as none (a progress line) or says it warns
leaves the header the evidence.
"""
import pytest

from conftest import diagnose_text, initiating_texts, leading_incident

FRAMES = """\
Traceback (most recent call last):
  File "/opt/venv/lib/python3.11/site-packages/bitsandbytes/cextension.py", line 85, in <module>
    lib = get_native_library()
          ^^^^^^^^^^^^^^^^^^^^
  File "/opt/venv/lib/python3.11/site-packages/bitsandbytes/cextension.py", line 72, in get_native_library
    dll = ct.cdll.LoadLibrary(str(binary_path))
"""

# (the bare record right above the header, the text the evidence must hold)
TAKEN = {
    # bitsandbytes 0.44-0.45.
    "bnb-could-not-load": ("Could not load bitsandbytes native library: /opt/venv/lib/python3.11/site-packages/"
                           "bitsandbytes/libbitsandbytes_cpu.so: cannot open shared object file: No such file or directory",
                           "Could not load bitsandbytes native library"),
    # Any program's bare record of a failure.
    "bare-failed": ("Failed to initialise the tokenizer cache", "Failed to initialise the tokenizer cache"),
}


@pytest.mark.parametrize("name", sorted(TAKEN))
def test_cut_traceback_reads_the_bare_record_over_it(faultline_bin, validate, tmp_path, name):
    record, want = TAKEN[name]
    text = "Loading checkpoint shards: 100%|##########| 2/2 [00:03<00:00,  1.52s/it]\n" + record + "\n" + FRAMES
    leading_incident(faultline_bin, validate, tmp_path, text, line=want)


# The header stays the evidence: the bare line above it says no failure.
NOT_TAKEN = {
    "progress-line": "Loading checkpoint shards: 100%|##########| 2/2 [00:03<00:00,  1.52s/it]",
    "bare-warning": "Warning: failed to import flash_attn, falling back to sdpa",
}


@pytest.mark.parametrize("name", sorted(NOT_TAKEN))
def test_cut_traceback_keeps_its_header_below_a_bare_line_that_is_no_error(faultline_bin, validate, tmp_path, name):
    found = diagnose_text(faultline_bin, validate, tmp_path, NOT_TAKEN[name] + "\n" + FRAMES)
    assert found, "no incident"
    texts = initiating_texts(found[0])
    assert texts and "Traceback (most recent call last)" in texts[0], texts


def test_whole_traceback_keeps_its_exception_line(faultline_bin, validate, tmp_path):
    """The bare record over a traceback that reaches its exception line:
    the exception line says what failed and stays the evidence."""
    text = ("Could not load bitsandbytes native library: libcudart.so.12: cannot open shared object file\n"
            + FRAMES
            + "OSError: libcudart.so.12: cannot open shared object file: No such file or directory\n")
    leading_incident(faultline_bin, validate, tmp_path, text, line="OSError: libcudart.so.12")


def test_a_symptom_of_the_bare_record_keeps_its_line_over_the_cut_traceback(faultline_bin, validate, tmp_path):
    # Hydra writes "Error executing job with overrides: [...]" and re-raises
    # the job's exception under it (a symptom of the fallback whose
    # exception leads); the record-above read moves the cut traceback onto
    # that line, where the line's own read stays its evidence. Taken for the
    # line, the cut read would leave it only when nothing else fails, and the
    # job got no incident (the e36 Matcha-TTS ending, once the e38 bare
    # record read was merged beside it).
    text = ("[2024-11-11 08:34:07,340][app.utils][INFO] - Output dir: /opt/logs/runs/1\n"
            "Error executing job with overrides: ['experiment=small']\n" + FRAMES)
    leading_incident(faultline_bin, validate, tmp_path, text, line="Error executing job with overrides")
