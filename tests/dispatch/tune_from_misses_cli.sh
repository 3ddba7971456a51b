#!/usr/bin/env bash
# sgemm-tune --from-misses, the offline half of recording misses: documented, exclusive with
# --shapes and --dry-run (exit 1 with the reason), and without a GPU exit 2 saying so.
# Usage: tune_from_misses_cli.sh SGEMM_TUNE MAKE_SAMPLE_DB
set -u
tune="$1"
make_sample_db="$2"
. "$(dirname "$0")/../cli_checks.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$make_sample_db" "$tmp/sample.db" ours || fail "make_sample_db failed"
printf 'M,N,K\n8,64,64\n' >"$tmp/shapes.csv"

help=$("$tune" --help) || fail "sgemm-tune --help exited non-zero"
grep -q -- "--from-misses" <<<"$help" || fail "--help does not document --from-misses"

for args in "--from-misses --shapes $tmp/shapes.csv" ""; do
    err=$("$tune" --db "$tmp/sample.db" $args 2>&1 >/dev/null); rc=$?
    [ $rc -eq 1 ] || fail "'$args' exited $rc, expected 1"
    grep -q "give --shapes FILE or --from-misses, one of them" <<<"$err" || fail "'$args' message: $err"
done

err=$("$tune" --db "$tmp/sample.db" --from-misses --dry-run 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--from-misses --dry-run exited $rc, expected 1"
grep -q "cannot be a --dry-run" <<<"$err" || fail "--dry-run message: $err"

# The database's problems show on any machine; without a GPU, after the line that says so
# (only the database's was said, and the user learnt of the GPU after mending it).
err=$("$tune" --db "$tmp/absent.db" --from-misses 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -qF "no tuning database at $tmp/absent.db" <<<"$err" || fail "a missing database: $rc $err"
if [ "$(visible_gpus)" -eq 0 ]; then
  [ "$(sed -n 1p <<<"$err" | grep -c "^sgemm-tune: no CUDA device is visible")" -eq 1 ] &&
    [ "$(sed -n 2p <<<"$err")" = "sgemm-tune: and with a GPU the tune would stop on its database: no tuning database at $tmp/absent.db: a tune, an import or a merge writes one there" ] ||
    fail "without a GPU, a missing database of misses (the GPU's line first): $err"
  printf 'junk\n' > "$tmp/junk.db"
  expect_no_gpu "--from-misses" "no CUDA device is visible" "$tune" --db "$tmp/junk.db" --from-misses
  grep -qF "with a GPU the tune would stop on its database: $tmp/junk.db is not an SQLite database" <<<"$no_gpu_message" ||
    fail "without a GPU, a junk database of misses: $no_gpu_message"
fi

expect_no_gpu "--from-misses" "no CUDA device is visible" "$tune" --db "$tmp/sample.db" --from-misses
echo "ok: $no_gpu_message"
