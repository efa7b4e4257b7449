/* The cost model's entry points and building blocks (docs/cost-model.md).
 * Every reducer file states its algorithm's operations with the blocks
 * below; this file charges them: alpha per message and beta per byte on
 * the critical path, mem_bw for the local passes (coll_bw for the
 * arithmetic inside MPI reductions), and the bytes a rank sends counted as
 * core.c's wrappers count them. */
#include "rb_internal.h"

#include <math.h>
#include <string.h>

void rb_model_input_default(rb_model_input *in)
{
    memset(in, 0, sizeof *in);
    in->ranks = 1;
    in->cols = 1;
    in->run = 1;
    rb_options_default(&in->opts);
}

int rb_model_log2(int p)
{
    int l = 0;
    while (l < 31 && (1 << l) < p)
        l++;
    return l;
}

double rb_model_elements(const rb_model_input *in)
{
    return (double)in->rows * (double)in->cols;
}

static int bad_number(double x, double lo, double hi)
{
    return !isfinite(x) || x < lo || x > hi;
}

static int check_input(const rb_model_input *in)
{
    double n = rb_model_elements(in);
    if (in->ranks < 1)
        return rb_fail(RB_ERR_ARG, "rb_model: ranks %d, want >= 1", in->ranks);
    if (in->cols == 0 && in->rows != 0)
        return rb_fail(RB_ERR_ARG, "rb_model: cols must be >= 1");
    if (bad_number(in->nnz_max, 0, n) || bad_number(in->nnz_mean, 0, in->nnz_max))
        return rb_fail(RB_ERR_ARG, "rb_model: nnz_mean %g, nnz_max %g: want 0 <= mean <= max "
                       "<= n = %.0f", in->nnz_mean, in->nnz_max, n);
    if (bad_number(in->nnz_union, in->nnz_max, n))
        return rb_fail(RB_ERR_ARG, "rb_model: nnz_union %g: want nnz_max <= it <= n", in->nnz_union);
    if (bad_number(in->run, -1e300, 1e300))
        return rb_fail(RB_ERR_ARG, "rb_model: run %g is not a number", in->run);
    if (bad_number(in->alpha, 0, 1e300) || bad_number(in->beta, 0, 1e300) ||
        bad_number(in->mem_bw, 0, 1e300) || bad_number(in->coll_bw, 0, 1e300))
        return rb_fail(RB_ERR_ARG, "rb_model: alpha %g, beta %g, mem_bw %g, coll_bw %g: want "
                       "finite, >= 0", in->alpha, in->beta, in->mem_bw, in->coll_bw);
    return rb_options_check(&in->opts);
}

int rb_model(const char *name, const rb_model_input *in, rb_model_result *out)
{
    const rb_reducer_ops *ops = rb_registry_find(name);
    if (!ops)
        return rb_fail(RB_ERR_UNKNOWN_REDUCER, "unknown reducer '%s'", name ? name : "(null)");
    if (!in || !out)
        return rb_fail(RB_ERR_ARG, "rb_model: NULL argument");
    RB_TRY(check_input(in));
    if (!ops->model)
        return rb_fail(RB_ERR_UNSUPPORTED, "reducer '%s' has no cost model", name);
    memset(out, 0, sizeof *out);
    ops->model(in, out);
    out->t_latency = in->alpha * out->messages;
    out->t_bandwidth = in->beta * out->bytes_critical;
    out->t_local = (in->mem_bw > 0 ? out->bytes_local / in->mem_bw : 0.0) +
                   (in->coll_bw > 0 ? out->bytes_coll / in->coll_bw : 0.0);
    out->seconds = out->t_latency + out->t_bandwidth + out->t_local;
    return RB_OK;
}

int rb_model_time(const char *name, const rb_model_input *in, double *seconds)
{
    rb_model_result res;
    if (!seconds)
        return rb_fail(RB_ERR_ARG, "rb_model_time: NULL argument");
    RB_TRY(rb_model(name, in, &res));
    *seconds = res.seconds;
    return RB_OK;
}

/* Add the cheaper (in time, on this machine) of two ways to do one
 * operation; the bytes sent are the wrappers' count either way.  local:
 * the arithmetic MPI does inside the operation. */
typedef struct way {
    double messages, bytes, local;
} way;

static void charge(const rb_model_input *in, rb_model_result *out, way a, way b, double sent)
{
    double ta = in->alpha * a.messages + in->beta * a.bytes;
    double tb = in->alpha * b.messages + in->beta * b.bytes;
    const way *w = tb < ta ? &b : &a;
    out->messages += w->messages;
    out->bytes_critical += w->bytes;
    out->bytes_coll += w->local;
    out->bytes_sent += sent;
}

/* Allreduce of B bytes: recursive doubling (L steps of B) or reduce-scatter
 * + allgather by halving and doubling (2L steps, 2 (p-1)/p B).  Each rank
 * adds (reads two, writes one) what it reduces. */
void rb_model_allreduce(const rb_model_input *in, rb_model_result *out, double bytes)
{
    double p = in->ranks, l = rb_model_log2(in->ranks);
    if (in->ranks == 1)
        return;
    way doubling = {l, l * bytes, 3 * l * bytes};
    way rsag = {2 * l, 2 * (p - 1) / p * bytes, 3 * (p - 1) / p * bytes};
    charge(in, out, doubling, rsag, 2 * (p - 1) / p * bytes);
}

/* Allgather of B bytes per rank: recursive doubling or Bruck, L steps,
 * (p-1) B received; the ring: p - 1 steps. */
void rb_model_allgather(const rb_model_input *in, rb_model_result *out, double bytes_per_rank)
{
    double p = in->ranks, l = rb_model_log2(in->ranks);
    if (in->ranks == 1)
        return;
    way bruck = {l, (p - 1) * bytes_per_rank, 0};
    charge(in, out, bruck, bruck, (p - 1) * bytes_per_rank);
}

void rb_model_allgatherv(const rb_model_input *in, rb_model_result *out, double total)
{
    double p = in->ranks, l = rb_model_log2(in->ranks);
    if (in->ranks == 1)
        return;
    way bruck = {l, (p - 1) / p * total, 0};
    charge(in, out, bruck, bruck, (p - 1) / p * total);
}

/* Alltoall of B bytes per destination: pairwise (p - 1 steps of B) or
 * Bruck (L steps of about p/2 blocks each). */
void rb_model_alltoall(const rb_model_input *in, rb_model_result *out, double bytes_per_dest)
{
    double p = in->ranks, l = rb_model_log2(in->ranks);
    if (in->ranks == 1)
        return;
    way pairwise = {p - 1, (p - 1) * bytes_per_dest, 0};
    way bruck = {l, l * p / 2 * bytes_per_dest, 2 * l * p / 2 * bytes_per_dest};
    charge(in, out, pairwise, bruck, (p - 1) * bytes_per_dest);
}

/* Alltoallv: pairwise exchange, p - 1 steps; the busiest rank's bytes. */
void rb_model_alltoallv(const rb_model_input *in, rb_model_result *out, double sent,
                        double busiest)
{
    if (in->ranks == 1)
        return;
    way pairwise = {in->ranks - 1, busiest, 0};
    charge(in, out, pairwise, pairwise, sent);
}

/* Broadcast of B bytes: binomial tree (L steps of B) or scatter +
 * allgather (L + p - 1 steps, 2 (p-1)/p B).  The wrappers count the
 * pipelined chain: every rank but the last sends B. */
void rb_model_bcast(const rb_model_input *in, rb_model_result *out, double bytes)
{
    double p = in->ranks, l = rb_model_log2(in->ranks);
    if (in->ranks == 1)
        return;
    way binomial = {l, l * bytes, 0};
    way scatter_allgather = {l + p - 1, 2 * (p - 1) / p * bytes, 0};
    charge(in, out, binomial, scatter_allgather, (p - 1) / p * bytes);
}

void rb_model_p2p(const rb_model_input *in, rb_model_result *out, double msgs, double sent,
                  double busiest)
{
    way w = {msgs, busiest, 0};
    charge(in, out, w, w, sent);
}

void rb_model_local(const rb_model_input *in, rb_model_result *out, double bytes)
{
    (void)in;
    out->bytes_local += bytes;
}

/* Union of m supports of k = nnz_mean each, drawn independently and
 * uniformly from N_eff indices: N_eff (1 - (1 - k/N_eff)^m).  N_eff is
 * fitted so that m = p gives nnz_union: N_eff = n for independent inputs,
 * -> k for identical ones, -> infinity for disjoint ones. */
static double union_of(double k, double neff, double m)
{
    return neff * -expm1(m * log1p(-k / neff));
}

double rb_model_union(const rb_model_input *in, double m)
{
    double k = in->nnz_mean, u = in->nnz_union, p = in->ranks, n = rb_model_elements(in);
    if (k <= 0 || m <= 1 || p <= 1)
        return m <= 1 ? k : u;
    if (u >= p * k * (1 - 1e-12))
        return fmin(m * k, n);   /* disjoint */
    if (u <= k)
        return k;                /* identical */
    double lo = k, hi = k;       /* union_of grows with neff: bracket, then bisect */
    while (union_of(k, hi, p) < u && hi < 1e300)
        hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-9 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (union_of(k, mid, p) < u)
            lo = mid;
        else
            hi = mid;
    }
    return fmin(union_of(k, hi, m), n);
}
