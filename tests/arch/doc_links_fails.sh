#!/bin/sh
# tests/arch/doc_links.py fails where it must, on a small tree made here:
# a link to a missing file, an anchor no heading has, a named section no
# heading holds, a path of the tree that does not exist, a wrong top folder;
# and passes the tree once each is mended.
check="${top_srcdir:?}/tests/arch/doc_links.py"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

# expect RC WHAT [GREP]: the checker's exit status on the tree is RC and,
# when it fails, a FAIL: line says GREP.
expect() {
    out=$(/usr/bin/python3 "$check" "$tmp/t" 2>&1); rc=$?
    if [ "$rc" != "$1" ]; then
        bad "$2: exit $rc, expected $1"; printf '%s\n' "$out"
    elif [ -n "$3" ] && ! printf '%s\n' "$out" | grep -q "^FAIL: .*$3"; then
        bad "$2: no FAIL: line saying '$3'"; printf '%s\n' "$out"
    else
        echo "ok $2"
    fi
}

/usr/bin/python3 "$check" "$tmp/nowhere" >/dev/null 2>&1 && bad "a missing top folder passed"
mkdir -p "$tmp/t/docs" "$tmp/t/src"
printf 'int f(void);\n' >"$tmp/t/src/lib.c"
printf '# Top\n\nSee [a](docs/a.md#the-call) and `src/lib.c`.\n' >"$tmp/t/README.md"
printf '# A\n\n## The call\n\n- Shared data: a label.\n\nBack to [top](../README.md).\n' >"$tmp/t/docs/a.md"
expect 1 "no index" "no index of the documents"
printf '# Documents\n\n' >"$tmp/t/docs/README.md"
expect 1 "a document the index does not link" "a.md is not in the index"
printf '[a](a.md)\n' >>"$tmp/t/docs/README.md"
expect 0 "a clean tree"

printf 'See [b](b.md).\n' >>"$tmp/t/docs/a.md"
expect 1 "a link to a missing file" "no such file docs/b.md"
printf '# B\n' >"$tmp/t/docs/b.md"
expect 1 "the linked file made, not in the index" "b.md is not in the index"
printf '[b](b.md)\n' >>"$tmp/t/docs/README.md"
expect 0 "the linked file made and indexed"

printf 'See [b](b.md#nothing).\n' >>"$tmp/t/docs/a.md"
expect 1 "an anchor no heading has" "#nothing"
sed -i 's/#nothing//' "$tmp/t/docs/a.md"

printf 'See docs/a.md "Figures".\n' >>"$tmp/t/README.md"
expect 1 "a named section no heading holds" 'contains "Figures"'
sed -i 's/"Figures"/"Shared data"/' "$tmp/t/README.md"
expect 0 "a named section that is a list item's label"
printf 'And [a](docs/a.md), *The\nmissing one*.\n' >>"$tmp/t/README.md"
expect 1 "a linked section in italics that no heading holds" 'contains "The missing one"'
sed -i 's/\*The$/*The/; s/^missing one\*/call*/' "$tmp/t/README.md"
expect 0 "a linked section in italics, over two lines"

printf 'Run `tests/lib/gone.sh`.\n' >>"$tmp/t/docs/b.md"
expect 1 "a path of the tree that does not exist" "tests/lib/gone.sh"
rm -f "$tmp/t/docs/b.md"; printf '# B\n' >"$tmp/t/docs/b.md"
expect 0 "the tree mended"
exit $fail
