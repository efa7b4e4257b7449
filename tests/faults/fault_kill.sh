#!/bin/bash
# SIGKILL to rank 0 keeps what was flushed: rb_micro flushes its archive
# after every row, so the temporary a killed rank 0 leaves is a readable
# HDF5 file of the rows finished (complete = 0), which rb-archive clean,
# or the next run to the same path, keeps as FILE.h5.interrupted (no
# reason recorded).  With a run that
# SIGTERM interrupted and a complete one beside them, rb-archive list
# names both kept files INTERRUPTED with their reasons, show reads them,
# merge refuses them and rb-report refuses them, naming why, and uses the
# complete run alone.  Local ranks only: no root needed.
. "$top_srcdir/tests/faults/fault_lib.sh"
# Every launch is this shell's job: whatever a failed case left is ended.
trap 'kill $(jobs -p) 2>/dev/null; wait; rm -rf "$tmp"' EXIT
run="--reducer dense -m 4K:4K -i 20 -x 0 --repeat 100000 -P none --stall-timeout 0"

signal_case term TERM

# kill_case NAME: SIGKILL to rank 0 of a run into $tmp/NAME.h5 once 2 rows
# are finished: no handler runs, but the temporary, flushed after every
# row, is left readable with the rows the table shows (less the one rank 0
# may have been writing).  Sets $t, the temporary's name ("" if none).
kill_case() {
    local name=$1 out="$tmp/$1.h5" job pid rows why
    t=""
    # shellcheck disable=SC2086
    "$MPIRUN" 2 "$micro" $run -o "$out" >"$tmp/$name.out" 2>"$tmp/$name.err" &
    job=$!
    if ! wait_rows "$tmp/$name.out" 2 40 || ! pid=$(rank_pid 0 $(descendants "$job")); then
        bad "$name: no row finished in 40 s, or no rank 0"
        kill "$job"
        wait "$job"
        return
    fi
    kill -KILL "$pid"
    rows=$(grep -c -E '^ +[0-9]+ ' "$tmp/$name.out")
    wait "$job"
    t=$(ls "$tmp" | grep "^$name\.h5\.tmp\." | head -1)
    [ -n "$t" ] || { bad "$name: SIGKILL left no temporary"; return; }
    why=$(kept_ok "$tmp/$t" $((rows - 1)) "^$")
    [ -z "$why" ] || bad "$name: the temporary $t: $why"
    note "$name: SIGKILL to rank 0 after $rows row(s): $t readable"
}

# rb-archive clean keeps it as FILE.h5.interrupted.
kill_case kill
if [ -n "$t" ]; then
    "$rbarchive" clean "$tmp" >"$tmp/clean" 2>&1 || bad "rb-archive clean exited $?"
    grep -q "kept $tmp/$t as $tmp/kill.h5.interrupted" "$tmp/clean" || bad "clean did not keep it: $(cat "$tmp/clean")"
    [ -e "$tmp/kill.h5.interrupted" ] && [ ! -e "$tmp/$t" ] || bad "after clean: $(ls "$tmp" | grep '^kill')"
fi

# So does the next run to the same path, which then writes its own archive.
kill_case next
if [ -n "$t" ]; then
    "$MPIRUN" 2 "$micro" --reducer dense -m 4K:4K -i 2 -x 0 -P none -q -o "$tmp/next.h5" >"$tmp/next2.out" 2>&1 ||
        bad "the next run exited $?: $(tail -3 "$tmp/next2.out")"
    grep -q "$tmp/$t (process [0-9]* gone): its rows kept as $tmp/next.h5.interrupted" "$tmp/next2.out" ||
        bad "the next run did not say it kept the temporary: $(grep -v '^ *[0-9#]' "$tmp/next2.out" | head -5)"
    [ -e "$tmp/next.h5.interrupted" ] && [ ! -e "$tmp/$t" ] && [ -e "$tmp/next.h5" ] ||
        bad "after the next run: $(ls "$tmp" | grep '^next')"
fi

# The tools: listed with the reason, used by none.
"$MPIRUN" 2 "$micro" --reducer dense -m 4K:4K -i 2 -x 0 -P none -q -o "$tmp/complete.h5" >/dev/null 2>&1 ||
    bad "a complete run failed"
"$rbarchive" list "$tmp" >"$tmp/list" 2>&1
for n in term kill; do
    grep -q "INTERRUPTED .*$n.h5.interrupted (interrupted: " "$tmp/list" || bad "rb-archive list: $n not INTERRUPTED: $(cat "$tmp/list")"
done
grep -q "term.h5.interrupted (interrupted: signal SIGTERM" "$tmp/list" || bad "rb-archive list does not give SIGTERM as the reason"
grep -q "kill.h5.interrupted (interrupted: no reason recorded" "$tmp/list" || bad "rb-archive list: the killed run's reason"
"$rbarchive" show "$tmp/term.h5.interrupted" >"$tmp/show" 2>&1 || bad "rb-archive show exited $?"
grep -q "rows: .*dense" "$tmp/show" || bad "rb-archive show: $(cat "$tmp/show")"
"$rbarchive" merge -o "$tmp/merged.h5" "$tmp/term.h5.interrupted" >"$tmp/merge" 2>&1 &&
    bad "rb-archive merge took an interrupted run"
grep -q "interrupted: signal SIGTERM" "$tmp/merge" || bad "merge's refusal: $(cat "$tmp/merge")"
"$top_srcdir/analysis/rb-report" "$tmp" -o "$tmp/report" >"$tmp/report.out" 2>&1 || bad "rb-report exited $?: $(tail -3 "$tmp/report.out")"
for n in term kill next; do
    grep -q "refused $tmp/$n.h5.interrupted: interrupted: " "$tmp/report.out" || bad "rb-report does not refuse $n, naming why"
done
grep -q "2 run(s) used, 3 refused" "$tmp/report.out" || bad "rb-report: $(grep "run(s) used" "$tmp/report.out")"
exit $fail
