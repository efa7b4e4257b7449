#!/bin/sh
# rb_micro as writer and measurer: two runs racing for one -o, -J naming the
# archive, long names; --save-result, -J and -o naming one file, another
# run's file, /proc, a missing directory, a read-only file system, the trace
# replayed; -m 3, -b 4097 -e 8195, rows wider than the size, --shape 0x5,
# more sizes than rb_micro holds, --timeout keeping the rows, a reducer
# named twice, an unregistered PAPI event, --timeout in a long warm-up, the
# hard watchdog's line once. The helpers and what a case must end in:
# tests/harness/hostile_lib.sh.
. "$top_srcdir/tests/harness/hostile_lib.sh"
hostile_full
hostile_good
# ------------------------------------------------------------------ rb_micro
# Two runs racing for one -o (no --force): exactly one succeeds, the other
# names the path; the file is the winner's, whole.
race="$tmp/race.h5"
long="--reducer dense -m 4K:64K -i 300 -x 0 -q -P none"
"$MPIRUN" 2 "$micro" $long -o "$race" >"$tmp/ra" 2>&1 &
pa=$!
"$MPIRUN" 2 "$micro" $long -o "$race" >"$tmp/rb" 2>&1 &
pb=$!
wait $pa; ra=$?
wait $pb; rb=$?
why=""
if [ $ra -eq 0 ] && [ $rb -eq 0 ]; then why="both exited 0 (one result lost)"
elif [ $ra -ne 0 ] && [ $rb -ne 0 ]; then why="both failed: $(cat "$tmp/ra" "$tmp/rb" | head -c 600)"
else
    loser="$tmp/ra"; [ $ra -eq 0 ] && loser="$tmp/rb"
    grep -q "refusing to overwrite existing archive $race" "$loser" || why="loser's message: $(head -c 400 "$loser")"
fi
$PY -c 'import sys,h5py; sys.exit(0 if h5py.File(sys.argv[1]).attrs["complete"] == 1 else 1)' "$race" 2>/dev/null ||
    why="$why; $race is not a complete archive"
ls "$race".tmp.* >/dev/null 2>&1 && why="$why; temporary left"
verdict "two runs racing for one -o"

for j in "$tmp/same.h5" "$tmp/./same.h5"; do
    "$MPIRUN" 2 "$micro" $small -o "$tmp/same.h5" -J "$j" >"$tmp/o" 2>&1
    rc=$?
    why=$(named "$tmp/o" $rc 2 "-J .* and the archive .* are the same file") || true
    [ "$(table_rows "$tmp/o")" -eq 0 ] || why="$why; measured before refusing"
    [ -e "$tmp/same.h5" ] && why="$why; $tmp/same.h5 written"
    verdict "-o same.h5 -J $(basename "$(dirname "$j")")/same.h5"
done

# --save-result, -J and -o: the same file, a file another run wrote, a
# place no file can be made in, the trace being replayed -- each refused
# (exit 2) before anything is measured, nothing written or replaced.  They
# were found only after the sweep (exit 1), --save-result's raw floats left
# at the archive's path or over another run's archive, and -o --force
# replaced the trace it replayed.
# outputs CASE NP PATTERN ARGS...: refused, no row measured.
outputs() {
    name=$1 np=$2 pattern=$3
    shift 3
    $T "$MPIRUN" "$np" "$micro" $small "$@" >"$tmp/o" 2>&1
    rc=$?
    why=$(named "$tmp/o" $rc 2 "$pattern") || true
    [ "$(table_rows "$tmp/o")" -eq 0 ] || why="$why; measured before refusing"
}
mkdir "$tmp/out"
outputs "--save-result x.h5 -o x.h5" 2 "--save-result .*x.h5 and the archive .*x.h5 are the same file" \
    -o "$tmp/out/x.h5" --save-result "$tmp/out/./x.h5"
[ -z "$(ls -A "$tmp/out")" ] || why="$why; left: $(ls -A "$tmp/out")"
verdict "--save-result x.h5 -o x.h5 (2 ranks)"
outputs "--save-result r -J r" 3 "--save-result .*r and -J .*r are the same file" \
    -o "$tmp/out/y.h5" -J "$tmp/out/r" --save-result "$tmp/out/r"
[ -z "$(ls -A "$tmp/out")" ] || why="$why; left: $(ls -A "$tmp/out")"
verdict "--save-result r -J r (3 ranks)"
cp "$good" "$tmp/out/other.h5"
outputs "--save-result onto another run's archive" 1 "--save-result: refusing to overwrite existing .*other.h5 (use --force)" \
    -o none --save-result "$tmp/out/other.h5"
cmp -s "$good" "$tmp/out/other.h5" || why="$why; the other run's archive was overwritten"
verdict "--save-result onto an existing file, no --force (1 rank)"
outputs "--save-result in a missing directory" 2 "--save-result: cannot write .*/nodir/r: directory .*nodir does not exist" \
    -o none --save-result "$tmp/nodir/r"
verdict "--save-result in a missing directory"
outputs "--save-result a directory" 2 "--save-result: .*out exists and is not a regular file" \
    -o none --save-result "$tmp/out"
verdict "--save-result naming a directory"
for opt in --save-result -J; do
    outputs "$opt /proc/x" 2 "$opt: cannot write /proc/x: No such file or directory" \
        -o "$tmp/out/p.h5" $opt /proc/x
    [ -e "$tmp/out/p.h5" ] && why="$why; the archive was written"
    verdict "$opt /proc/x (no file can be made there)"
done
$PY "$top_srcdir/tests/workload/gradgen_trace.py" "$tmp/out/t.h5" 100 4 0.1 2 7
cp "$tmp/out/t.h5" "$tmp/out/t.copy"
for opt in -o --save-result; do
    $T "$MPIRUN" 2 "$micro" -q -i 1 -x 0 -P none --input "trace:$tmp/out/t.h5" --force \
        $([ $opt = -o ] || echo "-o none") $opt "$tmp/out/t.h5" >"$tmp/o" 2>&1
    rc=$?
    why=$(named "$tmp/o" $rc 2 "is the trace replayed (--input trace:.*t.h5)") || true
    cmp -s "$tmp/out/t.h5" "$tmp/out/t.copy" || why="$why; the trace was replaced"
    verdict "$opt naming the trace replayed, with --force"
done
if [ -n "$full" ]; then
    # A read-only file system (a read-only tmpfs): named before measuring.
    mkdir "$tmp/ro"
    if mount -t tmpfs -o size=40k,ro tmpfs "$tmp/ro" 2>/dev/null; then
        trap 'umount "$full" 2>/dev/null; umount "$tmp/ro" 2>/dev/null; rm -rf "$tmp"' EXIT
        for opt in -J --save-result; do
            outputs "$opt on a read-only file system" 2 "$opt: cannot write .*ro/x: Read-only file system" \
                -o "$tmp/out/ro.h5" $opt "$tmp/ro/x"
            [ -e "$tmp/out/ro.h5" ] && why="$why; the archive was written"
            verdict "$opt on a read-only file system"
        done
        outputs "-o on a read-only file system" 2 "archive: cannot write .*ro/x.h5.*: Read-only file system" \
            -o "$tmp/ro/x.h5"
        verdict "-o on a read-only file system"
        umount "$tmp/ro"
    fi
fi

# Sizes that cannot be measured: refused naming the smallest legal size.
sizes() {   # sizes CASE ARGS PATTERN
    "$MPIRUN" 2 "$micro" --reducer dense -i 2 -x 0 -q -P none -o none $2 >"$tmp/o" 2>&1
    rc=$?
    why=$(named "$tmp/o" $rc 2 "$3") || true
    [ "$(table_rows "$tmp/o")" -eq 0 ] || why="$why; measured: $(table_rows "$tmp/o") row(s)"
    verdict "$1"
}
sizes "-m 3" "-m 3" "smallest size measurable is 4 bytes"
sizes "-b 4097 -e 8195" "-b 4097 -e 8195" "MIN 4097 bytes is not a whole number of 4-byte elements .*give 4096 or 4100"
sizes "--cols 3 -m 4K:6K" "--cols 3 -m 4K:6K" "MIN 4096 bytes is not a whole number of rows of --cols 4-byte elements (12 bytes each): give 4092 or 4104"
sizes "--layout row --cols 100000 -m 4K:16K" "--layout row --cols 100000 -m 4K:16K" "smallest size measurable with these --cols is 400000 bytes"
sizes "--shape 0x5" "--shape 0x5" "smallest shape is 1x5"
sizes "-m 4K:16K --stepfactor 1.0000001" "-m 4K:16K --stepfactor 1.0000001" "more than 64 sizes .* use --stepfactor"
sizes "-M 0" "-m 4K -M 0" "mem-limit: '0' is not a size of at least 1 byte"
sizes "-P BOGUS_EVENT" "-m 4K -P BOGUS_EVENT" "unknown PAPI event BOGUS_EVENT"
# A reducer named twice was measured twice (the report took the rows for
# repetitions); an sde:::reducerbench:: name not registered counted 0.
sizes "--reducer dense,s2,dense" "-m 4K --reducer dense,s2,dense" "--reducer: 'dense,s2,dense' names dense twice"
sizes "--layout row --cols 3 -m 4K" "--layout row --cols 3 -m 4K" "MIN 4096 bytes is not a whole number of rows of --cols 4-byte elements (12 bytes each): give 4092 or 4104"
if grep -q '^#define HAVE_PAPI_SDE 1' "$top_builddir/config.h"; then
    sizes "-P sde:::reducerbench::bogus" "-m 4K -P sde:::reducerbench::bogus" \
        "unknown PAPI event sde:::reducerbench::bogus (not one of reducerbench's counters"
fi

# --timeout: a named line, exit 124, the rows measured kept (marked timed_out).
# The case needs a row finished before the limit and the sweep not: rows of
# 2 calls of 4 KiB, repeated 100000 times (idle, 2 s hold about 8000 rows
# here; with two busy loops on the 2 cores at least 15).  Its rows were 2000
# calls (-m 4K:4M -i 2000): on a loaded machine (the ranks busy-poll) a
# call sometimes took 1 ms or more, the first row all of the 2 s, and about
# one run in 20 ended with no row finished, so (as designed) no archive.
"$MPIRUN" 2 "$micro" --reducer dense -m 4K:4K -i 2 --repeat 100000 -x 0 --no-check -q -P none --timeout 2 \
    -o "$tmp/to.h5" >"$tmp/o" 2>&1
rc=$?
why=$(named "$tmp/o" $rc 124 "rb_micro: rank 0: time limit: --timeout 2 s reached .* keeps the [1-9][0-9]* row") || true
$PY -c '
import sys, h5py
f = h5py.File(sys.argv[1])
sys.exit(0 if f.attrs["timed_out"] == 1 and len(f["micro/results"]) >= 1 else 1)' "$tmp/to.h5" 2>/dev/null ||
    why="$why; no archive with the rows, marked timed_out=1"
"$rbarchive" list "$tmp/to.h5" | grep -q TIMED-OUT || why="$why; rb-archive list does not say TIMED-OUT"
verdict "rb_micro --timeout 2 keeps its rows"
refused "rb-report: rb_micro --timeout 2" "to.h5: stopped by its time limit"
# --timeout in a long warm-up (-x): stopped at the limit between calls, as
# in the timed calls, not 1.25 x SEC + 10 s later by the hard watchdog
# (which left the archive's temporary behind and the rows finished lost).
mkdir "$tmp/wu"
start=$(date +%s)
$T "$MPIRUN" 2 "$micro" --reducer dense -m 4K:4K -i 1 -x 100000000 -q -P none --timeout 2 \
    -o "$tmp/wu/x.h5" >"$tmp/o" 2>&1
rc=$?
took=$(($(date +%s) - start))
why=$(named "$tmp/o" $rc 124 "rb_micro: rank 0: time limit: --timeout 2 s reached before the sweep ended") || true
[ $took -lt 12 ] || why="$why; took $took s (the hard watchdog's 12.5 s?)"
[ -z "$(ls -A "$tmp/wu")" ] || why="$why; left: $(ls -A "$tmp/wu")"
verdict "rb_micro -x 100000000 --timeout 2: stopped in the warm-up"
# The hard watchdog (a process stuck inside a call 1.25 x SEC + 10 s after
# the start) printed its line once per rank, P lines for one timeout; now
# rank 0's alone (the others fire 5 s later, by then ended with the job).
# Both ranks are stopped (SIGSTOP) in the sweep and continued once their
# alarms are due; stdbuf shows the first row as soon as it is measured.
if stdbuf -oL true 2>/dev/null; then
    # stdbuf preloads its library, which ASan refuses to come after unless
    # told (a sanitizer build aborted here, exit 134).
    ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0" \
        "$MPIRUN" 2 stdbuf -oL "$micro" --reducer dense -m 4K:4K -i 20 --repeat 100000 -x 0 --no-check -P none \
        --timeout 4 -o none >"$tmp/o" 2>&1 &
    mpid=$!
    n=0
    until grep -q '^ *4096 ' "$tmp/o" || [ $n -gt 300 ]; do sleep 0.1; n=$((n + 1)); done
    ranks=$(ps -o pid= --ppid $mpid)
    kill -STOP $ranks
    sleep 15.5   # past rank 0's 4 x 1.25 + 10 = 15 s, before the others' 20 s
    kill -CONT $ranks
    wait $mpid
    rc=$?
    why=$(named "$tmp/o" $rc 124 "rb_micro: rank 0: time limit (--timeout) exceeded inside a call; exiting 124") || true
    [ "$(grep -c "exceeded inside a call" "$tmp/o")" -eq 1 ] ||
        why="$why; not once: $(grep "exceeded inside a call" "$tmp/o" | tr '\n' '|')"
    verdict "the hard watchdog: one line for the job, rank 0's"
else
    echo "note: no stdbuf (coreutils): the hard watchdog's case is not run"
fi

hostile_report
exit $fail
