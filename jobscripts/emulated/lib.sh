# Shared by jobscripts/emulated/start, stop, node, rsh and mpirun (sourced;
# bash).  An emulated cluster lives in one state directory $D:
#   cluster.conf        NODES, RATE, PREFIX of the running cluster
#   network             what the archives record (RB_NETWORK_INFO points here)
#   nodes/NAME/         init.pid (the process that holds the node's hostname
#                       and mounts), tmp/ (the node's own TMPDIR), hosts
#   slurm.conf ...      as jobscripts/local/ (munge/, state/, log/, spool/)
#   bin/                sbatch, srun, squeue ... run in the head node's network
#   env                 source it to use the cluster
# Network namespaces are named PREFIX-sw (the switch: one bridge), PREFIX-head
# (slurmctld) and PREFIX-node1..N; PREFIX is "rbe" and 6 hex digits of the
# state directory's path, so clusters in other directories never collide.
RB_SAY_AS=rb-emulated
EMUL_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../local/common.sh
. "$EMUL_HERE/../local/common.sh"

# The state directory as an absolute path (the namespaces' names derive
# from it, so start and stop must spell it alike).
emul_dir() {
    D=${RB_EMUL_DIR:-/tmp/rb-emul}
    case $D in /*) ;; *) D=$PWD/$D ;; esac
    [ -d "$D" ] && D=$(cd "$D" && pwd)
    PREFIX=rbe$(printf '%s' "$D" | sha1sum | cut -c1-6)
}
emul_dir
SUBNET=10.77.0
HEAD_IP=$SUBNET.254

node_ip() { echo "$SUBNET.${1#node}"; }

# The node's init process: alive, ours (its command line names $D).
node_init_pid() { our_pid "$D/nodes/$1/init.pid"; }

# in_node NODE CMD...: CMD in NODE's network, hostname and mounts, in the
# caller's working directory.
in_node() {
    local node=$1 pid
    shift
    pid=$(node_init_pid "$node") || die "node '$node' is not running in $D (jobscripts/emulated/start)"
    nsenter -t "$pid" -n -u -m --wd="$PWD" -- "$@"
}

# Names of the nodes of the running cluster (from cluster.conf).
cluster_nodes() {
    local n
    n=$(sed -n 's/^NODES=//p' "$D/cluster.conf" 2>/dev/null)
    [ -n "$n" ] || return 0
    seq -f 'node%g' 1 "$n"
    echo head
}

# A link rate as tc writes it (100mbit, 1gbit, 10gbit) and in bit/s; "none"
# leaves the links unshaped.  Refuses what is outside 100 Mbit - 10 Gbit:
# below, the suite's sizes take minutes a call; above, the 2-core VMs bound
# every figure by the CPU, not the link.
parse_rate() {
    local r=${1,,} num unit mult
    if [ "$r" = none ] || [ "$r" = unshaped ]; then
        RATE_TC=none RATE_BPS=0
        return 0
    fi
    [[ $r =~ ^([0-9]+)(\.[0-9]+)?(k|m|g)(bit|bps|b)?$ ]] ||
        die "link rate '$1': want a number and a unit, e.g. 100mbit, 1gbit, 2.5gbit, 10gbit (or none)"
    num=${BASH_REMATCH[1]}${BASH_REMATCH[2]}
    unit=${BASH_REMATCH[3]}
    case $unit in k) mult=1000 ;; m) mult=1000000 ;; g) mult=1000000000 ;; esac
    RATE_BPS=$(awk -v n="$num" -v m="$mult" 'BEGIN { printf "%.0f", n * m }')
    [ "$RATE_BPS" -ge 100000000 ] && [ "$RATE_BPS" -le 10000000000 ] ||
        die "link rate '$1' is outside 100mbit..10gbit (or none for unshaped links)"
    RATE_TC=$(awk -v b="$RATE_BPS" 'BEGIN { if (b % 1000000000 == 0) printf "%dgbit", b / 1e9; else printf "%dmbit", b / 1e6 }')
}

# tbf on one end of a link.  The burst must hold 128 KB at least (a 64 KB
# burst cut packets and cost ~30% of a core at 1 Gbit); the queue holds
# 20 ms of traffic at the rate.
shape_dev() {   # NETNS DEV
    local ns=$1 dev=$2
    tc -n "$ns" qdisc del dev "$dev" root 2>/dev/null || true
    [ "$RATE_TC" = none ] && return 0
    tc -n "$ns" qdisc add dev "$dev" root tbf rate "$RATE_TC" burst 128kb latency 20ms
}

# Every node link, both ends (the head's link to the switch carries only
# Slurm's control traffic and stays unshaped).
shape_links() {
    local i n=$1
    for i in $(seq 1 "$n"); do
        shape_dev "$PREFIX-node$i" eth0 || return 1
        shape_dev "$PREFIX-sw" "${PREFIX}s$i" || return 1
    done
}

write_network_info() {   # NODES
    {
        echo "network=emulated"
        echo "link_rate=$RATE_TC"
        echo "link_bps=$RATE_BPS"
        echo "nodes=$1"
        echo "transport=tcp"
        echo "topology=one switch (Linux bridge), one veth per node"
        if [ "$RATE_TC" = none ]; then
            echo "shaper=none"
        else
            echo "shaper=tbf rate $RATE_TC burst 128kb latency 20ms, both ends of each node link"
        fi
        echo "cluster_dir=$D"
    } >"$D/network.$$" && mv -f "$D/network.$$" "$D/network"
}

# Open MPI's settings on every node, as NAME=VALUE lines (exported to every
# task by the TaskProlog, and by jobscripts/emulated/mpirun): TCP between
# nodes over eth0, the link to the switch, Open MPI's one socket per pair
# of ranks (btl_tcp_links=1, said explicitly: with two sockets a 2-rank
# 16 MiB exchange ran at the duplex rate in every launch, 154-161 ms for a
# dense allreduce against 196-224 ms with one, but Open MPI 4.1 then hung
# inside agsparse's allgatherv at 4-16 MiB on 4 nodes in 6 of 13 launches,
# 0 of 13 with one: docs/measurements/2026-11-28-emulated-tcp-duplex.md);
# no binding, since every node's ranks share this machine's cores and would
# all be bound to core 0; ranks yield the core while they wait, since nodes
# x ranks exceed the cores.
emul_mpi_settings() {
    cat <<'MCA'
OMPI_MCA_btl_tcp_if_include=eth0
OMPI_MCA_oob_tcp_if_include=eth0
OMPI_MCA_btl_tcp_links=1
OMPI_MCA_hwloc_base_binding_policy=none
OMPI_MCA_mpi_yield_when_idle=1
MCA
}

# Our network namespaces, veths and processes that still exist (for stop and
# its checks): one line each, "netns NAME", "link NAME", "pid PID (what)".
leftovers() {
    local ns p
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$PREFIX-"); do
        echo "netns $ns"
    done
    ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep "^$PREFIX" | sed 's/^/link /'
    for p in $(ns_pids); do
        echo "pid $p ($(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-80))"
    done
}

# Live (not zombie) processes inside our network namespaces (every daemon,
# job and node init of the cluster but munged), other than this shell and
# its ancestors (stop may be run from a shell on a node).
ns_pids() {
    local inodes="" ns p ino mine=" " q=$$
    while [ -n "$q" ] && [ "$q" -gt 1 ]; do
        mine="$mine$q "
        q=$(awk '/^PPid:/ {print $2}' "/proc/$q/status" 2>/dev/null)
    done
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$PREFIX-"); do
        ino=$(stat -L -c %i "/run/netns/$ns" 2>/dev/null) && inodes="$inodes $ino "
    done
    [ -n "$inodes" ] || return 0
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        [[ $mine == *" $p "* ]] && continue
        [ "$p" = "${BASHPID:-}" ] && continue
        grep -qs '^State:[[:space:]]*Z' "/proc/$p/status" && continue
        ino=$(stat -L -c %i "/proc/$p/ns/net" 2>/dev/null) || continue
        [[ $inodes == *" $ino "* ]] && echo "$p"
    done
    return 0
}
