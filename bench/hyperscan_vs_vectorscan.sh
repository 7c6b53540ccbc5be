#!/usr/bin/env bash
# Intel Hyperscan 5.4.0 (libhyperscan5) vs Vectorscan 5.4.9 (libvectorscan5)
# on the default ruleset's patterns and the same data, one thread. The two
# Debian packages conflict, so each library is unpacked from its .deb into a
# temp dir (apt-get download + dpkg -x; nothing is installed) and hs_compare
# is built once against each.
#   bench/hyperscan_vs_vectorscan.sh DATA_FILE [REPEAT]
set -euo pipefail
cd "$(dirname "$0")/.."
data=$1; repeat=${2:-3}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
python3 - "$work/patterns.tsv" <<'PY'
import json, pathlib, sys
out = open(sys.argv[1], "w")
for f in sorted(pathlib.Path("rulesets").glob("*/*.json")):
    if f.name.startswith("_"): continue
    for s in json.loads(f.read_text()).get("signals", []):
        out.write(f"{1 if s.get('caseless') else 0}\t{s['pattern']}\n")
PY
for pkg in libhyperscan5 libhyperscan-dev libvectorscan5 libvectorscan-dev; do
  (cd "$work" && apt-get download -qq "$pkg" 2>/dev/null)
done
for flavour in hyperscan vectorscan; do
  mkdir -p "$work/$flavour"
  for deb in "$work"/lib${flavour}*.deb; do dpkg -x "$deb" "$work/$flavour"; done
  lib=$work/$flavour/usr/lib/x86_64-linux-gnu
  ln -sf "$(ls "$lib"/libhs.so.5* | head -1)" "$lib/libhs.so"
  g++ -O2 -std=c++17 -I"$work/$flavour/usr/include" bench/hs_compare.cc -L"$lib" -lhs -Wl,-rpath,"$lib" -o "$work/hs_$flavour"
  echo "$flavour: $("$work/hs_$flavour" "$work/patterns.tsv" "$repeat" "$data")"
done
