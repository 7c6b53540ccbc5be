"""From the forty-eighth corpus batch's work part:

- A Ray Tune run on spot instances whose trial executor logs
  "<stamp>\\tERROR ray_trial_executor.py:111 -- An exception occurred when
  trying to stop the Ray actor:Traceback (most recent call last):", the
  frames and "ray.exceptions.RayActorError: ...", right under a WARNING
  record ("Stop signal received ..."), then "Trials did not complete"
  (ray-project/ray#29982, the batch's ray-29982). The traceback's header
  ends the ERROR record's own message on its line (a message that ends in
  traceback.format_exc()), but the scanner took the level of the record
  that logged it from the line above the header, the WARNING: the
  exception read as one logged as a warning and survived, and the failed
  job got no incident.

A record that carries the header after its own message on one line is the
record that logged the traceback: its level is the logged level, and the
line above is not consulted (src/scan/traceback.cc, FoldTraceback). A
header alone on its line (logging's exc_info, which puts the traceback on
the lines after the record's message) still takes the record above it.

The inputs below are written in CPython's logging.basicConfig format
(BASIC_FORMAT, "%(levelname)s:%(name)s:%(message)s") with a message that
ends in traceback.format_exc(), the idiom that puts the header on the
record's line; they are not the case's lines.
"""
from conftest import diagnose_text, initiating_texts, leading_incident, scan_path

# An ERROR record whose message ends in the traceback, under a WARNING record.
ERROR_RECORD_UNDER_WARNING = """\
WARNING:root:checkpoint upload took 124 s, retrying in the background
ERROR:root:training loop failed: Traceback (most recent call last):
  File "train.py", line 141, in main
    loss = step(batch)
  File "train.py", line 97, in step
    out = model(batch["x"])
KeyError: 'x'
"""

# A WARNING record whose message ends in the traceback, under an INFO record.
WARNING_RECORD_UNDER_INFO = """\
INFO:root:epoch 3 step 1200 loss 0.41
WARNING:root:skipped a corrupt sample: Traceback (most recent call last):
  File "data.py", line 55, in __getitem__
    img = Image.open(path).convert("RGB")
OSError: image file is truncated (3 bytes not processed)
"""

# logging's exc_info form: the header alone on the line after the record.
EXC_INFO_UNDER_WARNING = """\
INFO:root:epoch 3 step 1200 loss 0.41
WARNING:root:skipped a corrupt sample
Traceback (most recent call last):
  File "data.py", line 55, in __getitem__
    img = Image.open(path).convert("RGB")
OSError: image file is truncated (3 bytes not processed)
"""


def _failing(incidents):
    return [i for i in incidents if not i.get("survived") and not (i.get("initiating") or {}).get("survived")]


def _logged_levels(binary, tmp_path, text, exception_line):
    log = tmp_path / "train.log"
    log.write_text(text)
    return {dict(r.get("fields") or {}).get("logged_level") for r in scan_path(binary, log)
            if r.get("text", "").startswith(exception_line)}


def test_error_record_that_carries_the_header_is_not_the_warning_above(faultline_bin, validate, tmp_path):
    inc = leading_incident(faultline_bin, validate, tmp_path, ERROR_RECORD_UNDER_WARNING,
                           rule="unrecognised-fatal-error", line="KeyError: 'x'")
    assert not inc.get("survived"), inc["explanation"]


def test_error_record_that_carries_the_header_logs_no_warning_level(faultline_bin, tmp_path):
    levels = _logged_levels(faultline_bin, tmp_path, ERROR_RECORD_UNDER_WARNING, "KeyError: 'x'")
    assert levels and "WARNING" not in levels, levels


def test_warning_record_that_carries_the_header_is_a_warning(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, WARNING_RECORD_UNDER_INFO)
    assert not [t for i in _failing(found) for t in initiating_texts(i) if "OSError" in t], \
        [(i["rule"], i["explanation"]) for i in _failing(found)]
    levels = _logged_levels(faultline_bin, tmp_path, WARNING_RECORD_UNDER_INFO, "OSError:")
    assert levels == {"WARNING"}, levels


def test_header_alone_on_its_line_still_takes_the_record_above(faultline_bin, validate, tmp_path):
    levels = _logged_levels(faultline_bin, tmp_path, EXC_INFO_UNDER_WARNING, "OSError:")
    assert levels == {"WARNING"}, levels
    found = diagnose_text(faultline_bin, validate, tmp_path, EXC_INFO_UNDER_WARNING)
    assert not [t for i in _failing(found) for t in initiating_texts(i) if "OSError" in t], \
        [(i["rule"], i["explanation"]) for i in _failing(found)]
