#!/bin/sh
# Every archive says how busy its machine was: the load probe's attributes
# are there with values in range, and CPU burnt by other processes during
# the run is seen as other work (while this run's own ranks are not).
. "$top_srcdir/tests/archive/archive_lib.sh"
small="--reducer dense -m 64K:64K -i 200 -x 2 --no-check -q"

attrs() {  # the machine_* attributes of $1 as name=value lines
    $PY - "$1" <<'PYEOF'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    for k in sorted(f.attrs):
        if k.startswith("machine_"):
            print("%s=%s" % (k, f.attrs[k]))
PYEOF
}
value() { sed -n "s/^$2=//p" "$1"; }

# --- attributes present and in range
"$MPIRUN" 2 "$micro" $small -o "$tmp/quiet.h5" >"$tmp/q.log" 2>&1 || { cat "$tmp/q.log"; bad "rb_micro failed"; }
attrs "$tmp/quiet.h5" >"$tmp/q.attrs"
for a in machine_cores machine_load_before machine_load_after machine_other_cpu_before \
         machine_other_cpu_during machine_steal_during; do
    grep -q "^$a=" "$tmp/q.attrs" || bad "no /@$a"
done
cores=$(value "$tmp/q.attrs" machine_cores)
[ "$cores" = "$(nproc)" ] || bad "machine_cores $cores, nproc $(nproc)"
$PY - "$tmp/q.attrs" "$cores" <<'PYEOF' || bad "a machine_* value out of range: $(cat "$tmp/q.attrs" | tr '\n' ' ')"
import sys
v = dict(l.strip().split("=", 1) for l in open(sys.argv[1]))
cores = float(sys.argv[2])
for k in ("machine_other_cpu_before", "machine_other_cpu_during"):
    assert 0 <= float(v[k]) <= cores + 0.5, k
assert 0 <= float(v["machine_steal_during"]) <= 1
assert float(v["machine_load_before"]) >= 0 and float(v["machine_load_after"]) >= 0
PYEOF

# --- other work on the machine is seen: one spinning process per core
# beside the run; the run itself is at least as busy, so the probe must
# count the spinners (other) and not the ranks (own).
hogs=""
for i in $(seq 1 "$cores"); do
    sh -c 'end=$(($(date +%s) + 20)); while [ "$(date +%s)" -lt $end ]; do :; done' &
    hogs="$hogs $!"
done
"$MPIRUN" 2 "$micro" $small -o "$tmp/busy.h5" >"$tmp/b.log" 2>&1 || { cat "$tmp/b.log"; bad "rb_micro failed beside the spinners"; }
kill $hogs 2>/dev/null
wait $hogs 2>/dev/null
attrs "$tmp/busy.h5" >"$tmp/b.attrs"
$PY - "$tmp/b.attrs" <<'PYEOF' || bad "spinners not seen as other work: $(cat "$tmp/b.attrs" | tr '\n' ' ')"
import sys
v = dict(l.strip().split("=", 1) for l in open(sys.argv[1]))
assert float(v["machine_other_cpu_before"]) > 0.5, "before"
assert float(v["machine_other_cpu_during"]) > 0.5, "during"
# The ranks spin too and get their share of the cores: counted as other
# work, the whole machine would be "other".
assert float(v["machine_other_cpu_during"]) < float(v["machine_cores"]) - 0.2, "own ranks"
PYEOF
[ "$($PY "$check" "$schema" "$tmp/busy.h5" >/dev/null 2>&1; echo $?)" = 0 ] || bad "schema check failed: $($PY "$check" "$schema" "$tmp/busy.h5" 2>&1 | head -3)"
exit $fail
