# Sourced by the hostile tests (tests/harness/hostile_*.sh): hostile but
# realistic use, one concern a script; every case ends in a named failure
# (non-zero exit, one stderr line with the reason) or a correct run; never
# a crash, a hang, a lost or overwritten result, or an impossible value in
# a report.  One line per case: "ok CASE" or "FAIL: CASE: why".  Here: the
# helpers, the fixtures several scripts use, the 40 KiB tmpfs of the
# full-disk cases, and rb-report over every archive a script made.
. "$top_srcdir/tests/archive/archive_lib.sh"
train="$top_builddir/benchmarks/rb_train"
rbreport="$top_srcdir/analysis/rb-report"
small="--reducer dense -m 4K:4K -i 2 -x 0 -q -P none"
# Every program run is bounded: a hang is a failure, not a stuck suite.
T="timeout 60"
case_ok() { echo "ok $1"; }
# rb-report runs once, at the end, over every archive made here (it takes
# seconds to start): refused CASE PATTERN expects a refusal line.
: >"$tmp/expected-refusals"
refused() { printf '%s\t%s\n' "$1" "$2" >>"$tmp/expected-refusals"; }
# verdict CASE: count a case, failed with $why when a check before it set
# it (a case collects its reasons in why, empty when all held).
verdict() { if [ -z "$why" ]; then case_ok "$1"; else bad "$1: $why"; fi; }
# named OUT RC EXPECTED_RC PATTERN: exit as expected, one stderr line naming
# the reason, no crash (139/134) and no hang (124 unless expected).
named() {
    [ "$2" -eq "$3" ] || { echo "exit $2, expected $3"; return 1; }
    grep -q -- "$4" "$1" || { echo "no line matching '$4': $(head -c 600 "$1")"; return 1; }
    ! grep -q "Segmentation\|Traceback\|AddressSanitizer\|runtime error" "$1" ||
        { echo "crash: $(head -c 600 "$1")"; return 1; }
    return 0
}
expect() {   # expect CASE OUT RC EXPECTED_RC PATTERN
    why=$(named "$2" "$3" "$4" "$5") && case_ok "$1" || bad "$1: $why"
}

# The tmpfs mounts are removed before the scratch folder.
trap 'umount "$tmp/full" 2>/dev/null; umount "$tmp/ro" 2>/dev/null; rm -rf "$tmp"' EXIT

# ---- fixtures
# IDX files: N images HxW (random pixels), labels 0..9.
    # IDX files: N images HxW (random pixels), labels 0..9.
    mkidx() {   # mkidx DIR PREFIX N H W
        $PY - "$@" <<'PY'
import struct, sys, os, random
d, prefix, n, h, w = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
os.makedirs(d, exist_ok=True)
rnd = random.Random(7)
with open(os.path.join(d, prefix + "-images-idx3-ubyte"), "wb") as f:
    f.write(struct.pack(">IIII", 0x803, n, h, w))
    f.write(bytes(rnd.randrange(256) for _ in range(n * h * w)))
with open(os.path.join(d, prefix + "-labels-idx1-ubyte"), "wb") as f:
    f.write(struct.pack(">II", 0x801, n))
    f.write(bytes(rnd.randrange(10) for _ in range(n)))
PY
    }
words() { $PY -c 'import random,sys; r=random.Random(3); print("\n".join(" ".join("w%d" % r.randrange(50) for _ in range(12)) for _ in range(int(sys.argv[1]))))' "$1"; }
lm="--model wordlm --vocab 60 --batch 16 --iterations 4 --lr-warmup 0 --hidden 16 --embed-dim 8"
# 28x28 images in $tmp/img28; a small word corpus in $tmp/words; a sound
# two-reducer archive at $good.
hostile_img28() {
    [ -d "$tmp/img28" ] || { mkidx "$tmp/img28" train 256 28 28; mkidx "$tmp/img28" t10k 64 28 28; }
}
hostile_words() {
    [ -d "$tmp/words" ] && return
    mkdir -p "$tmp/words" "$tmp/rec"
    words 400 >"$tmp/words/train.tokens"; words 100 >"$tmp/words/valid.tokens"
    words 100 >"$tmp/words/test.tokens"
}
hostile_good() {
    good="$tmp/good.h5"
    [ -f "$good" ] && return
    "$MPIRUN" 2 "$micro" --reducer dense,s2 -m 4K:8K -i 2 -x 0 -q -P none -o "$good" >"$tmp/o" 2>&1 ||
        { bad "no good archive: $(cat "$tmp/o")"; exit 1; }
}

# hostile_full: a 40 KiB tmpfs at $full (root only), else full="" and a note.
hostile_full() {
    full=""
    if [ "$(id -u)" -ne 0 ]; then
        echo "note: full-disk cases skipped: they mount a 40 KiB tmpfs, which needs root"
    elif mkdir "$tmp/full" && mount -t tmpfs -o size=40k tmpfs "$tmp/full" 2>/dev/null; then
        full="$tmp/full"
    else
        echo "note: full-disk cases skipped: mount -t tmpfs refused here (a container without CAP_SYS_ADMIN?)"
    fi
}

# hostile_report: rb-report once over every archive made here and one
# sound run (and a FIFO named *.h5): that run is reported, each other one
# refused with the reason its case expects (refused CASE PATTERN), no
# traceback.
hostile_report() {
    "$MPIRUN" 2 "$micro" $small -o "$tmp/sound.h5" >/dev/null 2>&1 || bad "no sound archive"
    mkdir "$tmp/all"
    for f in "$tmp"/*.h5; do ln -s "$f" "$tmp/all/"; done
    mkfifo "$tmp/all/fifo.h5"
    # Bounded: a FIFO it opened would wait for a writer until killed.
    timeout 600 "$rbreport" "$tmp/all" -o "$tmp/rep" >"$tmp/r" 2>&1
    rc=$?
    why=""
    [ $rc -eq 0 ] || why="exit $rc"
    grep -q Traceback "$tmp/r" && why="$why; a traceback"
    grep -q "rb-report: [0-9]* run(s) used" "$tmp/r" || why="$why; no report: $(tail -c 400 "$tmp/r")"
    verdict "rb-report over all of them: runs, no traceback"
    while IFS="$(printf '\t')" read -r name pattern; do
        grep -q "refused .*$pattern" "$tmp/r" && case_ok "$name" || bad "$name: no refusal matching '$pattern'"
    done <"$tmp/expected-refusals"
}
