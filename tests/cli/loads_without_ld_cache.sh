#!/usr/bin/env bash
# The built binaries find the CUDA libraries through their own run path: without the
# loader's cache (a toolkit from NVIDIA's runfile or a tarball does not enter its folder
# there) and without LD_LIBRARY_PATH, each still resolves CUDA's libraries, and the tuner
# (the first binary) compiles, which needs NVRTC's built-ins library too.
set -u
. "$(dirname "$0")/../cli_checks.sh"
[ $# -gt 0 ] || fail "usage: loads_without_ld_cache.sh SGEMM_TUNE [BINARY...]"
tune="$1"
if ! readelf -d "$tune" | grep -q "(RUNPATH)"; then
  echo "SKIP: meson.build found no libcudart.so to write a run path for (see its CUDA_PATH rule)"
  exit 77
fi
loader=$(readelf -l "$tune" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
[ -x "$loader" ] || fail "no loader found for $tune"
without_cache() { env -u LD_LIBRARY_PATH "$loader" --inhibit-cache "$@"; }
for binary in "$@"; do
  listed=$(without_cache --list "$binary" 2>&1) || fail "$loader --list $binary failed: $listed"
  # Only CUDA's: the run path is written for them (another library may lie where only the
  # cache knows it).
  missing=$(grep -E "lib(cudart|nvrtc|cublas)[^ ]* => not found" <<<"$listed")
  [ -z "$missing" ] || fail "$(basename "$binary") does not find, without the loader's cache: $(tr -s ' \t\n' ' ' <<<"$missing")"
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'M,N,K\n64,64,64\n' > "$work/shapes.csv"
out=$(without_cache "$tune" --shapes "$work/shapes.csv" --dry-run --families naive --top-k 1 2>&1) ||
  fail "a dry run did not compile without the loader's cache: $out"
grep -q "^dry run: 1 kernel compiled for sm_90" <<<"$out" || fail "the dry run compiled nothing: $out"
echo "CUDA's libraries resolve, and NVRTC compiles, without the loader's cache"
