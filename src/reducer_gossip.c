/* gossip: GossipGraD: one partner per step (hypercube / dissemination), rotation.
 * PLACEHOLDER during development: replaced by the real implementation. */
#include "rb_internal.h"

static int gossip_init(rb_reducer *r)
{
    (void)r;
    return rb_fail(RB_ERR_UNSUPPORTED, "reducer 'gossip' is not implemented yet");
}

static int gossip_reduce(rb_reducer *r, float *grad, rb_stats *st)
{
    (void)r, (void)grad, (void)st;
    return RB_ERR_UNSUPPORTED;
}

const rb_reducer_ops rb_gossip_ops = {
    .name = "gossip",
    .description = "GossipGraD: one partner per step (hypercube / dissemination), rotation",
    .traits = RB_TRAIT_GOSSIP,
    .init = gossip_init,
    .reduce = gossip_reduce,
};
