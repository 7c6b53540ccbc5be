"""Job-level failures (and one non-failure) from the twenty-seventh corpus
batch's work part:

- A checkpoint serializer that raised while writing leaves the file it was
  writing short: an exception no catalog rule reads whose traceback runs
  through torch.save (torch/serialization.py: save, _save, _legacy_save),
  safetensors' save_file (safetensors/torch.py) or a model's save_weights
  (Keras, DeepFaceLab's leras Saveable) is a partial checkpoint save, with
  the frame and that exception's line as its initiating lines (the
  fallback's adoption by frame). The write error chained after it (torch's
  'unexpected pos' from the zip writer's end of file) is its effect: once
  the frames took their exception the causes are linked again, and an
  explicit edge decides a tie of two seen, untimed failures on one layer.
- CPython reports an exception that ended a thread other than the main one
  as 'Exception in thread <name>:' and its traceback (threading.excepthook
  since 3.8, Thread._bootstrap_inner before): the thread is gone, the
  process goes on, so that traceback is no job failure by itself, as with
  'Exception ignored in:'.
"""
from conftest import diagnose_text, leading_incident

PARTIAL_SAVE = "Checkpoint Partial Save"

TORCH_SAVE = """\
Epoch 12: 100%|##########| 1563/1563 [09:41<00:00,  2.69it/s, loss=0.412]
Saving checkpoint to /data/runs/exp7/epoch=12.ckpt
Traceback (most recent call last):
  File "train.py", line 214, in <module>
    torch.save(state, ckpt_path)
  File "/opt/conda/lib/python3.10/site-packages/torch/serialization.py", line 619, in save
    _save(obj, opened_zipfile, pickle_module, pickle_protocol, _disable_byteorder_record)
  File "/opt/conda/lib/python3.10/site-packages/torch/serialization.py", line 831, in _save
    pickler.dump(obj)
MemoryError
"""

SAFETENSORS_SAVE = """\
Traceback (most recent call last):
  File "convert.py", line 88, in <module>
    save_file(tensors, out_path, metadata={"format": "pt"})
  File "/usr/local/lib/python3.11/dist-packages/safetensors/torch.py", line 286, in save_file
    serialize_file(_flatten(tensors), filename, metadata=metadata)
MemoryError
"""

SAVE_WEIGHTS = """\
[12:04:31][#041200][0912ms][0.2213][0.2378]
Traceback (most recent call last):
  File "/opt/dfl/mainscripts/Trainer.py", line 68, in model_save
    model.save()
  File "/opt/dfl/models/ModelBase.py", line 393, in save
    self.onSave()
  File "/opt/dfl/models/Model_SAEHD/Model.py", line 759, in onSave
    model.save_weights ( self.get_strpath_storage_for_file(filename) )
  File "/opt/dfl/core/leras/layers/Saveable.py", line 61, in save_weights
    d_dumped = pickle.dumps (d, 4)
MemoryError
"""

CHAINED_SAVE = """\
Traceback (most recent call last):
  File "/opt/conda/lib/python3.8/site-packages/torch/serialization.py", line 379, in save
    _save(obj, opened_zipfile, pickle_module, pickle_protocol)
  File "/opt/conda/lib/python3.8/site-packages/torch/serialization.py", line 499, in _save
    zip_file.write_record(name, storage.data_ptr(), num_bytes)
MemoryError

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/opt/conda/lib/python3.8/site-packages/torch/serialization.py", line 380, in save
    return
  File "/opt/conda/lib/python3.8/site-packages/torch/serialization.py", line 259, in __exit__
    self.file_like.write_end_of_file()
RuntimeError: [enforce fail at inline_container.cc:300] . unexpected pos 6057217600 vs 6057217496
"""

FORWARD_MEMORY_ERROR = """\
Traceback (most recent call last):
  File "train.py", line 190, in <module>
    out = model(batch)
  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl
    return forward_call(*args, **kwargs)
  File "/opt/models/net.py", line 77, in forward
    feats = np.concatenate(chunks)
MemoryError
"""

THREAD_ENDED = """\
iteration: 41000 loss: 0.0021 lr: 0.002
iteration: 42000 loss: 0.0020 lr: 0.002
Exception in thread Thread-66:
Traceback (most recent call last):
  File "/opt/conda/lib/python3.7/site-packages/tensorflow/python/client/session.py", line 1334, in _do_call
    return fn(*args)
  File "/opt/conda/lib/python3.7/site-packages/tensorflow/python/client/session.py", line 1407, in _call_tf_sessionrun
    run_metadata)
tensorflow.python.framework.errors_impl.CancelledError: Enqueue operation was cancelled
         [[{{node fifo_queue_enqueue}}]]
The network is now trained and ready to evaluate.
"""


def test_an_exception_inside_torch_save_is_a_partial_save(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, TORCH_SAVE, reference=PARTIAL_SAVE, any_line="MemoryError")


def test_an_exception_inside_safetensors_save_file_is_a_partial_save(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, SAFETENSORS_SAVE, reference=PARTIAL_SAVE,
                     any_line="MemoryError")


def test_an_exception_inside_save_weights_is_a_partial_save(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, SAVE_WEIGHTS, reference=PARTIAL_SAVE, any_line="MemoryError")


def test_the_write_error_chained_after_it_is_its_effect(faultline_bin, validate, tmp_path):
    inc = leading_incident(faultline_bin, validate, tmp_path, CHAINED_SAVE, reference=PARTIAL_SAVE,
                           any_line="MemoryError")
    assert not any("unexpected pos" in t for t in
                   [e["text"] for e in inc["initiating"]["evidence"]]), inc["initiating"]


def test_the_same_exception_outside_a_save_is_no_partial_save(faultline_bin, validate, tmp_path):
    incs = diagnose_text(faultline_bin, validate, tmp_path, FORWARD_MEMORY_ERROR)
    assert incs and incs[0]["reference"] != PARTIAL_SAVE, [i["rule"] for i in incs]


def test_an_exception_that_ended_a_thread_is_no_job_failure(faultline_bin, validate, tmp_path):
    assert not diagnose_text(faultline_bin, validate, tmp_path, THREAD_ENDED)


def test_the_main_threads_exception_after_a_thread_report_is_still_the_failure(faultline_bin, validate, tmp_path):
    text = THREAD_ENDED.replace(
        "The network is now trained and ready to evaluate.\n",
        "Traceback (most recent call last):\n"
        "  File \"train.py\", line 52, in <module>\n"
        "    main()\n"
        "ValueError: could not broadcast input array from shape (32,3) into shape (32,2)\n")
    leading_incident(faultline_bin, validate, tmp_path, text, rule="unrecognised-fatal-error",
                     line="ValueError: could not broadcast input array")
