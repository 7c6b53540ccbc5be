"""Python tracebacks whose indentation was lost when they were pasted into
an issue (issue #18): CPython indents each `File "...", line N, in f` frame
by two spaces and its code line by four (traceback.py, every release; 3.11+
adds caret lines under the code), but a paste into a GitHub comment or a
chat often leaves every line at column 0. The header, a run of flat frames
each followed by at most one code line (and its carets), and the exception
line after them are read as the traceback they are: the code line under a
flat frame (`main()`, `loss.backward()`) is code, never the exception.
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"


def flat(frames, exception, carets=False, indent=""):
    """A traceback of `frames` ((file, line, function, code)) ending in
    `exception`, its frames and code lines at `indent` (CPython: two and
    four spaces), caret lines under the code when `carets` (3.11+)."""
    lines = ["Traceback (most recent call last):"]
    code_indent = indent * 2
    for path, line, func, code in frames:
        lines.append(f'{indent}File "{path}", line {line}, in {func}')
        lines.append(f"{code_indent}{code}")
        if carets:
            lines.append(f"{code_indent}{'^' * len(code)}")
    lines.append(exception)
    return "\n".join(lines) + "\n"


CONFIG_FRAMES = [
    ("train.py", 212, "<module>", "main()"),
    ("train.py", 180, "main", "optimizer = build_optimizer(cfg.optim, model)"),
    ("/w/optim/builder.py", 40, "build_optimizer", 'raise ValueError(f"unknown optimizer {name}")'),
]
CONFIG_ERROR = "ValueError: unknown optimizer adamw_8bit"

KEY_FRAMES = [
    ("tools/train.py", 97, "<module>", "main()"),
    ("tools/train.py", 61, "main", "loss.backward()"),
    ("/w/hooks.py", 12, "backward_hook", "scale = self.scales[name]"),
]
KEY_ERROR = "KeyError: 'decoder.layers.3.attn'"

# (frames, exception line, carets): CPython 3.8's shape and 3.11's.
SHAPES = {
    "py38-value-error": (CONFIG_FRAMES, CONFIG_ERROR, False),
    "py311-value-error-carets": (CONFIG_FRAMES, CONFIG_ERROR, True),
    "py38-key-error": (KEY_FRAMES, KEY_ERROR, False),
    "py311-key-error-carets": (KEY_FRAMES, KEY_ERROR, True),
}

LOG_HEAD = """\
2024-05-02 10:11:02,113 - INFO - loading config configs/base.yaml
2024-05-02 10:11:04,902 - INFO - model built: 124.4M parameters
"""


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_flat_traceback_leads_with_its_exception_line(faultline_bin, validate, tmp_path, name):
    frames, exception, carets = SHAPES[name]
    text = LOG_HEAD + flat(frames, exception, carets)
    inc = leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=exception)
    # The frames fold into the exception line's evidence: the innermost one
    # is where it was raised, the code lines are no frame of it.
    fields = inc["initiating"]["evidence"][0]["fields"]
    path, line, func, _ = frames[-1]
    assert fields.get("raised_at") == f"{path}:{line} in {func}", fields
    assert fields.get("traceback") == " > ".join(f"{p}:{n} in {f}" for p, n, f, _ in frames), fields


# Counterpart: the same tracebacks as CPython prints them (indented) lead
# with the same line.
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_indented_traceback_leads_with_its_exception_line(faultline_bin, validate, tmp_path, name):
    frames, exception, carets = SHAPES[name]
    text = LOG_HEAD + flat(frames, exception, carets, indent="  ")
    inc = leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=exception)
    path, line, func, _ = frames[-1]
    assert inc["initiating"]["evidence"][0]["fields"].get("raised_at") == f"{path}:{line} in {func}"


# A flat traceback cut in its frames (the paste stops there) after a log
# that goes on is no incident; one the log ends in is read as cut there,
# as an indented one is.
@pytest.mark.parametrize("indent", ["", "  "])
def test_traceback_cut_in_frames_ending_the_log(faultline_bin, validate, tmp_path, indent):
    text = LOG_HEAD + flat(CONFIG_FRAMES, "", indent=indent).rstrip("\n") + "\n"
    incs = diagnose_text(faultline_bin, validate, tmp_path, text)
    assert incs, "a traceback the log ends in is its ending"


# Lines that merely start with `File "` in a healthy log are no traceback.
def test_file_lines_without_a_header_are_no_incident(faultline_bin, validate, tmp_path):
    text = LOG_HEAD + 'File "configs/base.yaml", line 3, in model\nlr: 0.0003\n' \
        "2024-05-02 10:11:05,001 - INFO - epoch 1 step 10 loss 2.31\n"
    assert not diagnose_text(faultline_bin, validate, tmp_path, text)
