/* rb_state_size, rb_state_save, rb_state_load: a reducer's state between
 * calls as bytes, for checkpoints (reducer.h).
 *
 * The bytes: a header (magic, reducer name, elements, rank, ranks, payload
 * bytes, the payload's FNV-1a hash), then each field the reducer's state
 * op visits as its byte count and its bytes.  The count of every field is
 * checked on load, so state saved under other options (error feedback off,
 * another rank count) is refused by the field's name rather than read
 * shifted. */
#include "rb_internal.h"

#include <string.h>

#define STATE_MAGIC "RBSTATE1"
#define NAME_BYTES 32

/* IO_CHECK reads as IO_LOAD does, writing nothing: a load checks every
 * field first, so a refused state leaves the reducer as it was. */
enum { IO_COUNT, IO_SAVE, IO_CHECK, IO_LOAD };

struct rb_state_io {
    int mode;
    unsigned char *out;         /* IO_SAVE */
    const unsigned char *in;    /* IO_LOAD */
    size_t len, pos;            /* the payload's bytes and the position in it */
    int status;                 /* the first error, then every field is skipped */
};

typedef struct state_header {
    char magic[8];
    char name[NAME_BYTES];
    uint64_t n;
    int32_t rank, size;
    uint64_t payload, hash;
} state_header;

static uint64_t fnv1a(const unsigned char *p, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

int rb_state_field(struct rb_state_io *io, const char *name, void *p, size_t bytes)
{
    if (io->status != RB_OK)
        return io->status;
    uint64_t count = bytes;
    if (io->mode == IO_COUNT) {
        io->pos += sizeof count + bytes;
        return RB_OK;
    }
    if (io->pos + sizeof count + bytes > io->len && io->mode == IO_SAVE)
        return io->status = rb_fail(RB_ERR_ARG, "rb_state_save: the buffer is too small at field %s", name);
    if (io->mode == IO_SAVE) {
        memcpy(io->out + io->pos, &count, sizeof count);
        if (bytes)
            memcpy(io->out + io->pos + sizeof count, p, bytes);
        io->pos += sizeof count + bytes;
        return RB_OK;
    }
    uint64_t saved = 0;
    if (io->pos + sizeof saved > io->len)
        return io->status = rb_fail(RB_ERR_ARG, "rb_state_load: the state ends before field %s", name);
    memcpy(&saved, io->in + io->pos, sizeof saved);
    if (saved != count)
        return io->status = rb_fail(RB_ERR_ARG, "rb_state_load: field %s has %llu bytes saved, %llu "
                                    "here (saved under other options or another shape)", name,
                                    (unsigned long long)saved, (unsigned long long)count);
    if (io->pos + sizeof saved + bytes > io->len)
        return io->status = rb_fail(RB_ERR_ARG, "rb_state_load: the state ends inside field %s", name);
    if (io->mode == IO_LOAD && bytes)
        memcpy(p, io->in + io->pos + sizeof saved, bytes);
    io->pos += sizeof saved + bytes;
    return RB_OK;
}

static int visit(rb_reducer *r, struct rb_state_io *io)
{
    int rc = r->ops->state ? r->ops->state(r, io) : RB_OK;
    return rc != RB_OK ? rc : io->status;
}

static int payload_bytes(rb_reducer *r, size_t *bytes)
{
    struct rb_state_io io = {.mode = IO_COUNT};
    RB_TRY(visit(r, &io));
    *bytes = io.pos;
    return RB_OK;
}

int rb_state_size(rb_reducer *r, size_t *bytes)
{
    if (!r || !bytes)
        return rb_fail(RB_ERR_ARG, "rb_state_size: NULL argument");
    size_t payload;
    RB_TRY(payload_bytes(r, &payload));
    *bytes = sizeof(state_header) + payload;
    return RB_OK;
}

static state_header header_of(const rb_reducer *r, size_t payload)
{
    state_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, STATE_MAGIC, sizeof h.magic);
    strncpy(h.name, r->ops->name, NAME_BYTES - 1);
    h.n = r->n;
    h.rank = r->rank, h.size = r->size;
    h.payload = payload;
    return h;
}

int rb_state_save(rb_reducer *r, void *buf, size_t len)
{
    if (!r || !buf)
        return rb_fail(RB_ERR_ARG, "rb_state_save: NULL argument");
    size_t payload;
    RB_TRY(payload_bytes(r, &payload));
    if (len < sizeof(state_header) + payload)
        return rb_fail(RB_ERR_ARG, "rb_state_save: %zu bytes given, %zu needed (rb_state_size)", len,
                       sizeof(state_header) + payload);
    unsigned char *out = (unsigned char *)buf + sizeof(state_header);
    struct rb_state_io io = {.mode = IO_SAVE, .out = out, .len = payload};
    RB_TRY(visit(r, &io));
    state_header h = header_of(r, payload);
    h.hash = fnv1a(out, payload);
    memcpy(buf, &h, sizeof h);
    return RB_OK;
}

/* The header against this reducer: RB_ERR_ARG naming the first difference. */
static int check_header(const rb_reducer *r, const state_header *h, size_t len)
{
    if (memcmp(h->magic, STATE_MAGIC, sizeof h->magic))
        return rb_fail(RB_ERR_ARG, "rb_state_load: not a reducer state (no %s header)", STATE_MAGIC);
    if (strncmp(h->name, r->ops->name, NAME_BYTES))
        return rb_fail(RB_ERR_ARG, "rb_state_load: the state is %.*s's, this reducer is %s", NAME_BYTES,
                       h->name, r->ops->name);
    if (h->n != r->n)
        return rb_fail(RB_ERR_ARG, "rb_state_load: the state is of %llu elements, this reducer has %zu",
                       (unsigned long long)h->n, r->n);
    if (h->size != r->size || h->rank != r->rank)
        return rb_fail(RB_ERR_ARG, "rb_state_load: the state is rank %d's of %d, this is rank %d of %d",
                       (int)h->rank, (int)h->size, r->rank, r->size);
    if (h->payload != len - sizeof *h)
        return rb_fail(RB_ERR_ARG, "rb_state_load: %zu bytes given, the state says %llu",
                       len, (unsigned long long)(h->payload + sizeof *h));
    return RB_OK;
}

int rb_state_load(rb_reducer *r, const void *buf, size_t len)
{
    if (!r || !buf)
        return rb_fail(RB_ERR_ARG, "rb_state_load: NULL argument");
    state_header h;
    if (len < sizeof h)
        return rb_fail(RB_ERR_ARG, "rb_state_load: %zu bytes given, fewer than a state's header (%zu)", len, sizeof h);
    memcpy(&h, buf, sizeof h);
    RB_TRY(check_header(r, &h, len));
    const unsigned char *in = (const unsigned char *)buf + sizeof h;
    if (fnv1a(in, h.payload) != h.hash)
        return rb_fail(RB_ERR_ARG, "rb_state_load: the state's bytes are damaged (hash mismatch)");
    size_t payload;
    RB_TRY(payload_bytes(r, &payload));
    if (payload != h.payload)
        return rb_fail(RB_ERR_ARG, "rb_state_load: the state holds %llu bytes, this reducer's %zu "
                       "(saved under other options)", (unsigned long long)h.payload, payload);
    struct rb_state_io check = {.mode = IO_CHECK, .in = in, .len = payload};
    RB_TRY(visit(r, &check));
    struct rb_state_io io = {.mode = IO_LOAD, .in = in, .len = payload};
    return visit(r, &io);
}

double rb_state_bytes_pairs(double n, double k, int p)
{
    return fmin(8.0 * k * (2.0 * p + 2.0), 8.0 * n * (p + 2.0)) + 4.0 * n;
}
