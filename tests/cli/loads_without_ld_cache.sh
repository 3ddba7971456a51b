#!/usr/bin/env bash
# The built binaries find the CUDA libraries through their own run path: without the
# loader's cache (a toolkit from NVIDIA's runfile or a tarball does not enter its folder
# there), each still resolves every library it needs, and the tuner starts.
set -u
. "$(dirname "$0")/../cli_checks.sh"
[ $# -gt 0 ] || fail "usage: loads_without_ld_cache.sh BINARY..."
for binary in "$@"; do
  loader=$(readelf -l "$binary" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
  # A shared library names no loader: the tools' one reads it as well.
  [ -n "$loader" ] || loader=$(readelf -l "$1" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
  [ -x "$loader" ] || fail "no loader found for $binary"
  listed=$(env -u LD_LIBRARY_PATH "$loader" --inhibit-cache --list "$binary" 2>&1) ||
    fail "$loader --list $binary failed: $listed"
  if grep -q "not found" <<<"$listed"; then
    fail "$(basename "$binary") does not find, without the loader's cache: $(grep "not found" <<<"$listed" | tr -s ' \t\n' ' ')"
  fi
done
help=$(env -u LD_LIBRARY_PATH "$loader" --inhibit-cache "$1" --help 2>&1) ||
  fail "$(basename "$1") --help did not run without the loader's cache: $help"
echo "every binary resolves its libraries without the loader's cache"
