# jobscripts/lib.sh: sourced by every sbatch script in jobscripts/*/ and by
# jobscripts/submit.  One place for: finding the binaries, loading modules,
# the launcher, the sweep definition, the resume check and running one
# configuration.  The scripts themselves only set #SBATCH lines and
# partition defaults.  Bash; the caller has `set -euo pipefail`.
#
# Environment (all optional; script arguments of the same name win, see
# rb_parse_args):
#   RB_ROOT        the reducerbench checkout (found automatically)
#   RB_BIN         directory holding rb_micro / rb_train (an install's bin/)
#   RB_BUILD       build directory (binaries in $RB_BUILD/benchmarks);
#                  default: $RB_ROOT/build, then $RB_ROOT/build-main, then PATH
#   RB_MODULES     modules to load where `module` exists (space or comma list)
#   RB_NTASKS      ranks outside Slurm (mpirun fallback; default 1)
#   RB_LAUNCHER    srun, mpirun, or a launch command template; %N = nodes,
#                  %n = tasks (default: srun in a Slurm job, else mpirun;
#                  srun is srun --mpi=$RB_SRUN_MPI --nodes=%N --ntasks=%n,
#                  mpirun is mpirun -np %n $RB_MPIRUN_ARGS)
#   RB_MPIRUN_ARGS more mpirun options for RB_LAUNCHER=mpirun
#   RB_SITE_PROFILE  a file of site settings sourced before each job's set-up
#                  (RB_SITE_NAME; RB_SITE_NO_GPU=1: RB_DEVICE cuda runs on the
#                  host; RB_MPIRUN_ARGS; the MPI library's variables);
#                  jobscripts/emulated/site.sh is the emulated cluster's
#   RB_SRUN_MPI    srun's --mpi plugin (default pmix)
#   RB_SRUN_ARGS   extra srun arguments (e.g. --cpu-bind=cores)
#   RB_OUT         result directory (default results/<array job id or job id>)
#   RB_SWEEP_FILE  sweep definition: lines "reducer density size" ('#' comments)
#   RB_REDUCERS    comma list (micro default all reducers one by one)
#   RB_DENSITIES   comma list (default 0.01)
#   RB_SIZES       comma list of rb_micro -m values, MIN:MAX or one size (default 4K:4M)
#   RB_ITERS, RB_WARMUP   rb_micro -i / -x
#   RB_DEVICE      host | cuda
#   RB_TIMEOUT     rb_micro/rb_train --timeout seconds per configuration (0 = none)
#   RB_MICRO_ARGS, RB_TRAIN_ARGS  more arguments for the benchmark
#   RB_MODEL, RB_EPOCHS           rb_train model and epochs
#   RB_DATA        rb_train --data (default: rb_train's, Debian's
#                  /usr/share/datasets/fashion-mnist; set it on a cluster)
#   RB_THREADS     rb_train --threads, BLAS threads per rank (default
#                  SLURM_CPUS_PER_TASK, else 1)
#   RB_NODE_COUNTS comma list for the scaling study (default 1,2,4,... up to the allocation)
#   RB_CHECKPOINT  rb_train checkpoints (default 1): each configuration's
#                  state in RB_OUT/NAME.h5.ckpt (--checkpoint, --resume), so
#                  that a job requeued or resubmitted with the same RB_OUT
#                  continues a training where it stopped, bit for bit
#   RB_REQUEUE     1 (the train scripts' default, with #SBATCH --requeue):
#                  the time-limit warning (USR1) stops the run, which keeps
#                  its checkpoint, and requeues the job; at most
#                  RB_MAX_REQUEUES times (default 5, Slurm's restart count)

RB_ALL_REDUCERS="none,dense,agsparse,sparcml,parallax,omnireduce,oktopk,zen,s2,gossip"

rb_log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
rb_die() { rb_log "error: $*"; exit 1; }

# Script arguments (same meaning as the variables above):
#   --reducers L --densities L --sizes L --iterations N --warmup N --device D
#   --timeout S --out DIR --sweep-file F --model M --epochs N --data DIR
#   --threads N --node-counts L --modules L   and  -- ARGS (passed to the
#   benchmark); --help prints the script's header and this list.
rb_parse_args() {
    RB_EXTRA_ARGS=()
    local var
    while [ $# -gt 0 ]; do
        case "$1" in
            --) shift; RB_EXTRA_ARGS=("$@"); return 0 ;;
            -h|--help) rb_usage; exit 0 ;;
            --iters) rb_die "--iters is now --iterations N (rb_micro's -i/--iterations)" ;;
            --iterations)   # RB_ITERS, as rb_micro -i
                [ $# -ge 2 ] || rb_die "$1 needs a value"
                RB_ITERS=$2; shift 2 ;;
            --reducers|--densities|--sizes|--warmup|--device|--timeout|--out|\
            --sweep-file|--model|--epochs|--data|--threads|--node-counts|--modules)
                [ $# -ge 2 ] || rb_die "$1 needs a value"
                var=${1#--}; var=RB_${var//-/_}      # --sweep-file -> RB_SWEEP_FILE
                printf -v "${var^^}" '%s' "$2"
                shift 2 ;;
            *) rb_die "unknown script argument '$1' (see --help)" ;;
        esac
    done
}

# --help of a job script: its header comment (the lines after #SBATCH) and
# the arguments and variables of this file.
rb_usage() {
    sed -n '2,/^set -euo/{/^#SBATCH/d;/^# shellcheck/d;/^set -euo/d;s/^# \{0,1\}//p}' "$0"
    echo
    sed -n '7,/^RB_ALL_REDUCERS=/{/^RB_ALL_REDUCERS=/d;s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"
    echo "Script arguments: --reducers L --densities L --sizes L --iterations N --warmup N"
    echo "  --device D --timeout S --out DIR --sweep-file F --model M --epochs N --data DIR"
    echo "  --threads N --node-counts L --modules L, then -- ARGS for the benchmark."
}

# Where the benchmark binaries are: RB_BIN, RB_BUILD, the checkout's build
# directories, PATH.
rb_find_bin() {
    local name=$1 d
    for d in "${RB_BIN:-}" "${RB_BUILD:+$RB_BUILD/benchmarks}" \
        "$RB_ROOT/build/benchmarks" "$RB_ROOT/build-main/benchmarks" "$RB_ROOT/benchmarks"; do
        [ -n "$d" ] && [ -x "$d/$name" ] && [ -f "$d/$name" ] && { echo "$d/$name"; return 0; }
    done
    command -v "$name" && return 0
    rb_die "$name not found: set RB_BIN (install bin/) or RB_BUILD (build directory)"
}

# Load RB_MODULES where environment modules / Lmod exist; elsewhere say so.
rb_load_modules() {
    local mods=${RB_MODULES:-} m
    mods=${mods//,/ }
    [ -n "${mods// /}" ] || return 0
    if ! type module >/dev/null 2>&1; then
        local init
        for init in "${LMOD_PKG:+$LMOD_PKG/init/bash}" "${MODULESHOME:+$MODULESHOME/init/bash}" \
            /etc/profile.d/lmod.sh /etc/profile.d/modules.sh; do
            # shellcheck disable=SC1090
            [ -n "$init" ] && [ -f "$init" ] && { set +u; . "$init"; set -u; break; }
        done
    fi
    if ! type module >/dev/null 2>&1; then
        rb_log "no 'module' command here; not loading: $mods"
        return 0
    fi
    for m in $mods; do
        rb_log "module load $m"
        set +u
        module load "$m" || { set -u; rb_die "module load $m failed"; }
        set -u
    done
}

# The launch command for NODES and TASKS as an array in RB_LAUNCH.
rb_launcher() {
    local nodes=$1 tasks=$2 tmpl=${RB_LAUNCHER:-}
    if [ -z "$tmpl" ]; then
        tmpl=mpirun
        [ -n "${SLURM_JOB_ID:-}" ] && command -v srun >/dev/null && tmpl=srun
    fi
    case $tmpl in
        srun)
            # srun does not take --cpus-per-task from the job (Slurm >= 22.05)
            tmpl="srun --mpi=${RB_SRUN_MPI:-pmix} --nodes=%N --ntasks=%n"
            tmpl+="${SLURM_CPUS_PER_TASK:+ --cpus-per-task=$SLURM_CPUS_PER_TASK} ${RB_SRUN_ARGS:-}" ;;
        mpirun) tmpl="mpirun -np %n ${RB_MPIRUN_ARGS:-}" ;;
    esac
    tmpl=${tmpl//%N/$nodes}
    tmpl=${tmpl//%n/$tasks}
    read -r -a RB_LAUNCH <<<"$tmpl"
}

# The site profile (RB_SITE_PROFILE), then what it says about the site.
rb_site() {
    [ -n "${RB_SITE_PROFILE:-}" ] || return 0
    [ -r "$RB_SITE_PROFILE" ] || rb_die "RB_SITE_PROFILE=$RB_SITE_PROFILE: cannot read it"
    # shellcheck disable=SC1090
    . "$RB_SITE_PROFILE"
    rb_log "site profile: ${RB_SITE_NAME:-$RB_SITE_PROFILE}"
    if [ "${RB_SITE_NO_GPU:-0}" = 1 ] && [ "${RB_DEVICE:-}" = cuda ]; then
        rb_log "this site's nodes have no GPU: RB_DEVICE=host instead of cuda"
        RB_DEVICE=host
    fi
}

# Common set-up: root, out directory, modules, job geometry.
rb_setup() {
    : "${RB_ROOT:?RB_ROOT must be set before sourcing lib.sh}"
    local id=${SLURM_ARRAY_JOB_ID:-${SLURM_JOB_ID:-local-$(date -u +%Y%m%dT%H%M%SZ)}}
    RB_OUT=${RB_OUT:-results/$id}
    mkdir -p "$RB_OUT" || rb_die "cannot create $RB_OUT"
    RB_NODES=${SLURM_JOB_NUM_NODES:-${SLURM_NNODES:-1}}
    RB_NTASKS=${SLURM_NTASKS:-${RB_NTASKS:-1}}
    rb_site
    rb_load_modules
    # BLAS threads per rank for rb_train (--threads): the CPUs Slurm gave
    # each task.  rb_micro is single-threaded.
    RB_THREADS=${RB_THREADS:-${SLURM_CPUS_PER_TASK:-1}}
    rb_log "job ${SLURM_JOB_ID:-none}${SLURM_ARRAY_TASK_ID:+ task $SLURM_ARRAY_TASK_ID}" \
        "partition ${SLURM_JOB_PARTITION:-none}: $RB_NODES node(s), $RB_NTASKS task(s) -> $RB_OUT"
}

# The sweep: one configuration per line, "reducer density size".
rb_sweep_list() {
    if [ -n "${RB_SWEEP_FILE:-}" ]; then
        [ -r "$RB_SWEEP_FILE" ] || rb_die "cannot read sweep file $RB_SWEEP_FILE"
        sed -e 's/#.*//' -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' "$RB_SWEEP_FILE" | grep -v '^$' |
            awk 'NF != 3 { print "bad sweep line (want: reducer density size): " $0 > "/dev/stderr"; exit 1 } { print }'
        return
    fi
    local r d s
    for r in ${RB_REDUCERS//,/ }; do
        for d in ${RB_DENSITIES//,/ }; do
            for s in ${RB_SIZES//,/ }; do
                echo "$r $d $s"
            done
        done
    done
}

# complete FILE: 0 when FILE is a finished archive (root attribute
# complete == 1).  h5dump, else Debian's h5py; with neither, the final name
# existing is taken as complete (the writer renames only finished files).
rb_complete() {
    local f=$1
    [ -f "$f" ] || return 1
    if command -v h5dump >/dev/null; then
        h5dump -a /complete "$f" 2>/dev/null | grep -Eq '\(0\): 1$|\(0\): 1[^0-9]'
    elif /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
        /usr/bin/python3 -c 'import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    sys.exit(0 if int(f.attrs.get("complete", 0)) == 1 else 1)' "$f" 2>/dev/null
    else
        return 0
    fi
}

# rows FILE: rows of FILE's /micro/results (0 when it has none or cannot be
# read: a temporary of a process killed before its first row, or while it
# wrote one, or an rb_train run's, which writes at its end); "?" with
# neither h5dump nor h5py.
rb_rows() {
    local f=$1
    if command -v h5dump >/dev/null; then
        h5dump -H -d /micro/results "$f" 2>/dev/null |
            sed -n 's/.*DATASPACE *SIMPLE *{ *( *\([0-9]*\) *).*/\1/p' | head -1 | grep . || echo 0
    elif /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
        /usr/bin/python3 -c 'import sys, h5py
try:
    with h5py.File(sys.argv[1], "r") as f:
        print(len(f["micro/results"]) if "micro/results" in f else 0)
except Exception:
    print(0)' "$f" 2>/dev/null || echo 0
    else
        echo "?"
    fi
}

# note FILE: the reason a fault wrote into a kept archive's first 512 bytes
# (its HDF5 user block; results/README.md), "" when none.
rb_note() {
    head -c 512 "$1" 2>/dev/null | tr -d '\0' | sed -n 's/^reducerbench: interrupted: //p' | head -1
}

# What a run that did not finish measured is kept, never taken for done:
# the temporary FILE.h5.tmp.HOST.PID a rank 0 left without renaming it
# (killed by SIGKILL, its node lost: it flushes after every row, so the
# file on disk is readable) becomes FILE.h5.interrupted when it holds a
# row, replacing an older one when newer is set (the run just made), else
# only where there is none; one without a row is removed.
# Whether a live writer holds FILE open: HDF5 keeps an exclusive flock on
# an open file (another run of the same configuration, started by hand or
# elsewhere; a rank 0 still keeping what it finished).
rb_held_open() { [ -e "$1" ] && ! flock -n -s "$1" true 2>/dev/null; }

rb_keep_partial() {   # OUT [newer]
    local out=$1 newer=${2:-} t rows
    for t in "$out".tmp.*; do
        [ -e "$t" ] || continue
        if rb_held_open "$t"; then
            rb_log "leaving $t: a live run holds it open"
            continue
        fi
        rows=$(rb_rows "$t")
        if [ "$rows" = 0 ]; then
            rm -f "$t"
        elif [ -z "$newer" ] && [ -e "$out.interrupted" ]; then
            rb_log "removing $t (an older run's; $out.interrupted is kept)"
            rm -f "$t"
        else
            mv -f "$t" "$out.interrupted" &&
                rb_log "kept $t as $out.interrupted ($rows row(s); its rank 0 ended without a word: SIGKILL, a lost node?)"
        fi
    done
}

# Clean up after a killed or failed run: a temporary is kept (above), an
# archive that is not complete removed.
rb_discard_partial() {
    local out=$1
    rb_keep_partial "$out" "${2:-}"
    if [ -e "$out" ] && ! rb_complete "$out"; then
        rb_log "removing incomplete $out"
        rm -f "$out"
    fi
}

# What an exit status means (README.md, rb_micro's exit status).
rb_status_text() {
    case $1 in
        1) echo "an error or a validation failure" ;;
        2) echo "a usage error" ;;
        3) echo "no progress inside a call: a network or peer fault (--stall-timeout)" ;;
        124) echo "the time limit (--timeout)" ;;
        *) if [ "$1" -gt 128 ] 2>/dev/null; then echo "killed by signal $(($1 - 128)) ($(kill -l "$(($1 - 128))" 2>/dev/null))"
           else echo "status $1"; fi ;;
    esac
}

# Which FILE.h5.interrupted is there (inode and time; "none"), so that one
# a fault kept during a run is told from an older one.
rb_kept_id() { stat -c '%i %Y' "$1.interrupted" 2>/dev/null || echo none; }
rb_kept_since() {   # OUT ID: 0 when OUT.interrupted is not the one of ID
    [ -e "$1.interrupted" ] && [ "$(rb_kept_id "$1")" != "$2" ]
}

# The partial archive a fault kept during this run, named in the log.
rb_say_kept() {   # OUT ID
    local out=$1 note
    rb_kept_since "$out" "$2" || return 0
    note=$(rb_note "$out.interrupted")
    rb_log "kept the partial archive as $out.interrupted (complete = 0: not taken as done${note:+; interrupted: $note})"
}

RB_CURRENT_OUT=""
RB_CHILD=""
RB_KEPT_ID=none
# Until no temporary of OUT is held open by a writer (its rank 0 keeping
# what it finished after the launcher has already returned: srun, told to
# stop, may end before its tasks), at most SECONDS.
rb_wait_released() {   # OUT SECONDS
    local t i
    for ((i = 0; i < $2 * 5; i++)); do
        for t in "$1".tmp.*; do
            rb_held_open "$t" && break
            t=""
        done
        [ -z "$t" ] && return 0
        sleep 0.2
    done
    return 1
}

rb_on_signal() {   # SIGNAL
    rb_log "signal $1: stopping ${RB_CURRENT_OUT:-the run}"
    [ -n "$RB_CHILD" ] && rb_stop_tasks "$1"
    if [ -n "$RB_CURRENT_OUT" ]; then
        rb_wait_released "$RB_CURRENT_OUT" 20 ||
            rb_log "a rank still writes $RB_CURRENT_OUT's temporary after 20 s; leaving it"
        rb_discard_partial "$RB_CURRENT_OUT" newer
        rb_say_kept "$RB_CURRENT_OUT" "$RB_KEPT_ID"
    fi
    [ "$1" = USR1 ] && rb_requeue
    exit 143
}

# The time limit is near (USR1): with RB_REQUEUE=1 the job goes back to the
# queue, the same job id and RB_OUT; when it runs again the completed
# configurations are skipped and a training resumes from its checkpoint.
# Not after RB_MAX_REQUEUES restarts (a run that cannot finish one chunk
# in the time limit would requeue for ever).
rb_requeue() {
    [ "${RB_REQUEUE:-0}" = 1 ] && [ -n "${SLURM_JOB_ID:-}" ] || return 0
    local n=${SLURM_RESTART_COUNT:-0} max=${RB_MAX_REQUEUES:-5}
    if [ "$n" -ge "$max" ]; then
        rb_log "not requeued: restarted $n times already (RB_MAX_REQUEUES=$max)"
        return 0
    fi
    if scontrol requeue "$SLURM_JOB_ID" 2>/dev/null; then
        rb_log "requeued job $SLURM_JOB_ID (restart $((n + 1)) of at most $max): it resumes in $RB_OUT"
    else
        rb_log "cannot requeue job $SLURM_JOB_ID (submitted without --requeue, or the cluster forbids it)"
    fi
}
# Stop the running benchmark's ranks, which keep what they finished, then
# wait for the launcher.  Under srun a TERM or INT to the job reached the
# ranks already (scancel, the time limit: every step's tasks get it); USR1
# (below) came to this shell alone and is passed to srun, which forwards
# it to its tasks (srun told TERM would kill them with SIGKILL).  mpirun
# passes a TERM on to its ranks.
rb_stop_tasks() {   # SIGNAL
    if [ "${RB_LAUNCH[0]##*/}" = srun ]; then
        [ "$1" = USR1 ] && kill -USR1 "$RB_CHILD" 2>/dev/null
    else
        kill -TERM "$RB_CHILD" 2>/dev/null
    fi
    # its status is the signal's: not a failure of this shell (set -e
    # ended the handler here, before it could say what was kept)
    wait "$RB_CHILD" 2>/dev/null || true
}
# USR1: the #SBATCH --signal=B:USR1@90 of every script, 90 s before the
# time limit: the running benchmark is stopped (TERM: it keeps what it
# finished as NAME.h5.interrupted) while there is time, where the limit's
# own TERM leaves KillWait (30 s by default) before SIGKILL.
trap 'rb_on_signal TERM' TERM
trap 'rb_on_signal INT' INT
trap 'rb_on_signal USR1' USR1

# Wait for the launcher; once rank 0 has ended on a fault (a new
# FILE.h5.interrupted: rb_kept_since), give it RB_FAULT_GRACE seconds
# (default 30) to end, then TERM, and as long again before KILL: mpirun
# waits for the daemon of a node it lost for as long as TCP retries (about
# 15 minutes).  Returns its status; RB_STOPPED=1 when it was stopped.
rb_wait_launcher() {   # OUT
    local out=$1 grace=${RB_FAULT_GRACE:-30} since=""
    RB_STOPPED=0
    while kill -0 "$RB_CHILD" 2>/dev/null; do
        if [ -z "$since" ] && rb_kept_since "$out" "$RB_KEPT_ID"; then
            since=$SECONDS
        fi
        if [ -n "$since" ] && [ $((SECONDS - since)) -ge "$grace" ]; then
            rb_log "rank 0 ended on a fault $grace s ago and the launcher still runs (a lost node?): stopping it"
            RB_STOPPED=1
            kill -TERM "$RB_CHILD" 2>/dev/null
            for ((since = 0; since < grace; since++)); do
                kill -0 "$RB_CHILD" 2>/dev/null || break
                sleep 1 & wait $! 2>/dev/null
            done
            kill -KILL "$RB_CHILD" 2>/dev/null
            break
        fi
        # in the background, so that a TERM from scancel is handled at once
        sleep 1 & wait $! 2>/dev/null
    done
    local rc=0
    wait "$RB_CHILD" || rc=$?
    return "$rc"
}

# rb_run NAME NODES TASKS BINARY ARGS...: one configuration into
# $RB_OUT/NAME.h5, skipped when that file is complete.  Returns the
# benchmark's status; never leaves a file that looks complete but is not,
# and keeps what a run that did not finish measured under a name that
# neither a resume nor the analysis takes as done (NAME.h5.failed: stopped
# by --timeout or divergence; NAME.h5.interrupted: a fault or a signal).
rb_run() {
    local name=$1 nodes=$2 tasks=$3 bin=$4 rc=0
    shift 4
    local out=$RB_OUT/$name.h5
    rb_lock_config "$out"
    if rb_complete "$out"; then
        rb_log "skip $name: $out is complete"
        rb_unlock_config
        return 0
    fi
    rb_discard_partial "$out"
    rb_launcher "$nodes" "$tasks"
    rb_log "run $name: ${RB_LAUNCH[*]} $bin $* -o $out"
    RB_CURRENT_OUT=$out
    RB_KEPT_ID=$(rb_kept_id "$out")
    # In the background so that a TERM from scancel is handled at once.
    # The archive records the launch command.
    RB_LAUNCH_COMMAND="${RB_LAUNCH[*]}" "${RB_LAUNCH[@]}" "$bin" "$@" -o "$out" </dev/null &
    RB_CHILD=$!
    rb_wait_launcher "$out" || rc=$?
    RB_CHILD=""
    if [ "$rc" -ne 0 ] || ! rb_complete "$out"; then
        [ "$rc" -ne 0 ] || rc=1
        rb_log "FAILED $name (exit $rc: $(rb_status_text "$rc")$([ "${RB_STOPPED:-0}" = 1 ] &&
            echo "; the launcher's, stopped after rank 0 ended on a fault"))"
        if [ "$rc" -ne 0 ] && rb_complete "$out"; then
            # a run stopped by --timeout or by divergence keeps what it measured
            # (timed_out = 1, diverged = 1): kept, under
            # a name that neither a resume nor the analysis takes as done
            mv -f "$out" "$out.failed" && rb_log "kept the partial archive as $out.failed"
        fi
        rb_discard_partial "$out" newer
        rb_say_kept "$out" "$RB_KEPT_ID"
    else
        rb_log "done $name -> $out"
    fi
    RB_CURRENT_OUT=""
    rb_unlock_config
    return "$rc"
}

# One run per configuration at a time: rb_run holds an exclusive flock on
# RB_OUT/.NAME.lock (hidden, and not named *.h5*, so that no tool or glob
# takes it for an archive; kept: removing a lock file others may wait on
# would let two runs in).  A second job on the same configuration (a sweep line
# duplicated in two array tasks, a script started twice) waits for the
# first, then skips when the first finished it, or runs it when the first
# failed; it never removes or renames the first one's files.
RB_LOCK_FD=""
rb_lock_config() {   # OUT
    local lock
    lock=$(dirname "$1")/.$(basename "$1" .h5).lock
    exec {RB_LOCK_FD}>>"$lock" || rb_die "cannot create the lock $lock"
    if ! flock -n "$RB_LOCK_FD"; then
        rb_log "waiting: another run of this configuration holds $lock"
        flock "$RB_LOCK_FD" || rb_die "cannot lock $lock"
        rb_log "the other run of $(basename "$1" .h5) ended; going on"
    fi
}
rb_unlock_config() {
    [ -n "$RB_LOCK_FD" ] || return 0
    # flock -u: the launcher's children share the descriptor; unlocking
    # releases it for all of them, closing would not
    flock -u "$RB_LOCK_FD" 2>/dev/null || true
    exec {RB_LOCK_FD}>&-
    RB_LOCK_FD=""
}

# rb_for_tasks FUNC: call FUNC INDEX "LINE" for this array task's line of
# the sweep, or for every line outside an array job.  Writes the sweep to
# $RB_OUT/sweep.txt.  Exit status: 0 when every configuration succeeded,
# else the (last) failing benchmark's status.
rb_for_tasks() {
    local fn=$1 list n i=0 rc=0 line
    list=$(rb_sweep_list) || rb_die "bad sweep definition"
    n=$(grep -c . <<<"$list" || true)
    [ "$n" -gt 0 ] || rb_die "empty sweep (RB_REDUCERS, RB_DENSITIES, RB_SIZES or RB_SWEEP_FILE)"
    printf '%s\n' "$list" >"$RB_OUT/sweep.txt.$$" && mv -f "$RB_OUT/sweep.txt.$$" "$RB_OUT/sweep.txt"
    if [ -n "${SLURM_ARRAY_TASK_ID:-}" ]; then
        local t=$SLURM_ARRAY_TASK_ID
        if [ "$t" -ge "$n" ]; then
            rb_log "array task $t: the sweep has only $n configurations (0..$((n - 1))); nothing to do"
            return 0
        fi
        line=$(sed -n "$((t + 1))p" <<<"$list")
        "$fn" "$t" "$line"
        return
    fi
    rb_log "no job array: running all $n configurations in turn"
    # fd 3: the launcher must not eat the list from stdin.
    local st
    while IFS= read -r line <&3; do
        st=0
        "$fn" "$i" "$line" || st=$?
        [ "$st" -eq 0 ] || rc=$st   # the last failure's status
        i=$((i + 1))
    done 3<<<"$list"
    [ "$rc" -eq 0 ] || rb_log "some configurations failed (see FAILED above)"
    return "$rc"
}

# File-name-safe configuration names.
rb_name() { local s="$*"; s=${s//:/-}; s=${s// /_}; echo "${s//[^A-Za-z0-9_.+-]/}"; }

# ---- the three kinds of job -------------------------------------------------

# Sweep defaults of each kind (also used by jobscripts/submit to size arrays).
rb_defaults() {
    case "$1" in
        micro) : "${RB_REDUCERS:=$RB_ALL_REDUCERS}" "${RB_DENSITIES:=0.01}" "${RB_SIZES:=4K:4M}" ;;
        train)
            : "${RB_REDUCERS:=dense,agsparse,sparcml,s2,gossip}" "${RB_MODEL:=lenet}" "${RB_EPOCHS:=1}"
            : "${RB_CHECKPOINT:=1}" "${RB_REQUEUE:=1}"
            RB_DENSITIES=- RB_SIZES=- ;;   # the sweep is the reducers alone
        scaling) : "${RB_REDUCERS:=dense,sparcml,s2,gossip}" "${RB_DENSITIES:=0.01}" "${RB_SIZES:=16M}" ;;
        *) rb_die "unknown kind '$1' (micro, train, scaling)" ;;
    esac
}

rb_micro_args() {   # reducer density size (MIN:MAX, or one size)
    local m=$3
    [[ $m == *:* ]] || m=$m:$m
    RB_ARGS=(--reducer "$1" --density "$2" -m "$m" -q)
    [ -n "${RB_ITERS:-}" ] && RB_ARGS+=(-i "$RB_ITERS")
    [ -n "${RB_WARMUP:-}" ] && RB_ARGS+=(-x "$RB_WARMUP")
    [ -n "${RB_DEVICE:-}" ] && RB_ARGS+=(-d "$RB_DEVICE")
    [ -n "${RB_TIMEOUT:-}" ] && RB_ARGS+=(--timeout "$RB_TIMEOUT")
    local more=()
    read -r -a more <<<"${RB_MICRO_ARGS:-}"
    RB_ARGS+=("${more[@]}" "${RB_EXTRA_ARGS[@]}")
}

rb_micro_one() {    # index "reducer density size"
    local r d s
    read -r r d s <<<"$2"
    rb_micro_args "$r" "$d" "$s"
    rb_run "$(rb_name "micro_${r}_d${d}_m${s}_N${RB_NODES}_n${RB_NTASKS}")" \
        "$RB_NODES" "$RB_NTASKS" "$RB_MICRO_BIN" "${RB_ARGS[@]}"
}

# Microbenchmark sweep: reducer x density x size, one configuration per
# array task (all in turn without an array).
rb_micro_main() {
    rb_parse_args "$@"
    rb_defaults micro
    rb_setup
    RB_MICRO_BIN=$(rb_find_bin rb_micro)
    rb_for_tasks rb_micro_one
}

rb_train_one() {    # index "reducer - -"
    local r
    read -r r _ <<<"$2"
    local args=(--model "$RB_MODEL" --reducer "$r" --epochs "$RB_EPOCHS" --threads "$RB_THREADS")
    local more=() dev=""
    [ -n "${RB_DEVICE:-}" ] && args+=(-d "$RB_DEVICE") && dev="_$RB_DEVICE"
    [ -n "${RB_DATA:-}" ] && args+=(--data "$RB_DATA")
    [ -n "${RB_TIMEOUT:-}" ] && args+=(--timeout "$RB_TIMEOUT")
    read -r -a more <<<"${RB_TRAIN_ARGS:-}"
    args+=("${more[@]}" "${RB_EXTRA_ARGS[@]}")
    local name
    name=$(rb_name "train_${RB_MODEL}_${r}${dev}_N${RB_NODES}_n${RB_NTASKS}")
    # Not *.h5: no analysis tool takes the checkpoint for an archive.
    [ "${RB_CHECKPOINT:-1}" = 1 ] && args+=(--checkpoint "$RB_OUT/$name.h5.ckpt" --resume)
    rb_run "$name" "$RB_NODES" "$RB_NTASKS" "$RB_TRAIN_BIN" "${args[@]}"
}

# Training comparison: one reducer per array task (density and size do
# not apply: the sweep is RB_REDUCERS alone).
rb_train_main() {
    rb_parse_args "$@"
    rb_defaults train
    rb_setup
    RB_TRAIN_BIN=$(rb_find_bin rb_train)
    rb_for_tasks rb_train_one
}

# Node counts of the scaling study: RB_NODE_COUNTS, or 1,2,4,... and the
# allocation's own count.
rb_node_counts() {
    if [ -n "${RB_NODE_COUNTS:-}" ]; then
        echo "${RB_NODE_COUNTS//,/ }"
        return
    fi
    local k=1 out=""
    while [ "$k" -lt "$RB_NODES" ]; do out="$out $k"; k=$((k * 2)); done
    echo "$out $RB_NODES"
}

rb_scaling_one() {  # index "reducer density size": every node count
    local r d s k tpn rc=0
    read -r r d s <<<"$2"
    tpn=$((RB_NTASKS / RB_NODES))
    [ "$tpn" -ge 1 ] || tpn=1
    rb_micro_args "$r" "$d" "$s"
    for k in $(rb_node_counts); do
        if [ "$k" -gt "$RB_NODES" ]; then
            rb_log "skip $k nodes: the allocation has $RB_NODES"
            continue
        fi
        rb_run "$(rb_name "scaling_${r}_d${d}_m${s}_N${k}_n$((k * tpn))")" \
            "$k" "$((k * tpn))" "$RB_MICRO_BIN" "${RB_ARGS[@]}" || rc=$?
    done
    return "$rc"
}

# Scaling study: one allocation of the largest node count; every
# configuration is run on 1, 2, 4, ... nodes with the same tasks per node.
rb_scaling_main() {
    rb_parse_args "$@"
    rb_defaults scaling
    rb_setup
    RB_MICRO_BIN=$(rb_find_bin rb_micro)
    rb_for_tasks rb_scaling_one
}
