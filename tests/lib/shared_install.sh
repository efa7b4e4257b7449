#!/bin/sh
# libreducer as `make install` leaves it: a shared library with a
# versioned soname (libreducer.so.2 -> libreducer.so.2.0.0, and the
# libreducer.so link a linker wants), exporting exactly the functions
# reducer.h declares; the header and libreducer.pc beside it.  A program
# outside the tree (pkgconfig_user.c, copied to a scratch directory) builds
# with `mpicc $(pkg-config --cflags --libs libreducer)` against the
# installed copy alone and averages over 2 ranks.  Skipped (77) when
# configure built no shared library (--disable-shared, SimGrid).
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
grep -q '"BUILD_SHARED_TRUE"\]=""' "$top_builddir/config.status" ||
    { echo "SKIP: configure built no shared libreducer (--disable-shared or SimGrid)" >&2; exit 77; }
command -v pkg-config >/dev/null || { echo "SKIP: no pkg-config" >&2; exit 77; }
dest=$tmp/dest
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$top_builddir" install DESTDIR="$dest" \
    >"$tmp/install.out" 2>&1 || { echo "FAIL: make install DESTDIR=$dest:"; tail -20 "$tmp/install.out"; exit 1; }
pc=$(find "$dest" -name libreducer.pc | head -1)
[ -n "$pc" ] || { echo "FAIL: libreducer.pc not installed"; exit 1; }
prefix=$(sed -n 's/^prefix=//p' "$pc")
libdir=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --define-variable=prefix="$dest$prefix" \
    --variable=libdir libreducer)
fail=0
so=$(readelf -d "$libdir/libreducer.so" 2>/dev/null | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$so" = libreducer.so.2 ] || { echo "FAIL: soname '$so', expected libreducer.so.2"; fail=1; }
[ -L "$libdir/libreducer.so.2" ] && [ -f "$(readlink -f "$libdir/libreducer.so.2")" ] ||
    { echo "FAIL: no libreducer.so.2 link to the library in $libdir"; fail=1; }

# The ABI: the functions the installed headers declare (reducer.h, the
# sparse and sketch toolkits, the kernels in a CUDA build), no more (no
# internal symbol escapes), no fewer; inline functions are no symbols.
hdr=$(find "$dest" -name reducer.h | head -1)
grep -hv 'static inline' "$(dirname "$hdr")"/reducer*.h | grep -o '\brbk\?_[a-z0-9_]*(' |
    tr -d '(' | sort -u >"$tmp/declared"
nm -D --defined-only "$libdir/libreducer.so" | awk '{print $3}' | sort -u >"$tmp/exported"
diff "$tmp/declared" "$tmp/exported" >"$tmp/abi.diff" ||
    { echo "FAIL: exported symbols differ from the installed headers' functions (< declared, > exported):";
      cat "$tmp/abi.diff"; fail=1; }

# A program outside the tree, against the installed copy only.
cp "$top_srcdir/tests/lib/pkgconfig_user.c" "$tmp/user.c"
flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --define-variable=prefix="$dest$prefix" \
    --cflags --libs libreducer) || { echo "FAIL: pkg-config --cflags --libs libreducer"; exit 1; }
echo "pkg-config: $flags"
# A sanitized library (--enable-sanitizers) needs a sanitized program: the
# sanitizer runtime must come first.
san=$(sed -n 's/^SAN_CFLAGS = //p' "$top_builddir/Makefile")
(cd "$tmp" && mpicc -std=c17 -Wall -Wextra -Werror $san -o user user.c $flags) ||
    { echo "FAIL: the program does not build with pkg-config's flags"; exit 1; }
readelf -d "$tmp/user" | grep -q 'NEEDED.*\[libreducer\.so\.2\]' ||
    { echo "FAIL: the program does not link libreducer.so.2 dynamically"; fail=1; }
out=$(LD_LIBRARY_PATH=$libdir "$MPIRUN" 2 "$tmp/user" 2>&1)
echo "$out"
echo "$out" | grep -q '^avg 1.5 version ' || { echo "FAIL: the installed library did not average 1 and 2"; fail=1; }

# The Python binding and rb-torch-train as installed (when configure built
# them): the package and module from the install alone, the driver finding
# its modules and the harness's under the prefix, one step on one rank.
if grep -q '"HAVE_PYTHON_TRUE"\]=""' "$top_builddir/config.status"; then
    site=$(dirname "$(find "$dest" -path '*-packages/rbreducer/__init__.py' | head -1)")
    site=${site%/rbreducer}
    [ -f "$site/rbreducer/__init__.py" ] && ls "$site"/_rbreducer*.so >/dev/null 2>&1 ||
        { echo "FAIL: rbreducer or _rbreducer not installed together"; find "$dest" -name '*rbreducer*'; fail=1; }
    drv=$(find "$dest" -path '*/bin/rb-torch-train' | head -1)
    if [ -x "$drv" ] && /usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null &&
       [ -r /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
        (cd "$tmp" && env -u PYTHONPATH PYTHONPATH="$site" timeout 120 "$drv" --model resnet18 --reducer dense \
            --iterations 1 --train-limit 64 --test-limit 10 -o run.h5 >drv.out 2>&1) ||
            { echo "FAIL: the installed rb-torch-train:"; tail -5 "$tmp/drv.out"; fail=1; }
        [ -f "$tmp/run.h5" ] || { echo "FAIL: the installed rb-torch-train wrote no archive"; fail=1; }
    elif [ ! -x "$drv" ]; then
        echo "FAIL: rb-torch-train not installed"; fail=1
    fi
fi
exit $fail
