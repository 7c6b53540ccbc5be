"""Hardware and network lines in runs that did not fail, and the same kinds
of line where they did (issue #18: no hardware verdict on a negative; the
eighth endings audit, tests/cli/endings/e8-*.log):

- The kernel's AER driver (drivers/pci/pcie/aer.c) prints each error with
  its severity: "Corrected"/"Correctable", "Uncorrected (Non-Fatal)" /
  "Uncorrectable (Non-Fatal)", "Uncorrected (Fatal)" / "Uncorrectable
  (Fatal)" (the words changed in 4.x -> 5.x), under the device that logged
  it or, for "error (message) received", the root port that received it.
  A fatal error freezes the link below the port and the recovery
  (drivers/pci/pcie/err.c) resets it; the NVIDIA driver has no
  error_detected callback, so a GPU behind that port is lost. The port's
  fatal report is the hardware failure a log may show alone (a host that
  froze); a corrected one needs nothing and a non-fatal one is recovered
  without a reset, so a run that logs them is no hardware incident.
- pytorch/examples' MNIST loop prints 'Train Epoch: {} [{}/{} ({:.0f}%)]\\t
  Loss: {:.6f}' every log_interval batches, and the many scripts copied from
  it do too: that is progress, so an error the run went on after (NCCL's
  allocation warnings at bootstrap) was survived.
"""
import pytest

from conftest import diagnose_text, leading_incident

RULE = "pcie-aer-uncorrectable-gpu"


def hardware_incidents(found):
    """The incidents a report puts at the hardware layer that the run did
    not survive."""
    return [i for i in found
            if i.get("layer") == "hardware" and not (i.get("initiating") or {}).get("survived", False)]


@pytest.mark.parametrize("line", [
    "pcieport 0000:00:01.1: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Receiver ID)",
    "[74889.542031] pcieport 0000:00:02.0: AER: Uncorrected (Fatal) error received: id=0010",
    "[ 5210.004113] pcieport 0000:40:01.1: AER: Uncorrectable (Fatal) error message received from 0000:41:00.0",
    "Mar  3 10:01:12 gpu07 kernel: pcieport 0000:16:02.0: AER: PCIe Bus Error: "
    "severity=Uncorrectable (Fatal), type=Transaction Layer, (Receiver ID)",
])
def test_fatal_aer_at_a_port_is_a_hardware_failure(faultline_bin, validate, tmp_path, line):
    text = ("[74785.660380] pcieport 0000:00:02.0: PCIe Bus Error: severity=Corrected, type=Data Link Layer, "
            "id=0010(Transmitter ID)\n"
            "[74785.660559] pcieport 0000:00:02.0:    [12] Replay Timer Timeout  \n"
            + line + "\n"
            "pcieport 0000:00:02.0:   device [8086:6f04] error status/mask=00000020/00000000\n")
    inc = leading_incident(faultline_bin, validate, tmp_path, text, rule=RULE, line="(Fatal)")
    assert inc["layer"] == "hardware"


@pytest.mark.parametrize("lines", [
    # 4.x words, the root port's own report
    ["pcieport 0000:00:1c.5: AER: Corrected error received: id=00e5",
     "pcieport 0000:00:1c.5: PCIe Bus Error: severity=Corrected, type=Physical Layer, id=00e5(Receiver ID)",
     "pcieport 0000:00:1c.5:   device [8086:9d15] error status/mask=00000001/00002000",
     "pcieport 0000:00:1c.5:    [ 0] Receiver Error "],
    # 5.x+ words, a GPU's own correctable error and the port's summary
    ["[ 8812.120330] pcieport 0000:3a:00.0: AER: Multiple Correctable error message received from 0000:3b:00.0",
     "[ 8812.120331] nvidia 0000:3b:00.0: AER: PCIe Bus Error: severity=Correctable, type=Physical Layer, "
     "(Receiver ID)",
     "[ 8812.120332] nvidia 0000:3b:00.0: AER:    [ 0] RxErr                  (First)"],
    # a non-fatal error the port recovered without a reset
    ["pcieport 0000:3a:00.0: AER: Uncorrected (Non-Fatal) error received: 0000:3b:00.0",
     "pcieport 0000:3a:00.0: AER: PCIe Bus Error: severity=Uncorrectable (Non-Fatal), type=Transaction Layer, "
     "(Requester ID)",
     "pcieport 0000:3a:00.0: AER: device recovery successful"],
])
def test_corrected_and_non_fatal_aer_in_a_run_are_no_hardware_incident(faultline_bin, validate, tmp_path, lines):
    text = ("iter 100: loss 2.3456, time 123.45ms, mfu 40.00%\n" + "\n".join(lines) + "\n"
            "iter 200: loss 2.1012, time 121.02ms, mfu 40.10%\n")
    assert hardware_incidents(diagnose_text(faultline_bin, validate, tmp_path, text)) == []


NCCL_BOOTSTRAP_WARNINGS = (
    "node0:39:298 [0] bootstrap.cc:279 NCCL WARN [Rem Allocator] Allocation failed (segment 0, fd 130)\n"
    "\n"
    "node0:39:298 [0] include/alloc.h:48 NCCL WARN Cuda failure 'out of memory'\n"
    "node0:39:298 [0] NCCL INFO bootstrap.cc:231 -> 1\n"
)


def test_mnist_style_train_epoch_lines_are_progress(faultline_bin, validate, tmp_path):
    text = (NCCL_BOOTSTRAP_WARNINGS
            + "Train Epoch: 1 [0/60000 (0%)]\tLoss: 2.305410\n"
            + "Train Epoch: 1 [640/60000 (1%)]\tLoss: 1.359780\n"
            + "Train Epoch: 1 [1280/60000 (2%)]\tLoss: 0.842197\n")
    found = diagnose_text(faultline_bin, validate, tmp_path, text)
    live = [i for i in found if not (i.get("initiating") or {}).get("survived", False)
            and not i.get("reference", "").startswith("Benign")]
    assert live == [], [(i["rule"], i["initiating"]) for i in live]


def test_a_failure_after_train_epoch_lines_is_still_one(faultline_bin, validate, tmp_path):
    text = ("Train Epoch: 1 [0/60000 (0%)]\tLoss: 2.305410\n"
            "Train Epoch: 1 [640/60000 (1%)]\tLoss: 1.359780\n"
            "Traceback (most recent call last):\n"
            '  File "main.py", line 41, in train\n'
            "    loss.backward()\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
            "of 23.64 GiB of which 1.02 GiB is free.\n")
    found = diagnose_text(faultline_bin, validate, tmp_path, text)
    assert found and not (found[0].get("initiating") or {}).get("survived", False), found[:1]
