# Sourced by the archive tests: paths, a scratch directory, helpers.
micro="$top_builddir/benchmarks/rb_micro"
rbarchive="$top_srcdir/analysis/rb-archive"
schema="$top_srcdir/docs/archive-schema.json"
check="$top_srcdir/tests/archive/archive_schema_check.py"
PY=/usr/bin/python3
fail=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
[ -x "$micro" ] || { echo "no $micro" >&2; exit 99; }
$PY -c 'import h5py, numpy, pandas' 2>/dev/null ||
    { echo "SKIP: /usr/bin/python3 lacks h5py/numpy/pandas (Debian: python3-h5py python3-pandas)" >&2; exit 77; }
bad() { echo "FAIL: $*"; fail=1; }
# Lines of the stdout table (first column a size).
table_rows() { grep -c -E '^ +[0-9]+ ' "$1"; }
