/*
 * py_keys.c - the keys that are not bytes or str (bkpy.h has those inline):
 * bytearray and memoryview. Their bytes are read in place through a
 * memoryview of ours (*hold) that keeps the buffer exported until the call
 * returns: a call may wait for the filter's lock with the GIL released, and
 * a bytearray cannot be resized (nor its memory freed) while it is exported.
 * A memoryview that is not contiguous is copied first, as bytes(view) would.
 */
#include "bkpy.h"

int bkpy_key_slow(PyObject *key, const void **p, size_t *n, PyObject **hold)
{
    *hold = NULL;
    if (PyByteArray_Check(key) || PyMemoryView_Check(key)) {
        PyObject *view = PyMemoryView_FromObject(key); /* a released view: its ValueError */
        if (!view)
            return -1;
        const Py_buffer *b = PyMemoryView_GET_BUFFER(view);
        if (PyBuffer_IsContiguous(b, 'C')) {
            *hold = view;
            *p = b->buf;
            *n = (size_t)b->len;
            return 0;
        }
        Py_DECREF(view);
        PyObject *copy = PyBytes_FromObject(key);
        if (!copy)
            return -1;
        *hold = copy;
        *p = PyBytes_AS_STRING(copy);
        *n = (size_t)PyBytes_GET_SIZE(copy);
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "bloomkit: a key is bytes or str, not %.100s",
                 Py_TYPE(key)->tp_name);
    return -1;
}
