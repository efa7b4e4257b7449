#!/bin/sh
# rb_train --model embedlm: the dictd corpus loader refuses bad input by
# name; at 2 ranks dense and an exact sparse reducer (agsparse) train it
# to the same numbers; the archive records an embedding of >= 32768 rows
# holding >= 80% of the parameters, its gradient handed over as rows, and
# the row density of the batches, in the layout results/README.md documents.
set -u
dict=/usr/share/dictd/gcide.dict.dz
[ -r "$dict" ] || { echo "SKIP: $dict missing (Debian package dict-gcide)" >&2; exit 77; }
train="${top_builddir:-.}/benchmarks/rb_train"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
field() { sed -n "s/^final: .* $1 \([^ ]*\).*/\1/p" "$2"; }

# --- the loader refuses bad input: exit 2, the file and the fault named ---
# refuses DATA TEXT: rb_train (one rank, no mpirun) on --data DATA exits 2
# saying TEXT.
refuses() {
    "$train" -o none --model embedlm --data "$1" --iterations 1 > "$tmp/out" 2>&1
    rc=$?
    [ $rc -eq 2 ] && grep -q -- "$2" "$tmp/out" ||
        bad "--data $1: exit $rc, expected 2 and '$2': $(cat "$tmp/out")"
}
# A dictd dictionary of N entries "wordI \pron\ [note] text I." (index
# offsets and lengths in dictd's base64), plain and dictzip'ed (gzip).
make_dict() { # NAME N
    /usr/bin/python3 - "$tmp/$1" "$2" <<'PY'
import gzip, sys
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
def b64(v):
    s = ""
    while True:
        s = B64[v % 64] + s
        v //= 64
        if not v:
            return s
stem, n = sys.argv[1], int(sys.argv[2])
data, index = b"00-database-url\n   nowhere\n", [("00-database-url", 0, 27)]
for i in range(n):
    e = ("word%d \\Word%d\\, n. [Note %d.]\n   The text of entry %d, in words.\n" % (i, i, i, i)).encode()
    index.append(("word%d" % i, len(data), len(e)))
    data += e
open(stem + ".dict", "wb").write(data)
open(stem + ".dict.dz", "wb").write(gzip.compress(data))
open(stem + ".index", "w").write("".join("%s\t%s\t%s\n" % (h, b64(o), b64(l)) for h, o, l in index))
PY
}
refuses "$tmp/nosuch.dict.dz" "nosuch.dict.dz: cannot open"
mkdir "$tmp/dir.dict.dz"
refuses "$tmp/dir.dict.dz" "dir.dict.dz: not a regular file"
refuses "$tmp/name.txt" "name.txt: not a dictd dictionary"
make_dict small 10                      # 10 entries: validation (entry 18) and test empty
refuses "$tmp/small.dict.dz" "small.dict.dz: the validation split holds no words"
make_dict ok 60
refuses "$tmp/ok.dict" "ok.dict.*--out-vocab 1024 exceeds"   # plain .dict read too
head -c 100 "$tmp/ok.dict.dz" > "$tmp/cut.dict.dz" && cp "$tmp/ok.index" "$tmp/cut.index"
refuses "$tmp/cut.dict.dz" "cut.dict.dz: corrupt or truncated"
printf 'word\tA\n' > "$tmp/ok.index"
refuses "$tmp/ok.dict.dz" "ok.index: line 1: not"
printf 'word\tA\tzzzz\n' > "$tmp/ok.index"
refuses "$tmp/ok.dict.dz" "ok.index: line 1: entry .* beyond the end"
rm "$tmp/ok.index"
refuses "$tmp/ok.dict.dz" "ok.index: cannot open"
"$train" -o none --model embedlm --embed-input dense --iterations 1 > "$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q "embed-input" "$tmp/out" || bad "embedlm --embed-input dense: $(cat "$tmp/out")"

# --- dense and agsparse agree at 2 ranks; the archive -----------------------
short="--iterations 20 --eval-every 10 --test-limit 2000"
for red in dense agsparse; do
    "$MPIRUN" 2 "$train" --model embedlm --reducer $red $short -o "$tmp/$red.h5" \
        > "$tmp/$red" 2>&1 || bad "embedlm $red exits $?: $(tail -n 3 "$tmp/$red")"
done
for f in train_loss val_perplexity param_sum param_sq; do
    a=$(field $f "$tmp/dense") b=$(field $f "$tmp/agsparse")
    # the same sums in another order: float rounding only
    awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d; m = a < 0 ? -a : a;
        exit !(a != "" && d <= 1e-5 * m + 1e-4) }' ||
        bad "dense and agsparse differ in $f: '$a' vs '$b'"
done
/usr/bin/python3 - "$tmp/dense.h5" "$tmp/agsparse.h5" <<'PY' || bad "archive /train: see above"
import sys, h5py, numpy as np, pandas as pd
for path in sys.argv[1:]:
    t = h5py.File(path, "r")["train"]
    a = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in t.attrs.items()}
    emb, dense, dim = int(a["embedding_parameters"]), int(a["dense_parameters"]), int(a["embed_dim"])
    assert a["model"] == "embedlm" and a["embed_input"] == "rows", a
    assert emb // dim >= 32768 and int(a["embed_rows"]) == emb // dim, (emb, dim, a["embed_rows"])
    assert emb / (emb + dense) >= 0.8, (emb, dense)
    assert abs(a["embed_share"] - emb / (emb + dense)) < 1e-9, a["embed_share"]
    c = pd.DataFrame(t["curves"][:])
    assert list(c.iteration) == [10, 20] and (c.val_perplexity > 1).all(), c
    p = pd.DataFrame(t["phases"][:])
    density = np.median(p.embed_nnz) / emb   # analysis/rbanalysis/training.py's
    # 128 samples x 8 context words touch a few hundred of the 32768 rows
    assert 0.002 < density < 0.05 and (p.embed_nnz % dim == 0).all(), (density, p.embed_nnz)
    assert abs(a["embed_row_density"] - density) < 1e-12, (a["embed_row_density"], density)
    assert (p.bytes_sent > 0).all(), p
PY
# --- --dense-reducer: the dense layers beside the embedding -----------------
# agsparse on the embedding with dense allreduce on the rest trains to dense's
# numbers; s2 the same way sends the dense layers' allreduce beside its
# sketch (more bytes than s2 sketching the 197,760 dense parameters into
# 0.0032 of them), and the archive says which reducer took them.
"$MPIRUN" 2 "$train" --model embedlm --reducer agsparse --dense-reducer dense $short \
    -o "$tmp/agd.h5" > "$tmp/agd" 2>&1 || bad "agsparse --dense-reducer dense exits $?: $(tail -n 3 "$tmp/agd")"
for f in val_perplexity param_sum; do
    a=$(field $f "$tmp/dense") b=$(field $f "$tmp/agd")
    awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d; m = a < 0 ? -a : a;
        exit !(a != "" && d <= 1e-5 * m + 1e-4) }' ||
        bad "dense and agsparse --dense-reducer dense differ in $f: '$a' vs '$b'"
done
sk="-O sketch_width_mode=fraction -O sketch_width=0.0032"
for d in same dense; do
    "$MPIRUN" 2 "$train" --model embedlm --reducer s2 $sk --dense-reducer $d $short \
        -o "$tmp/s2-$d.h5" > "$tmp/s2-$d" 2>&1 || bad "s2 --dense-reducer $d exits $?: $(tail -n 3 "$tmp/s2-$d")"
done
/usr/bin/python3 - "$tmp/s2-same.h5" "$tmp/s2-dense.h5" "$tmp/agd.h5" <<'PY' || bad "--dense-reducer archives: see above"
import sys, h5py, numpy as np
def grp(path):
    return h5py.File(path, "r")["train"]
same, dense, agd = (grp(p) for p in sys.argv[1:])
attr = lambda g: g.attrs["dense_reducer"].decode() if isinstance(g.attrs["dense_reducer"], bytes) \
    else g.attrs["dense_reducer"]
assert (attr(same), attr(dense), attr(agd)) == ("s2", "dense", "dense"), (attr(same), attr(dense))
n = int(dense.attrs["dense_parameters"])
extra = np.median(dense["phases"]["bytes_sent"]) - np.median(same["phases"]["bytes_sent"])
# an allreduce of n floats sends at least 4n (p - 1) / p bytes a rank; the
# sketch it replaces held 0.0032 n counters
assert extra >= 4 * n * 0.5 - 4 * 0.0032 * n, (extra, n)
PY
for args in "--model lenet --reducer agsparse --dense-reducer dense:has no embedding" \
            "--model embedlm --reducer gossip --dense-reducer dense:gossip mixes all" \
            "--model embedlm --dense-reducer nosuch:not a reducer"; do
    "$train" -o none ${args%%:*} --iterations 1 > "$tmp/out" 2>&1
    rc=$?
    [ $rc -eq 2 ] && grep -q -- "${args#*:}" "$tmp/out" || bad "${args%%:*}: exit $rc: $(cat "$tmp/out")"
done

# the archive's layout is the one results/README.md documents
/usr/bin/python3 "${top_srcdir:-.}/tests/archive/archive_schema_check.py" "${top_srcdir:-.}/docs/archive-schema.json" \
    "$tmp/dense.h5" "$tmp/agsparse.h5" || bad "embedlm archives do not conform to results/README.md"
exit $fail
