/* rb_micro's output: the preamble and one table per reducer on stdout
 * (stable columns, first the size), and each row into the archive. */
#include "micro.h"

#include <stdio.h>
#include <string.h>

#include "harness/bench_common.h"

void micro_print_memory(const micro_run *c)
{
    bench_printf0("# memory: need %.3g MiB per rank, limit %.3g MiB (%s)\n", c->mem_need / 1048576.0,
                  c->mem_limit / 1048576.0, c->mem_limit > 0 ? c->mem_source : "unknown: not checked");
}

void micro_print_machine(const micro_machine *m)
{
    bench_printf0("# cost model (docs/cost-model.md): alpha %.3g us (%s), beta %.3g ns/B = %.2f GB/s "
                  "(%s), local pass %.2f GB/s, sums in reductions %.2f GB/s\n",
                  m->alpha * 1e6, m->alpha_given ? "--alpha" : "measured", m->beta * 1e9,
                  m->beta > 0 ? 1e-9 / m->beta : 0.0, m->beta_given ? "--beta" : "measured",
                  m->mem_bw / 1e9, m->coll_bw / 1e9);
}

void micro_print_preamble(const micro_opts *o, int p, int argc, char **argv)
{
    if (o->quiet)
        return;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    MPI_Get_library_version(lib, &len);
    char *nl = strchr(lib, '\n');
    if (nl)
        *nl = '\0';
    bench_printf0("# " PROG " (reducerbench %s)\n# command:", RB_VERSION_STRING);
    for (int i = 0; i < argc; i++)
        bench_printf0(" %s", argv[i]);
    bench_printf0("\n# MPI: %s\n# ranks: %d\n", lib, p);
    char support[32];
    bench_gradgen_support_name(o->overlap, o->zipf_s, support, sizeof support);
    if (!o->trace)
        bench_printf0("# data: density %g, layout %s, overlap %s, cols %llu, seed %llu, device %s, "
                      "input %s\n", o->density, bench_layout_name(o->layout), support,
                      (unsigned long long)o->cols, (unsigned long long)o->seed,
                      o->device == RB_DEVICE_CUDA ? "cuda" : "host", o->input_rows ? "rows" : "dense");
    bench_printf0("# timing: %d warm-up + %d timed calls per size, back to back: reload the\n"
                  "#   input (untimed), MPI_Barrier, MPI_Wtime around rb_reduce (osu_allreduce's\n"
                  "#   cadence: MPI_Wtime around MPI_Allreduce, MPI_Barrier); phases %s;\n"
                  "#   avg/min/max over ranks of per-rank means, p50/p99 over iterations of\n"
                  "#   the slowest rank; algbw = size/avg (GB/s), busbw = algbw*2(p-1)/p\n",
                  o->warmup, o->iters,
                  o->phase_times ? "timed (a clock read per phase change)" : "not timed");
    bench_printf0("# validation: %s (exact tolerance %.2e absolute)\n",
                  o->check ? "on" : "off", micro_exact_tolerance(p));
    bench_printf0("# malloc: %s\n", bench_malloc_policy());
}

void micro_print_block_header(const char *reducer, unsigned traits, const micro_opts *o, int rep)
{
    const char *kind = traits & RB_TRAIT_EXACT ? "exact" : traits & RB_TRAIT_LOSSY ? "lossy"
                     : traits & RB_TRAIT_GOSSIP ? "gossip" : "no communication";
    bench_printf0("#\n# Reducer: %s (%s): %s\n", reducer, kind, rb_reducer_description(reducer));
    if (o->repeat > 1)
        bench_printf0("# repetition %d of %d (repeat = %d in the archive)\n", rep + 1, o->repeat, rep);
    for (size_t i = 0; i < rb_option_count(); i++) {
        char val[64];
        if (rb_option_applies(i, reducer) && rb_option_format(&o->ropts, i, val, sizeof val) == RB_OK)
            bench_printf0("#   option %s = %s\n", rb_option_info_at(i)->key, val);
    }
    const char *errcol = traits & RB_TRAIT_LOSSY ? "rel_l2_err" : traits & RB_TRAIT_GOSSIP ? "consensus" : "error";
    bench_printf0("# %10s %12s %11s %11s %11s %11s %11s %11s %9s %9s %13s %13s %9s %8s %10s %7s %11s %9s "
                  "%10s %11s %9s %7s %7s\n",
                  "size(B)", "count", "nnz/rank", "avg(us)", "min(us)", "max(us)", "p50(us)",
                  "p99(us)", "algbw", "busbw", "sent(B)", "sent_max(B)", "wire/bnd", "#wrong",
                  errcol, "recall", "model(us)", "meas/mod", "floor(us)", "union_rows", "union/pn",
                  "imbal", "step");
}

/* One line of the table ("-" where a column does not apply). */
static void print_row(const micro_row *r, unsigned traits)
{
    char wrong[24], err[24], recall[24];
    if (!r->checked) {
        snprintf(wrong, sizeof wrong, "-");
        snprintf(err, sizeof err, "-");
        snprintf(recall, sizeof recall, "-");
    } else {
        snprintf(wrong, sizeof wrong, (traits & RB_TRAIT_EXACT) ? "%lld" : "-", (long long)r->wrong);
        snprintf(err, sizeof err, "%.3e", traits & RB_TRAIT_GOSSIP ? r->consensus : r->rel_l2_err);
        snprintf(recall, sizeof recall, "%.4f", r->recall);
    }
    char bound[24];
    if (r->bound_bytes > 0)
        snprintf(bound, sizeof bound, "%.3f", r->wire_to_bound);
    else
        snprintf(bound, sizeof bound, "-");
    char model[24] = "-", ratio[24] = "-";
    if (r->t_model_us > 0) {
        snprintf(model, sizeof model, "%.2f", r->t_model_us);
        snprintf(ratio, sizeof ratio, "%.3f", r->model_ratio);
    }
    /* the workload: "-" where unknown (no validation: no union) */
    char urows[24] = "-", uratio[24] = "-", imbal[24] = "-", step[24] = "-";
    if (r->union_rows >= 0)
        snprintf(urows, sizeof urows, "%.0f", r->union_rows);
    if (r->union_ratio == r->union_ratio)
        snprintf(uratio, sizeof uratio, "%.4f", r->union_ratio);
    if (r->imbalance == r->imbalance)
        snprintf(imbal, sizeof imbal, "%.3f", r->imbalance);
    if (r->step >= 0)
        snprintf(step, sizeof step, "%lld", (long long)r->step);
    bench_printf0("%12llu %12llu %11.0f %11.2f %11.2f %11.2f %11.2f %11.2f %9.3f %9.3f %13.0f %13.0f "
                  "%9s %8s %10s %7s %11s %9s %10.2f %11s %9s %7s %7s\n",
                  (unsigned long long)r->size_bytes, (unsigned long long)r->count,
                  r->nnz_local_avg, r->t_avg_us, r->t_min_us, r->t_max_us, r->t_p50_us, r->t_p99_us,
                  r->algbw_gbs, r->busbw_gbs, r->bytes_sent_avg, r->bytes_sent_max, bound, wrong,
                  err, recall, model, ratio, r->t_floor_us, urows, uratio, imbal, step);
    fflush(stdout);
}

int micro_write_row(micro_run *c, const micro_row *row, unsigned traits)
{
    /* A row is printed and written whole or not at all, then flushed: what
     * a fault keeps (bench_keep.h) is a readable file of every row the
     * table shows. */
    bench_archive_writing(c->archive);
    print_row(row, traits);
    int rc = micro_archive_row(c->archive, row, &c->o->ropts, c->samples, c->o->iters, c->p)
          || micro_archive_papi(c->archive, c->papi);
    long rows = rc ? -1 : micro_archive_rows(c->archive);
    rc = bench_archive_checkpoint(c->archive, rows) || rc;
    bench_stall_step();
    return rc;
}
