"""Endings the sixth endings audit (tests/cli/endings, e6-*.log) read as
nothing, read where the program that printed them draws them (issue #18):

- rich's traceback panel (its ROUNDED box: "╭───╮", "│ ... │", "╰───╯")
  is drawn to the console's full width, as are its panels and tables of
  the other boxes. In a capture hard-wrapped at that width (the exception's
  message, wrapped by the same console) a line that ends in a box-drawing
  character (U+2500-U+257F) is a frame's edge, not a wrapped line: it
  continues nothing (bitsandbytes' "RuntimeError: " under the panel's
  bottom edge was glued to it), and it is no evidence that the capture is
  wrapped (a log of rich panels is not a hard-wrapped capture, so its plain
  lines of the same width stay whole).
- bash's "Killed" lands at the end of the progress bar the job was drawing
  with carriage returns: Keras' Progbar as well as tqdm's ("n/total
  [====>....] - ETA: t - loss: v" in Keras 2, "n/total ━━━━ t Nms/step -
  loss: v" in Keras 3, values printed "%.4f" or "%.4e", padded with spaces
  when the line shrinks).
- A notebook's kernel that died: VS Code's Jupyter extension writes "The
  Kernel crashed while executing code in the current cell or a previous
  cell." as the cell's error; a notebook server logs jupyter_client's
  "KernelRestarter: restarting kernel (N/M)" -- a failure only where the log
  ends in it, since a runtime restarted on purpose goes on.
"""
import pytest

from conftest import diagnose_text, first_incident, initiating_texts, leading_incident

WIDTH = 80
# bitsandbytes' cuda_setup raises RuntimeError with a message that starts on
# a new line: the class alone on its line, the message indented below it.
BNB_ERROR = ["RuntimeError: ", "        CUDA Setup failed despite GPU being available. Please run the following"]


def box(top_left, fill, top_right, content=None):
    """One line of a rich panel WIDTH columns wide: an edge ("╭", "─",
    "╮") or, given `content`, a content line between two verticals."""
    if content is None:
        return top_left + fill * (WIDTH - 2) + top_right
    return "│" + f" {content}".ljust(WIDTH - 2) + "│"


def panel(*contents):
    return [box("╭", "─", "╮"), *(box("", "", "", c) for c in contents), box("╰", "─", "╯")]


def wrapped(message):
    """A message longer than WIDTH as the console hard-wrapped it."""
    return [message[i:i + WIDTH] for i in range(0, len(message), WIDTH)]


def test_panel_edge_does_not_continue_on_the_exception_line(faultline_bin, validate, tmp_path):
    # A console 80 columns wide: four of its lines wrapped, then rich's
    # traceback panel, then the exception below the panel's bottom edge.
    lines = []
    for step in range(4):
        lines += wrapped(f"Loading shard {step} of the engine weights into the GPU memory pool, reading "
                         f"them from the model directory /opt/models/llama-70b/model-0000{step}.safetensors")
    lines += panel("/opt/app/train.py:88 in <module>", "❱ 88 model = load_model_8bit(args)")
    lines += BNB_ERROR
    assert sum(len(line) == WIDTH for line in lines[:8]) == 4
    inc = first_incident(faultline_bin, validate, tmp_path, "\n".join(lines) + "\n")
    assert initiating_texts(inc)[:2] == BNB_ERROR, initiating_texts(inc)


def test_panels_are_no_evidence_of_a_hard_wrap(faultline_bin, validate, tmp_path):
    # Progress reported in rich panels, each followed by a plain line; then a
    # plain line that happens to be 80 columns wide, and the error. Nothing
    # was wrapped: the error stands on its own line.
    lines = []
    for step in range(1, 5):
        lines += panel(f"step {step * 100}: loss 2.{step}1, lr 3.0e-4")
        lines.append(f"saved checkpoint step {step * 100}")
    lines.append("evaluating on the held-out split: 512 prompts, max 2048 new tokens each, greedy.")
    lines += BNB_ERROR
    assert len(lines[-3]) == WIDTH
    inc = first_incident(faultline_bin, validate, tmp_path, "\n".join(lines) + "\n")
    assert initiating_texts(inc)[:2] == BNB_ERROR, initiating_texts(inc)


@pytest.mark.parametrize("bar", [
    # Keras 2: frames redrawn with backspaces and a carriage return.
    "   1/1875 [..............................] - ETA: 31:12 - loss: 2.3026 - accuracy: 0.0938" + "\b" * 86 +
    "\r  35/1875 [..............................] - ETA: 2:47 - loss: 1.9122 - accuracy: 0.4268   ",
    # Keras 3: bold count, green and grey bar of U+2501, bold ETA.
    "\x1b[1m 512/1875\x1b[0m \x1b[32m━━━━━\x1b[0m\x1b[37m━━━━━━━━━━━━━━━\x1b[0m \x1b[1m1:02\x1b[0m"
    " 3ms/step - accuracy: 0.8612 - loss: 4.5210e-04",
])
def test_killed_after_keras_progbar(faultline_bin, validate, tmp_path, bar):
    leading_incident(faultline_bin, validate, tmp_path, f"Epoch 1/10\n{bar}Killed\n",
                     rule="process-sigkilled", line="Killed")


def test_finished_keras_epochs_are_no_incident(faultline_bin, validate, tmp_path):
    assert diagnose_text(faultline_bin, validate, tmp_path, """\
Epoch 1/2
1875/1875 [==============================] - 5s 3ms/step - loss: 0.2034 - accuracy: 0.9412
Epoch 2/2
1875/1875 [==============================] - 5s 3ms/step - loss: 0.0871 - accuracy: 0.9733
""") == []


FALLBACK = "unrecognised-fatal-error"


def test_vscode_kernel_crash_is_a_failure(faultline_bin, validate, tmp_path):
    # The extension's lines end in a space.
    text = "".join(line + " \n" for line in [
        "The Kernel crashed while executing code in the current cell or a previous cell.",
        "Please review the code in the cell(s) to identify a possible cause of the failure.",
        "Click <a href='https://aka.ms/vscodeJupyterKernelCrash'>here</a> for more info.",
        "View Jupyter <a href='command:jupyter.viewOutput'>log</a> for further details.",
    ])
    leading_incident(faultline_bin, validate, tmp_path, "Epoch 3/10: loss 0.4121\n" + text,
                     rule=FALLBACK, line="The Kernel crashed while executing code")


def test_kernel_restart_at_the_end_is_a_failure(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, """\
[I 10:11:00.000 NotebookApp] Kernel started: 1c2d7e00-0b5e-4f55-9d0e-5b1f3f0a8c21
[I 10:41:12.345 NotebookApp] KernelRestarter: restarting kernel (1/5), keep random ports
WARNING:root:kernel 1c2d7e00-0b5e-4f55-9d0e-5b1f3f0a8c21 restarted
""", rule=FALLBACK, line="KernelRestarter: restarting kernel (1/5)")


def test_kernel_restarted_on_purpose_goes_on(faultline_bin, validate, tmp_path):
    # Colab's runtime restart after installing packages: the notebook ran on.
    assert diagnose_text(faultline_bin, validate, tmp_path, """\
AsyncIOLoopKernelRestarter: restarting kernel (1/5)
kernel 7d7131c1-98ec-4ba0-aec5-08bdc57a6423 restarted
Epoch 1: 100%|██████████| 100/100 [00:10<00:00,  9.8it/s]
Epoch 2: 100%|██████████| 100/100 [00:10<00:00,  9.9it/s]
""") == []
