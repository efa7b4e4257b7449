#!/bin/sh
# rb_micro exit codes on real MPI runs: 0 when the exact reducers validate,
# 1 when a wrong value is injected (the validator works), 124 on --timeout, 2 when
# ranks were started with different command lines or RB_MALLOC settings,
# or RB_MALLOC is neither keep nor default (on any one rank); 1, named,
# when standard output cannot be written (/dev/full, closed) under -o none,
# where the table is the only output (rb_train alike).  One process
# without mpirun: mpirun's own forwarding swallows a rank's write errors.
micro="$top_builddir/benchmarks/rb_micro"
fail=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

"$MPIRUN" 3 "$micro" -o none --reducer dense -m 4K:16K -i 2 -x 1 -c >"$tmp/ok" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: valid run exited $rc"; cat "$tmp/ok"; fail=1; }
# Three sizes, each a row whose #wrong column is 0.
rows=$(grep -c -E '^ +[0-9]+ ' "$tmp/ok")
[ "$rows" -eq 3 ] || { echo "FAIL: expected 3 table rows, got $rows"; cat "$tmp/ok"; fail=1; }
awk '/^ +[0-9]+ / { if ($14 != 0) bad = 1 } END { exit bad }' "$tmp/ok" ||
    { echo "FAIL: #wrong not 0 in a valid run"; fail=1; }

RB_TEST_CORRUPT_RESULT=1 "$MPIRUN" 2 -x RB_TEST_CORRUPT_RESULT "$micro" -o none --reducer dense -m 4K:4K -i 2 -x 0 >"$tmp/bad" 2>&1
rc=$?
[ $rc -eq 1 ] || { echo "FAIL: corrupted result exited $rc, expected 1"; cat "$tmp/bad"; fail=1; }
awk '/^ +[0-9]+ / { if ($14 >= 1) found = 1 } END { exit !found }' "$tmp/bad" ||
    { echo "FAIL: #wrong not counted for a corrupted result"; cat "$tmp/bad"; fail=1; }

"$MPIRUN" 2 "$micro" -o none --reducer dense -m 64M:64M -i 100000 -x 0 --no-check --timeout 1 >"$tmp/to" 2>&1
rc=$?
[ $rc -eq 124 ] || { echo "FAIL: --timeout 1 exited $rc, expected 124"; cat "$tmp/to"; fail=1; }

mpirun --bind-to none --mca btl self,vader -np 1 "$micro" -o none -i 2 : -np 1 "$micro" -o none -i 3 >"$tmp/mm" 2>&1
rc=$?
[ $rc -eq 2 ] || { echo "FAIL: ranks with different command lines exited $rc, expected 2"; cat "$tmp/mm"; fail=1; }
grep -q "different command lines" "$tmp/mm" || { echo "FAIL: no message for differing command lines"; fail=1; }

# The allocator policy (RB_MALLOC): a wrong value, and ranks that differ.
RB_MALLOC=sometimes "$MPIRUN" 2 -x RB_MALLOC "$micro" -o none -i 2 >"$tmp/ma" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "RB_MALLOC must be unset, 'keep' or 'default' on every rank (rank 0 has 'sometimes')" "$tmp/ma" ||
    { echo "FAIL: RB_MALLOC=sometimes exited $rc"; cat "$tmp/ma"; fail=1; }
# A wrong value on one rank only: every rank stops with the message (it
# used to stop alone in MPI_Finalize while the others waited for ever).
for bad in 0 1; do
    if [ $bad -eq 0 ]; then e0=sometimes e1=keep; else e0=keep e1=sometimes; fi
    timeout 60 mpirun --bind-to none --mca btl self,vader -np 1 -x RB_MALLOC=$e0 "$micro" -o none -i 2 : \
        -np 1 -x RB_MALLOC=$e1 "$micro" -o none -i 2 >"$tmp/mc" 2>&1
    rc=$?
    [ $rc -eq 2 ] && grep -q "RB_MALLOC must be unset, 'keep' or 'default' on every rank" "$tmp/mc" ||
        { echo "FAIL: RB_MALLOC=sometimes on rank $bad only exited $rc (124: hung)"; cat "$tmp/mc"; fail=1; }
done
mpirun --bind-to none --mca btl self,vader -np 1 -x RB_MALLOC=default "$micro" -o none -i 2 : \
    -np 1 -x RB_MALLOC=keep "$micro" -o none -i 2 >"$tmp/mb" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "different RB_MALLOC settings" "$tmp/mb" ||
    { echo "FAIL: ranks with different RB_MALLOC exited $rc"; cat "$tmp/mb"; fail=1; }
train="$top_builddir/benchmarks/rb_train"
for out in full closed; do
    for prog in micro train; do
        if [ $prog = micro ]; then set -- "$micro" --reducer dense -m 4K:16K -i 2 -x 1 -o none
        else set -- "$train" --model mlp --iterations 3 -o none; fi
        if [ $out = full ]; then "$@" >/dev/full 2>"$tmp/so"; else "$@" >&- 2>"$tmp/so"; fi
        rc=$?
        [ $rc -eq 1 ] && grep -q "cannot write the results to standard output" "$tmp/so" ||
            { echo "FAIL: rb_$prog -o none with stdout $out exited $rc"; cat "$tmp/so"; fail=1; }
    done
done
exit $fail
