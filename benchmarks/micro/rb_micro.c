/* rb_micro: one reducer (or all) on synthetic sparse gradients, swept over
 * sizes.  Options follow OSU Micro-Benchmarks / nccl-tests; the output is a
 * stable text table (one block per reducer, first column the size) and,
 * with -o, an HDF5 archive (results/README.md).  micro.h maps the files;
 * this one sets the run up, sweeps and exits. */
#include "micro.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/bench_common.h"
#include "harness/memneed.h"
#include "harness/bench_device.h"
#include "harness/h5attr.h"
#include "harness/simmeta.h"
#include "harness/tmpfiles.h"
#include "micro_jsonl.h"

/* Everything main sets up, and what it has to free. */
typedef struct micro_setup {
    micro_opts o;
    bench_trace trace;      /* --input trace: */
    micro_bufs bufs;
    micro_run run;
    uint64_t shapes[MICRO_MAX_SHAPES][2];
    size_t nshapes, max_n;
    int archive_failed;     /* a row could not be written: the sweep ends */
} micro_setup;

/* -d cuda: pick this rank's GPU by node-local rank, allocate the device
 * gradient, record the GPU in the preamble and the archive.  Collective. */
static int setup_device(micro_run *c, size_t max_n)
{
    char msg[256] = "";
    int gpu = -1, rc = rb_device_select(c->comm, &gpu);
    if (rc != RB_OK)
        snprintf(msg, sizeof msg, "%s", rb_last_error());
    else if (bench_dev_alloc(&c->dev, max_n, msg, sizeof msg) != 0)
        rc = RB_ERR_DEVICE;
    if (bench_all_ok(c->comm, rc, "-d cuda", msg) < 0)
        return -1;
    char desc[512] = "";
    if (rb_device_describe(desc, sizeof desc) != RB_OK)
        snprintf(desc, sizeof desc, "GPU %d (%s)", gpu, rb_last_error());
    bench_printf0("# device: %s\n# device timing: every call synchronises the device before it returns\n", desc);
    hid_t f = bench_archive_file(c->archive);
    if (f != H5I_INVALID_HID)
        bench_h5_attr_str(f, "device", desc);
    return 0;
}

static size_t reducer_list(const micro_opts *o, const char **names, size_t max)
{
    size_t k = 0;
    if (!strcmp(o->reducers, "all")) {
        for (size_t i = 0; i < rb_reducer_count() && k < max; i++)
            names[k++] = rb_reducer_name_at(i);
        return k;
    }
    static char buf[512];
    snprintf(buf, sizeof buf, "%s", o->reducers);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && k < max;
         tok = strtok_r(NULL, ",", &save))
        names[k++] = tok;
    return k;
}

/* The cost model's machine in the archive's root (rank 0); 0, or
 * non-zero on every rank. */
static int record_machine(micro_run *c)
{
    int rc = 0;
    hid_t f = bench_archive_file(c->archive);
    if (c->rank == 0 && f >= 0) {
        const micro_machine *m = &c->machine;
        rc |= bench_h5_attr_double(f, "model_alpha_s", m->alpha);
        rc |= bench_h5_attr_double(f, "model_beta_s_per_byte", m->beta);
        rc |= bench_h5_attr_double(f, "model_mem_bw_bytes_per_s", m->mem_bw);
        rc |= bench_h5_attr_double(f, "model_coll_bw_bytes_per_s", m->coll_bw);
        rc |= bench_h5_attr_double(f, "mem_need_bytes", c->mem_need);
        rc |= bench_h5_attr_double(f, "mem_limit_bytes", c->mem_limit);
        rc |= bench_h5_attr_str(f, "model_alpha_beta_source",
                             m->alpha_given && m->beta_given ? "given" : m->alpha_given || m->beta_given
                             ? "given and measured" : "measured");
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, c->comm);
    if (rc)
        bench_fail_on(c->rank == 0, BENCH_NO_CODE, "archive", "cannot record the cost model's machine");
    return rc;
}

/* Under SMPI, how the input buffers are held (sim_input) in the
 * archive's root (rank 0); 0, or non-zero on every rank. */
static int record_input(micro_run *c)
{
    int rc = 0;
    hid_t f = bench_archive_file(c->archive);
    if (c->rank == 0 && f >= 0 && bench_sim_is_simulated())
        rc = bench_h5_attr_str(f, "sim_input", micro_bufs_placement(c->bufs));
    MPI_Bcast(&rc, 1, MPI_INT, 0, c->comm);
    if (rc)
        bench_fail_on(c->rank == 0, BENCH_NO_CODE, "archive", "cannot record sim_input");
    return rc;
}

/* The run's memory need against the limit, before anything is allocated:
 * exit 2 with both numbers on every rank when it does not fit. */
static void check_memory(micro_setup *s)
{
    micro_run *c = &s->run;
    const char *names[MICRO_MAX_REDUCERS];
    size_t nred = reducer_list(&s->o, names, MICRO_MAX_REDUCERS);
    c->mem_need = micro_memory_need(&s->o, c->p, s->max_n, names, nred);
    double least = bench_mem_limit(c->comm, s->o.mem_limit, c->mem_source, sizeof c->mem_source);
    c->mem_limit = least;
    char what[128], advice[64];
    snprintf(what, sizeof what, "per rank at %llu bytes (buffers%s and the largest reducer state)",
             (unsigned long long)s->max_n * 4ULL, s->o.check ? ", the exact average" : "");
    snprintf(advice, sizeof advice, "use smaller sizes%s", s->o.check ? ", --no-check" : "");
    bench_mem_refuse_if(PROG, c->mem_need, least, c->mem_source, what, "a rank", advice);
}

/* Two of the files a run writes (archive, -J, --save-result), or one of
 * them and the trace it replays, that are one file: the first pair found
 * named in msg, -1; 0 when all are distinct.  Rank 0. */
static int clashing_outputs(const micro_opts *o, const char *h5, char *msg, size_t len)
{
    const char *paths[3] = {h5[0] ? h5 : NULL, o->json, o->save_result};
    static const char *const names[3] = {"the archive", "-J", "--save-result"};
    for (int j = 0; j < 3; j++) {
        if (!paths[j])
            continue;
        for (int i = 0; i < j; i++)
            if (paths[i] && bench_same_file(paths[i], paths[j])) {
                snprintf(msg, len, "%s %s and %s %s are the same file: one would replace the "
                         "other; give %s another name", names[j], paths[j], names[i], paths[i],
                         names[j]);
                return -1;
            }
        if (o->trace && bench_same_file(paths[j], o->trace)) {
            snprintf(msg, len, "%s %s is the trace replayed (--input trace:%s): it would be "
                     "replaced; give %s another name", names[j], paths[j], o->trace, names[j]);
            return -1;
        }
    }
    return 0;
}

/* The archive, -J and --save-result may not be one file, nor the trace
 * replayed: one would replace another (-J the archive it is made from).
 * Checked once the archive's path is known (the default one too), before
 * anything is measured. */
static void check_outputs_distinct(micro_run *c, const micro_opts *o)
{
    char h5[PATH_MAX] = "", msg[4 * PATH_MAX + 512] = "";
    if (bench_archive_path(c->archive))   /* bench_archive_close frees it */
        snprintf(h5, sizeof h5, "%s", bench_archive_path(c->archive));
    int clash = c->rank == 0 && clashing_outputs(o, h5, msg, sizeof msg);
    MPI_Bcast(&clash, 1, MPI_INT, 0, c->comm);
    if (clash) {
        bench_archive_close(c->archive, 0);
        bench_usage_error(PROG, "%s", msg);
    }
}

/* Sizes the sweep cannot measure are refused, naming the smallest legal
 * one, and never rounded silently: a bound below one element (4 bytes)
 * or one row (4 bytes x --cols), a bound that is no whole number of
 * elements or rows, --shape with no rows, and a sweep of more sizes than
 * rb_micro holds (MICRO_MAX_SHAPES). */
static void check_sizes(const micro_opts *o)
{
    typedef unsigned long long ull;
    if (o->shape_rows || o->shape_cols) {
        if (!o->shape_rows)
            bench_usage_error(PROG, "--shape 0x%llu: no rows to reduce; the smallest shape is 1x%llu",
                              (ull)o->shape_cols, (ull)o->shape_cols);
        return;
    }
    ull row = 4ULL * o->cols;
    const char *unit = o->cols > 1 ? "row of --cols 4-byte elements" : "4-byte element";
    const char *units = o->cols > 1 ? "rows of --cols 4-byte elements" : "4-byte elements";
    if (o->min_bytes < row)
        bench_usage_error(PROG, "-m/--message-size: %llu bytes is less than one %s; the smallest "
                          "size measurable%s is %llu bytes", (ull)o->min_bytes, unit,
                          o->cols > 1 ? " with these --cols" : "", row);
    const ull bounds[2] = {o->min_bytes, o->max_bytes};
    for (int i = 0; i < 2; i++)
        if (bounds[i] % row)
            bench_usage_error(PROG, "-m/--message-size: %s %llu bytes is not a whole number of %s "
                              "(%llu bytes each): give %llu or %llu", i ? "MAX" : "MIN", bounds[i],
                              units, row, bounds[i] / row * row, (bounds[i] / row + 1) * row);
    static uint64_t probe[MICRO_MAX_SHAPES + 1][2];
    if (micro_shapes(o, probe, MICRO_MAX_SHAPES + 1) > MICRO_MAX_SHAPES) {
        double least = pow((double)o->max_bytes / (double)o->min_bytes, 1.0 / (MICRO_MAX_SHAPES - 1));
        bench_usage_error(PROG, "--stepfactor %.9g makes more than %d sizes from %llu to %llu "
                          "bytes; use --stepfactor %.4g or more, or a narrower -m", o->factor, MICRO_MAX_SHAPES,
                          (ull)o->min_bytes, (ull)o->max_bytes, ceil(least * 1e4) / 1e4);
    }
}

/* --input trace:FILE: every rank loads the layer (the exact average needs
 * every rank's rows); the sweep is one row per recorded step, at most
 * MICRO_MAX_SHAPES.  A trace refused: one line, exit 2 on every rank. */
static void load_trace(micro_setup *s)
{
    micro_run *c = &s->run;
    bench_trace *t = &s->trace;
    char err[5400];
    bench_stall_pause(1);   /* each rank reads and hashes its file */
    int rc = bench_trace_load(s->o.trace, s->o.trace_layer, c->p, t, err, sizeof err);
    bench_stall_pause(0);
    /* Divided, not multiplied: rows x cols of a hostile trace (2^62 x 4)
     * wraps to 0 in 64 bits, and the replay then wrote past its buffer. */
    if (!rc && t->rows > UINT32_MAX / t->cols) {
        snprintf(err, sizeof err, "%s: layer %s: %llu x %llu exceeds 2^32 - 1 elements", t->path,
                 t->layer, (unsigned long long)t->rows, (unsigned long long)t->cols);
        bench_trace_free(t);
        rc = -1;
    }
    /* Every rank reads the file itself (a path relative to each rank's
     * directory, a node-local copy): one rank failing alone left the
     * others waiting in a collective, and ranks reading different traces
     * replayed different gradients, reported as the reducer's validation
     * failure.  The rank that failed names it; then the SHA-256s agree. */
    if (bench_all_ok(c->comm, rc ? BENCH_NO_CODE : RB_OK, "--input trace", err) < 0)
        bench_exit(BENCH_EXIT_USAGE);
    char first[sizeof t->sha256];
    memcpy(first, t->sha256, sizeof first);
    MPI_Bcast(first, (int)sizeof first, MPI_CHAR, 0, c->comm);
    int differs = memcmp(first, t->sha256, sizeof first) != 0;
    snprintf(err, sizeof err, "%s: this rank read a file with SHA-256 %.16s..., rank 0 one with "
             "%.16s...: every rank must replay the same trace", t->path, t->sha256, first);
    if (bench_all_ok(c->comm, differs ? BENCH_NO_CODE : RB_OK, "--input trace", err) < 0) {
        bench_trace_free(t);
        bench_exit(BENCH_EXIT_USAGE);
    }
    c->trace = t;
    s->nshapes = t->nsteps < MICRO_MAX_SHAPES ? t->nsteps : MICRO_MAX_SHAPES;
    for (size_t i = 0; i < s->nshapes; i++)
        s->shapes[i][0] = t->rows, s->shapes[i][1] = t->cols;
    /* the memory need's density: the densest (step, run rank) */
    double most = 0.0;
    for (size_t st = 0; st < t->nsteps; st++)
        for (int r = 0; r < c->p; r++) {
            double rows = 0.0;
            for (int tr = r; tr < t->ranks; tr += c->p) {
                size_t cell = st * (size_t)t->ranks + (size_t)tr;
                rows += (double)(t->offsets[cell + 1] - t->offsets[cell]);
            }
            most = rows > most ? rows : most;
        }
    s->o.density = most / (double)t->rows < 1.0 ? most / (double)t->rows : 1.0;
}

/* The trace's provenance in the preamble and the archive's root; 0, or
 * non-zero on every rank. */
static int record_trace(micro_run *c)
{
    const bench_trace *t = c->trace;
    char map[160];
    if (c->p == t->ranks)
        snprintf(map, sizeof map, "rank r replays trace rank r");
    else
        snprintf(map, sizeof map, "rank r of %d sums trace ranks r, r+%d, ... of %d", c->p, c->p, t->ranks);
    bench_printf0("# data: trace %s (sha256 %s): model %s from %s, layer %s (%s) %llu x %llu, %zu steps "
                  "recorded on %d ranks (%zu replayed); %s; values scaled by %g; input %s, device %s\n",
                  t->path, t->sha256, t->model, t->source, t->layer, t->kind, (unsigned long long)t->rows,
                  (unsigned long long)t->cols, t->nsteps, t->ranks,
                  t->nsteps < MICRO_MAX_SHAPES ? t->nsteps : MICRO_MAX_SHAPES, map, (double)t->scale,
                  c->o->input_rows ? "rows" : "dense", c->o->device == RB_DEVICE_CUDA ? "cuda" : "host");
    int rc = 0;
    hid_t f = bench_archive_file(c->archive);
    if (c->rank == 0 && f >= 0) {
        int steps[MICRO_MAX_SHAPES];
        size_t n = t->nsteps < MICRO_MAX_SHAPES ? t->nsteps : MICRO_MAX_SHAPES;
        for (size_t i = 0; i < n; i++)
            steps[i] = (int)t->steps[i];
        rc |= bench_h5_attr_str(f, "trace_file", t->path);
        rc |= bench_h5_attr_str(f, "trace_sha256", t->sha256);
        rc |= bench_h5_attr_str(f, "trace_model", t->model);
        rc |= bench_h5_attr_str(f, "trace_source", t->source);
        rc |= bench_h5_attr_str(f, "trace_layer", t->layer);
        rc |= bench_h5_attr_int(f, "trace_ranks", t->ranks);
        rc |= bench_h5_attr_int_array(f, "trace_steps", steps, n);
        rc |= bench_h5_attr_double(f, "trace_value_scale", (double)t->scale);
        rc |= bench_h5_attr_str(f, "trace_rank_map", map);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, c->comm);
    if (rc)
        bench_fail_on(c->rank == 0, BENCH_NO_CODE, "archive", "cannot record the trace's provenance");
    return rc;
}

/* Binding, counters, archive, buffers, preamble, device; exits on failure
 * (every rank alike). */
static void setup(micro_setup *s, int argc, char **argv)
{
    micro_run *c = &s->run;
    const micro_opts *o = &s->o;
    if (o->trace)
        load_trace(s);
    else
        s->nshapes = micro_shapes(o, s->shapes, MICRO_MAX_SHAPES);
    for (size_t i = 0; i < s->nshapes; i++)
        if (s->shapes[i][0] * s->shapes[i][1] > s->max_n)
            s->max_n = s->shapes[i][0] * s->shapes[i][1];
    check_memory(s);
    bench_stall_step();   /* each step of the set-up is progress */
    /* Binding and counters first, so the archive records them. */
    if (bench_bind(c->comm, o->bind))
        bench_exit(BENCH_EXIT_FAILED);
    bench_stall_step();
    static const char *const phase_names[RB_PHASE_COUNT_] = {"encode", "comm", "decode"};
    if (bench_papi_open(c->comm, PROG, o->papi_events, RB_PHASE_COUNT_, phase_names, &c->papi))
        bench_exit(BENCH_EXIT_USAGE);
    bench_stall_step();
    if (bench_archive_open(c->comm, PROG, o->output, o->force, argc, argv, &c->archive))
        bench_exit(BENCH_EXIT_USAGE);
    bench_stall_step();
    check_outputs_distinct(c, o);
    int ok = micro_bufs_alloc(&s->bufs, s->max_n, o->check, o->input_rows, c->rank) == 0;
    c->bufs = &s->bufs;
    c->times = malloc((size_t)o->iters * sizeof *c->times);
    c->samples = malloc((size_t)o->iters * (size_t)c->p * sizeof *c->samples);
    ok = ok && c->times && c->samples;
    char detail[96];
    snprintf(detail, sizeof detail, "out of memory for %zu-element buffers", s->max_n);
    if (bench_all_ok(c->comm, ok ? RB_OK : BENCH_NO_CODE, "buffers", detail) < 0) {
        bench_archive_close(c->archive, 0);
        bench_exit(BENCH_EXIT_FAILED);
    }
    micro_print_preamble(o, c->p, argc, argv);
    bench_stall_step();
    micro_probe_machine(c, s->max_n, &c->machine);
    bench_stall_step();
    micro_print_machine(&c->machine);
    micro_print_memory(c);
    if (record_machine(c) || record_input(c) || (c->trace && record_trace(c)))
        bench_exit(BENCH_EXIT_FAILED);
    if (c->archive)
        bench_printf0("# archive: %s\n", bench_archive_path(c->archive));
    bench_watchdog_start(o->timeout);
    if (o->device == RB_DEVICE_CUDA && setup_device(c, s->max_n) != 0) {
        bench_archive_close(c->archive, 0);
        bench_exit(BENCH_EXIT_FAILED);
    }
}

/* Repetition rep of every reducer over every size; the exit code so far,
 * *had_error when a row failed (rather than validated wrong). */
static int sweep_once(micro_setup *s, const char *const *names, size_t nred, int rep,
                      int *had_error)
{
    int exit_code = BENCH_EXIT_OK;
    s->run.repeat = rep;
    for (size_t ri = 0; ri < nred; ri++) {
        unsigned traits = 0;
        rb_reducer_traits_with(names[ri], &s->o.ropts, &traits);
        micro_print_block_header(names[ri], traits, &s->o, rep);
        for (size_t i = 0; i < s->nshapes; i++) {
            micro_row row;
            s->run.trace_step = i;
            int st = micro_run_row(&s->run, names[ri], s->shapes[i][0], s->shapes[i][1], &row);
            if (st == ROW_TIMEOUT) {
                bench_printf0("# time limit of %g s reached; stopping\n", s->o.timeout);
                return BENCH_EXIT_TIMEOUT;
            }
            if (st != ROW_OK)
                exit_code = BENCH_EXIT_FAILED;
            if (st == ROW_ARCHIVE) {   /* said once; every later row would fail alike */
                bench_printf0("# the archive cannot take more rows; stopping (the rows above are "
                              "on stdout)\n");
                *had_error = s->archive_failed = 1;
                return exit_code;
            }
            if (st == ROW_ERROR) {
                *had_error = 1;
                break;
            }
        }
    }
    return exit_code;
}

/* Every repetition (--repeat) of the sweep, repetitions outermost so that drift
 * of the machine hits every reducer alike; the exit code. */
static int sweep(micro_setup *s, int *had_error)
{
    const char *names[MICRO_MAX_REDUCERS];
    size_t nred = reducer_list(&s->o, names, MICRO_MAX_REDUCERS);
    int exit_code = BENCH_EXIT_OK;
    for (int rep = 0; rep < s->o.repeat && exit_code != BENCH_EXIT_TIMEOUT && !s->archive_failed; rep++) {
        int rc = sweep_once(s, names, nred, rep, had_error);
        if (rc != BENCH_EXIT_OK)
            exit_code = rc;
    }
    return exit_code;
}

/* -J: rank 0 turns the complete archive into JSON lines; 0 on every rank,
 * or non-zero on every rank. */
static int export_json(micro_run *c, const char *h5path, const char *path)
{
    char msg[4400] = "";
    /* A stop signal during the export waits for its end (a second or so):
     * then the lines are whole or absent, never a FILE.tmp left behind. */
    bench_fault_hold(1);
    int rc = c->rank == 0 ? micro_jsonl_export(h5path, path, c->o->force, msg, sizeof msg) : 0;
    bench_fault_hold(0);
    MPI_Bcast(&rc, 1, MPI_INT, 0, c->comm);
    if (rc)
        bench_fail_on(c->rank == 0, BENCH_NO_CODE, "-J", "%s", strncmp(msg, "-J: ", 4) ? msg : msg + 4);
    else
        bench_printf0("# JSON lines written: %s\n", path);
    return rc;
}

/* -J FILE and --save-result FILE refused before any measurement when one
 * exists (without --force), is no regular file, or cannot be created
 * (bench_output_ok); exits 2 on every rank. */
static void check_output_targets(micro_run *c, const micro_opts *o)
{
    char msg[4400] = "", why[4300];
    int rc = 0;
    if (c->rank == 0 && o->json)
        rc = micro_jsonl_target_ok(o->json, o->force, msg, sizeof msg);
    if (c->rank == 0 && !rc && o->save_result && bench_output_ok(o->save_result, o->force, why, sizeof why))
        rc = -1, snprintf(msg, sizeof msg, "--save-result: %s", why);
    MPI_Bcast(&rc, 1, MPI_INT, 0, c->comm);
    if (rc)
        bench_usage_error(PROG, "%s", msg);
}

/* --timeout ended the sweep: one named line.  The archive keeps the rows
 * measured so far, marked timed_out = 1; with no row there is nothing to
 * keep.  Returns whether to keep it (the same on every rank). */
static int say_timed_out(micro_setup *s)
{
    micro_run *c = &s->run;
    long rows = micro_archive_rows(c->archive);
    MPI_Bcast(&rows, 1, MPI_LONG, 0, c->comm);
    int keep = c->archive && rows > 0;
    if (keep && bench_archive_mark(c->archive, "timed_out"))
        bench_fail_on(c->rank == 0, BENCH_NO_CODE, "archive", "cannot mark the archive timed out");
    char kept[160];
    if (keep)
        snprintf(kept, sizeof kept, "the archive keeps the %ld row(s) measured, marked timed_out=1 "
                 "(a partial sweep)%s", rows, s->o.json ? "; no JSON lines (-J) of a partial sweep" : "");
    else
        snprintf(kept, sizeof kept, "%s", c->archive ? "no row was finished, so no archive is written"
                                                     : "the rows measured are on stdout");
    bench_fail_on(c->rank == 0, BENCH_NO_CODE, "time limit",
                  "--timeout %g s reached before the sweep ended; %s", s->o.timeout, kept);
    return keep;
}

/* Close the archive (complete when every row was measured, or marked
 * timed out with the rows measured before --timeout), free, exit. */
static _Noreturn void finish(micro_setup *s, int exit_code, int had_error)
{
    micro_run *c = &s->run;
    /* A run with validation failures is a complete measurement (the file
     * records #wrong); errors leave no complete-looking file; a timeout
     * keeps its rows, marked. */
    int timed_out = exit_code == BENCH_EXIT_TIMEOUT;
    int keep = !had_error;
    if (timed_out)
        keep = say_timed_out(s) && keep;
    /* bench_archive_close frees the archive: keep its path for the message. */
    char written[4096] = "";
    if (c->archive && keep)
        snprintf(written, sizeof written, "%s", bench_archive_path(c->archive));
    if (bench_archive_close(c->archive, keep))
        exit_code = BENCH_EXIT_FAILED, written[0] = '\0';
    else if (written[0])
        bench_printf0("# archive written%s: %s\n", timed_out ? " (timed out, partial)" : "", written);
    if (written[0] && !timed_out && s->o.json && export_json(c, written, s->o.json))
        exit_code = BENCH_EXIT_FAILED;
    bench_dev_free(c->dev);
    MPI_Comm_free(&c->agree);
    bench_papi_close(c->papi);
    micro_bufs_free(&s->bufs);
    if (c->trace)
        bench_trace_free(&s->trace);
    free(c->times);
    free(c->samples);
    bench_exit(exit_code);
}

/* From here on rank 0 names a signal that ends the job (with -o none
 * too) and the progress watchdog watches every rank. */
static void watch_faults(micro_run *c, const micro_opts *o)
{
    bench_fault_signals();
    bench_stall_where("the set-up (probes, archive, buffers)");
    int rc = bench_stall_start(o->stall_timeout) ? BENCH_NO_CODE : RB_OK;
    if (bench_all_ok(c->comm, rc, "--stall-timeout", "cannot start the watchdog's thread") < 0)
        bench_exit(BENCH_EXIT_FAILED);
}

int main(int argc, char **argv)
{
    bench_mpi_init(&argc, &argv, PROG);
    micro_setup s = {.nshapes = 0};
    micro_run *c = &s.run;
    c->comm = MPI_COMM_WORLD;
    MPI_Comm_dup(c->comm, &c->agree);
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->p);
    if (!bench_argv_agree(c->comm, argc, argv))
        bench_usage_error(PROG, "ranks were started with different command lines");
    micro_parse_options(argc, argv, c->p, &s.o);
    watch_faults(c, &s.o);
    check_sizes(&s.o);
    check_output_targets(c, &s.o);
    c->o = &s.o;
    setup(&s, argc, argv);
    int had_error = 0;
    int exit_code = sweep(&s, &had_error);
    bench_stall_where("the end of the run (archive, -J)");
    finish(&s, exit_code, had_error);
}
