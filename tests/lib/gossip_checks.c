/* What test_gossip's modes share: gossip_checks.h. */
#include "gossip_checks.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int rank, nranks;
int failures;

void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rank %d: FAIL: ", rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    failures++;
}

int ceil_log2(int p)
{
    int l = 0;
    while ((1 << l) < p)
        l++;
    return l;
}

const char *const sched_name[2] = {"hypercube", "dissemination"};

int make(const setup *s, rb_reducer **out)
{
    rb_config c;
    rb_config_default(&c);
    c.name = "gossip";
    c.rows = s->n;
    c.cols = 1;
    c.opts.gossip_schedule = s->schedule;
    c.opts.gossip_rotate = s->rotate;
    c.opts.gossip_async = s->async;
    c.opts.gossip_mix = s->mix;
    c.opts.seed = s->seed;
    int rc = rb_create(&c, out);
    if (rc != RB_OK)
        fail("rb_create: %s (%s)", rb_strerror(rc), rb_last_error());
    return rc;
}

/* Small integers: every average of up to 2^14 halvings is exact in float. */
float dyadic_input(int r, size_t i)
{
    return (float)((long)((r * 7919u + i * 104729u + 13u * r * i) % 2001u) - 1000);
}

/* Deterministic values in [-1, 1) with no exact structure. */
float random_input(int r, size_t i, uint64_t salt)
{
    uint64_t z = ((uint64_t)r << 40) ^ ((uint64_t)i << 8) ^ salt;
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (float)((double)(z >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}
