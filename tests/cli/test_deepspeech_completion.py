"""Mozilla DeepSpeech logs the end of its training loop with log_info ('I '
prefix): 'FINISHED Optimization - training time: %s' up to 0.4 and
'FINISHED optimization in %s' from 0.5. A crash after that line (the known
segfault at interpreter exit once the model is exported) is teardown of a
completed run, not the failure (issue #18: a negative read as an
unrecognised fatal error); the same crash during the epochs stays one."""
from conftest import diagnose_text

EPOCHS = """\
I Training of Epoch 48 - loss: 4.790713
I Training of Epoch 49 - loss: 3.173421
"""

AFTER_FINISHED = EPOCHS + """\
I FINISHED Optimization - training time: 0:03:54
I Test of Epoch 50 - WER: 0.090909, loss: 4.00302886963, mean edit distance: 0.019231
I Exporting the model...
I Models exported at ../sample
Segmentation fault (core dumped)
"""

AFTER_FINISHED_NEWER = """\
I FINISHED optimization in 1:02:41.371952
I Exporting the model...
I Models exported at /opt/export
Segmentation fault (core dumped)
"""

DURING_EPOCHS = EPOCHS + """\
Segmentation fault (core dumped)
"""


def test_crash_after_deepspeech_finished_is_teardown(faultline_bin, validate, tmp_path):
    for text in (AFTER_FINISHED, AFTER_FINISHED_NEWER):
        found = diagnose_text(faultline_bin, validate, tmp_path, text)
        assert [i for i in found if not (i.get("initiating") or {}).get("survived")] == [], \
            [i["rule"] for i in found]


def test_crash_during_the_epochs_is_the_failure(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, DURING_EPOCHS)
    assert found and found[0]["rule"] == "unrecognised-fatal-error", [i["rule"] for i in found]
