#!/bin/bash
# One configuration run twice at once (a sweep line in two array tasks, a
# script started twice; outside Slurm, mpirun fallback): the second waits
# for the first's lock, then skips the archive the first completed; it
# never removes the first one's live temporary nor renames its archive.
# A live temporary is also safe from `rb-archive clean` run where the
# writer's PID is not visible (another PID namespace: unshare, as root).
set -u
: "${top_srcdir:?run under make check}" "${top_builddir:?run under make check}"
JS=$top_srcdir/jobscripts
archive=$top_srcdir/analysis/rb-archive
tmp=$(mktemp -d) || exit 99
trap 'kill $(jobs -p) 2>/dev/null; wait; rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
export RB_BUILD=$top_builddir RB_LAUNCHER="$top_srcdir/tests/mpirun.sh %n" RB_NTASKS=2
args=(--reducers dense --sizes 1M --iterations 4000 --warmup 0 --out "$tmp/d")

# The first run, in the background, until its temporary exists.
bash "$JS/generic/micro.sbatch" "${args[@]}" >"$tmp/a.log" 2>&1 &
first=$!
for _ in $(seq 1 300); do
    ls "$tmp"/d/*.h5.tmp.* >/dev/null 2>&1 && break
    sleep 0.1
done
live=$(ls "$tmp"/d/*.h5.tmp.* 2>/dev/null | head -1)
[ -n "$live" ] || { bad "the first run wrote no temporary in 30 s: $(tail -5 "$tmp/a.log")"; exit 1; }

# rb-archive clean from a PID namespace where the writer is not seen.
if unshare --pid --fork --mount-proc true 2>/dev/null; then
    unshare --pid --fork --mount-proc "$archive" clean "$tmp/d" >"$tmp/clean" 2>&1 ||
        bad "rb-archive clean in another PID namespace exited $?"
    if kill -0 "$first" 2>/dev/null; then
        [ -e "$live" ] || bad "clean in another PID namespace removed a live temporary: $(cat "$tmp/clean")"
    fi
else
    echo "note: unshare --pid refused here; the PID-namespace case is not checked"
fi

# The duplicate: waits, then skips.
bash "$JS/generic/micro.sbatch" "${args[@]}" >"$tmp/b.log" 2>&1
rc_b=$?
wait "$first"
rc_a=$?
[ "$rc_a" -eq 0 ] || bad "the first run exited $rc_a: $(tail -5 "$tmp/a.log")"
[ "$rc_b" -eq 0 ] || bad "the duplicate exited $rc_b: $(tail -5 "$tmp/b.log")"
grep -q "waiting: another run of this configuration holds" "$tmp/b.log" ||
    bad "the duplicate did not wait for the first: $(cat "$tmp/b.log")"
grep -q "skip .* is complete" "$tmp/b.log" || bad "the duplicate did not skip: $(cat "$tmp/b.log")"
grep -q "removing\|kept .* as" "$tmp/b.log" && bad "the duplicate touched the first's files: $(cat "$tmp/b.log")"
grep -q "done .* -> " "$tmp/a.log" || bad "the first run did not finish: $(tail -5 "$tmp/a.log")"
n=$(ls "$tmp"/d/micro_*.h5 2>/dev/null | wc -l)
[ "$n" -eq 1 ] || bad "want one archive, have: $(ls "$tmp/d")"
ls "$tmp"/d | grep -q "\.failed$\|\.interrupted$\|\.tmp\." && bad "litter: $(ls "$tmp/d")"
"$archive" list "$tmp/d" >"$tmp/list" 2>&1 && grep -q "complete" "$tmp/list" ||
    bad "rb-archive list: $(cat "$tmp/list")"
exit $fail
