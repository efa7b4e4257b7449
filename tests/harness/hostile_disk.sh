#!/bin/sh
# A full disk: rb_micro (-o, --save-result, -J), rb_train (-o, --record-
# gradients), rb-report -o (a new directory, an earlier report) on a 40 KiB
# tmpfs (root only). The helpers and what a case must end in:
# tests/harness/hostile_lib.sh.
. "$top_srcdir/tests/harness/hostile_lib.sh"
hostile_full
hostile_img28
hostile_words
if [ -n "$full" ]; then
    $T "$MPIRUN" 2 "$micro" --reducer dense -m 4K:64K -i 2 -x 0 -q -P none -o "$full/m.h5" >"$tmp/o" 2>&1
    rc=$?
    # the flush after a row meets the full disk before the end does
    why=$(named "$tmp/o" $rc 1 "archive: cannot \(flush\|finish\) .*: No space left on device") || true
    [ -z "$(ls -A "$full")" ] || why="$why; left behind: $(ls -A "$full")"
    verdict "rb_micro -o on a full disk"
    rm -f "$full"/*
    # --save-result and -J on a full disk: named with the system's reason
    # (it was "invalid argument"), no partial file left (a 4 KiB piece of
    # the 64 KiB result stayed).
    for opt in --save-result -J; do
        dd if=/dev/zero of="$full/filler" bs=1k count=64 2>/dev/null   # to the brim
        out=none; [ $opt = -J ] && out="$tmp/fullj.h5"
        $T "$MPIRUN" 2 "$micro" --reducer dense -m 64K:64K -i 2 -x 0 -q -P none -o "$out" \
            $opt "$full/r" >"$tmp/o" 2>&1
        rc=$?
        why=$(named "$tmp/o" $rc 1 "rb_micro: rank 0: .*: cannot write .*No space left on device") || true
        grep -q -- "-J: -J:\|invalid argument" "$tmp/o" && why="$why; message: $(grep "^rb_micro: " "$tmp/o")"
        [ "$(ls -A "$full")" = filler ] || why="$why; left behind: $(ls -A "$full")"
        verdict "rb_micro $opt on a full disk"
        rm -f "$full"/*
    done
    if [ -x "$train" ]; then
        # 16 KiB taken: the metadata written at the start fits, the whole
        # archive (about 27 KiB) does not.
        dd if=/dev/zero of="$full/filler" bs=1k count=16 2>/dev/null
        $T "$MPIRUN" 2 "$train" --model mlp --data "$tmp/img28" --train-limit 256 --test-limit 64 \
            --batch 16 --iterations 8 -o "$full/t.h5" >"$tmp/o" 2>&1
        rc=$?
        # Exit 1 when the end does not fit, 2 if even the start did not.
        [ $rc -eq 2 ] && rc=1
        why=$(named "$tmp/o" $rc 1 "archive: .*No space left on device") || true
        [ "$(ls -A "$full")" = filler ] || why="$why; left behind: $(ls -A "$full")"
        verdict "rb_train -o on a full disk"
        rm -f "$full"/*
        # --record-gradients on a full disk: HDF5's exit handler crashed
        # (SIGSEGV) on the trace whose close failed, its error stack was
        # printed, and a broken trace was left at the path.
        $T "$MPIRUN" 2 "$train" $lm --data "$tmp/words" --iterations 20 -o none \
            --record-gradients "$full/t.h5" >"$tmp/o" 2>&1
        rc=$?
        why=$(named "$tmp/o" $rc 1 "rb_train: rank 0: --record-gradients: .*t.h5: cannot finish the trace file") || true
        grep -q "HDF5-DIAG" "$tmp/o" && why="$why; HDF5's error stack printed"
        [ -z "$(ls -A "$full")" ] || why="$why; left behind: $(ls -A "$full")"
        verdict "rb_train --record-gradients on a full disk"
        rm -f "$full"/*
    fi
fi

"$MPIRUN" 2 "$micro" $small -o "$tmp/sound.h5" >/dev/null 2>&1 || bad "no sound archive"

# rb-report -o on a full disk: the report is written whole or not at all (it
# left a directory of some tables and no figure); a directory holding an
# earlier report, and a file of someone else, stays as it was.
if [ -n "$full" ]; then
    rm -rf "$full"/*
    $T "$rbreport" "$tmp/sound.h5" -o "$full/rep" >"$tmp/o" 2>&1
    rc=$?
    why=$(named "$tmp/o" $rc 2 "rb-report: cannot write the report into .*rep: .*No space left on device") || true
    [ -z "$(ls -A "$full")" ] || why="$why; left behind: $(ls -A "$full" "$full"/* | tr '\n' ' ')"
    verdict "rb-report -o a new directory on a full disk"
    rm -rf "$full"/*
    mkdir -p "$full/old/tables"
    for f in report.md report.html latency_G1.png tables/runs.csv notes.txt; do echo "earlier $f" >"$full/old/$f"; done
    before=$(cd "$full/old" && find . | sort && cat report.md report.html latency_G1.png tables/runs.csv notes.txt)
    $T "$rbreport" "$tmp/sound.h5" -o "$full/old" >"$tmp/o" 2>&1
    rc=$?
    why=$(named "$tmp/o" $rc 2 "rb-report: cannot write the report into .*old: .*No space left on device") || true
    after=$(cd "$full/old" && find . | sort && cat report.md report.html latency_G1.png tables/runs.csv notes.txt 2>&1)
    [ "$before" = "$after" ] || why="$why; the earlier report changed: $(cd "$full/old" && find . | tr '\n' ' ')"
    verdict "rb-report -o an earlier report on a full disk"
    rm -rf "$full"/*
fi
exit $fail
