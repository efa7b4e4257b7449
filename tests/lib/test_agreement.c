/* Ranks that disagree, and values no parser gives: ranks disagreeing on
 * rows, options or reducer name get RB_ERR_MISMATCH on every rank (rows and
 * cols for every reducer, 4x3 against 6x2 too); a bad option value gives
 * RB_ERR_ARG naming the key, from rb_options_check and rb_create on every
 * rank; rb_node_rank refuses an inherited SLURM_LOCALID and world values on
 * a sub-communicator, and keeps a valid permutation.
 *
 * Usage: test_agreement [--small]; --small leaves out rb_node_rank (for
 * many oversubscribed ranks).  Exit 0 when every rank passed, 1 otherwise. */
#include "reducer_checks.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Option values set in the struct, not parsed: out of range is RB_ERR_ARG
 * from rb_options_check and from rb_create on every rank (two values that
 * print alike, sparcml_algo -1 and auto, once passed the agreement check
 * and ran different protocols). */
typedef struct bad_option {
    const char *what, *reducer;
    void (*spoil)(rb_options *o);
} bad_option;
static void spoil_algo(rb_options *o) { o->sparcml_algo = -1; }
static void spoil_mix(rb_options *o) { o->gossip_mix = 0; }
static void spoil_block(rb_options *o) { o->block_size = 0; }
static void spoil_width(rb_options *o) { o->sketch_width = NAN; }
static void spoil_bool(rb_options *o) { o->gossip_async = 2; }
static void spoil_transport(rb_options *o) { o->transport = 3; }
static void spoil_repartition(rb_options *o) { o->oktopk_repartition = 0; }
static void spoil_balance(rb_options *o) { o->oktopk_balance = 2; }
static void spoil_bitmap(rb_options *o) { o->zen_bitmap = 3; }
static void spoil_throttle(rb_options *o) { o->oktopk_throttle = 0; }

static void check_option_ranges(void)
{
    static const bad_option bad[] = {
        {"sparcml_algo", "sparcml", spoil_algo},      {"gossip_mix", "gossip", spoil_mix},
        {"block_size", "omnireduce", spoil_block},    {"sketch_width", "s2", spoil_width},
        {"gossip_async", "gossip", spoil_bool},       {"transport", "dense", spoil_transport},
        {"oktopk_repartition", "oktopk", spoil_repartition},
        {"oktopk_balance", "oktopk", spoil_balance},  {"zen_bitmap", "zen", spoil_bitmap},
        {"oktopk_throttle", "oktopk", spoil_throttle},
    };
    rb_options o;
    rb_options_default(&o);
    if (rb_options_check(&o) != RB_OK)
        FAIL("rb_options_check of the defaults: %s", rb_last_error());
    char text[64];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rb_options_default(&o);
        bad[i].spoil(&o);
        if (rb_options_check(&o) != RB_ERR_ARG || !strstr(rb_last_error(), bad[i].what))
            FAIL("rb_options_check, bad %s: want RB_ERR_ARG naming it, got '%s'", bad[i].what,
                 rb_last_error());
        /* spoiled on the last rank only: every rank fails, none hangs */
        rb_config cfg;
        rb_config_default(&cfg);
        cfg.name = bad[i].reducer;
        cfg.rows = 64;
        if (rank == nranks - 1)
            bad[i].spoil(&cfg.opts);
        rb_reducer *r = NULL;
        int rc = rb_create(&cfg, &r);
        if (rc != RB_ERR_ARG || r)
            FAIL("bad %s on rank %d: rb_create -> %d (%s), want RB_ERR_ARG", bad[i].what,
                 nranks - 1, rc, rb_last_error());
        rb_destroy(r);
    }
    rb_options_default(&o);
    o.sparcml_algo = -1;
    size_t algo = 0;
    while (algo < rb_option_count() && strcmp(rb_option_info_at(algo)->key, "sparcml_algo"))
        algo++;
    if (rb_option_format(&o, algo, text, sizeof text) != RB_ERR_ARG)
        FAIL("rb_option_format of sparcml_algo -1 printed '%s', want RB_ERR_ARG", text);
}

/* rb_create must fail with RB_ERR_MISMATCH on every rank. */
/* rb_create of reducer name, rows x cols with opt (this rank's values,
 * which some other rank does not share) gives RB_ERR_MISMATCH and no
 * reducer. */
static void expect_mismatch(const char *what, const char *name, size_t rows, size_t cols,
                            const char *opt)
{
    rb_config cfg;
    rb_config_default(&cfg);
    cfg.name = name;
    cfg.rows = rows;
    cfg.cols = cols;
    if (opt)
        rb_options_set(&cfg.opts, opt);
    rb_reducer *r = NULL;
    int rc = rb_create(&cfg, &r);
    if (rc != RB_ERR_MISMATCH || r)
        FAIL("mismatch (%s) for %s: rb_create -> %d (%s), expected RB_ERR_MISMATCH", what, name,
             rc, rb_last_error());
    rb_destroy(r);
}

static void check_mismatch(void)
{
    rb_options o;
    rb_options_default(&o);
    if (rb_options_set(&o, "sparcml_switch=-1") != RB_ERR_ARG || !strstr(rb_last_error(), "sparcml_switch"))
        FAIL("bad option value: expected RB_ERR_ARG naming sparcml_switch, got '%s'", rb_last_error());
    if (rb_options_set(&o, "parallax_servers=3") != RB_ERR_ARG || !strstr(rb_last_error(), "parallax_servers"))
        FAIL("bad option value: expected RB_ERR_ARG naming parallax_servers, got '%s'", rb_last_error());
    if (rb_options_set(&o, "seed= -1") != RB_ERR_ARG || rb_options_set(&o, "seed=1-") != RB_ERR_ARG)
        FAIL("seed ' -1' / '1-': expected RB_ERR_ARG (strtoull negates a leading-blank minus)");
    check_option_ranges();
    if (nranks < 2)
        return;
    expect_mismatch("rows", "sparcml", rank == 0 ? 100 : 101, 1, NULL);
    expect_mismatch("options", "sparcml", 100, 1, rank == nranks - 1 ? "sparcml_switch=0.5" : NULL);
    expect_mismatch("options", "parallax", 100, 1, rank == 0 ? "parallax_servers=1" : NULL);
    expect_mismatch("reducer name", rank == 1 ? "agsparse" : "omnireduce", 100, 1, NULL);
    expect_mismatch("options", "oktopk", 100, 1, rank == 0 ? "oktopk_repartition=2" : NULL);
    expect_mismatch("options", "zen", 100, 1, rank == nranks - 1 ? "seed=9" : NULL);
    /* An unknown name on one rank: every rank fails, none hangs. */
    rb_config cfg;
    rb_config_default(&cfg);
    cfg.name = rank == 0 ? "no-such-reducer" : "agsparse";
    cfg.rows = 10;
    rb_reducer *r = NULL;
    int rc = rb_create(&cfg, &r);
    if (rc == RB_OK || r)
        FAIL("unknown reducer on rank 0: rb_create succeeded on rank %d", rank);
    rb_destroy(r);
}

/* Every reducer refuses ranks that disagree on the shape, on every rank. */
static void check_shape_mismatch_everywhere(void)
{
    if (nranks < 2)
        return;
    for (size_t i = 0; i < rb_reducer_count(); i++) {
        const char *name = rb_reducer_name_at(i);
        expect_mismatch("rows", name, rank == nranks - 1 ? 12 : 13, 1, NULL);
        expect_mismatch("cols", name, 6, rank == 0 ? 2 : 3, NULL);
        /* 4 x 3 and 6 x 2: the same 12 elements */
        expect_mismatch("4x3 against 6x2", name, rank == 0 ? 4 : 6, rank == 0 ? 3 : 2, NULL);
    }
}

/* rb_node_rank on one node (every rank here is): the launcher's local rank
 * when its values are a permutation over the node, else the rank in the
 * shared-memory split.  Environment values are set per rank in-process. */
static void check_node_rank(void)
{
    const char *was = getenv("SLURM_LOCALID");
    char saved[32] = "";
    if (was)
        snprintf(saved, sizeof saved, "%s", was);
    int lr = -1, ls = -1;
    const char *src = NULL;
    char value[16];

    /* mpirun inside a batch script: every rank inherits SLURM_LOCALID=0 */
    setenv("SLURM_LOCALID", "0", 1);
    if (rb_node_rank(MPI_COMM_WORLD, &lr, &ls, &src) != RB_OK)
        FAIL("rb_node_rank: %s", rb_last_error());
    else if (ls != nranks || lr != rank || (nranks > 1 && !strcmp(src, "SLURM_LOCALID")))
        FAIL("inherited SLURM_LOCALID=0: local rank %d of %d from %s, want %d of %d, not from it",
             lr, ls, src, rank, nranks);

    /* a valid permutation is the launcher's choice and is kept */
    snprintf(value, sizeof value, "%d", nranks - 1 - rank);
    setenv("SLURM_LOCALID", value, 1);
    if (rb_node_rank(MPI_COMM_WORLD, &lr, &ls, &src) != RB_OK)
        FAIL("rb_node_rank: %s", rb_last_error());
    else if (lr != nranks - 1 - rank || strcmp(src, "SLURM_LOCALID"))
        FAIL("SLURM_LOCALID=%s (a permutation): local rank %d from %s", value, lr, src);

    /* halves of the world: world values are no local ranks there */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hr, hs;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    if (rb_node_rank(half, &lr, &ls, &src) != RB_OK)
        FAIL("rb_node_rank on a sub-communicator: %s", rb_last_error());
    else if (lr != hr || ls != hs)
        FAIL("sub-communicator: local rank %d of %d from %s, want %d of %d", lr, ls, src, hr, hs);
    MPI_Comm_free(&half);

    if (was)
        setenv("SLURM_LOCALID", saved, 1);
    else
        unsetenv("SLURM_LOCALID");
}

int main(int argc, char **argv)
{
    checks_start(&argc, &argv);
    int small = argc > 1 && !strcmp(argv[1], "--small");
    double t0 = MPI_Wtime();
    check_mismatch();
    check_shape_mismatch_everywhere();
    if (!small)
        check_node_rank();
    return checks_end("test_agreement", small ? "(--small)" : "", t0);
}
