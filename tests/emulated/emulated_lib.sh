# Sourced by tests/emulated/*.sh: a private emulated cluster per test run
# (jobscripts/emulated/start in a unique state directory), always stopped
# on exit.  Needs root (else skipped); a kernel that refuses network
# namespaces, veth pairs or tbf skips the test with start's reason.
. "$top_srcdir/tests/slurm/cluster_lib.sh"
test_cluster emul RB_EMUL_DIR emulated/stop "network namespaces, tc and Slurm's daemons need root"

# emul_start NODES RATE: the cluster, and its env (SLURM_CONF, PATH).
emul_start() {
    local out rc=0
    out=$("$JS/emulated/start" -N "$1" -r "$2" 2>&1) || rc=$?
    if [ "$rc" = 3 ]; then
        echo "SKIP: ${out##*error: }" >&2
        exit 77
    fi
    [ "$rc" = 0 ] || fail "jobscripts/emulated/start -N $1 -r $2 exited $rc: $out"
    # shellcheck disable=SC1091
    . "$RB_EMUL_DIR/env"
    PREFIX=$(sed -n 's/^PREFIX=//p' "$RB_EMUL_DIR/cluster.conf")
}

# link_bytes NODE: bytes sent + received on the node's eth0 (its link).
link_bytes() {
    ip -n "$PREFIX-$1" -s -j link show eth0 | /usr/bin/python3 -c 'import json, sys
s = json.load(sys.stdin)[0]["stats64"]
print(s["rx"]["bytes"] + s["tx"]["bytes"])'
}

# cluster_pids: the pids of the cluster's daemons and node inits.
cluster_pids() {
    cat "$RB_EMUL_DIR"/nodes/*/init.pid "$RB_EMUL_DIR"/nodes/*/slurmd.pid \
        "$RB_EMUL_DIR/slurmctld.pid" "$RB_EMUL_DIR/munge/munged.pid" 2>/dev/null | tr '\n' ' '
}

# assert_nothing_left PIDS: no namespace, link or process of the cluster.
assert_nothing_left() {
    local p left
    left=$(ip netns list | awk '{print $1}' | grep "^$PREFIX-" | tr '\n' ' ')
    [ -z "$left" ] || fail "namespaces left after stop: $left"
    left=$(ip -o link show | awk -F': ' '{print $2}' | grep "^$PREFIX" | tr '\n' ' ')
    [ -z "$left" ] || fail "links left after stop: $left"
    # A daemon stop ended may still be on its way out on a loaded machine:
    # 5 s for it to go before it counts as left.
    local i
    for p in $1; do
        for ((i = 0; i < 25; i++)); do
            [ -e "/proc/$p" ] && ! grep -qs '^State:[[:space:]]*Z' "/proc/$p/status" || break
            sleep 0.2
        done
        if [ -e "/proc/$p" ] && ! grep -qs '^State:[[:space:]]*Z' "/proc/$p/status"; then
            fail "process $p still running 5 s after stop: $(tr '\0' ' ' <"/proc/$p/cmdline")"
        fi
    done
}

. "$top_srcdir/tests/slurm/jobs_lib.sh"
