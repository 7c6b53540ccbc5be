"""An exception raised under torch.save's zip-writer frame (the writer that
opens the checkpoint file) is the save failing to open or write its file:
checkpoint-corrupt-write, with the exception line as initiating evidence.
The same exception under the reader's frame is a load, not a save."""

from conftest import leading_incident

SAVE = """\
Traceback (most recent call last):
  File "/opt/proj/train.py", line 227, in train
    torch.save({'model_state_dict': network.state_dict()}, path)
  File "/opt/venv/lib/python3.9/site-packages/torch/serialization.py", line 422, in save
    with _open_zipfile_writer(f) as opened_zipfile:
  File "/opt/venv/lib/python3.9/site-packages/torch/serialization.py", line 309, in _open_zipfile_writer
    return container(name_or_buffer)
  File "/opt/venv/lib/python3.9/site-packages/torch/serialization.py", line 287, in __init__
    super(_open_zipfile_writer_file, self).__init__(torch._C.PyTorchFileWriter(str(name)))
RuntimeError: File out/checkpoints/checkpoint_0.pt cannot be opened.
"""


def test_exception_under_the_writer_frame_is_a_failed_save(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, SAVE, rule="checkpoint-corrupt-write",
                     any_line="RuntimeError: File out/checkpoints/checkpoint_0.pt cannot be opened.")
