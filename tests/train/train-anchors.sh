#!/bin/sh
# The PyTorch anchors (benchmarks/anchors/torch_*.py), where /usr/bin/python3
# imports torch (SKIP otherwise: they are a benchmark users may run, not
# part of the build): --help, bad options (exit 2, one line naming the
# option), a missing data directory (a message naming it, no traceback),
# and LeNet after 3 steps equal to rb_train's (same initial parameters,
# samples, order and updates: the parameter checksums agree to 6 digits).
. "${top_srcdir:-.}/tests/train/train_lib.sh"
py=/usr/bin/python3
anchors="${top_srcdir:-.}/benchmarks/anchors"
"$py" -c 'import torch' 2>/dev/null ||
    { echo "SKIP: $py cannot import torch (Debian python3-torch)" >&2; exit 77; }

for s in torch_lenet torch_wordlm torch_compare; do
    "$py" "$anchors/$s.py" --help >"$tmp/help" 2>&1 || bad "$s --help exits non-zero"
    grep -q -- '--threads' "$tmp/help" || bad "$s --help does not list --threads"
    for args in "--bogus" "--threads 0" "--threads x"; do
        # shellcheck disable=SC2086
        "$py" "$anchors/$s.py" $args >"$tmp/out" 2>"$tmp/err"
        rc=$?
        opt=${args%% *}
        [ $rc -eq 2 ] || bad "$s $args: exit $rc, expected 2"
        [ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "$s $args: not one line: $(cat "$tmp/err")"
        grep -q -- "$opt" "$tmp/err" || bad "$s $args: message does not name $opt: $(cat "$tmp/err")"
    done
done
"$py" "$anchors/torch_lenet.py" --data "$tmp/none" >"$tmp/out" 2>"$tmp/err" &&
    bad "torch_lenet.py with a missing --data exits 0"
grep -q "$tmp/none" "$tmp/err" || bad "missing --data: message does not name it: $(cat "$tmp/err")"
grep -q Traceback "$tmp/err" && bad "missing --data: a traceback, not a message"

"$train" --model lenet --iterations 3 --train-limit 256 --test-limit 64 -o none >"$tmp/rb" 2>&1 ||
    bad "rb_train lenet, 3 steps: $(tail -3 "$tmp/rb")"
"$py" "$anchors/torch_lenet.py" --iterations 3 --train-limit 256 --test-limit 64 >"$tmp/py" 2>&1 ||
    bad "torch_lenet.py, 3 steps: $(tail -3 "$tmp/py")"
grep -q '^timing: rank 0 forward+backward [0-9.]* s' "$tmp/py" || bad "torch_lenet.py: no timing: line"
for f in param_sum param_sq train_loss; do
    a=$(field "$f" "$tmp/rb") b=$(field "$f" "$tmp/py")
    "$py" -c "import sys; a, b = float('$a'), float('$b'); sys.exit(abs(a - b) > 1e-6 * max(1.0, abs(a)))" ||
        bad "lenet after 3 steps: $f rb_train $a, PyTorch $b"
done
exit $fail
