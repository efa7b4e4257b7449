#!/bin/sh
# rb-archive: list prints one line per run (date, job id, tool, ranks,
# status, reducers, file); merge copies every run into /runs/<name> with
# all its metadata and data unchanged (round trip checked object by
# object), merges merged files, refuses incomplete files, unknown schema
# versions, a run given twice (also a copy: same run_id) and an existing
# output (a FIFO or link even with --force), writing nothing then.
. "$top_srcdir/tests/archive/archive_lib.sh"

"$MPIRUN" 2 "$micro" --reducer dense -m 4K:8K -i 2 -x 0 -q -o "$tmp/a.h5" >"$tmp/a.log" 2>&1 || bad "run a failed"
"$MPIRUN" 3 "$micro" --reducer s2 -m 4K:4K -i 2 -x 0 -q -P none -o "$tmp/b.h5" >"$tmp/b.log" 2>&1 || bad "run b failed"
[ $fail -eq 0 ] || { cat "$tmp/a.log" "$tmp/b.log"; exit 1; }

# list: header + one line per run, in file order
"$rbarchive" list "$tmp" >"$tmp/list" 2>&1 || bad "list failed"
cat "$tmp/list"
[ "$(grep -c 'rb_micro' "$tmp/list")" -eq 2 ] || bad "list: expected 2 runs"
grep -E -q '^20[0-9-]+T[0-9:]+Z +- +rb_micro +2 +complete +dense +.*a\.h5$' "$tmp/list" || bad "list: line for a.h5"
grep -E -q '^20[0-9-]+T[0-9:]+Z +- +rb_micro +3 +complete +s2 +.*b\.h5$' "$tmp/list" || bad "list: line for b.h5"

# merge, then merge the merged file with another run also named a.h5 (in
# another directory: the names collide, the runs differ)
"$rbarchive" merge -o "$tmp/m.h5" "$tmp/a.h5" "$tmp/b.h5" >"$tmp/m.log" 2>&1 || bad "merge failed: $(cat "$tmp/m.log")"
mkdir "$tmp/other"
"$MPIRUN" 2 "$micro" --reducer dense -m 4K:8K -i 2 -x 0 -q -o "$tmp/other/a.h5" >"$tmp/a2.log" 2>&1 || bad "run other/a failed"
"$rbarchive" merge -o "$tmp/mm.h5" "$tmp/m.h5" "$tmp/other/a.h5" >"$tmp/mm.log" 2>&1 || bad "merge of merged failed: $(cat "$tmp/mm.log")"
ls "$tmp" | grep -q '\.tmp\.' && bad "merge left a temporary file"
$PY "$check" "$schema" "$tmp/m.h5" "$tmp/mm.h5" || bad "merged files do not conform to the schema"
"$rbarchive" list --no-header "$tmp/mm.h5" >"$tmp/mlist" || bad "list of merged failed"
[ "$(wc -l <"$tmp/mlist")" -eq 3 ] || bad "list of merged: expected 3 runs: $(cat "$tmp/mlist")"
grep -q 'mm.h5:/runs/a_2$' "$tmp/mlist" || bad "duplicate run name not made unique"

# Round trip: every attribute and dataset of each source is in the merge.
$PY - "$tmp" <<'PYEOF' || bad "round trip"
import sys, os, h5py, numpy as np
d = sys.argv[1]
def same(x, y):
    if isinstance(x, h5py.Empty) or isinstance(y, h5py.Empty):
        return type(x) is type(y)
    return np.array_equal(np.asarray(x), np.asarray(y))
def compare(src, dst, where, bad):
    for k, v in src.attrs.items():
        if k not in dst.attrs or not same(v, dst.attrs[k]):
            bad.append("%s@%s" % (where, k))
    for k in src:
        if k not in dst:
            bad.append("%s/%s missing" % (where, k)); continue
        if isinstance(src[k], h5py.Group):
            compare(src[k], dst[k], where + "/" + k, bad)
        elif src[k].dtype != dst[k].dtype or not same(src[k][()], dst[k][()]):
            bad.append("%s/%s differs" % (where, k))
bad = []
with h5py.File(os.path.join(d, "mm.h5")) as mm:
    if mm.attrs["complete"] != 1 or mm.attrs["merged_runs"] != 3 or mm.attrs["tool"] != "rb-archive":
        bad.append("merged root attributes")
    for name, src in (("a", "a.h5"), ("b", "b.h5"), ("a_2", "other/a.h5")):
        with h5py.File(os.path.join(d, src)) as f:
            compare(f, mm["runs"][name], "/runs/" + name, bad)
        if not mm["runs"][name].attrs["source_file"].endswith(src):
            bad.append("source_file of " + name)
print("\n".join(bad) if bad else "round trip: all attributes and datasets identical")
sys.exit(1 if bad else 0)
PYEOF

# Refusals: incomplete, unknown schema, not an archive, existing output.
cp "$tmp/a.h5" "$tmp/incomplete.h5"
cp "$tmp/a.h5" "$tmp/future.h5"
$PY - "$tmp" <<'PYEOF'
import sys, os, h5py, numpy as np
with h5py.File(os.path.join(sys.argv[1], "incomplete.h5"), "a") as f:
    f.attrs["complete"] = np.int64(0)
with h5py.File(os.path.join(sys.argv[1], "future.h5"), "a") as f:
    f.attrs["schema_version"] = np.int64(99)
with h5py.File(os.path.join(sys.argv[1], "other.h5"), "w") as f:
    f["x"] = 1
with h5py.File(os.path.join(sys.argv[1], "text.h5"), "w") as f:
    f.attrs["schema_version"] = "x1"
with h5py.File(os.path.join(sys.argv[1], "minor.h5"), "w") as f:
    f.attrs["schema_version"] = "1.2"
PYEOF
# The wording is rbanalysis/validate.py's, which rb-report uses too.
for case in "incomplete:marked incomplete (complete=0)" "future:unknown schema version 99" \
        "other:no schema_version attribute: not a reducerbench archive" \
        "text:schema_version 'x1' is not a version number" "minor:marked incomplete (complete=absent)"; do
    file=${case%%:*}; msg=${case#*:}
    "$rbarchive" merge -o "$tmp/r.h5" "$tmp/a.h5" "$tmp/$file.h5" >"$tmp/r.log" 2>&1
    rc=$?
    [ $rc -eq 2 ] || bad "merge with $file.h5: exit $rc, expected 2"
    grep -q "$file.h5: $msg" "$tmp/r.log" || bad "merge with $file.h5: message: $(cat "$tmp/r.log")"
    [ -e "$tmp/r.h5" ] && bad "merge with $file.h5 wrote an output"
done
"$rbarchive" list "$tmp/incomplete.h5" | grep -q INCOMPLETE || bad "list does not flag an incomplete file"
cp "$tmp/m.h5" "$tmp/m.copy"
"$rbarchive" merge -o "$tmp/m.h5" "$tmp/a.h5" >"$tmp/r.log" 2>&1 && bad "merge overwrote an existing output"
grep -q "refusing to overwrite" "$tmp/r.log" || bad "no message for an existing output"
cmp -s "$tmp/m.h5" "$tmp/m.copy" || bad "existing output modified"
"$rbarchive" merge --force -o "$tmp/m.h5" "$tmp/a.h5" >/dev/null 2>&1 || bad "merge --force failed"

# A run given twice (the same file, or a file and an archive holding it)
# would be counted twice by the analysis: refused, nothing written.
"$rbarchive" merge -o "$tmp/d.h5" "$tmp/b.h5" "$tmp/b.h5" >"$tmp/r.log" 2>&1
[ $? -eq 2 ] && grep -q "given twice" "$tmp/r.log" || bad "same file twice: $(cat "$tmp/r.log")"
"$rbarchive" merge -o "$tmp/d.h5" "$tmp/mm.h5" "$tmp/b.h5" >"$tmp/r.log" 2>&1
[ $? -eq 2 ] && grep -q "mm.h5 already holds the run of .*b.h5" "$tmp/r.log" || bad "archive and its source: $(cat "$tmp/r.log")"
[ -e "$tmp/d.h5" ] && bad "a refused merge wrote an output"
# A copy under another name is the same run (same run_id): refused too.
cp "$tmp/b.h5" "$tmp/b-copy.h5"
"$rbarchive" merge -o "$tmp/d.h5" "$tmp/b.h5" "$tmp/b-copy.h5" >"$tmp/r.log" 2>&1
[ $? -eq 2 ] && grep -q "b-copy.h5 is the same run as .*b.h5 (run_id [0-9a-f]\{32\})" "$tmp/r.log" \
    || bad "copy of a run: $(cat "$tmp/r.log")"
[ -e "$tmp/d.h5" ] && bad "a refused merge wrote an output"
rm "$tmp/b-copy.h5"
# Two merged archives that both hold a.h5's run.
"$rbarchive" merge -o "$tmp/d.h5" "$tmp/m.h5" "$tmp/mm.h5" >"$tmp/r.log" 2>&1
[ $? -eq 2 ] && grep -q "mm.h5:/runs/a is the same run as .*m.h5:/runs/a" "$tmp/r.log" \
    || bad "two merged archives with one run: $(cat "$tmp/r.log")"
[ -e "$tmp/d.h5" ] && bad "a refused merge wrote an output"
# An output in a missing directory: refused before reading anything.
"$rbarchive" merge -o "$tmp/no/such/x.h5" "$tmp/a.h5" >"$tmp/r.log" 2>&1
[ $? -eq 2 ] && grep -q "directory .*no/such does not exist" "$tmp/r.log" \
    || bad "missing output directory: $(cat "$tmp/r.log")"
# An unreadable input is named; a FIFO or a link is never replaced.
head -c 3000 "$tmp/a.h5" >"$tmp/cut.h5"
"$rbarchive" merge -o "$tmp/d.h5" "$tmp/cut.h5" >"$tmp/r.log" 2>&1
[ $? -eq 2 ] && grep -q "cut.h5: cannot read" "$tmp/r.log" || bad "truncated input not named: $(cat "$tmp/r.log")"
mkfifo "$tmp/fifo" && ln -s "$tmp/m.h5" "$tmp/link.h5"
for out in "$tmp/fifo" "$tmp/link.h5"; do
    "$rbarchive" merge --force -o "$out" "$tmp/a.h5" >"$tmp/r.log" 2>&1
    [ $? -eq 2 ] || bad "merge --force -o $out: not refused"
done
[ -p "$tmp/fifo" ] && [ -L "$tmp/link.h5" ] || bad "merge replaced a FIFO or a link"
exit $fail
