/* Usage errors (bench_usage.h). */
#include "bench_usage.h"

#include <stdarg.h>
#include <stdio.h>

#include "bench_fail.h"

_Noreturn void bench_usage_error(const char *prog, const char *fmt, ...)
{
    if (bench_world_rank() == 0) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "%s: rank 0: ", prog);
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\nTry '%s --help'.\n", prog);
        va_end(ap);
    }
    /* Every rank parsed the same line: rank 0 said it, so the failure
     * counts as named on all (nothing more is printed). */
    bench_fail_on(0, BENCH_NO_CODE, "usage", "%s", "");
    bench_exit(BENCH_EXIT_USAGE);
}
