"""Endings the thirty-ninth endings audit (tests/cli/endings, e39-*.log, a
random sample of managed and cloud platforms' job logs: SageMaker, Vertex
AI, Azure ML, Databricks, Modal, RunPod, SkyPilot, Kubeflow, the NVIDIA GPU
Operator) gave the wrong first line, read where the program that printed
them writes them (issue #18):

- Modal's end of an app whose local entrypoint raised: the client sends
  repr() of the exception with the disconnect reason (modal/runner.py
  _status_based_disconnect) and the app's log stream prints 'Stopping app -
  uncaught exception raised locally: <repr>.'. The exception's class stands
  before a parenthesis, with no colon, so no exception rule read it, and an
  IPython traceback printed after it led with its header. A SystemExit with
  status 0 or none is a clean exit.
"""
from conftest import ending_tests

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # modal run from a notebook: the image build failed remotely, the cell's
    # IPython traceback follows the app's stop line.
    "modal-remote-error-over-ipython-traceback": ("""\
✓ Initialized. View run at https://modal.com/apps/acme/main/ap-Q1w2E3r4T5y6U7i8O9p0
Building image im-Zx8Cv7Bn6Mm5Ll4Kk3Jj2H

=> Step 0: FROM base
=> Step 1: RUN pip install flash-attn==2.5.8
Stopping app - uncaught exception raised locally: RemoteError('Image build for im-Zx8Cv7Bn6Mm5Ll4Kk3Jj2H failed. See build logs for more details.').
---------------------------------------------------------------------------
RemoteError                               Traceback (most recent call last)
Cell In[4], line 1
----> 1 result = finetune.remote(cfg)
""", "Stopping app - uncaught exception raised locally: RemoteError("),
    # modal run of a script that called sys.exit(3) after its check failed.
    "modal-systemexit-nonzero": ("""\
✓ Initialized. View run at https://modal.com/apps/acme/main/ap-A1s2D3f4G5h6J7k8L9z0
✓ Created objects.
evaluation incomplete: 12 of 400 shards missing
Stopping app - uncaught exception raised locally: SystemExit(3).
""", "SystemExit(3)"),
}

HEALTHY = {
    # sys.exit(0) in the local entrypoint: Modal reports the SystemExit, a clean exit.
    "modal-systemexit-zero": """\
✓ Initialized. View run at https://modal.com/apps/acme/main/ap-B2n3M4q5W6e7R8t9Y0u1
✓ Created objects.
evaluation complete: 400 of 400 shards
Stopping app - uncaught exception raised locally: SystemExit(0).
""",
    # A run the user interrupted is not an uncaught exception.
    "modal-disconnect-on-interrupt": """\
✓ Initialized. View run at https://modal.com/apps/acme/main/ap-C3v4B5n6M7q8W9e0R1t2
step 1200 loss 1.874
Disconnecting from Modal - This will terminate your Modal app in a few seconds.
""",
}


test_failed_ending_leads, test_healthy_ending_has_no_incident = ending_tests(FAILURES, HEALTHY, FALLBACK)
