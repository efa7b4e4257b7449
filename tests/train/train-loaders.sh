#!/bin/sh
# Loaders on small real files: exact round trips, and truncated / flipped /
# wrong-format inputs rejected with a message naming the file (never a
# crash; run under the sanitizer build too).
fm=/usr/share/datasets/fashion-mnist fo=/usr/share/games/fortunes
for f in "$fm/train-images-idx3-ubyte.gz" "$fo/fortunes"; do
    [ -r "$f" ] || { echo "SKIP: $f missing (Debian dataset-fashion-mnist, fortunes)" >&2; exit 77; }
done
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
"${top_builddir:-.}/tests/train/train_loader_fuzz" "$fm" "$fo" "$tmp"
