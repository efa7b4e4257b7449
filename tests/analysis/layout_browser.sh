#!/bin/sh
# report.html as a reader at a 1280 px screen sees it, on a synthetic
# results directory with a bit of every section (report_synth.py: no build
# needed): browser_check.py opens it in headless Chromium and fails if the
# page is taller than 12,000 px, if any table or figure is wider than the
# box it sits in (folded tables opened), if rb-report marked a figure as
# having a title, label or legend cut (data-clipped), or on any of its
# other checks (figures load, contents list, verdict classes...).
# RB_LAYOUT_KEEP=DIR keeps the results and the report there.
py=/usr/bin/python3
here="$top_srcdir/tests/analysis"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

$py -c 'import h5py, numpy, pandas, matplotlib' 2>/dev/null ||
    { echo "SKIP: Debian python3-h5py/numpy/pandas/matplotlib missing" >&2; exit 77; }
chromium=$(command -v chromium || command -v chromium-browser) ||
    { echo "SKIP: no chromium (Debian package chromium, tests/install-deps.sh)" >&2; exit 77; }

keep="${RB_LAYOUT_KEEP:-$tmp}"
$py "$here/report_synth.py" "$keep/results" >"$tmp/synth.out" 2>&1 ||
    { echo "FAIL: report_synth.py:"; cat "$tmp/synth.out"; exit 1; }
$py "$top_srcdir/analysis/rb-report" "$keep/results" -o "$keep/report" >"$tmp/report.out" 2>&1 ||
    { echo "FAIL: rb-report:"; cat "$tmp/report.out"; exit 1; }
$py "$here/browser_check.py" --chromium "$chromium" --max-height 12000 "$keep/report/report.html"
