#!/usr/bin/env bash
# `pip install ./bindings/python` as a user gets it: the wheel scikit-build-core
# builds from this tree, installed into a fresh virtualenv, and the binding's
# tests run against the installed package (no FAULTLINE_LIBRARY, no build
# tree). The CMake build is kept in build-wheel/ so that a rerun only relinks.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
FL_WHEEL_BUILD_DIR="$PWD/build-wheel" bash bindings/python/wheel_test.sh "$work"
