#!/bin/sh
# The archive is all-or-nothing: a run killed with SIGKILL leaves only a
# .tmp file that no reader takes for a result, SIGTERM and a --timeout before the first row
# leave nothing, an existing file is refused (exit 2) unless --force, a
# device, FIFO, symbolic link or empty path is refused even with --force, an
# unwritable path fails before any measurement, and the default path
# follows the Slurm job id.
. "$top_srcdir/tests/archive/archive_lib.sh"
small="--reducer dense -m 4K:4K -i 2 -x 0 -q"
# Long enough to be interrupted (minutes; 4K calls once finished 400000
# iterations inside the 1 s limit of the --timeout case on a fast machine).
long="--reducer dense -m 64K:64K -i 40000000 -x 0 --no-check -q"

# Wait (up to 20 s) for the temporary file of $1 to appear.
wait_tmp() {
    i=0
    while [ $i -lt 200 ]; do
        ls "$1".tmp.* >/dev/null 2>&1 && return 0
        sleep 0.1; i=$((i + 1))
    done
    return 1
}
# Signal $2 to the rank processes started by mpirun $1 (by pid).
signal_ranks() {
    for pid in $(pgrep -P "$1"); do kill "-$2" "$pid" 2>/dev/null; done
}

# --- SIGKILL mid-run
k="$tmp/killed.h5"
"$MPIRUN" 2 "$micro" $long -o "$k" >"$tmp/k.log" 2>&1 &
mpipid=$!
if wait_tmp "$k"; then
    sleep 0.5
    signal_ranks $mpipid KILL
    wait $mpipid
    [ -e "$k" ] && bad "SIGKILL: $k exists (looks complete)"
    ls "$k".tmp.* >/dev/null 2>&1 || bad "SIGKILL: expected the .tmp file to remain"
    # No reader takes the leftover for a result.
    for t in "$k".tmp.*; do
        $PY -c '
import sys, h5py
try:
    f = h5py.File(sys.argv[1], "r")
except OSError:
    sys.exit(0)          # unreadable: fine
sys.exit(1 if f.attrs.get("complete", 0) == 1 else 0)' "$t" || bad "SIGKILL: $t says complete = 1"
        "$rbarchive" list "$tmp" 2>/dev/null | grep -q "complete  *dense.*killed" && bad "rb-archive lists the killed run as complete"
        "$rbarchive" merge -o "$tmp/m.h5" "$t" >/dev/null 2>&1 && bad "rb-archive merged the killed run"
        [ -e "$tmp/m.h5" ] && bad "merge of a killed run wrote $tmp/m.h5"
        rm -f "$t"
    done
else
    bad "SIGKILL: no temporary file appeared"; signal_ranks $mpipid KILL; wait $mpipid
    cat "$tmp/k.log"
fi

# --- SIGTERM mid-run: the handler removes the temporary file
t="$tmp/termed.h5"
"$MPIRUN" 2 "$micro" $long -o "$t" >"$tmp/t.log" 2>&1 &
mpipid=$!
if wait_tmp "$t"; then
    sleep 0.5
    signal_ranks $mpipid TERM
    wait $mpipid
    sleep 0.2
    [ -e "$t" ] && bad "SIGTERM: $t exists"
    ls "$t".tmp.* >/dev/null 2>&1 && bad "SIGTERM: temporary file left: $(ls "$t".tmp.*)"
else
    bad "SIGTERM: no temporary file appeared"; signal_ranks $mpipid KILL; wait $mpipid
fi

# --- --timeout (exit 124) before the first row: no file at all (a run
# with rows keeps them, marked timed_out = 1: tests/harness/hostile_micro.sh)
to="$tmp/timeout.h5"
"$MPIRUN" 2 "$micro" $long --timeout 1 -o "$to" >"$tmp/to.log" 2>&1
rc=$?
[ $rc -eq 124 ] || bad "--timeout 1 exited $rc, expected 124"
[ -e "$to" ] && bad "timeout: $to exists"
ls "$to".tmp.* >/dev/null 2>&1 && bad "timeout: temporary file left"

# --- refuse to overwrite, then --force
e="$tmp/exists.h5"
"$MPIRUN" 2 "$micro" $small -o "$e" >"$tmp/e1.log" 2>&1 || bad "first run failed: $(cat "$tmp/e1.log")"
cp "$e" "$tmp/exists.copy"
"$MPIRUN" 2 "$micro" $small -o "$e" >"$tmp/e2.log" 2>"$tmp/e2.err"
rc=$?
[ $rc -eq 2 ] || bad "existing file: exit $rc, expected 2"
grep -q "refusing to overwrite existing archive $e (use --force)" "$tmp/e2.err" ||
    bad "existing file: message missing: $(cat "$tmp/e2.err")"
[ "$(table_rows "$tmp/e2.log")" -eq 0 ] || bad "existing file: measured before refusing"
cmp -s "$e" "$tmp/exists.copy" || bad "existing file was modified"
ls "$e".tmp.* >/dev/null 2>&1 && bad "refusal left a temporary file"
"$MPIRUN" 2 "$micro" $small -o "$e" --force >"$tmp/e3.log" 2>&1
rc=$?
[ $rc -eq 0 ] || bad "--force: exit $rc: $(cat "$tmp/e3.log")"
$PY -c 'import sys,h5py; sys.exit(0 if "--force" in h5py.File(sys.argv[1]).attrs["command_line"] else 1)' "$e" ||
    bad "--force did not replace the file"

# --- never replaced, even with --force: a device, a FIFO, a symbolic link
# (as root, "-o /dev/null --force" once replaced /dev/null); an empty path
specials="$tmp/fifo $tmp/link.h5"
if mknod "$tmp/dev" c 1 3 2>/dev/null; then
    specials="$tmp/dev $specials"
else
    echo "note: no device node (mknod refused here); FIFO and link checked"
fi
mkfifo "$tmp/fifo"
ln -s "$e" "$tmp/link.h5"
for p in $specials ""; do
    "$MPIRUN" 2 "$micro" $small -o "$p" --force >"$tmp/s.log" 2>"$tmp/s.err"
    rc=$?
    [ $rc -eq 2 ] || bad "special target '$p': exit $rc, expected 2"
    grep -q "rb_micro: rank 0: archive: .*\(not a regular file\|symbolic link\|path is empty\)" "$tmp/s.err" ||
        bad "special target '$p': no clear message: $(cat "$tmp/s.err")"
    [ "$(table_rows "$tmp/s.log")" -eq 0 ] || bad "special target '$p': measured before refusing"
done
[ ! -e "$tmp/dev" ] || [ -c "$tmp/dev" ] || bad "the device node was replaced"
[ -p "$tmp/fifo" ] || bad "the FIFO was replaced"
[ -L "$tmp/link.h5" ] || bad "the symbolic link was replaced"

# --- unwritable paths: clear message, exit 2, nothing measured
for p in "$tmp/no/such/dir/x.h5" "/proc/rb-archive-test.h5"; do
    "$MPIRUN" 1 "$micro" $small -o "$p" >"$tmp/u.log" 2>"$tmp/u.err"
    rc=$?
    [ $rc -eq 2 ] || bad "unwritable $p: exit $rc, expected 2"
    grep -q "rb_micro: rank 0: archive: .*$p" "$tmp/u.err" || bad "unwritable $p: no clear message: $(cat "$tmp/u.err")"
    [ "$(grep -c 'rb_micro: rank 0: archive:' "$tmp/u.err")" -eq 1 ] || bad "unwritable $p: message not printed once"
    [ "$(table_rows "$tmp/u.log")" -eq 0 ] || bad "unwritable $p: measured before failing"
done

# --- default path: results/<job>_<task>.h5 under Slurm, else a timestamp
mkdir "$tmp/cwd"
(cd "$tmp/cwd" && "$MPIRUN" 2 "$micro" $small >"$tmp/d1.log" 2>&1) || bad "default path run failed"
ls "$tmp"/cwd/results/rb_micro-*Z-*.h5 >/dev/null 2>&1 || bad "no results/rb_micro-<time>-<pid>.h5: $(ls -R "$tmp/cwd")"
(cd "$tmp/cwd" && SLURM_JOB_ID=4242 SLURM_ARRAY_TASK_ID=7 "$MPIRUN" 2 -x SLURM_JOB_ID -x SLURM_ARRAY_TASK_ID \
    "$micro" $small >"$tmp/d2.log" 2>&1) || bad "Slurm default path run failed: $(cat "$tmp/d2.log")"
[ -f "$tmp/cwd/results/4242_7.h5" ] || bad "no results/4242_7.h5: $(ls "$tmp/cwd/results")"
[ -f "$tmp/cwd/results/4242_7.h5" ] && $PY -c '
import sys, h5py
a = h5py.File(sys.argv[1]).attrs
sys.exit(0 if (a["slurm"], a["slurm_job_id"], a["slurm_array_task_id"]) == (1, "4242", "7") else 1)' \
    "$tmp/cwd/results/4242_7.h5" || bad "Slurm ids not recorded"
exit $fail
