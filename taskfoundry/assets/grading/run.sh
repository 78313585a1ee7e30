#!/bin/sh
# Runs the hidden suite from the workspace root; JUnit XML goes to eval/results.xml.
cd "$(dirname "$0")/.." || exit 2
exec python3 -m pytest eval/tests --rootdir=. -p no:cacheprovider -q \
  -o junit_family=xunit2 --timeout=60 --junitxml=eval/results.xml "$@"
