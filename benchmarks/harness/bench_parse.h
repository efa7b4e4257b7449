/* Strict number parsers for command-line values. */
#ifndef BENCH_PARSE_H
#define BENCH_PARSE_H

#include <stdint.h>

/* Whole string, range checked; 0 on success, -1 otherwise. */
int bench_parse_u64(const char *s, uint64_t *out);
int bench_parse_int(const char *s, long min, long max, int *out);
int bench_parse_double(const char *s, double min, double max, double *out);
/* Sizes accept K/M/G suffixes (powers of 1024). */
int bench_parse_size(const char *s, uint64_t *out);

#endif
