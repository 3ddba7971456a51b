# Sourced by the command-line tests: how they fail, and the check of a tool's exit on a
# machine without a GPU (CI's), which every tool that needs one must make the same way.

fail() { echo "FAIL: $*"; exit 1; }

# Whether this machine has an NVIDIA GPU, judged apart from the tools under test (a tool that
# wrongly succeeds must not pass as "a GPU is here"): the driver's device files.
gpu_present() { compgen -G '/dev/nvidia[0-9]*' >/dev/null; }

# How many GPUs CUDA shows a process, judged the same way: the device files, fewer where
# CUDA_VISIBLE_DEVICES names fewer (a test run on one GPU of two must not expect a second).
# CUDA reads its entries in order and stops at the first that names no device (empty, -1,
# an index past the last GPU), as tests/gpu/gpu_test_env.h does too.
visible_gpus() {
  local files named=0 entry entries
  files=$(compgen -G '/dev/nvidia[0-9]*' | wc -l)
  if [ -n "${CUDA_VISIBLE_DEVICES+set}" ]; then
    IFS=',' read -ra entries <<<"$CUDA_VISIBLE_DEVICES"
    for entry in "${entries[@]}"; do
      if [[ $entry =~ ^[0-9]{1,4}$ && 10#$entry -lt $files || $entry == GPU-* || $entry == MIG-* ]]; then
        named=$((named + 1))
      else
        break
      fi
    done
    [ "$named" -lt "$files" ] && files=$named
  fi
  echo "$files"
}

# expect_no_gpu WHAT PATTERN CMD...: runs CMD, which without a GPU must exit 2 with PATTERN
# in its stderr; sets no_gpu_message to that stderr. Where a GPU is present CMD does real
# work instead, and the message cannot be checked: the script then ends, passing.
expect_no_gpu() {
  local what="$1" pattern="$2" rc
  shift 2
  no_gpu_message=$("$@" 2>&1 >/dev/null); rc=$?
  if [ $rc -eq 0 ]; then
    [ "$(visible_gpus)" -gt 0 ] || fail "without a GPU $what exited 0: it must say that no GPU is visible and exit 2"
    echo "a GPU is visible: the no-GPU message cannot be checked here"
    exit 0
  fi
  [ $rc -eq 2 ] || fail "without a GPU $what exited $rc, expected 2: $no_gpu_message"
  grep -q -- "$pattern" <<<"$no_gpu_message" || fail "no-GPU message: $no_gpu_message"
  # Said where CUDA shows a GPU, the message is a fault (a driver CUDA cannot use), not CI's case.
  [ "$(visible_gpus)" -eq 0 ] || fail "a GPU is visible (/dev/nvidiaN), but $what says none is: $no_gpu_message"
}

# into_a_closed_pipe ERR CMD...: runs CMD with standard output a pipe whose reader is gone, as
# after `| head` has read enough, and stderr into the file ERR; returns CMD's exit status (128
# plus the signal's number if a signal ended it).
into_a_closed_pipe() {
  local err="$1"
  shift
  python3 - "$err" "$@" <<'PY'
import os, subprocess, sys
read_end, write_end = os.pipe()
os.close(read_end)
with open(sys.argv[1], "w") as err:
    # subprocess gives the command SIGPIPE's default action back (restore_signals).
    code = subprocess.run(sys.argv[2:], stdout=write_end, stderr=err).returncode
sys.exit(128 - code if code < 0 else code)
PY
}

# expect_help_reports_a_full_disk TOOL CMD...: CMD --help into /dev/full must exit 2 naming
# the failed write, not 0 as if the help had arrived. (Nothing to check without /dev/full.)
expect_help_reports_a_full_disk() {
  local tool="$1" err rc
  shift
  [ -w /dev/full ] || return 0
  err=$("$@" --help 2>&1 >/dev/full); rc=$?
  [ $rc -eq 2 ] && grep -qF "$tool: cannot write the help: No space left on device" <<<"$err" ||
    fail "--help into a full disk exited $rc: $err"
}

# expect_a_closed_pipe_reported TOOL CMD...: CMD --help into a pipe whose reader is gone must
# exit 2 naming the failed write, not end by SIGPIPE (141): the tools whose work ends at once.
expect_a_closed_pipe_reported() {
  local tool="$1" err_file err rc
  shift
  err_file=$(mktemp)
  into_a_closed_pipe "$err_file" "$@" --help; rc=$?
  err=$(cat "$err_file"); rm -f "$err_file"
  [ $rc -eq 2 ] && grep -qF "$tool: cannot write the help: Broken pipe" <<<"$err" ||
    fail "--help into a closed pipe exited $rc: $err"
}

# expect_a_closed_pipe_to_end_it CMD...: the tools that work for minutes end by SIGPIPE (141)
# at a write into a pipe whose reader is gone, as `| head` expects, rather than work on.
expect_a_closed_pipe_to_end_it() {
  local err_file rc
  err_file=$(mktemp)
  into_a_closed_pipe "$err_file" "$@" --help; rc=$?
  rm -f "$err_file"
  [ $rc -eq 141 ] || fail "--help into a closed pipe exited $rc, expected 141 (SIGPIPE)"
}
