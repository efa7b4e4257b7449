#!/bin/sh
# The analysis tools' arguments: rb-report's targets nan/-5/inf; rb-archive
# merge refused before reading; rb-torch-trace --lr nan or diverging, --text
# a device, -o in a missing directory or on a full disk. The helpers and
# what a case must end in: tests/harness/hostile_lib.sh.
. "$top_srcdir/tests/harness/hostile_lib.sh"
hostile_full
hostile_good
# ------------------------------------------------------------------ analysis tools' arguments
# rb-report's targets: nan was taken (no run reached it), -5 reached by
# every run at its start; refused (exit 2) before anything is read.
for v in nan -5 101 abc; do
    $T "$rbreport" "$good" -o "$tmp/rep-t" --target-accuracy "$v" >"$tmp/o" 2>&1
    expect "rb-report --target-accuracy $v" "$tmp/o" $? 2 "argument --target-accuracy: '$v' is not a"
done
for v in nan inf 0.5; do
    $T "$rbreport" "$good" -o "$tmp/rep-t" --target-perplexity "$v" >"$tmp/o" 2>&1
    expect "rb-report --target-perplexity $v" "$tmp/o" $? 2 "argument --target-perplexity: '$v' is not a perplexity"
done
# rb-archive merge -o /proc/x.h5: root may "write" there by access(); the
# merge read every input, then failed (exit 1).  Now refused first.
$T "$rbarchive" merge -o /proc/m.h5 "$good" >"$tmp/o" 2>&1
expect "rb-archive merge -o /proc/m.h5" "$tmp/o" $? 2 "cannot write /proc/m.h5: No such file or directory"
# rb-torch-trace: a learning rate that is no number, a diverging one (the
# trace was written, marked complete, with NaN values rb_micro refuses), a
# --text that is a device (a traceback), an output in a missing directory
# (found after training, exit 1).
if $PY -c 'import torch' 2>/dev/null; then
    tt="$top_srcdir/analysis/rb-torch-trace"
    mkdir "$tmp/tt"
    $T $PY "$tt" -o "$tmp/tt/a.h5" --lr nan --steps 1 >"$tmp/o" 2>&1
    expect "rb-torch-trace --lr nan" "$tmp/o" $? 2 "--lr must be a finite number > 0"
    $T $PY "$tt" -o "$tmp/tt/b.h5" --lr 1e30 --steps 3 >"$tmp/o" 2>&1
    rc=$?
    why=$(named "$tmp/o" $rc 1 "is not finite (NaN or Inf: the training diverged") || true
    [ -e "$tmp/tt/b.h5" ] && why="$why; a trace was written"
    verdict "rb-torch-trace --lr 1e30 (diverges)"
    $T $PY "$tt" -o "$tmp/tt/c.h5" --text /dev/null --steps 1 >"$tmp/o" 2>&1
    expect "rb-torch-trace --text /dev/null" "$tmp/o" $? 2 "--text /dev/null is neither a file nor a directory"
    $T $PY "$tt" -o "$tmp/tt/no/d.h5" --steps 1 >"$tmp/o" 2>&1
    expect "rb-torch-trace -o in a missing directory" "$tmp/o" $? 2 "cannot write .*d.h5: directory .*no does not exist"
    [ -z "$(ls -A "$tmp/tt")" ] || bad "rb-torch-trace: left behind: $(ls -A "$tmp/tt")"
    if [ -n "$full" ]; then
        # A full disk: HDF5 crashed the process at exit (SIGSEGV) and left a
        # partial trace; now named, nothing left.
        $T $PY "$tt" -o "$full/t.h5" --steps 2 >"$tmp/o" 2>&1
        rc=$?
        why=$(named "$tmp/o" $rc 1 "rb-torch-trace: cannot write .*t.h5: No space left on device") || true
        [ -z "$(ls -A "$full")" ] || why="$why; left behind: $(ls -A "$full")"
        verdict "rb-torch-trace -o on a full disk"
        rm -f "$full"/*
    fi
else
    echo "note: no PyTorch for /usr/bin/python3 (Debian python3-torch): rb-torch-trace's cases are not run"
fi
exit $fail
