#!/usr/bin/env bash
# The HTML report in a real browser: headless Chromium (the Debian package
# chromium, installed by .ci/bootstrap) renders the page of every example
# incident, of a hostile log line and file name, and of a simulated 1,024-rank
# job; tests/html/test_browser.py checks the screenshots (not blank, light and
# dark schemes) and the DOM (reference, rank, host; the page's script ran;
# no element the page did not write). CI is set: a missing Chromium fails,
# it does not skip.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CI=${CI:-true}
export FAULTLINE_BIN=${FAULTLINE_BIN:-$PWD/build/src/cli/faultline}
exec python3 -m pytest -q -p no:cacheprovider tests/html
