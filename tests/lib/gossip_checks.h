/* What test_gossip's modes share: the rank globals and fail, a gossip
 * reducer made from a setup, and the deterministic inputs. */
#ifndef RB_GOSSIP_CHECKS_H
#define RB_GOSSIP_CHECKS_H

#include "reducer.h"

#include <stddef.h>
#include <stdint.h>

extern int rank, nranks;
extern int failures;

/* Count a failure and say it, with this rank. */
void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define CHECK(cond, ...) do { if (!(cond)) fail(__VA_ARGS__); } while (0)

int ceil_log2(int p);
extern const char *const sched_name[2];

typedef struct setup {
    int schedule, rotate, async, mix;
    uint64_t seed;
    size_t n;
} setup;

/* rb_create of the setup's gossip reducer; a failure is counted. */
int make(const setup *s, rb_reducer **out);
/* Small integers: every average of up to 2^14 halvings is exact in float. */
float dyadic_input(int r, size_t i);
/* Deterministic values in [-1, 1) with no exact structure. */
float random_input(int r, size_t i, uint64_t salt);

#endif
