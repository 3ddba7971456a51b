#!/usr/bin/env bash
# sgemm-dispatch-bench's command line: --help, bad arguments (exit 1, a message), a missing
# database (exit 2, saying so) and, without a GPU, exit 2 saying no CUDA device is visible.
# Usage: bench_cli.sh SGEMM_DISPATCH_BENCH MAKE_SAMPLE_DB
set -u
bench="$1"
make_sample_db="$2"
. "$(dirname "$0")/../cli_checks.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$("$bench" --help) || fail "--help exited non-zero"
grep -q -- "--calls" <<<"$out" || fail "--help does not document --calls"
grep -q "3 dispatch computed a wrong result" <<<"$out" || fail "--help does not give the exit statuses: $out"
grep -q -- "--device" <<<"$out" || fail "--help does not document --device"
expect_help_reports_a_full_disk sgemm-dispatch-bench "$bench"
expect_a_closed_pipe_to_end_it "$bench"

err=$("$bench" --db "$tmp/x.db" --m 0 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--m 0 exited $rc, expected 1"
grep -q "at least 1" <<<"$err" || fail "--m 0 message: $err"
grep -qF "Try 'sgemm-dispatch-bench --help'." <<<"$err" || fail "--m 0 does not point to --help: $err"

grep -q -- "--trans" <<<"$out" || fail "--help does not document --trans"
err=$("$bench" --db "$tmp/x.db" --trans XY 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF "unknown transposes 'XY' (expected NN, NT, TN or TT)" <<<"$err" || fail "--trans XY: $rc $err"
grep -qF "Try 'sgemm-dispatch-bench --help'." <<<"$err" || fail "--trans XY does not point to --help: $err"

err=$("$bench" --db "$tmp/x.db" --device -1 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--device must be 0 or more" <<<"$err" || fail "--device -1: $rc $err"
# A device this machine does not have is the environment's (2), with or without a GPU.
err=$("$bench" --db "$tmp/x.db" --without-database --device 999 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "--device 999 exited $rc, expected 2: $err"

# A word chosen from a list is read in any case, without the white space around it: past the
# parse to the device, which --device 999 makes missing on any machine (2).
err=$("$bench" --db "$tmp/x.db" --without-database --trans ' nt' --fallback ' Builtin' --device 999 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q SGEMM_DISPATCH_NO_DEVICE <<<"$err" || fail "--trans ' nt' --fallback ' Builtin': $rc $err"
err=$("$bench" --db "$tmp/x.db" --fallback maybe 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--fallback maybe exited $rc, expected 1"
grep -q "cublas, builtin or error" <<<"$err" || fail "--fallback message: $err"
# The value the message quotes is escaped: a newline typed into it is \x0a, not a second line.
err=$("$bench" --db "$tmp/x.db" --fallback $'may\nbe' 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF "not 'may\x0abe'" <<<"$err" && ! grep -q '^be' <<<"$err" || fail "--fallback with a newline: $rc $err"

# Arguments checked before any work: a stray word, a --json file that cannot be written.
err=$("$bench" --db "$tmp/x.db" extra 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "a stray argument exited $rc, expected 1"
grep -q "unexpected argument 'extra'" <<<"$err" || fail "stray argument message: $err"
err=$("$bench" --db "$tmp/x.db" --json "$tmp/missing/b.json" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--json into a missing folder exited $rc, expected 1"
grep -q -- "--json $tmp/missing/b.json: no folder $tmp/missing" <<<"$err" || fail "--json message: $err"
err=$("$bench" --db "" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--db is empty" <<<"$err" || fail "--db '': $rc $err"
# Nor over the database it reads (checked before the GPU is looked for).
echo database > "$tmp/x.db"
err=$("$bench" --db "$tmp/x.db" --json "$tmp/x.db" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--json $tmp/x.db: is the tuning database, which the output would replace" <<<"$err" ||
  fail "--json naming the database: $rc $err"
[ "$(cat "$tmp/x.db")" = database ] || fail "--json naming the database changed it"

err=$("$bench" --db "$tmp/missing.db" 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "a missing database exited $rc, expected 2"
grep -q "SGEMM_DISPATCH_DATABASE_ERROR" <<<"$err" || fail "missing database message: $err"
grep -q "$tmp/missing.db" <<<"$err" || fail "the message does not name the file: $err"
grep -q -- "with this tool, that option is --without-database" <<<"$err" || fail "no hint of --without-database: $err"
grep -q -- "--without-database" <<<"$out" || fail "--help does not document --without-database"
err=$("$bench" --db "$tmp/x.db" --calls 0 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--calls must be at least 1, not 0" <<<"$err" || fail "--calls 0: $rc $err"
# As sgemm-bench's --iters, the counts have a ceiling (a batch of millions fills the launch queue).
err=$("$bench" --db "$tmp/x.db" --calls 100001 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--calls must be at most 100000, not 100001" <<<"$err" || fail "--calls 100001: $rc $err"
err=$("$bench" --db "$tmp/x.db" --rounds 100001 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--rounds must be at most 100000, not 100001" <<<"$err" || fail "--rounds 100001: $rc $err"
"$make_sample_db" "$tmp/sample.db" ours || fail "make_sample_db failed"

# With --without-database, no default path either (no SGEMM_DB, XDG_DATA_HOME or HOME, and a user
# the password database lacks) is no error: the device comes next, and --device 999 is missing
# on any machine (2). Without --without-database it is (1). Needs a root that can become that
# user, and a build that user can run.
homeless() { setpriv --reuid=54321 --regid=54321 --clear-groups env -u HOME -u XDG_DATA_HOME -u SGEMM_DB "$@"; }
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null || getent passwd 54321 >/dev/null ||
   ! homeless test -x "$bench" 2>/dev/null; then
  echo "skip: the checks with no default database path need root, setpriv, no user 54321, and a build user 54321 can run"
else
  err=$(homeless "$bench" --without-database --device 999 2>&1 >/dev/null); rc=$?
  [ $rc -eq 2 ] && grep -q SGEMM_DISPATCH_NO_DEVICE <<<"$err" || fail "--without-database with no default path: $rc $err"
  err=$(homeless "$bench" --device 999 2>&1 >/dev/null); rc=$?
  [ $rc -eq 1 ] && grep -qF "no database path: give one" <<<"$err" || fail "no default path: $rc $err"
fi

# On a machine of two GPUs, the handle, the bench's buffers and cuBLAS all go to --device 1,
# and dispatch's results there match cuBLAS's (else exit 3).
if [ "$(visible_gpus)" -ge 2 ]; then
  out=$("$bench" --db "$tmp/sample.db" --device 1 --rounds 1 --calls 1 2>&1) || fail "--device 1 on two GPUs: $out"
fi

# On a GPU, the bench runs on the sample database in both layouts (a wrong result exits 3),
# and prints the overhead per call against the direct launch, and the cold start.
if gpu_present; then
  for layout in nn nt; do
    out=$("$bench" --db "$tmp/sample.db" --trans $layout --rounds 1 --calls 1 2>&1) ||
      fail "the bench on a GPU, --trans $layout: $out"
    grep -q "^measure  *dispatch  *baseline  *difference  *target$" <<<"$out" && grep -q "at most +1 us$" <<<"$out" &&
      grep -q "^create, CUDA context included  *[0-9.]* ms" <<<"$out" || fail "the bench's table, --trans $layout: $out"
  done
  # --json, with an even count of rounds: the overhead is the two medians' difference.
  "$bench" --db "$tmp/sample.db" --rounds 2 --calls 1 --json "$tmp/bench.json" >/dev/null 2>&1 || fail "--rounds 2 --json exited $?"
  python3 - "$tmp/bench.json" <<'PY' || fail "the bench's JSON: $(cat "$tmp/bench.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["rounds"] == 2 and d["calls_per_batch"] == 1, d
h = d["host_us_per_call"]
assert h["dispatch"] > 0 and h["bare"] > 0 and abs(d["overhead_us"] - (h["dispatch"] - h["bare"])) < 1e-9, d
assert d["back_to_back_us_per_call"]["dispatch"] > 0 and d["back_to_back_us_per_call"]["cublas"] > 0, d
PY
  # A database the handle does not read (--without-database over a missing file) is not named
  # as the one the calls went through, in the header or the JSON (both named the path).
  out=$("$bench" --db "$tmp/missing.db" --without-database --rounds 1 --calls 1 --json "$tmp/unread.json" 2>&1) ||
    fail "the bench without a database: $out"
  grep -q "^sgemm-dispatch-bench: .*, database not used (" <<<"$out" || fail "the header of a bench without a database: $out"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['database'] is None and d['database_not_used'].startswith('not used ('), d" \
    "$tmp/unread.json" || fail "the JSON of a bench without a database: $(cat "$tmp/unread.json")"
  # A shape past the GPU's memory (A alone is 149 GiB) exits 2, naming the shape.
  err=$("$bench" --db "$tmp/sample.db" --m 200000 --n 200000 --k 200000 --rounds 1 --calls 1 2>&1 >/dev/null); rc=$?
  [ $rc -eq 2 ] && grep -q "^sgemm-dispatch-bench: the operands of 200000x200000x200000 NN, their reference and its bound: .*memory" <<<"$err" ||
    fail "a shape past the GPU's memory: exit $rc: $err"
fi

# The no-GPU checks come last: on a GPU, the first one ends the script (cli_checks.sh).
# Without a database (missing, and no error asked for), the next thing looked for is the GPU.
expect_no_gpu "--without-database" SGEMM_DISPATCH_NO_DEVICE "$bench" --db "$tmp/missing.db" --without-database \
  --rounds 1 --calls 1
expect_no_gpu sgemm-dispatch-bench SGEMM_DISPATCH_NO_DEVICE "$bench" --db "$tmp/sample.db" --rounds 1 --calls 1
expect_no_gpu "--trans nt" SGEMM_DISPATCH_NO_DEVICE "$bench" --db "$tmp/sample.db" --trans nt --rounds 1 --calls 1
echo "ok: $no_gpu_message"
