/*
 * keys.c - the keys that are not bytes or str (bkpy.h has those inline):
 * bytearray and memoryview, read in place while the GIL is held; a
 * memoryview that is not contiguous is copied first, as bytes(view) would.
 */
#include "bkpy.h"

int bkpy_key_slow(PyObject *key, const void **p, size_t *n, PyObject **hold)
{
    *hold = NULL;
    if (PyByteArray_Check(key)) {
        *p = PyByteArray_AS_STRING(key);
        *n = (size_t)PyByteArray_GET_SIZE(key);
        return 0;
    }
    if (PyMemoryView_Check(key)) {
        Py_buffer view;
        if (PyObject_GetBuffer(key, &view, PyBUF_SIMPLE) == 0) {
            /* the exporter outlives this call and cannot resize while the
             * GIL is held */
            *p = view.buf;
            *n = (size_t)view.len;
            PyBuffer_Release(&view);
            return 0;
        }
        if (!PyErr_ExceptionMatches(PyExc_BufferError))
            return -1; /* a released view: its ValueError */
        PyErr_Clear(); /* not contiguous */
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
