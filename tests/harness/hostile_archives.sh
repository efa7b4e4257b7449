#!/bin/sh
# Archives to abuse: NaN/Inf, ranks=-3, negative times, recall=7, #wrong=-1,
# a non-integer `complete`, unknown tool, no /micro, /micro/results not a
# table, conflicting copies, merge onto an input, a FIFO named *.h5 (rb-
# archive list, merge, rb-report), merge -o on a full disk. The helpers and
# what a case must end in: tests/harness/hostile_lib.sh.
. "$top_srcdir/tests/harness/hostile_lib.sh"
hostile_full
# ------------------------------------------------------------------ archives to abuse
good="$tmp/good.h5"
"$MPIRUN" 2 "$micro" --reducer dense,s2 -m 4K:8K -i 2 -x 0 -q -P none -o "$good" >"$tmp/o" 2>&1 ||
    { bad "no good archive: $(cat "$tmp/o")"; exit 1; }
if [ -n "$full" ]; then
    cp "$good" "$tmp/good2.h5"
    $PY -c 'import sys,h5py; h5py.File(sys.argv[1],"a").attrs["run_id"]="other"' "$tmp/good2.h5"
    "$rbarchive" merge -o "$full/merged.h5" "$good" "$tmp/good2.h5" >"$tmp/o" 2>&1
    rc=$?
    why=$(named "$tmp/o" $rc 1 "merge failed: cannot write .*: No space left on device") || true
    [ -z "$(ls -A "$full")" ] || why="$why; left behind: $(ls -A "$full")"
    verdict "rb-archive merge onto a full disk"
fi

# A copy of the good archive with one change (python statements on f and r,
# the /micro/results rows).
spoil() {   # spoil NAME 'python'
    cp "$good" "$tmp/$1.h5"
    $PY - "$tmp/$1.h5" "$2" <<'PY'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "a")
f.attrs["run_id"] = sys.argv[1]          # not a copy of the good run
r = f["micro/results"][...]
exec(sys.argv[2])
if "micro/results" in f and isinstance(f["micro/results"], h5py.Dataset) and f["micro/results"].dtype.names:
    f["micro/results"][...] = r
PY
}
# abuse CASE NAME 'python' REASON: rb-archive list says why it is not
# complete, merge refuses, both naming REASON, no traceback; rb-report
# refuses it (checked at the end).
abuse() {
    spoil "$2" "$3"
    why=""
    refused "rb-report: $1" "$2.h5: .*$4"
    "$rbarchive" list "$tmp/$2.h5" >"$tmp/l" 2>&1
    grep -q "\(INVALID\|INCOMPLETE\|TIMED-OUT\|DIVERGED\).*$4" "$tmp/l" || why="$why; rb-archive list: $(tail -c 300 "$tmp/l")"
    "$rbarchive" merge -o "$tmp/m-$2.h5" "$good" "$tmp/$2.h5" >"$tmp/l" 2>&1
    rc=$?
    [ $rc -eq 2 ] && grep -q "$4" "$tmp/l" || why="$why; rb-archive merge exit $rc: $(tail -c 300 "$tmp/l")"
    [ -e "$tmp/m-$2.h5" ] && why="$why; merge wrote $tmp/m-$2.h5"
    verdict "$1"
}
abuse "t_avg_us NaN" nan 'r["t_avg_us"][0] = np.nan' "t_avg_us = nan"
abuse "t_avg_us Inf" inf 'r["t_avg_us"][1] = np.inf' "t_avg_us = inf"
abuse "negative time" negt 'r["t_min_us"][0] = -5' "t_min_us = -5"
abuse "ranks = -3" ranks 'r["ranks"][:] = -3' "ranks = -3"
abuse "recall = 7" recall 'r["recall"][0] = 7' "recall = 7"
abuse "#wrong = -1" wrong 'r["wrong"][0] = -1' "wrong = -1"
abuse "complete not an integer" cstr 'f.attrs["complete"] = "yes"' "complete attribute is 'yes', not an integer"
abuse "tool = foo" tool 'f.attrs["tool"] = "foo"' "unknown tool 'foo'"
abuse "no /micro" nomicro 'del f["micro"]' "without /micro"
abuse "/micro/results not compound" flat 'del f["micro/results"]; f["micro/results"] = np.zeros(3)' "not a compound table"
abuse "rb_micro timed_out=1" mto 'f.attrs["timed_out"] = 1' "stopped by its time limit"

# Conflicting copies: one run_id, different contents: both named, neither used.
cp "$good" "$tmp/conflict.h5"
$PY -c 'import sys,h5py; f=h5py.File(sys.argv[1],"a"); r=f["micro/results"][...]; r["algbw_gbs"][0]*=2; f["micro/results"][...]=r' "$tmp/conflict.h5"
refused "rb-report: conflicting copies (the original)" "good.h5: conflicting copies: .*conflict.h5 has the same run_id"
refused "rb-report: conflicting copies (the changed one)" "conflict.h5: conflicting copies: .*good.h5 has the same run_id"
why=""
"$rbarchive" merge -o "$tmp/mc.h5" "$good" "$tmp/conflict.h5" >"$tmp/l" 2>&1
[ $? -eq 2 ] && grep -q "conflicting copies" "$tmp/l" || why="$why; merge: $(cat "$tmp/l")"
verdict "conflicting copies (one run_id, different contents)"

# A FIFO named *.h5 (in a directory, or given): named and skipped by
# rb-archive list, refused by merge; opening it waited for a writer forever.
mkdir "$tmp/withfifo"; cp "$good" "$tmp/withfifo/"; mkfifo "$tmp/withfifo/fifo.h5"
$T "$rbarchive" list "$tmp/withfifo" >"$tmp/l" 2>&1
rc=$?
why=$(named "$tmp/l" $rc 1 "fifo.h5: not a regular file (a FIFO)") || true
grep -q "complete .*good.h5" "$tmp/l" || why="$why; the good archive beside it not listed"
verdict "rb-archive list: a directory holding a FIFO named *.h5"
$T "$rbarchive" merge -o "$tmp/mfifo.h5" "$good" "$tmp/withfifo/fifo.h5" >"$tmp/l" 2>&1
rc=$?
why=$(named "$tmp/l" $rc 2 "fifo.h5: not a regular file (a FIFO)") || true
[ -e "$tmp/mfifo.h5" ] && why="$why; merge wrote $tmp/mfifo.h5"
verdict "rb-archive merge: a FIFO among the inputs"
refused "rb-report: a FIFO named *.h5 in a directory" "fifo.h5: not a regular file (a FIFO)"

# merge onto one of its inputs with --force: refused, the input unchanged.
cp "$good" "$tmp/self.h5"; cp "$good" "$tmp/self.copy"
"$rbarchive" merge -o "$tmp/self.h5" --force "$tmp/self.h5" >"$tmp/l" 2>&1
rc=$?
why=$(named "$tmp/l" $rc 2 "is the output (-o .*) too") || true
cmp -s "$tmp/self.h5" "$tmp/self.copy" || why="$why; the input was replaced"
verdict "merge -o x.h5 --force x.h5"

hostile_report
exit $fail
