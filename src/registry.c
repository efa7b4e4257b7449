/* Name -> reducer.  Adding a reducer = one file + one line here. */
#include "rb_internal.h"

#include <string.h>

extern const rb_reducer_ops rb_none_ops;
extern const rb_reducer_ops rb_dense_ops;
extern const rb_reducer_ops rb_agsparse_ops;
extern const rb_reducer_ops rb_sparcml_ops;
extern const rb_reducer_ops rb_parallax_ops;
extern const rb_reducer_ops rb_omnireduce_ops;
extern const rb_reducer_ops rb_oktopk_ops;
extern const rb_reducer_ops rb_zen_ops;
extern const rb_reducer_ops rb_s2_ops;
extern const rb_reducer_ops rb_gossip_ops;

static const rb_reducer_ops *const registry[] = {
    &rb_none_ops,
    &rb_dense_ops,
    &rb_agsparse_ops,
    &rb_sparcml_ops,
    &rb_parallax_ops,
    &rb_omnireduce_ops,
    &rb_oktopk_ops,
    &rb_zen_ops,
    &rb_s2_ops,
    &rb_gossip_ops,
};
#define NREDUCERS (sizeof registry / sizeof registry[0])

const rb_reducer_ops *rb_registry_find(const char *name)
{
    for (size_t i = 0; name && i < NREDUCERS; i++)
        if (!strcmp(registry[i]->name, name))
            return registry[i];
    return NULL;
}

size_t rb_reducer_count(void) { return NREDUCERS; }

const char *rb_reducer_name_at(size_t i)
{
    return i < NREDUCERS ? registry[i]->name : NULL;
}

int rb_reducer_traits(const char *name, unsigned *traits)
{
    const rb_reducer_ops *ops = rb_registry_find(name);
    if (!ops)
        return rb_fail(RB_ERR_UNKNOWN_REDUCER, "unknown reducer '%s'", name ? name : "(null)");
    *traits = ops->traits;
    return RB_OK;
}

int rb_reducer_traits_with(const char *name, const rb_options *o, unsigned *traits)
{
    const rb_reducer_ops *ops = rb_registry_find(name);
    if (!ops)
        return rb_fail(RB_ERR_UNKNOWN_REDUCER, "unknown reducer '%s'", name ? name : "(null)");
    *traits = o && ops->traits_with ? ops->traits_with(o) : ops->traits;
    return RB_OK;
}

const char *rb_reducer_description(const char *name)
{
    const rb_reducer_ops *ops = rb_registry_find(name);
    return ops ? ops->description : NULL;
}

int rb_reducer_state_bytes(const char *name, const rb_options *o, double n, double k, int p,
                           double *bytes)
{
    const rb_reducer_ops *ops = rb_registry_find(name);
    if (!ops)
        return rb_fail(RB_ERR_UNKNOWN_REDUCER, "unknown reducer '%s'", name ? name : "(null)");
    if (!o || !bytes)
        return rb_fail(RB_ERR_ARG, "rb_reducer_state_bytes: NULL argument");
    *bytes = ops->state_bytes ? ops->state_bytes(o, n, k, p) : 0.0;
    return RB_OK;
}
