/* The helpers every benchmark program uses, in one include: naming
 * failures and exiting (bench_fail.h), usage errors (bench_usage.h),
 * MPI start-up with the allocator's policy (bench_init.h), number parsers
 * (bench_parse.h), rank agreement (bench_agree.h), quantiles
 * (bench_quantile.h), the --timeout watchdog (bench_watchdog.h), the
 * progress watchdog (bench_stall.h) and the signals that end a job
 * (bench_fault.h).  Harness files
 * include the single headers they need. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include "bench_agree.h"
#include "bench_fault.h"
#include "bench_fail.h"
#include "bench_init.h"
#include "bench_parse.h"
#include "bench_quantile.h"
#include "bench_stall.h"
#include "bench_usage.h"
#include "bench_watchdog.h"

#endif
