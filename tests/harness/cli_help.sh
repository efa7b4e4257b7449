#!/bin/sh
# Each program's --help lists exactly the options of its parser table
# (tests/harness/test_cli list PROG), each once, and those are the options the
# program had before its command line moved to the table: none lost, none
# added but -h/--help where it was accepted or missing, and the changes
# said below.  Every option the help text names anywhere (prose and
# epilogue included) is one the program takes, but for the old spellings
# it refuses (test_cli moved PROG), named only after "was", and the other
# programs' options listed as foreign; no option's entry gives its
# default twice; each old spelling, run, exits 2 with a message naming
# its new one.
fail=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

# The option spellings at the start of --help's option lines.
help_options() {  # HELP-FILE
    sed -nE 's/^  (-[A-Za-z0-9])(, (--[a-z0-9-]+))?.*/\1 \3/p; s/^      (--[a-z0-9-]+).*/\1/p' "$1" |
        tr ' ' '\n' | grep . | sort
}

# Every option spelling named in a help text, with the word before it:
# "WORD SPELLING" lines ("-" when the spelling starts a line).
named_options() {  # HELP-FILE
    tr '\n' ' ' <"$1" | sed -E 's/^/ /' |
        grep -oE '[^ ]* +(-[A-Za-z]|--[a-z][a-z0-9-]*)([^A-Za-z0-9_-]|$)' |
        sed -E 's/^ *(-[A-Za-z]|--[a-z][a-z0-9-]*).*/- \1/; s/^([^ ]*) +(-[A-Za-z]|--[a-z][a-z0-9-]*).*/\1 \2/; s/^[^ ]*[(]//'
}

# The option entries that say "default" more than once (the first line of each).
default_twice() {  # HELP-FILE
    awk 'function end() { if (in_entry && n > 1) print first; in_entry = 0; n = 0 }
         /^  -[A-Za-z]|^      --[a-z]/ { end(); in_entry = 1; first = $0 }
         /^$|^[^ ]/ { end() }
         in_entry { n += gsub(/[Dd]efault/, "&") }
         END { end() }' "$1"
}

check() {  # PROG FOREIGN OPTIONS-BEFORE...: FOREIGN: the other programs' options its help names
    prog=$1; foreign=$2; shift 2
    bin="$top_builddir/benchmarks/$prog"
    if [ ! -x "$bin" ]; then
        echo "$prog: not built here, skipped"; return
    fi
    "$bin" --help >"$tmp/help" 2>&1 || { echo "FAIL: $prog --help exited $?"; fail=1; return; }
    help_options "$tmp/help" >"$tmp/from-help"
    "$top_builddir/tests/harness/test_cli" list "$prog" | sort >"$tmp/from-table" || { fail=1; return; }
    printf '%s\n' "$@" | sort >"$tmp/before"
    if ! cmp -s "$tmp/from-help" "$tmp/from-table"; then
        echo "FAIL: $prog: --help (<) and the parser table (>) list different options:"
        diff "$tmp/from-help" "$tmp/from-table"; fail=1
    fi
    if ! cmp -s "$tmp/from-table" "$tmp/before"; then
        echo "FAIL: $prog: the table (<) and the options before (>) differ:"
        diff "$tmp/from-table" "$tmp/before"; fail=1
    fi
    "$top_builddir/tests/harness/test_cli" moved "$prog" >"$tmp/moved" || { fail=1; return; }
    named_options "$tmp/help" | while read -r before opt; do
        if grep -qxe "$opt" "$tmp/from-table"; then
            continue
        elif [ "$before" = was ] && grep -qxe "$opt" "$tmp/moved"; then
            continue   # "(was --iters)": where an old spelling went
        elif printf '%s\n' $foreign | grep -qxe "$opt"; then
            continue
        fi
        echo "FAIL: $prog: --help names $opt (after '$before'), which $prog does not take"
        echo x >>"$tmp/failed"
    done
    # Every environment variable the program's own folder reads is in its
    # --help (the harness's are the harness's: RB_MALLOC is in both
    # programs' help through BENCH_MALLOC_HELP, RB_SIM_* are rb-smpirun's).
    dir=${prog#rb_}   # rb_micro's folder is benchmarks/micro
    [ -d "$top_srcdir/benchmarks/$dir" ] || { echo "FAIL: no benchmarks/$dir for $prog"; fail=1; }
    for var in $(cat "$top_srcdir"/benchmarks/"$dir"/*.c 2>/dev/null |
                 grep -oE 'getenv\("[A-Za-z0-9_]+"' | sed -E 's/getenv\("//; s/"$//' | sort -u); do
        grep -qw "$var" "$tmp/help" || { echo "FAIL: $prog reads $var (benchmarks/$dir), which --help does not name"; fail=1; }
    done
    twice=$(default_twice "$tmp/help")
    [ -z "$twice" ] || { echo "FAIL: $prog: entries giving their default twice:"; echo "$twice"; fail=1; }
    while read -r old; do
        "$bin" "$old" 1 >"$tmp/out" 2>"$tmp/err"
        rc=$?
        if [ $rc -ne 2 ] || ! grep -qe "$old: .*--[a-z]" "$tmp/err"; then
            echo "FAIL: $prog $old 1: exit $rc (want 2) and the message must name the new option:"
            cat "$tmp/err"; fail=1
        fi
    done <"$tmp/moved"
    echo "$prog: $(wc -l <"$tmp/from-table") option spellings, --help = table = before;" \
        "$(named_options "$tmp/help" | wc -l) named in the text, taken;" \
        "$(wc -l <"$tmp/moved") old spelling(s) refused"
}

check rb_micro --record-gradients \
    --reducer --density --layout --input --overlap --cols --shape --seed -O --option \
    -m --message-size -b --minbytes -e --maxbytes --stepfactor -i --iterations -x --warmup \
    --repeat --alpha --beta \
    -c --check --no-check --no-phase-times --compute --timeout -d --device -o --output --force -J --json -M --mem-limit -P --papi \
    --bind -q --quiet -h --help --trace-layer -T --type -f --full -v --version --validation --accelerator \
    --save-result --stall-timeout
# The letters OSU's osu_allreduce takes mean what they mean there: -T/--type
# (mpi_float) where -T was the time limit (now --timeout alone), -f/--full
# where -f was --stepfactor (nccl-tests' letter), -v/--version, OSU's long
# names --validation and --accelerator; -r (OSU's CUDA compute target) no
# longer --repeat's.
# --trace-layer and rb_train's --record-* are new: gradient traces replayed by rb_micro.
# --save-result is new: the result compared with Ok-Topk's authors' (benchmarks/anchors/oktopk-authors).
# --no-phase-times, -r/--repeat, -J/--json, --alpha/--beta, -M/--mem-limit are new (--no-phase-times: the anchor against OSU reads no
# clock inside a call; -r: repetitions for confidence intervals; -J, --alpha/--beta: JSON lines, cost model;
# -M: the memory check, rb_micro's and rb_train's; then --input, and rb_train's --embed-input).
# --stall-timeout is new in both: the progress watchdog (a link down or a peer gone ends the
# run in bounded time, named, exit 3).
check rb_train --input --model --data --format --train-limit --test-limit --vocab --out-vocab --context \
    --embed-dim --hidden --write-corpus --batch --lr --momentum --weight-decay --lr-warmup \
    --schedule --epochs --iterations --seed --shuffle --reducer -O --option --sparsify --error-feedback \
    --embed-input --dense-reducer \
    --eval-every --log-every --target-accuracy --target-perplexity --timeout --threads -d --device \
    -M --mem-limit --bench-sgemm -o --output --force --list-reducers -h --help \
    --record-gradients --record-every --record-max-bytes --stall-timeout \
    --checkpoint --checkpoint-every --resume
# -h and --help were accepted before, but not listed; --out-vocab came later, with embedlm;
# --dense-reducer later still (the dense layers' own reducer, as the S2 authors train);
# --checkpoint, --checkpoint-every and --resume last (a stopped run resumed, requeued by Slurm).
# --warmup became --lr-warmup (rb_micro's and OSU's --warmup are untimed
# calls), -T --timeout (rb_micro's -T is OSU's data type); -O and -o got
# rb_micro's long names.
check rb_sketch "" --rows --cols --density --ratio --ranks -i --iterations --seed --no-error -M --mem-limit -h --help
# --help is new (before, only -h; --help was an unknown option); --iters
# became -i/--iterations, the other programs' spelling.
check rb_gpubench "" -n -i --iterations -h --help
[ ! -e "$tmp/failed" ] || fail=1
exit $fail
