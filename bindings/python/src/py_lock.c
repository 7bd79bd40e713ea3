/*
 * py_lock.c - FileLock's handle: the writer's lock of a filter file
 * (bk_lock_file), waited for without the GIL.
 */
#include "bkpy.h"

typedef struct {
    PyObject_HEAD
    bk_file_lock *lock;
} bkpy_lock;

static int lock_init(bkpy_lock *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"path", "wait", NULL};
    PyObject *path, *raw;
    int wait = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|p:FileLock", names, &path, &wait))
        return -1;
    if (self->lock) {
        PyErr_SetString(PyExc_TypeError, "bloomkit: this FileLock is already held");
        return -1;
    }
    if (!PyUnicode_FSConverter(path, &raw))
        return -1;
    bk_file_lock *lock = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = bk_lock_file(PyBytes_AS_STRING(raw), wait ? 0 : BK_LOCK_NOWAIT, &lock);
    Py_END_ALLOW_THREADS
    Py_DECREF(raw);
    if (rc != BK_OK) {
        bkpy_error_path(rc, "lock", path);
        return -1;
    }
    self->lock = lock;
    return 0;
}

static PyObject *lock_release(bkpy_lock *self, PyObject *unused)
{
    (void)unused;
    bk_file_lock *lock = self->lock;
    self->lock = NULL;
    bk_unlock_file(lock);
    Py_RETURN_NONE;
}

static PyObject *lock_get_held(bkpy_lock *self, void *unused)
{
    (void)unused;
    return PyBool_FromLong(self->lock != NULL);
}

static void lock_dealloc(bkpy_lock *self)
{
    bk_unlock_file(self->lock);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef lock_methods[] = {
    {"release", (PyCFunction)(void (*)(void))lock_release, METH_NOARGS,
     "Release the lock; idempotent."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef lock_getset[] = {
    {"held", (getter)lock_get_held, NULL, "True until release().", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject bkpy_lock_type = {
    /* the macro ends in a comma of its own */
    /* clang-format off */
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "bloomkit._native.FileLock",
    /* clang-format on */
    .tp_doc = "FileLock(path, wait=True): the writer's lock of a filter file.",
    .tp_basicsize = sizeof(bkpy_lock),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)lock_init,
    .tp_dealloc = (destructor)lock_dealloc,
    .tp_methods = lock_methods,
    .tp_getset = lock_getset,
};
