"""Endings of failed jobs that a scheduler or a library writes in its own
words, from the twenty-fourth corpus batch's work part:

- Moab, enforcing a Torque job's memory request (RESOURCELIMITPOLICY MEM
  with CANCEL), deletes the job and mails its owner 'job N exceeded MEM
  usage hard limit (USED > LIMIT)' under Torque's 'Job deleted at request
  of root@<server>'. That is a scheduler's memory-limit kill, as PBS's own
  '=>> PBS: job killed: mem ... exceeded limit ...' is; the soft limit only
  notifies and the job goes on.
- torch_memory_saver (the allocator SGLang releases and re-maps GPU memory
  with) checks each CUDA call and exits with status 1 on a failure:
  '[torch_memory_saver.cpp] CUresult error result=N ...' up to mid-2025,
  '[torch_memory_saver.cpp] CUresult error: N (<text>) ...' and
  'cudaError error: N (<text>) ...' since (csrc/utils.h). Code 2 is out of
  memory (CUDA_ERROR_OUT_OF_MEMORY, cudaErrorMemoryAllocation); any other
  code is a failure no catalog rule names.
- SGLang's launcher reports each child that ended with a non-zero wait
  status: 'Child process unexpectedly failed with an exit code %d. pid=%d'
  (up to 0.4.x), 'Child process unexpectedly failed with exitcode=N. pid=P'
  (since). It reports the exit, not its cause: the child's own line above
  it leads.
"""
from conftest import diagnose_text, first_incident, initiating_texts, leading_incident


MOAB_MAIL = """\
PBS Job Id: 10086535.dccn-l029.dccn.nl
Job Name:   fake_app
Exec host:  dccn-c365.dccn.nl/0
job deleted
Job deleted at request of root@dccn-l029.dccn.nl
job 10086535 exceeded MEM usage hard limit (516 > 140)
"""

TMS_INVALID = """\
[2025-07-28 10:12:03 TP0] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=61.2 GB
[torch_memory_saver.cpp] CUresult error: 1 (invalid argument) file=csrc/core.cpp func=free line=66
[torch_memory_saver.cpp] CUresult error: 1 (invalid argument) file=csrc/core.cpp func=free line=66
[2025-07-28 10:12:09] Child process unexpectedly failed with exitcode=256. pid=97721
[2025-07-28 10:12:09] Child process unexpectedly failed with exitcode=256. pid=97719
"""

TMS_OLD_FORM = """\
[torch_memory_saver.cpp] CUresult error  result=700 file=csrc/torch_memory_saver.cpp func=resume line=214
Child process unexpectedly failed with an exit code 256. pid=32885
"""

TMS_OUT_OF_MEMORY = """\
[torch_memory_saver.cpp] CUresult error result=2 file=csrc/torch_memory_saver.cpp func=cu_mem_create line=104
Child process unexpectedly failed with an exit code 256. pid=32885
"""


def test_moab_memory_hard_limit_is_a_memory_limit_kill(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, MOAB_MAIL, rule="cgroup-oom",
                     line="exceeded MEM usage hard limit (516 > 140)")


def test_moab_memory_soft_limit_is_no_failure(faultline_bin, validate, tmp_path):
    soft = MOAB_MAIL.replace("job deleted\nJob deleted at request of root@dccn-l029.dccn.nl\n", "").replace(
        "hard limit", "soft limit")
    assert not diagnose_text(faultline_bin, validate, tmp_path, soft)


def test_torch_memory_saver_failure_leads_sglangs_child_exits(faultline_bin, validate, tmp_path):
    inc = leading_incident(faultline_bin, validate, tmp_path, TMS_INVALID, rule="unrecognised-fatal-error",
                           line="CUresult error: 1 (invalid argument)")
    assert not any("Child process unexpectedly failed" in t for t in initiating_texts(inc))


def test_torch_memory_saver_old_message_form(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, TMS_OLD_FORM, rule="unrecognised-fatal-error",
                     line="CUresult error  result=700")


def test_torch_memory_saver_out_of_memory_is_cuda_oom(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, TMS_OUT_OF_MEMORY, rule="cuda-oom",
                     line="CUresult error result=2")


def test_sglang_child_exit_alone_is_a_failure(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path,
                         "[2025-07-22 09:41:13] Child process unexpectedly failed with exitcode=9. pid=211\n")
    assert inc["rule"] == "unrecognised-fatal-error", inc["explanation"]
