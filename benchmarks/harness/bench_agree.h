/* Rank agreement: every rank learns whether any failed (one named line
 * for the job), and whether all run the same command line. */
#ifndef BENCH_AGREE_H
#define BENCH_AGREE_H

#include <mpi.h>

/* Collective: 0 when rc is RB_OK (0) on every rank; else one rank prints
 * the named line for its rc, what and detail (one message, not one per
 * rank), every rank counts it as named and gets -1.  The printer is the
 * lowest rank whose failure is its own: a library detail "another rank
 * failed..." only says that a peer had the reason. */
int bench_all_ok(MPI_Comm comm, int rc, const char *what, const char *detail);
/* Whether the library's detail says this rank failed only because a peer
 * did ("another rank failed...": core.c's rank agreement, rb_agree). */
int bench_peer_failure(int rc, const char *detail);

/* Ranks must run the same command line; returns 1 if all agree. */
int bench_argv_agree(MPI_Comm comm, int argc, char **argv);

#endif
