/* _rbreducer: libreducer for Python (the rbreducer package wraps it).
 *
 * A Reducer is created on an mpi4py communicator and reduces buffers that
 * export the buffer protocol (numpy arrays; rbreducer hands torch tensors
 * over as the numpy arrays that share their memory) in place.  Every
 * library error becomes _rbreducer.Error carrying the library's message
 * (rb_last_error), its code and the code's name.  The GIL is released
 * while the library communicates.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <mpi.h>
#include <mpi4py/mpi4py.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "reducer.h"

static PyObject *error_type;
static PyTypeObject stats_type;

static const char *const status_names[RB_ERR_COUNT_] = {
    "RB_OK", "RB_ERR_ARG", "RB_ERR_NOMEM", "RB_ERR_MPI", "RB_ERR_MISMATCH",
    "RB_ERR_UNKNOWN_REDUCER", "RB_ERR_UNSUPPORTED", "RB_ERR_DEVICE", "RB_ERR_STATE",
};

/* Raise Error(message) with .code and .status; NULL. */
static PyObject *raise_rb(int code)
{
    const char *detail = rb_last_error();
    const char *msg = detail && *detail ? detail : rb_strerror(code);
    PyObject *e = PyObject_CallFunction(error_type, "s", msg);
    if (!e)
        return NULL;
    PyObject *c = PyLong_FromLong(code);
    PyObject *s = PyUnicode_FromString(code > 0 && code < RB_ERR_COUNT_ ? status_names[code] : "unknown");
    if (c && s && !PyObject_SetAttrString(e, "code", c) && !PyObject_SetAttrString(e, "status", s))
        PyErr_SetObject(error_type, e);
    Py_XDECREF(c);
    Py_XDECREF(s);
    Py_DECREF(e);
    return NULL;
}

/* ------------------------------------------------------------------ stats */

static PyStructSequence_Field stats_fields[] = {
    {"bytes_sent", "payload bytes this rank sent"},
    {"bytes_recv", "payload bytes this rank received"},
    {"msgs_sent", "point-to-point messages this rank sent (the model's count)"},
    {"t_encode", "seconds encoding"},
    {"t_comm", "seconds communicating"},
    {"t_decode", "seconds decoding"},
    {"t_wait", "seconds blocked on a partner (gossip)"},
    {"nnz_local", "non-zeros of this rank's input (0 unless counted)"},
    {"nnz_result", "support of the aggregate as sent (0 unless counted)"},
    {"partner", "gossip partner this step, -1 none"},
    {"skipped", "gossip: 1 if this call mixed nothing"},
    {"sketch_cols", "s2: sketch width used"},
    {"dense_stages", "sparcml: stages sent dense"},
    {NULL, NULL},
};
static PyStructSequence_Desc stats_desc = {
    "rbreducer.Stats", "What one reducer call did (libreducer's rb_stats).", stats_fields, 13,
};

static PyObject *stats_object(const rb_stats *st)
{
    PyObject *o = PyStructSequence_New(&stats_type);
    if (!o)
        return NULL;
    PyObject *v[13] = {
        PyLong_FromUnsignedLongLong(st->bytes_sent), PyLong_FromUnsignedLongLong(st->bytes_recv),
        PyLong_FromUnsignedLongLong(st->msgs_sent), PyFloat_FromDouble(st->t_phase[RB_PHASE_ENCODE]),
        PyFloat_FromDouble(st->t_phase[RB_PHASE_COMM]), PyFloat_FromDouble(st->t_phase[RB_PHASE_DECODE]),
        PyFloat_FromDouble(st->t_wait), PyLong_FromUnsignedLongLong(st->nnz_local),
        PyLong_FromUnsignedLongLong(st->nnz_result), PyLong_FromLong(st->partner),
        PyLong_FromLong(st->skipped), PyLong_FromUnsignedLongLong(st->sketch_cols),
        PyLong_FromLong(st->dense_stages),
    };
    for (int i = 0; i < 13; i++) {
        if (!v[i]) {
            for (int j = i + 1; j < 13; j++)
                Py_XDECREF(v[j]);
            Py_DECREF(o);
            return NULL;
        }
        PyStructSequence_SET_ITEM(o, i, v[i]);
    }
    return o;
}

/* ---------------------------------------------------------------- buffers */

/* A C-contiguous buffer of `count` items of `size` bytes whose format is
 * one of `formats` (e.g. "f" or "qlL"), writable when asked. */
static int get_buffer(PyObject *obj, Py_buffer *view, int writable, const char *formats, Py_ssize_t size,
                      Py_ssize_t count, const char *what)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) {
        PyErr_Format(PyExc_TypeError, "%s: a C-contiguous%s buffer of %s is needed (numpy array or CPU tensor)",
                     what, writable ? ", writable" : "", size == 4 ? "float32" : "int64");
        return -1;
    }
    const char *f = view->format ? view->format : "B";
    if (*f == '<' || *f == '=' || *f == '@')
        f++;
    if (view->itemsize != size || strlen(f) != 1 || !strchr(formats, *f)) {
        PyErr_Format(PyExc_TypeError, "%s: items must be %s (got format '%s', %zd bytes)", what,
                     size == 4 ? "float32" : "int64", view->format ? view->format : "B", view->itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    if (count >= 0 && view->len != count * size) {
        PyErr_Format(PyExc_ValueError, "%s: %zd elements, the reducer's shape needs %zd", what,
                     view->len / size, count);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- reducer */

typedef struct {
    PyObject_HEAD
    rb_reducer *r;
    rb_options opts;
    size_t rows, cols;
    char name[64];
} reducer_object;

static int parse_options(PyObject *list, rb_options *o)
{
    rb_options_default(o);
    if (!list || list == Py_None)
        return 0;
    PyObject *seq = PySequence_Fast(list, "options must be a list of 'key=value' strings");
    if (!seq)
        return -1;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        const char *kv = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i));
        if (!kv) {
            Py_DECREF(seq);
            return -1;
        }
        int rc = rb_options_set(o, kv);
        if (rc) {
            Py_DECREF(seq);
            raise_rb(rc);
            return -1;
        }
    }
    Py_DECREF(seq);
    return 0;
}

static int reducer_init(reducer_object *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"name", "comm", "rows", "cols", "options", NULL};
    const char *name;
    PyObject *comm_obj, *opts = NULL;
    Py_ssize_t rows, cols = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sOn|nO", names, &name, &comm_obj, &rows, &cols, &opts))
        return -1;
    if (self->r) {
        PyErr_SetString(PyExc_RuntimeError, "Reducer already initialised");
        return -1;
    }
    if (rows < 0 || cols < 1) {
        PyErr_Format(PyExc_ValueError, "shape %zd x %zd: rows must be >= 0 and cols >= 1", rows, cols);
        return -1;
    }
    MPI_Comm *comm = PyMPIComm_Get(comm_obj);
    if (!comm)
        return -1;
    rb_config cfg;
    rb_config_default(&cfg);
    if (parse_options(opts, &cfg.opts) < 0)
        return -1;
    cfg.name = name;
    cfg.comm = *comm;
    cfg.rows = (size_t)rows;
    cfg.cols = (size_t)cols;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = rb_create(&cfg, &self->r);
    Py_END_ALLOW_THREADS
    if (rc) {
        self->r = NULL;
        raise_rb(rc);
        return -1;
    }
    self->opts = cfg.opts;
    self->rows = cfg.rows;
    self->cols = cfg.cols;
    snprintf(self->name, sizeof self->name, "%s", name);
    return 0;
}

static int mpi_finalized(void)
{
    int done = 0;
    MPI_Finalized(&done);
    return done;
}

static void reducer_dealloc(reducer_object *self)
{
    /* After MPI_Finalize (mpi4py's at exit) the communicator is gone:
     * freeing it then would be an error, leaking it is not. */
    if (self->r && !mpi_finalized())
        rb_destroy(self->r);
    self->r = NULL;
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int alive(reducer_object *self)
{
    if (self->r)
        return 1;
    PyErr_SetString(PyExc_ValueError, "the reducer is closed");
    return 0;
}

static PyObject *reducer_close(reducer_object *self, PyObject *unused)
{
    (void)unused;
    if (self->r && !mpi_finalized())
        rb_destroy(self->r);
    self->r = NULL;
    Py_RETURN_NONE;
}

typedef int (*buffer_call)(rb_reducer *, float *, rb_stats *);

static PyObject *call_on_buffer(reducer_object *self, PyObject *buf, buffer_call fn, const char *what)
{
    if (!alive(self))
        return NULL;
    Py_buffer v;
    if (get_buffer(buf, &v, 1, "f", 4, (Py_ssize_t)(self->rows * self->cols), what) < 0)
        return NULL;
    rb_stats st;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = fn(self->r, v.buf, &st);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&v);
    return rc ? raise_rb(rc) : stats_object(&st);
}

static PyObject *reducer_reduce(reducer_object *self, PyObject *buf)
{
    return call_on_buffer(self, buf, rb_reduce, "reduce");
}

static PyObject *reducer_mix_params(reducer_object *self, PyObject *buf)
{
    return call_on_buffer(self, buf, rb_mix_params, "mix_params");
}

/* Copy n items of size bytes into a new bytearray (the caller wraps it). */
static PyObject *bytes_copy(const void *p, size_t n, size_t size)
{
    return PyByteArray_FromStringAndSize(p ? (const char *)p : "", (Py_ssize_t)(n * size));
}

/* reduce_rows(ids, values, dense=None, rows=True) ->
 * (stats, out_ids bytearray | None, out_values bytearray | None) */
static PyObject *reducer_reduce_rows(reducer_object *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"ids", "values", "dense", "rows", NULL};
    PyObject *ids_obj, *val_obj, *dense_obj = Py_None;
    int want_rows = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|Op", names, &ids_obj, &val_obj, &dense_obj, &want_rows))
        return NULL;
    if (!alive(self))
        return NULL;
    Py_buffer ids, vals, dense = {0};
    if (get_buffer(ids_obj, &ids, 0, "qlL", 8, -1, "reduce_rows ids") < 0)
        return NULL;
    size_t nrows = (size_t)(ids.len / 8);
    if (get_buffer(val_obj, &vals, 0, "f", 4, (Py_ssize_t)(nrows * self->cols), "reduce_rows values") < 0) {
        PyBuffer_Release(&ids);
        return NULL;
    }
    if (dense_obj != Py_None &&
        get_buffer(dense_obj, &dense, 1, "f", 4, (Py_ssize_t)(self->rows * self->cols), "reduce_rows dense") < 0) {
        PyBuffer_Release(&ids);
        PyBuffer_Release(&vals);
        return NULL;
    }
    rb_rows in = {.nrows = nrows, .cols = self->cols, .ids = ids.buf, .values = vals.buf}, out = {0};
    rb_stats st;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = rb_reduce_rows(self->r, &in, dense.buf, want_rows ? &out : NULL, &st);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&ids);
    PyBuffer_Release(&vals);
    if (dense.obj)
        PyBuffer_Release(&dense);
    if (rc)
        return raise_rb(rc);
    if (!want_rows)
        return Py_BuildValue("(NOO)", stats_object(&st), Py_None, Py_None);
    return Py_BuildValue("(NNN)", stats_object(&st), bytes_copy(out.ids, out.nrows, 8),
                         bytes_copy(out.values, out.nrows * out.cols, 4));
}

/* flush(grad=None, params=None): complete pending asynchronous steps. */
static PyObject *reducer_flush(reducer_object *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"grad", "params", NULL};
    PyObject *g = Py_None, *p = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO", names, &g, &p) || !alive(self))
        return NULL;
    Py_ssize_t n = (Py_ssize_t)(self->rows * self->cols);
    Py_buffer gv = {0}, pv = {0};
    if (g != Py_None && get_buffer(g, &gv, 1, "f", 4, n, "flush grad") < 0)
        return NULL;
    if (p != Py_None && get_buffer(p, &pv, 1, "f", 4, n, "flush params") < 0) {
        if (gv.obj)
            PyBuffer_Release(&gv);
        return NULL;
    }
    rb_stats st;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = rb_flush(self->r, gv.buf, pv.buf, &st);
    Py_END_ALLOW_THREADS
    if (gv.obj)
        PyBuffer_Release(&gv);
    if (pv.obj)
        PyBuffer_Release(&pv);
    return rc ? raise_rb(rc) : stats_object(&st);
}

/* {key: value as text} of every option that applies to this reducer. */
static PyObject *options_dict(const rb_options *o, const char *name)
{
    PyObject *d = PyDict_New();
    for (size_t i = 0; d && i < rb_option_count(); i++) {
        if (!rb_option_applies(i, name))
            continue;
        char buf[128];
        if (rb_option_format(o, i, buf, sizeof buf))
            continue;
        PyObject *v = PyUnicode_FromString(buf);
        if (!v || PyDict_SetItemString(d, rb_option_info_at(i)->key, v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(v);
    }
    return d;
}

static PyObject *reducer_options(reducer_object *self, PyObject *unused)
{
    (void)unused;
    return options_dict(&self->opts, self->name);
}

/* Checkpoints: the reducer's state between calls (rb_state_save) as bytes,
 * and back (rb_state_load).  Not collective. */
static PyObject *reducer_state_save(reducer_object *self, PyObject *unused)
{
    (void)unused;
    if (!alive(self))
        return NULL;
    size_t len = 0;
    int rc = rb_state_size(self->r, &len);
    if (rc)
        return raise_rb(rc);
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)len);
    if (!out)
        return NULL;
    rc = rb_state_save(self->r, PyBytes_AS_STRING(out), len);
    if (rc) {
        Py_DECREF(out);
        return raise_rb(rc);
    }
    return out;
}

static PyObject *reducer_state_load(reducer_object *self, PyObject *data)
{
    if (!alive(self))
        return NULL;
    Py_buffer v;
    if (PyObject_GetBuffer(data, &v, PyBUF_SIMPLE) < 0)
        return NULL;
    int rc = rb_state_load(self->r, v.buf, (size_t)v.len);
    PyBuffer_Release(&v);
    if (rc)
        return raise_rb(rc);
    Py_RETURN_NONE;
}

static PyObject *reducer_get_name(reducer_object *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(self->name);
}

static PyObject *reducer_get_shape(reducer_object *self, void *c)
{
    (void)c;
    return Py_BuildValue("(nn)", (Py_ssize_t)self->rows, (Py_ssize_t)self->cols);
}

static PyMethodDef reducer_methods[] = {
    {"reduce", (PyCFunction)reducer_reduce, METH_O,
     "reduce(buf) -> Stats: replace buf (rows*cols float32) by the aggregate; collective"},
    {"mix_params", (PyCFunction)reducer_mix_params, METH_O,
     "mix_params(buf) -> Stats: gossip parameter mixing; collective"},
    {"reduce_rows", (PyCFunction)(void (*)(void))reducer_reduce_rows, METH_VARARGS | METH_KEYWORDS,
     "reduce_rows(ids, values, dense=None, rows=True) -> (Stats, ids bytes, values bytes); collective"},
    {"flush", (PyCFunction)(void (*)(void))reducer_flush, METH_VARARGS | METH_KEYWORDS,
     "flush(grad=None, params=None) -> Stats: complete asynchronous steps"},
    {"options", (PyCFunction)reducer_options, METH_NOARGS,
     "options() -> {key: text}: every option that applies to this reducer"},
    {"state_save", (PyCFunction)reducer_state_save, METH_NOARGS,
     "state_save() -> bytes: the state carried between calls (residuals, call counts), for a "
     "checkpoint; not collective"},
    {"state_load", (PyCFunction)reducer_state_load, METH_O,
     "state_load(bytes): take a state_save() of this reducer's configuration and rank; "
     "rbreducer.Error naming why otherwise; not collective"},
    {"close", (PyCFunction)reducer_close, METH_NOARGS, "close(): free the reducer"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef reducer_getset[] = {
    {"name", (getter)reducer_get_name, NULL, "registry name", NULL},
    {"shape", (getter)reducer_get_shape, NULL, "(rows, cols)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject reducer_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "_rbreducer.Reducer",
    .tp_basicsize = sizeof(reducer_object),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Reducer(name, comm, rows, cols=1, options=['key=value', ...]): collective",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)reducer_init,
    .tp_dealloc = (destructor)reducer_dealloc,
    .tp_methods = reducer_methods,
    .tp_getset = reducer_getset,
};

/* ---------------------------------------------------------------- module */

static PyObject *mod_reducers(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    PyObject *l = PyList_New(0);
    for (size_t i = 0; l && i < rb_reducer_count(); i++) {
        PyObject *s = PyUnicode_FromString(rb_reducer_name_at(i));
        if (!s || PyList_Append(l, s) < 0) {
            Py_XDECREF(s);
            Py_DECREF(l);
            return NULL;
        }
        Py_DECREF(s);
    }
    return l;
}

/* traits(name, options=None) -> int (RB_TRAIT_* bits) */
static PyObject *mod_traits(PyObject *self, PyObject *args)
{
    (void)self;
    const char *name;
    PyObject *opts = NULL;
    if (!PyArg_ParseTuple(args, "s|O", &name, &opts))
        return NULL;
    rb_options o;
    if (parse_options(opts, &o) < 0)
        return NULL;
    unsigned t;
    int rc = rb_reducer_traits_with(name, &o, &t);
    return rc ? raise_rb(rc) : PyLong_FromUnsignedLong(t);
}

static PyObject *mod_description(PyObject *self, PyObject *args)
{
    (void)self;
    const char *name;
    if (!PyArg_ParseTuple(args, "s", &name))
        return NULL;
    unsigned t;
    int rc = rb_reducer_traits(name, &t);
    return rc ? raise_rb(rc) : PyUnicode_FromString(rb_reducer_description(name));
}

/* default_options(name, options=None) -> {key: text} */
static PyObject *mod_default_options(PyObject *self, PyObject *args)
{
    (void)self;
    const char *name;
    PyObject *opts = NULL;
    if (!PyArg_ParseTuple(args, "s|O", &name, &opts))
        return NULL;
    unsigned t;
    int rc = rb_reducer_traits(name, &t);
    if (rc)
        return raise_rb(rc);
    rb_options o;
    if (parse_options(opts, &o) < 0)
        return NULL;
    return options_dict(&o, name);
}

static PyMethodDef module_methods[] = {
    {"reducers", mod_reducers, METH_NOARGS, "reducers() -> [names]: libreducer's registry"},
    {"traits", mod_traits, METH_VARARGS, "traits(name, options=None) -> RB_TRAIT_* bits"},
    {"description", mod_description, METH_VARARGS, "description(name) -> one line"},
    {"default_options", mod_default_options, METH_VARARGS,
     "default_options(name, options=None) -> {key: text} of the options that apply"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_rbreducer", "libreducer for Python (use the rbreducer package)", -1,
    module_methods, NULL, NULL, NULL, NULL,
};

static int add_int(PyObject *m, const char *name, long v)
{
    return PyModule_AddIntConstant(m, name, v);
}

PyMODINIT_FUNC PyInit__rbreducer(void)
{
    if (import_mpi4py() < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    if (PyType_Ready(&reducer_type) < 0 || PyStructSequence_InitType2(&stats_type, &stats_desc) < 0)
        goto fail;
    error_type = PyErr_NewExceptionWithDoc("_rbreducer.Error",
                                           "A libreducer error: str() is the library's message; .code, .status",
                                           NULL, NULL);
    if (!error_type)
        goto fail;
    Py_INCREF(error_type);
    Py_INCREF(&reducer_type);
    Py_INCREF(&stats_type);
    if (PyModule_AddObject(m, "Error", error_type) < 0 ||
        PyModule_AddObject(m, "Reducer", (PyObject *)&reducer_type) < 0 ||
        PyModule_AddObject(m, "Stats", (PyObject *)&stats_type) < 0 ||
        PyModule_AddStringConstant(m, "version", RB_VERSION_STRING) < 0 ||
        add_int(m, "TRAIT_EXACT", RB_TRAIT_EXACT) < 0 || add_int(m, "TRAIT_LOSSY", RB_TRAIT_LOSSY) < 0 ||
        add_int(m, "TRAIT_GOSSIP", RB_TRAIT_GOSSIP) < 0 || add_int(m, "TRAIT_NOCOMM", RB_TRAIT_NOCOMM) < 0)
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
