#!/bin/sh
# Installs libfaultline from a CMake build directory into a prefix, then runs
# go vet and go test for the binding and the example agent against it.
#
#   bindings/go/run-tests.sh [go test flags...]     e.g. -race, -short, -v
#
# FL_BUILD   the CMake build directory (default: <repo>/build)
# FL_PREFIX  where to install (default: /tmp/fl-prefix)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${FL_BUILD:-$repo/build}
prefix=${FL_PREFIX:-/tmp/fl-prefix}
go=${GO:-go}

cmake --install "$build" --prefix "$prefix" >/dev/null
pc=$(find "$prefix" -name faultline.pc | head -n 1)
# faultline.pc records the prefix given at configure time, not the one given
# to `cmake --install --prefix`; point it at where it was installed.
sed -i 's|^prefix=.*|prefix=${pcfiledir}/../..|' "$pc"

export PKG_CONFIG_PATH="$(dirname "$pc")"
export LD_LIBRARY_PATH="$(pkg-config --variable=libdir faultline)"
export FAULTLINE_CLI="${FAULTLINE_CLI:-$prefix/bin/faultline}"
export FAULTLINE_FIXTURES="${FAULTLINE_FIXTURES:-$repo/tests/fixtures}"
# Compile signs rulesets with a per-installation key, created on first use:
# keep it out of the real home directory.
keydir=$(mktemp -d)
trap 'rm -rf "$keydir"' EXIT
export FAULTLINE_RULESET_KEY_FILE="$keydir/ruleset.key"

cd "$here" && "$go" vet ./... && "$go" test "$@" ./...
cd "$repo/examples/go" && "$go" vet ./... && "$go" test "$@" ./... && "$go" build -o /dev/null .
