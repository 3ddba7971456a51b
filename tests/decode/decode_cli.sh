#!/usr/bin/env bash
# sgemm-shapes and sgemm-roofline on the command line: --help, bad input (exit 1 with a message
# that names the problem), and their output: the CSV the tuner reads, tables, and JSON.
# Usage: decode_cli.sh SGEMM_SHAPES SGEMM_ROOFLINE FIXTURES_DIR EXAMPLE_CSV PYTHON
set -u
shapes="$1" roofline="$2" fixtures="$3" example="$4" python="$5"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../cli_checks.sh"

# expect_user_error MESSAGE_PART COMMAND...: exit 1, the message on stderr, nothing on stdout.
expect_user_error() {
  local part="$1"; shift
  local out err rc
  out=$("$@" 2>"$tmp/err"); rc=$?
  err=$(cat "$tmp/err")
  [ $rc -eq 1 ] || fail "$* exited $rc, expected 1 ($err)"
  grep -qF -- "$part" <<<"$err" || fail "$*: message lacks '$part': $err"
  [ -z "$out" ] || fail "$* printed to stdout on error: $out"
}

expect_help_reports_a_full_disk sgemm-shapes "$shapes"
expect_a_closed_pipe_reported sgemm-shapes "$shapes"
expect_help_reports_a_full_disk sgemm-roofline "$roofline"
expect_a_closed_pipe_reported sgemm-roofline "$roofline"
out=$("$shapes" --help) || fail "sgemm-shapes --help exited non-zero"
grep -q -- "--no-fuse" <<<"$out" || fail "sgemm-shapes --help does not document --no-fuse"
grep -q "By default the rows are NN" <<<"$out" || fail "sgemm-shapes --help does not say which layout its rows assume"
grep -q -- "--weights out-in" <<<"$out" || fail "sgemm-shapes --help does not say how to get rows for Hugging Face's layout"
grep -q "rows longer than" <<<"$out" || fail "sgemm-shapes --help does not say that rows too long to tune are refused"
out=$("$roofline" --help) || fail "sgemm-roofline --help exited non-zero"
for option in --context --dtype --gpu --json --batch; do
  grep -q -- "$option" <<<"$out" || fail "sgemm-roofline --help does not document $option"
done

expect_user_error "give a model name or --config" "$shapes"
expect_user_error "unknown model 'llama'" "$shapes" llama
expect_user_error "'0' is not a positive integer" "$shapes" gpt2 --batch 1,0
expect_user_error "'x' is not a positive integer" "$roofline" gpt2 --batch 8,x
# sgemm-tune takes 32-bit dimensions: a batch past them is refused before any row is written,
# by both tools alike. A batch list reads as the other tools' lists of numbers (sgemm-bench
# --sizes): a space after a comma, a sign or leading zeros are taken.
expect_user_error "--batch: 3000000000 is past 2147483647: the tools take 32-bit integers" "$shapes" gpt2 --batch 8,3000000000
expect_user_error "--batch: 99999999999999999 is past 2147483647" "$roofline" gpt2 --batch 99999999999999999
expect_user_error "'00' is not a positive integer" "$shapes" gpt2 --batch 00
expect_user_error "'1 8' is not a positive integer" "$shapes" gpt2 --batch "1 8"
out=$("$shapes" gpt2 --batch "2147483647, 007,+3 ") || fail "--batch '2147483647, 007,+3 ' was refused"
grep -q "^2147483647,2304,768," <<<"$out" && grep -q "^7,2304,768," <<<"$out" && grep -q "^3,2304,768," <<<"$out" ||
  fail "--batch '2147483647, 007,+3 ': $out"
# A config's dimensions may reach 2^31 - 1, past the rows the tuner checks (536870904 floats):
# sgemm-shapes names each such projection once, whatever the batches, and writes nothing, where
# the file it wrote was refused by the tune; a row of exactly that length is written.
sed 's/"vocab_size": 128256/"vocab_size": 536870905/' "$fixtures/llama3_8b_config.json" >"$tmp/huge_vocab.json"
expect_user_error "no CSV is written, as the tuner refuses rows this long: lm_head (N=536870905, K=4096) has rows of 536870905 floats; the check lays each row out up to 7 floats longer, and CUDA copies rows of at most 2^31 - 1 bytes, so rows of at most 536870904 floats can be tuned" \
  "$shapes" --config "$tmp/huge_vocab.json" --batch 1,8
[ "$("$shapes" --config "$tmp/huge_vocab.json" --batch 1,8 2>&1 | grep -o "lm_head (" | wc -l)" = 1 ] ||
  fail "the lm_head too long to tune was not named once for two batches"
"$shapes" --config "$tmp/huge_vocab.json" --batch 1 -o "$tmp/huge.csv" 2>/dev/null && fail "a CSV of rows too long to tune was written"
[ ! -e "$tmp/huge.csv" ] || fail "-o left a file of rows too long to tune"
sed 's/"vocab_size": 128256/"vocab_size": 536870904/' "$fixtures/llama3_8b_config.json" >"$tmp/longest_vocab.json"
out=$("$shapes" --config "$tmp/longest_vocab.json" --batch 1) || fail "a vocabulary of the longest row tuned was refused"
grep -q "^1,536870904,4096,N,N,fp32,1,lm_head$" <<<"$out" || fail "the longest row tuned is not written: $out"
"$roofline" --config "$tmp/huge_vocab.json" --batch 1 >/dev/null || fail "sgemm-roofline refused a vocabulary past the rows tuned"
# Several projections too long: each named, the reason once.
sed 's/"vocab_size": 128256/"vocab_size": 536870905/; s/"intermediate_size": 14336/"intermediate_size": 536870906/' \
  "$fixtures/llama3_8b_config.json" >"$tmp/huge_mlp.json"
expect_user_error "rows this long: gate_up (N=1073741812, K=4096) has rows of 1073741812 floats, down (N=4096, K=536870906) has rows of 536870906 floats, lm_head (N=536870905, K=4096) has rows of 536870905 floats; the check lays" \
  "$shapes" --config "$tmp/huge_mlp.json" --batch 1,8
[ "$(grep -o "the check lays" "$tmp/err" | wc -l)" = 1 ] || fail "the reason for rows too long to tune was not given once: $(cat "$tmp/err")"
out=$("$roofline" gpt2 --batch " 1, 8" --json) || fail "sgemm-roofline --batch ' 1, 8' was refused"
[ "$(python3 -c "import json,sys; print([s['batch'] for s in json.load(sys.stdin)['steps']])" <<<"$out")" = "[1, 8]" ] ||
  fail "sgemm-roofline --batch ' 1, 8' did not give the steps of batches 1 and 8: $out"
# The peaks are whole FLOP/s, as the datasheet's decimals mean them: 66.9 TFLOPS printed as
# 66900000000000.01 before.
out=$("$roofline" gpt2 --gpu H200 --batch 1 --json) || fail "sgemm-roofline --gpu H200 --json failed"
[ "$(grep -oE '"peak_flops": [^,}]*' <<<"$out" | sort -u)" = '"peak_flops": 66900000000000' ] ||
  fail "the H200's fp32 peak in --json: $(grep -oE '"peak_flops": [^,}]*' <<<"$out" | sort -u)"
expect_user_error "one of them" "$shapes" gpt2 --config "$fixtures/gpt2_config.json"
expect_user_error "field 'hidden_size' is missing" "$shapes" --config "$fixtures/bad_missing_hidden_size.json"
expect_user_error "does not divide hidden_size" "$roofline" --config "$fixtures/bad_heads_do_not_divide.json"
expect_user_error "unknown dtype 'fp8'" "$roofline" gpt2 --dtype fp8
expect_user_error "unknown GPU 'B200'" "$roofline" gpt2 --gpu B200
expect_user_error "bf16_tflops" "$roofline" gpt2 --gpu T4 --dtype bf16
expect_user_error "'bandwidth_tbs' is missing" "$roofline" gpt2 --gpu "$fixtures/gpu_missing_bandwidth.json"
# A figure just past a bound is quoted as given, not rounded onto the bound ("got 100000").
printf '{"name": "x", "fp32_tflops": 1, "fp16_tflops": 100000.5, "bandwidth_tbs": 1}' > "$tmp/just_past.json"
expect_user_error "must be between 0.001 and 100000 TFLOPS, got 100000.5" "$roofline" gpt2 --gpu "$tmp/just_past.json"
# The ridge in FLOP/B with one decimal, and below 1 in significant digits (%.1f printed 0.0).
printf '{"name": "x", "fp32_tflops": 2000, "bandwidth_tbs": 1.5}' > "$tmp/high_ridge.json"
grep -qF "ridge 1333.3 FLOP/B" <<<"$("$roofline" gpt2 --gpu "$tmp/high_ridge.json")" || fail "a ridge above 1000"
printf '{"name": "x", "fp32_tflops": 0.01, "bandwidth_tbs": 50}' > "$tmp/low_ridge.json"
grep -qF "ridge 0.0002 FLOP/B" <<<"$("$roofline" gpt2 --gpu "$tmp/low_ridge.json")" || fail "a ridge below 1"
# int8 peaks are in TOPS, to five digits (1978.9 printed as 1979 TFLOPS); the built-in GPU's
# figures say where they come from (the H200's bandwidth is measured, the H100's from its datasheet).
out=$("$roofline" llama-3-8b --gpu 'H100 SXM' --dtype int8 --batch 1) || fail "--dtype int8: $out"
grep -qF "(1978.9 TOPS / 3.35 TB/s)" <<<"$out" && grep -qF "GEMMs at the int8 peak (1978.9 TOPS)" <<<"$out" ||
  fail "int8 peaks: $out"
grep -qxF "GPU figures: NVIDIA H100 datasheet, SXM5" <<<"$out" || fail "the H100's figures' source: $out"
grep -qF "GPU figures: fp32 FFMA peak (1980 MHz), device-copy bandwidth and memory measured" <<<"$("$roofline" gpt2)" ||
  fail "the H200's figures' source"
# A report's gpu object read back as a GPU file keeps where its figures come from (it named the
# file it was read from, and took any "source", an object too).
"$roofline" gpt2 --gpu 'H100 SXM' --json 2>/dev/null | "$python" -c "import json,sys; json.dump(json.load(sys.stdin)['gpu'], sys.stdout)" \
  > "$tmp/h100_gpu.json" || fail "the H100's gpu object"
grep -qxF "GPU figures: NVIDIA H100 datasheet, SXM5" <<<"$("$roofline" gpt2 --gpu "$tmp/h100_gpu.json")" ||
  fail "a gpu object read back lost its figures' source"
# Below 1 token/s in significant digits (%.1f printed 0.0).
out=$("$roofline" llama-3-8b --context 2147483647 --batch 1) || fail "--context 2147483647: $out"
grep -qE "ms per step, 0\.00[0-9]+ tokens/s" <<<"$out" || fail "tokens/s below 1: $out"
# A long GPU name does not cut the compute-bound sentence short.
printf '{"name": "%s", "fp32_tflops": 66.9, "bandwidth_tbs": 4.29, "memory_gib": 16}' "$(printf 'G%.0s' {1..400})" > "$tmp/long_name.json"
out=$("$roofline" llama-3-8b --gpu "$tmp/long_name.json") || fail "a long GPU name: $out"
grep -qE "^Compute-bound at context 4096: from batch [0-9]+, which does not fit: .* more than the G{400}'s 16 GiB\.$" <<<"$out" ||
  fail "a long GPU name's compute-bound line: $(grep Compute-bound <<<"$out")"
# An H200's fp16 peak given in GFLOPS made the ridge 1000 times too high.
printf '{"name": "x", "fp32_tflops": 66.9, "fp16_tflops": 989000, "bandwidth_tbs": 4.8}' > "$tmp/gflops.json"
expect_user_error "field 'fp16_tflops' must be between 0.001 and 100000 TFLOPS, got 989000" "$roofline" gpt2 --gpu "$tmp/gflops.json"
expect_user_error "'fp32_tflops' must be a number, not a string" "$roofline" gpt2 --gpu "$fixtures/gpu_string_peak.json"
expect_user_error "field 'hidden_size' is given twice" "$shapes" --config "$fixtures/bad_duplicate_key.json"
expect_user_error "--context must not be negative" "$roofline" gpt2 --context -5

# The example CSV is this tool's output for the command in its comment, kept up to date.
command=$(sed -n 's/^# made by: sgemm-shapes //p' "$example")
[ -n "$command" ] || fail "$example has no '# made by: sgemm-shapes' line"
# shellcheck disable=SC2086  # the recorded command is split into its arguments on purpose
"$shapes" $command >"$tmp/decode.csv" || fail "sgemm-shapes $command failed"
diff -u "$example" "$tmp/decode.csv" || fail "$example differs from: sgemm-shapes $command"

# -o writes what stdout shows (but for the command in the comment); the tuner's header; one
# row per GEMM and batch.
"$shapes" mistral-7b --batch 2,4 --no-fuse -o "$tmp/o.csv" >"$tmp/o.stdout" || fail "-o failed"
[ ! -s "$tmp/o.stdout" ] || fail "-o also printed to stdout"
grep -qx -- "# made by: sgemm-shapes mistral-7b --batch 2,4 --no-fuse -o $tmp/o.csv" "$tmp/o.csv" ||
  fail "the CSV does not say the command that made it: $(head -3 "$tmp/o.csv")"
diff <("$shapes" mistral-7b --batch 2,4 --no-fuse | grep -v '^# made by') <(grep -v '^# made by' "$tmp/o.csv") ||
  fail "-o and stdout differ"
# The command in the comment runs again as a shell reads it, whatever a path holds: a quote
# was left bare, and a space only wrapped in quotes.
cp "$fixtures/llama3_8b_config.json" "$tmp/it's a \$HOME;config.json"
"$shapes" --config "$tmp/it's a \$HOME;config.json" --batch 1 -o "$tmp/quoted.csv" || fail "a config with quotes in its name"
recorded=$(sed -n 's/^# made by: sgemm-shapes //p' "$tmp/quoted.csv")
mv "$tmp/quoted.csv" "$tmp/quoted.first"
eval "\"\$shapes\" $recorded" || fail "the recorded command failed: $recorded"
cmp -s "$tmp/quoted.csv" "$tmp/quoted.first" || fail "the recorded command made another file: $recorded"
grep -qF -- "it'\\''s a \$HOME;config.json' --batch 1" <<<"$recorded" || fail "the recorded command: $recorded"
grep -qx "M,N,K,transA,transB,precision,weight,name" "$tmp/o.csv" || fail "no tuner header in: $(cat "$tmp/o.csv")"
rows=$(grep -cv '^#\|^M,' "$tmp/o.csv")
per_batch=$(grep -c '^2,' "$tmp/o.csv")
[ "$rows" -eq $((2 * per_batch)) ] || fail "expected the same rows for batch 2 and 4, got $rows rows"
grep -q '^4,1024,4096,N,N,fp32,64,k/v$' "$tmp/o.csv" || fail "no k/v row at batch 4: $(cat "$tmp/o.csv")"
# Output that cannot be written: a path is checked before the work (exit 1, as for any bad
# option); a write that fails at the end, a full disk, is exit 2 with the reason.
expect_user_error "--output /nonexistent-dir/x.csv: no folder /nonexistent-dir" "$shapes" gpt2 -o /nonexistent-dir/x.csv
# A file where a folder should be is named as such: making a folder would not mend it.
echo kept > "$tmp/a-file"
expect_user_error "--output $tmp/a-file/sub/x.csv: $tmp/a-file is not a folder" "$shapes" gpt2 -o "$tmp/a-file/sub/x.csv"
[ "$(cat "$tmp/a-file")" = kept ] || fail "the file in the way was changed"
# A folder name longer than the system takes is no file in the way.
long=$(printf 'd%.0s' $(seq 300))
expect_user_error "--output $tmp/$long/x.csv: no folder $tmp/$long" "$shapes" gpt2 -o "$tmp/$long/x.csv"
# "-" is no output file (it wrote a file named "-"); ./- is one.
expect_user_error "--output -: names no file here (standard output is where the tool prints without this option)" \
  "$shapes" gpt2 -o -
[ ! -e ./- ] || fail "-o - wrote a file named -"
# Boost reads -o=x as -o with the value "=x": that is refused, naming both ways to write it,
# and no file named "=x" is made. -oNAME, joined without "=", stays a value.
shapes=$(realpath "$shapes")  # the folder changes for the line below
(cd "$tmp" && expect_user_error "-o=x.csv: a short option is not joined to its value by '=' (write -o x.csv or --output=x.csv)" \
  "$shapes" gpt2 -o=x.csv) || exit 1
[ ! -e "$tmp/=x.csv" ] || fail "-o=x.csv wrote a file named =x.csv"
"$shapes" gpt2 -o"$tmp/joined.csv" && [ -s "$tmp/joined.csv" ] || fail "-oNAME wrote no CSV to NAME"
# An option without its value does not take the next option as one (-o --no-fuse wrote a
# file named "--no-fuse" and ignored the flag).
expect_user_error "-o needs a value, and the word after it is the option --no-fuse (write --output=--no-fuse" \
  "$shapes" gpt2 -o --no-fuse
[ ! -e ./--no-fuse ] || fail "-o --no-fuse wrote a file named --no-fuse"
expect_user_error "--output $tmp: is a folder" "$shapes" gpt2 -o "$tmp"
expect_user_error "--output is empty" "$shapes" gpt2 -o ""
# Never over the config it reads.
cp "$fixtures/llama3_8b_config.json" "$tmp/own.json"
cp "$tmp/own.json" "$tmp/own.keep"
expect_user_error "--output $tmp/own.json: is the model's config, which the output would replace" \
  "$shapes" --config "$tmp/own.json" -o "$tmp/own.json"
cmp -s "$tmp/own.json" "$tmp/own.keep" || fail "-o naming the config changed it"
# Nor over the file behind --config - (it replaced the config it had just read).
expect_user_error "--output $tmp/own.json: is the model's config behind standard input, which the output would replace" \
  "$shapes" --config - -o "$tmp/own.json" < "$tmp/own.json"
cmp -s "$tmp/own.json" "$tmp/own.keep" || fail "-o naming the file behind --config - changed it"
# A path that cannot take the file fails before any work (exit 1), not at the write (exit 2):
# a symbolic link into no folder, a name longer than the folder takes.
ln -s /nonexistent-folder/shapes.csv "$tmp/dangling.csv"
expect_user_error "--output $tmp/dangling.csv: no folder /nonexistent-folder (where the symbolic link points: /nonexistent-folder/shapes.csv)" \
  "$shapes" gpt2 -o "$tmp/dangling.csv"
mkdir "$tmp/linked" && ln -s linked/shapes.csv "$tmp/to-new.csv"
"$shapes" gpt2 --batch 1 -o "$tmp/to-new.csv" || fail "-o through a link to a new file in a folder that exists failed"
grep -q "^1,2304,768" "$tmp/linked/shapes.csv" || fail "-o through a link wrote no rows where it points"
long_name="$tmp/$(printf 'a%.0s' $(seq "$(getconf NAME_MAX "$tmp")")).csv"  # 4 bytes past what the folder takes
expect_user_error "bytes long, and a file's name in $tmp may have" "$shapes" gpt2 -o "$long_name"
if [ -w /dev/full ]; then
  for tool in "$shapes" "$roofline"; do
    "$tool" gpt2 >/dev/full 2>"$tmp/err"; rc=$?
    [ $rc -eq 2 ] || fail "$tool writing to a full disk exited $rc, expected 2"
    grep -qF "cannot write" "$tmp/err" || fail "$tool on a full disk says: $(cat "$tmp/err")"
  done
  # Output larger than a buffer fails in the middle of the writes; the reason must survive.
  many=$(seq -s, 1 2000)
  "$shapes" llama-3-8b --batch "$many" -o /dev/full 2>"$tmp/err"; rc=$?
  [ $rc -eq 2 ] && grep -qF "cannot write /dev/full: No space left on device" "$tmp/err" ||
    fail "-o /dev/full exited $rc: $(cat "$tmp/err")"
  "$shapes" llama-3-8b --batch "$many" >/dev/full 2>"$tmp/err"; rc=$?
  [ $rc -eq 2 ] && grep -qF "cannot write the CSV to standard output: No space left on device" "$tmp/err" ||
    fail "> /dev/full exited $rc: $(cat "$tmp/err")"
fi

# A name or path with a newline cannot break the CSV: the comment writes it escaped.
nl_dir="$tmp/a
b"
mkdir "$nl_dir" && cp "$fixtures/llama3_8b_config.json" "$nl_dir/config.json"
"$shapes" --config "$nl_dir/config.json" --batch 1 >"$tmp/nl.csv" || fail "a path with a newline was refused"
[ "$(grep -cv '^#\|^M,\|^1,' "$tmp/nl.csv")" -eq 0 ] || fail "a newline broke the CSV: $(cat "$tmp/nl.csv")"
grep -qF 'a\x0ab/config.json' "$tmp/nl.csv" || fail "the path is not in the comment: $(head -2 "$tmp/nl.csv")"
# and the command in the comment still runs again in bash ($'...' with \x0a for the newline).
recorded=$(sed -n 's/^# made by: sgemm-shapes //p' "$tmp/nl.csv")
grep -qF -- "--config \$'$tmp/a\x0ab/config.json' --batch 1" <<<"$recorded" || fail "the recorded command: $recorded"
diff <(eval "\"\$shapes\" $recorded") "$tmp/nl.csv" >/dev/null || fail "the recorded command made another CSV: $recorded"

# Batches: each once, no empty item at either end.
expect_user_error "--batch: 8 is given twice" "$shapes" gpt2 --batch 8,1,8
# "-" reads standard input, named so in messages; --config and --gpu cannot both take it.
out=$("$shapes" --config - --batch 1 < "$fixtures/llama3_8b_config.json") || fail "--config - failed: $out"
grep -q "^1,6144,4096" <<<"$out" || fail "--config - gave no qkv row: $out"
out=$("$roofline" gpt2 --gpu - --batch 1 < "$fixtures/gpu_custom.json") || fail "--gpu - failed: $out"
grep -q "Test GPU" <<<"$out" || fail "--gpu - did not read the GPU: $out"
grep -q "^# decode GEMMs of standard input" <<<"$("$shapes" --config - --batch 1 < "$fixtures/unknown_mlp_type.json" --gated-mlp yes)" ||
  fail "--config - is not named standard input"
expect_user_error "standard input: expected a JSON object" "$shapes" --config - <<<"[]"
expect_user_error "would both read standard input" "$roofline" --config - --gpu - < /dev/null
# By any name of what stdin holds: the GPU loader read the model's config a second time.
expect_user_error "--config /dev/stdin and --gpu - would both read standard input" \
  "$roofline" --config /dev/stdin --gpu - < "$fixtures/llama3_8b_config.json"
expect_user_error "--config - and --gpu /dev/stdin would both read standard input" \
  "$roofline" --config - --gpu /dev/stdin < "$fixtures/llama3_8b_config.json"
expect_user_error "--config is empty: give the path of a model's config.json" "$shapes" --config ''
expect_user_error "--config is empty" "$roofline" --config ''
# Standard input as a socket (ssh, a subprocess) or a terminal is read as a pipe is: it was
# refused as "not a regular file or a pipe". A terminal is told how to end the text, once the
# other arguments are checked (it was told first, and a bad --dtype was named only after the
# GPU's spec had been typed), and is no file an output would replace.
"$python" - "$shapes" "$fixtures/llama3_8b_config.json" "$roofline" <<'PY' || fail "--config - from a socket or a terminal"
import os, pty, socket, subprocess, sys
shapes, config, roofline = sys.argv[1], open(sys.argv[2], "rb").read(), sys.argv[3]
ours, theirs = socket.socketpair()
run = subprocess.Popen([shapes, "--config", "-", "--batch", "1"], stdin=theirs, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
theirs.close()
ours.sendall(config)
ours.shutdown(socket.SHUT_WR)
out, err = run.communicate(timeout=60)
assert run.returncode == 0 and b"\n1,6144,4096," in out, ("socket", run.returncode, err)
main, terminal = pty.openpty()
run = subprocess.Popen([shapes, "--config", "-", "--batch", "1"], stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
os.close(terminal)
os.write(main, config.replace(b"\n", b" ") + b"\n\x04")  # one line, then Ctrl-D at the start of the next
out, err = run.communicate(timeout=60)
assert run.returncode == 0 and b"\n1,6144,4096," in out, ("terminal", run.returncode, err)
assert b"reading the model's config from the terminal; end it with Ctrl-D" in err, err
main, terminal = pty.openpty()
run = subprocess.Popen([shapes, "--config", "-", "--batch", "1", "-o", "/dev/stdout"], stdin=terminal, stdout=terminal,
                       stderr=subprocess.PIPE)
os.close(terminal)
os.write(main, config.replace(b"\n", b" ") + b"\n\x04")
err = run.communicate(timeout=60)[1]
assert run.returncode == 0, ("-o the terminal stdin is", run.returncode, err)
os.close(main)
for command, words in (([shapes, "gpt2", "--config", "-"], b"give a model name or --config FILE"),
                       ([shapes, "--config", "-", "-o", "/nonexistent-folder/x.csv"], b"no folder /nonexistent-folder"),
                       ([roofline, "gpt2", "--gpu", "-", "--dtype", "fp99"], b"unknown dtype 'fp99'"),
                       ([roofline, "--config", "-", "--gpu", "B200"], b"unknown GPU 'B200'")):
    main, terminal = pty.openpty()
    run = subprocess.Popen(command, stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(terminal)
    err = run.communicate(timeout=20)[1]  # nothing is typed: it must not wait for it
    assert run.returncode == 1 and words in err and b"from the terminal" not in err, (command, run.returncode, err)
    os.close(main)
PY
# The model once: a second name, or a name and --model, says so in the tools' words; a word
# left over (a GPU's name of two words unquoted, a space after a comma in --batch) is named.
expect_user_error "unexpected argument 'gpt2': one model is read, the first argument" "$shapes" llama-3-8b gpt2
expect_user_error "unexpected argument 'gpt2': one model is read, the first argument" "$roofline" llama-3-8b gpt2
expect_user_error "unexpected argument 'SXM': one model is read, the first argument, and every other argument is an --option or its value (quote a value of several words)" \
  "$roofline" llama-3-8b --gpu H100 SXM
expect_user_error "unexpected argument '8'" "$shapes" llama-3-8b --batch 1, 8
expect_user_error "the model is given twice (by the first argument or --model): give one" "$shapes" llama-3-8b --model gpt2
expect_user_error "the model is given twice (by the first argument or --model): give one" "$shapes" --model gpt2 --model llama-3-8b
# The help wins over a line it cannot read: a second model, an unknown option.
# --help where a value goes, as -h there (it was an error about --batch's value).
for line in "gpt2 llama-3-8b --help" "--help --bogus" "--model gpt2 --model llama-3-8b --help" "gpt2 --batch --help" \
  "gpt2 --gpu -h" "gpt2 --gpu H100 SXM --help"; do
  shown=$("$roofline" $line 2>&1) && grep -q -- "--context" <<<"$shown" || fail "sgemm-roofline $line did not show the help: $shown"
done
expect_user_error "it takes a whole number no larger in size than 2147483647" "$roofline" gpt2 --context 99999999999999999999
expect_user_error "it takes a whole number no larger in size than 2147483647" "$roofline" gpt2 --context 1.5
# The per-sequence cost without a batch size is in significant digits: a small model on a fast
# GPU adds thousandths of a microsecond, which read "0.00 us of compute but 0.00 us".
printf '{"name":"fast","fp32_tflops":10000,"fp16_tflops":100000,"bandwidth_tbs":100}' > "$tmp/fast.json"
out=$("$roofline" gpt2 --gpu "$tmp/fast.json" --dtype fp16 --batch 1) || fail "a fast GPU's roofline: $out"
grep -qE "^Compute-bound without the KV cache \(context 0\): no batch size; each sequence adds 0\.00[0-9]+ us of compute but 0\.00[0-9]+ us of memory traffic per step\.$" <<<"$out" ||
  fail "a fast GPU's per-sequence costs: $(grep Compute-bound <<<"$out")"
# White space around a number is no part of it, as around an item of --batch; inside it is.
out=$("$roofline" gpt2 --context ' 5 ' --batch ' 8') || fail "--context ' 5 ' was refused"
grep -qF "context 5;" <<<"$out" || fail "--context ' 5 ' did not read as 5: $out"
expect_user_error "it takes a whole number no larger in size than 2147483647" "$roofline" gpt2 --context '5 5'
# Nor around a word chosen from a list, in any case.
out=$("$roofline" ' Llama-3-8B' --dtype ' FP16 ' --batch 1) || fail "' Llama-3-8B' --dtype ' FP16 ' was refused"
grep -qF "llama-3-8b on H200: fp16 weights" <<<"$out" || fail "' FP16 ' did not read as fp16: $out"
out=$("$shapes" llama-3-8b --weights ' Out-In' --batch 1) || fail "--weights ' Out-In' was refused"
grep -q "^1,.*,N,T," <<<"$out" || fail "--weights ' Out-In' did not give NT rows: $out"
expect_user_error "--weights is in-out or out-in, not 'in\x0aout'" "$shapes" llama-3-8b --weights $'in\nout'
# A config's path with a newline stays in its line (\x0a) in the message that names it.
mkdir -p "$tmp/cfg"$'\n'"FAKE LINE" && echo '{}' > "$tmp/cfg"$'\n'"FAKE LINE/config.json"
expect_user_error 'cfg\x0aFAKE LINE/config.json' "$shapes" --config "$tmp/cfg"$'\n'"FAKE LINE/config.json"
! grep -q '^FAKE LINE' "$tmp/err" || fail "the config path split its message: $(cat "$tmp/err")"
expect_user_error "--batch: '1,' ends with a comma" "$shapes" gpt2 --batch 1,
expect_user_error "--batch: '' is not a positive integer" "$roofline" gpt2 --batch ,1

# Config files: not a folder or a device, at most 4 MiB; a pipe is read like a file.
expect_user_error "is a folder, not a JSON file" "$shapes" --config "$fixtures"
expect_user_error "/dev/zero: is not a regular file or a pipe" "$shapes" --config /dev/zero
truncate -s 5M "$tmp/huge.json"
expect_user_error "huge.json: is larger than 4 MiB" "$roofline" gpt2 --gpu "$tmp/huge.json"
"$shapes" --config <(cat "$fixtures/llama3_8b_config.json") --batch 1 >"$tmp/pipe.csv" ||
  fail "a config through a pipe was refused"
grep -q '^1,6144,4096,N,N,fp32,32,qkv$' "$tmp/pipe.csv" || fail "a config through a pipe: $(cat "$tmp/pipe.csv")"
expect_user_error "'num_local_experts' (8) says this is a mixture of experts" "$shapes" --config "$fixtures/bad_mixture_of_experts.json"
expect_user_error "'fp32_tflops' must be between" "$roofline" gpt2 --gpu "$fixtures/gpu_huge_peak.json"
"$roofline" gpt2 --dtype FP16 --batch 1 >/dev/null || fail "--dtype FP16 was refused"

# Tables for people: the assumptions, a table per batch, the compute-bound verdict.
out=$("$roofline" llama-3-8b --gpu 'H100 SXM' --dtype fp16 --context 4096 --batch 1,64) || fail "roofline failed"
for part in "Assumptions:" "batch 1:" "batch 64:" "tokens/s" "attn_qk" "lm_head" "Compute-bound at context 4096"; do
  grep -qF "$part" <<<"$out" || fail "roofline table lacks '$part'"
done
# A step whose weights and KV caches exceed the GPU's memory says so: 256 sequences of 4096
# tokens need 142 GiB against the H100's 79.6.
out=$("$roofline" llama-3-8b --gpu 'H100 SXM' --dtype fp16 --context 4096 --batch 1,256) || fail "roofline failed"
grep -qF "does not fit: the GEMMs' weights and the KV caches take 142.0 GiB, more than the H100 SXM's 79.6 GiB" <<<"$out" ||
  fail "roofline does not flag batch 256 as too large for 79.6 GiB: $out"
[ "$(grep -c "does not fit" <<<"$out")" -eq 1 ] || fail "roofline flags batch 1 too: $out"
# So does the first compute-bound batch: on a T4 it lies far past the card's memory.
out=$("$roofline" llama-3-8b --gpu T4 --dtype fp16 --context 512 --batch 1) || fail "roofline on a T4 failed"
grep -qF "Compute-bound at context 512: from batch 5250, which does not fit: the GEMMs' weights and the KV caches take 342.1 GiB, more than the T4's 14.76 GiB." <<<"$out" ||
  fail "roofline does not say that the compute-bound batch cannot fit: $out"
grep -qF "Compute-bound without the KV cache (context 0): from batch 217." <<<"$out" ||
  fail "roofline: the batch without the KV cache fits: $out"

# A GPU file by any path with a /: a pipe (<(...)) or a file without the .json ending.
cp "$fixtures/gpu_custom.json" "$tmp/my_gpu"
out=$("$roofline" llama-3-8b --gpu "$tmp/my_gpu" --batch 1) && grep -q "on Test GPU" <<<"$out" || fail "--gpu PATH without .json: $out"
out=$("$roofline" llama-3-8b --gpu <(cat "$fixtures/gpu_custom.json") --batch 1) && grep -q "on Test GPU" <<<"$out" ||
  fail "--gpu <(...): $out"
expect_user_error "./no_such_gpu: cannot open the file" "$roofline" llama-3-8b --gpu ./no_such_gpu

# JSON for programs: valid, one step per batch, and the verdict agrees with the steps' own times.
"$roofline" --config "$fixtures/llama3_8b_config.json" --gpu "$fixtures/gpu_custom.json" --dtype fp16 \
  --context 512 --batch 1,4096 --json >"$tmp/r.json" || fail "roofline --json failed"
"$python" - "$tmp/r.json" <<'PY' || fail "roofline --json content"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["gpu"]["name"] == "Test GPU" and r["dtype"] == "fp16" and r["context"] == 512, r
assert [s["batch"] for s in r["steps"]] == [1, 4096], r["steps"]
for s in r["steps"]:
    assert abs(s["time_s"] - sum(k["calls"] * k["time_s"] for k in s["kernels"])) <= 1e-6 * s["time_s"], s
    assert abs(s["tokens_per_s"] - s["batch"] / s["time_s"]) <= 1e-6 * s["tokens_per_s"], s
    assert (s["bound"] == "compute") == (s["compute_s"] >= s["memory_s"]), s
b = r["compute_bound"]["batch"]
assert b is None or all((s["bound"] == "compute") == (s["batch"] >= b) for s in r["steps"]), (b, r["steps"])
assert len(r["assumptions"]) >= 5, r["assumptions"]
# The file's 12 GiB hold neither step's 15 GB of fp16 weights.
assert r["gpu"]["memory_gib"] == 12, r["gpu"]
assert [s["fits"] for s in r["steps"]] == [False, False], r["steps"]
assert r["compute_bound"]["fits"] in (False, None) and (r["compute_bound"]["fits"] is None) == (r["compute_bound"]["batch"] is None), r["compute_bound"]
assert r["steps"][0]["resident_bytes"] > 15e9, r["steps"][0]["resident_bytes"]
PY
# The report's gpu object reads back as a GPU file, with the same figures.
"$python" -c "import json,sys; json.dump(json.load(open(sys.argv[1]))['gpu'], open(sys.argv[2], 'w'))" "$tmp/r.json" "$tmp/again.json"
"$roofline" --config "$fixtures/llama3_8b_config.json" --gpu "$tmp/again.json" --dtype fp16 --context 512 --batch 1,4096 \
  --json >"$tmp/r2.json" || fail "the report's gpu object does not read back: $(cat "$tmp/again.json")"
"$python" -c "import json,sys; a, b = (json.load(open(f)) for f in sys.argv[1:]); assert a['steps'] == b['steps'], (a['steps'], b['steps'])" \
  "$tmp/r.json" "$tmp/r2.json" || fail "the gpu object read back gives other steps"
# Without memory_gib nothing is checked: "fits" is null.
"$roofline" llama-3-8b --gpu <(grep -v memory_gib "$fixtures/gpu_custom.json" | sed 's/"bandwidth_tbs": 1,/"bandwidth_tbs": 1/') \
  --batch 1 --json >"$tmp/nomem.json" || fail "roofline with a GPU file without memory_gib failed"
"$python" -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['gpu']['memory_gib'] is None and r['steps'][0]['fits'] is None, r['steps'][0]" "$tmp/nomem.json" ||
  fail "roofline without memory_gib: $(head -c 300 "$tmp/nomem.json")"

# A model named by a path that is not UTF-8 still makes valid JSON (the bytes become U+FFFD),
# and a model whose layers slide in part has rows for each kind.
odd="$tmp/model-$(printf '\377').json"
cp "$fixtures/window_every_other_layer.json" "$odd"
"$roofline" --config "$odd" --context 8192 --batch 1 --json >"$tmp/odd.json" || fail "roofline on $odd failed"
"$python" - "$tmp/odd.json" <<'PY' || fail "roofline --json on a non-UTF-8 path"
import json, sys
r = json.loads(open(sys.argv[1], encoding="utf-8").read())
assert "\ufffd" in r["model"]["name"], r["model"]["name"]
calls = {k["name"]: k["calls"] for k in r["steps"][0]["kernels"]}
assert calls["attn_qk_window"] == 4 and calls["attn_qk"] == 3, calls
PY
# --weights out-in: the same rows with B transposed (NT), and the comment says so; the value
# in any case; anything else refused.
out=$("$shapes" llama-3-8b --batch 8 --weights OUT-IN) || fail "--weights OUT-IN failed"
grep -q "^8,28672,4096,N,T,fp32,32,gate_up$" <<<"$out" || fail "--weights out-in: no NT gate_up row: $out"
! grep -q ",N,N," <<<"$out" || fail "--weights out-in left NN rows: $out"
grep -q "B\^T, B\[N x K\] the weight stored out x in" <<<"$out" || fail "--weights out-in: the comment does not say B is transposed: $out"
diff <("$shapes" llama-3-8b --batch 8 --weights in-out | grep -v '^# made by') \
     <("$shapes" llama-3-8b --batch 8 | grep -v '^# made by') || fail "--weights in-out is not the default"
expect_user_error "--weights is in-out or out-in, not 'nk'" "$shapes" gpt2 --weights nk
# GPT-2's layers are Conv1D, in x out in Hugging Face's layout too: NN rows, the LM head NT,
# and the comment says so.
out=$("$shapes" gpt2 --batch 1 --weights out-in) || fail "gpt2 --weights out-in failed"
grep -q "^1,2304,768,N,N,fp32,12,qkv$" <<<"$out" || fail "gpt2 --weights out-in: qkv is not NN: $out"
grep -q "^1,50257,768,N,T,fp32,1,lm_head$" <<<"$out" || fail "gpt2 --weights out-in: lm_head is not NT: $out"
grep -q "Conv1D weights, B\[K x N\]: NN rows" <<<"$out" || fail "gpt2 --weights out-in: the comment does not name the NN rows: $out"
# Whether the MLP has a gate comes from model_type; a type the tool does not know is refused
# until --gated-mlp says, which only a --config model takes.
expect_user_error "Say which with --gated-mlp yes or no" "$shapes" --config "$fixtures/unknown_mlp_type.json"
expect_user_error "--gated-mlp is yes or no, not 'maybe'" "$shapes" --config "$fixtures/unknown_mlp_type.json" --gated-mlp maybe
expect_user_error "--gated-mlp goes with --config" "$roofline" gpt2 --gated-mlp no
out=$("$shapes" --config "$fixtures/unknown_mlp_type.json" --batch 1 --gated-mlp no) || fail "--gated-mlp no failed"
grep -q "^1,8192,2048,N,N,fp32,24,up$" <<<"$out" || fail "--gated-mlp no: no 8192-wide up row: $out"
out=$("$shapes" --config "$fixtures/unknown_mlp_type.json" --batch 1 --gated-mlp yes) || fail "--gated-mlp yes failed"
grep -q "^1,16384,2048,N,N,fp32,24,gate_up$" <<<"$out" || fail "--gated-mlp yes: no gate_up row: $out"
out=$("$shapes" --config "$fixtures/starcoder2_3b_config.json" --batch 1) || fail "starcoder2 failed"
grep -q "^1,12288,3072,N,N,fp32,30,up$" <<<"$out" || fail "StarCoder2's MLP is up only, 12288 wide: $out"
out=$("$shapes" --help) || fail "sgemm-shapes --help exited non-zero"
grep -q -- "--gated-mlp" <<<"$out" || fail "sgemm-shapes --help does not document --gated-mlp"

# A context past the model's positions is noted among the assumptions; past 32 bits refused.
out=$("$roofline" gpt2 --context 1024 --batch 1) || fail "roofline gpt2 --context 1024 failed"
grep -qF "context 1024 and the new token pass the 1024 positions the model was made for" <<<"$out" ||
  fail "no note of gpt2's 1024 positions at context 1024: $out"
out=$("$roofline" gpt2 --context 1023 --batch 1) || fail "roofline gpt2 --context 1023 failed"
! grep -q "positions the model was made for" <<<"$out" || fail "a note at context 1023, within gpt2's 1024: $out"
expect_user_error "it takes a whole number no larger in size than 2147483647" "$roofline" gpt2 --context 2147483648
"$roofline" gpt2 --batch 1 --json | "$python" -c 'import json,sys; m=json.load(sys.stdin)["model"]; assert m["max_position_embeddings"] == 1024, m' ||
  fail "roofline --json lacks gpt2's max_position_embeddings"

# Control characters in a model's or a GPU's name: JSON keeps them, tables, CSV comments and
# messages escape them.
named=(--config "$fixtures/control_in_name.json" --gpu "$fixtures/gpu_control_in_name.json" --batch 1)
out=$("$roofline" "${named[@]}") || fail "roofline on control_in_name failed"
grep -qF 'org/model\x0aM,N,K on GPU\x1b[31m:' <<<"$out" || fail "table header not escaped: $out"
"$roofline" "${named[@]}" --json | "$python" -c 'import json,sys; d=json.load(sys.stdin); assert d["model"]["name"] == "org/model\nM,N,K" and d["gpu"]["name"] == "GPU\x1b[31m", (d["model"]["name"], d["gpu"]["name"])' ||
  fail "roofline --json does not keep the names as given"
out=$("$shapes" --config "$fixtures/control_in_name.json" --batch 1) || fail "shapes on control_in_name failed"
grep -qF '# decode GEMMs of org/model\x0aM,N,K (' <<<"$out" || fail "CSV comment not escaped: $out"
expect_user_error "GPU 'GPU\x1b[31m' has no bf16 peak" "$roofline" "${named[@]}" --dtype bf16

expect_user_error "unknown GPU 'h\x1b]0;t\x07'" "$roofline" gpt2 --gpu $'h\e]0;t\a'
expect_user_error "unknown model 'x\x1b[31m'" "$shapes" $'x\e[31m'

# A step's table keeps its columns however large the numbers: every line of it, header and
# total included, ends in the same column (the last is right-aligned).
out=$("$roofline" llama-3-8b --batch 100000) || fail "roofline at batch 100000 failed"
widths=$(awk '/^batch 100000:/ {on = 1; next} on && /^$/ {exit} on && /does not fit/ {next} on {print length($0)}' <<<"$out" | sort -u)
[ -n "$widths" ] || fail "roofline at batch 100000 printed no table for it: $out"
[ "$(wc -l <<<"$widths")" -eq 1 ] || fail "the batch-100000 table's lines end in different columns: $widths
$out"

# An output that is an SQLite database's write-ahead log or rollback journal, by any name or
# through a symbolic link, is refused before any work: replacing it loses the commits not yet
# in its database (it was replaced, exit 0).
printf '\x37\x7f\x06\x82\x00\x2d\xe2\x18 and the frames' >"$tmp/live.db-wal"
printf '\xd9\xd5\x05\xf9\x20\xa1\x63\xd7 and the pages' >"$tmp/journal"
ln -s live.db-wal "$tmp/notes.csv"
expect_user_error "is an SQLite write-ahead log, which this output would replace" "$shapes" gpt2 -o "$tmp/notes.csv"
expect_user_error "is an SQLite rollback journal, which this output would replace" "$shapes" gpt2 -o "$tmp/journal"
[ "$(head -c 4 "$tmp/live.db-wal" | od -An -tx1 | tr -d ' ')" = 377f0682 ] || fail "the write-ahead log was written"
# A FIFO or a device this user may not write is refused before any work (it was written at
# the end, exit 2), as 'nobody' where this root can become that user.
mkfifo "$tmp/fifo" && chmod 444 "$tmp/fifo" && chmod o+x "$tmp"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null &&
   setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$shapes" 2>/dev/null; then
  expect_user_error "cannot write it" setpriv --reuid=65534 --regid=65534 --clear-groups "$shapes" gpt2 -o "$tmp/fifo"
else
  echo "skip: the unwritable FIFO needs a root that can become 'nobody', and a build 'nobody' can run"
fi
# A path in a message is shown with its control characters escaped: a name holding an escape
# sequence does not recolour the terminal.
ln -s /dev/full "$tmp/"$'f\e[31mRED'
"$shapes" gpt2 -o "$tmp/"$'f\e[31mRED' 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "No space left on device" "$tmp/err" && ! grep -q $'\e' "$tmp/err" ||
  fail "a write to /dev/full under a name with an escape: $rc $(cat -v "$tmp/err")"

# --help whose output does not arrive is an error, as any other output is.
for tool in "$shapes" "$roofline"; do
  "$tool" --help >/dev/full 2>"$tmp/err"; rc=$?
  [ $rc -eq 2 ] || fail "$tool --help >/dev/full exited $rc, expected 2"
  grep -q "No space left on device" "$tmp/err" || fail "$tool --help >/dev/full: $(cat "$tmp/err")"
done

echo "ok"
