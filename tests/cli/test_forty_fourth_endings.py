"""Endings of the forty-fourth endings audit (tests/cli/endings, e44-*.log:
training and inference jobs on non-NVIDIA accelerators, issue #18) and the
two signals the audit added to the fallback rule:

- Habana's Synapse and its PyTorch bridge log through hl_logger:
  '[HH:MM:SS.uuuuuu][<LOGGER>][<level>][tid:<hex>] <message>'. Synapse's
  LOG_ERR marks a failure it returns as a synStatus (recipe_manager.cpp's
  'Can not compile graph' before synFail) and also reports around a failure
  its caller may go on from, so an error record is a failure only where the
  log ends in such records (synapse_logger_error_ending, field `ending`);
  the first record of them initiates.
- AWS Neuron's runtime logs its information dump at ERROR level with
  'Failure: <NRT_STATUS> in <api>()' when an API call fails
  (neuron_runtime_api_failure); the statuses the public nrt_status.h gives
  as failures are read, not the ones a caller retries or an execution that
  completed, and the same dump at INFO level at start-up is no failure.
"""
from conftest import ending_tests

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # The graph compiler could not lower a node; Synapse's recipe manager,
    # its API and the bridge report the compile that failed after it.
    "synapse-compile-error-records-end-log": ("""\
Warming up the model...
[03:14:07.100200][GC                    ][error][tid:2B11] Node reshape_17 has invalid output shape [4, 0, 128]
[03:14:07.100245][PASS_MANAGER          ][error][tid:2B11] Graph optimization failed pass: validateNodes
[03:14:07.100260][SYN_RECIPE    ][error][tid:2B11] compileGraph: Can not compile graph
[03:14:07.100281][SYN_API       ][error][tid:2B11] synGraphCompile: SYN_API_CALL failed status: 26[synFail]. graphHandle 0x5600aa10
[03:14:07.100299][PT_BRIDGE       ][error][tid:2B11] graph.cpp: 612Graph compile failed. synStatus=synStatus 26 [Generic failure]. compile
""", "Node reshape_17 has invalid output shape [4, 0, 128]"),
    # A launcher's rank prefix before the records, a critical one last.
    "synapse-ranked-records-critical-last": ("""\
[rank1]: [22:40:01.000010][SYN_API       ][error][tid:51C0] synLaunch: failed to enqueue recipe, status 26
[rank1]: [22:40:01.000030][PT_BRIDGE       ][critical][tid:51C0] Launch thread stopped
""", "synLaunch: failed to enqueue recipe, status 26"),
    # The runtime's dump at ERROR level after nrt_execute failed on a DMA
    # abort; the dump's lines after its Failure line end the log.
    "neuron-infodump-failure-execute": ("""\
2025-Feb-17 08:00:01.000100 3101:3101  INFO   NRT:nrt_init                                Neuron Runtime 2.23.1.0 built on Jan 10 2025
2025-Feb-17 09:12:44.512300 3101:3177 ERROR   NRT:nrt_infodump                            ------------->8------------[ cut here ]------------>8-------------
2025-Feb-17 09:12:44.512310 3101:3177 ERROR   NRT:nrt_infodump                            NRT version: 2.23.1.0
2025-Feb-17 09:12:44.512400 3101:3177 ERROR   NRT:nrt_infodump                            Failure: NRT_EXEC_HW_ERR_DMA_ABORT in nrt_execute()
2025-Feb-17 09:12:44.512410 3101:3177 ERROR   NRT:nrt_infodump                            Visible cores: 0-31
2025-Feb-17 09:12:44.512420 3101:3177 ERROR   NRT:nrt_infodump                            Environment:
""", "Failure: NRT_EXEC_HW_ERR_DMA_ABORT in nrt_execute()"),
}

HEALTHY = {
    # An error record the run went on from: the bridge fell back and the
    # training steps continued to the end.
    "synapse-error-record-then-training": """\
[05:00:00.000001][SYN_API       ][error][tid:3C2] synEventQuery: event not yet completed, status 9
step 100 loss 2.41
step 200 loss 2.17
step 300 loss 2.02
Training completed. Saving model to /opt/out
""",
    # Start-up information at INFO level, then the served requests.
    "neuron-infodump-at-init-then-inference": """\
2025-Feb-17 08:00:01.000100 3101:3101  INFO   NRT:nrt_init                                Neuron Runtime 2.23.1.0 built on Jan 10 2025
2025-Feb-17 08:00:01.000200 3101:3101  INFO   NRT:nrt_infodump                            Neuron runtime information - please include in any support request:
2025-Feb-17 08:00:01.000210 3101:3101  INFO   NRT:nrt_infodump                            ------------->8------------[ cut here ]------------>8-------------
2025-Feb-17 08:00:01.000220 3101:3101  INFO   NRT:nrt_infodump                            NRT version: 2.23.1.0
INFO:     127.0.0.1:50122 - "POST /v1/completions HTTP/1.1" 200 OK
INFO:     127.0.0.1:50124 - "POST /v1/completions HTTP/1.1" 200 OK
""",
}

test_failed_ending_leads, test_healthy_ending_has_no_incident = ending_tests(FAILURES, HEALTHY, FALLBACK)
