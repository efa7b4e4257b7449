# Sourced by the tests on the emulated cluster (tests/faults/fault_link.sh,
# fault_peer.sh): a private 2-node cluster (jobscripts/emulated/start) in a
# state directory of its own, always stopped on exit; skipped, with the
# reason, when not root or when the kernel refuses network namespaces.
. "$top_srcdir/tests/faults/fault_lib.sh"
E=$top_srcdir/jobscripts/emulated
if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: the emulated cluster (network namespaces, veths, Slurm's daemons) needs root" >&2
    rm -rf "$tmp"
    exit 77
fi
export RB_EMUL_DIR=$tmp/emul RB_BUILD=$top_builddir

emul_cleanup() {
    local rc=$?
    trap - EXIT
    kill $(jobs -p) 2>/dev/null
    "$E/stop" >"$tmp/stop.log" 2>&1 || { cat "$tmp/stop.log" >&2; rc=1; }
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
        echo "--- logs (kept in $tmp) ---" >&2
        tail -n 25 "$tmp"/*.log >&2 2>/dev/null
    else
        rm -rf "$tmp"
    fi
    exit "$rc"
}
trap emul_cleanup EXIT
trap 'exit 1' TERM INT HUP

# emul_start: the 2-node cluster, links at 1 Gbit; exit 77 naming the
# reason where the kernel refuses what it needs (start's exit 3).
emul_start() {
    "$E/start" -N 2 -r 1gbit >"$tmp/start.log" 2>&1
    case $? in
        0) ;;
        3) echo "SKIP: $(grep -m1 'refuses' "$tmp/start.log")" >&2; exit 77 ;;
        *) echo "FAIL: jobscripts/emulated/start: $(tail -3 "$tmp/start.log")" >&2; exit 1 ;;
    esac
    # shellcheck disable=SC1091
    . "$RB_EMUL_DIR/env"
}

# node_pids NODE: the processes in NODE's network namespace.
node_pids() {
    # shellcheck disable=SC1091
    (. "$E/lib.sh" && ip netns pids "$PREFIX-$1")
}

# job_kept LOG OUT NAME ROWS LINE NOTE: what a job that a fault ended left
# in its log LOG and its directory OUT: rank 0's line (LINE, a grep
# pattern), the script's FAILED line and the kept file named with its
# reason; NAME.interrupted holding ROWS rows or more, its note matching
# NOTE (kept_ok); no file that claims to be complete, no temporary.
job_kept() {
    local log=$1 out=$2 name=$3 rows=$4 line=$5 note=$6 why
    grep -q "$line" "$log" || bad "no line from rank 0 matching '$line': $(grep -v '^ *[0-9#]' "$log" | tail -8)"
    grep -q "FAILED ${name%.h5} (exit " "$log" || bad "the log says no FAILED ${name%.h5}"
    grep -q "kept the partial archive as .*$name.interrupted (complete = 0: not taken as done; interrupted: " "$log" ||
        bad "the log does not name the kept file and why: $(grep -v '^ *[0-9#]' "$log" | tail -6)"
    why=$(kept_ok "$out/$name.interrupted" "$rows" "$note")
    [ -z "$why" ] || bad "$name.interrupted: $why"
    [ -z "$(no_complete "$out")" ] || bad "a file claims to be complete: $(no_complete "$out")"
    ! ls "$out" | grep -q '\.tmp\.' || bad "a temporary is left: $(ls "$out")"
}
