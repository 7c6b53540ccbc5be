"""Endings the thirty-first endings audit (tests/cli/endings, e31-*.log, a
random sample of failed endings from research and training repositories'
threads) gave no incident, read where the program that printed them writes
them (issue #18):

- Kaldi's job wrappers (utils/parallel/run.pl, queue.pl, slurm.pl, ssh.pl,
  pbspro.pl, copied into ESPnet's and other toolkits' recipes) run every
  step of a recipe stage; when a job exits non-zero the wrapper prints
  '<wrapper>: job failed, log is in FILE' (queue.pl: 'job failed with status
  N, log is in FILE') or, for an array of jobs, '<wrapper>: F / N failed, log
  is in FILE', and exits 1, which ends the recipe. Not read, so a recipe
  whose output ends in it got no incident. A launcher summary: the job's
  own error is in FILE.
- PyTorch's THC (THCGeneral.cpp __THCudaCheck) prints 'THCudaCheck FAIL
  file=F line=L error=N : <cudaGetErrorString>' and raises; where a
  terminal wrapped the line after its ' : ', the message is on the next
  line, and the record was not read.
"""
from conftest import ending_tests

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # An ESPnet-style recipe stage whose array of jobs all failed.
    "run-pl-array-failed": ("""\
2023-03-14T09:12:40 (asr.sh:1102:main) Stage 11: ASR Training: train_set=dump/raw/train_sp, valid_set=dump/raw/dev
2023-03-14T09:12:40 (asr.sh:1185:main) Generate 'exp/asr_train_conformer/run.sh'. You can resume the process from stage 11 using this script
2023-03-14T09:12:40 (asr.sh:1189:main) ASR training started... log: 'exp/asr_train_conformer/train.log'
run.pl: 4 / 8 failed, log is in exp/asr_train_conformer/logdir/train.*.log
""", "run.pl: 4 / 8 failed"),
    # queue.pl's one-job wording, with the job's status.
    "queue-pl-job-failed-status": ("""\
steps/align_fmllr.sh --nj 1 --cmd queue.pl data/train data/lang exp/tri3 exp/tri3_ali
steps/align_fmllr.sh: feature type is lda
queue.pl: job failed with status 137, log is in exp/tri3_ali/log/align_pass1.1.log
""", "queue.pl: job failed with status 137"),
    # The THC record whose message a terminal wrapped onto the next line,
    # over the traceback it raised (cut in its frames).
    "thcudacheck-message-wrapped": ("""\
2020-03-02 10:41:07,113 - mmdet - INFO - Epoch [1][50/7330]	lr: 0.00198, loss: 1.2254
THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=50 error=30 : 
unknown error
Traceback (most recent call last):
  File "tools/train.py", line 142, in <module>
    main()
""", "THCudaCheck FAIL"),
}

HEALTHY = {
    # A stage whose jobs all ran: the wrapper prints nothing.
    "run-pl-stage-done": """\
2023-03-14T09:12:40 (asr.sh:845:main) LM collect-stats started... log: 'exp/lm_stats/logdir/stats.*.log'
2023-03-14T09:14:02 (asr.sh:1102:main) Stage 7: LM Training: train_set=dump/raw/lm_train.txt, dev_set=dump/raw/dev/text
""",
    # The warning variant of the THC record: the program goes on.
    "thcudacheckwarn-wrapped": """\
THCudaCheckWarn FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=50 error=30 : 
unknown error
2020-03-02 10:41:09,201 - mmdet - INFO - Epoch [1][100/7330]	lr: 0.00198, loss: 1.1870
""",
}


test_failed_ending_leads, test_healthy_ending_has_no_incident = ending_tests(FAILURES, HEALTHY, FALLBACK)
