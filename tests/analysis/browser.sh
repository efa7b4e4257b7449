#!/bin/sh
# report.html as a reader sees it: real rb_micro and rb_train runs (the
# S2 paper's setting in 6 launches, so intervals exist; an
# element-sparse size sweep; gossip with a modelled compute phase; short
# training runs, two seeds each), rb-report, then browser_check.py opens
# report.html in headless Chromium at 1280 px and checks that every figure
# loads, nothing overflows its box, no Markdown is left as text, and the
# page has its contents list, verdict classes and sticky table headers;
# then again with the page's print style at A4 width, where nothing scrolls.
# RB_BROWSER_KEEP=DIR keeps the runs (DIR/results), the report (DIR/report)
# and a screenshot of it (DIR/report/report.png).
micro="$top_builddir/benchmarks/rb_micro"
train="$top_builddir/benchmarks/rb_train"
report="$top_srcdir/analysis/rb-report"
check="$top_srcdir/tests/analysis/browser_check.py"
py=/usr/bin/python3
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

[ -x "$micro" ] || { echo "SKIP: $micro not built" >&2; exit 77; }
$py -c 'import h5py, numpy, pandas, matplotlib' 2>/dev/null ||
    { echo "SKIP: Debian python3-h5py/numpy/pandas/matplotlib missing" >&2; exit 77; }
chromium=$(command -v chromium || command -v chromium-browser) ||
    { echo "SKIP: no chromium (Debian package chromium, tests/install-deps.sh)" >&2; exit 77; }

keep="${RB_BROWSER_KEEP:-$tmp}"
d="$keep/results"
out="$keep/report"
mkdir -p "$d"
micro() {  # NP FILE ARGS...: rb_micro, or FAIL
    np=$1; file=$2; shift 2
    "$MPIRUN" "$np" "$micro" -q -i 3 -x 1 -o "$file" "$@" >"$tmp/micro.out" 2>&1 ||
        { echo "FAIL: rb_micro $*:"; cat "$tmp/micro.out"; exit 1; }
}
paper="--shape 2048x64 --layout row --density 0.02 -O sketch_width_mode=fraction -O sketch_width=0.005"
# Six launches (intervals over launches, as the headline asks for).
for i in 1 2 3 4 5 6; do
    # shellcheck disable=SC2086
    micro 2 "$d/paper-$i.h5" --repeat 2 --reducer none,dense,agsparse,sparcml,s2 $paper
done
micro 2 "$d/sweep.h5" --repeat 6 --reducer dense,agsparse,s2,gossip --layout row --cols 16 \
    --density 0.01 -m 4096:262144
micro 3 "$d/sweep3.h5" --reducer dense,agsparse,s2 --layout row --cols 16 --density 0.01 -m 4096:65536
micro 2 "$d/gossip.h5" --repeat 6 --reducer none,gossip --compute 0.001 -m 64K
if [ -x "$train" ] && [ -d /usr/share/datasets/fashion-mnist ]; then
    for r in none gossip s2 agsparse; do
        for seed in 1 2; do
            "$MPIRUN" 2 "$train" --model mlp --reducer $r --epochs 1 --train-limit 800 \
                --test-limit 200 --lr-warmup 2 --eval-every 5 --seed $seed \
                -o "$d/train-$r-$seed.h5" >"$tmp/train.out" 2>&1 ||
                { echo "FAIL: rb_train --reducer $r:"; tail -3 "$tmp/train.out"; exit 1; }
        done
    done
else
    echo "note: rb_train or Fashion-MNIST absent: no training section"
fi
"$report" "$d" -o "$out" >"$tmp/report.out" 2>&1 ||
    { echo "FAIL: rb-report:"; cat "$tmp/report.out"; exit 1; }
fail=0
$py "$check" --chromium "$chromium" "$out/report.html" \
    ${RB_BROWSER_KEEP:+--screenshot "$out/report.png"} || fail=1
# On paper nothing scrolls: with the print style every table must fit A4.
$py "$check" --chromium "$chromium" --print "$out/report.html" || fail=1
exit $fail
