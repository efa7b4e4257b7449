#!/bin/bash
# SimGrid against the wire, small: on an emulated cluster of 2 nodes with
# 1 Gbit links (jobscripts/emulated/start, its own state directory, always
# stopped), jobscripts/sim/platform-from-wire measures one ping-pong and
# writes a platform; (1) SimGrid reads it (a ping-pong simulated on it
# through rb-smpirun exits 0) and its link bandwidth is within 25% of the
# 1 Gbit link; (2) a dense allreduce of 8 MiB simulated on it takes between
# 0.5x and 2x the time it takes on the cluster (dense_time.c: the dense
# reducer's MPI_Allreduce, minimum over 3 calls).  Skipped (77), with the
# reason, when not root, without network namespaces, or without mpicc,
# smpicc or /usr/bin/python3.  About 30-40 s on 2 busy cores.
set -u
: "${top_srcdir:=.}"
src=$(cd "$top_srcdir" && pwd)
skip() { echo "sim_wire: SKIP: $*" >&2; exit 77; }
fail() { echo "sim_wire: FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || skip "not root (network namespaces, tc, Slurm's daemons)"
command -v ip >/dev/null && command -v tc >/dev/null || skip "no ip or tc (iproute2)"
for t in mpicc smpicc /usr/bin/python3; do command -v "$t" >/dev/null || skip "no $t"; done
T=$(mktemp -d "${TMPDIR:-/tmp}/rb-simwire.XXXXXX")
chmod 755 "$T"   # munged and slurmd run as their own users below it
export RB_EMUL_DIR=$T/cluster
E=$src/jobscripts/emulated S=$src/jobscripts/sim
cleanup() { "$E/stop" --clean >/dev/null 2>&1 || "$E/stop" --clean; rm -rf "$T"; }
trap cleanup EXIT
rc=0
"$E/start" -N 2 -r 1gbit >"$T/start.log" 2>&1 || rc=$?
[ "$rc" = 3 ] && skip "this kernel refuses namespaces, veths or tbf: $(tail -1 "$T/start.log")"
[ "$rc" = 0 ] || { cat "$T/start.log" >&2; fail "jobscripts/emulated/start exited $rc"; }

# (1) a platform from one ping-pong (3 rounds, up to 8 MiB: two sizes for the
# bandwidth fit), read by SimGrid.
timeout 120 "$S/platform-from-wire" --launches 1 --rounds 3 --max-bytes 8388608 --budget 40 \
    -o "$T/wire.xml" 2>"$T/fit.log" || { cat "$T/fit.log" >&2; fail "platform-from-wire"; }
cat "$T/fit.log"
grep -q '<prop id="rb_network_link_rate" value="1gbit"/>' "$T/wire.xml" ||
    fail "the platform does not name the network it was fitted to"
bw=$(sed -n 's/.*<link id="link-0" bandwidth="\([0-9.e+]*\)Bps".*/\1/p' "$T/wire.xml")
awk -v b="$bw" 'BEGIN { exit !(b * 8 > 0.75e9 && b * 8 < 1.25e9) }' ||
    fail "link bandwidth ${bw:-none} B/s is not within 25% of 1 Gbit/s"
smpicc -O2 -o "$T/pingpong-smpi" "$S/pingpong.c" 2>"$T/cc.log" || { cat "$T/cc.log" >&2; exit 99; }
"$S/rb-smpirun" "$T/wire.xml" 2 "$T/pingpong-smpi" 1 1048576 1 10 >"$T/simpp.txt" 2>&1 ||
    { cat "$T/simpp.txt" >&2; fail "SimGrid could not run on the platform"; }

# (2) dense allreduce of 8 MiB: measured on the cluster, simulated on the platform.
mpicc -O2 -o "$T/dense" "$src/tests/emulated/dense_time.c" && smpicc -O2 -o "$T/dense-smpi" \
    "$src/tests/emulated/dense_time.c" 2>>"$T/cc.log" || { cat "$T/cc.log" >&2; exit 99; }
meas=$(timeout 60 "$E/mpirun" -np 2 "$T/dense" 2097152 3 2>"$T/meas.err") ||
    { cat "$T/meas.err" >&2; fail "measured dense run"; }
sim=$("$S/rb-smpirun" "$T/wire.xml" 2 "$T/dense-smpi" 2097152 3 2>"$T/sim.err") ||
    { cat "$T/sim.err" >&2; fail "simulated dense run"; }
echo "dense 8 MiB, 2 nodes: measured ${meas} s, simulated ${sim} s"
awk -v m="$meas" -v s="$sim" 'BEGIN { exit !(m > 0 && s / m >= 0.5 && s / m <= 2) }' ||
    fail "simulated/measured = $sim/$meas is outside 0.5-2"
echo "sim_wire: ok"
