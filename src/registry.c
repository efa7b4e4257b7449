/* Name -> reducer.  The reducers are the lines of the registry,
 * src/reducers.def: adding a reducer = its file + one line there. */
#include "rb_internal.h"

#include <string.h>

#define RB_REDUCER(name) extern const rb_reducer_ops rb_##name##_ops;
#include "reducers.def"
#undef RB_REDUCER

static const rb_reducer_ops *const registry[] = {
#define RB_REDUCER(name) &rb_##name##_ops,
#include "reducers.def"
#undef RB_REDUCER
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
