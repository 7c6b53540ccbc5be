"""The kernel's OOM report (mm/oom_kill.c) opens with dump_header's
"<comm> invoked oom-killer: gfp_mask=..., order=N, oom_score_adj=N" line,
then the task's cpuset, a call trace and Mem-Info, and only then the kill
("Out of memory: Killed process N (comm)", or "Memory cgroup out of memory:
Killed process" when a cgroup's limit was hit). A report cut before its
kill line (a dmesg excerpt pasted into a thread, a ring buffer that wrapped)
still says the OOM killer ran: the header alone names a host OOM kill, as
a symptom with no initiating line, and a report that goes on to its cgroup
kill line stays the cgroup's (issue #18: a failed job with no incident)."""
from conftest import diagnose_text, first_incident

CUT_REPORT = """\
[  912.402113] python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0
[  912.402120] CPU: 11 PID: 48213 Comm: python3 Tainted: P           OE     5.15.0-91-generic #101-Ubuntu
[  912.402122] Hardware name: Supermicro SYS-4029GP-TRT/X11DPG-OT-CPU, BIOS 3.4 06/08/2021
[  912.402124] Call Trace:
[  912.402125]  <TASK>
[  912.402128]  dump_stack_lvl+0x4a/0x63
[  912.402133]  dump_header+0x4a/0x1f4
[  912.402136]  oom_kill_process.cold+0xb/0x10
"""

CGROUP_REPORT = CUT_REPORT + """\
[  912.402301] memory: usage 16777216kB, limit 16777216kB, failcnt 1042
[  912.402420] Memory cgroup out of memory: Killed process 48213 (python3) total-vm:41234560kB, anon-rss:16512340kB, file-rss:81920kB, shmem-rss:0kB, UID:1000 pgtables:33212kB oom_score_adj:0
"""


def test_a_report_cut_after_its_header_is_a_host_oom_kill(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, CUT_REPORT, "dmesg.log")
    assert inc["rule"] == "host-oom-kill", inc["explanation"]
    texts = [e["text"] for e in inc["evidence"]] if "evidence" in inc else []
    texts += [e["text"] for e in (inc.get("initiating") or {}).get("evidence", [])]
    assert any("invoked oom-killer" in t for t in texts), texts


def test_a_whole_cgroup_report_stays_the_cgroups(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, CGROUP_REPORT, "dmesg.log")
    assert found and found[0]["rule"] == "cgroup-oom", [i["rule"] for i in found]
