#!/bin/sh
# The main job: the default comparison of all reducers on local MPI ranks.
# Installs missing packages (as root), builds, runs the rb_micro sweep and a
# short rb_train comparison into one results directory, then the report.
#   RB_RANKS       MPI ranks (default: the cores, at most 4; more ranks than
#                  cores make times that swing and give no headline)
#   RB_LAUNCHES    launches (separate mpirun) of every microbenchmark, interleaved
#                  over the configurations (default 6: intervals are taken over
#                  the launches' medians, and 6 give a 95% interval)
#   RB_REPEAT      repetitions inside each launch, interleaved over the
#                  reducers (default 2)
#   RB_SEEDS       rb_train runs (seeds 1..N) per reducer and model (default 5:
#                  the accuracy-parity test pairs each reducer with dense by seed;
#                  RB_TRAIN_REPEAT, its old name, is still read)
#   RB_OUT         results directory (default results/main-<UTC time>)
#   RB_BUILD_DIR   build directory (default build-main in the checkout)
#   RB_SMPI_BUILD_DIR  SimGrid (smpicc) build directory (default build-smpi
#                  in the checkout)
#   RB_EMBEDLM_REDUCERS  reducers trained on embedlm (default: none dense
#                  agsparse sparcml parallax omnireduce s2 gossip)
#   RB_LENET_REDUCERS    reducers trained on lenet (default: none dense gossip)
#   RB_SKIP_TRAIN  1 = microbenchmarks only
#   RB_SKIP_FRONTIER  1 = no frontier runs (every lossy method at its knobs,
#                  trained beside dense on embedlm and lenet, seeds 1..RB_SEEDS,
#                  and s2 at the same sketches in rb_micro)
#   RB_SKIP_SIM    1 = no SimGrid runs (the 128-rank simulated points)
#   RB_SKIP_EMULATED  1 = no emulated-network runs (2 nodes at 1 Gbit: network
#                  namespaces and tbf on this machine, as root)
#   RB_TORCH       the PyTorch models through the Python binding beside
#                  PyTorch's DDP hooks (rb-torch-train: lstm on dict-gcide,
#                  resnet18 and googlenet on Fashion-MNIST; dense, agsparse,
#                  s2, gossip, DDP's allreduce, fp16 and PowerSGD; about 35
#                  minutes more at the defaults): 0 (default), 1 = as well,
#                  only = nothing else (the build and the report aside)
#   RB_TORCH_SEEDS       seeds per model and method (default 5: the parity
#                        test pairs each method with dense by seed)
#   RB_TORCH_ITERATIONS  steps per run (default 200)
#   RB_TORCH_MODELS      (default: lstm resnet18 googlenet)
set -eu
case "${1:-}" in
    -h|--help) sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//p}' "$0"; exit 0 ;;
    "") ;;
    *) echo "main.sh: no arguments (settings are the RB_* variables; --help)" >&2; exit 2 ;;
esac
src=$(cd "$(dirname "$0")/.." && pwd)
build=${RB_BUILD_DIR:-$src/build-main}
cores=$(nproc)
ranks=${RB_RANKS:-$((cores < 4 ? cores : 4))}
launches=${RB_LAUNCHES:-6}
reps=${RB_REPEAT:-2}
seeds=${RB_SEEDS:-${RB_TRAIN_REPEAT:-5}}
# S2's training claims need its four baselines and dense; GossipGraD's
# need none (the compute-efficiency reference) and dense (parity).
embed_reducers=${RB_EMBEDLM_REDUCERS:-none dense agsparse sparcml parallax omnireduce s2 gossip}
lenet_reducers=${RB_LENET_REDUCERS:-none dense gossip}
torch_mode=${RB_TORCH:-0}
torch_seeds=${RB_TORCH_SEEDS:-5}
torch_iterations=${RB_TORCH_ITERATIONS:-200}
torch_models=${RB_TORCH_MODELS:-lstm resnet18 googlenet}
case "$ranks$launches$reps$seeds$torch_seeds$torch_iterations" in *[!0-9]*|"")
    echo "main.sh: RB_RANKS, RB_LAUNCHES, RB_REPEAT, RB_SEEDS, RB_TORCH_SEEDS and RB_TORCH_ITERATIONS must be integers" >&2; exit 2 ;;
esac
case $torch_mode in
    0|1) ;;
    only) RB_SKIP_TRAIN=1 RB_SKIP_SIM=1 RB_SKIP_EMULATED=1 ;;
    *) echo "main.sh: RB_TORCH must be 0, 1 or only" >&2; exit 2 ;;
esac
for m in $torch_models; do
    case $m in lstm|resnet18|googlenet) ;; *)
        echo "main.sh: RB_TORCH_MODELS: unknown model '$m' (lstm, resnet18, googlenet)" >&2; exit 2 ;;
    esac
done
out=${RB_OUT:-$src/results/main-$(date -u +%Y%m%dT%H%M%SZ)}
step=0
say() { step=$((step + 1)); printf '\n=== [%d] %s (%s)\n' "$step" "$*" "$(date -u +%H:%M:%S)" | fold -s -w 120; }

say "dependencies"
"$src/tests/install-deps.sh"
say "build in $build"
cd "$src"
autoreconf -fi >/dev/null 2>&1 || autoreconf -fi
mkdir -p "$build"
cd "$build"
# The shared library and the Python binding only when the PyTorch runs
# need them: compiling the library and the harness a second time,
# position-independent, is time the other steps would lose.
cfg=--disable-shared
[ "$torch_mode" = 0 ] || cfg=--enable-shared
{ [ -f Makefile ] && [ "$(cat configure.main 2>/dev/null)" = "$cfg" ]; } ||
    { "$src/configure" "$cfg" >configure.out 2>&1 && echo "$cfg" >configure.main; } ||
    { cat configure.out; exit 1; }
make -j"$(nproc)" >make.out 2>&1 || { tail -40 make.out; exit 1; }

# Open MPI refuses root and more ranks than cores unless told.
if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
# Large buffers without a page fault per call (recorded in every archive).
export GLIBC_TUNABLES=glibc.malloc.hugetlb=1
mkdir -p "$out"
# A warning every run repeats (PAPI counters unavailable in a VM) is said
# once at the end with its count; anything else on stderr shows at once.
warnings="$out/warnings.txt"
keep_warnings() { grep ': warning: ' "$out/.stderr" >>"$warnings" || :; }
show_errors() { grep -v ': warning: ' "$out/.stderr" | fold -s -w 120 >&2 || :; }
run() {
    rrc=0
    mpirun --bind-to none -np "$ranks" -x GLIBC_TUNABLES "$@" 2>"$out/.stderr" || rrc=$?
    keep_warnings
    show_errors
    return $rrc
}
micro="$build/benchmarks/rb_micro"
train="$build/benchmarks/rb_train"
# One rb_train run (rb-torch-train's with trainer=torch): its archive and
# log are train-NAME.h5 and .txt; here, one line with its final figures.  A
# run that diverges is a result (a setting too lossy to train), not a
# failure of the job: its archive keeps the curve so far, marked
# diverged=1, which rb-report lists as refused and the frontier names.
trainer=rb_train
train_one() {
    name=$1; shift
    log="$out/train-$name.txt"
    prog=$train
    [ "$trainer" = rb_train ] || prog="$src/benchmarks/torch/rb-torch-train"
    trc=0
    mpirun --bind-to none -np "$ranks" -x GLIBC_TUNABLES "$prog" "$@" -o "$out/train-$name.h5" \
        </dev/null >"$log" 2>"$out/.stderr" || trc=$?
    keep_warnings
    if [ $trc -ne 0 ] && grep -q "^$trainer: rank 0: training: diverged" "$out/.stderr"; then
        printf '  %-26s diverged: %s\n' "$name" \
            "$(sed -n "s/^$trainer: rank 0: training: diverged: \(.*iteration [0-9]*\).*/\1/p" \
               "$out/.stderr" | cut -c1-80)"
        return 0
    fi
    show_errors
    [ $trc -eq 0 ] || return $trc
    printf '  %-26s %s\n' "$name" "$(sed -n 's/^final: //p' "$log" | cut -c1-90)"
}

# Every microbenchmark runs in several launches (new processes, new
# placement and memory layout: a launch-to-launch effect of 2x was seen on
# these VMs), each repeating its points interleaved over the reducers; the
# report's intervals come from the launches' medians, so that effect is
# inside them.  The launches are interleaved over the configurations, so a
# slow spell of the machine hits all of them alike.
configs="$out/micro-configs.txt"
cat >"$configs" <<CONFIGS
embedding-d0.02 --reducer all --shape 32768x256 --layout row --density 0.02 -i 10 -x 2 -O sketch_width_mode=fraction -O sketch_width=0.005
gossip-compute --reducer none,gossip --shape 1x6400000 --compute 0.02 -i 5 -x 1
element-d0.01 --reducer all -m 64K:16M --stepfactor 4 -i 10 -x 2 --density 0.01
element-d0.10 --reducer all -m 4M:16M --stepfactor 4 -i 5 -x 1 --density 0.1
element-d0.50 --reducer all -m 4M:16M --stepfactor 4 -i 5 -x 1 --density 0.5
CONFIGS
# s2 at the frontier's sketches, in the same embedding setting: where one
# trains as well as dense, the report judges S2's whole claim there.
if [ "${RB_SKIP_FRONTIER:-0}" != 1 ]; then
    # fraction 0.00125 = 1/16 x density here, as 0.0008 is on embedlm
    for sk in "fraction 0.00125 1" "nnz 1 1" "nnz 4 3"; do
        set -f; set -- $sk; set +f
        echo "embedding-d0.02-s2-$1$2r$3 --reducer s2 --shape 32768x256 --layout row --density 0.02 -i 10 -x 2 -O sketch_width_mode=$1 -O sketch_width=$2 -O sketch_rows=$3"
    done >>"$configs"
fi
[ "$torch_mode" = only ] && : >"$configs"
[ -s "$configs" ] && say "rb_micro: $(wc -l <"$configs") configurations x $launches launches x $reps repetitions: the S2 authors' embedding setting (32768 x 256, row density 2%, their sketch width), GossipGraD against no communication with 20 ms of modelled compute per step, element density 1% (64 KiB - 16 MiB), 10% and 50% (the dense/sparse crossover)"
for launch in $(seq 1 "$launches"); do
    while read -r name args; do
        printf '  launch %d/%d: %s\n' "$launch" "$launches" "$name"
        # shellcheck disable=SC2086
        run "$micro" $args --repeat "$reps" -q -o "$out/micro-$name-L$launch.h5" \
            </dev/null >"$out/micro-$name-L$launch.txt"
    done <"$configs"
done

if [ "${RB_SKIP_TRAIN:-0}" != 1 ] && [ -x "$train" ]; then
    # The seeds are interleaved over the reducers, so a slow spell of the
    # machine hits all of them alike; every reducer sees the same seeds
    # (initial parameters, shuffling), so the accuracy-parity test compares
    # each with dense seed by seed.
    say "rb_train: embedlm (a 32768 x 64 embedding, 91% of the parameters, row density ~1.3%) on dict-gcide, 400 steps, reducers $embed_reducers, seeds 1-$seeds (S2's regime: its training claims)"
    for seed in $(seq 1 "$seeds"); do
    for r in $embed_reducers; do
        extra=""
        # The authors' sketch width: 0.25 x the embedding's row density.
        [ "$r" = s2 ] && extra="-O sketch_width_mode=fraction -O sketch_width=0.0032"
        [ "$r" = gossip ] && extra="-O gossip_mix=params"
        # The sparse reducers take the embedding; the dense layers go
        # through dense allreduce, as in the S2 authors' training.
        case $r in none|dense|gossip) ;; *) extra="$extra --dense-reducer dense" ;; esac
        # shellcheck disable=SC2086
        train_one "embedlm-$r-$seed" --model embedlm --reducer "$r" $extra --seed "$seed" \
            --iterations 400 --eval-every 100
    done
    done
    say "rb_train: lenet on Fashion-MNIST, one epoch, reducers $lenet_reducers, seeds 1-$seeds (GossipGraD's regime: image classification)"
    for seed in $(seq 1 "$seeds"); do
    for r in $lenet_reducers; do
        extra=""
        # s2 on a dense-gradient model: top 5% with error feedback, then a
        # sketch 4x the largest top-k, 3 rows (5 epochs: 89.3% vs dense 90.0%;
        # top 1% lost 1.2 points).  gossip mixes parameters, as its authors.
        [ "$r" = s2 ] && extra="--sparsify topk:0.05 -O sketch_width_mode=nnz -O sketch_width=4 -O sketch_rows=3"
        [ "$r" = gossip ] && extra="-O gossip_mix=params"
        # shellcheck disable=SC2086
        train_one "lenet-$r-$seed" --model lenet --reducer "$r" $extra --epochs 1 --seed "$seed" \
            --eval-every 50
    done
    done
fi

# The frontier: every lossy method at its knobs, trained beside dense with
# the same seeds, so that each setting gets its accuracy difference, bytes
# per step and time per iteration, and the report finds the narrowest s2
# sketch (and the gossip setting) that trains as well as dense.
if [ "${RB_SKIP_TRAIN:-0}" != 1 ] && [ "${RB_SKIP_FRONTIER:-0}" != 1 ] && [ -x "$train" ]; then
    frontier="$out/frontier-configs.txt"
    cat >"$frontier" <<FRONTIER
embedlm s2-f0.0008 --reducer s2 --dense-reducer dense -O sketch_width_mode=fraction -O sketch_width=0.0008
embedlm s2-ef --reducer s2 --dense-reducer dense -O sketch_width_mode=fraction -O sketch_width=0.0032 -O error_feedback=on
embedlm s2-nnz1 --reducer s2 --dense-reducer dense -O sketch_width_mode=nnz -O sketch_width=1
embedlm s2-nnz4r3 --reducer s2 --dense-reducer dense -O sketch_width_mode=nnz -O sketch_width=4 -O sketch_rows=3
embedlm oktopk-0.01 --reducer oktopk --dense-reducer dense -O oktopk_select=topk -O oktopk_density=0.01 -O error_feedback=on
embedlm gossip-grad --reducer gossip -O gossip_mix=grad
lenet s2-nnz4r3-topk0.05 --reducer s2 --sparsify topk:0.05 -O sketch_width_mode=nnz -O sketch_width=4 -O sketch_rows=3
lenet topk-0.01 --reducer agsparse --sparsify topk:0.01
lenet topk-0.05 --reducer agsparse --sparsify topk:0.05
lenet oktopk-0.01 --reducer oktopk -O oktopk_select=topk -O oktopk_density=0.01 -O error_feedback=on
lenet gossip-grad --reducer gossip -O gossip_mix=grad
FRONTIER
    say "rb_train: the frontier: $(wc -l <"$frontier") settings of the lossy methods (s2 sketch widths and rows, error feedback; top-k; Ok-Topk's top-k; gossip's mixing) on embedlm and lenet, seeds 1-$seeds"
    for seed in $(seq 1 "$seeds"); do
        while read -r model name args; do
            steps="--iterations 400 --eval-every 100"
            [ "$model" = lenet ] && steps="--epochs 1 --eval-every 50"
            # shellcheck disable=SC2086
            train_one "$model-$name-$seed" --model "$model" $args --seed "$seed" $steps
        done <"$frontier"
    done
fi

# Real gradients: embedlm's own embedding gradients, recorded by a short
# rb_train run, replayed through every reducer, beside uniform and Zipf rows
# of the trace's shape (docs/workloads.md).  The trace is an input, not a
# result: rb-report skips it.
if [ "${RB_SKIP_TRAIN:-0}" != 1 ] && [ -x "$train" ]; then
    say "rb_micro: workloads: embedlm's recorded gradients replayed through every reducer, beside uniform and Zipf rows of their shape"
    mkdir -p "$out/traces"
    trace="$out/traces/embedlm-p$ranks.h5"
    run "$train" --model embedlm --iterations 40 --record-every 10 -o none \
        --record-gradients "$trace" --force </dev/null >"$out/traces/record.txt"
    # The trace's shape, its mean row density per rank (uniform rows beside
    # it) and embedlm's batch x context = 128 x 8 token draws (Zipf rows).
    w=$(/usr/bin/python3 -c "import h5py; g = h5py.File('$trace', 'r')['layers/embedding']; r = int(g.attrs['rows']); print('%dx%d %.6g %.6g' % (r, g.attrs['cols'], g['counts'][()].mean() / r, 1024 / r))")
    set -f; set -- $w; set +f
    # s2 at the authors' width for the trace's density (0.25 x density)
    s2w=$(/usr/bin/python3 -c "print('%.6g' % (0.25 * $2))")
    for launch in $(seq 1 "$launches"); do
        run "$micro" --reducer all --input "trace:$trace" -i 10 -x 2 --repeat "$reps" -q \
            -O sketch_width_mode=fraction -O sketch_width="$s2w" \
            -o "$out/micro-workload-trace-L$launch.h5" </dev/null >/dev/null
        run "$micro" --reducer all --shape "$1" --layout row --density "$2" -i 10 -x 2 --repeat "$reps" -q \
            -O sketch_width_mode=fraction -O sketch_width="$s2w" \
            -o "$out/micro-workload-uniform-L$launch.h5" </dev/null >/dev/null
        run "$micro" --reducer all --shape "$1" --layout row --density "$3" --overlap zipf:1.1 -i 10 \
            -x 2 --repeat "$reps" -q -O sketch_width_mode=fraction -O sketch_width="$s2w" \
            -o "$out/micro-workload-zipf-L$launch.h5" </dev/null >/dev/null
    done
fi

# The papers' claims live at 128 ranks: the same rb_micro, built with
# SimGrid's smpicc, on the simulated P100/IB-EDR and KNL/Aries platforms
# (jobscripts/sim/claims.sh says what runs; docs/simgrid.md).
if [ "${RB_SKIP_SIM:-0}" != 1 ] && command -v smpicc >/dev/null 2>&1; then
    say "SimGrid: the papers' claims at 128 simulated ranks (P100/IB-EDR, KNL/Aries)"
    sbuild=${RB_SMPI_BUILD_DIR:-$src/build-smpi}
    mkdir -p "$sbuild"
    # configure needs SMPI_PRETEND_CC (it cannot run smpicc's programs);
    # make must not have it (it would link a program smpirun refuses).
    # A configure newer than the build's (autoreconf above) would make make
    # re-check it without SMPI_PRETEND_CC, which fails: configure again.
    { [ -f "$sbuild/Makefile" ] && ! [ "$src/configure" -nt "$sbuild/config.status" ]; } ||
        (cd "$sbuild" && SMPI_PRETEND_CC=1 "$src/configure" CC=smpicc \
        --with-simgrid --without-papi --without-hwloc --without-cuda >configure.out 2>&1) ||
        { cat "$sbuild/configure.out"; exit 1; }
    make -C "$sbuild" -j"$(nproc)" benchmarks/rb_micro >"$sbuild/make.out" 2>&1 ||
        { tail -40 "$sbuild/make.out"; exit 1; }
    "$src/jobscripts/sim/claims.sh" "$sbuild" "$out/sim" quick </dev/null
fi

# Across a real wire: an emulated cluster of 2 nodes (network namespaces
# of this machine, links shaped to 1 Gbit/s), the S2 authors' setting and
# GossipGraD with compute, 6 launches (jobscripts/emulated/sweep quick;
# docs/emulated.md).  Needs root and a kernel with network namespaces, veth
# and tbf: without them the step says why and the report has no
# emulated-network row.
if [ "${RB_SKIP_EMULATED:-0}" != 1 ]; then
    say "emulated network: 2 nodes, links 1 Gbit/s, the S2 authors' setting and GossipGraD, $launches launches"
    if [ "$(id -u)" -ne 0 ]; then
        echo "  skipped: an emulated cluster needs root (network namespaces, tc, Slurm's daemons)"
    else
        erc=0
        RB_SWEEP_LAUNCHES=$launches "$src/jobscripts/emulated/sweep" "$build" "$out/emulated" quick \
            </dev/null >"$out/emulated.txt" 2>&1 || erc=$?
        case $erc in
            0) echo "  done: $out/emulated/N2-1gbit" ;;
            3) echo "  skipped: $(sed -n 's/.*error: //p' "$out/emulated.txt" | tail -1)" ;;
            *) tail -20 "$out/emulated.txt"; echo "main.sh: the emulated-network runs failed (exit $erc; log $out/emulated.txt)" >&2; exit 1 ;;
        esac
    fi
fi

# PyTorch: the papers' model families (S2: an LSTM language model with a
# sparse embedding; GossipGraD: ResNet, GoogLeNet) trained through the
# Python binding with our reducers, beside PyTorch's own DDP with its
# allreduce, fp16 and PowerSGD hooks, same seeds (docs/python.md).  DDP's
# hooks take no sparse gradient: lstm has DDP's allreduce only.
if [ "$torch_mode" != 0 ]; then
    methods="dense agsparse s2 gossip ddp-allreduce ddp-fp16 ddp-powersgd"
    say "PyTorch (rb-torch-train): $torch_models; $methods; seeds 1-$torch_seeds, $torch_iterations steps"
    if ! /usr/bin/python3 -c 'import torch, torchvision, mpi4py' 2>/dev/null ||
       [ ! -f "$build/benchmarks/torch/_rbharness.la" ]; then
        echo "  skipped: needs python3-torch, python3-torchvision, python3-mpi4py and the Python binding (configure: Python binding yes)"
    else
        trainer=rb-torch-train
        PYTHONPATH="$src/src/python:$build/src/python/.libs:$build/benchmarks/torch/.libs${PYTHONPATH:+:$PYTHONPATH}"
        export PYTHONPATH
        for seed in $(seq 1 "$torch_seeds"); do
        for model in $torch_models; do
        for m in $methods; do
            case $model-$m in lstm-ddp-fp16|lstm-ddp-powersgd) continue ;; esac
            case $m in
                ddp-*) how="--ddp ${m#ddp-}" ;;
                gossip) how="--reducer gossip -O gossip_mix=params" ;;
                *) how="--reducer $m" ;;
            esac
            # lstm: the sparse reducers take the embedding, dense allreduce
            # the dense layers, as the S2 authors train.
            [ "$model" = lstm ] && case $m in agsparse|s2) how="$how --dense-reducer dense" ;; esac
            # shellcheck disable=SC2086
            train_one "torch-$model-$m-$seed" --model "$model" $how --seed "$seed" \
                --iterations "$torch_iterations" --eval-every "$((torch_iterations / 2))"
        done
        done
        done
        trainer=rb_train
    fi
fi

rm -f "$out/.stderr"
if [ -s "$warnings" ]; then
    printf '\nWarnings of the runs, each once with the number of times it was given (all: %s):\n' "$warnings" |
        fold -s -w 120
    sort "$warnings" | uniq -c | sort -rn | while read -r n line; do
        printf '%s [%d times]\n' "$line" "$n" | fold -s -w 120
    done
fi

say "report"
# rb-report names each refused file whole with its reason on one line (for
# grep, kept in report-terminal.txt); here they fold at 120 columns too.
rrc=0
"$src/analysis/rb-report" "$out" -o "$out/report" >"$out/report-terminal.txt" 2>&1 || rrc=$?
fold -s -w 120 "$out/report-terminal.txt"
[ $rrc -eq 0 ] || exit $rrc
printf '\nResults: %s\nReport:  %s/report/report.md (and report.html)\n' "$out" "$out"
