#!/bin/sh
# A kill at any moment leaves nothing that looks complete.
# SIGKILL to rank 0, to rank 1 and to mpirun itself, early and in the
# middle of an rb_micro and an rb_train run (12 kills), then: the final
# archive is absent or complete; the next run to the same path succeeds and
# leaves no dead temporary behind; rb-report, given a killed run's partial
# file, refuses it by name and reports the rest.
micro="$top_builddir/benchmarks/rb_micro"
train="$top_builddir/benchmarks/rb_train"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
tmp=$(mktemp -d) || exit 99
trap 'pkill -9 -f "$tmp/" 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir "$tmp/report"

# The pid of rank R of the run writing OUT (its environment says its rank).
rank_pid() {  # OUT R
    for p in $(pgrep -f -- "-o $1"); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" &&
            { echo "$p"; return; }
    done
}

# Wait up to 15 s for every process of the run to end; the ranks of a
# killed mpirun may linger, and are then killed here (and said).
wait_gone() {  # OUT JOB
    for _ in $(seq 150); do
        pgrep -f -- "-o $1" >/dev/null || break
        sleep 0.1
    done
    if pgrep -f -- "-o $1" >/dev/null; then
        echo "  (processes of the run outlived the kill by 15 s; killed)"
        pkill -9 -f -- "-o $1"
    fi
    wait "$2" 2>/dev/null
}

# Absent, or an HDF5 file marked complete.
final_ok() {  # OUT
    [ -e "$1" ] || return 0
    /usr/bin/python3 -c 'import sys, h5py; sys.exit(0 if int(h5py.File(sys.argv[1], "r").attrs["complete"]) == 1 else 1)' "$1"
}

kills=0 partial=
one_kill() {  # NAME DELAY VICTIM(rank0|rank1|mpirun) PROGRAM ARGS...
    name=$1 delay=$2 victim=$3; shift 3
    out="$tmp/$name.h5"
    "$MPIRUN" 2 "$@" -o "$out" >"$tmp/$name.out" 2>&1 &
    job=$!
    sleep "$delay"
    case $victim in
    mpirun) pid=$job ;;
    rank0) pid=$(rank_pid "$out" 0) ;;
    rank1) pid=$(rank_pid "$out" 1) ;;
    esac
    if [ -z "$pid" ] || ! kill -9 "$pid" 2>/dev/null; then
        bad "$name: no $victim to kill after $delay s (the run ended too soon?): $(tail -2 "$tmp/$name.out")"
        wait_gone "$out" "$job"
        return
    fi
    kills=$((kills + 1))
    wait_gone "$out" "$job"
    final_ok "$out" || bad "$name: SIGKILL to $victim at $delay s left $out looking complete-less: not an archive marked complete"
    t=$(ls "$tmp" | grep "^$name.h5.tmp\." | head -1)
    if [ -n "$t" ] && [ -z "$partial" ]; then
        partial="$name"
        cp "$tmp/$t" "$tmp/report/killed-$name.h5"
    fi
    echo "killed $victim of $name at $delay s: final archive $([ -e "$out" ] && echo complete || echo absent)${t:+, temporary $t}"
}

next_run_ok() {  # NAME PROGRAM ARGS...: a short run to the same path
    name=$1; shift
    out="$tmp/$name.h5"
    "$MPIRUN" 2 "$@" -o "$out" --force >"$tmp/$name.next" 2>&1 || { bad "$name: the next run exited $?: $(tail -3 "$tmp/$name.next")"; return; }
    final_ok "$out" && [ -e "$out" ] || bad "$name: the next run wrote no complete archive"
    left=$(ls "$tmp" | grep "^$name.h5.tmp\.")
    [ -z "$left" ] || bad "$name: temporaries left after the next run: $left"
}

M="--reducer all -m 4K:1M -i 100 -x 2 --repeat 50 -P none"
m_next="--reducer dense -m 4K:4K -i 2 -x 1 -P none"
T="--model lenet --epochs 1000 --eval-every 200"
t_next="--model lenet --iterations 3"
for victim in rank0 rank1 mpirun; do
    for delay in 0.4 2; do
        n=micro-$victim-$delay
        # shellcheck disable=SC2086
        one_kill "$n" "$delay" "$victim" "$micro" $M
        # shellcheck disable=SC2086
        next_run_ok "$n" "$micro" $m_next
        n=train-$victim-$delay
        # shellcheck disable=SC2086
        one_kill "$n" "$delay" "$victim" "$train" $T
        # shellcheck disable=SC2086
        next_run_ok "$n" "$train" $t_next
    done
done
echo "$kills SIGKILLs"
[ "$kills" -eq 12 ] || bad "expected 12 kills, made $kills"

# The report: one complete run and a killed run's partial file.
if [ -n "$partial" ]; then
    cp "$tmp/$partial.h5" "$tmp/report/complete.h5"
    "$top_srcdir/analysis/rb-report" "$tmp/report" -o "$tmp/rep" >"$tmp/rep.out" 2>&1 ||
        bad "rb-report exited $?: $(tail -3 "$tmp/rep.out")"
    grep -q "killed-$partial.h5" "$tmp/rep.out" "$tmp/rep/report.md" 2>/dev/null ||
        bad "the report does not name the killed run's file as refused: $(cat "$tmp/rep.out")"
    grep -q "1 run(s) used, 1 refused" "$tmp/rep.out" || bad "report: $(tail -2 "$tmp/rep.out")"
else
    bad "no kill left a temporary (every kill came before the archive was opened?)"
fi
exit $fail
