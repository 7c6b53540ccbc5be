"""Two ways a worker's own failure was lost under its launcher's report,
as large-scale pretraining stacks show them:

- Python's argparse refuses a command line with ArgumentParser.error():
  it prints the usage and exits with status 2 through
  '%(prog)s: error: %(message)s', prog being the script's basename, the
  message one of argparse's own ('unrecognized arguments: ...', 'the
  following arguments are required: ...', 'argument <dest>: ...'). The
  deprecated torch.distributed.launch passes --local-rank=0 to every
  worker, which a script that does not declare it refuses. That line is
  a fatal line.
- A fatal line whose message goes on to a catalog rule's line within a
  few lines is that rule's failure. A launcher's summary line
  (torchrun's 'failed (exitcode: 1) local_rank: 0 ...') is a report of
  its own, written by another process after the worker exited: the
  worker's fatal line right above it is the failure it summarises, not
  the head of its message.
"""
from conftest import first_incident, initiating_texts, leading_incident


TORCHRUN_FAILED = ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: {code}) "
                   "local_rank: 0 (pid: 43362) of binary: /opt/conda/bin/python\n")

ARGPARSE_ALONE = """\
usage: pretrain.py [-h] [--data-path DATA_PATH] [--tp TP] [--pp PP]
pretrain.py: error: the following arguments are required: --data-path
"""

ARGPARSE_UNDER_LAUNCH = """\
usage: benchmark.py [-h] [-c CONFIG] [--tp TP] [--pp PP]
benchmark.py: error: unrecognized arguments: --local-rank=0
""" + TORCHRUN_FAILED.format(code=2)

EXCEPTION_UNDER_LAUNCH = """\
Traceback (most recent call last):
  File "/opt/train.py", line 40, in <module>
    main()
ValueError: num_layers (30) is not divisible by pipeline_model_parallel_size (4)
""" + TORCHRUN_FAILED.format(code=1)


def test_argparse_refusal_is_a_fatal_line(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, ARGPARSE_ALONE)
    assert inc["rule"] == "unrecognised-fatal-error", inc["explanation"]
    assert any("pretrain.py: error: the following arguments are required" in t
               for t in initiating_texts(inc))


def test_argparse_refusal_leads_the_launchers_summary(faultline_bin, validate, tmp_path):
    inc = leading_incident(faultline_bin, validate, tmp_path, ARGPARSE_UNDER_LAUNCH,
                           rule="unrecognised-fatal-error", any_line="unrecognized arguments: --local-rank=0")
    assert "torch-child-failed" in [c["rule"] for c in inc["collateral"]]


def test_a_summary_line_is_no_message_of_the_exception_above_it(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, EXCEPTION_UNDER_LAUNCH)
    assert inc["rule"] == "unrecognised-fatal-error", inc["explanation"]
    assert any(t.startswith("ValueError: num_layers (30)") for t in initiating_texts(inc))
    assert "torch-child-failed" in [c["rule"] for c in inc["collateral"]]
