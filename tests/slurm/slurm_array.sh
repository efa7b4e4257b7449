#!/bin/bash
# A sweep as a job array through jobscripts/submit: 3 tasks, one archive
# each; resubmitted (submit --resume) after one archive was marked
# incomplete: the two complete configurations are skipped (files untouched),
# only the third runs again.
. "$top_srcdir/tests/slurm/slurm_lib.sh"
slurm_start

j=$("$JS/submit" knl micro --reducers dense,agsparse,sparcml --sizes 4K --iterations 2 --warmup 1 \
    --tasks-per-node 2 --chdir "$W" -- -P none) || fail "jobscripts/submit"
note "array job $j"
wait_jobs 200 "$j"
codes=$(exit_codes "$j" | sort | uniq -c | tr -s ' ')
[ "$codes" = " 3 0:0" ] || fail "array $j exit codes: $codes"
dir=$W/results/$j
[ -f "$dir/submit.cmd" ] || fail "no submit.cmd in $dir"
names="micro_dense_d0.01_m4K_N1_n2 micro_agsparse_d0.01_m4K_N1_n2 micro_sparcml_d0.01_m4K_N1_n2"
declare -A first
for n in $names; do
    f=$dir/$n.h5
    [ -f "$f" ] || fail "missing $f (have: $(ls "$dir"))"
    [ "$(h5attr "$f" complete)" = 1 ] || fail "$f not complete"
    [ "$(h5attr "$f" slurm_array_job_id)" = "$j" ] || fail "$f: slurm_array_job_id $(h5attr "$f" slurm_array_job_id)"
    [ "$(h5attr "$f" slurm_partition)" = knl ] || fail "$f: partition"
    first[$n]=$(stat -c '%i %Y' "$f")
done
tasks=$(for n in $names; do h5attr "$dir/$n.h5" slurm_array_task_id; done | sort | tr '\n' ' ')
[ "$tasks" = "0 1 2 " ] || fail "array task ids in the archives: $tasks"
note "3 tasks, 3 complete archives"

# An interrupted run: one archive not complete (complete = 0) and a stale
# temporary file beside it.
/usr/bin/python3 -c 'import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    f.attrs["complete"] = 0' "$dir/micro_agsparse_d0.01_m4K_N1_n2.h5"
touch "$dir/micro_agsparse_d0.01_m4K_N1_n2.h5.tmp.12345"
sleep 1
j2=$("$JS/submit" --resume "$dir") || fail "jobscripts/submit --resume"
[ "$j2" != "$j" ] || fail "resubmission reused job id $j"
note "resubmitted as $j2"
wait_jobs 200 "$j2"
codes=$(exit_codes "$j2" | sort | uniq -c | tr -s ' ')
[ "$codes" = " 3 0:0" ] || fail "array $j2 exit codes: $codes"
for n in micro_dense_d0.01_m4K_N1_n2 micro_sparcml_d0.01_m4K_N1_n2; do
    [ "$(stat -c '%i %Y' "$dir/$n.h5")" = "${first[$n]}" ] || fail "$n.h5 was rewritten by the resubmission"
done
grep -l "skip micro_" "$W"/results/*-"${j2}"_*.out | wc -l | grep -qx 2 || fail "want 2 skipped tasks in the outputs of $j2"
f=$dir/micro_agsparse_d0.01_m4K_N1_n2.h5
[ "$(h5attr "$f" complete)" = 1 ] || fail "$f was not redone"
[ "$(h5attr "$f" slurm_array_job_id)" = "$j2" ] || fail "$f: not from the resubmission"
assert_no_partial "$dir"
note "resubmission: 2 skipped, the incomplete one redone"
exit 0
