#!/bin/sh
# rb-report on files the real benchmarks write here: a directory of rb_micro
# runs (two rank counts, two densities, an s2 width variant), plus a
# truncated copy, a copy marked incomplete (complete=0), a copy with an
# unknown schema version and a temporary *.tmp* file; then one file (an
# archive rb-archive merged from two runs and the training runs) and
# nothing usable.
# report_check.py compares the report's numbers with the HDF5 values.
micro="$top_builddir/benchmarks/rb_micro"
train="$top_builddir/benchmarks/rb_train"
report="$top_srcdir/analysis/rb-report"
check="$top_srcdir/tests/analysis/report_check.py"
py=/usr/bin/python3
fail=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

[ -x "$micro" ] || { echo "SKIP: $micro not built" >&2; exit 77; }
$py -c 'import h5py, numpy, pandas, matplotlib' 2>/dev/null ||
    { echo "SKIP: Debian python3-h5py/numpy/pandas/matplotlib missing" >&2; exit 77; }

t0=$(date +%s)
d="$tmp/results"
mkdir -p "$d/job1" "$d/job2"
run_micro() {  # NP OUT REDUCERS ARGS...: a failed run fails the test
    np=$1; out=$2; reds=$3; shift 3
    "$MPIRUN" "$np" "$micro" -q -i 3 -x 1 -o "$out" --reducer "$reds" "$@" >"$tmp/micro.out" 2>&1 && return 0
    echo "FAIL: rb_micro --reducer $reds $* failed:"; cat "$tmp/micro.out"; exit 1
}
all=none,dense,agsparse,sparcml,parallax,omnireduce,oktopk,zen,s2,gossip
common="--layout row --cols 16 -m 4096:16384"
run_micro 4 "$d/job1/p4.h5" $all --density 0.01 $common
run_micro 4 "$d/job1/p4-wide.h5" s2,dense --density 0.01 -O sketch_width=2 $common
run_micro 4 "$d/job1/p4-dense.h5" dense,agsparse,s2 --density 0.2 $common
run_micro 3 "$d/job2/p3.h5" dense,agsparse,s2,gossip --density 0.01 $common
# One rank (no point for the S2 claims), under a base name job1 has too
# (the two runs keep apart in every table).
run_micro 1 "$d/job2/p4-wide.h5" dense,agsparse,s2 --density 0.01 $common
# The C library's allocator policy: its own group, and a warning.
RB_MALLOC=default run_micro 3 "$d/job2/p3-malloc.h5" dense --density 0.01 $common
ntrain=0
if [ -x "$train" ] && [ -d /usr/share/datasets/fashion-mnist ]; then
    # rb_train: short runs of the reducers the training sections and the
    # claims need (none: the compute-efficiency reference).
    for r in none gossip s2 agsparse; do
        if "$MPIRUN" 2 "$train" --model mlp --reducer $r --epochs 2 --train-limit 1500 \
                --test-limit 300 --lr-warmup 5 --eval-every 5 -o "$d/job2/train-$r.h5" \
                >"$tmp/train.out" 2>&1; then
            ntrain=$((ntrain + 1))
        else
            echo "note: rb_train --reducer $r failed:"; tail -3 "$tmp/train.out"
        fi
    done
    # Stopped by --timeout before its first evaluation: refused, never a finished repeat.
    "$MPIRUN" 2 "$train" --model mlp --reducer none --epochs 100000 --eval-every 1000000 --timeout 1 \
        -o "$d/job2/train-timeout.h5" >"$tmp/train.out" 2>&1
    [ $? -eq 124 ] || { echo "FAIL: rb_train --timeout 1 did not time out:"; tail -3 "$tmp/train.out"; fail=1; }
else
    echo "note: rb_train or Fashion-MNIST absent: training sections not checked"
fi

echo "elapsed: $(($(date +%s) - t0)) s (benchmarks)"
# make check runs tests side by side, so these runs may be marked busy, and
# the report then splits their points by it; this test recomputes numbers,
# the busy rule has its own (busy_synth.py): the runs are made not busy.
$py - "$d" <<'EOF' || exit 99
import glob, h5py, sys
for path in glob.glob(sys.argv[1] + "/**/*.h5", recursive=True):
    with h5py.File(path, "r+") as f:
        for k in ("machine_other_cpu_before", "machine_other_cpu_during", "machine_steal_during"):
            if k in f.attrs:
                f.attrs[k] = 0.0
EOF
# Damaged copies, made from a real file.
$py - "$d/job1/p4.h5" "$tmp" <<'EOF' || exit 99
import h5py, shutil, sys
src, tmp = sys.argv[1], sys.argv[2]
shutil.copy(src, tmp + "/results/incomplete.h5")
with h5py.File(tmp + "/results/incomplete.h5", "r+") as f:
    f.attrs["complete"] = 0
shutil.copy(src, tmp + "/results/future.h5")
with h5py.File(tmp + "/results/future.h5", "r+") as f:
    f.attrs["schema_version"] = 999
data = open(src, "rb").read()
open(tmp + "/results/truncated.h5", "wb").write(data[: len(data) // 2])
shutil.copy(src, tmp + "/results/job1/p4.h5.tmp.1234")
shutil.copy(src, tmp + "/results/zz-copy.h5")   # the same run_id: counted once
EOF

# 2 (started first, runs beside 1). One file: a merged archive
# (analysis/rb-archive merge; a merge that fails fails the test).
archive="$top_srcdir/analysis/rb-archive"
mtrain=""; oneflag=""
for r in none gossip; do
    [ -f "$d/job2/train-$r.h5" ] && mtrain="$mtrain $d/job2/train-$r.h5"
done
"$archive" merge -o "$tmp/merged.h5" "$d/job1/p4.h5" "$d/job2/p3.h5" $mtrain >"$tmp/merge.out" 2>&1 &&
    [ -f "$tmp/merged.h5" ] || { echo "FAIL: rb-archive merge:"; cat "$tmp/merge.out"; exit 1; }
one="$tmp/merged.h5"; nruns=$((2 + $(echo $mtrain | wc -w)))
[ -n "$mtrain" ] && oneflag=--training
"$report" "$one" -o "$tmp/one" >"$tmp/one.out" 2>&1 &
one_pid=$!

# 1. A directory: good runs reported, damaged ones refused by name.
"$report" "$d" -o "$tmp/out" >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
if [ $rc -ne 0 ]; then
    echo "FAIL: rb-report on a directory exited $rc"; cat "$tmp/stderr"; fail=1
fi
for f in truncated.h5 incomplete.h5 future.h5; do
    grep -q "refused .*$f" "$tmp/stderr" || { echo "FAIL: no refusal naming $f on stderr"; fail=1; }
done
grep -q "incomplete.h5.*complete=0" "$tmp/stderr" || { echo "FAIL: incomplete file: reason not given"; fail=1; }
grep -q "future.h5.*schema version 999" "$tmp/stderr" || { echo "FAIL: unknown schema: reason not given"; fail=1; }
grep -q "zz-copy.h5.*the same run as .*/job1/p4.h5 (run_id [0-9a-f]\{32\})" "$tmp/stderr" ||
    { echo "FAIL: a copy of a run was not refused as one"; fail=1; }
if [ $ntrain -ge 1 ]; then
    grep -q "train-timeout.h5: stopped by its time limit (--timeout, timed_out=1" "$tmp/stderr" ||
        { echo "FAIL: a timed-out training run was not refused"; fail=1; }
fi
$py - "$tmp/out/tables/micro_rows.csv" <<'EOF' || { echo "FAIL: runs with one base name pooled"; fail=1; }
import sys, pandas as pd
runs = set(pd.read_csv(sys.argv[1])["run"])
assert {"job1/p4-wide.h5", "job2/p4-wide.h5"} <= runs, sorted(runs)
EOF
grep -q "tmp.1234" "$tmp/stderr" "$tmp/stdout" && { echo "FAIL: a *.tmp* file was read"; fail=1; }
grep -q "report: $tmp/out/report.md" "$tmp/stdout" || { echo "FAIL: stdout does not say where the report is"; fail=1; }
grep -q "Headline claims" "$tmp/stdout" || { echo "FAIL: no summary on stdout"; fail=1; }
cat "$tmp/stdout"
tflag=""; [ $ntrain -ge 1 ] && tflag=--training
$py "$check" "$tmp/out" --runs $((6 + ntrain)) --refused truncated.h5 incomplete.h5 future.h5 zz-copy.h5 $tflag || fail=1
# Two rank counts: the scaling table exists; s2 at two widths: error table.
grep -q "no configuration was run at more than one rank count" "$tmp/out/report.md" &&
    { echo "FAIL: scaling section empty although 3 and 4 ranks were run"; fail=1; }
grep -q "sketch_width=2" "$tmp/out/tables/micro_s2_error.csv" ||
    { echo "FAIL: s2 width variant missing from the s2 error table"; fail=1; }
# job2/p3-malloc.h5 ran with RB_MALLOC=default, the others with the default
# policy: a warning, and its rows are a group of their own.
grep -q "different allocator policies (malloc_policy: .* in 1, .* in [0-9]" "$tmp/out/report.md" ||
    { echo "FAIL: report does not warn of mixed allocator policies"; fail=1; }
$py - "$tmp/out/tables/micro_rows.csv" <<'EOF' || { echo "FAIL: allocator policies pooled in one group"; fail=1; }
import sys, pandas as pd
rows = pd.read_csv(sys.argv[1])
mine = rows[rows["file"].str.endswith("p3-malloc.h5")]
others = rows[~rows["file"].str.endswith("p3-malloc.h5")]
assert len(mine) and mine["group"].str.contains("malloc: C library default").all()
assert not set(mine["gid"]) & set(others["gid"]), "shares a group"
EOF

wait $one_pid || { echo "FAIL: rb-report $one"; cat "$tmp/one.out"; fail=1; }
$py "$check" "$tmp/one" --runs $nruns $oneflag || { echo "FAIL: report check on $one"; fail=1; }
echo "elapsed: $(($(date +%s) - t0)) s"

# 3. Nothing usable: exit 1 with a message, nothing created; usage errors
# and outputs that cannot be written exit 2 before anything is read.
"$report" "$d/truncated.h5" "$d/incomplete.h5" -o "$tmp/none" >"$tmp/stdout" 2>&1
rc=$?
[ $rc -eq 1 ] || { echo "FAIL: nothing usable: exit $rc, expected 1"; fail=1; }
grep -q "nothing usable" "$tmp/stdout" || { echo "FAIL: nothing usable: no message"; fail=1; }
[ -e "$tmp/none" ] && { echo "FAIL: output directory created from nothing usable"; fail=1; }
for out in "$d/job2/p3.h5:exists and is not a directory" "$tmp/no/such:its parent directory .* does not exist"; do
    "$report" "$d/job2/p3.h5" -o "${out%%:*}" >/dev/null 2>"$tmp/stderr"
    rc=$?
    [ $rc -eq 2 ] && grep -q "cannot write the report into ${out%%:*}: ${out#*:}" "$tmp/stderr" ||
        { echo "FAIL: -o ${out%%:*}: exit $rc, expected 2:"; cat "$tmp/stderr"; fail=1; }
done
mkdir "$tmp/tabfile" && : >"$tmp/tabfile/tables"
"$report" "$d/job2/p3.h5" -o "$tmp/tabfile" >/dev/null 2>"$tmp/stderr"
rc=$?
[ $rc -eq 2 ] && grep -q "cannot write the report into $tmp/tabfile" "$tmp/stderr" ||
    { echo "FAIL: tables/ a file: exit $rc, expected 2:"; cat "$tmp/stderr"; fail=1; }
# A baseline without a time (NaN: no run writes one) is a value no run can
# have: that run is refused with the reason (validate.py), no crash; the
# other run in the directory is still reported.
mkdir "$tmp/nan"
cp "$d/job2/p3.h5" "$tmp/nan/"
$py - "$d/job1/p4-dense.h5" "$tmp/nan/nan.h5" <<'EOF' || exit 99
import sys, shutil, h5py, numpy as np
shutil.copy(sys.argv[1], sys.argv[2])
with h5py.File(sys.argv[2], "r+") as f:
    r = f["/micro/results"][...]
    for col in ("t_avg_us", "bytes_sent_avg"):
        r[col][r["reducer"] == b"agsparse"] = np.nan
    f["/micro/results"][...] = r
EOF
"$report" "$tmp/nan" -o "$tmp/nanrep" >"$tmp/stdout" 2>&1 ||
    { echo "FAIL: rb-report with NaN baseline times failed:"; cat "$tmp/stdout"; fail=1; }
grep -q "refused .*nan.h5: .*t_avg_us = nan is a value no run can have" "$tmp/stdout" ||
    { echo "FAIL: NaN baseline times: not refused with the reason:"; cat "$tmp/stdout"; fail=1; }
"$report" >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] || { echo "FAIL: no arguments: exit $rc, expected 2"; fail=1; }
"$report" "$d/job2/p3.h5" -o /proc/no-such-dir >/dev/null 2>"$tmp/stderr"
rc=$?
[ $rc -eq 2 ] && grep -q "cannot write the report into /proc/no-such-dir" "$tmp/stderr" ||
    { echo "FAIL: unwritable output: exit $rc, expected 2 with a message"; cat "$tmp/stderr"; fail=1; }
exit $fail
