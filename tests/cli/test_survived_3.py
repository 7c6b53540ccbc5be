"""Endings the third fatal-vs-survived audit (tests/cli/endings, sv3-*.log)
read wrong, read where the program that printed them writes them (issue
#18):

- glibc's "Aborted" is read as a crash report only where a report puts it:
  padded to the job report's column, alone, or before "(core dumped)" or the
  signal's number in parentheses. vLLM logs "Aborted request <id>." at INFO
  for every request a client dropped while the server kept serving; that is
  a sentence, not SIGABRT.
- LLVM's report_fatal_error writes "LLVM ERROR: <reason>" to stderr and
  aborts: in a DataLoader worker, the main process then reports the worker
  "killed by signal: Aborted", which is that line's doing.
- vLLM's V0 engine loop logs "Engine iteration timed out. This should never
  happen!" before it marks the engine errored; "Engine background task
  failed" is the same timeout's traceback.
- The legacy SageMaker containers' trainer logs "uncaught exception during
  training: <message>" at ERROR as it exits; the exception's own line (a
  TensorFlow op failing to save a checkpoint to S3) was only a warning.
- Progress after an error shows the run went on only where it moved: a
  progress line that states a step must pass the last step stated before
  the error, or differ from the other lines after it, or (with no step
  stated before) not be where the log ends. tqdm's close() redraws a bar at
  the count it reached when the interpreter tears down after an uncaught
  exception, so the bar of the step that raised follows the traceback.
"""
import pathlib

from conftest import diagnose_path, initiating_texts

ENDINGS = pathlib.Path(__file__).resolve().parent / "endings"


def incidents(binary, validate, name):
    return diagnose_path(binary, validate, ENDINGS / f"{name}.log")


def test_vllm_aborted_request_is_no_crash(faultline_bin, validate):
    # Metrics lines, then nine "Aborted request cmpl-...-N." lines: the
    # server dropped a client's requests and went on.
    assert incidents(faultline_bin, validate, "sv3-vllm-aborted-requests-metrics") == []


def test_llvm_fatal_error_leads_the_worker_abort(faultline_bin, validate):
    found = incidents(faultline_bin, validate, "sv3-llvm-error-dataloader-worker-aborted")
    assert found, "no incident"
    texts = initiating_texts(found[0])
    assert texts and "LLVM ERROR: pthread_join failed" in texts[0], texts


def test_vllm_engine_iteration_timeout_leads(faultline_bin, validate):
    found = incidents(faultline_bin, validate, "sv3-vllm-engine-iteration-timeout-after-metrics")
    assert found and found[0]["rule"] == "vllm-engine-dead", found and found[0]["explanation"]
    texts = initiating_texts(found[0])
    assert texts and "Engine iteration timed out" in texts[0], texts


def test_sagemaker_uncaught_exception_is_fatal(faultline_bin, validate):
    found = incidents(faultline_bin, validate, "sv3-tf-s3-checkpoint-save-uncaught")
    assert found, "no incident"
    texts = initiating_texts(found[0])
    assert any("uncaught exception during training" in t for t in texts), texts


def test_bar_redrawn_after_the_traceback_is_no_progress(faultline_bin, validate):
    # kohya's run: "RuntimeError: CUDA error: the launch timed out and was
    # terminated", then its tqdm bar at 3/5400 as the interpreter closed it.
    # The bar did not move past where it stood when the step raised.
    found = incidents(faultline_bin, validate, "e15-windows-launch-timed-out-kohya")
    assert found, "no incident"
    assert not found[0]["initiating"].get("survived", False), found[0]["explanation"]


def test_one_progress_line_mid_log_is_still_progress(faultline_bin, validate):
    # NCCL's failed allocation, then "Train Epoch: 1 [2700/246000 (18%)]" and
    # more of the run's lines: the run went on.
    found = incidents(faultline_bin, validate, "e8-nccl-warn-alloc-failed-then-epochs")
    assert not found or found[0]["initiating"].get("survived") or found[0]["reference"].startswith("Benign"), \
        found[0]["explanation"]
