#!/usr/bin/env bash
# Builds the wheel the way `pip install ./bindings/python` does (scikit-build-core
# compiling libfaultline from the project root), installs it into a fresh
# virtualenv and runs the binding's tests against the installed package
# (FAULTLINE_LIBRARY unset). Prints how long the build took.
#
#   bash bindings/python/wheel_test.sh [WORKDIR]
#
# The venv sees the system site-packages for the test tools (pytest, pandas,
# ...); faultline itself comes only from the wheel.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=${1:-$(mktemp -d /tmp/faultline-wheel.XXXXXX)}
mkdir -p "$work"
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
py=${PYTHON:-python3}

t0=$(date +%s)
# FL_WHEEL_BUILD_DIR: keep scikit-build-core's CMake build there (a rerun then
# only relinks); default a fresh temporary one.
build_dir=()
if [ -n "${FL_WHEEL_BUILD_DIR:-}" ]; then build_dir=(--config-settings=build-dir="$FL_WHEEL_BUILD_DIR"); fi
"$py" -m pip wheel --no-deps --disable-pip-version-check -q ${build_dir[@]+"${build_dir[@]}"} -w "$work/dist" "$here"
t1=$(date +%s)
wheel=$(ls "$work"/dist/faultline-*.whl)
echo "wheel: $wheel ($(du -h "$wheel" | cut -f1)) built in $((t1 - t0)) s"
"$py" -m zipfile -l "$wheel" | grep -E "libfaultline|py.typed"

"$py" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check --no-deps --force-reinstall "$wheel"
cd "$work"
env -u FAULTLINE_LIBRARY "$work/venv/bin/python" -c \
  'import faultline; print("installed:", faultline.__file__, "library:", faultline.library_path())'
env -u FAULTLINE_LIBRARY "$work/venv/bin/python" -m pytest -q -p no:cacheprovider "$here/tests"
