#!/usr/bin/env bash
# check_install.sh BUILD_DIR PKGCONFIG_DIR LIB_DIR CONSUMER_CPP CXX SANITIZE
# Installs BUILD_DIR into a temporary DESTDIR, compiles CONSUMER_CPP with the flags pkg-config gives
# for remat from there, and runs it. PKGCONFIG_DIR and LIB_DIR are absolute paths under the prefix.
set -euo pipefail
build_dir=$1 pkgconfig_dir=$2 lib_dir=$3 consumer=$4 cxx=${5:-g++} sanitize=${6:-none}
meson=${MESON:-meson}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/remat-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
destdir=$tmp/root

"$meson" install -C "$build_dir" --destdir "$destdir" --no-rebuild --quiet

test -f "$destdir$pkgconfig_dir/remat.pc" || { echo "no remat.pc in $destdir$pkgconfig_dir" >&2; exit 1; }
flags=$(PKG_CONFIG_SYSROOT_DIR="$destdir" PKG_CONFIG_PATH="$destdir$pkgconfig_dir" pkg-config --cflags --libs remat)
echo "pkg-config --cflags --libs remat: $flags"

extra=()
if [ "$sanitize" != none ] && [ -n "$sanitize" ]; then
    extra=("-fsanitize=$sanitize")  # a sanitized libremat needs a sanitized executable
fi
# shellcheck disable=SC2086  # $cxx and $flags are word lists
$cxx -O1 "${extra[@]}" "$consumer" -o "$tmp/consumer" $flags

LD_LIBRARY_PATH="$destdir$lib_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/consumer"
