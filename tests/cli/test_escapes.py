"""Terminal escape sequences in logs: loggers that colour their output (Ray's
worker prefixes, rich, loguru, colorlog) write SGR codes into redirected
files, rsyslog escapes ESC as `#033`, and a container runtime's JSON keeps it
as `\\u001b`; a log pasted into a web page loses ESC and keeps `[36m`
(taken off a line that holds a bare reset code `[0m`). A line is matched,
and its time read, without them, and its evidence text is the line without
them (scan/line_format.h, HasEscapes)."""
import json

import pytest

from conftest import first_incident

FALLBACK = "Unrecognised fatal error"
ESC = "\x1b"


def evidence(inc):
    return inc["initiating"]["evidence"][0]


# Ray's coloured worker prefix as an AWS Neuron tutorial quotes it (a
# punkt_tab download that fails its CRC check on every worker): with ESC,
# with rsyslog's #033, and with ESC lost on the way to a web page.
@pytest.mark.parametrize("esc", [ESC, "#033", ""])
def test_a_coloured_exception_line_is_a_fatal_line(faultline_bin, validate, tmp_path, esc):
    ray = esc + "[36m(RayTrainWorker pid=3483, ip=100.64.83.225)" + esc + "[0m "
    text = (ray + "[nltk_data] Error with downloaded zip file\n" +
            ray + "Traceback (most recent call last):\n" +
            ray + '  File "/usr/lib/python3.10/zipfile.py", line 1121, in _update_crc\n' +
            ray + "    raise BadZipFile(\"Bad CRC-32 for file %r\" % self.name)\n" +
            ray + esc + "[31mzipfile.BadZipFile: Bad CRC-32 for file 'punkt_tab/czech/ortho_context.tab'" + esc
            + "[0m\n")
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["reference"] == FALLBACK
    ev = evidence(inc)
    assert ev["text"] == ("(RayTrainWorker pid=3483, ip=100.64.83.225) zipfile.BadZipFile: Bad CRC-32 for file "
                          "'punkt_tab/czech/ortho_context.tab'")
    assert ev["fields"]["exception"] == "zipfile.BadZipFile"
    assert ev["line"] == 5


def test_a_coloured_stamp_gives_the_lines_time(faultline_bin, validate, tmp_path):
    # loguru's default format: green time, the level and the message in the
    # level's colour.
    text = (ESC + "[32m2024-05-02 10:11:12.345" + ESC + "[0m | " + ESC + "[1mINFO    " + ESC + "[0m | "
            + ESC + "[36m__main__" + ESC + "[0m:" + ESC + "[36mmain" + ESC + "[0m:" + ESC + "[36m40" + ESC
            + "[0m - " + ESC + "[1mstep 10 loss 2.31" + ESC + "[0m\n"
            + ESC + "[32m2024-05-02 10:11:13.500" + ESC + "[0m | " + ESC + "[31m" + ESC + "[1mERROR   " + ESC
            + "[0m | " + ESC + "[36m__main__" + ESC + "[0m:" + ESC + "[36mmain" + ESC + "[0m:" + ESC + "[36m52"
            + ESC + "[0m - " + ESC + "[31m" + ESC + "[1mKeyError: 'input_ids'" + ESC + "[0m\n")
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    ev = evidence(inc)
    assert ev["text"] == "2024-05-02 10:11:13.500 | ERROR    | __main__:main:52 - KeyError: 'input_ids'"
    assert ev["time"].startswith("2024-05-02T10:11:13.5"), ev["time"]


def test_rsyslogs_escaped_colours_are_stripped(faultline_bin, validate, tmp_path):
    # vLLM's coloured worker prefix through rsyslog (a vLLM issue's journal).
    text = ("Aug 31 04:18:45 gpu01 vllm[415]: #033[1;36m(VllmWorker TP2 pid=415)#033[0;0m ERROR 08-31 04:18:45 "
            "[multiproc_executor.py:559] WorkerProc failed to start.\n"
            "Aug 31 04:18:45 gpu01 vllm[415]: #033[1;36m(VllmWorker TP2 pid=415)#033[0;0m "
            "#033[31mValueError: 4096 is not divisible by 8#033[0m\n")
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert evidence(inc)["text"].endswith("(VllmWorker TP2 pid=415) ValueError: 4096 is not divisible by 8")
    assert evidence(inc)["fields"]["exception"] == "ValueError"


def test_a_json_records_escaped_colours_are_stripped(faultline_bin, validate, tmp_path):
    # docker's json-file keeps ESC as \u001b in the record's log string.
    lines = [{"log": ESC + "[32mINFO" + ESC + "[0m step 10\n", "stream": "stderr",
              "time": "2024-05-02T10:11:12.345Z"},
             {"log": ESC + "[31mKeyError: 'input_ids'" + ESC + "[0m\n", "stream": "stderr",
              "time": "2024-05-02T10:11:13.345Z"}]
    text = "".join(json.dumps(l) + "\n" for l in lines)
    assert "\\u001b[31m" in text
    inc = first_incident(faultline_bin, validate, tmp_path, text, name="container.log")
    assert inc["reference"] == FALLBACK
    assert evidence(inc)["fields"]["exception"] == "KeyError"
