#!/bin/sh
# SimGrid SMPI: an SMPI build of rb_micro, made here in its own
# build directory, (1) validates every exact reducer (-c) at 64 simulated
# ranks, (2) shows gossip's wire bytes per rank per step independent of the
# rank count (16 vs 128 simulated ranks), (3) writes an archive marked
# simulated = 1 with the platform's content and sha256, as results/README.md
# documents it.
# Any rank count: (4) every reducer validates at 96 ranks, where
# the ompi selector's alltoall(v) would be SimGrid's power-of-two-only pair,
# and at 1 rank, and the archive records the algorithms rb-smpirun chose;
# (5) collcheck.c gets every collective right at every size on 1 and 5
# ranks; (6) an algorithm that cannot run NP ranks is refused before the
# simulation starts; (7) a killed simulation's temporary archive names the
# real process, and the next run removes it.
set -u
: "${top_srcdir:=.}"
src=$(cd "$top_srcdir" && pwd)
if ! command -v smpicc >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    apt-get install -y libsimgrid-dev >/dev/null 2>&1 || true
  fi
  command -v smpicc >/dev/null 2>&1 ||
    { echo "sim_smpi: SKIP: smpicc absent and libsimgrid-dev cannot be installed" >&2; exit 77; }
fi
/usr/bin/python3 -c 'import h5py' 2>/dev/null ||
  { echo "sim_smpi: SKIP: /usr/bin/python3 has no h5py" >&2; exit 77; }
fail() { echo "sim_smpi: FAIL: $*" >&2; exit 1; }
bdir=$(mktemp -d "${TMPDIR:-/tmp}/rb-sim-test.XXXXXX")
trap 'rm -rf "$bdir"' EXIT
cd "$bdir" || exit 99
# SMPI_PRETEND_CC: smpicc's test programs would otherwise need smpirun.
SMPI_PRETEND_CC=1 "$src/configure" CC=smpicc --with-simgrid --without-papi \
  --without-hwloc --without-cuda >configure.log 2>&1 || { tail -20 configure.log >&2; exit 99; }
grep -q 'SimGrid SMPI *: yes' configure.log || fail "configure summary does not say SimGrid yes"
grep -q 'define RB_SIMGRID 1' config.h || fail "RB_SIMGRID not defined"
make -j2 benchmarks/rb_micro >make.log 2>&1 || { tail -30 make.log >&2; exit 99; }
run="$src/jobscripts/sim/rb-smpirun"

# (1) every exact reducer validated at 64 ranks; exit 1 on any wrong value.
"$run" thismachine 64 benchmarks/rb_micro --reducer all -m 4K:16K -i 2 -x 1 -c \
  -o "$bdir/v.h5" >v.out 2>&1 || { cat v.out >&2; fail "64-rank validation run failed"; }
nexact=$(awk '/^# Reducer:/ && /\(exact\)/ {e=1; next} /^# Reducer:/ {e=0} e && /^ *[0-9]/ && $14 == "0" {n++} END {print n+0}' v.out)
echo "validated rows of exact reducers at 64 ranks: $nexact"
[ "$nexact" -ge 12 ] || { cat v.out >&2; fail "expected >= 12 validated exact rows, got $nexact"; }

# (3) the archive's simulated marker and platform.
/usr/bin/python3 - "$bdir/v.h5" "$src/jobscripts/sim/platforms/thismachine.xml" <<'PY' || fail "archive metadata"
import hashlib, sys, h5py
a = h5py.File(sys.argv[1], "r").attrs
plat = open(sys.argv[2], "rb").read()
def s(k):
    v = a[k]
    return v.decode() if isinstance(v, bytes) else str(v)
assert int(a["simulated"]) == 1, "simulated != 1"
assert s("sim_platform_sha256") == hashlib.sha256(plat).hexdigest(), "sha256"
assert s("sim_platform") == plat.decode(), "platform content"
assert s("simgrid_version").startswith("SimGrid version 3"), s("simgrid_version")
assert s("sim_calibration"), "no calibration text"
assert "smpi/coll-selector:ompi" in s("sim_smpi_options"), "sim_smpi_options: " + s("sim_smpi_options")
print("archive: simulated=1,", s("simgrid_version"), s("sim_platform_sha256")[:12])
PY
# ... and it follows results/README.md, whose tables document the sim_*
# attributes a simulated archive carries (they were missing once).
/usr/bin/python3 "$src/tests/archive/archive_schema_check.py" "$src/docs/archive-schema.json" "$bdir/v.h5" ||
  fail "the simulated archive does not follow results/README.md"

# (2) gossip: bytes sent per rank per call at 16 and 128 ranks (unchecked,
# shared buffers not needed at this size).
bytes_at() {
  "$run" p100-ib-edr "$1" benchmarks/rb_micro --reducer gossip -m 256K:256K -i 2 -x 1 \
    --no-check -o none >g$1.out 2>&1 || { cat g$1.out >&2; fail "gossip at $1 ranks"; }
  awk '/^ *[0-9]/ {print $11; exit}' g$1.out
}
b16=$(bytes_at 16); b128=$(bytes_at 128)
echo "gossip bytes/rank/step: 16 ranks $b16, 128 ranks $b128"
[ -n "$b16" ] && [ "$b16" -gt 0 ] && [ "$b16" = "$b128" ] ||
  fail "gossip wire bytes per rank depend on ranks ($b16 vs $b128)"

# (4) 96 ranks (not a power of two) and 1 rank, every reducer validated.
validated_rows() {
  awk '/^# Reducer:/ && /\(exact\)/ {e=1; next} /^# Reducer:/ {e=0} e && /^ *[0-9]/ && $14 == "0" {n++} END {print n+0}' "$1"
}
"$run" knl-aries 96 benchmarks/rb_micro --reducer all -m 4K:16K -i 2 -x 1 -c --density 0.05 \
  -o "$bdir/v96.h5" >v96.out 2>&1 || { cat v96.out >&2; fail "96-rank validation run failed"; }
n96=$(validated_rows v96.out)
echo "validated rows of exact reducers at 96 ranks: $n96"
[ "$n96" -ge "$nexact" ] || { cat v96.out >&2; fail "96 ranks: $n96 validated exact rows, 64 ranks had $nexact"; }
grep -q 'rb-smpirun: 96 ranks: smpi/alltoallv:ring' v96.out || fail "96 ranks: the alltoallv choice is not said"
/usr/bin/python3 - "$bdir/v96.h5" <<'PY' || fail "96-rank archive: sim_smpi_options"
import sys, h5py
o = h5py.File(sys.argv[1], "r").attrs["sim_smpi_options"]
o = o.decode() if isinstance(o, bytes) else str(o)
for want in ("smpi/coll-selector:ompi", "smpi/alltoallv:ring", "smpi/alltoall:bruck"):
    assert "--cfg=" + want in o.split(), "sim_smpi_options lacks " + want + ": " + o
print("96-rank archive records:", o[o.index("--cfg=smpi/alltoall:"):])
PY
"$run" thismachine 1 benchmarks/rb_micro --reducer all -m 4K:16K -i 2 -x 1 -c \
  -o none >v1.out 2>&1 || { cat v1.out >&2; fail "1-rank validation run failed"; }
n1=$(validated_rows v1.out)
echo "validated rows of exact reducers at 1 rank: $n1"
[ "$n1" -ge "$nexact" ] || { cat v1.out >&2; fail "1 rank: $n1 validated exact rows, 64 ranks had $nexact"; }

# (5) every collective, every size up to 1 MiB, checked, on 1 and 5 ranks
# (with the selector's choices, 1 rank: allgatherv's bcast and reduce abort,
# reduce_scatter is wrong; 5 ranks: alltoall's pair aborts, reduce_scatter's
# recursive halving is wrong).
smpicc -O2 -o collcheck "$src/jobscripts/sim/collcheck.c" >collcheck-build.log 2>&1 ||
  { cat collcheck-build.log >&2; fail "collcheck.c does not build"; }
for np in 1 5; do
  "$run" thismachine "$np" ./collcheck 1048576 >cc$np.out 2>&1 ||
    { cat cc$np.out >&2; fail "collcheck at $np ranks"; }
  [ "$(grep -c ' 0 wrong' cc$np.out)" -eq 11 ] || { cat cc$np.out >&2; fail "collcheck at $np ranks: not 11 collectives right"; }
done
echo "collcheck: 11 collectives right at 1 and 5 ranks"

# (6) refused before starting: exit 2, the reason, and no simulation.
refused() {
  rc=0
  env "$@" >ref.out 2>&1 || rc=$?
  [ "$rc" -eq 2 ] && grep -q "$want" ref.out && ! grep -q '^# rb_micro' ref.out ||
    { cat ref.out >&2; fail "not refused with exit 2 and '$want': $*"; }
}
want='smpi/alltoallv:pair cannot run 96 ranks in SimGrid: it needs a power-of-two number of ranks'
refused RB_SIM_ALLTOALLV=pair "$run" knl-aries 96 benchmarks/rb_micro -m 4K:4K -o none
want='smpi/bcast:NTSB cannot run 1 ranks'
refused RB_SMPIRUN_OPTS=--cfg=smpi/bcast:NTSB "$run" thismachine 1 benchmarks/rb_micro -m 4K:4K -o none
want='has 64 hosts: 65 ranks would share hosts'
refused "$run" thismachine 65 benchmarks/rb_micro -m 4K:4K -o none

# (7) A killed simulation leaves a temporary that names the real process
# (smpicc maps getpid to the simulated rank's 1, 2, ...: init's pid, alive
# forever), so the next run to the same path removes it.
"$run" thismachine 4 benchmarks/rb_micro --reducer dense -m 4K:4K -i 100000000 -x 1 \
  -o "$bdir/k.h5" >k.out 2>&1 &
job=$!
tmpf=
for _ in $(seq 300); do
  tmpf=$(ls "$bdir"/k.h5.tmp.* 2>/dev/null | head -1)
  [ -n "$tmpf" ] && break
  sleep 0.1
done
# The simulation runs in smpimain, a grandchild: found by its output path.
stop_sim() { pkill -9 -f "$bdir/k.h5"; wait $job 2>/dev/null; }
[ -n "$tmpf" ] || { stop_sim; cat k.out >&2; fail "no temporary archive while the run lives"; }
pid=${tmpf##*.}
tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q rb_micro ||
  { stop_sim; fail "temporary $tmpf names pid $pid, not the simulation's process"; }
kill -9 "$pid"; wait $job 2>/dev/null
[ -e "$tmpf" ] || fail "the kill left no temporary to clean (test broken)"
"$run" thismachine 2 benchmarks/rb_micro --reducer dense -m 4K:4K -i 2 -x 1 -o "$bdir/k.h5" \
  >k2.out 2>&1 || { cat k2.out >&2; fail "the run after the kill failed"; }
[ ! -e "$tmpf" ] || fail "the killed simulation's temporary $tmpf survived the next run"
[ -s "$bdir/k.h5" ] || fail "the run after the kill wrote no archive"
echo "killed simulation: its temporary named pid $pid (rb_micro) and the next run removed it"
exit 0
