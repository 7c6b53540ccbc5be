"""A link-down verdict needs a GPU that has links (the fifth hardware-negatives
audit, tests/cli/endings/hw5-*.log; issue #18: no hardware verdict on a
negative).

DCGM reports every NvLink link of a GPU with no NVLink hardware (a PCIe board
with no bridge) as "GPU N's NvLink link K is currently down", from its health
watch and from diag's PCIe test (NVIDIA/DCGM#49, NVIDIA/NVSentinel#1481):
NVML answers NOT_SUPPORTED for such a GPU's links and SUCCESS for a GPU whose
links exist, up or down. xid-nvlink-error's dcgm-nvlink-down line is now no
evidence where the logs show that GPU, or its whole host, to have no links:

- dcgmi nvlink --link-status prints the GPU's states as `_` only (Not
  Supported);
- nvidia-smi topo -m shows two or more GPUs and no NV# cell on any of them;
- nvidia-smi names the GPU, or with -q the host's board, as a PCIe board
  (`NVIDIA A100 80GB PCIe`, `Tesla V100-PCIE-16GB`).

What the logs show of one GPU wins over what they show of its host, and links
shown anywhere on the host (an NV# cell, a U/D/X state, nvidia-smi nvlink's
`Link K:` lines) win over a matrix or a board name that says none: a matrix
prints links that went down as PCIe paths, and a PCIe board may carry a
bridge. The tests that gate a line fail on the build before the change; the
ones that keep a verdict are the counterparts, which held before and must
hold after.

The lines are the tools' real formats: DCGM's health table and diag's
wrapped PCIe warning as NVSentinel#1481 and DCGM#49 posted them, dcgmi's
link status as dcgmi/Nvlink.cpp prints it (NVIDIA/dcgm-exporter#576,
NVIDIA/DCGM#198), nvidia-smi's topology matrix, nvlink -s lines, table rows
and -q product names and PyTorch's collect_env GPU lines as posted in
public threads and READMEs (NVIDIA/nccl#1617, NVIDIA/nccl-tests#228,
NVIDIA/k8s-device-plugin#100 and #243). The matrices, link states and the
bridged PCIe board are assembled from those formats for the purpose.
"""
import json

from conftest import run as run_cli

HEALTH = """\
| Overall Health            | Failure                                       |
| -> 0                      | Failure                                       |
|    -> NVLINK system       | Failure                                       |
|                           | GPU 0's NvLink link 0 is currently down ...   |
|                           | GPU 0's NvLink link 1 is currently down ...   |
"""

# diag's PCIe test as DCGM#49 posted it: the table wraps the GPU's id off
# most warnings.
DIAG = """\
+-----  Integration  -------+------------------------------------------------+
| PCIe                      | Fail - All                                     |
| Warning                   | GPU 0GPU 0's NvLink link 0 is currently down   |
|                           | Run a field diagnostic on the GPU., GPU 0GPU   |
|                           | 0's NvLink link 1 is currently down Run a fie  |
|                           | ld diagnostic on the GPU., GPU 0GPU 0's NvLin  |
"""


def link_status(*rows):
    out = "+----------------------+\n|  NvLink Link Status  |\n+----------------------+\nGPUs:\n"
    for gpu, states in rows:
        out += f"    gpuId {gpu}:\n        {states}\n"
    return out + "NvSwitches:\n    No NvSwitches found.\n\nKey: Up=U, Down=D, Disabled=X, Not Supported=_\n"


NONE = " ".join(["_"] * 18)
UP = " ".join(["U"] * 12 + ["_"] * 6)
DOWN = " ".join(["D"] * 12 + ["_"] * 6)

HEADER = "        GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID\n"
TOPO_PCIE = HEADER + """\
GPU0     X      PHB     PIX     0-23    0               N/A
GPU1    PHB      X      PHB     0-23    0               N/A
NIC0    PIX     PHB      X
"""
TOPO_BRIDGE = TOPO_PCIE.replace("     X      PHB ", "     X      NV12").replace("GPU1    PHB ", "GPU1    NV12")
SINGLE_GPU_TOPO = "        GPU0    CPU Affinity    NUMA Affinity\nGPU0     X      0-23    0\n"
TOPO_8 = "\t" + "\t".join(f"GPU{i}" for i in range(8)) + "\tCPU Affinity\n" + "".join(
    f"GPU{r}\t" + "\t".join(" X " if c == r else ("SYS" if 7 in (r, c) else "NV12") for c in range(8))
    + "\t0-31\n" for r in range(8))

TABLE_ROW = "|   0  NVIDIA A100 80GB PCIe          On  |   00000000:E3:00.0 Off |                    0 |\n"
CUT_ROW = "|   0  Tesla V100S-PCI...  Off  | 00000000:00:07.0 Off |                    0 |\n"
COLLECT_ENV = "GPU models and configuration: GPU 0: NVIDIA H100 PCIe\nGPU 1: NVIDIA H100 PCIe\n"
Q_PCIE = "GPU 00000000:17:00.0\n    Product Name                    : NVIDIA A100 80GB PCIe\n"
NVLINK_S = "GPU 0: NVIDIA A100 80GB PCIe (UUID: GPU-d8ce95c1-12f7-3174-6395-e573163a2ace)\n" + "".join(
    f"\t Link {k}: 25 GB/s\n" for k in range(12))


def diagnose(faultline_bin, validate, tmp_path, text):
    log = tmp_path / "health.log"
    log.write_text(text)
    p = run_cli(faultline_bin, "diagnose", "--json", str(log), check=False)
    assert p.returncode == 0, p.stderr.decode()
    doc = json.loads(p.stdout)
    validate(doc)
    return doc


def hardware(doc):
    return [i["rule"] for i in doc["incidents"] if i.get("layer") == "hardware"]


def gated(doc):
    return [g["reason"] for g in doc["ignored"] if g["rule"] == "xid-nvlink-error"]


# --- a GPU with no links: the link-down line is no evidence -----------------

def test_link_status_not_supported_gates_the_health_watch(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, link_status((0, NONE)) + HEALTH)
    assert hardware(doc) == [], hardware(doc)
    assert gated(doc) and "no NVLink" in gated(doc)[0], gated(doc)


def test_pcie_board_named_by_q_gates_the_wrapped_diag(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, Q_PCIE + DIAG)
    assert hardware(doc) == [], hardware(doc)


def test_pcie_board_in_the_table_gates_its_gpu(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, TABLE_ROW + HEALTH)
    assert hardware(doc) == [], hardware(doc)


def test_pcie_board_in_an_indented_or_cut_table_row(faultline_bin, validate, tmp_path):
    for row in ("    " + TABLE_ROW, CUT_ROW):
        doc = diagnose(faultline_bin, validate, tmp_path, row + HEALTH)
        assert hardware(doc) == [], (row, hardware(doc))


def test_pcie_board_in_collect_env_gates_its_gpu(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, COLLECT_ENV + HEALTH.replace("GPU 0's", "GPU 1's"))
    assert hardware(doc) == [], hardware(doc)


def test_topology_with_no_nvlink_gates_the_host(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, TOPO_PCIE + DIAG)
    assert hardware(doc) == [], hardware(doc)


def test_tab_separated_topology_with_no_nvlink(faultline_bin, validate, tmp_path):
    tabbed = "\n".join("\t".join(line.split()) if line.startswith("GPU") else line
                       for line in TOPO_PCIE.splitlines()).replace("\tX\t", "\t X \t") + "\n"
    doc = diagnose(faultline_bin, validate, tmp_path, tabbed + HEALTH)
    assert hardware(doc) == [], hardware(doc)


# --- a GPU with links: the verdict stands (counterparts) ---------------------

def test_link_status_down_keeps_the_verdict(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, link_status((0, DOWN), (1, DOWN)) + HEALTH)
    assert hardware(doc) == ["xid-nvlink-error"], hardware(doc)


def test_the_named_gpu_has_links_though_another_has_none(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, link_status((0, UP), (1, NONE)) + HEALTH)
    assert hardware(doc) == ["xid-nvlink-error"], hardware(doc)


def test_nvlink_topology_keeps_the_verdict(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, TOPO_BRIDGE + DIAG)
    assert hardware(doc) == ["xid-nvlink-error"], hardware(doc)


def test_a_bridge_on_a_pcie_board_keeps_the_verdict(faultline_bin, validate, tmp_path):
    for shows_links in (TOPO_BRIDGE, NVLINK_S, link_status((0, UP))):
        doc = diagnose(faultline_bin, validate, tmp_path, TABLE_ROW + Q_PCIE + shows_links + HEALTH)
        assert hardware(doc) == ["xid-nvlink-error"], (shows_links.splitlines()[0], hardware(doc))


def test_one_gpu_row_without_nv_on_an_nvlink_host_keeps_the_verdict(faultline_bin, validate, tmp_path):
    # GPU 7's links went down: the matrix prints them as SYS, its peers keep NV12.
    doc = diagnose(faultline_bin, validate, tmp_path,
                   TOPO_8 + HEALTH.replace("GPU 0's", "GPU 7's"))
    assert hardware(doc) == ["xid-nvlink-error"], hardware(doc)


def test_a_single_gpu_matrix_says_nothing(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, SINGLE_GPU_TOPO + HEALTH)
    assert hardware(doc) == ["xid-nvlink-error"], hardware(doc)


def test_the_link_down_line_alone_keeps_the_verdict(faultline_bin, validate, tmp_path):
    doc = diagnose(faultline_bin, validate, tmp_path, HEALTH)
    assert hardware(doc) == ["xid-nvlink-error"], hardware(doc)
