#!/usr/bin/env bash
# Prints "N passed, F failed, S skipped" for a JUnit log (meson's testlog.junit.xml): the
# closing line of .ci/run. Elements are counted, not lines: meson writes a script's test
# cases several to a line.
set -euo pipefail
log="${1:?usage: junit_summary.sh TESTLOG.junit.xml}"
count() { { grep -o -E "$1" "$log" || true; } | wc -l; }
total=$(count '<testcase')
skipped=$(count '<skipped')
failed=$(count '<failure|<error')
echo "$((total - skipped - failed)) passed, $failed failed, $skipped skipped"
