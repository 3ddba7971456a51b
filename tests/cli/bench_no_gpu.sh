#!/usr/bin/env bash
# sgemm-bench's command line: --help, bad arguments (exit 1, a message, no work done) and,
# on a machine without a GPU, exit 2 with one line saying no CUDA device is visible.
set -u
# Usage: bench_no_gpu.sh SGEMM_BENCH SGEMM_BENCH_SPOILING, the second the test build that
# spoils each kernel's result (tests/meson.build), for exit status 3.
bench="${1:?usage: bench_no_gpu.sh SGEMM_BENCH SGEMM_BENCH_SPOILING}"
spoiling="${2:?usage: bench_no_gpu.sh SGEMM_BENCH SGEMM_BENCH_SPOILING}"
. "$(dirname "$0")/../cli_checks.sh"

out=$("$bench" --help) || fail "--help exited non-zero"
grep -q -- "--sizes" <<<"$out" || fail "--help does not document --sizes"
grep -q "computed a wrong result, which comes before any 2 (a later shape that could not run" <<<"$out" &&
  grep -q "1 bad arguments (a --device past the GPUs too)" <<<"$out" || fail "--help does not give the exit statuses"
# Every family --kernels may name, with its parameters in --config's order (--config's only guide).
grep -qF "  naive=BLOCK_X,BLOCK_Y (defaults 32,8)" <<<"$out" || fail "--help does not give naive's parameters"
grep -qE "^  warptile=BM,BN,BK,.*\(defaults " <<<"$out" || fail "--help does not give warptile's parameters"
[ "$(grep -cE '^  [a-z0-9]+=[A-Z_,0-9]+ \(defaults [0-9,]+\)$' <<<"$out")" -eq 7 ] || fail "--help does not list the 7 families"
expect_help_reports_a_full_disk sgemm-bench "$bench"
expect_a_closed_pipe_to_end_it "$bench"
# The help wins over a bad value on the same line, either side of it, and where an option's
# value goes (--json --help was an error, --json -h the help). So does it over an unknown option
# and a value left out, which boost cannot parse.
for line in "--help --size x" "--size x --help" "--help --bogus" "-h --bogus" "--help --json" "--json --help" "--json -h"; do
  shown=$("$bench" $line 2>&1) && grep -q -- "--sizes" <<<"$shown" || fail "$line did not show the help: $shown"
done
# Another option where a value goes is still refused by name.
err=$("$bench" --json --size 64 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--json needs a value, and the word after it is the option --size" <<<"$err" ||
  fail "--json --size 64: $rc $err"

# Every timed run holds two CUDA events until all are read: a count near INT_MAX is refused.
for iters in 0 100001 2147483647; do
  err=$("$bench" --size 64 --iters $iters 2>&1 >/dev/null); rc=$?
  [ $rc -eq 1 ] && grep -qF -- "--iters must be from 1 to 100000, not $iters" <<<"$err" || fail "--iters $iters: $rc $err"
done
# So is a warm-up count of billions (hours of fast launches under --max-seconds inf).
for warmup in -1 100001 2147483647; do
  err=$("$bench" --size 64 --warmup $warmup 2>&1 >/dev/null); rc=$?
  [ $rc -eq 1 ] && grep -qF -- "--warmup must be from 0 to 100000, not $warmup" <<<"$err" || fail "--warmup $warmup: $rc $err"
done
err=$("$bench" --size 0 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--size 0 exited $rc, expected 1"
grep -q "at least 1" <<<"$err" || fail "--size 0 message: $err"

# A value past its type says what the option takes, not only that it "is invalid".
err=$("$bench" --size 99999999999 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF "for option '--size' is invalid: it takes a whole number no larger in size than 2147483647" <<<"$err" ||
  fail "--size 99999999999: $rc $err"
# Past the type below: the message gives the range, not only its top.
err=$("$bench" --size -99999999999 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF "it takes a whole number no larger in size than 2147483647" <<<"$err" ||
  fail "--size -99999999999: $rc $err"

# White space around a number is no part of it (as around an item of --sizes): past the parse.
err=$("$bench" --size ' 64 ' --iters ' 2' --kernels naive 2>&1 >/dev/null); rc=$?
if gpu_present; then [ $rc -eq 0 ] || fail "--size ' 64 ' with a GPU: $rc $err"
else [ $rc -eq 2 ] || fail "--size ' 64 ' without a GPU: $rc $err"; fi

err=$("$bench" --sizes 1024,x 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--sizes 1024,x exited $rc, expected 1"
grep -q "'x' is not a positive integer" <<<"$err" || fail "--sizes message: $err"
err=$("$bench" --sizes 1024, 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--sizes: '1024,' ends with a comma" <<<"$err" || fail "--sizes 1024,: $rc $err"

err=$("$bench" --size 64 --config async=128,-1 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "a negative config value exited $rc, expected 1"
grep -q "'-1' is not an integer of at least 0" <<<"$err" || fail "--config message: $err"
[ "$(grep -o -- "--config" <<<"$err" | wc -l)" -eq 1 ] || fail "--config named more than once: $err"

err=$("$bench" --size 64 --max-seconds nan 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--max-seconds nan exited $rc, expected 1"

err=$("$bench" --size 64 --m 3 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--size with --m exited $rc, expected 1"

err=$("$bench" --size 64 --kernels naive,bogus 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "an unknown kernel exited $rc, expected 1"
grep -q "unknown kernel family 'bogus'" <<<"$err" || fail "unknown kernel message: $err"
# A name quoted in a message is escaped: a newline in it is \x0a, not a line of its own.
err=$("$bench" --size 64 --kernels $'naive\nbogus' 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF "unknown kernel family 'naive\x0abogus'" <<<"$err" && ! grep -q '^bogus' <<<"$err" ||
  fail "a kernel name with a newline: $rc $err"

err=$("$bench" --size 64 --trans XN 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--trans XN exited $rc, expected 1"
grep -q "unknown transposes 'XN'" <<<"$err" || fail "--trans message: $err"
# A layout that no kernel asked for reads is refused before any GPU work (it timed cuBLAS alone
# and exited 0); a --config that reads it runs.
for t in NT TN TT; do
  err=$("$bench" --size 64 --trans $t 2>&1 >/dev/null); rc=$?
  [ $rc -eq 1 ] && grep -qF -- "--trans $t: no kernel asked for reads this layout, so only cuBLAS would run" <<<"$err" ||
    fail "--trans $t without a kernel that reads it: $rc $err"
done
grep -qF "a --config of warptile with TA and TB set reads it" <<<"$err" || fail "--trans TT names no family: $err"
err=$("$bench" --size 64 --trans NT --kernels decode 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF "a --config of decode or warptile with TB set reads it" <<<"$err" || fail "--trans NT --kernels decode: $rc $err"
# warptile's defaults with TB set, from the help's parameter list.
nt_config=$("$bench" --help | python3 -c '
import re, sys
names, values = re.search(r"^  warptile=([A-Z_,0-9]+) \(defaults ([0-9,]+)\)$", sys.stdin.read(), re.M).groups()
values = values.split(","); values[names.split(",").index("TB")] = "1"; print(",".join(values))')
if ! gpu_present; then
  expect_no_gpu "--trans NT with a --config that reads it" "no CUDA device is visible" \
    "$bench" --size 64 --trans NT --kernels naive --config "warptile=$nt_config"
fi

grep -q -- "--ldb" <<<"$out" || fail "--help does not document --ldb"
err=$("$bench" --m 8 --n 100 --k 64 --trans NT --ldb 63 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--ldb shorter than B's stored rows exited $rc, expected 1"
grep -q -- "--ldb 63 is shorter than the row it strides over (64 floats)" <<<"$err" || fail "--ldb message: $err"
err=$("$bench" --sizes 64,128 --lda 200 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--lda with --sizes exited $rc, expected 1"
grep -q "need one shape" <<<"$err" || fail "--lda with --sizes message: $err"

grep -q -- "--timeline" <<<"$out" || fail "--help does not document --timeline"
err=$("$bench" --size 64 --timeline --config async=64,64,16,4,4 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--timeline without a warptile or decode config exited $rc, expected 1"
grep -q "needs a --config of a family that marks timelines" <<<"$err" || fail "--timeline message: $err"
# A configuration with a second kernel (the sum pass, the stream-K tail, staging) is refused before the
# GPU is looked for.
err=$("$bench" --size 64 --timeline --config warptile=32,128,16,32,64,8,8,3,0,0,2,8,0,0,0,0,1 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--timeline with SUM_PASS=1 exited $rc, expected 1"
grep -q "sums its slices in a second kernel: time it with SUM_PASS=0" <<<"$err" || fail "--timeline sum-pass message: $err"
err=$("$bench" --size 64 --timeline --config warptile=256,128,16,64,64,16,8,3,0,0,1,1,0,1,0,0,0 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--timeline with SK=1 exited $rc, expected 1"
grep -q "adds a stream-K tail: time it with SK=0" <<<"$err" || fail "--timeline stream-K message: $err"
err=$("$bench" --size 64 --timeline --config warptile=256,128,16,64,64,16,8,3,0,0,1,1,0,0,2,0,0 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--timeline with ALIGNED=2 exited $rc, expected 1"
grep -q "runs a staging kernel first" <<<"$err" || fail "--timeline staging message: $err"

# Everything that needs no GPU is checked before the GPU is looked for: a stray argument,
# an empty --kernels, a --config of the wrong arity or with a value outside its list, and
# output paths that cannot be written.
err=$("$bench" --size 64 extra 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "a stray argument exited $rc, expected 1"
grep -q "unexpected argument 'extra'" <<<"$err" || fail "stray argument message: $err"
err=$("$bench" --size 64 --kernels , 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--kernels , exited $rc, expected 1"
grep -q -- "--kernels names nothing" <<<"$err" || fail "empty --kernels message: $err"
for list in naive,,async naive, ,naive; do
  err=$("$bench" --size 64 --kernels "$list" 2>&1 >/dev/null); rc=$?
  [ $rc -eq 1 ] && grep -qF -- "--kernels: '$list' has an empty name" <<<"$err" || fail "--kernels $list: $rc $err"
done
err=$("$bench" --size 64 --config naive=32 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "a config of the wrong arity exited $rc, expected 1"
grep -qF "1 values for 2 parameters: naive=BLOCK_X,BLOCK_Y (defaults 32,8)" <<<"$err" || fail "config arity message: $err"
err=$("$bench" --size 64 --config naive=32,9 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "a config value outside its list exited $rc, expected 1"
grep -q "BLOCK_Y=9 is not one of" <<<"$err" || fail "config value message: $err"
# A configuration no compile target takes is refused here, before the GPU is looked for, with
# the constraint it breaks; and one given twice, a size given twice, a list with spaces.
err=$("$bench" --size 64 --config warptile=32,64,16,64,64,16,8,3,0,0,1,1,0,0,0,0,0 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF "BM must be a multiple of WM and BN of WN" <<<"$err" || fail "BM < WM: $rc $err"
err=$("$bench" --size 64 --config naive=32,8 --config naive=32,8 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--config 'naive=32,8': given twice" <<<"$err" || fail "a repeated --config: $rc $err"
# The family's name reads as in --kernels, in any case and without the white space around it:
# so ' NAIVE =32,8' is naive's configuration given twice.
err=$("$bench" --size 64 --config naive=32,8 --config ' NAIVE =32,8' 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--config ' NAIVE =32,8': given twice" <<<"$err" || fail "a --config name in capitals: $rc $err"
err=$("$bench" --size 64 --config =32,8 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--config '=32,8': unknown kernel family ''" <<<"$err" || fail "--config =: $rc $err"
# Without values either, the family is still what is missing (it was "'=' is empty"); with a
# family and no values, its form is given.
err=$("$bench" --size 64 --config = 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--config '=': unknown kernel family ''" <<<"$err" || fail "--config '=': $rc $err"
err=$("$bench" --size 64 --config 'naive= ' 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--config 'naive= ': no values after '=': naive=BLOCK_X,BLOCK_Y" <<<"$err" ||
  fail "--config 'naive= ': $rc $err"
err=$("$bench" --sizes 64,64 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--sizes: 64 is given twice" <<<"$err" || fail "a repeated size: $rc $err"
err=$("$bench" --sizes "64, 64" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--sizes: 64 is given twice" <<<"$err" || fail "a size with a space: $rc $err"
err=$("$bench" --sizes "64, x" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--sizes: 'x' is not a positive integer" <<<"$err" || fail "a bad size after a space: $rc $err"
err=$("$bench" --size 64 --kernels naive,naive 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--kernels: naive is given twice" <<<"$err" || fail "a repeated kernel: $rc $err"
# White space around a name is no part of it: "naive, naive" names one kernel twice.
err=$("$bench" --size 64 --kernels "naive, naive" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--kernels: naive is given twice" <<<"$err" || fail "a list with a space: $rc $err"
err=$("$bench" --size 64 --kernels "naive, " 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--kernels: 'naive, ' has an empty name" <<<"$err" || fail "a trailing ', ': $rc $err"
err=$("$bench" --size 64 --device -1 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--device must be 0 or more" <<<"$err" || fail "--device -1: $rc $err"
# A device past the GPUs is the user's argument (exit 1, it was 2); with none, no GPU is (2).
err=$("$bench" --size 64 --kernels naive --device 64 2>&1 >/dev/null); rc=$?
if gpu_present; then
  [ $rc -eq 1 ] && grep -qE -- "^sgemm-bench: --device: device 64 does not exist: (1 CUDA device is visible, device 0|[0-9]+ CUDA devices are visible, 0 to [0-9]+)$" <<<"$err" ||
    fail "--device 64 with a GPU: $rc $err"
else
  [ $rc -eq 2 ] && grep -qF "no CUDA device is visible" <<<"$err" || fail "--device 64 without a GPU: $rc $err"
fi
err=$("$bench" --size 64 --json "" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--json is empty" <<<"$err" || fail "--json '': $rc $err"
err=$("$bench" --m 0 --n 5 --k 5 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF "M, N and K must be at least 1, not 0 x 5 x 5" <<<"$err" || fail "--m 0: $rc $err"
err=$("$bench" --size 64 --max-seconds nan 2>&1 >/dev/null)
grep -qF -- "--max-seconds must be a positive number of seconds" <<<"$err" || fail "--max-seconds nan message: $err"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
err=$("$bench" --size 64 --save-cubins "$dir/missing" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--save-cubins into a missing folder exited $rc, expected 1"
grep -q "no such folder" <<<"$err" || fail "--save-cubins message: $err"
printf 'a file\n' > "$dir/a-file"
err=$("$bench" --size 64 --save-cubins "$dir/a-file" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--save-cubins $dir/a-file: is a file, not a folder" <<<"$err" || fail "--save-cubins onto a file: $rc $err"
err=$("$bench" --size 64 --save-cubins "$dir/a-file/cubins" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--save-cubins $dir/a-file/cubins: $dir/a-file is not a folder" <<<"$err" ||
  fail "--save-cubins below a file: $rc $err"
err=$("$bench" --size 64 --save-cubins '' 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--save-cubins is empty" <<<"$err" || fail "an empty --save-cubins: $rc $err"
# A loop of symbolic links reads as no file: refused before the run, not when its end writes.
ln -s loop.json "$dir/loop.json"
err=$("$bench" --size 64 --json "$dir/loop.json" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--json $dir/loop.json: is a loop of symbolic links" <<<"$err" || fail "--json a loop of links: $rc $err"
# A newline in the path is escaped, not a line break that a forged line could follow.
err=$("$bench" --size 64 --json "$dir/missing"$'\n'"sgemm-bench: ok/out.json" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--json $dir/missing\x0asgemm-bench: ok/out.json: no folder $dir/missing\x0asgemm-bench: ok" <<<"$err" &&
  [ "$(wc -l <<<"$err")" = 2 ] ||
  fail "--json with a newline: $rc $err"
err=$("$bench" --size 64 --json "$dir/missing/out.json" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "--json into a missing folder exited $rc, expected 1"
grep -q -- "--json $dir/missing/out.json: no folder $dir/missing" <<<"$err" || fail "--json message: $err"

# inf is no limit, as sgemm-tune's --budget-s takes it: past the argument checks (a GPU's work, or exit 2 without one).
err=$("$bench" --size 64 --iters 2 --kernels naive --max-seconds inf 2>&1 >/dev/null); rc=$?
if gpu_present; then
  [ $rc -eq 0 ] || fail "--max-seconds inf exited $rc with a GPU, expected 0: $err"
else
  [ $rc -eq 2 ] && grep -q "no CUDA device is visible" <<<"$err" || fail "--max-seconds inf without a GPU: $rc $err"
fi
# A --config of a family's defaults, which --kernels also runs, is one kernel: timed once, not
# twice, in the family's place.
if gpu_present; then
  out=$("$bench" --size 64 --iters 2 --kernels naive,smem --config naive=32,8 2>/dev/null); rc=$?
  [ $rc -eq 0 ] || fail "--config of naive's defaults exited $rc"
  [ "$(grep -oE '^(naive|smem) ' <<<"$out" | tr -d ' ' | paste -sd,)" = naive,smem ] ||
    fail "naive's defaults not timed once, before smem: $out"
fi
# On a GPU: one size's JSON is one object, cuBLAS first and each kernel checked valid, each
# row's pct_cublas its cublas_ms (cuBLAS timed alongside it) over its median, and
# --save-cubins writes each kernel's cubin (an ELF file) and its compile log.
if gpu_present; then
  mkdir -p "$dir/cubins"
  "$bench" --size 65 --iters 2 --kernels naive,smem --json "$dir/one.json" --save-cubins "$dir/cubins" >/dev/null 2>&1 ||
    fail "--size 65 --kernels naive,smem on a GPU exited $?"
  python3 - "$dir/one.json" <<'PY' || fail "the JSON of one size: $(cat "$dir/one.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d, dict) and d["m"] == d["n"] == d["k"] == 65, d
assert [r["kernel"] for r in d["results"]] == ["cublas", "naive", "smem"], d["results"]
assert all(r["valid"] and r["median_ms"] > 0 for r in d["results"]), d["results"]
# Each kernel's ratio is to cuBLAS timed alongside it; cuBLAS's own row is its own bar.
assert all(r["cublas_ms"] > 0 and abs(r["pct_cublas"] - 100 * r["cublas_ms"] / r["median_ms"]) < 1e-6 * r["pct_cublas"]
           for r in d["results"]), d["results"]
assert d["results"][0]["cublas_ms"] == d["results"][0]["median_ms"], d["results"][0]
# TFLOPS are 2 M N K over the median; the plan is recorded as asked, each row's runs as made.
assert all(abs(r["tflops"] - 2 * 65**3 / (r["median_ms"] * 1e9)) < 1e-6 * r["tflops"] for r in d["results"]), d["results"]
assert (d["iters"], d["warmup"], d["max_seconds"]) == (2, 3, 10), d
assert all(r["runs"] == 2 for r in d["results"]), d["results"]
PY
  [ "$(head -c 4 "$dir/cubins/naive_32_8.cubin" | od -An -c | tr -d ' ')" = '177ELF' ] &&
    [ -s "$dir/cubins/smem_32.log" ] || fail "--save-cubins wrote: $(ls "$dir/cubins")"
fi
# On a GPU, --max-seconds holds with the cache flushes counted. A budget of the launches alone
# gave a row of microsecond kernels tens of thousands of rounds (55000 and more in half a
# second, each round some 0.2 ms with its flushes, so 12 s a row); counted whole, the flush
# of twice the L2 (100 MB or more: over 20 us) before each of a round's 2 or 3 runs leaves
# room for under 12500.
if gpu_present; then
  "$bench" --size 64 --kernels naive --iters 100000 --warmup 3 --max-seconds 0.5 --json "$dir/budget.json" >/dev/null 2>&1 ||
    fail "--max-seconds 0.5 on a GPU exited $?"
  python3 - "$dir/budget.json" <<'PY' || fail "the rounds of --max-seconds 0.5: $(cat "$dir/budget.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert all(3 <= r["runs"] < 20000 for r in d["results"]), [(r["kernel"], r["runs"]) for r in d["results"]]
PY
fi
# On a GPU, a wrong result: the test build spoils each kernel's first element after its run.
# Each kernel's row says WRONG RESULT, stderr says which failed validation, the JSON marks it
# invalid (cuBLAS valid) with no pct_cublas, every kernel still runs, and the exit status is 3.
if gpu_present; then
  out=$("$spoiling" --size 17 --iters 2 --kernels naive,smem --json "$dir/wrong.json" 2>"$dir/wrong.err"); rc=$?
  [ $rc -eq 3 ] || fail "a spoiled result exited $rc, expected 3: $out $(cat "$dir/wrong.err")"
  [ "$(grep -cE '^(naive|smem) .*\[WRONG RESULT\]' <<<"$out")" -eq 2 ] && ! grep -qE '^cublas .*WRONG' <<<"$out" ||
    fail "the table does not mark naive and smem alone as wrong: $out"
  grep -q "naive FAILED validation" "$dir/wrong.err" && grep -q "smem FAILED validation" "$dir/wrong.err" ||
    fail "stderr does not name the kernels that failed validation: $(cat "$dir/wrong.err")"
  python3 - "$dir/wrong.json" <<'PY' || fail "the JSON of spoiled results: $(cat "$dir/wrong.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert [(r["kernel"], r["valid"]) for r in d["results"]] == [("cublas", True), ("naive", False), ("smem", False)], d
# A wrong result names no ratio to cuBLAS.
assert ["pct_cublas" in r for r in d["results"]] == [True, False, False], d
PY
  # A --json file that cannot be written (a full disk: /dev/full) is said, and the wrong
  # result's 3 still comes first; with right results the lost file's 2 is the status.
  if [ -w /dev/full ]; then
    "$spoiling" --size 17 --iters 2 --kernels naive --json /dev/full >/dev/null 2>"$dir/full.err"; rc=$?
    [ $rc -eq 3 ] && grep -qF "sgemm-bench: cannot write /dev/full: No space left on device" "$dir/full.err" ||
      fail "a wrong result with a --json that cannot be written: $rc $(cat "$dir/full.err")"
    "$bench" --size 17 --iters 2 --kernels naive --json /dev/full >/dev/null 2>"$dir/full.err"; rc=$?
    [ $rc -eq 2 ] && grep -qF "sgemm-bench: cannot write /dev/full: No space left on device" "$dir/full.err" ||
      fail "a --json that cannot be written: $rc $(cat "$dir/full.err")"
  fi
fi
# A sweep whose last size does not fit the GPU (200000^2 floats, 149 GiB for A alone) ends
# with exit 2 and the reason, and the size before it is still written to --json; after a wrong
# result, with 3 (it exited 2, and a check for 3 missed the wrong result).
if gpu_present; then
  err=$("$bench" --sizes 64,200000 --iters 2 --kernels naive --json "$dir/partial.json" 2>&1 >/dev/null); rc=$?
  [ $rc -eq 2 ] && grep -qF "sgemm-bench: M=200000 N=200000 K=200000: " <<<"$err" &&
    grep -qF "(the 1 shapes before it go to $dir/partial.json)" <<<"$err" || fail "a sweep past the GPU's memory: $rc $err"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert [e['size'] for e in d] == [64], d" \
    "$dir/partial.json" || fail "the finished size of a failed sweep was not written"
  err=$("$spoiling" --sizes 17,200000 --iters 2 --kernels naive 2>&1 >/dev/null); rc=$?
  [ $rc -eq 3 ] && grep -qF "sgemm-bench: M=200000 N=200000 K=200000: " <<<"$err" ||
    fail "a wrong result, then a size past the GPU's memory: $rc $err"
fi
# On a GPU, padded operands: --lda, --ldb and --ldc each reach cuBLAS and every kernel. The
# shape's tight rows (48 and 64 floats) are 16-byte aligned, so warptile with ALIGNED=1 is
# skipped, with the reason, only where the one padded leading dimension (49 or 65) reached the
# operands; its ALIGNED=0 defaults run, and each result is checked valid. The JSON names it.
if gpu_present; then
  for ld in lda=49 ldb=65 ldc=65; do
    err=$("$bench" --m 33 --n 64 --k 48 --"${ld%=*}" "${ld#*=}" --iters 2 --kernels naive,warptile \
      --config warptile=256,128,16,64,64,16,8,3,0,0,1,1,0,0,1,0,0 --json "$dir/ld.json" 2>&1 >/dev/null); rc=$?
    [ $rc -eq 0 ] && grep -q "^\[33x64x48\] skipping warptile: .*ALIGNED=1.* needs 16-byte aligned operands; these are 4-byte aligned" <<<"$err" ||
      fail "--${ld%=*} ${ld#*=} with ALIGNED=1: exit $rc, expected 0 and warptile skipped for its alignment: $err"
    python3 - "$dir/ld.json" "${ld%=*}" "${ld#*=}" <<'PY' || fail "the JSON of --${ld%=*} ${ld#*=}: $(cat "$dir/ld.json")"
import json, sys
d, name, value = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3])
assert d[name] == value, d
assert [r["kernel"] for r in d["results"]] == ["cublas", "naive", "warptile"], d["results"]
assert all(r["valid"] for r in d["results"]), d["results"]
PY
  done
fi
# On a GPU, --timeline runs the --config decode kernel (split 4 ways, its slices summed in the
# kernel) again in a timeline build: its result is checked, and where the time went is printed
# and written to the JSON. At M = 8 each row also carries cuBLAS's M = 1 time beside it.
if gpu_present; then
  out=$("$bench" --m 8 --n 256 --k 512 --iters 2 --kernels naive --config decode=8,128,8,4,1,0,4,0,0 --timeline \
    --json "$dir/timeline.json" 2>&1); rc=$?
  [ $rc -eq 0 ] && grep -q "^timeline of decode .*(the launch with the median event time of 5" <<<"$out" ||
    fail "--timeline of a decode config: exit $rc: $out"
  grep -q "WRONG RESULT" <<<"$out" && fail "--timeline: a wrong result: $out"
  python3 - "$dir/timeline.json" <<'PY' || fail "the JSON of --timeline: $(cat "$dir/timeline.json")"
import json, sys
d = json.load(open(sys.argv[1]))
[t] = d["timelines"]
assert t["valid"] and t["blocks"] > 0 and t["summing_blocks"] > 0, t
assert 0 < t["loops_end_us"] <= t["last_end_us"], t
# A decode batch: every row is timed beside cuBLAS at M = 1, and its 'x M=1' is over that
# time; the shape's own is the one beside cuBLAS's row.
rows = d["results"]
assert all(r["cublas_m1_ms"] > 0 and abs(r["vs_cublas_m1"] - r["median_ms"] / r["cublas_m1_ms"]) < 1e-9 * r["vs_cublas_m1"]
           for r in rows), rows
assert d["cublas_m1_ms"] == rows[0]["cublas_m1_ms"], d
PY
fi
# On a machine of two GPUs, --device 1 runs every kernel and cuBLAS there, and checks them
# (a wrong result exits 3).
if [ "$(visible_gpus)" -ge 2 ]; then
  out=$("$bench" --size 64 --iters 2 --kernels naive,warptile --device 1 2>&1) || fail "--device 1 on two GPUs: $out"
fi
expect_no_gpu sgemm-bench "no CUDA device is visible" "$bench" --size 64 --iters 2 --kernels naive
[ "$(wc -l <<<"$no_gpu_message")" -eq 1 ] || fail "expected one line without a GPU, got: $no_gpu_message"
echo "ok: $no_gpu_message"
