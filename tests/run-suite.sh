#!/bin/sh
# The whole test suite from a clean checkout: install missing packages,
# build out of tree (warnings are errors), run `make check`, print each test,
# the counts per folder of tests/ (its rooms: tests/lib, tests/micro...), the totals
# as one line "N passed, N failed" and exit non-zero on any failure.
#   RB_BUILD_DIR   build directory (default: build-tests in the checkout)
#   RB_CONFIGURE   extra configure arguments (e.g. --enable-sanitizers)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${RB_BUILD_DIR:-$src/build-tests}
"$src/tests/install-deps.sh"
cd "$src"
autoreconf -fi >/dev/null 2>&1 || autoreconf -fi
mkdir -p "$build"
cd "$build"
# shellcheck disable=SC2086
"$src/configure" --enable-werror ${RB_CONFIGURE:-} >configure.out 2>&1 ||
    { cat configure.out; echo "0 passed, 1 failed"; exit 1; }
sed -n '/reducerbench .* configured/,$p' configure.out
make -j"$(nproc)" >make.out 2>&1 || { tail -50 make.out; echo "0 passed, 1 failed"; exit 1; }
rc=0
make -j"$(nproc)" check >check.out 2>&1 || rc=$?
grep -E '^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR):' check.out || true
# The same per folder of tests/ (the rooms of the code: tests/lib, ...).
grep -E '^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR): ' check.out | awk '
    { room = $2; sub(/\/[^\/]*$/, "", room); what = $1; sub(/:$/, "", what)
      n[room, what]++; rooms[room] = 1 }
    END { for (room in rooms) {
              line = ""
              split("PASS SKIP FAIL ERROR XFAIL XPASS", order, " ")
              for (i = 1; i <= 6; i++)
                  if (n[room, order[i]]) line = line (line == "" ? "" : ", ") n[room, order[i]] " " order[i]
              print room ": " line } }' | sort || true
sed -n '/^=====/,/^=====/p; /^# [A-Z]*: /p' check.out | grep '^# ' || true
if [ $rc -ne 0 ]; then
    for log in $(grep -lE '^(FAIL|ERROR)' $(find . -name '*.log' -path '*tests*' ! -name test-suite.log) 2>/dev/null); do
        # The failure's own lines first: a failing test's tail is often its logs.
        echo "---- $log"; grep -m 5 -E '^(FAIL|[^ ]*: FAIL)' "$log"; tail -40 "$log"
    done
fi
summary=test-suite.log
pass=$(sed -n 's/^# PASS: *//p' "$summary" | head -1)
fail=$(sed -n 's/^# FAIL: *//p' "$summary" | head -1)
err=$(sed -n 's/^# ERROR: *//p' "$summary" | head -1)
xpass=$(sed -n 's/^# XPASS: *//p' "$summary" | head -1)
skip=$(sed -n 's/^# SKIP: *//p' "$summary" | head -1)
failed=$(( ${fail:-0} + ${err:-0} + ${xpass:-0} ))
[ -n "$pass" ] || { echo "0 passed, 1 failed"; exit 1; }
echo "${skip:-0} skipped (reasons in the SKIP lines above and their logs)"
echo "${pass} passed, ${failed} failed"
[ $rc -eq 0 ] && [ $failed -eq 0 ]
