/* _rbharness: the harness's results archive for rb-torch-train, so that a
 * PyTorch-driven run is archived exactly as rb_train's (temporary file,
 * every root attribute, /topology, the rename when complete: archive.h).
 *
 * Rank 0's open file is handed to Python as an HDF5 identifier for h5py
 * to write /train into (h5py.File(h5py.h5i.wrap_identifier(id))); that
 * takes one reference of its own, which h5py drops when the object goes,
 * and close() refuses while Python still holds it.  h5py must use the
 * same HDF5 library as this module (hdf5_version() to compare; Debian's
 * python3-h5py does).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <hdf5.h>
#include <mpi.h>
#include <mpi4py/mpi4py.h>
#include <stdlib.h>

#include "harness/archive.h"
#include "harness/bench_fail.h"

typedef struct {
    PyObject_HEAD
    bench_archive *a;
    int open;
} archive_object;

static void archive_dealloc(archive_object *self)
{
    /* Dropped without close(): the run failed; the temporary goes. */
    int fin = 0;
    MPI_Finalized(&fin);
    if (self->open && !fin)
        bench_archive_close(self->a, 0);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Archive(comm, tool, path, force, argv): collective. */
static int archive_init(archive_object *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"comm", "tool", "path", "force", "argv", NULL};
    PyObject *comm_obj, *argv_obj;
    const char *tool, *path = NULL;
    int force;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OszpO", names, &comm_obj, &tool, &path, &force, &argv_obj))
        return -1;
    MPI_Comm *comm = PyMPIComm_Get(comm_obj);
    if (!comm)
        return -1;
    PyObject *seq = PySequence_Fast(argv_obj, "argv must be a list of strings");
    if (!seq)
        return -1;
    int argc = (int)PySequence_Fast_GET_SIZE(seq);
    char **argv = calloc((size_t)argc + 1, sizeof *argv);
    for (int i = 0; argv && i < argc; i++)
        if (!(argv[i] = (char *)PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i)))) {
            free(argv);
            Py_DECREF(seq);
            return -1;
        }
    if (!argv) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    bench_set_prog(tool);
    int rc = bench_archive_open(*comm, tool, path, force, argc, argv, &self->a);
    free(argv);
    Py_DECREF(seq);
    if (rc) {
        /* bench_archive_open named the reason on stderr (rank 0). */
        PyErr_Format(PyExc_OSError, "%s: cannot open the results archive (the reason is printed above)", tool);
        return -1;
    }
    self->open = 1;
    return 0;
}

static int is_open(archive_object *self)
{
    if (self->open)
        return 1;
    PyErr_SetString(PyExc_ValueError, "the archive is closed");
    return 0;
}

/* file_id() -> int: rank 0's open file, a new reference for h5py; -1 on
 * other ranks and without an archive (-o none). */
static PyObject *archive_file_id(archive_object *self, PyObject *unused)
{
    (void)unused;
    if (!is_open(self))
        return NULL;
    hid_t f = bench_archive_file(self->a);
    if (f == H5I_INVALID_HID)
        return PyLong_FromLong(-1);
    if (H5Iinc_ref(f) < 0) {
        PyErr_SetString(PyExc_OSError, "archive: cannot take a reference to the file");
        return NULL;
    }
    return PyLong_FromLongLong((long long)f);
}

static PyObject *archive_mark(archive_object *self, PyObject *args)
{
    const char *name;
    if (!PyArg_ParseTuple(args, "s", &name) || !is_open(self))
        return NULL;
    if (bench_archive_mark(self->a, name)) {
        PyErr_Format(PyExc_OSError, "archive: cannot mark the run %s", name);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* agree(rc, doing) -> 0 or 1 on every rank: rank 0's status of writing. */
static PyObject *archive_agree(archive_object *self, PyObject *args)
{
    int rc;
    const char *doing;
    if (!PyArg_ParseTuple(args, "is", &rc, &doing) || !is_open(self))
        return NULL;
    if (!self->a)
        return PyLong_FromLong(rc != 0);
    return PyLong_FromLong(bench_archive_agree(self->a, rc, doing));
}

/* close(success) -> 0, or non-zero (the reason printed): collective. */
static PyObject *archive_close(archive_object *self, PyObject *args)
{
    int success;
    if (!PyArg_ParseTuple(args, "p", &success) || !is_open(self))
        return NULL;
    hid_t f = bench_archive_file(self->a);
    if (f != H5I_INVALID_HID && H5Iget_ref(f) > 1) {
        PyErr_SetString(PyExc_RuntimeError,
                        "archive: the file is still open in Python (drop the h5py.File first)");
        return NULL;
    }
    self->open = 0;
    return PyLong_FromLong(bench_archive_close(self->a, success));
}

static PyObject *archive_get_path(archive_object *self, void *c)
{
    (void)c;
    const char *p = self->a ? bench_archive_path(self->a) : NULL;
    if (!p)
        Py_RETURN_NONE;
    return PyUnicode_FromString(p);
}

static PyMethodDef archive_methods[] = {
    {"file_id", (PyCFunction)archive_file_id, METH_NOARGS, "rank 0's HDF5 file id for h5py (-1 elsewhere)"},
    {"mark", (PyCFunction)archive_mark, METH_VARARGS, "mark(name): root attribute name = 1 (rank 0)"},
    {"agree", (PyCFunction)archive_agree, METH_VARARGS, "agree(rc, doing) -> 0/1 on every rank"},
    {"close", (PyCFunction)archive_close, METH_VARARGS, "close(success) -> 0 or non-zero; collective"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef archive_getset[] = {
    {"path", (getter)archive_get_path, NULL, "the final path (None: no archive)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject archive_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "_rbharness.Archive",
    .tp_basicsize = sizeof(archive_object),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Archive(comm, tool, path, force, argv): the results archive, as rb_train's; collective",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)archive_init,
    .tp_dealloc = (destructor)archive_dealloc,
    .tp_methods = archive_methods,
    .tp_getset = archive_getset,
};

static PyObject *mod_hdf5_version(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    unsigned maj, min, rel;
    H5get_libversion(&maj, &min, &rel);
    return PyUnicode_FromFormat("%u.%u.%u", maj, min, rel);
}

static PyMethodDef module_methods[] = {
    {"hdf5_version", mod_hdf5_version, METH_NOARGS, "the HDF5 library version this module runs on"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_rbharness", "the harness's results archive for rb-torch-train", -1,
    module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__rbharness(void)
{
    if (import_mpi4py() < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    if (PyType_Ready(&archive_type) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&archive_type);
    if (PyModule_AddObject(m, "Archive", (PyObject *)&archive_type) < 0) {
        Py_DECREF(&archive_type);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
