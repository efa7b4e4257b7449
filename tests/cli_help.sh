#!/bin/sh
# Each program's --help lists exactly the options of its parser table
# (tests/test_cli list PROG), and those are the options the program had
# before its command line moved to the table: none lost, none
# added but -h/--help where it was accepted or missing.
fail=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

# The option spellings at the start of --help's option lines.
help_options() {  # HELP-FILE
    sed -nE 's/^  (-[A-Za-z0-9])(, (--[a-z0-9-]+))?.*/\1 \3/p; s/^      (--[a-z0-9-]+).*/\1/p' "$1" |
        tr ' ' '\n' | grep . | sort
}

check() {  # PROG OPTIONS-BEFORE...
    prog=$1; shift
    bin="$top_builddir/benchmarks/$prog"
    if [ ! -x "$bin" ]; then
        echo "$prog: not built here, skipped"; return
    fi
    "$bin" --help >"$tmp/help" 2>&1 || { echo "FAIL: $prog --help exited $?"; fail=1; return; }
    help_options "$tmp/help" >"$tmp/from-help"
    "$top_builddir/tests/test_cli" list "$prog" | sort >"$tmp/from-table" || { fail=1; return; }
    printf '%s\n' "$@" | sort >"$tmp/before"
    if ! cmp -s "$tmp/from-help" "$tmp/from-table"; then
        echo "FAIL: $prog: --help (<) and the parser table (>) list different options:"
        diff "$tmp/from-help" "$tmp/from-table"; fail=1
    fi
    if ! cmp -s "$tmp/from-table" "$tmp/before"; then
        echo "FAIL: $prog: the table (<) and the options before (>) differ:"
        diff "$tmp/from-table" "$tmp/before"; fail=1
    fi
    echo "$prog: $(wc -l <"$tmp/from-table") option spellings, --help = table = before"
}

check rb_micro --reducer --density --layout --input --overlap --cols --shape --seed -O --option \
    -m --message-size -b --minbytes -e --maxbytes -f --stepfactor -i --iterations -x --warmup \
    -r --repeat --alpha --beta \
    -c --check --no-check --no-phase-times --compute -T --timeout -d --device -o --output --force -J --json -M --mem-limit -P --papi \
    --bind -q --quiet -h --help --trace-layer --save-result
# --trace-layer and rb_train's --record-* are new: gradient traces replayed by rb_micro.
# --save-result is new: the result compared with Ok-Topk's authors' (benchmarks/anchors/oktopk-authors).
# --no-phase-times, -r/--repeat, -J/--json, --alpha/--beta, -M/--mem-limit are new (--no-phase-times: the anchor against OSU reads no
# clock inside a call; -r: repetitions for confidence intervals; -J, --alpha/--beta: JSON lines, cost model;
# -M: the memory check, rb_micro's and rb_train's; then --input, and rb_train's --embed-input).
check rb_train --model --data --format --train-limit --test-limit --vocab --out-vocab --context \
    --embed-dim --hidden --write-corpus --batch --lr --momentum --weight-decay --warmup \
    --schedule --epochs --iterations --seed --shuffle --reducer -O --sparsify --error-feedback \
    --embed-input \
    --eval-every --log-every --target-accuracy --target-perplexity -T --threads -d --device \
    -M --mem-limit --bench-sgemm -o --force --list-reducers -h --help \
    --record-gradients --record-every --record-max-bytes
# -h and --help were accepted before, but not listed; --out-vocab came later, with embedlm.
check rb_sketch --rows --cols --density --ratio --ranks --iters --seed --no-error -M --mem-limit -h --help
# --help is new (before, only -h; --help was an unknown option).
check rb_gpubench -n -i -h --help
exit $fail
