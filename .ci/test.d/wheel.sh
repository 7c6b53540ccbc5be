#!/usr/bin/env bash
# The Python package as a user installs it: bindings/python/wheel_test.sh
# makes the sdist, builds the wheel from it, repairs it with auditwheel,
# installs faultline-diag into a fresh virtualenv, checks with ldd and in a
# mount namespace without the C++ dependencies that it stands alone, and runs
# the binding's tests against it. The sdist's unpacked tree and CMake build
# are kept in build-wheel/ so that a rerun mostly relinks.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
FL_WHEEL_BUILD_DIR="$PWD/build-wheel" bash bindings/python/wheel_test.sh "$work"
