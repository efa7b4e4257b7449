# Sourced by tests/faults/*.sh: paths, a scratch directory, helpers to wait
# for rows, find a rank's process and check what a fault kept.
: "${top_srcdir:?run under make check}" "${top_builddir:?run under make check}"
micro="$top_builddir/benchmarks/rb_micro"
train="$top_builddir/benchmarks/rb_train"
rbarchive="$top_srcdir/analysis/rb-archive"
PY=/usr/bin/python3
fail=0
bad() { echo "FAIL: $*"; fail=1; }
note() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }
[ -x "$micro" ] || { echo "no $micro" >&2; exit 99; }
$PY -c 'import h5py' 2>/dev/null ||
    { echo "SKIP: /usr/bin/python3 cannot import h5py (Debian: python3-h5py)" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rb-fault.XXXXXX") || exit 99
chmod 755 "$tmp"

# Seconds since the epoch, with decimals.
now() { date +%s.%N; }
# A - B, in whole seconds rounded up.
secs() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; printf "%d", d == int(d) ? d : int(d) + 1 }'; }

# wait_rows LOG N SECONDS: until LOG holds N table rows (0), or the time is out (1).
wait_rows() {
    local i n
    for ((i = 0; i < $3 * 10; i++)); do
        n=$(grep -c -E '^ +[0-9]+ ' "$1" 2>/dev/null)
        [ "${n:-0}" -ge "$2" ] && return 0
        sleep 0.1
    done
    return 1
}

# wait_file PATH SECONDS: until PATH exists (0), or the time is out (1).
wait_file() {
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        [ -e "$1" ] && return 0
        sleep 0.1
    done
    return 1
}

# descendants PID: the processes below PID (its children, theirs...).
descendants() {
    local c
    for c in $(pgrep -P "$1"); do
        echo "$c"
        descendants "$c"
    done
}

# rank_pid R PID...: of the PIDs (the launch's descendants, a node's
# processes: never another test's), the benchmark process of MPI rank R
# (its environment says its rank).
rank_pid() {
    local r=$1 p
    shift
    for p in "$@"; do
        tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q "benchmarks/rb_" || continue
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qxE "(OMPI_COMM_WORLD_RANK|PMIX_RANK|SLURM_PROCID)=$r" &&
            { echo "$p"; return 0; }
    done
    return 1
}

# kept_ok FILE MIN_ROWS NOTE_PATTERN: what a fault kept: readable, complete
# = 0, at least MIN_ROWS rows, its note (first 512 bytes) matching; the
# reason on stdout if not (empty when it holds).
kept_ok() {
    $PY - "$@" <<'PY'
import re, sys, h5py
path, least, pattern = sys.argv[1], int(sys.argv[2]), sys.argv[3]
why = []
try:
    with h5py.File(path, "r") as f:
        if int(f.attrs["complete"]) != 0:
            why.append("complete = %s, not 0" % f.attrs["complete"])
        n = len(f["micro/results"]) if "micro/results" in f else 0
        if n < least:
            why.append("%d row(s), fewer than the %d finished before the fault" % (n, least))
        if f.userblock_size != 512:
            why.append("user block of %d bytes, not 512" % f.userblock_size)
except Exception as e:
    why.append("cannot be read: %s" % e)
note = open(path, "rb").read(512).rstrip(b"\0").decode("utf-8", "replace")
if not re.search(pattern, note):
    why.append("its note %r does not match %r" % (note, pattern))
print("; ".join(why))
PY
}

# no_complete DIR: no file in DIR claims to be a finished run (an *.h5 with
# complete = 1); its names on stdout if one does.
no_complete() {
    $PY - "$1" <<'PY'
import os, sys, h5py
for n in sorted(os.listdir(sys.argv[1])):
    p = os.path.join(sys.argv[1], n)
    try:
        with h5py.File(p, "r") as f:
            if int(f.attrs.get("complete", 0)) == 1:
                print(n)
    except Exception:
        pass
PY
}

# signal_case NAME SIGNAL: rb_micro ($run) into $tmp/NAME.h5, SIGNAL to
# rank 0 once 2 rows are finished: exit 128 + N, one line naming the
# signal and the kept file, NAME.h5.interrupted holding the rows (kept_ok),
# neither NAME.h5 nor a temporary.
signal_case() {
    local name=$1 sig=$2 out="$tmp/$1.h5" job rc pid rows
    # shellcheck disable=SC2086
    "$MPIRUN" 2 "$micro" $run -o "$out" >"$tmp/$name.out" 2>"$tmp/$name.err" &
    job=$!
    wait_rows "$tmp/$name.out" 2 40 || { bad "$name: no row finished in 40 s"; kill "$job"; wait "$job"; return; }
    pid=$(rank_pid 0 $(descendants "$job")) || { bad "$name: no rank 0"; return; }
    kill "-$sig" "$pid"
    rows=$(grep -c -E '^ +[0-9]+ ' "$tmp/$name.out")
    wait "$job"
    rc=$?
    [ "$rc" -eq $((128 + $(kill -l "$sig"))) ] || bad "$name: exit $rc, not 128 + SIG$sig"
    [ "$(grep -c "rb_micro: rank 0: signal SIG$sig (.*); the [0-9]* row(s) finished are kept in $out.interrupted" "$tmp/$name.err")" = 1 ] ||
        bad "$name: not one line naming SIG$sig and the kept file: $(grep -v '^--\|^ \|^$' "$tmp/$name.err" | head -5)"
    [ -e "$out" ] && bad "$name: $out exists: a run that did not finish under the final name"
    ls "$tmp" | grep -q "^$name.h5.tmp" && bad "$name: a temporary is left: $(ls "$tmp" | grep "^$name")"
    why=$(kept_ok "$out.interrupted" "$rows" "^reducerbench: interrupted: signal SIG$sig")
    [ -z "$why" ] || bad "$name: $out.interrupted: $why"
    note "SIG$sig to rank 0 after $rows row(s): exit $rc, kept $(basename "$out").interrupted"
}
