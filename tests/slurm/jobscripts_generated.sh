#!/bin/sh
# The nine sbatch scripts are what jobscripts/generate makes of its one
# template (a script edited by hand, or the template changed without
# running it, fails here, naming the script and the difference).
js="${top_srcdir:-.}/jobscripts"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
"$js/generate" -o "$tmp" || { echo "FAIL: jobscripts/generate failed"; exit 1; }
fail=0 n=0
for f in "$tmp"/*/*.sbatch; do
    rel=${f#"$tmp"/}
    n=$((n + 1))
    diff -u "$js/$rel" "$f" >"$tmp/diff" ||
        { echo "FAIL: jobscripts/$rel is not what jobscripts/generate makes:"; cat "$tmp/diff"; fail=1; }
    [ -x "$js/$rel" ] || { echo "FAIL: jobscripts/$rel is not executable"; fail=1; }
done
committed=$(ls "$js"/*/*.sbatch | wc -l)
[ "$n" = 9 ] && [ "$committed" = 9 ] || { echo "FAIL: $n generated, $committed committed, want 9"; fail=1; }
[ $fail = 1 ] || echo "ok: the 9 scripts are the template's"
exit $fail
