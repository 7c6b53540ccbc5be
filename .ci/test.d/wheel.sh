#!/usr/bin/env bash
# `pip install ./bindings/python` into a fresh virtual environment, as a user
# would: scikit-build-core builds libfaultline from this source tree and
# bundles it into the package; the installed package, with no build tree,
# PYTHONPATH or FAULTLINE_LIBRARY to lean on, diagnoses the bundled incident.
# The CMake build directory is kept in build-wheel/ so that a second run only
# relinks.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
python3 -m venv "$venv"
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
  "$venv/bin/python" -m pip install -q --disable-pip-version-check \
  --config-settings=build-dir="$root/build-wheel" ./bindings/python
cd "$venv"
env -u PYTHONPATH -u FAULTLINE_LIBRARY "$venv/bin/python" - "$root" "$venv" <<'PY'
import os
import sys

root, venv = sys.argv[1], sys.argv[2]
import faultline

pkg = os.path.dirname(faultline.__file__)
assert pkg.startswith(venv), f"imported {faultline.__file__}, not the installed package"
assert os.path.exists(os.path.join(pkg, "libfaultline.so.0")), os.listdir(pkg)
assert os.path.exists(os.path.join(pkg, "py.typed")), "py.typed missing from the wheel"
report = faultline.diagnose([os.path.join(root, "examples/incidents/xid79-two-hosts")])
primary = report.incidents[0]
assert primary.rule == "xid-79-fallen-off-bus", primary.rule
assert "fallen-off-bus" in report.to_json()
print(f"wheel: faultline {faultline.__version__} from {pkg}: {primary.rule}")
PY
