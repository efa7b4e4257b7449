/* The option table: every algorithm choice a reducer offers, settable as
 * "key=value" and printable, so benchmarks can record what was used. */
#include "rb_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct option_def {
    rb_option_info info;
    size_t offset;
    double min, max;       /* numeric range (inclusive) */
} option_def;

#define OFF(f) offsetof(rb_options, f)
static const option_def table[] = {
    {{"sparcml_algo", "sparcml", RB_OPT_ENUM, "auto|recdbl|rsag",
      "recursive doubling (recdbl), reduce-scatter + allgather (rsag), or auto by size and ranks"},
     OFF(sparcml_algo), 0, 2},
    {{"sparcml_switch", "sparcml", RB_OPT_DOUBLE, NULL,
      "send a stream dense once its sparse bytes exceed this fraction of the dense bytes"},
     OFF(sparcml_switch), 0.0, 1e9},
    {{"parallax_servers", "parallax", RB_OPT_INT, NULL,
      "number of parameter servers the index space is sharded over: 1 (rank 0) or 0 (every rank)"},
     OFF(parallax_servers), 0, 1},
    {{"block_size", "omnireduce", RB_OPT_INT, NULL, "elements per block"},
     OFF(block_size), 1, 1 << 24},
    {{"oktopk_balance", "oktopk", RB_OPT_BOOL, NULL,
      "regions of similar non-zero counts, estimated from every rank's quantiles (on), "
      "or even ranges of the index space (off)"},
     OFF(oktopk_balance), 0, 1},
    {{"oktopk_repartition", "oktopk", RB_OPT_INT, NULL,
      "re-estimate the balanced regions every N calls (Ok-Topk: 64), reusing them in between"},
     OFF(oktopk_repartition), 1, 1 << 30},
    {{"oktopk_throttle", "oktopk", RB_OPT_INT, NULL,
      "exchange steps posted at once, each batch summed while the next is in flight "
      "(Ok-Topk: 4)"},
     OFF(oktopk_throttle), 1, 1 << 20},
    {{"oktopk_select", "oktopk", RB_OPT_ENUM, "union|topk",
      "the result: the exact union of the inputs (union), or Ok-Topk's global top-k of about "
      "k = oktopk_density x n elements, local and global thresholds as its authors' code (topk: lossy)"},
     OFF(oktopk_select), 0, 1},
    {{"oktopk_density", "oktopk", RB_OPT_DOUBLE, NULL,
      "oktopk_select=topk: k = max(1, floor(density x n)) (Ok-Topk's --density)"},
     OFF(oktopk_density), 1e-12, 1.0},
    {{"oktopk_reestimate", "oktopk", RB_OPT_INT, NULL,
      "oktopk_select=topk: exact local and global top-k thresholds every N calls (Ok-Topk: 32), "
      "the previous ones, nudged as Ok-Topk does, in between"},
     OFF(oktopk_reestimate), 1, 1 << 30},
    {{"zen_bitmap", "zen", RB_OPT_ENUM, "off|on|auto",
      "the result's index set travels as a bitmap over each hash partition (on), as indices "
      "(off), or whichever is smaller per call (auto)"},
     OFF(zen_bitmap), 0, 2},
    {{"sketch_rows", "s2", RB_OPT_INT, NULL, "count sketch rows r (1, 3 or 5)"},
     OFF(sketch_rows), 1, 5},
    {{"sketch_width_mode", "s2", RB_OPT_ENUM, "abs|fraction|nnz",
      "how sketch_width is read: abs (columns), fraction (of rows*cols), nnz (multiple of the max local nnz)"},
     OFF(sketch_width_mode), 0, 2},
    {{"sketch_width", "s2", RB_OPT_DOUBLE, NULL, "sketch width c, read per sketch_width_mode"},
     OFF(sketch_width), 1e-12, 1e15},
    {{"error_feedback", "s2,oktopk", RB_OPT_BOOL, NULL,
      "add the residual to the next step's gradient (s2: gradient - its sketch estimate; "
      "oktopk_select=topk: what did not reach the global top-k, as Ok-Topk)"},
     OFF(error_feedback), 0, 1},
    {{"gossip_schedule", "gossip", RB_OPT_ENUM, "hypercube|dissemination",
      "partner schedule"},
     OFF(gossip_schedule), 0, 1},
    {{"gossip_rotate", "gossip", RB_OPT_BOOL, NULL,
      "relabel ranks by a seeded permutation every ceil(log2 p) steps"},
     OFF(gossip_rotate), 0, 1},
    {{"gossip_mix", "gossip", RB_OPT_ENUM, "|grad|params|both",
      "what is mixed with the partner: grad (in rb_reduce), params (in rb_mix_params: rb_train only), both"},
     OFF(gossip_mix), 1, 3},
    {{"gossip_async", "gossip", RB_OPT_BOOL, NULL,
      "post the exchange and apply it at the next call (one step stale)"},
     OFF(gossip_async), 0, 1},
    {{"seed", "s2,gossip,zen", RB_OPT_U64, NULL,
      "seed of the hashes (s2, zen's partition) and permutations (gossip)"},
     OFF(seed), 0, 0},
    {{"transport", "none,dense,agsparse,sparcml,parallax,omnireduce,oktopk,zen,s2,gossip",
      RB_OPT_ENUM,
      "auto|nccl|staged",
      "device buffers (-d cuda): nccl (on the GPU, one GPU per rank), staged (host copies + MPI; "
      "ranks may share a GPU), auto (nccl when built with NCCL and each rank has its own GPU)"},
     OFF(transport), 0, 2},
};
#undef OFF
#define NOPTIONS (sizeof table / sizeof table[0])

void rb_options_default(rb_options *o)
{
    memset(o, 0, sizeof *o);
    o->sparcml_algo = RB_SPARCML_AUTO;
    o->sparcml_switch = 1.0;
    o->parallax_servers = 0;
    o->block_size = 256;
    o->oktopk_balance = 1;
    o->oktopk_repartition = 64;
    o->oktopk_throttle = 4;
    o->oktopk_select = RB_OKTOPK_UNION;
    o->oktopk_density = 0.01;
    o->oktopk_reestimate = 32;
    o->zen_bitmap = RB_ZEN_BITMAP_AUTO;
    o->sketch_rows = 1;
    o->sketch_width_mode = RB_S2_WIDTH_NNZ;
    o->sketch_width = 0.25;
    o->error_feedback = 0;
    o->gossip_schedule = RB_GOSSIP_HYPERCUBE;
    o->gossip_rotate = 1;
    o->gossip_mix = RB_GOSSIP_MIX_GRAD;
    o->gossip_async = 0;
    o->seed = 42;
    o->transport = RB_TRANSPORT_AUTO;
}

size_t rb_option_count(void) { return NOPTIONS; }

const rb_option_info *rb_option_info_at(size_t i)
{
    return i < NOPTIONS ? &table[i].info : NULL;
}

int rb_option_applies(size_t i, const char *reducer)
{
    if (i >= NOPTIONS || !reducer)
        return 0;
    const char *list = table[i].info.reducers;
    size_t len = strlen(reducer);
    for (const char *p = list; (p = strstr(p, reducer)) != NULL; p += len) {
        int starts = (p == list || p[-1] == ',');
        int ends = (p[len] == '\0' || p[len] == ',');
        if (starts && ends)
            return 1;
    }
    return 0;
}

/* Index of word in a '|' separated list, -1 if absent or empty. */
static int choice_index(const char *choices, const char *word)
{
    size_t wlen = strlen(word);
    int idx = 0;
    for (const char *p = choices;; idx++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len > 0 && len == wlen && strncmp(p, word, len) == 0)
            return idx;
        if (!bar)
            return -1;
        p = bar + 1;
    }
}

static int choice_at(const char *choices, int idx, char *buf, size_t len)
{
    const char *p = choices;
    for (int i = 0; i < idx && p; i++) {
        p = strchr(p, '|');
        if (p)
            p++;
    }
    if (!p)
        return RB_ERR_ARG;
    const char *bar = strchr(p, '|');
    size_t n = bar ? (size_t)(bar - p) : strlen(p);
    snprintf(buf, len, "%.*s", (int)n, p);
    return RB_OK;
}

/* Integer value of an int-like option (enum, bool, int) as stored. */
static long long int_value(const option_def *d, const rb_options *o)
{
    const void *field = (const char *)o + d->offset;
    if (d->offset == offsetof(rb_options, block_size))
        return *(const int64_t *)field;
    return *(const int *)field;
}

static void set_int_value(const option_def *d, rb_options *o, long long x)
{
    void *field = (char *)o + d->offset;
    if (d->offset == offsetof(rb_options, block_size))
        *(int64_t *)field = x;
    else
        *(int *)field = (int)x;
}

/* Is option d's value in o one that parsing could have produced? */
static int value_ok(const option_def *d, const rb_options *o)
{
    switch (d->info.type) {
    case RB_OPT_ENUM:
    case RB_OPT_INT: {
        long long x = int_value(d, o);
        if (d->offset == offsetof(rb_options, sketch_rows) && x % 2 == 0)
            return 0;   /* 1, 3 or 5: the median of an even count is no entry */
        return x >= d->min && x <= d->max;
    }
    case RB_OPT_BOOL:
        return int_value(d, o) == 0 || int_value(d, o) == 1;
    case RB_OPT_DOUBLE: {
        double x = *(const double *)((const char *)o + d->offset);
        return isfinite(x) && x >= d->min && x <= d->max;
    }
    case RB_OPT_U64:
        return 1;
    }
    return 0;
}

static int parse_value(const option_def *d, const char *v, rb_options *o)
{
    char *end = NULL;
    void *field = (char *)o + d->offset;
    errno = 0;
    switch (d->info.type) {
    case RB_OPT_ENUM: {
        int idx = choice_index(d->info.choices, v);
        if (idx < 0)
            return rb_fail(RB_ERR_ARG, "option %s: '%s' is not one of %s",
                           d->info.key, v, d->info.choices[0] == '|' ? d->info.choices + 1 : d->info.choices);
        *(int *)field = idx;
        return RB_OK;
    }
    case RB_OPT_BOOL:
        if (!strcmp(v, "1") || !strcmp(v, "on") || !strcmp(v, "true") || !strcmp(v, "yes"))
            *(int *)field = 1;
        else if (!strcmp(v, "0") || !strcmp(v, "off") || !strcmp(v, "false") || !strcmp(v, "no"))
            *(int *)field = 0;
        else
            return rb_fail(RB_ERR_ARG, "option %s: '%s' is not on/off", d->info.key, v);
        return RB_OK;
    case RB_OPT_U64: {
        if (*v == '\0' || strchr(v, '-'))   /* strtoull would negate " -1" */
            return rb_fail(RB_ERR_ARG, "option %s: '%s' is not an unsigned integer", d->info.key, v);
        unsigned long long u = strtoull(v, &end, 0);
        if (errno || *end)
            return rb_fail(RB_ERR_ARG, "option %s: '%s' is not an unsigned integer", d->info.key, v);
        *(uint64_t *)field = u;
        return RB_OK;
    }
    case RB_OPT_INT: {
        long long x = strtoll(v, &end, 0);
        if (errno || *end || end == v || x < d->min || x > d->max)
            return rb_fail(RB_ERR_ARG, "option %s: '%s' is not an integer in [%.0f, %.0f]",
                           d->info.key, v, d->min, d->max);
        rb_options trial = *o;
        set_int_value(d, &trial, x);
        if (!value_ok(d, &trial))
            return rb_fail(RB_ERR_ARG, "option %s: '%s' is not allowed (%s)", d->info.key, v,
                           d->info.help);
        *o = trial;
        return RB_OK;
    }
    case RB_OPT_DOUBLE: {
        double x = strtod(v, &end);
        if (errno || *end || end == v || !isfinite(x) || x < d->min || x > d->max)
            return rb_fail(RB_ERR_ARG, "option %s: '%s' is not a number in [%g, %g]",
                           d->info.key, v, d->min, d->max);
        *(double *)field = x;
        return RB_OK;
    }
    }
    return rb_fail(RB_ERR_ARG, "option %s: bad type", d->info.key);
}

int rb_options_set(rb_options *o, const char *kv)
{
    const char *eq = kv ? strchr(kv, '=') : NULL;
    if (!eq || eq == kv || eq[1] == '\0')
        return rb_fail(RB_ERR_ARG, "option '%s' is not key=value", kv ? kv : "(null)");
    size_t klen = (size_t)(eq - kv);
    for (size_t i = 0; i < NOPTIONS; i++) {
        if (strlen(table[i].info.key) == klen && !strncmp(table[i].info.key, kv, klen))
            return parse_value(&table[i], eq + 1, o);
    }
    return rb_fail(RB_ERR_ARG, "unknown reducer option '%.*s'", (int)klen, kv);
}

int rb_options_check(const rb_options *o)
{
    if (!o)
        return rb_fail(RB_ERR_ARG, "rb_options_check: NULL options");
    for (size_t i = 0; i < NOPTIONS; i++) {
        const option_def *d = &table[i];
        if (value_ok(d, o))
            continue;
        if (d->info.type == RB_OPT_DOUBLE)
            return rb_fail(RB_ERR_ARG, "option %s: %g is not a number in [%g, %g]", d->info.key,
                           *(const double *)((const char *)o + d->offset), d->min, d->max);
        if (d->info.type == RB_OPT_ENUM)
            return rb_fail(RB_ERR_ARG, "option %s: value %lld is not one of %s", d->info.key,
                           int_value(d, o),
                           d->info.choices[0] == '|' ? d->info.choices + 1 : d->info.choices);
        return rb_fail(RB_ERR_ARG, "option %s: value %lld is not allowed (%s)", d->info.key,
                       int_value(d, o), d->info.help);
    }
    return RB_OK;
}

int rb_option_format(const rb_options *o, size_t i, char *buf, size_t len)
{
    if (i >= NOPTIONS || !buf)
        return RB_ERR_ARG;
    const option_def *d = &table[i];
    const void *field = (const char *)o + d->offset;
    switch (d->info.type) {
    case RB_OPT_ENUM:   /* out of range would print as another value */
        if (!value_ok(d, o))
            return RB_ERR_ARG;
        return choice_at(d->info.choices, *(const int *)field, buf, len);
    case RB_OPT_BOOL:
        snprintf(buf, len, "%s", *(const int *)field ? "on" : "off");
        break;
    case RB_OPT_U64:
        snprintf(buf, len, "%" PRIu64, *(const uint64_t *)field);
        break;
    case RB_OPT_INT:
        if (d->offset == offsetof(rb_options, block_size))
            snprintf(buf, len, "%" PRId64, *(const int64_t *)field);
        else
            snprintf(buf, len, "%d", *(const int *)field);
        break;
    case RB_OPT_DOUBLE:
        snprintf(buf, len, "%.17g", *(const double *)field);
        break;
    }
    return RB_OK;
}
