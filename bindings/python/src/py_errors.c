/*
 * py_errors.c - a library error code as a Python exception. Which class a code
 * becomes, and the message's form, are written once, in bloomkit/errors.py
 * (error_for), which registers itself here when it is imported.
 */
#include "bkpy.h"

static PyObject *factory; /* bloomkit.errors.error_for */

static PyObject *set_factory(PyObject *module, PyObject *fn)
{
    (void)module;
    if (!PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "bloomkit: the error factory must be callable");
        return NULL;
    }
    PyObject *old = factory;
    Py_INCREF(fn);
    factory = fn;
    Py_XDECREF(old);
    Py_RETURN_NONE;
}

PyObject *bkpy_error(int code, const char *what, const char *detail)
{
    if (!factory) { /* only before bloomkit.errors is imported */
        PyErr_Format(PyExc_RuntimeError, "%s: %s", what, detail ? detail : bk_strerror(code));
        return NULL;
    }
    /* the library's texts may quote bytes that are not UTF-8 (a file name):
     * shown as escapes, never a decoding error instead of the error */
    PyObject *w = PyUnicode_DecodeUTF8(what, (Py_ssize_t)strlen(what), "backslashreplace");
    PyObject *d = detail
                      ? PyUnicode_DecodeUTF8(detail, (Py_ssize_t)strlen(detail), "backslashreplace")
                      : Py_BuildValue(""); /* None (Py_INCREF is a statement in 3.7) */
    PyObject *exc = w && d ? PyObject_CallFunction(factory, "iOO", code, w, d) : NULL;
    Py_XDECREF(w);
    Py_XDECREF(d);
    if (exc) {
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
        Py_DECREF(exc);
    }
    return NULL;
}

PyObject *bkpy_error_detail(int code, const char *what)
{
    const char *d = bk_last_error();
    return bkpy_error(code, what, d && *d ? d : NULL);
}

PyObject *bkpy_error_path(int code, const char *prefix, PyObject *path)
{
    const char *d = bk_last_error(); /* before anything else runs */
    char detail[1024] = "";
    if (d && *d)
        snprintf(detail, sizeof detail, "%s", d);
    PyObject *fs = PyOS_FSPath(path), *name = NULL, *what = NULL, *raw = NULL;
    if (fs)
        name = PyBytes_Check(fs) ? PyUnicode_DecodeFSDefault(PyBytes_AS_STRING(fs))
                                 : (Py_INCREF(fs), fs);
    if (name)
        what = PyUnicode_FromFormat("%s %U", prefix, name);
    if (what) /* a name's undecodable bytes as escapes, never an encoding error */
        raw = PyUnicode_AsEncodedString(what, "utf-8", "backslashreplace");
    PyErr_Clear(); /* a name that cannot be shown: the prefix alone */
    bkpy_error(code, raw ? PyBytes_AS_STRING(raw) : prefix, detail[0] ? detail : NULL);
    Py_XDECREF(fs);
    Py_XDECREF(name);
    Py_XDECREF(what);
    Py_XDECREF(raw);
    return NULL;
}

PyObject *bkpy_closed(void)
{
    PyErr_SetString(PyExc_ValueError, "bloomkit: the filter is closed");
    return NULL;
}

static PyMethodDef methods[] = {
    {"_set_error_factory", set_factory, METH_O,
     "Register bloomkit.errors.error_for (called once, by that module)."},
    {NULL, NULL, 0, NULL},
};

int bkpy_errors_init(PyObject *module)
{
    if (PyModule_AddFunctions(module, methods) < 0)
        return -1;
    /* the library's codes by name (bk_err_name until BK_UNKNOWN), so they
     * are written once, in bloomkit.h */
    PyObject *codes = PyDict_New();
    if (!codes)
        return -1;
    for (int code = 0; code > -1000; code--) {
        const char *name = bk_err_name(code);
        if (strcmp(name, "BK_UNKNOWN") == 0)
            break;
        PyObject *v = PyLong_FromLong(code);
        if (!v || PyDict_SetItemString(codes, name, v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(codes);
            return -1;
        }
        Py_DECREF(v);
    }
    if (PyModule_AddObject(module, "ERRORS", codes) < 0) {
        Py_DECREF(codes);
        return -1;
    }
    return 0;
}
