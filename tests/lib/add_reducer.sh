#!/bin/sh
# Adding a reducer is its file and one registry line.  In a copy of the
# source tree, tests/lib/reducer_example.c becomes src/reducer_example.c and
# RB_REDUCER(example) is appended to src/reducers.def; nothing else is
# edited.  The copy is configured and built (make remakes src/reducers.mk
# and the Makefile from the registry), and then the new reducer, with an
# option of its own, must be in rb_micro --help, run on 3 ranks and
# validate, count in the memory check, be recorded in the archive with its
# option, and appear in rb-report's tables by name and option.
tmp=$(mktemp -d) || exit 99
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
src=$(cd "$top_srcdir" && pwd)
copy=$tmp/tree
mkdir -p "$copy"
# The tree's own files: a git checkout's (tracked and untracked, not
# ignored), or a distribution's (everything but distcheck's build folder).
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$src" && git ls-files -z --cached --others --exclude-standard |
        xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\n" "$f"; done' sh |
        tar -cf - -T -) | tar -C "$copy" -xf - || { echo "FAIL: cannot copy the tree"; exit 1; }
    (cd "$copy" && autoreconf -fi >"$tmp/autoreconf.out" 2>&1) ||
        { echo "FAIL: autoreconf in the copy"; tail -20 "$tmp/autoreconf.out"; exit 1; }
else
    (cd "$src" && tar -cf - --exclude=./_build .) | tar -C "$copy" -xf - ||
        { echo "FAIL: cannot copy the tree"; exit 1; }
fi
chmod -R u+w "$copy"
sums() { (cd "$copy" && find . -type f -exec md5sum {} + | sort -k 2); }
sums >"$tmp/before"
# The two edits, a second after the copy so make sees the registry newer.
sleep 1
cp "$src/tests/lib/reducer_example.c" "$copy/src/reducer_example.c"
echo 'RB_REDUCER(example)' >>"$copy/src/reducers.def"
sums >"$tmp/after"
changed=$(diff "$tmp/before" "$tmp/after" | sed -n 's/^> [0-9a-f]*  //p' | tr '\n' ' ')
[ "$changed" = "./src/reducer_example.c ./src/reducers.def " ] ||
    { echo "FAIL: the test changed more than the reducer's file and the registry: $changed"; exit 1; }

b=$tmp/build
mkdir -p "$b"
(cd "$b" && "$copy/configure" --disable-shared --without-python --without-cuda --without-papi \
    >configure.out 2>&1) || { echo "FAIL: configure the copy"; tail -20 "$b/configure.out"; exit 1; }
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$b" -j2 benchmarks/rb_micro >"$b/make.out" 2>&1 ||
    { echo "FAIL: make in the copy"; tail -30 "$b/make.out"; exit 1; }
grep -q 'src/reducer_example' "$copy/src/reducers.mk" ||
    { echo "FAIL: make did not remake src/reducers.mk from the registry"; exit 1; }
micro=$b/benchmarks/rb_micro
fail=0
bad() { echo "FAIL: $*"; fail=1; }

"$micro" --help >"$tmp/help" 2>&1 || bad "rb_micro --help exits $?"
grep -q 'example' "$tmp/help" && grep -q 'example_copies *\[example\].*(default 1)' "$tmp/help" ||
    { bad "rb_micro --help does not list the example reducer and its option"; grep -n "example\|seed" "$tmp/help"; }

cd "$tmp" || exit 99
"$MPIRUN" 3 "$micro" --reducer dense,example -O example_copies=4 -m 4K:256K -i 3 -o ex.h5 \
    >run.out 2>&1 || { rc=$?; cat run.out; bad "rb_micro --reducer example exits $rc"; }
grep -q '^#   option example_copies = 4' run.out || bad "the run does not print the example's option"
# Every row of both reducers validated (#wrong is column 14).
awk '/^# Reducer:/ { r = $3 } /^ +[0-9]/ { rows[r]++; if ($14 != 0) wrong++ }
     END { exit !(rows["example"] == 7 && rows["dense"] == 7 && !wrong) }' run.out ||
    { cat run.out; bad "example's rows missing or not validated"; }

# The memory check counts the reducer's own memory: 16 MiB gradients with
# 64 copies need about 1 GiB more than with 1.
need() {
    "$MPIRUN" 1 "$micro" --reducer example -O "example_copies=$1" -m 16M -i 1 -x 0 -o none 2>&1 |
        sed -n 's/^# memory: need \([0-9.e+]*\) MiB.*/\1/p'
}
n1=$(need 1); n64=$(need 64)
awk -v a="$n1" -v b="$n64" 'BEGIN { d = b - a; exit !(a != "" && b != "" && d > 63 * 16 * 0.9 && d < 63 * 16 * 1.5) }' ||
    bad "memory need with 1 and 64 copies: '$n1' and '$n64' MiB (expected about 1008 MiB apart)"

# The archive: the example's rows with its option, typed.
h5dump -w 0 -A ex.h5 >ex.dump 2>&1 || bad "h5dump ex.h5"
grep -q 'ATTRIBUTE "opt_example_copies"' ex.dump || bad "no opt_example_copies attribute in the archive"

# rb-report tells its two variants apart by the option the archive holds
# (the seed is no variant).
"$MPIRUN" 3 "$micro" --reducer example -m 4K:256K -i 3 -o ex1.h5 >run1.out 2>&1 ||
    { rc=$?; cat run1.out; bad "rb_micro --reducer example (1 copy) exits $rc"; }
/usr/bin/python3 "$copy/analysis/rb-report" -o report ex.h5 ex1.h5 >report.out 2>&1 ||
    { cat report.out; bad "rb-report exits $?"; }
for v in 'example[example_copies=4]' 'example[example_copies=1]'; do
    grep -qF "| $v |" report/report.md || bad "rb-report's tables have no row of $v"
done
[ "$fail" = 0 ] && echo "a reducer added in one file and one registry line: help, run, memory, archive, report"
exit $fail
