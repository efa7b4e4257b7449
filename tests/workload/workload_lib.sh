# Sourced by the tests that feed recorded or skewed gradients to the
# programs (tests/workload/, tests/lib/oktopk_topk.sh): their paths, a
# scratch directory, and the skips each names with its reason (exit 77).
micro="$top_builddir/benchmarks/rb_micro"
train="$top_builddir/benchmarks/rb_train"
py=/usr/bin/python3
fo=/usr/share/games/fortunes
fail=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

skip() { echo "SKIP: $*" >&2; exit 77; }
need_micro() { [ -x "$micro" ] || skip "$micro not built"; }
# rb_train and the corpus it trains wordlm on.
need_train() {
    [ -x "$train" ] || skip "$train not built (no BLAS)"
    [ -r "$fo/fortunes" ] || skip "$fo/fortunes missing (Debian fortunes)"
}
# need_python "h5py, numpy" "python3-h5py/numpy": Debian's modules.
need_python() { $py -c "import $1" 2>/dev/null || skip "Debian $2 missing"; }
need_torch() { need_python torch python3-torch; }
