#!/bin/sh
# Installs the build into a scratch DESTDIR, then builds examples/embed_c/main.c against the
# installed libtilert through its pkg-config file, once linked to the shared library and once to
# the static one (pkg-config --static), and runs both; each must print PASS.
#
#   install_test.sh BUILD_DIR MAIN_C MODULE PREFIX LIBDIR
set -eu

build_dir=$1
main_c=$2
module=$3
prefix=$4
libdir=$5
case "$libdir" in
  /*) ;;
  *) libdir="$prefix/$libdir" ;;
esac

dest=$(mktemp -d "${TMPDIR:-/tmp}/tilert-install.XXXXXX")
trap 'rm -rf "$dest"' EXIT INT TERM

meson install -C "$build_dir" --destdir "$dest" --no-rebuild --quiet

installed_lib="$dest$libdir"
for f in "$dest$prefix/include/tilert/tilert.h" "$dest$prefix/include/tilert/tilert.hpp" \
         "$installed_lib/pkgconfig/tilert.pc" "$installed_lib/libtilert.a"; do
  if [ ! -f "$f" ]; then
    echo "missing after install: $f" >&2
    exit 1
  fi
done

# The .pc file names paths under PREFIX; point its prefix at the scratch copy.
pc() {
  PKG_CONFIG_PATH="$installed_lib/pkgconfig" \
    pkg-config --define-variable=prefix="$dest$prefix" "$@" tilert
}
cc=${CC:-cc}
cflags="-std=c99 -Wall -Wextra -pedantic -Werror"

echo "shared: $cc main.c $(pc --cflags --libs)"
# shellcheck disable=SC2046,SC2086 # word splitting of the flags is intended
$cc $cflags -o "$dest/embed_shared" "$main_c" $(pc --cflags --libs) -lm
LD_LIBRARY_PATH="$installed_lib" "$dest/embed_shared" "$module" | tee "$dest/shared.out"
grep -qx PASS "$dest/shared.out"
if ! LD_LIBRARY_PATH="$installed_lib" ldd "$dest/embed_shared" |
    grep -q "$installed_lib/libtilert.so"; then
  echo "embed_shared does not use the installed libtilert.so" >&2
  exit 1
fi

# Static: the archive instead of the shared library, plus what pkg-config --static adds for it.
static_flags=$(pc --static --cflags --libs | sed 's/-ltilert\( \|$\)/-l:libtilert.a\1/')
echo "static: $cc main.c $static_flags"
# shellcheck disable=SC2086
$cc $cflags -o "$dest/embed_static" "$main_c" $static_flags
if ldd "$dest/embed_static" | grep -q libtilert; then
  echo "embed_static still depends on a shared libtilert" >&2
  exit 1
fi
"$dest/embed_static" "$module" | tee "$dest/static.out"
grep -qx PASS "$dest/static.out"
