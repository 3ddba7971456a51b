#!/usr/bin/env bash
# The set-up scripts' edges, with stand-ins for the system's commands: tools/install-deps.sh
# as a user who is not root (apt-get reached through sudo, which resets the environment) and
# tools/junit_summary.sh, .ci/run's closing count, on a log with several cases to a line.
set -u
tools="${1:?usage: setup_scripts.sh TOOLS_FOLDER}"
. "$(dirname "$0")/../cli_checks.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# install-deps: every package missing, a user who is not root, and a sudo that keeps no
# variable but PATH (as env_reset does); apt-get records what it was given.
mkdir "$work/bin"
cat > "$work/bin/id" <<'STUB'
#!/bin/sh
echo 1000
STUB
cat > "$work/bin/dpkg-query" <<'STUB'
#!/bin/sh
exit 1
STUB
cat > "$work/bin/sudo" <<'STUB'
#!/bin/sh
exec env -i PATH="$PATH" APT_RECORD="$APT_RECORD" "$@"
STUB
cat > "$work/bin/apt-get" <<'STUB'
#!/bin/sh
echo "$1 DEBIAN_FRONTEND=${DEBIAN_FRONTEND:-unset}" >> "$APT_RECORD"
STUB
chmod +x "$work/bin/"*
# APT_RECORD passes sudo only because the stand-in carries it: the real one would not.
out=$(PATH="$work/bin:$PATH" APT_RECORD="$work/apt.txt" bash "$tools/install-deps.sh" 2>&1) ||
  fail "install-deps failed: $out"
grep -q "^install-deps: installing meson " <<<"$out" || fail "install-deps did not name what it installs: $out"
grep -qx "update DEBIAN_FRONTEND=unset" "$work/apt.txt" || fail "apt-get update was not run: $(cat "$work/apt.txt")"
grep -qx "install DEBIAN_FRONTEND=noninteractive" "$work/apt.txt" ||
  fail "apt-get install through sudo lost DEBIAN_FRONTEND (a debconf question would wait): $(cat "$work/apt.txt")"

# junit_summary: three cases on one line, one of them skipped, one failed and one an error
# on the next lines, as meson writes a script's results beside GoogleTest's.
cat > "$work/log.xml" <<'XML'
<testsuites><testsuite name="s"><testcase name="a"/><testcase name="b"><skipped/></testcase><testcase name="c"/></testsuite>
<testsuite name="t">
<testcase name="d"><failure message="x"/></testcase>
<testcase name="e"><error message="y"/></testcase>
</testsuite></testsuites>
XML
summary=$("$tools/junit_summary.sh" "$work/log.xml") || fail "junit_summary failed"
[ "$summary" = "2 passed, 2 failed, 1 skipped" ] || fail "junit_summary counted lines, not cases: $summary"
echo '<testsuites></testsuites>' > "$work/empty.xml"
summary=$("$tools/junit_summary.sh" "$work/empty.xml") || fail "junit_summary failed on a log without cases"
[ "$summary" = "0 passed, 0 failed, 0 skipped" ] || fail "junit_summary on an empty log: $summary"
echo "setup scripts: all checks passed"
