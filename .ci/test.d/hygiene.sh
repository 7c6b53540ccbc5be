#!/usr/bin/env bash
# Repository hygiene: everything the project needs lives in the repository.
#  - no file reads or names the reference folder that sits beside a
#    development checkout (a user's clone has none);
#  - no file names an absolute path of a development machine (commands in
#    docs and scripts run from the repository root with relative paths).
set -uo pipefail
cd "$(dirname "$0")/../.."
bad=0
self=.ci/test.d/hygiene.sh
hits=$(git grep -nE '\.\./shared|shared/(contracts|seeds)' -- . ":!$self" || true)
if [ -n "$hits" ]; then
  echo "files that name the reference folder beside the checkout:"; echo "$hits"; bad=1
fi
hits=$(git grep -nE '(^|[^A-Za-z0-9_.])/(work|home/[a-z]+|Users/[A-Za-z]+)/' -- . ":!$self" ':!tests/' || true)
if [ -n "$hits" ]; then
  echo "files that name a development machine's path:"; echo "$hits"; bad=1
fi
exit $bad
