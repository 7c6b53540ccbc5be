"""Hardware-looking lines in runs and machines that did not fail, from the
twelfth endings audit (tests/cli/endings, e12-*.log; issue #18: no hardware
verdict on a negative), and the one negative it found read as a failure:

- The GPU operator's MIG manager (NVIDIA/mig-parted's reconfigure-mig.sh,
  since moved to Go in pkg/mig/reconfigure) asks `nvidia-mig-parted
  assert` whether the selected MIG configuration is applied before it
  changes anything. nvidia-mig-parted ends every failed command with
  logrus' Fatal, so the check's "no" is a `level=fatal msg="Assertion
  failure: selected configuration not currently applied"` line, and the
  manager goes on to the next step: "Checking if the MIG mode setting in
  the selected config is currently applied or not", "Applying the MIG mode
  change ...", "Applying the selected MIG config to the node". Those lines
  say the manager carried on from the fatal line (role:carried-on); a fatal
  line of the apply after them is still the failure.
"""
import json
import pathlib

import pytest

from conftest import diagnose_path, diagnose_text, leading_incident

ENDINGS = pathlib.Path(__file__).resolve().parent / "endings"
INDEX = json.loads((ENDINGS / "index.json").read_text())

ASSERTION = ('time="2024-05-02T10:11:09Z" level=fatal msg="Assertion failure: selected configuration not '
             'currently applied"')

# reconfigure-mig.sh echoes its steps; nvidia-mig-parted logs through logrus.
SHELL_MANAGER = (
    "Current value of 'nvidia.com/mig.config.state=pending'\n"
    "Checking if the selected MIG config is currently applied or not\n"
    + ASSERTION + "\n"
    "Checking if the MIG mode setting in the selected config is currently applied or not\n"
    "If the state is 'rebooting', we expect this to always return true\n"
    "Applying the selected MIG config to the node\n"
    'time="2024-05-02T10:11:14Z" level=debug msg="Walking MigConfig for (devices=all)"\n'
    'time="2024-05-02T10:11:15Z" level=debug msg="  Creating MIG devices..."\n'
)

# pkg/mig/reconfigure logs its steps with logrus' Info.
GO_MANAGER = (
    'time="2025-03-11T08:00:01Z" level=info msg="Checking if the selected MIG config is currently applied or not"\n'
    + ASSERTION + "\n"
    'time="2025-03-11T08:00:02Z" level=info msg="Checking if the MIG mode setting in the selected config is '
    'currently applied or not"\n'
    'time="2025-03-11T08:00:09Z" level=info msg="Applying the selected MIG config to the node"\n'
)


def live(found):
    """The incidents a report says the job did not survive."""
    return [i for i in found if not (i.get("initiating") or {}).get("survived", False)
            and not i.get("reference", "").startswith("Benign")]


@pytest.mark.parametrize("text", [SHELL_MANAGER, GO_MANAGER], ids=["reconfigure-mig.sh", "pkg-mig-reconfigure"])
def test_mig_parted_assertion_the_manager_went_on_from_is_no_failure(faultline_bin, validate, tmp_path, text):
    found = diagnose_text(faultline_bin, validate, tmp_path, text, name="mig-manager.log")
    assert live(found) == [], [(i["rule"], i["initiating"]) for i in found]


def test_a_failing_apply_after_the_check_is_still_the_failure(faultline_bin, validate, tmp_path):
    text = (SHELL_MANAGER
            + 'time="2024-05-02T10:11:16Z" level=fatal msg="Error applying MIG configuration with hooks: error '
              'setting MIGConfig: error attempting multiple config orderings: all orderings failed"\n'
            "Changing the 'nvidia.com/mig.config.state' node label to 'failed'\n")
    leading_incident(faultline_bin, validate, tmp_path, text, rule="unrecognised-fatal-error",
                     line="Error applying MIG configuration")


@pytest.mark.parametrize("name", sorted(n for n in INDEX if n.startswith("e12-") and not INDEX[n]["failed"]))
def test_no_hardware_verdict_on_a_twelfth_audit_negative(faultline_bin, validate, name):
    found = diagnose_path(faultline_bin, validate, ENDINGS / f"{name}.log")
    hardware = [i for i in live(found) if i.get("layer") in ("hardware", "network")]
    assert hardware == [], [(i["rule"], i["initiating"]) for i in hardware]
