#!/usr/bin/env bash
# examples/dispatch_decode run as its users run it: its arguments first, then without a GPU,
# create on a database it can read says so (exit 2). With one: a tune of one of the step's shapes (qkv at batch 8), then
# every GEMM of the step at batch 1, 8 and 32, each checked against cuBLAS with its output NaN
# first (exit 0), the tuned shape through its exact winner; then the weights stored out x in,
# the NT GEMMs that no winner covers, with their misses recorded for sgemm-tune --from-misses.
# Usage: dispatch_decode_run.sh DISPATCH_DECODE SGEMM_TUNE SGEMM_DB MAKE_SAMPLE_DB (the
# example built against the installed library, which LD_LIBRARY_PATH finds)
set -u
example="$1" tune="$2" db_tool="$3" make_sample="$4"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../cli_checks.sh"

run_example() { "$example" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }

# Its arguments: a device ordinal that is no whole number of 0 or more, a step count that is
# no whole number from 1 to 10000 (atoi read "5x" as 5 and overflowed past INT_MAX), and an
# empty database path (an unset variable, which read as the default database) are usage
# errors (1); --help is not (0, on standard output). A missing database fails create before
# any GPU is looked for (2), with or without one.
for bad in "--device -1" "--device x" "--device 1.5" "--device=" "--steps 5x" "--steps 0" "--steps 10001" \
           "--steps 99999999999" "--db="; do
  set -- ${bad%=}
  [ "$bad" = "${bad%=}" ] || set -- "$@" ""  # "--x=": the option with an empty value
  run_example "$@"
  [ "$rc" -eq 1 ] && grep -q "usage: dispatch_decode \[--db PATH\] \[--device N\]" "$tmp/err" ||
    fail "dispatch_decode $bad: exit $rc, expected 1 and the usage: $(cat "$tmp/err")"
done
run_example --help
[ "$rc" -eq 0 ] && grep -q "usage: dispatch_decode" "$tmp/out" ||
  fail "dispatch_decode --help: exit $rc, expected 0 and the usage on standard output: $(cat "$tmp/out" "$tmp/err")"
run_example --device 0 --db /nonexistent/tuning.db
[ "$rc" -eq 2 ] && grep -q "dispatch_decode: .*/nonexistent/tuning.db" "$tmp/err" ||
  fail "dispatch_decode with a missing database: exit $rc, expected 2: $(cat "$tmp/err")"

if ! gpu_present; then
  "$make_sample" "$tmp/sample.db" ours >/dev/null || fail "make_sample_db"
  run_example --db "$tmp/sample.db" --steps 1
  [ "$rc" -eq 2 ] && grep -q "no CUDA device" "$tmp/err" ||
    fail "dispatch_decode without a GPU: exit $rc, expected 2 and 'no CUDA device': $(cat "$tmp/err")"
  echo "ok: without a GPU dispatch_decode says: $(cat "$tmp/err")"
  exit 0
fi

printf 'M,N,K,transA,transB\n8,6144,4096,N,N\n' >"$tmp/qkv.csv"
"$tune" --shapes "$tmp/qkv.csv" --db "$tmp/tuned.db" --families decode --top-k 2 >"$tmp/tune.log" 2>&1 ||
  fail "sgemm-tune of qkv at batch 8: $(cat "$tmp/tune.log")"
run_example --db "$tmp/tuned.db" --steps 2
[ "$rc" -eq 0 ] && grep -q "^every GEMM matched cuBLAS$" "$tmp/out" ||
  fail "dispatch_decode on a GPU: exit $rc, expected 0: $(cat "$tmp/out" "$tmp/err")"
grep -q "^libsgemm_dispatch: 1 winners for this GPU" "$tmp/out" ||
  fail "dispatch_decode did not load the one winner tuned: $(cat "$tmp/out")"
[ "$(grep -c " GEMMs checked against cuBLAS" "$tmp/out")" -eq 3 ] ||
  fail "dispatch_decode did not check all three batches: $(cat "$tmp/out")"
# The qkv line of batch 8's table, and of no other batch, runs the exact winner.
exact=$(awk '/^batch /{batch=$2} $1=="qkv" && / exact: /{print batch}' "$tmp/out")
[ "$exact" = "8:" ] || fail "qkv ran an exact winner at batches '$exact', expected 8 alone: $(cat "$tmp/out")"

run_example --db "$tmp/tuned.db" --steps 1 --weights out-in --record-misses
[ "$rc" -eq 0 ] && grep -q "^every GEMM matched cuBLAS$" "$tmp/out" ||
  fail "dispatch_decode --weights out-in: exit $rc, expected 0: $(cat "$tmp/out" "$tmp/err")"
"$db_tool" --db "$tmp/tuned.db" misses >"$tmp/misses" 2>&1 && grep -q " NT " "$tmp/misses" ||
  fail "dispatch_decode --record-misses wrote no NT miss: $(cat "$tmp/misses")"
echo "ok: dispatch_decode matched cuBLAS on every GEMM of the step, stored in x out and out x in"
