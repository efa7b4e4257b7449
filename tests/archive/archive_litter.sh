#!/bin/sh
# No litter: temporaries are FILE.tmp.HOST.PID; a run to FILE
# removes those of this host's dead processes, never a live process's or
# another host's; rb-archive list shows the rest as INCOMPLETE with whose
# they are; rb-archive clean removes every dead one of this host.
micro="$top_builddir/benchmarks/rb_micro"
archive="$top_srcdir/analysis/rb-archive"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
host=$(uname -n)
sh -c 'exit 0' & dead=$!; wait $dead
kill -0 "$dead" 2>/dev/null && { echo "pid $dead reused at once; skipped"; exit 77; }
live=$$
for f in "x.h5.tmp.$host.$dead" "x.h5.tmp.$host.$live" "x.h5.tmp.otherhost.example.$dead" \
         "y.h5.tmp.$host.$dead" "x.h5.tmp.$dead"; do
    echo partial >"$tmp/$f"
done
"$MPIRUN" 2 "$micro" --reducer dense -m 4K:4K -i 1 -x 0 -P none -o "$tmp/x.h5" >"$tmp/out" 2>&1 ||
    { bad "rb_micro exited $?"; cat "$tmp/out"; }
[ -f "$tmp/x.h5" ] || bad "no archive"
[ -e "$tmp/x.h5.tmp.$host.$dead" ] && bad "the dead run's temporary was not removed"
grep -q "removed temporaries of runs that ended without finishing" "$tmp/out" &&
    grep -q "x.h5.tmp.$host.$dead (process $dead gone)" "$tmp/out" || bad "the removal was not said: $(cat "$tmp/out")"
[ -e "$tmp/x.h5.tmp.$host.$live" ] || bad "a live process's temporary was removed"
[ -e "$tmp/x.h5.tmp.otherhost.example.$dead" ] || bad "another host's temporary was removed"
[ -e "$tmp/x.h5.tmp.$dead" ] || bad "an older hostless temporary was removed"
[ -e "$tmp/y.h5.tmp.$host.$dead" ] || bad "another file's temporary was removed by a run to x.h5"
ls "$tmp" | grep -q "^x.h5.tmp.$host.[0-9]*$" && [ "$(ls "$tmp" | grep -c "^x.h5.tmp.$host\.")" -ne 1 ] &&
    bad "the run left its own temporary: $(ls "$tmp")"

"$archive" list "$tmp" >"$tmp/list" 2>&1 || bad "rb-archive list exited $?"
grep -q "INCOMPLETE .*x.h5.tmp.$host.$live (temporary of process $live on $host: running)" "$tmp/list" ||
    bad "list: the live temporary: $(cat "$tmp/list")"
grep -q "INCOMPLETE .*y.h5.tmp.$host.$dead (temporary of process $dead on $host: gone)" "$tmp/list" ||
    bad "list: the dead temporary"
grep -q "INCOMPLETE .*x.h5.tmp.otherhost.example.$dead (temporary of process $dead on otherhost.example: other host)" \
    "$tmp/list" || bad "list: the other host's temporary"
grep -q "complete .*x.h5$" "$tmp/list" || bad "list: the finished archive"

"$archive" clean "$tmp" >"$tmp/clean" 2>&1 || bad "rb-archive clean exited $?"
[ -e "$tmp/y.h5.tmp.$host.$dead" ] && bad "clean kept a dead run's temporary"
[ -e "$tmp/x.h5.tmp.$host.$live" ] || bad "clean removed a live process's temporary"
[ -e "$tmp/x.h5.tmp.otherhost.example.$dead" ] || bad "clean removed another host's temporary"
[ -e "$tmp/x.h5" ] || bad "clean removed the archive"
grep -q "1 temporary file(s) removed, 3 kept" "$tmp/clean" || bad "clean: $(cat "$tmp/clean")"
exit $fail
