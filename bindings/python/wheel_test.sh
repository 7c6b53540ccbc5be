#!/usr/bin/env bash
# Builds the faultline-diag wheel as a release does (build_wheel.sh: sdist,
# wheel from the sdist, auditwheel repair), installs it into a fresh
# virtualenv the way README.md says (pip install --find-links DIR
# faultline-diag), and checks that it stands alone:
#   1. the wheel is tagged py3-none-manylinux_*;
#   2. `ldd` of the installed libfaultline.so.* resolves every library either
#      inside the installed package or to glibc/libstdc++/libgcc: nothing
#      from the system's Hyperscan, RE2, Abseil, simdjson, zstd, zlib, ISA-L;
#   3. in a private mount namespace (unshare -m, needs root) where those
#      libraries, their headers, pkg-config and CMake files are replaced by
#      empty files and directories, the installed package diagnoses the
#      example incident (plain, and with .gz/.zst logs) as its .expect.json
#      says;
# then runs the binding's tests against the installed package.
#
#   bash bindings/python/wheel_test.sh [WORKDIR]
#   FL_TEST_WHEEL=path/to/some.whl bash bindings/python/wheel_test.sh
#       checks a given wheel instead of building one (e.g. an older one)
#
# The venv sees the system site-packages for the test tools (pytest, pandas,
# ...); faultline itself comes only from the wheel.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${1:-$(mktemp -d /tmp/faultline-wheel.XXXXXX)}
mkdir -p "$work"; work=$(cd "$work" && pwd)
py=${PYTHON:-python3}
failures=()
fail() { echo "FAIL: $*" >&2; failures+=("$1"); }

if [ -n "${FL_TEST_WHEEL:-}" ]; then
  wheel=$(readlink -f "$FL_TEST_WHEEL")
  install=("$wheel")
else
  t0=$(date +%s)
  bash "$here/build_wheel.sh" "$work/dist"
  echo "sdist, wheel and repair: $(( $(date +%s) - t0 )) s"
  wheel=$(ls "$work"/dist/faultline_diag-*.whl)
  install=(--no-index --find-links "$work/dist" faultline-diag)   # as README.md
fi
echo "wheel: $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"

# 1. The tag: no Python ABI (ctypes), a manylinux platform.
case "$(basename "$wheel")" in
  *-py3-none-manylinux_*_x86_64.whl) ;;
  *) fail "tag" "$(basename "$wheel") is not a py3-none-manylinux_* wheel" ;;
esac

rm -rf "$work/venv"
"$py" -m venv --system-site-packages "$work/venv"
vpy=$work/venv/bin/python
"$vpy" -m pip install -q --disable-pip-version-check --no-deps --force-reinstall "${install[@]}"
pkg=$("$vpy" -c 'import importlib.util, os
print(os.path.dirname(importlib.util.find_spec("faultline").origin))')
case "$pkg" in "$work/venv/"*) ;; *) fail "venv" "faultline found at $pkg, not in the venv" ;; esac
site=$(dirname "$pkg")

# 2. ldd: what the installed library needs from the system.
lib=$(ls "$pkg"/libfaultline.so.* | head -n 1)   # the soname file: .so.0.MINOR while 0.x
[ -f "$lib" ] || fail "wheel" "no libfaultline.so.* in $pkg"
echo "ldd $lib:"
ldd_out=$(env -u LD_LIBRARY_PATH ldd "$lib" 2>&1) || true
echo "$ldd_out" | sed "s|$site/faultline/../|<site-packages>/|; s|^|  |"
system_ok='^(linux-vdso\.so|ld-linux-x86-64\.so|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libstdc\+\+\.so|libgcc_s\.so)'
while read -r name arrow path _; do
  [ "$arrow" = "=>" ] || continue
  case "$path" in "$site"/*) continue ;; esac
  [[ $name =~ $system_ok ]] && continue
  fail "ldd" "$name resolves to $path (outside the package, not glibc/libstdc++/libgcc)"
done <<<"$ldd_out"
if grep -q "not found" <<<"$ldd_out"; then fail "ldd" "libraries not found"; fi

# 3. The example incident, with the dependencies hidden. A copy with .gz and
# .zst logs exercises the decompressors linked into the library.
inc=$root/examples/incidents/xid79-two-hosts
rm -rf "$work/incident-z"; cp -r "$inc" "$work/incident-z"
gzip -9 "$work/incident-z/node017/rank-2.log"
zstd -q --rm "$work/incident-z/node018/kern.log"
cat > "$work/check_example.py" <<'PY'
import ctypes, json, os, sys
import faultline

pkg_dir, expect_path = sys.argv[1], sys.argv[2]
# The harness must really hide the system's copies, or this proves nothing.
for soname in ("libhs.so.5", "libre2.so.9", "libabsl_base.so.20220623", "libzstd.so.1", "libz.so.1"):
    try:
        ctypes.CDLL(soname)
    except OSError:
        continue
    sys.exit(f"FAIL: {soname} still loads: the system libraries are not hidden")
assert faultline.library_path().startswith(pkg_dir), faultline.library_path()
expect = json.load(open(expect_path))
for path in sys.argv[3:]:
    p = faultline.diagnose(path).primary
    got = {"primary_rule": p.rule, "initiating_rank": p.rank, "initiating_host": p.host,
           "collateral_rules": sorted({c.rule for c in p.collateral})}
    want = {k: expect[k] for k in got}
    want["collateral_rules"] = sorted(want["collateral_rules"])
    if got != want:
        sys.exit(f"FAIL: {path}: {got} != {want}")
    print(f"{path}: {p.title} [{p.rule}] rank {p.rank} on {p.host}")
PY
hide_and_run() {  # runs "$@" in a mount namespace without the C++ dependencies
  unshare -m bash -euo pipefail -c '
    mount --make-rprivate /
    libdir=/usr/lib/x86_64-linux-gnu
    find "$libdir" -maxdepth 1 -type f -regextype posix-extended \
        -regex ".*/lib(hs|hs_runtime|re2|absl_[a-z0-9_]+|simdjson|zstd|z|isal|flatbuffers)\.(so[.0-9]*|a)" |
      while read -r f; do mount --bind /dev/null "$f"; done
    for d in "$libdir/pkgconfig" "$libdir/cmake" /usr/include/hs /usr/include/re2 \
             /usr/include/absl /usr/include/flatbuffers /usr/include/isa-l; do
      [ -d "$d" ] && mount -t tmpfs none "$d"
    done
    for f in /usr/include/{simdjson,zstd,zstd_errors,zdict,zlib,zconf,isa-l}.h; do
      [ -f "$f" ] && mount --bind /dev/null "$f"
    done
    exec "$@"' hide "$@"
}
if [ "$(id -u)" -ne 0 ] || ! unshare -m true 2>/dev/null; then
  fail "namespace" "unshare -m is not possible here (needs root): the hidden-library run did not happen"
else
  echo "example incident, system libraries hidden (unshare -m):"
  (cd "$work" && hide_and_run env -u FAULTLINE_LIBRARY -u LD_LIBRARY_PATH -u PYTHONPATH \
     "$vpy" "$work/check_example.py" "$pkg" "$inc.expect.json" "$inc" "$work/incident-z") ||
    fail "hidden" "the example diagnosis failed with the system libraries hidden"
fi

# 4. The binding's tests against the installed package (system as it is).
(cd "$work" && env -u FAULTLINE_LIBRARY "$vpy" -m pytest -q -p no:cacheprovider "$here/tests") ||
  fail "pytest" "binding tests failed against the installed wheel"

if [ ${#failures[@]} -gt 0 ]; then
  echo "wheel test: FAILED (${failures[*]})" >&2
  exit 1
fi
echo "wheel test: ok"
