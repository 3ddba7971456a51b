#!/usr/bin/env bash
# sgemm-tune --from-misses, the offline half of recording misses: documented, exclusive with
# --shapes and --dry-run (exit 1 with the reason), and without a GPU exit 2 saying so.
# Usage: tune_from_misses_cli.sh SGEMM_TUNE MAKE_SAMPLE_DB
set -u
tune="$1"
make_sample_db="$2"
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$make_sample_db" "$tmp/sample.db" ours || fail "make_sample_db failed"
printf 'M,N,K\n8,64,64\n' >"$tmp/shapes.csv"

"$tune" --help | grep -q -- "--from-misses" || fail "--help does not document --from-misses"

for args in "--from-misses --shapes $tmp/shapes.csv" ""; do
    err=$("$tune" --db "$tmp/sample.db" $args 2>&1 >/dev/null); rc=$?
    [ $rc -eq 1 ] || fail "'$args' exited $rc, expected 1"
    grep -q "give --shapes FILE or --from-misses, one of them" <<<"$err" || fail "'$args' message: $err"
done

err=$("$tune" --db "$tmp/sample.db" --from-misses --dry-run 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--from-misses --dry-run exited $rc, expected 1"
grep -q "cannot be a --dry-run" <<<"$err" || fail "--dry-run message: $err"

err=$("$tune" --db "$tmp/sample.db" --from-misses 2>&1 >/dev/null); rc=$?
if [ $rc -eq 0 ]; then
  echo "a GPU is visible: the no-GPU message cannot be checked here"
  exit 0
fi
[ $rc -eq 2 ] || fail "without a GPU --from-misses exited $rc, expected 2: $err"
grep -q "no CUDA device is visible" <<<"$err" || fail "no-GPU message: $err"
echo "ok: $err"
