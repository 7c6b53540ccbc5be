"""The seventh hardware-negatives audit (tests/cli/endings/hw7-*.log; issue #18:
no hardware verdict on any negative, and a negative gives no incident).

Two mechanisms the audit's probes led to.

A network link that went down and came back is no fault of a job that did not
fail. ib-port-down read each link-down report alone as an incident: mlx5e's
"Link down" (en_main.c mlx5e_update_carrier), systemd-networkd's "Lost
carrier", NetworkManager's activated -> unavailable on carrier-changed, and
NCCL's "Got async event : port error" (net_ib.cc, the verbs event by
ibv_event_type_str). Each printer also reports the link coming back: "Link
up", "Gained carrier", unavailable -> disconnected on carrier-changed, "port
active". The rule's new context signals read those lines (field `link_up`, the
device), and a link-down line followed in its file by the same device's
link-up line leaves the evidence when no other line of the logs is a failure.
A link that stays down, another device's link-up, a link-up before the down,
or any other failure in the logs keeps every link-down line (the counterparts
below held before and hold after).

cuda-gdb stops the program on a device exception of the application's kernel
and gdb reports it as a received signal named CUDA_EXCEPTION_<n>
(gdb/cuda/cuda-exceptions.c: "Program received signal CUDA_EXCEPTION_5, Warp
Out-of-range Address."). unrecognised-fatal-error's gdb reading only knew
SIG* names, so such a job ended with no incident. It now reads the CUDA
exception as the application's fatal stop (layer application): its names
("Device Hardware Stack Overflow") are no hardware verdict, and a real
hardware failure in the same logs still leads.

The link lines are the printers' formats as ib-port-down's examples give them;
the sequences are assembled for the purpose.
"""
import json
import pathlib

import pytest

from conftest import run as run_cli

ENDINGS = pathlib.Path(__file__).resolve().parent / "endings"
INDEX = json.loads((ENDINGS / "index.json").read_text())


def diagnose(faultline_bin, validate, tmp_path, text, name="kern.log"):
    log = tmp_path / name
    log.write_text(text)
    p = run_cli(faultline_bin, "diagnose", "--json", str(log), check=False)
    assert p.returncode == 0, p.stderr.decode()
    doc = json.loads(p.stdout)
    validate(doc)
    return doc


def rules(doc):
    return [i["rule"] for i in doc["incidents"]]


def hardware(doc):
    return [i["rule"] for i in doc["incidents"] if i.get("layer") == "hardware"]


def gated(doc, rule="ib-port-down"):
    return [g["reason"] for g in doc["ignored"] if g["rule"] == rule]


# --- links that came back ----------------------------------------------------

MLX5_DOWN = "[1209382.560017] mlx5_core 0000:c1:00.0 enp193s0np0: Link down\n"
MLX5_UP = "[1209402.100311] mlx5_core 0000:c1:00.0 enp193s0np0: Link up\n"
MLX5_UP_OTHER = "[1209402.100311] mlx5_core 0000:c1:00.1 enp193s0np1: Link up\n"
NETWORKD_DOWN = "Nov  2 13:40:12 node017 systemd-networkd[1432]: ib0: Lost carrier\n"
NETWORKD_UP = "Nov  2 13:41:02 node017 systemd-networkd[1432]: ib0: Gained carrier\n"
NM_DOWN = ("Nov  2 13:40:12 node017 NetworkManager[1201]: <info>  [1730554812.1203] device (ib0): state change: "
           "activated -> unavailable (reason 'carrier-changed', sys-iface-state: 'managed')\n")
NM_UP = ("Nov  2 13:41:02 node017 NetworkManager[1201]: <info>  [1730554862.0012] device (ib0): state change: "
         "unavailable -> disconnected (reason 'carrier-changed', sys-iface-state: 'managed')\n")
NCCL_DOWN = ("gpu-b02:311:405 [0] transport/net_ib.cc:171 NCCL WARN NET/IB : mlx5_3:1 Got async error event: "
             "port error\n")
NCCL_UP = ("gpu-b02:311:405 [0] transport/net_ib.cc:171 NCCL WARN NET/IB : mlx5_3:1 Got async error event: "
           "port active\n")
NCCL_DOWN_OLD = "node017:12345:12360 [0] NCCL WARN NET/IB : Got async event : port error\n"
NCCL_UP_OLD = "node017:12345:12360 [0] NCCL WARN NET/IB : Got async event : port active\n"

NCCL_FAILED = """\
gpu-b02:311:405 [0] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.0.0.12<52322> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.0.11 remoteGids::ffff:10.0.0.12
Traceback (most recent call last):
  File "train.py", line 88, in <module>
    dist.all_reduce(t)
torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error, NCCL version 2.21.5
"""

FLAPS = [(MLX5_DOWN, MLX5_UP), (NETWORKD_DOWN, NETWORKD_UP), (NM_DOWN, NM_UP), (NCCL_DOWN, NCCL_UP),
         (NCCL_DOWN_OLD, NCCL_UP_OLD)]
FLAP_IDS = ["mlx5e", "networkd", "networkmanager", "nccl", "nccl-old"]


@pytest.mark.parametrize("down,up", FLAPS, ids=FLAP_IDS)
def test_a_link_that_came_back_is_no_incident(faultline_bin, validate, tmp_path, down, up):
    doc = diagnose(faultline_bin, validate, tmp_path, down + up)
    assert doc["incidents"] == [], rules(doc)
    assert gated(doc) and all(r.startswith("recovered") for r in gated(doc)), doc["ignored"]


@pytest.mark.parametrize("down,up", FLAPS, ids=FLAP_IDS)
def test_a_link_that_stayed_down_keeps_its_incident(faultline_bin, validate, tmp_path, down, up):
    doc = diagnose(faultline_bin, validate, tmp_path, down)
    assert rules(doc)[:1] == ["ib-port-down"], rules(doc)


@pytest.mark.parametrize("down,up", FLAPS, ids=FLAP_IDS)
def test_a_link_up_before_the_down_is_no_recovery(faultline_bin, validate, tmp_path, down, up):
    doc = diagnose(faultline_bin, validate, tmp_path, up + down)
    assert rules(doc)[:1] == ["ib-port-down"], rules(doc)


def test_another_devices_link_up_is_no_recovery(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, MLX5_DOWN + MLX5_UP_OTHER)
    assert rules(doc)[:1] == ["ib-port-down"], rules(doc)


def test_one_link_back_and_another_still_down_keeps_both(faultline_bin, validate, tmp_path):
    other_down = MLX5_DOWN.replace("c1:00.0 enp193s0np0", "c1:00.1 enp193s0np1")
    doc = diagnose(faultline_bin, validate, tmp_path, MLX5_DOWN + other_down + MLX5_UP)
    assert rules(doc)[:1] == ["ib-port-down"], rules(doc)
    assert not gated(doc), doc["ignored"]


@pytest.mark.parametrize("down,up", FLAPS, ids=FLAP_IDS)
def test_a_flap_before_a_failure_stays_evidence(faultline_bin, validate, tmp_path, down, up):
    doc = diagnose(faultline_bin, validate, tmp_path, down + up + NCCL_FAILED)
    assert doc["incidents"], doc
    assert not gated(doc), doc["ignored"]


# --- cuda-gdb's CUDA exceptions: the application's kernel fault --------------

GIPUMA = "hw7-cuda-gdb-warp-out-of-range-address-gt720"

CUDA_GDB_STOPS = [
    "Program received signal CUDA_EXCEPTION_5, Warp Out-of-range Address.\n",
    'Thread 1 "RayTraceDicom" received signal CUDA_EXCEPTION_1, Lane Illegal Address.\n',
    "Program received signal CUDA_EXCEPTION_3, Device Hardware Stack Overflow.\n",
    'Thread 1 "python" received signal CUDA_EXCEPTION_14, Warp Illegal Address.\n',
]


def test_the_audits_cuda_gdb_stop_is_an_application_fault(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, (ENDINGS / f"{GIPUMA}.log").read_text(), name="gdb.log")
    assert doc["incidents"], doc
    first = doc["incidents"][0]
    assert first["layer"] == "application", (first["rule"], first["layer"])
    texts = [e["text"] for e in first["initiating"]["evidence"]]
    assert any("CUDA_EXCEPTION_5" in t for t in texts), texts


@pytest.mark.parametrize("stop", CUDA_GDB_STOPS)
def test_a_cuda_gdb_stop_is_a_failure_and_no_hardware_verdict(faultline_bin, validate, tmp_path, stop):
    doc = diagnose(faultline_bin, validate, tmp_path, "\nCUDA Exception: Warp Out-of-range Address\n\n" + stop,
                   name="gdb.log")
    assert doc["incidents"], doc
    assert hardware(doc) == [], hardware(doc)


def test_cuda_gdb_launch_lines_are_no_failure(faultline_bin, validate, tmp_path):
    text = ("[Launch of CUDA Kernel 0 (write_size<<<(1,1,1),(1,1,1)>>>) on Device 0]\n"
            "[Launch of CUDA Kernel 1 (write_size<<<(1,1,1),(1,1,1)>>>) on Device 0]\n"
            "[Inferior 1 (process 4977) exited normally]\n")
    doc = diagnose(faultline_bin, validate, tmp_path, text, name="gdb.log")
    assert doc["incidents"] == [], rules(doc)


def test_a_gpu_off_the_bus_still_leads_a_cuda_gdb_stop(faultline_bin, validate, tmp_path):
    kern = tmp_path / "kern.log"
    kern.write_text("[Tue Aug  4 14:25:10 2026] NVRM: Xid (PCI:0000:0a:00): 79, pid='<unknown>', "
                    "name=<unknown>, GPU has fallen off the bus.\n")
    gdb = tmp_path / "gdb.log"
    gdb.write_text("Program received signal CUDA_EXCEPTION_0, Device Unknown Exception.\n")
    p = run_cli(faultline_bin, "diagnose", "--json", str(kern), str(gdb), check=False)
    assert p.returncode == 0, p.stderr.decode()
    doc = json.loads(p.stdout)
    validate(doc)
    assert doc["incidents"] and doc["incidents"][0]["rule"] == "xid-79-fallen-off-bus", rules(doc)


# --- the audit's excerpts ----------------------------------------------------

HW7 = sorted(n for n in INDEX if n.startswith("hw7-"))


@pytest.mark.parametrize("name", [n for n in HW7 if not INDEX[n]["failed"]])
def test_hw7_negative_gets_no_incident(faultline_bin, validate, tmp_path, name):
    doc = diagnose(faultline_bin, validate, tmp_path, (ENDINGS / f"{name}.log").read_text())
    assert hardware(doc) == [], hardware(doc)
    assert doc["incidents"] == [], rules(doc)


@pytest.mark.parametrize("name", [n for n in HW7 if INDEX[n]["failed"]])
def test_hw7_non_hardware_failure_gets_no_hardware_verdict(faultline_bin, validate, tmp_path, name):
    doc = diagnose(faultline_bin, validate, tmp_path, (ENDINGS / f"{name}.log").read_text())
    assert hardware(doc) == [], hardware(doc)
