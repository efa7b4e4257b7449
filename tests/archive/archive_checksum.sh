#!/bin/bash
# Every dataset of an rb_micro and an rb_train archive with data in it
# carries HDF5's fletcher32 checksum; one bit flipped in the stored data of
# /micro/results, of a /micro/samples dataset or of /train/curves is
# refused by name: rb-archive list exits non-zero naming the file and the
# checksum, rb-report refuses the file and writes no report from it (a
# bit flipped without checksums passed as a value: 13.61 us read 27.22).
# A file without read permission is named as such, not as corrupt.
set -u
. "$top_srcdir/tests/archive/archive_lib.sh"
train="$top_builddir/benchmarks/rb_train"
"$MPIRUN" 2 "$micro" --reducer dense -m 4K:64K -i 5 -x 1 -q -o "$tmp/m.h5" >"$tmp/m.out" 2>&1 ||
    { bad "rb_micro: $(tail -3 "$tmp/m.out")"; exit 1; }
"$MPIRUN" 2 "$train" --model mlp --iterations 60 --eval-every 20 -o "$tmp/t.h5" >"$tmp/t.out" 2>&1 ||
    { bad "rb_train: $(tail -3 "$tmp/t.out")"; exit 1; }
$PY - "$tmp/m.h5" "$tmp/t.h5" <<'PY' || bad "a dataset without a checksum"
import sys, h5py
for path in sys.argv[1:]:
    seen = []
    def visit(name, obj):
        if isinstance(obj, h5py.Dataset) and obj.shape and obj.size > 0:
            assert obj.fletcher32, "%s:/%s has no fletcher32 checksum" % (path, name)
            seen.append(name)
    with h5py.File(path, "r") as f:
        f.visititems(visit)
    assert len(seen) >= 3, (path, seen)
PY
# flip SRC DATASET OUT: OUT is SRC with one bit of DATASET's first chunk
# flipped (chunk addresses count from the end of the user block).
flip() {
    $PY - "$1" "$2" "$3" <<'PY'
import shutil, sys, h5py
src, name, out = sys.argv[1:]
shutil.copy(src, out)
with h5py.File(src, "r") as f:
    at = f.userblock_size + f[name].id.get_chunk_info(0).byte_offset + 8
with open(out, "r+b") as w:
    w.seek(at)
    b = w.read(1)
    w.seek(at)
    w.write(bytes([b[0] ^ 0x10]))
PY
}
for spec in m.h5:/micro/results m.h5:/micro/samples/0 t.h5:/train/curves; do
    src=${spec%%:*} ds=${spec#*:}
    out=$tmp/flipped-${src%.h5}-$(basename "$ds").h5
    flip "$tmp/$src" "$ds" "$out" || { bad "cannot flip $ds"; continue; }
    "$rbarchive" list "$out" >"$tmp/list.out" 2>&1 && bad "rb-archive list took $out with $ds flipped"
    grep -q "$(basename "$out").*Fletcher32" "$tmp/list.out" || bad "list of $ds flipped: $(cat "$tmp/list.out")"
    "$top_srcdir/analysis/rb-report" "$out" -o "$tmp/rep" >"$tmp/rep.out" 2>&1
    grep -q "refused $out: .*Fletcher32" "$tmp/rep.out" || bad "rb-report of $ds flipped: $(head -3 "$tmp/rep.out")"
    echo "$ds: one bit flipped, refused: $(grep -m1 -o 'data error detected by Fletcher32 checksum' "$tmp/list.out")"
done

# A file that cannot be opened for its permissions says so, not "truncated
# or corrupt?" (as root: the check runs as nobody, whom mode 000 stops).
mkdir -p "$tmp/perm" && chmod 755 "$tmp" "$tmp/perm" && cp "$tmp/m.h5" "$tmp/perm/locked.h5" &&
    chmod 000 "$tmp/perm/locked.h5"
if [ "$(id -u)" = 0 ]; then
    su nobody -s /bin/sh -c "$PY '$rbarchive' list '$tmp/perm/locked.h5'" >"$tmp/perm.out" 2>&1
else
    "$rbarchive" list "$tmp/perm/locked.h5" >"$tmp/perm.out" 2>&1
fi
grep -q "locked.h5.*Permission denied" "$tmp/perm.out" && ! grep -qi "corrupt" "$tmp/perm.out" ||
    bad "a file without read permission: $(cat "$tmp/perm.out")"
exit $fail
