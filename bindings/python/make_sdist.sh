#!/usr/bin/env bash
# Makes the sdist of faultline-diag: stages the C++ project's sources (the
# root CMakeLists.txt, cmake/, include/, src/, rulesets/, LICENSE) into _cpp/
# next to pyproject.toml, runs scikit-build-core's build_sdist, and removes the
# staged copy. The sdist builds with `pip wheel faultline_diag-*.tar.gz` on a
# machine with the C++ build dependencies (.ci/bootstrap's Debian packages).
#
#   bash bindings/python/make_sdist.sh OUTDIR     # prints the sdist's path
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:?usage: make_sdist.sh OUTDIR}
mkdir -p "$out"; out=$(cd "$out" && pwd)
py=${PYTHON:-python3}
parts=(CMakeLists.txt cmake include src rulesets LICENSE)

stage="$here/_cpp"
rm -rf "$stage"
trap 'rm -rf "$stage"' EXIT
mkdir "$stage"
cd "$root"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  # Tracked and new (not ignored) files, as they are in the work tree.
  git ls-files -z --cached --others --exclude-standard -- "${parts[@]}" |
    while IFS= read -r -d '' f; do
      [ -f "$f" ] && { mkdir -p "$stage/$(dirname "$f")"; cp -p "$f" "$stage/$f"; }
    done
else
  cp -rp "${parts[@]}" "$stage/"
fi

cd "$here"
"$py" -c 'import sys
from scikit_build_core.build import build_sdist
print(sys.argv[1] + "/" + build_sdist(sys.argv[1]))' "$out"
