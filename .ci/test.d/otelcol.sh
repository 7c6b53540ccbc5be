#!/usr/bin/env bash
# The OpenTelemetry Collector connector (integrations/otelcol): go vet, the
# connector's tests (goleak, back-pressure, config), and the otelcol-faultline
# distribution run as a process (filelog, and OTLP/gRPC on 127.0.0.1, into
# the file exporter). Needs libfaultline built in build/ (.ci/bootstrap does
# that) and Go; the collector's modules come from the module proxy, pinned
# by the committed go.sum. -p 2: the machine has 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
# The prefix bindings/go/run-tests.sh installs to: the go command's build
# cache does not key cgo packages on pkg-config's -L path, so a package
# built against a prefix that is later removed would be linked against it.
prefix=${FL_PREFIX:-$root/build/_go_prefix}
cmake --install "${FL_BUILD_DIR:-build}" --prefix "$prefix" >/dev/null
pc=$(find "$prefix" -name faultline.pc | head -n 1)
# faultline.pc records the configure-time prefix; point it at this one.
sed -i 's|^prefix=.*|prefix=${pcfiledir}/../..|' "$pc"
export PKG_CONFIG_PATH="$(dirname "$pc")"
export LD_LIBRARY_PATH="$prefix/lib"
keydir=$(mktemp -d)
trap 'rm -rf "$keydir"' EXIT
export FAULTLINE_RULESET_KEY_FILE="$keydir/ruleset.key"

cd "$root/integrations/otelcol"
go vet -p 2 ./...
go test -p 2 -count=1 ./...
