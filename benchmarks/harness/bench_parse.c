/* Strict number parsers (bench_parse.h). */
#include "bench_parse.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* strtoull skips leading blanks and then negates a '-': " -1" would be
 * 2^64 - 1.  An unsigned value must start with a digit. */
static int starts_with_digit(const char *s)
{
    return s && *s >= '0' && *s <= '9';
}

int bench_parse_u64(const char *s, uint64_t *out)
{
    if (!starts_with_digit(s))
        return -1;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

int bench_parse_int(const char *s, long min, long max, int *out)
{
    if (!s || !*s)
        return -1;
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

int bench_parse_double(const char *s, double min, double max, double *out)
{
    if (!s || !*s)
        return -1;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int bench_parse_size(const char *s, uint64_t *out)
{
    if (!starts_with_digit(s))
        return -1;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10, end++;
    else if (*end == 'M' || *end == 'm')
        shift = 20, end++;
    else if (*end == 'G' || *end == 'g')
        shift = 30, end++;
    if (*end || (shift && v > (UINT64_MAX >> shift)))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}
