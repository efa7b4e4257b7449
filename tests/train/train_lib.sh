# Sourced by tests/train/*.sh: dataset paths (SKIP without Fashion-MNIST),
# rb_train, a temporary directory removed on exit, and the result helpers.
fm=/usr/share/datasets/fashion-mnist fo=/usr/share/games/fortunes
[ -r "$fm/train-images-idx3-ubyte.gz" ] || { echo "SKIP: $fm missing" >&2; exit 77; }
train="${top_builddir:-.}/benchmarks/rb_train"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# field NAME FILE: NAME's value on rb_train's "final:" line.
field() { sed -n "s/^final: .* $1 \([^ ]*\).*/\1/p" "$2"; }
