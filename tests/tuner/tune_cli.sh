#!/usr/bin/env bash
# sgemm-tune's command line: --help, bad CSVs (exit 1, file:line, nothing tuned), a
# --dry-run over a small space (compiles, no GPU), one stopped by Ctrl-C, a tune that goes on
# past candidates that fault the GPU and one that ten faults end, signals to a tune, misses too
# large to tune, misses of an earlier build, the whole log of a compile NVRTC refuses, and
# without a GPU a clear exit 2.
set -u
tune="$1"
plant="$2"  # plant_faulting_kernel: a kernel that traps, in a database's binary cache
make_sample="$3"  # make_sample_db: "old" makes an empty database of schema version 1
plant_misses="$4"  # plant_misses: this GPU's misses, many too large to tune and one that fits
usage="usage: tune_cli.sh SGEMM_TUNE PLANT_FAULTING_KERNEL MAKE_SAMPLE_DB PLANT_MISSES SGEMM_DB NVRTC_REFUSES_COMPILES"
db_tool="${5:?$usage}"  # sgemm-db: what it explains and lists of a tune's database
refusing_nvrtc="${6:?$usage}"  # preloaded: NVRTC refuses NVRTC_REFUSE's compiles, with a long log of several lines
. "$(dirname "$0")/../cli_checks.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export SGEMM_DB="$dir/tuning.db"
# The refusing NVRTC, preloaded by its whole path (a step may run from another folder), after
# AddressSanitizer's runtime in a build with it, which must come first.
asan_runtime=$(ldd "$tune" | awk '/libasan\.so/ {print $3}')
refusing_preload="${asan_runtime:+$asan_runtime:}$(realpath "$refusing_nvrtc")"

out=$("$tune" --help) || fail "--help exited non-zero"
for word in --shapes --strategy --dry-run --retune --retry-faulted --check-fp64 --allow-atomics --jobs --budget-s "Exit status"; do
  grep -q -- "$word" <<<"$out" || fail "--help does not document $word"
done
# The model strategy's refinement, which times most of its candidates, is described too.
grep -q "walk" <<<"$out" || fail "--help does not say that the model strategy walks from the fastest"
grep -q "exit status 130 (143 for" <<<"$out" || fail "--help does not give SIGTERM's exit status"
grep -q "which comes before a lost output's 2" <<<"$out" || fail "--help does not rank a signal before a lost output"
grep -q "1 bad arguments (a --device past the GPUs too)" <<<"$out" || fail "--help does not say a --device past the GPUs exits 1"
# --jobs defaults to the CPUs the process may run on (a container's cpuset), not the machine's.
if command -v taskset >/dev/null; then
  one=$(taskset -c "$(taskset -pc $$ | sed 's/.*: //; s/[-,].*//')" "$tune" --help) || fail "--help on one CPU exited non-zero"
  grep -qF -- "--jobs arg (=1)" <<<"$one" || fail "--jobs on one CPU does not default to 1: $(grep -- --jobs <<<"$one")"
fi
expect_help_reports_a_full_disk sgemm-tune "$tune"
expect_a_closed_pipe_to_end_it "$tune"

printf 'M,N,K\n8,4096,4096\n8,abc,4096\n' > "$dir/bad.csv"
err=$("$tune" --shapes "$dir/bad.csv" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "a bad CSV exited $rc, expected 1"
grep -q "bad.csv:3: N 'abc' is not a whole number" <<<"$err" || fail "bad CSV message: $err"
[ ! -e "$SGEMM_DB" ] || fail "a bad CSV created the database"
printf 'M,N,K\n8,4096,4096\n8,abc,4096\n0,1,1\n' > "$dir/bad2.csv"
err=$("$tune" --shapes "$dir/bad2.csv" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -q "2 bad lines in $dir/bad2.csv:" <<<"$err" && grep -q "bad2.csv:3: N 'abc'" <<<"$err" &&
  grep -q "bad2.csv:4: M must be at least 1" <<<"$err" || fail "a CSV's bad lines, all named: $rc $err"

err=$("$tune" --shapes "$dir/missing.csv" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "a missing CSV exited $rc, expected 1"
err=$("$tune" --shapes "$dir/bad.csv" --strategy greedy 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "an unknown strategy exited $rc, expected 1"
grep -q "unknown search strategy 'greedy'" <<<"$err" || fail "strategy message: $err"
grep -qF "Try 'sgemm-tune --help'." <<<"$err" || fail "an unknown strategy does not point to --help: $err"
# A mistyped option points to --help, as the other tools' do; a bad file does not.
err=$("$tune" --shapez "$dir/bad.csv" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF "Try 'sgemm-tune --help'." <<<"$err" || fail "a mistyped option: $rc $err"
err=$("$tune" --shapes "$dir/bad.csv" 2>&1 >/dev/null)
! grep -q "Try 'sgemm-tune --help'" <<<"$err" || fail "a bad CSV points to --help: $err"
err=$("$tune" --shapes "$dir/bad.csv" --budget-s 1e400 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF "for option '--budget-s' is invalid: it takes a number no larger in size than about 1.8e308" <<<"$err" ||
  fail "--budget-s 1e400: $rc $err"

printf 'M,N,K,name\n8,1000,517,odd\n1,256,256,tiny\n' > "$dir/small.csv"
out=$("$tune" --shapes "$dir/small.csv" --dry-run --families async,decode --top-k 3 --jobs 2 2>&1); rc=$?
[ $rc -eq 0 ] || fail "--dry-run exited $rc: $out"
grep -q "M=8 N=1000 K=517 NN fp32 align4 (odd): [0-9]* valid candidates, 3 to time, then the walks from the fastest (model search)" <<<"$out" ||
  fail "dry run plan: $out"
[ "$(grep -c 'registers' <<<"$out")" -eq 6 ] || fail "expected 6 compiled candidates: $out"
# Shared memory is the launch's, dynamic part included: decode keeps its slice of A there.
grep -q "decode .* registers" <<<"$out" || fail "no decode candidate in the plan: $out"
! grep -Eq "decode .* registers +0 B smem" <<<"$out" || fail "decode's shared memory shown without A's slice: $out"
grep -q "nothing was timed or stored" <<<"$out" || fail "dry run summary: $out"
[ ! -e "$SGEMM_DB" ] || fail "--dry-run created the database"
# NT rows (weights stored out x in): decode's candidates are those that read B as N x K.
printf 'M,N,K,transA,transB\n8,1000,517,N,T\n' > "$dir/nt.csv"
out=$("$tune" --shapes "$dir/nt.csv" --dry-run --families decode --top-k 4 --jobs 2 2>&1) || fail "NT dry run: $out"
[ "$(grep -c 'decode .*TB=1 .*registers' <<<"$out")" -eq 4 ] || fail "expected 4 decode candidates with TB=1: $out"
! grep -q "TB=0" <<<"$out" || fail "an NT row planned a decode kernel that reads B as K x N: $out"
# A cap the first list fills leaves the walks nothing: the plan says no more.
out=$("$tune" --shapes "$dir/small.csv" --dry-run --families async --top-k 3 --max-candidates 2 --jobs 2 2>&1) ||
  fail "--max-candidates 2 dry run: $out"
grep -q "M=8 N=1000 K=517 NN fp32 align4 (odd): [0-9]* valid candidates, 2 to time (model search)" <<<"$out" ||
  fail "dry run plan with a cap: $out"

# Split-K tiles that add with float atomics are candidates only with --allow-atomics.
printf 'M,N,K\n32,4096,4096\n' > "$dir/batch32.csv"
# The dry run's status is its own, not the sed's that reads its plan.
valid_of() {
  local plan
  plan=$("$tune" --shapes "$dir/batch32.csv" --dry-run --families warptile --top-k 1 --max-candidates 1 "$@" 2>&1) ||
    fail "--allow-atomics dry run ($*): $plan" >&2  # said, not captured with the count
  sed -n 's/.*: \([0-9]*\) valid candidates.*/\1/p' <<<"$plan"
}
plain=$(valid_of) || exit 1
atomic=$(valid_of --allow-atomics) || exit 1
[ -n "$plain" ] && [ -n "$atomic" ] && [ "$atomic" -gt "$plain" ] ||
  fail "--allow-atomics should add candidates: $plain without, $atomic with"

# A shape no family searched can run says so, and that cuBLAS will take it (async reads NN only).
printf 'M,N,K,transA\n64,64,64,T\n' > "$dir/transposed.csv"
out=$("$tune" --shapes "$dir/transposed.csv" --dry-run --families async 2>&1) || fail "transposed dry run: $out"
grep -q "0 valid candidates, 0 to time (model search)" <<<"$out" &&
  grep -q "none of the families searched runs this shape on sm_90: a tune stores cuBLAS for it" <<<"$out" ||
  fail "a shape without candidates: $out"

# An align column plans the shape at that class: padded rows (16) of an odd shape are another
# key than its tight ones.
out=$(printf 'M,N,K,align\n7,17,9,16\n7,17,9,\n' | "$tune" --shapes - --dry-run --families naive --top-k 1 2>&1) ||
  fail "--shapes with align: $out"
grep -q "M=7 N=17 K=9 NN fp32 align16" <<<"$out" && grep -q "M=7 N=17 K=9 NN fp32 align4" <<<"$out" ||
  fail "the align column did not key the shape by its class: $out"

# NVRTC's own failure (a damaged built-ins library, which NVRTC loads at its first compile)
# stops the run with NVRTC's words (exit 2): each candidate was marked "does not compile",
# and a tune then stored cuBLAS for every shape. A file of that name that is no library,
# found first through LD_LIBRARY_PATH, stands in for the damage.
nvrtc_dir=$(dirname "$(ldd "$tune" | awk '/libnvrtc\.so/ {print $3}')")
mkdir "$dir/damaged-nvrtc"
for builtins in "$nvrtc_dir"/libnvrtc-builtins.so.[0-9]*; do
  echo "not a library" > "$dir/damaged-nvrtc/$(basename "$builtins")"
done
[ -n "$(ls "$dir/damaged-nvrtc")" ] || fail "no libnvrtc-builtins.so.N.N beside $nvrtc_dir/libnvrtc.so"
out=$(LD_LIBRARY_PATH="$dir/damaged-nvrtc${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tune" --shapes "$dir/small.csv" --dry-run --families naive --top-k 2 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "^sgemm-tune: NVRTC could not run its compile of sgemm_naive<.*> for sm_90 (NVRTC_ERROR_BUILTIN_OPERATION_FAILURE)" <<<"$out" &&
  ! grep -q "does not compile" <<<"$out" || fail "a damaged NVRTC: $rc $out"

# A configuration NVRTC refuses: the dry run prints NVRTC's whole log under it, a line of the
# log to a line (it printed 200 bytes on one line, cut mid-word); no family fails to compile,
# so a preloaded NVRTC refuses the naive family's.
out=$(NVRTC_REFUSE=naive.cu LD_PRELOAD="$refusing_preload" "$tune" --shapes "$dir/small.csv" --dry-run --families naive --top-k 1 --max-candidates 1 2>&1) ||
  fail "a dry run whose compiles NVRTC refuses: $out"
grep -q "^  naive .* does not compile:$" <<<"$out" || fail "a refused compile's line: $out"
grep -qx "    NVRTC failed to compile sgemm_naive<.*> for sm_90 (NVRTC_ERROR_COMPILATION):" <<<"$out" &&
  grep -qxF '    planted.cu(3): error: identifier "planted_by_tune_cli" is undefined' <<<"$out" &&
  grep -qx "    planted.cu(4): error: this line is long, .*what a tune stores;" <<<"$out" &&
  grep -qxF '    2 errors detected in the compilation of "planted.cu".' <<<"$out" || fail "a refused compile's log, whole: $out"
[ "$(grep -x "    planted.cu(4): .*" <<<"$out" | head -1 | wc -c)" -gt 450 ] || fail "the log's long line was cut: $out"

# - reads the shapes from standard input, and its messages name it.
out=$(printf 'M,N,K\n8,64,64\n' | "$tune" --shapes - --dry-run --families naive --top-k 1 2>&1) || fail "--shapes -: $out"
grep -q "M=8 N=64 K=64 NN fp32 align16: " <<<"$out" || fail "--shapes - planned nothing: $out"
err=$("$tune" --shapes - --dry-run --json "$dir/small.csv" 2>&1 >/dev/null <"$dir/small.csv"); rc=$?
[ $rc -eq 1 ] && grep -qF "is the shapes CSV behind standard input" <<<"$err" || fail "--json naming the file behind --shapes -: $rc $err"
# --json - is standard output, which is no file: said so, not taken for the shapes behind it.
err=$("$tune" --shapes - --dry-run --json - 2>&1 >/dev/null <"$dir/small.csv"); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--json -: names no file here" <<<"$err" || fail "--json - with --shapes -: $rc $err"
# --db - reads as standard input, which no database is: refused, with the way to a file of that
# name. Named so, the file is the database: --json over it is refused.
tune_path=$(realpath "$tune")
cp "$dir/small.csv" "$dir/-"
err=$(cd "$dir" && "$tune_path" --shapes small.csv --db - 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--db -: a database cannot be read from standard input or written to standard output; write ./- for a file named -" <<<"$err" ||
  fail "--db -: $rc $err"
err=$(cd "$dir" && "$tune_path" --shapes small.csv --db ./- --json ./- 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--json ./-: is the tuning database, which the output would replace" <<<"$err" ||
  fail "--json over a database named -: $rc $err"
cmp -s "$dir/-" "$dir/small.csv" || fail "the file named - changed"
rm "$dir/-"
# Nor is --json written over another database (paths in the wrong order, say).
"$make_sample" "$dir/other.db" ours || fail "make_sample_db"
cp "$dir/other.db" "$dir/other.keep"
err=$("$tune" --shapes "$dir/small.csv" --db "$dir/tuning.db" --json "$dir/other.db" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--json $dir/other.db: is an SQLite database, which this output would replace" <<<"$err" ||
  fail "--json over another database: $rc $err"
cmp -s "$dir/other.db" "$dir/other.keep" || fail "--json over another database changed it"
[ ! -e "$dir/tuning.db" ] || fail "a refused --json made the database"
err=$(printf 'M,N,K\n8,x,64\n' | "$tune" --shapes - --dry-run 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF "standard input:2: N 'x' is not a whole number" <<<"$err" || fail "--shapes - with a bad row: $rc $err"
# A standard input with nothing to read is said to be so, not taken for a CSV without a header.
err=$("$tune" --shapes - --dry-run 2>&1 >/dev/null < "$dir"); rc=$?
[ $rc -eq 1 ] && grep -qF "standard input: is a folder, not a CSV file" <<<"$err" || fail "--shapes - < a folder: $rc $err"
# Closed, with no command substitution: its pipe would take descriptor 0.
"$tune" --shapes - --dry-run <&- > /dev/null 2> "$dir/err"; rc=$?
[ $rc -eq 1 ] && grep -qF "standard input: cannot be read (Bad file descriptor)" "$dir/err" ||
  fail "--shapes - <&-: $rc $(cat "$dir/err")"

# A path's control characters reach the terminal escaped, as every tool prints them.
printf 'M,N,K\n8,x,64\n' > "$dir/red"$'\e'"[31m.csv"
err=$("$tune" --shapes "$dir/red"$'\e'"[31m.csv" --dry-run 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF 'red\x1b[31m.csv:2:' <<<"$err" && ! grep -q $'\e' <<<"$err" ||
  fail "a control character in the shapes path: $rc $(printf '%q' "$err")"
# So does a field's newline (a quoted CSV field may hold one) in the message that quotes it.
printf 'M,N,K,transA,transB,precision\n8,64,64,N,N,"fp\n16"\n' > "$dir/newline_field.csv"
err=$("$tune" --shapes "$dir/newline_field.csv" --dry-run 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF "newline_field.csv:2: precision 'fp\x0a16' is not tuned" <<<"$err" && ! grep -q '^16' <<<"$err" ||
  fail "a newline in a quoted field: $rc $err"
# And the file's own name: with a newline, it stays in the lines that name it.
printf 'M,N,K\n8,x,64\n8,64,y\n' > "$dir/bad"$'\n'"FAKE LINE.csv"
err=$("$tune" --shapes "$dir/bad"$'\n'"FAKE LINE.csv" --dry-run 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF 'bad\x0aFAKE LINE.csv:2:' <<<"$err" && ! grep -q '^FAKE LINE' <<<"$err" ||
  fail "a newline in the shapes path: $rc $err"

# So do a shape name's bytes that are not UTF-8 (a Latin-1 CSV's "café"), in the dry run's
# line as in the rest of its output.
out=$(printf 'M,N,K,name\n8,64,64,caf\xe9\n' | "$tune" --shapes - --dry-run --families naive --top-k 1 2>&1) ||
  fail "a Latin-1 name: $out"
grep -qF 'M=8 N=64 K=64 NN fp32 align16 (caf\xe9):' <<<"$out" && ! LC_ALL=C grep -q $'\xe9' <<<"$out" ||
  fail "a Latin-1 name reached the terminal raw: $(printf '%q' "$out")"

# Names in any case: families and the arch.
out=$("$tune" --shapes "$dir/small.csv" --dry-run --arch SM_80 --families NAIVE --top-k 1 2>&1) ||
  fail "--arch SM_80 --families NAIVE: $out"
grep -q "dry run for sm_80" <<<"$out" && grep -q "naive" <<<"$out" || fail "names in upper case: $out"

# Another arch is planned for a GPU of that arch, and the plan says which.
out=$("$tune" --shapes "$dir/small.csv" --dry-run --arch sm_80 --families naive --top-k 1 2>&1) || fail "--arch sm_80: $out"
grep -q "dry run for sm_80: the cost model ranks candidates for A100-80GB (108 SMs" <<<"$out" ||
  fail "a dry run for sm_80 does not say what it plans for: $out"
! grep -q "takes the newest arch below" <<<"$out" || fail "sm_80 has a GPU of its own: $out"
# An arch without a built-in GPU of its own plans for the newest below, and says so.
out=$("$tune" --shapes "$dir/small.csv" --dry-run --arch sm_89 --families naive --top-k 1 2>&1) || fail "--arch sm_89: $out"
grep -q "dry run for sm_89: the cost model ranks candidates for RTX 3090 (82 SMs.*), an sm_86 GPU: the planner knows none of sm_89 and takes the newest arch below" <<<"$out" ||
  fail "a dry run for sm_89 does not say that it plans for an sm_86 GPU: $out"

# A row too large for the GPU a dry run plans for stops it, as it would stop the tune there;
# every such row is named at once.
printf 'M,N,K\n8,4096,4096\n1000000,1000000,1000000\n100000,100000,100000\n' > "$dir/huge.csv"
err=$("$tune" --shapes "$dir/huge.csv" --dry-run --families naive --top-k 1 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "a dry run with a row too large exited $rc, expected 1: $err"
grep -qF "huge.csv:3: M=1000000 N=1000000 K=1000000 NN fp32 align16 needs" <<<"$err" && grep -qF "the GPU has 140.4 GiB (H200, the GPU this dry run plans for)" <<<"$err" ||
  fail "a dry run with a row too large: $err"
grep -qF "huge.csv:4: M=100000 N=100000 K=100000 NN fp32 align16 needs" <<<"$err" ||
  fail "a dry run named only the first row too large: $err"
# The first 20 are named, and how many more.
{ echo M,N,K; for m in $(seq 100001 100023); do echo "$m,100000,100000"; done; } > "$dir/huger.csv"
err=$("$tune" --shapes "$dir/huger.csv" --dry-run --families naive --top-k 1 2>&1 >/dev/null)
[ "$(grep -c "needs .* GiB of device memory for tuning" <<<"$err")" -eq 20 ] && grep -qxF "sgemm-tune: and 3 more shapes it cannot tune" <<<"$err" ||
  fail "23 rows too large: $err"
# For an arch the planner knows no GPU of, the GPU standing in may hold less: a note only.
err=$("$tune" --shapes "$dir/huge.csv" --dry-run --arch sm_89 --families naive --top-k 1 2>&1 >/dev/null) ||
  fail "a dry run for sm_89 with a row too large for its stand-in failed: $err"
grep -qF "(RTX 3090, which stands in for sm_89 here; an sm_89 GPU may hold more)" <<<"$err" ||
  fail "no note of the row too large for the stand-in: $err"
# Rows longer than the check can lay out fit no GPU: a bad line of the file (exit 1), for a
# stand-in too (it was a note that the GPU "may hold more"), and without a GPU (it was exit 2).
printf 'M,N,K\n1,536870905,1\n' > "$dir/long.csv"
for arch in sm_90 sm_89; do
  err=$("$tune" --shapes "$dir/long.csv" --dry-run --arch $arch --families naive --top-k 1 2>&1 >/dev/null); rc=$?
  [ $rc -eq 1 ] && grep -qF "long.csv:2: M=1 N=536870905 K=1 NN fp32 align4 has rows of 536870905 floats" <<<"$err" ||
    fail "a dry run for $arch with rows too long: $rc $err"
done
err=$("$tune" --shapes "$dir/long.csv" --db "$dir/long.db" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF "so rows of at most 536870904 floats can be tuned" <<<"$err" || fail "rows too long, to tune: $rc $err"
[ ! -e "$dir/long.db" ] || fail "a refused shapes file made a database"

# An architecture NVRTC does not compile for is refused up front, with the ones it does.
err=$("$tune" --shapes "$dir/small.csv" --dry-run --arch sm_91 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--arch sm_91 exited $rc, expected 1"
grep -q "sm_91 is not a compile target: with NVRTC [0-9.]* this build compiles for sm_.*sm_90" <<<"$err" || fail "--arch sm_91 message: $err"

# Arguments that need no GPU are checked before any work: a stray argument (a second CSV),
# an empty --families, a NaN budget, and a --json file that cannot be written, which would
# otherwise fail only after the whole tune. A --json file that exists is left as it was.
err=$("$tune" --shapes "$dir/small.csv" "$dir/bad.csv" --dry-run 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "a second CSV exited $rc, expected 1"
grep -q "unexpected argument '$dir/bad.csv'" <<<"$err" || fail "stray argument message: $err"
# An option without its value does not take the next option as one: --json --dry-run was a
# tune (on a GPU) that wrote its table to a file named "--dry-run".
err=$("$tune" --shapes "$dir/small.csv" --json --dry-run 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--json --dry-run exited $rc, expected 1"
grep -qF -- "--json needs a value, and the word after it is the option --dry-run (write --json=--dry-run" <<<"$err" ||
  fail "--json --dry-run message: $err"
[ ! -e ./--dry-run ] || fail "--json --dry-run wrote a file named --dry-run"
# Collecting stray words takes nothing from the options: --help still wins, and boost's
# abbreviations (--st for --strategy) still resolve.
out=$("$tune" --help extra) || fail "--help with a stray word exited non-zero"
grep -q -- "--shapes" <<<"$out" || fail "--help with a stray word did not print the help"
"$tune" --st model --shapes "$dir/small.csv" --dry-run --families naive --top-k 1 >/dev/null 2>&1 ||
  fail "--st (for --strategy) was refused"
err=$("$tune" --shapes "$dir/small.csv" --dry-run --families ,, 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--families ,, exited $rc, expected 1"
grep -q -- "--families names nothing" <<<"$err" || fail "empty --families message: $err"
err=$("$tune" --shapes "$dir/small.csv" --budget-s nan 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--budget-s must be at least 0, not nan" <<<"$err" || fail "--budget-s nan: $rc $err"
# An infinite cap stops nothing but would mark the run narrowed: 0 says none.
err=$("$tune" --shapes "$dir/small.csv" --budget-s inf 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--budget-s must be a finite number of seconds (0 for no cap), not inf" <<<"$err" ||
  fail "--budget-s inf: $rc $err"
err=$("$tune" --shapes "$dir/small.csv" --jobs 0 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--jobs must be at least 1, not 0" <<<"$err" || fail "--jobs 0: $rc $err"
err=$("$tune" --shapes "" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--shapes is empty" <<<"$err" || fail "--shapes '': $rc $err"
err=$("$tune" --shapes "$dir/small.csv" --json "$dir/missing/t.json" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--json into a missing folder exited $rc, expected 1"
grep -q -- "--json $dir/missing/t.json: no folder $dir/missing" <<<"$err" || fail "--json message: $err"
err=$("$tune" --shapes "$dir/small.csv" --json "$dir" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--json naming a folder exited $rc, expected 1"
grep -q "is a folder" <<<"$err" || fail "--json folder message: $err"
# --json never names what the run reads: the table would be renamed over it at the end.
cp "$dir/small.csv" "$dir/shapes-copy.csv"
err=$("$tune" --shapes "$dir/shapes-copy.csv" --json "$dir/shapes-copy.csv" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--json $dir/shapes-copy.csv: is the shapes CSV, which the output would replace" <<<"$err" ||
  fail "--json naming the shapes CSV: $rc $err"
cmp -s "$dir/small.csv" "$dir/shapes-copy.csv" || fail "--json naming the shapes CSV changed it"
echo database > "$dir/existing.db"
err=$("$tune" --shapes "$dir/small.csv" --db "$dir/existing.db" --json "$dir/./existing.db" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF "is the tuning database, which the output would replace" <<<"$err" ||
  fail "--json naming the database: $rc $err"
# A database the tune would create is the same file all the same.
err=$("$tune" --shapes "$dir/small.csv" --db "$dir/fresh.db" --json "$dir/fresh.db" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF "is the tuning database, which the output would replace" <<<"$err" ||
  fail "--json naming a database not made yet: $rc $err"
err=$("$tune" --shapes "$dir/small.csv" --db "$dir/existing.db" --json "$dir/existing.db-wal" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF "is the tuning database's write-ahead log" <<<"$err" || fail "--json naming the database's WAL: $rc $err"
# So is one reached through a symbolic link to no file yet, on either side: the tune makes the
# database where the link points, and the table would then be written into it.
ln -s fresh2.db "$dir/link-to-db.json"
err=$("$tune" --shapes "$dir/small.csv" --db "$dir/fresh2.db" --json "$dir/link-to-db.json" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF "is the tuning database, which the output would replace" <<<"$err" ||
  fail "--json a link to a database not made yet: $rc $err"
ln -s fresh3.db "$dir/link.db"
err=$("$tune" --shapes "$dir/small.csv" --db "$dir/link.db" --json "$dir/fresh3.db" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF "is the tuning database, which the output would replace" <<<"$err" ||
  fail "--json where a database link to no file yet points: $rc $err"
# (A dry run checks --json too, and writes no table: the files show what the check did.)
echo previous > "$dir/kept.json"
"$tune" --shapes "$dir/small.csv" --dry-run --families naive --top-k 1 --json "$dir/kept.json" >/dev/null 2>"$dir/err" ||
  fail "a dry run with --json exited non-zero"
grep -qF "a dry run times nothing, so it writes no --json table ($dir/kept.json was only checked)" "$dir/err" ||
  fail "a dry run does not say it writes no --json: $(cat "$dir/err")"
[ "$(cat "$dir/kept.json")" = previous ] || fail "checking --json changed the existing file"
"$tune" --shapes "$dir/small.csv" --dry-run --families naive --top-k 1 --json "$dir/new.json" >/dev/null 2>"$dir/err" ||
  fail "a dry run with a new --json failed: $(cat "$dir/err")"
[ ! -e "$dir/new.json" ] || fail "checking --json left a new file behind"
# A FIFO is not opened to check it: that would block until a reader came, or end its reader.
mkfifo "$dir/pipe.json"
timeout 20 "$tune" --shapes "$dir/small.csv" --dry-run --families naive --top-k 1 --json "$dir/pipe.json" \
  >/dev/null 2>&1 || fail "checking a FIFO for --json blocked or failed"

# Options that would be silently ignored are refused or named.
err=$("$tune" --shapes "$dir/small.csv" --dry-run --families naive,async,naive 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--families: naive is given twice" <<<"$err" || fail "a repeated family: $rc $err"
err=$("$tune" --shapes "$dir/small.csv" --arch sm_80 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--arch is the compile target of --dry-run" <<<"$err" || fail "--arch without --dry-run: $rc $err"
# (--check-fp64 is used: its fp64 reference counts in the memory a shape needs.)
err=$("$tune" --shapes "$dir/small.csv" --dry-run --families naive --top-k 1 --retune --db "$dir/x.db" --budget-s 5 \
  --retry-faulted --check-fp64 2>&1 >/dev/null) || fail "a dry run with tuning options failed: $err"
grep -qF "a dry run uses no GPU and no database, so it leaves out --db, --retune, --retry-faulted, --budget-s" <<<"$err" ||
  fail "a dry run does not name what it leaves out: $err"
# A dry run opens no database, so it needs no default path: a user with no home and no
# SGEMM_DB runs it (it was refused: "no database path"). Only root can be such a user here.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  chmod 755 "$dir"
  setpriv --reuid=54321 --regid=54321 --clear-groups env -u HOME -u SGEMM_DB -u XDG_DATA_HOME \
    "$tune" --shapes "$dir/small.csv" --dry-run --families naive --top-k 1 >/dev/null 2>"$dir/err" ||
    fail "a dry run by a user with no home: $(cat "$dir/err")"
fi

err=$("$tune" --shapes "$dir/small.csv" --dry-run --families naive --top-k 1 --seed 3 --budget 2 2>&1 >/dev/null) ||
  fail "a model dry run with the random strategy's options failed: $err"
grep -qF "the model strategy does not use --budget, --seed" <<<"$err" || fail "options of another strategy: $err"
err=$("$tune" --shapes "$dir/small.csv" --dry-run --families naive --strategy random --budget 1 --top-k 2 2>&1 >/dev/null) ||
  fail "a random dry run with --top-k failed: $err"
grep -qF "the random strategy does not use --top-k" <<<"$err" || fail "--top-k under random: $err"
err=$("$tune" --shapes "$dir/small.csv" --dry-run --strategy random --seed -1 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--seed must be 0 or more, not -1" <<<"$err" || fail "--seed -1: $rc $err"
err=$("$tune" --shapes "$dir/small.csv" --device -1 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--device must be 0 or more" <<<"$err" || fail "--device -1: $rc $err"
err=$("$tune" --shapes "$dir/small.csv" --db "" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--db is empty" <<<"$err" || fail "--db '': $rc $err"
err=$("$tune" --shapes "$dir/small.csv" --json "" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--json is empty" <<<"$err" || fail "--json '': $rc $err"
# A folder that --db or SGEMM_DB names and that is not there is a typo, refused before any
# work as sgemm-db refuses it (a tune on a GPU made it, and a database no one would look in);
# a symbolic link to no file yet names its target's folder.
err=$("$tune" --shapes "$dir/small.csv" --db "$dir/typo/tune.db" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--db $dir/typo/tune.db: there is no folder $dir/typo to make the database in (make it first)" <<<"$err" ||
  fail "--db in a missing folder: $rc $err"
err=$(SGEMM_DB="$dir/typo/tune.db" "$tune" --shapes "$dir/small.csv" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "SGEMM_DB=$dir/typo/tune.db: there is no folder $dir/typo" <<<"$err" ||
  fail "SGEMM_DB in a missing folder: $rc $err"
ln -s "$dir/typo/target.db" "$dir/typo-link.db"
err=$("$tune" --shapes "$dir/small.csv" --db "$dir/typo-link.db" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF "; the symbolic link points to $dir/typo/target.db" <<<"$err" ||
  fail "--db a link into a missing folder: $rc $err"
[ ! -e "$dir/typo" ] || fail "a refused tune made the folder"
rm "$dir/typo-link.db"

# Ctrl-C (SIGINT) during a run stops it after the compiles in progress, says so, and exits
# 130; the shapes not begun are left out. (Job control, so that the background run gets
# SIGINT at all: a script's background jobs start with it ignored.) The signal comes once the
# first shape's plan is in the file: a dry run sends each plan out before the next shape's
# compiles, into a file or a pipe too, where the C library would hold them all back to the end
# (and the run would be over before any arrived).
# SIGTERM (a job scheduler's, a container's stop) does the same and ends with status 143.
printf 'M,N,K\n1,4096,1024\n2,4096,1024\n4,4096,1024\n8,4096,1024\n' > "$dir/four.csv"
for signal in INT TERM; do
  # The last turn's plan is gone first: the wait below could read it before this run's shell
  # empties the file, and signal the run before it starts (on a loaded CI machine a SIGTERM
  # turn so signalled exited 0, with nothing on standard error).
  rm -f "$dir/plan" "$dir/err"
  set -m
  "$tune" --shapes "$dir/four.csv" --dry-run --families decode --top-k 8 --jobs 1 \
    >"$dir/plan" 2>"$dir/err" &
  run=$!
  for _ in $(seq 1200); do grep -q "to time" "$dir/plan" && break; sleep 0.1; done
  kill -$signal $run
  wait $run; rc=$?
  set +m
  want=$([ $signal = INT ] && echo 130 || echo 143)
  [ $rc -eq $want ] || fail "a dry run stopped by SIG$signal exited $rc, expected $want: $(cat "$dir/err")"
  # (What the folder holds is told too: once, on a loaded CI machine, the file was gone.)
  grep -q "dry run stopped after [1-3] of 4 shapes" "$dir/err" ||
    fail "SIG$signal message: $(cat "$dir/err" 2>&1); the folder holds: $(ls -A "$dir" 2>&1 | tr '\n' ' ')"
  # The way to quit at once names the signal that came.
  hint=$([ $signal = INT ] && echo "(Ctrl-C again to quit at once)" || echo "(a second signal quits at once)")
  grep -qF "$hint" "$dir/err" || fail "SIG$signal: no '$hint': $(cat "$dir/err")"
  [ "$(grep -c 'to time' "$dir/plan")" -lt 4 ] || fail "a dry run stopped by SIG$signal planned every shape: $(cat "$dir/plan")"
done
# Within a shape too: an exhaustive dry run (thousands of compiles, hours on two cores) stops
# after the compiles in progress. A second Ctrl-C quits at once: killed by the signal, with no
# word of stopping after the compiles. The same signal twice at once (timeout sends its signal
# to the process, then to its group) is one request: a stop.
printf 'M,N,K\n8,4096,4096\n' > "$dir/one.csv"
for signals in 1 2 twice-at-once; do
  set -m
  "$tune" --shapes "$dir/one.csv" --dry-run --strategy exhaustive --jobs 2 >/dev/null 2>"$dir/err" &
  run=$!
  sleep 2
  kill -INT $run
  [ $signals = twice-at-once ] && kill -INT $run
  # The second once the first is seen, while the compiles it waits for still run (each takes
  # a second or more), and past the moment in which a repeat is the same request.
  if [ $signals = 2 ]; then
    for _ in $(seq 500); do grep -q "stopping" "$dir/err" && break; sleep 0.01; done
    sleep 0.3
    kill -INT $run
  fi
  for _ in $(seq 300); do kill -0 $run 2>/dev/null || break; sleep 0.1; done
  kill -0 $run 2>/dev/null && { kill -KILL $run; fail "$signals SIGINT did not end an exhaustive dry run in 30 s"; }
  wait $run; rc=$?
  set +m
  [ $rc -eq 130 ] || fail "an exhaustive dry run stopped by $signals SIGINT exited $rc: $(cat "$dir/err")"
  if [ $signals != 2 ]; then
    grep -q "dry run stopped after 0 of 1 shapes" "$dir/err" || fail "$signals SIGINT within a shape: $(cat "$dir/err")"
  else
    ! grep -q "dry run stopped" "$dir/err" || fail "a second SIGINT let the run finish its compiles"
  fi
done

# Standard output that does not arrive is an environment error (2), named.
if [ -w /dev/full ]; then
  "$tune" --shapes "$dir/small.csv" --dry-run --families naive --top-k 1 >/dev/full 2>"$dir/err"; rc=$?
  [ $rc -eq 2 ] && grep -qF "sgemm-tune: cannot write standard output: No space left on device" "$dir/err" ||
    fail "a dry run into a full disk exited $rc: $(cat "$dir/err")"
fi

# Where a GPU is present: one size in two layouts gets a table row each that names its
# layout, and each batch-8 row is set against the batch-1 row of its own layout.
if gpu_present; then
  printf 'M,N,K,transA,transB,name\n1,4096,4096,N,N,o\n8,4096,4096,N,N,o\n1,4096,4096,N,T,o\n8,4096,4096,N,T,o\n' \
    > "$dir/mixed.csv"
  out=$(SGEMM_DB="$dir/mixed.db" "$tune" --shapes "$dir/mixed.csv" --families decode --top-k 1 --max-candidates 2 \
    --json "$dir/mixed.json" 2>&1) || fail "the two-layout tune failed: $out"
  # Each shape's line gives a kernel winner's check against its two bounds; cuBLAS, the
  # reference here, gets none, in the line and in the JSON.
  lines=$(grep -E '^\[[1-4]/4\] M=' <<<"$out")
  [ "$(wc -l <<<"$lines")" -eq 4 ] || fail "not one line a shape: $out"
  while IFS= read -r line; do
    if grep -q ": cuBLAS [0-9]" <<<"$line"; then
      grep -q "error max" <<<"$line" && fail "a cuBLAS winner's line gives errors against itself: $line"
    else
      grep -Eq "x\), error max [0-9]+\.[0-9] u of [0-9]+ u, rms [0-9]+\.[0-9]{2} u of [0-9]+\.[0-9] u from " <<<"$line" ||
        fail "a kernel winner's line lacks its errors: $line"
    fi
  done <<<"$lines"
  python3 - "$dir/mixed.json" <<'PY' || fail "the JSON's errors: $(cat "$dir/mixed.json")"
import json, sys
rows = json.load(open(sys.argv[1]))["shapes"]
assert len(rows) == 4, rows
for r in rows:
    # The search's counts, as the shape's line gives them.
    assert 1 <= r["candidates"] and 0 <= r["invalid"] <= r["candidates"], r
    assert r["rejected_early"] >= 0 and r["left_out_faulted"] == 0, r
    assert r["compiled"] + r["from_cache"] >= 1, r
    e = r.get("error_u")
    # cuBLAS's output is the reference here: it has no figures.
    assert (e is None) == (r["winner"]["kernel"] == "cublas"), r
    if e is None:
        continue
    assert 0 <= e["rms"] <= e["rms_tolerance"] and 0 <= e["max"] <= e["max_tolerance"], r
    assert e["max_tolerance"] > 32 and e["rms_tolerance"] >= 4, r
PY
  # A database of an older schema is upgraded, and the tune says so: builds that read the older schema no longer read it.
  "$make_sample" "$dir/old.db" old || fail "make_sample_db old"
  printf 'M,N,K\n8,64,64\n' > "$dir/tiny.csv"
  err=$(SGEMM_DB="$dir/old.db" "$tune" --shapes "$dir/tiny.csv" --families naive --top-k 1 --max-candidates 1 2>&1 >/dev/null) ||
    fail "a tune into an older database failed: $err"
  grep -qF "sgemm-tune: note: $dir/old.db was upgraded from schema version 1 to " <<<"$err" ||
    fail "a tune that upgraded the database does not say so: $err"
  err=$(SGEMM_DB="$dir/old.db" "$tune" --shapes "$dir/tiny.csv" --families naive --top-k 1 --max-candidates 1 2>&1 >/dev/null)
  grep -q "was upgraded" <<<"$err" && fail "a tune that upgraded nothing says it did: $err"
  # The run names the device it times, by ordinal: a machine may hold several GPUs.
  grep -qE "^sgemm-tune: 1 shape on device 0, .* \(sm_[0-9]+\), database $dir/old.db, model search$" <<<"$err" ||
    fail "the run's first line does not name its device: $err"
  # That winner came from a narrowed search: the same command skips its shape (above), but a
  # run that searches in full tunes it again, says why, and stores a winner of its own search.
  grep -qF "M=8 N=64 K=64 NN fp32 align16: has a winner (" <<<"$err" &&
    grep -qF ", from a search narrowed by --families naive; --top-k 1; --max-candidates 1, reached), skipped; a run that searches in full, or --retune, tunes it again" <<<"$err" ||
    fail "the narrowed command did not skip the shape, saying why a full run would not: $err"
  err=$(SGEMM_DB="$dir/old.db" "$tune" --shapes "$dir/tiny.csv" --json "$dir/full.json" 2>&1 >/dev/null) ||
    fail "the full tune after a narrowed one failed: $err"
  grep -qF "M=8 N=64 K=64 NN fp32 align16: its earlier winner came from a search narrowed by --families naive; --top-k 1; --max-candidates 1, reached, so this run, searching in full, tuned it again" <<<"$err" ||
    fail "the full tune does not say why it tuned the shape again: $err"
  python3 -c "import json,sys; r = json.load(open(sys.argv[1]))['shapes'][0]; assert not r['skipped'] and r['winner']['narrowed_by'] == '', r" \
    "$dir/full.json" || fail "the full tune's winner: $(cat "$dir/full.json")"
  err=$(SGEMM_DB="$dir/old.db" "$tune" --shapes "$dir/tiny.csv" 2>&1 >/dev/null)
  grep -qF "has a winner" <<<"$err" || fail "a full search's winner was not final for the next full run: $err"
  # A run with --allow-atomics tunes again a winner of a search without them, and says why;
  # its own winner is final for the next such run.
  quick_atomic=(--shapes "$dir/tiny.csv" --families naive --top-k 1 --max-candidates 1 --allow-atomics)
  err=$(SGEMM_DB="$dir/old.db" "$tune" "${quick_atomic[@]}" 2>&1 >/dev/null) || fail "a tune with --allow-atomics failed: $err"
  grep -qF "M=8 N=64 K=64 NN fp32 align16: its earlier winner came from a search without --allow-atomics, so this run, which lets kernels that add with atomics compete, tuned it again" <<<"$err" ||
    fail "--allow-atomics after a run without it does not say why it tuned the shape again: $err"
  err=$(SGEMM_DB="$dir/old.db" "$tune" "${quick_atomic[@]}" 2>&1 >/dev/null)
  grep -qF "has a winner" <<<"$err" || fail "a winner of a search with atomics was not final for the next: $err"
  for layout in NN NT; do
    [ "$(grep -Ec "^o +1 +4096 +4096 $layout fp32 .* -$" <<<"$out")" -eq 1 ] || fail "no batch-1 $layout row: $out"
    grep -Eq "^o +8 +4096 +4096 $layout fp32 .* [0-9]+\.[0-9]+$" <<<"$out" || fail "no batch-8 $layout row against batch 1: $out"
  done
  grep -Eq "^o +8 +4096 +4096 NT fp32 +(cuBLAS|decode .*TB=1 )" <<<"$out" || fail "an NT row names a kernel for NN: $out"

  # On a machine of two GPUs of one model, --device 1 tunes the second, and its winners are
  # the first's too (one fingerprint): the same command on device 0 skips the shape.
  if [ "$(visible_gpus)" -ge 2 ]; then
    err=$(SGEMM_DB="$dir/two.db" "$tune" --shapes "$dir/tiny.csv" --families naive --top-k 1 --max-candidates 1 --device 1 2>&1 >/dev/null) ||
      fail "a tune on device 1 failed: $err"
    grep -q "^sgemm-tune: 1 shape on device 1, " <<<"$err" || fail "the tune on device 1 does not say so: $err"
    err=$(SGEMM_DB="$dir/two.db" "$tune" --shapes "$dir/tiny.csv" --families naive --top-k 1 --max-candidates 1 --device 0 2>&1 >/dev/null) ||
      fail "a tune on device 0 failed: $err"
    grep -qF "M=8 N=64 K=64 NN fp32 align16: has a winner (" <<<"$err" || fail "device 0 did not take device 1's winner: $err"
  else
    echo "one GPU: the tune on a second one is not checked here"
  fi
  # Two tunes into one database at once, each with shapes of its own (on two GPUs, one on
  # each: the way to tune faster): both finish, and every shape of both keeps its winner.
  second_device=$([ "$(visible_gpus)" -ge 2 ] && echo 1 || echo 0)
  printf 'M,N,K\n16,48,32\n17,48,32\n18,48,32\n19,48,32\n' > "$dir/first.csv"
  printf 'M,N,K\n24,40,56\n25,40,56\n26,40,56\n27,40,56\n' > "$dir/second.csv"
  SGEMM_DB="$dir/shared.db" "$tune" --shapes "$dir/first.csv" --families naive,smem --max-candidates 4 \
    >"$dir/first.out" 2>&1 &
  first=$!
  SGEMM_DB="$dir/shared.db" "$tune" --shapes "$dir/second.csv" --families naive,smem --max-candidates 4 \
    --device "$second_device" >"$dir/second.out" 2>&1 &
  second=$!
  wait $first || fail "the first of two tunes at once failed: $(cat "$dir/first.out")"
  wait $second || fail "the second of two tunes at once failed: $(cat "$dir/second.out")"
  cat "$dir/first.csv" <(tail -n +2 "$dir/second.csv") > "$dir/both.csv"
  err=$(SGEMM_DB="$dir/shared.db" "$tune" --shapes "$dir/both.csv" --families naive,smem --max-candidates 4 2>&1 >/dev/null) ||
    fail "the tune after two at once failed: $err"
  [ "$(grep -c ": has a winner (" <<<"$err")" -eq 8 ] || fail "not all 8 shapes of two tunes at once kept a winner: $err"
  # A device past the last is refused before the database is made, naming how many there are:
  # the user's argument, exit 1 (it was 2, as for no GPU).
  err=$(SGEMM_DB="$dir/nodev.db" "$tune" --shapes "$dir/tiny.csv" --device 64 2>&1 >/dev/null); rc=$?
  [ $rc -eq 1 ] &&
    grep -qE "^sgemm-tune: --device: device 64 does not exist: (1 CUDA device is visible, device 0|[0-9]+ CUDA devices are visible, 0 to [0-9]+)$" <<<"$err" &&
    [ ! -e "$dir/nodev.db" ] || fail "--device 64: exit $rc: $err"

  # Ctrl-C while the last shape's last candidate is timed leaves that search whole: the shape
  # keeps its winner, yet the run still ends by the signal (130), as a calling script asked.
  # (script: a terminal, on which the progress line names the candidate being timed, and
  # whose Ctrl-C, typed into it through a pipe, signals both of the tune's processes at once,
  # as a person's would: that is one stop, not a second signal. The naive kernel at 4096^3
  # takes a second or more to time, so the signal lands inside that candidate or in the
  # re-timing after it, both within the last search.) A --json file that cannot be written
  # (a full disk: /dev/full) is said, and the signal's 130 still comes first.
  if command -v script >/dev/null; then
    printf 'M,N,K\n4096,4096,4096\n' > "$dir/last.csv"
    mkfifo "$dir/keys"
    full_json=$([ -w /dev/full ] && echo "--json /dev/full")
    set -m
    SGEMM_DB="$dir/last.db" script -qfec "'$tune' --shapes '$dir/last.csv' --families naive --top-k 1 --max-candidates 1 $full_json" \
      /dev/null <"$dir/keys" >"$dir/tty" 2>&1 &
    session=$!
    exec 7>"$dir/keys"  # held open: the terminal's input does not end
    for _ in $(seq 3000); do grep -q "timing 0/1" "$dir/tty" && break; sleep 0.01; done
    grep -q "timing 0/1" "$dir/tty" || fail "no tune timing its one candidate: $(cat "$dir/tty")"
    sleep 0.2  # past the stop's check before the candidate
    printf '\003' >&7
    wait $session; rc=$?
    exec 7>&-
    set +m
    out=$(tr '\r' '\n' <"$dir/tty")
    [ $rc -eq 130 ] || fail "Ctrl-C during the last candidate: exit $rc, expected 130: $out"
    [ "$(grep -c "stopping after the candidate being timed" <<<"$out")" -eq 1 ] ||
      fail "Ctrl-C was not told once as a stop: $out"
    grep -q "\[1/1\] M=4096 N=4096 K=4096 .*from 1 candidate, " <<<"$out" || fail "the last search was not whole: $out"
    grep -q "stopped after 1 of 1 shapes" <<<"$out" || fail "no word of the stop: $out"
    [ -z "$full_json" ] || grep -qF "sgemm-tune: cannot write /dev/full: No space left on device" <<<"$out" ||
      fail "no word of the --json file that could not be written: $out"
    out=$(SGEMM_DB="$dir/last.db" "$tune" --shapes "$dir/last.csv" --families naive --top-k 1 --max-candidates 1 2>&1) ||
      fail "the tune after the stop failed: $out"
    grep -q "has a winner" <<<"$out" || fail "the shape the stop came in has no winner stored: $out"
  fi

  # A candidate that faults the GPU loses its process's CUDA context, so the run goes on in a
  # new process from the shape the fault cut short, without that candidate there: both shapes
  # get their rows, the JSON lists the fault, and the fault is named and stored. With
  # --retry-faulted the shape is tuned again with the candidate, which faults again, and the run
  # goes on again; with --retune too, the new process leaves the shapes before alone. (No family
  # reads A transposed: the first shape has no candidates, and cuBLAS wins it.)
  "$plant" "$dir/fault.db" || fail "could not plant a kernel that faults"
  printf 'M,N,K,transA,transB,name\n17,31,7,T,N,first\n17,31,7,N,N,second\n' > "$dir/fault.csv"
  out=$(SGEMM_DB="$dir/fault.db" "$tune" --shapes "$dir/fault.csv" --families naive --strategy exhaustive \
    --json "$dir/fault.json" 2>"$dir/fault.err"); rc=$?
  err=$(cat "$dir/fault.err")
  [ $rc -eq 0 ] || fail "a candidate that faults: exit $rc, expected 0 (the run goes on): $err"
  grep -q "naive BLOCK_X=32 BLOCK_Y=8 faulted the GPU while it was checked on M=17 N=31 K=7 NN .*CUDA error: " <<<"$err" &&
    grep -q "the run goes on in a new process from shape 2 of 2, leaving this candidate out of it" <<<"$err" ||
    fail "the fault is not told: $err"
  grep -q "\[2/2\] M=17 N=31 K=7 NN .*: 1 candidate left out: they faulted the GPU on this shape before" <<<"$err" ||
    fail "the new process does not say it left the candidate out: $err"
  grep -q "note: 1 candidate faulted the GPU in this run" <<<"$err" || fail "no word of the fault at the end: $err"
  grep -Eq "^first +17 +31 +7 TN fp32 +cuBLAS" <<<"$out" || fail "no row for the shape finished before the fault: $out"
  grep -Eq "^second +17 +31 +7 NN fp32 +naive" <<<"$out" || fail "no row for the shape the fault cut short: $out"
  python3 - "$dir/fault.json" <<'PY' || fail "the JSON does not list the fault: $(cat "$dir/fault.json")"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["fault"] == "", doc["fault"]  # none ended the run
assert len(doc["faults"]) == 1 and doc["faults"][0].startswith("naive BLOCK_X=32 BLOCK_Y=8 faulted the GPU"), doc["faults"]
assert [r["name"] for r in doc["shapes"]] == ["first", "second"], doc["shapes"]
assert doc["shapes"][1]["left_out_faulted"] == 1, doc["shapes"][1]
PY
  err=$(SGEMM_DB="$dir/fault.db" "$tune" --shapes "$dir/fault.csv" --families naive --strategy exhaustive 2>&1 >/dev/null) ||
    fail "the run after the fault failed: $err"
  [ "$(grep -c ": has a winner (" <<<"$err")" -eq 2 ] || fail "the run after the fault tuned a shape again: $err"
  # --retry-faulted tunes again the shape where a kernel faulted, with that kernel.
  err=$(SGEMM_DB="$dir/fault.db" "$tune" --shapes "$dir/fault.csv" --families naive --strategy exhaustive \
    --retry-faulted 2>&1 >/dev/null); rc=$?
  [ $rc -eq 0 ] && grep -q "faulted the GPU while it was checked on M=17 N=31 K=7 NN" <<<"$err" &&
    grep -q "the run goes on in a new process from shape 2 of 2" <<<"$err" &&
    grep -q "\[2/2\] M=17 N=31 K=7 NN .*: naive .* from " <<<"$err" ||
    fail "--retry-faulted did not try the candidate that faulted again: exit $rc: $err"
  err=$(SGEMM_DB="$dir/fault.db" "$tune" --shapes "$dir/fault.csv" --families naive --strategy exhaustive \
    --retune --retry-faulted 2>&1 >/dev/null); rc=$?
  [ $rc -eq 0 ] && [ "$(grep -c "^\[1/2\] " <<<"$err")" -eq 1 ] && [ "$(grep -c "^\[2/2\] .*: naive " <<<"$err")" -eq 1 ] ||
    fail "--retune --retry-faulted: exit $rc, or a shape tuned twice: $err"
  # A fault on the first shape: the new process knows the shape was cut short too, and leaves
  # the candidate out though --retry-faulted asked for it.
  printf 'M,N,K,name\n17,31,7,only\n' > "$dir/first-fault.csv"
  out=$(SGEMM_DB="$dir/fault.db" "$tune" --shapes "$dir/first-fault.csv" --families naive --strategy exhaustive \
    --retry-faulted 2>&1); rc=$?
  [ $rc -eq 0 ] && [ "$(grep -c "faulted the GPU while it was checked" <<<"$out")" -eq 1 ] &&
    grep -q "the run goes on in a new process from shape 1 of 1" <<<"$out" &&
    [ "$(grep -c "^sgemm-tune: 1 shape on device" <<<"$out")" -eq 1 ] &&
    grep -Eq "^only +17 +31 +7 NN fp32 +naive" <<<"$out" ||
    fail "a fault on the first shape with --retry-faulted: exit $rc: $out"
  # Ten faults in one run point to the driver or the GPU: the run ends there, with exit 2.
  "$plant" "$dir/faults.db" 10 || fail "could not plant ten kernels that fault"
  out=$(SGEMM_DB="$dir/faults.db" "$tune" --shapes "$dir/fault.csv" --families naive --strategy exhaustive 2>&1); rc=$?
  [ $rc -eq 2 ] && [ "$(grep -c "the run goes on in a new process from shape 2 of 2" <<<"$out")" -eq 9 ] &&
    grep -q "10 candidates faulted the GPU in this run, which points to the driver or the GPU rather than to a kernel, so the run ended after 1 of 2 shapes" <<<"$out" &&
    grep -q "The same command goes on from there, and leaves this candidate out of this shape" <<<"$out" ||
    fail "ten faults: exit $rc: $out"
  # SIGTERM (a job scheduler's stop) sent to the tune is passed on to the process it runs in,
  # which stops and keeps what it measured; a second one quits it at once. Sent to the whole
  # process group (timeout, a job control's stop), it reaches both processes at once, which is
  # still one stop. Either way the run ends by the signal and leaves no process behind.
  printf 'M,N,K\n4096,4096,4096\n' > "$dir/big.csv"
  # A second signal must come while the first stop is still under way, which waits for the
  # candidate being timed: at 8192^3 a naive candidate takes seconds, whose last 0.15 s the
  # first signal seldom lands in (the second quits at once, so the test does not wait them
  # out). Where the stop ended the run first even so, the try says nothing of the second
  # signal and is made again.
  printf 'M,N,K\n8192,8192,8192\n' > "$dir/bigger.csv"
  for how in one second group; do
    shapes="$dir/big.csv"
    [ $how = second ] && shapes="$dir/bigger.csv"
    for try in 1 2 3 4 5; do
      set -m  # the tune leads a process group of its own
      SGEMM_DB="$dir/term.db" "$tune" --shapes "$shapes" --families naive --strategy exhaustive --retune \
        >"$dir/term.out" 2>"$dir/term.err" &
      run=$!
      set +m
      for _ in $(seq 3000); do grep -q "^sgemm-tune: 1 shape on device" "$dir/term.err" && break; sleep 0.01; done
      child=$(grep -ls "^PPid:[[:space:]]*$run\$" /proc/[0-9]*/status | head -1 | cut -d/ -f3)
      [ -n "$child" ] || fail "the tune started no process to tune in: $(cat "$dir/term.err")"
      sleep 3  # the process's handler is set once NVRTC has warmed up, well before this
      if [ $how = group ]; then kill -TERM -- -$run; else kill -TERM $run; fi
      second_sent=yes
      if [ $how = second ]; then
        # Once the first is told, and past the 100 ms in which a repeat is the same request.
        for _ in $(seq 500); do grep -q "stopping" "$dir/term.err" && break; sleep 0.01; done
        sleep 0.15
        kill -TERM $run 2>/dev/null || second_sent=no
      fi
      wait $run; rc=$?
      [ $rc -eq 143 ] || fail "SIGTERM ($how) to a tune: exit $rc, expected 143: $(cat "$dir/term.err")"
      ! kill -0 "$child" 2>/dev/null || fail "SIGTERM ($how) left the tune's process running"
      [ $second_sent = yes ] && break
      echo "try $try: the first SIGTERM's stop ended the run before the second was sent; again"
      [ $try -lt 5 ] || fail "in 5 tries the first SIGTERM's stop ended the run before a second could be sent"
    done
    if [ $how = second ]; then
      ! grep -q "stopped after" "$dir/term.err" || fail "a second SIGTERM let the run finish: $(cat "$dir/term.err")"
    else
      [ "$(grep -c "stopping after the candidate being timed" "$dir/term.err")" -eq 1 ] &&
        grep -q "stopped after 0 of 1 shapes" "$dir/term.err" ||
        fail "SIGTERM ($how): not one stop, told: $(cat "$dir/term.err")"
    fi
  done
  # A budget that runs out before any candidate runs leaves the shape without a winner: the
  # run did part of its work, and its exit status (3) says so.
  out=$(SGEMM_DB="$dir/budget.db" "$tune" --shapes "$dir/small.csv" --families decode --budget-s 0.001 2>&1); rc=$?
  [ $rc -eq 3 ] && grep -q "2 shapes have no winner: --budget-s ran out before any candidate ran" <<<"$out" ||
    fail "a budget that left shapes untried: exit $rc: $out"
  # A tune into a new database on a disk that takes no more (a file size limit of 8 KiB stands
  # in for a full one) fails at the database, says so, and leaves no file there: tools would
  # call it an empty database. (The new file is made whole, with its schema.)
  err=$(bash -c 'trap "" XFSZ; ulimit -f 8; exec "$@"' full_disk "$tune" --db "$dir/on_full.db" \
          --shapes "$dir/tiny.csv" --families naive --top-k 1 --max-candidates 1 2>&1 >/dev/null); rc=$?
  [ $rc -eq 2 ] || fail "a tune into a new database on a full disk exited $rc, expected 2: $err"
  grep -qF "so no database was made at $dir/on_full.db" <<<"$err" || fail "the tune on a full disk: $err"
  left=$(ls "$dir" | grep '^on_full')
  [ -z "$left" ] || fail "a tune refused by a full disk left $left"
  # The table goes to standard output once every shape is stored: a reader that has gone (as
  # after `| head -1`) ends the run by SIGPIPE at that table (141), its winner already stored,
  # which the same command then skips.
  into_a_closed_pipe "$dir/pipe.err" env SGEMM_DB="$dir/pipe.db" "$tune" --shapes "$dir/tiny.csv" --families naive \
    --top-k 1 --max-candidates 1; rc=$?
  [ $rc -eq 141 ] || fail "a tune into a closed pipe exited $rc, expected 141 (SIGPIPE): $(cat "$dir/pipe.err")"
  err=$(SGEMM_DB="$dir/pipe.db" "$tune" --shapes "$dir/tiny.csv" --families naive --top-k 1 --max-candidates 1 2>&1 >/dev/null) ||
    fail "the tune after one ended by a closed pipe: $err"
  grep -qF "M=8 N=64 K=64 NN fp32 align16: has a winner (" <<<"$err" ||
    fail "a tune ended by a closed pipe at its table did not keep its winner: $err"
  # Misses too large to tune are named as rows of a file are, the first 20 and a count, and
  # left out; the miss that fits is tuned.
  "$plant_misses" "$dir/misses.db" 23 || fail "plant_misses failed"
  err=$("$tune" --from-misses --db "$dir/misses.db" --families naive --top-k 1 --max-candidates 1 2>&1 >/dev/null); rc=$?
  [ $rc -eq 0 ] || fail "a tune of misses, most too large, exited $rc: $err"
  [ "$(grep -c "^sgemm-tune: note: the misses of device .*: M=1000[0-9][0-9] N=100000 K=100000 NN fp32 align16 (.* misses) needs .* (left out; the other misses are tuned)$" <<<"$err")" -eq 20 ] &&
    grep -qxF "sgemm-tune: note: and 3 more shapes it cannot tune" <<<"$err" || fail "23 misses too large: $err"
  err=$(SGEMM_DB="$dir/misses.db" "$tune" --shapes "$dir/tiny.csv" --families naive --top-k 1 --max-candidates 1 2>&1 >/dev/null)
  grep -qF "M=8 N=64 K=64 NN fp32 align16: has a winner (" <<<"$err" || fail "the miss that fits was not tuned: $err"
  # Misses an engine recorded under an earlier sgemm build of this GPU (before an upgrade) are
  # shapes it runs: explain names that build's rows, --from-misses tunes them for this build
  # (it had tuned only this build's, and said there were none), storing the winner where this
  # build's dispatch finds it, and sgemm-db misses then shows it beside them.
  "$plant_misses" "$dir/upgraded.db" 0 0.0.1 || fail "plant_misses of an earlier build failed"
  old_id=$("$db_tool" --db "$dir/upgraded.db" misses --json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["device_id"][:8])') || fail "the earlier build's misses"
  out=$("$db_tool" --db "$dir/upgraded.db" explain 8 64 64) || fail "explain beside an earlier build's rows: $out"
  grep -qF "the file holds rows of 1 earlier build of this GPU, which this build's dispatch does not read (device $old_id (sgemm 0.0.1)): tune again with this build (sgemm-tune --from-misses tunes their misses too)" <<<"$out" ||
    fail "explain did not name the earlier build's rows: $out"
  err=$("$tune" --from-misses --db "$dir/upgraded.db" --families naive --top-k 1 --max-candidates 1 2>&1 >/dev/null) ||
    fail "a tune of an earlier build's misses: $err"
  grep -qxF "sgemm-tune: note: with the misses of 1 earlier build of this GPU, whose rows this build's dispatch does not read: device $old_id (sgemm 0.0.1)" <<<"$err" ||
    fail "the earlier build's misses went unnamed: $err"
  out=$("$db_tool" --db "$dir/upgraded.db" explain 8 64 64) || fail "explain after the tune: $out"
  grep -qx "decision  exact" <<<"$out" || fail "the earlier build's miss was not tuned for this build: $out"
  out=$("$db_tool" --db "$dir/upgraded.db" misses) || fail "sgemm-db misses: $out"
  sed -n 2p <<<"$out" | grep -q "^$old_id .* 0\.0\.1 .* yes$" || fail "the earlier build's miss has no winner since: $out"
  # A candidate NVRTC refuses is stored as such, its log on one line and cut to 400 bytes that
  # say where they stop and how long the log was; cuBLAS is the winner.
  err=$(NVRTC_REFUSE=naive.cu LD_PRELOAD="$refusing_preload" "$tune" --shapes "$dir/tiny.csv" --db "$dir/refused.db" \
    --families naive --top-k 1 --max-candidates 1 2>&1 >/dev/null) || fail "a tune whose candidate NVRTC refuses: $err"
  out=$("$db_tool" --db "$dir/refused.db" show 8 64 64 --json) || fail "show of a refused candidate: $out"
  python3 - "$out" <<'PY' || fail "a refused candidate's stored reason: $out"
import json, re, sys
d = json.loads(sys.argv[1])
assert [w["family"] for w in d["winners"]] == ["cublas"], d["winners"]
naive = [m for m in d["measurements"] if m["family"] == "naive"]
assert len(naive) == 1 and not naive[0]["valid"], naive
why = naive[0]["invalid_reason"]
assert why.startswith("does not compile: NVRTC failed to compile sgemm_naive<"), why
assert "\n" not in why and "planted.cu(3): error" in why, why
cut = re.fullmatch(r"does not compile: (.*)\.\.\. \((\d+) bytes\)", why)
assert cut and len(cut.group(1)) == 400 and int(cut.group(2)) > 400, why
PY
fi

expect_no_gpu sgemm-tune "no CUDA device is visible" "$tune" --shapes "$dir/small.csv"
! grep -q "database" <<<"$no_gpu_message" || fail "without a GPU a usable database was questioned: $no_gpu_message"
# Without a GPU, a database the tune could not write is named too, and left as it was.
printf 'these are not the pages of a database\n' > "$dir/notes.db"
expect_no_gpu sgemm-tune "no CUDA device is visible" "$tune" --shapes "$dir/small.csv" --db "$dir/notes.db"
grep -q "with a GPU the tune would stop on its database: $dir/notes.db is not an SQLite database" <<<"$no_gpu_message" ||
  fail "without a GPU a junk database went unnamed: $no_gpu_message"
[ "$(cat "$dir/notes.db")" = "these are not the pages of a database" ] || fail "the junk database was changed"
expect_no_gpu sgemm-tune "no CUDA device is visible" "$tune" --shapes "$dir/small.csv" --db "$dir"
grep -q "$dir is a folder, not a database file" <<<"$no_gpu_message" || fail "a folder as --db: $no_gpu_message"
# A missing default database, and its folder (which a tune on a GPU makes), are not created
# by a tune that cannot run.
expect_no_gpu sgemm-tune "no CUDA device is visible" env -u SGEMM_DB XDG_DATA_HOME="$dir/new" "$tune" --shapes "$dir/small.csv"
[ ! -e "$dir/new" ] || fail "a tune without a GPU created the database's folder"
# --from-misses stores its winners in the file it reads the misses from: one this user may
# not write is named as for --shapes (it went unnamed). Only root can set this up.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  chmod 755 "$dir"; mkdir -m 777 "$dir/shared"
  "$make_sample" "$dir/shared/misses.db" ours || fail "make_sample_db"
  chmod 444 "$dir/shared/misses.db"
  expect_no_gpu sgemm-tune "no CUDA device is visible" \
    setpriv --reuid=65534 --regid=65534 --clear-groups "$tune" --from-misses --db "$dir/shared/misses.db"
  grep -q "with a GPU the tune would stop on its database: .*read-only" <<<"$no_gpu_message" ||
    fail "without a GPU a read-only database of misses went unnamed: $no_gpu_message"
fi
echo "ok"
