"""A kubelet eviction is read by the resource it names: memory starvation of
the node ("The node was low on resource: memory.", MemoryPressure) is a host
memory failure (OOM Killed Mid-Step), while an eviction to make room for
another pod (priority preemption) or for a resource without a catalog entry
of its own stays a preemption."""
import pytest

from conftest import first_incident

MEMORY = ("The node was low on resource: memory. Threshold quantity: 100Mi, available: 91236Ki. "
          "Container pytorch was using 58811234Ki, request is 16Gi, has larger consumption of memory.")


def describe(status_lines):
    """`kubectl describe pod` of a failed training worker."""
    return "\n".join(["Name:             trainer-worker-1", "Namespace:        training",
                      "Priority:         0", "Node:             gpu-node-3/10.0.0.13",
                      "Status:           Failed"] + status_lines +
                     ["IP:               10.244.0.4", "Containers:", "  pytorch:",
                      "    Image:          nvcr.io/nvidia/pytorch:24.05-py3"]) + "\n"


@pytest.mark.parametrize("message", [MEMORY, "The node had condition: [MemoryPressure]."])
def test_memory_eviction_is_host_memory(faultline_bin, validate, tmp_path, message):
    inc = first_incident(faultline_bin, validate, tmp_path,
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
    inc = first_incident(faultline_bin, validate, tmp_path, describe(status))
    assert inc["rule"] == "preemption", inc["explanation"]


# The DisruptionTarget condition's reason says who ended the pod
# (k8s.io/api/core/v1: PreemptionByScheduler, EvictionByEvictionAPI,
# DeletionByTaintManager, TerminationByKubelet). The kubelet sets
# TerminationByKubelet both for a node-pressure eviction (eviction_manager)
# and a graceful node shutdown: its message, not the reason, names the cause.
def conditions(reason, message):
    return ["Conditions:", "  Type               Status", "  DisruptionTarget   True",
            "  Ready              False", "status:", "  conditions:",
            '  - lastTransitionTime: "2024-05-02T10:11:12Z"',
            f'    message: "{message}"', f"    reason: {reason}",
            '    status: "True"', "    type: DisruptionTarget"]


def test_termination_by_kubelet_for_memory_is_host_memory(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path,
                  describe(conditions("TerminationByKubelet", MEMORY)))
    assert inc["rule"] == "k8s-node-memory-eviction", inc["explanation"]


@pytest.mark.parametrize("reason,message", [
    ("TerminationByKubelet", "Pod was terminated in response to imminent node shutdown."),
    ("PreemptionByScheduler", "Kube-scheduler: preempting to accommodate a higher priority pod"),
    ("TerminationByKubelet", "The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, available: 9123456Ki."),
])
def test_other_disruption_targets_stay_preemption(faultline_bin, validate, tmp_path, reason, message):
    inc = first_incident(faultline_bin, validate, tmp_path, describe(conditions(reason, message)))
    assert inc["rule"] == "preemption", inc["explanation"]


NODE_MEMORY_PRESSURE = (
    "  MemoryPressure   True    Mon, 08 Aug 2026 09:58:00 +0000   Mon, 08 Aug 2026 09:50:00 +0000   "
    "KubeletHasInsufficientMemory   kubelet has insufficient memory available")


def test_termination_by_kubelet_on_a_node_under_memory_pressure_is_host_memory(
        faultline_bin, validate, tmp_path):
    # The pod's DisruptionTarget names only the kubelet; `kubectl describe
    # node` of its node shows why.
    text = describe(["Conditions:", "  Type               Status", "  DisruptionTarget   True",
                     "    reason: TerminationByKubelet"]) + "Conditions:\n" + NODE_MEMORY_PRESSURE + "\n"
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["rule"] == "k8s-node-memory-eviction", inc["explanation"]


def test_node_memory_pressure_condition_is_host_memory(faultline_bin, validate, tmp_path):
    # `kubectl describe node` of the pod's node: its Conditions table.
    text = ("Conditions:\n"
            "  Type             Status  LastHeartbeatTime                 LastTransitionTime                Reason                       Message\n"
            "  ----             ------  -----------------                 ------------------                ------                       -------\n"
            "  MemoryPressure   True    Mon, 08 Aug 2026 09:58:00 +0000   Mon, 08 Aug 2026 09:50:00 +0000   KubeletHasInsufficientMemory   kubelet has insufficient memory available\n"
            "  DiskPressure     False   Mon, 08 Aug 2026 09:58:00 +0000   Mon, 08 Aug 2026 09:00:00 +0000   KubeletHasNoDiskPressure     kubelet has no disk pressure\n")
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["rule"] == "k8s-node-memory-eviction", inc["explanation"]


def test_deletion_by_pod_gc_is_the_node_taken_away(faultline_bin, validate, tmp_path):
    # kube-controller-manager's pod GC (pkg/controller/podgc) marks a pod
    # whose node no longer exists and deletes it: the node went away under
    # the job, on the pod's node.
    # `kubectl get pod -o json` prints the condition on one line.
    condition = ('{"lastTransitionTime":"2024-05-02T10:11:12Z","message":"PodGC: node no longer exists",'
                 '"reason":"DeletionByPodGC","status":"True","type":"DisruptionTarget"}')
    inc = first_incident(faultline_bin, validate, tmp_path, describe([condition]))
    assert inc["rule"] == "preemption", inc["explanation"]
    assert inc["initiating"]["host"] == "gpu-node-3"
