"""Endings the forty-second endings audit (tests/cli/endings, e42-*.log,
GPU training jobs that failed in their data and storage path: DataLoader
workers, /dev/shm, object stores, Hub downloads, full disks at checkpoint
save) left with no incident, read where the program that printed them
writes them (issue #18):

- Monarch (the actor runtime torchforge runs its trainers on) ends the
  client when a supervision event reaches the root actor and its
  unhandled_fault_hook does not handle it. v0.1.0 logs 'Unhandled mesh
  failure, crashing! <failure>' and exits 1; v0.2.0 on write 'Unhandled
  monarch error on the root actor' (': <report>', then from v0.3.0 ',
  hostname=<h>, PID=<pid> at time <t>: ...'), printed only on the path
  that ends the client. The line is the failure; no exception line need
  follow it.
"""
from conftest import ending_tests

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # v0.1.0's logger line, ending a GRPO run between two reward printouts.
    "monarch-v01-crashing-after-rewards": ("""\
step 412 reward_mean=0.62 kl=0.018
step 413 reward_mean=0.64 kl=0.019
Unhandled mesh failure, crashing! MeshFailure(rank=2, event=unix:@Zr41,policy_0_Qp,Policy_Lm[2]: failed: did not handle supervision event at 2026-02-03 10:11:12.000000000 +00:00: (caused by: unix:@Zr41,policy_0_Qp,Policy_Lm[2]: failed: serving: processing error
""", "Unhandled mesh failure, crashing!"),
    # v0.3.0's one-line report under a Python logging prefix of the trainer.
    "monarch-v03-root-actor-hostname": ("""\
[2026-01-09 11:01:58] INFO trainer: saving checkpoint step_800 to /ckpt/run7
Unhandled monarch error on the root actor, hostname=node-17, PID=40211 at time 2026-01-09 11:02:03.117823: actor <root>.<trainer>[3] failed: did not handle supervision event
""", "Unhandled monarch error on the root actor"),
    # v0.4.1 on: the header line, then the report on the following lines.
    "monarch-v05-root-actor-report-below": ("""\
[titan] 2026-04-22 07:40:10,551 - root - INFO - step:  90  loss:  2.8114  memory: 61.2GiB
Unhandled monarch error on the root actor, hostname=h100-b-12, PID=5521 at time 2026-04-22 07:40:31.902114:
A failure occurred in actor <root>.<trainer_0>[1]
  the proc that hosted it stopped responding to the mesh
""", "Unhandled monarch error on the root actor, hostname=h100-b-12"),
}

HEALTHY = {
    # A replaced hook that logs and returns drops the fault: the run goes on.
    "monarch-lenient-hook-run-goes-on": """\
step 120 reward_mean=0.41
unhandled mesh failure (suppressed; handled at call site): actor data_worker[1] failed
respawned data_worker[1]
step 121 reward_mean=0.43
step 122 reward_mean=0.44
""",
    # Monarch's Rust side reporting the event on its way to the hook is not the
    # hook's verdict; a training step followed.
    "monarch-rust-event-reached-hook-then-steps": """\
[-]E0203 10:11:12.480453 3280271 monarch_hyperactor/src/v1/actor_mesh.rs:258] unhandled event reached unhandled_fault_hook: MeshFailure(rank=1, event=actor stopped)
Mesh failure was not handled: MeshFailure(rank=1, event=actor stopped)
step 414 reward_mean=0.65 kl=0.020
""",
}


test_failed_ending_leads, test_healthy_ending_has_no_incident = ending_tests(FAILURES, HEALTHY, FALLBACK)
