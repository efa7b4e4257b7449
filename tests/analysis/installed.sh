#!/bin/sh
# The analysis tools as `make install` leaves them: every module of the
# source tree's rbanalysis package installed, and the installed rb-report
# and rb-archive run from the installed tree alone (every rbanalysis file
# Python reads lies under the install, none in the source tree) on an
# archive the installed rb_micro writes.
py=/usr/bin/python3
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
$py -c 'import h5py, numpy, pandas, matplotlib' 2>/dev/null ||
    { echo "SKIP: Debian python3-h5py/numpy/pandas/matplotlib missing" >&2; exit 77; }

dest="$tmp/dest"
# A make of its own, not the jobserver of the make check that runs this.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$top_builddir" install DESTDIR="$dest" \
    >"$tmp/install.out" 2>&1 || { echo "FAIL: make install DESTDIR=$dest:"; tail -20 "$tmp/install.out"; exit 1; }
bin=$(dirname "$(find "$dest" -path '*/bin/rb-report' | head -1)")
[ -x "$bin/rb-report" ] && [ -x "$bin/rb-archive" ] && [ -x "$bin/rb_micro" ] ||
    { echo "FAIL: rb-report, rb-archive or rb_micro not installed:"; find "$dest" -type f; exit 1; }
pkg="$bin/../share/reducerbench/rbanalysis"
fail=0
for m in "$top_srcdir"/analysis/rbanalysis/*.py; do
    cmp -s "$m" "$pkg/$(basename "$m")" ||
        { echo "FAIL: rbanalysis/$(basename "$m") not installed in $pkg"; fail=1; }
done

# Run from an empty directory with no PYTHONPATH; python -v names each
# source file it reads.
mkdir "$tmp/cwd" && cd "$tmp/cwd" || exit 99
unset PYTHONPATH
run() {  # NAME ARGS...: the installed tool under python -v; its stderr in $tmp/NAME.err
    name=$1; shift
    $py -v "$bin/$name" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
}
from_outside() {  # NAME: rbanalysis files read from anywhere but the install
    grep -o "[^ ']*rbanalysis/[^ ']*\.py" "$tmp/$1.err" | sort -u | while read -r f; do
        [ "$(realpath "$f")" = "$(realpath "$pkg")/$(basename "$f")" ] || echo "$f"
    done
}
run rb-report --help || { echo "FAIL: installed rb-report --help:"; tail -5 "$tmp/rb-report.err"; fail=1; }
grep -q "usage: rb-report" "$tmp/rb-report.out" || { echo "FAIL: rb-report --help: no usage"; fail=1; }

"$MPIRUN" 2 "$bin/rb_micro" -q -i 3 -x 1 -m 4096:4096 --density 0.01 --reducer dense,agsparse \
    -o "$tmp/run.h5" >"$tmp/micro.out" 2>&1 || { echo "FAIL: installed rb_micro:"; cat "$tmp/micro.out"; exit 1; }
run rb-report "$tmp/run.h5" -o "$tmp/report" ||
    { echo "FAIL: installed rb-report on one archive:"; tail -5 "$tmp/rb-report.err"; fail=1; }
[ -s "$tmp/report/report.md" ] && grep -q agsparse "$tmp/report/report.md" ||
    { echo "FAIL: installed rb-report wrote no report naming agsparse"; fail=1; }
grep -q "rbanalysis/cli.py" "$tmp/rb-report.err" || { echo "FAIL: python -v named no rbanalysis file"; fail=1; }
outside=$(from_outside rb-report)
[ -z "$outside" ] || { echo "FAIL: rb-report read rbanalysis outside the install: $outside"; fail=1; }

run rb-archive list "$tmp/run.h5" || { echo "FAIL: installed rb-archive list:"; tail -5 "$tmp/rb-archive.err"; fail=1; }
grep -q "run.h5" "$tmp/rb-archive.out" || { echo "FAIL: rb-archive list does not name the run"; fail=1; }
outside=$(from_outside rb-archive)
[ -z "$outside" ] || { echo "FAIL: rb-archive read rbanalysis outside the install: $outside"; fail=1; }
[ $fail -eq 0 ] && echo "installed in $bin: rb-report and rb-archive ran from the install alone"
exit $fail
