#!/usr/bin/env bash
# sgemm-db's command line on real files: every subcommand, --json, the default path, exit
# codes (0 ok, 1 user error, 2 environment error) and clear one-line errors.
# usage: sgemm_db_cli.sh SGEMM_DB MAKE_SAMPLE_DB
set -u
db_tool="$1"
make_sample="$2"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/../cli_checks.sh"

# run EXPECTED_RC ARGS...: runs sgemm-db, keeps stdout in $out and stderr in $err.
run() {
  local want=$1; shift
  out=$("$db_tool" "$@" 2>"$dir/err"); local rc=$?
  err=$(cat "$dir/err")
  [ $rc -eq "$want" ] || fail "sgemm-db $* exited $rc, expected $want; stderr: $err"
}
has() { grep -qF -- "$2" <<<"$1" || fail "expected '$2' in: $1"; }

expect_help_reports_a_full_disk sgemm-db "$db_tool"
expect_a_closed_pipe_reported sgemm-db "$db_tool"
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" <<<"$out" || fail "not JSON: $out"; }

"$make_sample" "$dir/ours.db" ours || fail "make_sample_db ours"
"$make_sample" "$dir/theirs.db" theirs || fail "make_sample_db theirs"
"$make_sample" "$dir/old.db" old || fail "make_sample_db old"
ours=(--db "$dir/ours.db")
# The schema version this build writes: one migration a version.
latest=$(ls "$(dirname "$0")"/../../db/migrations/*.sql | wc -l)

# --- help and usage errors: exit 1, a message and a hint ---
run 0 --help
for c in list show explain stats misses export import merge prune verify upgrade; do has "$out" "  $c"; done
# A usage longer than its column ends its line: the summary is not read as more arguments.
grep -qE '^  show M N K .*\[--device ID\]$' <<<"$out" || fail "show's usage runs into its summary: $out"
has "$out" '$SGEMM_DB if set and not empty, else $XDG_DATA_HOME/sgemm/tuning.db where that is an absolute path, else ~/.local/share/sgemm/tuning.db'
# A command's own help: its usage and the options it takes, no others.
run 0 show --help
has "$out" "sgemm-db show: every measurement of a shape"
has "$out" "Usage: sgemm-db [--db PATH] show M N K [--trans NN]"
has "$out" "--align arg"; has "$out" "--busy-timeout"
grep -qF -- "--stale" <<<"$out" && fail "show's help lists prune's --stale: $out"
# The help wins over a bad value on the same line: the user is asking how to give it.
run 0 show --help --busy-timeout x; has "$out" "sgemm-db show: every measurement of a shape"
run 0 --help --bogus; has "$out" "  show"
run 0 prune --help; has "$out" "--stale"; grep -qF -- "--trans" <<<"$out" && fail "prune's help lists --trans: $out"
run 1 "${ours[@]}"; has "$err" "no command given"
run 1 "${ours[@]}" frobnicate; has "$err" "unknown command 'frobnicate'"
# The command and its arguments are words, not options: no abbreviation reaches them, so
# "--a" is --align alone (it was ambiguous with the arguments' hidden option).
run 1 "${ours[@]}" --command list; has "$err" "unrecognised option '--command'"
run 1 "${ours[@]}" list --c; has "$err" "unrecognised option '--c'"
run 0 "${ours[@]}" show 8 4096 4096 --a 8; has "$out" "align8"
run 1 "${ours[@]}" show 8 4096; has "$err" "usage: sgemm-db show M N K"
run 1 "${ours[@]}" show 8 x 4096; has "$err" "N 'x' is not a whole number"
run 1 --db "" list; has "$err" "--db is empty (leave it out for the default database"
# Names of no file the user could find afterwards: refused at once, with the way to a file.
run 1 --db - import "$dir/nothing.csv"; has "$err" "--db -: a database cannot be read from standard input"
run 1 --db :memory: merge "$dir/theirs.db"; has "$err" "--db :memory: is SQLite's name for a database in memory"
out=$(SGEMM_DB=:memory: "$db_tool" list 2>&1); rc=$?
[ $rc -eq 1 ] && grep -qF "SGEMM_DB :memory: is SQLite's name" <<<"$out" || fail "SGEMM_DB=:memory: exited $rc: $out"
[ ! -e ./- ] && [ ! -e ./:memory: ] || fail "a refused --db made a file"
run 1 "${ours[@]}" show 2147483648 1 1; has "$err" "M 2147483648 is more than 2147483647, the largest size"
run 1 "${ours[@]}" show 8 0 4096; has "$err" "N must be at least 1, not 0"
# A negative size is a size, not an unknown short option.
run 1 "${ours[@]}" explain -1 4096 4096; has "$err" "M must be at least 0, not -1"  # explain takes 0
run 1 "${ours[@]}" explain 8 4096 -99999999999999999999; has "$err" "K must be at least 0, not -99999999999999999999"
run 1 "${ours[@]}" show 1 -4096 4096; has "$err" "N must be at least 1, not -4096"
run 1 "${ours[@]}" --busy-timeout 99999999999 list; has "$err" "it takes a whole number no larger in size than 2147483647"
run 1 "${ours[@]}" show +3000000000 8 8; has "$err" "M +3000000000 is more than 2147483647, the largest size"
run 1 "${ours[@]}" list --format json; has "$err" "--format does not apply to list"
run 1 "${ours[@]}" show 8 4096 4096 --trans XY; has "$err" "unknown transposes 'XY'"; has "$err" "Try 'sgemm-db --help'."
run 1 "${ours[@]}" show 8 4096 4096 --precision fp64; has "$err" "Try 'sgemm-db --help'."
run 1 "${ours[@]}" list --device feedface; has "$err" "'feedface' names no device"
run 1 "${ours[@]}" list --device ""; has "$err" "an empty device id names no device"

# --- the default path: $SGEMM_DB, then $XDG_DATA_HOME, then ~/.local/share ---
out=$(SGEMM_DB="$dir/env.db" "$db_tool" list 2>&1); has "$out" "no tuning database at $dir/env.db"
out=$(env -u SGEMM_DB XDG_DATA_HOME="$dir/xdg" "$db_tool" list 2>&1); has "$out" "$dir/xdg/sgemm/tuning.db"
out=$(env -u SGEMM_DB -u XDG_DATA_HOME HOME="$dir/home" "$db_tool" list 2>&1)
has "$out" "$dir/home/.local/share/sgemm/tuning.db"
# Without HOME (a service started without one), "~" is the user's home in the password
# database, as a shell takes it; it was no path at all. stats names the file, or its absence.
home=$(getent passwd "$(id -u)" | cut -d: -f6)
if [ -n "$home" ]; then
  out=$(env -u SGEMM_DB -u XDG_DATA_HOME -u HOME "$db_tool" stats --json 2>&1)
  has "$out" "$home/.local/share/sgemm/tuning.db"
fi

# --- bad databases: exit 2, one line that says what is wrong, the file untouched ---
run 2 --db "$dir/absent.db" list; has "$err" "no tuning database at $dir/absent.db: a tune, an import or a merge writes one there"
mkfifo "$dir/fifo.db"
out=$(timeout 20 "$db_tool" --db "$dir/fifo.db" list 2>&1); rc=$?
[ $rc -eq 2 ] && has "$out" "$dir/fifo.db is not a regular file" || fail "a FIFO as --db exited $rc: $out"
[ ! -e "$dir/absent.db" ] || fail "a reading command created the file"
printf 'M,N,K\n8,4096,4096\n%.0s' {1..100} > "$dir/shapes.csv"
cp "$dir/shapes.csv" "$dir/shapes.keep"
run 2 --db "$dir/shapes.csv" list; has "$err" "is not an SQLite database"
grep -qF "while running" <<<"$err" && fail "the error shows the SQL that ran: $err"
[ "$(wc -l <<<"$err")" -eq 1 ] || fail "expected one line, got: $err"
cmp -s "$dir/shapes.csv" "$dir/shapes.keep" || fail "the CSV was changed"
# A database cut short is corrupt: said in one line, without the SQL that ran.
head -c $(( $(stat -c %s "$dir/ours.db") / 2 )) "$dir/ours.db" > "$dir/cut.db"
run 2 --db "$dir/cut.db" list; has "$err" "$dir/cut.db is corrupt"; has "$err" "nothing was changed: restore it from a copy"
grep -qF "while running" <<<"$err" && fail "the corrupt database's error shows the SQL that ran: $err"
: > "$dir/zero.db"
run 2 --db "$dir/zero.db" list; has "$err" "$dir/zero.db is empty, not a tuning database"
[ ! -s "$dir/zero.db" ] || fail "reading an empty file wrote to it"
run 2 --db "$dir/zero.db" prune --stale; has "$err" "$dir/zero.db is empty, not a tuning database"
run 2 --db "$dir/zero.db" upgrade; has "$err" "$dir/zero.db is empty, not a tuning database"
[ ! -s "$dir/zero.db" ] || fail "prune or upgrade turned an empty file into a database"
cp "$dir/ours.db" "$dir/newer.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA user_version=99'); c.commit()" "$dir/newer.db"
run 2 --db "$dir/newer.db" list; has "$err" "schema version 99, newer than this build"
run 0 "${ours[@]}" export -o "$dir/valid.csv"
run 2 --db "$dir/newer.db" import "$dir/valid.csv"; has "$err" "newer than this build"

# --- an older file: readers read an upgraded copy and leave the file, upgrade writes it ---
# (immutable: a reader in place would remove a -wal file a command left)
schema_of() { python3 -c "import sqlite3,sys; print(sqlite3.connect('file:' + sys.argv[1] + '?immutable=1', uri=True).execute('PRAGMA user_version').fetchone()[0])" "$1"; }
# WAL mode, as sgemm leaves its files: a reader that opened it in place would leave a -wal file.
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA journal_mode=WAL'); c.close()" "$dir/old.db"
for command in list stats misses export verify; do
  run 0 --db "$dir/old.db" $command
  has "$err" "note: $dir/old.db has schema version 1: it was read from a copy in memory brought to version $latest"
done
run 0 --db "$dir/old.db" list --json; [ "$(json 'len(d)')" = 0 ] || fail "list --json of an older file: $out"
# stats and verify give the file's version, not the copy's.
for command in stats verify; do
  run 0 --db "$dir/old.db" $command --json; [ "$(json 'd["schema_version"]')" = 1 ] || fail "$command --json of an older file: $out"
done
run 0 --db "$dir/old.db" verify; has "$out" "schema version 1,"
run 0 --db "$dir/old.db" stats --json
[ "$(json 'd["file_bytes"]')" = "$(stat -c %s "$dir/old.db")" ] || fail "stats --json of an older file: not its size: $out"
[ "$(schema_of "$dir/old.db")" = 1 ] || fail "a reader upgraded the file"
[ ! -e "$dir/old.db-wal" ] || fail "a reader left a -wal file beside an older file"
cp "$dir/old.db" "$dir/old2.db"
cp "$dir/old.db" "$dir/old-source.db"
# A merge reads an older source from an upgraded copy, and leaves the file at its version.
run 0 --db "$dir/merged-from-old.db" merge "$dir/old-source.db"
has "$out" "has schema version 1: it was read from a copy in memory brought to version $latest"
run 0 --db "$dir/merged-from-old2.db" merge "$dir/old-source.db" --json
[ "$(json 'd["source_schema_version"]')" = "1" ] || fail "merge --json of an older source: $out"
[ "$(schema_of "$dir/old-source.db")" = 1 ] || fail "a merge upgraded its source file"
run 0 --db "$dir/old.db" upgrade
has "$out" "$dir/old.db was upgraded from schema version 1 to $latest: builds of sgemm that read an older schema no longer read it"
[ -z "$err" ] || fail "upgrade, whose report says it upgraded, said more: $err"
run 0 --db "$dir/old2.db" upgrade --json; [ "$(json 'd["schema_version"], d["was"]')" = "$latest 1" ] || fail "upgrade --json: $out"
run 0 --db "$dir/old.db" list; has "$out" "no winners"
run 2 --db "$dir/absent.db" upgrade; [ ! -e "$dir/absent.db" ] || fail "upgrade created a file"
# An SQLite file without tables yet is brought to the schema (a read of it first refused it).
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('CREATE TABLE t (x)'); c.execute('DROP TABLE t'); c.commit()" \
  "$dir/no-tables.db" || fail "making an SQLite file without tables"
run 0 --db "$dir/no-tables.db" upgrade; has "$out" "schema version $latest (was 0)"

# --- list, show, stats, misses ---
run 0 "${ours[@]}" list
[ "$(wc -l <<<"$out")" -eq 5 ] || fail "list: expected a header and 4 winners: $out"
has "$out" "naive BLOCK_X=32 BLOCK_Y=8"; has "$out" "cuBLAS"; has "$out" "NVIDIA H200"
head -1 <<<"$out" | grep -q "device  *gpu  *sgemm  *M  *N  *K  *trans" || fail "list header: $out"
run 0 "${ours[@]}" list --json
[ "$(json 'len(d)')" = 4 ] || fail "list --json: $out"
[ "$(json 'd[1]["shape"]["m"]')" = 8 ] || fail "list --json order: $out"
id=$(json 'd[0]["device_id"]')

run 0 "${ours[@]}" show 8 4096 4096
has "$out" "M=8 N=4096 K=4096 NN fp32 align16, best first"
# The winner's own line: its time is the re-timing's, which need not be any row's.
has "$out" "the stored winner of device ${id:0:8}: naive BLOCK_X=32 BLOCK_Y=8, 0.4000 ms (cuBLAS 1.0000 ms, 2.50x), test"
has "$out" "INVALID: wrong result: max error 3.1 above tolerance"
[ "$(grep -c "^\* " <<<"$out")" -eq 1 ] || fail "show marks the winner's run once: $out"
tail -1 <<<"$out" | grep -q INVALID || fail "show: invalid rows last: $out"
# The check's scaled errors in units of u, largest and root mean square; none where a
# candidate was refused before timing.
grep -qE "u max/rms" <<<"$out" || fail "show's header names the scaled errors: $out"
grep -q "3\.2/0\.44 .* valid" <<<"$out" || fail "show gives a measurement's scaled errors: $out"
run 0 "${ours[@]}" show 8 4096 4096 --json
[ "$(json 'd["measurements"][0]["valid"], d["measurements"][1]["valid"]')" = "True False" ] || fail "show --json: $out"
[ "$(json 'd["measurements"][0]["max_error_u"], d["measurements"][0]["rms_error_u"]')" = "3.25 0.4375" ] ||
  fail "show --json gives the scaled errors: $out"
[ "$(json 'd["measurements"][1]["max_error_u"]')" = None ] || fail "show --json: a refused run has no errors: $out"
# The stored winner too, as the text's line names it.
[ "$(json 'len(d["winners"]), d["winners"][0]["kernel"], d["winners"][0]["ms"]')" = "1 naive BLOCK_X=32 BLOCK_Y=8 0.4" ] ||
  fail "show --json gives the stored winner: $out"
[ "$(json 'd["shape"]["m"], d["shape"]["trans"]')" = "8 NN" ] || fail "show --json names the shape: $out"
run 0 "${ours[@]}" show 3 3 3; has "$out" "no measurements of M=3 N=3 K=3"

run 0 "${ours[@]}" stats
has "$out" "schema version $latest"; has "$out" "$id"; has "$out" "hit rate"
run 0 "${ours[@]}" stats --json
[ "$(json 'd["devices"][0]["winners"], d["binaries"]')" = "4 1" ] || fail "stats --json: $out"

run 0 "${ours[@]}" misses
[ "$(wc -l <<<"$out")" -eq 3 ] || fail "misses: $out"
sed -n 2p <<<"$out" | grep -q " 16  *4096  *4096  *NN  *fp32  *16  *5 " || fail "misses: most frequent first: $out"
run 0 "${ours[@]}" misses --json; [ "$(json 'd[0]["count"]')" = 5 ] || fail "misses --json: $out"
# Beside each miss its device's GPU and sgemm version: a build's dispatch reads only its own version's.
version=$(json 'd[0]["library_version"]')
[ -n "$version" ] || fail "misses --json: no library_version: $out"
run 0 "${ours[@]}" misses; sed -n 2p <<<"$out" | grep -q "^${id:0:8}  NVIDIA H200  $version  *16 " || fail "misses: gpu and version: $out"

# --- explain: exact, nearest, fallback, and why ---
# A database that holds no device yet has nothing to explain, and says why (without a GPU).
if ! gpu_present; then
  cp "$dir/ours.db" "$dir/emptied.db"
  python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); [c.execute('DELETE FROM ' + t) for t in ('winners','measurements','misses','binaries','devices')]; c.commit()" "$dir/emptied.db"
  run 1 --db "$dir/emptied.db" explain 8 8 8; has "$err" "holds no device: nothing has been tuned into it, or prune removed what was"
  # Nor can it pick one of several: a user error, as --help lists it.
  run 1 --db "$dir/theirs.db" explain 8 4096 4096; has "$err" "holds 2 devices: name one with --device"
  run 0 --db "$dir/theirs.db" --help; has "$out" "explain without --device where no GPU is"
  # A shape that computes no product is decided without a device, as dispatch does.
  run 0 --db "$dir/emptied.db" explain 0 4096 7 --json
  [ "$(json 'd["decision"]')" = empty ] || fail "explain of M = 0 --json: $out"
fi
# Sizes of 0, which dispatch takes: K of 0 scales C alone. Other commands still refuse them.
run 0 "${ours[@]}" explain 8 4096 0
has "$out" "decision  scale_c"; has "$out" "launch    C = beta * C alone, as in BLAS: K is 0"
run 0 "${ours[@]}" explain 8 0 4096; has "$out" "decision  empty"; has "$out" "launch    nothing: M or N is 0"
# The shape line is dispatch's key: an empty product's is its sizes alone, and a K of 0 is
# aligned as C alone (A's rows of 6 floats, 24 bytes, would make it align8).
grep -qx "shape     M=8 N=0 K=4096" <<<"$out" || fail "explain 8 0 4096's shape line: $out"
run 0 "${ours[@]}" explain 8 0 4096 --trans TT --json
[ "$(json 'sorted(d["shape"])')" = "['k', 'm', 'n']" ] || fail "explain 8 0 4096 --json's shape: $out"
run 0 "${ours[@]}" explain 6 8 0 --trans TN; has "$out" "shape     M=6 N=8 K=0 TN fp32 align16"
# A --device is checked as for any other shape.
run 1 "${ours[@]}" explain 8 8 0 --device bogus; has "$err" "bogus"
run 1 "${ours[@]}" explain 0 8 8 --device "$id" --device "$id"; has "$err" "give one --device here"
run 1 "${ours[@]}" explain 8 4096 -0x1; has "$err" "is not a whole number"
run 1 "${ours[@]}" show 8 4096 0; has "$err" "K must be at least 1, not 0"
run 0 "${ours[@]}" explain 8 4096 4096 --device "${id:0:6}"
run 0 "${ours[@]}" explain 8 4096 4096 --device "$(tr a-f A-F <<<"${id:0:6}")"  # ids are hex: any case
has "$out" "decision  exact"; has "$out" "launch    naive BLOCK_X=32 BLOCK_Y=8"
run 0 "${ours[@]}" explain 4 4096 4096 --device "$id"
has "$out" "decision  nearest"; has "$out" "the nearest tuned shape with NN fp32 align16 is M=8 N=4096 K=4096"
run 0 "${ours[@]}" explain 8 4096 4096 --align 4 --device "$id"
has "$out" "decision  fallback"; has "$out" "cuBLAS by default"; has "$out" "has NN fp32 align4"
run 0 "${ours[@]}" explain 2000 4096 4096 --trans TN --json --device "$id"
[ "$(json 'd["decision"]')" = fallback ] || fail "explain --json: $out"
run 0 "${ours[@]}" explain 4096 4096 4096   # "this device": the GPU here, else the file's only device
# Rows another library version tuned are never read by this build's dispatch, which says so
# rather than explain them as if they were (the file's only device, without a GPU).
"$make_sample" "$dir/stale.db" stale || fail "make_sample_db stale"
run 0 --db "$dir/stale.db" list --json; stale_id=$(json 'd[0]["device_id"]')
run 0 --db "$dir/stale.db" explain 8 4096 4096 --device "$stale_id"
has "$out" "decision  fallback"
has "$out" "was tuned by sgemm 0.2.0; dispatch "
has "$out" "reads only the rows of its own version, so every shape falls back"
has "$out" "sgemm-tune --from-misses tunes an earlier build's misses for it"
has "$out" "decision"
# A newer build's rows are that build's, which prune --stale keeps: no advice to tune them
# from misses before a prune that would not remove them.
"$make_sample" "$dir/newer-build.db" stale 99.0.0 || fail "make_sample_db stale 99.0.0"
run 0 --db "$dir/newer-build.db" list --json; newer_id=$(json 'd[0]["device_id"]')
run 0 --db "$dir/newer-build.db" explain 8 4096 4096 --device "$newer_id"
has "$out" "was tuned by sgemm 99.0.0; dispatch "
has "$out" "they are a newer build's, or another label's of this version: that build reads them, and sgemm-db prune --stale keeps them"
grep -q "from-misses" <<<"$out" && fail "explain of a newer build's device advised tuning its misses: $out"
# A merge or import that takes such rows says that this build's dispatch will not use them.
cp "$dir/ours.db" "$dir/with-stale.db"
run 0 --db "$dir/with-stale.db" merge "$dir/stale.db"
has "$out" "1 of the winners taken are of other sgemm versions than this build's"
# list tells the two devices of one GPU apart by version.
run 0 --db "$dir/with-stale.db" list; has "$out" " 0.2.0 "
run 0 --db "$dir/with-stale.db" list --json
[ "$(json 'sorted(set(w["library_version"] for w in d))[0]')" = 0.2.0 ] || fail "list --json: no versions: $out"
run 0 --db "$dir/with-stale2.db" merge "$dir/stale.db" --json
[ "$(json 'd["winners_taken_of_other_versions"]')" = 1 ] || fail "merge --json of another version's rows: $out"
run 0 --db "$dir/with-ours.db" merge "$dir/ours.db" --json
[ "$(json 'd["winners_taken_of_other_versions"]')" = 0 ] || fail "merge --json of this version's rows: $out"
grep -q "other sgemm versions" <<<"$out" && fail "a merge of this version's rows noted other versions: $out"
run 0 --db "$dir/stale.db" export -o "$dir/stale.csv"
run 0 --db "$dir/stale-imported.db" import "$dir/stale.csv"; has "$out" "1 of the winners taken are of other sgemm versions"
# Without --align, a shape is looked up under the class sgemm-tune stores it under: that of
# tightly packed matrices (rows of 1000 and 517 floats: 4 bytes).
run 0 "${ours[@]}" explain 8 1000 517 --device "$id"; has "$out" "shape     M=8 N=1000 K=517 NN fp32 align4"
run 0 "${ours[@]}" explain 8 1000 517 --align 16 --device "$id"; has "$out" "shape     M=8 N=1000 K=517 NN fp32 align16"
run 0 "${ours[@]}" show 8 1000 514 --device "$id"; has "$out" "no measurements of M=8 N=1000 K=514 NN fp32 align8 of device $id in $dir/ours.db"
# A split-K winner whose partials at a wider call would overflow each stream's workspace runs
# with fewer slices, as dispatch launches it, and explain names that kernel and says why. At
# its own N and K, up to twice its M, the workspace holds its partials: it runs as tuned.
"$make_sample" "$dir/split.db" split || fail "make_sample_db split"
split_id=$("$db_tool" --db "$dir/split.db" list --json | python3 -c "import json,sys; print(json.load(sys.stdin)[0]['device_id'])")
run 0 --db "$dir/split.db" explain 16 2048 4096 --device "$split_id"
has "$out" "decision  nearest"; has "$out" "launch    decode MT=8 BN=128 KW=8 UNROLL=4 EF=1 TB=0 SPLITS=2 RING=0 SUM_PASS=0"
has "$out" "re-split as decode MT=8 BN=128 KW=8 UNROLL=4 EF=1 TB=0 SPLITS=2 RING=0 SUM_PASS=0"
run 0 --db "$dir/split.db" explain 16 1024 4096 --device "$split_id"
has "$out" "decision  nearest"; has "$out" "launch    decode MT=8 BN=128 KW=8 UNROLL=4 EF=1 TB=0 SPLITS=4 RING=0 SUM_PASS=0"
grep -qF "re-split" <<<"$out" && fail "re-split at the winner's own N and K, twice its M: $out"
# A winner whose slices add into C with atomics: --deterministic explains a handle created
# with options.deterministic; with no measurement stored, it runs the same tiles with the
# slices summed by a second kernel.
"$make_sample" "$dir/atomic.db" atomic || fail "make_sample_db atomic"
run 0 --db "$dir/atomic.db" list --json; atomic_id=$(json 'd[0]["device_id"]')  # not this GPU's, where there is one
run 0 --db "$dir/atomic.db" explain 32 4096 4096 --device "$atomic_id"
has "$out" "decision  exact"; has "$out" "SPLITS=4 CT=0 SK=0 ALIGNED=0 KMAJOR=0 SUM_PASS=2"
has "$out" "its 4 slices add into C with float atomics, so C varies in the last bits from run to run"
run 0 --db "$dir/atomic.db" explain 32 4096 4096 --deterministic --device "$atomic_id"
has "$out" "decision  exact"; has "$out" "SPLITS=4 CT=0 SK=0 ALIGNED=0 KMAJOR=0 SUM_PASS=1"
has "$out" "SUM_PASS=2, whose slices add into C with float atomics: the same tiles and split with the slices summed in a fixed order"
# A batch above the tuned one on the same weights runs the stand-in too: each stream's
# workspace holds its partials up to twice the tuned M (its 256-row tile cannot re-split).
run 0 --db "$dir/atomic.db" explain 40 4096 4096 --deterministic --device "$atomic_id"
has "$out" "decision  nearest"; has "$out" "launch    warptile BM=256 BN=128 BK=16 WM=64 WN=64 TM=16 TN=8 STAGES=3 TA=0 TB=0 WK=1 SPLITS=4 CT=0 SK=0 ALIGNED=0 KMAJOR=0 SUM_PASS=1"
run 0 --db "$dir/atomic.db" explain 32 4096 4096 --deterministic --json --device "$atomic_id"
[ "$(json 'd["decision"]')" = exact ] || fail "explain --deterministic --json: $out"
case "$(json 'd["launch"]')" in *SUM_PASS=1) ;; *) fail "explain --deterministic --json launches: $out" ;; esac
case "$(json 'd["stands_in_for"]["kernel"]')" in *SUM_PASS=2) ;; *) fail "explain --deterministic --json replaces: $out" ;; esac
# The stand-in was never timed: its figures are null (they were the tuned kernel's), and the
# tuned kernel's are under stands_in_for.
[ "$(json '[d["winner"][k] for k in ("ms", "tflops", "speedup", "tuned_at")]')" = "[None, None, None, None]" ] ||
  fail "explain --deterministic --json: the stand-in's figures: $out"
[ "$(json 'd["stands_in_for"]["ms"]')" = 0.04 ] || fail "explain --deterministic --json: the tuned kernel's time: $out"
# Each winner carries its device's version, as list and show give it.
[ "$(json 'd["winner"]["library_version"], d["stands_in_for"]["library_version"]')" = "$version $version" ] ||
  fail "explain --deterministic --json: the versions: $out"
has "$(json 'd["reason"]')" "this shape at $(json 'd["stands_in_for"]["tuned_at"]'): warptile BM=256 BN=128 BK=16 WM=64 WN=64 TM=16 TN=8 STAGES=3 TA=0 TB=0 WK=1 SPLITS=4 CT=0 SK=0 ALIGNED=0 KMAJOR=0 SUM_PASS=2 (0.0400 ms"
run 0 --db "$dir/atomic.db" explain 32 4096 4096 --json --device "$atomic_id"
[ "$(json 'd["stands_in_for"]')" = None ] || fail "explain --json without --deterministic: $out"
[ "$(json 'd["winner"]["library_version"]')" = "$version" ] || fail "explain --json: the winner's version: $out"
run 1 --db "$dir/atomic.db" list --deterministic; has "$err" "--deterministic does not apply to list"

# --- export and import ---
run 0 "${ours[@]}" export -o "$dir/winners.csv"
[ "$(wc -l <"$dir/winners.csv")" -eq 5 ] || fail "export: expected a header and 4 rows"
# Exports joined with cat import as one: the second header is passed over. theirs.db holds a
# device ours.db has not.
our_device=$(sed -n 2p "$dir/winners.csv" | cut -d, -f1)
their_device=$("$db_tool" --db "$dir/theirs.db" export | tail -n +2 | cut -d, -f1 | grep -vx "$our_device" | sort -u)
run 0 --db "$dir/theirs.db" export --device "$their_device" -o "$dir/their-winners.csv"
[ "$(wc -l <"$dir/their-winners.csv")" -eq 2 ] || fail "export --device $their_device: $(cat "$dir/their-winners.csv")"
cat "$dir/winners.csv" "$dir/their-winners.csv" > "$dir/joined.csv"
run 0 --db "$dir/joined.db" import "$dir/joined.csv"; has "$out" "winners 5 added"
# A missed shape that has since got a winner (here by import) says so beside its count.
run 0 "${ours[@]}" misses --json; [ "$(json 'd[0]["winner_since"]')" = False ] || fail "misses --json: $out"
python3 - "$dir/winners.csv" "$dir/m16.csv" <<'PY' || fail "editing the export"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
row = next(r for r in rows if r["m"] == "8" and r["family"] != "cublas")
row["m"] = "16"
row["narrowed_by"] = "--families naive"  # the winner of a quick pass
with open(sys.argv[2], "w", newline="") as out:
    w = csv.DictWriter(out, fieldnames=list(row.keys()))
    w.writeheader()
    w.writerow(row)
PY
cp "$dir/ours.db" "$dir/m16.db"
run 0 --db "$dir/m16.db" import "$dir/m16.csv"; has "$out" "winners 1 added"
run 0 --db "$dir/m16.db" misses; sed -n 2p <<<"$out" | grep -q " 16  *4096  *4096  *NN .* 5 .* yes$" || fail "misses: winner since: $out"
run 0 --db "$dir/m16.db" misses --json; [ "$(json 'd[0]["winner_since"]')" = True ] || fail "misses --json: $out"
# A miss an earlier build of the GPU recorded has a winner since where a later build stored one
# for it on the same GPU (sgemm-tune --from-misses tunes such misses), not where another GPU
# did; and a later build's miss has none from an earlier build's winner (an earlier driver's).
"$make_sample" "$dir/upgraded.db" upgraded || fail "make_sample_db upgraded"
run 0 --db "$dir/upgraded.db" misses
sed -n 2p <<<"$out" | grep -q " NVIDIA H200  0\.0\.1  *8  *4096 .* yes$" || fail "misses: an earlier build's miss tuned since: $out"
sed -n 3p <<<"$out" | grep -q " NVIDIA H200  0\.0\.1  *16  *4096 .* no$" || fail "misses: another GPU's winner counted: $out"
sed -n 4p <<<"$out" | grep -q " NVIDIA H200  $version  *1  *4096 .* no$" || fail "misses: an earlier driver's winner counted: $out"
run 0 --db "$dir/upgraded.db" misses --json
[ "$(json '[m["winner_since"] for m in d]')" = "[True, False, False]" ] || fail "misses --json of an earlier build: $out"
# show says what narrowed a winner's search, and what that means for the next tune.
run 0 --db "$dir/m16.db" show 16 4096 4096 --device "$id"
has "$out" "; its search was narrowed by --families naive, so the next sgemm-tune run that searches in full tunes the shape again"
run 0 --db "$dir/m16.db" show 16 4096 4096 --device "$id" --json; [ "$(json 'd["winners"][0]["narrowed_by"]')" = "--families naive" ] ||
  fail "show --json: $out"
# list marks it, and only it, as from a narrowed search.
run 0 --db "$dir/m16.db" list
grep -Eq "^${id:0:8} .* 16 +4096 +4096 .* narrowed +20" <<<"$out" || fail "list does not mark the narrowed winner: $out"
[ "$(grep -c " narrowed " <<<"$out")" -eq 1 ] && [ "$(grep -c " full " <<<"$out")" -eq 4 ] || fail "list's search column: $out"
# A cuBLAS row with parameters or sources is refused (3): cuBLAS has neither, and such a row
# made a second cuBLAS kernel that list and show could not tell from the real one.
for edit in "params=1" "template_hash=abc"; do
  python3 - "$dir/winners.csv" "$dir/cublas-edited.csv" "$edit" <<'PY' || fail "editing the cuBLAS row"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
field, value = sys.argv[3].split("=")
row = next(r for r in rows if r["family"] == "cublas")
row[field] = value
with open(sys.argv[2], "w", newline="") as out:
    w = csv.DictWriter(out, fieldnames=list(row.keys()))
    w.writeheader()
    w.writerow(row)
PY
  rm -f "$dir/cublas-edited.db"
  run 3 --db "$dir/cublas-edited.db" import "$dir/cublas-edited.csv"
  want=$([ "$edit" = params=1 ] && echo "parameters '1'" || echo "sources 'abc'")
  has "$out" "a cuBLAS winner with $want, which cuBLAS has none of ($dir/cublas-edited.csv:2)"
done
run 0 "${ours[@]}" export --format json; [ "$(json 'len(d)')" = 4 ] || fail "export --format json: $out"
run 0 "${ours[@]}" export --format JSON; [ "$(json 'len(d)')" = 4 ] || fail "export --format JSON: $out"
# A winner whose binary is damaged is left out of an export, and named (exit 3): import would
# refuse the whole file for it. What is written imports. (The checksums go too, as in a
# database from before them: the ELF check alone finds the cut.)
cp "$dir/ours.db" "$dir/damaged.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('UPDATE binaries SET cubin = substr(cubin, 1, 100), cubin_checksum = NULL'); c.commit()" \
  "$dir/damaged.db" || fail "damaging the cubins"
run 3 --db "$dir/damaged.db" export -o "$dir/damaged.csv"
has "$err" "sgemm-db: export left out ${id:0:8} M=1 N=4096 K=4096 NN fp32 align16 naive BLOCK_X=32 BLOCK_Y=8: "
has "$err" "cut short"; [ "$(grep -c "export left out" <<<"$err")" -eq 3 ] || fail "expected the 3 naive winners left out: $err"
run 0 --db "$dir/from-damaged.db" import "$dir/damaged.csv"; has "$out" "winners 1 added"
# Said too where the file cannot be written (only the write's failure was said).
if [ -w /dev/full ]; then
  run 2 --db "$dir/damaged.db" export -o /dev/full
  has "$err" "cannot write /dev/full"; [ "$(grep -c "export left out" <<<"$err")" -eq 3 ] ||
    fail "an export to a full disk did not name the winners it left out: $err"
fi
# explain says that such a winner costs each create a compile (it said only "exact winner").
run 0 --db "$dir/damaged.db" explain 1 4096 4096 --device "$id"
has "$out" "decision  exact"; has "$out" "no stored binary serves it (its cubin is "
has "$out" "so dispatch compiles the kernel at each create"
run 0 --db "$dir/damaged.db" explain 1 4096 4096 --device "$id" --json
[ "$(json 'd["compiled_at_create"].startswith("its cubin is ")')" = True ] || fail "explain --json of a damaged binary: $out"
run 0 "${ours[@]}" explain 1 4096 4096 --device "$id" --json
[ "$(json 'd["compiled_at_create"]')" = None ] || fail "explain --json of a sound binary: $out"
# A device row edited by hand (relabelled so that another build reads it) keeps an id that no
# lookup computes: export names its winners as left out (exit 3), where it wrote nothing of
# them and exited 0, and a merge from it is refused whole (exit 2), where it dropped them.
cp "$dir/ours.db" "$dir/relabelled.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE devices SET library_version = '9.9.9'\"); c.commit()" \
  "$dir/relabelled.db" || fail "relabelling a device"
run 3 --db "$dir/relabelled.db" export -o "$dir/relabelled.csv"
has "$err" "the device row ${id:0:8}"; has "$err" "does not match its id (edited by hand?): no lookup finds its 4 winners"
has "$err" "sgemm-db: export left out every winner, so $dir/relabelled.csv is not written"
[ ! -e "$dir/relabelled.csv" ] || fail "an export that left out every winner wrote a file"
# Nor does such an export replace a good earlier one with a file of no winners.
cp "$dir/winners.csv" "$dir/earlier.csv"
run 3 --db "$dir/relabelled.db" export -o "$dir/earlier.csv"
has "$err" "so $dir/earlier.csv is not written (it keeps what it held)"
cmp -s "$dir/winners.csv" "$dir/earlier.csv" || fail "an export that left out every winner replaced an earlier file"
run 2 --db "$dir/from-relabelled.db" merge "$dir/relabelled.db"; has "$err" "nothing was merged"
[ ! -e "$dir/from-relabelled.db" ] || fail "a refused merge made a database"
# A value no tune writes, edited in by hand, is the file's fault (2, where a bad list of
# parameters was a user error, 1), and the message names the file: of a merge's two, the one
# that holds it.
cp "$dir/ours.db" "$dir/edited-params.db"; cp "$dir/ours.db" "$dir/edited-size.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE kernels SET params = '32;8' WHERE family = 'naive'\"); c.commit()" \
  "$dir/edited-params.db" || fail "editing a parameter list"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('UPDATE winners SET m = 4294967304 WHERE m = 8'); c.commit()" \
  "$dir/edited-size.db" || fail "editing a size"
for command in list export verify "show 1 4096 4096"; do
  run 2 --db "$dir/edited-params.db" $command
  has "$err" "$dir/edited-params.db: a kernels row of family naive holds the parameter list '32;8': '32;8' is not an integer: no tune writes one (was the file edited?)"
done
run 2 --db "$dir/edited-size.db" list; has "$err" "$dir/edited-size.db: a row holds the size 4294967304, past 2^31 - 1"
# verify names the row, counts the devices and winners it could not check (it said 0 of each),
# and advises as for a value edited in (it sent the user to tune the shape again).
run 2 --db "$dir/edited-size.db" verify
has "$out" "holds M=4294967304 N=4096 K=4096: sizes that are not whole numbers up to 2^31 - 1 come from no tune"
has "$out" "schema version $latest, 1 devices, 4 winners, 0 binary checks ("
has "$out" "); nothing else checked past the sizes no shape holds"
has "$out" "put it back as the database writes it (sqlite3)"
! grep -qF "to repair a winner, tune its shape again" <<<"$out" || fail "verify sent an edited size to a tune: $out"
# A device deleted in a shell that does not enforce foreign keys (python's sqlite3, as the
# sqlite3 shell) leaves its winners behind: verify sends them to no tune, export counts them
# as left out (exit 3; it exited 0 and said nothing), and merge names the source (it failed on
# the destination's foreign key, quoting SQL).
cp "$dir/ours.db" "$dir/dangling.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('DELETE FROM devices'); c.commit()" \
  "$dir/dangling.db" || fail "deleting a device"
run 2 --db "$dir/dangling.db" verify
# Each left-out winner is named by its device and shape, as export's note says verify does.
[ "$(grep -cE "problem: a row of winners \(device ${id:0:8}, M=[0-9]+ N=[0-9]+ K=[0-9]+ [NT]{2}\) refers to a missing row of devices" <<<"$out")" = 4 ] ||
  fail "verify named the 4 dangling winners otherwise: $out"
has "$out" "put the missing row back, or delete the rows that refer to it (sqlite3; sgemm-db prune --device ID removes a missing device's)"
! grep -qF "to repair a winner, tune its shape again" <<<"$out" || fail "verify sent a dangling row to a tune: $out"
# list and misses show such rows without a GPU or version: a default row's passed for this
# build's (sgemm 0.4.0 beside an empty GPU name).
run 0 --db "$dir/dangling.db" list; has "$out" "${id:0:8}  (no device row)  ?  "
run 0 --db "$dir/dangling.db" list --json
[ "$(json 'sorted(set(str(w["library_version"]) for w in d))')" = "['None']" ] || fail "list --json of dangling rows: $out"
run 0 --db "$dir/dangling.db" misses; has "$out" "${id:0:8}  (no device row)  ?  "
run 0 --db "$dir/dangling.db" misses --json
[ "$(json 'sorted(set(str(m["library_version"]) for m in d))')" = "['None']" ] || fail "misses --json of dangling rows: $out"
# Every command counts such rows alike: verify counted only the winners it checked, and stats
# left out a device without its row, where list shows its 4 winners.
run 2 --db "$dir/dangling.db" verify
has "$out" "0 devices (and 1 of no device row), 4 winners (4 of no device or kernel row),"
run 2 --db "$dir/dangling.db" verify --json
[ "$(json 'd["devices"], d["devices_without_row"], d["winners"], d["dangling_winners"]')" = "0 1 4 4" ] ||
  fail "verify --json of dangling rows: $out"
# Counted so where verify stops at a size no shape holds, too.
cp "$dir/dangling.db" "$dir/dangling-sized.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('UPDATE winners SET m = 3000000000 WHERE m = 1'); c.commit()" \
  "$dir/dangling-sized.db" || fail "editing a size"
run 2 --db "$dir/dangling-sized.db" verify --json
[ "$(json 'd["stopped_at_sizes"], d["devices_without_row"], d["winners"], d["dangling_winners"]')" = "True 1 4 4" ] ||
  fail "verify --json of dangling rows stopped at a size: $out"
run 0 --db "$dir/dangling.db" stats; has "$out" "(no device row: deleted by hand? sgemm-db verify names its rows)"
run 0 --db "$dir/dangling.db" stats --json
[ "$(json '[(x["device_id"], x["description"], x["winners"], x["missed_shapes"]) for x in d["devices"]]')" = \
  "[('$id', None, 4, 2)]" ] || fail "stats --json of dangling rows: $out"
# --device takes the id such rows name, as stats lists it: list and explain read them, an
# unknown id's message lists it, and prune removes its rows (it refused the id).
run 0 --db "$dir/dangling.db" list --device "${id:0:6}"; [ "$(grep -c "(no device row)" <<<"$out")" = 4 ] || fail "list --device: $out"
run 0 --db "$dir/dangling.db" misses --device "$id"; [ "$(grep -c "(no device row)" <<<"$out")" = 2 ] || fail "misses --device: $out"
run 0 --db "$dir/dangling.db" show 8 4096 4096 --device "$id"
has "$out" "the stored winner of device ${id:0:8} (no device row, so no dispatch reads it): naive BLOCK_X=32 BLOCK_Y=8, 0.4000 ms"
run 0 --db "$dir/dangling.db" explain 8 4096 4096 --device "$id"
has "$out" "device    $id  (no device row)"
has "$out" "decision  fallback"; has "$out" "device ${id:0:8}'s row is missing from $dir/dangling.db (deleted by hand?)"
# Without --device or a GPU, it is the file's only device.
if ! gpu_present; then
  run 0 --db "$dir/dangling.db" explain 8 4096 4096; has "$out" "device    $id  (no device row)"
fi
run 1 --db "$dir/dangling.db" list --device ffff; has "$err" "names no device in $dir/dangling.db; its devices:"
has "$err" "$id  (no device row)"
# An id written by hand need not be lower case. Ids are read in any case, so a prefix of it and
# of a device row names both; each whole id names its own.
cp "$dir/ours.db" "$dir/upper.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE winners SET device_id = upper(device_id) WHERE m = 8\"); c.commit()" \
  "$dir/upper.db" || fail "editing an id"
upper=$(tr a-f A-F <<<"$id")
run 0 --db "$dir/upper.db" list --device "$upper"; [ "$(grep -c "(no device row)" <<<"$out")" = 1 ] || fail "list --device $upper: $out"
run 0 --db "$dir/upper.db" list --device "$id"; [ "$(grep -c "NVIDIA H200" <<<"$out")" = 3 ] || fail "list --device $id: $out"
run 1 --db "$dir/upper.db" list --device "${id:0:5}"
has "$err" "names several devices in $dir/upper.db:"; has "$err" "$upper  (no device row)"; has "$err" "$id  NVIDIA H200"
cp "$dir/dangling.db" "$dir/dangling-pruned.db"
run 0 --db "$dir/dangling-pruned.db" prune --device "$id"
has "$out" "removed 0 devices, 4 winners, 4 measurements, 2 missed shapes"
run 0 --db "$dir/dangling-pruned.db" verify; has "$out" "ok: $dir/dangling-pruned.db: schema version"
run 0 --db "$dir/dangling-pruned.db" stats; has "$out" "no devices"
# A kernel row deleted: its winners are in no list (each query joins the kernel), which says
# so, and verify counts them as stats does.
cp "$dir/ours.db" "$dir/no-kernel.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"DELETE FROM kernels WHERE family <> 'cublas'\"); c.commit()" \
  "$dir/no-kernel.db" || fail "deleting a kernel"
for json_flag in "" --json; do
  run 0 --db "$dir/no-kernel.db" list $json_flag
  has "$err" "sgemm-db: 3 winners are not listed: the kernel row each names is missing (deleted by hand?); sgemm-db verify names them"
done
[ "$(json 'len(d)')" = 1 ] || fail "list --json of a database without its kernel rows: $out"
# With none left to list, list does not say there are none; and one is one.
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"DELETE FROM winners WHERE m <> 1\"); c.commit()" \
  "$dir/no-kernel.db" || fail "deleting winners"
run 0 --db "$dir/no-kernel.db" list; has "$out" "no winners that can be listed in $dir/no-kernel.db"
has "$err" "sgemm-db: 1 winner is not listed: the kernel row it names is missing (deleted by hand?); sgemm-db verify names it"
cp "$dir/ours.db" "$dir/no-kernel.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"DELETE FROM kernels WHERE family <> 'cublas'\"); c.commit()" \
  "$dir/no-kernel.db" || fail "deleting a kernel"
run 0 --db "$dir/no-kernel.db" list --device "$id"; has "$err" "sgemm-db: 3 winners are not listed"
run 0 "${ours[@]}" list; [ -z "$err" ] || fail "list of a sound database said: $err"
run 0 --db "$dir/no-kernel.db" stats --json; [ "$(json 'd["devices"][0]["winners"]')" = 4 ] || fail "stats --json: $out"
run 2 --db "$dir/no-kernel.db" verify; has "$out" "1 devices, 4 winners (3 of no device or kernel row),"
run 3 --db "$dir/dangling.db" export -o "$dir/dangling.csv"
has "$err" "4 winners whose device or kernel row is missing (deleted by hand?)"
run 2 --db "$dir/from-dangling.db" merge "$dir/dangling.db"
has "$err" "$dir/dangling.db: "; has "$err" "rows name a device or kernel row that is missing (deleted by hand?); nothing was merged"
[ ! -e "$dir/from-dangling.db" ] || fail "a refused merge made a database"
cp "$dir/ours.db" "$dir/merged-edited.db"
run 2 --db "$dir/merged-edited.db" merge "$dir/edited-params.db"; has "$err" "$dir/edited-params.db: a kernels row"
run 2 --db "$dir/merged-edited.db" merge "$dir/edited-size.db"; has "$err" "$dir/edited-size.db: a row holds the size"
# list, show and stats find its rows under the id it is stored under (list left its GPU and
# version blank, show found no winner, stats counted 0 winners). Relabelled as an older
# version, prune --stale removes it, where it deleted by the id the fields give: no row.
run 0 --db "$dir/relabelled.db" list; has "$out" "${id:0:8}  NVIDIA H200  9.9.9"
run 0 --db "$dir/relabelled.db" show 1 4096 4096
has "$out" "the stored winner of device ${id:0:8} (sgemm 9.9.9, whose rows this build's dispatch does not read): naive"
run 0 --db "$dir/relabelled.db" show 1 4096 4096 --json
[ "$(json '[w["library_version"] for w in d["winners"]]')" = "['9.9.9']" ] || fail "show --json: no version: $out"
run 1 --db "$dir/relabelled.db" list --device 0000; has "$err" "its devices:
  $id  NVIDIA H200"
if ! gpu_present; then  # explain's device is then the file's only one, named as list names it
  run 0 --db "$dir/relabelled.db" explain 1 4096 4096; has "$out" "device    $id  NVIDIA H200"
fi
run 2 --db "$dir/relabelled.db" verify; has "$out" "does not match its id"; has "$out" "1 devices, 4 winners, 3 binary checks"
# Its remedy is the row's own, not a re-tune, which repairs binaries only.
has "$out" "no tune repairs it: put its fields back as they were, or remove it with its winners (sgemm-db prune --device ID)"
! grep -q "tune its shape again" <<<"$out" || fail "verify of an edited row alone advised a re-tune: $out"
run 2 --db "$dir/relabelled.db" verify --json
[ "$(json 'd["edited_device_rows"], d["winners"]')" = "1 4" ] || fail "verify --json of an edited row: $out"
# A value edited in by hand that import would refuse (a time of tuning in another form, an
# infinite tolerance): export leaves its winner out (3), where it wrote a file that import
# refused whole or stopped with no location, and what it writes imports; verify names it (2),
# with its own remedy, not a re-tune.
for edit in "tuned_at = '2026-12-04 21:47:37'" "tolerance = 9e999" "provenance = 'a' || char(0) || 'b'"; do
  cp "$dir/ours.db" "$dir/edited-value.db"; rm -f "$dir/from-edited-value.db" "$dir/merged-edited-value.db"
  python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()" \
    "$dir/edited-value.db" "UPDATE winners SET $edit WHERE m = 8" || fail "editing $edit"
  run 3 --db "$dir/edited-value.db" export -o "$dir/edited-value.csv"
  has "$err" "export left out ${id:0:8} M=8 N=4096 K=4096 NN fp32 align16 naive BLOCK_X=32 BLOCK_Y=8: an import would refuse its row: column "
  run 0 --db "$dir/from-edited-value.db" import "$dir/edited-value.csv"; has "$out" "winners 3 added"
  run 3 --db "$dir/edited-value.db" export --format json; [ "$(json 'len(d)')" = 3 ] || fail "export --format json of $edit: $out"
  run 2 --db "$dir/edited-value.db" verify; has "$out" "M=8 N=4096 K=4096 NN fp32 align16 naive BLOCK_X=32 BLOCK_Y=8: an import would refuse its row"
  has "$out" "put it back as the database writes it"
  ! grep -q "tune its shape again" <<<"$out" || fail "verify of an edited value advised a re-tune: $out"
  run 2 --db "$dir/edited-value.db" verify --json; [ "$(json 'd["edited_values"]')" = 1 ] || fail "verify --json of $edit: $out"
  # A merge refuses it as import would (it took it, and the file's export then left it out).
  run 3 --db "$dir/merged-edited-value.db" merge "$dir/edited-value.db"
  has "$out" "refused  ${id:0:8} M=8 N=4096 K=4096 NN fp32 align16: naive BLOCK_X=32 BLOCK_Y=8 0.4000 ms: it holds a value that import refuses: column "
  has "$out" "winners 3 added, 0 replaced, 0 kept, 1 refused"
done
run 3 --db "$dir/edited-value.db" export -o "$dir/edited-value.csv"  # the last: a NUL byte, which import refused whole
has "$err" "an import would refuse its row: column provenance: holds a NUL byte, which no CSV import reads"
# A merge whose every winner is refused brings no device either (it made a database of
# devices without rows, whose explain then asked which device was meant).
"$make_sample" "$dir/cut-cubins.db" theirs || fail "make_sample_db theirs"
python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("UPDATE binaries SET cubin = substr(cubin, 1, 100)"); c.commit()' \
  "$dir/cut-cubins.db" || fail "editing the database"
run 3 --db "$dir/from-cut-cubins.db" merge "$dir/cut-cubins.db"; has "$out" "0 devices added; winners 0 added"
[ ! -e "$dir/from-cut-cubins.db" ] || fail "a merge that took nothing made a database"
# A parameter list of the wrong length parses, but import refuses its winners (dispatch
# leaves them out): export leaves them out too (3), where it wrote them, exited 0, and the
# file's import then refused them.
cp "$dir/ours.db" "$dir/wrong-length.db"; rm -f "$dir/from-wrong-length.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE kernels SET params = '1,2,3' WHERE family = 'naive'\"); c.commit()" \
  "$dir/wrong-length.db" || fail "editing a parameter list's length"
run 3 --db "$dir/wrong-length.db" export -o "$dir/wrong-length.csv"
has "$err" "export left out ${id:0:8} M=8 N=4096 K=4096 NN fp32 align16 naive BLOCK_X=32 BLOCK_Y=8: an import would refuse it: dispatch would leave it out: it has 3 parameters"
[ "$(grep -c "export left out" <<<"$err")" -eq 3 ] || fail "expected the 3 naive winners left out: $err"
run 0 --db "$dir/from-wrong-length.db" import "$dir/wrong-length.csv"; has "$out" "winners 1 added"
run 0 --db "$dir/relabelled.db" stats --json
[ "$(json 'd["devices"][0]["device_id"][:8], d["devices"][0]["winners"]')" = "${id:0:8} 4" ] || fail "stats of an edited row: $out"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE devices SET library_version = '0.0.1'\"); c.commit()" \
  "$dir/relabelled.db" || fail "relabelling a device as older"
run 0 --db "$dir/relabelled.db" prune --stale; has "$out" "removed 1 devices, 4 winners"
# Nothing is lost to an export: not the database (named directly or through a link), not an
# earlier file that a failing write would have cut short. A file is replaced whole, through a
# link to it, keeping its permissions, and no temporary file stays behind.
cp "$dir/ours.db" "$dir/ours.keep"
run 1 "${ours[@]}" export -o "$dir/ours.db"; has "$err" "--output $dir/ours.db: is the tuning database, which the output would replace"
run 1 "${ours[@]}" export -o --json; has "$err" "-o needs a value, and the word after it is the option --json"
run 1 "${ours[@]}" export -o -; has "$err" "--output -: names no file here"
[ ! -e ./--json ] || fail "export -o --json wrote a file named --json"
db_tool=$(realpath "$db_tool")  # the folder changes for the line below
(cd "$dir" && run 1 "${ours[@]}" export -o=winners-eq.csv &&
  has "$err" "-o=winners-eq.csv: a short option is not joined to its value by '=' (write -o winners-eq.csv or --output=winners-eq.csv)") ||
  exit 1
[ ! -e "$dir/=winners-eq.csv" ] || fail "export -o=NAME wrote a file named =NAME"
ln -s ours.db "$dir/ours-link.db"
run 1 "${ours[@]}" export -o "$dir/ours-link.db"; has "$err" "is the tuning database, which"
cmp -s "$dir/ours.db" "$dir/ours.keep" || fail "export -o onto the database changed it"
# Nor another database: the order of two paths slipped, or the default database named while
# --db names another.
cp "$dir/theirs.db" "$dir/theirs.keep"
run 1 "${ours[@]}" export -o "$dir/theirs.db"
has "$err" "--output $dir/theirs.db: is an SQLite database, which this output would replace; remove it first"
cmp -s "$dir/theirs.db" "$dir/theirs.keep" || fail "export -o onto another database changed it"
# Nor SQLite's files beside it: a write-ahead log holds committed changes not yet in the
# file, and a stray rollback journal makes every later reader fail.
run 1 "${ours[@]}" export -o "$dir/ours.db-wal"; has "$err" "is the tuning database's write-ahead log"
run 1 "${ours[@]}" export -o "$dir/ours.db-journal"; has "$err" "is the tuning database's rollback journal"
[ ! -e "$dir/ours.db-journal" ] || fail "export -o ours.db-journal made the file"
# Spelled another way: a relative path, a link to the database (SQLite keeps its files beside
# the link's target).
(cd "$dir" && "$db_tool" --db ./ours.db export -o ours.db-wal >/dev/null 2>&1) && fail "export -o ours.db-wal beside --db ./ours.db"
ln -sf ours.db "$dir/ours-alias.db"
run 1 --db "$dir/ours-alias.db" export -o "$dir/ours.db-wal"; has "$err" "is the tuning database's write-ahead log"
printf 'an earlier export\n' > "$dir/earlier.csv"; chmod 640 "$dir/earlier.csv"
ln -s earlier.csv "$dir/earlier-link.csv"
# A write cut short: a file size limit of 32 KiB, which SQLite's 32 KiB shared-memory file
# still fits, and an export larger than that.
size=$("$db_tool" "${ours[@]}" export --format json | wc -c)
[ "$size" -gt $((33 * 1024)) ] || fail "the sample's export ($size bytes) must outgrow the 32 KiB limit below"
(trap '' XFSZ; ulimit -f 32; "$db_tool" "${ours[@]}" export --format json -o "$dir/earlier.csv" 2>"$dir/err"); rc=$?
[ $rc -eq 2 ] && grep -qF "cannot write $dir/earlier.csv: File too large" "$dir/err" ||
  fail "an export past the file size limit exited $rc: $(cat "$dir/err")"
[ "$(cat "$dir/earlier.csv")" = "an earlier export" ] || fail "a failed export damaged the earlier file"
# Through a link too (the file it leads to was cut short), and through a link to no file yet
# (a part of the export was left there).
(trap '' XFSZ; ulimit -f 32; "$db_tool" "${ours[@]}" export --format json -o "$dir/earlier-link.csv" 2>"$dir/err"); rc=$?
[ $rc -eq 2 ] && [ "$(cat "$dir/earlier.csv")" = "an earlier export" ] && [ -L "$dir/earlier-link.csv" ] ||
  fail "an export through a link past the file size limit: $rc, the file holds $(head -c 80 "$dir/earlier.csv")"
ln -s not-yet.csv "$dir/not-yet-link.csv"
(trap '' XFSZ; ulimit -f 32; "$db_tool" "${ours[@]}" export --format json -o "$dir/not-yet-link.csv" 2>"$dir/err"); rc=$?
[ $rc -eq 2 ] && [ ! -e "$dir/not-yet.csv" ] || fail "a failed export through a dangling link left part of it: $rc"
rm "$dir/not-yet-link.csv"
run 0 "${ours[@]}" export -o "$dir/earlier-link.csv"
[ -L "$dir/earlier-link.csv" ] || fail "the export replaced the link instead of the file"
[ "$(wc -l <"$dir/earlier.csv")" -eq 5 ] || fail "the export through a link did not reach the file"
[ "$(stat -c %a "$dir/earlier.csv")" = 640 ] || fail "the export changed the file's permissions"
[ -z "$(find "$dir" -name '.*.tmp')" ] || fail "temporary files left: $(find "$dir" -name '.*.tmp')"
run 1 "${ours[@]}" export -o "$dir/no-such-folder/x.csv"; has "$err" "no folder $dir/no-such-folder"
# What is written in place stays what it was: a link to a file not yet made makes the file; a
# file with a second name keeps it; -o /dev/stdout writes into the file standard output is.
ln -s made-through-link.csv "$dir/dangling.csv"
run 0 "${ours[@]}" export -o "$dir/dangling.csv"
[ -L "$dir/dangling.csv" ] && [ "$(wc -l <"$dir/made-through-link.csv")" -eq 5 ] || fail "a dangling link was replaced"
printf 'x\n' > "$dir/first-name.csv"; ln "$dir/first-name.csv" "$dir/second-name.csv"
run 0 "${ours[@]}" export -o "$dir/first-name.csv"
[ "$(wc -l <"$dir/second-name.csv")" -eq 5 ] || fail "the export parted a file from its second name"
{ echo before; "$db_tool" "${ours[@]}" export -o /dev/stdout; echo after; } > "$dir/stdout.csv" 2>"$dir/err" ||
  fail "export -o /dev/stdout into a file: $(cat "$dir/err")"
[ "$(head -1 "$dir/stdout.csv")" = before ] && [ "$(tail -1 "$dir/stdout.csv")" = after ] &&
  [ "$(wc -l <"$dir/stdout.csv")" -eq 7 ] || fail "export -o /dev/stdout replaced the file: $(cat "$dir/stdout.csv")"
# A file the user may write, in a folder where they may not make one (no temporary file), is
# written in place. Only root can set this up (and root itself may write anywhere).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  chmod 755 "$dir"; mkdir "$dir/locked"; cp "$dir/ours.db" "$dir/locked/ours.db"
  touch "$dir/locked/mine.csv"; chown 65534 "$dir/locked/mine.csv"; chmod 755 "$dir/locked"
  setpriv --reuid=65534 --regid=65534 --clear-groups "$db_tool" --db "$dir/locked/ours.db" export \
    -o "$dir/locked/mine.csv" 2>"$dir/err" || fail "an export into a locked folder's writable file: $(cat "$dir/err")"
  [ "$(wc -l <"$dir/locked/mine.csv")" -eq 5 ] || fail "the export in place wrote: $(cat "$dir/locked/mine.csv")"
  # The file keeps its group: the new file takes it where this user may give it (root, any
  # group); where they are not in the group, the file is written in place.
  printf 'x\n' > "$dir/grouped.csv"; chgrp 65533 "$dir/grouped.csv"; chmod 640 "$dir/grouped.csv"
  run 0 "${ours[@]}" export -o "$dir/grouped.csv"
  [ "$(stat -c %g:%a "$dir/grouped.csv")" = 65533:640 ] && [ "$(wc -l <"$dir/grouped.csv")" -eq 5 ] ||
    fail "an export over a file of group 65533 left it $(stat -c %g:%a "$dir/grouped.csv")"
  mkdir "$dir/theirs"; chown 65534 "$dir/theirs"
  printf 'x\n' > "$dir/theirs/grouped.csv"; chown 65534:65533 "$dir/theirs/grouped.csv"; chmod 664 "$dir/theirs/grouped.csv"
  setpriv --reuid=65534 --regid=65534 --clear-groups "$db_tool" --db "$dir/locked/ours.db" export \
    -o "$dir/theirs/grouped.csv" 2>"$dir/err" || fail "an export over a file of another group: $(cat "$dir/err")"
  [ "$(stat -c %g "$dir/theirs/grouped.csv")" = 65533 ] && [ "$(wc -l <"$dir/theirs/grouped.csv")" -eq 5 ] &&
    [ -z "$(find "$dir/theirs" -name '.*.tmp')" ] ||
    fail "an export over a file of a group its user is not in: group $(stat -c %g "$dir/theirs/grouped.csv"), $(ls -A "$dir/theirs")"
  # Behind a folder this user may not enter, a database is not "missing", for the commands
  # that write only an existing one too.
  mkdir "$dir/private"; cp "$dir/ours.db" "$dir/private/ours.db"; chmod 700 "$dir/private"
  for command in list upgrade "prune --stale"; do
    setpriv --reuid=65534 --regid=65534 --clear-groups "$db_tool" --db "$dir/private/ours.db" $command 2>"$dir/err"
    rc=$?
    [ $rc -eq 2 ] && grep -qF "cannot reach $dir/private/ours.db: Permission denied" "$dir/err" ||
      fail "$command behind a closed folder: $rc $(cat "$dir/err")"
  done
  # A database of this build's schema that this user may only read: upgrade says there is
  # nothing to do (it failed with exit 2, opening it for writing); one of an older schema it
  # cannot upgrade (2), and the file stays as it was.
  mkdir "$dir/readable"; cp "$dir/ours.db" "$dir/readable/current.db"
  "$make_sample" "$dir/readable/old.db" old || fail "make_sample_db old"
  chmod 755 "$dir/readable"; chmod 644 "$dir/readable/"*.db
  out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$db_tool" --db "$dir/readable/current.db" upgrade 2>"$dir/err")
  rc=$?
  [ $rc -eq 0 ] && grep -qF "schema version $latest already, this build's: nothing to upgrade" <<<"$out" ||
    fail "upgrade of a read-only database of this schema: $rc $out $(cat "$dir/err")"
  setpriv --reuid=65534 --regid=65534 --clear-groups "$db_tool" --db "$dir/readable/old.db" upgrade >/dev/null 2>"$dir/err"
  rc=$?
  [ $rc -eq 2 ] && [ "$(schema_of "$dir/readable/old.db")" = 1 ] ||
    fail "upgrade of a read-only database of an older schema: $rc $(cat "$dir/err")"
  # A writer that stopped before its checkpoint leaves commits in the -wal file, which a user
  # who may only read the database reads without (from a copy of the file alone): said, where
  # list, export and merge showed the older winners without a word.
  cp "$dir/ours.db" "$dir/readable/stopped.db"
  python3 -c "
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute('PRAGMA journal_mode=WAL'); c.execute('PRAGMA wal_autocheckpoint=0')
c.execute('UPDATE winners SET ms = ms * 0.5'); c.commit(); os._exit(0)" "$dir/readable/stopped.db"
  [ -s "$dir/readable/stopped.db-wal" ] || fail "the stopped writer left no -wal file"
  chmod 644 "$dir/readable/stopped.db"*
  for command in list "export" "verify"; do
    setpriv --reuid=65534 --regid=65534 --clear-groups "$db_tool" --db "$dir/readable/stopped.db" $command \
      >/dev/null 2>"$dir/err"
    grep -qF "sgemm-db: note: $dir/readable/stopped.db-wal (" "$dir/err" && grep -qF "may hold commits not yet in" "$dir/err" ||
      fail "$command of a database whose -wal file it cannot read: $(cat "$dir/err")"
  done
  setpriv --reuid=65534 --regid=65534 --clear-groups "$db_tool" --db "$dir/readable/merged.db" \
    merge "$dir/readable/stopped.db" >/dev/null 2>"$dir/err"
  grep -qF "sgemm-db: note: $dir/readable/stopped.db-wal (" "$dir/err" || fail "merge from it: $(cat "$dir/err")"
  # The same of a file of an older schema, read through an upgraded copy of the file alone.
  "$make_sample" "$dir/readable/stopped-old.db" old || fail "make_sample_db old"
  python3 -c "
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute('PRAGMA journal_mode=WAL'); c.execute('PRAGMA wal_autocheckpoint=0')
c.execute('CREATE TABLE later (x)'); c.commit(); os._exit(0)" "$dir/readable/stopped-old.db"
  chmod 644 "$dir/readable/stopped-old.db"*
  setpriv --reuid=65534 --regid=65534 --clear-groups "$db_tool" --db "$dir/readable/stopped-old.db" list \
    >/dev/null 2>"$dir/err"
  grep -qF "sgemm-db: note: $dir/readable/stopped-old.db-wal (" "$dir/err" ||
    fail "list of an older database whose -wal file it cannot read: $(cat "$dir/err")"
  # Nor does upgrade call a database current that it read without its -wal file's commits, or
  # call "empty" a read-only file without tables yet, which it would make a database: both are
  # the write's refusal.
  python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('CREATE TABLE t (x)'); c.execute('DROP TABLE t'); c.commit()" \
    "$dir/readable/no-tables.db" || fail "making an SQLite file without tables"
  chmod 644 "$dir/readable/no-tables.db"
  for name in stopped no-tables; do
    setpriv --reuid=65534 --regid=65534 --clear-groups "$db_tool" --db "$dir/readable/$name.db" upgrade \
      >/dev/null 2>"$dir/err"
    rc=$?
    [ $rc -eq 2 ] && grep -qF "cannot write $dir/readable/$name.db: " "$dir/err" && ! grep -q "empty" "$dir/err" ||
      fail "upgrade of the read-only $name.db: $rc $(cat "$dir/err")"
  done
  # Its owner reads the commits, and no note.
  out=$("$db_tool" --db "$dir/readable/stopped.db" list 2>"$dir/err")
  [ ! -s "$dir/err" ] || fail "the owner's list of a database with a -wal file said: $(cat "$dir/err")"
fi
# A database locked past the busy timeout: the message says how to wait longer, and shows no SQL.
cp "$dir/ours.db" "$dir/held.db"
python3 -c "
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute('PRAGMA locking_mode = EXCLUSIVE'); c.execute('BEGIN EXCLUSIVE')
print('held', flush=True); time.sleep(30)" "$dir/held.db" >"$dir/holder" &
holder=$!
for _ in $(seq 500); do grep -q held "$dir/holder" && break; sleep 0.01; done
run 2 --db "$dir/held.db" --busy-timeout 100 list
has "$err" "the database is locked: another process held it for longer than the busy timeout (100 ms); try again when it is done, or allow a longer --busy-timeout"
! grep -q "SELECT" <<<"$err" || fail "the locked database's message shows SQL: $err"
# import's checks before its trial wait as long as the option says, not the default 5 s.
SECONDS=0
run 2 --db "$dir/held.db" --busy-timeout 100 import "$dir/winners.csv"; has "$err" "busy timeout (100 ms)"
[ $SECONDS -lt 4 ] || fail "import waited ${SECONDS} s for a lock, past its --busy-timeout of 100 ms"
kill $holder; wait $holder 2>/dev/null
# Output that does not arrive is an environment error (2), on every command.
if [ -w /dev/full ]; then
  run 2 "${ours[@]}" export -o /dev/full; has "$err" "cannot write /dev/full: No space left on device"
  for command in list stats export verify; do
    "$db_tool" "${ours[@]}" $command >/dev/full 2>"$dir/err"; rc=$?
    [ $rc -eq 2 ] && grep -qF "sgemm-db: cannot write standard output: " "$dir/err" ||
      fail "sgemm-db $command > /dev/full exited $rc: $(cat "$dir/err")"
  done
  # An export that left winners out (3) and could not write the rest is an environment error.
  "$db_tool" --db "$dir/damaged.db" export >/dev/full 2>"$dir/err"; rc=$?
  [ $rc -eq 2 ] && grep -qF "sgemm-db: cannot write standard output: " "$dir/err" ||
    fail "export of a damaged database > /dev/full exited $rc: $(cat "$dir/err")"
  # A writing command's report that does not arrive says the work itself was done and kept.
  "$make_sample" "$dir/report-lost.db" stale || fail "make_sample_db stale"
  "$db_tool" --db "$dir/report-lost.db" import "$dir/winners.csv" >/dev/full 2>"$dir/err"; rc=$?
  [ $rc -eq 2 ] && grep -qF "cannot write standard output (the import itself is done: what it wrote to $dir/report-lost.db stays): " "$dir/err" ||
    fail "import > /dev/full exited $rc: $(cat "$dir/err")"
  run 0 --db "$dir/report-lost.db" list --json; [ "$(json 'len(d)')" = 5 ] || fail "the import > /dev/full: $out"
  # One that wrote nothing does not say it did.
  sed '2s/,naive,"32,8",/,retired,"32,8",/' "$dir/winners.csv" | head -2 > "$dir/one-refused.csv"
  "$db_tool" --db "$dir/report-lost.db" import "$dir/one-refused.csv" >/dev/full 2>"$dir/err"; rc=$?
  [ $rc -eq 3 ] && grep -qF "sgemm-db: cannot write standard output: " "$dir/err" ||
    fail "an import that took nothing > /dev/full exited $rc: $(cat "$dir/err")"
fi
# So is a pipe whose reader is gone (`| head`): exit 2, not an end by SIGPIPE, which a script
# reads as "interrupted", and the writing command says its change stays.
"$make_sample" "$dir/closed-pipe.db" stale || fail "make_sample_db stale"
into_a_closed_pipe "$dir/err" "$db_tool" --db "$dir/closed-pipe.db" import "$dir/winners.csv"; rc=$?
[ $rc -eq 2 ] && grep -qF "cannot write standard output (the import itself is done: what it wrote to $dir/closed-pipe.db stays): " "$dir/err" ||
  fail "import into a closed pipe exited $rc: $(cat "$dir/err")"
run 0 --db "$dir/closed-pipe.db" list --json; [ "$(json 'len(d)')" = 5 ] || fail "the import into a closed pipe: $out"
for command in list export; do
  into_a_closed_pipe "$dir/err" "$db_tool" "${ours[@]}" $command; rc=$?
  [ $rc -eq 2 ] && grep -qF "sgemm-db: cannot write standard output: " "$dir/err" ||
    fail "sgemm-db $command into a closed pipe exited $rc: $(cat "$dir/err")"
done
run 1 "${ours[@]}" export --format xml; has "$err" "unknown format 'xml'"
run 0 "${ours[@]}" export --json; [ "$(json 'len(d)')" = 4 ] || fail "export --json: $out"
# An empty field is null there, as the help says: no search of the sample was narrowed, and its
# one cuBLAS winner has no binary.
[ "$(json '{w["narrowed_by"] for w in d}, sum(w["binary_key"] is None for w in d)')" = "{None} 1" ] ||
  fail "export --json's empty fields: $out"
run 1 "${ours[@]}" export --json --format csv; has "$err" "--json asks for JSON and --format for 'csv'"
run 0 --db "$dir/copy.db" import "$dir/winners.csv"; has "$out" "winners 4 added, 0 replaced, 0 kept"
run 0 "${ours[@]}" list; before=$out
run 0 --db "$dir/copy.db" list; [ "$out" = "$before" ] || fail "import did not rebuild the winners: $out"
run 0 --db "$dir/copy.db" verify; has "$out" "ok:"
# Each winner taken says where it came from, as a merged one does: by import, not by merge.
run 0 --db "$dir/copy.db" list --json
[ "$(json 'sorted({w["provenance"].rsplit("; ", 1)[-1] for w in d})')" = "['imported from $dir/winners.csv']" ] ||
  fail "an imported winner's provenance: $out"

sed '3s/,8,4096,4096,NN,/,8,4096,4096,XX,/' "$dir/winners.csv" > "$dir/bad.csv"
run 1 --db "$dir/copy.db" import "$dir/bad.csv"
has "$err" "1 bad line, nothing imported"; has "$err" "$dir/bad.csv:3: column trans: unknown transposes 'XX'"
run 0 --db "$dir/copy.db" list; [ "$out" = "$before" ] || fail "a failed import changed the database"
run 1 --db "$dir/copy.db" import "$dir/nothing-here.csv"; has "$err" "$dir/nothing-here.csv: cannot open it (No such file or directory)"
run 1 --db "$dir/copy.db" import "$dir"; has "$err" "$dir: is a folder, not a CSV file"
run 1 --db "$dir/copy.db" import /dev/zero; has "$err" "/dev/zero: is not a regular file or a pipe"
run 1 --db "$dir/copy.db" import "$dir/theirs.db"; has "$err" "$dir/theirs.db: is an SQLite database, not CSV text (merge brings in a database's winners)"
[ "$(wc -l <<<"$err")" -eq 1 ] || fail "importing a database file: expected one line, got: $err"
run 0 "${ours[@]}" export --format json -o "$dir/winners.json"
run 1 --db "$dir/copy.db" import "$dir/winners.json"
has "$err" "$dir/winners.json: is JSON, not CSV; import reads what export --format csv writes (the default)"
# (From a file, not a pipe: run in a pipeline's subshell would lose its status and $err.)
tr -d '\n ' < "$dir/winners.json" > "$dir/flat.json"
run 1 --db "$dir/copy.db" import - < "$dir/flat.json"
has "$err" "standard input: is JSON, not CSV"
run 1 --db "$dir/copy.db" import - < "$dir"; has "$err" "standard input: is a folder, not a CSV file"
# Closed, with no command substitution: its pipe would take descriptor 0.
"$db_tool" --db "$dir/copy.db" import - <&- > "$dir/out" 2> "$dir/err"; rc=$?
[ $rc -eq 1 ] && grep -qF "standard input: cannot be read (Bad file descriptor)" "$dir/err" ||
  fail "import - with standard input closed: $rc $(cat "$dir/err")"
# A --db in a folder that is not there is a typo, not a wish for a new folder: import and
# merge refuse it before reading anything, and make no folder.
run 1 --db "$dir/typo/imported.db" import "$dir/winners.csv"
has "$err" "--db $dir/typo/imported.db: there is no folder $dir/typo to make the database in (make it first)"
run 1 --db "$dir/typo/merged.db" merge "$dir/theirs.db"; has "$err" "there is no folder $dir/typo"
[ ! -e "$dir/typo" ] || fail "import or merge made the folder of a mistyped --db"
out=$(SGEMM_DB="$dir/typo/env.db" "$db_tool" import "$dir/winners.csv" 2>&1); rc=$?
[ $rc -eq 1 ] && grep -qF "SGEMM_DB=$dir/typo/env.db: there is no folder $dir/typo" <<<"$out" ||
  fail "an import into a mistyped SGEMM_DB: $rc $out"
[ ! -e "$dir/typo" ] || fail "import made the folder of a mistyped SGEMM_DB"
# The same through a symbolic link to no file yet, which is opened through: its target's
# folder is the one (it said "unable to open database file", exit 2).
ln -s typo/linked.db "$dir/link-to-typo.db"
run 1 --db "$dir/link-to-typo.db" import "$dir/winners.csv"
has "$err" "there is no folder $dir/typo to make the database in (make it first); the symbolic link points to $dir/typo/linked.db"
# A path through a file is no missing database or folder, which making one would mend: every
# command says which part is a file (it advised a tune, or making the folder).
cp "$dir/ours.db" "$dir/a-file.db"
run 2 --db "$dir/a-file.db/" list; has "$err" "cannot reach $dir/a-file.db/: $dir/a-file.db is not a folder"
run 2 --db "$dir/a-file.db/x/y.db" verify; has "$err" "$dir/a-file.db is not a folder"
run 1 --db "$dir/a-file.db/x/y.db" import "$dir/winners.csv"; has "$err" "--db $dir/a-file.db/x/y.db: $dir/a-file.db is not a folder"
cmp -s "$dir/a-file.db" "$dir/ours.db" || fail "a path through a file changed the file"
# A bad file is refused before a new database would be created for it.
run 1 --db "$dir/fresh.db" import "$dir/bad.csv"; [ ! -e "$dir/fresh.db" ] || fail "a failed import created the database"
# An edited row (naive 32x9, paired with 32x8's binary), or one of a family this build does
# not have, is refused by the merge rule: faster, it would replace a good winner, which
# dispatch could then not use. The file's other rows come in, and the exit status (3) says
# that some did not.
sed '2s/,naive,"32,8",/,naive,"32,9",/' "$dir/winners.csv" > "$dir/edited.csv"
run 3 --db "$dir/edited-import.db" import "$dir/edited.csv"
has "$out" "refused  ${id:0:8} M=1 N=4096 K=4096 NN fp32 align16: naive BLOCK_X=32 BLOCK_Y=8 0.0500 ms: its binary"
has "$out" "is not sgemm_naive<32, 9> for sm_90"; has "$out" "($dir/edited.csv:2)"; has "$out" "winners 3 added, 0 replaced, 0 kept, 1 refused"
sed '2s/,naive,"32,8",/,retired,"32,8",/' "$dir/winners.csv" > "$dir/retired.csv"
run 3 --db "$dir/retired-import.db" import "$dir/retired.csv"
has "$out" "dispatch would leave it out: this build has no kernel family 'retired'"
# A device comes in with a winner: one whose only winner is refused is not added, where it
# stayed as a device with no rows (and explain, with no GPU, asked which device to use).
run 0 --db "$dir/theirs.db" export -o "$dir/theirs-winners.csv"
other=$(sed -n 4p "$dir/theirs-winners.csv" | cut -d, -f1)
[ "$other" != "$(sed -n 2p "$dir/theirs-winners.csv" | cut -d, -f1)" ] || fail "theirs' export: its last row is of its first device"
sed '4s/,naive,"32,8",/,retired,"32,8",/' "$dir/theirs-winners.csv" > "$dir/theirs-retired.csv"
run 3 --db "$dir/theirs-import.db" import "$dir/theirs-retired.csv"
has "$out" "1 devices added; winners 2 added, 0 replaced, 0 kept, 1 refused"
run 0 --db "$dir/theirs-import.db" stats --json
[ "$(json '[x["device_id"] for x in d["devices"]]')" = "['$(sed -n 2p "$dir/theirs-winners.csv" | cut -d, -f1)']" ] ||
  fail "an import added a device whose only winner it refused: $out"
# A file whose every winner is refused makes no database, and changes none that is there.
head -2 "$dir/retired.csv" > "$dir/all-refused.csv"
run 3 --db "$dir/none-taken.db" import "$dir/all-refused.csv"
has "$out" "winners 0 added, 0 replaced, 0 kept, 1 refused"
has "$err" "nothing changed, so no database was made at $dir/none-taken.db"
[ ! -e "$dir/none-taken.db" ] || fail "an import that took nothing made the database"
run 3 --db "$dir/none-taken.db" import - <"$dir/all-refused.csv"; has "$err" "no database was made at $dir/none-taken.db"
[ ! -e "$dir/none-taken.db" ] || fail "an import from standard input that took nothing made the database"
# A file of no rows (an empty database's export) is refused nothing: it makes an empty database.
head -1 "$dir/all-refused.csv" > "$dir/header-only.csv"
run 0 --db "$dir/from-header.db" import "$dir/header-only.csv"; has "$out" "winners 0 added, 0 replaced, 0 kept, 0 refused"
run 0 --db "$dir/from-header.db" list; has "$out" "no winners"
: > "$dir/empty-file.db"
run 3 --db "$dir/empty-file.db" import "$dir/all-refused.csv"
[ ! -s "$dir/empty-file.db" ] || fail "an import that took nothing wrote into an empty file"
# An SQLite file with nothing in it yet (a writer that died before its first migration) is
# no database yet: an import makes one there.
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA journal_mode=WAL'); c.close()" "$dir/bare.db"
run 3 --db "$dir/bare.db" import "$dir/all-refused.csv"; has "$err" "nothing changed, so no database was made at $dir/bare.db"
run 3 --db "$dir/bare.db" import "$dir/retired.csv"; has "$out" "winners 3 added"
[ "$(schema_of "$dir/bare.db")" = "$latest" ] || fail "an import into a bare SQLite file made no database"
# Nor does it upgrade a file of an older schema; one that takes a winner does.
"$make_sample" "$dir/old-refusing.db" old || fail "make_sample_db old"
run 3 --db "$dir/old-refusing.db" import "$dir/all-refused.csv"
has "$err" "nothing changed, so $dir/old-refusing.db was left as it was, at schema version 1"
[ "$(schema_of "$dir/old-refusing.db")" = 1 ] || fail "an import that took nothing upgraded the file"
run 3 --db "$dir/old-refusing.db" import "$dir/retired.csv"; has "$out" "winners 3 added"
has "$err" "note: $dir/old-refusing.db was upgraded from schema version 1 to $latest: builds of sgemm that read an older schema no longer read it"
[ "$(schema_of "$dir/old-refusing.db")" = "$latest" ] || fail "an import that took winners left the file older"
"$make_sample" "$dir/untouched.db" stale || fail "make_sample_db stale"  # another device only
run 3 --db "$dir/untouched.db" import "$dir/all-refused.csv"; has "$out" "0 devices added; winners 0 added"
run 0 --db "$dir/untouched.db" stats --json
[ "$(json 'len(d["devices"])')" = 1 ] || fail "an import that took nothing added its device: $out"
# A faster row of this build's version tuned with other naive templates (so compiled under
# another key) would replace a winner this build runs with one its dispatch leaves out:
# refused, and the winner stays. Where nothing this build runs is replaced (a shape without a
# winner), it comes in.
python3 - "$dir/winners.csv" "$dir/other-templates.csv" <<'PY' || fail "editing the export"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert rows[0]["family"] == "naive" and rows[0]["m"] == "1", rows[0]["family"]
rows[0]["template_hash"], rows[0]["binary_key"], rows[0]["ms"] = "0000000000000000", "1111111111111111", "0.01"
with open(sys.argv[2], "w", newline="") as out:
    w = csv.DictWriter(out, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerow(rows[0])
PY
cp "$dir/ours.db" "$dir/other-templates.db"
run 3 --db "$dir/other-templates.db" import "$dir/other-templates.csv"
has "$out" "it would replace naive BLOCK_X=32 BLOCK_Y=8, which this build runs, with a winner of other naive sources than this build's (this build's version"
run 0 --db "$dir/other-templates.db" verify
run 0 --db "$dir/other-templates-fresh.db" import "$dir/other-templates.csv"; has "$out" "winners 1 added"
# But a row whose sources hash alone was edited still names the binary that only this build's
# sources give: no other build's row, it is refused by name, and the rows that share its binary
# come in, sound. Taken for another build's, it filed the shared binary as its kernel's, and
# verify then failed the untouched winners (export wrote them all the same).
python3 - "$dir/winners.csv" "$dir/hash-edited.csv" <<'PY' || fail "editing the export"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert [r["binary_key"] for r in rows[:3]] == [rows[0]["binary_key"]] * 3, "three rows share one binary"
rows[0]["template_hash"] = "0000000000000000"
with open(sys.argv[2], "w", newline="") as out:
    w = csv.DictWriter(out, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)
PY
run 3 --db "$dir/hash-edited.db" import "$dir/hash-edited.csv"
has "$out" "its sources hash 0000000000000000 is not this build's"
has "$out" "is this build's compile of it, which only this build's sources give (edited?) ($dir/hash-edited.csv:2)"
has "$out" "winners 3 added, 0 replaced, 0 kept, 1 refused"
run 0 --db "$dir/hash-edited.db" verify
# Two rows of another build that share a binary key but name other sources: the second would
# find the binary filed as the first's kernel, so it is refused.
python3 - "$dir/other-templates.csv" "$dir/two-sources.csv" <<'PY' || fail "editing the export"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
second = dict(rows[0], m="2", template_hash="2222222222222222")
with open(sys.argv[2], "w", newline="") as out:
    w = csv.DictWriter(out, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows([rows[0], second])
PY
run 3 --db "$dir/two-sources.db" import "$dir/two-sources.csv"
has "$out" "the binary stored under its key 1111111111111111 is of another kernel family or its sources (naive BLOCK_X=32 BLOCK_Y=8, sources 0000000000000000) ($dir/two-sources.csv:3)"
run 0 --db "$dir/two-sources.db" verify
# So is a row whose description is not its kernel's: list and explain would name a kernel
# that does not run.
sed '2s/,naive BLOCK_X=32 BLOCK_Y=8,/,totally different,/' "$dir/winners.csv" > "$dir/described.csv"
run 3 --db "$dir/described-import.db" import "$dir/described.csv"
has "$out" "its description 'totally different' is not its kernel's, 'naive BLOCK_X=32 BLOCK_Y=8' ($dir/described.csv:2)"
sed 's/,cublas,,cuBLAS,/,cublas,,cuBLASLt,/' "$dir/winners.csv" > "$dir/described-cublas.csv"
run 3 --db "$dir/described-cublas-import.db" import "$dir/described-cublas.csv"
has "$out" "its description 'cuBLASLt' is not its kernel's, 'cuBLAS'"
# Such a row already in a database: explain leaves it out as dispatch does (its own binary is
# not cached, and 32x9 is not a configuration this build can compile), verify fails, and
# merge refuses it too.
cp "$dir/copy.db" "$dir/edited.db"
python3 - "$dir/edited.db" <<'PY' || fail "editing the database"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("INSERT INTO kernels (family, params, description, template_hash) "
          "SELECT family, '32,9', description, template_hash FROM kernels WHERE family = 'naive'")
c.execute("UPDATE winners SET kernel_id = last_insert_rowid() WHERE m = 1")
c.commit()
PY
run 0 --db "$dir/edited.db" explain 1 4096 4096 --device "$id"; has "$out" "decision  fallback"
has "$out" "within a factor of 2 in M: the nearest tuned M is 8, and M is 1"
has "$out" "the stored winner for this shape, naive BLOCK_X=32 BLOCK_Y=8, is left out: its binary"
has "$out" "and this build cannot compile it: BLOCK_Y=9 is not one of"
run 2 --db "$dir/edited.db" verify
has "$out" "M=1 N=4096 K=4096 NN fp32 align16 naive BLOCK_X=32 BLOCK_Y=8: its binary"
run 3 --db "$dir/copy.db" merge "$dir/edited.db"; has "$out" "1 refused"
# A time edited by hand to 1e308 is listed with its power of ten, not 309 digits cut to a wrong
# number.
cp "$dir/copy.db" "$dir/huge.db"
python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("UPDATE winners SET ms = 1e308 WHERE m = 1"); c.commit()' \
  "$dir/huge.db" || fail "editing the database"
run 0 --db "$dir/huge.db" list; has "$out" " 1.0000e+308 "
# An import file's control characters reach the terminal escaped, in errors too.
sed '3s/,8,4096,4096,NN,/,8,4096,4096,\x1b[31mNN,/' "$dir/winners.csv" > "$dir/coloured.csv"
run 1 --db "$dir/copy.db" import "$dir/coloured.csv"; has "$err" "unknown transposes '\x1b[31mNN'"
if LC_ALL=C grep -q $'\x1b' <<<"$err"; then fail "an import error printed an escape character: $err"; fi
# A spreadsheet's byte order mark before the header is not part of the first column's name.
printf '\xef\xbb\xbf' | cat - "$dir/winners.csv" > "$dir/bom.csv"
run 0 --db "$dir/bom.db" import "$dir/bom.csv"; has "$out" "winners 4 added"

# --- merge: the faster winner stays, another device is kept apart ---
cp "$dir/ours.db" "$dir/merged.db"
# - imports standard input: an export piped from another database (pipefail: the export's
# status counts too).
out=$(set -o pipefail; "$db_tool" "${ours[@]}" export | "$db_tool" --db "$dir/piped.db" import - 2>&1) ||
  fail "export | import -: $out"
has "$out" "from standard input: 1 devices added; winners 4 added"
run 1 --db "$dir/merged.db" merge "$dir/no-such.db"; has "$err" "no tuning database at $dir/no-such.db to merge"
run 0 --db "$dir/merged.db" merge "$dir/theirs.db"
has "$out" "replaced ${id:0:8} M=1 N=4096 K=4096 NN fp32 align16: naive BLOCK_X=32 BLOCK_Y=8 0.0500 ms -> naive BLOCK_X=32 BLOCK_Y=8 0.0400 ms"
has "$out" "kept     ${id:0:8} M=8 N=4096 K=4096"
has "$out" "1 devices added; winners 1 added, 1 replaced, 1 kept, 0 refused"
run 0 --db "$dir/merged.db" list --device "$id" --json
[ "$(json 'len(d)')" = 4 ] || fail "merge added rows to our device: $out"
has "$out" "sgemm-tune on the other box; merged from $dir/theirs.db"
run 0 --db "$dir/merged.db" stats --json; [ "$(json 'len(d["devices"])')" = 2 ] || fail "merge: $out"
other=$(json '[x["device_id"] for x in d["devices"] if x["device_id"] != "'"$id"'"][0]')
# A merge brings winners without their searches' measurements: show names the winner all the
# same, and the one it replaced keeps its measurement, starred as the winner's kernel's.
run 0 --db "$dir/merged.db" show 1 4096 4096 --device "$id"
has "$out" "the stored winner of device ${id:0:8}: naive BLOCK_X=32 BLOCK_Y=8, 0.0400 ms"
has "$out" "merged from $dir/theirs.db"
run 0 --db "$dir/merged.db" show 2 4096 4096
has "$out" "no measurements of M=2 N=4096 K=4096 NN fp32 align16 in $dir/merged.db"
has "$out" "the stored winner of device ${other:0:8}: naive BLOCK_X=32 BLOCK_Y=8, 0.0300 ms"
run 0 --db "$dir/merged.db" show 2 4096 4096 --json
[ "$(json 'len(d["measurements"]), [w["device_id"] for w in d["winners"]] == ["'"$other"'"]')" = "0 True" ] ||
  fail "show --json: a merged winner without measurements: $out"
# Miss counts come in once per recorder: merging the same misses again adds nothing.
cp "$dir/ours.db" "$dir/same.db"
run 0 --db "$dir/same.db" merge "$dir/ours.db"; has "$out" "0 miss rows (one per recorder and shape) added or updated"
run 0 --db "$dir/same.db" misses --json; [ "$(json 'd[0]["count"]')" = 5 ] || fail "merging the same misses added them: $out"
run 1 --db "$dir/merged.db" merge "$dir/merged.db"; has "$err" "into itself"
run 1 --db "$dir/merged.db" merge "$dir/shapes.csv"; has "$err" "is not an SQLite database (file is not a database); a CSV export (export --format csv) is brought in with import"
mkdir -p "$dir/a-folder.db"
run 1 --db "$dir/merged.db" merge "$dir/a-folder.db"; has "$err" "$dir/a-folder.db: is a folder, not a tuning database to merge"
# So is a device or a pipe (it exited 2, as for a damaged database).
run 1 --db "$dir/merged.db" merge /dev/null; has "$err" "/dev/null: is not a regular file, so not a tuning database to merge"
# A database whose header is damaged is no user's slip: exit 2, as list gives for it, and said
# as such (it read "is not an SQLite database", as the slip of 1 does).
python3 -c "import sys; d = bytearray(open(sys.argv[1], 'rb').read()); d[16:18] = b'\\x00\\x03'; open(sys.argv[2], 'wb').write(d)" \
  "$dir/ours.db" "$dir/bad-header.db" || fail "damaging a header"
run 2 --db "$dir/merged.db" merge "$dir/bad-header.db"
has "$err" "$dir/bad-header.db: begins as an SQLite database but is damaged past reading"
: > "$dir/empty-source.db"
run 1 --db "$dir/merged.db" merge "$dir/empty-source.db"; has "$err" "$dir/empty-source.db: is empty, not a tuning database to merge"
# So is an SQLite file with nothing in it yet (it exited 2, advising a merge into it).
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA journal_mode=WAL'); c.execute('CREATE TABLE t (x)'); c.execute('DROP TABLE t'); c.close()" \
  "$dir/bare-source.db" || fail "making a bare SQLite file"
run 1 --db "$dir/merged.db" merge "$dir/bare-source.db"; has "$err" "$dir/bare-source.db: is empty, not a tuning database to merge"
# Another program's database is the user's slip too, as the help's exit codes say (it exited 2).
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('CREATE TABLE notes (text)'); c.commit()" \
  "$dir/foreign.db" || fail "making another program's database"
run 1 --db "$dir/merged.db" merge "$dir/foreign.db"; has "$err" "$dir/foreign.db is an SQLite database, but not a tuning database"
# The file merged is the one named; the message does not send the user to another --db.
run 2 --db "$dir/merged.db" merge "$dir/newer.db"; has "$err" "$dir/newer.db has schema version 99"
grep -qF -- "--db" <<<"$err" && fail "merge's error about the merged file names --db: $err"

# --- prune ---
run 1 --db "$dir/merged.db" prune; has "$err" "prune needs --device ID (repeated for more devices: --device A --device B) or --stale"
run 1 --db "$dir/merged.db" prune --stale --device c94d; has "$err" "prune takes --device ID (repeated for more devices) or --stale, not both"
# A mistyped path is not created (and reported as pruned).
run 2 --db "$dir/typo/merged.db" prune --stale; has "$err" "no tuning database at $dir/typo/merged.db"
[ ! -e "$dir/typo" ] || fail "prune created a folder for a missing database"
run 0 --db "$dir/merged.db" prune --device "$other"; has "$out" "removed 1 devices, 1 winners"
run 0 --db "$dir/merged.db" prune --stale; has "$out" "removed 0 devices"
run 0 --db "$dir/merged.db" prune --stale --json; [ "$(json 'd["devices"]')" = 0 ] || fail "prune --json: $out"
# What a prune removes is counted under stats's keys: missed shapes are "missed_shapes" in both
# (prune's "misses" counted shapes, where stats's counts calls).
"$make_sample" "$dir/pruned-misses.db" ours >/dev/null || fail "make_sample_db"
run 0 --db "$dir/pruned-misses.db" stats --json; missed=$(json 'd["devices"][0]["missed_shapes"]')
[ "$missed" -gt 0 ] || fail "the sample has no missed shapes: $out"
run 0 --db "$dir/pruned-misses.db" prune --device "$id" --json
[ "$(json 'd["missed_shapes"]')" = "$missed" ] || fail "prune --json's missed shapes: $out, stats said $missed"
# The same keys as prune --stale --json gives: a device removed by id keeps none by version.
[ "$(json 'd["newer_kept"]')" = 0 ] || fail "prune --device --json's newer_kept: $out"
# A prune gives the space of what it removed back: a 4 MiB binary of an NVRTC no device has.
cp "$dir/ours.db" "$dir/bloated.db"
python3 - "$dir/bloated.db" <<'PY' || fail "adding a large stale binary"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
columns = [r[1] for r in c.execute("PRAGMA table_info(binaries)")]
row = dict(zip(columns, c.execute("SELECT * FROM binaries LIMIT 1").fetchone()))
row.update(cache_key="stale", nvrtc_version="0.0", cubin=bytes(4 << 20))
c.execute("INSERT INTO binaries (%s) VALUES (%s)" % (",".join(columns), ",".join("?" * len(columns))), list(row.values()))
c.commit()
PY
cp "$dir/bloated.db" "$dir/bloated-copy.db"
before=$(stat -c %s "$dir/bloated.db")
run 0 --db "$dir/bloated.db" prune --stale --json
[ "$(json 'd["binaries"]')" = 1 ] && [ "$(json 'd["bytes_freed"] > 4 << 20')" = True ] || fail "prune --json of a binary: $out"
after=$(stat -c %s "$dir/bloated.db")
[ $((before - after)) -gt $((4 << 20)) ] || fail "a prune of 4 MiB left the file at $after bytes (was $before)"
# What it reports is what the file lost: measured after the prune's deletions, which grow the
# -wal file, it was more.
[ "$(json 'd["bytes_freed"]')" = $((before - after)) ] || fail "prune said $(json 'd["bytes_freed"]') bytes freed, the file lost $((before - after))"
[ ! -s "$dir/bloated.db-wal" ] || fail "a -wal file is left after the prune"
run 0 --db "$dir/bloated.db" verify
# Where another connection reads the file, the rewritten pages wait in its -wal file: the
# prune stays, and says so.
cp "$dir/bloated-copy.db" "$dir/bloated-held.db"
python3 -c "
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute('BEGIN'); c.execute('SELECT count(*) FROM binaries').fetchone()
print('reading', flush=True); time.sleep(30)" "$dir/bloated-held.db" >"$dir/reader" &
reader=$!
for _ in $(seq 500); do grep -q reading "$dir/reader" && break; sleep 0.01; done
run 0 --db "$dir/bloated-held.db" prune --stale --json
[ "$(json 'd["binaries"]')" = 1 ] || fail "prune beside a reader: $out"
has "$err" "the rows are removed, but the file did not shrink: other connections hold the database open"
[ "$(json 'd["compact_problem"] is not None')" = True ] || fail "prune --json beside a reader: $out"
# Its -wal file grew by the rewritten pages: nothing is freed yet (it said minus 4 MiB).
[ "$(json 'd["bytes_freed"]')" = 0 ] || fail "prune beside a reader said $(json 'd["bytes_freed"]') bytes freed"
kill $reader; wait $reader 2>/dev/null
run 0 --db "$dir/bloated.db" prune --stale; has "$out" "removed 0 devices"
grep -q "shrank" <<<"$out" && fail "a prune that removed nothing says the file shrank: $out"
# A writing command that fails, or changes nothing, leaves a file of an older schema at its
# version, which older builds still read; one that changes it upgrades it, and says so.
"$make_sample" "$dir/old-kept.db" old || fail "make_sample_db old"
ln -s "$dir/old-kept.db" "$dir/old-kept-link.db"
run 1 --db "$dir/old-kept.db" prune --device c94d; has "$err" "c94d"
run 1 --db "$dir/old-kept.db" merge "$dir/old-kept.db"; has "$err" "into itself"
run 1 --db "$dir/old-kept.db" merge "$dir/old-kept-link.db"; has "$err" "into itself"
run 0 --db "$dir/old-kept.db" prune --stale; has "$out" "removed 0 devices"
has "$err" "nothing changed, so $dir/old-kept.db was left as it was, at schema version 1"
"$make_sample" "$dir/empty-latest.db" old && "$db_tool" --db "$dir/empty-latest.db" upgrade >/dev/null ||
  fail "making an empty database of this schema"
run 0 --db "$dir/old-kept.db" merge "$dir/empty-latest.db"; has "$out" "0 devices added; winners 0 added"
has "$err" "nothing changed, so $dir/old-kept.db was left as it was"
run 0 --db "$dir/old-kept.db" merge "$dir/empty-latest.db" --json
[ "$(json 'd["devices_added"]')" = 0 ] || fail "merge --json of nothing into an older file: $out"
grep -q "upgraded" <<<"$err" && fail "a merge that changed nothing said it upgraded: $err"
[ "$(schema_of "$dir/old-kept.db")" = 1 ] || fail "a failed or empty prune or merge upgraded the file"
run 0 --db "$dir/old-kept.db" merge "$dir/theirs.db"; has "$out" "2 devices added"
has "$err" "note: $dir/old-kept.db was upgraded from schema version 1 to $latest"
[ "$(schema_of "$dir/old-kept.db")" = "$latest" ] || fail "a merge that brought rows left the file older"
run 0 --db "$dir/old-kept.db" prune --device "$other"; has "$out" "removed 1 devices"
grep -q "note:\|nothing changed" <<<"$err" && fail "a prune of a file of this schema said more: $err"
run 0 --db "$dir/old-kept.db" upgrade; has "$out" "schema version $latest already, this build's: nothing to upgrade"

# --- verify: passes on what the tests wrote, fails (exit 2) on a broken cubin ---
run 0 "${ours[@]}" verify; has "$out" "ok: $dir/ours.db: schema version $latest, 1 devices, 4 winners, 3 binary checks"
run 0 "${ours[@]}" verify --json; [ "$(json 'd["ok"]')" = True ] || fail "verify --json: $out"
run 0 --db "$dir/merged.db" verify
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE binaries SET cubin = x'00'\"); c.commit()" "$dir/merged.db"
run 2 --db "$dir/merged.db" verify; has "$out" "problem:"; has "$out" "its cubin does not match the checksum stored with it"
has "$out" "to repair a winner, tune its shape again (sgemm-tune --retune"

# --- text from the database is printed with its control characters escaped ---
cp "$dir/ours.db" "$dir/evil.db"
python3 - "$dir/evil.db" <<'PY' || fail "editing the database"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("UPDATE devices SET gpu_name = 'EVIL' || char(27) || '[31mRED' || char(10) || 'fake line'")
c.execute("UPDATE kernels SET description = description || char(7)")
c.commit()
PY
for command in list stats; do
  run 0 --db "$dir/evil.db" $command
  if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' <<<"$out"; then fail "$command printed control characters: $out"; fi
done
run 0 --db "$dir/evil.db" stats; has "$out" 'EVIL\x1b[31mRED\x0afake line sm_90'
run 0 --db "$dir/evil.db" list; has "$out" 'naive BLOCK_X=32 BLOCK_Y=8\x07'
# So is the database's own path, in every line that names it: a name with a line break in it
# would read as two lines.
cp "$dir/ours.db" "$dir/line"$'\n'"break.db"
for command in stats verify upgrade "show 3 3 3"; do
  run 0 --db "$dir/line"$'\n'"break.db" $command
  grep -qF 'line\x0abreak.db' <<<"$out$err" || fail "$command does not name the path escaped: $out $err"
  ! grep -q '^break\.db' <<<"$out$err" || fail "$command split the path over two lines: $out $err"
done
# A missing database's path, and a command's name, are escaped in the messages that name them.
run 2 --db "$dir/no"$'\n'"such.db" list; has "$err" 'no tuning database at '"$dir"'/no\x0asuch.db:'
! grep -q '^such\.db' <<<"$err" || fail "the missing path split over two lines: $err"
run 1 --db "$dir/ours.db" $'li\nst'; has "$err" "unknown command 'li\x0ast'"
# Nothing typed, named or read makes a line of its own: each case below puts a newline and a
# fake line in a value, which must come out as \x0a inside its own line.
fake=$'\n''FAKE LINE'
no_fake_line() { ! grep -q '^FAKE LINE' <<<"$out$err" || fail "$1 printed a line of its own: $out $err"; has "$out$err" '\x0aFAKE LINE'; }
run 1 --db "$dir/ours.db" --busy-timeout "1$fake" list; no_fake_line "boost's message for --busy-timeout"
run 1 --db "--x$fake" list; no_fake_line "an option taken for --db's value"
run 2 --db "$dir/nx$fake" upgrade; no_fake_line "upgrade's missing database"
run 1 --db "$dir/merged$fake.db" merge "$dir/nx$fake"; no_fake_line "merge's missing file"
: > "$dir/imp$fake.csv"; run 1 --db "$dir/imported$fake.db" import "$dir/imp$fake.csv"; no_fake_line "import's empty file"
cp "$dir/ours.db" "$dir/fake.db"
python3 - "$dir/fake.db" <<'PY' || fail "editing the database"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("UPDATE winners SET provenance = 'tuner' || char(10) || 'FAKE LINE', narrowed_by = 'x' || char(10) || 'FAKE LINE'")
c.commit()
PY
run 0 --db "$dir/fake.db" show 1 4096 4096; no_fake_line "show's provenance and narrowed_by"
cp "$dir/ours.db" "$dir/fake_family.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE kernels SET params = 'x', family = 'naive' || char(10) || 'FAKE LINE'\"); c.commit()" "$dir/fake_family.db"
run 2 --db "$dir/fake_family.db" list; no_fake_line "a damaged kernels row"
cp "$dir/ours.db" "$dir/fake_id.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"PRAGMA foreign_keys=OFF\"); c.execute(\"UPDATE devices SET id = '1d1b' || char(10) || 'FAKE LINE'\"); c.execute(\"UPDATE winners SET device_id = '1d1b' || char(10) || 'FAKE LINE'\"); c.commit()" "$dir/fake_id.db"
run 1 --db "$dir/fake_id.db" list --device zz; no_fake_line "an unknown device's listing"
# verify finds every description edited so, cuBLAS's too.
cp "$dir/ours.db" "$dir/described.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE kernels SET description = description || char(7)\"); c.commit()" "$dir/described.db"
run 2 --db "$dir/described.db" verify
has "$out" "its description 'naive BLOCK_X=32 BLOCK_Y=8\x07' is not its kernel's, 'naive BLOCK_X=32 BLOCK_Y=8'"
has "$out" "its description 'cuBLAS\x07' is not its kernel's, 'cuBLAS'"

# --- the views read well in a plain SQL shell ---
python3 - "$dir/ours.db" <<'PY' || fail "winners_summary"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
rows = c.execute("SELECT * FROM winners_summary").fetchall()
names = [d[0] for d in c.execute("SELECT * FROM winners_summary").description]
assert names[:9] == ["device", "gpu", "M", "N", "K", "trans", "precision", "align", "kernel"], names
assert "tflops" in names and "speedup" in names and "cublas_ms" in names, names
assert names[-1] == "narrowed_by", names
assert len(rows) == 4, rows
for r in rows: print(" | ".join(str(v) for v in r))
PY
# --- a disk that takes no more bytes (a file size limit of 0 stands in for a full disk) ---
# Reading a WAL database creates its -shm file; where that fails, a database without WAL
# content is still read (as immutable), and one with WAL content is refused, saying why.
"$make_sample" "$dir/full.db" ours || fail "make_sample_db full"
# (Output goes through pipes: the limit would stop writes to a file.)
full_disk() { bash -c 'trap "" XFSZ; ulimit -f 0; exec "$@"' full_disk "$db_tool" --db "$dir/full.db" "$@"; }
out=$(full_disk list 2>&1) || fail "list on a full disk: $out"
[ "$(grep -c "NVIDIA H200" <<<"$out")" -eq 4 ] || fail "list on a full disk: $out"
out=$(full_disk show 8 4096 4096 2>&1) || fail "show on a full disk: $out"
has "$out" "naive"
printf 'not empty' > "$dir/full.db-wal"
err=$(full_disk list 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "list on a full disk with WAL content exited $rc, expected 2"
has "$err" "SQLite must create its -shm file beside it to read the commits in its -wal file"
# An import into no database makes the file whole or not at all: one the disk refuses leaves
# no file there, which tools would call an empty database. (The whole file takes 72 KiB.)
rm "$dir/full.db-wal"
"$db_tool" --db "$dir/full.db" export --format csv -o "$dir/full.csv" || fail "export for the full disk"
limited() { local kib=$1; shift; bash -c 'trap "" XFSZ; ulimit -f '"$kib"'; exec "$@"' limited "$@"; }
for kib in 8 48; do
  err=$(limited $kib "$db_tool" --db "$dir/new_on_full.db" import "$dir/full.csv" 2>&1 >/dev/null); rc=$?
  [ $rc -eq 2 ] || fail "an import into a new database on a full disk ($kib KiB) exited $rc, expected 2: $err"
  has "$err" "so no database was made at $dir/new_on_full.db"
  left=$(ls "$dir" | grep '^new_on_full')
  [ -z "$left" ] || fail "an import refused by a full disk ($kib KiB) left $left"
done
out=$(limited 96 "$db_tool" --db "$dir/new_on_full.db" import "$dir/full.csv" 2>&1) ||
  fail "an import into a new database with room for it failed: $out"
[ "$("$db_tool" --db "$dir/new_on_full.db" list | grep -c "NVIDIA H200")" -eq 4 ] || fail "the new database's winners"

# --- a database shared between users, in a folder all may write (needs root to be two users) ---
# A reader who may not write the file leaves no -wal or -shm file of its own beside it: the
# owner could no longer write their own database (nor, in a sticky folder, remove them). And
# where such a file of another user blocks a write, the message names it.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
  as_user() { local uid=$1; shift; setpriv --reuid="$uid" --regid="$uid" --clear-groups "$@"; }
  chmod 711 "$dir"
  mkdir -m 1777 "$dir/shared"
  "$make_sample" "$dir/shared/s.db" ours || fail "make_sample_db shared"
  chown 65533 "$dir/shared/s.db" && chmod 644 "$dir/shared/s.db"
  out=$(as_user 65534 "$db_tool" --db "$dir/shared/s.db" list 2>&1) || fail "another user's list: $out"
  has "$out" "NVIDIA H200"
  # explain loads the winners and their binaries as dispatch does (a binary's hits are not counted).
  out=$(as_user 65534 "$db_tool" --db "$dir/shared/s.db" explain 8 4096 4096 --device "$id" 2>&1) ||
    fail "another user's explain: $out"
  has "$out" "exact"
  leftovers=$(ls "$dir/shared" | grep -v '^s\.db$')
  [ -z "$leftovers" ] || fail "a reader who may not write the database left $leftovers beside it"
  out=$(as_user 65533 "$db_tool" --db "$dir/shared/s.db" prune --stale 2>&1) || fail "the owner's prune after a reader: $out"
  as_user 65534 touch "$dir/shared/s.db-wal"
  err=$(as_user 65533 "$db_tool" --db "$dir/shared/s.db" prune --stale 2>&1); rc=$?
  [ $rc -eq 2 ] || fail "a write blocked by another user's -wal exited $rc, expected 2: $err"
  has "$err" "SQLite's $dir/shared/s.db-wal beside it is not writable by this user (it belongs to user 65534)"
else
  echo "skipped: the shared-database checks need root and setpriv, to act as two users"
fi

echo "ok: sgemm-db command line"
