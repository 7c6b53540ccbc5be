#!/usr/bin/env bash
# Feeds MiB (default 1024) of GPU job logs over OTLP/gRPC through the
# otelcol-faultline distribution twice: with the faultline connector, and
# with it removed (otlp -> nop). Prints records/s and the collector's RSS.
#
#   integrations/otelcol/bench/run.sh [MiB]
#
# Needs libfaultline installed where pkg-config finds it (PKG_CONFIG_PATH,
# LD_LIBRARY_PATH), as for bindings/go/run-tests.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mib=${1:-1024}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$here/.."
go build -p 2 -o "$tmp/otelcol-faultline" ./cmd/otelcol-faultline
go build -p 2 -o "$tmp/bench" ./bench
examples="$here/../../../examples/incidents/xid79-two-hosts"
"$tmp/bench" -collector "$tmp/otelcol-faultline" -connector=false -mib "$mib" -examples "$examples"
"$tmp/bench" -collector "$tmp/otelcol-faultline" -connector=true -mib "$mib" -examples "$examples"
