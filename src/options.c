/* The option table: every algorithm choice a reducer offers (each reducer
 * describes its own in its ops), settable as "key=value" and printable, so
 * benchmarks can record what was used. */
#include "rb_internal.h"

#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Options every reducer takes, and those several reducers list. */
static const rb_option_def transport_def = {
    "transport", RB_OPT_ENUM, "auto|nccl|staged",
    "device buffers (-d cuda): nccl (on the GPU, one GPU per rank), staged (host copies + MPI; "
    "ranks may share a GPU), auto (nccl when built with NCCL and each rank has its own GPU)",
    RB_OPTION_FIELD(transport), 0, 2, RB_TRANSPORT_AUTO, 0};
const rb_option_def rb_opt_seed = {
    "seed", RB_OPT_U64, NULL,
    "seed of the hashes (s2, zen's partition) and permutations (gossip)",
    RB_OPTION_FIELD(seed), 0, 0, 42, 0};
const rb_option_def rb_opt_error_feedback = {
    "error_feedback", RB_OPT_BOOL, NULL,
    "add the residual to the next step's gradient (s2: gradient - its sketch estimate; "
    "oktopk_select=topk: what did not reach the global top-k, as Ok-Topk)",
    RB_OPTION_FIELD(error_feedback), 0, 1, 0, 0};

/* The table, built once from the registry: the options one reducer lists
 * in registry order, then those several list (in order of first mention),
 * then transport; so each reducer's options print in its own order. */
#define MAX_OPTIONS 64
typedef struct option_entry {
    rb_option_info info;
    const rb_option_def *d;
    int slot;                /* rb_options.ext index, or -1 */
    char applies[256];       /* comma list of reducer names */
} option_entry;
static option_entry table[MAX_OPTIONS];
static size_t noptions;
static int table_error;      /* the registry's options do not fit the table */
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

/* How many reducers list d. */
static int listed_by(const rb_option_def *d)
{
    int n = 0;
    for (size_t r = 0; r < rb_reducer_count(); r++) {
        const rb_reducer_ops *ops = rb_registry_find(rb_reducer_name_at(r));
        for (const rb_option_def *const *o = ops->options; o && *o; o++)
            n += *o == d;
    }
    return n;
}

static option_entry *entry_of(const rb_option_def *d)
{
    for (size_t i = 0; i < noptions; i++)
        if (table[i].d == d)
            return &table[i];
    return NULL;
}

static void append_applies(option_entry *e, const char *name)
{
    size_t len = strlen(e->applies);
    if (len + strlen(name) + 2 > sizeof e->applies) {
        table_error = 1;
        return;
    }
    snprintf(e->applies + len, sizeof e->applies - len, "%s%s", len ? "," : "", name);
}

static option_entry *add_entry(const rb_option_def *d, int *ext_used)
{
    option_entry *e = entry_of(d);
    if (e)
        return e;
    if (noptions == MAX_OPTIONS || (d->offset == RB_OPTION_EXT &&
                                    (*ext_used == RB_OPTIONS_EXT_MAX || d->type == RB_OPT_U64))) {
        table_error = 1;
        return NULL;
    }
    e = &table[noptions++];
    e->d = d;
    e->slot = d->offset == RB_OPTION_EXT ? (*ext_used)++ : -1;
    e->info = (rb_option_info){d->key, e->applies, d->type, d->choices, d->help};
    return e;
}

/* Pass shared = 0: options one reducer lists; 1: those several list. */
static void add_listed(int shared, int *ext_used)
{
    for (size_t r = 0; r < rb_reducer_count(); r++) {
        const rb_reducer_ops *ops = rb_registry_find(rb_reducer_name_at(r));
        for (const rb_option_def *const *o = ops->options; o && *o; o++) {
            if ((listed_by(*o) > 1) != shared)
                continue;
            option_entry *e = add_entry(*o, ext_used);
            if (e)
                append_applies(e, ops->name);
        }
    }
}

static void build_table(void)
{
    int ext_used = 0;
    add_listed(0, &ext_used);
    add_listed(1, &ext_used);
    option_entry *t = add_entry(&transport_def, &ext_used);
    for (size_t r = 0; t && r < rb_reducer_count(); r++)
        append_applies(t, rb_reducer_name_at(r));
}

static size_t option_count(void)
{
    pthread_once(&table_once, build_table);
    return noptions;
}

static void *field_of(const option_entry *e, rb_options *o)
{
    return e->slot >= 0 ? (void *)&o->ext[e->slot] : (void *)((char *)o + e->d->offset);
}

static const void *cfield_of(const option_entry *e, const rb_options *o)
{
    return field_of(e, (rb_options *)o);
}

void rb_options_default(rb_options *o)
{
    memset(o, 0, sizeof *o);
    for (size_t i = 0; i < option_count(); i++) {
        const option_entry *e = &table[i];
        void *field = field_of(e, o);
        if (e->slot >= 0)
            *(double *)field = e->d->def;
        else if (e->d->type == RB_OPT_U64)
            *(uint64_t *)field = (uint64_t)e->d->def;
        else if (e->d->type == RB_OPT_DOUBLE)
            *(double *)field = e->d->def;
        else if (e->d->flags & RB_OPTDEF_INT64)
            *(int64_t *)field = (int64_t)e->d->def;
        else
            *(int *)field = (int)e->d->def;
    }
}

size_t rb_option_count(void) { return option_count(); }

const rb_option_info *rb_option_info_at(size_t i)
{
    return i < option_count() ? &table[i].info : NULL;
}

int rb_option_applies(size_t i, const char *reducer)
{
    if (i >= option_count() || !reducer)
        return 0;
    const char *list = table[i].applies;
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
static long long int_value(const option_entry *e, const rb_options *o)
{
    const void *field = cfield_of(e, o);
    if (e->slot >= 0)
        return (long long)*(const double *)field;
    if (e->d->flags & RB_OPTDEF_INT64)
        return *(const int64_t *)field;
    return *(const int *)field;
}

static void set_int_value(const option_entry *e, rb_options *o, long long x)
{
    void *field = field_of(e, o);
    if (e->slot >= 0)
        *(double *)field = (double)x;
    else if (e->d->flags & RB_OPTDEF_INT64)
        *(int64_t *)field = x;
    else
        *(int *)field = (int)x;
}

static double double_value(const option_entry *e, const rb_options *o)
{
    return *(const double *)cfield_of(e, o);
}

double rb_option_value(const rb_options *o, const rb_option_def *d)
{
    option_count();
    const option_entry *e = entry_of(d);
    if (!e || !o)
        return NAN;
    if (d->type == RB_OPT_DOUBLE)
        return double_value(e, o);
    if (d->type == RB_OPT_U64)
        return (double)*(const uint64_t *)cfield_of(e, o);
    return (double)int_value(e, o);
}

/* Is option d's value in o one that parsing could have produced? */
static int value_ok(const option_entry *e, const rb_options *o)
{
    const rb_option_def *d = e->d;
    if (e->slot >= 0 && d->type != RB_OPT_DOUBLE) {   /* stored as a double */
        double x = double_value(e, o);
        if (!isfinite(x) || x != floor(x) || fabs(x) > 9e15)
            return 0;
    }
    switch (d->type) {
    case RB_OPT_ENUM:
    case RB_OPT_INT: {
        long long x = int_value(e, o);
        if ((d->flags & RB_OPTDEF_ODD) && x % 2 == 0)
            return 0;
        return x >= d->min && x <= d->max;
    }
    case RB_OPT_BOOL:
        return int_value(e, o) == 0 || int_value(e, o) == 1;
    case RB_OPT_DOUBLE: {
        double x = double_value(e, o);
        return isfinite(x) && x >= d->min && x <= d->max;
    }
    case RB_OPT_U64:
        return 1;
    }
    return 0;
}

static int parse_value(const option_entry *e, const char *v, rb_options *o)
{
    const rb_option_def *d = e->d;
    char *end = NULL;
    void *field = field_of(e, o);
    errno = 0;
    switch (d->type) {
    case RB_OPT_ENUM: {
        int idx = choice_index(d->choices, v);
        if (idx < 0)
            return rb_fail(RB_ERR_ARG, "option %s: '%s' is not one of %s",
                           d->key, v, d->choices[0] == '|' ? d->choices + 1 : d->choices);
        set_int_value(e, o, idx);
        return RB_OK;
    }
    case RB_OPT_BOOL:
        if (!strcmp(v, "1") || !strcmp(v, "on") || !strcmp(v, "true") || !strcmp(v, "yes"))
            set_int_value(e, o, 1);
        else if (!strcmp(v, "0") || !strcmp(v, "off") || !strcmp(v, "false") || !strcmp(v, "no"))
            set_int_value(e, o, 0);
        else
            return rb_fail(RB_ERR_ARG, "option %s: '%s' is not on/off", d->key, v);
        return RB_OK;
    case RB_OPT_U64: {
        if (*v == '\0' || strchr(v, '-'))   /* strtoull would negate " -1" */
            return rb_fail(RB_ERR_ARG, "option %s: '%s' is not an unsigned integer", d->key, v);
        unsigned long long u = strtoull(v, &end, 0);
        if (errno || *end)
            return rb_fail(RB_ERR_ARG, "option %s: '%s' is not an unsigned integer", d->key, v);
        *(uint64_t *)field = u;
        return RB_OK;
    }
    case RB_OPT_INT: {
        long long x = strtoll(v, &end, 0);
        if (errno || *end || end == v || x < d->min || x > d->max)
            return rb_fail(RB_ERR_ARG, "option %s: '%s' is not an integer in [%.0f, %.0f]",
                           d->key, v, d->min, d->max);
        rb_options trial = *o;
        set_int_value(e, &trial, x);
        if (!value_ok(e, &trial))
            return rb_fail(RB_ERR_ARG, "option %s: '%s' is not allowed (%s)", d->key, v, d->help);
        *o = trial;
        return RB_OK;
    }
    case RB_OPT_DOUBLE: {
        double x = strtod(v, &end);
        if (errno || *end || end == v || !isfinite(x) || x < d->min || x > d->max)
            return rb_fail(RB_ERR_ARG, "option %s: '%s' is not a number in [%g, %g]",
                           d->key, v, d->min, d->max);
        *(double *)field = x;
        return RB_OK;
    }
    }
    return rb_fail(RB_ERR_ARG, "option %s: bad type", d->key);
}

int rb_options_set(rb_options *o, const char *kv)
{
    const char *eq = kv ? strchr(kv, '=') : NULL;
    if (!eq || eq == kv || eq[1] == '\0')
        return rb_fail(RB_ERR_ARG, "option '%s' is not key=value", kv ? kv : "(null)");
    size_t klen = (size_t)(eq - kv);
    for (size_t i = 0; i < option_count(); i++) {
        if (strlen(table[i].info.key) == klen && !strncmp(table[i].info.key, kv, klen))
            return parse_value(&table[i], eq + 1, o);
    }
    return rb_fail(RB_ERR_ARG, "unknown reducer option '%.*s'", (int)klen, kv);
}

int rb_options_check(const rb_options *o)
{
    if (!o)
        return rb_fail(RB_ERR_ARG, "rb_options_check: NULL options");
    if (option_count() && table_error)
        return rb_fail(RB_ERR_ARG, "the reducers' options do not fit the option table "
                       "(at most %d, %d outside rb_options' fields, none of them u64)",
                       MAX_OPTIONS, RB_OPTIONS_EXT_MAX);
    for (size_t i = 0; i < option_count(); i++) {
        const option_entry *e = &table[i];
        const rb_option_def *d = e->d;
        if (value_ok(e, o))
            continue;
        if (d->type == RB_OPT_DOUBLE)
            return rb_fail(RB_ERR_ARG, "option %s: %g is not a number in [%g, %g]", d->key,
                           double_value(e, o), d->min, d->max);
        if (e->slot >= 0)
            return rb_fail(RB_ERR_ARG, "option %s: %g is not allowed (%s)", d->key,
                           double_value(e, o), d->help);
        if (d->type == RB_OPT_ENUM)
            return rb_fail(RB_ERR_ARG, "option %s: value %lld is not one of %s", d->key,
                           int_value(e, o), d->choices[0] == '|' ? d->choices + 1 : d->choices);
        return rb_fail(RB_ERR_ARG, "option %s: value %lld is not allowed (%s)", d->key,
                       int_value(e, o), d->help);
    }
    return RB_OK;
}

int rb_option_format(const rb_options *o, size_t i, char *buf, size_t len)
{
    if (i >= option_count() || !buf || !o)
        return RB_ERR_ARG;
    const option_entry *e = &table[i];
    switch (e->d->type) {
    case RB_OPT_ENUM:   /* out of range would print as another value */
        if (!value_ok(e, o))
            return RB_ERR_ARG;
        return choice_at(e->d->choices, (int)int_value(e, o), buf, len);
    case RB_OPT_BOOL:
        snprintf(buf, len, "%s", int_value(e, o) ? "on" : "off");
        break;
    case RB_OPT_U64:
        snprintf(buf, len, "%" PRIu64, *(const uint64_t *)cfield_of(e, o));
        break;
    case RB_OPT_INT:
        snprintf(buf, len, "%lld", int_value(e, o));
        break;
    case RB_OPT_DOUBLE:
        snprintf(buf, len, "%.17g", double_value(e, o));
        break;
    }
    return RB_OK;
}
