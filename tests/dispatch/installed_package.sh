#!/bin/sh
# `meson install` puts libsgemm_dispatch, its headers and sgemm_dispatch.pc in place: this
# installs the build into a temporary DESTDIR, asks pkg-config for the flags, builds and runs
# a C program and builds a C++ one against the installed package alone, and builds
# examples/dispatch_decode with its own Makefile, as its users would, and runs it: on a GPU
# through a database tuned here.
# Usage: installed_package.sh MESON BUILD_DIR SOURCE_DIR SGEMM_TUNE SGEMM_DB MAKE_SAMPLE_DB
set -eu
meson=$1
build=$2
source=$3
sgemm_tune=$4
sgemm_db=$5
make_sample_db=$6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# meson install rewrites its log in the build folder: after a `sudo meson install` the log is
# root's, and this user's install cannot run. Said, not failed: nothing of the package is wrong.
log="$build/meson-logs/install-log.txt"
if [ -e "$log" ] && [ ! -w "$log" ]; then
    echo "skipped: $log belongs to another user (a sudo meson install?), so meson install cannot run here; remove it"
    exit 77
fi
"$meson" install -C "$build" --no-rebuild --destdir "$tmp/root" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; echo "meson install failed"; exit 1; }
pc=$(find "$tmp/root" -name sgemm_dispatch.pc)
[ -n "$pc" ] || { echo "no sgemm_dispatch.pc was installed"; exit 1; }
export PKG_CONFIG_PATH="$(dirname "$pc")"
pkgconfig() { pkg-config "$@" sgemm_dispatch; }
# The package sits under DESTDIR, away from its configured prefix: the .pc finds it there by
# its own place (pkgconfig.relocatable), with no --define-variable.
case "$(pkgconfig --variable=libdir)" in
    "$tmp/root"/*) ;;
    *) echo "sgemm_dispatch.pc is not relocatable: staged under $tmp/root, its libdir is $(pkgconfig --variable=libdir)" \
            "(a build folder set up before the project made pkgconfig.relocatable its default keeps it off:" \
            "meson configure $build -Dpkgconfig.relocatable=true)"
       exit 1 ;;
esac
echo "pkg-config --cflags --libs sgemm_dispatch: $(pkgconfig --cflags --libs)"
case "$(pkgconfig --libs)" in *-lsgemm_dispatch*) ;; *) echo "no -lsgemm_dispatch in --libs"; exit 1 ;; esac
# The soname names the ABI: before 1.0 each minor version is its own (0.4), from 1.0 the major.
version=$(pkgconfig --modversion)
case "$version" in 0.*) abi=$(echo "$version" | cut -d. -f1,2) ;; *) abi=${version%%.*} ;; esac
library="$(pkgconfig --variable=libdir)/libsgemm_dispatch.so"
soname=$(readelf -d "$library" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libsgemm_dispatch.so.$abi" ] ||
    { echo "libsgemm_dispatch.so's soname is '$soname', not libsgemm_dispatch.so.$abi (version $version)"; exit 1; }
for header in dispatch.h dispatch.hpp; do
    [ -f "$(pkgconfig --variable=includedir)/sgemm/$header" ] || { echo "sgemm/$header was not installed"; exit 1; }
done
# It exports the C API alone, each function with the soname's version: a plugin built against
# another version, loaded beside it, binds to its own library's functions.
others=$(nm -D --defined-only "$library" | awk '$2 != "A" && $3 !~ /^sgemm_dispatch_/ {print $3}')
[ -z "$others" ] || { echo "libsgemm_dispatch.so exports more than its C API: $others"; exit 1; }
objdump -T "$library" | grep -q "SGEMM_DISPATCH_$abi[[:space:]]*sgemm_dispatch_create\$" ||
    { echo "sgemm_dispatch_create is not versioned SGEMM_DISPATCH_$abi:"; objdump -T "$library" | grep sgemm_dispatch_create; exit 1; }
# The CUDA it links, for an engine that must not load a second runtime: the .pc names its
# version, whose major is the one in cudart's soname.
cuda_version=$(pkgconfig --variable=cuda_version)
readelf -d "$library" | grep -q "\[libcudart.so.${cuda_version%%.*}\]" ||
    { echo "cuda_version '$cuda_version' in sgemm_dispatch.pc is not the CUDA of its cudart:"; readelf -d "$library" | grep cudart; exit 1; }

# A C program: create fails on a missing database before it looks for a GPU, so this runs
# the same with and without one.
cat >"$tmp/use.c" <<'C'
#include <sgemm/dispatch.h>
#include <stdio.h>
#include <string.h>
int main(void) {
    sgemm_dispatch_options_t options;
    sgemm_dispatch_t handle;
    sgemm_dispatch_status_t status;
    sgemm_dispatch_options_init(&options);
    options.db_path = "/nonexistent/tuning.db";
    status = sgemm_dispatch_create(&handle, &options);
    printf("%s\n%s\n", sgemm_dispatch_status_string(status), sgemm_dispatch_last_error());
    return status == SGEMM_DISPATCH_DATABASE_ERROR && handle == NULL ? 0 : 1;
}
C
# With the one-letter macros GEMM code defines (a shape's M, N, K), which the header's
# parameter names must not meet.
cc -std=c99 -Wall -Werror -DM=64 -DN=64 -DK=64 -DA=0 -DB=0 -DC=0 "$tmp/use.c" $(pkgconfig --cflags) $(pkgconfig --libs) \
    -o "$tmp/use"
LD_LIBRARY_PATH="$(pkgconfig --variable=libdir)" "$tmp/use"

# The C++ wrapper compiles against the installed headers alone.
printf '#include <sgemm/dispatch.hpp>\nint main() { return sgemm::Dispatch::default_options().device; }\n' >"$tmp/use.cpp"
c++ -std=c++17 -Wall -Werror -DM=64 -DN=64 -DK=64 -DA=0 -DB=0 -DC=0 "$tmp/use.cpp" $(pkgconfig --cflags) $(pkgconfig --libs) -o "$tmp/use_cpp"
# Before C++14 it says what it needs, and no error from inside its class follows.
printf '#include <sgemm/dispatch.hpp>\nint main() { return 0; }\n' >"$tmp/use11.cpp"
old_cxx=$(c++ -std=c++11 -fsyntax-only "$tmp/use11.cpp" $(pkgconfig --cflags) 2>&1) &&
    { echo "sgemm/dispatch.hpp compiled as C++11, which it does not claim"; exit 1; }
case "$old_cxx" in *"needs C++14 or later"*) ;; *) echo "dispatch.hpp as C++11: $old_cxx"; exit 1 ;; esac
[ "$(printf '%s\n' "$old_cxx" | grep -c 'error:')" -eq 1 ] ||
    { echo "dispatch.hpp as C++11 gives more than its one error: $old_cxx"; exit 1; }
# The example, copied out of the tree so that nothing but the installed package is near it.
cp "$source/examples/dispatch_decode/Makefile" "$source/examples/dispatch_decode/dispatch_decode.cpp" "$tmp/"
make -s -C "$tmp" dispatch_decode ||
    { echo "examples/dispatch_decode does not build against the installed package"; exit 1; }
# Its arguments and its run, without a GPU and with one (dispatch_decode_run.sh).
LD_LIBRARY_PATH="$(pkgconfig --variable=libdir)" bash "$source/tests/dispatch/dispatch_decode_run.sh" \
    "$tmp/dispatch_decode" "$sgemm_tune" "$sgemm_db" "$make_sample_db" || exit 1

# Cleaning needs no package.
PKG_CONFIG_PATH=/nonexistent make -s -C "$tmp" clean && [ ! -e "$tmp/dispatch_decode" ] ||
    { echo "examples/dispatch_decode: make clean needs the package"; exit 1; }
echo "ok: installed, found by pkg-config, built against and run; the example builds and checks its arguments"
