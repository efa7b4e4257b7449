#!/bin/bash
# The disk fills, or a file size limit is reached, in the middle of an
# rb_micro sweep: the first row the archive cannot take ends the sweep
# with one line naming the system's reason ("No space left on device",
# "File too large"), not a line per row; exit 1, no temporary left, the
# rows measured before it printed.  The full disk is a 300 KB tmpfs (root
# only, else skipped); the limit is ulimit -f on the ranks (Open MPI over
# TCP loopback: its shared-memory transport backs its segments with files
# that the limit would refuse).  Under 10 s.
set -u
. "$top_srcdir/tests/faults/fault_lib.sh"
mnt=$tmp/small
trap 'mountpoint -q "$mnt" && umount "$mnt"; rm -rf "$tmp"' EXIT
sweep=(--reducer dense -m 4K:4K -i 500 -x 0 --repeat 40000 -P none -q --stall-timeout 0)

# disk_case NAME REASON OUT MPIRUN-PREFIX...: the sweep into OUT ends as said.
disk_case() {
    local name=$1 reason=$2 out=$3
    shift 3
    timeout 120 "$@" "$out" >"$tmp/$name.out" 2>"$tmp/$name.err"
    local rc=$?
    [ "$rc" -eq 1 ] || bad "$name: exit $rc, want 1: $(grep -v '^--' "$tmp/$name.err" | head -3)"
    local lines
    lines=$(grep -c "^rb_micro: rank 0: archive: .*$reason" "$tmp/$name.err")
    [ "$lines" = 1 ] || bad "$name: $lines line(s) naming '$reason', want 1: $(sort "$tmp/$name.err" | uniq -c | sort -rn | head -3)"
    [ "$(grep -c "^rb_micro: " "$tmp/$name.err")" = 1 ] ||
        bad "$name: more than one line from rb_micro: $(grep "^rb_micro: " "$tmp/$name.err" | sort | uniq -c | head -3)"
    grep -q "^# the archive cannot take more rows; stopping" "$tmp/$name.out" || bad "$name: the sweep did not stop"
    local rows
    rows=$(grep -c '^ *4096 ' "$tmp/$name.out")
    [ "$rows" -ge 2 ] && [ "$rows" -lt 40000 ] || bad "$name: $rows rows printed"
    ! ls "$(dirname "$out")" | grep -q '\.tmp\.' || bad "$name: a temporary left: $(ls "$(dirname "$out")")"
    note "$name: stopped after $rows rows, one line: $(grep "^rb_micro: " "$tmp/$name.err")"
}

if [ "$(id -u)" = 0 ] && mkdir -p "$mnt" && mount -t tmpfs -o size=300k tmpfs "$mnt" 2>/dev/null; then
    disk_case full-disk "No space left on device" "$mnt/x.h5" \
        "$MPIRUN" 2 "$micro" "${sweep[@]}" -o
else
    note "full disk: not root or no tmpfs mount here; only the size limit is checked"
fi
disk_case size-limit "File too large" "$tmp/limit.h5" \
    mpirun --bind-to none -np 2 --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo \
    sh -c 'ulimit -f 300; exec "$0" "$@"' "$micro" "${sweep[@]}" -o
exit $fail
