"""A kubelet eviction is read by the resource it names: memory starvation of
the node ("The node was low on resource: memory.", MemoryPressure) is a host
memory failure (OOM Killed Mid-Step), while an eviction to make room for
another pod (priority preemption) or for a resource without a catalog entry
of its own stays a preemption."""
import json

import pytest

from conftest import run

MEMORY = ("The node was low on resource: memory. Threshold quantity: 100Mi, available: 91236Ki. "
          "Container pytorch was using 58811234Ki, request is 16Gi, has larger consumption of memory.")


def describe(status_lines):
    """`kubectl describe pod` of a failed training worker."""
    return "\n".join(["Name:             trainer-worker-1", "Namespace:        training",
                      "Priority:         0", "Node:             gpu-node-3/10.0.0.13",
                      "Status:           Failed"] + status_lines +
                     ["IP:               10.244.0.4", "Containers:", "  pytorch:",
                      "    Image:          nvcr.io/nvidia/pytorch:24.05-py3"]) + "\n"


def primary(faultline_bin, validate, tmp_path, text):
    log = tmp_path / "describe.txt"
    log.write_text(text)
    p = run(faultline_bin, "diagnose", "--json", str(log), check=False)
    assert p.returncode == 0, p.stderr.decode()
    doc = json.loads(p.stdout)
    validate(doc)
    assert doc["incidents"], "no incident"
    return doc["incidents"][0]


@pytest.mark.parametrize("message", [MEMORY, "The node had condition: [MemoryPressure]."])
def test_memory_eviction_is_host_memory(faultline_bin, validate, tmp_path, message):
    inc = primary(faultline_bin, validate, tmp_path,
                  describe(["Reason:           Evicted", "Message:          " + message]))
    assert inc["rule"] == "k8s-node-memory-eviction", inc["explanation"]
    assert inc["reference"] == "OOM Killed Mid-Step"


@pytest.mark.parametrize("status", [
    ["Reason:           Evicted",
     "Message:          The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, "
     "available: 9123456Ki."],
    ["Reason:           Preempting", "Message:          Preempted in order to admit critical pod"],
    ["Conditions:", "  Type              Status", "  DisruptionTarget  True",
     "    reason: PreemptionByScheduler"],
])
def test_other_evictions_stay_preemption(faultline_bin, validate, tmp_path, status):
    inc = primary(faultline_bin, validate, tmp_path, describe(status))
    assert inc["rule"] == "preemption", inc["explanation"]
