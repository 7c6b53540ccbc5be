"""GPU memory held with no process listed: an orphaned allocation.

A job that failed and left nothing but an nvidia-smi table: a GPU whose
memory is in use (`12799MiB / 16280MiB`) while the table's Processes
section names no process, after the user's processes ended (the corpus's
crosse-2, pytorch-4031: "my GPU still seems to have almost 13GB allocated
by someone. No processes seem to be using it"). NVML lists every compute
context it can see, so the memory is held by a process nvidia-smi cannot
name: a leftover of an interrupted or killed job, or a process in another
container's PID namespace. The job got no incident.

The engine reads the table's own shape (src/correlate/orphaned_gpu_memory.cc,
the `smi-*` context signals of rulesets/ops/zombie-gpu-process.json): in a
log where nothing else failed, a GPU row well above an idle GPU's memory in
a table whose Processes section is empty (its rule right over the closing
border, or `No running processes found` between them) is an incident of
zombie-gpu-process, with a missing fact saying how to find the owner.
Not evidence: a section that lists a process, one the log cuts, memory
near idle, a table followed by progress in its file (a container's
nvidia-smi lists nothing while its own training runs), and a log with a
failure of its own.

Before driver 450 every row of the table is 79 columns wide, so a log that
is only the table looked hard-wrapped at 79 columns and the scanner joined
each row with the next: the table's rows are now whole lines wherever they
open and close on the frame's edge (src/scan/line_format.cc, AsciiFrameRow).

The tables below are written in each driver era's layout (nvidia-smi's
column headers before 450, the `GI CI` columns from 450, the wider 525+
layout); their values are made up, not a case's.
"""
from conftest import diagnose_text, initiating_texts, scan_text

RULE = "zombie-gpu-process"

# Before 450: one column-header line over the Processes rule.
ERA_410_GPUS = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 418.87.01    Driver Version: 418.87.01    CUDA Version: 10.1     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  Tesla V100-SXM2...  On   | 00000000:00:1E.0 Off |                    0 |
| N/A   41C    P0    52W / 300W |  10240MiB / 16130MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+
|   1  Tesla V100-SXM2...  On   | 00000000:00:1F.0 Off |                    0 |
| N/A   38C    P0    40W / 300W |      0MiB / 16130MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+
                                                                               
+-----------------------------------------------------------------------------+
| Processes:                                                       GPU Memory |
|  GPU       PID   Type   Process name                             Usage      |
|=============================================================================|
"""
ERA_410_EMPTY = ERA_410_GPUS + """\
+-----------------------------------------------------------------------------+
"""
ERA_410_NONE = ERA_410_GPUS + """\
|  No running processes found                                                 |
+-----------------------------------------------------------------------------+
"""
ERA_410_LISTED = ERA_410_GPUS + """\
|    0     41872      C   python                                     10229MiB |
+-----------------------------------------------------------------------------+
"""
# The section's rows cut by the excerpt: what it listed is not shown.
ERA_410_CUT = ERA_410_GPUS + """\
[... 12 lines omitted ...]
"""

# 450 to 520: the GI/CI columns, a two-line column header.
ERA_470 = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|                               |                      |               MIG M. |
|===============================+======================+======================|
|   0  NVIDIA A100-SXM...  On   | 00000000:07:00.0 Off |                    0 |
| N/A   30C    P0    61W / 400W |  35210MiB / 40536MiB |      0%      Default |
|                               |                      |             Disabled |
+-------------------------------+----------------------+----------------------+
                                                                               
+-----------------------------------------------------------------------------+
| Processes:                                                                  |
|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |
|        ID   ID                                                   Usage      |
|=============================================================================|
|  No running processes found                                                 |
+-----------------------------------------------------------------------------+
"""

# 525 and later: the wider layout.
ERA_535_GPUS = """\
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|                                         |                      |               MIG M. |
|=========================================+======================+======================|
|   0  NVIDIA H100 80GB HBM3          On  | 00000000:18:00.0 Off |                    0 |
| N/A   33C    P0              71W / 700W |  40110MiB / 81559MiB |      0%      Default |
|                                         |                      |             Disabled |
+-----------------------------------------+----------------------+----------------------+
                                                                                         
+---------------------------------------------------------------------------------------+
| Processes:                                                                            |
|  GPU   GI   CI        PID   Type   Process name                            GPU Memory |
|        ID   ID                                                             Usage      |
|=======================================================================================|
"""
ERA_535 = ERA_535_GPUS + """\
|  No running processes found                                                           |
+---------------------------------------------------------------------------------------+
"""
ERA_535_IDLE = ERA_535.replace("40110MiB / 81559MiB", "    4MiB / 81559MiB")

# A container's table at the start of a run: nvidia-smi lists no process of
# another PID namespace, then the job's own training runs on.
ERA_535_THEN_TRAINING = ERA_535 + "".join(
    f" iteration      {i * 10:>3}/   10000 | consumed samples:        {i * 2560:>5} | "
    f"elapsed time per iteration (ms): 812.4 | learning rate: 1.000E-04 | global batch size:   256 | "
    f"lm loss: 7.012E+00 |\n" for i in range(1, 4))

# A job that failed of its own error with the table in its log.
ERA_535_THEN_FAILURE = ERA_535 + """\
Traceback (most recent call last):
  File "train.py", line 12, in <module>
    import apex
ModuleNotFoundError: No module named 'apex'
"""


def _incidents(binary, validate, tmp_path, text):
    return diagnose_text(binary, validate, tmp_path, text)


def _zombie(incidents):
    return [i for i in incidents if i["rule"] == RULE]


def _assert_zombie(binary, validate, tmp_path, text, row):
    found = _incidents(binary, validate, tmp_path, text)
    zombie = _zombie(found)
    assert zombie, [(i["rule"], i["explanation"]) for i in found]
    inc = zombie[0]
    assert any(row in t for t in initiating_texts(inc)), initiating_texts(inc)
    assert any("--query-compute-apps" in f and "fuser -v /dev/nvidia" in f for f in inc["missing_facts"]), \
        inc["missing_facts"]
    return inc


def test_empty_section_before_450_is_an_orphaned_allocation(faultline_bin, validate, tmp_path):
    _assert_zombie(faultline_bin, validate, tmp_path, ERA_410_EMPTY, "10240MiB / 16130MiB")


def test_no_running_processes_before_450_is_an_orphaned_allocation(faultline_bin, validate, tmp_path):
    _assert_zombie(faultline_bin, validate, tmp_path, ERA_410_NONE, "10240MiB / 16130MiB")


def test_table_that_ends_on_the_column_header_is_no_evidence(faultline_bin, validate, tmp_path):
    # A posted table that stops under the section's column header: the rows that
    # would name a process, or say there is none, are not in the log.
    text = ERA_410_GPUS.rsplit("|====", 1)[0]
    found = _incidents(faultline_bin, validate, tmp_path, text)
    assert not _zombie(found), [(i["rule"], i["explanation"]) for i in found]


def test_gi_ci_columns_from_450(faultline_bin, validate, tmp_path):
    _assert_zombie(faultline_bin, validate, tmp_path, ERA_470, "35210MiB / 40536MiB")


def test_wide_layout_from_525(faultline_bin, validate, tmp_path):
    _assert_zombie(faultline_bin, validate, tmp_path, ERA_535, "40110MiB / 81559MiB")


def test_rows_79_columns_wide_are_not_joined_as_wrapped(faultline_bin, tmp_path):
    records = scan_text(faultline_bin, tmp_path, ERA_410_EMPTY)
    borders = [r for r in records if r.get("signal") == "smi-table-border"]
    assert borders and all(r["text"].startswith("+---") and "|" not in r["text"] for r in borders), \
        [(r["line"], r["text"][:100]) for r in records]


def test_a_listed_process_owns_the_memory(faultline_bin, validate, tmp_path):
    found = _incidents(faultline_bin, validate, tmp_path, ERA_410_LISTED)
    assert not _zombie(found), [(i["rule"], i["explanation"]) for i in found]


def test_a_cut_section_is_no_evidence(faultline_bin, validate, tmp_path):
    found = _incidents(faultline_bin, validate, tmp_path, ERA_410_CUT)
    assert not _zombie(found), [(i["rule"], i["explanation"]) for i in found]


def test_idle_memory_is_no_evidence(faultline_bin, validate, tmp_path):
    found = _incidents(faultline_bin, validate, tmp_path, ERA_535_IDLE)
    assert not _zombie(found), [(i["rule"], i["explanation"]) for i in found]


def test_container_table_with_training_after_it_is_no_zombie(faultline_bin, validate, tmp_path):
    found = _incidents(faultline_bin, validate, tmp_path, ERA_535_THEN_TRAINING)
    assert not _zombie(found), [(i["rule"], i["explanation"]) for i in found]


def test_a_failure_of_the_log_leads_not_the_table(faultline_bin, validate, tmp_path):
    found = _incidents(faultline_bin, validate, tmp_path, ERA_535_THEN_FAILURE)
    assert found and not _zombie(found), [(i["rule"], i["explanation"]) for i in found]
